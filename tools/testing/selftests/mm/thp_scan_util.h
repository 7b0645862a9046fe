/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the thp_scan and thp_policy selftests: sysfs
 * and procfs files read and written in one system call, the trace
 * buffer and the thp_scan events in it, aligned mappings, smaps, and the
 * folios behind a mapping (pagemap and kpageflags).
 */
#ifndef __THP_SCAN_UTIL_H
#define __THP_SCAN_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/kernel-page-flags.h>

#define THP_SCAN_TRACE "/sys/kernel/tracing/"

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

/* Empty the trace buffer: only an open with O_TRUNC does that. */
static inline int clear_trace(void)
{
	int fd = open(THP_SCAN_TRACE "trace", O_WRONLY | O_TRUNC);

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

/* Map @len bytes of private anonymous memory aligned to @align; NULL on failure. */
static inline char *anon_aligned(size_t len, size_t align)
{
	char *raw = mmap(NULL, len + align, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (raw == MAP_FAILED)
		return NULL;
	return (char *)(((uintptr_t)raw + align - 1) & ~(align - 1));
}

/* Field @key (e.g. "Rss:") in kB of the mapping that contains @addr; -1 if none. */
static inline long smaps_kb(const void *addr, const char *key)
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
	unsigned long *pfns = malloc(nr * per * sizeof(*pfns));
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
 * A thp_scan event from the trace: a decision (split false) or the
 * result of a split (split true), with the trace timestamp in seconds.
 */
struct thp_scan_event {
	double ts;
	bool split;
	unsigned long pfn;
	unsigned int order, zero, scanned, mapped, new_order;
	int ret;
	char decision[32];
};

/*
 * The number after @key (" order=", ...) in the event text @s, into *@v;
 * false if there is none.
 */
static inline bool trace_field(const char *s, const char *key, long *v)
{
	const char *k = strstr(s, key);
	char *end;

	if (!k)
		return false;
	k += strlen(key);
	*v = strtol(k, &end, 0);
	return end != k;
}

/*
 * Parse the thp_scan events in the trace buffer into *@out (malloc'ed,
 * the caller frees it).  Returns how many, or -1 if the trace cannot be
 * read.
 */
static inline long thp_scan_events(struct thp_scan_event **out)
{
	FILE *f = fopen(THP_SCAN_TRACE "trace", "r");
	struct thp_scan_event *ev = NULL, e;
	long n = 0, cap = 0;
	char line[512];

	*out = NULL;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *d = strstr(line, ": thp_scan_decision: ");
		char *s = strstr(line, ": thp_scan_split: ");
		char *t = d ? d : s, *ts;
		long pfn, order, a = 0, b = 0, c = 0;

		if (!t)
			continue;
		memset(&e, 0, sizeof(e));
		/* The timestamp is the word before the event's name. */
		for (ts = t; ts > line && ts[-1] != ' '; ts--)
			;
		e.ts = strtod(ts, NULL);
		if (!trace_field(t, " pfn=", &pfn) || !trace_field(t, " order=", &order) ||
		    sscanf(strstr(t, " decision=") ?: "", " decision=%31s", e.decision) != 1)
			continue;
		if (d && (!trace_field(t, " zero=", &a) || !trace_field(t, " scanned=", &b) ||
			  !trace_field(t, " mapped=", &c)))
			continue;
		if (s && (!trace_field(t, " new_order=", &a) || !trace_field(t, " ret=", &b)))
			continue;
		e.pfn = pfn;
		e.order = order;
		e.split = !d;
		if (d) {
			e.zero = a;
			e.scanned = b;
			e.mapped = c;
		} else {
			e.new_order = a;
			e.ret = b;
		}
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

#ifdef __KSELFTEST_HARNESS_H
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
#endif

#endif /* __THP_SCAN_UTIL_H */
