// SPDX-License-Identifier: GPL-2.0
/*
 * Split at swap-out (thp_scan/split_on_swapout), with swap on zram, in
 * each of its three modes: the zero-filled subpages of a sparse THP cost
 * no swap and no I/O when it is split first ("underused", "always"), and
 * are written with it otherwise ("never"); a dense THP is still swapped
 * out as one large folio in "underused" mode; MADV_PAGEOUT saves the
 * same; and every byte reads back after swap-in.  kthpscand and the
 * deferred split shrinker are held off (a day's minimum age,
 * shrink_underused=0), so that reclaim alone decides.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

#define CG_NAME "thp_scan_swapout"
#define CG_T CG CG_NAME "/"
#define NR_SPARSE 8		/* sparse PMD THPs */
#define NR_MSPARSE 32		/* sparse 64K mTHPs */
#define NR_DENSE 4		/* dense PMD THPs */
#define NR_KD 4			/* PMD THPs with one dense quarter */
#define MKB 64UL
/*
 * Pages of the child's own (stack, data) that reclaim may swap out too,
 * besides the THPs: an allowance, not a count.
 */
#define OTHER_PAGES 128

FIXTURE(swapout) {
	struct thp_sizes z;
	pid_t child;
	int go;
};

FIXTURE_VARIANT(swapout) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(swapout, never) { .mode = "never" };
FIXTURE_VARIANT_ADD(swapout, underused) { .mode = "underused" };
FIXTURE_VARIANT_ADD(swapout, always) { .mode = "always" };

FIXTURE_SETUP(swapout)
{
	char path[128];

	self->child = 0;
	thp_scan_setup(_metadata, &self->z, NULL);
	ASSERT_EQ(MKB * 1024, 16 * self->z.psz) TH_LOG("no 16-page 64K THP size");
	ASSERT_EQ(0, ts_put(THP_SCAN "split_on_swapout", variant->mode));
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "86400000"));
	ASSERT_EQ(0, ts_put(THP "shrink_underused", "0"));
	snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled", MKB);
	ASSERT_EQ(0, ts_put(path, "always"));
	ASSERT_EQ(0, ts_put(ZRAM "disksize", "256M"));
	ASSERT_EQ(0, system("mkswap /dev/zram0 >/dev/null && swapon /dev/zram0"));
	ASSERT_EQ(0, ts_put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_T, 0755) || errno == EEXIST);
}

FIXTURE_TEARDOWN(swapout)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
		close(self->go);
	}
	thp_scan_teardown();
}

/* What the child holds, at fixed offsets of one mapping. */
struct layout {
	size_t psz, pmd, per, msz, mper;
	size_t sparse, msparse, dense, len;	/* offsets and length */
};

static void layout(const struct thp_sizes *z, struct layout *l)
{
	l->psz = z->psz;
	l->pmd = z->pmd;
	l->per = z->per;
	l->msz = MKB * 1024;
	l->mper = l->msz / z->psz;
	l->sparse = 0;
	l->msparse = NR_SPARSE * z->pmd;
	l->dense = l->msparse + z->pmd;	/* 32 x 64K = 2M */
	l->len = l->dense + NR_DENSE * z->pmd;
}

/* Make the THPs: 2M ones at first, then 64K ones, then 2M again. */
static char *make_thps(const struct layout *l, const char *pmd_enabled)
{
	char *p = ts_map_aligned(l->len, l->pmd);
	size_t i;

	if (!p)
		return NULL;
	for (i = 0; i < NR_SPARSE; i++)
		ts_fill_page(p + l->sparse, i * l->per + 7, l->psz);
	if (ts_put(pmd_enabled, "never"))
		return NULL;
	for (i = 0; i < NR_MSPARSE; i++)
		ts_fill_page(p + l->msparse, i * l->mper + 7, l->psz);
	if (ts_put(pmd_enabled, "inherit"))
		return NULL;
	for (i = 0; i < NR_DENSE * l->per; i++)
		ts_fill_page(p + l->dense, i, l->psz);
	return p;
}

