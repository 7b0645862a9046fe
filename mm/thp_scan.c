// SPDX-License-Identifier: GPL-2.0
/*
 * thp_scan: find anonymous (m)THPs that do not pay for themselves and
 * split them.
 *
 * Every anon large folio of order >= 2 joins a thp_scan queue when it gets
 * its first rmap and stays there until it is freed or split.  A kthread,
 * kthpscand, walks the queues without waiting for memory pressure, and the
 * deferred split shrinker walks them under pressure.  For each folio:
 * partially mapped, split it; otherwise count its zero-filled subpages and
 * split it if more than underused_zero_pct percent are zero (the split
 * maps them to the shared zeropage and frees them); otherwise keep it and
 * look again later.  Controls in /sys/kernel/mm/transparent_hugepage/
 * thp_scan/; see Documentation/admin-guide/mm/transhuge.rst and
 * Documentation/mm/thp_scan.rst.
 */

#define pr_fmt(fmt) "thp_scan: " fmt

#include <linux/bitmap.h>
#include <linux/freezer.h>
#include <linux/highmem.h>
#include <linux/kernel.h>
#include <linux/khugepaged.h>
#include <linux/kobject.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/page-flags.h>
#include <linux/rmap.h>
#include <linux/sched/cputime.h>
#include <linux/sysfs.h>
#include <linux/thp_scan.h>
#include <linux/vm_event_item.h>
#include <linux/wait.h>

#include "internal.h"

#define CREATE_TRACE_POINTS
#include <trace/events/thp_scan.h>

/*
 * Whether the scanner runs.  On by default: underused THPs must be
 * recovered without an admin having to ask for it.  The knobs are written
 * only through sysfs; readers use READ_ONCE() and need no lock.
 */
static bool thp_scan_enabled __read_mostly = true;

/*
 * A large folio is underused when more than this percentage of its
 * subpages are zero-filled (100: never).  One knob for every order: the
 * limit in subpages is derived per folio by thp_scan_max_zero().
 */
static unsigned int thp_scan_underused_zero_pct __read_mostly = 90;

/* Subpages kthpscand may look at per round: the zero scan's budget. */
static unsigned int thp_scan_pages_to_scan __read_mostly = 8192;

/* How long kthpscand sleeps between rounds. */
static unsigned int thp_scan_sleep_millisecs __read_mostly = 1000;

/*
 * How old a folio must be, since it was queued or last scanned, before
 * kthpscand looks at it: time for a new THP to be filled, and a bound on
 * how often a kept one is rescanned.  The shrinker does not wait.
 */
static unsigned int thp_scan_min_age_millisecs __read_mostly = 10000;

/*
 * The most new memory a khugepaged collapse may add to a range, in percent
 * of the THP it makes: none PTEs, zero-page PTEs and zero-filled pages
 * count as new.  Kept well below underused_zero_pct, the line at which
 * thp_scan splits, so that a range is not traded back and forth between
 * the two: 12 is about max_ptes_none=64 for a PMD THP, which kept a redis
 * that had freed most of its memory at the footprint of "never".
 */
static unsigned int thp_scan_collapse_max_new_pct __read_mostly = 12;

/*
 * What reclaim does with an anonymous large folio it is about to swap
 * out (split_on_swapout): split none (6.12), split those that are
 * underused or partially mapped, so that their zero-filled and unmapped
 * subpages are freed rather than written, or split every one.
 */
enum thp_scan_swapout_mode {
	THP_SCAN_SWAPOUT_NEVER,
	THP_SCAN_SWAPOUT_UNDERUSED,
	THP_SCAN_SWAPOUT_ALWAYS,
};

static const char * const thp_scan_swapout_names[] = {
	[THP_SCAN_SWAPOUT_NEVER]	= "never",
	[THP_SCAN_SWAPOUT_UNDERUSED]	= "underused",
	[THP_SCAN_SWAPOUT_ALWAYS]	= "always",
};

static unsigned int thp_scan_swapout_mode __read_mostly = THP_SCAN_SWAPOUT_UNDERUSED;

/* Bounds of the knobs above, checked on every write. */
#define THP_SCAN_PAGES_MAX	BIT(24)
#define THP_SCAN_MILLISECS_MAX	(24U * 3600 * 1000)

/* Under pressure, kthpscand's round may look at this many times more. */
#define THP_SCAN_PRESSURE_FACTOR	4

/*
 * How long a folio newly flagged partially mapped waits before kthpscand
 * takes it: rmap flags a folio that one munmap() unmaps VMA by VMA between
 * two VMAs, and the rest of the munmap() frees it.
 */
#define THP_SCAN_PARTIAL_DELAY_MS	100

/*
 * While nothing is queued kthpscand sleeps until a folio is queued; this
 * bounds the sleep should a wake-up be missed (see thp_scan_queued()).
 */
#define THP_SCAN_IDLE_TIMEOUT_MS	(60 * MSEC_PER_SEC)

/*
 * Set while the "auto" THP policy sees memory under pressure
 * (mm/thp_auto.c): kthpscand then works harder, see thp_scan_round().
 */
static bool thp_scan_pressure;

static struct task_struct *thp_scan_thread __read_mostly;
static DECLARE_WAIT_QUEUE_HEAD(thp_scan_wait);

/*
 * kthpscand sleeps without a timeout while every queue is empty: it sets
 * thp_scan_idle first, and whoever queues a folio then wakes it.
 * thp_scan_kicked ends any sleep: a knob changed, or pressure began.
 */
static bool thp_scan_idle;
static bool thp_scan_kicked;

static void thp_scan_wake(void)
{
	WRITE_ONCE(thp_scan_kicked, true);
	wake_up_interruptible(&thp_scan_wait);
}

/**
 * thp_scan_set_pressure - tell thp_scan whether memory is under pressure
 * @pressure: true while the "auto" THP policy behaves like "defer"
 */
void thp_scan_set_pressure(bool pressure)
{
	WRITE_ONCE(thp_scan_pressure, pressure);
	if (pressure)
		thp_scan_wake();
}

/*
 * Parse a 0/1 switch the way khugepaged's boolean knobs do.  @val is only
 * written on success, so a bad value leaves the setting as it was.
 */
static int thp_scan_parse_bool(const char *buf, bool *val)
{
	unsigned int v;

	if (kstrtouint(buf, 10, &v) || v > 1)
		return -EINVAL;
	*val = v;
	return 0;
}

/*
 * The most zero-filled subpages a folio of @nr pages may have and still be
 * used: rounded down, so that a folio with fewer than 100 / (100 - @pct)
 * subpages is underused only when all of them are zero.
 */
static unsigned int thp_scan_max_zero(unsigned int nr, unsigned int pct)
{
	return mult_frac(nr, pct, 100);
}

/*
 * Count the zero-filled subpages of @folio, stopping as soon as the answer
 * is known: at @max_zero + 1 zero subpages (underused), or when so many
 * are filled that the rest cannot reach it (used).  *@scanned is set to
 * the number of subpages looked at, *@nr_zero to the zero-filled ones
 * among them.  A hardware-poisoned subpage is not read, and counts as
 * filled (see thp_scan_page_zero_filled()).
 */
static bool thp_scan_zero_scan(struct folio *folio, unsigned int max_zero,
			       unsigned int *scanned, unsigned int *nr_zero)
{
	unsigned int nr = folio_nr_pages(folio);
	unsigned int zero = 0, filled = 0, i;
	bool underused = false;

	for (i = 0; i < nr; i++) {
		if (thp_scan_page_zero_filled(folio_page(folio, i))) {
			if (++zero > max_zero) {
				underused = true;
				break;
			}
		} else if (++filled >= nr - max_zero) {
			break;
		}
	}
	*scanned = min(i + 1, nr);
	*nr_zero = zero;
	return underused;
}

/* How many subpages of @folio are mapped (all of them when PMD-mapped). */
static unsigned int thp_scan_mapped(struct folio *folio)
{
	if (folio_entire_mapcount(folio))
		return folio_nr_pages(folio);
	return folio_nr_pages_mapped(folio);
}

