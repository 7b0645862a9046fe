// SPDX-License-Identifier: GPL-2.0
/*
 * prctl(PR_SET_THP_DISABLE) with PR_THP_DISABLE_EXCEPT_ADVISED: under
 * "always", "auto" (plentiful and under pressure) and "defer", a process
 * gets THPs at fault in its MADV_HUGEPAGE ranges only, khugepaged
 * collapses those only, and MADV_COLLAPSE collapses any range (not after
 * the complete disable); a child inherits the setting and keeps it over
 * exec; PR_GET_THP_DISABLE returns 0, 1 or 3 and /proc/self/status
 * agrees; bad arguments get EINVAL and change nothing.  The same
 * constants as upstream's, so that systemd's MemoryTHP= works.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

#ifndef PR_THP_DISABLE_EXCEPT_ADVISED
#define PR_THP_DISABLE_EXCEPT_ADVISED	2	/* bit 1, as linux/prctl.h has it */
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

/* argv[1] of this program run again by exec: report and exit. */
#define REPORT_ARG	"--report-thp-disable"

static int set_thp_disable(unsigned long disable, unsigned long flags)
{
	return prctl(PR_SET_THP_DISABLE, disable, flags, 0, 0);
}

static int get_thp_disable(void)
{
	return prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
}

