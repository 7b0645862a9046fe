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
 *
 * The same work keeps a state per memcg (cgroup v2 or v1), with thresholds
 * of its own and the same hysteresis: a memcg comes under pressure by its
 * own signals when the memory available to it falls below
 * memcg_pressure_available_pct of its limit, the lower of memory.high and
 * memory.max (available: the headroom below the limit, plus the file LRU
 * pages and reclaimable slab it holds, which reclaim easily gets back, as
 * MemAvailable counts them for the system), or when its own PSI memory
 * "some" stall (cgroup v2) reaches memcg_pressure_psi_pct; a memcg without
 * a limit has all of its limit available. The state in force for a memcg
 * is pressure when its own signals or those of an ancestor say so: the
 * memcgs are walked top-down, each after its parent. A page fault under
 * "auto" is under pressure when the system is or when the memcg of the
 * faulting mm is (thp_auto_mm_under_pressure()); it reads the state kept
 * in struct mem_cgroup and computes nothing. The root memcg, tasks outside
 * any memcg and kernels without the memory controller follow the system
 * state alone.
 */

#define pr_fmt(fmt) "thp_auto: " fmt

#include <linux/kobject.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/page_counter.h>
#include <linux/psi.h>
#include <linux/sched/loadavg.h>
#include <linux/sysfs.h>
#include <linux/thp_scan.h>
#include <linux/workqueue.h>

#include <trace/events/huge_memory.h>

/* Read locklessly at page fault through thp_auto_under_pressure(). */
bool thp_auto_pressure __read_mostly;

/*
 * How many memcgs are under pressure (in force: their own or inherited), as
 * of the last walk; while it is 0 a page fault does not look its memcg up.
 */
unsigned int thp_auto_memcgs_under_pressure __read_mostly;

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

/* The same for each memcg, available memory as a share of its limit. */
static struct thp_auto_thresholds thp_auto_memcg_thr = {
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
	trace_thp_auto_state(0, 0, pressure, avail_pct, psi_pct);
	thp_scan_set_pressure(pressure);
}

#ifdef CONFIG_MEMCG
/*
 * The share of its limit available to a memcg, in percent: the headroom
 * below @limit (the lower of memory.high and memory.max; PAGE_COUNTER_MAX
 * for none) with @usage charged, plus @reclaimable, the part of @usage
 * that reclaim easily gets back; all in pages.
 */
static unsigned int thp_auto_memcg_available(unsigned long usage,
					     unsigned long limit,
					     unsigned long reclaimable)
{
	unsigned long avail;

	if (limit >= PAGE_COUNTER_MAX)
		return 100;
	if (!limit)
		return 0;
	avail = usage < limit ? limit - usage : 0;
	avail += min(reclaimable, usage);
	return min_t(unsigned long, 100, mult_frac(avail, 100, limit));
}

/*
 * One sample of a memcg: its own state, with hysteresis, from the memory
 * available to it and its memory stall (percent), and the state in force
 * for it, pressure if its own or its parent's (@parent, in force) is.
 */
static bool thp_auto_memcg_next(bool *own, bool parent, unsigned int avail_pct,
				unsigned int psi_pct,
				const struct thp_auto_thresholds *t)
{
	*own = thp_auto_next_state(*own, avail_pct, psi_pct, t);
	return *own || parent;
}

/* The signals of @memcg: available memory and PSI memory stall, percent. */
static void thp_auto_memcg_signals(struct mem_cgroup *memcg,
				   unsigned int *avail_pct,
				   unsigned int *psi_pct)
{
	unsigned long limit, reclaimable;

	limit = min(READ_ONCE(memcg->memory.high), READ_ONCE(memcg->memory.max));
	/* Flushed by the stats work every 2 s; an estimate is enough. */
	reclaimable = memcg_page_state(memcg, NR_ACTIVE_FILE) +
		      memcg_page_state(memcg, NR_INACTIVE_FILE) +
		      memcg_page_state(memcg, NR_SLAB_RECLAIMABLE_B) / PAGE_SIZE;
	*avail_pct = thp_auto_memcg_available(page_counter_read(&memcg->memory),
					      limit, reclaimable);
	*psi_pct = 0;
#ifdef CONFIG_PSI
	/* Per-cgroup PSI is only kept on the default hierarchy. */
	if (!static_branch_likely(&psi_disabled) &&
	    cgroup_subsys_on_dfl(memory_cgrp_subsys)) {
		struct psi_group *psi = cgroup_psi(memcg->css.cgroup);

		if (psi && READ_ONCE(psi->enabled))
			*psi_pct = LOAD_INT(READ_ONCE(psi->avg[PSI_MEM_SOME][0]));
	}
#endif
}