/*
 * With thp_scan off, only the deferred split shrinker decides, and judges
 * as 6.12 does: by khugepaged's max_ptes_none, PMD THPs only, nothing at
 * its default.  What it looked at is not known.
 */
static bool thp_scan_stock_underused(struct folio *folio, unsigned int max_zero,
				     unsigned int *scanned, unsigned int *nr_zero)
{
	*scanned = 0;
	*nr_zero = 0;
	return folio_test_pmd_mappable(folio) && thp_underused(folio);
}

/*
 * What is known of a folio when it is decided on, so that the decision
 * itself is a function of facts alone, and of the two probes it calls
 * only when they can change it (struct thp_scan_probes).
 */
struct thp_scan_facts {
	unsigned int order;
	bool stock;		/* thp_scan off: decide as 6.12's shrinker */
	bool mapped;		/* mapped at all */
	bool flagged;		/* PG_partially_mapped: a hint, set by rmap */
	bool looks_partial;	/* folio_looks_partially_mapped() */
	bool pinned;		/* references beyond its mappings: no split */
	bool mlocked;		/* PG_mlocked: a split frees no zero subpage */
	bool swapcache;		/* in the swap cache: split to order 0 only */
	bool judge;		/* may be judged underused */
	unsigned int max_zero;	/* the most zero subpages of a used folio */
};

/* What the rmap walk found: the truth about the folio's mappings. */
struct thp_scan_walk {
	unsigned long *mapped;	/* the subpages some page table maps */
	unsigned int nr_mapped;	/* how many */
	unsigned int nr_vmas;	/* the mappings it visited */
	unsigned int nr_entries; /* the page table entries it found */
	bool mlocked;		/* a split would map no zero subpage away */
};

/*
 * The costly steps of a decision: the zero scan (true: underused), and the
 * rmap walk (0, or -EBUSY when a lock was contended or memory short).
 */
struct thp_scan_probes {
	bool (*zero_scan)(struct folio *folio, unsigned int max_zero,
			  unsigned int *scanned, unsigned int *nr_zero);
	int (*rmap_walk)(struct folio *folio, struct thp_scan_walk *w);
};

/* A decision, what it cost, and for a split the order to split to. */
struct thp_scan_verdict {
	enum thp_scan_decision d;
	unsigned int new_order;
	unsigned int scanned;	/* subpages the zero scan looked at */
	unsigned int zero;	/* zero-filled ones among them */
	bool walked;		/* the rmap walk ran: *w holds what it found */
};

/*
 * Is every aligned block of 2^@k subpages of @mapped (2^@order bits)
 * either mapped whole or not mapped at all?
 */
static bool thp_scan_blocks_whole(const unsigned long *mapped,
				  unsigned int order, unsigned int k)
{
	unsigned int nr = 1U << order, step = 1U << k, i;

	for (i = 0; i < nr; i += step) {
		bool first = test_bit(i, mapped);

		if (first ? find_next_zero_bit(mapped, i + step, i) < i + step :
			    find_next_bit(mapped, i + step, i) < i + step)
			return false;
	}
	return true;
}

/*
 * The order to split a partially mapped folio of @order to: the largest
 * anonymous large order (from THP_SCAN_MIN_ORDER) at which every block is
 * mapped whole or not at all, so that what is mapped stays huge and what
 * is not is freed; 0 when there is none.
 */
static unsigned int thp_scan_split_order(const unsigned long *mapped,
					 unsigned int order)
{
	unsigned int k;

	for (k = order - 1; k >= THP_SCAN_MIN_ORDER; k--)
		if (thp_scan_blocks_whole(mapped, order, k))
			return k;
	return 0;
}

/*
 * Decide on a folio from @f, calling the probes on @folio only when their
 * answer can change the decision; @w receives what the rmap walk found.
 *
 * First what makes any split pointless or impossible (not mapped, pinned),
 * then a partial mapping (flagged, or seen in the mapcounts), confirmed by
 * the rmap walk: a flag the walk refutes is dropped, and a confirmed one
 * gives the order to split to.  Then underuse: never for an mlocked folio,
 * whose split maps no zero subpage away; the zero scan; and for an
 * underused folio the walk again, for mlocked mappings.
 */
static void thp_scan_decide(const struct thp_scan_facts *f, struct folio *folio,
			    const struct thp_scan_probes *probes,
			    struct thp_scan_walk *w, struct thp_scan_verdict *v)
{
	unsigned int nr = 1U << f->order;

	memset(v, 0, sizeof(*v));
	if (!f->mapped) {
		v->d = THP_SCAN_KEEP_UNMAPPED;
		return;
	}
	if (f->stock) {
		/* 6.12: split what is flagged, judge the rest its way. */
		if (f->flagged)
			v->d = THP_SCAN_SPLIT_PARTIAL;
		else if (f->judge &&
			 probes->zero_scan(folio, f->max_zero, &v->scanned, &v->zero))
			v->d = THP_SCAN_SPLIT_UNDERUSED;
		else
			v->d = f->judge ? THP_SCAN_KEEP_USED : THP_SCAN_KEEP_SKIPPED;
		return;
	}
	if (f->pinned) {
		v->d = THP_SCAN_KEEP_PINNED;
		return;
	}
	if (f->flagged || f->looks_partial) {
		if (!f->looks_partial) {
			v->d = THP_SCAN_KEEP_NOT_PARTIAL;
			return;
		}
		v->walked = true;
		if (probes->rmap_walk(folio, w)) {
			v->d = THP_SCAN_KEEP_BUSY;
			return;
		}
		if (!w->nr_mapped) {
			v->d = THP_SCAN_KEEP_UNMAPPED;
		} else if (w->nr_mapped == nr) {
			v->d = THP_SCAN_KEEP_NOT_PARTIAL;
		} else {
			v->d = THP_SCAN_SPLIT_PARTIAL;
			if (!f->swapcache)
				v->new_order = thp_scan_split_order(w->mapped, f->order);
		}
		return;
	}
	if (!f->judge) {
		v->d = THP_SCAN_KEEP_SKIPPED;
		return;
	}
	if (f->mlocked) {
		v->d = THP_SCAN_KEEP_MLOCKED;
		return;
	}
	if (!probes->zero_scan(folio, f->max_zero, &v->scanned, &v->zero)) {
		v->d = THP_SCAN_KEEP_USED;
		return;
	}
	v->walked = true;
	if (probes->rmap_walk(folio, w))
		v->d = THP_SCAN_KEEP_BUSY;
	else if (w->mlocked)
		v->d = THP_SCAN_KEEP_MLOCKED;
	else
		v->d = THP_SCAN_SPLIT_UNDERUSED;
}

/* Mark the subpages of @folio that the page tables of @vma map. */
static bool thp_scan_rmap_one(struct folio *folio, struct vm_area_struct *vma,
			      unsigned long addr, void *arg)
{
	DEFINE_FOLIO_VMA_WALK(pvmw, folio, vma, addr, 0);
	unsigned long first = folio_pfn(folio), nr = folio_nr_pages(folio);
	struct thp_scan_walk *w = arg;

	w->nr_vmas++;
	/* try_to_map_unused_to_zeropage() leaves these subpages mapped. */
	if ((vma->vm_flags & VM_LOCKED) || mm_forbids_zeropage(vma->vm_mm))
		w->mlocked = true;
	while (page_vma_mapped_walk(&pvmw)) {
		unsigned long pfn;

		w->nr_entries++;
		if (!pvmw.pte) {
			/* Mapped by a PMD: every subpage. */
			bitmap_fill(w->mapped, nr);
			continue;
		}
		pfn = pte_pfn(ptep_get(pvmw.pte));
		if (pfn - first < nr)
			__set_bit(pfn - first, w->mapped);
	}
	return true;
}

/*
 * The rmap walk: which subpages of @folio (locked by the caller) any page
 * table maps, and whether any mapping is mlocked.  Never waits for the
 * anon_vma lock: contention, or no memory for the bitmap, is -EBUSY, and
 * the folio is kept for now.
 */
