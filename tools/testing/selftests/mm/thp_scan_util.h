/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the thp_scan and thp_policy selftests: sysfs and
 * procfs files read and written in one system call, counters that must
 * exist, bounded polls, memory that is mapped, filled and checked byte by
 * byte, the thp_scan trace events with the task that fired them, and the
 * state of the machine saved when a program starts and restored around
 * every test.
 */
#ifndef __THP_SCAN_UTIL_H
#define __THP_SCAN_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/kernel-page-flags.h>

#include "../kselftest.h"
#include "thp_settings.h"

#define THP "/sys/kernel/mm/transparent_hugepage/"
#define THP_SCAN THP "thp_scan/"
#define AUTO THP "auto/"
#define CG "/sys/fs/cgroup/"
#define TRACE "/sys/kernel/tracing/"
#define ZRAM "/sys/block/zram0/"

/* Write @val to @path in one write(); 0 or -errno. */
int ts_put(const char *path, const char *val);

/* Read @path into @buf, NUL-terminated; 0 or -errno. */
int ts_get(const char *path, char *buf, size_t len);

/* The number in @path; -1 if there is none. */
long ts_get_long(const char *path);

/*
 * The number that follows @key (e.g. "thpscan.cpus=") on the kernel command
 * line, where qemu/boot.sh says what the guest has; -1 if it is not there.
 */
long ts_cmdline_long(const char *key);

/* Empty the trace buffer: only an open with O_TRUNC does that. */
int ts_clear_trace(void);

/* The value of @key in a "key value" file such as /proc/vmstat; -1 if none. */
long ts_keyed(const char *path, const char *key);

/* A per-size counter, hugepages-<kb>kB/stats/<name>; -1 if there is none. */
long ts_size_stat(unsigned long kb, const char *name);

/* CLOCK_MONOTONIC, in seconds. */
double ts_mono_s(void);

/*
 * Poll @cond every 100 ms for up to @secs seconds; true as soon as it
 * holds.  The bound is what a test states as the most the kernel may
 * take, not a measurement.  It is a deadline on the clock, not a number
 * of polls: a condition that takes long to evaluate (a large trace read
 * and parsed each time) does not stretch it.
 */
#define POLL(cond, secs) ({					\
	double __end = ts_mono_s() + (secs);			\
	bool __ok;						\
								\
	while (!(__ok = (cond)) && ts_mono_s() < __end)		\
		usleep(100000);					\
	__ok;							\
})

/*
 * How much slower than the x86_64 test kernel under TCG a kernel may run
 * these tests: the debug kernel (KASAN, lockdep) is 3 to 5 times slower.
 * Deadlines are the knobs' times this much.
 */
#define KERNEL_SLOWDOWN 5

/*
 * The longest kthpscand may take, in seconds, to decide on a folio mapped
 * now and due: the minimum age (thp_scan/min_age_millisecs, or @age_ms
 * if not negative: for partially mapped folios, 0), then @rounds rounds,
 * each after a sleep of scan_sleep_millisecs, all KERNEL_SLOWDOWN times
 * over, and a second for the poll.
 */
long kthpscand_deadline(long age_ms, long rounds);

/* Field @key (e.g. "Rss:") in kB of the mapping that contains @addr; -1 if none. */
long ts_smaps_kb(void *addr, const char *key);

/*
 * Map @len bytes of anonymous memory aligned to @align; NULL on failure.
 * The mapping has PROT_NONE space on both sides, so that it never merges
 * with another: smaps then speaks of it alone.  After ts_exclusive_thps()
 * it is madvised MADV_HUGEPAGE.
 */
char *ts_map_aligned(size_t len, size_t align);

/*
 * The sum of stats/@name over every THP size that has it (e.g. nr_anon:
 * how many anon large folios there are), or -1 if one cannot be read.
 */
long ts_all_sizes_stat(const char *name);

