// SPDX-License-Identifier: GPL-2.0
/*
 * thp_scan: find anonymous (m)THPs that do not pay for themselves and
 * split them.
 *
 * Every anon large folio of order >= 2 is stamped with the time it was
 * made, and nothing more is done for it at fault or at free.  A kthread,
 * kthpscand, finds these folios by walking the anon LRU lists, oldest
 * first, without waiting for memory pressure, and the deferred split
 * shrinker does the same under pressure.  For each folio:
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
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/page-flags.h>
#include <linux/rmap.h>
#include <linux/sched/cputime.h>
#include <linux/swapops.h>
#include <linux/sysfs.h>
#include <linux/thp_scan.h>
#include <linux/vm_event_item.h>
#include <linux/wait.h>

#include "internal.h"

#define CREATE_TRACE_POINTS
#include <trace/events/thp_scan.h>

/*
 * Whether the scanner runs (thp_scan_is_enabled()).  On by default:
 * underused THPs must be recovered without an admin having to ask for
 * it.  A static key, because the anon fault path reads it for every new
 * large folio (thp_scan_add_folio()); jump_label_mutex serializes the
 * writers (thp_scan_set_enabled(): sysfs, thp_scan=, KUnit).  The other
 * knobs are written only through sysfs; readers use READ_ONCE() and need
 * no lock.
 */
DEFINE_STATIC_KEY_TRUE(thp_scan_on);

/* Switch thp_scan on or off: the one writer of thp_scan_on. */
static void thp_scan_set_enabled(bool on)
{
	if (on)
		static_branch_enable(&thp_scan_on);
	else
		static_branch_disable(&thp_scan_on);
}

/*
 * A large folio is underused when more than this percentage of its
 * subpages are zero-filled (100: never).  One knob for every order: the
 * limit in subpages is derived per folio by thp_scan_max_zero().
 */
static unsigned int thp_scan_underused_zero_pct __read_mostly = 90;

/*
 * Keep the dense parts (split_keep_dense): a folio split as underused,
 * or for the zero-filled runs it can give back, is split to the mTHP
 * order that keeps the most of its data in folios that are themselves
 * dense, of the sizes the admin allows; only the rest goes down to base
 * pages, whose zero-filled ones are freed.  0: every split of a folio
 * that is mapped whole is to base pages, as in 6.12.
 */
static unsigned int thp_scan_keep_dense __read_mostly = 1;

/*
 * A folio that is not underused is split around its dense parts when
 * that frees at least this percentage of it (100: only an underused
 * folio is split).
 */
static unsigned int thp_scan_dense_min_free_pct __read_mostly = 50;

/*
 * A block kept as a folio by split_keep_dense is dense: at most one in
 * 2^THP_SCAN_DENSE_ZERO_SHIFT of its subpages is zero-filled.  What a
 * split keeps is then never more than 8/7 of what it holds.
 */