static int thp_scan_rmap_walk(struct folio *folio, struct thp_scan_walk *w)
{
	unsigned int nr = folio_nr_pages(folio);
	struct rmap_walk_control rwc = {
		.rmap_one = thp_scan_rmap_one,
		.arg = w,
		.try_lock = true,
	};

	if (!w->mapped) {
		w->mapped = bitmap_zalloc(nr, GFP_NOWAIT | __GFP_NOWARN);
		if (!w->mapped)
			return -EBUSY;
	} else {
		bitmap_zero(w->mapped, nr);
	}
	w->nr_vmas = 0;
	w->nr_entries = 0;
	w->mlocked = folio_test_mlocked(folio);
	rmap_walk(folio, &rwc);
	if (rwc.contended)
		return -EBUSY;
	w->nr_mapped = bitmap_weight(w->mapped, nr);
	return 0;
}

/*
 * The queue.
 *
 * A queue is 6.12's struct deferred_split, one per node and one per memcg:
 * split_queue holds the folios known to be partially mapped, scanned
 * first; then two lists per order, each in LRU order: scan_queue[] the
 * folios never looked at, kept_queue[] those looked at and kept.  A folio
 * joins the tail of its list stamped with the time (folio->_thp_scan_stamp,
 * whose lowest bit says it is on a kept list), the scanner takes from the
 * heads, and a folio scanned and kept goes to the tail of its kept list
 * with a new stamp: each list is sorted by stamp, and the scanner stops at
 * the first folio younger than the minimum age.  kthpscand takes the older
 * of the two heads of an order; the shrinker takes new folios at any age
 * and kept ones only after the minimum age, so that reclaim does not
 * zero-scan the same dense THPs again on every pass.
 *
 * All under split_queue_lock.  The scanner takes one folio at a time off
 * its list, with a reference held, and works on it on no list at all, so
 * that the rules in the comment above __folio_unqueue_deferred_split()
 * hold: a folio being freed (refcount zero) is only ever unlinked under
 * the lock, by whoever sees it first.
 */

/* The lowest bit of folio->_thp_scan_stamp: the folio is on a kept list. */
#define THP_SCAN_STAMP_KEPT	1UL

static struct list_head *thp_scan_list(struct deferred_split *q,
				       unsigned int order)
{
	return &q->scan_queue[order - THP_SCAN_MIN_ORDER];
}

static struct list_head *thp_scan_kept_list(struct deferred_split *q,
					    unsigned int order)
{
	return &q->kept_queue[order - THP_SCAN_MIN_ORDER];
}

/* Stamp @folio with the time, and with whether it goes on a kept list. */
static void thp_scan_stamp(struct folio *folio, bool kept)
{
	folio->_thp_scan_stamp = (jiffies & ~THP_SCAN_STAMP_KEPT) |
				 (kept ? THP_SCAN_STAMP_KEPT : 0);
}

static bool thp_scan_is_kept(struct folio *folio)
{
	return folio->_thp_scan_stamp & THP_SCAN_STAMP_KEPT;
}

/**
 * thp_scan_init_queue - initialize the thp_scan lists of a queue
 * @q: a deferred split queue; the caller initializes the rest of it
 */
void thp_scan_init_queue(struct deferred_split *q)
{
	int i;

	for (i = 0; i < THP_SCAN_NR_LISTS; i++) {
		INIT_LIST_HEAD(&q->scan_queue[i]);
		INIT_LIST_HEAD(&q->kept_queue[i]);
	}
	q->nr_kept = 0;
}

/**
 * thp_scan_enqueue - put a large folio at the tail of its list
 * @q: the queue of @folio's memcg or node, whose lock the caller holds
 * @folio: a folio of order >= 2 that is on no list
 * @kept: thp_scan looked at it and kept it
 *
 * A folio flagged partially mapped goes to split_queue, any other to the
 * new or the kept list of its order; either is stamped with the time it
 * joined.  The caller counts it in split_queue_len.
 */
void thp_scan_enqueue(struct deferred_split *q, struct folio *folio, bool kept)
{
	lockdep_assert_held(&q->split_queue_lock);

	if (folio_test_partially_mapped(folio)) {
		thp_scan_stamp(folio, false);
		list_add_tail(&folio->_deferred_list, &q->split_queue);
	} else if (kept) {
		thp_scan_stamp(folio, true);
		list_add_tail(&folio->_deferred_list,
			      thp_scan_kept_list(q, folio_order(folio)));
		q->nr_kept++;
	} else {
		thp_scan_stamp(folio, false);
		list_add_tail(&folio->_deferred_list,
			      thp_scan_list(q, folio_order(folio)));
	}
}

/**
 * thp_scan_dequeue - take a large folio off its list
 * @q: the queue of @folio, whose lock the caller holds
 * @folio: a folio on one of @q's lists
 */
void thp_scan_dequeue(struct deferred_split *q, struct folio *folio)
{
	lockdep_assert_held(&q->split_queue_lock);

	list_del_init(&folio->_deferred_list);
	q->split_queue_len--;
	if (thp_scan_is_kept(folio)) {
		q->nr_kept--;
		folio->_thp_scan_stamp &= ~THP_SCAN_STAMP_KEPT;
	}
}

/**
 * thp_scan_count_objects - what the deferred split shrinker may free
 * @q: a queue
 *
 * Return: with thp_scan on, the folios the shrinker may take at once:
 * the partially mapped ones and those never looked at (the kept ones wait
 * for their minimum age); with it off, every queued folio, as in 6.12.
 */
unsigned long thp_scan_count_objects(struct deferred_split *q)
{
	unsigned long len = READ_ONCE(q->split_queue_len);
	unsigned long kept = READ_ONCE(q->nr_kept);

	if (!thp_scan_is_enabled())
		return len;
	/* Two racy reads: never less than nothing. */
	return len > kept ? len - kept : 0;
}

/**
 * thp_scan_move_partial - a queued folio was just flagged partially mapped
 * @q: the queue of @folio, whose lock the caller holds
 * @folio: the folio, on one of @q's lists
 *
 * Moves it to the tail of split_queue, which kthpscand takes first, and
 * stamps it with the time: it is due THP_SCAN_PARTIAL_DELAY_MS from now.
 */
void thp_scan_move_partial(struct deferred_split *q, struct folio *folio)
{
	lockdep_assert_held(&q->split_queue_lock);

	if (thp_scan_is_kept(folio))
		q->nr_kept--;
	thp_scan_stamp(folio, false);
	list_move_tail(&folio->_deferred_list, &q->split_queue);
}

/**
 * thp_scan_queued - a folio was queued; wake kthpscand if it must act
 * @partial: the folio was just flagged partially mapped
 *
 * Called after the queue lock is dropped.  An idle kthpscand (sleeping
 * because nothing was queued) is woken for any folio; a kthpscand in a
 * timed sleep only for a partially mapped one, which must not wait for
 * the end of a long sleep.  thp_scan_kicked makes it one wake-up a sleep.
 *
 * No barrier: kthpscand sets thp_scan_idle and then takes the lock of
 * every queue to see if one is empty (thp_scan_any_queued()); we read it
 * after releasing the lock of ours.  Whichever of the two took our lock
 * last sees what the other did.  Only a queue that kthpscand's walk did
 * not reach (a memcg created meanwhile) escapes this, and
 * THP_SCAN_IDLE_TIMEOUT_MS bounds the cost of that.
 */
void thp_scan_queued(bool partial)
{
	if (READ_ONCE(thp_scan_kicked) || !thp_scan_is_enabled())
		return;
	if (unlikely(partial || READ_ONCE(thp_scan_idle)))
		thp_scan_wake();
}

/**
 * thp_scan_add_folio - a new anon large folio got its first rmap
 * @folio: the folio, locked or exclusive to the caller
 *
 * Queues @folio for thp_scan, whatever its order from 2 on and whatever
 * made it: page fault, khugepaged collapse, swap-in.  With thp_scan off,
 * only what 6.12 queues: PMD-sized THPs, and only while underused ones
 * may be split (shrink_underused).
 */
void thp_scan_add_folio(struct folio *folio)
{
	if (folio_order(folio) < THP_SCAN_MIN_ORDER)
		return;
	if (!thp_scan_is_enabled() &&
	    (!folio_test_pmd_mappable(folio) || !thp_split_underused()))
		return;
	count_vm_event(THP_SCAN_QUEUED);
	count_mthp_stat(folio_order(folio), MTHP_STAT_THP_SCAN_QUEUED);
	deferred_split_folio(folio, false);
}

