// SPDX-License-Identifier: GPL-2.0
/*
 * The "auto" THP policy: behave like "always" while memory is plentiful
 * and like "defer" (no THP at page fault unless MADV_HUGEPAGE; khugepaged
 * still collapses) while memory is under pressure.
 *
 * "Memory in use" says nothing here: the page cache fills memory on any
 * busy machine. Two signals are used instead, sampled every interval_ms
 * by a work item that runs only while some THP size resolves to "auto":
 *
 *  - available memory, si_mem_available(): free memory plus what reclaim
 *    can easily get back (clean page cache, reclaimable slab), as a share
 *    of RAM;
 *  - the system-wide PSI memory "some" stall, averaged over 10 seconds:
 *    the share of time in which some task waited for memory.
 *
 * Each signal has two thresholds, so that the state does not flap: memory
 * comes under pressure when available memory falls below
 * pressure_available_pct or the stall reaches pressure_psi_pct, and is
 * plentiful again only when available memory is above
 * plentiful_available_pct and the stall is below plentiful_psi_pct.
 * Every change of state fires the thp_auto_state tracepoint and is passed
 * on to thp_scan, which works harder under pressure.
 */

#define pr_fmt(fmt) "thp_auto: " fmt

#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/psi.h>
#include <linux/sched/loadavg.h>
#include <linux/sysfs.h>
#include <linux/thp_scan.h>
#include <linux/workqueue.h>

#include <trace/events/huge_memory.h>

/* Read locklessly at page fault through thp_auto_under_pressure(). */
bool thp_auto_pressure __read_mostly;

struct thp_auto_thresholds {
	/* Available memory, percent of RAM: enter pressure below ... */
	unsigned int pressure_available_pct;
	/* ... leave it above. */
	unsigned int plentiful_available_pct;
	/* PSI memory some avg10, percent: enter at or above (0: ignore PSI) ... */
	unsigned int pressure_psi_pct;
	/* ... leave below. */
	unsigned int plentiful_psi_pct;
};

#define THP_AUTO_INTERVAL_MIN_MS	100
#define THP_AUTO_INTERVAL_MAX_MS	60000

/*
 * Serializes the knobs against each other and against the evaluation, so
 * that an evaluation sees one consistent set of thresholds.
 */
static DEFINE_MUTEX(thp_auto_lock);
static struct thp_auto_thresholds thp_auto_thr = {
	.pressure_available_pct = 10,
	.plentiful_available_pct = 20,
	.pressure_psi_pct = 10,
	.plentiful_psi_pct = 2,
};

static unsigned int thp_auto_interval_ms = 1000;

static void thp_auto_fn(struct work_struct *work);

static DECLARE_DELAYED_WORK(thp_auto_work, thp_auto_fn);

/* A usable set of thresholds: each pair leaves a gap for hysteresis. */
static bool thp_auto_thresholds_valid(const struct thp_auto_thresholds *t)
{
	if (t->plentiful_available_pct > 100 || t->pressure_psi_pct > 100 ||
	    t->plentiful_psi_pct > 100)
		return false;
	if (t->pressure_available_pct >= t->plentiful_available_pct)
		return false;
	if (t->pressure_psi_pct && t->plentiful_psi_pct >= t->pressure_psi_pct)
		return false;
	return true;
}

/*
 * The state after one sample: @pressure is the state before it,
 * @avail_pct the available memory and @psi_pct the memory stall, both in
 * percent. Returns true for pressure.
 */
static bool thp_auto_next_state(bool pressure, unsigned int avail_pct,
				unsigned int psi_pct,
				const struct thp_auto_thresholds *t)
{
	bool psi = t->pressure_psi_pct;

	if (!pressure)
		return avail_pct < t->pressure_available_pct ||
		       (psi && psi_pct >= t->pressure_psi_pct);
	return avail_pct <= t->plentiful_available_pct ||
	       (psi && psi_pct >= t->plentiful_psi_pct);
}

/* Is "auto" in force for some anon THP size? */
static bool thp_auto_in_use(void)
{
	return READ_ONCE(huge_anon_orders_auto) ||
	       (hugepage_global_auto() && READ_ONCE(huge_anon_orders_inherit));
}

static unsigned int thp_auto_available_pct(void)
{
	unsigned long total = totalram_pages();
	long avail = si_mem_available();

	if (!total || avail <= 0)
		return 0;
	return min_t(unsigned long, 100, mult_frac(avail, 100, total));
}

static unsigned int thp_auto_psi_pct(void)
{
#ifdef CONFIG_PSI
	if (static_branch_likely(&psi_disabled))
		return 0;
	/* Fixed point percent, updated every 2s by the PSI averaging work. */
	return LOAD_INT(READ_ONCE(psi_system.avg[PSI_MEM_SOME][0]));
#else
	return 0;
#endif
}

static void thp_auto_set_state(bool pressure, unsigned int avail_pct,
			       unsigned int psi_pct)
{
	lockdep_assert_held(&thp_auto_lock);
	if (pressure == thp_auto_pressure)
		return;
	WRITE_ONCE(thp_auto_pressure, pressure);
	trace_thp_auto_state(pressure, avail_pct, psi_pct);
	thp_scan_set_pressure(pressure);
}

static void thp_auto_fn(struct work_struct *work)
{
	unsigned int avail_pct, psi_pct;

	mutex_lock(&thp_auto_lock);
	avail_pct = thp_auto_available_pct();
	psi_pct = thp_auto_psi_pct();
	if (thp_auto_in_use()) {
		thp_auto_set_state(thp_auto_next_state(thp_auto_pressure,
						       avail_pct, psi_pct,
						       &thp_auto_thr),
				   avail_pct, psi_pct);
		queue_delayed_work(system_unbound_wq, &thp_auto_work,
				   msecs_to_jiffies(thp_auto_interval_ms));
	} else {
		/* Nothing follows the state: start over as plentiful. */
		thp_auto_set_state(false, avail_pct, psi_pct);
	}
	mutex_unlock(&thp_auto_lock);
}

