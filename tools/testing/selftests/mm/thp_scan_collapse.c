// SPDX-License-Identifier: GPL-2.0
/*
 * khugepaged and thp_scan agree: with thp_scan on, khugepaged collapses an
 * anonymous range only if it adds little new memory (none PTEs, zero-page
 * PTEs and zero-filled pages count as new; thp_scan/collapse_max_new_pct),
 * well below the share of zero-filled memory at which thp_scan splits a
 * THP. So a program that gave memory back keeps its small footprint under
 * a khugepaged at its fastest, ranges full of data are still collapsed,
 * and where "auto" is under pressure only fully populated ranges are.
 * Every byte of user data is checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

#define THP "/sys/kernel/mm/transparent_hugepage/"
#define THP_SCAN THP "thp_scan/"
#define KHUGEPAGED THP "khugepaged/"
#define AUTO THP "auto/"
#define CG "/sys/fs/cgroup/"
#define CG_T CG "thp_scan_collapse/"
/* Bounds of the waits below, in seconds of guest time. */
#define WAIT_SECS 120

/* The knobs a test may change, restored by the teardown. */
static const char * const saved_knobs[] = {
	THP_SCAN "enabled", THP_SCAN "collapse_max_new_pct",
	THP_SCAN "underused_zero_pct", THP_SCAN "min_age_millisecs",
	AUTO "interval_ms", AUTO "pressure_psi_pct",
	AUTO "pressure_available_pct", AUTO "plentiful_available_pct",
};

#define NR_SAVED ARRAY_SIZE(saved_knobs)

#define VMSTAT(key) counter(_metadata, "/proc/vmstat", key)
#define FILE_NUM(path) counter(_metadata, path, NULL)

static long pmd_stat(struct __test_metadata *_metadata, unsigned long pmd_kb,
		     const char *name)
{
	char path[160];

	snprintf(path, sizeof(path), THP "hugepages-%lukB/stats/%s", pmd_kb, name);
	return counter(_metadata, path, NULL);
}

/* The byte every data page @pg is filled with: never zero. */
static unsigned char page_byte(size_t pg)
{
	return (unsigned char)(pg * 7 + 1) | 1;
}

/*
 * What a page holds in the patterns below: its byte, or zero (never
 * written, MADV_DONTNEED'ed, or written and zeroed again).
 */
typedef bool (*page_has_data)(size_t pg, size_t per);

static void fill(char *p, size_t nr_pages, size_t psz, size_t per,
		 page_has_data data)
{
	size_t pg;

	for (pg = 0; pg < nr_pages; pg++)
		if (data(pg, per))
			memset(p + pg * psz, page_byte(pg), psz);
}

/* Every byte of @nr_pages pages: the first page that differs, or -1. */
static long check(const char *p, size_t nr_pages, size_t psz, size_t per,
		  page_has_data data)
{
	char *want = malloc(psz);
	long bad = -1;
	size_t pg;

	if (!want)
		return 0;
	for (pg = 0; pg < nr_pages && bad < 0; pg++) {
		memset(want, data(pg, per) ? page_byte(pg) : 0, psz);
		if (memcmp(p + pg * psz, want, psz))
			bad = pg;
	}
	free(want);
	return bad;
}

/* 20 % of each THP kept, in 16 KiB pieces spread over all of it. */
#define PIECE (16UL << 10)
static size_t piece_pages;

static bool jemalloc_kept(size_t pg, size_t per)
{
	return (pg % per) / piece_pages % 5 == 0;
}

/* 95 % of each range written with data, the rest never touched. */
static bool dense_95(size_t pg, size_t per)
{
	return pg % per < per - per / 20;
}

/* Half of each range written with data. */
static bool half(size_t pg, size_t per)
{
	return pg % per < per / 2;
}

/* One page of data per range. */
static bool one_page(size_t pg, size_t per)
{
	return pg % per == 7;
}

/* All but 5 pages of each range written with data. */
static bool all_but_5(size_t pg, size_t per)
{
	return pg % per >= 5;
}

