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

#ifdef CONFIG_MEMCG
/*
 * The memory available to a memcg is the headroom below its limit plus
 * what reclaim easily gets back of its usage, as a share of the limit: no
 * limit is all available, a zero limit nothing, usage above the limit no
 * headroom; never more than 100.
 */
static void thp_auto_test_memcg_available(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 100, thp_auto_memcg_available(5000, PAGE_COUNTER_MAX, 0));
	KUNIT_EXPECT_EQ(test, 0, thp_auto_memcg_available(0, 0, 0));
	KUNIT_EXPECT_EQ(test, 100, thp_auto_memcg_available(0, 1000, 0));
	KUNIT_EXPECT_EQ(test, 5, thp_auto_memcg_available(950, 1000, 0));
	KUNIT_EXPECT_EQ(test, 15, thp_auto_memcg_available(950, 1000, 100));
	KUNIT_EXPECT_EQ(test, 0, thp_auto_memcg_available(1200, 1000, 0));
	/* Over the limit (memory.high): only what reclaim gets back. */
	KUNIT_EXPECT_EQ(test, 30, thp_auto_memcg_available(1200, 1000, 300));
	/* Reclaimable memory beyond the usage (stale stats) does not count. */
	KUNIT_EXPECT_EQ(test, 100, thp_auto_memcg_available(100, 1000, 5000));
	KUNIT_EXPECT_EQ(test, 99, thp_auto_memcg_available(1, 100, 0));
	/* Large limits do not overflow. */
	KUNIT_EXPECT_EQ(test, 50, thp_auto_memcg_available((PAGE_COUNTER_MAX - 1) / 2,
							   PAGE_COUNTER_MAX - 1, 0));
}

/*
 * A memcg's own state has the hysteresis of the system state, on its own
 * thresholds: pressure below 10 % available (or at 10 % stall), plentiful
 * again only above 20 % with the stall below 2 %; a memcg whose parent is
 * under pressure is under pressure, whatever its own state.
 */
static void thp_auto_test_memcg_hysteresis(struct kunit *test)
{
	const struct thp_auto_thresholds *t = &thp_auto_test_thr;
	bool own = false;

	KUNIT_EXPECT_FALSE(test, thp_auto_memcg_next(&own, false, 50, 0, t));
	KUNIT_EXPECT_FALSE(test, thp_auto_memcg_next(&own, false, 10, 0, t));
	KUNIT_EXPECT_TRUE(test, thp_auto_memcg_next(&own, false, 9, 0, t));
	KUNIT_EXPECT_TRUE(test, own);
	KUNIT_EXPECT_TRUE(test, thp_auto_memcg_next(&own, false, 20, 0, t));
	KUNIT_EXPECT_FALSE(test, thp_auto_memcg_next(&own, false, 21, 0, t));
	KUNIT_EXPECT_FALSE(test, own);
	KUNIT_EXPECT_FALSE(test, thp_auto_memcg_next(&own, false, 15, 0, t));
	KUNIT_EXPECT_TRUE(test, thp_auto_memcg_next(&own, false, 90, 10, t));
	KUNIT_EXPECT_TRUE(test, thp_auto_memcg_next(&own, false, 90, 2, t));
	KUNIT_EXPECT_FALSE(test, thp_auto_memcg_next(&own, false, 90, 1, t));

	/* The parent's pressure does not touch the memcg's own state. */
	KUNIT_EXPECT_TRUE(test, thp_auto_memcg_next(&own, true, 90, 0, t));
	KUNIT_EXPECT_FALSE(test, own);
}

/* One top-down walk over a chain of memcgs: [0] the top, [n - 1] the leaf. */
static void thp_auto_test_walk(bool *own, bool *in_force, const unsigned int *avail,
			       int n)
{
	int i;

	for (i = 0; i < n; i++)
		in_force[i] = thp_auto_memcg_next(&own[i], i && in_force[i - 1],
						  avail[i], 0, &thp_auto_test_thr);
}

/*
 * Ancestors: in a chain A > B > C walked top-down, A under pressure puts B
 * and C under pressure in the same walk; C under pressure by its own
 * signals leaves A and B plentiful; when A is plentiful again, B follows
 * and C keeps its own state, with its own hysteresis.
 */
