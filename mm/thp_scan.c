// SPDX-License-Identifier: GPL-2.0
/*
 * thp_scan: find anonymous (m)THPs that do not pay for themselves and
 * split them.
 *
 * This file holds the control interface, the directory
 * /sys/kernel/mm/transparent_hugepage/thp_scan/ next to khugepaged's, and
 * the utilization scan that judges whether a large folio is underused: more
 * than underused_zero_pct percent of its subpages zero-filled, whatever its
 * order.  The deferred split shrinker asks it (thp_underused()); the queue
 * and the scanner build on it.
 */

#define pr_fmt(fmt) "thp_scan: " fmt

#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/sysfs.h>
#include <linux/thp_scan.h>

#include "internal.h"

#define CREATE_TRACE_POINTS
#include <trace/events/thp_scan.h>

/*
 * Whether the scanner may run.  On by default: underused THPs must be
 * recovered without an admin having to ask for it.  Written only through
 * sysfs; readers use READ_ONCE() and need no lock.
 */
static bool thp_scan_enabled __read_mostly = true;

/*
 * A large folio is underused when more than this percentage of its
 * subpages are zero-filled (100: never).  One knob for every order: the
 * limit in subpages is derived per folio by thp_scan_max_zero().
 */
static unsigned int thp_scan_underused_zero_pct __read_mostly = 90;

/*
 * Set while the "auto" THP policy sees memory under pressure
 * (mm/thp_auto.c): the scanner is to work harder then. The hook for the
 * scanner; nothing reads it before the scanner exists.
 */
static bool thp_scan_pressure;

/**
 * thp_scan_set_pressure - tell thp_scan whether memory is under pressure
 * @pressure: true while the "auto" THP policy behaves like "defer"
 */
void thp_scan_set_pressure(bool pressure)
{
	WRITE_ONCE(thp_scan_pressure, pressure);
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
 * among them.
 */
static bool thp_scan_zero_scan(struct folio *folio, unsigned int max_zero,
			       unsigned int *scanned, unsigned int *nr_zero)
{
	unsigned int nr = folio_nr_pages(folio);
	unsigned int zero = 0, filled = 0, i;
	bool underused = false;

	for (i = 0; i < nr; i++) {
		if (pages_identical(folio_page(folio, i), ZERO_PAGE(0))) {
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

/**
 * thp_scan_folio_underused - is a large anon folio mostly zero-filled?
 * @folio: the folio, which the caller holds a reference on
 *
 * Return: true if more than underused_zero_pct percent of the subpages of
 * @folio are zero-filled, so that splitting it (which maps zero subpages
 * to the shared zeropage) frees most of it.
 */
bool thp_scan_folio_underused(struct folio *folio)
{
	unsigned int pct = READ_ONCE(thp_scan_underused_zero_pct);
	unsigned int nr = folio_nr_pages(folio), scanned, zero;
	bool underused;

	underused = thp_scan_zero_scan(folio, thp_scan_max_zero(nr, pct),
				       &scanned, &zero);
	trace_thp_scan_decision(folio_pfn(folio), folio_order(folio), zero,
				scanned, thp_scan_mapped(folio),
				underused ? THP_SCAN_SPLIT_UNDERUSED :
					    THP_SCAN_KEEP_USED);
	return underused;
}

/**
 * thp_scan_note_partial - trace the split of a partially mapped folio
 * @folio: the folio, which the caller holds a reference on
 */
void thp_scan_note_partial(struct folio *folio)
{
	trace_thp_scan_decision(folio_pfn(folio), folio_order(folio), 0, 0,
				thp_scan_mapped(folio), THP_SCAN_SPLIT_PARTIAL);
}

/**
 * thp_scan_note_split - trace the result of a split thp_scan decided on
 * @pfn: the first pfn of the folio
 * @order: its order before the split
 * @underused: split as underused (else as partially mapped)
 * @ret: what the split returned: 0, or a negative errno
 */
void thp_scan_note_split(unsigned long pfn, unsigned int order, bool underused,
			 int ret)
{
	trace_thp_scan_split(pfn, order, underused ? THP_SCAN_SPLIT_UNDERUSED :
			     THP_SCAN_SPLIT_PARTIAL, ret);
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
	return count;
}

static struct kobj_attribute enabled_attr = __ATTR_RW(enabled);

static ssize_t underused_zero_pct_show(struct kobject *kobj,
				       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(thp_scan_underused_zero_pct));
}

static ssize_t underused_zero_pct_store(struct kobject *kobj,
					struct kobj_attribute *attr,
					const char *buf, size_t count)
{
	unsigned int val;

	if (kstrtouint(buf, 10, &val) || val > 100)
		return -EINVAL;
	WRITE_ONCE(thp_scan_underused_zero_pct, val);
	return count;
}

static struct kobj_attribute underused_zero_pct_attr =
	__ATTR_RW(underused_zero_pct);

static struct attribute *thp_scan_attrs[] = {
	&enabled_attr.attr,
	&underused_zero_pct_attr.attr,
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