static bool every(size_t pg, size_t per)
{
	return true;
}

#define KPF_COMPOUND_HEAD	15
#define KPF_COMPOUND_TAIL	16
#define KPF_THP			22

/* The /proc/kpageflags word of the page mapped at @addr; 0 if none. */
static uint64_t page_flags(int pagemap, int kpageflags, char *addr)
{
	unsigned long pfn = pagemap_get_pfn(pagemap, addr);
	uint64_t flags = 0;

	if (pfn == -1UL ||
	    pread(kpageflags, &flags, sizeof(flags), pfn * sizeof(flags)) != sizeof(flags))
		return 0;
	return flags;
}

/*
 * How many of the @nr PMD ranges at @p are one PMD-sized THP each (head
 * at the start, tails up to the end, physically contiguous); -1 if
 * pagemap or kpageflags cannot be read.
 */
static long thps(char *p, size_t nr, size_t pmd)
{
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	int kpageflags = open("/proc/kpageflags", O_RDONLY);
	size_t psz = getpagesize(), i;
	long n = -1;

	if (pagemap >= 0 && kpageflags >= 0) {
		for (n = 0, i = 0; i < nr; i++) {
			char *a = p + i * pmd, *z = a + pmd - psz;
			uint64_t fa = page_flags(pagemap, kpageflags, a);
			uint64_t fz = page_flags(pagemap, kpageflags, z);

			if ((fa & (1ULL << KPF_THP)) && (fa & (1ULL << KPF_COMPOUND_HEAD)) &&
			    (fz & (1ULL << KPF_THP)) && (fz & (1ULL << KPF_COMPOUND_TAIL)) &&
			    pagemap_get_pfn(pagemap, z) ==
			    pagemap_get_pfn(pagemap, a) + pmd / psz - 1)
				n++;
		}
	}
	if (pagemap >= 0)
		close(pagemap);
	if (kpageflags >= 0)
		close(kpageflags);
	return n;
}

FIXTURE(collapse) {
	char saved[NR_SAVED][32];
	size_t psz, pmd, per;
	unsigned long pmd_kb;
	int order_pmd;
};

/* A fast khugepaged, as the issue asks: it passes over all of memory often. */
static void fast_khugepaged(struct thp_settings *s, size_t per)
{
	s->khugepaged.max_ptes_none = per - 1;
	s->khugepaged.scan_sleep_millisecs = 10;
	s->khugepaged.alloc_sleep_millisecs = 10;
	s->khugepaged.pages_to_scan = per * 256;
}

FIXTURE_SETUP(collapse)
{
	struct thp_settings s;
	char pid[16];
	unsigned int i;

	ASSERT_EQ(0, access(THP_SCAN "collapse_max_new_pct", F_OK))
		TH_LOG("kernel without thp_scan's collapse limit");
	ASSERT_EQ(0, access(CG "cgroup.procs", F_OK));
	self->psz = getpagesize();
	self->pmd = read_pmd_pagesize();
	ASSERT_NE(0, self->pmd);
	self->per = self->pmd / self->psz;
	self->pmd_kb = self->pmd >> 10;
	self->order_pmd = __builtin_ctzl(self->per);
	piece_pages = self->psz < PIECE ? PIECE / self->psz : 1;
	for (i = 0; i < NR_SAVED; i++) {
		const char *knob = saved_knobs[i];

		ASSERT_EQ(0, get(knob, self->saved[i], sizeof(self->saved[i])))
			TH_LOG("cannot read %s", knob);
	}
	/* The defaults, as documented: the tests rely on them. */
	EXPECT_STREQ("1\n", self->saved[0]);
	EXPECT_STREQ("12\n", self->saved[1]);
	EXPECT_STREQ("90\n", self->saved[2]);

	thp_save_settings();
	thp_read_settings(&s);
	s.thp_enabled = THP_NEVER;
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = THP_NEVER;
	s.hugepages[self->order_pmd].enabled = THP_INHERIT;
	fast_khugepaged(&s, self->per);
	thp_push_settings(&s);

	ASSERT_EQ(0, put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_T, 0755) || errno == EEXIST);
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, put(CG_T "cgroup.procs", pid));
}

