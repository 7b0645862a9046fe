// SPDX-License-Identifier: GPL-2.0
/*
 * thp_scan's figures per memory cgroup, in memory.stat: the splits of
 * THPs as underused and as partially mapped, and the memory they freed
 * (thp_split_freed, in bytes), move for the memcg whose THPs kthpscand
 * split and for its ancestors, and not for a sibling whose THPs were
 * judged and kept; a parent's figures are the sum of its children's;
 * and those of a memcg removed before anything read them reach its
 * parent.  The splits at swap-out, the collapses skipped for the
 * collapse limit and the faults "auto" served under pressure are checked
 * per memcg by thp_scan_swapout, thp_scan_collapse and thp_policy_memcg,
 * where those happen.  The tests flush memory.stat before they read it
 * (ts_flush_memcg_stats()), and poll for what kthpscand counts just
 * after the trace event of its split.
 */
#include <errno.h>
#include <signal.h>
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

#define CG_P	CG "thp_scan_memcg/"
#define CG_A	CG_P "a/"
#define CG_B	CG_P "b/"
#define CG_GONE	CG_P "gone/"

/* Sparse, half-mapped and dense (the sibling's) PMD THPs. */
#define NR_SPARSE	8
#define NR_HALF		4
#define NR_DENSE	4

/* The memory.stat figures of thp_scan, in this order. */
static const char * const figures[] = {
	"thp_split_scan_underused",
	"thp_split_scan_partial",
	"thp_split_scan_zero_runs",
	"thp_split_scan_swapout",
	"thp_split_freed",
};

#define NR_FIGURES	ARRAY_SIZE(figures)

/* The figures of the memcg at @cg into @v; false if one is missing. */
static bool read_figures(const char *cg, long v[NR_FIGURES])
{
	char path[128];
	size_t i;

	snprintf(path, sizeof(path), "%smemory.stat", cg);
	for (i = 0; i < NR_FIGURES; i++) {
		v[i] = ts_keyed(path, figures[i]);
		if (v[i] < 0)
			return false;
	}
	return true;
}

/* Do the figures of @cg (in P) read @want, P's flushed first? */
static bool figures_are(const char *cg, const long want[NR_FIGURES])
{
	long v[NR_FIGURES];

	return !ts_flush_memcg_stats(CG_P) && read_figures(cg, v) &&
	       !memcmp(v, want, sizeof(v));
}

/* Log the figures of @cg against @want. */
static void log_figures(struct __test_metadata *_metadata, const char *cg,
			const long want[NR_FIGURES])
{
	long v[NR_FIGURES];
	size_t i;

	if (!read_figures(cg, v)) {
		TH_LOG("%s: a figure is missing from memory.stat", cg);
		return;
	}
	for (i = 0; i < NR_FIGURES; i++)
		if (v[i] != want[i])
			TH_LOG("%s: %s %ld, expected %ld", cg, figures[i], v[i], want[i]);
}

/* Move this process into the cgroup at @cg. */
static int join(const char *cg)
{
	char path[128], pid[16];

	snprintf(path, sizeof(path), "%scgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return ts_put(path, pid);
}

FIXTURE(memcg) {
	struct thp_sizes z;
	int kpid;
	pid_t child;
	int go;
};

FIXTURE_SETUP(memcg)
{
	self->child = 0;
	self->go = -1;
	thp_scan_setup(_metadata, &self->z, NULL);
	self->kpid = kthpscand_pid();
	ASSERT_GT(self->kpid, 0);
	ASSERT_EQ(0, ts_put(CG "cgroup.subtree_control", "+memory"));
	/* New memcgs: their figures start at 0. */
	rmdir(CG_A);
	rmdir(CG_B);
	rmdir(CG_GONE);
	rmdir(CG_P);
	ASSERT_EQ(0, mkdir(CG_P, 0755));
	ASSERT_EQ(0, ts_put(CG_P "cgroup.subtree_control", "+memory"));
	ASSERT_EQ(0, mkdir(CG_A, 0755));
	ASSERT_EQ(0, mkdir(CG_B, 0755));
	ASSERT_EQ(0, mkdir(CG_GONE, 0755));
}

FIXTURE_TEARDOWN(memcg)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->go >= 0)
		close(self->go);
	thp_scan_teardown();
	rmdir(CG_A);
	rmdir(CG_B);
	rmdir(CG_GONE);
	rmdir(CG_P);
}