/* "THP_enabled:" of /proc/self/status (a tab follows); -1 if missing. */
static long thp_enabled_status(void)
{
	static const char key[] = "THP_enabled:";
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtol(line + strlen(key), NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/*
 * The program run again by exec: its PR_GET_THP_DISABLE, plus 16 if a
 * fresh range without MADV_HUGEPAGE got a THP at fault.
 */
static int report(void)
{
	int v = get_thp_disable();
	long thp = ts_fault_thps(read_pmd_pagesize(), 1, false);

	if (v < 0 || thp < 0)
		return 255;
	return v + (thp ? 16 : 0);
}

FIXTURE(prctl) {
	struct thp_sizes z;
};

struct prctl_case {
	const char *policy;	/* as written; "auto" is forced into @state */
	const char *state;
	bool thp_plain;		/* THP at fault without MADV_HUGEPAGE, no prctl */
};

FIXTURE_VARIANT(prctl) {
	struct prctl_case c;
};

FIXTURE_VARIANT_ADD(prctl, always) {
	.c = { .policy = "always", .thp_plain = true },
};

FIXTURE_VARIANT_ADD(prctl, auto_plentiful) {
	.c = { .policy = "auto", .state = "plentiful", .thp_plain = true },
};

FIXTURE_VARIANT_ADD(prctl, auto_pressure) {
	.c = { .policy = "auto", .state = "pressure", .thp_plain = false },
};

FIXTURE_VARIANT_ADD(prctl, defer) {
	.c = { .policy = "defer", .thp_plain = false },
};

FIXTURE_SETUP(prctl)
{
	struct thp_settings s;
	int i;

	thp_scan_reset();
	if (access(AUTO "state", F_OK))
		SKIP(return, "kernel without the auto THP policy");
	ASSERT_EQ(0, get_thp_disable());
	thp_sizes(&self->z);
	ASSERT_NE(0, self->z.pmd);
	thp_read_settings(&s);
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = THP_NEVER;
	s.hugepages[self->z.order_pmd].enabled = THP_INHERIT;
	/* No collapse behind the fault tests' back: one byte per range. */
	s.khugepaged.max_ptes_none = 0;
	thp_write_settings(&s);
	if (variant->c.state)
		ASSERT_EQ(0, ts_force_auto(!strcmp(variant->c.state, "pressure")));
	ASSERT_EQ(0, ts_put(THP "enabled", variant->c.policy));
	if (variant->c.state)
		ASSERT_TRUE(POLL(ts_auto_state_is(variant->c.state), 3));
}

FIXTURE_TEARDOWN(prctl)
{
	set_thp_disable(0, 0);
	thp_scan_reset();
}

/*
 * Faults without the prctl as the policy says; with
 * PR_THP_DISABLE_EXCEPT_ADVISED a THP in the MADV_HUGEPAGE ranges only;
 * with the prctl cleared, as the policy says again.
 */
TEST_F_TIMEOUT(prctl, fault_advised_only, 120)
{
	const long plain = variant->c.thp_plain ? 4 : 0;

	EXPECT_EQ(plain, ts_fault_thps(self->z.pmd, 4, false));
	EXPECT_EQ(4, ts_fault_thps(self->z.pmd, 4, true));

	ASSERT_EQ(0, set_thp_disable(1, PR_THP_DISABLE_EXCEPT_ADVISED));
	EXPECT_EQ(1 | PR_THP_DISABLE_EXCEPT_ADVISED, get_thp_disable());
	EXPECT_EQ(0, ts_fault_thps(self->z.pmd, 4, false));
	EXPECT_EQ(4, ts_fault_thps(self->z.pmd, 4, true));

	ASSERT_EQ(0, set_thp_disable(0, 0));
	EXPECT_EQ(0, get_thp_disable());
	EXPECT_EQ(plain, ts_fault_thps(self->z.pmd, 4, false));
}

/* Every page of @nr PMD-sized ranges at @p written, with its own data. */
static void fill(char *p, const struct thp_sizes *z, size_t nr)
{
	size_t i;

	for (i = 0; i < nr * z->per; i++)
		ts_fill_page(p, i, z->psz);
}

/*
 * With PR_THP_DISABLE_EXCEPT_ADVISED, two ranges written in base pages
 * (no THP at fault without MADV_HUGEPAGE), one then advised: khugepaged
 * collapses the advised one and, three full passes later, not the
 * other.  MADV_COLLAPSE collapses a third, unadvised range; after the
 * complete PR_SET_THP_DISABLE it fails on a fourth with EINVAL.  Every
 * byte reads back.
 */
TEST_F_TIMEOUT(prctl, collapse_advised_only, 300)
{
	const size_t pmd = self->z.pmd, per = self->z.per, psz = self->z.psz;
	char *plain = ts_map_aligned(pmd, pmd), *advised = ts_map_aligned(pmd, pmd);
	char *forced = ts_map_aligned(pmd, pmd), *off = ts_map_aligned(pmd, pmd);
	long full0, bad;

	ASSERT_TRUE(plain && advised && forced && off);
	ASSERT_EQ(0, set_thp_disable(1, PR_THP_DISABLE_EXCEPT_ADVISED));
	fill(plain, &self->z, 1);
	fill(advised, &self->z, 1);
	fill(forced, &self->z, 1);
	fill(off, &self->z, 1);
	EXPECT_EQ(0, ts_count_thps(plain, 1, pmd));
	EXPECT_EQ(0, ts_count_thps(advised, 1, pmd));
	ASSERT_EQ(0, madvise(advised, pmd, MADV_HUGEPAGE));

	ASSERT_EQ(0, ts_put(THP "khugepaged/max_ptes_none", "511"));
	ASSERT_EQ(0, ts_put(THP "khugepaged/scan_sleep_millisecs", "10"));
	full0 = ts_get_long(THP "khugepaged/full_scans");
	EXPECT_TRUE(POLL(ts_count_thps(advised, 1, pmd) == 1, 60))
		TH_LOG("advised range not collapsed after %ld full passes",
		       ts_get_long(THP "khugepaged/full_scans") - full0);
	full0 = ts_get_long(THP "khugepaged/full_scans");
	EXPECT_TRUE(POLL(ts_get_long(THP "khugepaged/full_scans") - full0 >= 3, 60));
	EXPECT_EQ(0, ts_count_thps(plain, 1, pmd));

	EXPECT_EQ(0, madvise(forced, pmd, MADV_COLLAPSE)) TH_LOG("MADV_COLLAPSE: %m");
	EXPECT_EQ(1, ts_count_thps(forced, 1, pmd));
	ASSERT_EQ(0, set_thp_disable(1, 0));
	EXPECT_EQ(-1, madvise(off, pmd, MADV_COLLAPSE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ts_count_thps(off, 1, pmd));

	bad = ts_check_pages(plain, per, psz, ts_every_page, NULL);
	EXPECT_EQ(-1, bad) TH_LOG("plain page %ld differs", bad);
	bad = ts_check_pages(advised, per, psz, ts_every_page, NULL);
	EXPECT_EQ(-1, bad) TH_LOG("advised page %ld differs", bad);
	bad = ts_check_pages(forced, per, psz, ts_every_page, NULL);
	EXPECT_EQ(-1, bad) TH_LOG("collapsed page %ld differs", bad);
	bad = ts_check_pages(off, per, psz, ts_every_page, NULL);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
}

/*
 * A child of a process with PR_THP_DISABLE_EXCEPT_ADVISED has it: its
 * PR_GET_THP_DISABLE is 3 and its faults get THPs in MADV_HUGEPAGE
 * ranges only; it keeps it over exec (this program run again reports).
 */
TEST_F_TIMEOUT(prctl, inherited_over_fork_and_exec, 120)
{
	int status;
	pid_t pid;

	ASSERT_EQ(0, set_thp_disable(1, PR_THP_DISABLE_EXCEPT_ADVISED));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		if (get_thp_disable() != (1 | PR_THP_DISABLE_EXCEPT_ADVISED))
			_exit(1);
		if (ts_fault_thps(self->z.pmd, 2, false) != 0)
			_exit(2);
		if (ts_fault_thps(self->z.pmd, 2, true) != 2)
			_exit(3);
		execl("/proc/self/exe", "thp_policy_prctl", REPORT_ARG, (char *)NULL);
		_exit(4);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	/* 3: the flag kept over exec, with no THP at fault there. */
	EXPECT_EQ(1 | PR_THP_DISABLE_EXCEPT_ADVISED, WEXITSTATUS(status))
		TH_LOG("1-3: the child before exec, 4: exec failed, 16+: a THP after exec");
}

/*
 * PR_GET_THP_DISABLE and THP_enabled of /proc/self/status in each state;
 * every bad call fails with EINVAL and changes nothing, from either
 * state.
 */
TEST(values_and_bad_args)
{
	static const unsigned long bad[][4] = {
		/* arg2, arg3, arg4, arg5 of PR_SET_THP_DISABLE */
		{ 1, 1 << 2, 0, 0 },
		{ 1, PR_THP_DISABLE_EXCEPT_ADVISED | 1, 0, 0 },
		{ 0, PR_THP_DISABLE_EXCEPT_ADVISED, 0, 0 },
		{ 1, PR_THP_DISABLE_EXCEPT_ADVISED, 1, 0 },
		{ 1, 0, 0, 1 },
	};
	static const int states[] = { 0, 1 | PR_THP_DISABLE_EXCEPT_ADVISED };
	size_t i, s;

	ASSERT_EQ(0, get_thp_disable());
	EXPECT_EQ(1, thp_enabled_status());
	ASSERT_EQ(0, set_thp_disable(1, 0));
	EXPECT_EQ(1, get_thp_disable());
	EXPECT_EQ(0, thp_enabled_status());
	ASSERT_EQ(0, set_thp_disable(1, PR_THP_DISABLE_EXCEPT_ADVISED));
	EXPECT_EQ(1 | PR_THP_DISABLE_EXCEPT_ADVISED, get_thp_disable());
	EXPECT_EQ(1, thp_enabled_status());
	/* Any other value than 0 disables, as in 6.12. */
	ASSERT_EQ(0, set_thp_disable(2, 0));
	EXPECT_EQ(1, get_thp_disable());
	ASSERT_EQ(0, set_thp_disable(0, 0));
	EXPECT_EQ(0, get_thp_disable());
	EXPECT_EQ(1, thp_enabled_status());

	for (s = 0; s < ARRAY_SIZE(states); s++) {
		ASSERT_EQ(0, set_thp_disable(!!states[s], states[s] & ~1));
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			errno = 0;
			EXPECT_EQ(-1, prctl(PR_SET_THP_DISABLE, bad[i][0], bad[i][1],
					    bad[i][2], bad[i][3]))
				TH_LOG("call %zu accepted", i);
			EXPECT_EQ(EINVAL, errno);
			EXPECT_EQ(states[s], get_thp_disable()) TH_LOG("after call %zu", i);
		}
		errno = 0;
		EXPECT_EQ(-1, prctl(PR_GET_THP_DISABLE, 1, 0, 0, 0));
		EXPECT_EQ(EINVAL, errno);
	}
	ASSERT_EQ(0, set_thp_disable(0, 0));
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], REPORT_ARG))
		return report();
	thp_scan_main(argc, argv);
}
