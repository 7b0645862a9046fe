// SPDX-License-Identifier: GPL-2.0
/*
 * kthpscand is fair and does not sleep on due work, counted in rounds
 * and in the trace's decisions on the test's own THPs (by pfn):
 *
 * - a memcg created after one full of dense THPs, which would use every
 *   round, still gets its sparse THPs split within a few rounds: a round
 *   resumes where the last one ran out of budget;
 * - sparse PMD THPs found beside a dense 64K mTHP are split round after
 *   round: a batch left unfinished makes the round busy,
 *   and the mTHP is judged and kept;
 * - a THP made partially mapped while kthpscand sleeps until a folio is
 *   due in a minute wakes it, and is split within a third of that.
 *
 * Every byte of user data is checked.
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/mempolicy.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

#define CG_A "thp_scan_fair_a"
#define CG_B "thp_scan_fair_b"

/* A child that holds THPs in a memcg until told to check them. */
struct thp_child {
	pid_t pid;
	int go;		/* write a byte: check every byte, exit 0 if intact */
};

FIXTURE(fair) {
	struct thp_sizes z;
	int kpid;
	struct thp_child child[2];
};

FIXTURE_SETUP(fair)
{
	memset(self->child, 0, sizeof(self->child));
	thp_scan_setup(_metadata, &self->z, NULL);
	/*
	 * The THPs must be made at fault however fragmented memory is after
	 * the programs before (the debug kernel, on two nodes of 512 MiB,
	 * once fell back to base pages for the second memcg's four).
	 */
	ASSERT_EQ(0, ts_put(THP "defrag", "always"));
	self->kpid = kthpscand_pid();
	ASSERT_GT(self->kpid, 0);
}

FIXTURE_TEARDOWN(fair)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (self->child[i].pid > 0) {
			kill(self->child[i].pid, SIGKILL);
			waitpid(self->child[i].pid, NULL, 0);
			close(self->child[i].go);
		}
	}
	thp_scan_teardown();
}

/* @nr PMD THPs with every page written; NULL if they cannot be mapped. */
static char *dense_thps(const struct thp_sizes *z, size_t nr)
{
	char *p = ts_map_aligned(nr * z->pmd, z->pmd);
	size_t i;

	for (i = 0; p && i < nr * z->per; i++)
		ts_fill_page(p, i, z->psz);
	return p;
}

#define MAX_CHILD_THPS	32

/*
 * Start a child in memcg @cg (created here) holding @nr PMD THPs, sparse
 * (ts_sparse_thps()) or dense; returns once they are made, 0 or -1, with
 * their head pfns in @heads: the child reads them from the pfn of a page
 * it wrote (page 7 of a sparse THP, page 0 of a dense one), which keeps
 * its pfn when the THP is split, so even a THP split before the child
 * looked is named right.
 */
static int start_child(const struct thp_sizes *z, const char *cg, size_t nr,
		       bool sparse, struct thp_child *c, unsigned long *heads)
{
	size_t len = nr * sizeof(*heads);
	int ready[2], go[2];
	char path[128], pid[16], b = 1;

	if (nr > MAX_CHILD_THPS)
		return -1;
	snprintf(path, sizeof(path), CG "%s", cg);
	if ((mkdir(path, 0755) && errno != EEXIST) || pipe(ready) || pipe(go))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (!c->pid) {
		unsigned long pfns[MAX_CHILD_THPS];
		size_t per = z->per, pg = sparse ? 7 : 0, i;
		char *p;
		long bad;

		snprintf(path, sizeof(path), CG "%s/cgroup.procs", cg);
		snprintf(pid, sizeof(pid), "%d", getpid());
		if (ts_put(path, pid))
			_exit(2);
		p = sparse ? ts_sparse_thps(z, nr) : dense_thps(z, nr);
		/*
		 * With no minimum age, kthpscand on the other CPU may split
		 * sparse THPs before this check: the test counts their splits
		 * instead, which it cannot without THPs.
		 */
		if (!p || (!sparse && !check_huge_anon(p, nr, z->pmd)))
			_exit(3);
		for (i = 0; i < nr; i++) {
			if (ts_pagemap_pfns(p + (i * per + pg) * z->psz, 1, pfns + i) ||
			    !pfns[i])
				_exit(3);
			pfns[i] -= pg;
		}
		if (write(ready[1], pfns, len) != (ssize_t)len || read(go[0], &b, 1) != 1)
			_exit(4);
		bad = ts_check_pages(p, nr * per, z->psz,
				     sparse ? ts_one_per_folio : ts_every_page, (void *)&per);
		_exit(bad == -1 ? 0 : 5);
	}
	close(ready[1]);
	close(go[0]);
	c->go = go[1];
	if (read(ready[0], heads, len) != (ssize_t)len) {
		int status = 0;

		/* 2: cannot join the memcg, 3: no THPs, or no pfns. */
		if (waitpid(c->pid, &status, 0) == c->pid) {
			printf("# the child in %s exited with status %#x\n", cg, status);
			c->pid = 0;
		}
		close(ready[0]);
		return -1;
	}
	close(ready[0]);
	return 0;
}

