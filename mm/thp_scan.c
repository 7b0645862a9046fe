// SPDX-License-Identifier: GPL-2.0
/*
 * thp_scan: find anonymous (m)THPs that do not pay for themselves and
 * split them.
 *
 * This file holds the control interface, the directory
 * /sys/kernel/mm/transparent_hugepage/thp_scan/ next to khugepaged's, with
 * the "enabled" switch.  The queue and the scanner it controls build on it.
 */

#define pr_fmt(fmt) "thp_scan: " fmt

#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>
#include <linux/thp_scan.h>

/*
 * Whether the scanner may run.  On by default: underused THPs must be
 * recovered without an admin having to ask for it.  Written only through
 * sysfs; readers use READ_ONCE() and need no lock.
 */
static bool thp_scan_enabled __read_mostly = true;

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

static struct attribute *thp_scan_attrs[] = {
	&enabled_attr.attr,
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
