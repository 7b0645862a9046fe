// SPDX-License-Identifier: GPL-2.0
/*
 * thp_scan/enabled=0 means stock 6.12: kthpscand stops (no round, no
 * decision, no CPU time), the deferred split shrinker judges as 6.12 did
 * (by khugepaged's max_ptes_none, PMD THPs only, nothing at the default
 * 511), and khugepaged collapses as 6.12 did (max_ptes_none alone, not
 * thp_scan's underused limit).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

#define CG_NAME "thp_scan_disabled"

FIXTURE(off) {
	struct thp_sizes z;
	int kpid;
};

FIXTURE_SETUP(off)
{
	thp_scan_setup(_metadata, &self->z, CG_NAME);
	self->kpid = kthpscand_pid();
	ASSERT_GT(self->kpid, 0);
	ASSERT_EQ(0, ts_put(THP_SCAN "enabled", "0"));
}

FIXTURE_TEARDOWN(off)
{
	thp_scan_teardown();
}

/*
 * kthpscand stops: sparse THPs due at once (minimum age 0) with a round
 * due every 100 ms see, over 3 s, no round, no decision and no CPU time
 * of kthpscand, nor when a knob write wakes it, and stay huge; with
 * thp_scan on again, kthpscand splits them.
 */
TEST_F_TIMEOUT(off, thread_stops, 120)
{
	const size_t nr = 4, per = self->z.per;
	long rounds0, cpu0, scanned0, split0, switches, bad;
	struct trace_count c;
	char *p;

	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "0"));
	ASSERT_EQ(0, ts_put(THP_SCAN "scan_sleep_millisecs", "100"));
	/* The writes wake it, to find thp_scan off. */
	wait_kthpscand_idle(_metadata, self->kpid);
	p = ts_sparse_thps(&self->z, nr);
	ASSERT_NE(NULL, p);
	ASSERT_TRUE(check_huge_anon(p, nr, self->z.pmd));
	rounds0 = ts_vm_counter(_metadata, "thp_split_scan_rounds");
	scanned0 = ts_vm_counter(_metadata, "thp_split_scan_scanned");
	split0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");
	cpu0 = ts_must_long(_metadata, THP_SCAN "cpu_time_ms");
	sleep(3);
	EXPECT_EQ(rounds0, ts_vm_counter(_metadata, "thp_split_scan_rounds"));
	EXPECT_EQ(scanned0, ts_vm_counter(_metadata, "thp_split_scan_scanned"));
	EXPECT_EQ(cpu0, ts_must_long(_metadata, THP_SCAN "cpu_time_ms"));
	EXPECT_EQ('S', ts_task_state(self->kpid));
	/* Woken (a knob write), it finds thp_scan off and sleeps again. */
	switches = ts_voluntary_switches(self->kpid);
	ASSERT_GE(switches, 0);
	ASSERT_EQ(0, ts_put(THP_SCAN "scan_sleep_millisecs", "100"));
	EXPECT_TRUE(POLL(ts_voluntary_switches(self->kpid) > switches, 5));
	wait_kthpscand_idle(_metadata, self->kpid);
	EXPECT_EQ(rounds0, ts_vm_counter(_metadata, "thp_split_scan_rounds"));
	EXPECT_EQ(scanned0, ts_vm_counter(_metadata, "thp_split_scan_scanned"));
	EXPECT_TRUE(check_huge_anon(p, nr, self->z.pmd));
	ts_count_trace(self->z.order_pmd, "split_underused", self->kpid, &c);
	EXPECT_EQ(0, c.decisions);

	ASSERT_EQ(0, ts_put(THP_SCAN "enabled", "1"));
	/* Due at once, all in one round: 6 s for TCG. */
	EXPECT_TRUE(POLL(ts_size_stat(self->z.pmd_kb, "thp_split_scan_underused") - split0 >=
			 (long)nr, 6));
	EXPECT_EQ(0, ts_smaps_kb(p, "AnonHugePages:"));
	ts_count_trace(self->z.order_pmd, "split_underused", self->kpid, &c);
	EXPECT_EQ(nr, c.splits);
	EXPECT_GT(ts_vm_counter(_metadata, "thp_split_scan_rounds"), rounds0);
	bad = ts_check_pages(p, nr * per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * self->z.pmd);
}

