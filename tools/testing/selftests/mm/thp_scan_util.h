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
static inline int put(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

/* Read @path into @buf, NUL-terminated; 0 or -errno. */
static inline int get(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* The number in @path; -1 if there is none. */
static inline long get_long(const char *path)
{
	char buf[64];

	if (get(path, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/*
 * The number that follows @key (e.g. "thpscan.cpus=") on the kernel command
 * line, where qemu/boot.sh says what the guest has; -1 if it is not there.
 */
static inline long cmdline_long(const char *key)
{
	char cmdline[4096], *e;

	if (get("/proc/cmdline", cmdline, sizeof(cmdline)))
		return -1;
	e = strstr(cmdline, key);
	return e ? strtol(e + strlen(key), NULL, 10) : -1;
}

/* Empty the trace buffer: only an open with O_TRUNC does that. */
static inline int clear_trace(void)
{
	int fd = open(TRACE "trace", O_WRONLY | O_TRUNC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* The value of @key in a "key value" file such as /proc/vmstat; -1 if none. */
static inline long keyed(const char *path, const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ' ')
			v = strtol(line + strlen(key) + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* A per-size counter, hugepages-<kb>kB/stats/<name>; -1 if there is none. */
static inline long size_stat(unsigned long kb, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), THP "hugepages-%lukB/stats/%s", kb, name);
	return get_long(path);
}

/* CLOCK_MONOTONIC, in seconds. */
static inline double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Poll @cond every 100 ms for up to @secs seconds; true as soon as it
 * holds.  The bound is what a test states as the most the kernel may
 * take, not a measurement.  It is a deadline on the clock, not a number
 * of polls: a condition that takes long to evaluate (a large trace read
 * and parsed each time) does not stretch it.
 */
#define POLL(cond, secs) ({					\
	double __end = mono_s() + (secs);			\
	bool __ok;						\
								\
	while (!(__ok = (cond)) && mono_s() < __end)		\
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
static inline long kthpscand_deadline(long age_ms, long rounds)
{
	long sleep_ms = get_long(THP_SCAN "scan_sleep_millisecs");

	if (age_ms < 0)
		age_ms = get_long(THP_SCAN "min_age_millisecs");
	if (age_ms < 0 || sleep_ms < 0)
		return 600;
	return (age_ms + rounds * sleep_ms) * KERNEL_SLOWDOWN / 1000 + 1;
}

/* Field @key (e.g. "Rss:") in kB of the mapping that contains @addr; -1 if none. */
static inline long smaps_kb(void *addr, const char *key)
{
	unsigned long start, end;
	char line[256];
	long v = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)addr >= start && (uintptr_t)addr < end;
			continue;
		}
		if (in && !strncmp(line, key, strlen(key)))
			v = strtol(line + strlen(key), NULL, 10);
	}
	if (f)
		fclose(f);
	return v;
}

/*
 * Map @len bytes of anonymous memory aligned to @align; NULL on failure.
 * The mapping has PROT_NONE space on both sides, so that it never merges
 * with another: smaps then speaks of it alone.
 */
static inline char *map_aligned(size_t len, size_t align)
{
	char *raw = mmap(NULL, len + 2 * align, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)raw + align) & ~(align - 1));
	if (mprotect(p, len, PROT_READ | PROT_WRITE))
		return NULL;
	return p;
}

/* Is every byte of @len at @p zero? */
static inline bool is_zero(const char *p, size_t len)
{
	static const char zero[4096];
	size_t n;

	for (; len; p += n, len -= n) {
		n = len < sizeof(zero) ? len : sizeof(zero);
		if (memcmp(p, zero, n))
			return false;
	}
	return true;
}

/*
 * The byte at offset @off of page @pg when that page holds data: never 0.
 * Its first 8 bytes spell the page's number, 7 bits a byte, so that no
 * two pages of a test's memory hold the same data: a collapse or a split
 * that put a page in another's place would be read back as a difference.
 */
static inline char pattern(size_t pg, size_t off)
{
	if (off < 8)
		return (char)((((uint64_t)pg >> (7 * off)) & 0x7f) << 1 | 1);
	return (char)(((pg * 2654435761u) >> 7) + off * 31 + 1) | 1;
}

static inline void fill_page(char *p, size_t pg, size_t psz)
{
	size_t off;

	for (off = 0; off < psz; off++)
		p[pg * psz + off] = pattern(pg, off);
}

/*
 * Every byte of @nr pages at @p: the pattern where @filled says so, zero
 * where it says no, not looked at where it says -1 (unmapped).  Returns
 * the first bad page, or -1.
 */
static inline long check_pages(const char *p, size_t nr, size_t psz,
			       int (*filled)(size_t pg, void *arg), void *arg)
{
	size_t pg, off;

	for (pg = 0; pg < nr; pg++) {
		int f = filled(pg, arg);

		if (f < 0)
			continue;
		for (off = 0; off < psz; off++)
			if (p[pg * psz + off] != (f ? pattern(pg, off) : 0))
				return pg;
	}
	return -1;
}

/* One data page per folio of *@arg pages: page 7 of each (or its last). */
static inline int one_per_folio(size_t pg, void *arg)
{
	size_t per = *(size_t *)arg;

	return pg % per == (per > 7 ? 7 : per - 1);
}

static inline int every_page(size_t pg, void *arg)
{
	return 1;
}

/* The first half of each folio of *@arg pages is mapped (and checked), the rest not. */
static inline int first_half(size_t pg, void *arg)
{
	size_t per = *(size_t *)arg;

	return pg % per < per / 2 ? 1 : -1;
}

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
static inline bool parse_event(const char *line, struct thp_scan_event *e)
{
	const char *b = strchr(line, '['), *s = line, *dash, *ev;

	memset(e, 0, sizeof(*e));
	ev = strstr(line, ": thp_scan_decision: ");
	if (!ev) {
		ev = strstr(line, ": thp_scan_split: ");
		e->split = true;
	}
	if (!ev || !b || b > ev)
		return false;
	/* "  comm-pid  [cpu] ...": the pid follows the last '-' before '['. */
	while (*s == ' ')
		s++;
	for (dash = b; dash > s && *dash != '-'; dash--)
		;
	if (*dash != '-')
		return false;
	e->pid = atoi(dash + 1);
	/* The timestamp is the word before the event's name. */
	for (s = ev + 1; s > line && s[-1] != ' '; s--)
		;
	e->ts = strtod(s, NULL);
	if (e->split)
		return sscanf(strstr(ev, "pfn="),
			      "pfn=%lx order=%u new_order=%u decision=%31s ret=%d",
			      &e->pfn, &e->order, &e->new_order, e->decision,
			      &e->ret) == 5;
	return sscanf(strstr(ev, "pfn="),
		      "pfn=%lx order=%u zero=%u scanned=%u mapped=%u decision=%31s",
		      &e->pfn, &e->order, &e->zero, &e->scanned, &e->mapped,
		      e->decision) == 6;
}

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

static inline void count_trace_pfns(unsigned int order, const char *decision, int pid,
				    const unsigned long *pfns, size_t n,
				    struct trace_count *c)
{
	struct thp_scan_event e;
	char line[512];
	FILE *f = fopen(TRACE "trace", "r");
	size_t i;

	memset(c, 0, sizeof(*c));
	while (f && fgets(line, sizeof(line), f)) {
		if (!parse_event(line, &e) || e.order != order ||
		    strcmp(e.decision, decision) || (pid && e.pid != pid))
			continue;
		for (i = 0; i < n && pfns[i] != e.pfn; i++)
			;
		if (pfns && i == n)
			continue;
		if (!e.split) {
			c->decisions++;
			c->zero = e.zero;
			c->scanned = e.scanned;
			c->mapped = e.mapped;
		} else if (e.ret) {
			c->failed++;
		} else {
			c->splits++;
		}
	}
	if (f)
		fclose(f);
}

static inline void count_trace(unsigned int order, const char *decision, int pid,
			       struct trace_count *c)
{
	count_trace_pfns(order, decision, pid, NULL, 0, c);
}

/*
 * The page frame numbers behind @nr pages at @p, from /proc/self/pagemap
 * (root only): 0 for a page not present.  0 on success, -errno otherwise.
 */
static inline int pagemap_pfns(const char *p, size_t nr, unsigned long *pfns)
{
	size_t psz = getpagesize(), i;
	uint64_t *e = malloc(nr * sizeof(*e));
	int fd = open("/proc/self/pagemap", O_RDONLY), err = 0;
	ssize_t want = nr * sizeof(*e);

	if (fd < 0 || !e ||
	    pread(fd, e, want, (uintptr_t)p / psz * sizeof(*e)) != want)
		err = fd < 0 ? -errno : -EIO;
	for (i = 0; !err && i < nr; i++)
		/* Bit 63: present; bits 0-54: the pfn. */
		pfns[i] = (e[i] >> 63) ? e[i] & ((1ULL << 55) - 1) : 0;
	if (fd >= 0)
		close(fd);
	free(e);
	return err;
}

/* The /proc/kpageflags word of @pfn (fd @kpf); 0 if it cannot be read. */
static inline uint64_t kpageflags(int kpf, unsigned long pfn)
{
	uint64_t flags = 0;

	if (pread(kpf, &flags, sizeof(flags), pfn * sizeof(flags)) != sizeof(flags))
		return 0;
	return flags;
}

/*
 * How many pages the folio that starts at @pfn has, counting at most
 * @max: 1 for a page that is not the head of a large folio, else 1 + the
 * tail pages that follow it.  0 if @pfn is a tail page.
 */
static inline unsigned long folio_pages_at(int kpf, unsigned long pfn,
					   unsigned long max)
{
	uint64_t f = kpageflags(kpf, pfn);
	unsigned long n = 1;

	if (f & (1ULL << KPF_COMPOUND_TAIL))
		return 0;
	if (!(f & (1ULL << KPF_COMPOUND_HEAD)))
		return 1;
	while (n < max && (kpageflags(kpf, pfn + n) & (1ULL << KPF_COMPOUND_TAIL)))
		n++;
	return n;
}

/*
 * How many of the @nr ranges of @per pages at @p are each mapped whole by
 * one folio of exactly @per pages: the folio's head at the start, its
 * pages in order, and the page after it not part of it.  -1 if pagemap
 * or kpageflags cannot be read.
 */
static inline long whole_folios(const char *p, size_t nr, size_t per)
{
	unsigned long *pfns = calloc(nr * per, sizeof(*pfns));
	int kpf = open("/proc/kpageflags", O_RDONLY);
	long n = -1;
	size_t i, j;

	if (pfns && kpf >= 0 && !pagemap_pfns(p, nr * per, pfns)) {
		for (n = 0, i = 0; i < nr; i++) {
			unsigned long *f = pfns + i * per;

			for (j = 1; j < per && f[0] && f[j] == f[0] + j; j++)
				;
			if (f[0] && j == per && folio_pages_at(kpf, f[0], per + 1) == per)
				n++;
		}
	}
	if (kpf >= 0)
		close(kpf);
	free(pfns);
	return n;
}

/*
 * The pfn of the first page of each of the @nr folios of @per pages at
 * @p, into @heads; 0 for one not present.  0, or -1 if pagemap cannot be
 * read.
 */
static inline int head_pfns(const char *p, size_t nr, size_t per, size_t psz,
			    unsigned long *heads)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (pagemap_pfns(p + i * per * psz, 1, heads + i))
			return -1;
	return 0;
}