/*
 * Make the test's THPs the only ones, where it reads figures that are
 * the system's (kthpscand's rounds and budget, the shrinker's queue,
 * per-size counters): the THP policy becomes "madvise" and every
 * mapping of ts_map_aligned() is madvised MADV_HUGEPAGE (no other task
 * in the guest madvises, so none gets a THP at fault), then wait up to
 * 3 s for the large folios of other tasks to be freed.  A size the test
 * then sets to "always" gives other tasks its THPs again: such a test
 * reads only its own pfns.  Madvised mappings also fault with direct
 * compaction (defrag "madvise"), and khugepaged registers their mm at
 * once.  Returns how many
 * large anon folios are left (0 when the setting is exclusive; another
 * task's long-lived ones stay), or -1 if the knobs cannot be used.
 */
long ts_exclusive_thps(void);

/*
 * The same wait, with the policy "madvise" only meanwhile and put back
 * after, and the mappings as they were: for a baseline that must not
 * count other tasks' large folios.
 */
long ts_quiet_thps(void);

/* Is every byte of @len at @p zero? */
bool ts_is_zero(const char *p, size_t len);

/*
 * The byte at offset @off of page @pg when that page holds data: never 0.
 * Its first 8 bytes spell the page's number, 7 bits a byte, so that no
 * two pages of a test's memory hold the same data: a collapse or a split
 * that put a page in another's place would be read back as a difference.
 */
char ts_pattern(size_t pg, size_t off);

void ts_fill_page(char *p, size_t pg, size_t psz);

/*
 * Every byte of @nr pages at @p: the pattern where @filled says so, zero
 * where it says no, not looked at where it says -1 (unmapped).  Returns
 * the first bad page, or -1.
 */
long ts_check_pages(const char *p, size_t nr, size_t psz,
		    int (*filled)(size_t pg, void *arg), void *arg);

/* One data page per folio of *@arg pages: page 7 of each (or its last). */
int ts_one_per_folio(size_t pg, void *arg);

int ts_every_page(size_t pg, void *arg);

/* The first half of each folio of *@arg pages is mapped (and checked), the rest not. */
int ts_first_half(size_t pg, void *arg);

/* What ts_dense_run() reads: the first @run pages of each PMD THP are data. */
struct dense_spec {
	size_t per;	/* pages per PMD THP */
	size_t run;	/* pages written at the start of each */
};

/* Page @pg holds data if it is in the run of its THP (*@arg), else zero. */
int ts_dense_run(size_t pg, void *arg);

/* One thp_scan_decision or thp_scan_split line of the trace. */
struct thp_scan_event {
	double ts;			/* the trace timestamp, in seconds */
	int pid;			/* the task that fired it */
	bool split;			/* thp_scan_split, else thp_scan_decision */
	unsigned long pfn;
	unsigned int order, zero, scanned, mapped;	/* decisions only */
	unsigned int new_order;				/* splits only */
	int ret;					/* splits only */
	char decision[32];
};

/* Parse @line; false if it is no thp_scan event. */
bool ts_parse_event(const char *line, struct thp_scan_event *e);

/*
 * The thp_scan events in the trace for folios of @order: decisions named
 * @decision (with the counts of the last one), and the splits decided so,
 * those that worked and those that failed.  @pid: only the events of that
 * task, or of any task if 0.  @pfns: only those on the @n folios there
 * (the test's own), or on any if NULL.
 */
struct trace_count {
	long decisions, splits, failed;
	unsigned int zero, scanned, mapped;
};

void ts_count_trace_pfns(unsigned int order, const char *decision, int pid,
			 const unsigned long *pfns, size_t n,
		      struct trace_count *c);

void ts_count_trace(unsigned int order, const char *decision, int pid,
		    struct trace_count *c);

/*
 * The page frame numbers behind @nr pages at @p, from /proc/self/pagemap
 * (root only): 0 for a page not present.  0 on success, -errno otherwise.
 */
int ts_pagemap_pfns(const char *p, size_t nr, unsigned long *pfns);

/* The /proc/kpageflags word of @pfn (fd @kpf); 0 if it cannot be read. */
uint64_t ts_kpageflags(int kpf, unsigned long pfn);