/*
 * Drive the deferred split shrinker of every memcg at its highest
 * priority, from this task: drop_caches=2 runs drop_slab().
 */
static int shrink(void)
{
	return ts_put("/proc/sys/vm/drop_caches", "2");
}

/*
 * Sparse PMD THPs (page 7 of 512 written) while thp_scan is off, queued
 * and judged by the deferred split shrinker as in 6.12, with no zero scan
 * of thp_scan's (0 of 0).  Every decision is made by this task, in the
 * shrinker.  Returns the THPs, or NULL; their head pfns in @heads.
 */
static char *stock_shrink(struct __test_metadata *_metadata,
			  struct _test_data_off *self, size_t nr,
			  const char *max_ptes_none, const char *want,
			  unsigned long *heads)
{
	int me = getpid();
	struct trace_count c;
	char *p;

	ASSERT_EQ(0, ts_put(THP "khugepaged/max_ptes_none", max_ptes_none)) {
		return NULL;
	}
	ASSERT_EQ(0, ts_clear_trace()) {
		return NULL;
	}
	p = ts_sparse_thps(&self->z, nr);
	ASSERT_NE(NULL, p) {
		return NULL;
	}
	ASSERT_TRUE(check_huge_anon(p, nr, self->z.pmd)) {
		return p;
	}
	/* The heads, while they are heads (the split maps page 0 to the zero page). */
	ASSERT_EQ(0, ts_head_pfns(p, nr, self->z.per, self->z.psz, heads)) {
		return p;
	}
	/* New folios wait a jiffy before the shrinker takes them. */
	usleep(100000);
	EXPECT_EQ(0, shrink());
	/* The shrinker judges every task's queued THPs: only ours count. */
	ts_count_trace_pfns(self->z.order_pmd, want, me, heads, nr, &c);
	EXPECT_EQ(nr, c.decisions) TH_LOG("%s", want);
	EXPECT_EQ(0, c.zero);
	EXPECT_EQ(0, c.scanned);
	return p;
}

/*
 * The shrinker with thp_scan off judges as 6.12 does.  64K mTHPs are not
 * queued at all (6.12 queues PMD-sized THPs only).  Sparse PMD THPs: at
 * max_ptes_none 511 nothing is underused (keep_used), and a THP judged
 * used leaves the queue, so a later pass, at 0, does not see it again;
 * at 0, sparse PMD THPs are split (6.12's thp_underused() sees zero
 * pages).
 */