#define THP_SCAN_DENSE_ZERO_SHIFT	3

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
 * How long thp_scan's underused verdicts on the folios of a VMA limit the
 * size of its next faults, in seconds since the last one (see "Fault
 * feedback" below); 0: they do not.  Off until the benchmark has shown
 * the cost and the gain on real programs.
 */
static unsigned int thp_fault_limit_secs __read_mostly;

/* Its bound: the stamp in the VMA counts seconds in 16 bits. */
#define THP_FAULT_LIMIT_SECS_MAX	3600

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
 * While no lruvec has a large anon folio kthpscand sleeps until one has;
 * this bounds the sleep should a wake-up be missed (see
 * thp_scan_lruvec_first()).
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
 * kthpscand sleeps without a timeout while no lruvec has a large anon
 * folio: it sets thp_scan_idle first, and whoever puts an lruvec on
 * thp_scan_lruvecs then wakes it.  thp_scan_kicked ends any sleep: a knob
 * changed, pressure began, or a folio was found partially mapped.
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

/*
 * Map the zero-filled subpages of @folio into @zero, unless fewer than
 * @need (at least 1) of them can be: the scan stops as soon as so many
 * subpages are filled that the rest cannot make up @need, and returns
 * false.  *@scanned and *@nr_zero as for thp_scan_zero_scan().
 */
static bool thp_scan_zero_map(struct folio *folio, unsigned int need,
			      unsigned long *zero, unsigned int *scanned,
			      unsigned int *nr_zero)
{
	unsigned int nr = folio_nr_pages(folio), n = 0, i;

	bitmap_zero(zero, nr);
	for (i = 0; i < nr; i++) {
		if (thp_scan_page_zero_filled(folio_page(folio, i))) {
			__set_bit(i, zero);
			n++;
		} else if (n + nr - i - 1 < need) {
			break;
		}
	}
	*scanned = min(i + 1, nr);
	*nr_zero = n;
	return n >= need;
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
	unsigned long dense_orders; /* split_keep_dense: orders kept (0: off) */
	unsigned int min_free;	/* subpages a split of a used folio must free */
	unsigned long *zero;	/* room for the zero map, with dense_orders */
};

/*
 * The largest folio split_keep_dense judges: its zero map, one bit per
 * subpage, is on the caller's stack (64 bytes), so that no allocation,
 * which could fail in reclaim, stands between a folio and its judgement.
 * Larger folios (PMD THPs with 16K or 64K base pages) are judged as
 * without split_keep_dense.
 */
#define THP_SCAN_ZERO_MAP_ORDER	9

/* What the rmap walk found: the truth about the folio's mappings. */
struct thp_scan_walk {
	unsigned long *mapped;	/* the subpages some page table maps */
	unsigned int nr_mapped;	/* how many */
	unsigned int nr_vmas;	/* the mappings it visited */
	unsigned int nr_entries; /* the page table entries it found */
	bool mlocked;		/* a split would map no zero subpage away */
	unsigned long orders;	/* of the orders asked, those every VMA allows */
	bool underused;		/* the zero scan found it underused: tell the VMAs */
};

/*
 * The costly steps of a decision: the zero scan (true: underused), and the
 * rmap walk (0, or -EBUSY when a lock was contended or memory short).
 */
struct thp_scan_probes {
	bool (*zero_scan)(struct folio *folio, unsigned int max_zero,
			  unsigned int *scanned, unsigned int *nr_zero);
	int (*rmap_walk)(struct folio *folio, struct thp_scan_walk *w);
	bool (*zero_map)(struct folio *folio, unsigned int need,
			 unsigned long *zero, unsigned int *scanned,
			 unsigned int *nr_zero);
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

/* The zero-filled subpages of @zero in [@start, @start + @len). */
static unsigned int thp_scan_zero_in(const unsigned long *zero,
				     unsigned int start, unsigned int len)
{
	unsigned int end = start + len, n = 0, i;

	for (i = find_next_bit(zero, end, start); i < end;
	     i = find_next_bit(zero, end, i + 1))
		n++;
	return n;
}

/* Is a block of 2^@k subpages, @nr_zero of them zero-filled, dense? */
static bool thp_scan_dense(unsigned int nr_zero, unsigned int k)
{
	return nr_zero <= (1U << k) >> THP_SCAN_DENSE_ZERO_SHIFT;
}

/* May the block of 2^@k subpages at @start stay a folio (is it dense)? */
static bool thp_scan_block_dense(const unsigned long *zero, unsigned int start,
				 unsigned int k)
{
	return thp_scan_dense(thp_scan_zero_in(zero, start, 1U << k), k);
}

/*
 * The order to split a folio of @order, whose zero-filled subpages are
 * @zero, to so as to keep its dense parts: of @orders below @order (from
 * THP_SCAN_MIN_ORDER), the one at which the dense blocks hold the most
 * filled subpages, the larger on a tie.  Its other blocks are then split
 * to base pages (thp_scan_split_sparse()), and *@freed is set to the
 * zero-filled subpages that frees.  0, with *@freed 0, when no order
 * keeps a filled subpage in a dense block.
 */
static unsigned int thp_scan_dense_order(const unsigned long *zero,
					 unsigned int order,
					 unsigned long orders,
					 unsigned int *freed)
{
	unsigned int nr = 1U << order, best = 0, best_kept = 0, k, i;

	*freed = 0;
	for (k = order - 1; k >= THP_SCAN_MIN_ORDER && k < order; k--) {
		unsigned int step = 1U << k, kept = 0, fr = 0;

		if (!(orders & BIT(k)))
			continue;
		for (i = 0; i < nr; i += step) {
			unsigned int z = thp_scan_zero_in(zero, i, step);

			if (thp_scan_dense(z, k))
				kept += step - z;
			else
				fr += z;
		}
		if (kept > best_kept) {
			best = k;
			best_kept = kept;
			*freed = fr;
		}
	}
	return best;
}

/*
 * The decision with split_keep_dense, on a folio mapped whole, not
 * mlocked, that may be judged: map its zero-filled subpages; split it if
 * it is underused (to the order that keeps its dense parts, else to base
 * pages), or if keeping its dense parts frees at least f->min_free
 * subpages; else keep it.  Before a split, the rmap walk checks for
 * mlocked mappings and says which orders every mapping allows.
 */
static void thp_scan_decide_dense(const struct thp_scan_facts *f,
				  struct folio *folio,
				  const struct thp_scan_probes *probes,
				  struct thp_scan_walk *w,
				  struct thp_scan_verdict *v)
{
	unsigned int need = min(f->max_zero + 1, f->min_free), freed, k;
	bool underused;

	if (!probes->zero_map(folio, need, f->zero, &v->scanned, &v->zero)) {
		v->d = THP_SCAN_KEEP_USED;
		return;
	}
	underused = v->zero > f->max_zero;
	k = thp_scan_dense_order(f->zero, f->order, f->dense_orders, &freed);
	if (!underused && (!k || freed < f->min_free)) {
		v->d = THP_SCAN_KEEP_USED;
		return;
	}
	v->walked = true;
	w->orders = f->dense_orders;
	w->underused = underused;
	if (probes->rmap_walk(folio, w)) {
		v->d = THP_SCAN_KEEP_BUSY;
		return;
	}
	if (w->mlocked) {
		v->d = THP_SCAN_KEEP_MLOCKED;
		return;
	}
	if (w->orders != f->dense_orders)
		k = thp_scan_dense_order(f->zero, f->order, w->orders, &freed);
	if (underused) {
		v->d = THP_SCAN_SPLIT_UNDERUSED;
		v->new_order = k;
	} else if (k && freed >= f->min_free) {
		v->d = THP_SCAN_SPLIT_ZERO_RUNS;
		v->new_order = k;
	} else {
		v->d = THP_SCAN_KEEP_USED;
	}
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
 * underused folio the walk again, for mlocked mappings.  With
 * split_keep_dense, the zero scan maps the zero-filled subpages instead,
 * for thp_scan_decide_dense().
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
	if (f->dense_orders) {
		thp_scan_decide_dense(f, folio, probes, w, v);
		return;
	}
	if (!probes->zero_scan(folio, f->max_zero, &v->scanned, &v->zero)) {
		v->d = THP_SCAN_KEEP_USED;
		return;
	}
	v->walked = true;
	w->underused = true;
	if (probes->rmap_walk(folio, w))
		v->d = THP_SCAN_KEEP_BUSY;
	else if (w->mlocked)
		v->d = THP_SCAN_KEEP_MLOCKED;
	else
		v->d = THP_SCAN_SPLIT_UNDERUSED;
}

/*
 * Fault feedback (fault_limit_secs).
 *
 * A THP found underused was allocated and zeroed whole for the few pages
 * used, and then read and split by kthpscand: the fault and the scan were
 * paid for nothing.  Where kthpscand finds the folios of a VMA underused
 * again and again, the next faults there get smaller folios.  The VMA
 * keeps, in three bytes of struct vm_area_struct that were padding:
 *
 *  - the limit: its faults use only orders below it (0: no limit), the
 *    order of the smallest folio found underused there;
 *  - the score: the underused verdicts (+1 each, up to
 *    THP_FAULT_SCORE_MAX) not yet outweighed by dense faults (-1 each);
 *    the limit is set when the score reaches THP_FAULT_SCORE_LIMIT, and
 *    goes when it falls to 0;
 *  - the stamp: when the last underused verdict came, in seconds; the
 *    limit goes fault_limit_secs later.
 *
 * Dense faults: a fault in a limited VMA at the first page of an aligned
 * block of THP_FAULT_BLOCK_NR pages that finds the block before it
 * complete, or at the last page the block after it: what a fill in
 * address order leaves behind, up or down.  One fault in
 * THP_FAULT_BLOCK_NR reads up to that many PTEs, in limited VMAs only.
 * A fill in random order is not seen; the stamp lifts the limit then.
 *
 * Per VMA, not per process: a process's mappings differ (a sparse heap,
 * a dense array), and per VMA it costs no memory and, at every anonymous
 * fault, one test of a byte in the cache line of vm_flags.  A VMA split
 * or copied (mprotect(), mremap(), fork()) keeps its history: a forked
 * child starts where its parent was, as its pages are its parent's; a
 * new mapping merged into a limited VMA takes its limit; exec() starts
 * afresh.  A VMA with MADV_HUGEPAGE is never limited and feeds nothing;
 * MADV_COLLAPSE, khugepaged and large folios swapped in are not limited.
 *
 * The three fields are hints: kthpscand writes them under the anon_vma
 * lock of its rmap walk, faults under the mmap or VMA lock, each with
 * READ_ONCE()/WRITE_ONCE() and no lock of its own.  A lost update costs
 * one verdict.
 */
#define THP_FAULT_SCORE_LIMIT	2
#define THP_FAULT_SCORE_MAX	4
#define THP_FAULT_BLOCK_NR	64

static unsigned int thp_fault_limit(u8 state)
{
	return state & THP_FAULT_LIMIT_MASK;
}

static unsigned int thp_fault_score(u8 state)
{
	return state >> THP_FAULT_SCORE_SHIFT;
}

static u8 thp_fault_state(unsigned int limit, unsigned int score)
{
	return limit | score << THP_FAULT_SCORE_SHIFT;
}

/* The state after a folio of @order was found underused. */
static u8 thp_fault_next_underused(u8 state, unsigned int order)
{
	unsigned int limit = thp_fault_limit(state);
	unsigned int score = min(thp_fault_score(state) + 1,
				 THP_FAULT_SCORE_MAX);

	if (score >= THP_FAULT_SCORE_LIMIT && (!limit || order < limit))
		limit = order;
	return thp_fault_state(limit, score);
}

/* The state after a dense fault. */
static u8 thp_fault_next_dense(u8 state)
{
	unsigned int score = thp_fault_score(state);

	if (score)
		score--;
	return thp_fault_state(score ? thp_fault_limit(state) : 0, score);
}

/* Seconds, as the stamp counts them. */
static u16 thp_fault_now(void)
{
	return (u16)(jiffies / HZ);
}

/* Set the state of @vma from @old to @new, traced if the limit changed. */
static void thp_fault_set(struct vm_area_struct *vma, u8 old, u8 new,
			  enum thp_fault_reason why)
{
	if (new == old)
		return;
	WRITE_ONCE(vma->thp_fault_state, new);
	if (thp_fault_limit(new) != thp_fault_limit(old))
		trace_thp_scan_fault_limit(vma->vm_mm, vma->vm_start,
					   thp_fault_limit(old),
					   thp_fault_limit(new),
					   thp_fault_score(new), why);
}

/*
 * kthpscand found a folio of @order that @vma maps underused: one verdict
 * against the size of the VMA's faults.  Under the anon_vma lock.
 */
static void thp_fault_underused(struct vm_area_struct *vma, unsigned int order)
{
	u8 old;

	if (!READ_ONCE(thp_fault_limit_secs) || !vma_is_anonymous(vma) ||
	    (vma->vm_flags & VM_HUGEPAGE))
		return;
	old = READ_ONCE(vma->thp_fault_state);
	WRITE_ONCE(vma->thp_fault_stamp, thp_fault_now());
	thp_fault_set(vma, old, thp_fault_next_underused(old, order),
		      THP_FAULT_UNDERUSED);
}

/* Are the @nr PTEs from @pte all in use (not none)? */
static bool thp_fault_ptes_used(pte_t *pte, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (pte_none(ptep_get_lockless(pte + i)))
			return false;
	return true;
}

/* Are the @nr PTEs from @pte all none? */
static bool thp_fault_ptes_none(pte_t *pte, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (!pte_none(ptep_get_lockless(pte + i)))
			return false;
	return true;
}

/*
 * Is the fault @vmf dense: at the first page of an aligned block of
 * THP_FAULT_BLOCK_NR pages with the block before it in use, or at the
 * last page with the block after it in use, both in the VMA and in the
 * page table @pte (of the fault's PMD range)?
 */
static bool thp_fault_dense(struct vm_fault *vmf, pte_t *pte)
{
	unsigned long addr = vmf->address, size = THP_FAULT_BLOCK_NR * PAGE_SIZE;
	unsigned long start;

	if (IS_ALIGNED(addr, size))
		start = addr - size;
	else if (IS_ALIGNED(addr + PAGE_SIZE, size))
		start = addr + PAGE_SIZE;
	else
		return false;
	if ((start & PMD_MASK) != (addr & PMD_MASK) ||
	    start < vmf->vma->vm_start || start + size > vmf->vma->vm_end)
		return false;
	return thp_fault_ptes_used(pte + pte_index(start), THP_FAULT_BLOCK_NR);
}

/*
 * Of the @refused orders, the one the fault @vmf would have tried: the
 * highest whose aligned range around the address has no PTE in use in
 * @pte (the page table of its PMD range); 0 if none.
 */
static unsigned int thp_fault_tried(struct vm_fault *vmf, pte_t *pte,
				    unsigned long refused)
{
	unsigned int order;
	unsigned long addr;

	for (; refused; refused &= ~BIT(order)) {
		order = highest_order(refused);
		addr = ALIGN_DOWN(vmf->address, PAGE_SIZE << order);
		if (thp_fault_ptes_none(pte + pte_index(addr), 1U << order))
			return order;
	}
	return 0;
}

/*
 * At a PTE fault in a limited VMA, with *@state its state and @pte the
 * page table of its PMD range: lift the limit if the fault is dense
 * (*@state updated); then, of @orders, the one the limit refuses that the
 * fault would have tried (0: none).
 */
static unsigned int thp_fault_pte(struct vm_fault *vmf, pte_t *pte,
				  unsigned long orders, u8 *state)
{
	unsigned long refused;
	unsigned int limit;
	u8 new;

	if (thp_fault_dense(vmf, pte)) {
		new = thp_fault_next_dense(*state);
		thp_fault_set(vmf->vma, *state, new, THP_FAULT_DENSE);
		*state = new;
	}
	limit = thp_fault_limit(*state);
	refused = limit ? orders & ~(BIT(limit) - 1) : 0;
	return refused ? thp_fault_tried(vmf, pte, refused) : 0;
}

/**
 * __thp_scan_fault_orders - the orders a fault in a limited VMA may use
 * @vmf: the fault, in an anonymous VMA with a fault limit
 * @pte: the page table of the fault's PMD range, mapped by the caller
 *	(alloc_anon_folio(), no lock); NULL at a PMD fault
 * @orders: the orders the THP policy allows it: BIT(PMD_ORDER) at a PMD
 *	fault, else the smaller ones that fit the VMA
 *
 * Lifts the limit if fault_limit_secs passed since the last underused
 * verdict or, at a PTE fault, if the fault is dense; else counts and
 * traces the largest order refused that the fault would have tried.
 *
 * Return: @orders below the VMA's limit.
 */
unsigned long __thp_scan_fault_orders(struct vm_fault *vmf, pte_t *pte,
				      unsigned long orders)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned int secs = READ_ONCE(thp_fault_limit_secs), limit, order;
	u8 state = READ_ONCE(vma->thp_fault_state);
	unsigned long refused;

	/* Off, or MADV_HUGEPAGE: the policy alone. */
	if (!secs || (vma->vm_flags & VM_HUGEPAGE))
		return orders;
	if ((u16)(thp_fault_now() - READ_ONCE(vma->thp_fault_stamp)) >= secs) {
		thp_fault_set(vma, state, 0, THP_FAULT_EXPIRED);
		return orders;
	}
	if (pte) {
		order = thp_fault_pte(vmf, pte, orders, &state);
		limit = thp_fault_limit(state);
	} else {
		/* No page table yet: the PMD order, if refused, was tried. */
		limit = thp_fault_limit(state);
		order = limit && limit <= PMD_ORDER ? PMD_ORDER : 0;
	}
	refused = limit ? orders & ~(BIT(limit) - 1) : 0;
	if (order) {
		count_mthp_stat(order, MTHP_STAT_ANON_FAULT_LIMITED);
		trace_thp_scan_fault_smaller(vmf->address, order, limit);
	}
	return orders & ~refused;
}

/* Mark the subpages of @folio that the page tables of @vma map. */
static bool thp_scan_rmap_one(struct folio *folio, struct vm_area_struct *vma,
			      unsigned long addr, void *arg)
{
	DEFINE_FOLIO_VMA_WALK(pvmw, folio, vma, addr, 0);
	unsigned long first = folio_pfn(folio), nr = folio_nr_pages(folio);
	struct thp_scan_walk *w = arg;
	unsigned int entries = w->nr_entries;

	w->nr_vmas++;
	/* try_to_map_unused_to_zeropage() leaves these subpages mapped. */
	if ((vma->vm_flags & VM_LOCKED) || mm_forbids_zeropage(vma->vm_mm))
		w->mlocked = true;
	/* The sizes split_keep_dense may keep: what this VMA allows. */
	if (w->orders)
		w->orders = thp_vma_allowable_orders(vma, vma->vm_flags,
						     TVA_ENFORCE_SYSFS,
						     w->orders);
	while (page_vma_mapped_walk(&pvmw)) {
		unsigned long pfn;
		pte_t pte;

		w->nr_entries++;
		if (!pvmw.pte) {
			/* Mapped by a PMD: every subpage. */
			bitmap_fill(w->mapped, nr);
			continue;
		}
		pte = ptep_get(pvmw.pte);
		if (pte_present(pte)) {
			pfn = pte_pfn(pte);
		} else {
			/*
			 * A device-exclusive (or device-private) entry still
			 * maps its page: its pfn is in the swap entry.
			 */
			swp_entry_t entry = pte_to_swp_entry(pte);

			if (!is_pfn_swap_entry(entry))
				continue;
			pfn = swp_offset_pfn(entry);
		}
		if (pfn - first < nr)
			__set_bit(pfn - first, w->mapped);
	}
	/* An underused folio this VMA maps: tell its faults. */
	if (w->underused && w->nr_entries != entries)
		thp_fault_underused(vma, folio_order(folio));
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
 * Finding the folios.
 *
 * thp_scan puts no folio on a list when it is made: a page fault pays for
 * a stamp in the folio's own third page (when it was made, in
 * folio->_thp_scan_stamp) and nothing else.  kthpscand finds the anon
 * large folios by walking the anon LRU lists of each lruvec, oldest
 * first, so that the LRU order is the order in which they are judged; it
 * collects the folios that are due (a minimum age since they were made or
 * last judged) in small batches and judges each batch from the largest
 * order down.  The stamp's lowest bit says the folio was judged (and
 * kept): "possibly over-allocated" is a folio whose bit is clear.
 *
 * kthpscand visits only the lruvecs on thp_scan_lruvecs: those that have
 * had a large swap-backed folio on their lists since kthpscand last found
 * them without one.  lruvec_add_folio() and its kin count these folios
 * in lruvec->thp_scan.nr under lru_lock, which a large folio takes at
 * fault and at free anyway, and the first one puts the lruvec on the
 * list (thp_scan_lruvec_first()); kthpscand takes it off when it finds
 * the count at 0.  So a memcg without large folios costs kthpscand
 * nothing, and an lruvec that was walked through and has nothing due
 * costs it one test a round until its oldest folio is due.
 *
 * Folios known to be partially mapped are on the lruvec's deferred split
 * queue, as in 6.12 (deferred_split_folio()), and are taken from there
 * first; the LRU walks pass them by.
 *
 * The deferred split shrinker, under memory pressure, does the same for
 * the memcg and node it is called for, with a walk position of its own,
 * and judges folios never judged at any age.
 */

