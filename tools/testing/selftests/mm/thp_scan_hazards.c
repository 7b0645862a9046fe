// SPDX-License-Identifier: GPL-2.0
/*
 * Known THP hazards, with queued THPs that kthpscand then looks at:
 *
 * - A subpage of a sparse THP poisoned (MADV_HWPOISON) while a long-term
 *   pin keeps memory failure from splitting the THP: the process gets
 *   SIGBUS, and kthpscand keeps that THP without judging it (no page of
 *   it read) while it splits the other THPs; the data everywhere else is
 *   intact.
 * - The memcg of queued sparse THPs removed after its task left it (the
 *   THPs stay charged to the dying memcg, on its queue): kthpscand still
 *   finds and splits them, and the data is intact.
 * - userfaultfd write-protect on sparse THPs that kthpscand splits: the
 *   zero subpages it maps to the zero page stay write-protected, a write
 *   there still raises the WP fault.
 * - Soft-dirty: the split keeps each subpage's soft-dirty bit, set or
 *   clear, zero subpages included (x86_64; arm64 has no soft-dirty).
 * - KSM with use_zero_pages over sparse THPs and small zero pages, ksmd
 *   and kthpscand at work together: each THP is split once, by one or
 *   the other, every zero subpage ends on the zero page, KSM counts as
 *   its zero pages exactly the small pages it merged, equal pages are
 *   merged, the memory is freed once, and after the unmap KSM's zero-page
 *   count and the memcg are back where they were.
 * - MTE (arm64 with qemu/boot.sh --mte): THPs of a PROT_MTE mapping whose
 *   zero-filled granules carry tags are not split as underused (the split
 *   could not map them to the zero page: their tags are not its tags),
 *   partially mapped ones are split, and every granule reads back through
 *   its tagged pointer, with its tag, without a tag-check fault.
 *
 * The console checks of the boot (no KASAN, lockdep, WARNING, BUG, "Bad
 * page") apply as always.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/prctl.h>
#include <linux/userfaultfd.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"
#include "../../../../mm/gup_test.h"

#define CG_H		CG "thp_hazards/"
#define NR_THPS		8
/* The poisoned subpage of THP 0: a zero-filled one (page 7 holds data). */
#define POISONED	100
#define WAIT_SECS	60

FIXTURE(hazards) {
	struct thp_sizes z;
	pid_t child;
};

FIXTURE_SETUP(hazards)
{
	self->child = 0;
	thp_scan_setup(_metadata, &self->z, NULL);
	/* Nothing is looked at before the test says so. */
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "86400000"));
}

FIXTURE_TEARDOWN(hazards)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	thp_scan_teardown();
}

static sigjmp_buf sigbus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(sigbus_jmp, 1);
}

/* Page 7 of every THP holds data, every other page is zero; -1 skips one. */
static int sparse_except_poisoned(size_t pg, void *arg)
{
	const size_t *per = arg;

	if (pg == POISONED)
		return -1;
	return pg % *per == 7;
}

static int sparse_pages(size_t pg, void *arg)
{
	const size_t *per = arg;

	return pg % *per == 7;
}

/* Split the THPs of this task in [@p, @p + @len) to base pages (debugfs). */
static int split_range(char *p, size_t len)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "%d,%#lx,%#lx", getpid(), (unsigned long)p,
		 (unsigned long)p + len);
	return ts_put("/sys/kernel/debug/split_huge_pages", cmd);
}

/*
 * A poisoned subpage in a THP that memory failure could not split: in
 * 6.12 memory_failure() splits a THP before it takes the page away, so
 * kthpscand never meets a poisoned page in a large folio unless that
 * split failed.  It fails when something else holds a reference, as a
 * long-term pin does (RDMA, VFIO; here PIN_LONGTERM_TEST_START of page 7
 * through /sys/kernel/debug/gup_test): the THP stays whole and mapped,
 * the page flagged HWPoison, the folio has_hwpoisoned, and the process
 * gets SIGBUS at once.  Unpinned, the THP is one kthpscand may take: it
 * must not judge it (folio_contain_hwpoisoned_page(): a zero scan would
 * read the poisoned page, a split could not free it) and keeps it
 * (keep_not_judged, no page scanned), while it splits the seven other
 * sparse THPs.  Every byte but the poisoned page's reads as written.
 */
