/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for the "auto" THP policy, included at the end of
 * mm/thp_auto.c so that they reach its static functions.
 */

#ifdef CONFIG_THP_AUTO_KUNIT_TEST

#ifndef _THP_AUTO_KUNIT_H
#define _THP_AUTO_KUNIT_H

#include <kunit/test.h>

static const struct thp_auto_thresholds thp_auto_test_thr = {
	.pressure_available_pct = 10,
	.plentiful_available_pct = 20,
	.pressure_psi_pct = 10,
	.plentiful_psi_pct = 2,
};

/* The defaults are usable, and each pair must leave a gap. */
static void thp_auto_test_thresholds_valid(struct kunit *test)
{
	struct thp_auto_thresholds t = thp_auto_test_thr;

	KUNIT_EXPECT_TRUE(test, thp_auto_thresholds_valid(&thp_auto_test_thr));

	t.pressure_available_pct = 20;		/* == plentiful */
	KUNIT_EXPECT_FALSE(test, thp_auto_thresholds_valid(&t));
	t.pressure_available_pct = 30;		/* > plentiful */
	KUNIT_EXPECT_FALSE(test, thp_auto_thresholds_valid(&t));
	t = thp_auto_test_thr;
	t.plentiful_available_pct = 101;
	KUNIT_EXPECT_FALSE(test, thp_auto_thresholds_valid(&t));
	t = thp_auto_test_thr;
	t.plentiful_psi_pct = 10;		/* == pressure */
	KUNIT_EXPECT_FALSE(test, thp_auto_thresholds_valid(&t));
	t.pressure_psi_pct = 101;
	KUNIT_EXPECT_FALSE(test, thp_auto_thresholds_valid(&t));
	/* PSI off: its leave threshold no longer has to be below. */
	t.pressure_psi_pct = 0;
	t.plentiful_psi_pct = 50;
	KUNIT_EXPECT_TRUE(test, thp_auto_thresholds_valid(&t));
	t.plentiful_psi_pct = 101;
	KUNIT_EXPECT_FALSE(test, thp_auto_thresholds_valid(&t));
	t = thp_auto_test_thr;
	t.pressure_available_pct = 0;		/* never by available memory */
	KUNIT_EXPECT_TRUE(test, thp_auto_thresholds_valid(&t));
}

/*
 * Hysteresis: pressure starts below the low available threshold (or at
 * the high stall threshold) and ends only above the high available
 * threshold with the stall below the low one; between them, the state
 * stays what it was.
 */
static void thp_auto_test_next_state(struct kunit *test)
{
	const struct thp_auto_thresholds *t = &thp_auto_test_thr;
	bool s = false;

	s = thp_auto_next_state(s, 50, 0, t);
	KUNIT_EXPECT_FALSE(test, s);
	s = thp_auto_next_state(s, 10, 0, t);	/* not below 10 */
	KUNIT_EXPECT_FALSE(test, s);
	s = thp_auto_next_state(s, 9, 0, t);
	KUNIT_EXPECT_TRUE(test, s);
	s = thp_auto_next_state(s, 15, 0, t);	/* in the gap: stays */
	KUNIT_EXPECT_TRUE(test, s);
	s = thp_auto_next_state(s, 20, 0, t);	/* not above 20 */
	KUNIT_EXPECT_TRUE(test, s);
	s = thp_auto_next_state(s, 21, 0, t);
	KUNIT_EXPECT_FALSE(test, s);
	s = thp_auto_next_state(s, 15, 0, t);	/* in the gap: stays */
	KUNIT_EXPECT_FALSE(test, s);

	s = thp_auto_next_state(s, 90, 9, t);
	KUNIT_EXPECT_FALSE(test, s);
	s = thp_auto_next_state(s, 90, 10, t);	/* stall alone */
	KUNIT_EXPECT_TRUE(test, s);
	s = thp_auto_next_state(s, 90, 5, t);	/* in the gap: stays */
	KUNIT_EXPECT_TRUE(test, s);
	s = thp_auto_next_state(s, 90, 2, t);	/* not below 2 */
	KUNIT_EXPECT_TRUE(test, s);
	s = thp_auto_next_state(s, 90, 1, t);
	KUNIT_EXPECT_FALSE(test, s);
	s = thp_auto_next_state(s, 15, 1, t);	/* gap for memory too */
	KUNIT_EXPECT_FALSE(test, s);
}

