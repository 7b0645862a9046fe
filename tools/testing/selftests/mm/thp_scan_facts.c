// SPDX-License-Identifier: GPL-2.0
/*
 * thp_scan decides on facts: it splits a THP as partially mapped only when
 * a walk of its reverse mappings confirms it, to the largest size that
 * still fits, finds partial mappings that nothing flagged, and never splits
 * for nothing (mlocked, pinned).  Each test moves, swaps, unmaps, forks,
 * mlocks or pins THPs and mTHPs as a program would, and proves what
 * happened with the counters (/proc/vmstat, hugepages-<size>kB/stats/,
 * which must all exist), the thp_scan tracepoints, pagemap and
 * kpageflags, the memcg's memory.current, and every byte of user data.
 *
 * kthpscand's minimum age is lowered from 10 s to 1 s where a test waits
 * for it to look at a THP (to 500 ms and 2 s where it counts its looks):
 * the decision logic is the same, only sooner, and the program runs in
 * about a minute and a half under TCG.  THPs are enabled in madvise mode
 * and the test's mappings madvised, so that only they have THPs.  Every
 * wait polls a counter or the trace, for WAIT_SECS at the most.  Each
 * test starts and ends with the machine's state (knobs, THP settings,
 * memcgs, swap on zram) as the program found it (thp_scan_reset(), as in
 * the other programs): its teardown runs in the parent, even when the
 * test dies, and the program restores it once more when it exits, after
 * a test that the harness killed at its timeout, teardown and all.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/mempolicy.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"
#include "../../../../mm/gup_test.h"

#define KHUGEPAGED THP "khugepaged/"
#define CG_T CG "thp_scan_facts/"
#define GUP_TEST "/sys/kernel/debug/gup_test"
/* The bound of every wait, in seconds of guest time. */
#define WAIT_SECS 120
/* kthpscand's minimum age in the tests that wait for it (default 10 s). */
#define AGE_MS "1000"
/* The mTHP size the tests use besides the PMD size. */
#define M64_KB 64UL

/*
 * The knobs the tests set (prepare()); thp_scan_reset() puts them back,
 * with the THP settings.
 */
static const char * const fact_knobs[] = {
	THP_SCAN "enabled", THP_SCAN "underused_zero_pct",
	THP_SCAN "pages_to_scan", THP_SCAN "scan_sleep_millisecs",
	THP_SCAN "min_age_millisecs", TRACE "events/thp_scan/enable",
	TRACE "events/migrate/mm_migrate_pages/enable",
};

/* Their defaults, set at the start of each test (the traces: on). */
static const char * const fact_knob_defaults[] = {
	"1", "90", "8192", "1000", "10000", "1", "1",
};

#define NR_FACT_KNOBS ARRAY_SIZE(fact_knobs)

FIXTURE(facts) {
	struct thp_settings thp;
	size_t psz, pmd, per;	/* page size, PMD THP size, its pages */
	unsigned long pmd_kb;
	int order_pmd, order_64k;
	pid_t child;		/* a helper process still to be killed */
};

/*
 * The state the program started with, whatever a test killed at its
 * timeout left behind (its teardown did not run); nothing else is changed
 * here: the tests change the knobs (prepare()), the teardown puts them
 * back.
 */
FIXTURE_SETUP(facts)
{
	unsigned int i;

	thp_scan_reset();
	for (i = 0; i < NR_FACT_KNOBS; i++) {
		const char *knob = fact_knobs[i];

		ASSERT_EQ(0, access(knob, W_OK))
			TH_LOG("no %s: a kernel without thp_scan, or no tracefs", knob);
	}
	self->psz = getpagesize();
	self->pmd = read_pmd_pagesize();
	ASSERT_NE(0, self->pmd);
	self->per = self->pmd / self->psz;
	self->pmd_kb = self->pmd >> 10;
	self->order_pmd = __builtin_ctzl(self->per);
	self->order_64k = __builtin_ctzl((M64_KB << 10) / self->psz);
	self->child = 0;
	thp_read_settings(&self->thp);
}

/* In the parent: the test's process is gone, or may be (a signal). */
FIXTURE_TEARDOWN_PARENT(facts)
{
	if (self->child > 0)
		kill(self->child, SIGKILL);
	thp_scan_reset();
}

/* Counter @name of the THP size of @kb kB. */
static long fact_stat(struct __test_metadata *_metadata, unsigned long kb,
		      const char *name)
{
	char path[160];

	snprintf(path, sizeof(path), THP "hugepages-%lukB/stats/%s", kb, name);
	return ts_counter(_metadata, path, NULL);
}

#define VMSTAT(key) ts_counter(_metadata, "/proc/vmstat", key)
#define MEMINFO_KB(key) ts_counter(_metadata, "/proc/meminfo", key)
#define STAT(kb, name) fact_stat(_metadata, kb, name)

/*
 * Poll @cond every 200 ms until it holds, WAIT_SECS at the most; the
 * value is the seconds waited.
 */
#define WAIT_FOR(cond) ({						\
	double __start = ts_mono_s();					\
	while (!(cond) && ts_mono_s() - __start < WAIT_SECS)		\
		usleep(200000);						\
	(int)(ts_mono_s() - __start);					\
})

/*
 * Set the THP sizes that a page fault may allocate: the PMD size and/or
 * 64K, nothing else, and only in the test's mappings (madvise): the
 * test's own heap stays out of the counters.  khugepaged collapses
 * nothing behind the test's back.
 */
static void fact_thp_settings(struct _test_data_facts *self, bool pmd,
			      bool m64, struct thp_settings *s)
{
	int i;

	*s = self->thp;
	s->thp_enabled = THP_MADVISE;
	for (i = 0; i < NR_ORDERS; i++)
		s->hugepages[i].enabled = THP_NEVER;
	s->hugepages[self->order_pmd].enabled = pmd ? THP_INHERIT : THP_NEVER;
	s->hugepages[self->order_64k].enabled = m64 ? THP_MADVISE : THP_NEVER;
	s->khugepaged.max_ptes_none = 0;
}

/* @len bytes of anonymous memory aligned to @align, for THPs (madvise). */
static char *map_thp(size_t len, size_t align)
{
	char *p = ts_map_aligned(len, align);

	if (p && madvise(p, len, MADV_HUGEPAGE))
		return NULL;
	return p;
}

static void set_sizes(struct _test_data_facts *self, bool pmd, bool m64)
{
	struct thp_settings s;

	fact_thp_settings(self, pmd, m64, &s);
	thp_write_settings(&s);
}

/*
 * What every test starts with: thp_scan's defaults but for a minimum age
 * of @min_age ms, the THP sizes (in the test's madvised mappings only,
 * once other tasks' large folios are gone: ts_exclusive_thps()), this
 * process in a memcg of its own, and the thp_scan events traced into an
 * empty buffer.
 */
static void prepare(struct __test_metadata *_metadata,
		    struct _test_data_facts *self, bool pmd, bool m64,
		    const char *min_age)
{
	char path[128], pid[16];
	unsigned int i;
	long left;

	if (m64) {
		snprintf(path, sizeof(path), THP "hugepages-%lukB/enabled", M64_KB);
		ASSERT_EQ(0, access(path, F_OK)) TH_LOG("no 64K anon THP size");
		ASSERT_EQ(M64_KB << 10, self->psz << self->order_64k);
	}
	set_sizes(self, pmd, m64);
	left = ts_exclusive_thps();
	ASSERT_LE(0, left);
	if (left)
		TH_LOG("%ld large anon folios of other tasks still there", left);
	for (i = 0; i < NR_FACT_KNOBS; i++) {
		const char *knob = fact_knobs[i];

		ASSERT_EQ(0, ts_put(knob, fact_knob_defaults[i])) TH_LOG("%s", knob);
	}
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", min_age));
	ASSERT_EQ(0, ts_put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_T, 0755) || errno == EEXIST);
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, ts_put(CG_T "cgroup.procs", pid));
	ASSERT_EQ(0, ts_clear_trace());
}

/* The data of page @pg: 64-bit words, none of them zero. */
static void page_data(char *buf, size_t psz, size_t pg)
{
	uint64_t *w = (uint64_t *)buf;
	size_t i;

	for (i = 0; i < psz / sizeof(*w); i++)
		w[i] = (((uint64_t)(pg + 1) << 32) ^ (i * 0x9e3779b97f4a7c15ULL)) | 1;
}

/* Which pages of a range of folios of @per pages hold data. */
typedef bool (*has_data)(size_t pg, size_t per);

static bool fact_every_page(size_t pg, size_t per)
{
	return true;
}

/* Page 7 of each folio: sparse, mostly zero. */
static bool one_page(size_t pg, size_t per)
{
	return pg % per == 7;
}

/* Write the data of pages [@from, @to) of @p. */
static void fill(char *p, size_t from, size_t to, size_t psz, size_t per,
		 has_data data)
{
	size_t pg;

	for (pg = from; pg < to; pg++)
		if (data(pg, per))
			page_data(p + pg * psz, psz, pg);
}

/*
 * Compare pages [@from, @to) of @p with what they must hold: their data,
 * or zeroes.  The first page that differs, or -1.
 */
static long check(const char *p, size_t from, size_t to, size_t psz,
		  size_t per, has_data data)
{
	char *want = malloc(psz);
	long bad = -1;
	size_t pg;

	if (!want)
		return from;
	for (pg = from; pg < to && bad < 0; pg++) {
		if (data(pg, per))
			page_data(want, psz, pg);
		else
			memset(want, 0, psz);
		if (memcmp(p + pg * psz, want, psz))
			bad = pg;
	}
	free(want);
	return bad;
}

#define EXPECT_DATA(p, from, to, per, data) do {			\
	long __bad = check(p, from, to, self->psz, per, data);		\
	EXPECT_EQ(-1, __bad) TH_LOG("page %ld differs", __bad);		\
} while (0)

/*
 * Wait until each of the @n folios at @pfns (the test's own) has been
 * split, as @decision, since the trace was cleared: the split event fires
 * once the split is over.  The seconds waited.
 */
static int wait_split(const unsigned long *pfns, size_t n, const char *decision)
{
	struct ev_filter f = { true, decision, pfns, n, 0, true };

	return WAIT_FOR(ts_pfns_seen(&f) == n);
}

