/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for thp_scan, included at the end of mm/thp_scan.c so that
 * they reach its static functions.
 */

#ifdef CONFIG_THP_SCAN_KUNIT_TEST

#ifndef _THP_SCAN_KUNIT_H
#define _THP_SCAN_KUNIT_H

#include <kunit/test.h>
#include <linux/highmem.h>

/* "0" and "1", with or without the newline echo adds, are the only values. */
static void thp_scan_test_parse_bool_valid(struct kunit *test)
{
	bool val = true;

	KUNIT_EXPECT_EQ(test, 0, thp_scan_parse_bool("0", &val));
	KUNIT_EXPECT_FALSE(test, val);
	KUNIT_EXPECT_EQ(test, 0, thp_scan_parse_bool("1\n", &val));
	KUNIT_EXPECT_TRUE(test, val);
	KUNIT_EXPECT_EQ(test, 0, thp_scan_parse_bool("0\n", &val));
	KUNIT_EXPECT_FALSE(test, val);
	KUNIT_EXPECT_EQ(test, 0, thp_scan_parse_bool("1", &val));
	KUNIT_EXPECT_TRUE(test, val);
}

/* Anything else is -EINVAL and leaves the output untouched. */
static void thp_scan_test_parse_bool_invalid(struct kunit *test)
{
	static const char * const bad[] = {
		"", "\n", "2", "-1", "10", "on", "yes", "y", "1 1", "0x1",
		" 1", "1x", "4294967297",
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		bool val = true;

		KUNIT_EXPECT_EQ_MSG(test, -EINVAL,
				    thp_scan_parse_bool(bad[i], &val),
				    "input \"%s\"", bad[i]);
		KUNIT_EXPECT_TRUE_MSG(test, val, "input \"%s\"", bad[i]);
		val = false;
		thp_scan_parse_bool(bad[i], &val);
		KUNIT_EXPECT_FALSE_MSG(test, val, "input \"%s\"", bad[i]);
	}
}

/*
 * The store and show handlers round-trip a value, and a rejected write
 * changes nothing.  Restores the setting it found.
 */
static void thp_scan_test_enabled_store(struct kunit *test)
{
	bool saved = thp_scan_is_enabled();
	char *buf;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	KUNIT_EXPECT_EQ(test, 2, enabled_store(NULL, &enabled_attr, "0\n", 2));
	KUNIT_EXPECT_FALSE(test, thp_scan_is_enabled());
	KUNIT_EXPECT_EQ(test, 2, enabled_show(NULL, &enabled_attr, buf));
	KUNIT_EXPECT_STREQ(test, "0\n", buf);

	KUNIT_EXPECT_EQ(test, -EINVAL,
			enabled_store(NULL, &enabled_attr, "2\n", 2));
	KUNIT_EXPECT_FALSE(test, thp_scan_is_enabled());

	KUNIT_EXPECT_EQ(test, 1, enabled_store(NULL, &enabled_attr, "1", 1));
	KUNIT_EXPECT_TRUE(test, thp_scan_is_enabled());
	KUNIT_EXPECT_EQ(test, -EINVAL,
			enabled_store(NULL, &enabled_attr, "never", 5));
	KUNIT_EXPECT_TRUE(test, thp_scan_is_enabled());
	KUNIT_EXPECT_EQ(test, 2, enabled_show(NULL, &enabled_attr, buf));
	KUNIT_EXPECT_STREQ(test, "1\n", buf);

	thp_scan_set_enabled(saved);
}

/*
 * The scanner is on out of the box: at boot it is on unless thp_scan= on
 * the command line turned it off (a value that does not parse changes
 * nothing).
 */
static void thp_scan_test_enabled_default(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, thp_scan_boot_param != 0, thp_scan_is_enabled());
}

/*
 * One percentage, a limit per order: rounded down, so that small folios
 * are underused only when (nearly) all of their subpages are zero.
 */
static void thp_scan_test_max_zero(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 3u, thp_scan_max_zero(4, 90));
	KUNIT_EXPECT_EQ(test, 14u, thp_scan_max_zero(16, 90));
	KUNIT_EXPECT_EQ(test, 460u, thp_scan_max_zero(512, 90));
	KUNIT_EXPECT_EQ(test, 506u, thp_scan_max_zero(512, 99));
	KUNIT_EXPECT_EQ(test, 512u, thp_scan_max_zero(512, 100));
	KUNIT_EXPECT_EQ(test, 0u, thp_scan_max_zero(512, 0));
	KUNIT_EXPECT_EQ(test, 117964u, thp_scan_max_zero(131072, 90));
}

/* Write a non-zero byte into subpage @i of @folio. */
static void thp_scan_test_fill(struct folio *folio, unsigned int i)
{
	char *p = kmap_local_folio(folio, (size_t)i * PAGE_SIZE);

	p[PAGE_SIZE / 2] = 0x5a;
	kunmap_local(p);
}

KUNIT_DEFINE_ACTION_WRAPPER(thp_scan_test_folio_put, folio_put, struct folio *);

/*
 * A zeroed folio of @order that KUnit frees when the case ends, however
 * it ends; the case fails (and stops) if there is none.
 */
static struct folio *thp_scan_test_folio(struct kunit *test, unsigned int order)
{
	struct folio *folio;
	int err;

	folio = folio_alloc(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN, order);
	KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "order-%u folio", order);
	err = kunit_add_action_or_reset(test, thp_scan_test_folio_put, folio);
	KUNIT_ASSERT_EQ(test, 0, err);
	return folio;
}

/*
 * The zero scan on real folios of several orders: the decision at the
 * limit and one past it, and the early exits both ways (how many
 * subpages it had to look at).  Every folio is allocated before the
 * first expectation.
 */
static void thp_scan_test_zero_scan(struct kunit *test)
{
	static const unsigned int orders[] = { 2, 4, HPAGE_PMD_ORDER };
	struct folio *folios[ARRAY_SIZE(orders)][2];
	unsigned int k, i, scanned, zero;

	for (k = 0; k < ARRAY_SIZE(orders); k++) {
		folios[k][0] = thp_scan_test_folio(test, orders[k]);
		folios[k][1] = thp_scan_test_folio(test, orders[k]);
	}

	for (k = 0; k < ARRAY_SIZE(orders); k++) {
		unsigned int order = orders[k], nr = 1U << order;
		unsigned int max_zero = thp_scan_max_zero(nr, 90);
		struct folio *folio = folios[k][0];

		/* All zero: underused after max_zero + 1 subpages. */
		KUNIT_EXPECT_TRUE(test, thp_scan_zero_scan(folio, max_zero, &scanned, &zero));
		KUNIT_EXPECT_EQ_MSG(test, max_zero + 1, scanned, "order %u", order);
		KUNIT_EXPECT_EQ(test, max_zero + 1, zero);

		/* The last nr - max_zero subpages filled: exactly at the limit. */
		for (i = max_zero; i < nr; i++)
			thp_scan_test_fill(folio, i);
		KUNIT_EXPECT_FALSE(test, thp_scan_zero_scan(folio, max_zero, &scanned, &zero));
		KUNIT_EXPECT_EQ_MSG(test, nr, scanned, "order %u", order);
		KUNIT_EXPECT_EQ_MSG(test, max_zero, zero, "order %u", order);

		/* The first nr - max_zero filled too: used, known early. */
		for (i = 0; i < nr - max_zero; i++)
			thp_scan_test_fill(folio, i);
		KUNIT_EXPECT_FALSE(test, thp_scan_zero_scan(folio, max_zero, &scanned, &zero));
		KUNIT_EXPECT_EQ_MSG(test, nr - max_zero, scanned, "order %u", order);
		KUNIT_EXPECT_EQ_MSG(test, 0u, zero, "order %u", order);

		/* One filled subpage short of the limit, at the start: underused. */
		folio = folios[k][1];
		for (i = 0; i + 1 < nr - max_zero; i++)
			thp_scan_test_fill(folio, i);
		KUNIT_EXPECT_TRUE(test, thp_scan_zero_scan(folio, max_zero, &scanned, &zero));
		KUNIT_EXPECT_EQ_MSG(test, nr, scanned, "order %u", order);
		KUNIT_EXPECT_EQ_MSG(test, max_zero + 1, zero, "order %u", order);
	}
}