/* One pass over the queues: what it may still do and what it did. */
struct thp_scan_round {
	long budget;		/* units of work it may still do */
	unsigned long nr_folios; /* folios it may still take */
	unsigned long min_age;	/* in jiffies, of the folios on kept lists */
	unsigned long new_age;	/* in jiffies, of those on new lists */
	unsigned long partial_age; /* in jiffies, of those on split_queue */
	unsigned long next_due;	/* when the youngest folio left is due */
	bool have_next_due;
	bool left_due;		/* left an order at its share with folios due */
	int order;		/* the list being walked; 0: split_queue */
	long stop;		/* leave the list when budget falls to this */
	unsigned long taken;	/* folios taken off the queues */
	unsigned long split;	/* folios split */
};

/* A list to take folios from, and how old they must be. */
struct thp_scan_src {
	struct list_head *head;
	unsigned long min_age;	/* in jiffies; 0: any age */
};

/*
 * Of the heads of the @nr lists @src of @q, the oldest that is due, or
 * NULL; notes in @r when the others will be due.
 */
static struct folio *thp_scan_pick(const struct thp_scan_src *src, int nr,
				   struct list_head **from,
				   struct thp_scan_round *r)
{
	struct folio *pick = NULL, *folio;
	int i;

	for (i = 0; i < nr; i++) {
		folio = list_first_entry_or_null(src[i].head, struct folio,
						 _deferred_list);
		if (!folio)
			continue;
		if (src[i].min_age) {
			unsigned long due = folio->_thp_scan_stamp + src[i].min_age;

			if (time_before(jiffies, due)) {
				if (!r->have_next_due ||
				    time_before(due, r->next_due))
					r->next_due = due;
				r->have_next_due = true;
				continue;
			}
		}
		if (!pick || time_before(folio->_thp_scan_stamp,
					 pick->_thp_scan_stamp)) {
			pick = folio;
			*from = src[i].head;
		}
	}
	return pick;
}

/*
 * Take the oldest head of the @nr lists @src of @q that is due, with a
 * reference and its lock; NULL when none is.  A folio on its way to be
 * freed (no reference to be had) is unlinked and passed over; one whose
 * lock is taken is left at the tail of its list.
 *
 * Holding the folio lock until the folio is back on its queue keeps out
 * what changes its queue without the queue lock: migration (which decides
 * whether to queue the new folio from whether the old one is listed) and
 * a memcg v1 charge move.
 */
static struct folio *thp_scan_take(struct deferred_split *q,
				   const struct thp_scan_src *src, int nr,
				   struct thp_scan_round *r)
{
	struct folio *folio, *busy;
	struct list_head *from;
	unsigned long flags;

again:
	busy = NULL;
	spin_lock_irqsave(&q->split_queue_lock, flags);
	while ((folio = thp_scan_pick(src, nr, &from, r))) {
		if (!folio_try_get(folio)) {
			/* Lost the race with folio_put(), as in 6.12. */
			thp_scan_dequeue(q, folio);
			if (folio_test_partially_mapped(folio)) {
				folio_clear_partially_mapped(folio);
				mod_mthp_stat(folio_order(folio),
					      MTHP_STAT_NR_ANON_PARTIALLY_MAPPED, -1);
			}
			continue;
		}
		if (folio_trylock(folio)) {
			thp_scan_dequeue(q, folio);
			break;
		}
		/* Busy: to the tail, not to be taken again in this jiffy. */
		thp_scan_stamp(folio, thp_scan_is_kept(folio));
		list_move_tail(&folio->_deferred_list, from);
		busy = folio;
		folio = NULL;
		break;
	}
	spin_unlock_irqrestore(&q->split_queue_lock, flags);
	if (busy) {
		trace_thp_scan_decision(folio_pfn(busy), folio_order(busy), 0, 0,
					thp_scan_mapped(busy),
					THP_SCAN_KEEP_LOCKED);
		/* Not under the queue lock: this may be the last reference. */
		folio_put(busy);
		/* It counts as a folio taken, lest a locked folio be retried forever. */
		r->nr_folios--;
		if (--r->budget > 0 && r->nr_folios)
			goto again;
	}
	if (folio)
		r->taken++;
	return folio;
}

/* Is the head of @head (a list of @q) at least @min_age jiffies old? */
static bool thp_scan_head_due(struct deferred_split *q, struct list_head *head,
			      unsigned long min_age)
{
	struct folio *folio;
	unsigned long flags;
	bool due = false;

	spin_lock_irqsave(&q->split_queue_lock, flags);
	folio = list_first_entry_or_null(head, struct folio, _deferred_list);
	if (folio)
		due = !time_before(jiffies, folio->_thp_scan_stamp + min_age);
	spin_unlock_irqrestore(&q->split_queue_lock, flags);
	return due;
}

/* Is any list of @q below @order non-empty?  A hint: no lock. */
static bool thp_scan_lower_queued(struct deferred_split *q, int order)
{
	int o;

	for (o = THP_SCAN_MIN_ORDER; o < order; o++) {
		/* Racy, and fine: a wrong answer only shifts the shares. */
		if (!data_race(list_empty(thp_scan_list(q, o))))
			return true;
		/* Racy, and fine, as above. */
		if (!data_race(list_empty(thp_scan_kept_list(q, o))))
			return true;
	}
	return false;
}

/*
 * The next folio of @q to scan, in priority order: every partially mapped
 * one first, then the orders from the largest down, each in LRU order and
 * each taking up to two thirds of what is left of the budget while smaller
 * orders are queued (the smallest all of it), so that larger orders get
 * more of a round than smaller ones, and what one order leaves unused goes
 * to the next.  Starts with r->order = 0; NULL when the round is done
 * with @q.
 */
static struct folio *thp_scan_next(struct deferred_split *q,
				   struct thp_scan_round *r)
{
	struct folio *folio;

	while (r->budget > 0 && r->nr_folios) {
		struct thp_scan_src src[2];

		if (!r->order) {
			src[0].head = &q->split_queue;
			src[0].min_age = r->partial_age;
			folio = thp_scan_take(q, src, 1, r);
			if (folio)
				return folio;
			r->order = THP_SCAN_MAX_ORDER + 1;
			r->stop = r->budget;
		}
		if (r->order <= THP_SCAN_MAX_ORDER) {
			src[0].head = thp_scan_list(q, r->order);
			src[0].min_age = r->new_age;
			src[1].head = thp_scan_kept_list(q, r->order);
			src[1].min_age = r->min_age;
			if (r->budget > r->stop) {
				folio = thp_scan_take(q, src, 2, r);
				if (folio)
					return folio;
			} else if (thp_scan_head_due(q, src[0].head, src[0].min_age) ||
				   thp_scan_head_due(q, src[1].head, src[1].min_age)) {
				/* Left at its share with work due: not idle. */
				r->left_due = true;
			}
		}
		if (--r->order < THP_SCAN_MIN_ORDER)
			break;
		r->stop = thp_scan_lower_queued(q, r->order) ? r->budget / 3 : 0;
	}
	return NULL;
}

/*
 * The work a decision did, against the round's budget: the folio taken,
 * every subpage the zero scan read, every mapping and page table entry
 * the rmap walk visited, and every one of the @split_nr subpages of a
 * split, which unmaps and maps each of them again.
 */
static long thp_scan_cost(const struct thp_scan_verdict *v,
			  const struct thp_scan_walk *w, unsigned int split_nr)
{
	long cost = 1 + v->scanned + split_nr;

	if (v->walked)
		cost += w->nr_vmas + w->nr_entries;
	return cost;
}

/* Counters of a decision and of a split, global and per size. */
static void thp_scan_count(unsigned int order, enum vm_event_item event,
			   enum mthp_stat_item item)
{
	count_vm_event(event);
	count_mthp_stat(order, item);
}

