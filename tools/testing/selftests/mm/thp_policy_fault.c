// SPDX-License-Identifier: GPL-2.0
/*
 * The THP policies at page fault, globally and per size, with and without
 * MADV_HUGEPAGE: never, madvise, defer, auto (forced into each state) and
 * always; khugepaged collapsing under "defer"; "auto" under real memory
 * pressure; and bad values refused.
 */
#include <errno.h>
#include <sched.h>
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

/* Wait up to @secs for auto/state to read @want. */
static bool wait_auto_state(const char *want, int secs)
{
	return POLL(ts_auto_state_is(want), secs);
}

/* Map @len bytes aligned to @align, MADV_HUGEPAGE if @madv; NULL on failure. */
static char *map_thp(size_t len, size_t align, bool madv)
{
	char *p = ts_map_aligned(len, align);

	if (!p || (madv && madvise(p, len, MADV_HUGEPAGE)))
		return NULL;
	return p;
}

FIXTURE(policy) {
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

	thp_scan_reset();
	if (access(AUTO "state", F_OK))
		SKIP(return, "kernel without the auto THP policy");
	self->pmd = read_pmd_pagesize();
	thp_read_settings(&s);
	/* No collapse behind the test's back: one byte per range is written. */
	s.khugepaged.max_ptes_none = 0;
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = THP_NEVER;
	s.thp_enabled = THP_NEVER;
	thp_write_settings(&s);
	if (variant->c.state)
		ASSERT_EQ(0, ts_force_auto(!strcmp(variant->c.state, "pressure")));
}

