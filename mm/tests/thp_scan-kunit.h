/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for thp_scan, included at the end of mm/thp_scan.c so that
 * they reach its static functions.
 */

#ifdef CONFIG_THP_SCAN_KUNIT_TEST

#ifndef _THP_SCAN_KUNIT_H
#define _THP_SCAN_KUNIT_H

#include <kunit/test.h>

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

static struct kunit_case thp_scan_test_cases[] = {
	KUNIT_CASE(thp_scan_test_parse_bool_valid),
	KUNIT_CASE(thp_scan_test_parse_bool_invalid),
	KUNIT_CASE(thp_scan_test_enabled_store),
	KUNIT_CASE(thp_scan_test_enabled_default),
	{},
};

static struct kunit_suite thp_scan_test_suite = {
	.name = "thp_scan",
	.test_cases = thp_scan_test_cases,
};

kunit_test_suite(thp_scan_test_suite);

#endif /* _THP_SCAN_KUNIT_H */

#endif /* CONFIG_THP_SCAN_KUNIT_TEST */
