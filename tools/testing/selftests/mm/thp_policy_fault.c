// SPDX-License-Identifier: GPL-2.0
/*
 * The THP policies at page fault, globally and per size, with and without
 * MADV_HUGEPAGE: never, madvise, defer, auto (forced into each state) and
 * always; khugepaged collapsing under "defer"; "auto" under real memory
 * pressure; and bad values refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

#define THP	"/sys/kernel/mm/transparent_hugepage/"
#define AUTO	THP "auto/"
#define TRACE	"/sys/kernel/tracing/"
#define MTHP_KB	64

static unsigned long meminfo_kb(const char *key)
{
	char line[128];
	unsigned long v = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			sscanf(line + strlen(key), " %lu", &v);
	if (f)
		fclose(f);
	return v;
}

/* Wait up to @secs for /sys/.../auto/state to read @want. */
static bool wait_auto_state(const char *want, int secs)
{
	char buf[32];
	int i;

	for (i = 0; i < secs * 20; i++) {
		if (!get(AUTO "state", buf, sizeof(buf)) && !strncmp(buf, want, strlen(want)))
			return true;
		usleep(50000);
	}
	return false;
}

/* Thresholds that put "auto" into @state whatever memory looks like. */
static int force_auto(const char *state)
{
	int err = 0;

	err |= put(AUTO "interval_ms", "100");
	err |= put(AUTO "pressure_psi_pct", "0");
	if (!strcmp(state, "pressure")) {
		err |= put(AUTO "plentiful_available_pct", "100");
		err |= put(AUTO "pressure_available_pct", "99");
	} else {
		err |= put(AUTO "pressure_available_pct", "0");
		err |= put(AUTO "plentiful_available_pct", "1");
	}
	return err;
}

static const char * const auto_knobs[] = {
	"pressure_available_pct", "plentiful_available_pct",
	"pressure_psi_pct", "plentiful_psi_pct", "interval_ms",
};

struct saved_auto {
	char val[5][16];
};

static void save_auto(struct saved_auto *s)
{
	int i;

	for (i = 0; i < 5; i++) {
		char path[128];

		snprintf(path, sizeof(path), AUTO "%s", auto_knobs[i]);
		if (get(path, s->val[i], sizeof(s->val[i])))
			s->val[i][0] = '\0';
	}
}

/* Thresholds must keep their gaps at every step: loosen, then set. */
static void restore_auto(struct saved_auto *s)
{
	put(AUTO "pressure_available_pct", "0");
	put(AUTO "plentiful_available_pct", "100");
	put(AUTO "pressure_psi_pct", "0");
	put(AUTO "plentiful_psi_pct", s->val[3]);
	put(AUTO "pressure_psi_pct", s->val[2]);
	put(AUTO "pressure_available_pct", s->val[0]);
	put(AUTO "plentiful_available_pct", s->val[1]);
	put(AUTO "interval_ms", s->val[4]);
}

/* Map @len bytes aligned to @align; NULL on failure. */
static char *map_aligned(size_t len, size_t align, bool madv)
{
	char *raw = mmap(NULL, len + align, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)raw + align - 1) & ~(align - 1));
	if (madv && madvise(p, len, MADV_HUGEPAGE))
		return NULL;
	return p;
}

FIXTURE(policy) {
	struct saved_auto autos;
	size_t pmd;
};

struct policy_case {
	const char *policy;	/* as written; "auto" is forced into @state */
	const char *state;
	bool thp_plain;		/* THP expected without MADV_HUGEPAGE */
	bool thp_madv;		/* THP expected with MADV_HUGEPAGE */
};

FIXTURE_VARIANT(policy) {
	struct policy_case c;
};

FIXTURE_VARIANT_ADD(policy, never) {
	.c = { .policy = "never", .thp_plain = false, .thp_madv = false },
};

FIXTURE_VARIANT_ADD(policy, madvise) {
	.c = { .policy = "madvise", .thp_plain = false, .thp_madv = true },
};

FIXTURE_VARIANT_ADD(policy, defer) {
	.c = { .policy = "defer", .thp_plain = false, .thp_madv = true },
};

FIXTURE_VARIANT_ADD(policy, auto_plentiful) {
	.c = { .policy = "auto", .state = "plentiful", .thp_plain = true, .thp_madv = true },
};

FIXTURE_VARIANT_ADD(policy, auto_pressure) {
	.c = { .policy = "auto", .state = "pressure", .thp_plain = false, .thp_madv = true },
};

FIXTURE_VARIANT_ADD(policy, always) {
	.c = { .policy = "always", .thp_plain = true, .thp_madv = true },
};

