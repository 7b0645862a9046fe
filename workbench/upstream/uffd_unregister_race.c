// SPDX-License-Identifier: GPL-2.0
/*
 * uffd_unregister_race.c - race UFFDIO_UNREGISTER (issued on UFFD_EVENT_REMOVE) against a
 * read fault taken under the per-VMA lock right after MADV_DONTNEED.
 *
 * Mirrors the end of uffd-unit-tests "events" (faulting_process():
 * release_pages() then read; uffd_handle_page_fault(): UNREGISTER on
 * REMOVE, UFFDIO_COPY on every fault), but in a tight loop:
 *
 *   faulter thread (CPU 0), per iteration:
 *     MADV_DONTNEED (unregistered, no event); UFFDIO_REGISTER area (MISSING)
 *     [-P 1: read each page -> fault -> COPY]
 *     madvise(area, MADV_DONTNEED)        -> UFFD_EVENT_REMOVE, waits for read
 *     spin random [0, -F] ns; read every page (expect zeros)
 *     wait until the monitor reports its UNREGISTER done
 *   monitor thread (CPU 1):
 *     REMOVE    -> spin random [0, -M] ns; UFFDIO_UNREGISTER area
 *     PAGEFAULT -> UFFDIO_COPY (mode 0); count 0/-EEXIST/-ENOENT/-EAGAIN/other;
 *                  on anything but 0 issue UFFDIO_WAKE so the faulter never
 *                  stays asleep (UFFDIO_WAKE needs no registered VMA).
 *   -K: the post-DONTNEED read is done by the kernel (write(2) from the
 *     area into a pipe). On x86 a kernel-mode fault skips the per-VMA lock
 *     and takes mmap_lock, which UNREGISTER holds for write across both the
 *     wake and the clear: a control that should give no -ENOENT.
 *   watchdog thread: no progress for 10 s -> UFFDIO_WAKE whole area, count
 *     "stuck"; no progress for 30 s -> exit 3.
 *
 * -ENOENT on a fault read after REMOVE is the race: the fault message was
 * queued after userfaultfd_unregister()'s wake pass but before
 * userfaultfd_clear_vma() write-locked the VMA.
 *
 * Exit: 0 = finished (whether or not -ENOENT was seen); 1 = unexpected
 * error; 3 = hung.  -e: a test (the test command's upstream boot runs it
 * so): TAP "1..1" and one result, and -ENOENT, a read that found data or
 * a fault left stuck fails it (exit 1).  Build:
 *   gcc -static -O2 -Wall -pthread -o uffd_unregister_race uffd_unregister_race.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static long page_size;
static int uffd;
static char *area, *src;
static unsigned long npages = 1;
static unsigned long max_iters = 1000000;
static unsigned long max_secs = 240;
static unsigned long fdelay_max = 20000, mdelay_max = 20000; /* ns */
static int populate = 1;
static int verbose;
static int as_test;
static int kernel_touch;	/* -K: touch via write(2) -> kernel-mode fault */
static int pfd[2];

static atomic_ulong gen;		/* current iteration */
static atomic_ulong remove_seen_gen;	/* monitor read REMOVE for gen */
static atomic_ulong unreg_done_gen;	/* monitor finished UNREGISTER */
static atomic_ulong progress;
static atomic_int stop;

/* counters */
static atomic_ulong c_fault_before_remove, c_fault_after_remove;
static atomic_ulong c_copy_ok, c_copy_eexist, c_copy_enoent, c_copy_eagain,
	c_copy_other;
static atomic_ulong c_enoent_after_remove, c_removes, c_unreg_err, c_stuck;
static atomic_ulong c_read_zero, c_read_nonzero;

#define die(...) do {					\
	fprintf(stderr, "ERROR: " __VA_ARGS__);			\
	fputc('\n', stderr);					\
	exit(1);						\
} while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void spin_ns(uint64_t ns)
{
	uint64_t end;

	if (!ns)
		return;
	end = now_ns() + ns;
	while (now_ns() < end)
		;
}

/* xorshift, per thread */
static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "warning: cannot pin to CPU %d: %s\n", cpu,
			strerror(errno));
}

static void uffd_wake(unsigned long start, unsigned long len)
{
	struct uffdio_range r = { .start = start, .len = len };

	if (ioctl(uffd, UFFDIO_WAKE, &r))
		die("UFFDIO_WAKE: %s", strerror(errno));
}

static void do_register(void)
{
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)area,
			   .len = npages * page_size },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};

	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER: %s", strerror(errno));
}