/*
 * How many pages the folio that starts at @pfn has, counting at most
 * @max: 1 for a page that is not the head of a large folio, else 1 + the
 * tail pages that follow it.  0 if @pfn is a tail page.
 */
unsigned long ts_folio_pages_at(int kpf, unsigned long pfn,
				unsigned long max);

/*
 * How many of the @nr ranges of @per pages at @p are each mapped whole by
 * one folio of exactly @per pages: the folio's head at the start, its
 * pages in order, and the page after it not part of it.  -1 if pagemap
 * or kpageflags cannot be read.
 */
long ts_whole_folios(const char *p, size_t nr, size_t per);

/*
 * The pfn of the first page of each of the @nr folios of @per pages at
 * @p, into @heads; 0 for one not present.  0, or -1 if pagemap cannot be
 * read.
 */
int ts_head_pfns(const char *p, size_t nr, size_t per, size_t psz,
		 unsigned long *heads);

bool ts_pfn_in(unsigned long pfn, const unsigned long *pfns, size_t n);

/* A u64 of one of the /proc/kpage* files, at @pfn; false if it cannot be read. */
bool ts_kpage_word(int fd, unsigned long pfn, uint64_t *v);

/*
 * How many of the @n pages at @pfns (pages of the test's own folios, their
 * pfns read from pagemap while they were mapped) are anonymous memory
 * charged to the memcg whose cgroup inode is @cg_ino; with @unmapped, only
 * those mapped nowhere (/proc/kpagecount 0): pages that a split, or no
 * split, left allocated and charged after the test unmapped them.  A page
 * that was freed belongs to no memcg (/proc/kpagecgroup 0) and is no
 * anonymous page; one the allocator gave out again is another memcg's,
 * or not anonymous, or mapped.  No per-CPU charge stock and no other
 * task's memory blurs this: it reads the test's pages one by one.  -1 if
 * the /proc/kpage* files cannot be read.
 */
long ts_charged_anon(const unsigned long *pfns, size_t n,
		     unsigned long long cg_ino, bool unmapped);

/*
 * The thp_scan events in the trace buffer (see ts_parse_event()) into *@out
 * (malloc'ed, the caller frees it).  Returns how many, or -1 if the trace
 * cannot be read.
 */
long thp_scan_events(struct thp_scan_event **out);

/* Up to @max thp_scan events of the trace into @ev; how many there are, or -1. */
int ts_read_events(struct thp_scan_event *ev, int max);

/*
 * A filter on the thp_scan events: decisions or splits, of one decision
 * value or any (NULL), on folios whose pfn is one of @pfns (the test's
 * own, from pagemap); of task @pid only if it is not 0, and for splits
 * only those that worked if @ok.
 */
struct ev_filter {
	bool split;
	const char *decision;
	const unsigned long *pfns;
	size_t n;
	int pid;
	bool ok;
};

/*
 * How many events in the trace match @f (-1 if it cannot be read); and in
 * *@seen, if not NULL, how many of the pfns have at least one.
 */
long ts_match_events(const struct ev_filter *f, size_t *seen);

long ts_events(const struct ev_filter *f);

size_t ts_pfns_seen(const struct ev_filter *f);

/*
 * The decisions of kthpscand on the folios of @f other than @want, from
 * one read of the trace (-1 if it cannot be read); the first @max of them
 * logged, each with its pfn and counts.
 */
long ts_log_other_decisions(const struct ev_filter *f, const char *want, int max);

/*
 * What the @per pages at @p map now, against the folio whose head was
 * @head: how many are present, how many still at @head's pfns, the first
 * present one's pfn and /proc/kpageflags word (see
 * Documentation/admin-guide/mm/pagemap.rst), into the test's output.
 */
void ts_log_range(const char *p, size_t per, unsigned long head);

