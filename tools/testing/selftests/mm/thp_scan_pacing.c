// SPDX-License-Identifier: GPL-2.0
/*
 * How much kthpscand does and when, counted, not timed: a round takes
 * folios until it has spent pages_to_scan on them (a folio costs one, plus
 * the subpages its zero scan looked at, the mappings and page table
 * entries its rmap walk visited, and the subpages of its split), four
 * times as much while
 * the "auto" THP policy sees memory under pressure; the next round comes
 * scan_sleep_millisecs later while work is left.  With the sleep at its
 * maximum (a day), kthpscand makes exactly one round each time a knob
 * write wakes it, so what one round did can be read from the counters.
 *
 * The THPs are sparse PMD THPs (page 7 of 512 written), which the zero
 * scan judges underused after 462 subpages at the default
 * underused_zero_pct; the walk before the split finds one mapping, a PMD;
 * the split costs 512: 978 each.  The minimum age is 0: every one is due.
 *
 * kthpscand's rounds and budget are the system's, not the test's: another
 * task's large folio would take part of a round.  So the setting is
 * exclusive (ts_exclusive_thps()): the THP policy is "madvise" ("auto"
 * only while under pressure, when it acts as "defer"), the test's THPs
 * are madvised, no other task in the guest madvises, and the test starts
 * once no other large folio is left; the system-wide counters are then
 * the test's.  The trace checks that too:
 * the subpages scanned by the decisions on the test's own pfns add up to
 * what thp_split_scan_pages_scanned counted.
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

#define CG_NAME "thp_scan_pacing"
#define DAY_MS "86400000"
#define MAX_THPS 12

FIXTURE(pacing) {
	struct thp_sizes z;
	int kpid;
	long cost;		/* what one sparse THP costs a round */
	long scanned;		/* the subpages its zero scan looks at */
	char *p;
	size_t nr;
	unsigned long heads[MAX_THPS];	/* their pfns, before any split */
};

FIXTURE_SETUP(pacing)
{
	thp_scan_setup(_metadata, &self->z, CG_NAME);
	self->kpid = kthpscand_pid();
	ASSERT_GT(self->kpid, 0);
	self->scanned = self->z.per * 90 / 100 + 2;
	/* The folio, its zero scan, its walk (a VMA, a PMD) and its split. */
	self->cost = 1 + self->scanned + 2 + self->z.per;
}

FIXTURE_TEARDOWN(pacing)
{
	if (self->p)
		munmap(self->p, self->nr * self->z.pmd);
	thp_scan_teardown();
}

/*
 * Queue @nr sparse THPs while thp_scan is off (so that no round starts),
 * with a day's sleep between rounds, no minimum age and @budget
 * subpages a round; kthpscand is @kpid.
 */
static char *queue_sparse(struct __test_metadata *_metadata,
			  const struct thp_sizes *z, int kpid, size_t nr, long budget,
			  unsigned long *heads)
{
	char buf[32], *p;

	ASSERT_GE(MAX_THPS, nr);
	ASSERT_EQ(0, ts_put(THP_SCAN "enabled", "0"));
	ASSERT_EQ(0, ts_exclusive_thps()) TH_LOG("large folios of other tasks");
	ASSERT_EQ(0, ts_put(THP_SCAN "scan_sleep_millisecs", DAY_MS));
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "0"));
	snprintf(buf, sizeof(buf), "%ld", budget);
	ASSERT_EQ(0, ts_put(THP_SCAN "pages_to_scan", buf));
	wait_kthpscand_idle(_metadata, kpid);
	p = ts_sparse_thps(z, nr);
	EXPECT_NE(NULL, p);
	if (p) {
		EXPECT_TRUE(check_huge_anon(p, nr, z->pmd));
		EXPECT_EQ(0, ts_head_pfns(p, nr, z->per, z->psz, heads));
	}
	return p;
}

/*
 * Write @val to knob @name, which wakes kthpscand for one round, and
 * wait for that round to end; returns how many THPs it split.
 */
static long one_round(struct __test_metadata *_metadata, const struct thp_sizes *z,
		      int kpid, const char *name, const char *val)
{
	long rounds0 = ts_vm_counter(_metadata, "thp_split_scan_rounds");
	long split0 = ts_must_stat(_metadata, z->pmd_kb, "thp_split_scan_underused");
	char path[128];

	snprintf(path, sizeof(path), THP_SCAN "%s", name);
	EXPECT_EQ(0, ts_put(path, val));
	/* A round of a few THPs: 4 s for TCG. */
	ASSERT_TRUE(POLL(ts_vm_counter(_metadata, "thp_split_scan_rounds") > rounds0, 4));
	wait_kthpscand_idle(_metadata, kpid);
	EXPECT_EQ(rounds0 + 1, ts_vm_counter(_metadata, "thp_split_scan_rounds"))
		TH_LOG("one wake-up, one round, then a day's sleep");
	return ts_must_stat(_metadata, z->pmd_kb, "thp_split_scan_underused") - split0;
}

/*
 * The subpages that kthpscand's decisions on the test's THPs scanned, by
 * the trace; -1 if it cannot be read.
 */
static long own_scanned(const unsigned long *heads, size_t nr, int kpid)
{
	struct thp_scan_event *ev = NULL;
	long n, i, sum = 0;

	n = thp_scan_events(&ev);
	for (i = 0; i < n; i++)
		if (!ev[i].split && ev[i].pid == kpid && ts_pfn_in(ev[i].pfn, heads, nr))
			sum += ev[i].scanned;
	free(ev);
	return n < 0 ? -1 : sum;
}

