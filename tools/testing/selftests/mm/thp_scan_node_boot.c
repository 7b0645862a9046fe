// SPDX-License-Identifier: GPL-2.0
/*
 * The per-node thp_scan queues.  With the memory controller on, every
 * anon THP has a memcg (the root one at least) and is queued on that
 * memcg's queue; only with it off (booted with cgroup_disable=memory, as
 * workbench/test.sh does for this program) do THPs go to their node's
 * queue.  Checked here: kthpscand splits sparse and partially mapped THPs
 * from the node queue, and the deferred split shrinker, driven by
 * drop_caches with kthpscand held off, splits sparse ones from it.
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

/* Is the memory controller off, as cgroup_disable=memory makes it? */
static bool memcg_off(void)
{
	char line[256];
	bool off = false;
	FILE *f = fopen("/proc/cgroups", "r");

	/* "#subsys_name hierarchy num_cgroups enabled" */
	while (f && fgets(line, sizeof(line), f)) {
		unsigned int h, n, enabled;

		if (sscanf(line, "memory %u %u %u", &h, &n, &enabled) == 3)
			off = !enabled;
	}
	if (f)
		fclose(f);
	return off;
}

FIXTURE(node) {
	struct thp_sizes z;
	int kpid;
};

FIXTURE_SETUP(node)
{
	ASSERT_TRUE(memcg_off()) TH_LOG("boot with cgroup_disable=memory");
	thp_scan_setup(_metadata, &self->z, NULL);
	self->kpid = kthpscand_pid();
	ASSERT_GT(self->kpid, 0);
}

FIXTURE_TEARDOWN(node)
{
	thp_scan_teardown();
}

/*
 * kthpscand takes THPs from the node queue: sparse ones are split as
 * underused, partially mapped ones as such; every byte reads back.  The
 * minimum age is lowered to 1 s to keep the test short: the logic is the
 * same at any age.
 */
TEST_F_TIMEOUT(node, kthpscand_splits, 120)
{
	const size_t nr = 4, per = self->z.per;
	long under0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");
	long partial0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_partial");
	struct trace_count c;
	char *sparse, *half;
	long bad;

	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "1000"));
	sparse = ts_sparse_thps(&self->z, nr);
	ASSERT_NE(NULL, sparse);
	ASSERT_TRUE(check_huge_anon(sparse, nr, self->z.pmd));
	half = ts_half_mapped_thps(&self->z, nr);
	ASSERT_NE(NULL, half);
	/* Due in 1 s (the partially mapped at once), one round: 6 s for TCG. */
	EXPECT_TRUE(POLL(ts_size_stat(self->z.pmd_kb, "thp_split_scan_underused") - under0 >=
			 (long)nr, 6));
	EXPECT_EQ(0, ts_smaps_kb(sparse, "AnonHugePages:"));
	EXPECT_TRUE(POLL(ts_size_stat(self->z.pmd_kb, "thp_split_scan_partial") - partial0 >=
			 (long)nr, 6));
	EXPECT_EQ(nr, ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused") - under0);
	EXPECT_EQ(nr, ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_partial") - partial0);
	ts_count_trace(self->z.order_pmd, "split_underused", self->kpid, &c);
	EXPECT_EQ(nr, c.splits);
	ts_count_trace(self->z.order_pmd, "split_partially_mapped", self->kpid, &c);
	EXPECT_EQ(nr, c.splits);
	bad = ts_check_pages(sparse, nr * per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("sparse page %ld differs", bad);
	bad = ts_check_pages(half, nr * per, self->z.psz, ts_first_half, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld of the mapped halves differs", bad);
	munmap(sparse, nr * self->z.pmd);
	ts_unmap_halves(half, &self->z, nr);
}

/*
 * The shrinker takes THPs from the node queue: with kthpscand held off
 * (minimum age a day), drop_caches=2 (drop_slab(): every shrinker, with
 * no memcg) splits the sparse THPs, in this task.
 */
TEST_F_TIMEOUT(node, shrinker_splits, 120)
{
	const size_t nr = 4, per = self->z.per;
	long under0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");
	struct trace_count c;
	char *p;
	long bad;

	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "86400000"));
	p = ts_sparse_thps(&self->z, nr);
	ASSERT_NE(NULL, p);
	ASSERT_TRUE(check_huge_anon(p, nr, self->z.pmd));
	EXPECT_TRUE(POLL(!ts_put("/proc/sys/vm/drop_caches", "2") &&
			 ts_smaps_kb(p, "AnonHugePages:") == 0, 5));
	EXPECT_EQ(nr, ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused") - under0);
	ts_count_trace(self->z.order_pmd, "split_underused", getpid(), &c);
	EXPECT_EQ(nr, c.splits);
	EXPECT_EQ(self->z.per * 90 / 100 + 2, c.scanned);
	ts_count_trace(self->z.order_pmd, "split_underused", self->kpid, &c);
	EXPECT_EQ(0, c.decisions);
	bad = ts_check_pages(p, nr * per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * self->z.pmd);
}

THP_SCAN_HARNESS_MAIN
