// SPDX-License-Identifier: GPL-2.0
/*
 * kthpscand at work, with no memory pressure at all: sparse THPs (PMD and
 * mTHP) are split and their zero-filled subpages freed, dense THPs stay
 * huge, memory used and later zeroed is split on a later pass, partially
 * mapped THPs are split, and the thread sleeps when nothing is due.  Each
 * test checks the memory (smaps and the memcg's memory.current), the
 * counters (/proc/vmstat and hugepages-<size>kB/stats/), the tracepoints,
 * and every byte of user data.  The default knobs are used unless a test
 * says why not.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

#define THP "/sys/kernel/mm/transparent_hugepage/"
#define THP_SCAN THP "thp_scan/"
#define CG "/sys/fs/cgroup/"
#define CG_T CG "thp_scan_split/"
#define TRACE "/sys/kernel/tracing/"
/* Generous: the default minimum age is 10 s and a round comes every 1 s. */
#define WAIT_SECS 90

static const char * const scan_knobs[] = {
	"enabled", "underused_zero_pct", "pages_to_scan",
	"scan_sleep_millisecs", "min_age_millisecs",
};

static long get_long(const char *path)
{
	char buf[64];

	if (get(path, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/* A per-size counter, hugepages-<kb>kB/stats/<name>. */
static long size_stat(unsigned long kb, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), THP "hugepages-%lukB/stats/%s", kb, name);
	return get_long(path);
}

/* Wait up to WAIT_SECS for per-size counter @name to grow by @n from @from. */
static int wait_stat(unsigned long kb, const char *name, long from, long n)
{
	int t;

	for (t = 0; t < WAIT_SECS && size_stat(kb, name) - from < n; t++)
		sleep(1);
	return t;
}

/* The byte at offset @off of page @pg when that page holds data. */
static char pattern(size_t pg, size_t off)
{
	return (char)(((pg * 2654435761u) >> 7) + off * 31 + 1) | 1;
}

static void fill_page(char *p, size_t pg, size_t psz)
{
	size_t off;

	for (off = 0; off < psz; off++)
		p[pg * psz + off] = pattern(pg, off);
}

/*
 * Every byte of @nr pages at @p: the pattern where @filled says so, zero
 * elsewhere.  Returns the first bad page, or -1.
 */
static long check_pages(const char *p, size_t nr, size_t psz,
			int (*filled)(size_t pg, void *arg), void *arg)
{
	size_t pg, off;

	for (pg = 0; pg < nr; pg++) {
		bool f = filled(pg, arg);

		for (off = 0; off < psz; off++)
			if (p[pg * psz + off] != (f ? pattern(pg, off) : 0))
				return pg;
	}
	return -1;
}

/* One data page per folio of @arg pages: page 7 of each (or its last). */
static int one_per_folio(size_t pg, void *arg)
{
	size_t per = *(size_t *)arg;

	return pg % per == (per > 7 ? 7 : per - 1);
}

static int every_page(size_t pg, void *arg)
{
	return 1;
}

/*
 * Count the thp_scan events in the trace for folios of @order: decisions
 * named @decision (with the zero/scanned counts of the last one), and
 * successful splits.
 */
struct trace_count {
	long decisions, splits;
	unsigned int zero, scanned, mapped;
};

static void count_trace(unsigned int order, const char *decision,
			struct trace_count *c)
{
	char line[512], want[96];
	FILE *f = fopen(TRACE "trace", "r");

	memset(c, 0, sizeof(*c));
	snprintf(want, sizeof(want), "decision=%s", decision);
	while (f && fgets(line, sizeof(line), f)) {
		unsigned int o, zero, scanned, mapped;
		char *ev = strstr(line, "thp_scan_decision: ");

		if (ev && strstr(ev, want) &&
		    sscanf(strstr(ev, "order="), "order=%u zero=%u scanned=%u mapped=%u",
			   &o, &zero, &scanned, &mapped) == 4 && o == order) {
			c->decisions++;
			c->zero = zero;
			c->scanned = scanned;
			c->mapped = mapped;
		}
		ev = strstr(line, "thp_scan_split: ");
		if (ev && strstr(ev, want) && strstr(ev, " ret=0") &&
		    sscanf(strstr(ev, "order="), "order=%u", &o) == 1 && o == order)
			c->splits++;
	}
	if (f)
		fclose(f);
}

/* The pid of kthpscand, or -1. */
static int kthpscand_pid(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[300], comm[32];
	int pid = -1;

	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (!get(path, comm, sizeof(comm)) && !strcmp(comm, "kthpscand\n")) {
			pid = atoi(e->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
	return pid;
}

FIXTURE(split) {
	char knobs[5][32];
	size_t psz, pmd;
	unsigned long pmd_kb;
	int order_pmd;
};

FIXTURE_SETUP(split)
{
	struct thp_settings s;
	char path[128], pid[16];
	int i;

	if (access(THP_SCAN "min_age_millisecs", F_OK))
		SKIP(return, "kernel without the thp_scan scanner");
	if (access(CG "cgroup.procs", F_OK) || access(TRACE "trace", F_OK))
		SKIP(return, "needs cgroup2 at " CG " and tracefs at " TRACE);
	self->psz = getpagesize();
	self->pmd = read_pmd_pagesize();
	self->pmd_kb = self->pmd / 1024;
	self->order_pmd = __builtin_ctzl(self->pmd / self->psz);
	for (i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), THP_SCAN "%s", scan_knobs[i]);
		ASSERT_EQ(0, get(path, self->knobs[i], sizeof(self->knobs[i])));
	}
	/* The defaults, as documented: the tests rely on them. */
	EXPECT_STREQ("1\n", self->knobs[0]);
	EXPECT_STREQ("90\n", self->knobs[1]);
	EXPECT_STREQ("10000\n", self->knobs[4]);

	thp_save_settings();
	thp_read_settings(&s);
	s.thp_enabled = THP_ALWAYS;
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = THP_NEVER;
	s.hugepages[self->order_pmd].enabled = THP_INHERIT;
	/* Nothing collapsed behind the test's back. */
	s.khugepaged.max_ptes_none = 0;
	thp_push_settings(&s);

	ASSERT_EQ(0, put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_T, 0755) || errno == EEXIST);
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, put(CG_T "cgroup.procs", pid));
	ASSERT_EQ(0, put(TRACE "events/thp_scan/enable", "1"));
	ASSERT_EQ(0, clear_trace());
}

