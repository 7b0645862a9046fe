// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded stress of THPs under thp_scan, with checksummed data.
 *
 * Workers fault PMD THPs and mTHPs of every size, write checksummed
 * patterns into some of their pages (and zeroes into others, so that
 * kthpscand finds zero-filled subpages to split), and keep doing, at
 * random: fork and COW, partial munmap, mremap, mprotect, madvise
 * (DONTNEED, FREE, COLD, PAGEOUT, HUGEPAGE, NOHUGEPAGE), mlock,
 * move_pages() between two NUMA nodes, moving between memcgs, reclaim to
 * zram swap, compaction and KSM (MADV_MERGEABLE and back: ksmd merges the
 * zero-filled pages, into the zero page or into KSM pages as the flipper
 * sets use_zero_pages), verifying the pages they touch after each step
 * and all of them now and then. kthpscand runs at aggressive knob
 * values, khugepaged collapses as much as it may, and another process
 * flips every THP and thp_scan knob, bad values included. Every byte must
 * read back as written, every bad knob value must be refused with EINVAL
 * and every good one accepted; when the workers are gone, the THPs they
 * held are gone too: nothing but kernel memory is left charged to the
 * workers' memcgs, to the page, and no THP is left (nr_anon).
 *
 * Meanwhile a fourth process takes CPUs offline and brings them back
 * (CPU hotplug: the per-CPU LRU batches drain to other CPUs while
 * kthpscand walks the LRUs).  With thpscan.stress_fail=P on the kernel
 * command line (a kernel with fault injection: configs/debug.config),
 * page and slab allocations of the workers, kthpscand, khugepaged and
 * kswapd fail with probability P %: every byte must still read back as
 * written, and the counters of failed allocations must show it.
 *
 * The run lasts thpscan.stress_seconds= from the kernel command line, or
 * 30 seconds (make stress runs it for 10 minutes).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/mempolicy.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

#define NR_WORKERS	3
#define NR_REGIONS	6
#define REGION_PMDS	2		/* a region: this many PMD sizes */
#define CG_A		CG "thp_stress_a/"
#define CG_B		CG "thp_stress_b/"
#define KSM		"/sys/kernel/mm/ksm/"

/* The state of one page: its generation (0: zero-filled), or how it is. */
enum { PG_KNOWN, PG_HOLE, PG_FREED };

struct region {
	char *p;
	size_t npages;
	unsigned int *gen;
	unsigned char *state;
	bool locked;
};

/*
 * What the workers and the hotplugger did, in memory they share with the
 * test (MAP_SHARED), for the summary at the end.
 */
struct stress_stats {
	long ops[NR_WORKERS], verified[NR_WORKERS], errors[NR_WORKERS];
	long hotplug_cycles;
};

struct worker {
	struct thp_sizes z;
	unsigned int id;
	unsigned int seed;
	unsigned int next_gen;
	struct region r[NR_REGIONS];
	long ops, verified, errors;
	bool two_nodes;
};

static unsigned int rnd(unsigned int *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

/* Word @i of a page of generation @gen of page @pg of region @r of @w. */
static uint64_t word(const struct worker *w, int r, size_t pg, unsigned int gen,
		     size_t i)
{
	uint64_t x = ((uint64_t)w->id << 56) ^ ((uint64_t)r << 48) ^
		     ((uint64_t)pg << 24) ^ gen ^ (i * 0x9e3779b97f4a7c15ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return x | 1;	/* never a zero word: a lost page shows */
}

static void write_page(struct worker *w, int r, size_t pg, bool zero)
{
	struct region *reg = &w->r[r];
	uint64_t *q = (uint64_t *)(reg->p + pg * w->z.psz);
	size_t i, n = w->z.psz / sizeof(*q);
	unsigned int gen = zero ? 0 : ++w->next_gen;

	for (i = 0; i < n; i++)
		q[i] = gen ? word(w, r, pg, gen, i) : 0;
	reg->gen[pg] = gen;
	reg->state[pg] = PG_KNOWN;
}

/* Does page @pg of region @r read as it should?  Logs the first bad word. */
static bool check_page(struct worker *w, int r, size_t pg)
{
	struct region *reg = &w->r[r];
	const uint64_t *q = (const uint64_t *)(reg->p + pg * w->z.psz);
	size_t i, n = w->z.psz / sizeof(*q);
	unsigned int gen = reg->gen[pg];
	bool discarded = false;

	if (reg->state[pg] == PG_HOLE)
		return true;
	/*
	 * After MADV_FREE a page is either as it was or zero-filled, and
	 * reclaim may discard it at any moment, while it is being read too:
	 * read once, each word as it was until the first zero word where
	 * data was, and zero from there on.
	 */
	for (i = 0; i < n; i++) {
		uint64_t want = gen && !discarded ? word(w, r, pg, gen, i) : 0;
		/* Each word read once: the page may change under us (see below). */
		uint64_t v = __atomic_load_n(&q[i], __ATOMIC_RELAXED);

		if (v != want && !v && reg->state[pg] == PG_FREED && !discarded) {
			discarded = true;
			continue;
		}
		if (v != want) {
			fprintf(stderr,
				"# worker %u: region %d page %zu word %zu: %#llx, not %#llx%s\n",
				w->id, r, pg, i, (unsigned long long)v,
				(unsigned long long)want,
				reg->state[pg] == PG_FREED ? " (MADV_FREE'd)" : "");
			return false;
		}
	}
	return true;
}

static void check_range(struct worker *w, int r, size_t pg, size_t n)
{
	size_t i;

	for (i = pg; i < pg + n && i < w->r[r].npages; i++) {
		if (!check_page(w, r, i))
			w->errors++;
		w->verified++;
	}
}

static void check_all(struct worker *w)
{
	int r;

	for (r = 0; r < NR_REGIONS; r++)
		check_range(w, r, 0, w->r[r].npages);
}

static bool has_holes(const struct region *reg)
{
	size_t i;

	for (i = 0; i < reg->npages; i++)
		if (reg->state[i] == PG_HOLE)
			return true;
	return false;
}

/*
 * @len bytes of anonymous memory aligned to @align, without the guard
 * mappings of ts_map_aligned(): a long run makes and moves many regions.
 */
static char *map_region(size_t len, size_t align)
{
	char *raw = mmap(NULL, len + align, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)raw + align - 1) & ~(align - 1));
	if (p > raw)
		munmap(raw, p - raw);
	if (p + len < raw + len + align)
		munmap(p + len, raw + len + align - (p + len));
	return p;
}

