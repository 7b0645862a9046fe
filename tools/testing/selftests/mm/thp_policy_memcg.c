// SPDX-License-Identifier: GPL-2.0
/*
 * The "auto" THP policy per memory cgroup, with the machine plentiful: a
 * memcg filled to within its headroom of memory.max gets no THP at fault
 * without MADV_HUGEPAGE, in a child memcg too (the state of an ancestor),
 * while a neighbour memcg gets THPs; freed, it gets THPs again; each
 * change is traced with the memcg it concerns.  A limit lowered under
 * charged memory puts a memcg under pressure too, and a memcg made under
 * one under pressure starts so.  khugepaged follows the
 * state of the memcg of the mm it scans.  The faults served under
 * pressure are counted in the memcg's memory.stat.  The memcg thresholds
 * refuse bad values.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

/* A (memory.max A_MAX) holds work, where this process faults, and fill. */
#define CG_A	CG "thp_auto_a/"
#define CG_AW	CG_A "work/"
#define CG_AF	CG_A "fill/"
#define CG_AN	CG_A "new/"
#define CG_B	CG "thp_auto_b/"
#define A_MAX	(128UL << 20)
/* Leaves 10 MiB of A_MAX, 7.8 %: under the default 10 % of headroom. */
#define FILL	(118UL << 20)

