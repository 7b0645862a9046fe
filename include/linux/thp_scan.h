/* SPDX-License-Identifier: GPL-2.0 */
/*
 * thp_scan: find anonymous (m)THPs that do not pay for themselves and
 * split them.  See Documentation/mm/thp_scan.rst.
 */
#ifndef _LINUX_THP_SCAN_H
#define _LINUX_THP_SCAN_H

#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/jump_label.h>
#include <linux/mm.h>

struct kobject;
struct list_head;
struct lruvec;
struct mem_cgroup;

/* What thp_scan decided for a folio (the thp_scan_decision tracepoint). */
enum thp_scan_decision {
	THP_SCAN_KEEP_USED,		/* not underused: kept whole */
	THP_SCAN_SPLIT_UNDERUSED,	/* mostly zero-filled: split */
	THP_SCAN_SPLIT_PARTIAL,		/* partially mapped: split */
	THP_SCAN_KEEP_UNMAPPED,		/* not mapped: left to be freed */
	THP_SCAN_KEEP_SKIPPED,		/* not judged: see thp_scan_folio() */
	THP_SCAN_KEEP_LOCKED,		/* locked by someone else: later */
	THP_SCAN_KEEP_NOT_PARTIAL,	/* flagged, but mapped whole: flag dropped */
	THP_SCAN_KEEP_BUSY,		/* rmap walk contended: later */
	THP_SCAN_KEEP_MLOCKED,		/* mlocked: a split would free nothing */
	THP_SCAN_KEEP_PINNED,		/* pinned: a split would fail */
	THP_SCAN_SPLIT_ZERO_RUNS,	/* used, zero-filled runs: split them off */
};

/* Why a VMA's fault limit changed (the thp_scan_fault_limit tracepoint). */
enum thp_fault_reason {
	THP_FAULT_UNDERUSED,		/* a folio found underused there */
	THP_FAULT_DENSE,		/* faults filled it densely */
	THP_FAULT_EXPIRED,		/* none found for fault_limit_secs */
};

/*
 * The orders thp_scan judges: the stamp (folio->_thp_scan_stamp) and
 * _deferred_list need a third page.
 */
#define THP_SCAN_MIN_ORDER	2
#define THP_SCAN_MAX_ORDER	MAX_PAGE_ORDER

#ifdef CONFIG_THP_SCAN
DECLARE_STATIC_KEY_TRUE(thp_scan_on);

/**
 * thp_scan_is_enabled - is thp_scan switched on?
 *
 * Return: the value of /sys/kernel/mm/transparent_hugepage/thp_scan/enabled.
 */
static inline bool thp_scan_is_enabled(void)
{
	return static_branch_likely(&thp_scan_on);
}

/* The lowest bit of folio->_thp_scan_stamp: thp_scan judged the folio. */
#define THP_SCAN_STAMP_KEPT	1UL

/* Stamp @folio with the time, and whether thp_scan judged it and kept it. */
static inline void thp_scan_stamp(struct folio *folio, bool kept)
{
	WRITE_ONCE(folio->_thp_scan_stamp, (jiffies & ~THP_SCAN_STAMP_KEPT) |
					   (kept ? THP_SCAN_STAMP_KEPT : 0));
}

void thp_scan_add_folio_off(struct folio *folio);

/**
 * thp_scan_add_folio - a new anon large folio got its first rmap
 * @folio: the folio, locked or exclusive to the caller
 *
 * Stamps @folio of order 2 or more, whatever made it (page fault,
 * khugepaged collapse, swap-in), as made now and not judged: kthpscand
 * finds it on the LRU once it is min_age_millisecs old.  Nothing is
 * queued, no lock taken and no counter moved: on the fault path of every
 * mTHP this is two loads (the order, jiffies), a store and the key's
 * branch, patched out with CONFIG_JUMP_LABEL.  With thp_scan
 * off, thp_scan_add_folio_off() queues what 6.12 queues: PMD-sized THPs.
 */
static inline void thp_scan_add_folio(struct folio *folio)
{
	if (folio_order(folio) < THP_SCAN_MIN_ORDER)
		return;
	thp_scan_stamp(folio, false);
	if (!thp_scan_is_enabled() && folio_test_pmd_mappable(folio))
		thp_scan_add_folio_off(folio);
}