/* kthpscand's looks decided @decision (any if NULL) at the @n folios @pfns. */
static long trace_looks(const char *decision, const unsigned long *pfns, size_t n)
{
	struct ev_filter f = { false, decision, pfns, n, kthpscand_pid() };

	return ts_events(&f);
}

/* kthpscand's splits that worked, decided @decision (any if NULL), of @pfns. */
static long trace_splits(const char *decision, const unsigned long *pfns, size_t n)
{
	struct ev_filter f = { true, decision, pfns, n, kthpscand_pid(), true };

	return ts_events(&f);
}

/* Tell @c to check its THPs; its exit status (0: every byte intact). */
static int check_child(struct thp_child *c)
{
	char b = 1;
	int status;

	if (write(c->go, &b, 1) != 1 || waitpid(c->pid, &status, 0) != c->pid)
		return -1;
	c->pid = 0;
	close(c->go);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * Memcg A, created first, holds 32 dense THPs; with no minimum age and a
 * round's budget of four dense THPs (53 units each: the folio and 52
 * subpages scanned), A alone would use every round, kept folios being
 * due again at once.  Memcg B, created after A, holds 4 sparse THPs: a
 * round resumes after the queue that spent the last one's budget, so B
 * gets a turn at least every other round, one THP a turn (a split costs
 * more than a round's budget).  Bound: 16 rounds for 4 THPs, from when
 * they are made (B's child ready).  The looks
 * and splits counted are the trace's, of the children's own THPs (their
 * head pfns).  Rounds are kthpscand's, one count for the whole guest:
 * nothing but the two children has a large folio here (PMD THPs only,
 * the test program alone in the guest), so every round is spent on them.
 */
TEST_F_TIMEOUT(fair, later_memcg_not_starved, 300)
{
	const long dense_cost = 1 + self->z.per - self->z.per * 90 / 100;
	unsigned long a[32], b[4];
	long rounds0;
	char buf[32];

	ASSERT_EQ(0, ts_put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_EQ(0, ts_put(THP_SCAN "scan_sleep_millisecs", "100"));
	snprintf(buf, sizeof(buf), "%ld", 4 * dense_cost);
	ASSERT_EQ(0, ts_put(THP_SCAN "pages_to_scan", buf));
	/*
	 * A's THPs are whole and written before kthpscand may look: with no
	 * minimum age it would, on the other CPU, find one half written,
	 * mostly zero, and split it.
	 */
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "600000"));
	ASSERT_EQ(0, start_child(&self->z, CG_A, 32, false, &self->child[0], a));
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "0"));
	/* A is scanned, round after round: one round's four looks at least. */
	ASSERT_TRUE(POLL(trace_looks("keep_used", a, 32) >= 4, 30));

	ASSERT_EQ(0, ts_clear_trace());
	ASSERT_EQ(0, start_child(&self->z, CG_B, 4, true, &self->child[1], b));
	/*
	 * The rounds from when B's THPs are there: those while B's child
	 * forked and faulted (a second or more on the debug kernel, at ten
	 * rounds a second) were spent on A alone, and once counted 19 of 16.
	 */
	rounds0 = ts_vm_counter(_metadata, "thp_split_scan_rounds");
	EXPECT_TRUE(POLL(trace_splits("split_underused", b, 4) >= 4 ||
			 ts_keyed("/proc/vmstat", "thp_split_scan_rounds") - rounds0 > 16,
			 60));
	EXPECT_EQ(4, trace_splits("split_underused", b, 4))
		TH_LOG("after %ld rounds",
		       ts_vm_counter(_metadata, "thp_split_scan_rounds") - rounds0);
	EXPECT_LE(ts_vm_counter(_metadata, "thp_split_scan_rounds") - rounds0, 16);
	/* A's THPs were judged all along (four a turn), and kept. */
	EXPECT_GE(trace_looks("keep_used", a, 32), 4);
	EXPECT_EQ(0, trace_splits(NULL, a, 32)) TH_LOG("A's THPs split");
	EXPECT_EQ(0, check_child(&self->child[1])) TH_LOG("B's data");
	EXPECT_EQ(0, check_child(&self->child[0])) TH_LOG("A's data");
}