TEST_F_TIMEOUT(off, shrinker_judges_as_stock, 120)
{
	const size_t nr = 4, per = self->z.per, mper = 16, mkb = 64;
	const int morder = __builtin_ctzl(mper);
	long split0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");
	long stock0 = ts_vm_counter(_metadata, "thp_underused_split_page");
	unsigned long p_heads[4], qheads[4], mheads[4];
	struct trace_count c;
	char path[128], *p, *q, *m;
	long bad;
	size_t i;

	ASSERT_EQ(mper * self->z.psz, mkb * 1024) TH_LOG("no 16-page 64K THP size");
	wait_kthpscand_idle(_metadata, self->kpid);

	/* 64K mTHPs, page 7 of each written: not queued. */
	snprintf(path, sizeof(path), THP "hugepages-%zukB/enabled", mkb);
	ASSERT_EQ(0, ts_put(path, "madvise"));
	m = ts_map_aligned(nr * mkb * 1024, self->z.pmd);
	ASSERT_NE(NULL, m);
	for (i = 0; i < nr; i++)
		ts_fill_page(m, i * mper + 7, self->z.psz);
	EXPECT_EQ(nr, ts_count_thps(m, nr, mkb * 1024));
	ASSERT_EQ(0, ts_head_pfns(m, nr, mper, self->z.psz, mheads));
	ASSERT_EQ(0, ts_put(path, "never"));

	p = stock_shrink(_metadata, self, nr, "511", "keep_used", p_heads);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(nr, ts_count_thps(p, nr, self->z.pmd));
	/* Looked at once: off the queue, not judged again at 0. */
	q = stock_shrink(_metadata, self, nr, "0", "split_underused", qheads);
	ASSERT_NE(NULL, q);
	ts_count_trace_pfns(self->z.order_pmd, "split_underused", 0, qheads, nr, &c);
	EXPECT_EQ(nr, c.splits);
	EXPECT_EQ(nr, c.decisions);
	/* The first ones, judged used once, are not looked at again. */
	ts_count_trace_pfns(self->z.order_pmd, "split_underused", 0, p_heads, nr, &c);
	EXPECT_EQ(0, c.decisions) TH_LOG("only the new ones");
	/* The 64K mTHPs: not queued, so never looked at. */
	ts_count_trace_pfns(morder, "keep_used", 0, mheads, nr, &c);
	EXPECT_EQ(0, c.decisions);
	ts_count_trace_pfns(morder, "split_underused", 0, mheads, nr, &c);
	EXPECT_EQ(0, c.decisions);
	/* System-wide counters: they count these splits at least. */
	EXPECT_LE(nr, ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused") - split0);
	EXPECT_LE(nr, ts_vm_counter(_metadata, "thp_underused_split_page") - stock0);
	EXPECT_EQ(nr, ts_count_thps(p, nr, self->z.pmd));
	EXPECT_EQ(0, ts_count_thps(q, nr, self->z.pmd));
	EXPECT_EQ(nr, ts_count_thps(m, nr, mkb * 1024));
	bad = ts_check_pages(p, nr * per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("kept PMD range page %ld differs", bad);
	bad = ts_check_pages(q, nr * per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("split PMD range page %ld differs", bad);
	bad = ts_check_pages(m, nr * mper, self->z.psz, ts_one_per_folio, (void *)&mper);
	EXPECT_EQ(-1, bad) TH_LOG("64K range page %ld differs", bad);
	munmap(p, nr * self->z.pmd);
	munmap(q, nr * self->z.pmd);
	munmap(m, nr * mkb * 1024);
}

/*
 * Partially mapped THPs with thp_scan off, counted as 6.12 counts them:
 * four THPs with their second halves unmapped are flagged at once
 * (thp_deferred_split_page, split_deferred and nr_anon_partially_mapped
 * each up by four), nothing splits them without memory pressure (three
 * seconds of kthpscand asleep), and the shrinker splits all four to base
 * pages (thp_split_page up by four, no split to a smaller THP), which
 * takes them off nr_anon_partially_mapped and frees the unmapped halves.
 */
TEST_F_TIMEOUT(off, partial_counts_as_stock, 120)
{
	const size_t nr = 4, per = self->z.per;
	long defer0 = ts_vm_counter(_metadata, "thp_deferred_split_page");
	long sdefer0 = ts_must_stat(_metadata, self->z.pmd_kb, "split_deferred");
	long pm0 = ts_must_stat(_metadata, self->z.pmd_kb, "nr_anon_partially_mapped");
	long split0 = ts_vm_counter(_metadata, "thp_split_page");
	long to0 = ts_must_sum_stat(_metadata, "thp_split_scan_to_mthp");
	unsigned long heads[4], *gone = calloc(nr * per / 2, sizeof(*gone));
	long bad;
	size_t i, j;
	int kpf = open("/proc/kpageflags", O_RDONLY);
	char *p;

	ASSERT_NE(NULL, gone);
	ASSERT_GE(kpf, 0);
	wait_kthpscand_idle(_metadata, self->kpid);
	p = ts_half_mapped_thps(&self->z, nr);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->z.psz, heads));
	/* The unmapped halves: the pages that follow each head's first half. */
	for (i = 0; i < nr; i++)
		for (j = 0; j < per / 2; j++)
			gone[i * per / 2 + j] = heads[i] + per / 2 + j;
	/*
	 * Counted as 6.12 counts them: system-wide counters, which only
	 * the test's THPs move here (PMD THPs, partially unmapped: no other
	 * task of the guest makes one).
	 */
	EXPECT_EQ(nr, ts_vm_counter(_metadata, "thp_deferred_split_page") - defer0);
	EXPECT_EQ(nr, ts_must_stat(_metadata, self->z.pmd_kb, "split_deferred") - sdefer0);
	EXPECT_EQ(nr, ts_must_stat(_metadata, self->z.pmd_kb, "nr_anon_partially_mapped") - pm0);
	/*
	 * Three seconds in which nothing splits them: each head is still
	 * the head of a whole THP, its unmapped half still charged.
	 */
	sleep(3);
	for (i = 0; i < nr; i++)
		EXPECT_EQ(per, ts_folio_pages_at(kpf, heads[i], per + 1)) TH_LOG("THP %zu", i);
	EXPECT_EQ(nr * per / 2,
		  ts_charged_anon(gone, nr * per / 2, ts_cgroup_ino(CG CG_NAME), true));

	EXPECT_EQ(0, shrink());
	/*
	 * Split to base pages (6.12 splits to order 0), the unmapped halves
	 * freed, page by page (kpagecgroup); the system-wide counters count
	 * these splits at least, and no split to a smaller THP.
	 */
	for (i = 0; i < nr; i++)
		EXPECT_EQ(1, ts_folio_pages_at(kpf, heads[i], per + 1)) TH_LOG("THP %zu", i);
	EXPECT_EQ(0, ts_charged_anon(gone, nr * per / 2, ts_cgroup_ino(CG CG_NAME), true));
	EXPECT_LE(nr, ts_vm_counter(_metadata, "thp_split_page") - split0);
	EXPECT_EQ(to0, ts_must_sum_stat(_metadata, "thp_split_scan_to_mthp"));
	EXPECT_EQ(pm0, ts_must_stat(_metadata, self->z.pmd_kb, "nr_anon_partially_mapped"));
	EXPECT_EQ(nr, ts_vm_counter(_metadata, "thp_deferred_split_page") - defer0);
	close(kpf);
	free(gone);
	bad = ts_check_pages(p, nr * per, self->z.psz, ts_first_half, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	ts_unmap_halves(p, &self->z, nr);
}

/*
 * khugepaged with thp_scan off: its limit is max_ptes_none alone.  A
 * range with one page of 512 present, which it would not collapse while
 * thp_scan splits underused THPs (more than 460 none), is collapsed at
 * the default 511 (the test's own range, smaps and kpageflags).
 */
TEST_F_TIMEOUT(off, khugepaged_limit_lifted, 120)
{
	const size_t nr = 2, per = self->z.per;
	struct thp_settings s;
	char *p;
	long bad;
	size_t i;

	thp_read_settings(&s);
	s.thp_enabled = THP_MADVISE;
	s.khugepaged.max_ptes_none = per - 1;
	s.khugepaged.scan_sleep_millisecs = 100;
	s.khugepaged.alloc_sleep_millisecs = 100;
	s.khugepaged.pages_to_scan = per * 8;
	thp_write_settings(&s);
	/*
	 * No THP at fault: the policy is madvise and the range not madvised
	 * yet (ts_map_aligned() madvises, see the setup: undone first).
	 */
	p = ts_map_aligned(nr * self->z.pmd, self->z.pmd);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, madvise(p, nr * self->z.pmd, MADV_NOHUGEPAGE));
	for (i = 0; i < nr; i++)
		ts_fill_page(p, i * per + 7, self->z.psz);
	ASSERT_EQ(0, ts_smaps_kb(p, "AnonHugePages:"));
	ASSERT_EQ(0, madvise(p, nr * self->z.pmd, MADV_HUGEPAGE));
	/* khugepaged every 100 ms, the whole range at a time: 10 s for TCG. */
	EXPECT_TRUE(POLL(ts_smaps_kb(p, "AnonHugePages:") == (long)(nr * self->z.pmd_kb), 10))
		TH_LOG("%ld kB collapsed", ts_smaps_kb(p, "AnonHugePages:"));
	EXPECT_EQ(nr, ts_count_thps(p, nr, self->z.pmd));
	bad = ts_check_pages(p, nr * per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * self->z.pmd);
}

THP_SCAN_HARNESS_MAIN
