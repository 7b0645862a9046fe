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
 * is pressure when its own signals or those of an ancestor say so.
 *
 * The work samples only the memcgs that a charge took above their mark,
 * the usage at which the memory available to them falls to
 * memcg_plentiful_available_pct of their limit (thp_auto_memcg_mark()),
 * and those still under pressure; the charge path compares the usage it
 * has just read with the mark, once per charge batch. A memcg far from
 * its limit costs nothing per interval, however many there are. When the
 * state in force of a memcg changes, its subtree follows at once. The
 * price: a memcg far below its limit follows the system state and its
 * ancestors', not its own PSI stall alone. A page fault under
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
 * The memcgs whose usage went above their mark (thp_auto_memcg_mark()),
 * the only ones the work samples: a memcg further below its limit cannot
 * come under pressure by its own available memory.  A charge adds a memcg
 * (thp_auto_memcg_watch(), any context), the work takes it off once it is
 * plentiful and below its mark again, and offlining takes it off for good.
 * thp_auto_seq marks the memcgs the current pass has sampled.
 */
static LIST_HEAD(thp_auto_watched);
static DEFINE_SPINLOCK(thp_auto_watch_lock);
static unsigned int thp_auto_watch_seq;

/*
 * The usage of @memcg, in pages, at or below which the memory available to
 * it is at least memcg_plentiful_available_pct of its limit.
 */
static unsigned long thp_auto_memcg_mark(struct mem_cgroup *memcg)
{
	unsigned long limit = min(READ_ONCE(memcg->memory.high),
				  READ_ONCE(memcg->memory.max));
	unsigned int pct = READ_ONCE(thp_auto_memcg_thr.plentiful_available_pct);

	if (limit >= PAGE_COUNTER_MAX)
		return PAGE_COUNTER_MAX;
	return limit - mult_frac(limit, pct, 100);
}

/**
 * thp_auto_memcg_init - a new memcg: not watched, no mark
 * @memcg: the memcg being allocated
 */
void thp_auto_memcg_init(struct mem_cgroup *memcg)
{
	memcg->thp_auto_mark = PAGE_COUNTER_MAX;
	INIT_LIST_HEAD(&memcg->thp_auto_node);
}

/**
 * thp_auto_memcg_watch - have the work sample @memcg's signals
 * @memcg: a memcg charged above its mark
 *
 * Called from the charge path, in any context, once per charge batch while
 * the usage is above the mark; a memcg on its way out is not added.
 */
void thp_auto_memcg_watch(struct mem_cgroup *memcg)
{
	unsigned long flags;

	if (!list_empty_careful(&memcg->thp_auto_node))
		return;
	spin_lock_irqsave(&thp_auto_watch_lock, flags);
	/* Offlining sets the mark out of reach under this lock. */
	if (list_empty(&memcg->thp_auto_node) &&
	    READ_ONCE(memcg->thp_auto_mark) < PAGE_COUNTER_MAX &&
	    !css_is_dying(&memcg->css))
		list_add_tail(&memcg->thp_auto_node, &thp_auto_watched);
	spin_unlock_irqrestore(&thp_auto_watch_lock, flags);
}

/**
 * thp_auto_memcg_limit_changed - memory.high or memory.max of @memcg changed
 * @memcg: the memcg
 */
void thp_auto_memcg_limit_changed(struct mem_cgroup *memcg)
{
	if (css_is_dying(&memcg->css))
		return;
	WRITE_ONCE(memcg->thp_auto_mark, thp_auto_memcg_mark(memcg));
	thp_auto_memcg_charged(memcg, page_counter_read(&memcg->memory));
}

/* A threshold of the memcgs changed: every mark follows. */
static void thp_auto_memcg_marks_changed(void)
{
	struct mem_cgroup *memcg;

	if (mem_cgroup_disabled())
		return;
	for (memcg = mem_cgroup_iter(NULL, NULL, NULL); memcg;
	     memcg = mem_cgroup_iter(NULL, memcg, NULL)) {
		if (!mem_cgroup_is_root(memcg))
			thp_auto_memcg_limit_changed(memcg);
		cond_resched();
	}
}

