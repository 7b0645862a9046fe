// SPDX-License-Identifier: GPL-2.0
/*
 * thp_scan's fault feedback (thp_scan/fault_limit_secs), under "always":
 * once kthpscand has found the THPs of a VMA underused, its next faults
 * get base pages, or the smaller sizes the policy allows, each traced
 * (thp_scan_fault_smaller) and counted per size (anon_fault_limited);
 * dense faults lift the limit, and so does time; MADV_HUGEPAGE wins; a
 * forked child starts with its parent's limit; with the knob at 0 the
 * faults are as before.  "auto" while plentiful is limited as "always"
 * is; under "defer" the limit refuses nothing.  Each change of the VMA's limit is checked in
 * the thp_scan_fault_limit events of the test's own VMA, each smaller
 * fault in the thp_scan_fault_smaller events of the test's own pid and
 * addresses, and every byte reads back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

/* glibc's <sys/mman.h> may predate it. */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

/* PMD ranges per phase: one page written in each. */
#define NR	8

/* A change of a VMA's fault limit, from the trace. */
struct limit_event {
	unsigned long start;
	unsigned int old_limit, limit, score;
	char reason[16];
};

/* The thp_scan_fault_limit events of the VMA at @start, into @ev. */
static int limit_events(unsigned long start, struct limit_event *ev, int max)
{
	FILE *f = fopen(TRACE "trace", "r");
	struct limit_event e;
	char line[512], *s;
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		s = strstr(line, " thp_scan_fault_limit: ");
		s = s ? strstr(s, "start=") : NULL;
		if (!s)
			continue;
		if (sscanf(s, "start=0x%lx old_limit=%u limit=%u score=%u reason=%15s",
			   &e.start, &e.old_limit, &e.limit, &e.score, e.reason) != 5 ||
		    e.start != start)
			continue;
		if (n < max)
			ev[n] = e;
		n++;
	}
	fclose(f);
	return n;
}

/*
 * How many thp_scan_fault_smaller events of task @pid name an address in
 * [@p, @p + @len), order @order and limit @limit; -1 if the trace cannot
 * be read.  In *@other those of @pid there with another order or limit.
 */
static long smaller_events(int pid, const char *p, size_t len,
			   unsigned int order, unsigned int limit, long *other)
{
	FILE *f = fopen(TRACE "trace", "r");
	unsigned long addr;
	unsigned int o, l;
	char line[512], *s, *b, *dash;
	long n = 0;

	*other = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		s = strstr(line, " thp_scan_fault_smaller: ");
		b = strchr(line, '[');
		if (!s || !b || b > s)
			continue;
		for (dash = b; dash > line && *dash != '-'; dash--)
			;
		s = strstr(s, "address=");
		if (atoi(dash + 1) != pid || !s ||
		    sscanf(s, "address=0x%lx order=%u limit=%u", &addr, &o, &l) != 3 ||
		    addr < (uintptr_t)p || addr >= (uintptr_t)p + len)
			continue;
		if (o == order && l == limit)
			n++;
		else
			(*other)++;
	}
	fclose(f);
	return n;
}

/* What a test works on. */
struct fb {
	struct thp_sizes z;
	int kpid;
	char *raw, *p;		/* the VMA, and its first PMD boundary */
	size_t len;		/* of the VMA */
	unsigned long heads[NR];
};

FIXTURE(feedback) {
	struct fb f;
};

/*
 * "always" for PMD THPs and no other size, kthpscand fast, the feedback
 * on for 600 s; one VMA of 4 * NR PMD ranges and a bit, not advised.
 */
FIXTURE_SETUP(feedback)
{
	struct fb *f = &self->f;
	struct thp_settings s;

	f->raw = NULL;
	thp_scan_setup(_metadata, &f->z, NULL);
	f->kpid = kthpscand_pid();
	ASSERT_GT(f->kpid, 0);
	thp_read_settings(&s);
	s.thp_enabled = THP_ALWAYS;
	thp_write_settings(&s);
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "1000"));
	ASSERT_EQ(0, ts_put(THP_SCAN "scan_sleep_millisecs", "200"));
	ASSERT_EQ(0, ts_put(THP_SCAN "fault_limit_secs", "600"));
	f->len = (4 * NR + 1) * f->z.pmd;
	f->raw = mmap(NULL, f->len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, f->raw);
	f->p = (char *)(((uintptr_t)f->raw + f->z.pmd - 1) & ~(f->z.pmd - 1));
}