FIXTURE_TEARDOWN(collapse)
{
	char pid[16];
	int i;

	snprintf(pid, sizeof(pid), "%d", getpid());
	put(CG "cgroup.procs", pid);
	/* The auto thresholds keep their gaps at every step: loosen first. */
	put(AUTO "pressure_available_pct", "0");
	put(AUTO "plentiful_available_pct", "100");
	for (i = NR_SAVED - 1; i >= 0; i--)
		put(saved_knobs[i], self->saved[i]);
	thp_restore_settings();
}

/* Set the global THP policy; the PMD size inherits it. */
static int set_policy(const char *policy)
{
	return put(THP "enabled", policy);
}

/*
 * Poll counter @key of @path (a file of its own if @key is NULL) every
 * 100 ms until it has grown by @n from @from, for WAIT_SECS at most.
 * Returns the seconds waited.
 */
static int wait_counter(struct __test_metadata *_metadata, const char *path,
			const char *key, long from, long n)
{
	int t;

	for (t = 0; t < WAIT_SECS * 10; t++) {
		long v = counter(_metadata, path, key);

		if (v < 0 || v - from >= n)
			break;
		usleep(100000);
	}
	return t / 10;
}

/* Wait until khugepaged has made @n more full passes than @from. */
#define wait_full_scans(_metadata, from, n) \
	wait_counter(_metadata, KHUGEPAGED "full_scans", NULL, from, n)
#define wait_vmstat(_metadata, key, from, n) \
	wait_counter(_metadata, "/proc/vmstat", key, from, n)

/*
 * The jemalloc pattern (128 MiB of THPs filled, then 80 % of it given back
 * with MADV_DONTNEED in 16 KiB pieces spread over every THP), first under
 * "never", then under "always" with khugepaged at its fastest and the
 * default max_ptes_none of 511: kthpscand splits the partially mapped
 * THPs, and over several full khugepaged passes the memcg footprint stays
 * within 1.2x of "never" (6.12, and this series without the collapse
 * limit, went back to 4.4x with redis): khugepaged looks at every range
 * and collapses none of them.
 */