/* A fresh region @r: mapped, PMD aligned, every page zero. */
static int new_region(struct worker *w, int r)
{
	struct region *reg = &w->r[r];
	size_t len = REGION_PMDS * w->z.pmd;

	int tries = 0;

	if (reg->p)
		munmap(reg->p, len);
	/* An injected allocation failure (ENOMEM) is tried again. */
	while (!(reg->p = map_region(len, w->z.pmd)) && errno == ENOMEM && ++tries < 1000)
		;
	if (!reg->p)
		return -1;
	reg->npages = len / w->z.psz;
	memset(reg->gen, 0, reg->npages * sizeof(*reg->gen));
	memset(reg->state, PG_KNOWN, reg->npages);
	reg->locked = false;
	return 0;
}

/* A random run of pages in region @r: its first page in *@pg, its length. */
static size_t pick_run(struct worker *w, int r, size_t *pg, size_t max)
{
	size_t n = 1 + rnd(&w->seed) % max;

	*pg = rnd(&w->seed) % w->r[r].npages;
	if (*pg + n > w->r[r].npages)
		n = w->r[r].npages - *pg;
	return n;
}

static void join_cgroup(const char *cg)
{
	char path[128], pid[16];

	snprintf(path, sizeof(path), "%scgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	ts_put(path, pid);
}

/* One random step on region @r. */
static void step(struct worker *w, int r)
{
	struct region *reg = &w->r[r];
	size_t psz = w->z.psz, pg, n, i;
	unsigned int op = rnd(&w->seed) % 21;
	char *a;

	w->ops++;
	n = pick_run(w, r, &pg, w->z.per / 4);
	a = reg->p + pg * psz;
	switch (op) {
	case 0: case 1: case 2: case 3:
		/* Sparse writes: a few pages of data, the others zero. */
		for (i = pg; i < pg + n; i++)
			if (reg->state[i] != PG_HOLE && rnd(&w->seed) % 8 == 0)
				write_page(w, r, i, rnd(&w->seed) % 3 == 0);
		check_range(w, r, pg, n);
		break;
	case 4:
		/* Dense writes over a run. */
		for (i = pg; i < pg + n; i++)
			if (reg->state[i] != PG_HOLE)
				write_page(w, r, i, false);
		check_range(w, r, pg, n);
		break;
	case 5: {
		/* fork: the child reads everything and writes (COW); the parent's pages stay. */
		pid_t child = fork();
		int status;

		if (!child) {
			check_all(w);
			for (i = pg; i < pg + n; i++)
				if (reg->state[i] != PG_HOLE)
					write_page(w, r, i, i & 1);
			check_range(w, r, pg, n);
			_exit(w->errors ? 1 : 0);
		}
		if (child > 0 && waitpid(child, &status, 0) == child &&
		    !(WIFEXITED(status) && !WEXITSTATUS(status))) {
			fprintf(stderr, "# worker %u: the forked child saw bad data\n", w->id);
			w->errors++;
		}
		check_range(w, r, pg, n);
		break;
	}
	case 6:
		/* Partial munmap: a hole until the region is made anew. */
		if (reg->locked)
			break;
		if (!munmap(a, n * psz))
			memset(reg->state + pg, PG_HOLE, n);
		break;
	case 7:
		/* A new region when this one has holes, else move it. */
		if (has_holes(reg) || reg->locked) {
			check_all(w);
			if (new_region(w, r))
				w->errors++;
		} else {
			size_t len = reg->npages * psz;
			char *to = map_region(len, w->z.pmd);
			char *moved = to ? mremap(reg->p, len, len,
						  MREMAP_MAYMOVE | MREMAP_FIXED, to) : MAP_FAILED;

			if (moved != MAP_FAILED)
				reg->p = moved;
			else if (to)
				munmap(to, len);
			check_range(w, r, 0, reg->npages);
		}
		break;
	case 8:
		/* Read-only for a moment: the data reads the same. */
		if (!has_holes(reg)) {
			mprotect(a, n * psz, PROT_READ);
			check_range(w, r, pg, n);
			/* Writable again, whatever allocation fails. */
			while (mprotect(a, n * psz, PROT_READ | PROT_WRITE) && errno == ENOMEM)
				;
		}
		break;
	case 9:
		if (reg->locked || has_holes(reg))
			break;
		if (!madvise(a, n * psz, MADV_DONTNEED))
			for (i = pg; i < pg + n; i++)
				reg->gen[i] = 0;
		check_range(w, r, pg, n);
		break;
	case 10:
		if (reg->locked || has_holes(reg))
			break;
		if (!madvise(a, n * psz, MADV_FREE))
			memset(reg->state + pg, PG_FREED, n);
		check_range(w, r, pg, n);
		break;
	case 11:
		madvise(reg->p, reg->npages * psz, MADV_COLD);
		check_range(w, r, pg, n);
		break;
	case 12:
		madvise(reg->p, reg->npages * psz, MADV_PAGEOUT);
		check_range(w, r, 0, reg->npages);
		break;
	case 13:
		if (!has_holes(reg))
			madvise(reg->p, reg->npages * psz,
				rnd(&w->seed) & 1 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
		break;
	case 14:
		if (has_holes(reg))
			break;
		/*
		 * An mlock() that fails (an injected ENOMEM) may have locked
		 * part of the region: unlocked again, so that the region is
		 * either all locked or not at all (MADV_DONTNEED stops at the
		 * first locked VMA, having zapped those before it).
		 */
		if (reg->locked || mlock(reg->p, reg->npages * psz)) {
			while (munlock(reg->p, reg->npages * psz) && errno == ENOMEM)
				;
			reg->locked = false;
		} else {
			reg->locked = true;
		}
		check_range(w, r, 0, reg->npages);
		break;
	case 15:
		/* Move some pages to another node (any folio size). */
		if (w->two_nodes) {
			void *pages[16];
			int nodes[16], status[16], k = 0;

			for (i = pg; i < pg + n && k < 16; i += 1 + n / 16)
				if (reg->state[i] != PG_HOLE) {
					pages[k] = reg->p + i * psz;
					nodes[k++] = rnd(&w->seed) & 1;
				}
			if (k)
				syscall(__NR_move_pages, 0, k, pages, nodes, status,
					MPOL_MF_MOVE);
			check_range(w, r, pg, n);
		}
		break;
	case 16:
		join_cgroup(rnd(&w->seed) & 1 ? CG_A : CG_B);
		break;
	case 17: {
		/* Push some of the memcg out to zram. */
		char path[128];

		snprintf(path, sizeof(path), "%smemory.reclaim",
			 rnd(&w->seed) & 1 ? CG_A : CG_B);
		ts_put(path, "4M");
		check_range(w, r, 0, reg->npages);
		break;
	}
	case 18:
		if (rnd(&w->seed) % 8 == 0)
			ts_put("/proc/sys/vm/compact_memory", "1");
		break;
	case 19:
		/* KSM: the region mergeable (mostly), or no longer. */
		madvise(reg->p, reg->npages * psz,
			rnd(&w->seed) % 4 ? MADV_MERGEABLE : MADV_UNMERGEABLE);
		check_range(w, r, pg, n);
		break;
	default:
		check_all(w);
		break;
	}
}

/*
 * Grow the stack now, deeper than a step goes: growing it later
 * allocates (expand_downwards(): the maple tree's nodes), and a stack
 * that cannot grow is SIGSEGV, which an injected failure would make of
 * a fault on it.
 */
static void grow_stack(void)
{
	char pad[256 << 10];

	memset(pad, 0, sizeof(pad));
	/* The writes stay: the compiler must think the array is read. */
	asm volatile("" : : "r" (pad) : "memory");
}

/*
 * No rseq for a worker that fails allocations: on its way back to user
 * space the kernel writes the CPU number into the thread's rseq area
 * (glibc registers one in the TLS), and a write it cannot complete is
 * SIGSEGV (rseq_handle_notify_resume()), as for any program: the TLS
 * page copied on write after a fork, or brought back from swap after
 * memory.reclaim, needs a page.  0, or -errno.
 */
static int rseq_off(void)
{
	char *area = (char *)__builtin_thread_pointer() + __rseq_offset;

	if (!__rseq_size)
		return 0;
	/*
	 * Unregistering takes the length registered: 32 (the original
	 * struct rseq) where __rseq_size says what of it is used (20 in
	 * Debian 12's glibc), __rseq_size if more.
	 */
	if (syscall(__NR_rseq, area, 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG) &&
	    syscall(__NR_rseq, area, __rseq_size, RSEQ_FLAG_UNREGISTER, RSEQ_SIG))
		return -errno;
	return 0;
}

static __noreturn void worker_run(unsigned int id, time_t end, int two_nodes,
				  bool fail, struct stress_stats *st)
{
	struct worker w = { .id = id, .seed = 0x51a7 + id * 7919, .two_nodes = two_nodes };
	void (*grow)(void) = grow_stack;
	int r;

	thp_sizes(&w.z);
	join_cgroup(id & 1 ? CG_A : CG_B);
	for (r = 0; r < NR_REGIONS; r++) {
		size_t np = REGION_PMDS * w.z.per;

		w.r[r].gen = calloc(np, sizeof(*w.r[r].gen));
		w.r[r].state = calloc(np, 1);
		if (!w.r[r].gen || !w.r[r].state || new_region(&w, r))
			_exit(2);
	}
	/* From here on, this task's allocations may fail (and its children's). */
	/* Called through an opaque pointer: not inlined into this frame. */
	asm("" : "+r" (grow));
	grow();
	if (fail && (rseq_off() || ts_put("/proc/self/make-it-fail", "1")))
		_exit(3);
	while (time(NULL) < end && !w.errors)
		step(&w, rnd(&w.seed) % NR_REGIONS);
	check_all(&w);
	st->ops[id] = w.ops;
	st->verified[id] = w.verified;
	st->errors[id] = w.errors;
	printf("# worker %u: %ld steps, %ld pages verified, %ld bad\n",
	       id, w.ops, w.verified, w.errors);
	fflush(stdout);
	_exit(w.errors ? 1 : 0);
}

/* A knob, values it must take and values it must refuse. */
struct knob {
	const char *path;
	const char *good[6];
	const char *bad[3];
};

static const struct knob knobs[] = {
	{ THP_SCAN "enabled", { "1", "1", "1", "0" }, { "2", "on" } },
	{ THP_SCAN "underused_zero_pct", { "0", "50", "90", "100" }, { "101", "-1" } },
	{ THP_SCAN "pages_to_scan", { "1", "512", "16777216" }, { "0", "16777217" } },
	{ THP_SCAN "scan_sleep_millisecs", { "0", "1", "10" }, { "86400001", "x" } },
	{ THP_SCAN "min_age_millisecs", { "0", "1", "100" }, { "-5" } },
	{ THP_SCAN "collapse_max_new_pct", { "0", "12", "100" }, { "101" } },
	{ THP_SCAN "split_on_swapout", { "never", "underused", "always" }, { "sometimes" } },
	{ THP "enabled", { "always", "madvise", "defer", "auto", "never", "always" }, { "bogus" } },
	{ THP "defrag", { "always", "defer", "defer+madvise", "madvise", "never" },
	  { "sometimes" } },
	{ THP "shrink_underused", { "0", "1" }, { "2" } },
	{ THP "khugepaged/max_ptes_none", { "0", "64", "511" }, { "512" } },
	{ THP "khugepaged/scan_sleep_millisecs", { "0", "10" } },
	{ THP "khugepaged/pages_to_scan", { "4096", "512" }, { "0" } },
	{ KSM "use_zero_pages", { "0", "1", "1" }, { "2" } },
	{ KSM "run", { "1" }, { "3" } },
	{ KSM "sleep_millisecs", { "0", "20" }, { "x" } },
	{ KSM "pages_to_scan", { "100", "2000" }, { "x" } },
};

/* Flip knobs until @end; exits 0 if each write did what it must. */
static __noreturn void flipper_run(time_t end, const struct thp_sizes *z, bool control)
{
	static const char * const sizes[] = { "always", "inherit", "madvise",
					      "defer", "auto", "never" };
	unsigned int seed = 0xf11b, bad = 0, writes = 0;
	char path[128];
	int order;

	while (time(NULL) < end) {
		const struct knob *k = &knobs[rnd(&seed) % ARRAY_SIZE(knobs)];
		unsigned int ng = 0, nb = 0, i;
		int err;

		/* The control run (thpscan.stress_control=1): thp_scan stays off. */
		if (control && !strncmp(k->path, THP_SCAN, strlen(THP_SCAN)))
			continue;

		while (ng < 6 && k->good[ng])
			ng++;
		while (nb < 3 && k->bad[nb])
			nb++;
		if (nb && rnd(&seed) % 4 == 0) {
			i = rnd(&seed) % nb;
			err = ts_put(k->path, k->bad[i]);
			if (err != -EINVAL) {
				printf("# %s took \"%s\": %d, not -EINVAL\n", k->path,
				       k->bad[i], err);
				bad++;
			}
		} else {
			i = rnd(&seed) % ng;
			err = ts_put(k->path, k->good[i]);
			if (err) {
				printf("# %s refused \"%s\": %d\n", k->path, k->good[i], err);
				bad++;
			}
		}
		/* And one size's policy. */
		order = 1 + rnd(&seed) % z->order_pmd;
		snprintf(path, sizeof(path), THP "hugepages-%zukB/enabled",
			 (z->psz << order) / 1024);
		if (!access(path, F_OK)) {
			err = ts_put(path, sizes[rnd(&seed) % ARRAY_SIZE(sizes)]);
			if (err) {
				printf("# %s: %d\n", path, err);
				bad++;
			}
			if (ts_put(path, "sometimes") != -EINVAL) {
				printf("# %s took \"sometimes\"\n", path);
				bad++;
			}
		}
		writes += 3;
		usleep(20000);
	}
	printf("# knob flipper: %u writes, %u wrong results\n", writes, bad);
	fflush(stdout);
	_exit(bad ? 1 : 0);
}

#define CPU_ONLINE	"/sys/devices/system/cpu/cpu%d/online"

/*
 * Take a CPU other than CPU 0 offline, bring it back, and again, until
 * @end; exits 0 if every write succeeded and every CPU is online at the
 * end.  Offlining drains the CPU's LRU batches (lru_add_drain_cpu()) and
 * moves its tasks, kthpscand included, to the CPUs left.
 */
static __noreturn void hotplug_run(time_t end, int ncpus, struct stress_stats *st)
{
	unsigned int seed = 0x40c9, bad = 0;
	char path[64];
	int cpu, err;

	while (time(NULL) < end) {
		cpu = 1 + rnd(&seed) % (ncpus - 1);
		snprintf(path, sizeof(path), CPU_ONLINE, cpu);
		err = ts_put(path, "0");
		if (err) {
			printf("# cpu%d: offline: %d\n", cpu, err);
			bad++;
		}
		usleep(20000 + rnd(&seed) % 200000);
		err = ts_put(path, "1");
		if (err) {
			printf("# cpu%d: online: %d\n", cpu, err);
			bad++;
		}
		st->hotplug_cycles++;
		usleep(20000 + rnd(&seed) % 200000);
	}
	for (cpu = 1; cpu < ncpus; cpu++) {
		snprintf(path, sizeof(path), CPU_ONLINE, cpu);
		if (ts_get_long(path) != 1) {
			printf("# cpu%d is not online at the end\n", cpu);
			bad++;
		}
	}
	printf("# cpu hotplug: %ld cycles, %u failed writes\n", st->hotplug_cycles, bad);
	fflush(stdout);
	_exit(bad ? 1 : 0);
}

/*
 * Fault injection (lib/fault-inject.c, Documentation/fault-injection/):
 * page allocations (fail_page_alloc: order 0 included, user pages and
 * allocations that may sleep included) and slab allocations (failslab)
 * fail with probability @pct %, in the tasks marked make-it-fail only
 * (task-filter), without a report each (verbose 0: a stack dump each
 * would flood the console).  "times" counts down with each failure: it
 * starts at FAIL_TIMES, so that FAIL_TIMES less what is left is how many
 * failures were injected.
 */
#define FAIL_PAGE	"/sys/kernel/debug/fail_page_alloc/"
#define FAILSLAB	"/sys/kernel/debug/failslab/"
#define FAIL_TIMES	100000000L

static int fail_set(const char *dir, const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "%s%s", dir, name);
	return ts_put(path, val);
}

static int fail_start(const char *dir, long pct, bool pages)
{
	char p[16], t[24];
	int err = 0;

	snprintf(p, sizeof(p), "%ld", pct);
	snprintf(t, sizeof(t), "%ld", FAIL_TIMES);
	err |= fail_set(dir, "verbose", "0");
	err |= fail_set(dir, "task-filter", "Y");
	err |= fail_set(dir, "interval", "1");
	err |= fail_set(dir, "space", "0");
	err |= fail_set(dir, "times", t);
	err |= fail_set(dir, "ignore-gfp-wait", "N");
	if (pages) {
		err |= fail_set(dir, "ignore-gfp-highmem", "N");
		err |= fail_set(dir, "min-order", "0");
	}
	return err | fail_set(dir, "probability", p);
}

/* Injection off; how many failures it injected. */
static long fail_stop(const char *dir)
{
	char path[128];

	fail_set(dir, "probability", "0");
	snprintf(path, sizeof(path), "%stimes", dir);
	return FAIL_TIMES - ts_get_long(path);
}

/*
 * The kernel threads whose allocations fail with the workers': the first
 * FAIL_SCANNERS of them in targeted_failures() too.
 */
static const char * const fail_kthreads[] = { "kthpscand", "khugepaged", "kswapd" };
#define FAIL_SCANNERS	2

/*
 * Write @val to make-it-fail of every kernel thread whose name starts
 * with one of the first @n of fail_kthreads[]; how many took it.
 */
static int kthreads_make_it_fail(const char *val, unsigned int n)
{
	char path[64];
	unsigned int i;
	int pids[64], np, j, done = 0;

	for (i = 0; i < n; i++) {
		np = ts_pids_by_comm(fail_kthreads[i], pids, ARRAY_SIZE(pids));
		for (j = 0; j < np; j++) {
			snprintf(path, sizeof(path), "/proc/%d/make-it-fail", pids[j]);
			done += !ts_put(path, val);
		}
	}
	return done;
}

/* nr_anon of the @size_kb size; a missing one fails the test and counts 0. */
static long counter_at(struct __test_metadata *_metadata, unsigned long size_kb)
{
	long n = ts_size_stat(size_kb, "nr_anon");

	if (n < 0) {
		TH_LOG("no hugepages-%lukB/stats/nr_anon", size_kb);
		_metadata->exit_code = KSFT_FAIL;
		return 0;
	}
	return n;
}

/*
 * nr_anon of every anon THP size (orders 2 to the PMD order, each of
 * which has its hugepages-<size>kB), summed in kB; a missing counter
 * fails the test.
 */
static long nr_anon_kb(struct __test_metadata *_metadata, const struct thp_sizes *z)
{
	long kb = 0;
	int order;

	for (order = 2; order <= z->order_pmd; order++) {
		unsigned long size_kb = (z->psz << order) / 1024;

		kb += counter_at(_metadata, size_kb) * size_kb;
	}
	return kb;
}

/* Field @key of @cg's memory.stat; -1 if there is none. */
static long memcg_stat(const char *cg, const char *key)
{
	char path[128];

	snprintf(path, sizeof(path), "%smemory.stat", cg);
	return ts_keyed(path, key);
}

/* Write @val to file @name of @cg; 0 or -errno. */
static int cg_put(const char *cg, const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "%s%s", cg, name);
	return ts_put(path, val);
}