/*
 * 6.12 counts a deferred split when rmap flags a folio partially mapped;
 * thp_scan counts it when the rmap walk has confirmed the flag and the
 * split is done, so that a folio unmapped VMA by VMA, or one flagged and
 * then freed whole, is not counted.
 */
static void thp_scan_count_deferred_split_order(unsigned int order)
{
	if (order >= HPAGE_PMD_ORDER)
		count_vm_event(THP_DEFERRED_SPLIT_PAGE);
	count_mthp_stat(order, MTHP_STAT_SPLIT_DEFERRED);
}

/*
 * Decide on @folio, which thp_scan_take() gave us locked, split it if so
 * decided, put it back on its queue if it is kept, and unlock it and drop
 * the reference.
 */
static void thp_scan_folio(struct folio *folio, struct thp_scan_round *r)
{
	unsigned long pfn = folio_pfn(folio);
	unsigned int order = folio_order(folio), nr = folio_nr_pages(folio);
	bool stock = !thp_scan_is_enabled();
	struct thp_scan_facts f = {
		.order = order,
		.stock = stock,
		.mapped = folio_mapped(folio),
		.flagged = folio_test_partially_mapped(folio),
		.looks_partial = folio_looks_partially_mapped(folio),
		/* Our reference is the one pin a split expects. */
		.pinned = !can_split_folio(folio, 1, NULL),
		.mlocked = folio_test_mlocked(folio),
		.swapcache = folio_test_swapcache(folio),
		.judge = thp_split_underused() &&
			 !folio_contain_hwpoisoned_page(folio),
		.max_zero = thp_scan_max_zero(nr,
				READ_ONCE(thp_scan_underused_zero_pct)),
	};
	static const struct thp_scan_probes probes = {
		.zero_scan = thp_scan_zero_scan,
		.rmap_walk = thp_scan_rmap_walk,
	}, stock_probes = {
		.zero_scan = thp_scan_stock_underused,
	};
	struct thp_scan_walk w = { };
	struct thp_scan_verdict v;
	int ret = -EAGAIN;

	thp_scan_decide(&f, folio, stock ? &stock_probes : &probes, &w, &v);
	trace_thp_scan_decision(pfn, order, v.zero, v.scanned,
				v.walked ? w.nr_mapped : thp_scan_mapped(folio),
				v.d);
	thp_scan_count(order, THP_SCAN_SCANNED, MTHP_STAT_THP_SCAN_SCANNED);
	count_vm_events(THP_SCAN_PAGES_SCANNED, v.scanned);
	r->budget -= thp_scan_cost(&v, &w, 0);
	r->nr_folios--;
	bitmap_free(w.mapped);

	switch (v.d) {
	case THP_SCAN_SPLIT_PARTIAL:
	case THP_SCAN_SPLIT_UNDERUSED:
		ret = split_huge_page_to_list_to_order(&folio->page, NULL,
						       v.new_order);
		trace_thp_scan_split(pfn, order, v.new_order, v.d, ret);
		/* What thp_scan_cost() charges a split, on top of the rest. */
		r->budget -= nr;
		if (ret) {
			thp_scan_count(order, THP_SCAN_SPLIT_FAILED_PAGE,
				       MTHP_STAT_THP_SCAN_SPLIT_FAILED);
			break;
		}
		r->split++;
		if (v.d == THP_SCAN_SPLIT_PARTIAL) {
			/* Counted as 6.12 counts a deferred split. */
			if (!stock)
				thp_scan_count_deferred_split_order(order);
			thp_scan_count(order, THP_SCAN_SPLIT_PARTIAL_PAGE,
				       MTHP_STAT_THP_SCAN_SPLIT_PARTIAL);
			if (v.new_order)
				thp_scan_count(v.new_order, THP_SCAN_SPLIT_TO_LARGE,
					       MTHP_STAT_THP_SCAN_SPLIT_TO);
		} else {
			thp_scan_count(order, THP_SCAN_SPLIT_UNDERUSED_PAGE,
				       MTHP_STAT_THP_SCAN_SPLIT_UNDERUSED);
			count_vm_event(THP_UNDERUSED_SPLIT_PAGE);
		}
		break;
	case THP_SCAN_KEEP_NOT_PARTIAL:
		thp_scan_count(order, THP_SCAN_NOT_PARTIAL,
			       MTHP_STAT_THP_SCAN_NOT_PARTIAL);
		break;
	case THP_SCAN_KEEP_MLOCKED:
		thp_scan_count(order, THP_SCAN_KEEP_MLOCKED_PAGE,
			       MTHP_STAT_THP_SCAN_KEEP_MLOCKED);
		break;
	case THP_SCAN_KEEP_PINNED:
		thp_scan_count(order, THP_SCAN_KEEP_PINNED_PAGE,
			       MTHP_STAT_THP_SCAN_KEEP_PINNED);
		break;
	case THP_SCAN_KEEP_BUSY:
		count_vm_event(THP_SCAN_KEEP_BUSY_PAGE);
		break;
	default:
		break;
	}
	/*
	 * Kept, or the split failed: back to the tail of its list, which
	 * thp_scan_enqueue() picks from the partially mapped flag under the
	 * queue lock (rmap may set it meanwhile); a flag the walk refuted is
	 * cleared there.  A successful split to a large order has requeued
	 * the new folios itself.  With thp_scan off, as in 6.12, a folio
	 * that is not partially mapped leaves the queue after one look.
	 */
	if (ret && !(stock && !folio_test_partially_mapped(folio)))
		thp_scan_requeue(folio, v.d == THP_SCAN_KEEP_NOT_PARTIAL);
	folio_unlock(folio);
	folio_put(folio);
}

/* Walk @q in priority order within what is left of round @r. */
static void thp_scan_queue(struct deferred_split *q, struct thp_scan_round *r)
{
	struct folio *folio;

	r->order = 0;
	while ((folio = thp_scan_next(q, r))) {
		thp_scan_folio(folio, r);
		cond_resched();
	}
}

/**
 * thp_scan_shrink - scan a queue for the deferred split shrinker
 * @q: the queue of the node or memcg being reclaimed from
 * @nr_to_scan: how many folios to take
 *
 * Under reclaim, partially mapped folios and folios never looked at are
 * due whatever their age (a jiffy at least, so that one whose split just
 * failed is not taken again at once), and folios looked at and kept only
 * after min_age_millisecs, as for kthpscand.
 *
 * Return: how many folios were split.
 */
unsigned long thp_scan_shrink(struct deferred_split *q,
			      unsigned long nr_to_scan)
{
	unsigned int age_ms = READ_ONCE(thp_scan_min_age_millisecs);
	struct thp_scan_round r = {
		.budget = LONG_MAX,
		.nr_folios = nr_to_scan,
		.min_age = max(1UL, msecs_to_jiffies(age_ms)),
		.new_age = 1,
		.partial_age = 1,
	};

	thp_scan_queue(q, &r);
	return r.split;
}

/*
 * Where kthpscand's next round starts: a position in the sequence of
 * queues a round walks (every node's, then every memcg's in
 * mem_cgroup_iter() order), so that a round that runs out of budget does
 * not leave the queues after it waiting behind the ones before it.  A
 * memcg created or removed shifts the positions after it: a queue may get
 * its turn a round early or late, and never starves.  Only kthpscand uses
 * it.
 */
static unsigned long thp_scan_cursor;

/*
 * Visit the queue at position @pos in pass @pass of a round that started
 * at @start: pass 0 takes the positions from @start on, pass 1 those
 * before it.  Returns true when the budget is spent, with the cursor
 * moved past @pos.
 */
static bool thp_scan_visit(struct deferred_split *q, unsigned long pos,
			   int pass, unsigned long start,
			   struct thp_scan_round *r)
{
	if (pass == 0 ? pos < start : pos >= start)
		return false;
	thp_scan_queue(q, r);
	if (r->budget > 0)
		return false;
	thp_scan_cursor = pos + 1;
	return true;
}

/*
 * One round of kthpscand: every queue once, from the cursor on, until the
 * budget is spent.  Returns whether some folio is due now (the budget ran
 * out, or some order was left at its share with folios due); sets
 * *@next_due when none is but some will be.
 */