FIXTURE_TEARDOWN(split)
{
	char path[128], pid[16];
	int i;

	if (access(THP_SCAN "min_age_millisecs", F_OK) || access(CG "cgroup.procs", F_OK))
		return;
	put(TRACE "events/thp_scan/enable", "0");
	for (i = 4; i >= 0; i--) {
		snprintf(path, sizeof(path), THP_SCAN "%s", scan_knobs[i]);
		put(path, self->knobs[i]);
	}
	snprintf(pid, sizeof(pid), "%d", getpid());
	put(CG "cgroup.procs", pid);
	thp_restore_settings();
}

/*
 * 32 PMD THPs with one page of data each: with the default knobs and no
 * memory pressure, each is split as underused within the minimum age and
 * a few rounds, Rss falls to the pages written, the memcg is uncharged,
 * and every byte reads back.
 */
TEST_F_TIMEOUT(split, sparse_pmd_thps, 300)
{
	const size_t nr = 32, per = self->pmd / self->psz;
	long split0 = keyed("/proc/vmstat", "thp_scan_split_underused");
	long size0 = size_stat(self->pmd_kb, "thp_scan_split_underused");
	long queued0 = size_stat(self->pmd_kb, "thp_scan_queued");
	long mem_full, mem_after, cpu0, cpu1, bad;
	struct trace_count c;
	char *p = anon_aligned(nr * self->pmd, self->pmd);
	size_t i;
	int t;

	ASSERT_NE(NULL, p);
	ASSERT_GE(split0, 0);
	ASSERT_GE(size0, 0);
	cpu0 = get_long(THP_SCAN "cpu_time_ms");
	for (i = 0; i < nr; i++)
		fill_page(p, i * per + 7, self->psz);
	ASSERT_TRUE(check_huge_anon(p, nr, self->pmd));
	EXPECT_EQ((long)(nr * self->pmd_kb), smaps_kb(p, "Rss:"));
	EXPECT_EQ(nr, size_stat(self->pmd_kb, "thp_scan_queued") - queued0);
	mem_full = get_long(CG_T "memory.current");
	EXPECT_GE(mem_full, (long)(nr * self->pmd));

	for (t = 0; t < WAIT_SECS && smaps_kb(p, "AnonHugePages:"); t++)
		sleep(1);
	EXPECT_EQ(0, smaps_kb(p, "AnonHugePages:"))
		TH_LOG("THPs left after %d s", t);
	ksft_print_msg("split %zu sparse THPs in %d s of guest time\n", nr, t);
	/* Only the written pages are left; the rest map the zero page. */
	EXPECT_EQ((long)(nr * self->psz / 1024), smaps_kb(p, "Rss:"));
	mem_after = get_long(CG_T "memory.current");
	EXPECT_LE(mem_after, mem_full - (long)(nr * (self->pmd - 2 * self->psz)))
		TH_LOG("memory.current %ld -> %ld", mem_full, mem_after);
	EXPECT_GE(keyed("/proc/vmstat", "thp_scan_split_underused") - split0, (long)nr);
	EXPECT_EQ(nr, size_stat(self->pmd_kb, "thp_scan_split_underused") - size0);

	/*
	 * Traced: page 7 of 512 written, so the zero scan stops at the
	 * first zero page past the limit: max_zero + 1 zero pages of
	 * max_zero + 2 looked at, every page mapped.
	 */
	count_trace(self->order_pmd, "split_underused", &c);
	EXPECT_EQ(nr, c.decisions);
	EXPECT_EQ(nr, c.splits);
	EXPECT_EQ(per * 90 / 100 + 1, c.zero);
	EXPECT_EQ(per * 90 / 100 + 2, c.scanned);
	EXPECT_EQ(per, c.mapped);

	bad = check_pages(p, nr * per, self->psz, one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	cpu1 = get_long(THP_SCAN "cpu_time_ms");
	EXPECT_GE(cpu1, cpu0);
	ksft_print_msg("kthpscand CPU time: %ld ms (%ld ms in this test)\n",
		       cpu1, cpu1 - cpu0);
	munmap(p, nr * self->pmd);
}

/*
 * Dense THPs stay huge: the scanner looks at them (once at least, after
 * the minimum age), finds them used after the fewest pages it can, and
 * keeps them, data intact.
 */
TEST_F_TIMEOUT(split, dense_pmd_thps_stay, 300)
{
	const size_t nr = 8, per = self->pmd / self->psz;
	long scanned0 = size_stat(self->pmd_kb, "thp_scan_scanned");
	long split0 = size_stat(self->pmd_kb, "thp_scan_split_underused");
	struct trace_count c;
	char *p = anon_aligned(nr * self->pmd, self->pmd);
	long bad;
	size_t i;
	int t;

	ASSERT_NE(NULL, p);
	for (i = 0; i < nr * per; i++)
		fill_page(p, i, self->psz);
	ASSERT_TRUE(check_huge_anon(p, nr, self->pmd));
	t = wait_stat(self->pmd_kb, "thp_scan_scanned", scanned0, nr);
	EXPECT_GE(size_stat(self->pmd_kb, "thp_scan_scanned") - scanned0, (long)nr)
		TH_LOG("after %d s", t);
	EXPECT_TRUE(check_huge_anon(p, nr, self->pmd));
	EXPECT_EQ(split0, size_stat(self->pmd_kb, "thp_scan_split_underused"));
	count_trace(self->order_pmd, "keep_used", &c);
	EXPECT_GE(c.decisions, (long)nr);
	EXPECT_EQ(0, c.zero);
	EXPECT_EQ(per - per * 90 / 100, c.scanned);
	bad = check_pages(p, nr * per, self->psz, every_page, NULL);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * self->pmd);
}