/**
 * thp_auto_policy_changed - a THP policy was set
 *
 * Samples the signals now, and goes on sampling them every interval_ms
 * while some anon THP size resolves to "auto".
 */
void thp_auto_policy_changed(void)
{
	mod_delayed_work(system_unbound_wq, &thp_auto_work, 0);
}

/* Boot parameters set the policy before workqueues run. */
static int __init thp_auto_init(void)
{
	thp_auto_policy_changed();
	return 0;
}
late_initcall(thp_auto_init);

#ifdef CONFIG_SYSFS
static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n", thp_auto_under_pressure() ?
			  "pressure" : "plentiful");
}

static struct kobj_attribute state_attr = __ATTR_RO(state);

/* The knob of each threshold, by its offset in struct thp_auto_thresholds. */
struct thp_auto_attr {
	struct kobj_attribute attr;
	size_t offset;
};

static unsigned int *thp_auto_field(struct thp_auto_thresholds *t,
				    struct kobj_attribute *attr)
{
	size_t offset = container_of(attr, struct thp_auto_attr, attr)->offset;

	return (unsigned int *)((char *)t + offset);
}

static ssize_t threshold_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	unsigned int val;

	mutex_lock(&thp_auto_lock);
	val = *thp_auto_field(&thp_auto_thr, attr);
	mutex_unlock(&thp_auto_lock);
	return sysfs_emit(buf, "%u\n", val);
}

static ssize_t threshold_store(struct kobject *kobj,
			       struct kobj_attribute *attr,
			       const char *buf, size_t count)
{
	struct thp_auto_thresholds t;
	unsigned int val;
	int err;

	err = kstrtouint(buf, 10, &val);
	if (err)
		return -EINVAL;

	mutex_lock(&thp_auto_lock);
	t = thp_auto_thr;
	*thp_auto_field(&t, attr) = val;
	if (!thp_auto_thresholds_valid(&t)) {
		mutex_unlock(&thp_auto_lock);
		return -EINVAL;
	}
	thp_auto_thr = t;
	mutex_unlock(&thp_auto_lock);
	thp_auto_policy_changed();
	return count;
}

static struct thp_auto_attr pressure_available_pct_attr = {
	.attr = __ATTR(pressure_available_pct, 0644, threshold_show, threshold_store),
	.offset = offsetof(struct thp_auto_thresholds, pressure_available_pct),
};

static struct thp_auto_attr plentiful_available_pct_attr = {
	.attr = __ATTR(plentiful_available_pct, 0644, threshold_show, threshold_store),
	.offset = offsetof(struct thp_auto_thresholds, plentiful_available_pct),
};

static struct thp_auto_attr pressure_psi_pct_attr = {
	.attr = __ATTR(pressure_psi_pct, 0644, threshold_show, threshold_store),
	.offset = offsetof(struct thp_auto_thresholds, pressure_psi_pct),
};

static struct thp_auto_attr plentiful_psi_pct_attr = {
	.attr = __ATTR(plentiful_psi_pct, 0644, threshold_show, threshold_store),
	.offset = offsetof(struct thp_auto_thresholds, plentiful_psi_pct),
};

static ssize_t interval_ms_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(thp_auto_interval_ms));
}

static ssize_t interval_ms_store(struct kobject *kobj,
				 struct kobj_attribute *attr,
				 const char *buf, size_t count)
{
	unsigned int val;

	if (kstrtouint(buf, 10, &val) || val < THP_AUTO_INTERVAL_MIN_MS ||
	    val > THP_AUTO_INTERVAL_MAX_MS)
		return -EINVAL;
	WRITE_ONCE(thp_auto_interval_ms, val);
	thp_auto_policy_changed();
	return count;
}

static struct kobj_attribute interval_ms_attr = __ATTR_RW(interval_ms);

static struct attribute *thp_auto_attrs[] = {
	&state_attr.attr,
	&pressure_available_pct_attr.attr.attr,
	&plentiful_available_pct_attr.attr.attr,
	&pressure_psi_pct_attr.attr.attr,
	&plentiful_psi_pct_attr.attr.attr,
	&interval_ms_attr.attr,
	NULL,
};

static const struct attribute_group thp_auto_attr_group = {
	.attrs = thp_auto_attrs,
	.name = "auto",
};

/**
 * thp_auto_sysfs_init - create /sys/kernel/mm/transparent_hugepage/auto/
 * @hugepage_kobj: the transparent_hugepage kobject
 *
 * Return: 0 on success, a negative errno from sysfs otherwise.
 */
int __init thp_auto_sysfs_init(struct kobject *hugepage_kobj)
{
	int err;

	err = sysfs_create_group(hugepage_kobj, &thp_auto_attr_group);
	if (err)
		pr_err("failed to register the auto sysfs group: %d\n", err);
	return err;
}

/**
 * thp_auto_sysfs_exit - remove what thp_auto_sysfs_init() created
 * @hugepage_kobj: the transparent_hugepage kobject
 */
void __init thp_auto_sysfs_exit(struct kobject *hugepage_kobj)
{
	sysfs_remove_group(hugepage_kobj, &thp_auto_attr_group);
}
#endif /* CONFIG_SYSFS */

#include "tests/thp_auto-kunit.h"