/*
 * For each folio of @per pages whose head is among @f's pfns and that
 * has no event matching @f: the thp_scan events on any of its pfns, up
 * to @max of them, into the test's output (what happened to a folio a
 * test waited for in vain); and, if @p is not NULL, what the folio's
 * range maps now (ts_log_range()), the i-th folio's range at @p + i * @stride.
 */
void ts_log_missing_events(const struct ev_filter *f, size_t per, int max,
			   const char *p, size_t stride);

/*
 * How many huge_memory:mm_khugepaged_scan_pmd events in the trace ended
 * with @status (e.g. "exceed_new_pte") on a page among the @n pfns at
 * @pfns (the test's own range): khugepaged's verdict on that range.  -1
 * if the trace cannot be read.
 */
long khugepaged_scans(const char *status, const unsigned long *pfns,
		      size_t n);

/*
 * The pids of up to @max tasks whose name (/proc/PID/comm, with its
 * newline) starts with @prefix, into @pids; how many.
 */
int ts_pids_by_comm(const char *prefix, int *pids, int max);

/* The pid of kthpscand, or -1. */
int kthpscand_pid(void);

/* The state letter of task @pid (R, S, D...), or 0. */
char ts_task_state(int pid);

/* Does auto/state read @want? */
bool ts_auto_state_is(const char *want);

/*
 * Thresholds that put "auto" into pressure (or keep it plentiful)
 * whatever memory looks like, sampled every 100 ms; 0 or -errno.
 */
int ts_force_auto(bool pressure);

/* One huge_memory:thp_auto_state line of the trace. */
struct auto_event {
	bool pressure;
	unsigned int available_pct, psi_pct;
	unsigned long long memcg;	/* cgroup inode number, 0: the system */
	unsigned long long by;		/* whose signals decided; 0 if none */
};

/* Parse @line; false if it is no thp_auto_state event. */
bool ts_parse_auto_event(const char *line, struct auto_event *e);

/*
 * The states of memcg @memcg (0: the system) in the trace, in order, as
 * "pressure,plentiful,"; with @by non-zero, of its pressure events only
 * those decided by that memcg.  0 or -errno.
 */
int ts_auto_states(unsigned long long memcg, unsigned long long by,
		   char *out, size_t len);

/* The inode number of the cgroup at @path, as thp_auto_state names it; 0 if none. */
unsigned long long ts_cgroup_ino(const char *path);

/* How often task @pid went to sleep by itself; -1 if unknown. */
long ts_voluntary_switches(int pid);

/* How many files thp_auto_thresholds[] names. */
#define NR_THRESHOLDS 8

/* The auto thresholds, in the order they are restored. */
extern const char * const thp_auto_thresholds[];

/*
 * The state when the program started.  The 6.12 kselftest harness kills a
 * test that runs past its timeout together with its process group: its
 * FIXTURE_TEARDOWN does not run.  So every fixture of these programs
 * starts with thp_scan_reset() (undoing what a killed test left behind)
 * and ends with it, and the harness's own process, which outlives every
 * test, restores the state once more when it exits.
 */
void thp_scan_reset(void);

/*
 * Save the state for thp_scan_reset(), and have the calling process
 * restore it when it exits (thp_scan_main() does both first).
 */
void thp_scan_save_start(void);

/*
 * The same state in a file, for a process that outlives the programs:
 * qemu/init (through workbench/guest/thp_state.c) saves it at boot and
 * puts it back after a program killed at its time limit, whose exit
 * handler never ran.  0, or -errno.
 */
int thp_scan_state_to_file(const char *path);
int thp_scan_state_from_file(const char *path);

/*
 * How far memory.current may be off what a test's memory costs: each CPU
 * keeps up to MEMCG_CHARGE_BATCH (64) pages charged in advance, and kernel
 * memory (page tables, slab) is charged too.  Twice the per-CPU stocks.
 */
long ts_memcg_slack(void);

/*
 * Bring memory.stat of the cgroup at @cg (a path ending in '/', not the
 * root) and of its descendants up to date now: a read of memory.stat
 * flushes the per-CPU counts only past a threshold of updates, and the
 * kernel otherwise every 2 s; a read of a cgroup's cpu.stat flushes the
 * statistics of every controller in its subtree (cgroup_rstat_flush()).
 * 0 on success.
 */