/* underused_zero_pct takes 0..100; anything else changes nothing. */
static void thp_scan_test_underused_zero_pct_store(struct kunit *test)
{
	unsigned int saved = READ_ONCE(thp_scan_underused_zero_pct);
	struct kobj_attribute *attr = &underused_zero_pct_attr.attr;
	char *buf;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	KUNIT_EXPECT_EQ(test, 3, thp_scan_uint_store(NULL, attr, "75\n", 3));
	KUNIT_EXPECT_EQ(test, -EINVAL, thp_scan_uint_store(NULL, attr, "101", 3));
	KUNIT_EXPECT_EQ(test, -EINVAL, thp_scan_uint_store(NULL, attr, "-1", 2));
	KUNIT_EXPECT_EQ(test, -EINVAL, thp_scan_uint_store(NULL, attr, "9x", 2));
	KUNIT_EXPECT_EQ(test, 3, thp_scan_uint_show(NULL, attr, buf));
	KUNIT_EXPECT_STREQ(test, "75\n", buf);
	KUNIT_EXPECT_EQ(test, 3, thp_scan_uint_store(NULL, attr, "100", 3));
	KUNIT_EXPECT_EQ(test, 100u, READ_ONCE(thp_scan_underused_zero_pct));

	WRITE_ONCE(thp_scan_underused_zero_pct, saved);
}

/*
 * A hardware-poisoned subpage is not read and counts as filled: an order-2
 * folio of zeroes is underused (4 zero subpages, 3 allowed), but with its
 * second subpage poisoned the scan knows it is used after two subpages
 * (one zero, one "filled": 3 zero can no longer be passed), and that
 * subpage alone is zero-filled no more.  The poison is only the page flag
 * here (CONFIG_MEMORY_FAILURE): nothing reads the page.
 */
static void thp_scan_test_zero_scan_hwpoison(struct kunit *test)
{
	struct folio *folio = thp_scan_test_folio(test, 2);
	struct page *poisoned = folio_page(folio, 1);
	unsigned int scanned, zero;
	bool under;

	KUNIT_EXPECT_TRUE(test, thp_scan_zero_scan(folio, 3, &scanned, &zero));
	KUNIT_EXPECT_EQ(test, 4u, zero);
	SetPageHWPoison(poisoned);
	KUNIT_EXPECT_FALSE(test, thp_scan_page_zero_filled(poisoned));
	KUNIT_EXPECT_TRUE(test, thp_scan_page_zero_filled(folio_page(folio, 0)));
	under = thp_scan_zero_scan(folio, 3, &scanned, &zero);
	ClearPageHWPoison(poisoned);
	KUNIT_EXPECT_FALSE(test, under);
	KUNIT_EXPECT_EQ(test, 1u, zero);
	KUNIT_EXPECT_EQ(test, 2u, scanned);
}

/* A zero scan that only counts its calls and says what it is told. */
static unsigned int thp_scan_test_zero_calls;
static bool thp_scan_test_zero_answer;

static bool thp_scan_test_zero_fake(struct folio *folio, unsigned int max_zero,
				    unsigned int *scanned, unsigned int *nr_zero)
{
	thp_scan_test_zero_calls++;
	*scanned = max_zero + 1;
	*nr_zero = thp_scan_test_zero_answer ? max_zero + 1 : 0;
	return thp_scan_test_zero_answer;
}

/*
 * An rmap walk that only counts its calls and reports the mappings it is
 * told: the subpages [map_from, map_to) of an order-9 folio, mlocked or
 * not, or contention.
 */
static unsigned int thp_scan_test_walk_calls;
static unsigned int thp_scan_test_map_from, thp_scan_test_map_to;
static bool thp_scan_test_walk_mlocked, thp_scan_test_walk_busy;
static DECLARE_BITMAP(thp_scan_test_bitmap, 512);

static unsigned long thp_scan_test_walk_orders = ~0UL;

static int thp_scan_test_walk_fake(struct folio *folio, struct thp_scan_walk *w)
{
	thp_scan_test_walk_calls++;
	if (thp_scan_test_walk_busy)
		return -EBUSY;
	w->orders &= thp_scan_test_walk_orders;
	w->mapped = thp_scan_test_bitmap;
	bitmap_zero(w->mapped, 512);
	bitmap_set(w->mapped, thp_scan_test_map_from,
		   thp_scan_test_map_to - thp_scan_test_map_from);
	w->nr_mapped = thp_scan_test_map_to - thp_scan_test_map_from;
	w->mlocked = thp_scan_test_walk_mlocked;
	return 0;
}

/*
 * The decision on facts: nothing is split that is unmapped or pinned; a
 * partial mapping, flagged or seen in the mapcounts, is split only once
 * the rmap walk confirms it, to the largest order its mapped part allows,
 * and a flag the walk refutes is dropped; a flag the mapcounts refute
 * needs no walk; contention keeps the folio; mlocked folios are never
 * split as underused, with or without a zero scan; and the probes run
 * only when they can change the answer.  With thp_scan off, 6.12's rules.
 */
