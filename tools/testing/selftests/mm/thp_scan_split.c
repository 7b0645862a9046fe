// SPDX-License-Identifier: GPL-2.0
/*
 * kthpscand at work, with no memory pressure at all: sparse THPs (PMD and
 * mTHP) are split and their zero-filled subpages freed, dense THPs stay
 * huge, memory used and later zeroed is split on a later pass, partially
 * mapped THPs are split, and the thread sleeps when nothing is due.  Each
 * test checks the memory (smaps and the memcg's memory.current), the
 * counters (/proc/vmstat and hugepages-<size>kB/stats/), the tracepoints
 * and the task that fired them, and every byte of user data.  The default
 * knobs are used unless a test says why not.
 */
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

#define CG_NAME "thp_scan_split"
#define CG_T CG CG_NAME "/"

FIXTURE(split) {
	struct thp_sizes z;
	size_t psz, pmd;
	unsigned long pmd_kb;
	int order_pmd;
	int kpid;
};

FIXTURE_SETUP(split)
{
	char buf[32];

	thp_scan_setup(_metadata, &self->z, CG_NAME);
	self->psz = self->z.psz;
	self->pmd = self->z.pmd;
	self->pmd_kb = self->z.pmd_kb;
	self->order_pmd = self->z.order_pmd;
	self->kpid = kthpscand_pid();
	ASSERT_GT(self->kpid, 0);
	/* The defaults, as documented: the tests rely on them. */
	ASSERT_EQ(0, ts_get(THP_SCAN "enabled", buf, sizeof(buf)));
	EXPECT_STREQ("1\n", buf);
	ASSERT_EQ(0, ts_get(THP_SCAN "underused_zero_pct", buf, sizeof(buf)));
	EXPECT_STREQ("90\n", buf);
	ASSERT_EQ(0, ts_get(THP_SCAN "min_age_millisecs", buf, sizeof(buf)));
	EXPECT_STREQ("10000\n", buf);
}

FIXTURE_TEARDOWN(split)
{
	thp_scan_teardown();
}

/*
 * 32 PMD THPs with one page of data each: with the default knobs and no
 * memory pressure, kthpscand splits each as underused within the minimum
 * age and a few rounds, using CPU time to do so; Rss falls to the pages
 * written, the memcg is uncharged, and every byte reads back.
 */
