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

#ifdef CONFIG_THP_SCAN
int __init thp_scan_sysfs_init(struct kobject *hugepage_kobj);
void __init thp_scan_sysfs_exit(struct kobject *hugepage_kobj);
void thp_scan_set_pressure(bool pressure);
bool thp_scan_is_enabled(void);
bool thp_scan_folio_underused(struct folio *folio);
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
#endif /* CONFIG_THP_SCAN */

#endif /* _LINUX_THP_SCAN_H */