/* Counters of a decision and of a split, global and per size. */
static void thp_scan_count(unsigned int order, enum vm_event_item event,
			   enum mthp_stat_item item)
{
	count_vm_event(event);
	count_mthp_stat(order, item);
}

/* Those of a split of @folio, of @order, which its memcg counts as well. */
static void thp_scan_count_split(struct folio *folio, unsigned int order,
				 enum vm_event_item event,
				 enum mthp_stat_item item)
{
	thp_scan_count(order, event, item);
	count_memcg_folio_events(folio, event, 1);
}

/* Folios collected at once by a walk: they are judged largest first. */
#define THP_SCAN_BATCH		16

/* LRU entries a walk visits under lru_lock at most, before it drops it. */
#define THP_SCAN_WALK		256

/* LRU entries visited that cost the budget as much as a subpage read. */
#define THP_SCAN_VISITS_PER_UNIT	16

/* LRU entries the shrinker may visit per folio it is asked to take. */
#define THP_SCAN_SHRINK_VISITS	64

/* The lruvecs with large anon-LRU folios, in the order kthpscand visits them. */
static LIST_HEAD(thp_scan_lruvecs);
static unsigned long thp_scan_nr_lruvecs;
/*
 * Protects the two above and every lruvec's thp_scan.node.  Taken within
 * lru_lock, from any context lru_lock is taken in: irqs off.
 */
static DEFINE_SPINLOCK(thp_scan_lruvecs_lock);

static bool thp_scan_is_kept(unsigned long stamp)
{
	return stamp & THP_SCAN_STAMP_KEPT;
}

/* The time in a stamp. */
static unsigned long thp_scan_stamp_time(unsigned long stamp)
{
	return stamp & ~THP_SCAN_STAMP_KEPT;
}

/**
 * thp_scan_new_folio - an anon large folio was made, and not judged yet
 * @folio: the folio, of order >= 2, exclusive to the caller or locked
 *
 * Used for the large folios a split makes; thp_scan_add_folio() for the
 * others.
 */
void thp_scan_new_folio(struct folio *folio)
{
	thp_scan_stamp(folio, false);
}

/**
 * thp_scan_partial_queued - a folio joined its deferred split queue
 * @folio: the folio, under the queue's lock
 *
 * Stamps it with the time, for THP_SCAN_PARTIAL_DELAY_MS.
 */
void thp_scan_partial_queued(struct folio *folio)
{
	thp_scan_stamp(folio, false);
}

/**
 * thp_scan_copy_stamp - what thp_scan knows of a folio moves with it
 * @dst: the folio @src migrates to
 * @src: an anon large folio, or any other folio (nothing is done)
 */
void thp_scan_copy_stamp(struct folio *dst, struct folio *src)
{
	/* Not hugetlb, whose third page holds other things. */
	if (folio_order(src) >= THP_SCAN_MIN_ORDER &&
	    folio_test_large_rmappable(src) && folio_test_anon(src))
		dst->_thp_scan_stamp = READ_ONCE(src->_thp_scan_stamp);
}

/**
 * thp_scan_lruvec_init - initialize thp_scan's state of an lruvec
 * @lruvec: an lruvec that lruvec_init() zeroed
 */
void thp_scan_lruvec_init(struct lruvec *lruvec)
{
	INIT_LIST_HEAD(&lruvec->thp_scan.node);
}

/**
 * thp_scan_lruvec_exit - an lruvec holds no folio and never will again
 * @lruvec: the lruvec of a memcg whose last reference went, or that is
 *	about to be freed
 *
 * Takes it off thp_scan_lruvecs.  kthpscand holds a reference to the
 * memcg of an lruvec it visits, so it is not visiting this one; and it
 * tries to get one only under thp_scan_lruvecs_lock, for an lruvec on
 * the list (thp_scan_next_lruvec()).
 */