static bool thp_scan_round(unsigned long *next_due, bool *have_next_due)
{
	unsigned int age_ms = READ_ONCE(thp_scan_min_age_millisecs);
	struct thp_scan_round r = {
		.budget = READ_ONCE(thp_scan_pages_to_scan),
		.nr_folios = ULONG_MAX,
		/* At least a jiffy: a folio kept now is not taken again now. */
		.min_age = max(1UL, msecs_to_jiffies(age_ms)),
		.new_age = max(1UL, msecs_to_jiffies(age_ms)),
		.partial_age = max(1UL, msecs_to_jiffies(min(age_ms,
						THP_SCAN_PARTIAL_DELAY_MS))),
	};
	unsigned long start = thp_scan_cursor, pos;
	struct mem_cgroup *memcg;
	int nid, pass;

	if (READ_ONCE(thp_scan_pressure))
		r.budget *= THP_SCAN_PRESSURE_FACTOR;

	for (pass = 0; pass < 2; pass++) {
		pos = 0;
		for_each_online_node(nid)
			if (thp_scan_visit(&NODE_DATA(nid)->deferred_split_queue,
					   pos++, pass, start, &r))
				return true;
#ifdef CONFIG_MEMCG
		for (memcg = mem_cgroup_iter(NULL, NULL, NULL); memcg;
		     memcg = mem_cgroup_iter(NULL, memcg, NULL)) {
			if (thp_scan_visit(&memcg->deferred_split_queue, pos++,
					   pass, start, &r)) {
				mem_cgroup_iter_break(NULL, memcg);
				return true;
			}
		}
#endif
	}
	*next_due = r.next_due;
	*have_next_due = r.have_next_due;
	return r.left_due;
}

/* Is any folio on any queue?  Under each queue's lock: see thp_scan_queued(). */
static bool thp_scan_any_queued(void)
{
	struct mem_cgroup *memcg;
	unsigned long flags;
	bool any = false;
	int nid;

	for_each_online_node(nid) {
		struct deferred_split *q = &NODE_DATA(nid)->deferred_split_queue;

		spin_lock_irqsave(&q->split_queue_lock, flags);
		any |= q->split_queue_len != 0;
		spin_unlock_irqrestore(&q->split_queue_lock, flags);
	}
	for (memcg = mem_cgroup_iter(NULL, NULL, NULL); memcg && !any;
	     memcg = mem_cgroup_iter(NULL, memcg, NULL)) {
#ifdef CONFIG_MEMCG
		struct deferred_split *q = &memcg->deferred_split_queue;

		spin_lock_irqsave(&q->split_queue_lock, flags);
		any = q->split_queue_len != 0;
		spin_unlock_irqrestore(&q->split_queue_lock, flags);
#endif
		if (any) {
			mem_cgroup_iter_break(NULL, memcg);
			break;
		}
	}
	return any;
}

/*
 * Sleep after a round: scan_sleep_millisecs at least, until the next folio
 * is due if none is now, without a timeout while thp_scan is off, and up
 * to THP_SCAN_IDLE_TIMEOUT_MS while nothing is queued.  Knob writes, new
 * folios while idle and new partially mapped folios wake it
 * (thp_scan_wake()).
 */
static void thp_scan_sleep(bool busy, unsigned long next_due, bool have_next_due)
{
	long timeout = msecs_to_jiffies(READ_ONCE(thp_scan_sleep_millisecs));

	WRITE_ONCE(thp_scan_idle, true);
	/*
	 * Orders the store above before the queue locks taken by
	 * thp_scan_any_queued(): see thp_scan_queued().
	 */
	smp_mb();
	if (!thp_scan_is_enabled()) {
		wait_event_freezable(thp_scan_wait, READ_ONCE(thp_scan_kicked) ||
				     kthread_should_stop());
	} else if (!busy && !thp_scan_any_queued()) {
		wait_event_freezable_timeout(thp_scan_wait,
					     READ_ONCE(thp_scan_kicked) ||
					     kthread_should_stop(),
					     msecs_to_jiffies(THP_SCAN_IDLE_TIMEOUT_MS));
	} else {
		/* Folios queued now need no wake-up: they are not due yet. */
		unsigned long now = jiffies;

		WRITE_ONCE(thp_scan_idle, false);
		if (!busy && have_next_due &&
		    time_after(next_due, now + timeout))
			timeout = next_due - now;
		wait_event_freezable_timeout(thp_scan_wait,
					     READ_ONCE(thp_scan_kicked) ||
					     kthread_should_stop(), timeout);
	}
	WRITE_ONCE(thp_scan_idle, false);
	WRITE_ONCE(thp_scan_kicked, false);
}

static int thp_scan_kthread(void *unused)
{
	set_freezable();
	set_user_nice(current, MAX_NICE);

	while (!kthread_should_stop()) {
		unsigned long next_due = 0;
		bool have_next_due = false, busy = false;

		/* Busy rounds with scan_sleep_millisecs at 0 never sleep. */
		try_to_freeze();
		if (thp_scan_is_enabled()) {
			busy = thp_scan_round(&next_due, &have_next_due);
			count_vm_event(THP_SCAN_ROUNDS);
		}
		thp_scan_sleep(busy, next_due, have_next_due);
	}
	return 0;
}

/**
 * thp_scan_init - start kthpscand
 *
 * Without it thp_scan still works under memory pressure, through the
 * deferred split shrinker; so a failure is reported, not fatal.
 */
void __init thp_scan_init(void)
{
	struct task_struct *t;

	t = kthread_run(thp_scan_kthread, NULL, "kthpscand");
	if (IS_ERR(t)) {
		pr_err("failed to start kthpscand: %ld\n", PTR_ERR(t));
		return;
	}
	thp_scan_thread = t;
}

/**
 * thp_scan_stop - stop kthpscand, on the error path of THP's init
 */
void __init thp_scan_stop(void)
{
	if (thp_scan_thread)
		kthread_stop(thp_scan_thread);
	thp_scan_thread = NULL;
}

/*
 * Decide, with the split_on_swapout mode @mode, whether to split a large
 * folio that reclaim chose to swap out; the zero scan and the rmap walk
 * run only in "underused" mode, and only as far as they must.  The folio
 * is split when it is underused (as kthpscand judges it) or confirmed
 * partially mapped; an mlocked one never reaches reclaim.
 */
static enum thp_scan_decision
thp_scan_swapout_decide(unsigned int mode, struct folio *folio,
			const struct thp_scan_probes *probes,
			struct thp_scan_walk *w, struct thp_scan_verdict *v)
{
	unsigned int nr = folio_nr_pages(folio);

	memset(v, 0, sizeof(*v));
	if (mode == THP_SCAN_SWAPOUT_NEVER)
		return THP_SCAN_KEEP_SKIPPED;
	if (mode == THP_SCAN_SWAPOUT_ALWAYS)
		return THP_SCAN_SPLIT_UNDERUSED;
	if (folio_looks_partially_mapped(folio)) {
		v->walked = true;
		if (probes->rmap_walk(folio, w))
			return THP_SCAN_KEEP_BUSY;
		if (w->nr_mapped && w->nr_mapped < nr)
			return THP_SCAN_SPLIT_PARTIAL;
	}
	if (folio_contain_hwpoisoned_page(folio))
		return THP_SCAN_KEEP_SKIPPED;
	if (probes->zero_scan(folio,
			      thp_scan_max_zero(nr, READ_ONCE(thp_scan_underused_zero_pct)),
			      &v->scanned, &v->zero))
		return THP_SCAN_SPLIT_UNDERUSED;
	return THP_SCAN_KEEP_USED;
}

/**
 * thp_scan_split_on_swapout - split a large folio before it is swapped out?
 * @folio: an anonymous large folio that reclaim is about to add to swap:
 *	locked, isolated (the caller's reference is the one pin a split
 *	expects), mapped or not, not in the swap cache
 * @list: the reclaim list, which the split adds the other new folios to
 *
 * With thp_scan on and split_on_swapout "underused", splits @folio when it
 * is underused or partially mapped, so that its zero-filled subpages
 * (which the split maps to the zero page) and its unmapped ones are freed
 * without being swapped (see thp_scan_swapout_free()) and only the rest is
 * written; with "always", splits every such folio; with "never", or with
 * thp_scan off, none.  Traced (thp_scan_swapout) and counted.
 *
 * Return: true if @folio was split: it is now the order-0 folio of its
 * first subpage, and the others are on @list.
 */
