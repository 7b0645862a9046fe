// SPDX-License-Identifier: GPL-2.0
/*
 * collapse_compound_race.c - MADV_COLLAPSE of a PTE table whose pages come
 * from many different PMD THPs, each left mapped by one page only, in a loop.
 *
 * Mirrors the madvise context of upstream khugepaged "collapse_compound_extreme"
 * (tools/testing/selftests/mm/khugepaged.c), with the test's THP settings:
 *
 *   per iteration:
 *     mmap one PMD at BASE (1 GiB, as the test)
 *     512 times: MADV_HUGEPAGE, write every page (a PMD THP), MADV_NOHUGEPAGE,
 *       mremap the pages gathered so far plus the THP's first page away
 *       (the THP is split at the PMD and its other 511 pages unmapped: it is
 *       partially mapped and goes on its deferred split queue), then mremap
 *       them back, one page lower, growing the VMA by a fresh PMD at BASE
 *     munmap the fresh PMD; write every gathered page again
 *     count how many of the 512 pages are still in a THP (pagemap and
 *       kpageflags: a source THP that something split is one no longer)
 *     [-d MAX] sleep a random 0 to MAX ms
 *     THP "enabled" = never (the test's __madvise_collapse() does, to keep
 *     khugepaged away); MADV_HUGEPAGE; MADV_COLLAPSE, and once more if it
 *     failed with EAGAIN (the test's madvise_collapse_retry())
 *     check the range is one PMD THP with the data written; munmap
 *
 * -k N takes only the last N pages from THPs, the first 512 - N from
 * small pages faulted the same way (a quicker iteration under TCG).
 * -C writes /proc/sys/vm/compact_memory after the build, so that the
 * THP the collapse allocates is there without compaction (a control).
 * -D N writes 2 to /proc/sys/vm/drop_caches after every N sources made
 * partially mapped: drop_slab() runs every shrinker, the deferred split
 * shrinker among them, which splits the partially mapped THPs on its
 * queue, as reclaim would under memory pressure.  On a kernel without
 * thp_scan (or with it off) this is the state thp_scan's splits make
 * without pressure.
 * -t enables the huge_memory tracepoints of the collapse and thp_scan's
 * decision and split events (when the kernel has them), compaction's and
 * migration's, and prints the trace of the first -T iterations whose
 * collapse failed, from a little before the first MADV_COLLAPSE attempt,
 * with a marker before each attempt.
 *
 * Per iteration it prints the result of each attempt, how many pages were
 * still THP pages before the collapse, how many of them were on each node
 * and how many free blocks of a PMD THP's order or more each node had
 * (/proc/buddyinfo) just before it, how many THPs were split
 * (/proc/vmstat thp_split_page) during the construction, and what moved
 * in a few /proc/vmstat counters (splits, compaction, migration) during
 * the MADV_COLLAPSE calls.  Needs root (kpageflags, THP sysfs knobs, tracefs): it runs in
 * a test guest, never on a host.
 *
 * Exit: 0 = finished (whether or not a collapse failed); 1 = unexpected
 * error.  Build:
 *   gcc -static -O2 -Wall -o collapse_compound_race collapse_compound_race.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define BASE_ADDR	((char *)(1UL << 30))
#define THP_DIR		"/sys/kernel/mm/transparent_hugepage/"
#define TRACE_DIR	"/sys/kernel/tracing/"
#define KPF_THP		22
#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define MAX_TRIES	8

static long page_size;
static unsigned long pmd_size, nr_ptes;
static unsigned long max_iters = 20, nr_src, delay_ms, retries = 1;
static unsigned long max_dumps = 2;
static int settings = 1, tracing, verbose, compact_first;
static unsigned long shrink_every;
static int pagemap_fd = -1, kpageflags_fd = -1;

/* counters */
static unsigned long c_iters, c_ok, c_first_fail, c_final_eagain,
	c_final_other, c_no_thp, c_bad_after, c_dumps;
static unsigned long c_errno_hist[MAX_TRIES][3];	/* per try: ok/EAGAIN/other */