FIXTURE_TEARDOWN(policy)
{
	thp_scan_reset();
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
	ASSERT_EQ(0, ts_put(THP "enabled", global ? c->policy : "never"));
	ASSERT_EQ(0, ts_put(path, global ? "inherit" : c->policy));
	if (c->state)
		ASSERT_TRUE(wait_auto_state(c->state, 2));

	for (madv = 0; madv < 2; madv++) {
		bool want = madv ? c->thp_madv : c->thp_plain;
		char *p = map_thp(nr * sz, pmd, madv);
		int i;

		ASSERT_NE(NULL, p);
		for (i = 0; i < nr; i++)
			p[i * sz] = (char)(i + 1);
		if (mthp) {
			/* An mTHP is mapped whole; a base page is not. */
			EXPECT_EQ(want ? nr * kb : nr * (getpagesize() / 1024),
				  ts_smaps_kb(p, "Rss:"))
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

TEST_F_TIMEOUT(policy, fault_pmd_global, 120)
{
	check_fault(_metadata, &variant->c, self->pmd, self->pmd / 1024, true);
}

TEST_F_TIMEOUT(policy, fault_pmd_size, 120)
{
	check_fault(_metadata, &variant->c, self->pmd, self->pmd / 1024, false);
}

TEST_F_TIMEOUT(policy, fault_64k_global, 120)
{
	check_fault(_metadata, &variant->c, self->pmd, MTHP_KB, true);
}

TEST_F_TIMEOUT(policy, fault_64k_size, 120)
{
	check_fault(_metadata, &variant->c, self->pmd, MTHP_KB, false);
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

	thp_scan_reset();
	if (access(AUTO "state", F_OK))
		SKIP(return, "kernel without the defer THP policy");
	self->pmd = read_pmd_pagesize();
	thp_read_settings(&s);
	s.thp_enabled = THP_NEVER;
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = THP_NEVER;
	/* khugepaged asleep until the test has checked the fault. */
	s.khugepaged.scan_sleep_millisecs = 600000;
	s.khugepaged.alloc_sleep_millisecs = 10;
	s.khugepaged.pages_to_scan = 4096;
	s.khugepaged.max_ptes_none = 511;
	thp_write_settings(&s);
	snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled", self->pmd / 1024);
	if (variant->per_size) {
		ASSERT_EQ(0, ts_put(path, "defer"));
	} else {
		ASSERT_EQ(0, ts_put(path, "inherit"));
		ASSERT_EQ(0, ts_put(THP "enabled", "defer"));
	}
}

FIXTURE_TEARDOWN(defer)
{
	thp_scan_reset();
}

/*
 * No THP at fault, then khugepaged collapses the written, non-madvised
 * range once it scans, and every byte reads back.
 */
TEST_F_TIMEOUT(defer, khugepaged_collapses, 300)
{
	const int nr = 2;
	size_t len = nr * self->pmd, i;
	char *p = map_thp(len, self->pmd, false);
	const size_t psz = getpagesize();
	long bad, full0;

	ASSERT_NE(NULL, p);
	/*
	 * No THP at fault: the first page written in each range is a page
	 * of its own (khugepaged, woken when the mm is registered at the
	 * first fault, cannot have collapsed a range of one page; it may
	 * collapse while the rest is written).  Every page its own data
	 * (ts_pattern()): a page in another's place shows.
	 */
	for (i = 0; i < (size_t)nr; i++)
		ts_fill_page(p, i * (self->pmd / psz), psz);
	EXPECT_EQ(0, ts_smaps_kb(p, "AnonHugePages:"));
	EXPECT_EQ((long)(nr * psz / 1024), ts_smaps_kb(p, "Rss:"));
	for (i = 0; i < len / psz; i++)
		ts_fill_page(p, i, psz);

	ASSERT_EQ(0, ts_put(THP "khugepaged/scan_sleep_millisecs", "10"));
	/*
	 * khugepaged every 10 ms, 4096 pages at a time: collapsed on the
	 * pass that reaches the range (a collapse that failed, begun while
	 * the range was written, is tried again on the next): three full
	 * passes, within a minute of guest time.
	 */
	full0 = ts_get_long(THP "khugepaged/full_scans");
	POLL(check_huge_anon(p, nr, self->pmd) ||
	     ts_get_long(THP "khugepaged/full_scans") - full0 >= 3, 60);
	EXPECT_TRUE(check_huge_anon(p, nr, self->pmd))
		TH_LOG("not collapsed after %ld full passes",
		       ts_get_long(THP "khugepaged/full_scans") - full0);
	bad = ts_check_pages(p, len / psz, psz, ts_every_page, NULL);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
}

/*
 * Read the trace buffer: the changes of the system's "auto" state, in
 * order (those of memcgs, named by their inode number, are left out).
 */
static int auto_trace(char *out, size_t len)
{
	return ts_auto_states(0, 0, out, len);
}

FIXTURE(auto_pressure) {
	size_t pmd;
	char *hog;
	size_t hog_len;
};

FIXTURE_SETUP(auto_pressure)
{
	struct thp_settings s;
	char path[128];
	int i;

	thp_scan_reset();
	if (access(AUTO "state", F_OK))
		SKIP(return, "kernel without the auto THP policy");
	if (access(TRACE "events/huge_memory/thp_auto_state/enable", F_OK))
		SKIP(return, "no tracefs at " TRACE);
	self->pmd = read_pmd_pagesize();
	thp_read_settings(&s);
	s.thp_enabled = THP_NEVER;
	s.khugepaged.max_ptes_none = 0;
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = THP_NEVER;
	thp_write_settings(&s);
	snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled", self->pmd / 1024);
	ASSERT_EQ(0, ts_put(path, "inherit"));
	ASSERT_EQ(0, ts_put(TRACE "events/huge_memory/thp_auto_state/enable", "1"));
	ASSERT_EQ(0, ts_clear_trace());
}

FIXTURE_TEARDOWN(auto_pressure)
{
	if (self->hog)
		munmap(self->hog, self->hog_len);
	thp_scan_reset();
}

/* Does a fresh, written PMD range get a THP at fault?  Fails the test if it cannot be mapped. */
static bool fault_gives_thp(struct __test_metadata *_metadata, size_t pmd, bool madv)
{
	char *p = map_thp(pmd, pmd, madv);
	bool huge;

	ASSERT_NE(NULL, p) TH_LOG("mmap: %s", strerror(errno));
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
TEST_F_TIMEOUT(auto_pressure, hog_and_release, 120)
{
	unsigned long total = meminfo_kb("MemTotal:"), avail = meminfo_kb("MemAvailable:");
	unsigned int avail_pct, lo, hi;
	char buf[64], trace[256];

	ASSERT_GT(total, 0);
	avail_pct = avail * 100 / total;
	ASSERT_GT(avail_pct, 40);
	/* Pressure below half of what is available now, plentiful 15 above. */
	lo = avail_pct / 2;
	hi = lo + 15;
	snprintf(buf, sizeof(buf), "%u", hi);
	ASSERT_EQ(0, ts_put(AUTO "plentiful_available_pct", buf));
	snprintf(buf, sizeof(buf), "%u", lo);
	ASSERT_EQ(0, ts_put(AUTO "pressure_available_pct", buf));
	ASSERT_EQ(0, ts_put(AUTO "pressure_psi_pct", "0"));
	ASSERT_EQ(0, ts_put(AUTO "interval_ms", "100"));
	ASSERT_EQ(0, ts_put(THP "enabled", "auto"));
	ASSERT_TRUE(wait_auto_state("plentiful", 3));
	EXPECT_TRUE(fault_gives_thp(_metadata, self->pmd, false));

	/* Leave (lo - 10)% of memory available. */
	self->hog_len = (avail - total * (lo - 10) / 100) * 1024;
	self->hog = mmap(NULL, self->hog_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->hog);
	madvise(self->hog, self->hog_len, MADV_NOHUGEPAGE);
	memset(self->hog, 0x5a, self->hog_len);
	ASSERT_TRUE(wait_auto_state("pressure", 3))
		TH_LOG("MemAvailable %lu kB of %lu kB", meminfo_kb("MemAvailable:"), total);
	EXPECT_FALSE(fault_gives_thp(_metadata, self->pmd, false));
	EXPECT_TRUE(fault_gives_thp(_metadata, self->pmd, true));

	munmap(self->hog, self->hog_len);
	self->hog = NULL;
	ASSERT_TRUE(wait_auto_state("plentiful", 3));
	EXPECT_TRUE(fault_gives_thp(_metadata, self->pmd, false));

	ASSERT_EQ(0, auto_trace(trace, sizeof(trace)));
	EXPECT_STREQ("pressure,plentiful,", trace);
}

#define CG_T	CG "thp_policy_psi/"

FIXTURE(auto_psi) {
	pid_t child;
};

FIXTURE_SETUP(auto_psi)
{
	thp_scan_reset();
	if (access(AUTO "state", F_OK))
		SKIP(return, "kernel without the auto THP policy");
	if (access("/proc/pressure/memory", F_OK))
		SKIP(return, "no PSI");
	if (access(ZRAM "disksize", F_OK) || access(CG "cgroup.procs", F_OK))
		SKIP(return, "needs zram0 and cgroup2 at " CG);
	ASSERT_EQ(0, ts_put(TRACE "events/huge_memory/thp_auto_state/enable", "1"));
	ASSERT_EQ(0, ts_clear_trace());
	/* Swap to zram, so that a memcg over its limit stalls, not dies. */
	ASSERT_EQ(0, ts_put(ZRAM "disksize", "256M"));
	ASSERT_EQ(0, system("mkswap /dev/zram0 >/dev/null && swapon /dev/zram0"));
	ASSERT_EQ(0, ts_put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_T, 0755) || errno == EEXIST);
	ASSERT_EQ(0, ts_put(CG_T "memory.max", "16M"));
}

FIXTURE_TEARDOWN(auto_psi)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	/* The memcg, swap on zram0, the thresholds and the policy. */
	thp_scan_reset();
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
	struct auto_event e;
	unsigned int psi = 0;
	FILE *f;

	ASSERT_EQ(0, ts_put(AUTO "pressure_available_pct", "0"));
	ASSERT_EQ(0, ts_put(AUTO "plentiful_available_pct", "1"));
	ASSERT_EQ(0, ts_put(AUTO "pressure_psi_pct", "0"));
	ASSERT_EQ(0, ts_put(AUTO "plentiful_psi_pct", "1"));
	ASSERT_EQ(0, ts_put(AUTO "pressure_psi_pct", "5"));
	ASSERT_EQ(0, ts_put(AUTO "interval_ms", "100"));
	ASSERT_EQ(0, ts_put(THP "enabled", "auto"));
	ASSERT_TRUE(wait_auto_state("plentiful", 3));
	/* Only the changes decided on these thresholds. */
	ASSERT_EQ(0, ts_clear_trace());

	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (!self->child) {
		size_t len = 64UL << 20, i;
		char *p;

		snprintf(pid, sizeof(pid), "%d", getpid());
		if (ts_put(CG_T "cgroup.procs", pid))
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
	/* The 10 s average of a stall near 100 %: above 5 % within 20 s. */
	EXPECT_TRUE(wait_auto_state("pressure", 20));
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	self->child = 0;
	/* It falls by a fifth every 2 s: below 1 % within 40 s. */
	EXPECT_TRUE(wait_auto_state("plentiful", 40));

	f = fopen(TRACE "trace", "r");
	ASSERT_NE(NULL, f);
	/* The system's change to pressure; the memcg has its own. */
	while (fgets(line, sizeof(line), f))
		if (ts_parse_auto_event(line, &e) && !e.memcg && e.pressure && !psi)
			psi = e.psi_pct;
	fclose(f);
	EXPECT_GE(psi, 5) TH_LOG("stall at the change to pressure: %u%%", psi);
	/* Hysteresis: one change each way, no flapping. */
	ASSERT_EQ(0, auto_trace(line, sizeof(line)));
	EXPECT_STREQ("pressure,plentiful,", line);
}

/*
 * A policy switch never reads as "never" to a concurrent fault.  A child
 * switches the global policy, or one size's, round a cycle of policies
 * that each give a THP to the faults this process makes (with or without
 * MADV_HUGEPAGE), in a tight loop, all the while this process faults
 * THP-sized ranges one after another: 512 PMD-sized ones, or 32768 of
 * 16K, which cost little each, so that many faults meet a switch.  Every
 * fault must try a THP: it gets one, or falls back for want of memory
 * (counted); a fault that saw no policy, "never", does neither.
 */
FIXTURE(switch) {
	size_t size;		/* the THP size faulted */
	char knob[128];		/* the policy file switched */
	pid_t child;
	int *shared;		/* [0]: stop, [1]: switches done */
};

FIXTURE_VARIANT(switch) {
	bool per_size;		/* hugepages-<size>kB/enabled, else enabled */
	unsigned int kb;	/* that size (the only one on), 0: PMD */
	bool madv;		/* the faults are in an MADV_HUGEPAGE region */
	const char *cycle[6];	/* NULL-terminated */
};

FIXTURE_VARIANT_ADD(switch, global_madvise) {
	.madv = true, .cycle = { "always", "madvise", "defer", "auto" },
};

FIXTURE_VARIANT_ADD(switch, global_plain) {
	.cycle = { "always", "auto" },
};

FIXTURE_VARIANT_ADD(switch, global16k_madvise) {
	.kb = 16, .madv = true, .cycle = { "always", "madvise", "defer", "auto" },
};

FIXTURE_VARIANT_ADD(switch, global16k_plain) {
	.kb = 16, .cycle = { "always", "auto" },
};

FIXTURE_VARIANT_ADD(switch, pmd_size_madvise) {
	.per_size = true, .madv = true,
	.cycle = { "always", "inherit", "madvise", "defer", "auto" },
};

FIXTURE_VARIANT_ADD(switch, pmd_size_plain) {
	.per_size = true, .cycle = { "always", "inherit", "auto" },
};

FIXTURE_VARIANT_ADD(switch, size16k_madvise) {
	.per_size = true, .kb = 16, .madv = true,
	.cycle = { "always", "inherit", "madvise", "defer", "auto" },
};

FIXTURE_VARIANT_ADD(switch, size16k_plain) {
	.per_size = true, .kb = 16, .cycle = { "always", "inherit", "auto" },
};

FIXTURE_SETUP(switch)
{
	size_t pmd = read_pmd_pagesize();
	struct thp_settings s;
	char path[128];
	int i;

	thp_scan_reset();
	if (access(AUTO "state", F_OK))
		SKIP(return, "kernel without the auto THP policy");
	/*
	 * On one CPU the switcher runs between faults, never within one: the
	 * window it looks for does not open. Told that the guest has two
	 * (thpscan.cpus=, from qemu/boot.sh), fewer is a failure.
	 */
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		ASSERT_LT(ts_cmdline_long("thpscan.cpus="), 2)
			TH_LOG("thpscan.cpus=%ld, %ld CPUs online",
			       ts_cmdline_long("thpscan.cpus="),
			       sysconf(_SC_NPROCESSORS_ONLN));
		SKIP(return, "needs two CPUs");
	}
	self->size = variant->kb ? variant->kb * 1024 : pmd;
	snprintf(path, sizeof(path), THP "hugepages-%zukB/enabled", self->size / 1024);
	if (access(path, F_OK))
		SKIP(return, "no %zu kB anon THP size", self->size / 1024);
	snprintf(self->knob, sizeof(self->knob), "%s",
		 variant->per_size ? path : THP "enabled");
	thp_read_settings(&s);
	/* "inherit" gives THPs; compaction makes them at every fault. */
	s.thp_enabled = THP_ALWAYS;
	s.thp_defrag = THP_DEFRAG_ALWAYS;
	s.khugepaged.max_ptes_none = 0;
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = THP_NEVER;
	thp_write_settings(&s);
	ASSERT_EQ(0, ts_put(path, "inherit"));
	/* "auto" plentiful whatever memory looks like. */
	ASSERT_EQ(0, ts_force_auto(false));
	ASSERT_EQ(0, ts_put(self->knob, variant->cycle[0]));
	self->shared = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->shared);
	memset(self->shared, 0, getpagesize());
}

FIXTURE_TEARDOWN(switch)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	thp_scan_reset();
}