bool thp_scan_split_on_swapout(struct folio *folio, struct list_head *list)
{
	static const struct thp_scan_probes probes = {
		.zero_scan = thp_scan_zero_scan,
		.rmap_walk = thp_scan_rmap_walk,
	};
	unsigned int mode = READ_ONCE(thp_scan_swapout_mode);
	unsigned int order = folio_order(folio), nr = folio_nr_pages(folio);
	unsigned long pfn = folio_pfn(folio);
	struct thp_scan_walk w = { };
	struct thp_scan_verdict v;
	enum thp_scan_decision d;
	unsigned int i, unmapped = 0;
	int ret = 0;

	if (!thp_scan_is_enabled() || order < THP_SCAN_MIN_ORDER)
		return false;
	d = thp_scan_swapout_decide(mode, folio, &probes, &w, &v);
	bitmap_free(w.mapped);
	count_vm_events(THP_SCAN_SWAPOUT_PAGES_SCANNED, v.scanned);
	if (d == THP_SCAN_SPLIT_PARTIAL || d == THP_SCAN_SPLIT_UNDERUSED) {
		ret = split_folio_to_list(folio, list);
		if (!ret) {
			/*
			 * What the split left unmapped: zero-filled subpages
			 * now mapping the zero page, and those no page table
			 * mapped.  Each new folio is on @list or is @folio,
			 * with a reference: none can be freed under us.
			 */
			for (i = 0; i < nr; i++)
				unmapped += !page_mapped(pfn_to_page(pfn + i));
			thp_scan_count(order, THP_SCAN_SWAPOUT_SPLIT,
				       MTHP_STAT_THP_SCAN_SWAPOUT_SPLIT);
			mod_mthp_stat(order, MTHP_STAT_THP_SCAN_SWAPOUT_UNMAPPED,
				      unmapped);
		}
	}
	trace_thp_scan_swapout(pfn, order, v.zero, v.scanned, unmapped,
			       thp_scan_swapout_names[mode], d, ret);
	return (d == THP_SCAN_SPLIT_PARTIAL || d == THP_SCAN_SPLIT_UNDERUSED) && !ret;
}

/**
 * thp_scan_swapout_free - may reclaim free this folio instead of swapping it?
 * @folio: an anonymous, swap-backed folio of reclaim's list, locked, not in
 *	the swap cache
 *
 * A folio that no page table maps and that is not in the swap cache holds
 * data no one can reach: the zero-filled and unmapped subpages of a folio
 * split at swap-out, for instance.  While thp_scan is on, reclaim frees
 * it, if the caller's isolation holds its only reference, rather than
 * write it to swap for nothing.
 *
 * Return: true if @folio is such a folio; the caller then freezes its
 * reference count and frees it.
 */
bool thp_scan_swapout_free(struct folio *folio)
{
	return thp_scan_is_enabled() && !folio_mapped(folio) &&
	       !folio_test_ksm(folio);
}

/* Which knob sets the collapse limit (collapse_max_ptes_none in sysfs). */
enum thp_scan_collapse_src {
	THP_SCAN_COLLAPSE_MAX_PTES_NONE,	/* khugepaged/max_ptes_none */
	THP_SCAN_COLLAPSE_MAX_NEW_PCT,		/* thp_scan/collapse_max_new_pct */
	THP_SCAN_COLLAPSE_UNDERUSED,		/* thp_scan/underused_zero_pct */
};

static const char * const thp_scan_collapse_src_names[] = {
	[THP_SCAN_COLLAPSE_MAX_PTES_NONE]	= "max_ptes_none",
	[THP_SCAN_COLLAPSE_MAX_NEW_PCT]		= "collapse_max_new_pct",
	[THP_SCAN_COLLAPSE_UNDERUSED]		= "underused_zero_pct",
};

/* The knobs the collapse limit is derived from. */
struct thp_scan_collapse_knobs {
	bool enabled;			/* thp_scan/enabled */
	bool split_underused;		/* shrink_underused */
	unsigned int max_ptes_none;	/* khugepaged/max_ptes_none */
	unsigned int max_new_pct;	/* thp_scan/collapse_max_new_pct */
	unsigned int underused_zero_pct; /* thp_scan/underused_zero_pct */
};

/*
 * The most new pages khugepaged may add to a range of @nr pages when it
 * collapses it, from the knobs in @k; *@src says which knob sets it.
 *
 * With thp_scan off it is max_ptes_none, as in 6.12.  With thp_scan on it
 * is the smallest of max_ptes_none (an admin who asks for less gets less),
 * collapse_max_new_pct of @nr, and, while thp_scan splits underused THPs,
 * the most zero-filled subpages a THP may have and not be split: a THP
 * khugepaged makes is never one that thp_scan would split at once.  On a
 * tie the knob named first wins.
 */
static unsigned int thp_scan_collapse_limit(const struct thp_scan_collapse_knobs *k,
					    unsigned int nr,
					    enum thp_scan_collapse_src *src)
{
	unsigned int limit = k->max_ptes_none, v;

	*src = THP_SCAN_COLLAPSE_MAX_PTES_NONE;
	if (!k->enabled)
		return limit;
	v = mult_frac(nr, k->max_new_pct, 100);
	if (v < limit) {
		limit = v;
		*src = THP_SCAN_COLLAPSE_MAX_NEW_PCT;
	}
	if (k->split_underused) {
		v = thp_scan_max_zero(nr, k->underused_zero_pct);
		if (v < limit) {
			limit = v;
			*src = THP_SCAN_COLLAPSE_UNDERUSED;
		}
	}
	return limit;
}

static unsigned int thp_scan_collapse_limit_now(unsigned int max_ptes_none,
						enum thp_scan_collapse_src *src)
{
	struct thp_scan_collapse_knobs k = {
		.enabled = thp_scan_is_enabled(),
		.split_underused = thp_split_underused(),
		.max_ptes_none = max_ptes_none,
		.max_new_pct = READ_ONCE(thp_scan_collapse_max_new_pct),
		.underused_zero_pct = READ_ONCE(thp_scan_underused_zero_pct),
	};

	return thp_scan_collapse_limit(&k, HPAGE_PMD_NR, src);
}

/**
 * thp_scan_collapse_max_new - the most new pages khugepaged may add to a range
 * @max_ptes_none: khugepaged's own limit, khugepaged/max_ptes_none
 *
 * How many none PTEs, zero-page PTEs and, while thp_scan is on,
 * zero-filled pages an anonymous PMD range may have for khugepaged to
 * collapse it: see thp_scan_collapse_limit().
 *
 * Return: the limit, at most @max_ptes_none.
 */
unsigned int thp_scan_collapse_max_new(unsigned int max_ptes_none)
{
	enum thp_scan_collapse_src src;

	return thp_scan_collapse_limit_now(max_ptes_none, &src);
}

/**
 * thp_scan_page_zero_filled - is a page of anonymous memory all zeroes?
 * @page: the page, mapped by the caller's page table or locked in its folio
 *
 * The one reader of page contents in thp_scan (the zero scan) and in
 * khugepaged's collapse limit.  These read memory that no one else may
 * read for hours, so they must not be the first to consume a latent
 * memory error: a page marked hardware-poisoned is not read, and where
 * the architecture can survive a machine check in a kernel read
 * (CONFIG_ARCH_HAS_COPY_MC), the page is read through
 * copy_mc_to_kernel(), so that an error ends as a memory-failure event
 * for that page (the machine check handler queues it), not a panic.
 *
 * The answer is the one the split will act on: a page that
 * try_to_map_unused_to_zeropage() would not replace by the zero page
 * (pages_identical() with ZERO_PAGE(0) false) is not zero-filled here
 * either, so that thp_scan never splits a THP for subpages the split
 * cannot free.  On arm64 with MTE that is a page with allocation tags
 * (PROT_MTE): its data may be zero, its tags are not the zero page's
 * (arm64's memcmp_pages()).  khugepaged's collapse limit counts such a
 * page as filled, as the split would.
 *
 * Return: true if every byte of @page is zero and the page is as good as
 * the zero page; false if not, or if the page is poisoned.
 */