static void thp_auto_test_memcg_ancestors(struct kunit *test)
{
	bool own[3] = {}, in_force[3];
	unsigned int avail[3] = { 50, 100, 100 };

	thp_auto_test_walk(own, in_force, avail, 3);
	KUNIT_EXPECT_FALSE(test, in_force[0] || in_force[1] || in_force[2]);

	avail[0] = 5;				/* A near its limit */
	thp_auto_test_walk(own, in_force, avail, 3);
	KUNIT_EXPECT_TRUE(test, in_force[0] && in_force[1] && in_force[2]);
	KUNIT_EXPECT_TRUE(test, own[0]);
	KUNIT_EXPECT_FALSE(test, own[1] || own[2]);

	avail[2] = 5;				/* C near its own limit too */
	avail[0] = 15;				/* A in its gap: stays */
	thp_auto_test_walk(own, in_force, avail, 3);
	KUNIT_EXPECT_TRUE(test, in_force[0] && in_force[1] && in_force[2]);
	KUNIT_EXPECT_TRUE(test, own[2]);

	avail[0] = 50;				/* A plentiful again */
	avail[2] = 15;				/* C in its gap */
	thp_auto_test_walk(own, in_force, avail, 3);
	KUNIT_EXPECT_FALSE(test, in_force[0]);
	KUNIT_EXPECT_FALSE(test, in_force[1]);
	KUNIT_EXPECT_TRUE(test, in_force[2]);

	avail[2] = 25;
	thp_auto_test_walk(own, in_force, avail, 3);
	KUNIT_EXPECT_FALSE(test, in_force[0] || in_force[1] || in_force[2]);

	avail[1] = 0;				/* B alone: C follows, A not */
	thp_auto_test_walk(own, in_force, avail, 3);
	KUNIT_EXPECT_FALSE(test, in_force[0]);
	KUNIT_EXPECT_TRUE(test, in_force[1] && in_force[2]);
}
#endif /* CONFIG_MEMCG */

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

/*
 * The memcg threshold knobs: the same checks, on their own set; a write to
 * one set leaves the other alone. Restores both sets.
 */
static void thp_auto_test_memcg_threshold_store(struct kunit *test)
{
	struct kobj_attribute *lo = &memcg_pressure_available_pct_attr.attr;
	struct kobj_attribute *hi = &memcg_plentiful_available_pct_attr.attr;
	struct kobj_attribute *psi_hi = &memcg_pressure_psi_pct_attr.attr;
	struct kobj_attribute *psi_lo = &memcg_plentiful_psi_pct_attr.attr;
	struct thp_auto_thresholds saved, saved_memcg;
	char *buf;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	mutex_lock(&thp_auto_lock);
	saved = thp_auto_thr;
	saved_memcg = thp_auto_memcg_thr;
	thp_auto_thr = thp_auto_test_thr;
	thp_auto_memcg_thr = thp_auto_test_thr;
	mutex_unlock(&thp_auto_lock);

	KUNIT_EXPECT_EQ(test, -EINVAL, threshold_store(NULL, lo, "20", 2));
	KUNIT_EXPECT_EQ(test, -EINVAL, threshold_store(NULL, hi, "10", 2));
	KUNIT_EXPECT_EQ(test, -EINVAL, threshold_store(NULL, hi, "101", 3));
	KUNIT_EXPECT_EQ(test, -EINVAL, threshold_store(NULL, lo, "-1", 2));
	KUNIT_EXPECT_EQ(test, -EINVAL, threshold_store(NULL, lo, "", 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, threshold_store(NULL, psi_lo, "10", 2));
	KUNIT_EXPECT_EQ(test, -EINVAL, threshold_store(NULL, psi_hi, "2", 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, threshold_store(NULL, psi_hi, "101", 3));
	mutex_lock(&thp_auto_lock);
	KUNIT_EXPECT_EQ(test, 0, memcmp(&thp_auto_memcg_thr, &thp_auto_test_thr,
					sizeof(thp_auto_test_thr)));
	mutex_unlock(&thp_auto_lock);

	KUNIT_EXPECT_EQ(test, 2, threshold_store(NULL, hi, "30", 2));
	KUNIT_EXPECT_EQ(test, 2, threshold_store(NULL, lo, "25", 2));
	KUNIT_EXPECT_EQ(test, 1, threshold_store(NULL, psi_hi, "0", 1));
	KUNIT_EXPECT_EQ(test, 3, threshold_show(NULL, lo, buf));
	KUNIT_EXPECT_STREQ(test, "25\n", buf);
	KUNIT_EXPECT_EQ(test, 2, threshold_show(NULL, psi_hi, buf));
	KUNIT_EXPECT_STREQ(test, "0\n", buf);
	mutex_lock(&thp_auto_lock);
	KUNIT_EXPECT_EQ(test, 30, thp_auto_memcg_thr.plentiful_available_pct);
	/* The system's thresholds did not move. */
	KUNIT_EXPECT_EQ(test, 0, memcmp(&thp_auto_thr, &thp_auto_test_thr,
					sizeof(thp_auto_test_thr)));
	thp_auto_thr = saved;
	thp_auto_memcg_thr = saved_memcg;
	mutex_unlock(&thp_auto_lock);
}
#endif

static struct kunit_case thp_auto_test_cases[] = {
	KUNIT_CASE(thp_auto_test_thresholds_valid),
	KUNIT_CASE(thp_auto_test_next_state),
	KUNIT_CASE(thp_auto_test_psi_off),
#ifdef CONFIG_MEMCG
	KUNIT_CASE(thp_auto_test_memcg_available),
	KUNIT_CASE(thp_auto_test_memcg_hysteresis),
	KUNIT_CASE(thp_auto_test_memcg_ancestors),
#endif
#ifdef CONFIG_SYSFS
	KUNIT_CASE(thp_auto_test_threshold_store),
	KUNIT_CASE(thp_auto_test_memcg_threshold_store),
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
