// SPDX-License-Identifier: GPL-2.0
/*
 * Each decision kthpscand can make on a THP, brought about in a booted
 * kernel and read from the thp_scan_decision and thp_scan_split events
 * with the exact counts the zero scan reports: underused_zero_pct other
 * than the default (what is split and what is kept), shrink_underused=0
 * (not judged, partially mapped still split), a split that fails on a
 * THP someone holds a reference to (it is judged again and split once
 * the reference is gone), a THP that is no longer mapped (kept, for its
 * last user to free), and THPs made by khugepaged judged like the others.
 * keep_locked cannot be brought about at will (a folio lock is held only
 * for a moment); the KUnit suite thp_scan covers it.
 *
 * The minimum age is lowered to 1 s throughout to keep the tests short:
 * the decisions are the same at any age.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

#define CG_NAME "thp_scan_decisions"
#define MAX_EVENTS 1024

/* The trace, read by the tests below. */
static struct thp_scan_event ev[MAX_EVENTS];

FIXTURE(decide) {
	struct thp_sizes z;
	int kpid;
	int pipe[2];
};

FIXTURE_SETUP(decide)
{
	self->pipe[0] = -1;
	self->pipe[1] = -1;
	thp_scan_setup(_metadata, &self->z, CG_NAME);
	self->kpid = kthpscand_pid();
	ASSERT_GT(self->kpid, 0);
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "1000"));
}

FIXTURE_TEARDOWN(decide)
{
	if (self->pipe[0] >= 0) {
		close(self->pipe[0]);
		close(self->pipe[1]);
	}
	thp_scan_teardown();
}

/*
 * How many decisions of kthpscand on PMD THPs the trace holds that are
 * named @decision with exactly @zero zero subpages of @scanned looked
 * at, every subpage mapped; *@others counts its PMD decisions that match
 * none of @n such expectations.
 */
struct want {
	const char *decision;
	unsigned int zero, scanned;
	long seen;
};

static void match_decisions(const struct thp_sizes *z, int kpid, struct want *w,
			    int n, long *others)
{
	int nr = ts_read_events(ev, MAX_EVENTS), i, k;

	*others = 0;
	for (k = 0; k < n; k++)
		w[k].seen = 0;
	for (i = 0; i < nr && i < MAX_EVENTS; i++) {
		struct thp_scan_event *e = &ev[i];
		bool found = false;

		if (e->split || e->pid != kpid || e->order != (unsigned int)z->order_pmd)
			continue;
		for (k = 0; k < n && !found; k++) {
			if (!strcmp(e->decision, w[k].decision) &&
			    e->zero == w[k].zero && e->scanned == w[k].scanned &&
			    e->mapped == z->per) {
				w[k].seen++;
				found = true;
			}
		}
		*others += !found;
	}
}

/* THPs of @per pages with the first @nr[i] pages of THP i filled. */
struct fills {
	size_t per;
	size_t nr[4];
};

static char *fill_first(const struct thp_sizes *z, const struct fills *f, size_t nr)
{
	char *p = ts_map_aligned(nr * z->pmd, z->pmd);
	size_t i, pg;

	for (i = 0; p && i < nr; i++)
		for (pg = 0; pg < f->nr[i]; pg++)
			ts_fill_page(p, i * z->per + pg, z->psz);
	return p;
}

/* For ts_check_pages(): a struct fills says which pages hold data. */
static int filled_first(size_t pg, void *arg)
{
	const struct fills *f = arg;

	return pg % f->per < f->nr[pg / f->per];
}

/* How many decisions named @decision by @pid on the PMD THP at @pfn the trace holds. */
static long decisions_on(const struct thp_sizes *z, const char *decision, int pid,
			 unsigned long pfn)
{
	struct trace_count c;

	ts_count_trace_pfns(z->order_pmd, decision, pid, &pfn, 1, &c);
	return c.decisions;
}

/*
 * underused_zero_pct=50: a PMD THP is underused with more than 256 of its
 * 512 subpages zero-filled.  Four THPs with their first 200, 255, 256 and
 * 512 subpages filled: the first two are split (the zero scan stops at
 * the 257th zero subpage: 457 and 512 subpages looked at), the other two
 * kept (known used at the 256th filled subpage), again and again.
 */
