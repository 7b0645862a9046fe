// SPDX-License-Identifier: GPL-2.0
/*
 * Sparse THPs under memcg pressure, without swap: in a memcg limited to
 * 80 MiB, a task writes one byte into each of 32 PMD THPs (64 MiB
 * charged), then writes 32 MiB of base pages. Reclaim can free nothing
 * but the zero-filled subpages of the THPs. In stock 6.12 this ends in an
 * OOM kill (max_ptes_none=511 judges nothing underused); with thp_scan the
 * deferred split shrinker splits them as underused, the task lives, and
 * every byte reads back.  kthpscand is held off (its minimum age at the
 * maximum), and the trace shows that the splits were made by the task
 * itself, in reclaim.
 */
#include <errno.h>
#include <fcntl.h>
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

#define CG_T CG "thp_scan_underused/"
#define NR_THP 32
#define DENSE (32UL << 20)

FIXTURE(underused) {
	struct thp_sizes z;
	int kpid;
};

FIXTURE_SETUP(underused)
{
	thp_scan_setup(_metadata, &self->z, NULL);
	self->kpid = kthpscand_pid();
	ASSERT_GT(self->kpid, 0);
	ASSERT_EQ(0, ts_put(THP_SCAN "enabled", "1"));
	/* kthpscand takes no folio before a day: only the shrinker splits. */
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "86400000"));
	ASSERT_EQ(0, ts_put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_T, 0755) || errno == EEXIST);
	ASSERT_EQ(0, ts_put(CG_T "memory.max", "80M"));
}

FIXTURE_TEARDOWN(underused)
{
	thp_scan_teardown();
}

/*
 * The child: joins the memcg, makes the sparse THPs and the dense memory,
 * and checks every byte of both.  Its exit status says what went wrong.
 */
static int sparse_then_dense(size_t pmd)
{
	size_t len = NR_THP * pmd, i;
	char buf[16], *p, *dense;

	snprintf(buf, sizeof(buf), "%d", getpid());
	if (ts_put(CG_T "cgroup.procs", buf))
		return 2;
	p = ts_map_aligned(len, pmd);
	if (!p)
		return 3;
	for (i = 0; i < NR_THP; i++)
		p[i * pmd + i] = (char)(i + 1);
	if (!check_huge_anon(p, NR_THP, pmd))
		return 6;
	dense = mmap(NULL, DENSE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (dense == MAP_FAILED || madvise(dense, DENSE, MADV_NOHUGEPAGE))
		return 7;
	memset(dense, 0xa5, DENSE);
	for (i = 0; i < DENSE; i++)
		if (dense[i] != (char)0xa5)
			return 8;
	/* Every byte of each range: byte i of range i written, all else zero. */
	for (i = 0; i < NR_THP; i++) {
		const char *r = p + i * pmd;

		if (r[i] != (char)(i + 1))
			return 4;
		if (!ts_is_zero(r, i) || !ts_is_zero(r + i + 1, pmd - i - 1))
			return 5;
	}
	return 0;
}

TEST_F_TIMEOUT(underused, sparse_thps_in_small_memcg, 120)
{
	size_t pmd = self->z.pmd;
	long splits_before = ts_vm_counter(_metadata, "thp_underused_split_page");
	long splits;
	unsigned int nr, max_zero, pct;
	struct thp_scan_event e;
	long decisions = 0, split_ok = 0;
	char line[512];
	int status;
	FILE *f;
	pid_t pid;

	pct = ts_must_long(_metadata, THP_SCAN "underused_zero_pct");
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(sparse_then_dense(pmd));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("child killed by signal %d",
					      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	if (WIFEXITED(status))
		EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, ts_must_keyed(_metadata, CG_T "memory.events", "oom_kill"));
	/* 96 MiB in 80 MiB: at least 8 THPs had to be split. */
	splits = ts_vm_counter(_metadata, "thp_underused_split_page") - splits_before;
	EXPECT_GE(splits, 8);

	/*
	 * Every split was traced, by the child in reclaim, none by
	 * kthpscand: its decision with what the zero scan saw (subpage 0
	 * written, so it stops at the first zero subpage past the limit:
	 * max_zero + 1 zero of max_zero + 2 scanned, all mapped), and its
	 * result.
	 */
	nr = self->z.per;
	max_zero = nr * pct / 100;
	f = fopen(TRACE "trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (!ts_parse_event(line, &e) || strcmp(e.decision, "split_underused"))
			continue;
		EXPECT_NE(self->kpid, e.pid) TH_LOG("kthpscand split: %s", line);
		EXPECT_EQ(pid, e.pid) TH_LOG("not the child: %s", line);
		if (e.split) {
			split_ok += !e.ret;
			continue;
		}
		EXPECT_EQ(nr, 1U << e.order);
		EXPECT_EQ(max_zero + 1, e.zero);
		EXPECT_EQ(max_zero + 2, e.scanned);
		EXPECT_EQ(nr, e.mapped);
		decisions++;
	}
	fclose(f);
	EXPECT_EQ(splits, split_ok);
	EXPECT_GE(decisions, splits);
}

THP_SCAN_HARNESS_MAIN