TEST_F_TIMEOUT(split, sparse_pmd_thps, 90)
{
	const size_t nr = 32, per = self->z.per;
	long split0 = ts_vm_counter(_metadata, "thp_split_scan_underused");
	long size0 = ts_must_stat(_metadata, self->pmd_kb, "thp_split_scan_underused");
	long cpu0 = ts_must_long(_metadata, THP_SCAN "cpu_time_ms");
	long mem_full, mem_after, cpu1, bad, secs;
	unsigned long heads[32];
	struct ev_filter splits = { true, "split_underused", heads, nr, self->kpid, true };
	struct ev_filter any_split = { true, NULL, heads, nr, 0, false };
	struct trace_count c;
	char *p = ts_map_aligned(nr * self->pmd, self->pmd);
	size_t i;

	ASSERT_NE(NULL, p);
	for (i = 0; i < nr; i++)
		ts_fill_page(p, i * per + 7, self->psz);
	ASSERT_TRUE(check_huge_anon(p, nr, self->pmd));
	EXPECT_EQ((long)(nr * self->pmd_kb), ts_smaps_kb(p, "Rss:"));
	ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, heads));
	mem_full = ts_must_long(_metadata, CG_T "memory.current");
	EXPECT_GE(mem_full, (long)(nr * self->pmd));

	/*
	 * Due after the default minimum age of 10 s, then two rounds one
	 * second apart at the default pages_to_scan (17 of these THPs a
	 * round).  The split event fires once a split is over: polling the
	 * mapping would catch the last split halfway.
	 */
	secs = kthpscand_deadline(-1, 2);
	EXPECT_TRUE(POLL(ts_pfns_seen(&splits) == nr, secs))
		TH_LOG("%ld kB of THPs left after %ld s", ts_smaps_kb(p, "AnonHugePages:"), secs);
	EXPECT_EQ(nr, ts_events(&splits));
	EXPECT_EQ(nr, ts_events(&any_split));
	EXPECT_EQ(0, ts_whole_folios(p, nr, per));
	EXPECT_EQ(0, ts_smaps_kb(p, "AnonHugePages:"));
	/* Only the written pages are left; the rest map the zero page. */
	EXPECT_EQ((long)(nr * self->psz / 1024), ts_smaps_kb(p, "Rss:"));
	mem_after = ts_must_long(_metadata, CG_T "memory.current");
	EXPECT_LE(mem_after, mem_full - (long)(nr * (self->pmd - self->psz)) + ts_memcg_slack())
		TH_LOG("memory.current %ld -> %ld", mem_full, mem_after);
	/* System-wide counters: they count these splits at least. */
	EXPECT_GE(ts_vm_counter(_metadata, "thp_split_scan_underused") - split0, (long)nr);
	EXPECT_GE(ts_must_stat(_metadata, self->pmd_kb, "thp_split_scan_underused") - size0,
		  (long)nr);

	/*
	 * Traced, every one by kthpscand: page 7 of 512 written, so the
	 * zero scan stops at the first zero page past the limit: max_zero
	 * + 1 zero pages of max_zero + 2 looked at, every page mapped.
	 */
	ts_count_trace_pfns(self->order_pmd, "split_underused", self->kpid, heads, nr, &c);
	EXPECT_EQ(nr, c.decisions);
	EXPECT_EQ(nr, c.splits);
	EXPECT_EQ(per * 90 / 100 + 1, c.zero);
	EXPECT_EQ(per * 90 / 100 + 2, c.scanned);
	EXPECT_EQ(per, c.mapped);
	ts_count_trace_pfns(self->order_pmd, "split_underused", 0, heads, nr, &c);
	EXPECT_EQ(nr, c.decisions) TH_LOG("decisions by other tasks");

	bad = ts_check_pages(p, nr * per, self->psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	/* Zero-scanning 32 x 462 pages and splitting takes CPU time. */
	cpu1 = ts_must_long(_metadata, THP_SCAN "cpu_time_ms");
	EXPECT_GT(cpu1, cpu0);
	ksft_print_msg("kthpscand CPU time: %ld ms (%ld ms in this test)\n",
		       cpu1, cpu1 - cpu0);
	munmap(p, nr * self->pmd);
}

/*
 * Dense THPs stay huge: kthpscand looks at them (once at least, after
 * the minimum age), finds them used after the fewest pages it can, and
 * keeps them, data intact.  The minimum age is lowered to 1 s to keep
 * the test short: the decision is the same at any age.
 */
TEST_F_TIMEOUT(split, dense_pmd_thps_stay, 120)
{
	const size_t nr = 8, per = self->z.per;
	unsigned long heads[8];
	struct ev_filter looked = { false, NULL, heads, nr, self->kpid, false };
	struct ev_filter any_split = { true, NULL, heads, nr, 0, false };
	struct trace_count c;
	char *p = ts_map_aligned(nr * self->pmd, self->pmd);
	long bad, secs;
	size_t i;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "1000"));
	for (i = 0; i < nr * per; i++)
		ts_fill_page(p, i, self->psz);
	ASSERT_TRUE(check_huge_anon(p, nr, self->pmd));
	ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, heads));
	/* Due in 1 s, all in one round. */
	secs = kthpscand_deadline(-1, 2);
	EXPECT_TRUE(POLL(ts_pfns_seen(&looked) == nr, secs))
		TH_LOG("%zu of %zu looked at after %ld s", ts_pfns_seen(&looked), nr, secs);
	EXPECT_TRUE(check_huge_anon(p, nr, self->pmd));
	EXPECT_EQ(nr, ts_whole_folios(p, nr, per));
	EXPECT_EQ(0, ts_events(&any_split));
	ts_count_trace_pfns(self->order_pmd, "keep_used", self->kpid, heads, nr, &c);
	EXPECT_EQ(ts_events(&looked), c.decisions) TH_LOG("not all keep_used");
	EXPECT_GE(c.decisions, (long)nr);
	EXPECT_EQ(0, c.zero);
	EXPECT_EQ(per - per * 90 / 100, c.scanned);
	bad = ts_check_pages(p, nr * per, self->psz, ts_every_page, NULL);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * self->pmd);
}