static void thp_scan_test_decide(struct kunit *test)
{
	/* What the fake probes answer, and what must come out. */
	struct dcase {
		const char *name;
		struct thp_scan_facts f;
		bool zero_answer;
		unsigned int map_from, map_to;
		bool walk_mlocked, walk_busy;
		enum thp_scan_decision want;
		unsigned int new_order, zero_calls, walk_calls;
	};
	/* mapped, flagged, looks_partial, pinned, mlocked, swapcache, judge */
#define F(m, fl, lp, pin, ml, sc, j)					\
	{ .order = 9, .mapped = m, .flagged = fl, .looks_partial = lp,	\
	  .pinned = pin, .mlocked = ml, .swapcache = sc, .judge = j,	\
	  .max_zero = 460 }
	static const struct dcase cases[] = {
		{ "unmapped", F(0, 1, 0, 0, 0, 0, 1), true, 0, 0, 0, 0,
		  THP_SCAN_KEEP_UNMAPPED, 0, 0, 0 },
		{ "pinned and flagged", F(1, 1, 1, 1, 0, 0, 1), true, 0, 256, 0, 0,
		  THP_SCAN_KEEP_PINNED, 0, 0, 0 },
		{ "pinned and sparse", F(1, 0, 0, 1, 0, 0, 1), true, 0, 512, 0, 0,
		  THP_SCAN_KEEP_PINNED, 0, 0, 0 },
		{ "flag confirmed, first half", F(1, 1, 1, 0, 0, 0, 1), false, 0, 256, 0, 0,
		  THP_SCAN_SPLIT_PARTIAL, 8, 0, 1 },
		{ "flag confirmed, one 64K block", F(1, 1, 1, 0, 0, 0, 1), false, 16, 32, 0, 0,
		  THP_SCAN_SPLIT_PARTIAL, 4, 0, 1 },
		{ "flag confirmed, unaligned", F(1, 1, 1, 0, 0, 0, 1), false, 1, 300, 0, 0,
		  THP_SCAN_SPLIT_PARTIAL, 0, 0, 1 },
		{ "flag confirmed, in swap cache", F(1, 1, 1, 0, 0, 1, 1), false, 0, 256, 0, 0,
		  THP_SCAN_SPLIT_PARTIAL, 0, 0, 1 },
		{ "partial, mlocked", F(1, 1, 1, 0, 1, 0, 1), false, 0, 256, 1, 0,
		  THP_SCAN_SPLIT_PARTIAL, 8, 0, 1 },
		{ "unflagged, mapcounts say partial", F(1, 0, 1, 0, 0, 0, 1), false, 256, 512, 0, 0,
		  THP_SCAN_SPLIT_PARTIAL, 8, 0, 1 },
		{ "flag refuted by the walk", F(1, 1, 1, 0, 0, 0, 1), true, 0, 512, 0, 0,
		  THP_SCAN_KEEP_NOT_PARTIAL, 0, 0, 1 },
		{ "flag refuted by the mapcounts", F(1, 1, 0, 0, 0, 0, 1), true, 0, 512, 0, 0,
		  THP_SCAN_KEEP_NOT_PARTIAL, 0, 0, 0 },
		{ "walk finds nothing mapped", F(1, 1, 1, 0, 0, 0, 1), true, 0, 0, 0, 0,
		  THP_SCAN_KEEP_UNMAPPED, 0, 0, 1 },
		{ "walk contended", F(1, 1, 1, 0, 0, 0, 1), true, 0, 256, 0, 1,
		  THP_SCAN_KEEP_BUSY, 0, 0, 1 },
		{ "not judged", F(1, 0, 0, 0, 0, 0, 0), true, 0, 512, 0, 0,
		  THP_SCAN_KEEP_SKIPPED, 0, 0, 0 },
		{ "PG_mlocked", F(1, 0, 0, 0, 1, 0, 1), true, 0, 512, 0, 0,
		  THP_SCAN_KEEP_MLOCKED, 0, 0, 0 },
		{ "used", F(1, 0, 0, 0, 0, 0, 1), false, 0, 512, 0, 0,
		  THP_SCAN_KEEP_USED, 0, 1, 0 },
		{ "underused", F(1, 0, 0, 0, 0, 0, 1), true, 0, 512, 0, 0,
		  THP_SCAN_SPLIT_UNDERUSED, 0, 1, 1 },
		{ "underused in a VM_LOCKED VMA", F(1, 0, 0, 0, 0, 0, 1), true, 0, 512, 1, 0,
		  THP_SCAN_KEEP_MLOCKED, 0, 1, 1 },
		{ "underused, walk contended", F(1, 0, 0, 0, 0, 0, 1), true, 0, 512, 0, 1,
		  THP_SCAN_KEEP_BUSY, 0, 1, 1 },
	};
#undef F
	static const struct thp_scan_probes probes = {
		.zero_scan = thp_scan_test_zero_fake,
		.rmap_walk = thp_scan_test_walk_fake,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct dcase *c = &cases[i];
		struct thp_scan_walk w = { };
		struct thp_scan_verdict v;

		thp_scan_test_zero_calls = 0;
		thp_scan_test_walk_calls = 0;
		thp_scan_test_zero_answer = c->zero_answer;
		thp_scan_test_map_from = c->map_from;
		thp_scan_test_map_to = c->map_to;
		thp_scan_test_walk_mlocked = c->walk_mlocked;
		thp_scan_test_walk_busy = c->walk_busy;
		thp_scan_decide(&c->f, NULL, &probes, &w, &v);
		KUNIT_EXPECT_EQ_MSG(test, c->want, v.d, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, c->new_order, v.new_order, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, c->zero_calls, thp_scan_test_zero_calls,
				    "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, c->walk_calls, thp_scan_test_walk_calls,
				    "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, c->zero_calls * 461, v.scanned, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, !!c->walk_calls, v.walked, "%s", c->name);
	}
}

/*
 * thp_scan off: the deferred split shrinker decides as 6.12's did, no
 * walk: flagged folios split, the rest judged by the stock rule.
 */
static void thp_scan_test_decide_stock(struct kunit *test)
{
	static const struct thp_scan_probes probes = {
		.zero_scan = thp_scan_test_zero_fake,
		.rmap_walk = thp_scan_test_walk_fake,
	};
	struct thp_scan_facts f = {
		.order = 9, .stock = true, .mapped = true, .flagged = true,
		.looks_partial = false, .pinned = true, .judge = true,
	};
	struct thp_scan_walk w = { };
	struct thp_scan_verdict v;

	thp_scan_test_walk_calls = 0;
	thp_scan_test_zero_calls = 0;
	thp_scan_test_zero_answer = true;
	thp_scan_decide(&f, NULL, &probes, &w, &v);
	KUNIT_EXPECT_EQ(test, THP_SCAN_SPLIT_PARTIAL, v.d);
	KUNIT_EXPECT_EQ(test, 0u, v.new_order);
	f.flagged = false;
	thp_scan_decide(&f, NULL, &probes, &w, &v);
	KUNIT_EXPECT_EQ(test, THP_SCAN_SPLIT_UNDERUSED, v.d);
	thp_scan_test_zero_answer = false;
	thp_scan_decide(&f, NULL, &probes, &w, &v);
	KUNIT_EXPECT_EQ(test, THP_SCAN_KEEP_USED, v.d);
	f.judge = false;
	thp_scan_decide(&f, NULL, &probes, &w, &v);
	KUNIT_EXPECT_EQ(test, THP_SCAN_KEEP_SKIPPED, v.d);
	KUNIT_EXPECT_EQ(test, 0u, thp_scan_test_walk_calls);
	KUNIT_EXPECT_EQ(test, 2u, thp_scan_test_zero_calls);
}

/*
 * The split at swap-out decides by its mode: "never" keeps a folio and
 * "always" splits it, neither with a probe; "underused" splits what the
 * zero scan finds underused and keeps what it finds used, and keeps a
 * folio with a hardware-poisoned subpage without a zero scan, as
 * kthpscand does (the flag only, CONFIG_MEMORY_FAILURE: nothing reads the
 * page).  The folio is mapped nowhere, so no walk either.
 */
static void thp_scan_test_swapout_decide(struct kunit *test)
{
	static const struct thp_scan_probes probes = {
		.zero_scan = thp_scan_test_zero_fake,
		.rmap_walk = thp_scan_test_walk_fake,
	};
	struct folio *folio = thp_scan_test_folio(test, 2);
	struct thp_scan_walk w = { };
	struct thp_scan_verdict v;
	enum thp_scan_decision d;

	thp_scan_test_zero_calls = 0;
	thp_scan_test_walk_calls = 0;
	thp_scan_test_zero_answer = true;
	d = thp_scan_swapout_decide(THP_SCAN_SWAPOUT_NEVER, folio, &probes, &w, &v);
	KUNIT_EXPECT_EQ(test, THP_SCAN_KEEP_SKIPPED, d);
	d = thp_scan_swapout_decide(THP_SCAN_SWAPOUT_ALWAYS, folio, &probes, &w, &v);
	KUNIT_EXPECT_EQ(test, THP_SCAN_SPLIT_UNDERUSED, d);
	KUNIT_EXPECT_EQ(test, 0u, thp_scan_test_zero_calls);
	d = thp_scan_swapout_decide(THP_SCAN_SWAPOUT_UNDERUSED, folio, &probes, &w, &v);
	KUNIT_EXPECT_EQ(test, THP_SCAN_SPLIT_UNDERUSED, d);
	thp_scan_test_zero_answer = false;
	d = thp_scan_swapout_decide(THP_SCAN_SWAPOUT_UNDERUSED, folio, &probes, &w, &v);
	KUNIT_EXPECT_EQ(test, THP_SCAN_KEEP_USED, d);
	KUNIT_EXPECT_EQ(test, 2u, thp_scan_test_zero_calls);

	thp_scan_test_zero_answer = true;
	folio_set_has_hwpoisoned(folio);
	d = thp_scan_swapout_decide(THP_SCAN_SWAPOUT_UNDERUSED, folio, &probes, &w, &v);
	folio_clear_has_hwpoisoned(folio);
	KUNIT_EXPECT_EQ(test, THP_SCAN_KEEP_SKIPPED, d);
	KUNIT_EXPECT_EQ(test, 2u, thp_scan_test_zero_calls);
	KUNIT_EXPECT_EQ(test, 0u, thp_scan_test_walk_calls);
	KUNIT_EXPECT_FALSE(test, v.walked);
}

/*
 * The split order from a bitmap of mapped subpages: the largest order at
 * which every aligned block is mapped whole or not at all.
 */
static void thp_scan_test_split_order(struct kunit *test)
{
	static const struct {
		unsigned int order, from, to, want;
	} cases[] = {
		{ 9, 0, 256, 8 }, { 9, 256, 512, 8 }, { 9, 0, 128, 7 },
		{ 9, 128, 384, 7 }, { 9, 0, 4, 2 }, { 9, 4, 8, 2 },
		{ 9, 0, 3, 0 }, { 9, 2, 4, 0 }, { 9, 1, 511, 0 },
		{ 4, 0, 8, 3 }, { 4, 0, 4, 2 }, { 4, 8, 12, 2 }, { 4, 0, 2, 0 },
		{ 2, 0, 2, 0 }, { 3, 0, 4, 2 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		bitmap_zero(thp_scan_test_bitmap, 512);
		bitmap_set(thp_scan_test_bitmap, cases[i].from, cases[i].to - cases[i].from);
		KUNIT_EXPECT_EQ_MSG(test, cases[i].want,
				    thp_scan_split_order(thp_scan_test_bitmap, cases[i].order),
				    "order %u, [%u, %u) mapped", cases[i].order,
				    cases[i].from, cases[i].to);
	}
	/* Two mapped blocks of 64 apart: order 6. */
	bitmap_zero(thp_scan_test_bitmap, 512);
	bitmap_set(thp_scan_test_bitmap, 64, 64);
	bitmap_set(thp_scan_test_bitmap, 256, 64);
	KUNIT_EXPECT_EQ(test, 6u, thp_scan_split_order(thp_scan_test_bitmap, 9));
}

/* Mark subpages [@from, @to) of @zero zero-filled. */
static void thp_scan_test_zero_range(unsigned long *zero, unsigned int from,
				     unsigned int to)
{
	bitmap_set(zero, from, to - from);
}

/*
 * The order that keeps the dense parts: the one whose dense blocks (at
 * most one zero subpage in 8) hold the most data, the larger on a tie,
 * only of the orders given, and none when the data is spread too thin;
 * with what the split would free.
 */
static void thp_scan_test_dense_order(struct kunit *test)
{
	static const struct {
		const char *name;
		unsigned int order;
		unsigned int zero[2][2];	/* zero-filled ranges */
		unsigned long orders;
		unsigned int want, freed;
	} cases[] = {
		{ "512K dense", 9, { { 128, 512 } }, BIT(4) | BIT(7), 7, 384 },
		{ "512K dense, 64K only", 9, { { 128, 512 } }, BIT(4), 4, 384 },
		{ "512K dense, no order", 9, { { 128, 512 } }, 0, 0, 0 },
		{ "512K dense, 1M only", 9, { { 128, 512 } }, BIT(8), 0, 0 },
		{ "16K dense", 9, { { 4, 512 } }, BIT(2) | BIT(4), 2, 508 },
		{ "a 64K hole", 9, { { 16, 32 } }, BIT(4) | BIT(7), 7, 0 },
		{ "two zero in 64K", 9, { { 0, 2 }, { 16, 512 } }, BIT(4), 4, 496 },
		{ "three zero in 64K", 9, { { 0, 3 }, { 16, 512 } }, BIT(4), 0, 0 },
		{ "64K, 2 of 16 written", 4, { { 2, 16 } }, BIT(2) | BIT(3), 0, 0 },
		{ "64K, first half", 4, { { 8, 16 } }, BIT(2) | BIT(3), 3, 8 },
		{ "16K: nothing below", 2, { { 2, 4 } }, BIT(2), 0, 0 },
		{ "all dense", 9, { }, BIT(4) | BIT(8), 8, 0 },
	};
	unsigned int i, j, freed;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		bitmap_zero(thp_scan_test_bitmap, 512);
		for (j = 0; j < 2; j++)
			thp_scan_test_zero_range(thp_scan_test_bitmap,
						 cases[i].zero[j][0],
						 cases[i].zero[j][1]);
		KUNIT_EXPECT_EQ_MSG(test, cases[i].want,
				    thp_scan_dense_order(thp_scan_test_bitmap,
							 cases[i].order,
							 cases[i].orders, &freed),
				    "%s", cases[i].name);
		KUNIT_EXPECT_EQ_MSG(test, cases[i].freed, freed, "%s",
				    cases[i].name);
	}
	/* Every other subpage zero: no block of 16K or more is dense. */
	bitmap_zero(thp_scan_test_bitmap, 512);
	for (j = 0; j < 512; j += 2)
		__set_bit(j, thp_scan_test_bitmap);
	KUNIT_EXPECT_EQ(test, 0u, thp_scan_dense_order(thp_scan_test_bitmap, 9,
						       GENMASK(8, 2), &freed));
	KUNIT_EXPECT_EQ(test, 0u, freed);
}

/* A zero map that reports thp_scan_test_zero_bits, for 512 subpages. */
static DECLARE_BITMAP(thp_scan_test_zero_bits, 512);
static unsigned int thp_scan_test_map_calls;

static bool thp_scan_test_zero_map_fake(struct folio *folio, unsigned int need,
					unsigned long *zero,
					unsigned int *scanned,
					unsigned int *nr_zero)
{
	thp_scan_test_map_calls++;
	bitmap_copy(zero, thp_scan_test_zero_bits, 512);
	*nr_zero = bitmap_weight(zero, 512);
	*scanned = 512;
	return *nr_zero >= need;
}

/*
 * The decision with split_keep_dense (64K and 512K allowed, 50 % to
 * free): an underused THP is split to the order that keeps its dense
 * parts, or to base pages when they are spread thin; a used one only
 * when keeping its dense parts frees enough; the VMAs can narrow the
 * orders (to none: a used THP is then kept); the walk still guards
 * against mlocked mappings and contention, and runs only before a split.
 */
static void thp_scan_test_decide_dense(struct kunit *test)
{
	static const struct {
		const char *name;
		unsigned int zero[2][2];
		unsigned long walk_orders;
		bool walk_mlocked, walk_busy;
		enum thp_scan_decision want;
		unsigned int new_order, walk_calls;
	} cases[] = {
		{ "512K dense, 75 % zero", { { 128, 512 } }, ~0UL, 0, 0,
		  THP_SCAN_SPLIT_ZERO_RUNS, 7, 1 },
		{ "half dense", { { 256, 512 } }, ~0UL, 0, 0,
		  THP_SCAN_SPLIT_ZERO_RUNS, 7, 1 },
		{ "512K dense, VMA allows 64K", { { 128, 512 } }, BIT(4), 0, 0,
		  THP_SCAN_SPLIT_ZERO_RUNS, 4, 1 },
		{ "512K dense, VMA allows none", { { 128, 512 } }, 0, 0, 0,
		  THP_SCAN_KEEP_USED, 0, 1 },
		{ "64K dense, underused", { { 16, 512 } }, ~0UL, 0, 0,
		  THP_SCAN_SPLIT_UNDERUSED, 4, 1 },
		{ "64K dense, underused, VMA allows none", { { 16, 512 } }, 0, 0, 0,
		  THP_SCAN_SPLIT_UNDERUSED, 0, 1 },
		{ "spread thin, underused", { { 1, 64 }, { 65, 512 } }, ~0UL, 0, 0,
		  THP_SCAN_SPLIT_UNDERUSED, 0, 1 },
		{ "a 64K hole", { { 16, 32 } }, ~0UL, 0, 0,
		  THP_SCAN_KEEP_USED, 0, 0 },
		{ "quarter zero", { { 384, 512 } }, ~0UL, 0, 0,
		  THP_SCAN_KEEP_USED, 0, 0 },
		{ "512K dense, mlocked mapping", { { 128, 512 } }, ~0UL, 1, 0,
		  THP_SCAN_KEEP_MLOCKED, 0, 1 },
		{ "512K dense, walk contended", { { 128, 512 } }, ~0UL, 0, 1,
		  THP_SCAN_KEEP_BUSY, 0, 1 },
	};
	static const struct thp_scan_probes probes = {
		.zero_scan = thp_scan_test_zero_fake,
		.rmap_walk = thp_scan_test_walk_fake,
		.zero_map = thp_scan_test_zero_map_fake,
	};
	unsigned long *zero;
	unsigned int i, j;

	zero = kunit_kzalloc(test, BITS_TO_LONGS(512) * sizeof(long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, zero);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct thp_scan_facts f = {
			.order = 9, .mapped = true, .judge = true,
			.max_zero = 460, .dense_orders = BIT(4) | BIT(7),
			.min_free = 256, .zero = zero,
		};
		struct thp_scan_walk w = { };
		struct thp_scan_verdict v;

		bitmap_zero(thp_scan_test_zero_bits, 512);
		for (j = 0; j < 2; j++)
			thp_scan_test_zero_range(thp_scan_test_zero_bits,
						 cases[i].zero[j][0],
						 cases[i].zero[j][1]);
		thp_scan_test_zero_calls = 0;
		thp_scan_test_map_calls = 0;
		thp_scan_test_walk_calls = 0;
		thp_scan_test_map_from = 0;
		thp_scan_test_map_to = 512;
		thp_scan_test_walk_orders = cases[i].walk_orders;
		thp_scan_test_walk_mlocked = cases[i].walk_mlocked;
		thp_scan_test_walk_busy = cases[i].walk_busy;
		thp_scan_decide(&f, NULL, &probes, &w, &v);
		KUNIT_EXPECT_EQ_MSG(test, cases[i].want, v.d, "%s", cases[i].name);
		KUNIT_EXPECT_EQ_MSG(test, cases[i].new_order, v.new_order, "%s",
				    cases[i].name);
		KUNIT_EXPECT_EQ_MSG(test, cases[i].walk_calls,
				    thp_scan_test_walk_calls, "%s", cases[i].name);
		KUNIT_EXPECT_EQ_MSG(test, 1u, thp_scan_test_map_calls, "%s",
				    cases[i].name);
		KUNIT_EXPECT_EQ_MSG(test, 0u, thp_scan_test_zero_calls, "%s",
				    cases[i].name);
		KUNIT_EXPECT_EQ_MSG(test, bitmap_weight(thp_scan_test_zero_bits, 512),
				    v.zero, "%s", cases[i].name);
	}
	thp_scan_test_walk_orders = ~0UL;
	thp_scan_test_walk_mlocked = false;
	thp_scan_test_walk_busy = false;
}

/*
 * The zero map on a real 64K folio: every zero-filled subpage marked when
 * enough of them can be, and an early stop as soon as they cannot.
 */
static void thp_scan_test_zero_map(struct kunit *test)
{
	struct folio *folio = thp_scan_test_folio(test, 4);
	unsigned int scanned, nr_zero;
	unsigned long *zero;

	zero = kunit_kzalloc(test, sizeof(long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, zero);
	thp_scan_test_fill(folio, 0);
	thp_scan_test_fill(folio, 1);
	thp_scan_test_fill(folio, 5);
	KUNIT_EXPECT_TRUE(test, thp_scan_zero_map(folio, 1, zero, &scanned, &nr_zero));
	KUNIT_EXPECT_EQ(test, 16u, scanned);
	KUNIT_EXPECT_EQ(test, 13u, nr_zero);
	KUNIT_EXPECT_EQ(test, 0xffdcUL, *zero);
	KUNIT_EXPECT_TRUE(test, thp_scan_zero_map(folio, 13, zero, &scanned, &nr_zero));
	KUNIT_EXPECT_EQ(test, 16u, scanned);
	/* 14 cannot be: known once subpage 5 is seen filled. */
	KUNIT_EXPECT_FALSE(test, thp_scan_zero_map(folio, 14, zero, &scanned, &nr_zero));
	KUNIT_EXPECT_EQ(test, 6u, scanned);
	KUNIT_EXPECT_EQ(test, 3u, nr_zero);
}

/*
 * A private lruvec for the walk tests below: its lists and its lock, with
 * folios that are not mapped, put on the lists by hand, oldest first.
 * The folios look anonymous to the walk (the anon bit in ->mapping).
 */
struct thp_scan_test_lru {
	struct lruvec lruvec;
	struct folio *folio[24];
	enum lru_list lru[24];
	unsigned int nr;
};

/*
 * Empty @data, a struct thp_scan_test_lru: take every folio off its list
 * and free it.  Run by KUnit when the case ends, however it ends.
 */
static void thp_scan_test_lru_drain(void *data)
{
	struct thp_scan_test_lru *tl = data;
	unsigned int i;

	spin_lock_irq(&tl->lruvec.lru_lock);
	for (i = 0; i < tl->nr; i++)
		list_del(&tl->folio[i]->lru);
	spin_unlock_irq(&tl->lruvec.lru_lock);
	for (i = 0; i < tl->nr; i++) {
		struct folio *folio = tl->folio[i];

		if (folio_test_large(folio))
			folio_clear_partially_mapped(folio);
		folio->mapping = NULL;
		folio_put(folio);
	}
	tl->nr = 0;
}

static struct thp_scan_test_lru *thp_scan_test_lru(struct kunit *test)
{
	struct thp_scan_test_lru *tl = kunit_kzalloc(test, sizeof(*tl), GFP_KERNEL);
	int err;

	KUNIT_ASSERT_NOT_NULL(test, tl);
	lruvec_init(&tl->lruvec);
	/* Added after the allocation, so run before it is freed. */
	err = kunit_add_action_or_reset(test, thp_scan_test_lru_drain, tl);
	KUNIT_ASSERT_EQ(test, 0, err);
	return tl;
}

/*
 * Put a new folio of @order on list @lru of @tl, as the newest, stamped
 * @age jiffies ago and judged (@kept) or not; anonymous unless @file.
 * The case fails (and stops) if there is none.  Every case adds all of
 * its folios before its first expectation.
 */
static struct folio *thp_scan_test_lru_add(struct kunit *test,
					   struct thp_scan_test_lru *tl,
					   unsigned int order, enum lru_list lru,
					   unsigned long age, bool kept)
{
	struct folio *folio = folio_alloc(GFP_KERNEL | __GFP_NOWARN, order);

	KUNIT_ASSERT_NOT_NULL_MSG(test, folio, "order-%u folio", order);
	KUNIT_ASSERT_LT(test, tl->nr, ARRAY_SIZE(tl->folio));
	folio->mapping = (void *)PAGE_MAPPING_ANON;
	if (order >= THP_SCAN_MIN_ORDER)
		folio->_thp_scan_stamp = ((jiffies - age) & ~THP_SCAN_STAMP_KEPT) |
					 (kept ? THP_SCAN_STAMP_KEPT : 0);
	spin_lock_irq(&tl->lruvec.lru_lock);
	list_add(&folio->lru, &tl->lruvec.lists[lru]);
	spin_unlock_irq(&tl->lruvec.lru_lock);
	tl->lru[tl->nr] = lru;
	tl->folio[tl->nr++] = folio;
	return folio;
}

/* One step of a walk of @tl from @pos, under its lock. */
static bool thp_scan_test_step(struct thp_scan_test_lru *tl,
			       struct thp_scan_pos *pos,
			       struct thp_scan_round *r, struct thp_scan_batch *b,
			       unsigned long *young)
{
	struct folio *cursor = thp_scan_pos_get(pos);
	bool over;

	spin_lock_irq(&tl->lruvec.lru_lock);
	over = thp_scan_walk_step(&tl->lruvec, pos, r, b, young, cursor);
	spin_unlock_irq(&tl->lruvec.lru_lock);
	if (cursor)
		folio_put(cursor);
	return over;
}

/* Drop the references a walk took. */
static void thp_scan_test_batch_put(struct thp_scan_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->nr; i++)
		folio_put(b->folio[i]);
	b->nr = 0;
}

/*
 * Priority and LRU order: a walk visits the inactive anon list and then
 * the active one, each oldest first, takes the anon folios of order 2
 * and more that are due, with a reference, and passes small, file and
 * young folios by; a batch is judged from the largest order down, in LRU
 * order within an order.  The pass ends with the lists.
 */
static void thp_scan_test_walk_order(struct kunit *test)
{
	static const struct {
		unsigned int order;
		enum lru_list lru;
		bool file;
	} add[] = {
		{ 2, LRU_INACTIVE_ANON }, { 4, LRU_INACTIVE_ANON },
		{ 0, LRU_INACTIVE_ANON }, { 6, LRU_INACTIVE_ANON },
		{ 4, LRU_ACTIVE_ANON }, { 4, LRU_INACTIVE_ANON, true },
		{ 2, LRU_ACTIVE_ANON },
	};
	/* The indexes into add[] in the order the walk must take them ... */
	static const unsigned int walked[] = { 0, 1, 3, 4, 6 };
	/* ... and in the order the batch is judged. */
	static const unsigned int judged[] = { 3, 1, 4, 0, 6 };
	struct thp_scan_test_lru *tl = thp_scan_test_lru(test);
	struct thp_scan_round r = {
		.budget = 100, .nr_folios = ULONG_MAX, .visits = ULONG_MAX,
		.min_age = 50, .new_age = 50,
	};
	struct thp_scan_pos pos = { };
	struct thp_scan_batch b = { };
	unsigned long young = jiffies;
	struct folio *folios[ARRAY_SIZE(add)];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(add); i++) {
		folios[i] = thp_scan_test_lru_add(test, tl, add[i].order,
						  add[i].lru, 100, false);
		if (add[i].file)
			folios[i]->mapping = NULL;
	}

	KUNIT_EXPECT_TRUE(test, thp_scan_test_step(tl, &pos, &r, &b, &young));
	KUNIT_ASSERT_EQ(test, ARRAY_SIZE(walked), b.nr);
	for (i = 0; i < b.nr; i++) {
		KUNIT_EXPECT_PTR_EQ_MSG(test, folios[walked[i]], b.folio[i],
					"walked %u", i);
		KUNIT_EXPECT_EQ(test, 2, folio_ref_count(b.folio[i]));
	}
	/* Seven entries visited: one unit of the budget. */
	KUNIT_EXPECT_EQ(test, 99, r.budget);
	thp_scan_batch_sort(&b);
	for (i = 0; i < b.nr; i++)
		KUNIT_EXPECT_PTR_EQ_MSG(test, folios[judged[i]], b.folio[i],
					"judged %u", i);
	thp_scan_test_batch_put(&b);
}