/* Every byte of what make_thps() wrote; 0 if intact. */
static int check_thps(const struct layout *l, const char *p)
{
	size_t per = l->per, mper = l->mper;

	if (ts_check_pages(p + l->sparse, NR_SPARSE * per, l->psz, ts_one_per_folio,
			   (void *)&per) != -1)
		return 1;
	if (ts_check_pages(p + l->msparse, NR_MSPARSE * mper, l->psz, ts_one_per_folio,
			   (void *)&mper) != -1)
		return 2;
	if (ts_check_pages(p + l->dense, NR_DENSE * per, l->psz, ts_every_page, NULL) != -1)
		return 3;
	return 0;
}

/* The counters the tests compare before and after reclaim. */
struct counts {
	long pswpout, thp_swpout, split, freed, pmd_split, m_split, pmd_swpout, m_swpout;
	long pmd_fallback, m_fallback;
};

static void read_counts(struct __test_metadata *_metadata,
			const struct thp_sizes *z, struct counts *c)
{
	c->pswpout = ts_vm_counter(_metadata, "pswpout");
	c->thp_swpout = ts_vm_counter(_metadata, "thp_swpout");
	c->split = ts_vm_counter(_metadata, "thp_split_scan_swapout");
	c->freed = ts_vm_counter(_metadata, "thp_split_scan_swapout_freed");
	c->pmd_split = ts_must_stat(_metadata, z->pmd_kb, "thp_split_scan_swapout");
	c->m_split = ts_must_stat(_metadata, MKB, "thp_split_scan_swapout");
	c->pmd_swpout = ts_must_stat(_metadata, z->pmd_kb, "swpout");
	c->m_swpout = ts_must_stat(_metadata, MKB, "swpout");
	c->pmd_fallback = ts_must_stat(_metadata, z->pmd_kb, "swpout_fallback");
	c->m_fallback = ts_must_stat(_metadata, MKB, "swpout_fallback");
}

/*
 * What reclaim must do in each mode with NR_SPARSE sparse PMD THPs,
 * NR_MSPARSE sparse 64K mTHPs (one page of data each) and NR_DENSE dense
 * PMD THPs: which are split first, which go to swap as large folios, and
 * how many pages are written (the touched ones, or whole folios).  A
 * large folio that 6.12's swap allocator finds no free cluster of its
 * size for is split to base pages by reclaim itself and counted in
 * swpout_fallback, not swpout (on the debug kernel, 25 of the 32 64K
 * mTHPs once): that is 6.12's, not thp_scan's, so a folio that reached
 * add_to_swap() whole counts in one or the other.
 */
static void check_mode(struct __test_metadata *_metadata, const char *mode,
		       const struct layout *l, const struct counts *a,
		       const struct counts *b)
{
	long touched = NR_SPARSE + NR_MSPARSE, dense = NR_DENSE * l->per;
	long whole = NR_SPARSE * l->per + NR_MSPARSE * l->mper + dense;
	long written = b->pswpout - a->pswpout;

	long pmd_whole = b->pmd_swpout - a->pmd_swpout + b->pmd_fallback - a->pmd_fallback;
	long m_whole = b->m_swpout - a->m_swpout + b->m_fallback - a->m_fallback;

	ksft_print_msg("%s: pswpout +%ld (touched %ld, whole %ld) split +%ld freed +%ld thp +%ld\n",
		       mode, written, touched, whole, b->split - a->split,
		       b->freed - a->freed, b->thp_swpout - a->thp_swpout);
	ksft_print_msg("%s: swpout_fallback +%ld PMD, +%ld 64K\n", mode,
		       b->pmd_fallback - a->pmd_fallback, b->m_fallback - a->m_fallback);
	if (!strcmp(mode, "never")) {
		EXPECT_EQ(0, b->split - a->split);
		EXPECT_GE(written, whole);
		EXPECT_EQ(NR_SPARSE + NR_DENSE, pmd_whole);
		EXPECT_EQ(NR_MSPARSE, m_whole);
		return;
	}
	EXPECT_GE(written, touched + dense);
	EXPECT_LE(written, touched + dense + OTHER_PAGES);
	/* The zero-filled subpages were freed, not written. */
	EXPECT_GE(b->freed - a->freed,
		  NR_SPARSE * (long)(l->per - 1) + NR_MSPARSE * (long)(l->mper - 1));
	EXPECT_EQ(NR_MSPARSE, b->m_split - a->m_split);
	EXPECT_EQ(0, m_whole);
	if (!strcmp(mode, "underused")) {
		/* The sparse ones split, the dense ones to swap whole. */
		EXPECT_EQ(NR_SPARSE, b->pmd_split - a->pmd_split);
		EXPECT_EQ(NR_DENSE, pmd_whole);
	} else {
		EXPECT_EQ(NR_SPARSE + NR_DENSE, b->pmd_split - a->pmd_split);
		EXPECT_EQ(0, pmd_whole);
	}
}