static void handle_fault(struct uffd_msg *msg)
{
	unsigned long addr = msg->arg.pagefault.address & ~(page_size - 1);
	unsigned long g = atomic_load(&gen);
	int after_remove = atomic_load(&remove_seen_gen) == g;
	struct uffdio_copy copy = {
		.dst = addr, .src = (unsigned long)src, .len = page_size,
		.mode = 0,
	};
	int err = 0;

	if (addr < (unsigned long)area ||
	    addr >= (unsigned long)area + npages * page_size)
		die("fault outside area: %#lx", addr);
	atomic_fetch_add(after_remove ? &c_fault_after_remove :
			 &c_fault_before_remove, 1);

	if (ioctl(uffd, UFFDIO_COPY, &copy))
		err = errno;
	else if (copy.copy != page_size)
		die("UFFDIO_COPY short copy %lld", (long long)copy.copy);

	switch (err) {
	case 0:
		atomic_fetch_add(&c_copy_ok, 1);
		return;
	case EEXIST:
		atomic_fetch_add(&c_copy_eexist, 1);
		break;
	case ENOENT:
		if (atomic_fetch_add(&c_copy_enoent, 1) < 10 || verbose)
			printf("ENOENT: iter %lu offset %#lx after_remove %d "
			       "flags %#llx copy.copy %lld\n", g,
			       addr - (unsigned long)area, after_remove,
			       (unsigned long long)msg->arg.pagefault.flags,
			       (long long)copy.copy);
		if (after_remove)
			atomic_fetch_add(&c_enoent_after_remove, 1);
		break;
	case EAGAIN:
		atomic_fetch_add(&c_copy_eagain, 1);
		break;
	default:
		atomic_fetch_add(&c_copy_other, 1);
		printf("UFFDIO_COPY unexpected error %d (%s) iter %lu\n",
		       err, strerror(err), g);
		break;
	}
	/* The faulter may still sleep on this address: wake it. */
	uffd_wake(addr, page_size);
}

static void *monitor(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ now_ns();
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };

	pin(1);
	while (!atomic_load(&stop)) {
		struct uffd_msg msg;
		ssize_t n;
		int r = poll(&pfd, 1, 100);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (!r)
			continue;
		n = read(uffd, &msg, sizeof(msg));
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			die("read uffd: %s", strerror(errno));
		}
		if (n != sizeof(msg))
			die("short read %zd", n);

		switch (msg.event) {
		case UFFD_EVENT_PAGEFAULT:
			handle_fault(&msg);
			break;
		case UFFD_EVENT_REMOVE: {
			struct uffdio_range r = {
				.start = (unsigned long)area,
				.len = npages * page_size,
			};
			unsigned long g = atomic_load(&gen);

			atomic_fetch_add(&c_removes, 1);
			atomic_store(&remove_seen_gen, g);
			if (mdelay_max)
				spin_ns(rnd(&seed) % (mdelay_max + 1));
			if (ioctl(uffd, UFFDIO_UNREGISTER, &r)) {
				atomic_fetch_add(&c_unreg_err, 1);
				die("UFFDIO_UNREGISTER: %s", strerror(errno));
			}
			atomic_store(&unreg_done_gen, g);
			break;
		}
		default:
			die("unexpected event %u", msg.event);
		}
	}
	return NULL;
}

static void *watchdog(void *arg)
{
	unsigned long last = atomic_load(&progress), idle = 0;

	while (!atomic_load(&stop)) {
		unsigned long p;

		sleep(1);
		p = atomic_load(&progress);
		if (p != last) {
			last = p;
			idle = 0;
			continue;
		}
		idle++;
		if (idle == 10) {
			printf("watchdog: no progress for 10 s at iter %lu, "
			       "waking whole area\n", atomic_load(&gen));
			fflush(stdout);
			atomic_fetch_add(&c_stuck, 1);
			uffd_wake((unsigned long)area, npages * page_size);
		}
		if (idle >= 30) {
			printf("watchdog: hung at iter %lu, giving up\n",
			       atomic_load(&gen));
			fflush(stdout);
			_exit(3);
		}
	}
	return NULL;
}

static void print_counts(const char *tag, unsigned long iters, double secs)
{
	printf("%s: iters %lu (%.0f/s) removes %lu faults_before_remove %lu "
	       "faults_after_remove %lu | COPY ok %lu EEXIST %lu ENOENT %lu "
	       "(after REMOVE %lu) EAGAIN %lu other %lu | read zero %lu "
	       "nonzero %lu | stuck %lu\n", tag, iters,
	       secs > 0 ? iters / secs : 0.0,
	       atomic_load(&c_removes), atomic_load(&c_fault_before_remove),
	       atomic_load(&c_fault_after_remove), atomic_load(&c_copy_ok),
	       atomic_load(&c_copy_eexist), atomic_load(&c_copy_enoent),
	       atomic_load(&c_enoent_after_remove),
	       atomic_load(&c_copy_eagain), atomic_load(&c_copy_other),
	       atomic_load(&c_read_zero), atomic_load(&c_read_nonzero),
	       atomic_load(&c_stuck));
	fflush(stdout);
}