#define die(...) do {					\
	fprintf(stderr, "ERROR: " __VA_ARGS__);			\
	fputc('\n', stderr);					\
	exit(1);						\
} while (0)

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* xorshift */
static uint64_t rnd(void)
{
	static uint64_t s;

	if (!s)
		s = 0x2545f4914f6cdd1dull ^ now_us();
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

/* Write @val to @path; returns 0 or -errno, quietly if @quiet. */
static int write_file(const char *path, const char *val, int quiet)
{
	int fd = open(path, O_WRONLY | O_TRUNC), ret = 0;

	if (fd < 0)
		ret = -errno;
	else if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	if (ret && !quiet)
		fprintf(stderr, "warning: write %s to %s: %s\n", val, path,
			strerror(-ret));
	return ret;
}

/* Read @path into @buf, without the trailing newline; "" on failure. */
static void read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
}

/* The word in brackets of a THP "enabled"/"defrag" file, or the file. */
static void read_choice(const char *path, char *buf, size_t len)
{
	char raw[256], *l, *r;

	read_file(path, raw, sizeof(raw));
	l = strchr(raw, '[');
	r = l ? strchr(l, ']') : NULL;
	if (l && r) {
		*r = '\0';
		snprintf(buf, len, "%s", l + 1);
	} else {
		snprintf(buf, len, "%s", raw);
	}
}

/* The test's settings, and what was there before them. */
static const char *const knobs[] = {
	THP_DIR "enabled",
	THP_DIR "defrag",
	THP_DIR "khugepaged/scan_sleep_millisecs",
	THP_DIR "khugepaged/alloc_sleep_millisecs",
	THP_DIR "khugepaged/defrag",
	THP_DIR "khugepaged/max_ptes_none",
};
static const char *const test_values[] = {
	"madvise", "always", "10", "10", "1", "511",
};
static char saved[6][256];

static void settings_push(void)
{
	unsigned int i;

	for (i = 0; i < 6; i++) {
		if (i < 2)
			read_choice(knobs[i], saved[i], sizeof(saved[i]));
		else
			read_file(knobs[i], saved[i], sizeof(saved[i]));
		write_file(knobs[i], test_values[i], 0);
	}
}

static void settings_pop(void)
{
	unsigned int i;

	for (i = 0; i < 6; i++)
		if (saved[i][0])
			write_file(knobs[i], saved[i], 0);
}

