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
TEST_F_TIMEOUT(split, sparse_pmd_thps, 300)
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
TEST_F_TIMEOUT(split, used_then_zeroed, 300)
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

/*
 * The splits traced on the @nr PMD THPs at @heads after a split around
 * their first @run pages into folios of @piece pages: the first, at a
 * head, to the piece's order; then one to base pages of each block
 * beside the run, by kthpscand.  Returns how many of the second there
 * are; with @check, also expects every split on these pfns to be one of
 * the two, each as said, and no decision on a block beside the run (a
 * block that the split left large and kthpscand judged later).
 */
static long second_splits(struct __test_metadata *_metadata,
			  const struct thp_sizes *z, int kpid,
			  const unsigned long *heads, size_t nr, size_t run,
			  size_t piece, bool check)
{
	const size_t per = z->per;
	struct thp_scan_event *ev;
	long n, j, second = 0;
	size_t i;

	n = thp_scan_events(&ev);
	if (n < 0)
		return -1;
	for (j = 0; j < n; j++) {
		unsigned long off;

		for (i = 0; i < nr; i++) {
			if (ev[j].pfn < heads[i] || ev[j].pfn - heads[i] >= per)
				continue;
			off = ev[j].pfn - heads[i];
			/*
			 * A block beside the run is split in the same pass,
			 * never judged as a folio of its own later.
			 */
			if (!ev[j].split) {
				if (check && off >= run)
					EXPECT_EQ(0, off) TH_LOG("%s at +%lu, order %u",
								 ev[j].decision, off,
								 ev[j].order);
				continue;
			}
			if (off && ev[j].order == __builtin_ctzl(piece) &&
			    !ev[j].new_order && !ev[j].ret && off >= run &&
			    !(off % piece) && ev[j].pid == kpid) {
				second++;
				continue;
			}
			if (!check)
				continue;
			EXPECT_EQ(0, off) TH_LOG("split at +%lu: order %u to %u, ret %d",
						 off, ev[j].order, ev[j].new_order, ev[j].ret);
			EXPECT_EQ(z->order_pmd, ev[j].order);
			EXPECT_EQ(__builtin_ctzl(piece), ev[j].new_order);
		}
	}
	free(ev);
	return second;
}

/* Set the anon THP size of @kb kB to @policy; false if there is no such size. */
static bool set_size(unsigned long kb, const char *policy)
{
	char path[128];

	snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled", kb);
	return !access(path, F_OK) && !ts_put(path, policy);
}

/*
 * Write the first @run pages of each of the @nr THPs of @per pages at @p,
 * check that they are still whole, and read their head pfns into @heads.
 */
static void fill_runs(struct __test_metadata *_metadata, char *p, size_t nr,
		      size_t per, size_t run, size_t psz, unsigned long *heads)
{
	size_t i, k;

	for (i = 0; i < nr; i++)
		for (k = 0; k < run; k++)
			ts_fill_page(p, i * per + k, psz);
	ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, psz, heads));
}

/*
 * Keep the dense parts: @nr PMD THPs, each with its first @run pages
 * written (a dense run) and the rest zero, judged by kthpscand (minimum
 * age 1 s).  @decision is what it must decide on each, @piece the pages
 * of each folio the dense run must end in (0: none split, the THP kept
 * whole).  What is checked, on the test's own folios: the decision and
 * the split, by kthpscand, on each THP's head, to the piece's order; the
 * blocks beside the run split to base pages in a second step, which maps
 * their zero-filled pages to the zero page; the run at the same pfns as
 * before (no copy), in whole folios of @piece pages; the freed pages no
 * longer charged to the test's memcg (their pfns, one by one); Rss; the
 * per-size counters (the setting is exclusive: only the test's mapping
 * is madvised); and every byte.
 */
