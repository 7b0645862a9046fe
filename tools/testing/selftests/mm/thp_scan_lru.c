// SPDX-License-Identifier: GPL-2.0
/*
 * thp_scan finds anon large folios on the LRU, and puts none on a list
 * when it is made:
 *
 * - a folio freed before its minimum age is never judged, by kthpscand
 *   or anyone, while folios made beside it and kept past the minimum age
 *   are judged, not before, and split;
 * - among 2000 memcgs (most empty, a hundred with a dense THP each), the
 *   one with sparse THPs has them split in the usual time;
 * - with the multi-gen LRU switched on, and back off, under live THPs:
 *   sparse THPs are found on its lists and split, dense ones kept, and
 *   no count is lost (a freed memcg with a count left warns).
 *
 * Every byte of user data is checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

#define CG_NAME "thp_scan_lru"
#define CG_MANY CG "thp_scan_lru_many/"
#define CG_CHURN CG "thp_scan_lru_churn"
#define LRU_GEN "/sys/kernel/mm/lru_gen/enabled"

FIXTURE(lru) {
	struct thp_sizes z;
	int kpid;
};

FIXTURE_SETUP(lru)
{
	thp_scan_setup(_metadata, &self->z, CG_NAME);
	self->kpid = kthpscand_pid();
	ASSERT_GT(self->kpid, 0);
	/* Trace times on the clock of clock_gettime(CLOCK_MONOTONIC). */
	ASSERT_EQ(0, ts_put(TRACE "trace_clock", "mono"));
}

FIXTURE_TEARDOWN(lru)
{
	ts_put(TRACE "trace_clock", "local");
	if (!access(LRU_GEN, F_OK))
		ts_put(LRU_GEN, "n");
	thp_scan_teardown();
}

/* The head pfn of each of the @nr folios of @size bytes at @p. */
static int folio_pfns(const char *p, size_t nr, size_t size, unsigned long *pfns)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (ts_pagemap_pfns(p + i * size, 1, pfns + i))
			return -1;
	return 0;
}

/*
 * Sparse 64K mTHPs (1 MiB of them: no PMD THP fits) and PMD THPs, freed
 * half a second after they were
 * made (minimum age 3 s), beside a control set of sparse PMD THPs made
 * at the same time and kept.  Once kthpscand has split the control set,
 * it has walked this memcg's lists past the minimum age of every folio
 * here: the freed ones must not appear in any decision, by any task.
 * The control set is judged no earlier than the minimum age after it was
 * made (trace times on the monotonic clock).
 */
TEST_F_TIMEOUT(lru, young_freed_never_seen, 300)
{
	const size_t nr_pmd = 8, nr_64k = 16, nr_ctl = 4, per = self->z.per;
	const size_t mper = 64 * 1024 / self->z.psz;
	const double min_age = 3.0;
	unsigned long pfns[8 + 16], ctl[4];
	struct thp_scan_event *ev;
	char *pmd, *m, *c;
	long n, j, bad;
	double made;
	size_t i;

	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "3000"));
	ASSERT_EQ(0, ts_put(THP_SCAN "scan_sleep_millisecs", "100"));
	ASSERT_EQ(0, ts_put(THP "hugepages-64kB/enabled", "always"));
	ASSERT_EQ(0, ts_clear_trace());

	made = ts_mono_s();
	c = ts_sparse_thps(&self->z, nr_ctl);
	pmd = ts_sparse_thps(&self->z, nr_pmd);
	m = ts_map_aligned(nr_64k * 64 * 1024, 64 * 1024);
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, pmd);
	ASSERT_NE(NULL, m);
	for (i = 0; i < nr_64k; i++)
		ts_fill_page(m, i * mper + 3, self->z.psz);
	ASSERT_TRUE(check_huge_anon(c, nr_ctl, self->z.pmd));
	ASSERT_TRUE(check_huge_anon(pmd, nr_pmd, self->z.pmd));
	ASSERT_EQ(nr_64k, ts_count_thps(m, nr_64k, 64 * 1024));
	ASSERT_EQ(0, folio_pfns(pmd, nr_pmd, self->z.pmd, pfns));
	ASSERT_EQ(0, folio_pfns(m, nr_64k, 64 * 1024, pfns + nr_pmd));
	ASSERT_EQ(0, folio_pfns(c, nr_ctl, self->z.pmd, ctl));
	usleep(500000);
	ASSERT_LT(ts_mono_s() - made, min_age) TH_LOG("too slow to free them young");
	munmap(pmd, nr_pmd * self->z.pmd);
	munmap(m, nr_64k * 64 * 1024);

	/* The minimum age, then two rounds a second: 20 s leaves TCG room. */
	EXPECT_TRUE(POLL(ts_smaps_kb(c, "AnonHugePages:") == 0, 20));
	n = thp_scan_events(&ev);
	ASSERT_GE(n, 0);
	for (j = 0; j < n; j++) {
		if (ts_pfn_in(ev[j].pfn, pfns, nr_pmd + nr_64k))
			EXPECT_TRUE(false)
				TH_LOG("a folio freed young was judged: pfn %#lx %s by %d",
				       ev[j].pfn, ev[j].decision, ev[j].pid);
		if (!ev[j].split && ts_pfn_in(ev[j].pfn, ctl, nr_ctl)) {
			EXPECT_STREQ("split_underused", ev[j].decision);
			EXPECT_EQ(self->kpid, ev[j].pid);
			/* A jiffy's worth of slack, and the clocks' reads. */
			EXPECT_GE(ev[j].ts, made + min_age - 0.05)
				TH_LOG("judged %.3f s after it was made", ev[j].ts - made);
		}
	}
	free(ev);
	bad = ts_check_pages(c, nr_ctl * per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(c, nr_ctl * self->z.pmd);
}