static unsigned long vmstat(const char *name)
{
	char line[256];
	size_t len = strlen(name);
	unsigned long val = 0;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		die("/proc/vmstat: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ' ') {
			val = strtoul(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return val;
}

/* The /proc/vmstat counters shown for the span of the MADV_COLLAPSE calls. */
static const char *const stat_names[] = {
	"thp_split_page", "thp_collapse_alloc_failed", "compact_stall",
	"compact_fail", "pgmigrate_success",
};
#define NR_STATS (sizeof(stat_names) / sizeof(stat_names[0]))

static void vmstat_snap(unsigned long *vals)
{
	unsigned int i;

	for (i = 0; i < NR_STATS; i++)
		vals[i] = vmstat(stat_names[i]);
}

/*
 * Free blocks of a PMD THP's order or more, per node, from /proc/buddyinfo
 * (all zones); returns the number of nodes seen.
 */
#define MAX_NODES 8
static int free_pmd_blocks(unsigned long *blocks)
{
	unsigned int pmd_order = __builtin_ctzl(nr_ptes), o;
	char line[512], zone[32];
	int node, nodes = 0, off;
	FILE *f = fopen("/proc/buddyinfo", "r");

	memset(blocks, 0, MAX_NODES * sizeof(*blocks));
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;
		unsigned long n;

		if (sscanf(p, "Node %d, zone %31s%n", &node, zone, &off) != 2 ||
		    node < 0 || node >= MAX_NODES)
			continue;
		p += off;
		for (o = 0; sscanf(p, "%lu%n", &n, &off) == 1; o++, p += off)
			if (o >= pmd_order)
				blocks[node] += n << (o - pmd_order);
		if (node + 1 > nodes)
			nodes = node + 1;
	}
	fclose(f);
	return nodes;
}

/* How many of the @nr pages at @p are on each node (move_pages(2) query). */
static void pages_per_node(char *p, unsigned long nr, unsigned long *count)
{
	void *pages[512];
	int status[512];
	unsigned long i;

	memset(count, 0, MAX_NODES * sizeof(*count));
	if (nr > 512)
		nr = 512;
	for (i = 0; i < nr; i++)
		pages[i] = p + i * page_size;
	if (syscall(SYS_move_pages, 0, nr, pages, NULL, status, 0))
		return;
	for (i = 0; i < nr; i++)
		if (status[i] >= 0 && status[i] < MAX_NODES)
			count[status[i]]++;
}

/* pfn of the page at @addr, 0 if not present. */
static uint64_t addr_pfn(const char *addr)
{
	uint64_t ent;
	off_t off = (uintptr_t)addr / page_size * sizeof(ent);

	if (pread(pagemap_fd, &ent, sizeof(ent), off) != sizeof(ent))
		die("pagemap: %s", strerror(errno));
	return ent & PM_PRESENT ? ent & PM_PFN_MASK : 0;
}

static int pfn_is_thp(uint64_t pfn)
{
	uint64_t flags;

	if (pread(kpageflags_fd, &flags, sizeof(flags),
		  pfn * sizeof(flags)) != sizeof(flags))
		die("kpageflags: %s", strerror(errno));
	return !!(flags & (1ULL << KPF_THP));
}

/* Of the @nr pages at @p: how many are present, and in a THP. */
static void count_pages(const char *p, unsigned long nr, unsigned long *present,
			unsigned long *thp)
{
	unsigned long i;

	*present = *thp = 0;
	for (i = 0; i < nr; i++) {
		uint64_t pfn = addr_pfn(p + i * page_size);

		if (!pfn)
			continue;
		(*present)++;
		*thp += pfn_is_thp(pfn);
	}
}

/* Is the PMD at @p one THP (contiguous pfns, all THP pages)? */
static int is_one_thp(const char *p)
{
	uint64_t pfn0 = addr_pfn(p);
	unsigned long i;

	if (!pfn0 || pfn0 % nr_ptes || !pfn_is_thp(pfn0))
		return 0;
	for (i = 1; i < nr_ptes; i++)
		if (addr_pfn(p + i * page_size) != pfn0 + i)
			return 0;
	return 1;
}

static void fill(char *p, unsigned long first, unsigned long end)
{
	unsigned long i;

	for (i = first; i < end; i++)
		*(int *)(p + i * page_size) = i + 0xdead0000;
}

static long validate(char *p)
{
	unsigned long i;

	for (i = 0; i < nr_ptes; i++)
		if (*(int *)(p + i * page_size) != (int)(i + 0xdead0000))
			return i;
	return -1;
}

static void trace_mark(const char *fmt, unsigned long a, unsigned long b)
{
	char buf[128];

	if (!tracing)
		return;
	snprintf(buf, sizeof(buf), fmt, a, b);
	write_file(TRACE_DIR "trace_marker", buf, 1);
}

static void trace_setup(void)
{
	static const char *const events[] = {
		"huge_memory/mm_khugepaged_scan_pmd",
		"huge_memory/mm_collapse_huge_page_isolate",
		"huge_memory/mm_collapse_huge_page",
		"thp_scan/thp_scan_decision",
		"thp_scan/thp_scan_split",
		"compaction/mm_compaction_begin",
		"compaction/mm_compaction_end",
		"compaction/mm_compaction_migratepages",
		"compaction/mm_compaction_wakeup_kcompactd",
		"migrate/mm_migrate_pages",
	};
	char path[256], filter[64];
	unsigned int i;

	if (access(TRACE_DIR "trace", W_OK) &&
	    access("/sys/kernel/debug/tracing/trace", W_OK) == 0)
		die("tracefs only at /sys/kernel/debug/tracing: mount it at "
		    TRACE_DIR);
	write_file(TRACE_DIR "tracing_on", "0", 0);
	write_file(TRACE_DIR "buffer_size_kb", "4096", 1);
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(path, sizeof(path), TRACE_DIR "events/%s/enable",
			 events[i]);
		if (write_file(path, "1", 1))
			printf("trace: no event %s\n", events[i]);
	}
	/* khugepaged's own scans of every mm: not ours */
	snprintf(filter, sizeof(filter), "common_pid == %d", getpid());
	write_file(TRACE_DIR "events/huge_memory/mm_khugepaged_scan_pmd/filter",
		   filter, 0);
	write_file(TRACE_DIR "tracing_on", "1", 0);
}