/*
 * Wait until kthpscand has decided on each of the @n folios at @pfns since
 * the trace was cleared, and check that every decision on them was
 * @decision.
 */
static void expect_decided(struct __test_metadata *_metadata,
			   const unsigned long *pfns, size_t n,
			   const char *decision)
{
	struct ev_filter any = { false, NULL, pfns, n };
	int t = WAIT_FOR(ts_pfns_seen(&any) == n);

	EXPECT_EQ(n, ts_pfns_seen(&any)) TH_LOG("after %d s", t);
	/*
	 * From one read of the trace: kthpscand decides on the folios it
	 * keeps again at each round, and two reads would count different
	 * rounds (the debug kernel read 460 decisions, then 543 keep_used).
	 */
	EXPECT_EQ(0, ts_log_other_decisions(&any, decision, 8))
		TH_LOG("not all %s", decision);
}

/*
 * Each of the @n folios at @pfns, of @order, was decided on once as
 * partially mapped, with @mapped pages mapped, and split once, to
 * @new_order.
 */
static void expect_split_partial(struct __test_metadata *_metadata,
				 const unsigned long *pfns, size_t n,
				 unsigned int order, unsigned int mapped,
				 unsigned int new_order)
{
	struct thp_scan_event *ev;
	long nev = thp_scan_events(&ev), j;
	size_t i;

	for (i = 0; i < n; i++) {
		int decided = 0, split = 0, off = 0;

		for (j = 0; j < nev; j++) {
			if (ev[j].pfn != pfns[i] ||
			    strcmp(ev[j].decision, "split_partially_mapped"))
				continue;
			off += ev[j].order != order;
			if (ev[j].split) {
				split++;
				off += ev[j].ret || ev[j].new_order != new_order;
			} else {
				decided++;
				off += ev[j].mapped != mapped;
			}
		}
		EXPECT_TRUE(decided == 1 && split == 1 && !off)
			TH_LOG("folio %zu: %d decisions, %d splits, %d off (%u, %u, %u)",
			       i, decided, split, off, order, mapped, new_order);
	}
	free(ev);
}

/* The kpageflags word of the page mapped at @p; 0 if not present. */
static uint64_t flags_at(const char *p)
{
	unsigned long pfn;
	int kpf = open("/proc/kpageflags", O_RDONLY);
	uint64_t f = 0;

	if (kpf >= 0 && !ts_pagemap_pfns(p, 1, &pfn) && pfn)
		f = ts_kpageflags(kpf, pfn);
	if (kpf >= 0)
		close(kpf);
	return f;
}

/* How many of @nr pages at @p are resident: present, not the zero page. */
static long resident(const char *p, size_t nr)
{
	unsigned long *pfns = calloc(nr, sizeof(*pfns));
	int kpf = open("/proc/kpageflags", O_RDONLY);
	long n = -1;
	size_t i;

	if (pfns && kpf >= 0 && !ts_pagemap_pfns(p, nr, pfns))
		for (n = 0, i = 0; i < nr; i++)
			n += pfns[i] &&
			     !(ts_kpageflags(kpf, pfns[i]) & (1ULL << KPF_ZERO_PAGE));
	if (kpf >= 0)
		close(kpf);
	free(pfns);
	return n;
}

/* How many of @nr pages at @p are swapped out (a swap entry in the PTE). */
static size_t swapped(char *p, size_t nr, size_t psz)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	size_t i, n = 0;

	for (i = 0; fd >= 0 && i < nr; i++)
		n += pagemap_is_swapped(fd, p + i * psz);
	if (fd >= 0)
		close(fd);
	return n;
}

/* Swap to a @size zram disk, taken down by the teardown. */
static void zram_swap(struct __test_metadata *_metadata,
		      struct _test_data_facts *self, const char *size)
{
	ASSERT_EQ(0, access(ZRAM "disksize", F_OK)) TH_LOG("needs CONFIG_ZRAM");
	ASSERT_EQ(0, ts_put(ZRAM "disksize", size));
	ASSERT_EQ(0, system("mkswap /dev/zram0 >/dev/null && swapon /dev/zram0"));
}

/*
 * The large folios migrate_pages() split itself since the trace was
 * cleared (nr_split of migrate:mm_migrate_pages): 6.12 splits one when
 * it finds no free block of its order to move it to (-ENOMEM).
 */
static long migration_splits(void)
{
	FILE *f = fopen(TRACE "trace", "r");
	char line[512], *s;
	long sum = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		s = strstr(line, " nr_split=");
		if (s && strstr(line, " mm_migrate_pages: "))
			sum += strtol(s + strlen(" nr_split="), NULL, 10);
	}
	fclose(f);
	return sum;
}

/* How many splits thp_scan made of folios at @pfns, by the trace. */
static long thp_scan_splits(const unsigned long *pfns, size_t n)
{
	struct thp_scan_event *ev;
	long nr = thp_scan_events(&ev), i, c = 0;

	for (i = 0; i < nr; i++)
		c += ev[i].split && !ev[i].ret && ts_pfn_in(ev[i].pfn, pfns, n);
	free(ev);
	return nr < 0 ? -1 : c;
}

/*
 * Dense 64K mTHPs moved by compaction (/proc/sys/vm/compact_memory) stay
 * whole: rmap no longer flags a folio that try_to_migrate() unmaps whole,
 * migration flags the new folio only if its own mapcounts say so, and
 * kthpscand, which looks at every moved folio afterwards, keeps them all.
 * Memory is fragmented first (order-0 pages around the mTHPs, freed
 * before the compaction), so that compaction has mTHPs to move and holes
 * to move them to; the test fails if it moved none whole (pagemap).
 *
 * Compaction itself splits some: 6.12's migrate_pages() splits a large
 * folio when compaction_alloc() has no free block of its order for it
 * (more often here than in a less fragmented memory).  Those splits are
 * counted from the migrate:mm_migrate_pages tracepoint (every size, every
 * task) and reported; the test checks that they are every split of a
 * large folio of any size there was, that the test's mTHPs no longer
 * whole are exactly the 64K splits (only the test's madvised mappings
 * can have 64K folios), and that thp_scan split none of the mTHPs.
 */
TEST_F_TIMEOUT(facts, compaction_keeps_dense_mthps, 500)
{
	const size_t per = 16, nr = 128, len = nr * per * self->psz;
	long split0, all0, sd0, sp0, pm0, np0, mig0, frag_len, mig_split, whole;
	unsigned long *before, *after, *moved, *all;
	size_t i, n_moved = 0, pg, step;
	char *p, *frag;

	prepare(_metadata, self, false, true, AGE_MS);
	before = calloc(nr, sizeof(*before));
	after = calloc(nr, sizeof(*after));
	moved = calloc(nr, sizeof(*moved));
	all = calloc(2 * nr, sizeof(*all));
	ASSERT_TRUE(before && after && moved && all);

	/* Order-0 pages over a quarter of free memory, the mTHPs among them. */
	frag_len = MEMINFO_KB("MemFree:") / 4 * 1024;
	frag_len = frag_len / self->psz / nr * nr * self->psz;
	ASSERT_GT(frag_len, 0);
	frag = mmap(NULL, frag_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, frag);
	ASSERT_EQ(0, madvise(frag, frag_len, MADV_NOHUGEPAGE));
	p = map_thp(len, self->pmd);
	ASSERT_NE(NULL, p);
	step = frag_len / self->psz / nr;
	for (pg = 0; pg < frag_len / self->psz; pg++) {
		frag[pg * self->psz] = 1;
		/* An mTHP every @step pages, while the order-0 pages are taken. */
		if (pg % step == 0)
			fill(p, pg / step * per, (pg / step + 1) * per, self->psz,
			     per, fact_every_page);
	}
	ASSERT_EQ(0, munmap(frag, frag_len));
	ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, before));

	split0 = STAT(M64_KB, "split");
	all0 = ts_all_sizes_stat("split");
	ASSERT_LE(0, all0);
	sd0 = STAT(M64_KB, "split_deferred");
	sp0 = STAT(M64_KB, "thp_split_scan_partial");
	pm0 = STAT(M64_KB, "nr_anon_partially_mapped");
	np0 = STAT(M64_KB, "thp_split_scan_not_partial");
	mig0 = VMSTAT("pgmigrate_success");
	ASSERT_EQ(0, ts_clear_trace());
	ASSERT_EQ(0, ts_put("/proc/sys/vm/compact_memory", "1"));

	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, after));
	whole = ts_whole_folios(p, nr, per);
	mig_split = migration_splits();
	for (i = 0; i < nr; i++) {
		if (after[i] != before[i] &&
		    ts_whole_folios(p + i * per * self->psz, 1, per) == 1)
			moved[n_moved++] = after[i];
	}
	ksft_print_msg("compaction: %zu of %zu mTHPs moved whole, %ld split\n",
		       n_moved, nr, nr - whole);
	ksft_print_msg("migrate_pages() split %ld large folios, migrated %ld pages\n",
		       mig_split, VMSTAT("pgmigrate_success") - mig0);
	ASSERT_GT(n_moved, 0) TH_LOG("compaction moved no mTHP whole: nothing proven");
	EXPECT_GE(VMSTAT("pgmigrate_success") - mig0, (long)(n_moved * per));
	EXPECT_LE(nr - whole, mig_split);

	/* kthpscand looks at each moved one after the move, and keeps it. */
	expect_decided(_metadata, moved, n_moved, "keep_used");
	EXPECT_EQ(whole, ts_whole_folios(p, nr, per));
	memcpy(all, before, nr * sizeof(*all));
	memcpy(all + nr, after, nr * sizeof(*all));
	EXPECT_EQ(0, thp_scan_splits(all, 2 * nr));
	/* Every split there was is migrate_pages()', and of the test's mTHPs. */
	EXPECT_EQ(ts_all_sizes_stat("split") - all0, migration_splits());
	EXPECT_EQ(nr - whole, STAT(M64_KB, "split") - split0);
	EXPECT_EQ(sp0, STAT(M64_KB, "thp_split_scan_partial"));
	/* Never flagged, so nothing to refute or count. */
	EXPECT_EQ(sd0, STAT(M64_KB, "split_deferred"));
	EXPECT_EQ(pm0, STAT(M64_KB, "nr_anon_partially_mapped"));
	EXPECT_EQ(np0, STAT(M64_KB, "thp_split_scan_not_partial"));
	EXPECT_DATA(p, 0, nr * per, per, fact_every_page);
	munmap(p, len);
	free(before);
	free(after);
	free(moved);
	free(all);
}