/* The nearest of @memcg and its ancestors under pressure by its own signals. */
static struct mem_cgroup *thp_auto_memcg_cause(struct mem_cgroup *memcg)
{
	for (; memcg && !mem_cgroup_is_root(memcg);
	     memcg = parent_mem_cgroup(memcg))
		if (memcg->thp_auto_own)
			return memcg;
	return NULL;
}

/*
 * Sample every memcg, each after its parent (mem_cgroup_iter() walks the
 * tree in pre-order), and keep the state in force for each where page
 * faults read it; with @in_use false, set every memcg plentiful. Fires
 * thp_auto_state for each memcg whose state in force changed.
 */
static void thp_auto_memcg_walk(bool in_use)
{
	const struct thp_auto_thresholds *t = &thp_auto_memcg_thr;
	struct mem_cgroup *memcg, *parent, *cause;
	unsigned int avail_pct, psi_pct, nr = 0;
	bool pressure, inherited;

	lockdep_assert_held(&thp_auto_lock);
	if (mem_cgroup_disabled())
		return;
	/* Nothing to sample, nothing to clear. */
	if (!READ_ONCE(thp_auto_memcgs_under_pressure) &&
	    (!in_use || (!t->pressure_available_pct && !t->pressure_psi_pct)))
		return;
	mem_cgroup_flush_stats_ratelimited(root_mem_cgroup);
	for (memcg = mem_cgroup_iter(NULL, NULL, NULL); memcg;
	     memcg = mem_cgroup_iter(NULL, memcg, NULL)) {
		/* The root memcg follows the system state. */
		if (mem_cgroup_is_root(memcg))
			continue;
		/* Sampled before its children in this walk. */
		parent = parent_mem_cgroup(memcg);
		inherited = parent && parent->thp_auto_pressure;
		thp_auto_memcg_signals(memcg, &avail_pct, &psi_pct);
		if (in_use) {
			pressure = thp_auto_memcg_next(&memcg->thp_auto_own,
						       inherited, avail_pct,
						       psi_pct, t);
		} else {
			memcg->thp_auto_own = false;
			pressure = false;
		}
		nr += pressure;
		if (pressure != memcg->thp_auto_pressure) {
			WRITE_ONCE(memcg->thp_auto_pressure, pressure);
			cause = pressure ? thp_auto_memcg_cause(memcg) : memcg;
			if (cause && cause != memcg)
				thp_auto_memcg_signals(cause, &avail_pct, &psi_pct);
			trace_thp_auto_state(cgroup_ino(memcg->css.cgroup),
					     pressure && cause ?
					     cgroup_ino(cause->css.cgroup) : 0,
					     pressure, avail_pct, psi_pct);
		}
		cond_resched();
	}
	WRITE_ONCE(thp_auto_memcgs_under_pressure, nr);
}

/**
 * thp_auto_memcg_under_pressure - is the memcg of @mm under pressure?
 * @mm: the mm of a page fault, or the mm khugepaged scans
 *
 * Looks at the memcg that @mm's memory is charged to, that of its owner.
 * Called by thp_auto_mm_under_pressure() only while some memcg is.
 *
 * Return: true if "auto" is under pressure in that memcg (by its own
 * signals or an ancestor's), false for no memcg or the root memcg.
 */
bool thp_auto_memcg_under_pressure(struct mm_struct *mm)
{
	struct mem_cgroup *memcg;
	bool pressure;

	if (mem_cgroup_disabled())
		return false;
	/* mm->owner and its memcg stay valid within the RCU section. */
	rcu_read_lock();
	memcg = mem_cgroup_from_task(rcu_dereference(mm->owner));
	pressure = memcg && READ_ONCE(memcg->thp_auto_pressure);
	rcu_read_unlock();
	return pressure;
}
#else
static void thp_auto_memcg_walk(bool in_use)
{
}

bool thp_auto_memcg_under_pressure(struct mm_struct *mm)
{
	return false;
}
#endif /* CONFIG_MEMCG */