/*
 * The THPs in a memcg whose memory.max, lowered to 4 MiB once they are
 * made, forces them out to zram; then the limit is lifted and the child
 * reads every byte back.
 */
TEST_F_TIMEOUT(swapout, memcg_pressure, 120)
{
	char pmd_enabled[128], pid[16], b = 1;
	int ready[2], go[2], status;
	struct counts before, after;
	long split0, freed0, zero0, want;
	struct layout l;

	layout(&self->z, &l);
	snprintf(pmd_enabled, sizeof(pmd_enabled), THP "hugepages-%lukB/enabled",
		 self->z.pmd_kb);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (!self->child) {
		char *p;

		snprintf(pid, sizeof(pid), "%d", getpid());
		if (ts_put(CG_T "cgroup.procs", pid))
			_exit(10);
		p = make_thps(&l, pmd_enabled);
		if (!p || ts_count_thps(p + l.sparse, NR_SPARSE, l.pmd) != NR_SPARSE ||
		    ts_count_thps(p + l.msparse, NR_MSPARSE, l.msz) != NR_MSPARSE ||
		    ts_count_thps(p + l.dense, NR_DENSE, l.pmd) != NR_DENSE)
			_exit(11);
		if (write(ready[1], &b, 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(12);
		_exit(check_thps(&l, p));
	}
	close(ready[1]);
	close(go[0]);
	self->go = go[1];
	/* Nothing to read if the child failed: its exit status says why. */
	if (read(ready[0], &b, 1) != 1) {
		ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
		self->child = 0;
		ASSERT_TRUE(false) TH_LOG("the child exited with %d", WEXITSTATUS(status));
	}
	close(ready[0]);

	/* The system's first, then the memcg's, brought up to date. */
	read_counts(_metadata, &self->z, &before);
	ASSERT_EQ(0, ts_flush_memcg_stats(CG_T));
	split0 = ts_must_keyed(_metadata, CG_T "memory.stat", "thp_split_scan_swapout");
	freed0 = ts_must_keyed(_metadata, CG_T "memory.stat", "thp_split_scan_swapout_freed");
	zero0 = ts_must_keyed(_metadata, CG_T "memory.stat", "thp_split_freed");
	EXPECT_EQ(0, ts_put(CG_T "memory.max", "4M"));
	read_counts(_metadata, &self->z, &after);
	EXPECT_EQ(0, ts_keyed(CG_T "memory.events", "oom_kill"));
	EXPECT_LE(ts_must_long(_metadata, CG_T "memory.current"), 4L << 20);
	check_mode(_metadata, variant->mode, &l, &before, &after);

	/*
	 * The child's memcg counts the splits of its THPs, as many as the
	 * sizes count above, and the pages they freed: at least its
	 * zero-filled subpages, at most what the whole system counted
	 * (read after).  Reclaim's splits do not count in thp_split_freed,
	 * which no other split in the memcg moves.
	 */
	if (!strcmp(variant->mode, "never"))
		want = 0;
	else if (!strcmp(variant->mode, "underused"))
		want = NR_SPARSE + NR_MSPARSE;
	else
		want = NR_SPARSE + NR_MSPARSE + NR_DENSE;
	ASSERT_EQ(0, ts_flush_memcg_stats(CG_T));
	EXPECT_EQ(want, ts_keyed(CG_T "memory.stat", "thp_split_scan_swapout") - split0);
	if (want) {
		long freed = ts_keyed(CG_T "memory.stat", "thp_split_scan_swapout_freed") - freed0;

		EXPECT_GE(freed, NR_SPARSE * (long)(l.per - 1) + NR_MSPARSE * (long)(l.mper - 1));
		EXPECT_LE(freed, ts_vm_counter(_metadata, "thp_split_scan_swapout_freed") -
				 before.freed);
	} else {
		EXPECT_EQ(freed0, ts_keyed(CG_T "memory.stat", "thp_split_scan_swapout_freed"));
	}
	EXPECT_EQ(zero0, ts_keyed(CG_T "memory.stat", "thp_split_freed"));

	ASSERT_EQ(0, ts_put(CG_T "memory.max", "max"));
	ASSERT_EQ(1, write(self->go, &b, 1));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	close(self->go);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the child's check (1-3: data, 10-12: setup)");
}

/*
 * MADV_PAGEOUT of the same THPs, in this task: the same saving in
 * "underused" and "always", whole folios in "never", every byte back.
 */
TEST_F_TIMEOUT(swapout, madv_pageout, 300)
{
	struct counts before, after;
	char pmd_enabled[128];
	struct layout l;
	char *p;

	layout(&self->z, &l);
	snprintf(pmd_enabled, sizeof(pmd_enabled), THP "hugepages-%lukB/enabled",
		 self->z.pmd_kb);
	p = make_thps(&l, pmd_enabled);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(NR_SPARSE, ts_count_thps(p + l.sparse, NR_SPARSE, l.pmd));
	ASSERT_EQ(NR_MSPARSE, ts_count_thps(p + l.msparse, NR_MSPARSE, l.msz));
	ASSERT_EQ(NR_DENSE, ts_count_thps(p + l.dense, NR_DENSE, l.pmd));
	read_counts(_metadata, &self->z, &before);
	ASSERT_EQ(0, madvise(p, l.len, MADV_PAGEOUT));
	read_counts(_metadata, &self->z, &after);
	check_mode(_metadata, variant->mode, &l, &before, &after);
	EXPECT_EQ(0, check_thps(&l, p));
	munmap(p, l.len);
}

/* How many of the @nr pages at @p are swapped out (pagemap bit 62); -1 on error. */
static long swapped_pages(const char *p, size_t nr, size_t psz)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	long n = 0;
	uint64_t e;
	size_t i;

	if (fd < 0)
		return -1;
	for (i = 0; i < nr && n >= 0; i++) {
		if (pread(fd, &e, sizeof(e), ((uintptr_t)p / psz + i) * sizeof(e)) != sizeof(e))
			n = -1;
		else
			n += (e >> 62) & 1;
	}
	close(fd);
	return n;
}

/*
 * Order-0 pages at swap-out go through reclaim as in 6.12, whatever
 * split_on_swapout says: thp_scan frees only the folios of its own
 * split.  64 pages with data, in a range without THPs, paged out: every
 * one is swapped out (pagemap), thp_scan looked at none of them (no
 * thp_scan_swapout event at their pfns) and freed none
 * (thp_split_scan_swapout_freed, which nothing else of the guest moves while
 * this test runs), and every byte reads back.  The pages are written and
 * paged out on one CPU: MADV_PAGEOUT drains only its own CPU's batch of
 * folios not yet on the LRU, and passes over the folios still in another
 * CPU's (on arm64, 2 of 64 once, when the task moved between the two).
 */
TEST_F_TIMEOUT(swapout, order0_untouched, 300)
{
	const size_t nr = 64, len = nr * self->z.psz;
	unsigned long pfns[64];
	char line[512], want[32];
	long freed0, hits = 0;
	cpu_set_t all, one;
	size_t i;
	FILE *f;
	char *p;

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, madvise(p, len, MADV_NOHUGEPAGE));
	for (i = 0; i < nr; i++)
		ts_fill_page(p, i, self->z.psz);
	ASSERT_EQ(0, ts_pagemap_pfns(p, nr, pfns));
	for (i = 0; i < nr; i++)
		ASSERT_NE(0, pfns[i]) TH_LOG("page %zu not present", i);
	ASSERT_EQ(0, ts_clear_trace());
	freed0 = ts_vm_counter(_metadata, "thp_split_scan_swapout_freed");
	ASSERT_EQ(0, madvise(p, len, MADV_PAGEOUT));
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	EXPECT_EQ((long)nr, swapped_pages(p, nr, self->z.psz));
	EXPECT_EQ(freed0, ts_vm_counter(_metadata, "thp_split_scan_swapout_freed"));
	f = fopen(TRACE "trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "thp_scan_swapout:"))
			continue;
		for (i = 0; i < nr; i++) {
			snprintf(want, sizeof(want), "pfn=0x%lx ", pfns[i]);
			hits += !!strstr(line, want);
		}
	}
	fclose(f);
	EXPECT_EQ(0, hits);
	EXPECT_EQ(-1, ts_check_pages(p, nr, self->z.psz, ts_every_page, NULL));
	munmap(p, len);
}