static void trace_clear(void)
{
	if (tracing)
		write_file(TRACE_DIR "trace", "", 0);
}

/*
 * Print the trace from TRACE_BEFORE lines before the first marker of the
 * collapse: what kthpscand, compaction and migration did just before it.
 */
#define TRACE_BEFORE 60
static void trace_dump(unsigned long iter)
{
	static char ring[TRACE_BEFORE][512];
	char line[512];
	unsigned long n = 0, j;
	int on = 0;
	FILE *f;

	if (!tracing || c_dumps >= max_dumps)
		return;
	c_dumps++;
	write_file(TRACE_DIR "tracing_on", "0", 0);
	f = fopen(TRACE_DIR "trace", "r");
	if (!f) {
		printf("trace: cannot read: %s\n", strerror(errno));
	} else {
		printf("trace of iter %lu:\n", iter);
		while (fgets(line, sizeof(line), f)) {
			if (line[0] == '#')
				continue;
			if (!on && strstr(line, "MADV_COLLAPSE try 1")) {
				on = 1;
				j = n > TRACE_BEFORE ? n - TRACE_BEFORE : 0;
				for (; j < n; j++)
					printf("trace| %s", ring[j % TRACE_BEFORE]);
			}
			if (on)
				printf("trace| %s", line);
			else
				snprintf(ring[n++ % TRACE_BEFORE], sizeof(ring[0]),
					 "%s", line);
		}
		fclose(f);
		printf("trace end\n");
	}
	write_file(TRACE_DIR "tracing_on", "1", 0);
}

/*
 * The test's construction: returns the start of the PMD whose PTEs map one
 * page of each source, or NULL if a THP could not be had.
 */
static char *construct(unsigned long *splits)
{
	unsigned long i, before = vmstat("thp_split_page");
	char *p;

	p = mmap(BASE_ADDR, pmd_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != BASE_ADDR)
		die("mmap at %p: got %p", BASE_ADDR, p);
	for (i = 0; i < nr_ptes; i++) {
		int thp = i >= nr_ptes - nr_src;

		if (thp) {
			madvise(BASE_ADDR, pmd_size, MADV_HUGEPAGE);
			fill(BASE_ADDR, 0, nr_ptes);
			if (!pfn_is_thp(addr_pfn(BASE_ADDR))) {
				printf("iter %lu: no THP for source %lu\n",
				       c_iters + 1, i);
				munmap(BASE_ADDR - i * page_size,
				       i * page_size + pmd_size);
				return NULL;
			}
			madvise(BASE_ADDR, pmd_size, MADV_NOHUGEPAGE);
		} else {
			madvise(BASE_ADDR, pmd_size, MADV_NOHUGEPAGE);
			fill(BASE_ADDR, 0, 1);
		}
		p = mremap(BASE_ADDR - i * page_size, i * page_size + pmd_size,
			   (i + 1) * page_size, MREMAP_MAYMOVE | MREMAP_FIXED,
			   BASE_ADDR + 2 * pmd_size);
		if (p == MAP_FAILED)
			die("mremap+unmap: %s", strerror(errno));
		p = mremap(BASE_ADDR + 2 * pmd_size, (i + 1) * page_size,
			   (i + 1) * page_size + pmd_size,
			   MREMAP_MAYMOVE | MREMAP_FIXED,
			   BASE_ADDR - (i + 1) * page_size);
		if (p == MAP_FAILED)
			die("mremap+alloc: %s", strerror(errno));
		/* Counted in sources: the first is PTE nr_ptes - nr_src. */
		if (thp && shrink_every &&
		    (i - (nr_ptes - nr_src) + 1) % shrink_every == 0)
			write_file("/proc/sys/vm/drop_caches", "2", 0);
	}
	munmap(BASE_ADDR, pmd_size);
	fill(p, 0, nr_ptes);
	*splits = vmstat("thp_split_page") - before;
	return p;
}