/*
 * A folio younger than its minimum age is passed by, and the walk learns
 * when it was stamped; a judged folio waits min_age, a new one new_age; a
 * stamp in the future, which only a folio never stamped has, is due at
 * once; a partially mapped folio is left to its queue.
 */
static void thp_scan_test_walk_age(struct kunit *test)
{
	struct thp_scan_test_lru *tl = thp_scan_test_lru(test);
	struct thp_scan_round r = {
		.budget = 100, .nr_folios = ULONG_MAX, .visits = ULONG_MAX,
		.min_age = 100 * HZ, .new_age = 10 * HZ,
	};
	struct folio *young_new = thp_scan_test_lru_add(test, tl, 4, LRU_INACTIVE_ANON,
							5 * HZ, false);
	struct folio *old_new = thp_scan_test_lru_add(test, tl, 4, LRU_INACTIVE_ANON,
						      20 * HZ, false);
	struct folio *young_kept = thp_scan_test_lru_add(test, tl, 4, LRU_INACTIVE_ANON,
							 20 * HZ, true);
	struct folio *old_kept = thp_scan_test_lru_add(test, tl, 4, LRU_INACTIVE_ANON,
						       200 * HZ, true);
	struct folio *future = thp_scan_test_lru_add(test, tl, 4, LRU_INACTIVE_ANON,
						     0, false);
	struct folio *partial = thp_scan_test_lru_add(test, tl, 4, LRU_INACTIVE_ANON,
						      200 * HZ, false);
	struct thp_scan_pos pos = { };
	struct thp_scan_batch b = { };
	unsigned long young = jiffies;

	future->_thp_scan_stamp = (jiffies + 1000 * HZ) & ~THP_SCAN_STAMP_KEPT;
	folio_set_partially_mapped(partial);

	KUNIT_EXPECT_TRUE(test, thp_scan_test_step(tl, &pos, &r, &b, &young));
	KUNIT_ASSERT_EQ(test, 3u, b.nr);
	KUNIT_EXPECT_PTR_EQ(test, old_new, b.folio[0]);
	KUNIT_EXPECT_PTR_EQ(test, old_kept, b.folio[1]);
	KUNIT_EXPECT_PTR_EQ(test, future, b.folio[2]);
	/* The oldest of the two young ones. */
	KUNIT_EXPECT_EQ(test, thp_scan_stamp_time(young_kept->_thp_scan_stamp), young);
	KUNIT_EXPECT_EQ(test, 1, folio_ref_count(young_new));
	thp_scan_test_batch_put(&b);
}