static inline bool pfn_in(unsigned long pfn, const unsigned long *pfns, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pfns[i] == pfn)
			return true;
	return false;
}

/* A u64 of one of the /proc/kpage* files, at @pfn; false if it cannot be read. */
static inline bool kpage_word(int fd, unsigned long pfn, uint64_t *v)
{
	return pread(fd, v, sizeof(*v), pfn * sizeof(*v)) == sizeof(*v);
}

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
static inline long charged_anon(const unsigned long *pfns, size_t n,
				unsigned long long cg_ino, bool unmapped)
{
	int kpf = open("/proc/kpageflags", O_RDONLY);
	int kpc = open("/proc/kpagecount", O_RDONLY);
	int kcg = open("/proc/kpagecgroup", O_RDONLY);
	long left = 0;
	size_t i;

	for (i = 0; i < n && left >= 0; i++) {
		uint64_t flags, count, ino;

		if (kpf < 0 || kpc < 0 || kcg < 0 || !kpage_word(kpf, pfns[i], &flags) ||
		    !kpage_word(kpc, pfns[i], &count) || !kpage_word(kcg, pfns[i], &ino))
			left = -1;
		else if (ino == cg_ino && !(unmapped && count) &&
			 (flags & (1ULL << KPF_ANON | 1ULL << KPF_THP)))
			left++;
	}
	if (kpf >= 0)
		close(kpf);
	if (kpc >= 0)
		close(kpc);
	if (kcg >= 0)
		close(kcg);
	return left;
}