/*
 * Set the state in force for @memcg, count it, and fire thp_auto_state
 * with the signals of the memcg whose own state caused it.
 */
static void thp_auto_memcg_set(struct mem_cgroup *memcg, bool pressure)
{
	struct mem_cgroup *cause = pressure ? thp_auto_memcg_cause(memcg) : memcg;
	unsigned int avail_pct = 0, psi_pct = 0;

	lockdep_assert_held(&thp_auto_lock);
	WRITE_ONCE(memcg->thp_auto_pressure, pressure);
	WRITE_ONCE(thp_auto_memcgs_under_pressure,
		   thp_auto_memcgs_under_pressure + (pressure ? 1 : -1));
	if (cause)
		thp_auto_memcg_signals(cause, &avail_pct, &psi_pct);
	trace_thp_auto_state(cgroup_ino(memcg->css.cgroup),
			     pressure && cause ? cgroup_ino(cause->css.cgroup) : 0,
			     pressure, avail_pct, psi_pct);
}

/*
 * The state in force for @top may have changed: set it and that of its
 * descendants, each after its parent (mem_cgroup_iter() walks the subtree
 * in pre-order), from their own states.  Only on a change of state: the
 * subtree of a memcg is not walked while its state holds.
 */
static void thp_auto_memcg_propagate(struct mem_cgroup *top)
{
	struct mem_cgroup *memcg, *parent;
	bool pressure;

	for (memcg = mem_cgroup_iter(top, NULL, NULL); memcg;
	     memcg = mem_cgroup_iter(top, memcg, NULL)) {
		/* Going offline: thp_auto_memcg_offline() clears it. */
		if (css_is_dying(&memcg->css))
			continue;
		parent = parent_mem_cgroup(memcg);
		pressure = memcg->thp_auto_own ||
			   (parent && READ_ONCE(parent->thp_auto_pressure));
		if (pressure != memcg->thp_auto_pressure)
			thp_auto_memcg_set(memcg, pressure);
		cond_resched();
	}
}

/**
 * thp_auto_memcg_online - a memcg comes online
 * @memcg: the memcg
 *
 * It starts in the state in force for its parent.
 */
void thp_auto_memcg_online(struct mem_cgroup *memcg)
{
	struct mem_cgroup *parent = parent_mem_cgroup(memcg);

	mutex_lock(&thp_auto_lock);
	if (parent && READ_ONCE(parent->thp_auto_pressure))
		thp_auto_memcg_set(memcg, true);
	mutex_unlock(&thp_auto_lock);
}

/**
 * thp_auto_memcg_offline - a memcg goes offline
 * @memcg: the memcg, without children
 *
 * Taken off the watched memcgs for good; no longer counted under pressure.
 */
void thp_auto_memcg_offline(struct mem_cgroup *memcg)
{
	unsigned long flags;

	spin_lock_irqsave(&thp_auto_watch_lock, flags);
	WRITE_ONCE(memcg->thp_auto_mark, PAGE_COUNTER_MAX);
	list_del_init(&memcg->thp_auto_node);
	spin_unlock_irqrestore(&thp_auto_watch_lock, flags);

	mutex_lock(&thp_auto_lock);
	memcg->thp_auto_own = false;
	if (memcg->thp_auto_pressure) {
		WRITE_ONCE(memcg->thp_auto_pressure, false);
		WRITE_ONCE(thp_auto_memcgs_under_pressure,
			   thp_auto_memcgs_under_pressure - 1);
	}
	mutex_unlock(&thp_auto_lock);
}

/*
 * One sample of a watched @memcg: its own state, with hysteresis, and, if
 * the state in force changed, that of its subtree.  Returns true if it can
 * leave the watched memcgs: plentiful, and at or below its mark.
 */
static bool thp_auto_memcg_sample(struct mem_cgroup *memcg,
				  const struct thp_auto_thresholds *t)
{
	struct mem_cgroup *parent = parent_mem_cgroup(memcg);
	unsigned int avail_pct, psi_pct;
	bool pressure;

	thp_auto_memcg_signals(memcg, &avail_pct, &psi_pct);
	pressure = thp_auto_memcg_next(&memcg->thp_auto_own,
				       parent && READ_ONCE(parent->thp_auto_pressure),
				       avail_pct, psi_pct, t);
	if (pressure != memcg->thp_auto_pressure)
		thp_auto_memcg_propagate(memcg);
	return !memcg->thp_auto_own &&
	       page_counter_read(&memcg->memory) <= READ_ONCE(memcg->thp_auto_mark);
}