static void dense_runs(struct __test_metadata *_metadata,
		       const struct thp_sizes *z, int kpid, size_t run,
		       const char *decision, size_t piece)
{
	const size_t nr = 8, per = z->per, psz = z->psz;
	struct dense_spec d = { per, run };
	struct ev_filter split = { true, decision, NULL, nr, kpid, true };
	struct ev_filter decided = { false, decision, NULL, nr, kpid, false };
	unsigned long heads[8], *before, *after, kb = piece * psz / 1024;
	unsigned long long cg = ts_cgroup_ino(CG_T);
	long kept0 = piece ? ts_must_stat(_metadata, kb, "thp_split_scan_dense_kept") : 0;
	long bad, secs, freed_charged, second;
	int kpf = open("/proc/kpageflags", O_RDONLY);
	size_t i, k, moved = 0, nzero = 0, whole = 0;
	char *p = ts_map_aligned(nr * z->pmd, z->pmd);

	ASSERT_NE(NULL, p);
	ASSERT_LE(0, kpf);
	before = calloc(nr * per, sizeof(*before));
	after = calloc(nr * per, sizeof(*after));
	ASSERT_TRUE(before && after);
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "1000"));
	fill_runs(_metadata, p, nr, per, run, psz, heads);
	ASSERT_EQ(0, ts_pagemap_pfns(p, nr * per, before));
	split.pfns = heads;
	decided.pfns = heads;

	secs = kthpscand_deadline(1000, 2);
	if (!piece) {
		EXPECT_TRUE(POLL(ts_pfns_seen(&decided) == nr, secs))
			TH_LOG("%zu of %zu decided after %ld s", ts_pfns_seen(&decided), nr, secs);
		EXPECT_EQ(nr, ts_whole_folios(p, nr, per));
		EXPECT_EQ(0, ts_events(&(struct ev_filter){ true, NULL, heads, nr, 0, false }));
		goto check;
	}
	/* Both steps of every split are over once all are traced. */
	EXPECT_TRUE(POLL(ts_pfns_seen(&split) == nr &&
			 second_splits(_metadata, z, kpid, heads, nr, run, piece, false) ==
			 (long)(nr * (per - run) / piece), secs)) {
		TH_LOG("%zu of %zu split after %ld s", ts_pfns_seen(&split), nr, secs);
		ts_log_other_decisions(&decided, decision, 8);
	}
	ASSERT_EQ(0, ts_pagemap_pfns(p, nr * per, after));
	ASSERT_NE(0, after[per - 1]);
	ASSERT_NE(before[per - 1], after[per - 1]);
	for (i = 0; i < nr * per; i++) {
		if (i % per < run)
			moved += before[i] != after[i];
		else
			nzero += after[i] == after[per - 1];
	}
	/* The run where it was; the rest all the one zero page. */
	EXPECT_EQ(0, moved);
	EXPECT_EQ(nr * (per - run), nzero);
	for (i = 0; i < nr; i++)
		for (k = 0; k < run; k += piece)
			whole += ts_folio_pages_at(kpf, heads[i] + k, per) == piece;
	EXPECT_EQ(nr * run / piece, whole);
	/* The freed pages: no longer the test's memory. */
	for (i = 0, k = 0; i < nr * per; i++)
		if (i % per >= run)
			before[k++] = before[i];
	freed_charged = ts_charged_anon(before, k, cg, false);
	EXPECT_EQ(0, freed_charged);
	EXPECT_EQ((long)(nr * run * psz / 1024), ts_smaps_kb(p, "Rss:"));
	/* System-wide counters: they count the test's splits at least. */
	EXPECT_LE((long)(nr * run / piece),
		  ts_must_stat(_metadata, kb, "thp_split_scan_dense_kept") - kept0);
	second = second_splits(_metadata, z, kpid, heads, nr, run, piece, true);
	EXPECT_EQ((long)(nr * (per - run) / piece), second);
check:
	bad = ts_check_pages(p, nr * per, psz, ts_dense_run, &d);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	free(before);
	free(after);
	close(kpf);
	munmap(p, nr * z->pmd);
}

/*
 * A quarter of each THP written, in one run at its start: 75 % zero, so
 * not underused, but splitting it around the run frees three quarters.
 * With the quarter's size allowed, the run stays one folio of that size.
 */
TEST_F_TIMEOUT(split, keep_dense_quarter, 120)
{
	size_t run = self->z.per / 4;

	ASSERT_TRUE(set_size(run * self->psz / 1024, "madvise"));
	ASSERT_TRUE(set_size(64, "madvise"));
	dense_runs(_metadata, &self->z, self->kpid, run, "split_zero_runs", run);
}

/*
 * The same, with the quarter's size set to "never": the run is kept in
 * 64K folios, the largest size left; no size the admin turned off is
 * made.
 */
TEST_F_TIMEOUT(split, keep_dense_size_never, 120)
{
	size_t run = self->z.per / 4;

	ASSERT_TRUE(set_size(run * self->psz / 1024, "never"));
	ASSERT_TRUE(set_size(64, "madvise"));
	dense_runs(_metadata, &self->z, self->kpid, run, "split_zero_runs", 64 * 1024 / self->psz);
}

/*
 * 64K written of each 2 MiB: underused; split to base pages but for the
 * 64K run, which stays one 64K folio.
 */
TEST_F_TIMEOUT(split, keep_dense_underused, 120)
{
	size_t piece = 64 * 1024 / self->psz;

	ASSERT_TRUE(set_size(64, "madvise"));
	dense_runs(_metadata, &self->z, self->kpid, piece, "split_underused", piece);
}