static void thp_auto_fn(struct work_struct *work)
{
	unsigned int avail_pct, psi_pct;
	bool in_use;

	mutex_lock(&thp_auto_lock);
	avail_pct = thp_auto_available_pct();
	psi_pct = thp_auto_psi_pct();
	in_use = thp_auto_in_use();
	if (in_use) {
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
	thp_auto_memcg_walk(in_use);
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

/*
 * The knob of each threshold: its set (the system's or the memcgs') and its
 * offset in struct thp_auto_thresholds.
 */
struct thp_auto_attr {
	struct kobj_attribute attr;
	struct thp_auto_thresholds *thr;
	size_t offset;
};

static struct thp_auto_attr *to_thp_auto_attr(struct kobj_attribute *attr)
{
	return container_of(attr, struct thp_auto_attr, attr);
}

static unsigned int *thp_auto_field(struct thp_auto_thresholds *t,
				    struct kobj_attribute *attr)
{
	return (unsigned int *)((char *)t + to_thp_auto_attr(attr)->offset);
}

static ssize_t threshold_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	unsigned int val;

	mutex_lock(&thp_auto_lock);
	val = *thp_auto_field(to_thp_auto_attr(attr)->thr, attr);
	mutex_unlock(&thp_auto_lock);
	return sysfs_emit(buf, "%u\n", val);
}

static ssize_t threshold_store(struct kobject *kobj,
			       struct kobj_attribute *attr,
			       const char *buf, size_t count)
{
	struct thp_auto_thresholds *thr = to_thp_auto_attr(attr)->thr;
	struct thp_auto_thresholds t;
	unsigned int val;
	int err;

	err = kstrtouint(buf, 10, &val);
	if (err)
		return -EINVAL;

	mutex_lock(&thp_auto_lock);
	t = *thr;
	*thp_auto_field(&t, attr) = val;
	if (!thp_auto_thresholds_valid(&t)) {
		mutex_unlock(&thp_auto_lock);
		return -EINVAL;
	}
	*thr = t;
	mutex_unlock(&thp_auto_lock);
	thp_auto_policy_changed();
	return count;
}

static struct thp_auto_attr pressure_available_pct_attr = {
	.attr = __ATTR(pressure_available_pct, 0644, threshold_show, threshold_store),
	.thr = &thp_auto_thr,
	.offset = offsetof(struct thp_auto_thresholds, pressure_available_pct),
};

static struct thp_auto_attr plentiful_available_pct_attr = {
	.attr = __ATTR(plentiful_available_pct, 0644, threshold_show, threshold_store),
	.thr = &thp_auto_thr,
	.offset = offsetof(struct thp_auto_thresholds, plentiful_available_pct),
};

static struct thp_auto_attr pressure_psi_pct_attr = {
	.attr = __ATTR(pressure_psi_pct, 0644, threshold_show, threshold_store),
	.thr = &thp_auto_thr,
	.offset = offsetof(struct thp_auto_thresholds, pressure_psi_pct),
};

static struct thp_auto_attr plentiful_psi_pct_attr = {
	.attr = __ATTR(plentiful_psi_pct, 0644, threshold_show, threshold_store),
	.thr = &thp_auto_thr,
	.offset = offsetof(struct thp_auto_thresholds, plentiful_psi_pct),
};

static struct thp_auto_attr memcg_pressure_available_pct_attr = {
	.attr = __ATTR(memcg_pressure_available_pct, 0644, threshold_show, threshold_store),
	.thr = &thp_auto_memcg_thr,
	.offset = offsetof(struct thp_auto_thresholds, pressure_available_pct),
};

static struct thp_auto_attr memcg_plentiful_available_pct_attr = {
	.attr = __ATTR(memcg_plentiful_available_pct, 0644, threshold_show, threshold_store),
	.thr = &thp_auto_memcg_thr,
	.offset = offsetof(struct thp_auto_thresholds, plentiful_available_pct),
};

static struct thp_auto_attr memcg_pressure_psi_pct_attr = {
	.attr = __ATTR(memcg_pressure_psi_pct, 0644, threshold_show, threshold_store),
	.thr = &thp_auto_memcg_thr,
	.offset = offsetof(struct thp_auto_thresholds, pressure_psi_pct),
};

static struct thp_auto_attr memcg_plentiful_psi_pct_attr = {
	.attr = __ATTR(memcg_plentiful_psi_pct, 0644, threshold_show, threshold_store),
	.thr = &thp_auto_memcg_thr,
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
	&memcg_pressure_available_pct_attr.attr.attr,
	&memcg_plentiful_available_pct_attr.attr.attr,
	&memcg_pressure_psi_pct_attr.attr.attr,
	&memcg_plentiful_psi_pct_attr.attr.attr,
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
