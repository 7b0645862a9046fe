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
	bool saved = READ_ONCE(thp_scan_enabled);
	char *buf;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		kunit_skip(test, "buffer allocation failed");

	KUNIT_EXPECT_EQ(test, 2, enabled_store(NULL, &enabled_attr, "0\n", 2));
	KUNIT_EXPECT_FALSE(test, READ_ONCE(thp_scan_enabled));
	KUNIT_EXPECT_EQ(test, 2, enabled_show(NULL, &enabled_attr, buf));
	KUNIT_EXPECT_STREQ(test, "0\n", buf);

	KUNIT_EXPECT_EQ(test, -EINVAL,
			enabled_store(NULL, &enabled_attr, "2\n", 2));
	KUNIT_EXPECT_FALSE(test, READ_ONCE(thp_scan_enabled));

	KUNIT_EXPECT_EQ(test, 1, enabled_store(NULL, &enabled_attr, "1", 1));
	KUNIT_EXPECT_TRUE(test, READ_ONCE(thp_scan_enabled));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			enabled_store(NULL, &enabled_attr, "never", 5));
	KUNIT_EXPECT_TRUE(test, READ_ONCE(thp_scan_enabled));
	KUNIT_EXPECT_EQ(test, 2, enabled_show(NULL, &enabled_attr, buf));
	KUNIT_EXPECT_STREQ(test, "1\n", buf);

	WRITE_ONCE(thp_scan_enabled, saved);
}

/* The scanner is on out of the box. */
static void thp_scan_test_enabled_default(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, thp_scan_enabled);
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

/*
 * The zero scan on real folios of several orders: the decision at the
 * limit and one past it, and the early exits both ways (how many
 * subpages it had to look at).
 */
static void thp_scan_test_zero_scan(struct kunit *test)
{
	static const unsigned int orders[] = { 2, 4, HPAGE_PMD_ORDER };
	unsigned int k, i, scanned, zero;

	for (k = 0; k < ARRAY_SIZE(orders); k++) {
		unsigned int order = orders[k], nr = 1U << order;
		unsigned int max_zero = thp_scan_max_zero(nr, 90);
		struct folio *folio;

		folio = folio_alloc(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN, order);
		if (!folio)
			kunit_skip(test, "order-%u folio allocation failed", order);

		/* All zero: underused after max_zero + 1 subpages. */
		KUNIT_EXPECT_TRUE(test, thp_scan_zero_scan(folio, max_zero, &scanned, &zero));
		KUNIT_EXPECT_EQ_MSG(test, max_zero + 1, scanned, "order %u", order);
		KUNIT_EXPECT_EQ(test, max_zero + 1, zero);

		/* The last nr - max_zero subpages filled: exactly at the limit. */
		for (i = max_zero; i < nr; i++)
			thp_scan_test_fill(folio, i);
		KUNIT_EXPECT_FALSE(test, thp_scan_zero_scan(folio, max_zero, &scanned, &zero));
		KUNIT_EXPECT_EQ_MSG(test, nr, scanned, "order %u", order);

		/* The first nr - max_zero filled too: used, known early. */
		for (i = 0; i < nr - max_zero; i++)
			thp_scan_test_fill(folio, i);
		KUNIT_EXPECT_FALSE(test, thp_scan_zero_scan(folio, max_zero, &scanned, &zero));
		KUNIT_EXPECT_EQ_MSG(test, nr - max_zero, scanned, "order %u", order);
		folio_put(folio);

		/* One filled subpage short of the limit, at the start: underused. */
		folio = folio_alloc(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN, order);
		if (!folio)
			kunit_skip(test, "order-%u folio allocation failed", order);
		for (i = 0; i + 1 < nr - max_zero; i++)
			thp_scan_test_fill(folio, i);
		KUNIT_EXPECT_TRUE(test, thp_scan_zero_scan(folio, max_zero, &scanned, &zero));
		KUNIT_EXPECT_EQ_MSG(test, nr, scanned, "order %u", order);
		folio_put(folio);
	}
}

/* underused_zero_pct takes 0..100; anything else changes nothing. */
static void thp_scan_test_underused_zero_pct_store(struct kunit *test)
{
	unsigned int saved = READ_ONCE(thp_scan_underused_zero_pct);
	struct kobj_attribute *attr = &underused_zero_pct_attr;
	char *buf;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		kunit_skip(test, "buffer allocation failed");

	KUNIT_EXPECT_EQ(test, 3, underused_zero_pct_store(NULL, attr, "75\n", 3));
	KUNIT_EXPECT_EQ(test, -EINVAL, underused_zero_pct_store(NULL, attr, "101", 3));
	KUNIT_EXPECT_EQ(test, -EINVAL, underused_zero_pct_store(NULL, attr, "-1", 2));
	KUNIT_EXPECT_EQ(test, -EINVAL, underused_zero_pct_store(NULL, attr, "9x", 2));
	KUNIT_EXPECT_EQ(test, 3, underused_zero_pct_show(NULL, attr, buf));
	KUNIT_EXPECT_STREQ(test, "75\n", buf);
	KUNIT_EXPECT_EQ(test, 3, underused_zero_pct_store(NULL, attr, "100", 3));
	KUNIT_EXPECT_EQ(test, 100u, READ_ONCE(thp_scan_underused_zero_pct));

	WRITE_ONCE(thp_scan_underused_zero_pct, saved);
}

static struct kunit_case thp_scan_test_cases[] = {
	KUNIT_CASE(thp_scan_test_parse_bool_valid),
	KUNIT_CASE(thp_scan_test_parse_bool_invalid),
	KUNIT_CASE(thp_scan_test_enabled_store),
	KUNIT_CASE(thp_scan_test_enabled_default),
	KUNIT_CASE(thp_scan_test_max_zero),
	KUNIT_CASE(thp_scan_test_zero_scan),
	KUNIT_CASE(thp_scan_test_underused_zero_pct_store),
	{},
};

static struct kunit_suite thp_scan_test_suite = {
	.name = "thp_scan",
	.test_cases = thp_scan_test_cases,
};

kunit_test_suite(thp_scan_test_suite);

#endif /* _THP_SCAN_KUNIT_H */

#endif /* CONFIG_THP_SCAN_KUNIT_TEST */