/* The same for a 64K mTHP size: sparse ones are split, with their stats. */
TEST_F_TIMEOUT(split, sparse_64k_mthps, 300)
{
	const unsigned long kb = 64;
	const size_t sz = kb * 1024, per = sz / self->psz, nr = 64;
	int order = __builtin_ctzl(per);
	long split0, queued0, bad;
	struct trace_count c;
	char path[128];
	char *p;
	size_t i;
	int t;

	snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled", kb);
	if (access(path, F_OK) || per != 16)
		SKIP(return, "no 64K anon THP size of 16 pages");
	ASSERT_EQ(0, put(THP "enabled", "never"));
	ASSERT_EQ(0, put(path, "always"));
	split0 = size_stat(kb, "thp_scan_split_underused");
	queued0 = size_stat(kb, "thp_scan_queued");
	p = anon_aligned(nr * sz, self->pmd);
	ASSERT_NE(NULL, p);
	for (i = 0; i < nr; i++)
		fill_page(p, i * per + 7, self->psz);
	/* Every 64K range is one mTHP, mapped whole. */
	EXPECT_EQ((long)(nr * kb), smaps_kb(p, "Rss:"));
	EXPECT_EQ(nr, size_stat(kb, "thp_scan_queued") - queued0);
	for (t = 0; t < WAIT_SECS && smaps_kb(p, "Rss:") > (long)(nr * self->psz / 1024); t++)
		sleep(1);
	EXPECT_EQ((long)(nr * self->psz / 1024), smaps_kb(p, "Rss:"))
		TH_LOG("after %d s", t);
	EXPECT_EQ(nr, size_stat(kb, "thp_scan_split_underused") - split0);
	count_trace(order, "split_underused", &c);
	EXPECT_EQ(nr, c.splits);
	/*
	 * One page of 16 written: with the limit at 14 zero pages, the scan
	 * only knows at the last page.
	 */
	EXPECT_EQ(per - 1, c.zero);
	EXPECT_EQ(per, c.scanned);
	bad = check_pages(p, nr * per, self->psz, one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * sz);
}