/* The switcher: round the cycle until told to stop; exits 1 if a write fails. */
static __noreturn void switcher(const char *knob, const char * const *cycle,
				int *shared)
{
	char stack[64 << 10];
	int n = 0, i;

	/*
	 * Fault its stack in now: the loop then makes no anon fault of its
	 * own, which would count in the fallback counters.
	 */
	memset(stack, 1, sizeof(stack));
	__asm__ __volatile__("" : : "r"(stack) : "memory");
	while (cycle[n])
		n++;
	for (i = 1; !__atomic_load_n(&shared[0], __ATOMIC_ACQUIRE); i++) {
		if (ts_put(knob, cycle[i % n]))
			_exit(1);
		__atomic_store_n(&shared[1], i, __ATOMIC_RELEASE);
	}
	_exit(0);
}

/* How many of the @nr ranges of @size bytes at @p have a THP. */
static long thps_in(char *p, int nr, size_t size, size_t pmd)
{
	long kb = size / 1024, psz_kb = getpagesize() / 1024, rss;

	if (size == pmd)
		return ts_smaps_kb(p, "AnonHugePages:") / kb;
	/* An mTHP is mapped whole, a fallback base page alone. */
	rss = ts_smaps_kb(p, "Rss:");
	return (rss - nr * psz_kb) / (kb - psz_kb);
}