static long cg_long(const char *cg, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s%s", cg, name);
	return ts_get_long(path);
}

/* Memory.stat's anonymous and swap-cache figures, which must all be 0. */
static const char * const memcg_anon_keys[] = {
	"anon", "anon_thp", "shmem", "active_anon", "inactive_anon",
	"unevictable", "swapcached",
};

/*
 * Is nothing but kernel memory charged to @cg, to the page?  The per-CPU
 * charge stock drained first: a write of memory.high (to 0: the kernel
 * drains the stock before it compares the usage; no task is left there
 * to be throttled).
 */
static bool memcg_only_kernel(const char *cg, long *cur, long *kernel)
{
	unsigned int i;
	bool ok = !cg_put(cg, "memory.high", "0");

	*cur = cg_long(cg, "memory.current");
	*kernel = memcg_stat(cg, "kernel");
	for (i = 0; i < ARRAY_SIZE(memcg_anon_keys); i++)
		ok &= memcg_stat(cg, memcg_anon_keys[i]) == 0;
	return ok && *cur >= 0 && *cur == *kernel;
}

/* See the test: nothing of the workers is left charged to @cg. */
static void expect_memcg_empty(struct __test_metadata *_metadata, const char *cg)
{
	long cur, kernel;
	unsigned int i;
	bool ok;

	ASSERT_LE(0, memcg_stat(cg, "kernel")) TH_LOG("%s: no kernel in memory.stat", cg);
	for (i = 0; i < ARRAY_SIZE(memcg_anon_keys); i++) {
		const char *key = memcg_anon_keys[i];

		if (memcg_stat(cg, key) < 0)
			ksft_print_msg("%s: no %s in memory.stat\n", cg, key);
		ASSERT_LE(0, memcg_stat(cg, key));
	}
	ok = POLL(memcg_only_kernel(cg, &cur, &kernel), 20);
	EXPECT_TRUE(ok) TH_LOG("%s: memory.current %ld, kernel %ld", cg, cur, kernel);
	for (i = 0; !ok && i < ARRAY_SIZE(memcg_anon_keys); i++)
		ksft_print_msg("%s: %s %ld\n", cg, memcg_anon_keys[i],
			       memcg_stat(cg, memcg_anon_keys[i]));
	ASSERT_EQ(0, cg_put(cg, "memory.high", "max"));
}