/*
 * A child in B with NR_DENSE dense PMD THPs: it sends their head pfns on
 * @ready, waits for go (or its pipe closed), checks every byte and exits
 * with 0 if each was right and each THP still whole.
 */
static pid_t start_sibling(const struct thp_sizes *z, int ready[2], int go[2])
{
	unsigned long heads[NR_DENSE];
	pid_t pid = fork();
	char *p, b;
	size_t i;

	if (pid)
		return pid;
	close(ready[0]);
	close(go[1]);
	if (join(CG_B))
		_exit(10);
	p = ts_map_aligned(NR_DENSE * z->pmd, z->pmd);
	if (!p)
		_exit(11);
	for (i = 0; i < NR_DENSE * z->per; i++)
		ts_fill_page(p, i, z->psz);
	if (!check_huge_anon(p, NR_DENSE, z->pmd) ||
	    ts_head_pfns(p, NR_DENSE, z->per, z->psz, heads))
		_exit(12);
	if (write(ready[1], heads, sizeof(heads)) != sizeof(heads))
		_exit(13);
	if (read(go[0], &b, 1) < 0)
		_exit(14);
	if (ts_check_pages(p, NR_DENSE * z->per, z->psz, ts_every_page, NULL) != -1)
		_exit(1);
	_exit(ts_count_thps(p, NR_DENSE, z->pmd) == NR_DENSE ? 0 : 2);
}

/*
 * In A, NR_SPARSE THPs with one page of data each and NR_HALF THPs with
 * their second half unmapped; in B, NR_DENSE dense THPs.  kthpscand
 * splits A's, as underused and as partially mapped, and keeps B's; A's
 * figures count those splits and the memory they freed to the page: the
 * zero-filled subpages of the sparse ones, the unmapped halves of the
 * others.  B's stay at 0, and P's are A's and B's together.  Every byte
 * reads back, and B's THPs are whole.
 */