/*
 * Keep the dense parts at swap-out: NR_KD PMD THPs, each with its first
 * quarter written and the rest zero-filled, paged out with the quarter's
 * size allowed (and no size below 64K).  Such a THP is not underused, but
 * a split around its quarter frees three quarters of it.  "underused":
 * each is split to the quarter's order at its head, then each of its
 * other three blocks to base pages (thp_scan_split events on the test's
 * pfns); the quarter is swapped out as one folio of its size (or, if 6.12
 * finds no free swap cluster for it, split by reclaim itself: counted as
 * its size's swpout_fallback), the rest is left to the zero page, not
 * swapped.  "never": each goes to swap whole; "always": each is split to
 * base pages and only its quarter is swapped.  The quarter's size is the
 * test's alone (no other task makes folios of it).  Every byte reads back.
 */
TEST_F_TIMEOUT(swapout, keep_dense, 300)
{
	const size_t per = self->z.per, psz = self->z.psz, run = per / 4;
	const size_t nr = NR_KD, len = nr * self->z.pmd;
	const unsigned long qkb = run * psz / 1024;
	struct dense_spec d = { per, run };
	unsigned long heads[NR_KD], rest[3 * NR_KD];
	struct ev_filter first = { true, "split_zero_runs", heads, nr, 0, true };
	struct ev_filter second = { true, "split_zero_runs", rest, 3 * nr, 0, true };
	struct ev_filter any = { true, NULL, heads, nr, 0, false };
	long q0, pmd0, q_whole, pmd_whole, swapped_run = 0, swapped_rest = 0;
	cpu_set_t all, one;
	char path[128];
	size_t i, k;
	char *p;

	snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled", qkb);
	ASSERT_EQ(0, access(path, F_OK)) TH_LOG("no %lu kB THP size", qkb);
	ASSERT_EQ(0, ts_put(path, "always"));
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	p = ts_map_aligned(len, self->z.pmd);
	ASSERT_NE(NULL, p);
	for (i = 0; i < nr; i++)
		for (k = 0; k < run; k++)
			ts_fill_page(p, i * per + k, psz);
	ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, psz, heads));
	for (i = 0; i < nr; i++)
		for (k = 1; k < 4; k++)
			rest[i * 3 + k - 1] = heads[i] + k * run;
	q0 = ts_must_stat(_metadata, qkb, "swpout") +
	     ts_must_stat(_metadata, qkb, "swpout_fallback");
	pmd0 = ts_must_stat(_metadata, self->z.pmd_kb, "swpout") +
	       ts_must_stat(_metadata, self->z.pmd_kb, "swpout_fallback");
	ASSERT_EQ(0, ts_clear_trace());
	ASSERT_EQ(0, madvise(p, len, MADV_PAGEOUT));
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	q_whole = ts_must_stat(_metadata, qkb, "swpout") +
		  ts_must_stat(_metadata, qkb, "swpout_fallback") - q0;
	pmd_whole = ts_must_stat(_metadata, self->z.pmd_kb, "swpout") +
		    ts_must_stat(_metadata, self->z.pmd_kb, "swpout_fallback") - pmd0;
	for (i = 0; i < nr; i++) {
		swapped_run += swapped_pages(p + i * self->z.pmd, run, psz);
		swapped_rest += swapped_pages(p + i * self->z.pmd + run * psz,
					      per - run, psz);
	}
	ksft_print_msg("%s: swapped: %ld of %zu pages of the runs, %ld of %zu others\n",
		       variant->mode, swapped_run, nr * run, swapped_rest, nr * (per - run));
	ksft_print_msg("%s: to swap whole: %ld %lu kB folios, %ld PMD THPs\n",
		       variant->mode, q_whole, qkb, pmd_whole);
	if (!strcmp(variant->mode, "never")) {
		EXPECT_EQ((long)(nr * per), swapped_run + swapped_rest);
		EXPECT_EQ((long)nr, pmd_whole);
		EXPECT_EQ(0, ts_events(&any));
	} else if (!strcmp(variant->mode, "underused")) {
		EXPECT_EQ((long)(nr * run), swapped_run);
		EXPECT_EQ(0, swapped_rest);
		EXPECT_EQ((long)nr, ts_events(&first));
		EXPECT_EQ((long)(3 * nr), ts_events(&second));
		EXPECT_EQ((long)nr, q_whole);
		EXPECT_EQ(0, pmd_whole);
	} else {
		EXPECT_EQ((long)(nr * run), swapped_run);
		EXPECT_EQ(0, swapped_rest);
		EXPECT_EQ(0, ts_events(&any));
		EXPECT_EQ(0, q_whole + pmd_whole);
	}
	EXPECT_EQ(-1, ts_check_pages(p, nr * per, psz, ts_dense_run, &d));
	munmap(p, len);
}

/* The knob: three values, the one in force in brackets, nothing else. */
TEST_F(swapout, knob)
{
	static const char * const bad[] = {
		"sometimes", "Never", "under", "1", "\n", "never always", "always ",
	};
	char buf[64];
	const char *want;
	unsigned int i;

	if (!strcmp(variant->mode, "never"))
		want = "[never] underused always\n";
	else if (!strcmp(variant->mode, "underused"))
		want = "never [underused] always\n";
	else
		want = "never underused [always]\n";
	ASSERT_EQ(0, ts_get(THP_SCAN "split_on_swapout", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *v = bad[i];

		EXPECT_EQ(-EINVAL, ts_put(THP_SCAN "split_on_swapout", v))
			TH_LOG("writing \"%s\"", v);
		ASSERT_EQ(0, ts_get(THP_SCAN "split_on_swapout", buf, sizeof(buf)));
		EXPECT_STREQ(want, buf);
	}
	EXPECT_EQ(0, ts_put(THP_SCAN "split_on_swapout", "never\n"));
	ASSERT_EQ(0, ts_get(THP_SCAN "split_on_swapout", buf, sizeof(buf)));
	EXPECT_STREQ("[never] underused always\n", buf);
}

THP_SCAN_HARNESS_MAIN