/*
 * The NUMA tests need two nodes.  Without them they are skipped, unless
 * the kernel command line says the guest has them (thpscan.numa_nodes=2,
 * from qemu/boot.sh): then it is a failure.
 */
static void need_two_nodes(struct __test_metadata *_metadata)
{
	char cmdline[4096], *e;
	int expect = 0;

	if (!ts_get("/proc/cmdline", cmdline, sizeof(cmdline))) {
		e = strstr(cmdline, "thpscan.numa_nodes=");
		if (e)
			expect = atoi(e + strlen("thpscan.numa_nodes="));
	}
	if (access("/sys/devices/system/node/node1", F_OK)) {
		/* Told to expect two nodes: their absence is a failure. */
		ASSERT_LT(expect, 2) TH_LOG("thpscan.numa_nodes=%d, no node1", expect);
		SKIP(return, "needs two NUMA nodes");
	}
}

/* Move the folios of @per pages at @p (@nr of them) to @node. */
static long move_folios(char *p, size_t nr, size_t per, size_t psz, int node,
			int *status)
{
	void **pages = calloc(nr, sizeof(*pages));
	int *nodes = calloc(nr, sizeof(*nodes));
	size_t i;
	long ret = -1;

	if (pages && nodes) {
		for (i = 0; i < nr; i++) {
			pages[i] = p + i * per * psz;
			nodes[i] = node;
		}
		ret = syscall(__NR_move_pages, 0, nr, pages, nodes, status,
			      MPOL_MF_MOVE);
	}
	free(pages);
	free(nodes);
	return ret;
}

/*
 * move_folios() until every folio is on @node, as a user would: a folio
 * that kthpscand is judging holds its reference, and a migration that
 * meets it fails once its own retries are spent (move_pages() counts the
 * folio as not moved, and thp_migration_fail counts it).  The last
 * move_folios()'s result: 0 once all are moved.
 */
static long move_folios_retry(char *p, size_t nr, size_t per, size_t psz,
			      int node, int *status, int *tries)
{
	long ret = -1;

	for (*tries = 1; *tries <= 20; (*tries)++) {
		ret = move_folios(p, nr, per, psz, node, status);
		if (ret <= 0)
			break;
		usleep(100 * 1000);
	}
	return ret;
}

/* The node of the page at @p; negative: -errno. */
static int node_of(char *p)
{
	void *pages[1] = { p };
	int status = -1;

	if (syscall(__NR_move_pages, 0, 1, pages, NULL, &status, 0))
		return -errno;
	return status;
}

/* How many of the @nr folios of @per pages at @p are on @node. */
static size_t on_node(char *p, size_t nr, size_t per, size_t psz, int node)
{
	size_t i, n = 0;

	for (i = 0; i < nr; i++)
		n += node_of(p + i * per * psz) == node;
	return n;
}

/*
 * Move the @nr folios of @per pages at @p to @node with move_pages(): each
 * moved (new pfn, right node), none split.  The new pfns go to @heads.
 */
static void move_and_check(struct __test_metadata *_metadata,
			   struct _test_data_facts *self, char *p, size_t nr,
			   size_t per, int node, unsigned long *heads)
{
	unsigned long *old = calloc(nr, sizeof(*old));
	int *status = calloc(nr, sizeof(*status));
	size_t i, n;

	int tries;

	ASSERT_TRUE(old && status);
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, old));
	ASSERT_EQ(0, move_folios_retry(p, nr, per, self->psz, node, status, &tries))
		TH_LOG("move_pages: %s, after %d tries", strerror(errno), tries);
	if (tries > 1)
		TH_LOG("%zu folios to node %d: moved at try %d", nr, node, tries);
	for (i = 0, n = 0; i < nr; i++)
		n += status[i] == node;
	EXPECT_EQ(nr, n) TH_LOG("%zu of %zu folios moved to node %d", n, nr, node);
	EXPECT_EQ(nr, on_node(p, nr, per, self->psz, node));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, heads));
	for (i = 0, n = 0; i < nr; i++)
		n += old[i] != heads[i];
	EXPECT_EQ(nr, n) TH_LOG("%zu of %zu folios at new pfns", n, nr);
	EXPECT_EQ(nr, ts_whole_folios(p, nr, per));
	free(old);
	free(status);
}

/*
 * Fault @nr_pmd PMD THPs at *@pp and @nr_m 64K mTHPs at *@pm, with @data,
 * each a whole folio.
 */
static void fault_pmd_and_64k(struct __test_metadata *_metadata,
			      struct _test_data_facts *self, size_t nr_pmd,
			      size_t nr_m, has_data data, char **pp, char **pm)
{
	set_sizes(self, true, false);
	*pp = map_thp(nr_pmd * self->pmd, self->pmd);
	ASSERT_NE(NULL, *pp);
	fill(*pp, 0, nr_pmd * self->per, self->psz, self->per, data);
	set_sizes(self, false, true);
	*pm = map_thp(nr_m * 16 * self->psz, self->pmd);
	ASSERT_NE(NULL, *pm);
	fill(*pm, 0, nr_m * 16, self->psz, 16, data);
	ASSERT_EQ(nr_pmd, ts_whole_folios(*pp, nr_pmd, self->per));
	ASSERT_EQ((long)(nr_pmd * self->pmd_kb), ts_smaps_kb(*pp, "AnonHugePages:"));
	ASSERT_EQ(nr_m, ts_whole_folios(*pm, nr_m, 16));
}

/*
 * The @nr_pmd PMD THPs at @pp and @nr_m 64K mTHPs at @pm, each with one
 * page of data (one_page()), were split as underused: only the pages
 * written are left, the rest map the zero page, every byte reads as it
 * should.  Then unmapped.
 */
static void expect_sparse_split(struct __test_metadata *_metadata,
				struct _test_data_facts *self, char *pp,
				size_t nr_pmd, char *pm, size_t nr_m)
{
	EXPECT_EQ(nr_pmd, resident(pp, nr_pmd * self->per));
	EXPECT_EQ(nr_m, resident(pm, nr_m * 16));
	EXPECT_DATA(pp, 0, nr_pmd * self->per, self->per, one_page);
	EXPECT_DATA(pm, 0, nr_m * 16, 16, one_page);
	munmap(pp, nr_pmd * self->pmd);
	munmap(pm, nr_m * 16 * self->psz);
}

/*
 * Dense PMD THPs and 64K mTHPs moved to the other NUMA node and back with
 * move_pages(): every folio moves whole (the PMD THPs stay PMD-mapped),
 * nothing is flagged or split, and kthpscand, looking at each at its new
 * place, keeps it.
 */
TEST_F_TIMEOUT(facts, numa_move_dense, 300)
{
	const size_t nr_pmd = 8, nr_m = 64, per_m = 16;
	unsigned long heads_pmd[8], heads_m[64], all[72];
	int status_pmd[8], status_m[64];
	long split_p0, split_m0, tsp0, tms0, tmf0, tmsp0, pm_p0, pm_m0, sd_p0, sd_m0, np0;
	char *pp, *pm;
	int home, other, pass, tries;

	need_two_nodes(_metadata);
	prepare(_metadata, self, true, false, AGE_MS);
	fault_pmd_and_64k(_metadata, self, nr_pmd, nr_m, fact_every_page, &pp, &pm);

	split_p0 = STAT(self->pmd_kb, "split");
	split_m0 = STAT(M64_KB, "split");
	sd_p0 = STAT(self->pmd_kb, "split_deferred");
	sd_m0 = STAT(M64_KB, "split_deferred");
	pm_p0 = STAT(self->pmd_kb, "nr_anon_partially_mapped");
	pm_m0 = STAT(M64_KB, "nr_anon_partially_mapped");
	np0 = ts_must_sum_stat(_metadata, "thp_split_scan_not_partial");
	tsp0 = VMSTAT("thp_split_page");
	tmf0 = VMSTAT("thp_migration_fail");
	tmsp0 = VMSTAT("thp_migration_split");
	/*
	 * The folios may have been made on either node (two CPUs, memory
	 * short on one): gather them on node 0 first, uncounted.
	 */
	home = 0;
	other = 1;
	ASSERT_EQ(0, move_folios_retry(pp, nr_pmd, self->per, self->psz, home, status_pmd, &tries));
	ASSERT_EQ(0, move_folios_retry(pm, nr_m, per_m, self->psz, home, status_m, &tries));
	ASSERT_EQ(nr_pmd, on_node(pp, nr_pmd, self->per, self->psz, home));
	ASSERT_EQ(nr_m, on_node(pm, nr_m, per_m, self->psz, home));
	tms0 = VMSTAT("thp_migration_success");
	for (pass = 0; pass < 2; pass++) {
		int node = pass ? home : other;

		move_and_check(_metadata, self, pp, nr_pmd, self->per, node, heads_pmd);
		move_and_check(_metadata, self, pm, nr_m, per_m, node, heads_m);
		EXPECT_EQ((long)(nr_pmd * self->pmd_kb),
			  ts_smaps_kb(pp, "AnonHugePages:"));
	}
	/*
	 * Every move is proven above by the new pfns of whole folios. The
	 * counters must show no THP migration that split; the success count
	 * is only logged (once, with two CPUs, it said 9 of the 16 PMD THP
	 * moves that the pfns proved), and so are the failures: a move that
	 * met kthpscand's reference failed and was tried again (the debug
	 * kernel, judging slowly, failed 6 folios of one move_pages()).
	 */
	EXPECT_EQ(tmsp0, VMSTAT("thp_migration_split"));
	TH_LOG("thp_migration_success: %ld for %zu PMD THP moves; thp_migration_fail: %ld",
	       VMSTAT("thp_migration_success") - tms0, 2 * nr_pmd,
	       VMSTAT("thp_migration_fail") - tmf0);

	memcpy(all, heads_pmd, sizeof(heads_pmd));
	memcpy(all + nr_pmd, heads_m, sizeof(heads_m));
	expect_decided(_metadata, all, nr_pmd + nr_m, "keep_used");
	EXPECT_EQ(nr_pmd, ts_whole_folios(pp, nr_pmd, self->per));
	EXPECT_EQ(nr_m, ts_whole_folios(pm, nr_m, per_m));
	EXPECT_EQ(split_p0, STAT(self->pmd_kb, "split"));
	EXPECT_EQ(split_m0, STAT(M64_KB, "split"));
	EXPECT_EQ(tsp0, VMSTAT("thp_split_page"));
	EXPECT_EQ(sd_p0, STAT(self->pmd_kb, "split_deferred"));
	EXPECT_EQ(sd_m0, STAT(M64_KB, "split_deferred"));
	EXPECT_EQ(pm_p0, STAT(self->pmd_kb, "nr_anon_partially_mapped"));
	EXPECT_EQ(pm_m0, STAT(M64_KB, "nr_anon_partially_mapped"));
	EXPECT_EQ(np0, ts_must_sum_stat(_metadata, "thp_split_scan_not_partial"));
	EXPECT_DATA(pp, 0, nr_pmd * self->per, self->per, fact_every_page);
	EXPECT_DATA(pm, 0, nr_m * per_m, per_m, fact_every_page);
	munmap(pp, nr_pmd * self->pmd);
	munmap(pm, nr_m * per_m * self->psz);
}