/*
 * With kmemleak in the kernel (/sys/kernel/debug/kmemleak), no object
 * leaked in the run: the scans when it ends report no object that the
 * scans before it had not.  Reading the file lists every object reported
 * so far and still unreferenced; those reported before the run are left
 * for the scans at the end of the boot (qemu/init), which fail the boot
 * on any.  Without kmemleak, said so in the log: the memcg checks see
 * only charged memory.
 */
#define KMEMLEAK "/sys/kernel/debug/kmemleak"
#define KMEMLEAK_OBJ "unreferenced object 0x"

static char kmemleak_before[65536];

/*
 * Two scans: a scan reports an unreferenced object only if its checksum
 * is what the scan before it found (the first one that finds it
 * unreferenced only records the checksum), and only once it is 5 s old
 * (kmemleak's minimum age, counted from the first scan).
 */
static int kmemleak_scan(void)
{
	int err = ts_put(KMEMLEAK, "scan");

	sleep(5);
	return err ?: ts_put(KMEMLEAK, "scan");
}

/*
 * What kmemleak suspects before the run: an object leaked before it is
 * reported now, not blamed on the run at its end.
 */
static void kmemleak_start(void)
{
	if (!access(KMEMLEAK, F_OK)) {
		sleep(5);
		kmemleak_scan();
		ts_get(KMEMLEAK, kmemleak_before, sizeof(kmemleak_before));
	}
}