void thp_scan_lruvec_exit(struct lruvec *lruvec)
{
	unsigned long flags;

	WARN_ONCE(lruvec->thp_scan.nr, "thp_scan: %ld large folios left on a freed lruvec\n",
		  (long)lruvec->thp_scan.nr);
	spin_lock_irqsave(&thp_scan_lruvecs_lock, flags);
	if (!list_empty(&lruvec->thp_scan.node)) {
		list_del_init(&lruvec->thp_scan.node);
		thp_scan_nr_lruvecs--;
	}
	spin_unlock_irqrestore(&thp_scan_lruvecs_lock, flags);
}

/**
 * thp_scan_memcg_released - the last reference to @memcg went
 * @memcg: a memcg that no folio is charged to any more
 *
 * Takes its lruvecs off thp_scan_lruvecs now, while its reference count
 * can still be tried: cgroup frees it (percpu_ref_exit()) before
 * mem_cgroup_css_free() would, and kthpscand would try a freed one.
 */
void thp_scan_memcg_released(struct mem_cgroup *memcg)
{
	int nid;

	for_each_node(nid)
		thp_scan_lruvec_exit(mem_cgroup_lruvec(memcg, NODE_DATA(nid)));
}

/**
 * thp_scan_lruvec_first - an lruvec got a large anon-LRU folio, having none
 * @lruvec: the lruvec, whose lru_lock the caller holds
 *
 * Puts @lruvec on thp_scan_lruvecs if it is not there, waking an idle
 * kthpscand, and lets the deferred split shrinker visit it.  Whether it
 * is on the list is stable under lru_lock: it is added here and taken
 * off by thp_scan_delist(), both under lru_lock, or by
 * thp_scan_lruvec_exit() once no folio can be added to it any more.
 */
void thp_scan_lruvec_first(struct lruvec *lruvec)
{
	bool wake;

	lockdep_assert_held(&lruvec->lru_lock);
	thp_scan_shrinker_mark(lruvec);
	if (!list_empty(&lruvec->thp_scan.node))
		return;
	/* Its folios are all new: none is due before the minimum age. */
	lruvec->thp_scan.due_from = jiffies;
	spin_lock(&thp_scan_lruvecs_lock);
	list_add_tail(&lruvec->thp_scan.node, &thp_scan_lruvecs);
	thp_scan_nr_lruvecs++;
	/* Under the lock kthpscand reads the count under: see thp_scan_sleep(). */
	wake = READ_ONCE(thp_scan_idle);
	spin_unlock(&thp_scan_lruvecs_lock);
	if (wake)
		thp_scan_wake();
}

/* Take @lruvec off thp_scan_lruvecs if it holds no large anon-LRU folio. */
static void thp_scan_delist(struct lruvec *lruvec)
{
	spin_lock_irq(&lruvec->lru_lock);
	if (!lruvec->thp_scan.nr && !list_empty(&lruvec->thp_scan.node) &&
	    !READ_ONCE(lruvec->deferred_split.split_queue_len)) {
		spin_lock(&thp_scan_lruvecs_lock);
		list_del_init(&lruvec->thp_scan.node);
		thp_scan_nr_lruvecs--;
		spin_unlock(&thp_scan_lruvecs_lock);
	}
	spin_unlock_irq(&lruvec->lru_lock);
}

/**
 * thp_scan_queued - a folio was flagged partially mapped and queued
 * @partial: true (a folio joined a queue for another reason: false)
 *
 * Called after the queue lock is dropped.  A partially mapped folio must
 * not wait for the end of a long sleep of kthpscand: wake it, once a
 * sleep (thp_scan_kicked), unless kthpscand queued it back itself.
 */
void thp_scan_queued(bool partial)
{
	if (!partial || READ_ONCE(thp_scan_kicked) || !thp_scan_is_enabled() ||
	    current == thp_scan_thread)
		return;
	thp_scan_wake();
}

/**
 * thp_scan_add_folio_off - thp_scan_add_folio() while thp_scan is off
 * @folio: a PMD-sized THP, stamped; locked or exclusive to the caller
 *
 * Queues it as 6.12 does, while underused THPs may be split.
 */
void thp_scan_add_folio_off(struct folio *folio)
{
	if (thp_split_underused())
		deferred_split_folio(folio, false);
}

/* One pass over queues and lists: what it may still do and what it did. */
struct thp_scan_round {
	long budget;		/* units of work it may still do */
	unsigned long nr_folios; /* folios it may still take */
	unsigned long visits;	/* LRU entries it may still visit */
	unsigned long min_age;	/* in jiffies, of folios judged before */
	unsigned long new_age;	/* in jiffies, of folios never judged */
	unsigned long partial_age; /* in jiffies, of those on a partial queue */
	unsigned long next_due;	/* when the next folio left is due */
	bool have_next_due;
	bool left_due;		/* stopped with folios due */
	unsigned long taken;	/* folios taken off queues and lists */
	unsigned long split;	/* folios split */
};

/* Note in @r that something is due at @due. */
static void thp_scan_note_due(struct thp_scan_round *r, unsigned long due)
{
	if (!r->have_next_due || time_before(due, r->next_due))
		r->next_due = due;
	r->have_next_due = true;
}

/*
 * Take the head of @q, the partially mapped folios of an lruvec, if it is
 * due, with a reference and its lock; NULL when none is.  A folio on its
 * way to be freed (no reference to be had) is unlinked and passed over;
 * one whose lock is taken goes to the tail, not to be taken again before
 * its delay is over.
 *
 * Holding the folio lock until the folio is back on its queue keeps out
 * what changes its queue without the queue lock: migration (which decides
 * whether to queue the new folio from whether the old one is listed) and
 * a memcg v1 charge move.
 */