static void usage(const char *p)
{
	fprintf(stderr, "usage: %s [-n iters] [-t secs] [-p npages] "
		"[-F faulter_delay_max_ns] [-M monitor_delay_max_ns] "
		"[-P populate 0|1] [-K] [-v] [-e]\n", p);
	exit(2);
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_EVENT_REMOVE };
	pthread_t mon, wd;
	uint64_t seed = 0x2545f4914f6cdd1dull ^ now_ns(), t0, last_print;
	unsigned long i, p;
	struct utsname u;
	char *res;
	int opt;

	while ((opt = getopt(argc, argv, "n:t:p:F:M:P:Kve")) != -1) {
		switch (opt) {
		case 'n':
			max_iters = strtoul(optarg, NULL, 0);
			break;
		case 't':
			max_secs = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			npages = strtoul(optarg, NULL, 0);
			break;
		case 'F':
			fdelay_max = strtoul(optarg, NULL, 0);
			break;
		case 'M':
			mdelay_max = strtoul(optarg, NULL, 0);
			break;
		case 'P':
			populate = atoi(optarg);
			break;
		case 'K':
			kernel_touch = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'e':
			as_test = 1;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (!npages)
		usage(argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	uname(&u);
	printf("repro: kernel %s %s, cpus %ld, iters %lu, secs %lu, "
	       "npages %lu, F %lu ns, M %lu ns, populate %d, kernel_touch %d\n",
	       u.release, u.version, sysconf(_SC_NPROCESSORS_ONLN), max_iters,
	       max_secs, npages, fdelay_max, mdelay_max, populate,
	       kernel_touch);
	if (pipe(pfd))
		die("pipe: %s", strerror(errno));

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		die("userfaultfd: %s", strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API: %s", strerror(errno));

	/* area with PROT_NONE guard pages so the VMA never merges */
	res = mmap(NULL, (npages + 2) * page_size, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	area = res + page_size;
	if (mprotect(area, npages * page_size, PROT_READ | PROT_WRITE))
		die("mprotect: %s", strerror(errno));
	src = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED)
		die("mmap src: %s", strerror(errno));
	memset(src, 0xaa, page_size);

	if (pthread_create(&mon, NULL, monitor, NULL) ||
	    pthread_create(&wd, NULL, watchdog, NULL))
		die("pthread_create");
	pin(0);

	t0 = last_print = now_ns();
	for (i = 1; i <= max_iters; i++) {
		uint64_t t = now_ns();

		if (t - t0 >= max_secs * 1000000000ull)
			break;
		if (t - last_print >= 10000000000ull) {
			print_counts("progress", i - 1, (t - t0) / 1e9);
			last_print = t;
		}
		atomic_store(&gen, i);
		/* unregistered here: no REMOVE event, drops last zero page */
		if (madvise(area, npages * page_size, MADV_DONTNEED))
			die("madvise (unregistered): %s", strerror(errno));
		do_register();
		if (populate)
			for (p = 0; p < npages; p++)
				if (((volatile char *)area)[p * page_size] !=
				    (char)0xaa)
					die("populate: page %lu not copied", p);

		if (madvise(area, npages * page_size, MADV_DONTNEED))
			die("madvise: %s", strerror(errno));
		if (fdelay_max)
			spin_ns(rnd(&seed) % (fdelay_max + 1));
		for (p = 0; p < npages; p++) {
			char c;

			if (kernel_touch) {
				/* kernel-mode fault: x86 skips the VMA lock */
				if (write(pfd[1], area + p * page_size, 1) != 1 ||
				    read(pfd[0], &c, 1) != 1)
					die("pipe touch: %s", strerror(errno));
			} else {
				c = ((volatile char *)area)[p * page_size];
			}
			if (c)
				atomic_fetch_add(&c_read_nonzero, 1);
			else
				atomic_fetch_add(&c_read_zero, 1);
		}
		while (atomic_load(&unreg_done_gen) != i)
			sched_yield();
		atomic_fetch_add(&progress, 1);
	}
	atomic_store(&stop, 1);
	pthread_join(mon, NULL);
	print_counts("final", i - 1, (now_ns() - t0) / 1e9);
	printf("RESULT: %s ENOENT=%lu iters=%lu\n",
	       atomic_load(&c_copy_enoent) ? "REPRODUCED" : "not-reproduced",
	       atomic_load(&c_copy_enoent), i - 1);
	if (as_test) {
		bool ok = !atomic_load(&c_copy_enoent) && !atomic_load(&c_copy_other) &&
			  !atomic_load(&c_copy_eagain) && !atomic_load(&c_read_nonzero) &&
			  !atomic_load(&c_stuck);

		printf("1..1\n%sok 1 no fault message after UFFDIO_UNREGISTER in %lu rounds\n",
		       ok ? "" : "not ", i - 1);
		return !ok;
	}
	if (atomic_load(&c_copy_other) || atomic_load(&c_copy_eagain))
		return 1;
	return 0;
}