static void kmemleak_check(struct __test_metadata *_metadata)
{
	static char buf[65536];
	char obj[64], *p;
	int n = 0;

	if (access(KMEMLEAK, F_OK)) {
		ksft_print_msg("no kmemleak in this kernel: uncharged kernel memory not checked\n");
		return;
	}
	ASSERT_EQ(0, kmemleak_scan());
	ASSERT_EQ(0, ts_get(KMEMLEAK, buf, sizeof(buf)));
	for (p = strstr(buf, KMEMLEAK_OBJ); p; p = strstr(p + 1, KMEMLEAK_OBJ)) {
		/* "unreferenced object 0x<address>", the address up to its end */
		snprintf(obj, sizeof(obj), "%.*s", (int)(strlen(KMEMLEAK_OBJ) +
			 strcspn(p + strlen(KMEMLEAK_OBJ), "(\n ")), p);
		if (strstr(kmemleak_before, obj))
			continue;
		if (!n++)
			TH_LOG("kmemleak: %.1000s", p);
	}
	EXPECT_EQ(0, n) TH_LOG("kmemleak: %d objects leaked in the run", n);
}

/* The sum of thp_scan's split counters over every size. */
static long splits(const struct thp_sizes *z)
{
	static const char * const names[] = { "thp_split_scan_underused",
		"thp_split_scan_partial", "thp_split_scan_swapout" };
	long sum = 0, n;
	unsigned int i;
	int order;

	for (order = 1; order <= z->order_pmd; order++)
		for (i = 0; i < ARRAY_SIZE(names); i++) {
			n = ts_size_stat((z->psz << order) / 1024, names[i]);
			if (n > 0)
				sum += n;
		}
	return sum;
}

/*
 * The events of the summary line: /proc/vmstat's, or the sum of the
 * per-size stats for one it does not have (thp_split_scan_keep_busy).
 */
static const char * const summary_events[] = {
	"thp_collapse_alloc_failed", "thp_fault_alloc", "thp_fault_fallback",
	"thp_collapse_alloc", "thp_split_page", "thp_split_page_failed", "thp_split_scan_underused",
	"thp_split_scan_partial", "thp_split_scan_swapout", "thp_split_scan_failed",
	"thp_split_scan_keep_busy", "thp_swpout", "thp_swpout_fallback", "pswpout",
	"pgmigrate_success", "pgmigrate_fail", "thp_migration_success",
	"thp_migration_fail",
};