static void one_iteration(void)
{
	unsigned long iter = ++c_iters, present, thp, split_build;
	unsigned long st0[NR_STATS], st1[NR_STATS], delay = 0, kind;
	unsigned long blocks[MAX_NODES], on_node[MAX_NODES];
	unsigned int s;
	int nodes, n;
	int err[MAX_TRIES], tries = 0, final;
	uint64_t t_built, t0, t1;
	char *p;
	long bad;

	trace_clear();
	p = construct(&split_build);
	if (!p) {
		c_no_thp++;
		return;
	}
	t_built = now_us();
	count_pages(p, nr_ptes, &present, &thp);
	if (delay_ms) {
		delay = rnd() % (delay_ms + 1);
		usleep(delay * 1000);
	}
	if (compact_first)
		write_file("/proc/sys/vm/compact_memory", "1", 0);
	nodes = free_pmd_blocks(blocks);
	pages_per_node(p, nr_ptes, on_node);

	if (settings)
		write_file(THP_DIR "enabled", "never", 0);
	madvise(p, pmd_size, MADV_HUGEPAGE);
	vmstat_snap(st0);
	t0 = now_us();
	do {
		trace_mark("ccr: iter %lu MADV_COLLAPSE try %lu", iter, tries + 1);
		err[tries] = madvise(p, pmd_size, MADV_COLLAPSE) ? errno : 0;
		kind = err[tries] == 0 ? 0 : err[tries] == EAGAIN ? 1 : 2;
		c_errno_hist[tries][kind]++;
		tries++;
	} while (err[tries - 1] == EAGAIN && tries <= (int)retries &&
		 tries < MAX_TRIES);
	t1 = now_us();
	trace_mark("ccr: iter %lu done %lu", iter, 0);
	vmstat_snap(st1);
	if (settings)
		write_file(THP_DIR "enabled", "madvise", 0);

	final = err[tries - 1];
	if (err[0])
		c_first_fail++;
	if (!final)
		c_ok++;
	else if (final == EAGAIN)
		c_final_eagain++;
	else
		c_final_other++;

	printf("iter %lu: ", iter);
	for (int i = 0; i < tries; i++)
		printf("%stry%d %s", i ? ", " : "", i + 1,
		       err[i] ? strerrorname_np(err[i]) : "0");
	printf(" (%.1f ms, from %.1f ms after the build, delay %lu) | "
	       "before collapse: %lu/%lu pages present, %lu in a THP | "
	       "thp_split_page +%lu while building | during collapse:",
	       (t1 - t0) / 1000.0, (t0 - t_built) / 1000.0, delay, present,
	       nr_ptes, thp, split_build);
	for (s = 0; s < NR_STATS; s++)
		if (st1[s] != st0[s])
			printf(" %s +%lu", stat_names[s], st1[s] - st0[s]);
	printf(" | node: pages, free PMD blocks before:");
	for (n = 0; n < nodes; n++)
		printf(" %d: %lu, %lu", n, on_node[n], blocks[n]);
	bad = validate(p);
	if (!final && (!is_one_thp(p) || bad >= 0)) {
		c_bad_after++;
		printf(" | BAD: collapse returned 0, one THP %d, first bad page %ld",
		       is_one_thp(p), bad);
	} else if (bad >= 0) {
		c_bad_after++;
		printf(" | BAD: page %ld lost its data", bad);
	}
	printf("\n");
	if (final)
		trace_dump(iter);
	munmap(p, pmd_size);
}