/* Move this process into the cgroup at @cg. */
static int join(const char *cg)
{
	char path[256], pid[16];

	snprintf(path, sizeof(path), "%scgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return ts_put(path, pid);
}

/* The child that fills A, and the pipes it is driven by. */
struct filler {
	pid_t pid;
	int ready[2], go[2];
};

FIXTURE(memcg) {
	size_t pmd;
	struct filler f;
	unsigned long long a, aw, af, b;	/* cgroup inode numbers */
};

FIXTURE_SETUP(memcg)
{
	struct thp_settings s;
	int i;

	memset(&self->f, -1, sizeof(self->f));
	self->f.pid = 0;
	thp_scan_reset();
	if (access(AUTO "memcg_pressure_available_pct", F_OK))
		SKIP(return, "kernel without the per-memcg auto THP policy");
	self->pmd = read_pmd_pagesize();
	ASSERT_NE(0, self->pmd);
	thp_read_settings(&s);
	s.thp_enabled = THP_AUTO;
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = THP_NEVER;
	s.hugepages[__builtin_ctzl(self->pmd / getpagesize())].enabled = THP_INHERIT;
	/* No collapse behind the fault tests' back. */
	s.khugepaged.max_ptes_none = 0;
	thp_write_settings(&s);
	/* The system plentiful whatever memory looks like, sampled every 100 ms. */
	ASSERT_EQ(0, ts_force_auto(false));
	ASSERT_TRUE(POLL(ts_auto_state_is("plentiful"), 3));
	/*
	 * Memcgs by their headroom alone, at the default thresholds: a
	 * stall while A fills would keep it under pressure for tens of
	 * seconds after it is freed.
	 */
	ASSERT_EQ(0, ts_put(AUTO "memcg_pressure_psi_pct", "0"));

	ASSERT_EQ(0, ts_put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_EQ(0, mkdir(CG_A, 0755));
	ASSERT_EQ(0, mkdir(CG_B, 0755));
	ASSERT_EQ(0, ts_put(CG_A "cgroup.subtree_control", "+memory"));
	ASSERT_EQ(0, mkdir(CG_AW, 0755));
	ASSERT_EQ(0, mkdir(CG_AF, 0755));
	ASSERT_EQ(0, ts_put(CG_A "memory.max", "128M"));
	self->a = ts_cgroup_ino(CG_A);
	self->aw = ts_cgroup_ino(CG_AW);
	self->af = ts_cgroup_ino(CG_AF);
	self->b = ts_cgroup_ino(CG_B);
	ASSERT_TRUE(self->a && self->aw && self->af && self->b);
	ASSERT_EQ(0, pipe(self->f.ready));
	ASSERT_EQ(0, pipe(self->f.go));
	ASSERT_EQ(0, ts_put(TRACE "events/huge_memory/thp_auto_state/enable", "1"));
	ASSERT_EQ(0, ts_clear_trace());
}

FIXTURE_TEARDOWN(memcg)
{
	int i;

	if (self->f.pid > 0) {
		kill(self->f.pid, SIGKILL);
		waitpid(self->f.pid, NULL, 0);
	}
	for (i = 0; i < 2; i++) {
		if (self->f.ready[i] >= 0)
			close(self->f.ready[i]);
		if (self->f.go[i] >= 0)
			close(self->f.go[i]);
	}
	/* Out of the test's memcgs, so that they can be removed. */
	join(CG);
	thp_scan_reset();
}

/*
 * A child in A/fill that writes @size bytes (base pages), says so on
 * ready, and once told on go, or its pipe closed, reads every byte back
 * and exits: 0 if each was right.
 */
static void start_filler(struct __test_metadata *_metadata, struct filler *f,
			 size_t size)
{
	size_t psz = getpagesize();
	struct pollfd pfd = { .fd = f->ready[0], .events = POLLIN };
	char c;

	f->pid = fork();
	ASSERT_GE(f->pid, 0);
	if (!f->pid) {
		char *p;

		if (join(CG_AF))
			_exit(10);
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || madvise(p, size, MADV_NOHUGEPAGE))
			_exit(11);
		for (size_t pg = 0; pg < size / psz; pg++)
			ts_fill_page(p, pg, psz);
		if (write(f->ready[1], "r", 1) != 1)
			_exit(12);
		if (read(f->go[0], &c, 1) < 0)
			_exit(13);
		_exit(ts_check_pages(p, size / psz, psz, ts_every_page, NULL) == -1 ? 0 : 2);
	}
	/* Writing up to 118 MiB takes well under 60 s, even under TCG. */
	ASSERT_EQ(1, poll(&pfd, 1, 60000)) TH_LOG("the filler is not done after 60 s");
	ASSERT_EQ(1, read(f->ready[0], &c, 1)) TH_LOG("the filler died");
}

/* Let the filler check its memory and exit; true if every byte was right. */
static bool stop_filler(struct filler *f)
{
	int status = -1;

	if (write(f->go[1], "g", 1) != 1 || waitpid(f->pid, &status, 0) != f->pid)
		return false;
	f->pid = 0;
	return WIFEXITED(status) && !WEXITSTATUS(status);
}

/* Do the states of @memcg in the trace (those of pressure decided by @by) read @want? */
static bool states_are(unsigned long long memcg, unsigned long long by,
		       const char *want)
{
	char buf[256];

	return !ts_auto_states(memcg, by, buf, sizeof(buf)) && !strcmp(buf, want);
}

/*
 * A filled to within the default 10 % of headroom of its memory.max:
 * faults in A/work, a child of A with no limit of its own, get no THP
 * without MADV_HUGEPAGE and one with it, while faults in B get THPs and
 * the system stays plentiful; A freed, faults in A/work get THPs again.
 * The trace holds one change each way for A, A/work and A/fill, the
 * pressure decided by A's signals, and none for B or the system.
 */
TEST_F_TIMEOUT(memcg, near_limit_no_thp, 120)
{
	char buf[256];

	ASSERT_EQ(0, join(CG_AW));
	EXPECT_EQ(2, ts_fault_thps(self->pmd, 2, false));

	start_filler(_metadata, &self->f, FILL);
	/* One sample every 100 ms: 10 s is plenty. */
	ASSERT_TRUE(POLL(states_are(self->aw, self->a, "pressure,"), 10))
		TH_LOG("A/work not under pressure by A after 10 s");
	EXPECT_TRUE(states_are(self->a, self->a, "pressure,"));
	EXPECT_TRUE(states_are(self->af, self->a, "pressure,"));
	EXPECT_TRUE(ts_auto_state_is("plentiful"));

	EXPECT_EQ(0, ts_fault_thps(self->pmd, 2, false));
	EXPECT_EQ(1, ts_fault_thps(self->pmd, 1, true));
	ASSERT_EQ(0, join(CG_B));
	EXPECT_EQ(2, ts_fault_thps(self->pmd, 2, false));
	ASSERT_EQ(0, join(CG_AW));
	EXPECT_EQ(0, ts_fault_thps(self->pmd, 2, false));

	EXPECT_TRUE(stop_filler(&self->f)) TH_LOG("the filler's memory differs");
	ASSERT_TRUE(POLL(states_are(self->aw, self->a, "pressure,plentiful,"), 10))
		TH_LOG("A/work not plentiful 10 s after A was freed");
	EXPECT_EQ(2, ts_fault_thps(self->pmd, 2, false));

	EXPECT_TRUE(states_are(self->a, self->a, "pressure,plentiful,"));
	EXPECT_TRUE(states_are(self->af, self->a, "pressure,plentiful,"));
	ASSERT_EQ(0, ts_auto_states(self->b, 0, buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
	ASSERT_EQ(0, ts_auto_states(0, 0, buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
}

/*
 * memory.stat's thp_auto_pressure_fault of the memcg at @cg, flushed
 * first; -1 if missing.
 */
static long pressure_faults(const char *cg)
{
	char path[128];

	if (ts_flush_memcg_stats(cg))
		return -1;
	snprintf(path, sizeof(path), "%smemory.stat", cg);
	return ts_keyed(path, "thp_auto_pressure_fault");
}

/*
 * A child in A/work, under pressure by A, writes one byte in each of 8
 * fresh PMD-sized ranges and in one MADV_HUGEPAGE range, then waits
 * (nothing else faults in A/work, which this process never joins).
 * Each plain fault is counted once in memory.stat's
 * thp_auto_pressure_fault of A/work and of A, and got no THP; the
 * MADV_HUGEPAGE one got a THP and is not counted.  A/fill (faults with
 * MADV_NOHUGEPAGE) and B (plentiful, where this process got THPs at
 * fault) count none.
 */
TEST_F_TIMEOUT(memcg, pressure_faults_counted, 120)
{
	const int nr = 8;
	int ready[2], go[2], status;
	char path[64], c;
	pid_t pid;

	ASSERT_EQ(0, join(CG_B));
	start_filler(_metadata, &self->f, FILL);
	ASSERT_TRUE(POLL(states_are(self->aw, self->a, "pressure,"), 10))
		TH_LOG("A/work not under pressure by A after 10 s");
	EXPECT_EQ(2, ts_fault_thps(self->pmd, 2, false));

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		char *p, *m;
		int i;

		close(ready[0]);
		close(go[1]);
		if (join(CG_AW))
			_exit(10);
		p = ts_map_aligned(nr * self->pmd, self->pmd);
		m = ts_map_aligned(self->pmd, self->pmd);
		if (!p || !m || madvise(m, self->pmd, MADV_HUGEPAGE))
			_exit(11);
		for (i = 0; i < nr; i++)
			p[i * self->pmd] = 1;
		m[0] = 1;
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(12);
		for (i = 0; i < nr; i++) {
			char *r = p + i * self->pmd;

			if (r[0] != 1 || !ts_is_zero(r + 1, self->pmd - 1))
				_exit(1);
		}
		_exit(m[0] == 1 && ts_is_zero(m + 1, self->pmd - 1) ? 0 : 1);
	}
	close(ready[1]);
	close(go[0]);
	EXPECT_EQ(1, read(ready[0], &c, 1)) TH_LOG("the child died");
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	EXPECT_EQ((long)(self->pmd >> 10), ts_keyed(path, "AnonHugePages:"));
	EXPECT_EQ(nr, pressure_faults(CG_AW));
	EXPECT_EQ(nr, pressure_faults(CG_A));
	EXPECT_EQ(0, pressure_faults(CG_AF));
	EXPECT_EQ(0, pressure_faults(CG_B));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(ready[0]);
	close(go[1]);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the child's check (1: data, 10-12: setup)");
	EXPECT_TRUE(stop_filler(&self->f)) TH_LOG("the filler's memory differs");
}

/*
 * A limit lowered under memory already charged, with no charge after it:
 * A holds 64 MiB (half its memory.max, plentiful) and nothing in A
 * charges more while memory.max goes down to 70 MiB, which leaves less
 * than the default 10 % of headroom.  A comes under pressure all the
 * same (the limit write puts A among the memcgs the work samples), and so
 * do A/work and A/fill.  A memcg made in A meanwhile starts under pressure,
 * at once (its first fault gets no THP, without waiting for a sample)
 * and traced, decided by A's signals; with A's memory.max back at
 * 128 MiB all are plentiful again, and faults in the new memcg get THPs.
 */
TEST_F_TIMEOUT(memcg, limit_lowered_new_child_follows, 120)
{
	char buf[256];
	unsigned long long an;

	ASSERT_EQ(0, join(CG_AW));
	start_filler(_metadata, &self->f, 64UL << 20);
	/* Half of A's limit is used: plentiful, and no change was traced. */
	usleep(500 * 1000);
	ASSERT_EQ(0, ts_auto_states(self->a, 0, buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
	EXPECT_EQ(2, ts_fault_thps(self->pmd, 2, false));

	ASSERT_EQ(0, ts_put(CG_A "memory.max", "70M"));
	ASSERT_TRUE(POLL(states_are(self->aw, self->a, "pressure,"), 10))
		TH_LOG("A/work not under pressure by A 10 s after A's limit was lowered");
	EXPECT_TRUE(states_are(self->a, self->a, "pressure,"));
	EXPECT_TRUE(states_are(self->af, self->a, "pressure,"));
	EXPECT_EQ(0, ts_fault_thps(self->pmd, 2, false));

	/* A new memcg in A: under pressure from its first fault on. */
	ASSERT_EQ(0, mkdir(CG_AN, 0755));
	an = ts_cgroup_ino(CG_AN);
	ASSERT_NE(0, an);
	ASSERT_EQ(0, join(CG_AN));
	EXPECT_EQ(0, ts_fault_thps(self->pmd, 2, false));
	EXPECT_TRUE(states_are(an, self->a, "pressure,"));

	ASSERT_EQ(0, ts_put(CG_A "memory.max", "128M"));
	ASSERT_TRUE(POLL(states_are(an, self->a, "pressure,plentiful,"), 10))
		TH_LOG("A/new not plentiful 10 s after A's limit was raised");
	EXPECT_TRUE(states_are(self->a, self->a, "pressure,plentiful,"));
	EXPECT_TRUE(states_are(self->aw, self->a, "pressure,plentiful,"));
	EXPECT_EQ(2, ts_fault_thps(self->pmd, 2, false));
	EXPECT_TRUE(stop_filler(&self->f)) TH_LOG("the filler's memory differs");
	ASSERT_EQ(0, ts_auto_states(self->b, 0, buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
}

/* Wait up to 30 s for the @nr PMD ranges at @p to be THPs. */
static bool collapsed(char *p, int nr, size_t pmd)
{
	return POLL(check_huge_anon(p, nr, pmd), 30);
}

static int all_but_8(size_t pg, void *arg)
{
	size_t per = *(size_t *)arg;

	return pg % per < per - 8 ? 1 : 0;
}

/*
 * khugepaged follows the memcg's state.  With A under pressure, in a
 * range of A/work written whole it collapses (no new memory), in one
 * with 8 pages never written it does not (the rule of "auto" under
 * pressure), although max_ptes_none (511) and thp_scan's limit would let
 * it: the range is counted in thp_split_scan_collapse_skipped.  Once A is freed
 * it collapses that range too.  Every byte reads back.
 */
TEST_F_TIMEOUT(memcg, khugepaged_follows_memcg, 150)
{
	size_t psz = getpagesize(), per = self->pmd / psz, pg;
	long skipped, scans, skips;
	unsigned long *sparse_pfns = calloc(per, sizeof(*sparse_pfns));
	char *full, *sparse;

	ASSERT_EQ(0, join(CG_AW));
	start_filler(_metadata, &self->f, FILL);
	ASSERT_TRUE(POLL(states_are(self->aw, self->a, "pressure,"), 10));

	/* Written at pressure: base pages, in ranges khugepaged knows. */
	full = ts_map_aligned(self->pmd, self->pmd);
	sparse = ts_map_aligned(self->pmd, self->pmd);
	ASSERT_TRUE(full && sparse && sparse_pfns);
	for (pg = 0; pg < per; pg++) {
		ts_fill_page(full, pg, psz);
		if (all_but_8(pg, &per))
			ts_fill_page(sparse, pg, psz);
	}
	ASSERT_TRUE(check_huge_anon(full, 0, self->pmd));
	ASSERT_TRUE(check_huge_anon(sparse, 0, self->pmd));

	skipped = ts_must_stat(_metadata, self->pmd >> 10, "thp_split_scan_collapse_skipped");
	ASSERT_EQ(0, ts_pagemap_pfns(sparse, per, sparse_pfns));
	ASSERT_EQ(0, ts_put(TRACE "events/huge_memory/mm_khugepaged_scan_pmd/enable", "1"));
	ASSERT_EQ(0, ts_put(THP "khugepaged/max_ptes_none", "511"));
	ASSERT_EQ(0, ts_put(THP "khugepaged/pages_to_scan", "4096"));
	ASSERT_EQ(0, ts_put(THP "khugepaged/scan_sleep_millisecs", "10"));
	/* khugepaged every 10 ms, 4096 pages at a time: 30 s for TCG. */
	EXPECT_TRUE(collapsed(full, 1, self->pmd)) TH_LOG("full range not collapsed");
	/* Two more full passes: the sparse range was looked at since. */
	scans = ts_must_long(_metadata, THP "khugepaged/full_scans");
	EXPECT_TRUE(POLL(ts_get_long(THP "khugepaged/full_scans") >= scans + 2, 30));
	EXPECT_TRUE(check_huge_anon(sparse, 0, self->pmd));
	/*
	 * Left alone for the collapse limit: khugepaged's verdict on the
	 * test's own range (the trace, by its pfns), and counted (a
	 * system-wide counter: it grew by that much at least).
	 */
	skips = khugepaged_scans("exceed_new_pte", sparse_pfns, per);
	EXPECT_GE(skips, 1);
	EXPECT_LE(skipped + skips,
		  ts_must_stat(_metadata, self->pmd >> 10, "thp_split_scan_collapse_skipped"));

	EXPECT_TRUE(stop_filler(&self->f)) TH_LOG("the filler's memory differs");
	ASSERT_TRUE(POLL(states_are(self->aw, self->a, "pressure,plentiful,"), 10));
	EXPECT_TRUE(collapsed(sparse, 1, self->pmd)) TH_LOG("sparse range not collapsed");
	EXPECT_TRUE(ts_auto_state_is("plentiful"));

	EXPECT_EQ(-1, ts_check_pages(full, per, psz, ts_every_page, NULL));
	EXPECT_EQ(-1, ts_check_pages(sparse, per, psz, all_but_8, &per));
	munmap(full, self->pmd);
	munmap(sparse, self->pmd);
	free(sparse_pfns);
}

FIXTURE(knobs) {
};

FIXTURE_SETUP(knobs)
{
	thp_scan_reset();
}

FIXTURE_TEARDOWN(knobs)
{
	thp_scan_reset();
}

/* Do the auto thresholds, the system's and the memcgs', read as in @want? */
static bool thresholds_are(char want[][16])
{
	char now[16];
	unsigned int i;

	for (i = 0; i < NR_THRESHOLDS; i++)
		if (ts_get(thp_auto_thresholds[i], now, sizeof(now)) || strcmp(now, want[i]))
			return false;
	return true;
}

/*
 * Bad values for each memcg threshold: not a number, out of range, or a
 * pair without its gap, at the defaults (10 < 20 available, 2 < 10
 * stall): -EINVAL, and none of the eight thresholds changed.  A good
 * value is taken and reads back, and leaves the system's alone.
 */
TEST_F_TIMEOUT(knobs, memcg_bad_values, 120)
{
	static const char * const junk[] = { "bogus", "-1", "101", "4294967306",
					     "1.5", "10 20", "\n", "0x10" };
	static const struct { const char *knob, *val; } gap[] = {
		{ "memcg_pressure_available_pct", "20" },
		{ "memcg_pressure_available_pct", "30" },
		{ "memcg_plentiful_available_pct", "10" },
		{ "memcg_plentiful_available_pct", "5" },
		{ "memcg_plentiful_psi_pct", "10" },
		{ "memcg_plentiful_psi_pct", "50" },
		{ "memcg_pressure_psi_pct", "2" },
		{ "memcg_pressure_psi_pct", "1" },
	};
	static const char * const knobs[] = {
		"memcg_pressure_available_pct", "memcg_plentiful_available_pct",
		"memcg_pressure_psi_pct", "memcg_plentiful_psi_pct",
	};
	char before[NR_THRESHOLDS][16], path[128], buf[16];
	unsigned int i, j;

	if (access(AUTO "memcg_pressure_available_pct", F_OK))
		SKIP(return, "kernel without the per-memcg auto THP policy");
	for (i = 0; i < NR_THRESHOLDS; i++)
		ASSERT_EQ(0, ts_get(thp_auto_thresholds[i], before[i], sizeof(before[i])));
	ASSERT_STREQ("10\n", before[6]);	/* memcg_pressure_available_pct */
	ASSERT_STREQ("20\n", before[7]);	/* memcg_plentiful_available_pct */
	ASSERT_STREQ("10\n", before[5]);	/* memcg_pressure_psi_pct */
	ASSERT_STREQ("2\n", before[4]);		/* memcg_plentiful_psi_pct */

	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		snprintf(path, sizeof(path), AUTO "%s", knobs[i]);
		for (j = 0; j < ARRAY_SIZE(junk); j++) {
			EXPECT_EQ(-EINVAL, ts_put(path, junk[j]))
				TH_LOG("%s=%s", knobs[i], junk[j]);
			EXPECT_TRUE(thresholds_are(before));
		}
	}
	for (i = 0; i < ARRAY_SIZE(gap); i++) {
		snprintf(path, sizeof(path), AUTO "%s", gap[i].knob);
		EXPECT_EQ(-EINVAL, ts_put(path, gap[i].val))
			TH_LOG("%s=%s", gap[i].knob, gap[i].val);
		EXPECT_TRUE(thresholds_are(before));
	}

	ASSERT_EQ(0, ts_put(AUTO "memcg_plentiful_available_pct", "30"));
	ASSERT_EQ(0, ts_get(AUTO "memcg_plentiful_available_pct", buf, sizeof(buf)));
	EXPECT_STREQ("30\n", buf);
	snprintf(before[7], sizeof(before[7]), "30\n");
	EXPECT_TRUE(thresholds_are(before));
}

THP_SCAN_HARNESS_MAIN