/*
 * The thp_scan events in the trace buffer (see parse_event()) into *@out
 * (malloc'ed, the caller frees it).  Returns how many, or -1 if the trace
 * cannot be read.
 */
static inline long thp_scan_events(struct thp_scan_event **out)
{
	FILE *f = fopen(TRACE "trace", "r");
	struct thp_scan_event *ev = NULL, e;
	long n = 0, cap = 0;
	char line[512];

	*out = NULL;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!parse_event(line, &e))
			continue;
		if (n == cap) {
			struct thp_scan_event *m;

			cap = cap ? 2 * cap : 256;
			m = realloc(ev, cap * sizeof(*ev));
			if (!m)
				break;
			ev = m;
		}
		ev[n++] = e;
	}
	fclose(f);
	*out = ev;
	return n;
}

/* Up to @max thp_scan events of the trace into @ev; how many there are, or -1. */
static inline int read_events(struct thp_scan_event *ev, int max)
{
	struct thp_scan_event e;
	char line[512];
	int n = 0;
	FILE *f = fopen(TRACE "trace", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (parse_event(line, &e) && n++ < max)
			ev[n - 1] = e;
	fclose(f);
	return n;
}

static inline int cmp_pfn(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

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
static inline long match_events(const struct ev_filter *f, size_t *seen)
{
	unsigned long *sorted = malloc((f->n + 1) * sizeof(*sorted));
	bool *hit = calloc(f->n + 1, sizeof(*hit));
	struct thp_scan_event *ev = NULL;
	long n = -1, i, c = 0;
	size_t s = 0;

	if (sorted && hit) {
		memcpy(sorted, f->pfns, f->n * sizeof(*sorted));
		qsort(sorted, f->n, sizeof(*sorted), cmp_pfn);
		n = thp_scan_events(&ev);
	}
	for (i = 0; i < n; i++) {
		unsigned long *k;

		if (ev[i].split != f->split ||
		    (f->decision && strcmp(ev[i].decision, f->decision)) ||
		    (f->pid && ev[i].pid != f->pid) || (f->ok && ev[i].ret))
			continue;
		k = bsearch(&ev[i].pfn, sorted, f->n, sizeof(*sorted), cmp_pfn);
		if (!k)
			continue;
		c++;
		s += !hit[k - sorted];
		hit[k - sorted] = true;
	}
	if (seen)
		*seen = s;
	free(ev);
	free(hit);
	free(sorted);
	return n < 0 ? -1 : c;
}

static inline long events(const struct ev_filter *f)
{
	return match_events(f, NULL);
}

static inline size_t pfns_seen(const struct ev_filter *f)
{
	size_t seen;

	match_events(f, &seen);
	return seen;
}

/*
 * Log, for a failed check, the decisions of kthpscand on the folios of
 * @f other than @want: each with its pfn and counts (at most @max).
 */
static inline void log_other_decisions(const struct ev_filter *f, const char *want, int max)
{
	struct thp_scan_event *ev = NULL;
	long n = thp_scan_events(&ev), i;
	size_t j;

	for (i = 0; i < n && max > 0; i++) {
		if (ev[i].split || !strcmp(ev[i].decision, want))
			continue;
		for (j = 0; j < f->n && f->pfns[j] != ev[i].pfn; j++)
			;
		if (j == f->n)
			continue;
		ksft_print_msg("pfn %#lx order %u: %s (zero %u, scanned %u, mapped %u)\n",
			       ev[i].pfn, ev[i].order, ev[i].decision, ev[i].zero,
			       ev[i].scanned, ev[i].mapped);
		max--;
	}
	free(ev);
}

/*
 * What the @per pages at @p map now, against the folio whose head was
 * @head: how many are present, how many still at @head's pfns, the first
 * present one's pfn and /proc/kpageflags word (see
 * Documentation/admin-guide/mm/pagemap.rst), into the test's output.
 */
static inline void log_range(const char *p, size_t per, unsigned long head)
{
	unsigned long *pfns = calloc(per, sizeof(*pfns)), first = 0;
	int kpf = open("/proc/kpageflags", O_RDONLY);
	size_t i, present = 0, same = 0;
	uint64_t flags = 0;

	if (pfns && !pagemap_pfns(p, per, pfns)) {
		for (i = 0; i < per; i++) {
			if (!pfns[i])
				continue;
			if (!present++)
				first = pfns[i];
			same += pfns[i] == head + i;
		}
		if (kpf >= 0 && first)
			flags = kpageflags(kpf, first);
		ksft_print_msg("  now: %zu of %zu pages present, %zu at the folio's pfns; the first at pfn %#lx, kpageflags %#llx\n",
			       present, per, same, first, (unsigned long long)flags);
	}
	if (kpf >= 0)
		close(kpf);
	free(pfns);
}

/*
 * For each folio of @per pages whose head is among @f's pfns and that
 * has no event matching @f: the thp_scan events on any of its pfns, up
 * to @max of them, into the test's output (what happened to a folio a
 * test waited for in vain); and, if @p is not NULL, what the folio's
 * range maps now (log_range()), the i-th folio's range at @p + i * @stride.
 */
static inline void log_missing_events(const struct ev_filter *f, size_t per, int max,
				      const char *p, size_t stride)
{
	struct thp_scan_event *ev = NULL;
	long n = thp_scan_events(&ev), j, overrun = 0;
	char path[128];
	size_t i;
	int cpu;

	/* Events the ring buffer dropped to make room, if any. */
	for (cpu = 0; cpu < 64; cpu++) {
		snprintf(path, sizeof(path), TRACE "per_cpu/cpu%d/stats", cpu);
		if (access(path, F_OK))
			break;
		overrun += keyed(path, "overrun:");
	}
	ksft_print_msg("%ld thp_scan events in the trace (the first at %.6f), %ld overwritten\n",
		       n, n > 0 ? ev[0].ts : 0.0, overrun);

	for (i = 0; n >= 0 && i < f->n; i++) {
		struct ev_filter one = *f;
		int shown = 0;

		one.pfns = &f->pfns[i];
		one.n = 1;
		if (pfns_seen(&one))
			continue;
		ksft_print_msg("no matching event for the folio at pfn %#lx; its events:\n",
			       f->pfns[i]);
		for (j = 0; j < n && shown < max; j++) {
			if (ev[j].pfn < f->pfns[i] || ev[j].pfn >= f->pfns[i] + per)
				continue;
			ksft_print_msg("  %.6f pid %d %s pfn %#lx order %u %s ret %d new_order %u zero %u mapped %u\n",
				       ev[j].ts, ev[j].pid, ev[j].split ? "split" : "decision",
				       ev[j].pfn, ev[j].order, ev[j].decision,
				       ev[j].ret, ev[j].new_order, ev[j].zero, ev[j].mapped);
			shown++;
		}
		if (!shown)
			ksft_print_msg("  none\n");
		if (p)
			log_range(p + i * stride, per, f->pfns[i]);
	}
	free(ev);
}

/*
 * How many huge_memory:mm_khugepaged_scan_pmd events in the trace ended
 * with @status (e.g. "exceed_new_pte") on a page among the @n pfns at
 * @pfns (the test's own range): khugepaged's verdict on that range.  -1
 * if the trace cannot be read.
 */
static inline long khugepaged_scans(const char *status, const unsigned long *pfns,
				    size_t n)
{
	char line[512], want[64];
	const char *pfn;
	long c = 0;
	FILE *f = fopen(TRACE "trace", "r");

	if (!f)
		return -1;
	snprintf(want, sizeof(want), " status=%s,", status);
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, " mm_khugepaged_scan_pmd: ") || !strstr(line, want))
			continue;
		pfn = strstr(line, "scan_pfn=");
		if (pfn && pfn_in(strtoul(pfn + strlen("scan_pfn="), NULL, 16), pfns, n))
			c++;
	}
	fclose(f);
	return c;
}