/*
 * A walk stops after THP_SCAN_WALK entries, with a full batch, or at its
 * round's visits, and says where to go on: the next folio to visit, or
 * the start of the next list; a position whose folio is no longer on the
 * list starts that list again from its oldest (nothing is skipped).
 */
static void thp_scan_test_walk_resume(struct kunit *test)
{
	struct thp_scan_test_lru *tl = thp_scan_test_lru(test);
	struct thp_scan_round r = {
		.budget = 100, .nr_folios = ULONG_MAX, .visits = 3,
		.min_age = 1, .new_age = 1,
	};
	struct folio *folios[THP_SCAN_BATCH + 3];
	struct thp_scan_pos pos = { };
	struct thp_scan_batch b = { };
	unsigned long young = jiffies;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(folios); i++)
		folios[i] = thp_scan_test_lru_add(test, tl, 2, LRU_INACTIVE_ANON,
						  HZ, false);

	/* Three visits: the fourth oldest is next. */
	KUNIT_EXPECT_FALSE(test, thp_scan_test_step(tl, &pos, &r, &b, &young));
	KUNIT_EXPECT_EQ(test, 3u, b.nr);
	KUNIT_EXPECT_EQ(test, 0ul, r.visits);
	KUNIT_EXPECT_EQ(test, THP_SCAN_LIST_INACTIVE, pos.list);
	KUNIT_EXPECT_EQ(test, folio_pfn(folios[3]), pos.pfn);
	thp_scan_test_batch_put(&b);

	/*
	 * The fourth is not on the private lruvec's lists as far as the walk
	 * can tell (no folio has PG_lru, and none is charged to this
	 * lruvec): the list is walked again from its oldest, until the
	 * batch is full.
	 */
	r.visits = ULONG_MAX;
	KUNIT_EXPECT_FALSE(test, thp_scan_test_step(tl, &pos, &r, &b, &young));
	KUNIT_EXPECT_EQ(test, THP_SCAN_BATCH, b.nr);
	KUNIT_EXPECT_PTR_EQ(test, folios[0], b.folio[0]);
	KUNIT_EXPECT_EQ(test, folio_pfn(folios[THP_SCAN_BATCH]), pos.pfn);
	thp_scan_test_batch_put(&b);

	/* The end of the list: on to the next one, and the pass is over. */
	thp_scan_pos_reset(&pos);
	pos.list = THP_SCAN_LIST_ACTIVE;
	KUNIT_EXPECT_TRUE(test, thp_scan_test_step(tl, &pos, &r, &b, &young));
	KUNIT_EXPECT_EQ(test, 0u, b.nr);
	KUNIT_EXPECT_NULL(test, thp_scan_pos_list(&tl->lruvec, &pos));
}