/* split_keep_dense=0: the quarter-written THPs are used, and kept whole. */
TEST_F_TIMEOUT(split, keep_dense_off, 120)
{
	size_t run = self->z.per / 4;

	ASSERT_TRUE(set_size(run * self->psz / 1024, "madvise"));
	ASSERT_TRUE(set_size(64, "madvise"));
	ASSERT_EQ(0, ts_put(THP_SCAN "split_keep_dense", "0"));
	dense_runs(_metadata, &self->z, self->kpid, run, "keep_used", 0);
}

/* ts_dense_run() on the first half of each PMD THP; the second is unmapped. */
static int dense_run_half(size_t pg, void *arg)
{
	const struct dense_spec *d = arg;

	return pg % d->per < d->per / 2 ? ts_dense_run(pg, arg) : -1;
}

/*
 * A partially mapped THP is split to the largest size its mapping allows,
 * and what that leaves is judged like any folio, dense parts included:
 * four PMD THPs, each with its first quarter written and its second half
 * unmapped.  kthpscand splits each as partially mapped to the order of
 * its mapped half, at once; after the minimum age (1 s) that half, half
 * written in one run, is split around the run (split_zero_runs, with the
 * quarter's size allowed) and its other block to base pages.  The run
 * keeps its pfns in one folio of the quarter's size, the rest of the
 * mapped half is the zero page, and every byte reads back.  The minimum
 * age is a minute until the halves are unmapped: a THP judged whole
 * first would be split around its quarter at once.
 */
TEST_F_TIMEOUT(split, partial_then_dense, 120)
{
	const size_t nr = 4, per = self->z.per, psz = self->psz;
	const size_t run = per / 4;
	const unsigned int order = self->order_pmd;
	struct dense_spec d = { per, run };
	unsigned long heads[4], mids[4];
	struct ev_filter first = { true, "split_zero_runs", heads, nr, self->kpid, true };
	struct ev_filter second = { true, "split_zero_runs", mids, nr, self->kpid, true };
	struct thp_scan_event *ev;
	long n, j, partial = 0, dense = 0, secs;
	int kpf = open("/proc/kpageflags", O_RDONLY);
	char *p = ts_map_aligned(nr * self->pmd, self->pmd);
	size_t i, whole = 0;
	long bad;

	ASSERT_NE(NULL, p);
	ASSERT_LE(0, kpf);
	ASSERT_TRUE(set_size(run * psz / 1024, "madvise"));
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "60000"));
	fill_runs(_metadata, p, nr, per, run, psz, heads);
	for (i = 0; i < nr; i++) {
		mids[i] = heads[i] + run;
		ASSERT_EQ(0, munmap(p + i * self->pmd + self->pmd / 2, self->pmd / 2));
	}
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "1000"));

	secs = kthpscand_deadline(1000, 3);
	EXPECT_TRUE(POLL(ts_pfns_seen(&first) == nr && ts_pfns_seen(&second) == nr, secs))
		TH_LOG("%zu and %zu of %zu split after %ld s", ts_pfns_seen(&first),
		       ts_pfns_seen(&second), nr, secs);
	/* Each THP: one split to its half, one around its run, one beside it. */
	n = thp_scan_events(&ev);
	ASSERT_LE(0, n);
	for (j = 0; j < n; j++) {
		if (!ev[j].split || !ts_pfn_in(ev[j].pfn, heads, nr))
			continue;
		if (!strcmp(ev[j].decision, "split_partially_mapped")) {
			EXPECT_EQ(order, ev[j].order);
			EXPECT_EQ(order - 1, ev[j].new_order);
			partial++;
		} else {
			EXPECT_STREQ("split_zero_runs", ev[j].decision);
			EXPECT_EQ(order - 1, ev[j].order);
			EXPECT_EQ(order - 2, ev[j].new_order);
			dense++;
		}
		EXPECT_EQ(0, ev[j].ret);
	}
	free(ev);
	EXPECT_EQ((long)nr, partial);
	EXPECT_EQ((long)nr, dense);
	EXPECT_EQ((long)nr, ts_events(&second));
	for (i = 0; i < nr; i++)
		whole += ts_folio_pages_at(kpf, heads[i], per) == run;
	EXPECT_EQ(nr, whole);
	/* Each mapped half is a mapping of its own now. */
	for (i = 0; i < nr; i++)
		EXPECT_EQ((long)(run * psz / 1024), ts_smaps_kb(p + i * self->pmd, "Rss:"));
	bad = ts_check_pages(p, nr * per, psz, dense_run_half, &d);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	close(kpf);
	for (i = 0; i < nr; i++)
		munmap(p + i * self->pmd, self->pmd / 2);
}

THP_SCAN_HARNESS_MAIN