/*
 * Sparse PMD THPs and 64K mTHPs (one page of data each) moved to the other
 * node before kthpscand got to them (minimum age 10 min) are still found
 * there and split as underused once they are due (minimum age lowered to
 * 1 s): the new folios were queued by the migration.
 */
TEST_F_TIMEOUT(facts, numa_move_sparse_still_split, 300)
{
	const size_t nr_pmd = 8, nr_m = 32, per_m = 16;
	unsigned long heads_pmd[8], heads_m[32];
	struct ev_filter fp = { true, "split_underused" };
	long su_p0, su_m0, split_p0, split_m0;
	int status_pmd[8], status_m[32];
	char *pp, *pm;
	int t;

	need_two_nodes(_metadata);
	prepare(_metadata, self, true, false, "600000");
	fault_pmd_and_64k(_metadata, self, nr_pmd, nr_m, one_page, &pp, &pm);
	su_p0 = STAT(self->pmd_kb, "thp_split_scan_underused");
	su_m0 = STAT(M64_KB, "thp_split_scan_underused");
	split_p0 = STAT(self->pmd_kb, "split");
	split_m0 = STAT(M64_KB, "split");

	/*
	 * The folios may have been made on either node (two CPUs): gather
	 * them on node 0 first, then move them all to node 1.
	 */
	ASSERT_EQ(0, move_folios_retry(pp, nr_pmd, self->per, self->psz, 0, status_pmd, &t));
	ASSERT_EQ(0, move_folios_retry(pm, nr_m, per_m, self->psz, 0, status_m, &t));
	ASSERT_EQ(nr_pmd, on_node(pp, nr_pmd, self->per, self->psz, 0));
	ASSERT_EQ(nr_m, on_node(pm, nr_m, per_m, self->psz, 0));
	move_and_check(_metadata, self, pp, nr_pmd, self->per, 1, heads_pmd);
	move_and_check(_metadata, self, pm, nr_m, per_m, 1, heads_m);
	/* Not split by the moves. */
	EXPECT_EQ(split_p0, STAT(self->pmd_kb, "split"));
	EXPECT_EQ(split_m0, STAT(M64_KB, "split"));

	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", AGE_MS));
	/*
	 * On the split events of the test's own folios (a system-wide
	 * counter could end the wait with one of them halfway through its
	 * split: one more page resident than the data).
	 */
	t = wait_split(heads_pmd, nr_pmd, "split_underused");
	t += wait_split(heads_m, nr_m, "split_underused");
	EXPECT_LE(nr_pmd, STAT(self->pmd_kb, "thp_split_scan_underused") - su_p0)
		TH_LOG("after %d s", t);
	EXPECT_LE(nr_m, STAT(M64_KB, "thp_split_scan_underused") - su_m0);
	/* Split where they were moved to. */
	fp.pfns = heads_pmd;
	fp.n = nr_pmd;
	EXPECT_EQ(nr_pmd, ts_pfns_seen(&fp));
	fp.pfns = heads_m;
	fp.n = nr_m;
	EXPECT_EQ(nr_m, ts_pfns_seen(&fp));
	expect_sparse_split(_metadata, self, pp, nr_pmd, pm, nr_m);
}

/*
 * Migration flags nothing, whatever thp_scan/enabled says (6.12 flagged
 * every PTE-mapped mTHP it moved, on its way through try_to_migrate(),
 * and carried the flag over to the destination).  Dense 64K mTHPs moved
 * to the other node with thp_scan off: no split_deferred, no
 * nr_anon_partially_mapped, and the deferred split shrinker, driven from
 * this task (drop_caches=2), leaves each one whole at its new pfns, where
 * a flag would have had it split to base pages.  Switched on, kthpscand
 * finds them used (keep_used), not refuted flags (keep_not_partial).
 */
TEST_F_TIMEOUT(facts, numa_move_flags_nothing, 300)
{
	const size_t nr = 32, per = 16;
	long sd0, pm0, split0;
	unsigned long heads[32];
	struct ev_filter f = { false, "keep_used", heads, nr };
	struct ev_filter refuted = { false, "keep_not_partial", heads, nr };
	int kpf = open("/proc/kpageflags", O_RDONLY);
	size_t i;
	char *p;
	int t;

	ASSERT_GE(kpf, 0);
	need_two_nodes(_metadata);
	prepare(_metadata, self, false, true, AGE_MS);
	p = map_thp(nr * per * self->psz, self->pmd);
	ASSERT_NE(NULL, p);
	fill(p, 0, nr * per, self->psz, per, fact_every_page);
	ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
	/*
	 * Made on both nodes (two CPUs, the task moved while it faulted)?
	 * Gather them on node 0 first: only the move below is counted.
	 */
	if (on_node(p, nr, per, self->psz, node_of(p)) != nr) {
		int status[32], tries;

		ASSERT_EQ(0, move_folios_retry(p, nr, per, self->psz, 0, status, &tries));
		ASSERT_EQ(nr, on_node(p, nr, per, self->psz, 0));
	}
	ASSERT_EQ(0, ts_put(THP_SCAN "enabled", "0"));
	/*
	 * System-wide counters, which only the test's folios move here (no
	 * other task of the guest maps a 64K mTHP).
	 */
	sd0 = STAT(M64_KB, "split_deferred");
	pm0 = STAT(M64_KB, "nr_anon_partially_mapped");
	split0 = STAT(M64_KB, "split");
	move_and_check(_metadata, self, p, nr, per, node_of(p) ? 0 : 1, heads);
	EXPECT_EQ(sd0, STAT(M64_KB, "split_deferred"));
	EXPECT_EQ(pm0, STAT(M64_KB, "nr_anon_partially_mapped"));
	/* The shrinker: nothing of theirs flagged, so nothing split. */
	ASSERT_EQ(0, ts_put("/proc/sys/vm/drop_caches", "2"));
	for (i = 0; i < nr; i++)
		EXPECT_EQ(per, ts_folio_pages_at(kpf, heads[i], per + 1)) TH_LOG("mTHP %zu", i);
	EXPECT_EQ(split0, STAT(M64_KB, "split"));

	ASSERT_EQ(0, ts_put(THP_SCAN "enabled", "1"));
	/* On the decisions on the test's own folios, by their pfns. */
	t = WAIT_FOR(ts_pfns_seen(&f) == nr);
	EXPECT_EQ(nr, ts_pfns_seen(&f)) TH_LOG("after %d s", t);
	EXPECT_EQ(0, ts_pfns_seen(&refuted));
	EXPECT_EQ(pm0, STAT(M64_KB, "nr_anon_partially_mapped"));
	EXPECT_EQ(nr, ts_whole_folios(p, nr, per));
	EXPECT_EQ(split0, STAT(M64_KB, "split"));
	EXPECT_DATA(p, 0, nr * per, per, fact_every_page);
	close(kpf);
	munmap(p, nr * per * self->psz);
}

/*
 * MADV_PAGEOUT of dense 64K mTHPs to zram, then read back, with thp_scan
 * on and off: each mTHP is written out whole (swpout, no fallback) and
 * read back in as one 64K folio, none split, no partially-mapped or
 * deferred-split count (a folio in the swap cache is not flagged, as in
 * 6.12); and with thp_scan on, kthpscand keeps the folios read back.
 */
TEST_F_TIMEOUT(facts, pageout_dense_mthps, 300)
{
	const size_t nr = 64, per = 16, len = nr * per * self->psz;
	long out0, fb0, split0, sd0, pm0;
	unsigned long heads[64];
	int on;
	char *p;

	prepare(_metadata, self, false, true, AGE_MS);
	zram_swap(_metadata, self, "64M");
	for (on = 1; on >= 0; on--) {
		ASSERT_EQ(0, ts_put(THP_SCAN "enabled", on ? "1" : "0"));
		p = map_thp(len, self->pmd);
		ASSERT_NE(NULL, p);
		fill(p, 0, nr * per, self->psz, per, fact_every_page);
		ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
		out0 = STAT(M64_KB, "swpout");
		fb0 = STAT(M64_KB, "swpout_fallback");
		split0 = STAT(M64_KB, "split");
		sd0 = STAT(M64_KB, "split_deferred");
		pm0 = STAT(M64_KB, "nr_anon_partially_mapped");

		ASSERT_EQ(0, madvise(p, len, MADV_PAGEOUT));
		EXPECT_EQ(nr * per, swapped(p, nr * per, self->psz)) TH_LOG("thp_scan %d", on);
		EXPECT_EQ(nr, STAT(M64_KB, "swpout") - out0);
		EXPECT_EQ(fb0, STAT(M64_KB, "swpout_fallback"));
		EXPECT_EQ(split0, STAT(M64_KB, "split"));
		EXPECT_EQ(sd0, STAT(M64_KB, "split_deferred"));
		EXPECT_EQ(pm0, STAT(M64_KB, "nr_anon_partially_mapped"));

		/* Read back: every byte, and each mTHP swapped in whole. */
		EXPECT_DATA(p, 0, nr * per, per, fact_every_page);
		EXPECT_EQ(nr, ts_whole_folios(p, nr, per)) TH_LOG("thp_scan %d", on);
		ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, heads));
		if (on) {
			expect_decided(_metadata, heads, nr, "keep_used");
			EXPECT_EQ(nr, ts_whole_folios(p, nr, per));
		}
		EXPECT_EQ(split0, STAT(M64_KB, "split"));
		EXPECT_EQ(sd0, STAT(M64_KB, "split_deferred"));
		EXPECT_EQ(pm0, STAT(M64_KB, "nr_anon_partially_mapped"));
		EXPECT_DATA(p, 0, nr * per, per, fact_every_page);
		munmap(p, len);
	}
}