int __init thp_scan_sysfs_init(struct kobject *hugepage_kobj);
void __init thp_scan_sysfs_exit(struct kobject *hugepage_kobj);
void __init thp_scan_init(void);
void __init thp_scan_stop(void);
void thp_scan_set_pressure(bool pressure);
void thp_scan_lruvec_init(struct lruvec *lruvec);
void thp_scan_lruvec_exit(struct lruvec *lruvec);
void thp_scan_memcg_released(struct mem_cgroup *memcg);
unsigned long thp_scan_count_objects(struct lruvec *lruvec);
unsigned long thp_scan_shrink(struct lruvec *lruvec, unsigned long nr_to_scan);
void thp_scan_queued(bool partial);
void thp_scan_new_folio(struct folio *folio);
void thp_scan_partial_queued(struct folio *folio);
void thp_scan_copy_stamp(struct folio *dst, struct folio *src);
void thp_scan_clear_partial(struct folio *folio);
void thp_scan_shrinker_mark(struct lruvec *lruvec);
unsigned int thp_scan_collapse_max_new(unsigned int max_ptes_none);
bool thp_scan_split_on_swapout(struct folio *folio, struct list_head *list,
			       unsigned int *nr_freed);

void thp_scan_swapout_freed_first(struct folio *folio);
void thp_scan_split_freed(struct page *page, unsigned int nr);
bool thp_scan_page_zero_filled(struct page *page);
void thp_scan_collapse_skipped(struct mm_struct *mm, unsigned int order);

/*
 * vma->thp_fault_state: the order the VMA's faults stay below (0: no
 * limit), and the underused verdicts not yet outweighed by dense faults.
 */
#define THP_FAULT_LIMIT_MASK	0x0fU
#define THP_FAULT_SCORE_SHIFT	4

unsigned long __thp_scan_fault_orders(struct vm_fault *vmf, pte_t *pte,
				      unsigned long orders);

/**
 * thp_scan_fault_limited - may thp_scan's verdicts limit faults in @vma?
 * @vma: an anonymous VMA
 *
 * Return: whether the VMA has a fault limit (mm/thp_scan.c, "Fault
 * feedback"): a test of one byte of the VMA, in the cache line of
 * vm_flags.
 */
static inline bool thp_scan_fault_limited(struct vm_area_struct *vma)
{
	return READ_ONCE(vma->thp_fault_state) & THP_FAULT_LIMIT_MASK;
}

/**
 * thp_scan_fault_orders - the orders a page fault may use in its VMA
 * @vmf: the fault, in an anonymous VMA
 * @pte: the page table of the fault's PMD range, mapped by the caller;
 *	NULL at a PMD fault
 * @orders: the orders the THP policy allows it (at a PMD fault, the PMD
 *	order alone; else the smaller ones that fit)
 *
 * Where thp_scan found the VMA's folios underused, its faults get only
 * the orders below a limit.
 *
 * Return: @orders without those the VMA's limit refuses.
 */
static inline unsigned long thp_scan_fault_orders(struct vm_fault *vmf,
						  pte_t *pte,
						  unsigned long orders)
{
	if (likely(!thp_scan_fault_limited(vmf->vma)))
		return orders;
	return __thp_scan_fault_orders(vmf, pte, orders);
}
#else
static inline int thp_scan_sysfs_init(struct kobject *hugepage_kobj)
{
	return 0;
}

static inline void thp_scan_sysfs_exit(struct kobject *hugepage_kobj)
{
}

static inline void thp_scan_init(void)
{
}

static inline void thp_scan_stop(void)
{
}

static inline void thp_scan_set_pressure(bool pressure)
{
}

static inline bool thp_scan_is_enabled(void)
{
	return false;
}

static inline void thp_scan_lruvec_init(struct lruvec *lruvec)
{
}

static inline void thp_scan_lruvec_exit(struct lruvec *lruvec)
{
}

static inline void thp_scan_memcg_released(struct mem_cgroup *memcg)
{
}

static inline void thp_scan_queued(bool partial)
{
}

static inline void thp_scan_add_folio(struct folio *folio)
{
}

static inline void thp_scan_new_folio(struct folio *folio)
{
}

static inline void thp_scan_partial_queued(struct folio *folio)
{
}

static inline void thp_scan_copy_stamp(struct folio *dst, struct folio *src)
{
}

static inline unsigned int thp_scan_collapse_max_new(unsigned int max_ptes_none)
{
	return max_ptes_none;
}

static inline bool thp_scan_page_zero_filled(struct page *page)
{
	return false;
}

static inline bool thp_scan_split_on_swapout(struct folio *folio,
					     struct list_head *list,
					     unsigned int *nr_freed)
{
	*nr_freed = 0;
	return false;
}

static inline void thp_scan_swapout_freed_first(struct folio *folio)
{
}

static inline void thp_scan_split_freed(struct page *page, unsigned int nr)
{
}

static inline void thp_scan_collapse_skipped(struct mm_struct *mm,
					     unsigned int order)
{
}

static inline bool thp_scan_fault_limited(struct vm_area_struct *vma)
{
	return false;
}

static inline unsigned long thp_scan_fault_orders(struct vm_fault *vmf,
						  pte_t *pte,
						  unsigned long orders)
{
	return orders;
}
#endif /* CONFIG_THP_SCAN */

#endif /* _LINUX_THP_SCAN_H */