/*
 * Memory used, kept, then zeroed is split on a later pass.  The minimum
 * age is lowered to 2 s to keep the test short; the logic is the same.
 */
TEST_F_TIMEOUT(split, used_then_zeroed, 300)
{
	const size_t nr = 8, per = self->pmd / self->psz;
	long scanned0 = size_stat(self->pmd_kb, "thp_scan_scanned");
	long split0 = size_stat(self->pmd_kb, "thp_scan_split_underused");
	struct trace_count c;
	char *p = anon_aligned(nr * self->pmd, self->pmd);
	long bad;
	size_t i;
	int t;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, put(THP_SCAN "min_age_millisecs", "2000"));
	for (i = 0; i < nr * per; i++)
		fill_page(p, i, self->psz);
	t = wait_stat(self->pmd_kb, "thp_scan_scanned", scanned0, nr);
	EXPECT_TRUE(check_huge_anon(p, nr, self->pmd));
	count_trace(self->order_pmd, "keep_used", &c);
	EXPECT_GE(c.decisions, (long)nr);

	/* Now zero all but page 7 of each. */
	for (i = 0; i < nr * per; i++)
		if (!one_per_folio(i, (void *)&per))
			memset(p + i * self->psz, 0, self->psz);
	for (t = 0; t < WAIT_SECS && smaps_kb(p, "AnonHugePages:"); t++)
		sleep(1);
	EXPECT_EQ(0, smaps_kb(p, "AnonHugePages:")) TH_LOG("after %d s", t);
	EXPECT_EQ(nr, size_stat(self->pmd_kb, "thp_scan_split_underused") - split0);
	count_trace(self->order_pmd, "split_underused", &c);
	EXPECT_EQ(nr, c.splits);
	EXPECT_EQ((long)(nr * self->psz / 1024), smaps_kb(p, "Rss:"));
	bad = check_pages(p, nr * per, self->psz, one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * self->pmd);
}

/*
 * Half of each THP unmapped: Rss halves at once, but the memcg is still
 * charged for the whole THPs, until the scanner splits them as partially
 * mapped (no minimum age for those) and the unmapped halves are freed.
 */