bool thp_scan_page_zero_filled(struct page *page)
{
	if (PageHWPoison(page))
		return false;
#ifdef CONFIG_ARCH_HAS_COPY_MC
	{
		/* Small chunks: a filled page differs from zero early. */
		void *addr = kmap_local_page(page);
		bool zero = true;
		u8 chunk[256];
		unsigned int off;

		for (off = 0; zero && off < PAGE_SIZE; off += sizeof(chunk)) {
			if (copy_mc_to_kernel(chunk, addr + off, sizeof(chunk)))
				zero = false;	/* poisoned: not ours to read */
			else
				zero = !memchr_inv(chunk, 0, sizeof(chunk));
		}
		kunmap_local(addr);
		/*
		 * Zero, and read without a machine check: then ask what the
		 * split will ask, in case the architecture knows more than
		 * the contents.  The page is in the cache by now.
		 */
		return zero && pages_identical(page, ZERO_PAGE(0));
	}
#else
	return pages_identical(page, ZERO_PAGE(0));
#endif
}

/**
 * thp_scan_collapse_skipped - khugepaged did not collapse a range
 * @order: the order of the THP it would have made
 *
 * Counts a range that khugepaged left alone because it would have added
 * more new memory than thp_scan's collapse limit, although it was within
 * khugepaged's own limits.
 */
void thp_scan_collapse_skipped(unsigned int order)
{
	count_vm_event(THP_SCAN_COLLAPSE_SKIPPED);
	count_mthp_stat(order, MTHP_STAT_THP_SCAN_COLLAPSE_SKIPPED);
}

/**
 * thp_scan_is_enabled - is thp_scan switched on?
 *
 * Return: the value of /sys/kernel/mm/transparent_hugepage/thp_scan/enabled.
 */
bool thp_scan_is_enabled(void)
{
	return READ_ONCE(thp_scan_enabled);
}

static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(thp_scan_enabled));
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	bool val;
	int err;

	err = thp_scan_parse_bool(buf, &val);
	if (err)
		return err;
	WRITE_ONCE(thp_scan_enabled, val);
	thp_scan_wake();
	return count;
}

static struct kobj_attribute enabled_attr = __ATTR_RW(enabled);

static ssize_t split_on_swapout_show(struct kobject *kobj,
				     struct kobj_attribute *attr, char *buf)
{
	unsigned int mode = READ_ONCE(thp_scan_swapout_mode), i;
	int len = 0;

	for (i = 0; i < ARRAY_SIZE(thp_scan_swapout_names); i++)
		len += sysfs_emit_at(buf, len, i == mode ? "%s[%s]" : "%s%s",
				     i ? " " : "", thp_scan_swapout_names[i]);
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}

static ssize_t split_on_swapout_store(struct kobject *kobj,
				      struct kobj_attribute *attr,
				      const char *buf, size_t count)
{
	int mode = sysfs_match_string(thp_scan_swapout_names, buf);

	if (mode < 0)
		return -EINVAL;
	WRITE_ONCE(thp_scan_swapout_mode, mode);
	return count;
}

static struct kobj_attribute split_on_swapout_attr = __ATTR_RW(split_on_swapout);

/*
 * The unsigned knobs: each a variable and its bounds.  A value out of
 * bounds, or not a decimal number, is -EINVAL and changes nothing; a
 * value taken wakes kthpscand so that it applies at once.
 */
struct thp_scan_uint_attr {
	struct kobj_attribute attr;
	unsigned int *val;
	unsigned int min;
	unsigned int max;
};

#define to_thp_scan_uint_attr(a) container_of(a, struct thp_scan_uint_attr, attr)

static ssize_t thp_scan_uint_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(*to_thp_scan_uint_attr(attr)->val));
}

static ssize_t thp_scan_uint_store(struct kobject *kobj,
				   struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	struct thp_scan_uint_attr *ua = to_thp_scan_uint_attr(attr);
	unsigned int val;

	if (kstrtouint(buf, 10, &val) || val < ua->min || val > ua->max)
		return -EINVAL;
	WRITE_ONCE(*ua->val, val);
	thp_scan_wake();
	return count;
}

#define THP_SCAN_UINT_ATTR(_name, _var, _min, _max)			\
static struct thp_scan_uint_attr _name##_attr = {			\
	.attr = __ATTR(_name, 0644, thp_scan_uint_show,			\
		       thp_scan_uint_store),				\
	.val = &(_var),							\
	.min = (_min),							\
	.max = (_max),							\
}

THP_SCAN_UINT_ATTR(underused_zero_pct, thp_scan_underused_zero_pct, 0, 100);
THP_SCAN_UINT_ATTR(pages_to_scan, thp_scan_pages_to_scan, 1,
		   THP_SCAN_PAGES_MAX);
THP_SCAN_UINT_ATTR(scan_sleep_millisecs, thp_scan_sleep_millisecs, 0,
		   THP_SCAN_MILLISECS_MAX);
THP_SCAN_UINT_ATTR(min_age_millisecs, thp_scan_min_age_millisecs, 0,
		   THP_SCAN_MILLISECS_MAX);
THP_SCAN_UINT_ATTR(collapse_max_new_pct, thp_scan_collapse_max_new_pct, 0, 100);

/*
 * The limit khugepaged really uses for an anonymous PMD range, in the
 * units of max_ptes_none, and the knob it comes from.
 */
static ssize_t collapse_max_ptes_none_show(struct kobject *kobj,
					   struct kobj_attribute *attr,
					   char *buf)
{
	enum thp_scan_collapse_src src;
	unsigned int limit;

	limit = thp_scan_collapse_limit_now(READ_ONCE(khugepaged_max_ptes_none),
					    &src);
	return sysfs_emit(buf, "%u %s\n", limit,
			  thp_scan_collapse_src_names[src]);
}

static struct kobj_attribute collapse_max_ptes_none_attr =
	__ATTR_RO(collapse_max_ptes_none);

/* The CPU time kthpscand has used, in milliseconds. */
static ssize_t cpu_time_ms_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	u64 ns = 0;

	if (thp_scan_thread)
		ns = task_sched_runtime(thp_scan_thread);
	return sysfs_emit(buf, "%llu\n", div_u64(ns, NSEC_PER_MSEC));
}

static struct kobj_attribute cpu_time_ms_attr = __ATTR_RO(cpu_time_ms);

static struct attribute *thp_scan_attrs[] = {
	&enabled_attr.attr,
	&underused_zero_pct_attr.attr.attr,
	&pages_to_scan_attr.attr.attr,
	&scan_sleep_millisecs_attr.attr.attr,
	&min_age_millisecs_attr.attr.attr,
	&collapse_max_new_pct_attr.attr.attr,
	&collapse_max_ptes_none_attr.attr,
	&split_on_swapout_attr.attr,
	&cpu_time_ms_attr.attr,
	NULL,
};

static const struct attribute_group thp_scan_attr_group = {
	.attrs = thp_scan_attrs,
	.name = "thp_scan",
};

/**
 * thp_scan_sysfs_init - create /sys/kernel/mm/transparent_hugepage/thp_scan/
 * @hugepage_kobj: the transparent_hugepage kobject
 *
 * Return: 0 on success, a negative errno from sysfs otherwise.
 */
int __init thp_scan_sysfs_init(struct kobject *hugepage_kobj)
{
	int err;

	err = sysfs_create_group(hugepage_kobj, &thp_scan_attr_group);
	if (err)
		pr_err("failed to register the thp_scan sysfs group: %d\n", err);
	return err;
}

/**
 * thp_scan_sysfs_exit - remove what thp_scan_sysfs_init() created
 * @hugepage_kobj: the transparent_hugepage kobject
 */
void __init thp_scan_sysfs_exit(struct kobject *hugepage_kobj)
{
	sysfs_remove_group(hugepage_kobj, &thp_scan_attr_group);
}

#include "tests/thp_scan-kunit.h"