/* Move this task into memcg @path (a directory), or back to the root. */
static int join(const char *path)
{
	char procs[256], pid[16];

	snprintf(procs, sizeof(procs), "%scgroup.procs", path);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return ts_put(procs, pid);
}

/*
 * 2000 memcgs: 1949 empty, 50 with a dense PMD THP each, and the last
 * with 8 sparse PMD THPs made after all the others.  kthpscand visits
 * only the memcgs with large folios, and the sparse THPs are split in
 * the usual time (the default minimum age of 10 s, then a few rounds
 * with the default knobs: 30 s leaves TCG room); the dense ones stay.
 */
TEST_F_TIMEOUT(lru, many_memcgs_one_sparse, 300)
{
	const int nr_cg = 2000, nr_dense = 50;
	const size_t nr = 8, per = self->z.per;
	char path[128], *dense[50], *p;
	long bad;
	int i;
	size_t k;

	ASSERT_EQ(0, ts_put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_MANY, 0755) || errno == EEXIST);
	ASSERT_EQ(0, ts_put(CG_MANY "cgroup.subtree_control", "+memory"));
	for (i = 0; i < nr_cg; i++) {
		snprintf(path, sizeof(path), CG_MANY "m%d", i);
		ASSERT_TRUE(!mkdir(path, 0755) || errno == EEXIST) TH_LOG("memcg %d", i);
	}
	for (i = 0; i < nr_dense; i++) {
		snprintf(path, sizeof(path), CG_MANY "m%d/", i * 39);
		ASSERT_EQ(0, join(path));
		dense[i] = ts_map_aligned(self->z.pmd, self->z.pmd);
		ASSERT_NE(NULL, dense[i]);
		for (k = 0; k < per; k++)
			ts_fill_page(dense[i], k, self->z.psz);
	}
	snprintf(path, sizeof(path), CG_MANY "m%d/", nr_cg - 1);
	ASSERT_EQ(0, join(path));
	p = ts_sparse_thps(&self->z, nr);
	ASSERT_NE(NULL, p);
	ASSERT_TRUE(check_huge_anon(p, nr, self->z.pmd));
	ASSERT_EQ(0, join(CG CG_NAME "/"));

	EXPECT_TRUE(POLL(ts_smaps_kb(p, "AnonHugePages:") == 0, 30));
	/*
	 * The zero subpages freed too (a split in progress, or one by
	 * another path, can leave them mapped for a moment; once seen on
	 * the debug kernel under load: 316 kB).
	 */
	EXPECT_TRUE(POLL(ts_smaps_kb(p, "Rss:") == (long)(nr * self->z.psz / 1024), 30));
	EXPECT_EQ((long)(nr * self->z.psz / 1024), ts_smaps_kb(p, "Rss:"));
	bad = ts_check_pages(p, nr * per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	for (i = 0; i < nr_dense; i++) {
		EXPECT_EQ(1, ts_count_thps(dense[i], 1, self->z.pmd)) TH_LOG("dense THP %d", i);
		bad = ts_check_pages(dense[i], per, self->z.psz, ts_every_page, NULL);
		EXPECT_EQ(-1, bad) TH_LOG("dense THP %d: page %ld differs", i, bad);
		munmap(dense[i], self->z.pmd);
	}
	munmap(p, nr * self->z.pmd);
}