TEST_F_TIMEOUT(collapse, jemalloc_pattern, 420)
{
	const size_t len = 128UL << 20, nr = len / self->pmd, pages = len / self->psz;
	long mem_never, mem_max = 0, mem, coll0, skip0, full0, split0, bad;
	char path[160];
	size_t pg;
	int pass, t;
	char *p;

	ASSERT_EQ(0, set_policy("never"));
	p = anon_aligned(len, self->pmd);
	ASSERT_NE(NULL, p);
	fill(p, pages, self->psz, self->per, every);
	for (pg = 0; pg < pages; pg += piece_pages)
		if (!jemalloc_kept(pg, self->per))
			ASSERT_EQ(0, madvise(p + pg * self->psz, PIECE, MADV_DONTNEED));
	mem_never = FILE_NUM(CG_T "memory.current");
	ASSERT_GT(mem_never, 0);
	bad = check(p, pages, self->psz, self->per, jemalloc_kept);
	EXPECT_EQ(-1, bad) TH_LOG("never: page %ld differs", bad);
	ASSERT_EQ(0, munmap(p, len));

	ASSERT_EQ(0, set_policy("always"));
	split0 = pmd_stat(_metadata, self->pmd_kb, "thp_scan_split_partial");
	p = anon_aligned(len, self->pmd);
	ASSERT_NE(NULL, p);
	fill(p, pages, self->psz, self->per, every);
	ASSERT_EQ(nr, thps(p, nr, self->pmd));
	for (pg = 0; pg < pages; pg += piece_pages)
		if (!jemalloc_kept(pg, self->per))
			ASSERT_EQ(0, madvise(p + pg * self->psz, PIECE, MADV_DONTNEED));
	mem = FILE_NUM(CG_T "memory.current");
	ksft_print_msg("never: %ld kB; always, right after the frees: %ld kB\n",
		       mem_never >> 10, mem >> 10);

	/* kthpscand splits them as partially mapped: no minimum age. */
	snprintf(path, sizeof(path), THP "hugepages-%lukB/stats/thp_scan_split_partial",
		 self->pmd_kb);
	t = wait_counter(_metadata, path, NULL, split0, nr);
	ASSERT_EQ(nr, pmd_stat(_metadata, self->pmd_kb, "thp_scan_split_partial") - split0)
		TH_LOG("after %d s", t);
	/*
	 * Still in use: read every byte.  That also makes the PTEs young
	 * again where the split left them old (arm64 without hardware
	 * access flags), as khugepaged wants referenced pages.
	 */
	bad = check(p, pages, self->psz, self->per, jemalloc_kept);
	EXPECT_EQ(-1, bad) TH_LOG("after the split: page %ld differs", bad);

	coll0 = VMSTAT("thp_collapse_alloc");
	skip0 = VMSTAT("thp_scan_collapse_skipped");
	full0 = FILE_NUM(KHUGEPAGED "full_scans");
	for (pass = 0; pass < 4; pass++) {
		t = wait_full_scans(_metadata, full0, pass + 1);
		mem = FILE_NUM(CG_T "memory.current");
		mem_max = mem > mem_max ? mem : mem_max;
		ksft_print_msg("khugepaged pass %d (%d s): %ld kB, %.2fx never\n",
			       pass + 1, t, mem >> 10, (double)mem / mem_never);
	}
	ASSERT_GE(FILE_NUM(KHUGEPAGED "full_scans") - full0, 4);
	EXPECT_LE(mem_max * 10, mem_never * 12)
		TH_LOG("footprint %ld kB against %ld kB under never", mem_max >> 10,
		       mem_never >> 10);
	EXPECT_EQ(coll0, VMSTAT("thp_collapse_alloc"));
	EXPECT_EQ(0, thps(p, nr, self->pmd));
	/* Every range was looked at, and left alone for this reason. */
	EXPECT_GE(VMSTAT("thp_scan_collapse_skipped") - skip0, (long)(3 * nr));
	bad = check(p, pages, self->psz, self->per, jemalloc_kept);
	EXPECT_EQ(-1, bad) TH_LOG("always: page %ld differs", bad);
	munmap(p, len);
}

/*
 * Under "defer" (no THP at fault, khugepaged collapses): ranges with 95 %
 * of their pages written with data are still collapsed, and queued for
 * thp_scan as they are made.
 */
TEST_F_TIMEOUT(collapse, dense_ranges_collapsed, 180)
{
	const size_t nr = 4, pages = nr * self->per;
	long coll0, queued0, fault0, bad;
	char *p;
	int t;

	ASSERT_EQ(0, set_policy("defer"));
	coll0 = VMSTAT("thp_collapse_alloc");
	fault0 = VMSTAT("thp_fault_alloc");
	queued0 = pmd_stat(_metadata, self->pmd_kb, "thp_scan_queued");
	p = anon_aligned(nr * self->pmd, self->pmd);
	ASSERT_NE(NULL, p);
	fill(p, pages, self->psz, self->per, dense_95);
	/* No THP at fault (khugepaged may be at work already). */
	EXPECT_EQ(fault0, VMSTAT("thp_fault_alloc"));
	t = wait_vmstat(_metadata, "thp_collapse_alloc", coll0, nr);
	EXPECT_EQ(nr, VMSTAT("thp_collapse_alloc") - coll0) TH_LOG("after %d s", t);
	EXPECT_EQ(nr, thps(p, nr, self->pmd));
	EXPECT_EQ(nr, pmd_stat(_metadata, self->pmd_kb, "thp_scan_queued") - queued0);
	bad = check(p, pages, self->psz, self->per, dense_95);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * self->pmd);
}

