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

#define NR_HPAGES 4

/* Map @nr PMD-aligned, PMD-sized anonymous pages; NULL on failure. */
static char *map_aligned(size_t pmd_size, int nr, void **raw, size_t *raw_len)
{
	*raw_len = (nr + 1) * pmd_size;
	*raw = mmap(NULL, *raw_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*raw == MAP_FAILED)
		return NULL;
	return (char *)(((uintptr_t)*raw + pmd_size - 1) & ~(pmd_size - 1));
}

FIXTURE(thp) {
	size_t pmd_size;
	void *raw;
	size_t raw_len;
	char *mem;
};

FIXTURE_SETUP(thp)
{
	struct thp_settings settings;

	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK))
		SKIP(return, "no transparent_hugepage in sysfs");
	self->pmd_size = read_pmd_pagesize();
	ASSERT_NE(0, self->pmd_size);
	thp_save_settings();
	thp_read_settings(&settings);
	thp_push_settings(&settings);
	self->mem = map_aligned(self->pmd_size, NR_HPAGES, &self->raw, &self->raw_len);
	ASSERT_NE(NULL, self->mem);
}

FIXTURE_TEARDOWN(thp)
{
	if (self->raw)
		munmap(self->raw, self->raw_len);
	thp_restore_settings();
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
TEST_F(thp, always_gives_pmd_thp)
{
	int i;

	set_enabled(self->pmd_size, THP_ALWAYS);
	for (i = 0; i < NR_HPAGES; i++)
		self->mem[i * self->pmd_size] = (char)(i + 1);
	EXPECT_TRUE(check_huge_anon(self->mem, NR_HPAGES, self->pmd_size));
	for (i = 0; i < NR_HPAGES; i++)
		EXPECT_EQ((char)(i + 1), self->mem[i * self->pmd_size]);
	/* The rest of each THP is zero-filled. */
	EXPECT_EQ(0, self->mem[self->pmd_size - 1]);
}

/* enabled=never: the same accesses give no THP at all. */
TEST_F(thp, never_gives_no_thp)
{
	int i;

	set_enabled(self->pmd_size, THP_NEVER);
	for (i = 0; i < NR_HPAGES; i++)
		self->mem[i * self->pmd_size] = (char)(i + 1);
	EXPECT_TRUE(check_huge_anon(self->mem, 0, self->pmd_size));
	for (i = 0; i < NR_HPAGES; i++)
		EXPECT_EQ((char)(i + 1), self->mem[i * self->pmd_size]);
}

TEST_HARNESS_MAIN