TEST_F_TIMEOUT(hazards, hwpoison_subpage_of_queued_thp, 120)
{
	size_t per = self->z.per;
	struct pin_longterm_test pin = { 0 };
	struct sigaction sa = { .sa_handler = on_sigbus };
	unsigned long heads[NR_THPS], pfn;
	struct ev_filter looked = { false, NULL, heads, NR_THPS, 0, false };
	struct ev_filter split = { true, NULL, heads, NR_THPS, 0, false };
	struct ev_filter split_ok = { true, "split_underused", heads + 1, NR_THPS - 1, 0, true };
	struct ev_filter poisoned = { false, NULL, heads, 1, 0, false };
	struct ev_filter not_judged = { false, "keep_not_judged", heads, 1, 0, false };
	struct thp_scan_event *ev;
	long bad, n, j, secs;
	int fd, kpf, got_sigbus;
	char *p;

	ASSERT_EQ(0, access("/proc/sys/vm/memory_failure_recovery", F_OK))
		TH_LOG("no CONFIG_MEMORY_FAILURE");
	fd = open("/sys/kernel/debug/gup_test", O_RDWR);
	ASSERT_GE(fd, 0) TH_LOG("no /sys/kernel/debug/gup_test: CONFIG_GUP_TEST?");
	p = ts_sparse_thps(&self->z, NR_THPS);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(NR_THPS, ts_whole_folios(p, NR_THPS, per));
	ASSERT_EQ(0, ts_head_pfns(p, NR_THPS, per, self->z.psz, heads));
	pin.addr = (uintptr_t)(p + 7 * self->z.psz);
	pin.size = self->z.psz;
	ASSERT_EQ(0, ioctl(fd, PIN_LONGTERM_TEST_START, &pin));

	ASSERT_EQ(0, sigaction(SIGBUS, &sa, NULL));
	got_sigbus = sigsetjmp(sigbus_jmp, 1);
	if (!got_sigbus)
		madvise(p + POISONED * self->z.psz, self->z.psz, MADV_HWPOISON);
	signal(SIGBUS, SIG_DFL);
	EXPECT_TRUE(got_sigbus) TH_LOG("MADV_HWPOISON: no SIGBUS");
	ASSERT_EQ(0, ioctl(fd, PIN_LONGTERM_TEST_STOP));
	close(fd);

	/* THP 0: still whole, the same folio, its page poisoned. */
	ASSERT_EQ(1, ts_whole_folios(p, 1, per));
	ASSERT_EQ(0, ts_pagemap_pfns(p + POISONED * self->z.psz, 1, &pfn));
	ASSERT_EQ(heads[0] + POISONED, pfn);
	kpf = open("/proc/kpageflags", O_RDONLY);
	ASSERT_GE(kpf, 0);
	ASSERT_TRUE(ts_kpageflags(kpf, pfn) & (1ULL << KPF_HWPOISON));
	close(kpf);

	ASSERT_EQ(0, ts_clear_trace());
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "0"));
	secs = kthpscand_deadline(0, 2);
	EXPECT_TRUE(POLL(ts_pfns_seen(&looked) == NR_THPS && ts_pfns_seen(&split_ok) == NR_THPS - 1,
			 secs))
		TH_LOG("%zu of %d looked at, %zu of %d split after %ld s", ts_pfns_seen(&looked),
		       NR_THPS, ts_pfns_seen(&split_ok), NR_THPS - 1, secs);
	/* The seven others split, once each; THP 0 never. */
	EXPECT_EQ(NR_THPS - 1, ts_events(&split_ok));
	EXPECT_EQ(NR_THPS - 1, ts_events(&split));
	EXPECT_EQ(0, ts_count_thps(p + self->z.pmd, NR_THPS - 1, self->z.pmd));
	EXPECT_EQ(1, ts_whole_folios(p, 1, per));
	/* Every look at THP 0: not judged, no page read. */
	EXPECT_LE(1, ts_events(&not_judged));
	/* From one read: THP 0 is looked at again at every round. */
	EXPECT_EQ(0, ts_log_other_decisions(&poisoned, "keep_not_judged", 8));
	n = thp_scan_events(&ev);
	for (j = 0; j < n; j++)
		if (!ev[j].split && ev[j].pfn == heads[0])
			EXPECT_EQ(0, ev[j].scanned);
	free(ev);

	/* Every byte but the poisoned page's reads as written. */
	bad = ts_check_pages(p, NR_THPS * per, self->z.psz, sparse_except_poisoned, &per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);

	/*
	 * 6.12 frees a large folio with a poisoned page whole, and the
	 * page allocator hands the poisoned page out again (fixed upstream
	 * later: only the healthy pages of such a folio are freed): the
	 * next test's THP got it, and its split could not map that zero
	 * subpage to the zero page.  Split THP 0 first (debugfs
	 * split_huge_pages, now that nothing pins it): a poisoned page
	 * freed on its own is kept out of the allocator.
	 */
	ASSERT_EQ(0, split_range(p, self->z.pmd));
	kpf = open("/proc/kpageflags", O_RDONLY);
	ASSERT_GE(kpf, 0);
	EXPECT_EQ(1, ts_folio_pages_at(kpf, heads[0] + POISONED, 2));
	close(kpf);
	munmap(p, NR_THPS * self->z.pmd);
}