/* Put thp_scan/enabled back as the test found it. */
static void thp_scan_test_restore_enabled(void *saved)
{
	thp_scan_set_enabled(saved);
}

/*
 * A batch is judged from the largest order down: a folio whose lock
 * someone else holds is kept as it is (keep_locked), its reference
 * dropped, one unit of the budget charged; the others are judged (not
 * mapped: kept, and stamped as judged now).  A budget spent leaves the
 * rest, references dropped, and says so.
 */
static void thp_scan_test_batch_judge(struct kunit *test)
{
	struct thp_scan_test_lru *tl = thp_scan_test_lru(test);
	struct thp_scan_round r = {
		.budget = 100, .nr_folios = ULONG_MAX, .visits = ULONG_MAX,
		.min_age = 1, .new_age = 1,
	};
	struct folio *small = thp_scan_test_lru_add(test, tl, 2, LRU_INACTIVE_ANON,
						    HZ, false);
	struct folio *locked = thp_scan_test_lru_add(test, tl, 4, LRU_INACTIVE_ANON,
						     HZ, false);
	struct folio *large = thp_scan_test_lru_add(test, tl, 6, LRU_INACTIVE_ANON,
						    HZ, false);
	unsigned long before = jiffies, locked_stamp = locked->_thp_scan_stamp;
	void *was_on = thp_scan_is_enabled() ? test : NULL;
	struct thp_scan_batch b = { };
	unsigned int i;
	int err;

	/* Judged as with thp_scan on, whatever thp_scan= said at boot. */
	err = kunit_add_action_or_reset(test, thp_scan_test_restore_enabled, was_on);
	KUNIT_ASSERT_EQ(test, 0, err);
	thp_scan_set_enabled(true);
	KUNIT_ASSERT_TRUE(test, folio_trylock(locked));
	b.folio[b.nr++] = small;
	b.folio[b.nr++] = locked;
	b.folio[b.nr++] = large;
	for (i = 0; i < b.nr; i++)
		folio_get(b.folio[i]);
	KUNIT_EXPECT_TRUE(test, thp_scan_batch(&b, &r));
	folio_unlock(locked);
	/* Three taken, two judged (a unit each, unmapped), one locked. */
	KUNIT_EXPECT_EQ(test, 3ul, r.taken);
	KUNIT_EXPECT_EQ(test, 97, r.budget);
	KUNIT_EXPECT_EQ(test, locked_stamp, locked->_thp_scan_stamp);
	for (i = 0; i < tl->nr; i++) {
		struct folio *folio = tl->folio[i];

		KUNIT_EXPECT_EQ(test, 1, folio_ref_count(folio));
		KUNIT_EXPECT_FALSE(test, folio_test_locked(folio));
		if (folio == locked)
			continue;
		KUNIT_EXPECT_TRUE(test, thp_scan_is_kept(folio->_thp_scan_stamp));
		KUNIT_EXPECT_TRUE(test, time_in_range(thp_scan_stamp_time(folio->_thp_scan_stamp),
						      before - 1, jiffies));
	}

	/* One unit left: the largest is judged, the rest left. */
	r.budget = 1;
	b.nr = 0;
	b.folio[b.nr++] = small;
	b.folio[b.nr++] = large;
	for (i = 0; i < b.nr; i++)
		folio_get(b.folio[i]);
	KUNIT_EXPECT_FALSE(test, thp_scan_batch(&b, &r));
	KUNIT_EXPECT_EQ(test, 0, r.budget);
	KUNIT_EXPECT_EQ(test, 1, folio_ref_count(small));
	KUNIT_EXPECT_EQ(test, 1, folio_ref_count(large));
}

