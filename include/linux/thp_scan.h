/* SPDX-License-Identifier: GPL-2.0 */
/*
 * thp_scan: find anonymous (m)THPs that do not pay for themselves and
 * split them.  See Documentation/admin-guide/mm/transhuge.rst.
 */
#ifndef _LINUX_THP_SCAN_H
#define _LINUX_THP_SCAN_H

#include <linux/init.h>

struct folio;
struct kobject;

/* What thp_scan decided for a folio (the thp_scan_decision tracepoint). */
enum thp_scan_decision {
	THP_SCAN_KEEP_USED,		/* not underused: kept whole */
	THP_SCAN_SPLIT_UNDERUSED,	/* mostly zero-filled: split */
	THP_SCAN_SPLIT_PARTIAL,		/* partially mapped: split */
};

#ifdef CONFIG_THP_SCAN
int __init thp_scan_sysfs_init(struct kobject *hugepage_kobj);
void __init thp_scan_sysfs_exit(struct kobject *hugepage_kobj);
void thp_scan_set_pressure(bool pressure);
bool thp_scan_is_enabled(void);
bool thp_scan_folio_underused(struct folio *folio);
void thp_scan_note_partial(struct folio *folio);
void thp_scan_note_split(unsigned long pfn, unsigned int order, bool underused,
			 int ret);
#else
static inline int thp_scan_sysfs_init(struct kobject *hugepage_kobj)
{
	return 0;
}

static inline void thp_scan_sysfs_exit(struct kobject *hugepage_kobj)
{
}

static inline void thp_scan_set_pressure(bool pressure)
{
}

static inline bool thp_scan_is_enabled(void)
{
	return false;
}

static inline bool thp_scan_folio_underused(struct folio *folio)
{
	return false;
}

static inline void thp_scan_note_partial(struct folio *folio)
{
}

static inline void thp_scan_note_split(unsigned long pfn, unsigned int order,
				       bool underused, int ret)
{
}
#endif /* CONFIG_THP_SCAN */

#endif /* _LINUX_THP_SCAN_H */