TEST_F_TIMEOUT(hazards, memcg_removed_with_queued_thps, 120)
{
	size_t per = self->z.per;
	int ready[2], go[2], status;
	long split0;
	char c = 0;

	ASSERT_EQ(0, ts_put(CG "cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(!mkdir(CG_H, 0755) || errno == EEXIST);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	split0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");
	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (!self->child) {
		char pid[16], *p;
		long bad;

		snprintf(pid, sizeof(pid), "%d", getpid());
		if (ts_put(CG_H "cgroup.procs", pid))
			_exit(2);
		p = ts_sparse_thps(&self->z, NR_THPS);
		if (!p || !check_huge_anon(p, NR_THPS, self->z.pmd))
			_exit(3);
		/* Leave the memcg: the THPs stay charged to it. */
		if (ts_put(CG "cgroup.procs", pid))
			_exit(4);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(5);
		bad = ts_check_pages(p, NR_THPS * per, self->z.psz, sparse_pages, &per);
		if (bad != -1) {
			printf("# page %ld differs\n", bad);
			_exit(6);
		}
		_exit(ts_count_thps(p, NR_THPS, self->z.pmd) ? 7 : 0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* Removed with its charges: the memcg is offline, its queue stays. */
	ASSERT_EQ(0, rmdir(CG_H)) TH_LOG("rmdir: %s", strerror(errno));
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "0"));
	EXPECT_TRUE(POLL(ts_size_stat(self->z.pmd_kb, "thp_split_scan_underused") -
			 split0 >= NR_THPS, WAIT_SECS));
	TH_LOG("%ld of %d split; scanned %ld, rounds %ld",
	       ts_size_stat(self->z.pmd_kb, "thp_split_scan_underused") - split0, NR_THPS,
	       ts_size_stat(self->z.pmd_kb, "thp_split_scan_scanned"),
	       ts_keyed("/proc/vmstat", "thp_split_scan_rounds"));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the child: status %#x (6: bad data, 7: THPs left)", status);
}

/* The raw pagemap entries of @nr pages at @p into @e; 0 or -1. */
static int pagemap_entries(const char *p, size_t nr, uint64_t *e)
{
	size_t psz = getpagesize();
	ssize_t want = nr * sizeof(*e);
	int fd = open("/proc/self/pagemap", O_RDONLY), err = 0;

	if (fd < 0 || pread(fd, e, want, (uintptr_t)p / psz * sizeof(*e)) != want)
		err = -1;
	if (fd >= 0)
		close(fd);
	return err;
}

/* The pfn of a pagemap entry, 0 if not present. */
static unsigned long pm_pfn(uint64_t e)
{
	return e & PM_PRESENT ? e & ((1ULL << 55) - 1) : 0;
}

/* The pfn of the zero page: what a read of untouched small memory maps. */
static unsigned long zero_pfn(void)
{
	size_t psz = getpagesize();
	char *q = mmap(NULL, psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t e = 0;

	if (q == MAP_FAILED)
		return 0;
	(void)__atomic_load_n(q, __ATOMIC_RELAXED);
	if (pagemap_entries(q, 1, &e))
		e = 0;
	munmap(q, psz);
	return pm_pfn(e);
}

/* How many of the @nr pages at @p map the zero page; -1 if unknown. */
static long zero_mapped(const char *p, size_t nr)
{
	uint64_t *e = calloc(nr, sizeof(*e));
	unsigned long zpfn = zero_pfn();
	long n = -1;
	size_t i;

	if (e && zpfn && !pagemap_entries(p, nr, e))
		for (n = 0, i = 0; i < nr; i++)
			n += pm_pfn(e[i]) == zpfn;
	free(e);
	return n;
}

/*
 * Let kthpscand split the NR_THPS sparse THPs at @p (min_age 0), and
 * wait until it has: false if it did not within WAIT_SECS.  The wait is
 * on the split events of the test's own THPs, by their head pfns, which
 * fire once a split is over: neither a system-wide counter (another
 * task's sparse THP split meanwhile ended it with one of the test's
 * still to go) nor the mapping (a THP whose split is under way no longer
 * looks like one while its subpages are not all mapped again).
 */
static bool sparse_thps_split(struct __test_metadata *_metadata,
			      const struct thp_sizes *z, char *p, long split0)
{
	unsigned long heads[NR_THPS];
	struct ev_filter f = { true, "split_underused", heads, NR_THPS, 0, true };
	bool ok;

	if (ts_head_pfns(p, NR_THPS, z->per, z->psz, heads) || ts_clear_trace() ||
	    ts_put(THP_SCAN "min_age_millisecs", "0"))
		return false;
	ok = POLL(ts_pfns_seen(&f) == NR_THPS, WAIT_SECS);
	TH_LOG("%zu of %d sparse THPs split (%ld in the system), %ld whole THPs left",
	       ts_pfns_seen(&f), NR_THPS,
	       ts_size_stat(z->pmd_kb, "thp_split_scan_underused") - split0,
	       ts_count_thps(p, NR_THPS, z->pmd));
	return ok && !ts_count_thps(p, NR_THPS, z->pmd);
}

struct wp_write {
	char *addr;
	char val;
};

static void *wp_writer(void *arg)
{
	struct wp_write *w = arg;

	__atomic_store_n(w->addr, w->val, __ATOMIC_RELAXED);
	return NULL;
}

/*
 * Write to @addr from another thread; the write must raise a uffd-wp
 * fault at @addr's page on @uffd within 10 s, which is then resolved
 * (the page unprotected).  true if it did; the write then went through.
 */
static bool write_raises_wp(struct __test_metadata *_metadata, int uffd,
			    char *addr, char val)
{
	size_t psz = getpagesize();
	struct wp_write w = { .addr = addr, .val = val };
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct uffd_msg msg;
	struct uffdio_writeprotect wp = {
		.range = { .start = (uintptr_t)addr & ~(psz - 1), .len = psz },
		.mode = 0,
	};
	bool raised = false;
	pthread_t t;

	if (pthread_create(&t, NULL, wp_writer, &w))
		return false;
	if (poll(&pfd, 1, 10000) == 1 && read(uffd, &msg, sizeof(msg)) == sizeof(msg)) {
		raised = msg.event == UFFD_EVENT_PAGEFAULT &&
			 (msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP) &&
			 (msg.arg.pagefault.address & ~(psz - 1)) == wp.range.start;
		if (!raised)
			TH_LOG("unexpected uffd message: event %u flags %#llx address %#llx",
			       msg.event, (unsigned long long)msg.arg.pagefault.flags,
			       (unsigned long long)msg.arg.pagefault.address);
	} else {
		TH_LOG("no uffd-wp fault for the write at %p", addr);
	}
	/* Unprotected (and the writer woken) whatever happened. */
	if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp))
		TH_LOG("UFFDIO_WRITEPROTECT (off): %s", strerror(errno));
	pthread_join(t, NULL);
	return raised && __atomic_load_n(addr, __ATOMIC_RELAXED) == val;
}