/*
 * The order a pass goes through the lists: inactive, active, then (with
 * the multi-gen LRU) every zone of every generation from the oldest; a
 * position in a retired generation moves to the oldest one.
 */
static void thp_scan_test_pos_lists(struct kunit *test)
{
	struct thp_scan_test_lru *tl = thp_scan_test_lru(test);
	struct lruvec *lruvec = &tl->lruvec;
	struct thp_scan_pos pos = { };

	KUNIT_EXPECT_PTR_EQ(test, &lruvec->lists[LRU_INACTIVE_ANON],
			    thp_scan_pos_list(lruvec, &pos));
	thp_scan_pos_next_list(&pos);
	KUNIT_EXPECT_PTR_EQ(test, &lruvec->lists[LRU_ACTIVE_ANON],
			    thp_scan_pos_list(lruvec, &pos));
	thp_scan_pos_next_list(&pos);
#ifdef CONFIG_LRU_GEN
	{
		struct lru_gen_folio *lrugen = &lruvec->lrugen;
		unsigned long seq, n = 0;
		int zone, gen;

		for (seq = lrugen->min_seq[LRU_GEN_ANON]; seq <= lrugen->max_seq; seq++) {
			for (zone = 0; zone < MAX_NR_ZONES; zone++) {
				struct list_head *want =
					&lrugen->folios[lru_gen_from_seq(seq)][LRU_GEN_ANON][zone];

				KUNIT_EXPECT_PTR_EQ(test, want,
						    thp_scan_pos_list(lruvec, &pos));
				thp_scan_pos_next_list(&pos);
				n++;
			}
		}
		KUNIT_EXPECT_GT(test, n, 0ul);
		/* A generation retired under the walk: the oldest one. */
		lrugen->min_seq[LRU_GEN_ANON]++;
		pos.seq = lrugen->min_seq[LRU_GEN_ANON] - 1;
		pos.zone = 1;
		pos.pfn = 1;
		gen = lru_gen_from_seq(lrugen->min_seq[LRU_GEN_ANON]);
		KUNIT_EXPECT_PTR_EQ(test, &lrugen->folios[gen][LRU_GEN_ANON][0],
				    thp_scan_pos_list(lruvec, &pos));
		KUNIT_EXPECT_EQ(test, 0ul, pos.pfn);
		KUNIT_EXPECT_EQ(test, 0, pos.zone);
		pos.seq = lrugen->max_seq + 1;
	}
#endif
	KUNIT_EXPECT_NULL(test, thp_scan_pos_list(lruvec, &pos));
}

/*
 * Every unit of work is charged: the folio, the zero scan, the rmap walk
 * (mappings and entries), and a split at one unit a subpage.
 */
static void thp_scan_test_cost(struct kunit *test)
{
	struct thp_scan_verdict v = { .scanned = 462 };
	struct thp_scan_walk w = { .nr_vmas = 2, .nr_entries = 300 };

	KUNIT_EXPECT_EQ(test, 463L, thp_scan_cost(&v, &w, 0));
	KUNIT_EXPECT_EQ(test, 975L, thp_scan_cost(&v, &w, 512));
	v.walked = true;
	KUNIT_EXPECT_EQ(test, 765L, thp_scan_cost(&v, &w, 0));
	v.scanned = 0;
	KUNIT_EXPECT_EQ(test, 815L, thp_scan_cost(&v, &w, 512));
}

/* The unsigned knobs take their range and nothing else. */
static void thp_scan_test_uint_knobs(struct kunit *test)
{
	static struct thp_scan_uint_attr * const knobs[] = {
		&pages_to_scan_attr, &scan_sleep_millisecs_attr,
		&min_age_millisecs_attr, &split_keep_dense_attr,
		&split_dense_min_free_pct_attr, &fault_limit_secs_attr,
	};
	unsigned int i;
	char *buf;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		struct kobj_attribute *attr = &knobs[i]->attr;
		unsigned int saved = READ_ONCE(*knobs[i]->val);
		char val[16];
		int len;

		len = snprintf(val, sizeof(val), "%u\n", knobs[i]->max);
		KUNIT_EXPECT_EQ(test, len, thp_scan_uint_store(NULL, attr, val, len));
		KUNIT_EXPECT_EQ(test, knobs[i]->max, READ_ONCE(*knobs[i]->val));
		len = snprintf(val, sizeof(val), "%u", knobs[i]->max + 1);
		KUNIT_EXPECT_EQ(test, -EINVAL, thp_scan_uint_store(NULL, attr, val, len));
		if (knobs[i]->min) {
			len = snprintf(val, sizeof(val), "%u", knobs[i]->min - 1);
			KUNIT_EXPECT_EQ(test, -EINVAL,
					thp_scan_uint_store(NULL, attr, val, len));
		}
		KUNIT_EXPECT_EQ(test, -EINVAL, thp_scan_uint_store(NULL, attr, "-1", 2));
		KUNIT_EXPECT_EQ(test, -EINVAL, thp_scan_uint_store(NULL, attr, "1k", 2));
		KUNIT_EXPECT_EQ(test, knobs[i]->max, READ_ONCE(*knobs[i]->val));
		len = snprintf(val, sizeof(val), "%u\n", knobs[i]->max);
		KUNIT_EXPECT_EQ(test, len, thp_scan_uint_show(NULL, attr, buf));
		KUNIT_EXPECT_STREQ(test, val, buf);
		WRITE_ONCE(*knobs[i]->val, saved);
	}
}

/*
 * The collapse limit: max_ptes_none alone with thp_scan off (6.12), else
 * the smallest of max_ptes_none, collapse_max_new_pct and the underused
 * limit (only while underused THPs are split), with the knob it comes
 * from; ties go to the knob named first.
 */
static void thp_scan_test_collapse_limit(struct kunit *test)
{
	static const struct {
		struct thp_scan_collapse_knobs k;
		unsigned int nr, want;
		enum thp_scan_collapse_src src;
	} cases[] = {
		/* enabled, split_underused, max_ptes_none, new %, zero % */
		{ { false, true, 511, 12, 90 }, 512, 511, THP_SCAN_COLLAPSE_MAX_PTES_NONE },
		{ { false, false, 0, 12, 90 }, 512, 0, THP_SCAN_COLLAPSE_MAX_PTES_NONE },
		{ { true, true, 511, 12, 90 }, 512, 61, THP_SCAN_COLLAPSE_MAX_NEW_PCT },
		{ { true, true, 32, 12, 90 }, 512, 32, THP_SCAN_COLLAPSE_MAX_PTES_NONE },
		{ { true, true, 61, 12, 90 }, 512, 61, THP_SCAN_COLLAPSE_MAX_PTES_NONE },
		{ { true, true, 511, 95, 90 }, 512, 460, THP_SCAN_COLLAPSE_UNDERUSED },
		{ { true, false, 511, 95, 90 }, 512, 486, THP_SCAN_COLLAPSE_MAX_NEW_PCT },
		{ { true, true, 511, 12, 5 }, 512, 25, THP_SCAN_COLLAPSE_UNDERUSED },
		{ { true, true, 511, 0, 90 }, 512, 0, THP_SCAN_COLLAPSE_MAX_NEW_PCT },
		{ { true, true, 511, 100, 100 }, 512, 511, THP_SCAN_COLLAPSE_MAX_PTES_NONE },
		/* 64K pages on arm64: a 512M PMD THP of 8192 pages. */
		{ { true, true, 8191, 12, 90 }, 8192, 983, THP_SCAN_COLLAPSE_MAX_NEW_PCT },
	};
	enum thp_scan_collapse_src src;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		KUNIT_EXPECT_EQ_MSG(test, cases[i].want,
				    thp_scan_collapse_limit(&cases[i].k, cases[i].nr, &src),
				    "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, cases[i].src, src, "case %u", i);
	}
}