TEST_F_TIMEOUT(decide, zero_pct_50, 120)
{
	const struct fills f = { self->z.per, { 200, 255, 256, 512 } };
	const size_t nr = 4;
	long split0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");
	long scanned0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_scanned");
	struct want w[] = {
		{ "split_underused", 257, 457 },
		{ "split_underused", 257, 512 },
		{ "keep_used", 0, 256 },
	};
	long others, bad;
	char *p;

	ASSERT_EQ(512, self->z.per) TH_LOG("the counts below are for 512-page THPs");
	ASSERT_EQ(0, ts_put(THP_SCAN "underused_zero_pct", "50"));
	p = fill_first(&self->z, &f, nr);
	ASSERT_NE(NULL, p);
	ASSERT_TRUE(check_huge_anon(p, nr, self->z.pmd));
	/* Due in 1 s, a first look at all four in one round, a second 1 s later. */
	EXPECT_TRUE(POLL(ts_size_stat(self->z.pmd_kb, "thp_split_scan_scanned") - scanned0 >= 6,
			 8));
	match_decisions(&self->z, self->kpid, w, 3, &others);
	EXPECT_EQ(1, w[0].seen);
	EXPECT_EQ(1, w[1].seen);
	EXPECT_GE(w[2].seen, 4);
	EXPECT_EQ(0, others);
	EXPECT_EQ(2, ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused") - split0);
	EXPECT_EQ(2 * (long)self->z.pmd_kb, ts_smaps_kb(p, "AnonHugePages:"));
	EXPECT_EQ(0, ts_count_thps(p, 2, self->z.pmd));
	EXPECT_EQ(2, ts_count_thps(p + 2 * self->z.pmd, 2, self->z.pmd));
	bad = ts_check_pages(p, nr * self->z.per, self->z.psz, filled_first, (void *)&f);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * self->z.pmd);
}

/*
 * underused_zero_pct=100: nothing is underused, not even a THP whose
 * every byte is zero.  A sparse THP (page 7 written: the scan knows it
 * used at its first filled subpage, 7 zero of 8) and an all-zero one
 * (written, then zeroed: 512 of 512) are kept; at 99 both are split.
 */