TEST_F_TIMEOUT(hazards, uffd_wp_kept_by_split, 120)
{
	size_t per = self->z.per, nr = NR_THPS * per, i, bad_wp = 0, zero = 0;
	size_t len = NR_THPS * self->z.pmd;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	struct uffdio_writeprotect wp = { .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	unsigned long zpfn = zero_pfn();
	uint64_t *e;
	long split0, bad;
	int uffd, kpf;
	char *p;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, uffd) TH_LOG("userfaultfd: %s (CONFIG_USERFAULTFD?)", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api)) TH_LOG("UFFDIO_API: %s", strerror(errno));
	if (!(api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP)) {
		close(uffd);
		SKIP(return, "no userfaultfd write-protect for anonymous memory");
	}
	ASSERT_NE(0, zpfn);
	p = ts_sparse_thps(&self->z, NR_THPS);
	ASSERT_NE(NULL, p);
	ASSERT_TRUE(check_huge_anon(p, NR_THPS, self->z.pmd));
	split0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");

	reg.range.start = (uintptr_t)p;
	reg.range.len = len;
	wp.range = reg.range;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg))
		TH_LOG("UFFDIO_REGISTER: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_WRITEPROTECT, &wp))
		TH_LOG("UFFDIO_WRITEPROTECT: %s", strerror(errno));

	ASSERT_TRUE(sparse_thps_split(_metadata, &self->z, p, split0));

	/* Every subpage still write-protected, the zero ones on the zero page. */
	e = calloc(nr, sizeof(*e));
	ASSERT_NE(NULL, e);
	ASSERT_EQ(0, pagemap_entries(p, nr, e));
	for (i = 0; i < nr; i++) {
		bad_wp += !(e[i] & PM_UFFD_WP);
		zero += pm_pfn(e[i]) == zpfn;
	}
	EXPECT_EQ(0, bad_wp) TH_LOG("%zu of %zu subpages lost uffd-wp in the split", bad_wp, nr);
	/* The premise: the split did map the zero subpages to the zero page. */
	EXPECT_EQ(NR_THPS * (per - 1), zero);
	/* Which were not, and what pagemap and kpageflags said of them (up to 8). */
	kpf = open("/proc/kpageflags", O_RDONLY);
	for (i = 0, bad = 0; i < nr && bad < 8 && zero != NR_THPS * (per - 1); i++) {
		if (!sparse_pages(i, &per) && pm_pfn(e[i]) != zpfn) {
			TH_LOG("subpage %zu of THP %zu: pagemap %#llx, kpageflags %#llx",
			       i % per, i / per, (unsigned long long)e[i],
			       (unsigned long long)ts_kpageflags(kpf, pm_pfn(e[i])));
			bad++;
		}
	}
	if (kpf >= 0)
		close(kpf);
	free(e);
	bad = ts_check_pages(p, nr, self->z.psz, sparse_pages, &per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);

	/* Writes raise the WP fault: on the zero page and on a data page. */
	EXPECT_TRUE(write_raises_wp(_metadata, uffd, p + 100 * self->z.psz, 'z'));
	EXPECT_TRUE(write_raises_wp(_metadata, uffd, p + 7 * self->z.psz + 1, 'd'));
	close(uffd);
	munmap(p, len);
}