/* The pid of kthpscand, or -1. */
static inline int kthpscand_pid(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[300], comm[32];
	int pid = -1;

	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (!get(path, comm, sizeof(comm)) && !strcmp(comm, "kthpscand\n")) {
			pid = atoi(e->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
	return pid;
}

/* The state letter of task @pid (R, S, D...), or 0. */
static inline char task_state(int pid)
{
	char path[64], stat[512], *st;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (get(path, stat, sizeof(stat)))
		return 0;
	st = strrchr(stat, ')');
	return st && st[1] == ' ' ? st[2] : 0;
}

/* Does auto/state read @want? */
static inline bool auto_state_is(const char *want)
{
	char buf[32];

	return !get(AUTO "state", buf, sizeof(buf)) && !strncmp(buf, want, strlen(want));
}

/*
 * Thresholds that put "auto" into pressure (or keep it plentiful)
 * whatever memory looks like, sampled every 100 ms; 0 or -errno.
 */
static inline int force_auto(bool pressure)
{
	int err = 0;

	err = err ?: put(AUTO "interval_ms", "100");
	err = err ?: put(AUTO "pressure_psi_pct", "0");
	if (pressure) {
		err = err ?: put(AUTO "plentiful_available_pct", "100");
		err = err ?: put(AUTO "pressure_available_pct", "99");
	} else {
		err = err ?: put(AUTO "pressure_available_pct", "0");
		err = err ?: put(AUTO "plentiful_available_pct", "1");
	}
	return err;
}

/* One huge_memory:thp_auto_state line of the trace. */
struct auto_event {
	bool pressure;
	unsigned int available_pct, psi_pct;
	unsigned long long memcg;	/* cgroup inode number, 0: the system */
	unsigned long long by;		/* whose signals decided; 0 if none */
};

/* Parse @line; false if it is no thp_auto_state event. */
static inline bool parse_auto_event(const char *line, struct auto_event *e)
{
	const char *ev = strstr(line, ": thp_auto_state: state=");
	const char *mc = ev ? strstr(ev, " memcg=") : NULL;
	char state[16];

	memset(e, 0, sizeof(*e));
	if (!mc || sscanf(ev, ": thp_auto_state: state=%15s available_pct=%u psi_some_avg10_pct=%u",
			  state, &e->available_pct, &e->psi_pct) != 3 ||
	    sscanf(mc, " memcg=%llu by=%llu", &e->memcg, &e->by) != 2)
		return false;
	e->pressure = !strcmp(state, "pressure");
	return true;
}

/*
 * The states of memcg @memcg (0: the system) in the trace, in order, as
 * "pressure,plentiful,"; with @by non-zero, of its pressure events only
 * those decided by that memcg.  0 or -errno.
 */
static inline int auto_states(unsigned long long memcg, unsigned long long by,
			      char *out, size_t len)
{
	struct auto_event e;
	char line[512];
	size_t n = 0;
	FILE *f = fopen(TRACE "trace", "r");

	if (!f)
		return -errno;
	out[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (!parse_auto_event(line, &e) || e.memcg != memcg ||
		    (by && e.pressure && e.by != by))
			continue;
		if (n + 16 < len)
			n += snprintf(out + n, len - n, "%s,",
				      e.pressure ? "pressure" : "plentiful");
	}
	fclose(f);
	return 0;
}

/* The inode number of the cgroup at @path, as thp_auto_state names it; 0 if none. */
static inline unsigned long long cgroup_ino(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (unsigned long long)st.st_ino;
}

/* How often task @pid went to sleep by itself; -1 if unknown. */
static inline long voluntary_switches(int pid)
{
	char path[64], line[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "voluntary_ctxt_switches:", 24))
			v = strtol(line + 24, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/*
 * What the tests change, as it was when the program started: the THP
 * settings (khugepaged's included), the thp_scan and auto knobs,
 * shrink_underused, the trace events, ksmd's knobs (run last), the memory
 * controller of the root cgroup and swap on zram0.
 */
static const char * const thp_scan_knobs[] = {
	THP_SCAN "enabled", THP_SCAN "underused_zero_pct", THP_SCAN "pages_to_scan",
	THP_SCAN "scan_sleep_millisecs", THP_SCAN "min_age_millisecs",
	THP_SCAN "collapse_max_new_pct", THP_SCAN "split_on_swapout",
	THP "shrink_underused", AUTO "interval_ms",
	TRACE "events/thp_scan/enable",
	TRACE "events/huge_memory/thp_auto_state/enable",
	TRACE "events/huge_memory/mm_khugepaged_scan_pmd/enable",
	"/sys/kernel/mm/ksm/use_zero_pages", "/sys/kernel/mm/ksm/pages_to_scan",
	"/sys/kernel/mm/ksm/sleep_millisecs", "/sys/kernel/mm/ksm/run",
};

/*
 * The auto thresholds, of the system and of the memcgs, in the order they
 * are restored (see below).
 */
static const char * const thp_auto_thresholds[] = {
	AUTO "plentiful_psi_pct", AUTO "pressure_psi_pct",
	AUTO "pressure_available_pct", AUTO "plentiful_available_pct",
	AUTO "memcg_plentiful_psi_pct", AUTO "memcg_pressure_psi_pct",
	AUTO "memcg_pressure_available_pct", AUTO "memcg_plentiful_available_pct",
};

#define NR_KNOBS ARRAY_SIZE(thp_scan_knobs)
#define NR_THRESHOLDS ARRAY_SIZE(thp_auto_thresholds)

struct thp_scan_state {
	bool thp;			/* THP sysfs there, @settings read */
	struct thp_settings settings;
	char knobs[NR_KNOBS][32];	/* "" where there is no such file */
	char thresholds[NR_THRESHOLDS][16];
	bool memcg;			/* +memory in the root's subtree_control */
	bool swap;			/* swap on zram0 */
};

static inline bool zram_swap_on(void)
{
	char line[256];
	bool on = false;
	FILE *f = fopen("/proc/swaps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "/dev/zram0 ", 11))
			on = true;
	if (f)
		fclose(f);
	return on;
}

static inline void thp_scan_state_save(struct thp_scan_state *s)
{
	char buf[256];
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->thp = !access(THP "enabled", F_OK);
	if (s->thp)
		thp_read_settings(&s->settings);
	for (i = 0; i < NR_KNOBS; i++) {
		char *b, *e;

		if (get(thp_scan_knobs[i], s->knobs[i], sizeof(s->knobs[i]))) {
			s->knobs[i][0] = '\0';
			continue;
		}
		/* "one [two] three": the value in force is the bracketed one. */
		b = strchr(s->knobs[i], '[');
		e = b ? strchr(b, ']') : NULL;
		if (e) {
			*e = '\0';
			memmove(s->knobs[i], b + 1, strlen(b + 1) + 1);
		}
	}
	for (i = 0; i < NR_THRESHOLDS; i++)
		if (get(thp_auto_thresholds[i], s->thresholds[i], sizeof(s->thresholds[i])))
			s->thresholds[i][0] = '\0';
	s->memcg = !get(CG "cgroup.subtree_control", buf, sizeof(buf)) &&
		   strstr(buf, "memory");
	s->swap = zram_swap_on();
}

/* Remove the cgroup at @path and those below it, deepest first; true if one was busy. */
static inline bool thp_scan_rmdir_cgroup(const char *path)
{
	char sub[512];
	struct dirent *e;
	bool busy = false;
	DIR *d = opendir(path);

	while (d && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= (int)sizeof(sub))
			continue;
		busy |= thp_scan_rmdir_cgroup(sub);
	}
	if (d)
		closedir(d);
	if (rmdir(path) && errno == EBUSY)
		busy = true;
	return busy;
}

/* Remove the cgroups the tests make (all named thp_*), with a second's grace. */
static inline void thp_scan_remove_cgroups(void)
{
	char path[300];
	struct dirent *e;
	DIR *d;
	int tries;

	for (tries = 0; tries < 10; tries++) {
		bool busy = false;

		d = opendir(CG);
		while (d && (e = readdir(d))) {
			if (e->d_type != DT_DIR || strncmp(e->d_name, "thp_", 4))
				continue;
			snprintf(path, sizeof(path), CG "%s", e->d_name);
			if (thp_scan_rmdir_cgroup(path))
				busy = true;
		}
		if (d)
			closedir(d);
		if (!busy)
			break;
		/* A task killed with its test may not have left yet. */
		usleep(100000);
	}
}

static inline void thp_scan_state_restore(const struct thp_scan_state *s)
{
	unsigned int i;

	thp_scan_remove_cgroups();
	if (!s->swap && zram_swap_on() && !system("swapoff /dev/zram0"))
		put(ZRAM "reset", "1");
	/* Set up but not swapped on (a test took swap off itself): reset too. */
	if (!s->swap && !zram_swap_on() && get_long(ZRAM "disksize") > 0)
		put(ZRAM "reset", "1");
	if (!s->memcg)
		put(CG "cgroup.subtree_control", "-memory");
	if (s->thp)
		thp_write_settings((struct thp_settings *)&s->settings);
	for (i = 0; i < NR_KNOBS; i++)
		if (s->knobs[i][0])
			put(thp_scan_knobs[i], s->knobs[i]);
	/*
	 * Each pair of thresholds must keep its gap at every step: loosen
	 * them all first, then set them back, stall thresholds first.  The
	 * memcg set (a kernel may lack it) the same way.
	 */
	if (s->thresholds[0][0]) {
		put(AUTO "pressure_available_pct", "0");
		put(AUTO "plentiful_available_pct", "100");
		put(AUTO "pressure_psi_pct", "0");
	}
	if (s->thresholds[4][0]) {
		put(AUTO "memcg_pressure_available_pct", "0");
		put(AUTO "memcg_plentiful_available_pct", "100");
		put(AUTO "memcg_pressure_psi_pct", "0");
	}
	for (i = 0; i < NR_THRESHOLDS; i++)
		if (s->thresholds[i][0])
			put(thp_auto_thresholds[i], s->thresholds[i]);
}

#ifdef __KSELFTEST_HARNESS_H
/*
 * The state when the program started.  The 6.12 kselftest harness kills a
 * test that runs past its timeout together with its process group: its
 * FIXTURE_TEARDOWN does not run.  So every fixture of these programs
 * starts with thp_scan_reset() (undoing what a killed test left behind)
 * and ends with it, and the harness's own process, which outlives every
 * test, restores the state once more when it exits.
 */
static struct thp_scan_state thp_scan_start;
static pid_t thp_scan_main_pid;

static inline void thp_scan_reset(void)
{
	thp_scan_state_restore(&thp_scan_start);
}

static inline void thp_scan_at_exit(void)
{
	if (getpid() == thp_scan_main_pid)
		thp_scan_reset();
}

/* Run the tests, with the state saved first and restored at exit. */
static inline void thp_scan_main(int argc, char **argv)
{
	thp_scan_main_pid = getpid();
	thp_scan_state_save(&thp_scan_start);
	atexit(thp_scan_at_exit);
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
static inline long counter(struct __test_metadata *_metadata,
			   const char *path, const char *key)
{
	char buf[64];
	long v;

	if (key) {
		v = keyed(path, key);
		if (v < 0)
			TH_LOG("%s missing in %s", key, path);
	} else {
		v = get(path, buf, sizeof(buf)) ? -1 : strtol(buf, NULL, 10);
		if (v < 0)
			TH_LOG("cannot read %s", path);
	}
	if (v < 0)
		_metadata->exit_code = KSFT_FAIL;
	return v;
}

/* Counter @key of @path, which must exist: a missing one fails the test. */
static inline long must_keyed(struct __test_metadata *_metadata,
			      const char *path, const char *key)
{
	long v = keyed(path, key);

	ASSERT_GE(v, 0) TH_LOG("no counter %s in %s", key, path);
	return v;
}

static inline long vm_counter(struct __test_metadata *_metadata, const char *key)
{
	return must_keyed(_metadata, "/proc/vmstat", key);
}

/* Per-size counter @name of @kb-sized THPs, which must exist. */
static inline long must_stat(struct __test_metadata *_metadata,
			     unsigned long kb, const char *name)
{
	long v = size_stat(kb, name);

	ASSERT_GE(v, 0) TH_LOG("no hugepages-%lukB/stats/%s", kb, name);
	return v;
}

/* The number in @path, which must exist. */
static inline long must_long(struct __test_metadata *_metadata, const char *path)
{
	long v = get_long(path);

	ASSERT_GE(v, 0) TH_LOG("no number in %s", path);
	return v;
}

/*
 * How far memory.current may be off what a test's memory costs: each CPU
 * keeps up to MEMCG_CHARGE_BATCH (64) pages charged in advance, and kernel
 * memory (page tables, slab) is charged too.  Twice the per-CPU stocks.
 */
static inline long memcg_slack(void)
{
	return 2 * 64L * getpagesize() * sysconf(_SC_NPROCESSORS_ONLN);
}

/* The page size and the PMD THP size (read_pmd_pagesize(), vm_util.h). */
struct thp_sizes {
	size_t psz, pmd, per;	/* bytes, bytes, pages per PMD THP */
	unsigned long pmd_kb;
	int order_pmd;
};

static inline void thp_sizes(struct thp_sizes *z)
{
	z->psz = getpagesize();
	z->pmd = read_pmd_pagesize();
	z->per = z->pmd / z->psz;
	z->pmd_kb = z->pmd / 1024;
	z->order_pmd = __builtin_ctzl(z->per);
}

/*
 * How many of the @nr ranges of @size bytes at @p are each mapped by
 * one whole THP (/proc/kpageflags: a THP's head first, its last page
 * last); -1 if pagemap or kpageflags cannot be read.
 */
static inline long count_thps(char *p, size_t nr, size_t size)
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	int kpf = open("/proc/kpageflags", O_RDONLY);
	size_t psz = getpagesize(), i;
	long n = pm < 0 || kpf < 0 ? -1 : 0;

	for (i = 0; n >= 0 && i < nr; i++) {
		unsigned long first = pagemap_get_pfn(pm, p + i * size);
		unsigned long last = pagemap_get_pfn(pm, p + (i + 1) * size - psz);
		uint64_t flags = 0;

		if (first == -1UL || last != first + size / psz - 1)
			continue;
		if (pread(kpf, &flags, sizeof(flags), first * sizeof(flags)) != sizeof(flags))
			n = -1;
		else if ((flags >> KPF_THP & 1) && (flags >> KPF_COMPOUND_HEAD & 1))
			n++;
	}
	if (pm >= 0)
		close(pm);
	if (kpf >= 0)
		close(kpf);
	return n;
}

/*
 * @nr PMD THPs with page 7 of each written (one_per_folio()), which
 * thp_scan judges underused at any underused_zero_pct below 99; NULL if
 * the memory cannot be mapped.
 */
static inline char *sparse_thps(const struct thp_sizes *z, size_t nr)
{
	char *p = map_aligned(nr * z->pmd, z->pmd);
	size_t i;

	for (i = 0; p && i < nr; i++)
		fill_page(p, i * z->per + 7, z->psz);
	return p;
}

/*
 * @nr PMD THPs, every page written, with the second half of each
 * unmapped: each partially mapped; NULL if that cannot be done.
 */
static inline char *half_mapped_thps(const struct thp_sizes *z, size_t nr)
{
	char *p = map_aligned(nr * z->pmd, z->pmd);
	size_t i;

	if (!p)
		return NULL;
	for (i = 0; i < nr * z->per; i++)
		fill_page(p, i, z->psz);
	if (!check_huge_anon(p, nr, z->pmd))
		return NULL;
	for (i = 0; i < nr; i++)
		if (munmap(p + i * z->pmd + z->pmd / 2, z->pmd / 2))
			return NULL;
	return p;
}

/* Unmap what half_mapped_thps() left mapped. */
static inline void unmap_halves(char *p, const struct thp_sizes *z, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		munmap(p + i * z->pmd, z->pmd / 2);
}

/*
 * The setup most thp_scan tests share, after the state reset: PMD THPs
 * at fault and no other size, khugepaged collapsing nothing behind the
 * test's back (max_ptes_none 0), the test's task in the memcg CG @cg
 * (none if NULL), and the thp_scan events traced into an empty buffer.
 */
static inline void thp_scan_setup(struct __test_metadata *_metadata,
				  struct thp_sizes *z, const char *cg)
{
	struct thp_settings s;
	char path[128], pid[16];
	int i;

	thp_scan_reset();
	ASSERT_EQ(0, access(THP_SCAN "min_age_millisecs", F_OK))
		TH_LOG("no thp_scan knobs: CONFIG_THP_SCAN=n?");
	thp_sizes(z);
	ASSERT_NE(0, z->pmd);
	thp_read_settings(&s);
	s.thp_enabled = THP_ALWAYS;
	for (i = 0; i < NR_ORDERS; i++)
		s.hugepages[i].enabled = THP_NEVER;
	s.hugepages[z->order_pmd].enabled = THP_INHERIT;
	s.khugepaged.max_ptes_none = 0;
	thp_write_settings(&s);
	if (cg) {
		ASSERT_EQ(0, put(CG "cgroup.subtree_control", "+memory"));
		snprintf(path, sizeof(path), CG "%s", cg);
		ASSERT_TRUE(!mkdir(path, 0755) || errno == EEXIST);
		snprintf(path, sizeof(path), CG "%s/cgroup.procs", cg);
		snprintf(pid, sizeof(pid), "%d", getpid());
		ASSERT_EQ(0, put(path, pid));
	}
	ASSERT_EQ(0, put(TRACE "events/thp_scan/enable", "1"));
	ASSERT_EQ(0, clear_trace());
}

/* Undo thp_scan_setup() and whatever the test changed. */
static inline void thp_scan_teardown(void)
{
	char pid[16];

	/* Out of the test's memcg, so that it can be removed. */
	snprintf(pid, sizeof(pid), "%d", getpid());
	put(CG "cgroup.procs", pid);
	thp_scan_reset();
}

/*
 * Wait until kthpscand is between rounds for good: asleep (S) and
 * thp_split_scan_rounds the same over two polls 200 ms apart, for up to 5 s
 * (a round of a few THPs takes milliseconds).
 * Only meaningful when nothing can start a round: thp_scan off, or every
 * queued folio younger than the minimum age and the sleep longer.
 */
static inline void wait_kthpscand_idle(struct __test_metadata *_metadata, int pid)
{
	long rounds = vm_counter(_metadata, "thp_split_scan_rounds"), now;
	int i, still = 0;

	for (i = 0; i < 25 && still < 2; i++) {
		usleep(200000);
		now = vm_counter(_metadata, "thp_split_scan_rounds");
		still = now == rounds && task_state(pid) == 'S' ? still + 1 : 0;
		rounds = now;
	}
	ASSERT_EQ(2, still) TH_LOG("kthpscand still at work after 5 s");
}
#endif /* __KSELFTEST_HARNESS_H */

#endif /* __THP_SCAN_UTIL_H */