int ts_flush_memcg_stats(const char *cg);

/*
 * Write one byte in each of @nr fresh PMD-sized (@pmd bytes) ranges,
 * MADV_HUGEPAGE first if @madv, read every byte of them back, unmap them
 * and return how many got a THP at fault; -1 if the memory cannot be
 * mapped or advised, -2 if a byte differs.
 */
long ts_fault_thps(size_t pmd, int nr, bool madv);

/* The page size and the PMD THP size (read_pmd_pagesize(), vm_util.h). */
struct thp_sizes {
	size_t psz, pmd, per;	/* bytes, bytes, pages per PMD THP */
	unsigned long pmd_kb;
	int order_pmd;
};

void thp_sizes(struct thp_sizes *z);

/*
 * How many of the @nr ranges of @size bytes at @p are each mapped by
 * one whole THP (/proc/kpageflags: a THP's head first, its last page
 * last); -1 if pagemap or kpageflags cannot be read.
 */
long ts_count_thps(char *p, size_t nr, size_t size);

/*
 * @nr PMD THPs with page 7 of each written (ts_one_per_folio()), which
 * thp_scan judges underused at any underused_zero_pct below 99; NULL if
 * the memory cannot be mapped.
 */
char *ts_sparse_thps(const struct thp_sizes *z, size_t nr);

/*
 * @nr PMD THPs, every page written, with the second half of each
 * unmapped: each partially mapped; NULL if that cannot be done.
 */
char *ts_half_mapped_thps(const struct thp_sizes *z, size_t nr);

/* Unmap what ts_half_mapped_thps() left mapped. */
void ts_unmap_halves(char *p, const struct thp_sizes *z, size_t nr);

/* Undo thp_scan_setup() and whatever the test changed. */
void thp_scan_teardown(void);

/*
 * The helpers below use the kselftest harness (struct __test_metadata,
 * ASSERT_*, EXPECT_*, test_harness_run()): they are for the programs,
 * which include ../kselftest_harness.h before this header, and stay
 * inline; thp_scan_util.c, which has no harness, does not see them.
 */
#ifdef __KSELFTEST_HARNESS_H
/* Run the tests, with the state saved first and restored at exit. */
static inline void thp_scan_main(int argc, char **argv)
{
	thp_scan_save_start();
	exit(test_harness_run(argc, argv));
}

/* TEST_HARNESS_MAIN, through thp_scan_main(). */
#define THP_SCAN_HARNESS_MAIN						\
	int main(int argc, char **argv)					\
	{								\
		thp_scan_main(argc, argv);				\
	}

/*
 * A counter that must exist: field @key of @path ("key value" lines), or
 * all of @path when @key is NULL.  The test fails if it cannot be read.
 */
static inline long ts_counter(struct __test_metadata *_metadata,
			      const char *path, const char *key)
{
	char buf[64];
	long v;

	if (key) {
		v = ts_keyed(path, key);
		if (v < 0)
			TH_LOG("%s missing in %s", key, path);
	} else {
		v = ts_get(path, buf, sizeof(buf)) ? -1 : strtol(buf, NULL, 10);
		if (v < 0)
			TH_LOG("cannot read %s", path);
	}
	if (v < 0)
		_metadata->exit_code = KSFT_FAIL;
	return v;
}

/* Counter @key of @path, which must exist: a missing one fails the test. */
static inline long ts_must_keyed(struct __test_metadata *_metadata,
				 const char *path, const char *key)
{
	long v = ts_keyed(path, key);

	ASSERT_GE(v, 0) TH_LOG("no counter %s in %s", key, path);
	return v;
}

static inline long ts_vm_counter(struct __test_metadata *_metadata, const char *key)
{
	return ts_must_keyed(_metadata, "/proc/vmstat", key);
}