/*
 * The same for a 64K mTHP size: sparse ones are split, with their stats.
 * The minimum age is lowered to 1 s, as above.  Only the test's mapping
 * may get 64K mTHPs (madvise), and every claim is about its own folios:
 * each range one mTHP mapped whole (pagemap and kpageflags), and the
 * decisions and splits on those pfns in the trace, by kthpscand.  The
 * per-size counters are system-wide: they must count at least these.
 */
TEST_F_TIMEOUT(split, sparse_64k_mthps, 120)
{
	const unsigned long kb = 64;
	const size_t sz = kb * 1024, per = sz / self->psz, nr = 64;
	int order = __builtin_ctzl(per);
	unsigned long heads[64];
	struct ev_filter splits = { true, "split_underused", heads, nr, self->kpid, true };
	struct ev_filter any_split = { true, NULL, heads, nr, 0, false };
	struct thp_scan_event *ev;
	long split0, bad, n, j, decided = 0, secs;
	char path[128];
	char *p;
	size_t i;

	snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled", kb);
	ASSERT_EQ(0, access(path, F_OK)) TH_LOG("no 64K anon THP size");
	ASSERT_EQ(16, per);
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "1000"));
	ASSERT_EQ(0, ts_put(THP "enabled", "never"));
	ASSERT_EQ(0, ts_put(path, "madvise"));
	split0 = ts_must_stat(_metadata, kb, "thp_split_scan_underused");
	p = ts_map_aligned(nr * sz, self->pmd);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, madvise(p, nr * sz, MADV_HUGEPAGE));
	for (i = 0; i < nr; i++)
		ts_fill_page(p, i * per + 7, self->psz);
	/* Every 64K range is one mTHP, mapped whole. */
	EXPECT_EQ((long)(nr * kb), ts_smaps_kb(p, "Rss:"));
	ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, heads));
	/* Due in 1 s, all in one round (64 x 17 pages). */
	secs = kthpscand_deadline(-1, 2);
	EXPECT_TRUE(POLL(ts_pfns_seen(&splits) == nr, secs))
		TH_LOG("%zu of %zu split after %ld s", ts_pfns_seen(&splits), nr, secs);
	EXPECT_EQ((long)(nr * self->psz / 1024), ts_smaps_kb(p, "Rss:"));
	EXPECT_EQ(0, ts_whole_folios(p, nr, per));
	/* Each split once, by kthpscand, and by nothing else. */
	EXPECT_EQ(nr, ts_events(&splits));
	EXPECT_EQ(nr, ts_events(&any_split));
	EXPECT_GE(ts_must_stat(_metadata, kb, "thp_split_scan_underused") - split0, (long)nr);
	/*
	 * One page of 16 written: with the limit at 14 zero pages, the scan
	 * only knows at the last page.  Every decision on these folios.
	 */
	n = thp_scan_events(&ev);
	for (j = 0; j < n; j++) {
		if (ev[j].split || !ts_pfn_in(ev[j].pfn, heads, nr))
			continue;
		decided++;
		EXPECT_STREQ("split_underused", ev[j].decision);
		EXPECT_EQ(order, ev[j].order);
		EXPECT_EQ(per - 1, ev[j].zero);
		EXPECT_EQ(per, ev[j].scanned);
		EXPECT_EQ(self->kpid, ev[j].pid);
	}
	free(ev);
	EXPECT_EQ(nr, decided);
	bad = ts_check_pages(p, nr * per, self->psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * sz);
}