FIXTURE_SETUP(policy)
{
	struct thp_settings s;
	int i;

	if (access(AUTO "state", F_OK))
		SKIP(return, "kernel without the auto THP policy");
	self->pmd = read_pmd_pagesize();
	thp_save_settings();
	save_auto(&self->autos);
	thp_read_settings(&s);
	/* No collapse behind the test's back: one byte per range is written. */
	s.khugepaged.max_ptes_none = 0;
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = THP_NEVER;
	s.thp_enabled = THP_NEVER;
	thp_push_settings(&s);
	if (variant->c.state)
		ASSERT_EQ(0, force_auto(variant->c.state));
}

FIXTURE_TEARDOWN(policy)
{
	if (access(AUTO "state", F_OK))
		return;
	put(THP "enabled", "never");
	restore_auto(&self->autos);
	thp_restore_settings();
}

/*
 * Set the policy under test for @kb-sized THPs, globally (the size
 * inherits) or for the size alone (global "never"), then write one byte
 * per THP-sized range, with and without MADV_HUGEPAGE, and check which
 * ranges got a THP.
 */
static void check_fault(struct __test_metadata *_metadata,
			const struct policy_case *c, size_t pmd,
			unsigned long kb, bool global)
{
	bool mthp = kb * 1024 != pmd;
	size_t sz = kb * 1024;
	const int nr = 4;
	char path[128];
	int madv;

	snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled", kb);
	if (access(path, F_OK))
		SKIP(return, "no %lu kB anon THP size", kb);
	ASSERT_EQ(0, put(THP "enabled", global ? c->policy : "never"));
	ASSERT_EQ(0, put(path, global ? "inherit" : c->policy));
	if (c->state)
		ASSERT_TRUE(wait_auto_state(c->state, 20));

	for (madv = 0; madv < 2; madv++) {
		bool want = madv ? c->thp_madv : c->thp_plain;
		char *p = map_aligned(nr * sz, pmd, madv);
		int i;

		ASSERT_NE(NULL, p);
		for (i = 0; i < nr; i++)
			p[i * sz] = (char)(i + 1);
		if (mthp) {
			/* An mTHP is mapped whole; a base page is not. */
			EXPECT_EQ((long)(want ? nr * kb : nr * (getpagesize() / 1024)),
				  smaps_kb(p, "Rss:"))
				TH_LOG("madvise=%d", madv);
		} else {
			EXPECT_TRUE(check_huge_anon(p, want ? nr : 0, pmd))
				TH_LOG("madvise=%d: want %d THPs", madv, want ? nr : 0);
		}
		for (i = 0; i < nr; i++)
			EXPECT_EQ((char)(i + 1), p[i * sz]);
		munmap(p, nr * sz);
	}
}

TEST_F(policy, fault_pmd_global)
{
	check_fault(_metadata, &variant->c, self->pmd, self->pmd / 1024, true);
}

TEST_F(policy, fault_pmd_size)
{
	check_fault(_metadata, &variant->c, self->pmd, self->pmd / 1024, false);
}

TEST_F(policy, fault_64k_global)
{
	check_fault(_metadata, &variant->c, self->pmd, MTHP_KB, true);
}

TEST_F(policy, fault_64k_size)
{
	check_fault(_metadata, &variant->c, self->pmd, MTHP_KB, false);
}

/* THPs of @size bytes allocated at page fault so far. */
static unsigned long fault_allocs(size_t size)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), THP "hugepages-%zukB/stats/anon_fault_alloc",
		 size / 1024);
	if (get(path, buf, sizeof(buf)))
		return ~0UL;
	return strtoul(buf, NULL, 10);
}

/* Global "defer", or per-size "defer" for the PMD size under "never". */
FIXTURE(defer) {
	size_t pmd;
};

FIXTURE_VARIANT(defer) {
	bool per_size;
};

FIXTURE_VARIANT_ADD(defer, global) { .per_size = false };
FIXTURE_VARIANT_ADD(defer, pmd_size_global_never) { .per_size = true };

FIXTURE_SETUP(defer)
{
	struct thp_settings s;
	char path[128];
	int i;

	if (access(AUTO "state", F_OK))
		SKIP(return, "kernel without the defer THP policy");
	self->pmd = read_pmd_pagesize();
	thp_save_settings();
	thp_read_settings(&s);
	s.thp_enabled = THP_NEVER;
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = THP_NEVER;
	/* khugepaged asleep until the test has checked the fault. */
	s.khugepaged.scan_sleep_millisecs = 600000;
	s.khugepaged.alloc_sleep_millisecs = 10;
	s.khugepaged.pages_to_scan = 4096;
	s.khugepaged.max_ptes_none = 511;
	thp_push_settings(&s);
	snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled", self->pmd / 1024);
	if (variant->per_size) {
		ASSERT_EQ(0, put(path, "defer"));
	} else {
		ASSERT_EQ(0, put(path, "inherit"));
		ASSERT_EQ(0, put(THP "enabled", "defer"));
	}
}

