// SPDX-License-Identifier: GPL-2.0
/*
 * Known THP hazards, with queued THPs that kthpscand then looks at:
 *
 * - A subpage of a queued sparse THP poisoned (MADV_HWPOISON, memory
 *   failure): kthpscand splits the other THPs and never touches the
 *   poisoned page; the process gets SIGBUS there and its data everywhere
 *   else.
 * - The memcg of queued sparse THPs removed after its task left it (the
 *   THPs stay charged to the dying memcg, on its queue): kthpscand still
 *   finds and splits them, and the data is intact.
 *
 * The console checks of the boot (no KASAN, lockdep, WARNING, BUG, "Bad
 * page") apply as always.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
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

#define CG_H		CG "thp_hazards/"
#define NR_THPS		8
/* The poisoned subpage of THP 0: a zero-filled one (page 7 holds data). */
#define POISONED	100
#define WAIT_SECS	60

FIXTURE(hazards) {
	struct thp_sizes z;
	pid_t child;
};

FIXTURE_SETUP(hazards)
{
	self->child = 0;
	thp_scan_setup(_metadata, &self->z, NULL);
	/* Nothing is looked at before the test says so. */
	ASSERT_EQ(0, put(THP_SCAN "min_age_millisecs", "86400000"));
}

FIXTURE_TEARDOWN(hazards)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	thp_scan_teardown();
}

static sigjmp_buf sigbus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(sigbus_jmp, 1);
}

/* Page 7 of every THP holds data, every other page is zero; -1 skips one. */
static int sparse_except_poisoned(size_t pg, void *arg)
{
	const size_t *per = arg;

	if (pg == POISONED)
		return -1;
	return pg % *per == 7;
}

static int sparse_pages(size_t pg, void *arg)
{
	const size_t *per = arg;

	return pg % *per == 7;
}

TEST_F_TIMEOUT(hazards, hwpoison_subpage_of_queued_thp, 120)
{
	size_t per = self->z.per;
	long split0, bad;
	struct sigaction sa = { .sa_handler = on_sigbus };
	char c = 0;
	char *p;
	int got_sigbus;

	ASSERT_EQ(0, access("/proc/sys/vm/memory_failure_recovery", F_OK))
		TH_LOG("no CONFIG_MEMORY_FAILURE");
	p = sparse_thps(&self->z, NR_THPS);
	ASSERT_NE(NULL, p);
	ASSERT_TRUE(check_huge_anon(p, NR_THPS, self->z.pmd));
	split0 = must_stat(_metadata, self->z.pmd_kb, "thp_scan_split_underused");

	/*
	 * Memory failure takes the page away, splitting THP 0 if it can; the
	 * page was dirty, so the process gets SIGBUS at once, as it would
	 * from a machine check on that page.
	 */
	ASSERT_EQ(0, sigaction(SIGBUS, &sa, NULL));
	got_sigbus = sigsetjmp(sigbus_jmp, 1);
	if (!got_sigbus)
		ASSERT_EQ(0, madvise(p + POISONED * self->z.psz, self->z.psz,
				     MADV_HWPOISON))
			TH_LOG("MADV_HWPOISON: %s", strerror(errno));
	signal(SIGBUS, SIG_DFL);
	TH_LOG("MADV_HWPOISON: %s", got_sigbus ? "SIGBUS" : "no signal");

	ASSERT_EQ(0, put(THP_SCAN "min_age_millisecs", "0"));
	EXPECT_TRUE(POLL(size_stat(self->z.pmd_kb, "thp_scan_split_underused") -
			 split0 >= NR_THPS - 1, WAIT_SECS));
	TH_LOG("%ld sparse THPs split, %ld whole THPs left",
	       size_stat(self->z.pmd_kb, "thp_scan_split_underused") - split0,
	       count_thps(p, NR_THPS, self->z.pmd));
	/* None of the seven that were not poisoned is left whole. */
	EXPECT_EQ(0, count_thps(p + self->z.pmd, NR_THPS - 1, self->z.pmd));

	/* Every byte but the poisoned page's reads as written. */
	bad = check_pages(p, NR_THPS * per, self->z.psz, sparse_except_poisoned, &per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);

	/* The poisoned page itself: SIGBUS, not its old data, not a crash. */
	ASSERT_EQ(0, sigaction(SIGBUS, &sa, NULL));
	got_sigbus = sigsetjmp(sigbus_jmp, 1);
	if (!got_sigbus)
		c = __atomic_load_n(p + POISONED * self->z.psz, __ATOMIC_RELAXED);
	signal(SIGBUS, SIG_DFL);
	EXPECT_TRUE(got_sigbus) TH_LOG("read %d from the poisoned page", c);
	munmap(p, NR_THPS * self->z.pmd);
}

TEST_F_TIMEOUT(hazards, memcg_removed_with_queued_thps, 120)
{
	size_t per = self->z.per;
	int ready[2], go[2], status;
	long split0;
	char c = 0;

	ASSERT_EQ(0, put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_H, 0755) || errno == EEXIST);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	split0 = must_stat(_metadata, self->z.pmd_kb, "thp_scan_split_underused");
	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (!self->child) {
		char pid[16], *p;
		long bad;

		snprintf(pid, sizeof(pid), "%d", getpid());
		if (put(CG_H "cgroup.procs", pid))
			_exit(2);
		p = sparse_thps(&self->z, NR_THPS);
		if (!p || !check_huge_anon(p, NR_THPS, self->z.pmd))
			_exit(3);
		/* Leave the memcg: the THPs stay charged to it. */
		if (put(CG "cgroup.procs", pid))
			_exit(4);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(5);
		bad = check_pages(p, NR_THPS * per, self->z.psz, sparse_pages, &per);
		if (bad != -1) {
			printf("# page %ld differs\n", bad);
			_exit(6);
		}
		_exit(count_thps(p, NR_THPS, self->z.pmd) ? 7 : 0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* Removed with its charges: the memcg is offline, its queue stays. */
	ASSERT_EQ(0, rmdir(CG_H)) TH_LOG("rmdir: %s", strerror(errno));
	ASSERT_EQ(0, put(THP_SCAN "min_age_millisecs", "0"));
	EXPECT_TRUE(POLL(size_stat(self->z.pmd_kb, "thp_scan_split_underused") -
			 split0 >= NR_THPS, WAIT_SECS));
	TH_LOG("%ld of %d split; scanned %ld, queued %ld, rounds %ld",
	       size_stat(self->z.pmd_kb, "thp_scan_split_underused") - split0, NR_THPS,
	       size_stat(self->z.pmd_kb, "thp_scan_scanned"),
	       size_stat(self->z.pmd_kb, "thp_scan_queued"),
	       keyed("/proc/vmstat", "thp_scan_rounds"));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the child: status %#x (6: bad data, 7: THPs left)", status);
}

THP_SCAN_HARNESS_MAIN