/* "auto" is no longer in use: every memcg plentiful, as at the start. */
static void thp_auto_memcg_clear(void)
{
	struct mem_cgroup *memcg;

	/* A memcg under pressure by its own signals is counted in force. */
	if (!READ_ONCE(thp_auto_memcgs_under_pressure))
		return;
	for (memcg = mem_cgroup_iter(NULL, NULL, NULL); memcg;
	     memcg = mem_cgroup_iter(NULL, memcg, NULL)) {
		memcg->thp_auto_own = false;
		if (memcg->thp_auto_pressure)
			thp_auto_memcg_set(memcg, false);
		cond_resched();
	}
}

/*
 * Sample every watched memcg once, in the order they were watched; with
 * @in_use false, set every memcg plentiful.  A memcg not watched costs
 * nothing here: with 2000 memcgs far from their limits a pass takes the
 * lock once and finds the list empty.
 */
static void thp_auto_memcg_walk(bool in_use)
{
	const struct thp_auto_thresholds *t = &thp_auto_memcg_thr;
	struct mem_cgroup *memcg;
	unsigned int seq;
	bool got, done;

	lockdep_assert_held(&thp_auto_lock);
	if (mem_cgroup_disabled())
		return;
	if (!in_use) {
		thp_auto_memcg_clear();
		return;
	}
	if (list_empty_careful(&thp_auto_watched))
		return;
	mem_cgroup_flush_stats_ratelimited(root_mem_cgroup);
	seq = ++thp_auto_watch_seq;
	for (;;) {
		spin_lock_irq(&thp_auto_watch_lock);
		memcg = list_first_entry_or_null(&thp_auto_watched,
						 struct mem_cgroup, thp_auto_node);
		if (!memcg || memcg->thp_auto_seq == seq) {
			spin_unlock_irq(&thp_auto_watch_lock);
			break;
		}
		memcg->thp_auto_seq = seq;
		list_move_tail(&memcg->thp_auto_node, &thp_auto_watched);
		got = css_tryget(&memcg->css);
		spin_unlock_irq(&thp_auto_watch_lock);
		if (!got)
			continue;
		done = thp_auto_memcg_sample(memcg, t);
		if (done) {
			/* A charge since the sample added nothing: it saw it listed. */
			spin_lock_irq(&thp_auto_watch_lock);
			if (page_counter_read(&memcg->memory) <=
			    READ_ONCE(memcg->thp_auto_mark))
				list_del_init(&memcg->thp_auto_node);
			spin_unlock_irq(&thp_auto_watch_lock);
		}
		css_put(&memcg->css);
		cond_resched();
	}
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

static void thp_auto_memcg_marks_changed(void)
{
}

bool thp_auto_memcg_under_pressure(struct mm_struct *mm)
{
	return false;
}
#endif /* CONFIG_MEMCG */

/**
 * thp_auto_pressure_fault - "auto" allowed no THP at a fault in @vma
 * @vma: the VMA of the fault
 * @vm_flags: its flags, as the fault reads them
 *
 * Called once per page fault in which some THP size resolves to "auto",
 * "auto" is under pressure for the mm, and no THP of an "auto" size was
 * allowed therefore.  Counted in the memcg of the mm (memory.stat's
 * thp_auto_pressure_fault), at no cost while memory is plentiful; not
 * in a VMA where THPs are off anyway (MADV_NOHUGEPAGE, prctl), which the
 * policy is asked about before.
 */
void thp_auto_pressure_fault(struct vm_area_struct *vma, unsigned long vm_flags)
{
	if (thp_disabled_by_hw() || vma_thp_disabled(vma, vm_flags, false))
		return;
	mod_memcg_mm_state(vma->vm_mm, MEMCG_THP_AUTO_PRESSURE_FAULT, 1);
}

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
	if (thr == &thp_auto_memcg_thr)
		thp_auto_memcg_marks_changed();
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