FIXTURE_TEARDOWN(defer)
{
	if (!access(AUTO "state", F_OK))
		thp_restore_settings();
}

/*
 * No THP at fault, then khugepaged collapses the written, non-madvised
 * range within a minute once it scans, and every byte reads back.
 */
TEST_F_TIMEOUT(defer, khugepaged_collapses, 180)
{
	const int nr = 2;
	size_t len = nr * self->pmd, i;
	char *p = map_aligned(len, self->pmd, false);
	unsigned long faults;
	int t;

	ASSERT_NE(NULL, p);
	/*
	 * khugepaged is woken when the mm is registered, at the first
	 * fault, and may collapse while the range is written: count THP
	 * faults rather than look at the mapping.
	 */
	faults = fault_allocs(self->pmd);
	for (i = 0; i < len; i++)
		p[i] = (char)(i * 7 + i / 4096);
	EXPECT_EQ(faults, fault_allocs(self->pmd));

	ASSERT_EQ(0, put(THP "khugepaged/scan_sleep_millisecs", "10"));
	for (t = 0; t < 600 && !check_huge_anon(p, nr, self->pmd); t++)
		usleep(100000);
	EXPECT_TRUE(check_huge_anon(p, nr, self->pmd))
		TH_LOG("not collapsed after %d s", t / 10);
	for (i = 0; i < len; i++)
		if (p[i] != (char)(i * 7 + i / 4096))
			break;
	EXPECT_EQ(len, i) TH_LOG("data differs at offset %zu", i);
}

/* Read the trace buffer: the thp_auto_state lines, in order. */
static int auto_trace(char *out, size_t len)
{
	char line[512];
	size_t n = 0;
	FILE *f = fopen(TRACE "trace", "r");

	if (!f)
		return -errno;
	out[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		char *st = strstr(line, "thp_auto_state: state=");

		if (st && n + 32 < len)
			n += snprintf(out + n, len - n, "%s,",
				      strncmp(st + 22, "pressure", 8) ?
				      "plentiful" : "pressure");
	}
	fclose(f);
	return 0;
}

FIXTURE(auto_pressure) {
	struct saved_auto autos;
	size_t pmd;
	char *hog;
	size_t hog_len;
};

FIXTURE_SETUP(auto_pressure)
{
	struct thp_settings s;
	char path[128];
	int i;

	if (access(AUTO "state", F_OK))
		SKIP(return, "kernel without the auto THP policy");
	if (access(TRACE "events/huge_memory/thp_auto_state/enable", F_OK))
		SKIP(return, "no tracefs at " TRACE);
	self->pmd = read_pmd_pagesize();
	thp_save_settings();
	save_auto(&self->autos);
	thp_read_settings(&s);
	s.thp_enabled = THP_NEVER;
	s.khugepaged.max_ptes_none = 0;
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = THP_NEVER;
	thp_push_settings(&s);
	snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled", self->pmd / 1024);
	ASSERT_EQ(0, put(path, "inherit"));
	ASSERT_EQ(0, put(TRACE "events/huge_memory/thp_auto_state/enable", "1"));
	ASSERT_EQ(0, clear_trace());
}

FIXTURE_TEARDOWN(auto_pressure)
{
	if (access(AUTO "state", F_OK))
		return;
	if (self->hog)
		munmap(self->hog, self->hog_len);
	put(TRACE "events/huge_memory/thp_auto_state/enable", "0");
	put(THP "enabled", "never");
	restore_auto(&self->autos);
	thp_restore_settings();
}

/* Does a fresh, written PMD range get a THP at fault? */
static bool fault_gives_thp(size_t pmd, bool madv)
{
	char *p = map_aligned(pmd, pmd, madv);
	bool huge;

	if (!p)
		return false;
	p[0] = 1;
	huge = check_huge_anon(p, 1, pmd);
	munmap(p, pmd);
	return huge;
}

/*
 * Real pressure: a process that takes memory until less is available
 * than pressure_available_pct puts "auto" into "pressure" (no THP at
 * fault without MADV_HUGEPAGE); freeing it brings "plentiful" back (THP
 * at fault again). Both changes fire thp_auto_state.
 */
