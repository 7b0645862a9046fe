// SPDX-License-Identifier: GPL-2.0
/*
 * The helpers shared by the thp_scan and thp_policy selftests; what each
 * does is said in thp_scan_util.h.
 */
#include <assert.h>
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
#include "vm_util.h"
#include "thp_settings.h"
#include "thp_scan_util.h"

int ts_put(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

int ts_get(const char *path, char *buf, size_t len)
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

long ts_get_long(const char *path)
{
	char buf[64];

	if (ts_get(path, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

long ts_cmdline_long(const char *key)
{
	char cmdline[4096], *e;

	if (ts_get("/proc/cmdline", cmdline, sizeof(cmdline)))
		return -1;
	e = strstr(cmdline, key);
	return e ? strtol(e + strlen(key), NULL, 10) : -1;
}

int ts_clear_trace(void)
{
	int fd = open(TRACE "trace", O_WRONLY | O_TRUNC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

long ts_keyed(const char *path, const char *key)
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

long ts_size_stat(unsigned long kb, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), THP "hugepages-%lukB/stats/%s", kb, name);
	return ts_get_long(path);
}

double ts_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

long kthpscand_deadline(long age_ms, long rounds)
{
	long sleep_ms = ts_get_long(THP_SCAN "scan_sleep_millisecs");

	if (age_ms < 0)
		age_ms = ts_get_long(THP_SCAN "min_age_millisecs");
	if (age_ms < 0 || sleep_ms < 0)
		return 600;
	return (age_ms + rounds * sleep_ms) * KERNEL_SLOWDOWN / 1000 + 1;
}

long ts_smaps_kb(void *addr, const char *key)
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

/* ts_exclusive_thps(): the test's mappings are madvised. */
static bool advise_mappings;

char *ts_map_aligned(size_t len, size_t align)
{
	char *raw = mmap(NULL, len + 2 * align, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)raw + align) & ~(align - 1));
	if (mprotect(p, len, PROT_READ | PROT_WRITE) ||
	    (advise_mappings && madvise(p, len, MADV_HUGEPAGE))) {
		munmap(raw, len + 2 * align);
		return NULL;
	}
	return p;
}

long ts_all_sizes_stat(const char *name)
{
	DIR *d = opendir(THP);
	struct dirent *de;
	unsigned long kb;
	long sum = 0, v;

	if (!d)
		return -1;
	while ((de = readdir(d)) && sum >= 0) {
		char path[sizeof(THP) + 256 + 64];

		if (sscanf(de->d_name, "hugepages-%lukB", &kb) != 1)
			continue;
		/* Not every size has every stat (order 1 is the page cache's). */
		snprintf(path, sizeof(path), THP "%s/stats/%s", de->d_name, name);
		if (access(path, F_OK))
			continue;
		v = ts_get_long(path);
		sum = v < 0 ? -1 : sum + v;
	}
	closedir(d);
	return sum;
}

/* Wait up to 3 s for every anon large folio to be freed; how many are left. */
static long wait_large_anon_gone(void)
{
	double start = ts_mono_s();
	long n;

	while ((n = ts_all_sizes_stat("nr_anon")) > 0 && ts_mono_s() - start < 3)
		usleep(100000);
	return n;
}

long ts_exclusive_thps(void)
{
	if (ts_put(THP "enabled", "madvise"))
		return -1;
	advise_mappings = true;
	return wait_large_anon_gone();
}

long ts_quiet_thps(void)
{
	struct thp_settings was;
	long n;

	thp_read_settings(&was);
	if (ts_put(THP "enabled", "madvise"))
		return -1;
	n = wait_large_anon_gone();
	thp_write_settings(&was);
	return n;
}

bool ts_is_zero(const char *p, size_t len)
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

char ts_pattern(size_t pg, size_t off)
{
	if (off < 8)
		return (char)((((uint64_t)pg >> (7 * off)) & 0x7f) << 1 | 1);
	return (char)(((pg * 2654435761u) >> 7) + off * 31 + 1) | 1;
}

void ts_fill_page(char *p, size_t pg, size_t psz)
{
	size_t off;

	for (off = 0; off < psz; off++)
		p[pg * psz + off] = ts_pattern(pg, off);
}

long ts_check_pages(const char *p, size_t nr, size_t psz,
		    int (*filled)(size_t pg, void *arg), void *arg)
{
	size_t pg, off;

	for (pg = 0; pg < nr; pg++) {
		int f = filled(pg, arg);

		if (f < 0)
			continue;
		for (off = 0; off < psz; off++)
			if (p[pg * psz + off] != (f ? ts_pattern(pg, off) : 0))
				return pg;
	}
	return -1;
}

int ts_one_per_folio(size_t pg, void *arg)
{
	size_t per = *(size_t *)arg;

	return pg % per == (per > 7 ? 7 : per - 1);
}

int ts_every_page(size_t pg, void *arg)
{
	return 1;
}

int ts_first_half(size_t pg, void *arg)
{
	size_t per = *(size_t *)arg;

	return pg % per < per / 2 ? 1 : -1;
}

int ts_dense_run(size_t pg, void *arg)
{
	const struct dense_spec *d = arg;

	return pg % d->per < d->run;
}

bool ts_parse_event(const char *line, struct thp_scan_event *e)
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

void ts_count_trace_pfns(unsigned int order, const char *decision, int pid,
			 const unsigned long *pfns, size_t n,
		      struct trace_count *c)
{
	struct thp_scan_event e;
	char line[512];
	FILE *f = fopen(TRACE "trace", "r");
	size_t i;

	memset(c, 0, sizeof(*c));
	while (f && fgets(line, sizeof(line), f)) {
		if (!ts_parse_event(line, &e) || e.order != order ||
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

void ts_count_trace(unsigned int order, const char *decision, int pid,
		    struct trace_count *c)
{
	ts_count_trace_pfns(order, decision, pid, NULL, 0, c);
}

int ts_pagemap_pfns(const char *p, size_t nr, unsigned long *pfns)
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

uint64_t ts_kpageflags(int kpf, unsigned long pfn)
{
	uint64_t flags = 0;

	if (pread(kpf, &flags, sizeof(flags), pfn * sizeof(flags)) != sizeof(flags))
		return 0;
	return flags;
}

unsigned long ts_folio_pages_at(int kpf, unsigned long pfn,
				unsigned long max)
{
	uint64_t f = ts_kpageflags(kpf, pfn);
	unsigned long n = 1;

	if (f & (1ULL << KPF_COMPOUND_TAIL))
		return 0;
	if (!(f & (1ULL << KPF_COMPOUND_HEAD)))
		return 1;
	while (n < max && (ts_kpageflags(kpf, pfn + n) & (1ULL << KPF_COMPOUND_TAIL)))
		n++;
	return n;
}

long ts_whole_folios(const char *p, size_t nr, size_t per)
{
	unsigned long *pfns = calloc(nr * per, sizeof(*pfns));
	int kpf = open("/proc/kpageflags", O_RDONLY);
	long n = -1;
	size_t i, j;

	if (pfns && kpf >= 0 && !ts_pagemap_pfns(p, nr * per, pfns)) {
		for (n = 0, i = 0; i < nr; i++) {
			unsigned long *f = pfns + i * per;

			for (j = 1; j < per && f[0] && f[j] == f[0] + j; j++)
				;
			if (f[0] && j == per && ts_folio_pages_at(kpf, f[0], per + 1) == per)
				n++;
		}
	}
	if (kpf >= 0)
		close(kpf);
	free(pfns);
	return n;
}

int ts_head_pfns(const char *p, size_t nr, size_t per, size_t psz,
		 unsigned long *heads)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (ts_pagemap_pfns(p + i * per * psz, 1, heads + i))
			return -1;
	return 0;
}

bool ts_pfn_in(unsigned long pfn, const unsigned long *pfns, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pfns[i] == pfn)
			return true;
	return false;
}

bool ts_kpage_word(int fd, unsigned long pfn, uint64_t *v)
{
	return pread(fd, v, sizeof(*v), pfn * sizeof(*v)) == sizeof(*v);
}

long ts_charged_anon(const unsigned long *pfns, size_t n,
		     unsigned long long cg_ino, bool unmapped)
{
	int kpf = open("/proc/kpageflags", O_RDONLY);
	int kpc = open("/proc/kpagecount", O_RDONLY);
	int kcg = open("/proc/kpagecgroup", O_RDONLY);
	long left = 0;
	size_t i;

	for (i = 0; i < n && left >= 0; i++) {
		uint64_t flags, count, ino;

		if (kpf < 0 || kpc < 0 || kcg < 0 || !ts_kpage_word(kpf, pfns[i], &flags) ||
		    !ts_kpage_word(kpc, pfns[i], &count) || !ts_kpage_word(kcg, pfns[i], &ino))
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

long thp_scan_events(struct thp_scan_event **out)
{
	FILE *f = fopen(TRACE "trace", "r");
	struct thp_scan_event *ev = NULL, e;
	long n = 0, cap = 0;
	char line[512];

	*out = NULL;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!ts_parse_event(line, &e))
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

int ts_read_events(struct thp_scan_event *ev, int max)
{
	struct thp_scan_event e;
	char line[512];
	int n = 0;
	FILE *f = fopen(TRACE "trace", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (ts_parse_event(line, &e) && n++ < max)
			ev[n - 1] = e;
	fclose(f);
	return n;
}

static int cmp_pfn(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

long ts_match_events(const struct ev_filter *f, size_t *seen)
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

long ts_events(const struct ev_filter *f)
{
	return ts_match_events(f, NULL);
}

size_t ts_pfns_seen(const struct ev_filter *f)
{
	size_t seen;

	ts_match_events(f, &seen);
	return seen;
}

long ts_log_other_decisions(const struct ev_filter *f, const char *want, int max)
{
	struct thp_scan_event *ev = NULL;
	long n = thp_scan_events(&ev), i, other = 0;
	size_t j;

	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (ev[i].split || !strcmp(ev[i].decision, want))
			continue;
		for (j = 0; j < f->n && f->pfns[j] != ev[i].pfn; j++)
			;
		if (j == f->n)
			continue;
		if (other++ < max)
			ksft_print_msg("pfn %#lx order %u: %s (zero %u, scanned %u, mapped %u)\n",
				       ev[i].pfn, ev[i].order, ev[i].decision, ev[i].zero,
				       ev[i].scanned, ev[i].mapped);
	}
	free(ev);
	return other;
}

void ts_log_range(const char *p, size_t per, unsigned long head)
{
	unsigned long *pfns = calloc(per, sizeof(*pfns)), first = 0;
	int kpf = open("/proc/kpageflags", O_RDONLY);
	size_t i, present = 0, same = 0;
	uint64_t flags = 0;

	if (pfns && !ts_pagemap_pfns(p, per, pfns)) {
		for (i = 0; i < per; i++) {
			if (!pfns[i])
				continue;
			if (!present++)
				first = pfns[i];
			same += pfns[i] == head + i;
		}
		if (kpf >= 0 && first)
			flags = ts_kpageflags(kpf, first);
		ksft_print_msg("  now: %zu of %zu pages present, %zu at the folio's pfns; the first at pfn %#lx, kpageflags %#llx\n",
			       present, per, same, first, (unsigned long long)flags);
	}
	if (kpf >= 0)
		close(kpf);
	free(pfns);
}

void ts_log_missing_events(const struct ev_filter *f, size_t per, int max,
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
		overrun += ts_keyed(path, "overrun:");
	}
	ksft_print_msg("%ld thp_scan events in the trace (the first at %.6f), %ld overwritten\n",
		       n, n > 0 ? ev[0].ts : 0.0, overrun);

	for (i = 0; n >= 0 && i < f->n; i++) {
		struct ev_filter one = *f;
		int shown = 0;

		one.pfns = &f->pfns[i];
		one.n = 1;
		if (ts_pfns_seen(&one))
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
			ts_log_range(p + i * stride, per, f->pfns[i]);
	}
	free(ev);
}

long khugepaged_scans(const char *status, const unsigned long *pfns,
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
		if (pfn && ts_pfn_in(strtoul(pfn + strlen("scan_pfn="), NULL, 16), pfns, n))
			c++;
	}
	fclose(f);
	return c;
}

int ts_pids_by_comm(const char *prefix, int *pids, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[300], comm[32];
	int n = 0;

	while (d && n < max && (e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (!ts_get(path, comm, sizeof(comm)) &&
		    !strncmp(comm, prefix, strlen(prefix)))
			pids[n++] = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return n;
}

int kthpscand_pid(void)
{
	int pid;

	return ts_pids_by_comm("kthpscand\n", &pid, 1) == 1 ? pid : -1;
}

char ts_task_state(int pid)
{
	char path[64], stat[512], *st;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (ts_get(path, stat, sizeof(stat)))
		return 0;
	st = strrchr(stat, ')');
	return st && st[1] == ' ' ? st[2] : 0;
}

bool ts_auto_state_is(const char *want)
{
	char buf[32];

	return !ts_get(AUTO "state", buf, sizeof(buf)) && !strncmp(buf, want, strlen(want));
}

int ts_force_auto(bool pressure)
{
	int err = 0;

	err = err ?: ts_put(AUTO "interval_ms", "100");
	err = err ?: ts_put(AUTO "pressure_psi_pct", "0");
	if (pressure) {
		err = err ?: ts_put(AUTO "plentiful_available_pct", "100");
		err = err ?: ts_put(AUTO "pressure_available_pct", "99");
	} else {
		err = err ?: ts_put(AUTO "pressure_available_pct", "0");
		err = err ?: ts_put(AUTO "plentiful_available_pct", "1");
	}
	return err;
}

bool ts_parse_auto_event(const char *line, struct auto_event *e)
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

int ts_auto_states(unsigned long long memcg, unsigned long long by,
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
		if (!ts_parse_auto_event(line, &e) || e.memcg != memcg ||
		    (by && e.pressure && e.by != by))
			continue;
		if (n + 16 < len)
			n += snprintf(out + n, len - n, "%s,",
				      e.pressure ? "pressure" : "plentiful");
	}
	fclose(f);
	return 0;
}

unsigned long long ts_cgroup_ino(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (unsigned long long)st.st_ino;
}

long ts_voluntary_switches(int pid)
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
	THP_SCAN "split_keep_dense", THP_SCAN "split_dense_min_free_pct",
	THP_SCAN "fault_limit_secs",
	THP "shrink_underused", AUTO "interval_ms",
	TRACE "events/thp_scan/enable",
	TRACE "events/huge_memory/thp_auto_state/enable",
	TRACE "events/huge_memory/mm_khugepaged_scan_pmd/enable",
	TRACE "events/migrate/mm_migrate_pages/enable",
	"/sys/kernel/mm/ksm/use_zero_pages", "/sys/kernel/mm/ksm/pages_to_scan",
	"/sys/kernel/mm/ksm/sleep_millisecs", "/sys/kernel/mm/ksm/run",
};

/*
 * The auto thresholds, of the system and of the memcgs, in the order they
 * are restored (see below).
 */
const char * const thp_auto_thresholds[] = {
	AUTO "plentiful_psi_pct", AUTO "pressure_psi_pct",
	AUTO "pressure_available_pct", AUTO "plentiful_available_pct",
	AUTO "memcg_plentiful_psi_pct", AUTO "memcg_pressure_psi_pct",
	AUTO "memcg_pressure_available_pct", AUTO "memcg_plentiful_available_pct",
};

#define NR_KNOBS ARRAY_SIZE(thp_scan_knobs)
static_assert(ARRAY_SIZE(thp_auto_thresholds) == NR_THRESHOLDS, "NR_THRESHOLDS");

/* What thp_scan_state_restore() puts back: the knobs of the tables above. */
struct thp_scan_state {
	bool thp;			/* THP sysfs there, @settings read */
	struct thp_settings settings;
	char knobs[NR_KNOBS][32];	/* "" where there is no such file */
	char thresholds[NR_THRESHOLDS][16];
	bool memcg;			/* +memory in the root's subtree_control */
	bool swap;			/* swap on zram0 */
};

static bool zram_swap_on(void)
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

static void thp_scan_state_save(struct thp_scan_state *s)
{
	char buf[256];
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->thp = !access(THP "enabled", F_OK);
	if (s->thp)
		thp_read_settings(&s->settings);
	for (i = 0; i < NR_KNOBS; i++) {
		char *b, *e;

		if (ts_get(thp_scan_knobs[i], s->knobs[i], sizeof(s->knobs[i]))) {
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
		if (ts_get(thp_auto_thresholds[i], s->thresholds[i], sizeof(s->thresholds[i])))
			s->thresholds[i][0] = '\0';
	s->memcg = !ts_get(CG "cgroup.subtree_control", buf, sizeof(buf)) &&
		   strstr(buf, "memory");
	s->swap = zram_swap_on();
}

/* Remove the cgroup at @path and those below it, deepest first; true if one was busy. */
static bool thp_scan_rmdir_cgroup(const char *path)
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
static void thp_scan_remove_cgroups(void)
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

static void thp_scan_state_restore(const struct thp_scan_state *s)
{
	unsigned int i;

	thp_scan_remove_cgroups();
	if (!s->swap && zram_swap_on() && !system("swapoff /dev/zram0"))
		ts_put(ZRAM "reset", "1");
	/* Set up but not swapped on (a test took swap off itself): reset too. */
	if (!s->swap && !zram_swap_on() && ts_get_long(ZRAM "disksize") > 0)
		ts_put(ZRAM "reset", "1");
	if (!s->memcg)
		ts_put(CG "cgroup.subtree_control", "-memory");
	if (s->thp)
		thp_write_settings((struct thp_settings *)&s->settings);
	for (i = 0; i < NR_KNOBS; i++)
		if (s->knobs[i][0])
			ts_put(thp_scan_knobs[i], s->knobs[i]);
	/*
	 * Each pair of thresholds must keep its gap at every step: loosen
	 * them all first, then set them back, stall thresholds first.  The
	 * memcg set (a kernel may lack it) the same way.
	 */
	if (s->thresholds[0][0]) {
		ts_put(AUTO "pressure_available_pct", "0");
		ts_put(AUTO "plentiful_available_pct", "100");
		ts_put(AUTO "pressure_psi_pct", "0");
	}
	if (s->thresholds[4][0]) {
		ts_put(AUTO "memcg_pressure_available_pct", "0");
		ts_put(AUTO "memcg_plentiful_available_pct", "100");
		ts_put(AUTO "memcg_pressure_psi_pct", "0");
	}
	for (i = 0; i < NR_THRESHOLDS; i++)
		if (s->thresholds[i][0])
			ts_put(thp_auto_thresholds[i], s->thresholds[i]);
}

/* The state when the program started: see thp_scan_reset(). */
static struct thp_scan_state thp_scan_start;
static pid_t thp_scan_main_pid;

void thp_scan_reset(void)
{
	thp_scan_state_restore(&thp_scan_start);
}

static void thp_scan_at_exit(void)
{
	if (getpid() == thp_scan_main_pid)
		thp_scan_reset();
}

void thp_scan_save_start(void)
{
	thp_scan_main_pid = getpid();
	thp_scan_state_save(&thp_scan_start);
	atexit(thp_scan_at_exit);
}

int thp_scan_state_to_file(const char *path)
{
	struct thp_scan_state s;
	FILE *f = fopen(path, "w");
	bool ok;

	if (!f)
		return -errno;
	thp_scan_state_save(&s);
	ok = fwrite(&s, sizeof(s), 1, f) == 1;
	return fclose(f) || !ok ? -EIO : 0;
}

int thp_scan_state_from_file(const char *path)
{
	struct thp_scan_state s;
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return -errno;
	ok = fread(&s, sizeof(s), 1, f) == 1;
	fclose(f);
	if (!ok)
		return -EIO;
	thp_scan_state_restore(&s);
	return 0;
}

long ts_memcg_slack(void)
{
	return 2 * 64L * getpagesize() * sysconf(_SC_NPROCESSORS_ONLN);
}

long ts_fault_thps(size_t pmd, int nr, bool madv)
{
	char *p = ts_map_aligned(nr * pmd, pmd);
	long n;
	int i;

	if (!p || (madv && madvise(p, nr * pmd, MADV_HUGEPAGE)))
		return -1;
	for (i = 0; i < nr; i++)
		p[i * pmd] = (char)(i + 1);
	n = ts_smaps_kb(p, "AnonHugePages:") / (long)(pmd / 1024);
	for (i = 0; i < nr; i++)
		if (p[i * pmd] != (char)(i + 1) || !ts_is_zero(p + i * pmd + 1, pmd - 1))
			n = -2;
	munmap(p, nr * pmd);
	return n;
}

int ts_flush_memcg_stats(const char *cg)
{
	char path[256], buf[4096];

	snprintf(path, sizeof(path), "%scpu.stat", cg);
	return ts_get(path, buf, sizeof(buf));
}

void thp_sizes(struct thp_sizes *z)
{
	z->psz = getpagesize();
	z->pmd = read_pmd_pagesize();
	z->per = z->pmd / z->psz;
	z->pmd_kb = z->pmd / 1024;
	z->order_pmd = __builtin_ctzl(z->per);
}

long ts_count_thps(char *p, size_t nr, size_t size)
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

char *ts_sparse_thps(const struct thp_sizes *z, size_t nr)
{
	char *p = ts_map_aligned(nr * z->pmd, z->pmd);
	size_t i;

	for (i = 0; p && i < nr; i++)
		ts_fill_page(p, i * z->per + 7, z->psz);
	return p;
}

char *ts_half_mapped_thps(const struct thp_sizes *z, size_t nr)
{
	char *p = ts_map_aligned(nr * z->pmd, z->pmd);
	size_t i;

	if (!p)
		return NULL;
	for (i = 0; i < nr * z->per; i++)
		ts_fill_page(p, i, z->psz);
	if (!check_huge_anon(p, nr, z->pmd))
		return NULL;
	for (i = 0; i < nr; i++)
		if (munmap(p + i * z->pmd + z->pmd / 2, z->pmd / 2))
			return NULL;
	return p;
}

void ts_unmap_halves(char *p, const struct thp_sizes *z, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		munmap(p + i * z->pmd, z->pmd / 2);
}

void thp_scan_teardown(void)
{
	char pid[16];

	/* Out of the test's memcg, so that it can be removed. */
	snprintf(pid, sizeof(pid), "%d", getpid());
	ts_put(CG "cgroup.procs", pid);
	thp_scan_reset();
}