/*
 * A partial unmap: each of @nr folios of the PMD size or 64K loses pages
 * [@from, @to) (munmap or MADV_DONTNEED).  kthpscand confirms the partial
 * mapping with the rmap walk and splits each to @new_order, the largest
 * order at which every aligned block is mapped whole or not at all: the
 * unmapped part is freed (memcg), the mapped part stays in folios of
 * @new_order (kpageflags), counted at that size (thp_split_scan_to_mthp) and
 * traced (new_order).
 */
struct partial {
	bool pmd;
	bool dontneed;
	size_t from, to;	/* pages of the folio (of 512 for the PMD size) */
	unsigned int new_order;	/* (for a PMD size of 512 pages) */
};

static void partial_unmap(struct __test_metadata *_metadata,
			  struct _test_data_facts *self,
			  const struct partial *c, size_t nr)
{
	const size_t per = c->pmd ? self->per : 16;
	/* Pages given for 512-page THPs scale with the PMD size. */
	const size_t from = c->pmd ? c->from * per / 512 : c->from;
	const size_t to = c->pmd ? c->to * per / 512 : c->to;
	const unsigned int order = __builtin_ctzl(per);
	const unsigned int new_order = c->pmd ? c->new_order + order - 9 : c->new_order;
	const size_t fsz = per * self->psz, taken = to - from, bpages = 1UL << new_order;
	const unsigned long kb = fsz >> 10, new_kb = (bpages * self->psz) >> 10;
	long sp0, sd0, to0 = 0, tom0, tds0, rss0;
	unsigned long *heads = calloc(nr, sizeof(*heads));
	unsigned long *gone = calloc(nr * taken, sizeof(*gone));
	size_t i, b, whole = 0, blocks = 0;
	char *p;
	int t;

	ASSERT_NE(NULL, heads);
	ASSERT_NE(NULL, gone);
	set_sizes(self, c->pmd, !c->pmd);
	p = map_thp(nr * fsz, self->pmd);
	ASSERT_NE(NULL, p);
	fill(p, 0, nr * per, self->psz, per, fact_every_page);
	ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, heads));
	/* The pages to be unmapped, one by one. */
	for (i = 0; i < nr; i++)
		ASSERT_EQ(0, ts_pagemap_pfns(p + i * fsz + from * self->psz, taken,
					     gone + i * taken));
	/* Charged to the test's memcg, as anonymous memory: what is looked at below. */
	ASSERT_EQ(nr * taken, ts_charged_anon(gone, nr * taken, ts_cgroup_ino(CG_T), false));
	sp0 = STAT(kb, "thp_split_scan_partial");
	sd0 = STAT(kb, "split_deferred");
	tds0 = VMSTAT("thp_deferred_split_page");
	if (new_order >= 2)
		to0 = STAT(new_kb, "thp_split_scan_to_mthp");
	tom0 = ts_must_sum_stat(_metadata, "thp_split_scan_to_mthp");
	rss0 = rss_anon();
	ASSERT_EQ(0, ts_clear_trace());

	for (i = 0; i < nr; i++) {
		char *a = p + i * fsz + from * self->psz;
		int err = c->dontneed ? madvise(a, taken * self->psz, MADV_DONTNEED) :
					munmap(a, taken * self->psz);

		ASSERT_EQ(0, err);
	}
	/* Rss drops at once; the memcg is uncharged when the folios are split. */
	EXPECT_EQ((long)(nr * taken * self->psz >> 10), rss0 - (long)rss_anon());
	t = wait_split(heads, nr, "split_partially_mapped");
	EXPECT_EQ(nr, STAT(kb, "thp_split_scan_partial") - sp0) TH_LOG("after %d s", t);
	/* Each flagged once by the partial unmap, counted as 6.12 counts a flag. */
	EXPECT_EQ(nr, STAT(kb, "split_deferred") - sd0);
	EXPECT_EQ(c->pmd ? (long)nr : 0, VMSTAT("thp_deferred_split_page") - tds0);
	if (new_order >= 2) {
		EXPECT_EQ(nr, STAT(new_kb, "thp_split_scan_to_mthp") - to0);
		EXPECT_EQ(nr, ts_must_sum_stat(_metadata, "thp_split_scan_to_mthp") - tom0);
	} else {
		EXPECT_EQ(tom0, ts_must_sum_stat(_metadata, "thp_split_scan_to_mthp"));
	}
	/*
	 * The unmapped part is freed: none of its pages is still charged
	 * to the memcg as anonymous memory that nothing maps.  Page by page
	 * (kpagecgroup): memory.current would hide a leak of up to the
	 * per-CPU charge stock, 64 pages a CPU.
	 */
	EXPECT_EQ(0, ts_charged_anon(gone, nr * taken, ts_cgroup_ino(CG_T), true))
		TH_LOG("of %zu unmapped pages", nr * taken);

	/* Traced: the walk saw what is mapped, the split chose the order. */
	expect_split_partial(_metadata, heads, nr, order, per - taken, new_order);

	/* Every block still mapped is one folio of the new order. */
	for (i = 0; i < nr; i++)
		for (b = 0; b < per; b += bpages) {
			if (b >= from && b < to)
				continue;
			blocks++;
			whole += ts_whole_folios(p + i * fsz + b * self->psz, 1, bpages) == 1;
		}
	EXPECT_EQ(blocks, whole);
	EXPECT_TRUE(new_order < 2 || (flags_at(p) & (1ULL << KPF_THP)));

	for (i = 0; i < nr; i++) {
		EXPECT_DATA(p, i * per, i * per + from, per, fact_every_page);
		EXPECT_DATA(p, i * per + to, (i + 1) * per, per, fact_every_page);
		if (c->dontneed) {
			char *zero = calloc(taken, self->psz);

			ASSERT_NE(NULL, zero);
			EXPECT_EQ(0, memcmp(p + (i * per + from) * self->psz, zero,
					    taken * self->psz));
			free(zero);
		}
	}
	for (i = 0; i < nr; i++) {
		munmap(p + i * fsz, from * self->psz);
		munmap(p + i * fsz + to * self->psz, (per - to) * self->psz);
		if (c->dontneed)
			munmap(p + i * fsz + from * self->psz, taken * self->psz);
	}
	free(heads);
	free(gone);
}

/*
 * munmap of the second half of PMD THPs: split to THPs of half the PMD
 * size (order 8 with 4K pages); of pages 5-15 of 64K mTHPs: page 4 alone
 * in its 16K block, so nothing larger fits: split to base pages.
 */
TEST_F_TIMEOUT(facts, partial_munmap, 300)
{
	static const struct partial half_pmd = { true, false, 256, 512, 8 };
	static const struct partial m64_5_16 = { false, false, 5, 16, 0 };

	prepare(_metadata, self, true, false, AGE_MS);
	partial_unmap(_metadata, self, &half_pmd, 2);
	partial_unmap(_metadata, self, &m64_5_16, 8);
}

/*
 * MADV_DONTNEED of the last quarter of PMD THPs (split to order 7), of a
 * hole in the middle (pages 128-191: order 6 fits around it), and of the
 * last quarter of 64K mTHPs (order 2, 16K).
 */
TEST_F_TIMEOUT(facts, partial_dontneed, 300)
{
	static const struct partial quarter_pmd = { true, true, 384, 512, 7 };
	static const struct partial hole_pmd = { true, true, 128, 192, 6 };
	static const struct partial quarter_m64 = { false, true, 12, 16, 2 };

	prepare(_metadata, self, true, false, AGE_MS);
	partial_unmap(_metadata, self, &quarter_pmd, 2);
	partial_unmap(_metadata, self, &hole_pmd, 2);
	partial_unmap(_metadata, self, &quarter_m64, 8);
}

/*
 * PMD THPs split across two VMAs by mprotect() of their second half, then
 * unmapped whole by one munmap(), which goes VMA by VMA.  Each THP is
 * flagged partially mapped half way through, and counted as 6.12 counts
 * a flag (split_deferred and thp_deferred_split_page +1 each), with
 * thp_scan on or off: the counters keep their meaning whatever the knob
 * says.  With thp_scan on, kthpscand first sees each mapped whole through
 * its two VMAs and keeps it; after the munmap nothing is split.
 */