TEST_F_TIMEOUT(decide, zero_pct_100, 300)
{
	const size_t nr = 2;
	long scanned0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_scanned");
	long split0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");
	struct want w[] = {
		{ "keep_used", 7, 8 },
		{ "keep_used", self->z.per, self->z.per },
	};
	const struct fills none = { self->z.per, { 0 } };
	long others, bad;
	char *p;

	ASSERT_EQ(0, ts_put(THP_SCAN "underused_zero_pct", "100"));
	p = ts_sparse_thps(&self->z, nr);
	ASSERT_NE(NULL, p);
	/* The second: written and zeroed again. */
	memset(p + self->z.pmd + 7 * self->z.psz, 0, self->z.psz);
	ASSERT_TRUE(check_huge_anon(p, nr, self->z.pmd));
	/*
	 * Due in 1 s, and again 1 s later: twice each, read from the
	 * trace of these two THPs (the scanned counter moves with the
	 * first look at one of them; 30 s leaves the debug kernel room).
	 */
	EXPECT_TRUE(POLL((match_decisions(&self->z, self->kpid, w, 2, &others),
			  w[0].seen >= 2 && w[1].seen >= 2), 30));
	EXPECT_GE(ts_size_stat(self->z.pmd_kb, "thp_split_scan_scanned") - scanned0, 4);
	match_decisions(&self->z, self->kpid, w, 2, &others);
	EXPECT_GE(w[0].seen, 2);
	EXPECT_GE(w[1].seen, 2);
	EXPECT_EQ(0, others);
	EXPECT_EQ(split0, ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused"));
	EXPECT_TRUE(check_huge_anon(p, nr, self->z.pmd));

	/* The knob is what kept them: due again within 1 s. */
	ASSERT_EQ(0, ts_put(THP_SCAN "underused_zero_pct", "99"));
	EXPECT_TRUE(POLL(ts_size_stat(self->z.pmd_kb, "thp_split_scan_underused") - split0 >=
			 (long)nr, 6));
	EXPECT_EQ(nr, ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused") - split0);
	EXPECT_EQ(0, ts_smaps_kb(p, "AnonHugePages:"));
	/* Page 7 of the first holds data; everything else reads zero. */
	bad = ts_check_pages(p + self->z.pmd, self->z.per, self->z.psz, filled_first,
			     (void *)&none);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld of the zeroed THP differs", bad);
	bad = ts_check_pages(p, self->z.per, self->z.psz, ts_one_per_folio, &self->z.per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld of the sparse THP differs", bad);
	munmap(p, nr * self->z.pmd);
}

/*
 * shrink_underused=0: no THP is judged underused (keep_not_judged,
 * nothing scanned), but a partially mapped one is still split.
 */
TEST_F_TIMEOUT(decide, shrink_underused_off, 120)
{
	const size_t nr = 2, per = self->z.per;
	long scanned0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_scanned");
	long split0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");
	long partial0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_partial");
	struct want w[] = {
		{ "keep_not_judged", 0, 0 },
	};
	struct trace_count c;
	char *sparse, *half;
	long others, bad;

	ASSERT_EQ(0, ts_put(THP "shrink_underused", "0"));
	sparse = ts_sparse_thps(&self->z, nr);
	ASSERT_NE(NULL, sparse);
	ASSERT_TRUE(check_huge_anon(sparse, nr, self->z.pmd));
	half = ts_half_mapped_thps(&self->z, nr);
	ASSERT_NE(NULL, half);

	/* The partially mapped at once, the sparse ones after 1 s, twice. */
	EXPECT_TRUE(POLL(ts_size_stat(self->z.pmd_kb, "thp_split_scan_scanned") - scanned0 >= 6,
			 8));
	EXPECT_EQ(nr, ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_partial") - partial0);
	EXPECT_EQ(split0, ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused"));
	match_decisions(&self->z, self->kpid, w, 1, &others);
	EXPECT_GE(w[0].seen, 2 * nr);
	ts_count_trace(self->z.order_pmd, "split_partially_mapped", self->kpid, &c);
	EXPECT_EQ(nr, c.splits);
	EXPECT_EQ(nr, others) TH_LOG("decisions other than the partial splits");
	EXPECT_TRUE(check_huge_anon(sparse, nr, self->z.pmd));
	bad = ts_check_pages(sparse, nr * per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("sparse page %ld differs", bad);
	bad = ts_check_pages(half, nr * per, self->z.psz, ts_first_half, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld of the mapped halves differs", bad);
	munmap(sparse, nr * self->z.pmd);
	ts_unmap_halves(half, &self->z, nr);
}

/*
 * Give page @pg of the @psz-byte pages at @p to a new pipe, @fds: the
 * pipe holds a reference to the folio.
 */
static int splice_page(int fds[2], char *p, size_t pg, size_t psz)
{
	struct iovec iov = { p + pg * psz, psz };

	if (pipe(fds))
		return -errno;
	return vmsplice(fds[1], &iov, 1, 0) == (ssize_t)psz ? 0 : -errno;
}

/*
 * A THP that cannot be split: a sparse THP one of whose pages sits in a
 * pipe (vmsplice() takes a reference to the folio) has a reference beyond
 * its mappings, so its split would fail.  kthpscand keeps it as pinned
 * without a zero scan (keep_pinned, nothing scanned), tries no split
 * (split_failed flat), looks again after the minimum age; once the pipe
 * is closed it is judged underused and split.  (A split that fails after
 * that check, when a reference appears in between, is a race no test can
 * bring about at will.)
 */
TEST_F_TIMEOUT(decide, keep_pinned_referenced, 120)
{
	long split0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");
	size_t per = self->z.per;
	int nr, i, pinned = 0, others = 0;
	char *p = ts_sparse_thps(&self->z, 1);
	struct ev_filter splits = { .split = true, .n = 1, .pid = self->kpid };
	unsigned long pfn;
	long bad;

	ASSERT_NE(NULL, p);
	ASSERT_TRUE(check_huge_anon(p, 1, self->z.pmd));
	/* The THP's own events: other tasks' THPs may be judged meanwhile. */
	ASSERT_EQ(0, ts_pagemap_pfns(p, 1, &pfn));
	ASSERT_NE(0, pfn);
	splits.pfns = &pfn;
	ASSERT_EQ(0, splice_page(self->pipe, p, 7, self->z.psz));
	/* Due in 1 s and again 1 s after each look: twice within 6 s. */
	EXPECT_TRUE(POLL(decisions_on(&self->z, "keep_pinned", self->kpid, pfn) >= 2, 6));
	EXPECT_TRUE(check_huge_anon(p, 1, self->z.pmd));
	nr = ts_read_events(ev, MAX_EVENTS);
	for (i = 0; i < nr && i < MAX_EVENTS; i++) {
		struct thp_scan_event *e = &ev[i];

		if (e->pfn != pfn)
			continue;
		if (e->split || strcmp(e->decision, "keep_pinned")) {
			others++;
			continue;
		}
		EXPECT_EQ(self->kpid, e->pid);
		/* Kept without a zero scan. */
		EXPECT_EQ(0, e->scanned);
		pinned++;
	}
	EXPECT_GE(pinned, 2);
	/* No split tried on it, so none failed: no split event. */
	EXPECT_EQ(0, others) TH_LOG("events on the THP other than keep_pinned");
	EXPECT_EQ(0, ts_events(&splits)) TH_LOG("a split tried");

	close(self->pipe[0]);
	close(self->pipe[1]);
	self->pipe[0] = -1;
	/*
	 * Due again within 1 s: split as underused, once, and the split
	 * worked (a failed one would have ret != 0).  The split event comes
	 * after the split, the decision's before it: wait for the split's.
	 * The per-size counter moved with it; other THPs may move it too,
	 * hence at least.
	 */
	EXPECT_TRUE(POLL(ts_events(&splits) >= 1, 6));
	EXPECT_EQ(1, decisions_on(&self->z, "split_underused", self->kpid, pfn));
	EXPECT_EQ(1, ts_events(&splits));
	splits.ok = true;
	EXPECT_EQ(1, ts_events(&splits)) TH_LOG("the split failed");
	EXPECT_LE(1, ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused") - split0);
	EXPECT_EQ(0, ts_smaps_kb(p, "AnonHugePages:"));
	bad = ts_check_pages(p, per, self->z.psz, ts_one_per_folio, (void *)&per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, self->z.pmd);
}

/*
 * A THP that is no longer mapped, but still held (a page of it in a
 * pipe), stays on its queue: kthpscand keeps it (keep_unmapped, nothing
 * scanned, nothing mapped) for its last user to free, and the data in
 * the pipe is intact.
 */
TEST_F_TIMEOUT(decide, keep_unmapped, 120)
{
	int nr, i, kept = 0, others = 0;
	char *p = ts_sparse_thps(&self->z, 1), *buf;
	struct ev_filter splits = { .split = true, .n = 1, .pid = self->kpid };
	unsigned long pfn;
	size_t off;

	ASSERT_NE(NULL, p);
	ASSERT_TRUE(check_huge_anon(p, 1, self->z.pmd));
	/* The THP's own events: other tasks' THPs may be judged meanwhile. */
	ASSERT_EQ(0, ts_pagemap_pfns(p, 1, &pfn));
	ASSERT_NE(0, pfn);
	ASSERT_EQ(0, splice_page(self->pipe, p, 7, self->z.psz));
	ASSERT_EQ(0, munmap(p, self->z.pmd));
	/* Due in 1 s, and again every second. */
	EXPECT_TRUE(POLL(decisions_on(&self->z, "keep_unmapped", self->kpid, pfn) > 0, 8));
	nr = ts_read_events(ev, MAX_EVENTS);
	for (i = 0; i < nr && i < MAX_EVENTS; i++) {
		struct thp_scan_event *e = &ev[i];

		if (e->pfn != pfn)
			continue;
		if (!e->split && !strcmp(e->decision, "keep_unmapped") &&
		    e->pid == self->kpid && !e->zero && !e->scanned && !e->mapped)
			kept++;
		else
			others++;
	}
	EXPECT_GE(kept, 1);
	/* Neither split nor tried: no split event, whatever its ret. */
	EXPECT_EQ(0, others) TH_LOG("events on the THP other than keep_unmapped");
	splits.pfns = &pfn;
	EXPECT_EQ(0, ts_events(&splits)) TH_LOG("a split tried");
	buf = malloc(self->z.psz);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ((ssize_t)self->z.psz, read(self->pipe[0], buf, self->z.psz));
	for (off = 0; off < self->z.psz; off++)
		if (buf[off] != ts_pattern(7, off))
			break;
	EXPECT_EQ(self->z.psz, off) TH_LOG("byte %zu from the pipe differs", off);
	free(buf);
}

/*
 * THPs made by khugepaged are judged like those made at fault: written
 * with no THP at fault (policy madvise, not yet madvised), then collapsed
 * by a fast khugepaged; kthpscand looks at each of them, found by pfn in
 * the trace, and keeps it (dense), and not before the minimum age (3 s):
 * a collapse that left the new folio unstamped (page[2]'s word as the
 * allocator left it) would have it judged at once.
 */
TEST_F_TIMEOUT(decide, collapse_judged, 120)
{
	const size_t nr = 2, per = self->z.per;
	unsigned long heads[2];
	struct ev_filter kept = {
		.decision = "keep_used", .pfns = heads, .n = nr, .pid = self->kpid,
	};
	struct trace_count c;
	struct thp_settings s;
	char *p;
	long bad;
	size_t i;

	thp_read_settings(&s);
	s.thp_enabled = THP_MADVISE;
	s.khugepaged.scan_sleep_millisecs = 100;
	s.khugepaged.alloc_sleep_millisecs = 100;
	s.khugepaged.pages_to_scan = per * 8;
	thp_write_settings(&s);
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "3000"));
	p = ts_map_aligned(nr * self->z.pmd, self->z.pmd);
	ASSERT_NE(NULL, p);
	/* Not madvised yet (ts_map_aligned() madvises, see the setup). */
	ASSERT_EQ(0, madvise(p, nr * self->z.pmd, MADV_NOHUGEPAGE));
	for (i = 0; i < nr * per; i++)
		ts_fill_page(p, i, self->z.psz);
	ASSERT_EQ(0, ts_smaps_kb(p, "AnonHugePages:"));
	ASSERT_EQ(0, madvise(p, nr * self->z.pmd, MADV_HUGEPAGE));
	/* khugepaged every 100 ms, the whole range at a time: 6 s for TCG. */
	ASSERT_TRUE(POLL(ts_smaps_kb(p, "AnonHugePages:") == (long)(nr * self->z.pmd_kb), 6))
		TH_LOG("%ld kB collapsed", ts_smaps_kb(p, "AnonHugePages:"));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->z.psz, heads));
	ASSERT_EQ((long)nr, ts_whole_folios(p, nr, per));
	/*
	 * Both collapsed in one pass of khugepaged, or two 0.1 s apart, at
	 * most a poll's step ago: neither is due for another 2.5 s.
	 */
	usleep(500 * 1000);
	EXPECT_EQ(0, ts_events(&(struct ev_filter){ .pfns = heads, .n = nr }))
		TH_LOG("a THP judged before its minimum age");
	EXPECT_TRUE(POLL(ts_pfns_seen(&kept) == nr, kthpscand_deadline(-1, 2)))
		ts_log_other_decisions(&kept, "keep_used", 8);
	ts_count_trace_pfns(self->z.order_pmd, "keep_used", self->kpid, heads, nr, &c);
	EXPECT_GE(c.decisions, (long)nr);
	EXPECT_EQ(per - per * 90 / 100, c.scanned);
	bad = ts_check_pages(p, nr * per, self->z.psz, ts_every_page, NULL);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * self->z.pmd);
}

THP_SCAN_HARNESS_MAIN