/* Run on @cpu only (best effort: the test still counts without it). */
static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Has the switcher exited?  Its status in *@status. */
static bool switcher_done(pid_t pid, int *status)
{
	return waitpid(pid, status, WNOHANG) == pid;
}

TEST_F_TIMEOUT(switch, no_fault_sees_never, 150)
{
	size_t pmd = read_pmd_pagesize(), kb = self->size / 1024;
	long faults, thps = 0, fallbacks;
	int status = -1, first, during, i;
	/* 8 PMD-sized ranges a round, or 64 of 16K. */
	const int nr = self->size == pmd ? 8 : 64;
	const long nr_faults = self->size == pmd ? 512 : 32768;

	fallbacks = ts_must_stat(_metadata, kb, "anon_fault_fallback");
	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (!self->child) {
		pin_to_cpu(1);
		switcher(self->knob, variant->cycle, self->shared);
	}
	/* The faults on one CPU, the switches on another: they overlap. */
	pin_to_cpu(0);

	/* A first switch within 10 s: the faults below all run during switches. */
	ASSERT_TRUE(POLL(__atomic_load_n(&self->shared[1], __ATOMIC_ACQUIRE) > 0, 10));
	first = __atomic_load_n(&self->shared[1], __ATOMIC_ACQUIRE);
	for (faults = 0; faults < nr_faults; faults += nr) {
		char *p = map_thp(nr * self->size, self->size, variant->madv);

		ASSERT_NE(NULL, p);
		for (i = 0; i < nr; i++)
			p[i * self->size] = (char)(faults + i + 1);
		thps += thps_in(p, nr, self->size, pmd);
		for (i = 0; i < nr; i++) {
			ASSERT_EQ((char)(faults + i + 1), p[i * self->size]);
			ASSERT_TRUE(ts_is_zero(p + i * self->size + 1, self->size - 1));
		}
		munmap(p, nr * self->size);
	}
	during = __atomic_load_n(&self->shared[1], __ATOMIC_ACQUIRE) - first;
	__atomic_store_n(&self->shared[0], 1, __ATOMIC_RELEASE);
	/* It stops after the write in progress. */
	ASSERT_TRUE(POLL(switcher_done(self->child, &status), 10));
	self->child = 0;
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("a write to %s failed", self->knob);
	fallbacks = ts_must_stat(_metadata, kb, "anon_fault_fallback") - fallbacks;
	TH_LOG("%ld faults, %ld THPs, %d switches of %s meanwhile (%ld fallbacks in the system)",
	       faults, thps, during, self->knob, fallbacks);
	EXPECT_GT(during, 0);
	/*
	 * Every state of the cycle gives a THP at fault, and compaction
	 * makes one at every fault (defrag "always"): each of the test's
	 * own ranges has one (smaps).  A fault that saw "never" has none.
	 * anon_fault_fallback is system-wide: only logged, as a clue.
	 */
	EXPECT_EQ(faults, thps);
}