TEST_F_TIMEOUT(hazards, soft_dirty_kept_by_split, 120)
{
	size_t per = self->z.per, nr = NR_THPS * per, i, wrong = 0, zero = 0;
	size_t half = NR_THPS / 2 * per;
	unsigned long zpfn = zero_pfn();
	uint64_t *e, probe = 0;
	long split0, bad;
	char *p, *q;

	/* Is soft-dirty tracked at all? A new written page is soft-dirty. */
	q = mmap(NULL, self->z.psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, q);
	q[0] = 1;
	ASSERT_EQ(0, pagemap_entries(q, 1, &probe));
	munmap(q, self->z.psz);
	if (!(probe & PM_SOFT_DIRTY))
		SKIP(return, "no soft-dirty tracking (CONFIG_MEM_SOFT_DIRTY)");
	ASSERT_NE(0, zpfn);

	p = ts_sparse_thps(&self->z, NR_THPS);
	ASSERT_NE(NULL, p);
	ASSERT_TRUE(check_huge_anon(p, NR_THPS, self->z.pmd));
	split0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");
	/* Clean, then written again: THPs 0-3 soft-dirty, 4-7 clean. */
	ASSERT_EQ(0, ts_put("/proc/self/clear_refs", "4"));
	for (i = 0; i < NR_THPS / 2; i++)
		p[(i * per + 7) * self->z.psz] = ts_pattern(i * per + 7, 0);

	e = calloc(nr, sizeof(*e));
	ASSERT_NE(NULL, e);
	ASSERT_EQ(0, pagemap_entries(p, nr, e));
	for (i = 0; i < nr; i++)
		wrong += !!(e[i] & PM_SOFT_DIRTY) != (i < half);
	ASSERT_EQ(0, wrong) TH_LOG("%zu subpages not as written before the split", wrong);

	ASSERT_TRUE(sparse_thps_split(_metadata, &self->z, p, split0));
	ASSERT_EQ(0, pagemap_entries(p, nr, e));
	for (i = 0; i < nr; i++) {
		wrong += !!(e[i] & PM_SOFT_DIRTY) != (i < half);
		zero += pm_pfn(e[i]) == zpfn;
	}
	free(e);
	EXPECT_EQ(0, wrong) TH_LOG("%zu of %zu subpages changed soft-dirty in the split",
				   wrong, nr);
	EXPECT_EQ(NR_THPS * (per - 1), zero);
	bad = ts_check_pages(p, nr, self->z.psz, sparse_pages, &per);
	EXPECT_EQ(-1, bad) TH_LOG("page %ld differs", bad);
	munmap(p, NR_THPS * self->z.pmd);
}

#define KSM "/sys/kernel/mm/ksm/"
#define CG_K CG "thp_hazards_ksm/"
/*
 * Per THP: pages 0-15 equal in all THPs, 16-31 each its own (its number
 * in its first word), the rest zero.  THPs 0-3 are mergeable, 4-7 not.
 * And KSM_SMALL zero-filled small pages, mergeable, that no THP holds.
 */
#define KSM_EQUAL	16
#define KSM_OWN		16
#define KSM_THPS	(NR_THPS / 2)
#define KSM_SMALL	256

/*
 * A counter that may be negative (KSM's ksm_zero_pages is, after a fork
 * race of 6.12's own: README.md, "Stress"), which must exist.
 */
static long signed_counter(struct __test_metadata *_metadata, const char *path)
{
	char buf[32], *end;
	long v;

	ASSERT_EQ(0, ts_get(path, buf, sizeof(buf))) TH_LOG("cannot read %s", path);
	v = strtol(buf, &end, 10);
	ASSERT_TRUE(end != buf) TH_LOG("no number in %s", path);
	return v;
}

/* Page @pg's own contents, at @dst. */
static void own_page(char *dst, size_t pg, size_t psz)
{
	size_t off;

	for (off = 0; off < psz; off++)
		dst[off] = ts_pattern(pg, off);
	memcpy(dst, &pg, sizeof(pg));
}