TEST_F_TIMEOUT(facts, mprotect_two_vmas_unmapped_whole, 300)
{
	const size_t nr = 16, per = self->per;
	long split0, tsp0, sd0, tds0, sp0, pm0;
	unsigned long heads[16], *pfns = calloc(nr * per, sizeof(*pfns));
	size_t i;
	int on;
	char *p;

	ASSERT_NE(NULL, pfns);
	prepare(_metadata, self, true, false, AGE_MS);
	for (on = 0; on <= 1; on++) {
		ASSERT_EQ(0, ts_put(THP_SCAN "enabled", on ? "1" : "0"));
		p = map_thp(nr * self->pmd, self->pmd);
		ASSERT_NE(NULL, p);
		fill(p, 0, nr * per, self->psz, per, fact_every_page);
		ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
		ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, heads));
		ASSERT_EQ(0, ts_pagemap_pfns(p, nr * per, pfns));
		ASSERT_EQ((long)(nr * per),
			  ts_charged_anon(pfns, nr * per, ts_cgroup_ino(CG_T), false));
		ASSERT_EQ(0, ts_clear_trace());
		for (i = 0; i < nr; i++)
			ASSERT_EQ(0, mprotect(p + i * self->pmd + self->pmd / 2,
					      self->pmd / 2, PROT_READ));
		/* Mapped by PTEs now, through two VMAs, every page. */
		EXPECT_EQ(0, ts_smaps_kb(p, "AnonHugePages:"));
		EXPECT_EQ(nr, ts_whole_folios(p, nr, per));
		EXPECT_DATA(p, 0, nr * per, per, fact_every_page);
		pm0 = STAT(self->pmd_kb, "nr_anon_partially_mapped");
		if (on)
			expect_decided(_metadata, heads, nr, "keep_used");
		split0 = STAT(self->pmd_kb, "split");
		tsp0 = VMSTAT("thp_split_page");
		sd0 = STAT(self->pmd_kb, "split_deferred");
		tds0 = VMSTAT("thp_deferred_split_page");
		sp0 = STAT(self->pmd_kb, "thp_split_scan_partial");

		ASSERT_EQ(0, munmap(p, nr * self->pmd));
		/*
		 * Freed, page by page (kpagecgroup): memory.current moves with
		 * the per-CPU charge stock (a flake hunt read 256 KiB more than
		 * the test's share), and kthpscand may hold one folio a moment.
		 */
		EXPECT_TRUE(POLL(!ts_charged_anon(pfns, nr * per, ts_cgroup_ino(CG_T), true), 10))
			TH_LOG("%ld of %zu pages still charged, thp_scan %d",
			       ts_charged_anon(pfns, nr * per, ts_cgroup_ino(CG_T), true),
			       nr * per, on);
		EXPECT_EQ(pm0, STAT(self->pmd_kb, "nr_anon_partially_mapped"));
		EXPECT_EQ((long)nr, STAT(self->pmd_kb, "split_deferred") - sd0)
			TH_LOG("thp_scan %d", on);
		EXPECT_EQ((long)nr, VMSTAT("thp_deferred_split_page") - tds0)
			TH_LOG("thp_scan %d", on);
		EXPECT_EQ(split0, STAT(self->pmd_kb, "split"));
		EXPECT_EQ(tsp0, VMSTAT("thp_split_page"));
		EXPECT_EQ(sp0, STAT(self->pmd_kb, "thp_split_scan_partial"));
	}
	free(pfns);
}

/*
 * Every PMD THP split as underused since the trace was cleared, by any
 * task, is one of the @n at @heads: a split by kthpscand or by the
 * shrinker fires thp_scan_split, and thp_underused_split_page is counted
 * nowhere else.
 */
static void expect_only_ours_underused(struct __test_metadata *_metadata,
				       struct _test_data_facts *self,
				       const unsigned long *heads, size_t n)
{
	struct trace_count all, ours;

	ts_count_trace(self->order_pmd, "split_underused", 0, &all);
	ts_count_trace_pfns(self->order_pmd, "split_underused", 0, heads, n, &ours);
	EXPECT_EQ((long)n, ours.splits);
	EXPECT_EQ(ours.splits, all.splits) TH_LOG("PMD THPs split as underused not the test's");
}

/*
 * The 6.12 counters of the deferred split keep their meaning, thp_scan on
 * or off: thp_underused_split_page counts PMD-sized THPs split as
 * underused, whoever splits them, and no mTHP (thp_scan counts those per
 * size, in hugepages-64kB/stats/thp_split_scan_underused); an underused
 * split is no flag (split_deferred, thp_deferred_split_page flat); a
 * partially mapped 64K mTHP is a flag of its size (split_deferred) and
 * no thp_deferred_split_page, which counts PMD-sized THPs only.
 *
 * thp_scan on: sparse PMD THPs and 64K mTHPs (page 7 of each written),
 * split by kthpscand as underused.  thp_scan off: sparse PMD THPs and 64K
 * mTHPs with their last quarter unmapped, split by the deferred split
 * shrinker, driven from this task (drop_caches=2), as 6.12 splits them:
 * the PMD THPs as underused (khugepaged's max_ptes_none is 0 here), the
 * mTHPs as partially mapped.
 *
 * These counters are system-wide, and read here exactly: nothing else in
 * the guest can move them meanwhile.  THPs of every size are made only in
 * madvised mappings (prepare()) and only this test madvises, so its
 * folios are the only THPs there are to flag or split; and the trace
 * says so: every PMD THP split as underused in the window is one of its
 * own (expect_only_ours_underused()).
 */
TEST_F_TIMEOUT(facts, underused_split_counts, 300)
{
	const size_t nr_pmd = 4, nr_m = 16, per_m = 16, quarter = per_m / 4;
	long usp0, su_p0, su_m0, vsu0, sd_p0, sd_m0, tds0, pm_m0;
	unsigned long heads_pmd[4], heads_m[16];
	struct ev_filter su_pmd = { true, "split_underused", heads_pmd, nr_pmd, 0, true };
	struct ev_filter su_m = { true, "split_underused", heads_m, nr_m, 0, true };
	struct ev_filter sp_m = { true, "split_partially_mapped", heads_m, nr_m, 0, true };
	char *pp, *pm;
	size_t i;
	int t;

	/* On: kthpscand keeps off until the baselines are read. */
	prepare(_metadata, self, true, false, "600000");
	fault_pmd_and_64k(_metadata, self, nr_pmd, nr_m, one_page, &pp, &pm);
	ASSERT_EQ(0, ts_head_pfns(pp, nr_pmd, self->per, self->psz, heads_pmd));
	ASSERT_EQ(0, ts_head_pfns(pm, nr_m, per_m, self->psz, heads_m));
	usp0 = VMSTAT("thp_underused_split_page");
	vsu0 = VMSTAT("thp_split_scan_underused");
	su_p0 = STAT(self->pmd_kb, "thp_split_scan_underused");
	su_m0 = STAT(M64_KB, "thp_split_scan_underused");
	sd_p0 = STAT(self->pmd_kb, "split_deferred");
	sd_m0 = STAT(M64_KB, "split_deferred");
	tds0 = VMSTAT("thp_deferred_split_page");
	ASSERT_EQ(0, ts_clear_trace());
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", AGE_MS));
	t = wait_split(heads_pmd, nr_pmd, "split_underused");
	t += wait_split(heads_m, nr_m, "split_underused");
	EXPECT_EQ(nr_pmd, ts_pfns_seen(&su_pmd)) TH_LOG("after %d s", t);
	EXPECT_EQ(nr_m, ts_pfns_seen(&su_m));
	expect_only_ours_underused(_metadata, self, heads_pmd, nr_pmd);
	/* The PMD THPs, not the mTHPs: those are thp_scan's per-size count. */
	EXPECT_EQ(nr_pmd, VMSTAT("thp_underused_split_page") - usp0);
	EXPECT_EQ(nr_pmd, STAT(self->pmd_kb, "thp_split_scan_underused") - su_p0);
	EXPECT_EQ(nr_m, STAT(M64_KB, "thp_split_scan_underused") - su_m0);
	EXPECT_EQ(nr_pmd + nr_m, VMSTAT("thp_split_scan_underused") - vsu0);
	/* No flag. */
	EXPECT_EQ(sd_p0, STAT(self->pmd_kb, "split_deferred"));
	EXPECT_EQ(sd_m0, STAT(M64_KB, "split_deferred"));
	EXPECT_EQ(tds0, VMSTAT("thp_deferred_split_page"));
	expect_sparse_split(_metadata, self, pp, nr_pmd, pm, nr_m);

	/*
	 * Off: sparse PMD THPs, and dense mTHPs then partially unmapped;
	 * split by this task, in the shrinker.
	 */
	ASSERT_EQ(0, ts_put(THP_SCAN "enabled", "0"));
	su_pmd.pid = getpid();
	sp_m.pid = getpid();
	set_sizes(self, true, false);
	pp = map_thp(nr_pmd * self->pmd, self->pmd);
	ASSERT_NE(NULL, pp);
	fill(pp, 0, nr_pmd * self->per, self->psz, self->per, one_page);
	ASSERT_EQ(nr_pmd, ts_whole_folios(pp, nr_pmd, self->per));
	set_sizes(self, false, true);
	pm = map_thp(nr_m * per_m * self->psz, self->pmd);
	ASSERT_NE(NULL, pm);
	fill(pm, 0, nr_m * per_m, self->psz, per_m, fact_every_page);
	ASSERT_EQ(nr_m, ts_whole_folios(pm, nr_m, per_m));
	ASSERT_EQ(0, ts_head_pfns(pp, nr_pmd, self->per, self->psz, heads_pmd));
	ASSERT_EQ(0, ts_head_pfns(pm, nr_m, per_m, self->psz, heads_m));
	usp0 = VMSTAT("thp_underused_split_page");
	su_m0 = STAT(M64_KB, "thp_split_scan_underused");
	sd_p0 = STAT(self->pmd_kb, "split_deferred");
	sd_m0 = STAT(M64_KB, "split_deferred");
	pm_m0 = STAT(M64_KB, "nr_anon_partially_mapped");
	tds0 = VMSTAT("thp_deferred_split_page");
	ASSERT_EQ(0, ts_clear_trace());
	for (i = 0; i < nr_m; i++)
		ASSERT_EQ(0, munmap(pm + (i * per_m + per_m - quarter) * self->psz,
				    quarter * self->psz));
	/* Each flagged by the unmap: a flag of its size, no PMD THP's. */
	EXPECT_EQ(nr_m, STAT(M64_KB, "split_deferred") - sd_m0);
	EXPECT_EQ(nr_m, STAT(M64_KB, "nr_anon_partially_mapped") - pm_m0);
	EXPECT_EQ(tds0, VMSTAT("thp_deferred_split_page"));
	EXPECT_EQ(sd_p0, STAT(self->pmd_kb, "split_deferred"));
	/*
	 * The shrinker leaves a folio younger than a jiffy for its next
	 * pass: shrink until each is split.
	 */
	t = WAIT_FOR(!ts_put("/proc/sys/vm/drop_caches", "2") &&
		     ts_pfns_seen(&su_pmd) == nr_pmd && ts_pfns_seen(&sp_m) == nr_m);
	EXPECT_EQ(nr_pmd, ts_pfns_seen(&su_pmd)) TH_LOG("after %d s", t);
	EXPECT_EQ(nr_m, ts_pfns_seen(&sp_m));
	expect_only_ours_underused(_metadata, self, heads_pmd, nr_pmd);
	EXPECT_EQ(nr_pmd, VMSTAT("thp_underused_split_page") - usp0);
	EXPECT_EQ(su_m0, STAT(M64_KB, "thp_split_scan_underused"));
	/* Counted once, when flagged: the split takes nothing back. */
	EXPECT_EQ(nr_m, STAT(M64_KB, "split_deferred") - sd_m0);
	EXPECT_EQ(pm_m0, STAT(M64_KB, "nr_anon_partially_mapped"));
	EXPECT_EQ(tds0, VMSTAT("thp_deferred_split_page"));
	EXPECT_EQ(sd_p0, STAT(self->pmd_kb, "split_deferred"));
	EXPECT_DATA(pp, 0, nr_pmd * self->per, self->per, one_page);
	for (i = 0; i < nr_m; i++)
		EXPECT_DATA(pm, i * per_m, (i + 1) * per_m - quarter, per_m,
			    fact_every_page);
	munmap(pp, nr_pmd * self->pmd);
	for (i = 0; i < nr_m; i++)
		munmap(pm + i * per_m * self->psz, (per_m - quarter) * self->psz);
}