/*
 * pages_to_scan decides how many THPs a round takes: twice the cost of
 * one, two; 1, one (a round takes at least one folio).  scan_sleep_
 * millisecs decides when the next round comes: at a day, none for as
 * long as the test looks although THPs are due; at 100 ms, the rest are
 * split without another wake-up, one a round.
 */
TEST_F_TIMEOUT(pacing, pages_to_scan_and_sleep, 120)
{
	long pages0 = ts_vm_counter(_metadata, "thp_split_scan_pages_scanned");
	long rounds, split0, bad;
	struct trace_count c;

	self->nr = 6;
	self->p = queue_sparse(_metadata, &self->z, self->kpid, self->nr, 2 * self->cost,
			       self->heads);
	ASSERT_NE(NULL, self->p);
	split0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");
	EXPECT_EQ(2, one_round(_metadata, &self->z, self->kpid, "enabled", "1"));
	EXPECT_EQ(2 * self->scanned,
		  ts_vm_counter(_metadata, "thp_split_scan_pages_scanned") - pages0);
	EXPECT_EQ(2 * self->scanned, own_scanned(self->heads, self->nr, self->kpid));

	/* Four THPs due, the sleep a day: no round comes by itself. */
	rounds = ts_vm_counter(_metadata, "thp_split_scan_rounds");
	sleep(3);
	EXPECT_EQ(rounds, ts_vm_counter(_metadata, "thp_split_scan_rounds"));
	EXPECT_EQ(0, ts_count_thps(self->p, 2, self->z.pmd));
	EXPECT_EQ(4, ts_count_thps(self->p + 2 * self->z.pmd, 4, self->z.pmd));

	EXPECT_EQ(1, one_round(_metadata, &self->z, self->kpid, "pages_to_scan", "1"));
	EXPECT_EQ(1, one_round(_metadata, &self->z, self->kpid, "pages_to_scan", "1"));

	rounds = ts_vm_counter(_metadata, "thp_split_scan_rounds");
	ASSERT_EQ(0, ts_put(THP_SCAN "scan_sleep_millisecs", "100"));
	/* Two rounds 100 ms apart: 4 s for TCG; then nothing is queued. */
	EXPECT_TRUE(POLL(ts_size_stat(self->z.pmd_kb, "thp_split_scan_underused") - split0 >= 6,
			 4));
	wait_kthpscand_idle(_metadata, self->kpid);
	EXPECT_EQ(0, ts_smaps_kb(self->p, "AnonHugePages:"));
	EXPECT_EQ(6, ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused") - split0);
	EXPECT_GE(ts_vm_counter(_metadata, "thp_split_scan_rounds") - rounds, 2);
	EXPECT_EQ(6 * self->scanned,
		  ts_vm_counter(_metadata, "thp_split_scan_pages_scanned") - pages0);
	EXPECT_EQ(6 * self->scanned, own_scanned(self->heads, self->nr, self->kpid));
	ts_count_trace(self->z.order_pmd, "split_underused", self->kpid, &c);
	EXPECT_EQ(6, c.splits);
	bad = ts_check_pages(self->p, 6 * self->z.per, self->z.psz, ts_one_per_folio, &self->z.per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
}

/*
 * Put "auto" into pressure, whatever memory looks like; or leave it for
 * "madvise", which ends the pressure ("auto" while plentiful acts as
 * "always": every task's faults could make THPs).
 */
static void set_auto(struct __test_metadata *_metadata, bool pressure)
{
	if (pressure) {
		ASSERT_EQ(0, ts_force_auto(true));
		ASSERT_EQ(0, ts_put(THP "enabled", "auto"));
	} else {
		ASSERT_EQ(0, ts_put(THP "enabled", "madvise"));
	}
	/* Sampled every 100 ms, and at once on a policy change: 3 s for TCG. */
	ASSERT_TRUE(POLL(ts_auto_state_is(pressure ? "pressure" : "plentiful"), 3));
}

/*
 * Under "auto" pressure a round may spend four times pages_to_scan: at
 * twice the cost of a THP, eight THPs; once the pressure is over, two.
 */
TEST_F_TIMEOUT(pacing, budget_under_pressure, 120)
{
	long split0, bad;

	self->nr = 12;
	self->p = queue_sparse(_metadata, &self->z, self->kpid, self->nr, 2 * self->cost,
			       self->heads);
	ASSERT_NE(NULL, self->p);
	set_auto(_metadata, true);
	split0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");
	EXPECT_EQ(8, one_round(_metadata, &self->z, self->kpid, "enabled", "1"));
	set_auto(_metadata, false);
	EXPECT_EQ(2, one_round(_metadata, &self->z, self->kpid, "min_age_millisecs", "0"));
	EXPECT_EQ(10, ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused") - split0);
	EXPECT_EQ(0, ts_count_thps(self->p, 10, self->z.pmd));
	EXPECT_EQ(2, ts_count_thps(self->p + 10 * self->z.pmd, 2, self->z.pmd));
	bad = ts_check_pages(self->p, 12 * self->z.per, self->z.psz, ts_one_per_folio,
			     &self->z.per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
}

THP_SCAN_HARNESS_MAIN