TEST_F_TIMEOUT(hazards, ksm_zero_pages_and_thp_scan, 240)
{
	size_t per = self->z.per, psz = self->z.psz, nr = NR_THPS * per, i;
	const long want_zero = NR_THPS * (per - KSM_EQUAL - KSM_OWN);
	long split0, splits0, base, ksm_zero0, zero, kzero, merging, cur, by_scan;
	char *p, *small, *equal, *own;
	bool settled;

	ASSERT_EQ(0, access(KSM "run", F_OK)) TH_LOG("no KSM (CONFIG_KSM)");
	equal = malloc(psz);
	own = malloc(psz);
	ASSERT_TRUE(equal && own);
	memset(equal, 0x5a, psz);
	/* The fixture's setup again, in a memcg of its own. */
	thp_scan_setup(_metadata, &self->z, "thp_hazards_ksm");
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "86400000"));
	ASSERT_EQ(0, ts_put(KSM "run", "2"));	/* nothing merged from before */
	ksm_zero0 = signed_counter(_metadata, KSM "ksm_zero_pages");
	base = ts_must_long(_metadata, CG_K "memory.current");

	p = ts_map_aligned(NR_THPS * self->z.pmd, self->z.pmd);
	ASSERT_NE(NULL, p);
	for (i = 0; i < nr; i++) {
		if (i % per < KSM_EQUAL)
			memcpy(p + i * psz, equal, psz);
		else if (i % per < KSM_EQUAL + KSM_OWN)
			own_page(p + i * psz, i, psz);
	}
	ASSERT_TRUE(check_huge_anon(p, NR_THPS, self->z.pmd));
	small = ts_map_aligned(KSM_SMALL * psz, psz);
	ASSERT_NE(NULL, small);
	ASSERT_EQ(0, madvise(small, KSM_SMALL * psz, MADV_NOHUGEPAGE));
	for (i = 0; i < KSM_SMALL; i++) {
		small[i * psz] = 1;	/* a page of its own, then zero-filled */
		small[i * psz] = 0;
	}
	split0 = ts_must_stat(_metadata, self->z.pmd_kb, "thp_split_scan_underused");
	splits0 = ts_vm_counter(_metadata, "thp_split_page");
	ASSERT_EQ(0, madvise(p, KSM_THPS * self->z.pmd, MADV_MERGEABLE));
	ASSERT_EQ(0, madvise(small, KSM_SMALL * psz, MADV_MERGEABLE));

	/*
	 * ksmd first, until it has merged the small zero pages into the zero
	 * page; then kthpscand too.  ksmd splits the THPs it merges pages of
	 * (and the split maps their zero subpages to the zero page), so the
	 * two race for THPs 0-3; THPs 4-7 are kthpscand's alone.
	 */
	ASSERT_EQ(0, ts_put(KSM "use_zero_pages", "1"));
	ASSERT_EQ(0, ts_put(KSM "pages_to_scan", "256"));
	ASSERT_EQ(0, ts_put(KSM "sleep_millisecs", "50"));
	ASSERT_EQ(0, ts_put(KSM "run", "1"));
	ASSERT_TRUE(POLL(ts_keyed("/proc/self/ksm_stat", "ksm_zero_pages") >= KSM_SMALL, 120))
		TH_LOG("ksmd merged %ld zero pages",
		       ts_keyed("/proc/self/ksm_stat", "ksm_zero_pages"));
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "0"));

	/* Settled: no THP left, every zero subpage on the zero page, equal pages merged. */
	settled = POLL(!ts_count_thps(p, NR_THPS, self->z.pmd) &&
		       zero_mapped(p, nr) == want_zero &&
		       ts_get_long("/proc/self/ksm_merging_pages") == KSM_THPS * KSM_EQUAL, 180);
	/*
	 * kthpscand counts a split once it has returned, and the split that
	 * settled it may be visible before its count: a flake hunt read 3 of
	 * 4 and 7 of 8 (thp_split_page, which lags the same way).
	 */
	POLL(ts_size_stat(self->z.pmd_kb, "thp_split_scan_underused") - split0 >=
	     NR_THPS - KSM_THPS, 10);
	zero = zero_mapped(p, nr);
	kzero = ts_keyed("/proc/self/ksm_stat", "ksm_zero_pages");
	merging = ts_get_long("/proc/self/ksm_merging_pages");
	by_scan = ts_size_stat(self->z.pmd_kb, "thp_split_scan_underused") - split0;
	TH_LOG("%ld zero subpages on the zero page (want %ld); THPs split: %ld, %ld by kthpscand",
	       zero, want_zero, ts_vm_counter(_metadata, "thp_split_page") - splits0, by_scan);
	TH_LOG("KSM: %ld zero pages (want %d), %ld pages merged in this process (want %d)",
	       kzero, KSM_SMALL, merging, KSM_THPS * KSM_EQUAL);
	ASSERT_TRUE(settled);
	/*
	 * They add up: every THP split (settled), by one of the two,
	 * kthpscand at least THPs 4-7; KSM's zero pages are the small ones
	 * it merged, not the subpages a split put on the zero page.
	 */
	EXPECT_LE(NR_THPS - KSM_THPS, by_scan);
	EXPECT_EQ(KSM_SMALL, kzero);
	EXPECT_EQ(KSM_SMALL, zero_mapped(small, KSM_SMALL));
	/* The system's count of KSM zero pages grew by this process's. */
	EXPECT_EQ(kzero, signed_counter(_metadata, KSM "ksm_zero_pages") - ksm_zero0);
	/* Rss: the non-zero pages (a KSM page counts once per mapping). */
	EXPECT_EQ((long)(NR_THPS * (KSM_EQUAL + KSM_OWN) * psz / 1024),
		  ts_smaps_kb(p, "Rss:") + ts_smaps_kb(p + KSM_THPS * self->z.pmd, "Rss:"))
		TH_LOG("mergeable THPs' Rss %ld kB, the others' %ld kB", ts_smaps_kb(p, "Rss:"),
		       ts_smaps_kb(p + KSM_THPS * self->z.pmd, "Rss:"));
	EXPECT_EQ(0, ts_smaps_kb(small, "Rss:"));
	/* Charged: the own pages, the unmerged equal ones and one KSM page. */
	cur = ts_must_long(_metadata, CG_K "memory.current");
	EXPECT_LE(cur - base, (long)((NR_THPS * KSM_OWN + (NR_THPS - KSM_THPS) * KSM_EQUAL + 1) *
				     psz) + ts_memcg_slack())
		TH_LOG("memory.current %ld above the %ld before the mapping", cur - base, base);

	/* Every byte reads back; writes break the sharing where they land. */
	for (i = 0; i < nr; i++) {
		size_t in = i % per;

		if (in < KSM_EQUAL) {
			if (memcmp(p + i * psz, equal, psz))
				break;
		} else if (in < KSM_EQUAL + KSM_OWN) {
			own_page(own, i, psz);
			if (memcmp(p + i * psz, own, psz))
				break;
		} else if (!ts_is_zero(p + i * psz, psz)) {
			break;
		}
	}
	EXPECT_EQ(nr, i) TH_LOG("page %zu differs", i);
	EXPECT_TRUE(ts_is_zero(small, KSM_SMALL * psz));
	p[(KSM_EQUAL + KSM_OWN + 100) * psz] = 1;	/* a zero subpage of THP 0 */
	p[1 * psz] = 2;					/* an equal page of THP 0 */
	small[3 * psz] = 3;				/* a KSM zero page */
	EXPECT_EQ(1, p[(KSM_EQUAL + KSM_OWN + 100) * psz]);
	EXPECT_EQ(2, p[1 * psz]);
	EXPECT_EQ(3, small[3 * psz]);
	EXPECT_EQ(0x5a, p[(per + 1) * psz]);		/* the same page of THP 1 */
	EXPECT_EQ(0, p[(per + KSM_EQUAL + KSM_OWN + 100) * psz]);
	EXPECT_EQ(0, small[4 * psz]);
	EXPECT_EQ(KSM_SMALL - 1, ts_keyed("/proc/self/ksm_stat", "ksm_zero_pages"));

	/* Freed once: KSM's zero pages and the memcg back to where they were. */
	ASSERT_EQ(0, munmap(p, NR_THPS * self->z.pmd));
	ASSERT_EQ(0, munmap(small, KSM_SMALL * psz));
	EXPECT_EQ(ksm_zero0, signed_counter(_metadata, KSM "ksm_zero_pages"));
	EXPECT_TRUE(POLL(ts_get_long(CG_K "memory.current") - base <= ts_memcg_slack(), 10))
		TH_LOG("memory.current %ld, %ld before", ts_get_long(CG_K "memory.current"), base);
	free(equal);
	free(own);
}