/*
 * Memory used, kept, then zeroed is split on a later pass.  The minimum
 * age is lowered to 2 s to keep the test short; the logic is the same.
 */
TEST_F_TIMEOUT(split, used_then_zeroed, 60)
{
	const size_t nr = 8, per = self->z.per;
	unsigned long heads[8];
	struct ev_filter kept = { false, "keep_used", heads, nr, self->kpid, false };
	struct ev_filter splits = { true, "split_underused", heads, nr, self->kpid, true };
	struct ev_filter any_split = { true, NULL, heads, nr, 0, false };
	struct trace_count c;
	char *p = ts_map_aligned(nr * self->pmd, self->pmd);
	long bad, secs;
	size_t i;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "2000"));
	for (i = 0; i < nr * per; i++)
		ts_fill_page(p, i, self->psz);
	ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, heads));
	/* Due in 2 s, all in one round. */
	secs = kthpscand_deadline(-1, 2);
	ASSERT_TRUE(POLL(ts_pfns_seen(&kept) == nr, secs));
	EXPECT_TRUE(check_huge_anon(p, nr, self->pmd));
	EXPECT_EQ(0, ts_events(&any_split));

	/* Now zero all but page 7 of each. */
	for (i = 0; i < nr * per; i++)
		if (!ts_one_per_folio(i, (void *)&per))
			memset(p + i * self->psz, 0, self->psz);
	/* Due again 2 s after the last look. */
	EXPECT_TRUE(POLL(ts_pfns_seen(&splits) == nr, secs))
		TH_LOG("%ld kB of THPs left", ts_smaps_kb(p, "AnonHugePages:"));
	EXPECT_EQ(0, ts_smaps_kb(p, "AnonHugePages:"));
	EXPECT_EQ(nr, ts_events(&splits));
	EXPECT_EQ(nr, ts_events(&any_split));
	ts_count_trace_pfns(self->order_pmd, "split_underused", self->kpid, heads, nr, &c);
	EXPECT_EQ(nr, c.splits);
	EXPECT_EQ((long)(nr * self->psz / 1024), ts_smaps_kb(p, "Rss:"));
	bad = ts_check_pages(p, nr * per, self->psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * self->pmd);
}

/*
 * Half of each THP unmapped: Rss halves at once, and each THP is counted
 * in nr_anon_partially_mapped, but the memcg is still charged for the
 * whole THPs, until kthpscand splits them as partially mapped (no minimum
 * age for those): the unmapped halves are freed and the count falls back.
 * kthpscand is held off (thp_scan off) while the halves are unmapped, so
 * that the count is seen before any split takes it back.
 */
