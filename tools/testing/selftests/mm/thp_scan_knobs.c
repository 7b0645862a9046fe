// SPDX-License-Identifier: GPL-2.0
/*
 * The knobs in /sys/kernel/mm/transparent_hugepage/thp_scan/: each reads
 * back what was written, and a bad value fails with EINVAL and leaves the
 * setting as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

#define THP_SCAN_DIR THP_SCAN

/* Read knob @name into @buf; returns 0 or -errno. */
static int knob_read(const char *name, char *buf, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), THP_SCAN "%s", name);
	return ts_get(path, buf, len);
}

/* Write @val to knob @name in one write(); returns 0 or -errno. */
static int knob_write(const char *name, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), THP_SCAN "%s", name);
	return ts_put(path, val);
}

FIXTURE(thp_scan_knob) {
	char saved[64];
};

FIXTURE_SETUP(thp_scan_knob)
{
	thp_scan_reset();
	if (access(THP_SCAN_DIR, F_OK))
		SKIP(return, "no " THP_SCAN_DIR " (CONFIG_THP_SCAN=n?)");
	ASSERT_EQ(0, knob_read("enabled", self->saved, sizeof(self->saved)));
}

FIXTURE_TEARDOWN(thp_scan_knob)
{
	if (self->saved[0])
		EXPECT_EQ(0, knob_write("enabled", self->saved));
	thp_scan_reset();
}