#ifdef __aarch64__
#ifndef PROT_MTE
#define PROT_MTE	0x20
#endif
#ifndef HWCAP2_MTE
#define HWCAP2_MTE	BIT_ULL(18)	/* asm/hwcap.h */
#endif
#define MTE_GRANULE	16
#define NR_MTE_THPS	(NR_THPS + 2)	/* 8 sparse, 2 partially mapped */

static inline char *with_tag(char *p, unsigned int tag)
{
	return (char *)(((uintptr_t)p & ~(0xfUL << 56)) | ((uintptr_t)tag << 56));
}

/* Set the allocation tag of the granules of @len bytes at tagged @p. */
static void set_tags(char *p, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += MTE_GRANULE)
		asm volatile(".arch armv8.5-a+memtag\n\tstg %0, [%0]"
			     : : "r"(p + off) : "memory");
}

/* The allocation tag of the granule at @p. */
static unsigned int get_tag(char *p)
{
	char *r = p;

	asm volatile(".arch armv8.5-a+memtag\n\tldg %0, [%0]" : "+r"(r));
	return (uintptr_t)r >> 56 & 0xf;
}

static sigjmp_buf mte_jmp;
static int mte_faults;

static void on_sigsegv(int sig)
{
	__atomic_fetch_add(&mte_faults, 1, __ATOMIC_RELAXED);
	siglongjmp(mte_jmp, 1);
}

/*
 * Read @npages pages at @p through pointers tagged @tag: page @data of
 * them holds pattern(@first + @data), the others zero, and each granule
 * must still carry @tag.  Returns the first bad page, -1 if none, or -2
 * on a tag-check fault (SIGSEGV).
 */
static long check_tagged(char *p, size_t first, size_t npages, size_t data,
			 unsigned int tag, size_t psz)
{
	struct sigaction sa = { .sa_handler = on_sigsegv }, old;
	long bad = -1;
	size_t pg, off;

	sigaction(SIGSEGV, &sa, &old);
	if (sigsetjmp(mte_jmp, 1)) {
		bad = -2;
		goto out;
	}
	for (pg = 0; pg < npages && bad == -1; pg++) {
		char *t = with_tag(p + pg * psz, tag);

		for (off = 0; off < psz; off++)
			if (t[off] != (pg == data ? ts_pattern(first + pg, off) : 0)) {
				bad = pg;
				break;
			}
		for (off = 0; bad == -1 && off < psz; off += MTE_GRANULE)
			if (get_tag(t + off) != tag)
				bad = pg;
	}
out:
	sigaction(SIGSEGV, &old, NULL);
	return bad;
}

/*
 * What the trace says of the THPs whose heads are @heads: a decision on
 * each (@judged) and a split of each (@split).  -1 if the trace cannot
 * be read.
 */
static int head_events(const unsigned long *heads, int n, bool *judged, bool *split)
{
	struct thp_scan_event *ev;
	long k = thp_scan_events(&ev), m;
	int j;

	if (k < 0)
		return -1;
	memset(judged, 0, n * sizeof(*judged));
	memset(split, 0, n * sizeof(*split));
	for (m = 0; m < k; m++)
		for (j = 0; j < n; j++)
			if (ev[m].pfn == heads[j]) {
				judged[j] |= !ev[m].split;
				split[j] |= ev[m].split;
			}
	free(ev);
	return 0;
}
#endif /* __aarch64__ */