/* With pressure_psi_pct = 0 the stall is ignored both ways. */
static void thp_auto_test_psi_off(struct kunit *test)
{
	struct thp_auto_thresholds t = thp_auto_test_thr;

	t.pressure_psi_pct = 0;
	KUNIT_EXPECT_FALSE(test, thp_auto_next_state(false, 90, 100, &t));
	KUNIT_EXPECT_FALSE(test, thp_auto_next_state(true, 90, 100, &t));
	KUNIT_EXPECT_TRUE(test, thp_auto_next_state(false, 5, 0, &t));
}

#ifdef CONFIG_SYSFS
/*
 * The threshold knobs: a value that breaks a gap, is out of range or is
 * not a number is -EINVAL and changes nothing. Restores the thresholds.
 */
static void thp_auto_test_threshold_store(struct kunit *test)
{
	struct kobj_attribute *lo = &pressure_available_pct_attr.attr;
	struct kobj_attribute *hi = &plentiful_available_pct_attr.attr;
	struct thp_auto_thresholds saved;
	char *buf;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	mutex_lock(&thp_auto_lock);
	saved = thp_auto_thr;
	thp_auto_thr = thp_auto_test_thr;
	mutex_unlock(&thp_auto_lock);

	KUNIT_EXPECT_EQ(test, -EINVAL, threshold_store(NULL, lo, "20", 2));
	KUNIT_EXPECT_EQ(test, -EINVAL, threshold_store(NULL, hi, "10", 2));
	KUNIT_EXPECT_EQ(test, -EINVAL, threshold_store(NULL, hi, "101", 3));
	KUNIT_EXPECT_EQ(test, -EINVAL, threshold_store(NULL, lo, "-1", 2));
	KUNIT_EXPECT_EQ(test, -EINVAL, threshold_store(NULL, lo, "x", 1));
	KUNIT_EXPECT_EQ(test, 3, threshold_show(NULL, lo, buf));
	KUNIT_EXPECT_STREQ(test, "10\n", buf);
	KUNIT_EXPECT_EQ(test, 3, threshold_show(NULL, hi, buf));
	KUNIT_EXPECT_STREQ(test, "20\n", buf);

	KUNIT_EXPECT_EQ(test, 3, threshold_store(NULL, hi, "60\n", 3));
	KUNIT_EXPECT_EQ(test, 2, threshold_store(NULL, lo, "40", 2));
	KUNIT_EXPECT_EQ(test, 3, threshold_show(NULL, lo, buf));
	KUNIT_EXPECT_STREQ(test, "40\n", buf);

	mutex_lock(&thp_auto_lock);
	thp_auto_thr = saved;
	mutex_unlock(&thp_auto_lock);
}
#endif

static struct kunit_case thp_auto_test_cases[] = {
	KUNIT_CASE(thp_auto_test_thresholds_valid),
	KUNIT_CASE(thp_auto_test_next_state),
	KUNIT_CASE(thp_auto_test_psi_off),
#ifdef CONFIG_SYSFS
	KUNIT_CASE(thp_auto_test_threshold_store),
#endif
	{},
};

static struct kunit_suite thp_auto_test_suite = {
	.name = "thp_auto",
	.test_cases = thp_auto_test_cases,
};

kunit_test_suite(thp_auto_test_suite);

#endif /* _THP_AUTO_KUNIT_H */

#endif /* CONFIG_THP_AUTO_KUNIT_TEST */