TEST_F_TIMEOUT(memcg, split_figures_per_memcg, 300)
{
	const size_t per = self->z.per, psz = self->z.psz;
	const long freed = (long)(NR_SPARSE * (per - 1) + NR_HALF * per / 2) * (long)psz;
	const long want_a[NR_FIGURES] = { NR_SPARSE, NR_HALF, 0, 0, freed };
	const long zero[NR_FIGURES] = { 0 };
	unsigned long sparse[NR_SPARSE], half[NR_HALF], dense[NR_DENSE];
	struct ev_filter under = { true, "split_underused", sparse, NR_SPARSE, self->kpid, true };
	struct ev_filter part = { true, "split_partially_mapped", half, NR_HALF,
				  self->kpid, true };
	struct ev_filter kept = { false, "keep_used", dense, NR_DENSE, self->kpid, false };
	int ready[2], go[2], status;
	long secs, bad;
	char *s, *h;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	self->child = start_sibling(&self->z, ready, go);
	ASSERT_GE(self->child, 0);
	close(ready[1]);
	close(go[0]);
	self->go = go[1];
	if (read(ready[0], dense, sizeof(dense)) != sizeof(dense)) {
		ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
		self->child = 0;
		ASSERT_TRUE(false) TH_LOG("the sibling exited with %d", WEXITSTATUS(status));
	}
	close(ready[0]);

	ASSERT_EQ(0, join(CG_A));
	s = ts_sparse_thps(&self->z, NR_SPARSE);
	ASSERT_NE(NULL, s);
	ASSERT_TRUE(check_huge_anon(s, NR_SPARSE, self->z.pmd));
	ASSERT_EQ(0, ts_head_pfns(s, NR_SPARSE, per, psz, sparse));
	h = ts_half_mapped_thps(&self->z, NR_HALF);
	ASSERT_NE(NULL, h);
	ASSERT_EQ(0, ts_head_pfns(h, NR_HALF, per, psz, half));

	/* Each judged once it is due: a few rounds after the minimum age. */
	secs = kthpscand_deadline(-1, 4);
	EXPECT_TRUE(POLL(ts_pfns_seen(&under) == NR_SPARSE &&
			 ts_pfns_seen(&part) == NR_HALF &&
			 ts_pfns_seen(&kept) == NR_DENSE, secs))
		TH_LOG("after %ld s: %zu underused, %zu partial splits, %zu dense kept",
		       secs, ts_pfns_seen(&under), ts_pfns_seen(&part), ts_pfns_seen(&kept));

	/* Counted where the THPs were charged. */
	EXPECT_TRUE(POLL(figures_are(CG_A, want_a), 5))
		log_figures(_metadata, CG_A, want_a);
	EXPECT_TRUE(figures_are(CG_B, zero))
		log_figures(_metadata, CG_B, zero);
	EXPECT_TRUE(figures_are(CG_P, want_a))
		log_figures(_metadata, CG_P, want_a);
	EXPECT_TRUE(figures_are(CG_GONE, zero))
		log_figures(_metadata, CG_GONE, zero);

	bad = ts_check_pages(s, NR_SPARSE * per, psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("sparse page %ld differs", bad);
	ts_unmap_halves(h, &self->z, NR_HALF);
	munmap(s, NR_SPARSE * self->z.pmd);

	ASSERT_EQ(1, write(self->go, "", 1));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the sibling's check (1: data, 2: split)");
}

/*
 * THPs split in a memcg that is removed before its figures were read:
 * they reach its parent, as the other events of memory.stat do.
 */
TEST_F_TIMEOUT(memcg, removed_memcg_reaches_parent, 300)
{
	const size_t per = self->z.per, psz = self->z.psz;
	const long want[NR_FIGURES] = {
		NR_SPARSE, 0, 0, 0, (long)(NR_SPARSE * (per - 1) * psz)
	};
	unsigned long sparse[NR_SPARSE];
	struct ev_filter under = { true, "split_underused", sparse, NR_SPARSE, self->kpid, true };
	long secs, bad;
	char *s;

	ASSERT_EQ(0, join(CG_GONE));
	s = ts_sparse_thps(&self->z, NR_SPARSE);
	ASSERT_NE(NULL, s);
	ASSERT_TRUE(check_huge_anon(s, NR_SPARSE, self->z.pmd));
	ASSERT_EQ(0, ts_head_pfns(s, NR_SPARSE, per, psz, sparse));
	secs = kthpscand_deadline(-1, 2);
	EXPECT_TRUE(POLL(ts_pfns_seen(&under) == NR_SPARSE, secs))
		TH_LOG("%zu of %d split after %ld s", ts_pfns_seen(&under), NR_SPARSE, secs);
	bad = ts_check_pages(s, NR_SPARSE * per, psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(s, NR_SPARSE * self->z.pmd);

	/* Out of it and removed, its memory freed first. */
	ASSERT_EQ(0, join(CG));
	ASSERT_TRUE(POLL(!rmdir(CG_GONE) || errno != EBUSY, 5));
	ASSERT_NE(0, access(CG_GONE, F_OK));
	EXPECT_TRUE(POLL(figures_are(CG_P, want), 5))
		log_figures(_metadata, CG_P, want);
}

int main(int argc, char **argv)
{
	thp_scan_main(argc, argv);
}
