// SPDX-License-Identifier: GPL-2.0
/*
 * Sparse THPs under memcg pressure, without swap: in a memcg limited to
 * 80 MiB, a task writes one byte into each of 32 PMD THPs (64 MiB
 * charged), then writes 32 MiB of base pages. Reclaim can free nothing
 * but the zero-filled subpages of the THPs. In stock 6.12 this ends in an
 * OOM kill (max_ptes_none=511 judges nothing underused); with thp_scan the
 * deferred split shrinker splits them as underused, the task lives, and
 * every byte reads back.
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

#define THP_SCAN "/sys/kernel/mm/transparent_hugepage/thp_scan/"
#define CG "/sys/fs/cgroup/"
#define CG_T CG "thp_scan_underused/"
#define TRACE "/sys/kernel/tracing/"
#define NR_THP 32
#define DENSE (32UL << 20)

FIXTURE(underused) {
	char saved_enabled[8];
};

FIXTURE_SETUP(underused)
{
	struct thp_settings s;
	int fd;
	ssize_t n;

	if (access(THP_SCAN "underused_zero_pct", F_OK))
		SKIP(return, "kernel without thp_scan");
	if (access(CG "cgroup.procs", F_OK))
		SKIP(return, "no cgroup2 at " CG);
	fd = open(THP_SCAN "enabled", O_RDONLY);
	ASSERT_GE(fd, 0);
	n = read(fd, self->saved_enabled, sizeof(self->saved_enabled) - 1);
	close(fd);
	ASSERT_GT(n, 0);
	self->saved_enabled[n] = '\0';
	ASSERT_EQ(0, put(THP_SCAN "enabled", "1"));

	thp_save_settings();
	thp_read_settings(&s);
	s.thp_enabled = THP_ALWAYS;
	s.hugepages[__builtin_ctzl(read_pmd_pagesize() / getpagesize())].enabled = THP_INHERIT;
	thp_push_settings(&s);

	ASSERT_EQ(0, put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_T, 0755) || errno == EEXIST);
	ASSERT_EQ(0, put(CG_T "memory.max", "80M"));
	ASSERT_EQ(0, put(TRACE "events/thp_scan/enable", "1"));
	ASSERT_EQ(0, clear_trace());
}

FIXTURE_TEARDOWN(underused)
{
	if (access(THP_SCAN "underused_zero_pct", F_OK) || access(CG "cgroup.procs", F_OK))
		return;
	rmdir(CG_T);
	put(TRACE "events/thp_scan/enable", "0");
	put(THP_SCAN "enabled", self->saved_enabled);
	thp_restore_settings();
}

TEST_F_TIMEOUT(underused, sparse_thps_in_small_memcg, 300)
{
	size_t pmd = read_pmd_pagesize();
	long splits_before = keyed("/proc/vmstat", "thp_underused_split_page");
	long splits, decisions = 0, split_ok = 0;
	unsigned int nr, max_zero, pct;
	char line[512];
	int status;
	FILE *f;
	pid_t pid;

	ASSERT_GE(splits_before, 0);
	f = fopen(THP_SCAN "underused_zero_pct", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%u", &pct));
	fclose(f);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		size_t len = NR_THP * pmd, i;
		char buf[16], *raw, *p, *dense;

		snprintf(buf, sizeof(buf), "%d", getpid());
		if (put(CG_T "cgroup.procs", buf))
			_exit(2);
		raw = mmap(NULL, len + pmd, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (raw == MAP_FAILED)
			_exit(3);
		p = (char *)(((uintptr_t)raw + pmd - 1) & ~(pmd - 1));
		for (i = 0; i < NR_THP; i++)
			p[i * pmd + i] = (char)(i + 1);
		if (!check_huge_anon(p, NR_THP, pmd))
			_exit(6);
		dense = mmap(NULL, DENSE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (dense == MAP_FAILED || madvise(dense, DENSE, MADV_NOHUGEPAGE))
			_exit(7);
		memset(dense, 0xa5, DENSE);
		for (i = 0; i < DENSE; i++)
			if (dense[i] != (char)0xa5)
				_exit(8);
		for (i = 0; i < NR_THP; i++)
			if (p[i * pmd + i] != (char)(i + 1))
				_exit(4);
		/* Every other byte of each range is still zero. */
		for (i = 0; i < NR_THP; i++)
			if (p[i * pmd + pmd - 1] || p[i * pmd + (i + 1) % pmd])
				_exit(5);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("child killed by signal %d",
					      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	if (WIFEXITED(status))
		EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, keyed(CG_T "memory.events", "oom_kill"));
	/* 96 MiB in 80 MiB: at least 8 THPs had to be split. */
	splits = keyed("/proc/vmstat", "thp_underused_split_page") - splits_before;
	EXPECT_GE(splits, 8);

	/*
	 * Every split was traced: its decision with what the zero scan saw
	 * (subpage 0 written, so it stops at the first zero subpage past
	 * the limit: max_zero + 1 zero of max_zero + 2 scanned, all mapped),
	 * and its result.
	 */
	nr = pmd / getpagesize();
	max_zero = nr * pct / 100;
	f = fopen(TRACE "trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		unsigned int order, zero, scanned, mapped;
		char *ev = strstr(line, "thp_scan_decision: ");
		int n;

		if (ev && strstr(ev, "decision=split_underused")) {
			n = sscanf(strstr(ev, "order="),
				   "order=%u zero=%u scanned=%u mapped=%u",
				   &order, &zero, &scanned, &mapped);
			ASSERT_EQ(4, n);
			EXPECT_EQ(nr, 1U << order);
			EXPECT_EQ(max_zero + 1, zero);
			EXPECT_EQ(max_zero + 2, scanned);
			EXPECT_EQ(nr, mapped);
			decisions++;
		}
		ev = strstr(line, "thp_scan_split: ");
		if (ev && strstr(ev, "decision=split_underused ret=0"))
			split_ok++;
	}
	fclose(f);
	EXPECT_EQ(splits, split_ok);
	EXPECT_GE(decisions, splits);
}

TEST_HARNESS_MAIN