/* Per-size counter @name of @kb-sized THPs, which must exist. */
static inline long ts_must_stat(struct __test_metadata *_metadata,
				unsigned long kb, const char *name)
{
	long v = ts_size_stat(kb, name);

	ASSERT_GE(v, 0) TH_LOG("no hugepages-%lukB/stats/%s", kb, name);
	return v;
}

/*
 * Per-size counter @name summed over every size (ts_all_sizes_stat()),
 * which the PMD size must have.
 */
static inline long ts_must_sum_stat(struct __test_metadata *_metadata, const char *name)
{
	ASSERT_LE(0, ts_size_stat(read_pmd_pagesize() >> 10, name))
		TH_LOG("no hugepages-*/stats/%s", name);
	return ts_all_sizes_stat(name);
}

/* The number in @path, which must exist. */
static inline long ts_must_long(struct __test_metadata *_metadata, const char *path)
{
	long v = ts_get_long(path);

	ASSERT_GE(v, 0) TH_LOG("no number in %s", path);
	return v;
}

/*
 * The setup most thp_scan tests share, after the state reset: PMD THPs
 * at fault and no other size, in the test's mappings only
 * (ts_exclusive_thps(): the policy "madvise", the mappings madvised),
 * khugepaged collapsing nothing behind the test's back (max_ptes_none 0),
 * the test's task in the memcg CG @cg (none if NULL), and the thp_scan
 * events traced into an empty buffer.
 */
static inline void thp_scan_setup(struct __test_metadata *_metadata,
				  struct thp_sizes *z, const char *cg)
{
	struct thp_settings s;
	char path[128], pid[16];
	long left;
	int i;

	thp_scan_reset();
	ASSERT_EQ(0, access(THP_SCAN "min_age_millisecs", F_OK))
		TH_LOG("no thp_scan knobs: CONFIG_THP_SCAN=n?");
	thp_sizes(z);
	ASSERT_NE(0, z->pmd);
	thp_read_settings(&s);
	s.thp_enabled = THP_MADVISE;
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = THP_NEVER;
	s.hugepages[z->order_pmd].enabled = THP_INHERIT;
	s.khugepaged.max_ptes_none = 0;
	thp_write_settings(&s);
	left = ts_exclusive_thps();
	ASSERT_LE(0, left);
	if (left)
		TH_LOG("%ld large anon folios of other tasks still there", left);
	if (cg) {
		ASSERT_EQ(0, ts_put(CG "cgroup.subtree_control", "+memory"));
		snprintf(path, sizeof(path), CG "%s", cg);
		ASSERT_TRUE(!mkdir(path, 0755) || errno == EEXIST);
		snprintf(path, sizeof(path), CG "%s/cgroup.procs", cg);
		snprintf(pid, sizeof(pid), "%d", getpid());
		ASSERT_EQ(0, ts_put(path, pid));
	}
	ASSERT_EQ(0, ts_put(TRACE "events/thp_scan/enable", "1"));
	ASSERT_EQ(0, ts_clear_trace());
}

/*
 * Wait until kthpscand is between rounds for good: asleep (S) and
 * thp_split_scan_rounds the same over two polls 200 ms apart, for up to 5 s
 * (a round of a few THPs takes milliseconds).
 * Only meaningful when nothing can start a round: thp_scan off, or every
 * large folio younger than the minimum age and the sleep longer.
 */
static inline void wait_kthpscand_idle(struct __test_metadata *_metadata, int pid)
{
	long rounds = ts_vm_counter(_metadata, "thp_split_scan_rounds"), now;
	int i, still = 0;

	for (i = 0; i < 25 && still < 2; i++) {
		usleep(200000);
		now = ts_vm_counter(_metadata, "thp_split_scan_rounds");
		still = now == rounds && ts_task_state(pid) == 'S' ? still + 1 : 0;
		rounds = now;
	}
	ASSERT_EQ(2, still) TH_LOG("kthpscand still at work after 5 s");
}
#endif /* __KSELFTEST_HARNESS_H */

#endif /* __THP_SCAN_UTIL_H */