/* Allocate on node @node only (MPOL_BIND), or as by default (@node < 0). */
static int bind_node(int node)
{
	unsigned long mask = 1UL << (node < 0 ? 0 : node);

	if (node < 0)
		return syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0);
	return syscall(SYS_set_mempolicy, MPOL_BIND, &mask, 8 * sizeof(mask));
}

/* The node of the page mapped at @p, or -1. */
static int page_node(void *p)
{
	int status = -1;

	if (syscall(SYS_move_pages, 0, 1UL, &p, NULL, &status, 0))
		return -1;
	return status;
}

/*
 * A dense 64K mTHP, then 12 sparse PMD THPs, all due together (made with
 * a minimum age of 10 min, lowered to 6 s once the last of them is 7 s
 * old: on the debug kernel making them took more than 3 s, and the mTHP
 * came due alone), a dense PMD THP made last on node 1, not due until
 * 6 s later, and a round's budget of about three sparse THPs (978 units each: the
 * folio, 462 subpages scanned, a walk of one PMD, the split of 512).
 * kthpscand collects the 13 in one batch and judges a batch from the
 * largest order down: the PMD THPs first.  A batch is one lruvec's (memcg
 * and node), so all are made on node 0: made by a task that the guest
 * moved to the other node's CPU half way, they would be two batches, and
 * the mTHP's could come before the other node's PMD THPs (made so on
 * purpose, the mTHP on node 1, the test fails).  A round that runs out
 * of budget with its batch unfinished is busy: the next comes
 * scan_sleep_millisecs (100 ms) later, and takes the batch up where it
 * was.  Were it not busy, kthpscand would sleep until the next folio it
 * knows of comes due: the young dense THP, 6 s after it was made, once
 * a round has walked node 1's lruvec before it ran out of budget on node
 * 0's (rounds take the lruvecs in turn; on node 0 the young THP, the
 * newest, would come after the batch and never be seen first).  Made so
 * on purpose, thp_scan_round() saying "not busy" whatever is left, the
 * test fails.  So no two splits of the 12 are half a minimum age (3 s)
 * apart.  The splits and the looks are the trace's, of the test's own
 * folios (their pfns).  The mTHP, in the same batch, comes after them
 * (not checked: see below), and is kept.  Kept, it is due again 6 s
 * later: on a slow kernel the test may read the trace after that, so a
 * second look counts only if it came sooner than the minimum age after
 * the first (the busy rounds judging their batch again).
 */