/*
 * Ranges with @data pages under "defer" are not collapsed over several
 * full khugepaged passes, and each pass counts them as skipped for the
 * collapse limit; with thp_scan off, khugepaged is 6.12's again
 * (max_ptes_none 511) and collapses them.
 */
static void not_collapsed(struct __test_metadata *_metadata,
			  struct _test_data_collapse *self,
			  page_has_data data, bool zero_again)
{
	const size_t nr = 4, pages = nr * self->per;
	long coll0, skip0, full0, bad;
	size_t pg;
	char *p;
	int t;

	ASSERT_EQ(0, set_policy("defer"));
	p = anon_aligned(nr * self->pmd, self->pmd);
	ASSERT_NE(NULL, p);
	if (zero_again) {
		/*
		 * Every page present, the ones without data zero-filled:
		 * writing zeroes faults in a page of its own.  Never fully
		 * populated with data, not even for a moment.
		 */
		fill(p, pages, self->psz, self->per, data);
		for (pg = 0; pg < pages; pg++)
			if (!data(pg, self->per))
				memset(p + pg * self->psz, 0, self->psz);
		EXPECT_EQ((long)(nr * self->pmd_kb), smaps_kb(p, "Rss:"));
	} else {
		fill(p, pages, self->psz, self->per, data);
	}
	coll0 = VMSTAT("thp_collapse_alloc");
	skip0 = pmd_stat(_metadata, self->pmd_kb, "thp_scan_collapse_skipped");
	full0 = FILE_NUM(KHUGEPAGED "full_scans");
	t = wait_full_scans(_metadata, full0, 3);
	ASSERT_GE(FILE_NUM(KHUGEPAGED "full_scans") - full0, 3) TH_LOG("after %d s", t);
	EXPECT_EQ(coll0, VMSTAT("thp_collapse_alloc"));
	EXPECT_EQ(0, thps(p, nr, self->pmd));
	EXPECT_GE(pmd_stat(_metadata, self->pmd_kb, "thp_scan_collapse_skipped") - skip0,
		  (long)(2 * nr));

	/* thp_scan off: 6.12's khugepaged, which collapses them. */
	ASSERT_EQ(0, put(THP_SCAN "enabled", "0"));
	t = wait_vmstat(_metadata, "thp_collapse_alloc", coll0, nr);
	EXPECT_EQ(nr, VMSTAT("thp_collapse_alloc") - coll0) TH_LOG("after %d s", t);
	EXPECT_EQ(nr, thps(p, nr, self->pmd));
	ASSERT_EQ(0, put(THP_SCAN "enabled", "1"));
	bad = check(p, pages, self->psz, self->per, data);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * self->pmd);
}

/* Half of each range never touched: too much new memory. */
TEST_F_TIMEOUT(collapse, half_populated_not_collapsed, 300)
{
	not_collapsed(_metadata, self, half, false);
}

/*
 * Every page present but half of them zero-filled (written, then zeroed):
 * khugepaged would copy those zeroes into the THP, and counts them as new.
 */
TEST_F_TIMEOUT(collapse, zero_filled_count_as_new, 300)
{
	not_collapsed(_metadata, self, half, true);
}

/*
 * Sparse THPs split by kthpscand stay split under a fast khugepaged at
 * max_ptes_none 511: it looks at each range again and does not collapse
 * what kthpscand would only split again.
 */