static struct folio *thp_scan_take_partial(struct deferred_split *q,
					   struct thp_scan_round *r)
{
	struct folio *folio, *busy;
	unsigned long flags;

again:
	busy = NULL;
	spin_lock_irqsave(&q->split_queue_lock, flags);
	while ((folio = list_first_entry_or_null(&q->split_queue, struct folio,
						 _deferred_list))) {
		/* Queued in stamp order: the head is the oldest. */
		unsigned long due = thp_scan_stamp_time(folio->_thp_scan_stamp) +
				    r->partial_age;

		if (time_before(jiffies, due)) {
			thp_scan_note_due(r, due);
			folio = NULL;
			break;
		}
		if (!folio_try_get(folio)) {
			/* Lost the race with folio_put(), as in 6.12. */
			list_del_init(&folio->_deferred_list);
			q->split_queue_len--;
			if (folio_test_partially_mapped(folio)) {
				folio_clear_partially_mapped(folio);
				mod_mthp_stat(folio_order(folio),
					      MTHP_STAT_NR_ANON_PARTIALLY_MAPPED, -1);
			}
			continue;
		}
		if (folio_trylock(folio)) {
			list_del_init(&folio->_deferred_list);
			q->split_queue_len--;
			break;
		}
		thp_scan_partial_queued(folio);
		list_move_tail(&folio->_deferred_list, &q->split_queue);
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

/*
 * The walk.  The lists an lruvec's anon folios are on, in the order a
 * pass walks them: the classic inactive and active anon lists, then the
 * multi-gen LRU's anon lists, generation by generation from the oldest,
 * zone by zone.  Only one of the two kinds has folios, but a pass over
 * both is right while the multi-gen LRU is switched on or off.
 */
enum thp_scan_list {
	THP_SCAN_LIST_INACTIVE,
	THP_SCAN_LIST_ACTIVE,
	THP_SCAN_LIST_GEN,
};

/* Start @pos on the first list of a pass. */
static void thp_scan_pos_reset(struct thp_scan_pos *pos)
{
	memset(pos, 0, sizeof(*pos));
}

/*
 * The list @pos is on, or NULL when the pass is over; under lru_lock.  A
 * generation that the multi-gen LRU retired moves @pos to the oldest
 * one.
 */
static struct list_head *thp_scan_pos_list(struct lruvec *lruvec,
					   struct thp_scan_pos *pos)
{
	switch (pos->list) {
	case THP_SCAN_LIST_INACTIVE:
		return &lruvec->lists[LRU_INACTIVE_ANON];
	case THP_SCAN_LIST_ACTIVE:
		return &lruvec->lists[LRU_ACTIVE_ANON];
#ifdef CONFIG_LRU_GEN
	case THP_SCAN_LIST_GEN: {
		struct lru_gen_folio *lrugen = &lruvec->lrugen;
		unsigned long min_seq = lrugen->min_seq[LRU_GEN_ANON];

		if (pos->seq < min_seq) {
			pos->seq = min_seq;
			pos->zone = 0;
			pos->pfn = 0;
		}
		if (pos->seq > lrugen->max_seq)
			return NULL;
		return &lrugen->folios[lru_gen_from_seq(pos->seq)][LRU_GEN_ANON][pos->zone];
	}
#endif
	default:
		return NULL;
	}
}

/* Move @pos to the start of the next list of the pass. */
static void thp_scan_pos_next_list(struct thp_scan_pos *pos)
{
	pos->pfn = 0;
	if (pos->list != THP_SCAN_LIST_GEN) {
		pos->list++;
		return;
	}
	if (++pos->zone < MAX_NR_ZONES)
		return;
	pos->zone = 0;
	pos->seq++;
}

/*
 * Is @entry a list head, rather than a folio's lru?  Every LRU list head
 * of an lruvec is in it: the classic lists and the multi-gen LRU's.
 */
static bool thp_scan_list_head(struct lruvec *lruvec, struct list_head *entry)
{
	return (void *)entry >= (void *)lruvec && (void *)entry < (void *)(lruvec + 1);
}

/*
 * The folio at @pos->pfn, with a reference, or NULL: where the walk
 * left off, if thp_scan_pos_entry() then finds it still on @lruvec's
 * lists.  Called without lru_lock; the caller puts the folio after
 * dropping lru_lock (its reference may be the last).  The reference is
 * speculative, as compaction's: the page may have been freed and reused
 * for anything since.
 */
static struct folio *thp_scan_pos_get(const struct thp_scan_pos *pos)
{
	unsigned long pfn = READ_ONCE(pos->pfn);
	struct folio *folio;
	struct page *page;

	if (!pfn)
		return NULL;
	page = pfn_to_online_page(pfn);
	if (!page)
		return NULL;
	folio = page_folio(page);
	return folio_try_get(folio) ? folio : NULL;
}

/*
 * Is @folio, which we hold a reference to, on an anon LRU list of
 * @lruvec, whose lru_lock we hold?  A folio with PG_lru set is on the
 * lists of the lruvec its memcg and node name, but a lockless reader
 * cannot trust its memcg until nothing can isolate it: so own PG_lru for
 * a moment, as compaction does to isolate a folio (a memcg charge move
 * isolates the folio first), and read the memcg then.  Only an isolation
 * by someone else that starts in that moment fails, as if the folio were
 * being isolated already.
 */
static bool thp_scan_on_lruvec(struct lruvec *lruvec, struct folio *folio)
{
	bool on;

	lockdep_assert_held(&lruvec->lru_lock);
	if (!folio_test_clear_lru(folio))
		return false;
	on = folio_test_swapbacked(folio) && !folio_test_unevictable(folio) &&
	     mem_cgroup_lruvec(folio_memcg(folio), folio_pgdat(folio)) == lruvec;
	folio_set_lru(folio);
	return on;
}

/*
 * The entry of @head, the list @pos is on, to visit next: @cursor (from
 * thp_scan_pos_get()) if it still holds @pos->pfn and is on @lruvec's
 * anon lists, else the list's oldest: a folio that moved makes the walk
 * go over part of a list again, never skip one.  The multi-gen LRU moves
 * folios between generations lazily, so the cursor may be on another
 * generation's list than @pos says: the walk then goes on along the list
 * it is on, to that list's head.  Under lru_lock.
 */
static struct list_head *thp_scan_pos_entry(struct lruvec *lruvec,
					    const struct thp_scan_pos *pos,
					    struct list_head *head,
					    struct folio *cursor)
{
	if (cursor && pos->pfn - folio_pfn(cursor) < folio_nr_pages(cursor) &&
	    thp_scan_on_lruvec(lruvec, cursor))
		return &cursor->lru;
	return head->prev;
}

/*
 * Is @folio, on an LRU list under lru_lock, an anon large folio that the
 * walk of round @r may take?  One that is not due yet lowers *@young to
 * its stamp's time if older.
 */
static bool thp_scan_lru_due(struct folio *folio, const struct thp_scan_round *r,
			     unsigned long *young)
{
	unsigned long stamp, when;

	if (!folio_test_large(folio) || !folio_test_anon(folio) ||
	    folio_order(folio) < THP_SCAN_MIN_ORDER)
		return false;
	/* Its deferred split queue's: taken from there. */
	if (folio_test_partially_mapped(folio))
		return false;
	stamp = READ_ONCE(folio->_thp_scan_stamp);
	when = thp_scan_stamp_time(stamp);
	/*
	 * Unsigned: a stamp in the future, which only a folio that was never
	 * stamped can have, makes the folio due at once.
	 */
	if (jiffies - when >= (thp_scan_is_kept(stamp) ? r->min_age : r->new_age))
		return true;
	if (time_before(when, *young))
		*young = when;
	return false;
}

/* Folios a walk collected, each with a reference. */
struct thp_scan_batch {
	unsigned int nr;
	struct folio *folio[THP_SCAN_BATCH];
};

/*
 * One step of a walk of @lruvec from @pos, under lru_lock: visit up to
 * THP_SCAN_WALK entries (and what is left of @r->visits), collecting into
 * @b the anon large folios due, with a reference, until it is full.
 * Moves @pos past what it visited.  Returns true when the pass is over:
 * @pos is then past the last list.
 */
static bool thp_scan_walk_step(struct lruvec *lruvec, struct thp_scan_pos *pos,
			       struct thp_scan_round *r, struct thp_scan_batch *b,
			       unsigned long *young, struct folio *cursor)
{
	unsigned long visited = 0;
	struct list_head *head, *entry;

	lockdep_assert_held(&lruvec->lru_lock);
	head = thp_scan_pos_list(lruvec, pos);
	entry = head ? thp_scan_pos_entry(lruvec, pos, head, cursor) : NULL;
	while (head && visited < THP_SCAN_WALK && visited < r->visits &&
	       b->nr < THP_SCAN_BATCH) {
		struct folio *folio;

		if (thp_scan_list_head(lruvec, entry)) {
			thp_scan_pos_next_list(pos);
			head = thp_scan_pos_list(lruvec, pos);
			if (head)
				entry = head->prev;
			continue;
		}
		folio = list_entry(entry, struct folio, lru);
		entry = entry->prev;
		visited++;
		if (thp_scan_lru_due(folio, r, young) && folio_try_get(folio))
			b->folio[b->nr++] = folio;
	}
	if (head) {
		if (thp_scan_list_head(lruvec, entry))
			thp_scan_pos_next_list(pos);
		else
			pos->pfn = folio_pfn(list_entry(entry, struct folio, lru));
	}
	r->visits -= visited;
	r->budget -= DIV_ROUND_UP(visited, THP_SCAN_VISITS_PER_UNIT);
	return !head;
}

/* Larger orders first, in LRU order within an order. */
static void thp_scan_batch_sort(struct thp_scan_batch *b)
{
	unsigned int i, j;

	for (i = 1; i < b->nr; i++) {
		struct folio *folio = b->folio[i];

		for (j = i; j && folio_order(b->folio[j - 1]) < folio_order(folio); j--)
			b->folio[j] = b->folio[j - 1];
		b->folio[j] = folio;
	}
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

/*
 * The counters of verdict @v on @folio, of @order, split if !@ret: a split
 * in /proc/vmstat, per size and in the folio's memcg, its failure in
 * /proc/vmstat and per size, a reason to keep the folio and the size a
 * split made per size only.
 */
static void thp_scan_count_verdict(struct folio *folio, unsigned int order,
				   const struct thp_scan_verdict *v, int ret)
{
	switch (v->d) {
	case THP_SCAN_SPLIT_PARTIAL:
	case THP_SCAN_SPLIT_UNDERUSED:
	case THP_SCAN_SPLIT_ZERO_RUNS:
		if (ret) {
			thp_scan_count(order, THP_SPLIT_SCAN_FAILED,
				       MTHP_STAT_SPLIT_SCAN_FAILED);
		} else if (v->d == THP_SCAN_SPLIT_PARTIAL) {
			thp_scan_count_split(folio, order,
					     THP_SPLIT_SCAN_PARTIAL,
					     MTHP_STAT_SPLIT_SCAN_PARTIAL);
			if (v->new_order)
				count_mthp_stat(v->new_order,
						MTHP_STAT_SPLIT_SCAN_TO_MTHP);
		} else if (v->d == THP_SCAN_SPLIT_ZERO_RUNS) {
			thp_scan_count_split(folio, order,
					     THP_SPLIT_SCAN_ZERO_RUNS,
					     MTHP_STAT_SPLIT_SCAN_ZERO_RUNS);
		} else {
			thp_scan_count_split(folio, order,
					     THP_SPLIT_SCAN_UNDERUSED,
					     MTHP_STAT_SPLIT_SCAN_UNDERUSED);
			/* 6.12's count: PMD-sized THPs split as underused. */
			if (order >= HPAGE_PMD_ORDER)
				count_vm_event(THP_UNDERUSED_SPLIT_PAGE);
		}
		break;
	case THP_SCAN_KEEP_NOT_PARTIAL:
		count_mthp_stat(order, MTHP_STAT_SPLIT_SCAN_NOT_PARTIAL);
		break;
	case THP_SCAN_KEEP_MLOCKED:
		count_mthp_stat(order, MTHP_STAT_SPLIT_SCAN_KEEP_MLOCKED);
		break;
	case THP_SCAN_KEEP_PINNED:
		count_mthp_stat(order, MTHP_STAT_SPLIT_SCAN_KEEP_PINNED);
		break;
	case THP_SCAN_KEEP_BUSY:
		count_mthp_stat(order, MTHP_STAT_SPLIT_SCAN_KEEP_BUSY);
		break;
	default:
		break;
	}
}

/*
 * A folio judged and not split (kept, or its split failed): where it
 * goes.  One taken from its partial queue goes back while it is flagged
 * (a split to retry), its flag cleared if the rmap walk refuted it; with
 * thp_scan off, as in 6.12, one that is not flagged leaves the queue.
 * Any other is stamped: judged now, due again after the minimum age.
 */
static void thp_scan_put_back(struct folio *folio, enum thp_scan_decision d,
			      bool from_queue, bool stock)
{
	if (from_queue && d == THP_SCAN_KEEP_NOT_PARTIAL)
		thp_scan_clear_partial(folio);
	if (from_queue && folio_test_partially_mapped(folio))
		deferred_split_folio(folio, true);
	else if (!stock)
		thp_scan_stamp(folio, true);
}

/*
 * The facts split_keep_dense needs on the folio of @f: the orders below
 * the folio's that the admin allows (any size policy but "never"; the
 * VMAs are asked later, by the rmap walk).  None for a folio in the swap
 * cache, which 6.12 splits to order 0 only, for one larger than
 * THP_SCAN_ZERO_MAP_ORDER, or when thp_scan is off: the folio is then
 * judged as without split_keep_dense; and none for a folio that is not
 * zero-scanned at all.  f->zero must have room for the map.
 */
static void thp_scan_dense_facts(struct thp_scan_facts *f)
{
	unsigned long orders;

	if (f->stock || f->swapcache || !READ_ONCE(thp_scan_keep_dense) ||
	    f->order <= THP_SCAN_MIN_ORDER || f->order > THP_SCAN_ZERO_MAP_ORDER)
		return;
	/* What thp_scan_decide() settles before any zero scan. */
	if (!f->mapped || f->pinned || f->flagged || f->looks_partial ||
	    !f->judge || f->mlocked)
		return;
	orders = READ_ONCE(thp_anon_allowed[THP_ANON_OTHER_MADV]) &
		 (BIT(f->order) - 1) & ~(BIT(THP_SCAN_MIN_ORDER) - 1);
	if (!orders)
		return;
	f->dense_orders = orders;
	f->min_free = max(1U, DIV_ROUND_UP((1U << f->order) *
			  READ_ONCE(thp_scan_dense_min_free_pct), 100));
}

/*
 * @folio, of @order at @pfn, locked and with our reference, was just split
 * to order @k to keep its dense parts (@d the reason, @zero its zero map):
 * split its blocks that are not dense to base pages as well, so that
 * their zero-filled subpages are freed.  The blocks but the first are
 * found by pfn.  Without @list each is left alone (traced as a split
 * that failed, -EBUSY) unless it is still an anon folio of order @k
 * there, we get a reference and its lock is free;
 * at swap-out they are on reclaim's @list, whose reference is the one
 * pin their split expects, and the new folios go there too.  Counts the
 * dense blocks kept.
 */
static void thp_scan_split_sparse(struct folio *folio, unsigned long pfn,
				  unsigned int order, unsigned int k,
				  const unsigned long *zero,
				  enum thp_scan_decision d,
				  struct list_head *list)
{
	unsigned int nr = 1U << order, step = 1U << k, kept = 0, i;

	for (i = 0; i < nr; i += step) {
		struct page *page = pfn_to_page(pfn + i);
		struct folio *piece = folio;
		int ret;

		if (thp_scan_block_dense(zero, i, k)) {
			kept++;
			continue;
		}
		if (i) {
			piece = page_folio(page);
			if (!list && !folio_try_get(piece)) {
				trace_thp_scan_split(pfn + i, k, 0, d, -EBUSY);
				continue;
			}
			if (page_folio(page) != piece || &piece->page != page ||
			    !folio_test_anon(piece) || folio_order(piece) != k ||
			    !folio_trylock(piece)) {
				if (!list)
					folio_put(piece);
				trace_thp_scan_split(pfn + i, k, 0, d, -EBUSY);
				continue;
			}
		}
		ret = split_huge_page_to_list_to_order(page, list, 0);
		trace_thp_scan_split(pfn + i, k, 0, d, ret);
		if (i) {
			folio_unlock(piece);
			if (!list)
				folio_put(piece);
		}
	}
	if (kept)
		mod_mthp_stat(k, MTHP_STAT_SPLIT_SCAN_DENSE_KEPT, kept);
}

/*
 * Decide on @folio, which we hold locked and with a reference, taken
 * from its partial queue (@from_queue) or found on the LRU; split it if
 * so decided, put it back where it belongs if not, and unlock it and
 * drop the reference.
 */
static void thp_scan_folio(struct folio *folio, struct thp_scan_round *r,
			   bool from_queue)
{
	unsigned long pfn = folio_pfn(folio);
	unsigned int order = folio_order(folio), nr = folio_nr_pages(folio);
	bool stock = !thp_scan_is_enabled();
	DECLARE_BITMAP(zero, 1U << THP_SCAN_ZERO_MAP_ORDER);
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
		.zero = zero,
	};
	static const struct thp_scan_probes probes = {
		.zero_scan = thp_scan_zero_scan,
		.rmap_walk = thp_scan_rmap_walk,
		.zero_map = thp_scan_zero_map,
	}, stock_probes = {
		.zero_scan = thp_scan_stock_underused,
	};
	struct thp_scan_walk w = { };
	struct thp_scan_verdict v;
	int ret = -EAGAIN;

	thp_scan_dense_facts(&f);
	thp_scan_decide(&f, folio, stock ? &stock_probes : &probes, &w, &v);
	trace_thp_scan_decision(pfn, order, v.zero, v.scanned,
				v.walked ? w.nr_mapped : thp_scan_mapped(folio),
				v.d);
	thp_scan_count(order, THP_SPLIT_SCAN_SCANNED,
		       MTHP_STAT_SPLIT_SCAN_SCANNED);
	count_vm_events(THP_SPLIT_SCAN_PAGES_SCANNED, v.scanned);
	r->budget -= thp_scan_cost(&v, &w, 0);
	r->nr_folios--;
	bitmap_free(w.mapped);

	if (v.d == THP_SCAN_SPLIT_PARTIAL || v.d == THP_SCAN_SPLIT_UNDERUSED ||
	    v.d == THP_SCAN_SPLIT_ZERO_RUNS) {
		ret = split_huge_page_to_list_to_order(&folio->page, NULL,
						       v.new_order);
		trace_thp_scan_split(pfn, order, v.new_order, v.d, ret);
		/* What thp_scan_cost() charges a split, on top of the rest. */
		r->budget -= nr;
		if (!ret)
			r->split++;
		if (!ret && v.new_order && v.d != THP_SCAN_SPLIT_PARTIAL)
			thp_scan_split_sparse(folio, pfn, order, v.new_order,
					      f.zero, v.d, NULL);
	}
	thp_scan_count_verdict(folio, order, &v, ret);
	/* A split to a large order has stamped the new folios itself. */
	if (ret)
		thp_scan_put_back(folio, v.d, from_queue, stock);
	folio_unlock(folio);
	folio_put(folio);
}

/* Judge the partially mapped folios of @lruvec within what is left of @r. */
static void thp_scan_partial(struct lruvec *lruvec, struct thp_scan_round *r)
{
	struct deferred_split *q = &lruvec->deferred_split;
	struct folio *folio;

	while (r->budget > 0 && r->nr_folios &&
	       (folio = thp_scan_take_partial(q, r))) {
		thp_scan_folio(folio, r, true);
		cond_resched();
	}
}

/*
 * Judge the folios of @b, from the largest order down, while @r allows;
 * returns false if it left some, whose references it drops.
 */
static bool thp_scan_batch(struct thp_scan_batch *b, struct thp_scan_round *r)
{
	bool all = true;
	unsigned int i;

	thp_scan_batch_sort(b);
	for (i = 0; i < b->nr; i++) {
		struct folio *folio = b->folio[i];

		if (r->budget <= 0 || !r->nr_folios) {
			all = false;
			folio_put(folio);
			continue;
		}
		r->taken++;
		if (!folio_trylock(folio)) {
			trace_thp_scan_decision(folio_pfn(folio), folio_order(folio),
						0, 0, thp_scan_mapped(folio),
						THP_SCAN_KEEP_LOCKED);
			r->budget--;
			r->nr_folios--;
			folio_put(folio);
			continue;
		}
		thp_scan_folio(folio, r, false);
		cond_resched();
	}
	return all;
}

/*
 * Walk @lruvec from @pos, judging the folios due, within what is left of
 * @r.  A batch left unfinished is walked again from where it started.
 * When a pass is over, @pos is back at the start and true is returned;
 * *@young is the oldest stamp of the folios found not due during the
 * steps of this call (the caller starts it at a time of its choosing).
 */
static bool thp_scan_walk(struct lruvec *lruvec, struct thp_scan_pos *pos,
			  struct thp_scan_round *r, unsigned long *young)
{
	while (r->budget > 0 && r->nr_folios && r->visits) {
		struct thp_scan_batch b = { };
		struct thp_scan_pos start;
		bool over;
		struct folio *cursor = thp_scan_pos_get(pos);

		spin_lock_irq(&lruvec->lru_lock);
		start = *pos;
		over = thp_scan_walk_step(lruvec, pos, r, &b, young, cursor);
		spin_unlock_irq(&lruvec->lru_lock);
		if (cursor)
			folio_put(cursor);
		if (!thp_scan_batch(&b, r)) {
			spin_lock_irq(&lruvec->lru_lock);
			*pos = start;
			spin_unlock_irq(&lruvec->lru_lock);
			r->left_due = true;
			return false;
		}
		if (over) {
			spin_lock_irq(&lruvec->lru_lock);
			thp_scan_pos_reset(pos);
			spin_unlock_irq(&lruvec->lru_lock);
			return true;
		}
		cond_resched();
	}
	return false;
}

/*
 * kthpscand's visit of @lruvec in round @r: its partially mapped folios,
 * then, if its LRU lists may hold a folio due, on with its pass.  A pass
 * that ends tells when the next one is due: at the minimum age after the
 * oldest stamp it found not due, or after the pass began.
 */
static void thp_scan_visit(struct lruvec *lruvec, struct thp_scan_round *r)
{
	struct thp_scan_lruvec *ts = &lruvec->thp_scan;
	unsigned long young;

	/* Racy: a folio queued meanwhile is taken in the next round. */
	if (data_race(READ_ONCE(lruvec->deferred_split.split_queue_len)))
		thp_scan_partial(lruvec, r);
	if (r->budget <= 0 || !r->nr_folios)
		return;
	if (!ts->scan.started) {
		unsigned long due = ts->due_from + r->new_age;

		if (time_before(jiffies, due)) {
			thp_scan_note_due(r, due);
			return;
		}
		ts->scan.started = true;
		ts->young = jiffies;
	}
	young = ts->young;
	if (thp_scan_walk(lruvec, &ts->scan, r, &young)) {
		ts->due_from = young;
		thp_scan_note_due(r, young + r->new_age);
	} else {
		ts->young = young;
	}
}

/**
 * thp_scan_count_objects - what the deferred split shrinker may free
 * @lruvec: the lruvec of the memcg and node being reclaimed from
 *
 * Return: the folios on its partial queue, and with thp_scan on the large
 * anon-LRU folios on its lists, some of which may not be due.
 */
unsigned long thp_scan_count_objects(struct lruvec *lruvec)
{
	unsigned long nr = READ_ONCE(lruvec->deferred_split.split_queue_len);

	if (thp_scan_is_enabled())
		nr += READ_ONCE(lruvec->thp_scan.nr);
	return nr;
}

/**
 * thp_scan_shrink - scan an lruvec for the deferred split shrinker
 * @lruvec: the lruvec of the memcg and node being reclaimed from
 * @nr_to_scan: how many folios to take
 *
 * Under reclaim, partially mapped folios and folios never judged are due
 * whatever their age (a jiffy at least, so that one whose split just
 * failed is not taken again at once), and folios judged and kept only
 * after min_age_millisecs, as for kthpscand.  The shrinker walks the LRU
 * lists from a position of its own, kthpscand's being left where it is.
 * With thp_scan off, only the partial queue is scanned, as in 6.12.
 *
 * Return: how many folios were split, or SHRINK_STOP if none was and a
 * pass found nothing more to take.
 */
unsigned long thp_scan_shrink(struct lruvec *lruvec, unsigned long nr_to_scan)
{
	unsigned int age_ms = READ_ONCE(thp_scan_min_age_millisecs);
	struct thp_scan_round r = {
		.budget = LONG_MAX,
		.nr_folios = nr_to_scan,
		.visits = nr_to_scan * THP_SCAN_SHRINK_VISITS,
		.min_age = max(1UL, msecs_to_jiffies(age_ms)),
		.new_age = 1,
		.partial_age = 1,
	};
	unsigned long young = jiffies;
	bool over = false;

	thp_scan_partial(lruvec, &r);
	if (!thp_scan_is_enabled()) {
		/* As 6.12's shrinker. */
		if (!r.split && !READ_ONCE(lruvec->deferred_split.split_queue_len))
			return SHRINK_STOP;
		return r.split;
	}
	if (r.nr_folios)
		over = thp_scan_walk(lruvec, &lruvec->thp_scan.shrink, &r, &young);
	if (!r.split && over)
		return SHRINK_STOP;
	return r.split;
}

/*
 * The next lruvec for kthpscand to visit, moved to the tail of
 * thp_scan_lruvecs so that the next round starts with the one after it,
 * with a reference to its memcg; NULL if the list is empty.  An lruvec of
 * a memcg whose last reference is going is passed over (css_tryget()
 * fails); thp_scan_memcg_released() takes it off the list, under the
 * list's lock, before the reference count itself is freed.
 */
static struct lruvec *thp_scan_next_lruvec(void)
{
	struct lruvec *lruvec;
	unsigned long flags;

	spin_lock_irqsave(&thp_scan_lruvecs_lock, flags);
	lruvec = list_first_entry_or_null(&thp_scan_lruvecs, struct lruvec,
					  thp_scan.node);
	if (lruvec) {
		struct mem_cgroup *memcg = lruvec_memcg(lruvec);

		list_move_tail(&lruvec->thp_scan.node, &thp_scan_lruvecs);
		if (memcg && !css_tryget(&memcg->css))
			lruvec = ERR_PTR(-ENOENT);
	}
	spin_unlock_irqrestore(&thp_scan_lruvecs_lock, flags);
	return lruvec;
}

/*
 * One round of kthpscand: every lruvec on thp_scan_lruvecs once, from
 * the one after where the last round stopped, until the budget is spent.
 * Returns whether some folio is due now (the budget ran out, or a batch
 * was left unfinished); sets *@next_due when none is but some will be.
 */
static bool thp_scan_round(unsigned long *next_due, bool *have_next_due)
{
	unsigned int age_ms = READ_ONCE(thp_scan_min_age_millisecs);
	struct thp_scan_round r = {
		.budget = READ_ONCE(thp_scan_pages_to_scan),
		.nr_folios = ULONG_MAX,
		.visits = ULONG_MAX,
		/* At least a jiffy: a folio kept now is not taken again now. */
		.min_age = max(1UL, msecs_to_jiffies(age_ms)),
		.new_age = max(1UL, msecs_to_jiffies(age_ms)),
		.partial_age = max(1UL, msecs_to_jiffies(min(age_ms,
						THP_SCAN_PARTIAL_DELAY_MS))),
	};
	unsigned long i, nr = READ_ONCE(thp_scan_nr_lruvecs);

	if (READ_ONCE(thp_scan_pressure))
		r.budget *= THP_SCAN_PRESSURE_FACTOR;

	for (i = 0; i < nr && r.budget > 0; i++) {
		struct lruvec *lruvec = thp_scan_next_lruvec();
		struct mem_cgroup *memcg;

		if (!lruvec)
			break;
		if (IS_ERR(lruvec))
			continue;
		thp_scan_visit(lruvec, &r);
		if (!READ_ONCE(lruvec->thp_scan.nr))
			thp_scan_delist(lruvec);
		memcg = lruvec_memcg(lruvec);
		if (memcg)
			css_put(&memcg->css);
		cond_resched();
	}
	*next_due = r.next_due;
	*have_next_due = r.have_next_due;
	return r.budget <= 0 || r.left_due;
}

/* Is any lruvec on thp_scan_lruvecs?  Under its lock: see thp_scan_lruvec_first(). */
static bool thp_scan_any_listed(void)
{
	unsigned long flags;
	bool any;

	spin_lock_irqsave(&thp_scan_lruvecs_lock, flags);
	any = thp_scan_nr_lruvecs != 0;
	spin_unlock_irqrestore(&thp_scan_lruvecs_lock, flags);
	return any;
}

/*
 * Sleep after a round: scan_sleep_millisecs at least, until the next folio
 * is due if none is now, without a timeout while thp_scan is off, and up
 * to THP_SCAN_IDLE_TIMEOUT_MS while no lruvec has a large folio.  Knob
 * writes, the first large folio of an lruvec while idle and new partially
 * mapped folios wake it (thp_scan_wake()).
 */
static void thp_scan_sleep(bool busy, unsigned long next_due, bool have_next_due)
{
	long timeout = msecs_to_jiffies(READ_ONCE(thp_scan_sleep_millisecs));

	WRITE_ONCE(thp_scan_idle, true);
	/*
	 * Orders the store above before the lock taken by
	 * thp_scan_any_listed(): see thp_scan_lruvec_first().
	 */
	smp_mb();
	if (!thp_scan_is_enabled()) {
		wait_event_freezable(thp_scan_wait, READ_ONCE(thp_scan_kicked) ||
				     kthread_should_stop());
	} else if (!busy && !thp_scan_any_listed()) {
		wait_event_freezable_timeout(thp_scan_wait,
					     READ_ONCE(thp_scan_kicked) ||
					     kthread_should_stop(),
					     msecs_to_jiffies(THP_SCAN_IDLE_TIMEOUT_MS));
	} else {
		/* Folios made now need no wake-up: they are not due yet. */
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
			count_vm_event(THP_SPLIT_SCAN_ROUNDS);
		}
		thp_scan_sleep(busy, next_due, have_next_due);
	}
	return 0;
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

/*
 * The new folios that a split at swap-out added to reclaim's @list after
 * @last and that nothing maps (zero-filled subpages the split mapped to
 * the zero page, subpages no page table mapped) hold nothing anyone can
 * reach: take them off @list and drop its reference, so that they are
 * freed now rather than written to swap (one still referenced elsewhere,
 * by a speculative folio_try_get() for instance, is freed when that is
 * dropped).  Return: how many pages.
 */
static unsigned int thp_scan_free_unmapped(struct list_head *list,
					   struct list_head *last)
{
	struct list_head *pos = last->next, *next;
	unsigned int nr = 0;

	for (; pos != list; pos = next) {
		struct folio *folio = list_entry(pos, struct folio, lru);

		next = pos->next;
		if (folio_mapped(folio) || folio_test_swapcache(folio))
			continue;
		list_del(&folio->lru);
		nr += folio_nr_pages(folio);
		folio_put(folio);
	}
	return nr;
}

/**
 * thp_scan_split_on_swapout - split a large folio before it is swapped out?
 * @folio: an anonymous large folio that reclaim is about to add to swap:
 *	locked, isolated (the caller's reference is the one pin a split
 *	expects), mapped or not, not in the swap cache
 * @list: the reclaim list, which the split adds the other new folios to
 * @nr_freed: set to the number of pages the split freed
 *
 * With thp_scan on and split_on_swapout "underused", splits @folio when it
 * is underused or partially mapped, so that only its used subpages are
 * written to swap; with split_keep_dense, a folio mapped whole is judged
 * as kthpscand judges it and split to the order that keeps its dense
 * parts, which then go to swap as large folios.  With "always", splits
 * every such folio to base pages; with "never", or with thp_scan off,
 * none.  The new folios that nothing maps after the split (zero-filled
 * subpages, now mapped to the zero page, and subpages that were not
 * mapped) are freed at once, except @folio itself, which the caller frees
 * if nothing maps it.  Folios that thp_scan did not split are left to
 * reclaim as in 6.12.  Traced (thp_scan_swapout, and thp_scan_split for
 * each step of a split that keeps dense parts) and counted.
 *
 * Return: true if @folio was split: it is now the folio of its first
 * subpage (a base page, or a dense block that is still mapped), and the
 * new folios still mapped are on @list.
 */
bool thp_scan_split_on_swapout(struct folio *folio, struct list_head *list,
			       unsigned int *nr_freed)
{
	static const struct thp_scan_probes probes = {
		.zero_scan = thp_scan_zero_scan,
		.rmap_walk = thp_scan_rmap_walk,
		.zero_map = thp_scan_zero_map,
	};
	unsigned int mode = READ_ONCE(thp_scan_swapout_mode);
	unsigned int order = folio_order(folio);
	unsigned long pfn = folio_pfn(folio);
	struct list_head *last = list->prev;
	DECLARE_BITMAP(zero, 1U << THP_SCAN_ZERO_MAP_ORDER);
	struct thp_scan_facts f = {
		.order = order,
		.mapped = folio_mapped(folio),
		.flagged = folio_test_partially_mapped(folio),
		.looks_partial = folio_looks_partially_mapped(folio),
		.mlocked = folio_test_mlocked(folio),
		.judge = !folio_contain_hwpoisoned_page(folio),
		.max_zero = thp_scan_max_zero(folio_nr_pages(folio),
				READ_ONCE(thp_scan_underused_zero_pct)),
		.zero = zero,
	};
	struct thp_scan_walk w = { };
	struct thp_scan_verdict v;
	enum thp_scan_decision d;
	unsigned int unmapped = 0;
	bool split;
	int ret = 0;

	*nr_freed = 0;
	if (!thp_scan_is_enabled() || order < THP_SCAN_MIN_ORDER)
		return false;
	if (mode == THP_SCAN_SWAPOUT_UNDERUSED)
		thp_scan_dense_facts(&f);
	if (f.dense_orders) {
		thp_scan_decide_dense(&f, folio, &probes, &w, &v);
		d = v.d;
	} else {
		d = thp_scan_swapout_decide(mode, folio, &probes, &w, &v);
	}
	bitmap_free(w.mapped);
	count_vm_events(THP_SPLIT_SCAN_PAGES_SCANNED, v.scanned);
	split = d == THP_SCAN_SPLIT_PARTIAL || d == THP_SCAN_SPLIT_UNDERUSED ||
		d == THP_SCAN_SPLIT_ZERO_RUNS;
	if (split) {
		ret = split_huge_page_to_list_to_order(&folio->page, list,
						       v.new_order);
		if (v.new_order)
			trace_thp_scan_split(pfn, order, v.new_order, d, ret);
		if (!ret && v.new_order) {
			thp_scan_split_sparse(folio, pfn, order, v.new_order,
					      f.zero, d, list);
			/* Unmapped since the walk: nothing to keep. */
			if (folio_test_large(folio) && !folio_mapped(folio))
				split_folio_to_list(folio, list);
		}
		if (!ret) {
			*nr_freed = thp_scan_free_unmapped(list, last);
			unmapped = *nr_freed +
				   (folio_mapped(folio) ? 0 : folio_nr_pages(folio));
			count_vm_events(THP_SPLIT_SCAN_SWAPOUT_FREED,
					*nr_freed);
			count_memcg_folio_events(folio,
						 THP_SPLIT_SCAN_SWAPOUT_FREED,
						 *nr_freed);
			thp_scan_count_split(folio, order,
					     THP_SPLIT_SCAN_SWAPOUT,
					     MTHP_STAT_SPLIT_SCAN_SWAPOUT);
			mod_mthp_stat(order,
				      MTHP_STAT_SPLIT_SCAN_SWAPOUT_UNMAPPED,
				      unmapped);
		}
	}
	trace_thp_scan_swapout(pfn, order, v.zero, v.scanned, unmapped,
			       thp_scan_swapout_names[mode], d, ret);
	return split && !ret;
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

/* What thp_scan= on the command line asked for: 1 on, 0 off, -1 nothing. */
static int thp_scan_boot_param __ro_after_init = -1;

/**
 * thp_scan_init - say what thp_scan does, and start kthpscand
 *
 * thp_scan changes what khugepaged collapses while it is on: the boot
 * log says so, with the limit in force.  Without kthpscand thp_scan still
 * works under memory pressure, through the deferred split shrinker; so a
 * failure to start it is reported, not fatal.
 */
void __init thp_scan_init(void)
{
	enum thp_scan_collapse_src src;
	struct task_struct *t;
	unsigned int limit;

	limit = thp_scan_collapse_limit_now(READ_ONCE(khugepaged_max_ptes_none), &src);
	if (thp_scan_is_enabled())
		pr_info("on: kthpscand splits partially mapped and underused anon THPs; khugepaged collapses a PMD range only with at most %u of its %u PTEs new (%s; max_ptes_none %u); thp_scan=off or thp_scan/enabled=0 for 6.12's behaviour\n",
			limit, HPAGE_PMD_NR, thp_scan_collapse_src_names[src],
			READ_ONCE(khugepaged_max_ptes_none));
	else
		pr_info("off (thp_scan=off): khugepaged and the deferred split shrinker as in 6.12\n");

	t = kthread_run(thp_scan_kthread, NULL, "kthpscand");
	if (IS_ERR(t)) {
		pr_err("failed to start kthpscand: %ld\n", PTR_ERR(t));
		return;
	}
	thp_scan_thread = t;
}

/*
 * thp_scan=on|off (or 1|0, y|n) on the command line: thp_scan/enabled at
 * boot; documented in kernel-parameters.txt.  A value that does not parse
 * is reported and changes nothing (0: no "malformed early option" too).
 */
static int __init setup_thp_scan(char *str)
{
	bool on;

	if (!str || kstrtobool(str, &on)) {
		pr_warn("thp_scan=%s: cannot parse, ignored\n", str ? str : "");
		return 0;
	}
	/* thp_scan_boot_key() switches the static key. */
	thp_scan_boot_param = on;
	return 0;
}
early_param("thp_scan", setup_thp_scan);

/*
 * What thp_scan= asked for, in force before any user task and whatever
 * becomes of THP's own init (hugepage_init(), which starts kthpscand,
 * may fail after the point where THP faults work).  One writer of the
 * key at boot, in process context, rather than the early parameter's
 * handler.
 */
static int __init thp_scan_boot_key(void)
{
	if (!thp_scan_boot_param)
		thp_scan_set_enabled(false);
	return 0;
}
early_initcall(thp_scan_boot_key);

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
 * @mm: the mm of the range
 * @order: the order of the THP it would have made
 *
 * Counts a range that khugepaged left alone because it would have added
 * more new memory than thp_scan's collapse limit, although it was within
 * khugepaged's own limits: per size, and in the memcg of @mm.
 */
void thp_scan_collapse_skipped(struct mm_struct *mm, unsigned int order)
{
	count_mthp_stat(order, MTHP_STAT_SPLIT_SCAN_COLLAPSE_SKIPPED);
	mod_memcg_mm_state(mm, MEMCG_THP_COLLAPSE_SKIPPED, 1);
}

/**
 * thp_scan_swapout_freed_first - reclaim freed the first subpage of a split
 * @folio: that subpage, which thp_scan_split_on_swapout() left unmapped
 *
 * The rest of what the split freed at swap-out is counted by
 * thp_scan_split_on_swapout() itself.
 */
void thp_scan_swapout_freed_first(struct folio *folio)
{
	count_vm_event(THP_SPLIT_SCAN_SWAPOUT_FREED);
	count_memcg_folio_events(folio, THP_SPLIT_SCAN_SWAPOUT_FREED, 1);
}

/**
 * thp_scan_split_freed - a split of an anonymous large folio freed memory
 * @page: the page its caller split, held by the caller
 * @nr: how many base pages the split left mapped nowhere (or only as the
 *	shared zero page), which are freed
 *
 * Counted in the memcg of @page: memory.stat's thp_split_freed, in bytes.
 */
void thp_scan_split_freed(struct page *page, unsigned int nr)
{
	mod_memcg_page_state(page, MEMCG_THP_SPLIT_FREED, nr);
}

static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", thp_scan_is_enabled());
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	bool val;
	int err;

	err = thp_scan_parse_bool(buf, &val);
	if (err)
		return err;
	thp_scan_set_enabled(val);
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
THP_SCAN_UINT_ATTR(split_keep_dense, thp_scan_keep_dense, 0, 1);
THP_SCAN_UINT_ATTR(split_dense_min_free_pct, thp_scan_dense_min_free_pct, 1,
		   100);
THP_SCAN_UINT_ATTR(fault_limit_secs, thp_fault_limit_secs, 0,
		   THP_FAULT_LIMIT_SECS_MAX);

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
	&split_keep_dense_attr.attr.attr,
	&split_dense_min_free_pct_attr.attr.attr,
	&split_on_swapout_attr.attr,
	&fault_limit_secs_attr.attr.attr,
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