FIXTURE_TEARDOWN(feedback)
{
	struct fb *f = &self->f;

	if (f->raw && f->raw != MAP_FAILED)
		munmap(f->raw, f->len);
	thp_scan_teardown();
}

/* Write page 7 of each of PMD ranges @first to @first + @nr - 1. */
static void touch(char *p, const struct thp_sizes *z, size_t first, size_t nr)
{
	size_t i;

	for (i = first; i < first + nr; i++)
		ts_fill_page(p, i * z->per + 7, z->psz);
}

/*
 * Phase 1: a page in each of the first NR PMD ranges, each a THP at
 * fault, which kthpscand splits as underused; the VMA's limit then is
 * the PMD order, set once (at the second verdict).  With @limited false
 * (the knob at 0), no limit is set.
 */
static void sparse_phase(struct __test_metadata *_metadata,
			 struct fb *f, bool limited)
{
	struct ev_filter under = { true, "split_underused", f->heads, NR,
				   f->kpid, true };
	struct limit_event ev[4];
	long secs;
	int n;

	touch(f->p, &f->z, 0, NR);
	ASSERT_EQ(NR, ts_count_thps(f->p, NR, f->z.pmd));
	ASSERT_EQ(0, ts_head_pfns(f->p, NR, f->z.per, f->z.psz, f->heads));
	secs = kthpscand_deadline(-1, 4);
	ASSERT_TRUE(POLL(ts_pfns_seen(&under) == NR, secs))
		TH_LOG("%zu of %d split after %ld s", ts_pfns_seen(&under), NR, secs);
	n = limit_events((uintptr_t)f->raw, ev, 4);
	if (!limited) {
		ASSERT_EQ(0, n) TH_LOG("a limit was set with fault_limit_secs 0");
		return;
	}
	ASSERT_EQ(1, n) TH_LOG("%d changes of the VMA's limit", n);
	EXPECT_EQ(0, ev[0].old_limit);
	EXPECT_EQ(f->z.order_pmd, ev[0].limit);
	EXPECT_EQ(2, ev[0].score);
	EXPECT_STREQ("underused", ev[0].reason);
}

/* Every byte of the first @nr PMD ranges: page 7 of each written. */
static void check_data(struct __test_metadata *_metadata,
		       struct fb *f, size_t nr)
{
	const size_t per = f->z.per;
	long bad = ts_check_pages(f->p, nr * per, f->z.psz,
				  ts_one_per_folio, (void *)&per);

	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
}

/*
 * After the sparse phase, a page in each of the next NR ranges: base
 * pages, not THPs; each fault traced as refused the PMD order and
 * counted in hugepages-<PMD>kB/stats/anon_fault_limited.
 */
TEST_F_TIMEOUT(feedback, sparse_vma_faults_small, 300)
{
	struct fb *f = &self->f;
	char *q = f->p + NR * f->z.pmd;
	long before, other;

	sparse_phase(_metadata, f, true);
	before = ts_must_stat(_metadata, f->z.pmd_kb, "anon_fault_limited");
	touch(f->p, &f->z, NR, NR);
	EXPECT_EQ(0, ts_count_thps(q, NR, f->z.pmd));
	EXPECT_EQ(NR, smaller_events(getpid(), q, NR * f->z.pmd,
				     f->z.order_pmd, f->z.order_pmd, &other));
	EXPECT_EQ(0, other);
	/* Others may count too: at least ours. */
	EXPECT_LE(before + NR, ts_must_stat(_metadata, f->z.pmd_kb,
					    "anon_fault_limited"));
	check_data(_metadata, f, 2 * NR);
}

/*
 * Dense faults lift the limit: every page of range NR written in
 * address order (base pages, the limit still set) completes blocks of 64
 * pages, and four of them outweigh the verdicts (score 4); range NR + 1,
 * then written whole, is a THP from its first fault, and so is a sparse
 * range after it.
 */