TEST_F_TIMEOUT(auto_pressure, hog_and_release, 180)
{
	unsigned long total = meminfo_kb("MemTotal:"), avail = meminfo_kb("MemAvailable:");
	unsigned int avail_pct = avail * 100 / total, lo, hi;
	char buf[64], trace[256];

	ASSERT_GT(avail_pct, 40);
	/* Pressure below half of what is available now, plentiful 15 above. */
	lo = avail_pct / 2;
	hi = lo + 15;
	snprintf(buf, sizeof(buf), "%u", hi);
	ASSERT_EQ(0, put(AUTO "plentiful_available_pct", buf));
	snprintf(buf, sizeof(buf), "%u", lo);
	ASSERT_EQ(0, put(AUTO "pressure_available_pct", buf));
	ASSERT_EQ(0, put(AUTO "pressure_psi_pct", "0"));
	ASSERT_EQ(0, put(AUTO "interval_ms", "100"));
	ASSERT_EQ(0, put(THP "enabled", "auto"));
	ASSERT_TRUE(wait_auto_state("plentiful", 20));
	EXPECT_TRUE(fault_gives_thp(self->pmd, false));

	/* Leave (lo - 10)% of memory available. */
	self->hog_len = (avail - total * (lo - 10) / 100) * 1024;
	self->hog = mmap(NULL, self->hog_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->hog);
	madvise(self->hog, self->hog_len, MADV_NOHUGEPAGE);
	memset(self->hog, 0x5a, self->hog_len);
	ASSERT_TRUE(wait_auto_state("pressure", 20))
		TH_LOG("MemAvailable %lu kB of %lu kB", meminfo_kb("MemAvailable:"), total);
	EXPECT_FALSE(fault_gives_thp(self->pmd, false));
	EXPECT_TRUE(fault_gives_thp(self->pmd, true));

	munmap(self->hog, self->hog_len);
	self->hog = NULL;
	ASSERT_TRUE(wait_auto_state("plentiful", 20));
	EXPECT_TRUE(fault_gives_thp(self->pmd, false));

	ASSERT_EQ(0, auto_trace(trace, sizeof(trace)));
	EXPECT_STREQ("pressure,plentiful,", trace);
}

#define CG	"/sys/fs/cgroup/"
#define CG_T	CG "thp_policy_psi/"

FIXTURE(auto_psi) {
	struct saved_auto autos;
	pid_t child;
	bool swap_on;
};

FIXTURE_SETUP(auto_psi)
{
	if (access(AUTO "state", F_OK))
		SKIP(return, "kernel without the auto THP policy");
	if (access("/proc/pressure/memory", F_OK))
		SKIP(return, "no PSI");
	if (access("/sys/block/zram0/disksize", F_OK) || access(CG "cgroup.procs", F_OK))
		SKIP(return, "needs zram0 and cgroup2 at " CG);
	thp_save_settings();
	save_auto(&self->autos);
	ASSERT_EQ(0, put(TRACE "events/huge_memory/thp_auto_state/enable", "1"));
	ASSERT_EQ(0, clear_trace());
	/* Swap to zram, so that a memcg over its limit stalls, not dies. */
	ASSERT_EQ(0, put("/sys/block/zram0/disksize", "256M"));
	ASSERT_EQ(0, system("mkswap /dev/zram0 >/dev/null && swapon /dev/zram0"));
	self->swap_on = true;
	ASSERT_EQ(0, put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_T, 0755) || errno == EEXIST);
	ASSERT_EQ(0, put(CG_T "memory.max", "16M"));
}

FIXTURE_TEARDOWN(auto_psi)
{
	if (access(AUTO "state", F_OK) || access("/proc/pressure/memory", F_OK) ||
	    access("/sys/block/zram0/disksize", F_OK) || access(CG "cgroup.procs", F_OK))
		return;
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	rmdir(CG_T);
	if (self->swap_on)
		system("swapoff /dev/zram0");
	put("/sys/block/zram0/reset", "1");
	put(TRACE "events/huge_memory/thp_auto_state/enable", "0");
	put(THP "enabled", "never");
	restore_auto(&self->autos);
	thp_restore_settings();
}

/*
 * Real stall: a task that keeps touching 64 MiB in a memcg limited to
 * 16 MiB, swapping to zram, drives the PSI memory stall up and "auto"
 * into "pressure" with the available-memory signal switched off; once it
 * is gone the stall decays and "plentiful" comes back. The tracepoint
 * records the stall each change was decided on.
 */