/* Field @n (from 0) of /sys/block/zram0/io_stat; -1 if it cannot be read. */
static long zram_io_stat(int n)
{
	char buf[256], *s = buf;
	long v = -1;

	if (ts_get(ZRAM "io_stat", buf, sizeof(buf)))
		return -1;
	while (n-- >= 0)
		v = strtol(s, &s, 10);
	return v;
}

/*
 * A large folio in the swap cache mapped again only in part, which no
 * unmap ever flags, as a program that swapped out and came back gets it:
 * 64K mTHPs are swapped out by MADV_PAGEOUT, but their writes to zram
 * fail (its mem_limit at one page), so each stays in the swap cache,
 * unmapped, as after any failed or unfinished swap write; the second half
 * of each range is MADV_DONTNEED'ed and the first half read back from the
 * swap cache.  kthpscand finds each partially mapped from its mapcounts,
 * the walk confirms it, and it is split (to base pages: 6.12 splits a
 * folio in the swap cache only to order 0); the unmapped half is freed.
 *
 * (A pipe holding a page by vmsplice() does not keep a large folio in the
 * swap cache: shrink_folio_list() does not swap a large folio out at all
 * while can_split_folio() sees an extra reference.)
 */
TEST_F_TIMEOUT(facts, swapcache_partial_remap, 300)
{
	const size_t nr = 16, per = 16, half = per / 2, len = nr * per * self->psz;
	long sp0, sd0, pm0, out0, sc0, fail0;
	unsigned long heads[16], gone[16 * 8], pfn;
	size_t i;
	char *p;
	int t;

	/* kthpscand keeps off until the folios are half mapped again. */
	prepare(_metadata, self, false, true, "600000");
	zram_swap(_metadata, self, "64M");
	ASSERT_EQ(0, ts_put(ZRAM "mem_limit", "4096"));
	p = map_thp(len, self->pmd);
	ASSERT_NE(NULL, p);
	fill(p, 0, nr * per, self->psz, per, fact_every_page);
	ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, heads));
	sp0 = STAT(M64_KB, "thp_split_scan_partial");
	sd0 = STAT(M64_KB, "split_deferred");
	pm0 = STAT(M64_KB, "nr_anon_partially_mapped");
	out0 = STAT(M64_KB, "swpout");
	sc0 = MEMINFO_KB("SwapCached:");
	fail0 = zram_io_stat(1);
	ASSERT_GE(fail0, 0);

	ASSERT_EQ(0, madvise(p, len, MADV_PAGEOUT));
	/* Added to the swap cache and unmapped whole, the writes failed. */
	EXPECT_EQ(nr * per, swapped(p, nr * per, self->psz));
	EXPECT_EQ(nr, STAT(M64_KB, "swpout") - out0);
	EXPECT_EQ(nr, zram_io_stat(1) - fail0);
	EXPECT_GE(MEMINFO_KB("SwapCached:") - sc0, (long)(nr * M64_KB));
	for (i = 0; i < nr; i++)
		ASSERT_EQ(0, madvise(p + (i * per + half) * self->psz,
				     half * self->psz, MADV_DONTNEED));
	for (i = 0; i < nr; i++)
		EXPECT_DATA(p, i * per, i * per + half, per, fact_every_page);
	/* The same folios, half mapped again, never flagged. */
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(0, ts_pagemap_pfns(p + i * per * self->psz, 1, &pfn));
		EXPECT_EQ(heads[i], pfn) TH_LOG("folio %zu", i);
	}
	EXPECT_EQ(pm0, STAT(M64_KB, "nr_anon_partially_mapped"));
	EXPECT_EQ(sp0, STAT(M64_KB, "thp_split_scan_partial"));
	/* The unmapped halves: still charged, in the swap cache, mapped nowhere. */
	for (i = 0; i < nr; i++)
		for (pfn = 0; pfn < half; pfn++)
			gone[i * half + pfn] = heads[i] + half + pfn;
	EXPECT_EQ(nr * half, ts_charged_anon(gone, nr * half, ts_cgroup_ino(CG_T), true));

	ASSERT_EQ(0, ts_clear_trace());
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", AGE_MS));
	t = wait_split(heads, nr, "split_partially_mapped");
	EXPECT_EQ(nr, STAT(M64_KB, "thp_split_scan_partial") - sp0) TH_LOG("after %d s", t);
	/* Never flagged, so no deferred split counted: 6.12's meaning. */
	EXPECT_EQ(sd0, STAT(M64_KB, "split_deferred"));
	EXPECT_EQ(pm0, STAT(M64_KB, "nr_anon_partially_mapped"));
	/* In the swap cache: to base pages only. */
	expect_split_partial(_metadata, heads, nr, self->order_64k, half, 0);
	/* The unmapped halves are freed, every page of them (kpagecgroup). */
	EXPECT_EQ(0, ts_charged_anon(gone, nr * half, ts_cgroup_ino(CG_T), true))
		TH_LOG("of %zu unmapped pages", nr * half);
	for (i = 0; i < nr; i++) {
		EXPECT_DATA(p, i * per, i * per + half, per, fact_every_page);
		EXPECT_EQ(1, ts_whole_folios(p + i * per * self->psz, 1, 1));
	}
	munmap(p, len);
}

/*
 * fork(): the child unmaps the second half of each shared PMD THP.  While
 * the parent maps them whole (by PMD), kthpscand looks at them and keeps
 * them, nothing flagged; once the parent unmaps them, each is split to
 * half the PMD size (what the child still maps) and the other half freed.
 * The child checks its half: one folio of half the PMD size, every byte.
 */
TEST_F_TIMEOUT(facts, fork_child_unmaps_half, 300)
{
	const size_t nr = 4, per = self->per, half = per / 2;
	const unsigned long half_kb = self->pmd_kb / 2;
	long split0, sp0, sd0, pm0, to0;
	int to_child[2], to_parent[2], status, t;
	pid_t child;
	unsigned long heads[4], *gone = calloc(nr * half, sizeof(*gone));
	char c = 0;
	size_t i;
	char *p;

	prepare(_metadata, self, true, false, AGE_MS);
	p = map_thp(nr * self->pmd, self->pmd);
	ASSERT_NE(NULL, p);
	fill(p, 0, nr * per, self->psz, per, fact_every_page);
	ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, heads));
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	/* self is shared with the child: only the parent writes it. */
	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		char ok = 0;

		for (i = 0; i < nr; i++)
			if (munmap(p + i * self->pmd + self->pmd / 2, self->pmd / 2))
				_exit(1);
		if (write(to_parent[1], "u", 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(2);
		/* Split: what is left is one folio of half the size, same pages. */
		for (i = 0; i < nr; i++) {
			unsigned long pfn;

			if (ts_whole_folios(p + i * self->pmd, 1, half) != 1)
				ok |= 4;
			if (ts_pagemap_pfns(p + i * self->pmd, 1, &pfn) || pfn != heads[i])
				ok |= 8;
			if (check(p, i * per, i * per + half, self->psz, per,
				  fact_every_page) != -1)
				ok |= 16;
		}
		if (write(to_parent[1], &ok, 1) != 1)
			_exit(3);
		_exit(0);
	}
	self->child = child;
	ASSERT_EQ(1, read(to_parent[0], &c, 1));
	ASSERT_EQ('u', c);
	ASSERT_EQ(0, ts_clear_trace());
	split0 = STAT(self->pmd_kb, "split");
	sp0 = STAT(self->pmd_kb, "thp_split_scan_partial");
	sd0 = STAT(self->pmd_kb, "split_deferred");
	pm0 = STAT(self->pmd_kb, "nr_anon_partially_mapped");
	to0 = STAT(half_kb, "thp_split_scan_to_mthp");
	expect_decided(_metadata, heads, nr, "keep_used");
	EXPECT_EQ(split0, STAT(self->pmd_kb, "split"));
	EXPECT_EQ(pm0, STAT(self->pmd_kb, "nr_anon_partially_mapped"));
	EXPECT_EQ((long)(nr * self->pmd_kb), ts_smaps_kb(p, "AnonHugePages:"));
	EXPECT_DATA(p, 0, nr * per, per, fact_every_page);
	/* The halves only the parent maps: charged to the memcg, as anonymous memory. */
	ASSERT_NE(NULL, gone);
	for (i = 0; i < nr; i++)
		ASSERT_EQ(0, ts_pagemap_pfns(p + i * self->pmd + self->pmd / 2, half,
					     gone + i * half));
	ASSERT_EQ(nr * half, ts_charged_anon(gone, nr * half, ts_cgroup_ino(CG_T), false));

	ASSERT_EQ(0, munmap(p, nr * self->pmd));
	t = wait_split(heads, nr, "split_partially_mapped");
	EXPECT_EQ(nr, STAT(self->pmd_kb, "thp_split_scan_partial") - sp0) TH_LOG("after %d s", t);
	EXPECT_EQ(nr, STAT(self->pmd_kb, "split_deferred") - sd0);
	EXPECT_EQ(nr, STAT(half_kb, "thp_split_scan_to_mthp") - to0);
	/* The unmapped halves are freed, every page of them (kpagecgroup). */
	EXPECT_EQ(0, ts_charged_anon(gone, nr * half, ts_cgroup_ino(CG_T), true))
		TH_LOG("of %zu unmapped pages", nr * half);
	free(gone);
	expect_split_partial(_metadata, heads, nr, self->order_pmd, half,
			     self->order_pmd - 1);

	ASSERT_EQ(1, write(to_child[1], "c", 1));
	ASSERT_EQ(1, read(to_parent[0], &c, 1));
	EXPECT_EQ(0, c) TH_LOG("child's check: %#x", c);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	self->child = 0;
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
}