TEST_F_TIMEOUT(split, partially_mapped, 300)
{
	const size_t nr = 8, per = self->pmd / self->psz;
	long split0 = size_stat(self->pmd_kb, "thp_scan_split_partial");
	long vm0 = keyed("/proc/vmstat", "thp_scan_split_partial");
	long pm0 = size_stat(self->pmd_kb, "nr_anon_partially_mapped");
	long mem_full, mem_after, bad;
	struct trace_count c;
	char *p = anon_aligned(nr * self->pmd, self->pmd);
	size_t i;
	int t;

	ASSERT_NE(NULL, p);
	for (i = 0; i < nr * per; i++)
		fill_page(p, i, self->psz);
	ASSERT_TRUE(check_huge_anon(p, nr, self->pmd));
	for (i = 0; i < nr; i++)
		ASSERT_EQ(0, munmap(p + i * self->pmd + self->pmd / 2, self->pmd / 2));
	mem_full = get_long(CG_T "memory.current");
	EXPECT_GE(mem_full, (long)(nr * self->pmd));
	/* Counted as partially mapped until split (if not split already). */
	EXPECT_LE(size_stat(self->pmd_kb, "nr_anon_partially_mapped") - pm0, (long)nr);
	t = wait_stat(self->pmd_kb, "thp_scan_split_partial", split0, nr);
	EXPECT_EQ(nr, size_stat(self->pmd_kb, "thp_scan_split_partial") - split0)
		TH_LOG("after %d s", t);
	EXPECT_GE(keyed("/proc/vmstat", "thp_scan_split_partial") - vm0, (long)nr);
	/* Split off its queue, each THP stops being counted. */
	EXPECT_EQ(pm0, size_stat(self->pmd_kb, "nr_anon_partially_mapped"));
	mem_after = get_long(CG_T "memory.current");
	EXPECT_LE(mem_after, mem_full - (long)(nr * self->pmd / 2))
		TH_LOG("memory.current %ld -> %ld", mem_full, mem_after);
	count_trace(self->order_pmd, "split_partially_mapped", &c);
	EXPECT_EQ(nr, c.splits);
	/* The mapped halves: every byte as written. */
	bad = -1;
	for (i = 0; i < nr * per && bad < 0; i++) {
		size_t off;

		if (i % per >= per / 2)
			continue;
		for (off = 0; off < self->psz; off++)
			if (p[i * self->psz + off] != pattern(i, off)) {
				bad = i;
				break;
			}
	}
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	for (i = 0; i < nr; i++)
		munmap(p + i * self->pmd, self->pmd / 2);
}

/*
 * Nothing due, nothing done: with THPs queued that are younger than the
 * minimum age (raised to 60 s here), kthpscand sleeps: no round, no CPU
 * time, state S.
 */
TEST_F_TIMEOUT(split, sleeps_when_nothing_due, 120)
{
	const size_t nr = 2, per = self->pmd / self->psz;
	long rounds0, cpu0;
	char path[64], stat[256], *st;
	char *p = anon_aligned(nr * self->pmd, self->pmd);
	int pid = kthpscand_pid();
	size_t i;

	ASSERT_GT(pid, 0);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, put(THP_SCAN "min_age_millisecs", "60000"));
	for (i = 0; i < nr * per; i++)
		fill_page(p, i, self->psz);
	/* Let the round the knob write started finish. */
	sleep(2);
	rounds0 = keyed("/proc/vmstat", "thp_scan_rounds");
	cpu0 = get_long(THP_SCAN "cpu_time_ms");
	sleep(3);
	EXPECT_EQ(rounds0, keyed("/proc/vmstat", "thp_scan_rounds"));
	EXPECT_EQ(cpu0, get_long(THP_SCAN "cpu_time_ms"));
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	ASSERT_EQ(0, get(path, stat, sizeof(stat)));
	st = strrchr(stat, ')');
	ASSERT_NE(NULL, st);
	EXPECT_EQ('S', st[2]);
	munmap(p, nr * self->pmd);
}

TEST_HARNESS_MAIN