static long summary_value(struct __test_metadata *_metadata, const char *name)
{
	long v = ts_keyed("/proc/vmstat", name);

	return v >= 0 ? v : ts_must_sum_stat(_metadata, name);
}

FIXTURE(stress) {
	struct thp_sizes z;
	struct thp_settings s;
};

FIXTURE_SETUP(stress)
{
	struct thp_settings s;
	int i;

	thp_scan_reset();
	ASSERT_EQ(0, access(THP_SCAN "enabled", F_OK)) TH_LOG("no thp_scan");
	thp_sizes(&self->z);
	thp_read_settings(&s);
	s.thp_enabled = THP_ALWAYS;
	s.thp_defrag = THP_DEFRAG_MADVISE;
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = i == self->z.order_pmd ? THP_INHERIT :
					 i >= 2 && i < self->z.order_pmd ? THP_ALWAYS :
					 THP_NEVER;
	s.khugepaged.max_ptes_none = 511;
	s.khugepaged.scan_sleep_millisecs = 10;
	s.khugepaged.pages_to_scan = 4096;
	thp_write_settings(&s);
	self->s = s;
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "0"));
	ASSERT_EQ(0, ts_put(THP_SCAN "scan_sleep_millisecs", "1"));
	ASSERT_EQ(0, ts_put(THP_SCAN "pages_to_scan", "16777216"));
	ASSERT_EQ(0, ts_put(THP_SCAN "underused_zero_pct", "50"));
	ASSERT_EQ(0, access(KSM "run", F_OK)) TH_LOG("no KSM (CONFIG_KSM)");
	ASSERT_EQ(0, ts_put(KSM "use_zero_pages", "1"));
	ASSERT_EQ(0, ts_put(KSM "sleep_millisecs", "20"));
	ASSERT_EQ(0, ts_put(KSM "pages_to_scan", "1000"));
	ASSERT_EQ(0, ts_put(KSM "run", "1"));
	ASSERT_EQ(0, ts_put(ZRAM "disksize", "256M"));
	ASSERT_EQ(0, system("mkswap /dev/zram0 >/dev/null && swapon /dev/zram0"));
	ASSERT_EQ(0, ts_put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_A, 0755) || errno == EEXIST);
	ASSERT_TRUE(!mkdir(CG_B, 0755) || errno == EEXIST);
}

FIXTURE_TEARDOWN(stress)
{
	thp_scan_reset();
}

/* Where the memory is, for a failure's log. */
static void log_meminfo(const char *when)
{
	static const char * const keys[] = { "MemFree:", "MemAvailable:",
		"AnonPages:", "AnonHugePages:", "Slab:", "SUnreclaim:",
		"PageTables:", "KernelStack:", "Percpu:", "SwapCached:" };
	unsigned int i;

	printf("# meminfo %s:", when);
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		printf(" %s %ld", keys[i], ts_keyed("/proc/meminfo", keys[i]));
	printf(" kB\n");
}

/*
 * The error paths for sure (thpscan.stress_fail=), after the random
 * failures of the run: every page and slab allocation of kthpscand and
 * khugepaged fails, and nobody else's, while there are four sparse PMD
 * THPs that kthpscand would split and a dense PMD range of small pages
 * that khugepaged would collapse.  Both meet the failures and say so in
 * the trace, on this child's own pfns (a judgement that cannot allocate
 * its rmap bitmap keeps the folio as busy; khugepaged's scan of the range
 * ends in a failed THP allocation) and change nothing; once
 * allocations succeed again both do their work, every byte as it was.
 * In a child of its own: a new mm, which khugepaged has not dropped for
 * this process's PR_SET_THP_DISABLE.  Returns the child's exit status:
 * 0 if all went as said.
 */
static int targeted_child(const struct thp_sizes *z, long secs, int in, int out)
{
	unsigned long heads[4], *pfns = NULL;
	struct ev_filter busy_ev = {
		.decision = "keep_rmap_busy", .pfns = heads, .n = 4,
	};
	long failed = 0, busy = 0, thps, huge, counted, busy0;
	char c;
	size_t i, per = z->per;
	char *dense, *sparse;

	if (prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0))
		return 2;
	/*
	 * Ready: the parent makes khugepaged and kthpscand fail, and says
	 * so; only then the THPs and the range they would work on (with
	 * no minimum age, they would be split and collapsed at once).
	 */
	if (write(out, "g", 1) != 1 || read(in, &c, 1) != 1)
		return 3;
	busy0 = ts_size_stat(z->pmd_kb, "thp_split_scan_keep_busy");
	sparse = ts_sparse_thps(z, 4);
	dense = ts_map_aligned(z->pmd, z->pmd);
	pfns = calloc(per, sizeof(*pfns));
	if (!sparse || !dense || !pfns || ts_count_thps(sparse, 4, z->pmd) != 4 ||
	    ts_head_pfns(sparse, 4, per, z->psz, heads) ||
	    madvise(dense, z->pmd, MADV_NOHUGEPAGE))
		return 3;
	for (i = 0; i < per; i++)
		ts_fill_page(dense, i, z->psz);
	if (ts_pagemap_pfns(dense, per, pfns) || madvise(dense, z->pmd, MADV_HUGEPAGE))
		return 3;
	/*
	 * What happened to this child's memory, from the trace (the
	 * parent enabled and cleared it): kthpscand kept its THPs as busy,
	 * khugepaged's scan of its range ended in a failed allocation.
	 */
	POLL((busy = ts_events(&busy_ev)) > 0 &&
	     (failed = khugepaged_scans("alloc_huge_page_failed", pfns, per)) > 0, secs);
	/* Each of those decisions counted in the PMD size's keep_busy. */
	POLL((counted = ts_size_stat(z->pmd_kb, "thp_split_scan_keep_busy") - busy0) >= busy,
	     secs);
	thps = ts_count_thps(sparse, 4, z->pmd);
	huge = ts_smaps_kb(dense, "AnonHugePages:");
	printf("# targeted: %ld collapse allocations failed, %ld kept busy (%ld counted); ",
	       failed, busy, counted);
	printf("%ld sparse THPs whole, dense range %ld kB in a THP\n", thps, huge);
	if (failed <= 0 || busy <= 0 || busy0 < 0 || counted < busy || thps != 4 || huge)
		return 4;
	/* The parent stops the failures: now they can. */
	if (write(out, "s", 1) != 1 || read(in, &c, 1) != 1)
		return 3;
	POLL((thps = ts_count_thps(sparse, 4, z->pmd)) == 0 &&
	     (huge = ts_smaps_kb(dense, "AnonHugePages:")) == (long)(z->pmd >> 10), secs);
	printf("# targeted, afterwards: %ld sparse THPs left, dense range %ld kB in a THP\n",
	       thps, huge);
	if (thps || huge != (long)(z->pmd >> 10))
		return 5;
	if (ts_check_pages(sparse, 4 * per, z->psz, ts_one_per_folio, &per) != -1 ||
	    ts_check_pages(dense, per, z->psz, ts_every_page, NULL) != -1)
		return 6;
	return 0;
}