TEST_F_TIMEOUT(feedback, dense_faults_lift_the_limit, 300)
{
	struct fb *f = &self->f;
	const size_t per = f->z.per, psz = f->z.psz;
	char *q = f->p + NR * f->z.pmd;
	struct limit_event ev[4];
	long bad, other;
	size_t i;
	int n;

	sparse_phase(_metadata, f, true);
	for (i = 0; i < 2 * per; i++)
		ts_fill_page(q, i, psz);
	touch(f->p, &f->z, NR + 2, 1);
	n = limit_events((uintptr_t)f->raw, ev, 4);
	ASSERT_EQ(2, n) TH_LOG("%d changes of the VMA's limit", n);
	EXPECT_EQ(f->z.order_pmd, ev[1].old_limit);
	EXPECT_EQ(0, ev[1].limit);
	EXPECT_EQ(0, ev[1].score);
	EXPECT_STREQ("dense", ev[1].reason);
	EXPECT_EQ(0, ts_count_thps(q, 1, f->z.pmd));
	EXPECT_EQ(2, ts_count_thps(q + f->z.pmd, 2, f->z.pmd));
	/* Only range NR's first fault was refused a THP. */
	EXPECT_EQ(1, smaller_events(getpid(), q, 3 * f->z.pmd,
				    f->z.order_pmd, f->z.order_pmd, &other));
	EXPECT_EQ(0, other);
	check_data(_metadata, f, NR);
	bad = ts_check_pages(q, 2 * per, psz, ts_every_page, NULL);
	EXPECT_EQ(-1, bad) TH_LOG("dense page %ld differs", bad);
}

/*
 * MADV_HUGEPAGE wins: the next NR ranges advised get THPs at fault,
 * with nothing refused; the VMA's unadvised part stays limited.
 */
TEST_F_TIMEOUT(feedback, madv_hugepage_wins, 300)
{
	struct fb *f = &self->f;
	char *q = f->p + NR * f->z.pmd, *r = q + NR * f->z.pmd;
	long other;

	sparse_phase(_metadata, f, true);
	ASSERT_EQ(0, madvise(q, NR * f->z.pmd, MADV_HUGEPAGE));
	touch(f->p, &f->z, NR, 2 * NR);
	EXPECT_EQ(NR, ts_count_thps(q, NR, f->z.pmd));
	EXPECT_EQ(0, smaller_events(getpid(), q, NR * f->z.pmd, 0, 0, &other));
	EXPECT_EQ(0, other);
	EXPECT_EQ(0, ts_count_thps(r, NR, f->z.pmd));
	EXPECT_EQ(NR, smaller_events(getpid(), r, NR * f->z.pmd,
				     f->z.order_pmd, f->z.order_pmd, &other));
	check_data(_metadata, f, 3 * NR);
}

/*
 * A forked child starts with its parent's limit: its faults in the next
 * NR ranges get base pages, each traced in its own pid; the parent's
 * pages read back in the child.
 */