TEST_F_TIMEOUT(hazards, mte_tagged_zero_granules, 180)
{
#ifndef __aarch64__
	SKIP(return, "MTE is arm64's");
#else
	size_t per = self->z.per, psz = self->z.psz, pmd = self->z.pmd, i;
	bool judged[NR_MTE_THPS], split[NR_MTE_THPS], done = false;
	unsigned long heads[NR_MTE_THPS];
	const int rw_mte = PROT_READ | PROT_WRITE | PROT_MTE;
	long n, bad;
	char *p;

	if (!(getauxval(AT_HWCAP2) & HWCAP2_MTE))
		SKIP(return, "no MTE (arm64: qemu/boot.sh --mte)");
	ASSERT_EQ(0, prctl(PR_SET_TAGGED_ADDR_CTRL,
			   PR_TAGGED_ADDR_ENABLE | PR_MTE_TCF_SYNC | (0xfffeUL << PR_MTE_TAG_SHIFT),
			   0, 0, 0)) TH_LOG("PR_SET_TAGGED_ADDR_CTRL: %s", strerror(errno));
	/*
	 * THPs 0-3 (PROT_MTE): page 7 written, the granules of pages 8 on
	 * tagged 3, their data zero.  THPs 4-7 (no PROT_MTE, the control):
	 * page 7 written.  THPs 8-9 (PROT_MTE): page 7 written, every
	 * granule of the first half tagged 5, the second half unmapped.
	 */
	p = ts_map_aligned(NR_MTE_THPS * pmd, pmd);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, mprotect(p, NR_THPS / 2 * pmd, rw_mte))
		TH_LOG("PROT_MTE: %s", strerror(errno));
	ASSERT_EQ(0, mprotect(p + NR_THPS * pmd, (NR_MTE_THPS - NR_THPS) * pmd, rw_mte));
	for (i = 0; i < NR_MTE_THPS; i++)
		ts_fill_page(p, i * per + 7, psz);
	ASSERT_EQ(NR_MTE_THPS, ts_count_thps(p, NR_MTE_THPS, pmd))
		TH_LOG("not all PMD THPs, PROT_MTE or not");
	for (i = 0; i < NR_THPS / 2; i++)
		set_tags(with_tag(p + i * pmd + 8 * psz, 3), pmd - 8 * psz);
	for (i = NR_THPS; i < NR_MTE_THPS; i++)
		set_tags(with_tag(p + i * pmd, 5), pmd / 2);
	for (i = 0; i < NR_MTE_THPS; i++)
		ASSERT_EQ(0, ts_pagemap_pfns(p + i * pmd, 1, heads + i));
	for (i = NR_THPS; i < NR_MTE_THPS; i++)
		ASSERT_EQ(0, munmap(p + i * pmd + pmd / 2, pmd / 2));

	ASSERT_EQ(0, ts_clear_trace());
	ASSERT_EQ(0, ts_put(THP_SCAN "min_age_millisecs", "0"));
	/*
	 * Until kthpscand has judged THPs 0-3 and split 4-9: the control
	 * ones as underused, the partially mapped ones.
	 */
	for (n = 0; n < 10 * WAIT_SECS && !done; n++) {
		ASSERT_EQ(0, head_events(heads, NR_MTE_THPS, judged, split));
		for (done = true, i = 0; i < NR_MTE_THPS; i++)
			done &= i < NR_THPS / 2 ? judged[i] : split[i];
		if (!done)
			usleep(100000);
	}
	for (i = 0; i < NR_MTE_THPS; i++)
		TH_LOG("THP %zu: %s, %s", i, judged[i] ? "judged" : "not judged",
		       split[i] ? "split" : "not split");
	ASSERT_TRUE(done);
	/* Nothing split for zero granules the split could not free... */
	for (i = 0; i < NR_THPS / 2; i++)
		EXPECT_FALSE(split[i]) TH_LOG("THP %zu split", i);
	EXPECT_EQ(NR_THPS / 2, ts_count_thps(p, NR_THPS / 2, pmd));
	/* ...while the untagged ones were, their zero subpages freed. */
	EXPECT_EQ(0, ts_count_thps(p + NR_THPS / 2 * pmd, NR_THPS / 2, pmd));
	EXPECT_EQ((long)(NR_THPS / 2 * psz / 1024), ts_smaps_kb(p + NR_THPS / 2 * pmd, "Rss:"));

	/* Every granule reads back through its tag, with its tag. */
	for (i = 0; i < NR_MTE_THPS; i++) {
		size_t first = i * per;
		char *t = p + i * pmd;

		if (i < NR_THPS / 2) {
			bad = check_tagged(t, first, 8, 7, 0, psz);
			if (bad == -1) {
				bad = check_tagged(t + 8 * psz, first + 8, per - 8, -1, 3, psz);
				bad = bad >= 0 ? bad + 8 : bad;
			}
		} else if (i < NR_THPS) {
			bad = check_tagged(t, first, per, 7, 0, psz);
		} else {
			bad = check_tagged(t, first, per / 2, 7, 5, psz);
		}
		EXPECT_EQ(-1, bad) TH_LOG("THP %zu: %s %ld", i,
					  bad == -2 ? "tag-check fault" : "bad page", bad);
	}
	EXPECT_EQ(0, __atomic_load_n(&mte_faults, __ATOMIC_RELAXED));
	for (i = 0; i < NR_MTE_THPS; i++)
		munmap(p + i * pmd, i < NR_THPS ? pmd : pmd / 2);
#endif
}

THP_SCAN_HARNESS_MAIN