/*
 * The collapse limit is below the split line whatever the knobs: a THP
 * khugepaged makes is never one that thp_scan splits as underused.
 */
static void thp_scan_test_collapse_below_split(struct kunit *test)
{
	struct thp_scan_collapse_knobs k = {
		.enabled = true, .split_underused = true, .max_ptes_none = 511,
	};
	enum thp_scan_collapse_src src;

	for (k.max_new_pct = 0; k.max_new_pct <= 100; k.max_new_pct += 5)
		for (k.underused_zero_pct = 0; k.underused_zero_pct <= 100;
		     k.underused_zero_pct += 5)
			KUNIT_EXPECT_LE_MSG(test, thp_scan_collapse_limit(&k, 512, &src),
					    thp_scan_max_zero(512, k.underused_zero_pct),
					    "new %u%%, zero %u%%", k.max_new_pct,
					    k.underused_zero_pct);
}

/*
 * collapse_max_new_pct takes 0..100, and collapse_max_ptes_none shows the
 * limit in force with its source.  Restores what it changed.
 */
static void thp_scan_test_collapse_knobs(struct kunit *test)
{
	unsigned int saved = READ_ONCE(thp_scan_collapse_max_new_pct);
	struct kobj_attribute *attr = &collapse_max_new_pct_attr.attr;
	enum thp_scan_collapse_src src;
	char *buf, want[48];
	unsigned int limit;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	KUNIT_EXPECT_EQ(test, 12u, saved);
	KUNIT_EXPECT_EQ(test, -EINVAL, thp_scan_uint_store(NULL, attr, "101", 3));
	KUNIT_EXPECT_EQ(test, -EINVAL, thp_scan_uint_store(NULL, attr, "-1", 2));
	KUNIT_EXPECT_EQ(test, -EINVAL, thp_scan_uint_store(NULL, attr, "12.5", 4));
	KUNIT_EXPECT_EQ(test, saved, READ_ONCE(thp_scan_collapse_max_new_pct));
	KUNIT_EXPECT_EQ(test, 2, thp_scan_uint_store(NULL, attr, "7\n", 2));
	KUNIT_EXPECT_EQ(test, 7u, READ_ONCE(thp_scan_collapse_max_new_pct));

	limit = thp_scan_collapse_limit_now(READ_ONCE(khugepaged_max_ptes_none), &src);
	snprintf(want, sizeof(want), "%u %s\n", limit, thp_scan_collapse_src_names[src]);
	collapse_max_ptes_none_show(NULL, &collapse_max_ptes_none_attr, buf);
	KUNIT_EXPECT_STREQ(test, want, buf);
	KUNIT_EXPECT_EQ(test, limit,
			thp_scan_collapse_max_new(READ_ONCE(khugepaged_max_ptes_none)));

	WRITE_ONCE(thp_scan_collapse_max_new_pct, saved);
}

/* A zero-filled page is one with every byte zero, wherever the others are. */
static void thp_scan_test_page_zero_filled(struct kunit *test)
{
	static const unsigned int offs[] = { 0, 1, PAGE_SIZE / 2, PAGE_SIZE - 1 };
	struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	unsigned int i;
	char *p;

	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_EXPECT_TRUE(test, thp_scan_page_zero_filled(page));
	KUNIT_EXPECT_TRUE(test, thp_scan_page_zero_filled(ZERO_PAGE(0)));
	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		p = kmap_local_page(page);
		p[offs[i]] = 1;
		kunmap_local(p);
		KUNIT_EXPECT_FALSE_MSG(test, thp_scan_page_zero_filled(page),
				       "byte %u set", offs[i]);
		p = kmap_local_page(page);
		p[offs[i]] = 0;
		kunmap_local(p);
	}
	KUNIT_EXPECT_TRUE(test, thp_scan_page_zero_filled(page));
	__free_page(page);
}

/*
 * The fault limit of a VMA: set at the second underused verdict, to the
 * order of the folio found underused, lowered by a smaller one and never
 * raised by a larger one; the score saturates at THP_FAULT_SCORE_MAX;
 * dense faults take it down one each, and the limit goes with the last.
 */
static void thp_scan_test_fault_states(struct kunit *test)
{
	u8 st = 0;
	int i;

	st = thp_fault_next_underused(st, HPAGE_PMD_ORDER);
	KUNIT_EXPECT_EQ(test, 0, thp_fault_limit(st));
	KUNIT_EXPECT_EQ(test, 1, thp_fault_score(st));
	st = thp_fault_next_underused(st, HPAGE_PMD_ORDER);
	KUNIT_EXPECT_EQ(test, HPAGE_PMD_ORDER, thp_fault_limit(st));
	KUNIT_EXPECT_EQ(test, 2, thp_fault_score(st));
	/* A smaller folio lowers it, a larger one does not raise it. */
	st = thp_fault_next_underused(st, 4);
	KUNIT_EXPECT_EQ(test, 4, thp_fault_limit(st));
	st = thp_fault_next_underused(st, HPAGE_PMD_ORDER);
	KUNIT_EXPECT_EQ(test, 4, thp_fault_limit(st));
	for (i = 0; i < 10; i++)
		st = thp_fault_next_underused(st, 4);
	KUNIT_EXPECT_EQ(test, THP_FAULT_SCORE_MAX, thp_fault_score(st));
	/* Dense faults: the limit stays while any verdict is left. */
	for (i = THP_FAULT_SCORE_MAX - 1; i > 0; i--) {
		st = thp_fault_next_dense(st);
		KUNIT_EXPECT_EQ(test, i, thp_fault_score(st));
		KUNIT_EXPECT_EQ(test, 4, thp_fault_limit(st));
	}
	st = thp_fault_next_dense(st);
	KUNIT_EXPECT_EQ(test, 0, st);
	KUNIT_EXPECT_EQ(test, 0, thp_fault_next_dense(st));
	/* Every order fits the field. */
	KUNIT_EXPECT_EQ(test, (unsigned int)MAX_PAGE_ORDER,
			thp_fault_limit(thp_fault_state(MAX_PAGE_ORDER,
							THP_FAULT_SCORE_MAX)));
	KUNIT_EXPECT_LE(test, MAX_PAGE_ORDER, THP_FAULT_LIMIT_MASK);
}

static struct kunit_case thp_scan_test_cases[] = {
	KUNIT_CASE(thp_scan_test_parse_bool_valid),
	KUNIT_CASE(thp_scan_test_parse_bool_invalid),
	KUNIT_CASE(thp_scan_test_enabled_store),
	KUNIT_CASE(thp_scan_test_enabled_default),
	KUNIT_CASE(thp_scan_test_max_zero),
	KUNIT_CASE(thp_scan_test_zero_scan),
	KUNIT_CASE(thp_scan_test_zero_scan_hwpoison),
	KUNIT_CASE(thp_scan_test_underused_zero_pct_store),
	KUNIT_CASE(thp_scan_test_decide),
	KUNIT_CASE(thp_scan_test_decide_stock),
	KUNIT_CASE(thp_scan_test_swapout_decide),
	KUNIT_CASE(thp_scan_test_split_order),
	KUNIT_CASE(thp_scan_test_dense_order),
	KUNIT_CASE(thp_scan_test_decide_dense),
	KUNIT_CASE(thp_scan_test_zero_map),
	KUNIT_CASE(thp_scan_test_walk_order),
	KUNIT_CASE(thp_scan_test_walk_age),
	KUNIT_CASE(thp_scan_test_walk_resume),
	KUNIT_CASE(thp_scan_test_batch_judge),
	KUNIT_CASE(thp_scan_test_pos_lists),
	KUNIT_CASE(thp_scan_test_cost),
	KUNIT_CASE(thp_scan_test_uint_knobs),
	KUNIT_CASE(thp_scan_test_collapse_limit),
	KUNIT_CASE(thp_scan_test_collapse_below_split),
	KUNIT_CASE(thp_scan_test_collapse_knobs),
	KUNIT_CASE(thp_scan_test_page_zero_filled),
	KUNIT_CASE(thp_scan_test_fault_states),
	{},
};

static struct kunit_suite thp_scan_test_suite = {
	.name = "thp_scan",
	.test_cases = thp_scan_test_cases,
};

kunit_test_suite(thp_scan_test_suite);

#endif /* _THP_SCAN_KUNIT_H */

#endif /* CONFIG_THP_SCAN_KUNIT_TEST */