TEST_F_TIMEOUT(feedback, child_inherits_the_limit, 300)
{
	struct fb *f = &self->f;
	char *q = f->p + NR * f->z.pmd;
	int status;
	pid_t pid;
	long n, other;

	sparse_phase(_metadata, f, true);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		const size_t per = f->z.per;

		touch(f->p, &f->z, NR, NR);
		if (ts_count_thps(q, NR, f->z.pmd) != 0)
			_exit(1);
		_exit(ts_check_pages(f->p, 2 * NR * per, f->z.psz,
				     ts_one_per_folio, (void *)&per) == -1 ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the child's check (1: a THP, 2: data)");
	n = smaller_events(pid, q, NR * f->z.pmd, f->z.order_pmd,
			   f->z.order_pmd, &other);
	EXPECT_EQ(NR, n);
	EXPECT_EQ(0, other);
	check_data(_metadata, f, NR);
}

/*
 * The limit goes fault_limit_secs after the last underused verdict: with
 * 2 s, three seconds after the splits the next faults get THPs again.
 */
TEST_F_TIMEOUT(feedback, limit_expires, 300)
{
	struct fb *f = &self->f;
	char *q = f->p + NR * f->z.pmd;
	struct limit_event ev[4];
	long other;
	int n;

	ASSERT_EQ(0, ts_put(THP_SCAN "fault_limit_secs", "2"));
	sparse_phase(_metadata, f, true);
	sleep(3);
	touch(f->p, &f->z, NR, NR);
	/* Before kthpscand, 1 s later, may find these THPs underused too. */
	n = limit_events((uintptr_t)f->raw, ev, 4);
	EXPECT_EQ(NR, ts_count_thps(q, NR, f->z.pmd));
	EXPECT_EQ(0, smaller_events(getpid(), q, NR * f->z.pmd, 0, 0, &other));
	EXPECT_EQ(0, other);
	ASSERT_EQ(2, n) TH_LOG("%d changes of the VMA's limit", n);
	EXPECT_EQ(f->z.order_pmd, ev[1].old_limit);
	EXPECT_EQ(0, ev[1].limit);
	EXPECT_STREQ("expired", ev[1].reason);
	check_data(_metadata, f, 2 * NR);
}

/* With fault_limit_secs 0, the faults after the splits get THPs. */
TEST_F_TIMEOUT(feedback, off_changes_nothing, 300)
{
	struct fb *f = &self->f;
	char *q = f->p + NR * f->z.pmd;
	long other;

	ASSERT_EQ(0, ts_put(THP_SCAN "fault_limit_secs", "0"));
	sparse_phase(_metadata, f, false);
	touch(f->p, &f->z, NR, NR);
	EXPECT_EQ(NR, ts_count_thps(q, NR, f->z.pmd));
	EXPECT_EQ(0, smaller_events(getpid(), q, NR * f->z.pmd, 0, 0, &other));
	EXPECT_EQ(0, other);
	check_data(_metadata, f, 2 * NR);
}

/*
 * With 64K mTHPs allowed too: after the PMD THPs are found underused,
 * faults get 64K mTHPs (the PMD order refused, traced and counted at
 * the PMD size); once those are found underused in turn, base pages, and
 * each fault is refused both sizes.
 */
TEST_F_TIMEOUT(feedback, smaller_sizes_first, 300)
{
	struct fb *f = &self->f;
	const size_t m = 65536, pmd = f->z.pmd;
	char *q = f->p + NR * pmd, *r = q + NR * pmd;
	unsigned int om = __builtin_ctzl(m / f->z.psz);
	unsigned long mheads[NR];
	struct ev_filter under = { true, "split_underused", mheads, NR,
				   f->kpid, true };
	struct thp_settings s;
	struct limit_event ev[4];
	long secs, other;
	size_t i;
	int n;

	if (m <= f->z.psz || om >= (unsigned int)f->z.order_pmd)
		SKIP(return, "no 64K mTHP with %zu-byte pages", f->z.psz);
	thp_read_settings(&s);
	s.hugepages[om].enabled = THP_ALWAYS;
	thp_write_settings(&s);
	sparse_phase(_metadata, f, true);

	touch(f->p, &f->z, NR, NR);
	for (i = 0; i < NR; i++) {
		EXPECT_EQ(1, ts_count_thps(q + i * pmd, 1, m)) TH_LOG("range %zu", i);
		ASSERT_EQ(0, ts_head_pfns(q + i * pmd, 1, m / f->z.psz,
					  f->z.psz, &mheads[i]));
	}
	EXPECT_EQ(NR, smaller_events(getpid(), q, NR * pmd, f->z.order_pmd,
				     f->z.order_pmd, &other));
	EXPECT_EQ(0, other);

	secs = kthpscand_deadline(-1, 4);
	ASSERT_TRUE(POLL(ts_pfns_seen(&under) == NR, secs))
		TH_LOG("%zu of %d 64K mTHPs split after %ld s", ts_pfns_seen(&under), NR, secs);
	n = limit_events((uintptr_t)f->raw, ev, 4);
	ASSERT_EQ(2, n) TH_LOG("%d changes of the VMA's limit", n);
	EXPECT_EQ(f->z.order_pmd, ev[1].old_limit);
	EXPECT_EQ(om, ev[1].limit);
	EXPECT_STREQ("underused", ev[1].reason);

	touch(f->p, &f->z, 2 * NR, NR);
	for (i = 0; i < NR; i++)
		EXPECT_EQ(0, ts_count_thps(r + i * pmd, 1, m)) TH_LOG("range %zu", NR + i);
	EXPECT_EQ(NR, smaller_events(getpid(), r, NR * pmd, f->z.order_pmd, om, &other));
	EXPECT_EQ(NR, smaller_events(getpid(), r, NR * pmd, om, om, &other));
	check_data(_metadata, f, 3 * NR);
}

/*
 * "auto" while memory is plentiful is "always": the same limit, the
 * same base pages after it.
 */
TEST_F_TIMEOUT(feedback, auto_plentiful_like_always, 300)
{
	struct fb *f = &self->f;
	char *q = f->p + NR * f->z.pmd;
	long other;

	if (access(AUTO "state", F_OK))
		SKIP(return, "kernel without the auto THP policy");
	ASSERT_EQ(0, ts_force_auto(false));
	ASSERT_EQ(0, ts_put(THP "enabled", "auto"));
	ASSERT_TRUE(POLL(ts_auto_state_is("plentiful"), 3));
	sparse_phase(_metadata, f, true);
	touch(f->p, &f->z, NR, NR);
	EXPECT_EQ(0, ts_count_thps(q, NR, f->z.pmd));
	EXPECT_EQ(NR, smaller_events(getpid(), q, NR * f->z.pmd,
				     f->z.order_pmd, f->z.order_pmd, &other));
	EXPECT_EQ(0, other);
	check_data(_metadata, f, 2 * NR);
}

/*
 * Under "defer" a fault gets no THP, limited or not: the limit set by
 * THPs that MADV_COLLAPSE made refuses nothing, and nothing is counted.
 */
TEST_F_TIMEOUT(feedback, defer_refuses_nothing, 300)
{
	struct fb *f = &self->f;
	struct ev_filter under = { true, "split_underused", f->heads, NR,
				   f->kpid, true };
	char *q = f->p + NR * f->z.pmd;
	struct limit_event ev[4];
	long secs, other;
	int n;

	ASSERT_EQ(0, ts_put(THP "enabled", "defer"));
	touch(f->p, &f->z, 0, NR);
	ASSERT_EQ(0, ts_count_thps(f->p, NR, f->z.pmd));
	ASSERT_EQ(0, madvise(f->p, NR * f->z.pmd, MADV_COLLAPSE));
	ASSERT_EQ(NR, ts_count_thps(f->p, NR, f->z.pmd));
	ASSERT_EQ(0, ts_head_pfns(f->p, NR, f->z.per, f->z.psz, f->heads));
	secs = kthpscand_deadline(-1, 4);
	ASSERT_TRUE(POLL(ts_pfns_seen(&under) == NR, secs))
		TH_LOG("%zu of %d split after %ld s", ts_pfns_seen(&under), NR, secs);
	n = limit_events((uintptr_t)f->raw, ev, 4);
	ASSERT_EQ(1, n) TH_LOG("%d changes of the VMA's limit", n);
	EXPECT_EQ(f->z.order_pmd, ev[0].limit);
	touch(f->p, &f->z, NR, NR);
	EXPECT_EQ(0, ts_count_thps(q, NR, f->z.pmd));
	EXPECT_EQ(0, smaller_events(getpid(), q, NR * f->z.pmd, 0, 0, &other));
	EXPECT_EQ(0, other);
	check_data(_metadata, f, 2 * NR);
}

/* The knob takes 0 to 3600; anything else is EINVAL and changes nothing. */
TEST_F(feedback, knob_values)
{
	static const char * const bad[] = { "3601", "-1", "1k", "x", "99999999999" };
	size_t i;

	ASSERT_EQ(0, ts_put(THP_SCAN "fault_limit_secs", "3600"));
	EXPECT_EQ(3600, ts_get_long(THP_SCAN "fault_limit_secs"));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_NE(0, ts_put(THP_SCAN "fault_limit_secs", bad[i])) TH_LOG("%s", bad[i]);
		EXPECT_EQ(3600, ts_get_long(THP_SCAN "fault_limit_secs"));
	}
	ASSERT_EQ(0, ts_put(THP_SCAN "fault_limit_secs", "0"));
	EXPECT_EQ(0, ts_get_long(THP_SCAN "fault_limit_secs"));
}

THP_SCAN_HARNESS_MAIN