/* The directory holds "enabled", a root-writable, world-readable file. */
TEST_F_TIMEOUT(thp_scan_knob, enabled_mode, 120)
{
	struct stat st;

	ASSERT_EQ(0, stat(THP_SCAN_DIR "enabled", &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(0644, st.st_mode & 07777);
	EXPECT_TRUE(!strcmp(self->saved, "0\n") || !strcmp(self->saved, "1\n"));
}

/* 0 and 1 read back as written. */
TEST_F_TIMEOUT(thp_scan_knob, enabled_round_trip, 120)
{
	char buf[64];

	ASSERT_EQ(0, knob_write("enabled", "0"));
	ASSERT_EQ(0, knob_read("enabled", buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
	ASSERT_EQ(0, knob_write("enabled", "1\n"));
	ASSERT_EQ(0, knob_read("enabled", buf, sizeof(buf)));
	EXPECT_STREQ("1\n", buf);
	ASSERT_EQ(0, knob_write("enabled", "0\n"));
	ASSERT_EQ(0, knob_read("enabled", buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
}

/* Anything else is EINVAL, from either setting, and changes nothing. */
TEST_F_TIMEOUT(thp_scan_knob, enabled_rejects_bad_values, 120)
{
	static const char * const bad[] = {
		"2", "-1", "10", "yes", "on", "y", "\n", "0x1", "1 1", "1x",
		" 1", "never", "4294967297",
	};
	static const char * const start[] = { "0", "1" };
	char buf[64], want[8];
	unsigned int i, s;

	for (s = 0; s < 2; s++) {
		ASSERT_EQ(0, knob_write("enabled", start[s]));
		snprintf(want, sizeof(want), "%s\n", start[s]);
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			EXPECT_EQ(-EINVAL, knob_write("enabled", bad[i]))
				TH_LOG("writing \"%s\"", bad[i]);
			ASSERT_EQ(0, knob_read("enabled", buf, sizeof(buf)));
			EXPECT_STREQ(want, buf)
				TH_LOG("after writing \"%s\"", bad[i]);
		}
	}
}

/* underused_zero_pct: 0..100 read back; anything else changes nothing. */
TEST_F_TIMEOUT(thp_scan_knob, underused_zero_pct, 120)
{
	static const char * const bad[] = { "101", "-1", "1000", "x", "\n", "50%", "0x10" };
	char saved[64], buf[64];
	unsigned int i;

	ASSERT_EQ(0, knob_read("underused_zero_pct", saved, sizeof(saved)));
	ASSERT_EQ(0, knob_write("underused_zero_pct", "100"));
	ASSERT_EQ(0, knob_read("underused_zero_pct", buf, sizeof(buf)));
	EXPECT_STREQ("100\n", buf);
	ASSERT_EQ(0, knob_write("underused_zero_pct", "0\n"));
	ASSERT_EQ(0, knob_read("underused_zero_pct", buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
	ASSERT_EQ(0, knob_write("underused_zero_pct", "75"));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, knob_write("underused_zero_pct", bad[i]))
			TH_LOG("writing \"%s\"", bad[i]);
		ASSERT_EQ(0, knob_read("underused_zero_pct", buf, sizeof(buf)));
		EXPECT_STREQ("75\n", buf);
	}
	EXPECT_EQ(0, knob_write("underused_zero_pct", saved));
}

/* The scanner's unsigned knobs: each its range, as documented. */
FIXTURE(uint_knob) {
	char saved[64];
};

FIXTURE_VARIANT(uint_knob) {
	const char *name;
	const char *min, *max, *below, *above, *dflt;
};

FIXTURE_VARIANT_ADD(uint_knob, pages_to_scan) {
	.name = "pages_to_scan", .min = "1", .max = "16777216",
	.below = "0", .above = "16777217", .dflt = "8192",
};

FIXTURE_VARIANT_ADD(uint_knob, scan_sleep_millisecs) {
	.name = "scan_sleep_millisecs", .min = "0", .max = "86400000",
	.above = "86400001", .dflt = "1000",
};

FIXTURE_VARIANT_ADD(uint_knob, min_age_millisecs) {
	.name = "min_age_millisecs", .min = "0", .max = "86400000",
	.above = "86400001", .dflt = "10000",
};

FIXTURE_VARIANT_ADD(uint_knob, split_keep_dense) {
	.name = "split_keep_dense", .min = "0", .max = "1",
	.above = "2", .dflt = "1",
};

FIXTURE_VARIANT_ADD(uint_knob, split_dense_min_free_pct) {
	.name = "split_dense_min_free_pct", .min = "1", .max = "100",
	.below = "0", .above = "101", .dflt = "50",
};

FIXTURE_SETUP(uint_knob)
{
	thp_scan_reset();
	if (access(THP_SCAN_DIR "min_age_millisecs", F_OK))
		SKIP(return, "no thp_scan scanner knobs");
}

FIXTURE_TEARDOWN(uint_knob)
{
	if (self->saved[0])
		EXPECT_EQ(0, knob_write(variant->name, self->saved));
	thp_scan_reset();
}

TEST_F_TIMEOUT(uint_knob, range, 120)
{
	static const char * const bad[] = { "-1", "x", "\n", "1k", "0x10", "1 1", "4294967296" };
	char *saved = self->saved, buf[64], want[32];
	unsigned int i;

	ASSERT_EQ(0, knob_read(variant->name, saved, sizeof(self->saved)));
	snprintf(want, sizeof(want), "%s\n", variant->dflt);
	EXPECT_STREQ(want, saved) TH_LOG("the default");
	ASSERT_EQ(0, knob_write(variant->name, variant->min));
	ASSERT_EQ(0, knob_read(variant->name, buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%s\n", variant->min);
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, knob_write(variant->name, variant->max));
	ASSERT_EQ(0, knob_read(variant->name, buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%s\n", variant->max);
	EXPECT_STREQ(want, buf);
	if (variant->below)
		EXPECT_EQ(-EINVAL, knob_write(variant->name, variant->below));
	EXPECT_EQ(-EINVAL, knob_write(variant->name, variant->above));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *b = bad[i];

		EXPECT_EQ(-EINVAL, knob_write(variant->name, b))
			TH_LOG("writing \"%s\"", b);
	}
	ASSERT_EQ(0, knob_read(variant->name, buf, sizeof(buf)));
	EXPECT_STREQ(want, buf) TH_LOG("after the bad writes");
}

/*
 * cpu_time_ms is read-only, a number.  That it grows while kthpscand
 * works and stays while it sleeps: thp_scan_split, thp_scan_disabled.
 */
TEST_F_TIMEOUT(thp_scan_knob, cpu_time_ms, 120)
{
	struct stat st;
	char buf[64], *end;

	ASSERT_EQ(0, stat(THP_SCAN_DIR "cpu_time_ms", &st));
	EXPECT_EQ(0444, st.st_mode & 07777);
	ASSERT_EQ(0, knob_read("cpu_time_ms", buf, sizeof(buf)));
	strtoul(buf, &end, 10);
	EXPECT_STREQ("\n", end);
	EXPECT_EQ(-EACCES, knob_write("cpu_time_ms", "0"));
}

/* Count @key in @seen if it is one of the @nr @names: its index, or -1. */
static int name_index(const char * const *names, unsigned int nr, const char *key,
		      int *seen)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (!strcmp(key, names[i])) {
			seen[i]++;
			return i;
		}
	return -1;
}

/*
 * The counters' names (Documentation/mm/thp_scan.rst, "Counters"):
 * /proc/vmstat has nine thp_split_scan_* events, each once, and beside
 * them only khugepaged's own thp_scan_* ones.
 */
TEST_F_TIMEOUT(thp_scan_knob, vmstat_events, 120)
{
	static const char * const vm[] = {
		"thp_split_scan_scanned", "thp_split_scan_pages_scanned",
		"thp_split_scan_partial", "thp_split_scan_underused",
		"thp_split_scan_failed", "thp_split_scan_rounds",
		"thp_split_scan_swapout", "thp_split_scan_swapout_freed",
		"thp_split_scan_zero_runs",
	};
	static const char * const khugepaged[] = {
		"thp_scan_exceed_none_pte", "thp_scan_exceed_swap_pte",
		"thp_scan_exceed_share_pte",
	};
	int seen_vm[ARRAY_SIZE(vm)] = { 0 }, seen_k[ARRAY_SIZE(khugepaged)] = { 0 };
	int other = 0, n;
	char line[256], key[128];
	unsigned int i;
	FILE *f = fopen("/proc/vmstat", "r");

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s", key) != 1)
			continue;
		if (!strncmp(key, "thp_split_scan_", 15))
			n = name_index(vm, ARRAY_SIZE(vm), key, seen_vm);
		else if (!strncmp(key, "thp_scan_", 9))
			n = name_index(khugepaged, ARRAY_SIZE(khugepaged), key, seen_k);
		else
			continue;
		if (n < 0) {
			TH_LOG("unexpected /proc/vmstat event %s", key);
			other++;
		}
	}
	fclose(f);
	EXPECT_EQ(0, other);
	/* Each once; a name missing is logged by its index in the tables. */
	for (i = 0; i < ARRAY_SIZE(vm); i++)
		EXPECT_EQ(1, seen_vm[i]) TH_LOG("thp_split_scan_* event %u (vm[])", i);
	for (i = 0; i < ARRAY_SIZE(khugepaged); i++)
		EXPECT_EQ(1, seen_k[i]) TH_LOG("khugepaged's event %u (khugepaged[])", i);
}

/*
 * Every anonymous THP size, orders 2 to PMD (order 1 is the page
 * cache's), has the fourteen per-size thp_split_scan_* stats, read-only.
 */
TEST_F_TIMEOUT(thp_scan_knob, size_stats, 120)
{
	static const char * const per_size[] = {
		"scanned", "partial", "underused", "failed", "collapse_skipped",
		"not_partial", "keep_mlocked", "keep_pinned", "keep_busy",
		"to_mthp", "swapout", "swapout_unmapped", "zero_runs", "dense_kept",
	};
	unsigned long psz = getpagesize(), pmd = read_pmd_pagesize(), kb;
	char path[512];
	unsigned int i;
	struct stat st;
	int order, sizes = 0;

	for (order = 2; (psz << order) <= pmd; order++) {
		kb = (psz << order) >> 10;
		snprintf(path, sizeof(path), THP "hugepages-%lukB", kb);
		if (access(path, F_OK))
			continue;
		sizes++;
		for (i = 0; i < ARRAY_SIZE(per_size); i++) {
			snprintf(path, sizeof(path), THP "hugepages-%lukB/stats/thp_split_scan_%s",
				 kb, per_size[i]);
			ASSERT_EQ(0, stat(path, &st)) TH_LOG("no %s", path);
			EXPECT_EQ(0444, st.st_mode & 07777) TH_LOG("%s", path);
		}
	}
	EXPECT_LE(1, sizes);
}

THP_SCAN_HARNESS_MAIN