static void usage(const char *p)
{
	fprintf(stderr, "usage: %s [-n iters] [-k thp_sources] [-d max_delay_ms] "
		"[-r eagain_retries] [-S 0|1 (the test's THP settings)] [-C] "
		"[-D shrink_every_n_sources] [-t] "
		"[-T trace_dumps] [-v]\n", p);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long i;
	struct utsname u;
	char thp_scan[16];
	uint64_t t0;
	int opt;

	page_size = sysconf(_SC_PAGESIZE);
	pmd_size = page_size * (page_size / 8);	/* one page of PTEs */
	nr_ptes = pmd_size / page_size;
	nr_src = nr_ptes;
	while ((opt = getopt(argc, argv, "n:k:d:r:S:CD:tT:v")) != -1) {
		switch (opt) {
		case 'n':
			max_iters = strtoul(optarg, NULL, 0);
			break;
		case 'k':
			nr_src = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			delay_ms = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			retries = strtoul(optarg, NULL, 0);
			break;
		case 'S':
			settings = atoi(optarg);
			break;
		case 'C':
			compact_first = 1;
			break;
		case 'D':
			shrink_every = strtoul(optarg, NULL, 0);
			break;
		case 't':
			tracing = 1;
			break;
		case 'T':
			max_dumps = strtoul(optarg, NULL, 0);
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (nr_src > nr_ptes || retries >= MAX_TRIES)
		usage(argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	uname(&u);
	read_file(THP_DIR "thp_scan/enabled", thp_scan, sizeof(thp_scan));
	printf("repro: kernel %s %s, cpus %ld, iters %lu, sources %lu of %lu, "
	       "delay 0-%lu ms, retries %lu, settings %d, compact first %d, "
	       "shrink every %lu, tracing %d, thp_scan/enabled %s\n",
	       u.release, u.version,
	       sysconf(_SC_NPROCESSORS_ONLN), max_iters, nr_src, nr_ptes,
	       delay_ms, retries, settings, compact_first, shrink_every, tracing,
	       thp_scan[0] ? thp_scan : "(none)");

	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	kpageflags_fd = open("/proc/kpageflags", O_RDONLY);
	if (pagemap_fd < 0 || kpageflags_fd < 0)
		die("pagemap/kpageflags: %s (root needed)", strerror(errno));
	if (settings)
		settings_push();
	if (tracing)
		trace_setup();

	t0 = now_us();
	for (i = 0; i < max_iters; i++) {
		one_iteration();
		if (verbose)
			printf("vmstat: thp_split_page %lu thp_collapse_alloc %lu "
			       "thp_deferred_split_page %lu compact_stall %lu\n",
			       vmstat("thp_split_page"),
			       vmstat("thp_collapse_alloc"),
			       vmstat("thp_deferred_split_page"),
			       vmstat("compact_stall"));
	}
	if (settings)
		settings_pop();
	if (tracing)
		write_file(TRACE_DIR "tracing_on", "0", 0);

	printf("summary: iterations %lu (%.1f s), no THP %lu, collapsed %lu, "
	       "first try failed %lu, final EAGAIN %lu, final other %lu, "
	       "bad after collapse %lu\n", c_iters,
	       (now_us() - t0) / 1e6, c_no_thp, c_ok, c_first_fail,
	       c_final_eagain, c_final_other, c_bad_after);
	for (i = 0; i < MAX_TRIES && (c_errno_hist[i][0] || c_errno_hist[i][1] ||
				      c_errno_hist[i][2]); i++)
		printf("summary: try %lu: ok %lu, EAGAIN %lu, other %lu\n",
		       i + 1, c_errno_hist[i][0], c_errno_hist[i][1],
		       c_errno_hist[i][2]);
	printf("RESULT: %s failed=%lu iters=%lu\n",
	       c_final_eagain + c_final_other ? "REPRODUCED" : "not-reproduced",
	       c_final_eagain + c_final_other, c_iters);
	return c_bad_after ? 1 : 0;
}
