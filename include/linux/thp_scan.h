/* SPDX-License-Identifier: GPL-2.0 */
/*
 * thp_scan: find anonymous (m)THPs that do not pay for themselves and
 * split them.  See Documentation/mm/thp_scan.rst.
 */
#ifndef _LINUX_THP_SCAN_H
#define _LINUX_THP_SCAN_H

#include <linux/init.h>

struct folio;
struct kobject;
struct list_head;
struct lruvec;
struct page;

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
};

/*
 * The orders thp_scan judges: the stamp (folio->_thp_scan_stamp) and
 * _deferred_list need a third page.
 */
#define THP_SCAN_MIN_ORDER	2
#define THP_SCAN_MAX_ORDER	MAX_PAGE_ORDER

#ifdef CONFIG_THP_SCAN
int __init thp_scan_sysfs_init(struct kobject *hugepage_kobj);
void __init thp_scan_sysfs_exit(struct kobject *hugepage_kobj);
void __init thp_scan_init(void);
void __init thp_scan_stop(void);
void thp_scan_set_pressure(bool pressure);
bool thp_scan_is_enabled(void);
void thp_scan_lruvec_init(struct lruvec *lruvec);
void thp_scan_lruvec_exit(struct lruvec *lruvec);
unsigned long thp_scan_count_objects(struct lruvec *lruvec);
unsigned long thp_scan_shrink(struct lruvec *lruvec, unsigned long nr_to_scan);
void thp_scan_queued(bool partial);
void thp_scan_add_folio(struct folio *folio);
void thp_scan_new_folio(struct folio *folio);
void thp_scan_partial_queued(struct folio *folio);
void thp_scan_copy_stamp(struct folio *dst, struct folio *src);
void thp_scan_clear_partial(struct folio *folio);
void thp_scan_shrinker_mark(struct lruvec *lruvec);
unsigned int thp_scan_collapse_max_new(unsigned int max_ptes_none);
bool thp_scan_split_on_swapout(struct folio *folio, struct list_head *list,
			       unsigned int *nr_freed);
bool thp_scan_page_zero_filled(struct page *page);
void thp_scan_collapse_skipped(unsigned int order);
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

static inline void thp_scan_collapse_skipped(unsigned int order)
{
}
#endif /* CONFIG_THP_SCAN */

#endif /* _LINUX_THP_SCAN_H */