TEST_F_TIMEOUT(fair, batch_left_is_busy, 180)
{
	const unsigned long mkb = 64;
	const size_t nr = 12, mper = mkb * 1024 / self->z.psz;
	const int morder = __builtin_ctzl(mper);
	long bad, j, n, last_split = -1, judged = -1;
	struct thp_scan_event *ev;
	struct trace_count c;
	char path[128], *m, *p, *young;
	size_t i, per = self->z.per, nsplit = 0;
	unsigned long mpfn, heads[12];
	double t0 = ts_mono_s(), t_made, t_due, t_split, judged_ts = 0, split_ts = 0;

	ASSERT_EQ(mper * self->z.psz, mkb * 1024);
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "600000"));
	ASSERT_EQ(0, ts_put(THP_SCAN "scan_sleep_millisecs", "100"));
	ASSERT_EQ(0, ts_put(THP_SCAN "pages_to_scan", "3000"));
	ASSERT_EQ(0, ts_clear_trace());
	ASSERT_EQ(0, bind_node(0));
	snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled", mkb);
	ASSERT_EQ(0, ts_put(path, "always"));
	m = ts_map_aligned(mkb * 1024, mkb * 1024);
	ASSERT_NE(NULL, m);
	for (i = 0; i < mper; i++)
		ts_fill_page(m, i, self->z.psz);
	ASSERT_EQ(1, ts_count_thps(m, 1, mkb * 1024));
	ASSERT_EQ(0, ts_put(path, "never"));
	ASSERT_EQ(0, ts_pagemap_pfns(m, 1, &mpfn));
	p = ts_sparse_thps(&self->z, nr);
	ASSERT_EQ(0, bind_node(-1));
	ASSERT_NE(NULL, p);
	ASSERT_TRUE(check_huge_anon(p, nr, self->z.pmd));
	ASSERT_EQ(nr, ARRAY_SIZE(heads));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->z.psz, heads));
	ASSERT_EQ(0, page_node(m));
	for (i = 0; i < nr; i++)
		ASSERT_EQ(0, page_node(p + i * self->z.pmd)) TH_LOG("PMD THP %zu", i);
	t_made = ts_mono_s();
	/*
	 * All due at once: the last one 7 s old, then the age lowered to
	 * 6 s; the young one made just before.
	 */
	sleep(7);
	ASSERT_EQ(0, bind_node(1));
	young = dense_thps(&self->z, 1);
	ASSERT_EQ(0, bind_node(-1));
	ASSERT_NE(NULL, young);
	ASSERT_TRUE(check_huge_anon(young, 1, self->z.pmd));
	ASSERT_EQ(1, page_node(young));
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "6000"));
	t_due = ts_mono_s();

	EXPECT_TRUE(POLL((ts_count_trace_pfns(self->z.order_pmd, "split_underused", self->kpid,
					      heads, nr, &c), c.splits >= (long)nr), 90));
	t_split = ts_mono_s();
	EXPECT_TRUE(POLL((ts_count_trace_pfns(morder, "keep_used", self->kpid, &mpfn, 1, &c),
			  c.decisions >= 1), 30));
	TH_LOG("THPs made in %.1f s, split %.1f s after due, the mTHP judged %.1f s after",
	       t_made - t0, t_split - t_due, ts_mono_s() - t_split);
	/* The mTHP: judged, kept, and not again sooner than min_age. */
	n = thp_scan_events(&ev);
	for (j = 0; j < n; j++) {
		if (ev[j].pid != self->kpid)
			continue;
		if (ev[j].split && ts_pfn_in(ev[j].pfn, heads, nr)) {
			EXPECT_EQ(0, ev[j].ret);
			/* Busy rounds: never half a minimum age between two. */
			if (nsplit)
				EXPECT_LT(ev[j].ts - split_ts, 3.0)
					TH_LOG("PMD THP split %zu came %.3f s after the one before",
					       nsplit, ev[j].ts - split_ts);
			split_ts = ev[j].ts;
			nsplit++;
			last_split = j;
		}
		if (!ev[j].split && ev[j].pfn == mpfn) {
			/* A jiffy's slack: the kept stamp is in jiffies. */
			if (judged != -1)
				EXPECT_GE(ev[j].ts - judged_ts, 5.9)
					TH_LOG("the mTHP judged again %.3f s after",
					       ev[j].ts - judged_ts);
			EXPECT_STREQ("keep_used", ev[j].decision);
			if (judged == -1)
				judged = j;
			judged_ts = ev[j].ts;
		}
	}
	free(ev);
	EXPECT_EQ(nr, nsplit);
	EXPECT_NE(-1, judged);
	/*
	 * Only within one batch does the largest order come first, and the
	 * test cannot make the 13 folios one batch: on the debug kernel the
	 * walk took the mTHP with 4 of the PMD THPs once, though all were
	 * on node 0 (a batch also ends at the walk's limits and where the
	 * LRU lists do).  Logged, not checked.
	 */
	if (judged < last_split)
		TH_LOG("the mTHP judged at event %ld, the last PMD THP split at %ld",
		       judged, last_split);
	EXPECT_EQ(1, ts_count_thps(m, 1, mkb * 1024));
	bad = ts_check_pages(p, nr * per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("sparse page %ld differs", bad);
	bad = ts_check_pages(m, mper, self->z.psz, ts_every_page, NULL);
	EXPECT_EQ(-1, bad) TH_LOG("mTHP page %ld differs", bad);
	munmap(young, self->z.pmd);
	munmap(p, nr * self->z.pmd);
	munmap(m, mkb * 1024);
}

