// SPDX-License-Identifier: GPL-2.0
/*
 * The THP behaviour the thp_scan tests build on: with enabled=always a
 * touched, PMD-aligned anonymous range is backed by a PMD THP at fault
 * (AnonHugePages in /proc/self/smaps), with enabled=never it is not, and
 * what was written reads back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

#define NR_HPAGES 4

FIXTURE(thp) {
	size_t pmd_size;
	char *mem;
};

FIXTURE_SETUP(thp)
{
	struct thp_settings settings;

	thp_scan_reset();
	if (access(THP "enabled", F_OK))
		SKIP(return, "no transparent_hugepage in sysfs");
	self->pmd_size = read_pmd_pagesize();
	ASSERT_NE(0, self->pmd_size);
	thp_read_settings(&settings);
	thp_push_settings(&settings);
	self->mem = ts_map_aligned(NR_HPAGES * self->pmd_size, self->pmd_size);
	ASSERT_NE(NULL, self->mem);
}

FIXTURE_TEARDOWN(thp)
{
	if (self->mem)
		munmap(self->mem, NR_HPAGES * self->pmd_size);
	thp_scan_reset();
}

/* Set the global policy, with the PMD size following it. */
static void set_enabled(size_t pmd_size, enum thp_enabled mode)
{
	struct thp_settings s = *thp_current_settings();

	s.thp_enabled = mode;
	s.hugepages[__builtin_ctzl(pmd_size / getpagesize())].enabled = THP_INHERIT;
	thp_push_settings(&s);
}

/* enabled=always: one byte written per PMD range gives a PMD THP each. */
TEST_F_TIMEOUT(thp, always_gives_pmd_thp, 120)
{
	int i;

	set_enabled(self->pmd_size, THP_ALWAYS);
	for (i = 0; i < NR_HPAGES; i++)
		self->mem[i * self->pmd_size] = (char)(i + 1);
	EXPECT_TRUE(check_huge_anon(self->mem, NR_HPAGES, self->pmd_size));
	for (i = 0; i < NR_HPAGES; i++) {
		char *thp = self->mem + i * self->pmd_size;

		EXPECT_EQ((char)(i + 1), thp[0]);
		/* The rest of each THP is zero-filled, every byte. */
		EXPECT_TRUE(ts_is_zero(thp + 1, self->pmd_size - 1));
	}
}

/* enabled=never: the same accesses give no THP at all. */
TEST_F_TIMEOUT(thp, never_gives_no_thp, 120)
{
	int i;

	set_enabled(self->pmd_size, THP_NEVER);
	for (i = 0; i < NR_HPAGES; i++)
		self->mem[i * self->pmd_size] = (char)(i + 1);
	EXPECT_TRUE(check_huge_anon(self->mem, 0, self->pmd_size));
	for (i = 0; i < NR_HPAGES; i++)
		EXPECT_EQ((char)(i + 1), self->mem[i * self->pmd_size]);
}

THP_SCAN_HARNESS_MAIN