TEST_F_TIMEOUT(collapse, no_recollapse, 300)
{
	const size_t nr = 8, pages = nr * self->per;
	long split0, coll0, skip0, full0, bad;
	char path[160], *p;
	int t;

	ASSERT_EQ(0, set_policy("always"));
	/* Only the minimum age is shortened; the logic is the same. */
	ASSERT_EQ(0, put(THP_SCAN "min_age_millisecs", "2000"));
	split0 = pmd_stat(_metadata, self->pmd_kb, "thp_scan_split_underused");
	p = anon_aligned(nr * self->pmd, self->pmd);
	ASSERT_NE(NULL, p);
	fill(p, pages, self->psz, self->per, one_page);
	ASSERT_EQ(nr, thps(p, nr, self->pmd));
	snprintf(path, sizeof(path), THP "hugepages-%lukB/stats/thp_scan_split_underused",
		 self->pmd_kb);
	t = wait_counter(_metadata, path, NULL, split0, nr);
	ASSERT_EQ(0, thps(p, nr, self->pmd)) TH_LOG("after %d s", t);
	/* Still in use (and its PTEs young again, see jemalloc_pattern). */
	bad = check(p, pages, self->psz, self->per, one_page);
	EXPECT_EQ(-1, bad) TH_LOG("after the split: page %ld differs", bad);

	coll0 = VMSTAT("thp_collapse_alloc");
	skip0 = VMSTAT("thp_scan_collapse_skipped");
	full0 = FILE_NUM(KHUGEPAGED "full_scans");
	t = wait_full_scans(_metadata, full0, 3);
	ASSERT_GE(FILE_NUM(KHUGEPAGED "full_scans") - full0, 3) TH_LOG("after %d s", t);
	EXPECT_GE(VMSTAT("thp_scan_collapse_skipped") - skip0, (long)(2 * nr));
	EXPECT_EQ(coll0, VMSTAT("thp_collapse_alloc"));
	EXPECT_EQ(0, thps(p, nr, self->pmd));
	EXPECT_EQ((long)(nr * self->psz >> 10), smaps_kb(p, "Rss:"));
	EXPECT_EQ(nr, pmd_stat(_metadata, self->pmd_kb, "thp_scan_split_underused") - split0);
	bad = check(p, pages, self->psz, self->per, one_page);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, nr * self->pmd);
}

/*
 * "auto" under pressure, where it decides (no MADV_HUGEPAGE): no THP at
 * fault, and khugepaged collapses only ranges with no new memory at all,
 * even those that the collapse limit would let through.
 */
TEST_F_TIMEOUT(collapse, auto_pressure_full_ranges_only, 240)
{
	const size_t nr = 4, pages = nr * self->per;
	long coll0, skip0, full0, fault0, bad;
	char state[32], *full, *most;
	int t;

	ASSERT_EQ(0, set_policy("auto"));
	/* Thresholds that put "auto" under pressure whatever memory is like. */
	ASSERT_EQ(0, put(AUTO "interval_ms", "100"));
	ASSERT_EQ(0, put(AUTO "pressure_psi_pct", "0"));
	ASSERT_EQ(0, put(AUTO "plentiful_available_pct", "100"));
	ASSERT_EQ(0, put(AUTO "pressure_available_pct", "99"));
	for (t = 0; t < 200; t++) {
		ASSERT_EQ(0, get(AUTO "state", state, sizeof(state)));
		if (!strncmp(state, "pressure", 8))
			break;
		usleep(50000);
	}
	ASSERT_EQ(0, strncmp(state, "pressure", 8)) TH_LOG("auto state: %s", state);

	full = anon_aligned(nr * self->pmd, self->pmd);
	most = anon_aligned(nr * self->pmd, self->pmd);
	ASSERT_NE(NULL, full);
	ASSERT_NE(NULL, most);
	coll0 = VMSTAT("thp_collapse_alloc");
	fault0 = VMSTAT("thp_fault_alloc");
	skip0 = pmd_stat(_metadata, self->pmd_kb, "thp_scan_collapse_skipped");
	fill(full, pages, self->psz, self->per, every);
	fill(most, pages, self->psz, self->per, all_but_5);
	/* No THP at fault (khugepaged may be at work already). */
	EXPECT_EQ(fault0, VMSTAT("thp_fault_alloc"));

	t = wait_vmstat(_metadata, "thp_collapse_alloc", coll0, nr);
	full0 = FILE_NUM(KHUGEPAGED "full_scans");
	wait_full_scans(_metadata, full0, 2);
	EXPECT_EQ(nr, VMSTAT("thp_collapse_alloc") - coll0) TH_LOG("after %d s", t);
	EXPECT_EQ(nr, thps(full, nr, self->pmd));
	EXPECT_EQ(0, thps(most, nr, self->pmd));
	EXPECT_GE(pmd_stat(_metadata, self->pmd_kb, "thp_scan_collapse_skipped") - skip0,
		  (long)nr);
	bad = check(full, pages, self->psz, self->per, every);
	EXPECT_EQ(-1, bad) TH_LOG("full: page %ld differs", bad);
	bad = check(most, pages, self->psz, self->per, all_but_5);
	EXPECT_EQ(-1, bad) TH_LOG("most: page %ld differs", bad);
	munmap(full, nr * self->pmd);
	munmap(most, nr * self->pmd);
}