TEST_F_TIMEOUT(auto_psi, memcg_thrash, 300)
{
	char line[512], pid[16];
	unsigned int psi = 0;
	FILE *f;

	ASSERT_EQ(0, put(AUTO "pressure_available_pct", "0"));
	ASSERT_EQ(0, put(AUTO "plentiful_available_pct", "1"));
	ASSERT_EQ(0, put(AUTO "pressure_psi_pct", "0"));
	ASSERT_EQ(0, put(AUTO "plentiful_psi_pct", "1"));
	ASSERT_EQ(0, put(AUTO "pressure_psi_pct", "5"));
	ASSERT_EQ(0, put(AUTO "interval_ms", "100"));
	ASSERT_EQ(0, put(THP "enabled", "auto"));
	ASSERT_TRUE(wait_auto_state("plentiful", 20));
	/* Only the changes decided on these thresholds. */
	ASSERT_EQ(0, clear_trace());

	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (!self->child) {
		size_t len = 64UL << 20, i;
		char *p;

		snprintf(pid, sizeof(pid), "%d", getpid());
		if (put(CG_T "cgroup.procs", pid))
			_exit(1);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(1);
		madvise(p, len, MADV_NOHUGEPAGE);
		for (;;)
			for (i = 0; i < len; i += getpagesize())
				p[i]++;
	}
	EXPECT_TRUE(wait_auto_state("pressure", 120));
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	self->child = 0;
	EXPECT_TRUE(wait_auto_state("plentiful", 150));

	f = fopen(TRACE "trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		char *st = strstr(line, "state=pressure ");

		if (st && !psi)
			sscanf(strstr(st, "psi_some_avg10_pct="),
			       "psi_some_avg10_pct=%u", &psi);
	}
	fclose(f);
	EXPECT_GE(psi, 5) TH_LOG("stall at the change to pressure: %u%%", psi);
	/* Hysteresis: one change each way, no flapping. */
	ASSERT_EQ(0, auto_trace(line, sizeof(line)));
	EXPECT_STREQ("pressure,plentiful,", line);
}

/* Bad values anywhere are -EINVAL and change nothing. */
TEST(bad_values)
{
	static const char * const bad_global[] = {
		"bogus", "inherit", "\n", "always madvise", "Auto", "defer1",
	};
	static const char * const bad_size[] = { "bogus", "\n", "defer auto", "AUTO" };
	char before[128], after[128], path[128];
	unsigned int i;

	if (access(AUTO "state", F_OK))
		SKIP(return, "kernel without the auto THP policy");
	ASSERT_EQ(0, get(THP "enabled", before, sizeof(before)));
	for (i = 0; i < ARRAY_SIZE(bad_global); i++) {
		EXPECT_EQ(-EINVAL, put(THP "enabled", bad_global[i]));
		ASSERT_EQ(0, get(THP "enabled", after, sizeof(after)));
		EXPECT_STREQ(before, after);
	}
	snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled",
		 (unsigned long)read_pmd_pagesize() / 1024);
	ASSERT_EQ(0, get(path, before, sizeof(before)));
	for (i = 0; i < ARRAY_SIZE(bad_size); i++) {
		EXPECT_EQ(-EINVAL, put(path, bad_size[i]));
		ASSERT_EQ(0, get(path, after, sizeof(after)));
		EXPECT_STREQ(before, after);
	}

	/* auto/: a pair without a gap, out of range, not a number. */
	ASSERT_EQ(0, get(AUTO "pressure_available_pct", before, sizeof(before)));
	EXPECT_EQ(-EINVAL, put(AUTO "pressure_available_pct", "100"));
	EXPECT_EQ(-EINVAL, put(AUTO "pressure_available_pct", "-1"));
	EXPECT_EQ(-EINVAL, put(AUTO "pressure_available_pct", "ten"));
	EXPECT_EQ(-EINVAL, put(AUTO "plentiful_available_pct", "101"));
	EXPECT_EQ(-EINVAL, put(AUTO "plentiful_available_pct", "0"));
	ASSERT_EQ(0, get(AUTO "pressure_available_pct", after, sizeof(after)));
	EXPECT_STREQ(before, after);
	EXPECT_EQ(-EINVAL, put(AUTO "plentiful_psi_pct", "100"));
	EXPECT_EQ(-EINVAL, put(AUTO "pressure_psi_pct", "101"));
	EXPECT_EQ(-EINVAL, put(AUTO "interval_ms", "99"));
	EXPECT_EQ(-EINVAL, put(AUTO "interval_ms", "60001"));
	EXPECT_EQ(-EACCES, put(AUTO "state", "pressure"));	/* read-only */
	ASSERT_EQ(0, get(AUTO "interval_ms", after, sizeof(after)));
	EXPECT_STREQ("1000\n", after);
}

TEST_HARNESS_MAIN