TEST_F_TIMEOUT(split, partially_mapped, 120)
{
	const size_t nr = 8, per = self->z.per;
	long split0 = ts_must_stat(_metadata, self->pmd_kb, "thp_split_scan_partial");
	long vm0 = ts_vm_counter(_metadata, "thp_split_scan_partial");
	long pm0 = ts_must_stat(_metadata, self->pmd_kb, "nr_anon_partially_mapped");
	long mem_full, mem_after, bad, secs;
	unsigned long heads[8];
	struct ev_filter splits = { true, "split_partially_mapped", heads, nr, self->kpid, true };
	struct ev_filter any_split = { true, NULL, heads, nr, 0, false };
	struct trace_count c;
	char *p = ts_map_aligned(nr * self->pmd, self->pmd);
	size_t i;

	ASSERT_NE(NULL, p);
	for (i = 0; i < nr * per; i++)
		ts_fill_page(p, i, self->psz);
	ASSERT_TRUE(check_huge_anon(p, nr, self->pmd));
	ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, heads));
	ASSERT_EQ(0, ts_put(THP_SCAN "enabled", "0"));
	wait_kthpscand_idle(_metadata, self->kpid);
	for (i = 0; i < nr; i++)
		ASSERT_EQ(0, munmap(p + i * self->pmd + self->pmd / 2, self->pmd / 2));
	for (i = 0; i < nr; i++)
		EXPECT_EQ((long)(self->pmd_kb / 2), ts_smaps_kb(p + i * self->pmd, "Rss:"));
	mem_full = ts_must_long(_metadata, CG_T "memory.current");
	EXPECT_GE(mem_full, (long)(nr * self->pmd));
	/*
	 * A system-wide gauge: the test's THPs are the only partially
	 * mapped ones that can come and go while it runs (PMD THPs only, in
	 * ranges of 2 MiB; the guest runs nothing else).
	 */
	EXPECT_EQ(pm0 + (long)nr,
		  ts_must_stat(_metadata, self->pmd_kb, "nr_anon_partially_mapped"));
	EXPECT_EQ(0, ts_events(&any_split));

	ASSERT_EQ(0, ts_put(THP_SCAN "enabled", "1"));
	/* Due at once, all in the round the write starts. */
	secs = kthpscand_deadline(0, 1);
	EXPECT_TRUE(POLL(ts_pfns_seen(&splits) == nr, secs))
		TH_LOG("%zu of %zu split after %ld s", ts_pfns_seen(&splits), nr, secs);
	EXPECT_EQ(nr, ts_events(&splits));
	EXPECT_EQ(nr, ts_events(&any_split));
	/* System-wide counters: they count these splits at least. */
	EXPECT_GE(ts_must_stat(_metadata, self->pmd_kb, "thp_split_scan_partial") - split0,
		  (long)nr);
	EXPECT_GE(ts_vm_counter(_metadata, "thp_split_scan_partial") - vm0, (long)nr);
	/* Split off its queue, each THP stops being counted. */
	EXPECT_EQ(pm0, ts_must_stat(_metadata, self->pmd_kb, "nr_anon_partially_mapped"));
	mem_after = ts_must_long(_metadata, CG_T "memory.current");
	EXPECT_LE(mem_after, mem_full - (long)(nr * self->pmd / 2) + ts_memcg_slack())
		TH_LOG("memory.current %ld -> %ld", mem_full, mem_after);
	ts_count_trace_pfns(self->order_pmd, "split_partially_mapped", self->kpid, heads, nr, &c);
	EXPECT_EQ(nr, c.splits);
	/* The mapped halves: every byte as written. */
	bad = ts_check_pages(p, nr * per, self->psz, ts_first_half, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	for (i = 0; i < nr; i++)
		munmap(p + i * self->pmd, self->pmd / 2);
}

/*
 * Nothing due, nothing done: with THPs queued that are younger than the
 * minimum age (raised to 60 s here), kthpscand sleeps: no round, no CPU
 * time, state S, over a window in which a thread that did not sleep
 * would have done three rounds (scan_sleep_millisecs is 1 s).
 */
TEST_F_TIMEOUT(split, sleeps_when_nothing_due, 120)
{
	const size_t nr = 2, per = self->z.per;
	char *p = ts_map_aligned(nr * self->pmd, self->pmd);
	long rounds0, cpu0;
	size_t i;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "60000"));
	for (i = 0; i < nr * per; i++)
		ts_fill_page(p, i, self->psz);
	/* The round the knob write started, if it has not ended yet. */
	wait_kthpscand_idle(_metadata, self->kpid);
	rounds0 = ts_vm_counter(_metadata, "thp_split_scan_rounds");
	cpu0 = ts_must_long(_metadata, THP_SCAN "cpu_time_ms");
	sleep(3);
	EXPECT_EQ(rounds0, ts_vm_counter(_metadata, "thp_split_scan_rounds"));
	EXPECT_EQ(cpu0, ts_must_long(_metadata, THP_SCAN "cpu_time_ms"));
	EXPECT_EQ('S', ts_task_state(self->kpid));
	EXPECT_TRUE(check_huge_anon(p, nr, self->pmd));
	munmap(p, nr * self->pmd);
}

THP_SCAN_HARNESS_MAIN