/*
 * collapse_max_new_pct takes 0 to 100 and nothing else; the read-only
 * collapse_max_ptes_none follows it, max_ptes_none, underused_zero_pct and
 * thp_scan/enabled, and names the knob that sets it.
 */
TEST_F(collapse, knobs)
{
	static const char * const bad[] = {
		"101", "-1", "12.5", "x", "\n", "0x10", "12 %", "4294967308",
	};
	const unsigned int per = self->per;
	char buf[64], want[64];
	unsigned int i;

	ASSERT_EQ(0, put(THP_SCAN "collapse_max_new_pct", "20"));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, put(THP_SCAN "collapse_max_new_pct", bad[i]))
			TH_LOG("writing \"%s\"", bad[i]);
		ASSERT_EQ(0, get(THP_SCAN "collapse_max_new_pct", buf, sizeof(buf)));
		EXPECT_STREQ("20\n", buf) TH_LOG("after writing \"%s\"", bad[i]);
	}
	EXPECT_EQ(-EACCES, put(THP_SCAN "collapse_max_ptes_none", "1"));

	ASSERT_EQ(0, put(THP_SCAN "collapse_max_new_pct", "12\n"));
	snprintf(want, sizeof(want), "%u collapse_max_new_pct\n", per * 12 / 100);
	ASSERT_EQ(0, get(THP_SCAN "collapse_max_ptes_none", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);

	ASSERT_EQ(0, put(THP_SCAN "collapse_max_new_pct", "0"));
	ASSERT_EQ(0, get(THP_SCAN "collapse_max_ptes_none", buf, sizeof(buf)));
	EXPECT_STREQ("0 collapse_max_new_pct\n", buf);
	ASSERT_EQ(0, put(THP_SCAN "collapse_max_new_pct", "100"));
	snprintf(want, sizeof(want), "%u underused_zero_pct\n", per * 90 / 100);
	ASSERT_EQ(0, get(THP_SCAN "collapse_max_ptes_none", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);

	/* An admin's lower max_ptes_none wins. */
	ASSERT_EQ(0, put(THP_SCAN "collapse_max_new_pct", "12"));
	thp_write_num("khugepaged/max_ptes_none", per / 16);
	snprintf(want, sizeof(want), "%u max_ptes_none\n", per / 16);
	ASSERT_EQ(0, get(THP_SCAN "collapse_max_ptes_none", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);
	thp_write_num("khugepaged/max_ptes_none", per - 1);

	ASSERT_EQ(0, put(THP_SCAN "underused_zero_pct", "5"));
	snprintf(want, sizeof(want), "%u underused_zero_pct\n", per * 5 / 100);
	ASSERT_EQ(0, get(THP_SCAN "collapse_max_ptes_none", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);

	/* thp_scan off: max_ptes_none alone, as in 6.12. */
	ASSERT_EQ(0, put(THP_SCAN "enabled", "0"));
	snprintf(want, sizeof(want), "%u max_ptes_none\n", per - 1);
	ASSERT_EQ(0, get(THP_SCAN "collapse_max_ptes_none", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);
}

TEST_HARNESS_MAIN