/* The parent's side of targeted_child(), at @s's settings. */
static void targeted_failures(struct __test_metadata *_metadata,
			      struct thp_settings *s, const struct thp_sizes *z)
{
	int to_child[2], to_parent[2], status;
	long secs;
	pid_t pid;
	char c;

	/* khugepaged back from its sleep after a failed allocation at once. */
	s->khugepaged.alloc_sleep_millisecs = 10;
	thp_write_settings(s);
	/* The flipper left every knob as it pleased: kthpscand to judge. */
	ASSERT_EQ(0, ts_put(THP "shrink_underused", "1"));
	ASSERT_EQ(0, ts_put(THP_SCAN "enabled", "1"));
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "0"));
	ASSERT_EQ(0, ts_put(THP_SCAN "scan_sleep_millisecs", "10"));
	ASSERT_EQ(0, ts_put(THP_SCAN "pages_to_scan", "16777216"));
	ASSERT_EQ(0, ts_put(THP_SCAN "underused_zero_pct", "50"));
	ASSERT_EQ(0, ts_put(THP_SCAN "collapse_max_new_pct", "100"));
	/*
	 * 1000 rounds of kthpscand; khugepaged sleeps as long between its
	 * passes (s: 10 ms), each over all of the child's memory.
	 */
	secs = kthpscand_deadline(0, 1000);
	/* The child reads its own folios' fate from these two events. */
	ASSERT_EQ(0, ts_put(TRACE "events/thp_scan/enable", "1"));
	ASSERT_EQ(0, ts_put(TRACE "events/huge_memory/mm_khugepaged_scan_pmd/enable", "1"));
	ASSERT_EQ(0, ts_clear_trace());
	/* A child that has failed early has closed its end: no SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(to_child[1]);
		close(to_parent[0]);
		_exit(targeted_child(z, secs, to_child[0], to_parent[1]));
	}
	close(to_child[0]);
	close(to_parent[1]);
	/* Each read ends when the child writes, or exits. */
	if (read(to_parent[0], &c, 1) == 1) {
		ASSERT_EQ(FAIL_SCANNERS, kthreads_make_it_fail("1", FAIL_SCANNERS));
		ASSERT_EQ(0, fail_start(FAIL_PAGE, 100, true));
		ASSERT_EQ(0, fail_start(FAILSLAB, 100, false));
		ASSERT_EQ(1, write(to_child[1], "f", 1));
		read(to_parent[0], &c, 1);
		TH_LOG("targeted: %ld page, %ld slab allocations of kthpscand, khugepaged failed",
		       fail_stop(FAIL_PAGE), fail_stop(FAILSLAB));
		ASSERT_EQ(FAIL_SCANNERS, kthreads_make_it_fail("0", FAIL_SCANNERS));
		write(to_child[1], "x", 1);
	}
	close(to_child[1]);
	close(to_parent[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("targeted failures: the child's status %#x", status);
}

TEST_F_TIMEOUT(stress, checksummed_data_survives, 1500)
{
	long seconds = ts_cmdline_long("thpscan.stress_seconds=");
	long fail_pct = ts_cmdline_long("thpscan.stress_fail=");
	long anon0, split0, kzero0, ops = 0, verified = 0, bad = 0;
	long v0[ARRAY_SIZE(summary_events)], dv[ARRAY_SIZE(summary_events)];
	long injected_pages = 0, injected_slab = 0;
	pid_t pids[NR_WORKERS + 2];
	int two_nodes = !access("/sys/devices/system/node/node1", F_OK);
	int ncpus = sysconf(_SC_NPROCESSORS_CONF);
	int i, status, bad_workers = 0, flipper_ok, hotplug_ok = 1, nr_fail = 0;
	struct stress_stats *st;
	bool control, fail = fail_pct > 0;
	time_t end;

	if (seconds <= 0)
		seconds = 30;
	/*
	 * thpscan.stress_control=1: the same run with thp_scan off, to tell
	 * whether what a run found is thp_scan's.
	 */
	control = ts_cmdline_long("thpscan.stress_control=") == 1;
	if (control) {
		ASSERT_EQ(0, ts_put(THP_SCAN "enabled", "0"));
		TH_LOG("control run: thp_scan off");
	}
	/* Two nodes when the command line says so (qemu/boot.sh). */
	if (ts_cmdline_long("thpscan.numa_nodes=") >= 2)
		ASSERT_TRUE(two_nodes);
	/* CPU hotplug wherever there is a second CPU (CONFIG_HOTPLUG_CPU). */
	if (ncpus >= 2) {
		char path[64];

		snprintf(path, sizeof(path), CPU_ONLINE, 1);
		ASSERT_EQ(1, ts_get_long(path)) TH_LOG("%s: no CPU hotplug", path);
	}
	if (fail) {
		ASSERT_LE(fail_pct, 100);
		ASSERT_EQ(0, access(FAIL_PAGE "probability", F_OK))
			TH_LOG("no fault injection in this kernel (CONFIG_FAIL_PAGE_ALLOC)");
		ASSERT_EQ(0, access(FAILSLAB "probability", F_OK))
			TH_LOG("no fault injection in this kernel (CONFIG_FAILSLAB)");
	}
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, st);
	log_meminfo("before");
	/* Other tasks' large folios gone first: they would hide a leak. */
	ASSERT_LE(0, ts_quiet_thps());
	anon0 = nr_anon_kb(_metadata, &self->z);
	kmemleak_start();
	split0 = splits(&self->z);
	kzero0 = ts_get_long(KSM "ksm_zero_pages");
	for (i = 0; i < (int)ARRAY_SIZE(summary_events); i++)
		v0[i] = summary_value(_metadata, summary_events[i]);
	if (fail) {
		nr_fail = kthreads_make_it_fail("1", ARRAY_SIZE(fail_kthreads));
		/* kthpscand, khugepaged and a kswapd at least */
		ASSERT_LE(3, nr_fail);
		ASSERT_EQ(0, fail_start(FAIL_PAGE, fail_pct, true));
		ASSERT_EQ(0, fail_start(FAILSLAB, fail_pct, false));
	}
	end = time(NULL) + seconds;
	TH_LOG("%d workers, a knob flipper%s for %ld s, %s%s", NR_WORKERS,
	       ncpus >= 2 ? " and CPU hotplug" : "", seconds,
	       two_nodes ? "two nodes" : "one node",
	       fail ? ", allocations failing" : "");
	if (fail)
		TH_LOG("page and slab allocations fail at %ld %% in the workers and %d kthreads",
		       fail_pct, nr_fail);
	/* The workers, the flipper, and the hotplugger if there are CPUs to unplug. */
	pids[NR_WORKERS + 1] = -1;
	for (i = 0; i < NR_WORKERS + (ncpus >= 2 ? 2 : 1); i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (!pids[i]) {
			if (i == NR_WORKERS)
				flipper_run(end, &self->z, control);
			if (i == NR_WORKERS + 1)
				hotplug_run(end, ncpus, st);
			worker_run(i, end, two_nodes, fail, st);
		}
	}
	/*
	 * This process only waits and counts: no THP of its own (a deeper
	 * stack, a heap grown by stdio) in the counts that must go back.
	 */
	ASSERT_EQ(0, prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	for (i = 0; i < NR_WORKERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			TH_LOG("worker %d: %s %d", i,
			       WIFEXITED(status) ? "exit status" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			bad_workers++;
		}
	}
	ASSERT_EQ(pids[NR_WORKERS], waitpid(pids[NR_WORKERS], &status, 0));
	flipper_ok = WIFEXITED(status) && !WEXITSTATUS(status);
	if (pids[NR_WORKERS + 1] > 0) {
		ASSERT_EQ(pids[NR_WORKERS + 1], waitpid(pids[NR_WORKERS + 1], &status, 0));
		hotplug_ok = WIFEXITED(status) && !WEXITSTATUS(status);
	}
	if (fail) {
		injected_pages = fail_stop(FAIL_PAGE);
		injected_slab = fail_stop(FAILSLAB);
		kthreads_make_it_fail("0", ARRAY_SIZE(fail_kthreads));
	}
	EXPECT_EQ(0, bad_workers) TH_LOG("a worker read back what it did not write");
	EXPECT_TRUE(flipper_ok) TH_LOG("a knob took a bad value or refused a good one");
	EXPECT_TRUE(hotplug_ok) TH_LOG("a CPU did not go offline or online");
	for (i = 0; i < NR_WORKERS; i++) {
		ops += st->ops[i];
		verified += st->verified[i];
		bad += st->errors[i];
	}
	for (i = 0; i < (int)ARRAY_SIZE(summary_events); i++)
		dv[i] = summary_value(_metadata, summary_events[i]) - v0[i];
	/*
	 * One line for make stress's table (workbench/stress.sh): the
	 * events are system-wide, but in the run nothing else in the guest
	 * allocates, splits, collapses, swaps or migrates THPs.
	 */
	printf("# stress-summary seconds=%ld steps=%ld verified=%ld bad=%ld", seconds, ops,
	       verified, bad);
	printf(" hotplug_cycles=%ld injected_page=%ld injected_slab=%ld", st->hotplug_cycles,
	       injected_pages, injected_slab);
	for (i = 0; i < (int)ARRAY_SIZE(summary_events); i++)
		printf(" %s=%ld", summary_events[i], dv[i]);
	printf("\n");
	if (fail) {
		/* The random failures happened; then the targeted ones. */
		EXPECT_LT(0, injected_pages);
		EXPECT_LT(0, injected_slab);
		targeted_failures(_metadata, &self->s, &self->z);
	}

	/* The workers' THPs met kthpscand, and ksmd. */
	if (!control)
		EXPECT_LT(split0, splits(&self->z));
	TH_LOG("thp_scan splits in the run: %ld; KSM: %ld full scans, %ld shared, %ld sharing",
	       splits(&self->z) - split0, ts_get_long(KSM "full_scans"),
	       ts_get_long(KSM "pages_shared"), ts_get_long(KSM "pages_sharing"));
	/*
	 * KSM's count of its zero pages is back where it was: the workers
	 * are the only tasks of the guest with mergeable memory, and each
	 * zero page that ksmd placed was unmapped when they exited.  Stock
	 * 6.12.118 loses track of it when a process forks while ksmd merges
	 * (the first patch of the series, README.md, "Stress").
	 */
	EXPECT_EQ(kzero0, ts_get_long(KSM "ksm_zero_pages"));

	/*
	 * Back where it started, exactly, in the workers' own memcgs: the
	 * workers lived in A and B from their first step; with them gone
	 * and swap off (no page left in the swap cache), nothing of theirs
	 * may still be charged there but kernel memory.  memory.current
	 * holds the per-CPU charge stock as well: writing memory.high makes
	 * the kernel drain it (drain_all_stock()) before it looks at the
	 * usage, so after that write memory.current is what is charged, to
	 * the page, and it must be memory.stat's "kernel" and nothing more:
	 * a page, large or small, anonymous or in the swap cache, that the
	 * run left allocated and charged shows.  memory.stat is flushed
	 * from the per-CPU counters at least every 2 s: polled, with a
	 * deadline of ten flushes.  Every counter must exist.
	 */
	ASSERT_EQ(0, system("swapoff /dev/zram0"));
	ASSERT_EQ(0, ts_put(ZRAM "reset", "1"));
	expect_memcg_empty(_metadata, CG_A);
	expect_memcg_empty(_metadata, CG_B);
	/*
	 * And system-wide, no THP left behind by a worker (nr_anon of each
	 * size, which must exist): at most as many as before (kthpscand
	 * may have split some of this process's own), once no other task
	 * can make new ones and those another task held are gone
	 * (ts_exclusive_thps(): a worker's leaked folio is not freed by
	 * waiting).
	 */
	thp_scan_reset();
	ASSERT_LE(0, ts_exclusive_thps());
	EXPECT_TRUE(POLL(nr_anon_kb(_metadata, &self->z) <= anon0, 20))
		TH_LOG("anon THPs: %ld kB, %ld kB before", nr_anon_kb(_metadata, &self->z), anon0);
	kmemleak_check(_metadata);
	log_meminfo("after");
}

THP_SCAN_HARNESS_MAIN