FIXTURE(bad) {
};

FIXTURE_SETUP(bad)
{
	thp_scan_reset();
}

FIXTURE_TEARDOWN(bad)
{
	thp_scan_reset();
}

/* Bad values anywhere are -EINVAL and change nothing. */
TEST_F_TIMEOUT(bad, values, 120)
{
	static const char * const bad_global[] = {
		"bogus", "inherit", "\n", "always madvise", "Auto", "defer1",
	};
	static const char * const bad_size[] = { "bogus", "\n", "defer auto", "AUTO" };
	char before[128], after[128], path[128];
	unsigned int i;

	if (access(AUTO "state", F_OK))
		SKIP(return, "kernel without the auto THP policy");
	ASSERT_EQ(0, ts_get(THP "enabled", before, sizeof(before)));
	for (i = 0; i < ARRAY_SIZE(bad_global); i++) {
		EXPECT_EQ(-EINVAL, ts_put(THP "enabled", bad_global[i]));
		ASSERT_EQ(0, ts_get(THP "enabled", after, sizeof(after)));
		EXPECT_STREQ(before, after);
	}
	snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled",
		 (unsigned long)read_pmd_pagesize() / 1024);
	ASSERT_EQ(0, ts_get(path, before, sizeof(before)));
	for (i = 0; i < ARRAY_SIZE(bad_size); i++) {
		EXPECT_EQ(-EINVAL, ts_put(path, bad_size[i]));
		ASSERT_EQ(0, ts_get(path, after, sizeof(after)));
		EXPECT_STREQ(before, after);
	}

	/* auto/: a pair without a gap, out of range, not a number. */
	ASSERT_EQ(0, ts_get(AUTO "pressure_available_pct", before, sizeof(before)));
	EXPECT_EQ(-EINVAL, ts_put(AUTO "pressure_available_pct", "100"));
	EXPECT_EQ(-EINVAL, ts_put(AUTO "pressure_available_pct", "-1"));
	EXPECT_EQ(-EINVAL, ts_put(AUTO "pressure_available_pct", "ten"));
	EXPECT_EQ(-EINVAL, ts_put(AUTO "plentiful_available_pct", "101"));
	EXPECT_EQ(-EINVAL, ts_put(AUTO "plentiful_available_pct", "0"));
	ASSERT_EQ(0, ts_get(AUTO "pressure_available_pct", after, sizeof(after)));
	EXPECT_STREQ(before, after);
	EXPECT_EQ(-EINVAL, ts_put(AUTO "plentiful_psi_pct", "100"));
	EXPECT_EQ(-EINVAL, ts_put(AUTO "pressure_psi_pct", "101"));
	EXPECT_EQ(-EINVAL, ts_put(AUTO "interval_ms", "99"));
	EXPECT_EQ(-EINVAL, ts_put(AUTO "interval_ms", "60001"));
	EXPECT_EQ(-EACCES, ts_put(AUTO "state", "pressure"));	/* read-only */
	ASSERT_EQ(0, ts_get(AUTO "interval_ms", after, sizeof(after)));
	EXPECT_STREQ("1000\n", after);
}

THP_SCAN_HARNESS_MAIN