/*
 * A minimum age of a minute and a dense THP queued: kthpscand sleeps
 * until that THP is due.  Half of another THP given back with
 * MADV_DONTNEED flags it partially mapped, which wakes kthpscand: the
 * THP is split within a third of the minimum age (in a round or three:
 * the one the wake-up starts, then one each scan_sleep_millisecs, 1 s),
 * long before the dense one is due (never judged here).  Without the
 * wake-up kthpscand would sleep on until then.  The splits and looks
 * are the trace's, of the test's two THPs (their head pfns).
 */
TEST_F_TIMEOUT(fair, partial_ends_timed_sleep, 300)
{
	unsigned long head, dense_head;
	size_t per = self->z.per;
	char *dense, *p;
	bool split;
	double t0;
	long bad;

	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "60000"));
	ASSERT_EQ(0, ts_put(THP_SCAN "scan_sleep_millisecs", "1000"));
	dense = dense_thps(&self->z, 1);
	ASSERT_NE(NULL, dense);
	p = dense_thps(&self->z, 1);
	ASSERT_NE(NULL, p);
	ASSERT_TRUE(check_huge_anon(p, 1, self->z.pmd));
	ASSERT_TRUE(check_huge_anon(dense, 1, self->z.pmd));
	ASSERT_EQ(0, ts_head_pfns(p, 1, per, self->z.psz, &head));
	ASSERT_EQ(0, ts_head_pfns(dense, 1, per, self->z.psz, &dense_head));
	wait_kthpscand_idle(_metadata, self->kpid);
	EXPECT_EQ('S', ts_task_state(self->kpid));

	t0 = ts_mono_s();
	ASSERT_EQ(0, madvise(p + self->z.pmd / 2, self->z.pmd / 2, MADV_DONTNEED));
	split = POLL(trace_splits(NULL, &head, 1) >= 1, 20);
	EXPECT_TRUE(split) TH_LOG("not split %.1f s after the unmap", ts_mono_s() - t0);
	if (split)
		ksft_print_msg("split within %.1f s of the unmap\n", ts_mono_s() - t0);
	/* Half mapped: the mapped half stays huge, a 1M THP (4K pages). */
	EXPECT_EQ(1, trace_splits("split_partially_mapped", &head, 1));
	EXPECT_EQ(0, trace_looks(NULL, &dense_head, 1) +
		     trace_splits(NULL, &dense_head, 1))
		TH_LOG("the dense THP, not due, was judged");
	bad = ts_check_pages(p, per, self->z.psz, ts_first_half, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	bad = ts_check_pages(dense, per, self->z.psz, ts_every_page, NULL);
	EXPECT_EQ(-1, bad) TH_LOG("dense page %ld differs", bad);
	munmap(p, self->z.pmd);
	munmap(dense, self->z.pmd);
}

THP_SCAN_HARNESS_MAIN