/*
 * mlocked sparse PMD THPs (one page of data each) stay whole for 20 s,
 * 40 times the minimum age (lowered to 500 ms): they are on the
 * unevictable list, which thp_scan does not walk, and any look at one
 * not moved there yet is keep_mlocked without a zero scan; no split, and
 * a khugepaged at its fastest collapses nothing there.  The control:
 * munlocked, back on the anon lists, the same THPs are split as
 * underused.
 */
TEST_F_TIMEOUT(facts, mlocked_sparse_kept, 400)
{
	const size_t nr = 8, per = self->per, len = nr * self->pmd;
	long km0, full0, looks, secs, n, j;
	struct thp_settings s;
	unsigned long heads[8], now_heads[8];
	struct ev_filter kept = { false, "keep_mlocked", heads, nr, 0, false };
	struct ev_filter any_split = { true, NULL, heads, nr, 0, false };
	struct ev_filter split_ok = { true, "split_underused", heads, nr, 0, true };
	struct thp_scan_event *ev;
	double start;
	char *p;
	int t;

	prepare(_metadata, self, true, false, "500");
	fact_thp_settings(self, true, false, &s);
	s.khugepaged.max_ptes_none = per - 1;
	s.khugepaged.scan_sleep_millisecs = 10;
	s.khugepaged.alloc_sleep_millisecs = 10;
	s.khugepaged.pages_to_scan = per * 64;
	thp_write_settings(&s);

	p = map_thp(len, self->pmd);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, mlock(p, len));
	fill(p, 0, nr * per, self->psz, per, one_page);
	ASSERT_EQ(nr, ts_whole_folios(p, nr, per));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, heads));
	km0 = STAT(self->pmd_kb, "thp_split_scan_keep_mlocked");
	full0 = ts_counter(_metadata, KHUGEPAGED "full_scans", NULL);
	ASSERT_EQ(0, ts_clear_trace());

	/*
	 * 20 s: 40 times the minimum age, and khugepaged's full scans.  The
	 * THPs are on the unevictable list, which thp_scan does not walk;
	 * one that mlock had not moved there yet is kept as mlocked.
	 */
	start = ts_mono_s();
	t = WAIT_FOR(ts_mono_s() - start >= 20 &&
		     ts_counter(_metadata, KHUGEPAGED "full_scans", NULL) > full0);
	looks = ts_events(&kept);
	secs = ts_mono_s() - start;
	ksft_print_msg("%ld looks at %zu mlocked THPs in %ld s\n", looks, nr, secs);
	EXPECT_GE(secs, 20) TH_LOG("after %d s", t);
	/* A system-wide counter: it counts these looks at least. */
	EXPECT_GE(STAT(self->pmd_kb, "thp_split_scan_keep_mlocked") - km0, looks);
	/* khugepaged passed over them. */
	EXPECT_GT(ts_counter(_metadata, KHUGEPAGED "full_scans", NULL), full0);
	/*
	 * Not split (by thp_scan: the trace; by anything: each range is
	 * still the same folio, whole) and not collapsed anew (the same
	 * pfns).
	 */
	EXPECT_EQ(0, ts_events(&any_split));
	EXPECT_EQ(nr, ts_whole_folios(p, nr, per));
	ASSERT_EQ(0, ts_head_pfns(p, nr, per, self->psz, now_heads));
	EXPECT_EQ(0, memcmp(heads, now_heads, sizeof(heads)));
	EXPECT_EQ((long)(nr * self->pmd_kb), ts_smaps_kb(p, "AnonHugePages:"));
	/* Every look at them: keep_mlocked, no page zero-scanned. */
	n = thp_scan_events(&ev);
	for (j = 0; j < n; j++) {
		if (ev[j].split || !ts_pfn_in(ev[j].pfn, heads, nr))
			continue;
		EXPECT_STREQ("keep_mlocked", ev[j].decision);
		EXPECT_EQ(0, ev[j].scanned);
	}
	free(ev);
	EXPECT_DATA(p, 0, nr * per, per, one_page);

	/* The control: munlocked, they are split as underused. */
	ASSERT_EQ(0, munlock(p, len));
	t = wait_split(heads, nr, "split_underused");
	EXPECT_EQ(nr, ts_events(&split_ok)) TH_LOG("after %d s", t);
	EXPECT_EQ(nr, ts_events(&any_split));
	EXPECT_EQ(0, ts_whole_folios(p, nr, per));
	EXPECT_EQ((long)(nr * self->psz >> 10), ts_smaps_kb(p, "Rss:"));
	EXPECT_DATA(p, 0, nr * per, per, one_page);
	munmap(p, len);
}

/*
 * A long-term pinned, mostly zero PMD THP (PIN_LONGTERM_TEST_START of one
 * of its pages through /sys/kernel/debug/gup_test, as RDMA or VFIO pin
 * buffers): kthpscand keeps it as pinned without a zero scan or a walk
 * (every look at it: no page scanned), looks at it at most once per minimum age
 * (2 s here), and does not split it; unpinned, it is split as underused.
 */
TEST_F_TIMEOUT(facts, pinned_mostly_zero, 300)
{
	const size_t per = self->per;
	const long age_ms = 2000;
	struct pin_longterm_test pin = { 0 };
	long kp0, su0, n, j, looks = 0;
	struct thp_scan_event *ev;
	unsigned long head;
	struct ev_filter f = { true, "split_underused", &head, 1 };
	struct ev_filter pinned = { false, "keep_pinned", &head, 1 };
	struct ev_filter any_split = { true, NULL, &head, 1 };
	double last = -1;
	char *p, *buf, *want;
	uint64_t user;
	int fd, t;

	prepare(_metadata, self, true, false, "2000");
	ASSERT_EQ(0, access(GUP_TEST, F_OK)) TH_LOG("needs CONFIG_GUP_TEST");
	fd = open(GUP_TEST, O_RDWR);
	ASSERT_GE(fd, 0);
	p = map_thp(self->pmd, self->pmd);
	ASSERT_NE(NULL, p);
	fill(p, 0, per, self->psz, per, one_page);
	ASSERT_EQ(1, ts_whole_folios(p, 1, per));
	ASSERT_EQ(0, ts_head_pfns(p, 1, per, self->psz, &head));
	pin.addr = (uintptr_t)(p + 7 * self->psz);
	pin.size = self->psz;
	ASSERT_EQ(0, ioctl(fd, PIN_LONGTERM_TEST_START, &pin));
	/* The pin holds page 7 of the THP: its data. */
	buf = malloc(self->psz);
	want = malloc(self->psz);
	ASSERT_TRUE(buf && want);
	user = (uintptr_t)buf;
	ASSERT_EQ(0, ioctl(fd, PIN_LONGTERM_TEST_READ, &user));
	page_data(want, self->psz, 7);
	EXPECT_EQ(0, memcmp(buf, want, self->psz));

	kp0 = STAT(self->pmd_kb, "thp_split_scan_keep_pinned");
	su0 = STAT(self->pmd_kb, "thp_split_scan_underused");
	ASSERT_EQ(0, ts_clear_trace());
	/* Four looks at the test's own THP, by its pfn. */
	t = WAIT_FOR(ts_events(&pinned) >= 4);
	EXPECT_GE(ts_events(&pinned), 4) TH_LOG("after %d s", t);
	n = thp_scan_events(&ev);
	for (j = 0; j < n; j++) {
		if (ev[j].split || ev[j].pfn != head)
			continue;
		EXPECT_STREQ("keep_pinned", ev[j].decision);
		EXPECT_EQ(0, ev[j].scanned);
		/* At most once per minimum age (a jiffy's rounding aside). */
		if (last >= 0) {
			EXPECT_GE((long)((ev[j].ts - last) * 1000), age_ms * 95 / 100)
				TH_LOG("looks %.3f s apart", ev[j].ts - last);
		}
		last = ev[j].ts;
		looks++;
	}
	free(ev);
	/*
	 * The counters, read after the trace, count these looks at least
	 * (kthpscand may have looked again since).  Not split: no split
	 * event on its pfn, still one whole THP.
	 */
	EXPECT_LE(looks, STAT(self->pmd_kb, "thp_split_scan_keep_pinned") - kp0);
	EXPECT_EQ(0, ts_events(&any_split));
	EXPECT_EQ(1, ts_whole_folios(p, 1, per));
	EXPECT_EQ((long)self->pmd_kb, ts_smaps_kb(p, "AnonHugePages:"));

	ASSERT_EQ(0, ioctl(fd, PIN_LONGTERM_TEST_STOP));
	t = wait_split(&head, 1, "split_underused");
	EXPECT_LE(1, STAT(self->pmd_kb, "thp_split_scan_underused") - su0) TH_LOG("after %d s", t);
	EXPECT_EQ(1, ts_events(&f));
	EXPECT_EQ(1, ts_events(&any_split));
	EXPECT_EQ((long)(self->psz >> 10), ts_smaps_kb(p, "Rss:"));
	EXPECT_DATA(p, 0, per, per, one_page);
	close(fd);
	free(buf);
	free(want);
	munmap(p, self->pmd);
}

THP_SCAN_HARNESS_MAIN