/*
 * 200 memcgs in a row, each made, given a sparse THP by a child, emptied
 * by the child's exit and removed, while kthpscand walks its list of lruvecs
 * without a pause (minimum age 0, no sleep between rounds).  A memcg's
 * lruvecs leave that list when its last reference goes, before cgroup
 * frees the reference count that kthpscand tries; before they did,
 * kthpscand could try a freed one (a NULL pointer dereference, seen on
 * arm64 under TCG).  The kernel stays up, every memcg goes away, and
 * kthpscand goes on.
 */
TEST_F_TIMEOUT(lru, memcg_churn, 300)
{
	const int rounds = 200;
	char path[128];
	long rounds0;
	int i, status;
	pid_t pid;

	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "0"));
	ASSERT_EQ(0, ts_put(THP_SCAN "scan_sleep_millisecs", "0"));
	ASSERT_EQ(0, ts_put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_CHURN, 0755) || errno == EEXIST);
	ASSERT_EQ(0, ts_put(CG_CHURN "/cgroup.subtree_control", "+memory"));
	rounds0 = ts_vm_counter(_metadata, "thp_split_scan_rounds");
	for (i = 0; i < rounds; i++) {
		snprintf(path, sizeof(path), CG_CHURN "/c%d", i);
		ASSERT_EQ(0, mkdir(path, 0755)) TH_LOG("memcg %d", i);
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid) {
			char procs[160], *p;

			snprintf(procs, sizeof(procs), "%s/", path);
			if (join(procs))
				_exit(1);
			p = ts_map_aligned(self->z.pmd, self->z.pmd);
			if (!p)
				_exit(2);
			/* Sparse: at a minimum age of 0, split at once. */
			ts_fill_page(p, 7, self->z.psz);
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("round %d: the child's status %d (1: join, 2: map)",
			       i, WEXITSTATUS(status));
		ASSERT_TRUE(POLL(!rmdir(path) || errno != EBUSY, 5)) TH_LOG("memcg %d stays", i);
		ASSERT_NE(0, access(path, F_OK)) TH_LOG("memcg %d stays", i);
	}
	EXPECT_GT(ts_vm_counter(_metadata, "thp_split_scan_rounds"), rounds0);
	EXPECT_EQ(0, rmdir(CG_CHURN));
}

/*
 * The multi-gen LRU switched on under live THPs (it moves them to its
 * lists) and new ones made: the sparse THPs, old and new, are found on
 * its lists and split, the dense ones kept; switched off again, new
 * sparse THPs are found on the classic lists.  Minimum age 1 s.
 */
TEST_F_TIMEOUT(lru, mglru_on_and_off, 300)
{
	const size_t nr = 4, per = self->z.per;
	char *before, *after, *off, *dense;
	long bad;
	size_t k;

	if (access(LRU_GEN, F_OK))
		SKIP(return, "no multi-gen LRU (CONFIG_LRU_GEN=n)");
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "600000"));
	before = ts_sparse_thps(&self->z, nr);
	dense = ts_map_aligned(self->z.pmd, self->z.pmd);
	ASSERT_NE(NULL, before);
	ASSERT_NE(NULL, dense);
	for (k = 0; k < per; k++)
		ts_fill_page(dense, k, self->z.psz);
	ASSERT_EQ(0, ts_put(LRU_GEN, "y"));
	after = ts_sparse_thps(&self->z, nr);
	ASSERT_NE(NULL, after);
	ASSERT_TRUE(check_huge_anon(before, nr, self->z.pmd));
	ASSERT_TRUE(check_huge_anon(after, nr, self->z.pmd));
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "1000"));
	EXPECT_TRUE(POLL(!ts_smaps_kb(before, "AnonHugePages:") &&
			 !ts_smaps_kb(after, "AnonHugePages:"), 20));
	EXPECT_EQ(1, ts_count_thps(dense, 1, self->z.pmd));

	ASSERT_EQ(0, ts_put(LRU_GEN, "n"));
	off = ts_sparse_thps(&self->z, nr);
	ASSERT_NE(NULL, off);
	ASSERT_TRUE(check_huge_anon(off, nr, self->z.pmd));
	EXPECT_TRUE(POLL(!ts_smaps_kb(off, "AnonHugePages:"), 20));
	EXPECT_EQ(1, ts_count_thps(dense, 1, self->z.pmd));

	bad = ts_check_pages(before, nr * per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	bad = ts_check_pages(after, nr * per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	bad = ts_check_pages(off, nr * per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	bad = ts_check_pages(dense, per, self->z.psz, ts_every_page, NULL);
	EXPECT_EQ(-1, bad) TH_LOG("dense page %ld differs", bad);
	munmap(before, nr * self->z.pmd);
	munmap(after, nr * self->z.pmd);
	munmap(off, nr * self->z.pmd);
	munmap(dense, self->z.pmd);
}

THP_SCAN_HARNESS_MAIN
