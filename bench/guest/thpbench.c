// SPDX-License-Identifier: GPL-2.0
/*
 * thpbench: the benchmark's workloads in the guest (static, no harness: a
 * benchmark is not a test).  Each prints "BENCH <workload> key=value ..."
 * lines that bench/report.py reads.  Memory is measured as the kernel
 * charges it: memcg memory.current (and memory.peak), never RSS alone.
 * Times are CLOCK_MONOTONIC in the guest; under QEMU -icount they count
 * guest instructions (shift=0: 1 ns each), not the host's load.
 *
 *   thpbench sparse KB PCT MIB WINDOW_S PRESSURE   sparse (m)THPs
 *   thpbench fault KB MIB REPS [TAG]               fault cost
 *   thpbench hawkeye LIMIT_MIB IDLE_S              fill, free most, fill again
 *   thpbench scancost MIB WINDOW_S                 kthpscand CPU time
 *   thpbench swap KB PCT MIB MODE                  bytes written to swap (zram)
 *   thpbench ccloop N PROGRAM                      many short processes
 *   thpbench sample CGROUP INTERVAL_S COUNT TAG    memory.current over time
 *   thpbench redisload SOCKET N SIZE DEL_PCT       SETs, then DELs, over a unix socket
 *   thpbench idle SETTLE_S SECONDS MEMCGS SETTING  CPU time of an idle machine
 *   thpbench locks KB MIB REPS PROCS [TAG]         lock statistics of fault and free
 *   thpbench profile MIB                           fault and unmap between markers
 *   thpbench dense SHAPE PCT MIB WINDOW_S SETTING  2 MiB THPs partly written: what stays large
 *   thpbench folios PID TAG                        a process's memory by folio size
 *   thpbench rounds N MIB GAP_S PCT DENSE_FROM TAG a program that maps memory round by round
 *
 * The policy (transparent_hugepage/enabled, hugepages-<size>kB/enabled)
 * is set by the caller (bench/guest/bench.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#define PAGE 4096UL
#define SZ_2M (2UL << 20)
#define MiB (1UL << 20)
#define CG "/sys/fs/cgroup/bench/"
#define THP "/sys/kernel/mm/transparent_hugepage/"

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "thpbench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (%s)\n", strerror(errno));
	va_end(ap);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep @s seconds of guest time (interrupted sleeps resume). */
static void snooze(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static long long read_ll(const char *path)
{
	char buf[64];

	if (read_str(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

/* A "name value" line of a file such as /proc/vmstat or memory.stat. */
static long long keyed(const char *path, const char *key)
{
	char line[256];
	size_t kl = strlen(key);
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ' ') {
			v = strtoll(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static long long vmstat(const char *key)
{
	return keyed("/proc/vmstat", key);
}

/* The memcg CG/@name: created (empty), and this process moved into it. */
/* Counter @stat (e.g. "stats/anon_fault_limited") summed over every size of @thp; -1 if none has it. */
static long long all_sizes(const char *thp, const char *stat)
{
	char path[512];
	struct dirent *de;
	long long sum = -1, v;
	DIR *d = opendir(thp);

	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "hugepages-", 10))
			continue;
		snprintf(path, sizeof(path), "%s%s/%s", thp, de->d_name, stat);
		v = read_ll(path);
		if (v >= 0)
			sum = (sum < 0 ? 0 : sum) + v;
	}
	if (d)
		closedir(d);
	return sum;
}

static void cg_enter(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), CG "%s", name);
	if (mkdir(path, 0755) && errno != EEXIST)
		die("mkdir %s", path);
	snprintf(path, sizeof(path), CG "%s/cgroup.procs", name);
	if (write_str(path, "0"))
		die("join %s", path);
}

/* This process back to the root memcg, CG/@name removed. */
static void cg_leave(const char *name)
{
	char path[256];

	if (write_str("/sys/fs/cgroup/cgroup.procs", "0"))
		die("leave %s", name);
	snprintf(path, sizeof(path), CG "%s", name);
	rmdir(path);
}

static long long cg_ll(const char *name, const char *file)
{
	char path[256];

	snprintf(path, sizeof(path), CG "%s/%s", name, file);
	return read_ll(path);
}

static long long cg_key(const char *name, const char *file, const char *key)
{
	char path[256];

	snprintf(path, sizeof(path), CG "%s/%s", name, file);
	return keyed(path, key);
}

static int cg_set(const char *name, const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), CG "%s/%s", name, file);
	return write_str(path, val);
}

/* The "auto" policy's state ("plentiful", "pressure"; "none": no auto). */
static const char *auto_state(void)
{
	static char buf[32];

	if (read_str(THP "auto/state", buf, sizeof(buf)))
		return "none";
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static double mib(long long bytes)
{
	return bytes / (double)MiB;
}

/* @len bytes of anonymous memory, 2 MiB aligned. */
static char *map_aligned(size_t len)
{
	char *raw = mmap(NULL, len + SZ_2M, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *mem;

	if (raw == MAP_FAILED)
		die("mmap %zu", len);
	mem = (char *)(((uintptr_t)raw + SZ_2M - 1) & ~(SZ_2M - 1));
	if (mem > raw)
		munmap(raw, mem - raw);
	munmap(mem + len, raw + SZ_2M - mem);
	return mem;
}

/* Subpages written per folio of @n subpages for @pct %: at least one. */
static unsigned long per_folio(unsigned long n, unsigned long pct)
{
	unsigned long k = (n * pct + 50) / 100;

	return k ? (k > n ? n : k) : 1;
}

/* Is subpage @i of a folio of @n with @k written one of them (evenly spread)? */
static int written(unsigned long i, unsigned long n, unsigned long k)
{
	return (i * k) / n != ((i + 1) * k) / n;
}

static unsigned char pattern(unsigned long page)
{
	return (unsigned char)(page * 7 + 1) | 1;
}

/* Write (or check) the first byte of the written subpages; returns bad ones. */
static unsigned long touch(char *mem, size_t len, unsigned long fpages, unsigned long k, int check)
{
	unsigned long p, bad = 0;

	for (p = 0; p < len / PAGE; p++) {
		if (!written(p % fpages, fpages, k))
			continue;
		if (check)
			bad += (unsigned char)mem[p * PAGE] != pattern(p);
		else
			mem[p * PAGE] = pattern(p);
	}
	return bad;
}

/* --- folio sizes, from /proc/PID/pagemap and /proc/kpageflags ---------- */

#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define KPF_HEAD (1ULL << 15)		/* KPF_COMPOUND_HEAD */
#define KPF_TAIL (1ULL << 16)		/* KPF_COMPOUND_TAIL */

/* Resident memory by the size of the folio it is in. */
struct share {
	unsigned long long pages;	/* present pages looked at */
	unsigned long long ge64k;	/* of them, in folios of 64 KiB or more */
	unsigned long long ge2m;	/* of them, in folios of 2 MiB or more */
	unsigned long long absent;	/* pages looked at but not present */
};

static int kpf_fd = -1;
static unsigned long long kpf_head, kpf_n;	/* the last folio found */

static uint64_t kpageflags(unsigned long long pfn)
{
	uint64_t v = 0;

	if (pread(kpf_fd, &v, sizeof(v), pfn * sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* How many pages the folio holding @pfn has (1 for a page of its own). */
static unsigned long long folio_pages(unsigned long long pfn)
{
	unsigned long long head = pfn, n = 1;

	if (kpf_n && pfn >= kpf_head && pfn < kpf_head + kpf_n)
		return kpf_n;
	if (!(kpageflags(pfn) & (KPF_HEAD | KPF_TAIL)))
		return 1;
	while (head && (kpageflags(head) & KPF_TAIL) && pfn - head < (1ULL << 18))
		head--;
	while (n < (1ULL << 18) && (kpageflags(head + n) & KPF_TAIL))
		n++;
	kpf_head = head;
	kpf_n = n;
	return n;
}

/*
 * Add the @n pages from @va of the process whose pagemap is @pm to @s; with
 * @want, only pages @i for which want(@i, @arg) is true.
 */
static void share_add(int pm, unsigned long va, unsigned long n,
		      int (*want)(unsigned long i, void *arg), void *arg,
		      struct share *s)
{
	static uint64_t e[512];
	unsigned long i, j, c;

	if (kpf_fd < 0 && (kpf_fd = open("/proc/kpageflags", O_RDONLY)) < 0)
		die("/proc/kpageflags");
	kpf_n = 0;
	for (i = 0; i < n; i += c) {
		c = n - i < 512 ? n - i : 512;
		if (pread(pm, e, c * sizeof(e[0]), (va / PAGE + i) * sizeof(e[0])) !=
		    (ssize_t)(c * sizeof(e[0])))
			die("pagemap");
		for (j = 0; j < c; j++) {
			unsigned long long np;

			if (want && !want(i + j, arg))
				continue;
			if (!(e[j] & PM_PRESENT)) {
				s->absent++;
				continue;
			}
			np = folio_pages(e[j] & PM_PFN_MASK);
			s->pages++;
			s->ge64k += np * PAGE >= 64 * 1024;
			s->ge2m += np * PAGE >= SZ_2M;
		}
	}
}

static double pct_of(unsigned long long part, unsigned long long whole)
{
	return whole ? 100.0 * part / whole : 0;
}

/* Which pages of each 2 MiB a dense workload writes (see dense()). */
struct dense_shape {
	int shape;		/* 0: one run from the start, 1: 64K runs spread, 2: pages spread */
	unsigned long pct;
};

static int dense_written(unsigned long i, void *arg)
{
	const struct dense_shape *d = arg;
	unsigned long pg = i % 512;

	switch (d->shape) {
	case 0:
		return pg < 512 * d->pct / 100;
	case 1:
		return written(pg / 16, 32, 32 * d->pct / 100);
	default:
		return written(pg, 512, 512 * d->pct / 100);
	}
}

/*
 * dense SHAPE PCT MIB WINDOW SETTING: MIB of 2 MiB THPs (all sizes
 * "inherit", the caller's policy), PCT % of each written, every byte of a
 * written page: SHAPE "runs" as one run from the THP's start (25 %: its
 * first 512K; 75 %: an aligned 1M and 512K), "spread64k" as 64K runs
 * spread evenly, "spread4k" as single pages spread evenly.  memory.current
 * at once and after WINDOW s (kthpscand's minimum age is 10 s), and then
 * the share of the written pages that are in folios of 64K or more and of
 * 2M; SETTING labels the line.
 */
static int dense(int argc, char **argv)
{
	static const char * const shapes[] = { "runs", "spread64k", "spread4k" };
	struct dense_shape d = { -1, 0 };
	struct share sh = { 0 };
	unsigned long i, npages, nw = 0, bad = 0;
	long long base, once, cur;
	double window, t0;
	char name[64];
	size_t len;
	char *mem;
	int pm;

	if (argc < 7)
		die("usage: dense SHAPE PCT MIB WINDOW_S SETTING");
	for (i = 0; i < 3; i++)
		if (!strcmp(argv[2], shapes[i]))
			d.shape = i;
	if (d.shape < 0)
		die("unknown shape %s", argv[2]);
	d.pct = strtoul(argv[3], NULL, 0);
	len = strtoul(argv[4], NULL, 0) * MiB;
	window = atof(argv[5]);
	npages = len / PAGE;
	snprintf(name, sizeof(name), "dense-%s-%lu", argv[2], d.pct);
	cg_enter(name);
	base = cg_ll(name, "memory.current");
	mem = map_aligned(len);
	for (i = 0; i < npages; i++)
		if (dense_written(i, &d)) {
			memset(mem + i * PAGE, pattern(i), PAGE);
			nw++;
		}
	once = cg_ll(name, "memory.current") - base;
	t0 = now();
	snooze(window);
	cur = cg_ll(name, "memory.current") - base;
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (pm < 0)
		die("/proc/self/pagemap");
	share_add(pm, (unsigned long)mem, npages, dense_written, &d, &sh);
	close(pm);
	for (i = 0; i < npages; i++) {
		const unsigned char *pg = (const unsigned char *)mem + i * PAGE;
		unsigned char want = dense_written(i, &d) ? pattern(i) : 0;
		size_t b;

		for (b = 0; b < PAGE; b++)
			bad += pg[b] != want;
	}
	printf("BENCH dense setting=%s shape=%s pct=%lu mib=%zu written_mib=%.2f once_mib=%.2f end_mib=%.2f window_s=%.1f ge64k_pct=%.1f ge2m_pct=%.1f absent=%llu anon_thp_mib=%.2f data=%s\n",
	       argv[6], argv[2], d.pct, len / MiB, mib((long long)nw * PAGE), mib(once), mib(cur),
	       now() - t0, pct_of(sh.ge64k, sh.pages), pct_of(sh.ge2m, sh.pages), sh.absent,
	       mib(cg_key(name, "memory.stat", "anon_thp")), bad ? "CORRUPTED" : "ok");
	munmap(mem, len);
	cg_leave(name);
	return bad ? 1 : 0;
}

/*
 * folios PID TAG: the resident anonymous memory of process PID (its
 * private mappings without a file: heap, anonymous mmap) by folio size.
 */
static int folios(int argc, char **argv)
{
	struct share sh = { 0 };
	char path[64], line[512];
	FILE *maps;
	int pm;

	if (argc < 4)
		die("usage: folios PID TAG");
	snprintf(path, sizeof(path), "/proc/%s/maps", argv[2]);
	maps = fopen(path, "r");
	snprintf(path, sizeof(path), "/proc/%s/pagemap", argv[2]);
	pm = open(path, O_RDONLY);
	if (!maps || pm < 0)
		die("/proc/%s", argv[2]);
	while (fgets(line, sizeof(line), maps)) {
		unsigned long start, end, ino;
		char perms[8], file[256] = "";

		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %255s", &start, &end, perms, &ino,
			   file) < 4 || perms[3] != 'p' || perms[1] != 'w' || ino ||
		    (file[0] && strcmp(file, "[heap]")))
			continue;
		share_add(pm, start, (end - start) / PAGE, NULL, NULL, &sh);
	}
	fclose(maps);
	close(pm);
	printf("BENCH folios tag=%s resident_mib=%.2f ge64k_pct=%.1f ge2m_pct=%.1f ge64k_mib=%.2f ge2m_mib=%.2f\n",
	       argv[3], mib(sh.pages * PAGE), pct_of(sh.ge64k, sh.pages), pct_of(sh.ge2m, sh.pages),
	       mib(sh.ge64k * PAGE), mib(sh.ge2m * PAGE));
	return 0;
}

/*
 * sparse KB PCT MIB WINDOW PRESSURE: MIB of (m)THPs of KB KiB, PCT % of
 * every folio's subpages written (at least one).  memory.current at once
 * and every second for WINDOW s; with PRESSURE, memory.high is then set
 * to the written memory plus a quarter of the bloat, and the same again.
 * "gone" is the guest time after which at least 90 % of the bloat
 * (footprint at once minus the written memory) was freed.
 */
static int sparse(int argc, char **argv)
{
	unsigned long kb, pct, fpages, k, bad, i;
	size_t len;
	double window, t0, t, gone = -1;
	int pressure;
	long long base, once, cur, ideal, goal, peak_thp;
	char *mem, name[64], val[64];

	if (argc < 7)
		die("usage: sparse KB PCT MIB WINDOW_S PRESSURE");
	kb = strtoul(argv[2], NULL, 0);
	pct = strtoul(argv[3], NULL, 0);
	len = strtoul(argv[4], NULL, 0) * MiB;
	window = atof(argv[5]);
	pressure = atoi(argv[6]);
	fpages = kb * 1024 / PAGE;
	k = per_folio(fpages, pct);

	snprintf(name, sizeof(name), "sparse-%lu-%lu-%d", kb, pct, pressure);
	cg_enter(name);
	base = cg_ll(name, "memory.current");
	mem = map_aligned(len);
	t0 = now();
	touch(mem, len, fpages, k, 0);
	t = now() - t0;
	once = cg_ll(name, "memory.current") - base;
	peak_thp = cg_key(name, "memory.stat", "anon_thp");
	ideal = (long long)(len / PAGE / fpages * k * PAGE);
	printf("BENCH sparse kb=%lu pct=%lu pressure=%d written_pct=%.2f mib=%zu ideal_mib=%.2f once_mib=%.2f anon_thp_mib=%.2f fault_s=%.6f auto_state=%s\n",
	       kb, pct, pressure, 100.0 * k / fpages, len / MiB, mib(ideal), mib(once),
	       mib(peak_thp), t, auto_state());
	goal = ideal + (once - ideal) / 10;
	if (once - ideal < (long long)MiB)
		gone = 0;	/* no bloat to recover */
	t0 = now();
	if (pressure) {
		snprintf(val, sizeof(val), "%lld", base + ideal + (once - ideal) / 4);
		if (cg_set(name, "memory.high", val))
			die("memory.high");
	}
	/* At 0 (after memory.high was written), then every second. */
	for (i = 0; i <= (unsigned long)window; i++) {
		if (i)
			snooze(t0 + i - now());
		cur = cg_ll(name, "memory.current") - base;
		t = now() - t0;
		printf("BENCH sparse-t kb=%lu pct=%lu pressure=%d t=%.3f mib=%.2f\n",
		       kb, pct, pressure, t, mib(cur));
		if (gone < 0 && cur <= goal)
			gone = t;
	}
	cur = cg_ll(name, "memory.current") - base;
	bad = touch(mem, len, fpages, k, 1);
	printf("BENCH sparse-end kb=%lu pct=%lu pressure=%d end_mib=%.2f gone_s=%.3f anon_thp_mib=%.2f data=%s auto_state=%s\n",
	       kb, pct, pressure, mib(cur), gone, mib(cg_key(name, "memory.stat", "anon_thp")),
	       bad ? "CORRUPTED" : "ok", auto_state());
	munmap(mem, len);
	cg_leave(name);
	return bad ? 1 : 0;
}

/*
 * rounds N MIB GAP_S PCT DENSE_FROM TAG: a program that maps MIB of
 * anonymous memory every GAP_S seconds, N times, and writes PCT % of
 * each round's pages (spread evenly; rounds DENSE_FROM and later: every
 * page), in a memcg of its own; each mapping lands below the last one and
 * merges with it, as a heap that grows does.  Per round: the memcg's
 * footprint, its memory in THPs, and the guest time of the round's
 * writes; at the end the writes' time, the CPU kthpscand used meanwhile
 * and the faults served smaller (anon_fault_limited, every size), and
 * every byte read back.
 */
static int rounds(int argc, char **argv)
{
	unsigned long n, pct, from, r, p, k, npages, bad = 0;
	long long base, cur, thp, cpu0, cpu1, lim0, lim1;
	double gap, t0, tr, fault_s = 0;
	char name[64], **mem;
	size_t len;

	if (argc < 8)
		die("usage: rounds N MIB GAP_S PCT DENSE_FROM TAG");
	n = strtoul(argv[2], NULL, 0);
	len = strtoul(argv[3], NULL, 0) * MiB;
	gap = atof(argv[4]);
	pct = strtoul(argv[5], NULL, 0);
	from = strtoul(argv[6], NULL, 0);
	npages = len / PAGE;
	mem = calloc(n, sizeof(*mem));
	if (!mem)
		die("calloc");
	snprintf(name, sizeof(name), "rounds-%s", argv[7]);
	cg_enter(name);
	base = cg_ll(name, "memory.current");
	cpu0 = read_ll(THP "thp_scan/cpu_time_ms");
	lim0 = all_sizes(THP, "stats/anon_fault_limited");
	t0 = now();
	for (r = 0; r < n; r++) {
		snooze(t0 + r * gap - now());
		k = r >= from ? npages : per_folio(npages, pct);
		mem[r] = mmap(NULL, len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem[r] == MAP_FAILED)
			die("mmap round %lu", r);
		tr = now();
		for (p = 0; p < npages; p++)
			if (written(p, npages, k))
				mem[r][p * PAGE] = pattern(p + r);
		tr = now() - tr;
		fault_s += tr;
		cur = cg_ll(name, "memory.current") - base;
		thp = cg_key(name, "memory.stat", "anon_thp");
		printf("BENCH rounds-t tag=%s round=%lu t=%.3f mib=%.2f anon_thp_mib=%.2f fault_ms=%.3f dense=%d\n",
		       argv[7], r, now() - t0, mib(cur), mib(thp), tr * 1e3, r >= from);
	}
	snooze(gap);
	cpu1 = read_ll(THP "thp_scan/cpu_time_ms");
	lim1 = all_sizes(THP, "stats/anon_fault_limited");
	cur = cg_ll(name, "memory.current") - base;
	for (r = 0; r < n; r++) {
		k = r >= from ? npages : per_folio(npages, pct);
		for (p = 0; p < npages; p++)
			if (written(p, npages, k))
				bad += (unsigned char)mem[r][p * PAGE] != pattern(p + r);
			else
				bad += mem[r][p * PAGE] != 0;
		munmap(mem[r], len);
	}
	printf("BENCH rounds-end tag=%s rounds=%lu pct=%lu dense_from=%lu end_mib=%.2f fault_ms=%.3f scan_cpu_ms=%lld limited=%lld data=%s\n",
	       argv[7], n, pct, from, mib(cur), fault_s * 1e3,
	       cpu0 >= 0 && cpu1 >= 0 ? cpu1 - cpu0 : 0LL,
	       lim0 >= 0 && lim1 >= 0 ? lim1 - lim0 : -1LL, bad ? "CORRUPTED" : "ok");
	free(mem);
	cg_leave(name);
	return bad ? 1 : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * fault KB MIB REPS [TAG]: the time to fault MIB of anonymous memory, one
 * write per 4 KiB, and to unmap it, REPS times; the policy set by the
 * caller gives folios of KB KiB (the folios made are counted and printed).
 * TAG (default "default") names the kernel's settings in the output.
 */
static int fault(int argc, char **argv)
{
	unsigned long kb, reps, r, p;
	size_t len;
	double tf[64], tu[64], t0;
	long long thp0, m0, m1 = 0, thp1;
	char path[128];
	const char *tag;

	if (argc < 5)
		die("usage: fault KB MIB REPS");
	kb = strtoul(argv[2], NULL, 0);
	len = strtoul(argv[3], NULL, 0) * MiB;
	reps = strtoul(argv[4], NULL, 0);
	tag = argc > 5 ? argv[5] : "default";
	if (reps < 1 || reps > 64)
		die("REPS 1..64");
	snprintf(path, sizeof(path), THP "hugepages-%lukB/stats/anon_fault_alloc", kb);
	thp0 = vmstat("thp_fault_alloc");
	m0 = kb > 4 ? read_ll(path) : 0;
	for (r = 0; r < reps; r++) {
		char *mem = map_aligned(len);

		t0 = now();
		for (p = 0; p < len; p += PAGE)
			mem[p] = 1;
		tf[r] = now() - t0;
		t0 = now();
		munmap(mem, len);
		tu[r] = now() - t0;
	}
	thp1 = vmstat("thp_fault_alloc");
	if (kb > 4)
		m1 = read_ll(path);
	for (r = 0; r < reps; r++)
		printf("BENCH fault-rep kb=%lu tag=%s rep=%lu fault_ms=%.4f unmap_ms=%.4f\n",
		       kb, tag, r, tf[r] * 1e3, tu[r] * 1e3);
	qsort(tf, reps, sizeof(double), cmp_double);
	qsort(tu, reps, sizeof(double), cmp_double);
	printf("BENCH fault kb=%lu tag=%s mib=%zu reps=%lu fault_ms_min=%.4f fault_ms_med=%.4f unmap_ms_min=%.4f unmap_ms_med=%.4f folios=%lld expected_folios=%lu\n",
	       kb, tag, len / MiB, reps, tf[0] * 1e3, tf[reps / 2] * 1e3, tu[0] * 1e3, tu[reps / 2] * 1e3,
	       kb > 4 ? m1 - m0 : thp1 - thp0, kb > 4 ? reps * (len / (kb * 1024)) : 0);
	return 0;
}

/*
 * hawkeye LIMIT IDLE: the three phases of HawkEye (ASPLOS '19), scaled to
 * the guest, in a memcg with memory.max = LIMIT MiB: fill 3/4 of LIMIT
 * densely; free 80 % of it in 16 KiB pieces spread over every 2 MiB (what
 * an allocator's purge does); IDLE s idle; fill 3/5 of LIMIT again.
 * Without the freed memory back, the third phase does not fit (no swap).
 */
static int hawkeye(int argc, char **argv)
{
	unsigned long limit, idle;
	size_t l1, l3, off;
	long long oom0, after1, after2, afteridle, after3, peak;
	double t0, t1, t2, t3;
	int status, pfd[2];
	char val[64], buf[512];
	pid_t pid;
	ssize_t n;

	if (argc < 4)
		die("usage: hawkeye LIMIT_MIB IDLE_S");
	limit = strtoul(argv[2], NULL, 0);
	idle = strtoul(argv[3], NULL, 0);
	l1 = limit * MiB / 4 * 3 & ~(SZ_2M - 1);
	l3 = limit * MiB / 5 * 3 & ~(SZ_2M - 1);
	cg_enter("hawkeye");
	snprintf(val, sizeof(val), "%lu", limit * MiB);
	if (cg_set("hawkeye", "memory.max", val))
		die("memory.max");
	oom0 = cg_key("hawkeye", "memory.events", "oom_kill");
	if (pipe(pfd))
		die("pipe");
	pid = fork();
	if (pid == 0) {
		char *a, *b;

		close(pfd[0]);
		t0 = now();
		a = map_aligned(l1);
		for (off = 0; off < l1; off += PAGE)
			a[off] = 1;
		t1 = now();
		after1 = cg_ll("hawkeye", "memory.current");
		for (off = 0; off + 20 * 1024 <= l1; off += 20 * 1024)
			madvise(a + off, 16 * 1024, MADV_DONTNEED);
		t2 = now();
		after2 = cg_ll("hawkeye", "memory.current");
		snooze(idle);
		afteridle = cg_ll("hawkeye", "memory.current");
		n = snprintf(buf, sizeof(buf), "p1_s=%.3f p2_s=%.3f after_fill_mib=%.2f after_free_mib=%.2f after_idle_mib=%.2f",
			     t1 - t0, t2 - t1, mib(after1), mib(after2), mib(afteridle));
		if (write(pfd[1], buf, n) != n)
			_exit(3);
		t3 = now();
		b = map_aligned(l3);
		for (off = 0; off < l3; off += PAGE)
			b[off] = 2;
		after3 = cg_ll("hawkeye", "memory.current");
		n = snprintf(buf, sizeof(buf), " p3_s=%.3f after_refill_mib=%.2f",
			     now() - t3, mib(after3));
		if (write(pfd[1], buf, n) != n)
			_exit(3);
		for (off = 0; off + 20 * 1024 <= l1; off += 20 * 1024)
			if (a[off + 16 * 1024] != 1)
				_exit(2);
		for (off = 0; off < l3; off += PAGE)
			if (b[off] != 2)
				_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	n = 0;
	for (;;) {
		ssize_t r = read(pfd[0], buf + n, sizeof(buf) - 1 - n);

		if (r <= 0)
			break;
		n += r;
	}
	buf[n] = 0;
	waitpid(pid, &status, 0);
	peak = cg_ll("hawkeye", "memory.peak");
	printf("BENCH hawkeye limit_mib=%lu fill_mib=%zu refill_mib=%zu %s peak_mib=%.2f oom_kills=%lld result=%s\n",
	       limit, l1 / MiB, l3 / MiB, buf, mib(peak),
	       cg_key("hawkeye", "memory.events", "oom_kill") - oom0,
	       WIFEXITED(status) && !WEXITSTATUS(status) ? "survived" :
	       WIFSIGNALED(status) ? "oom-killed" : "data-error");
	cg_leave("hawkeye");
	return WIFEXITED(status) && WEXITSTATUS(status) == 2;
}

/*
 * scancost MIB WINDOW: kthpscand's CPU time (thp_scan/cpu_time_ms) with
 * MIB of dense THPs queued at the default knobs, over WINDOW s, per GiB;
 * then for MIB of sparse THPs (one subpage written), per GiB recovered.
 */
static int scancost(int argc, char **argv)
{
	size_t len, off;
	double window, t0, t;
	long long c0, c1, once, cur, base;
	char *mem;

	if (argc < 4)
		die("usage: scancost MIB WINDOW_S");
	len = strtoul(argv[2], NULL, 0) * MiB;
	window = atof(argv[3]);
	if (read_ll(THP "thp_scan/cpu_time_ms") < 0) {
		printf("BENCH-SKIP scancost: no %sthp_scan/cpu_time_ms in this kernel\n", THP);
		return 0;
	}
	cg_enter("scancost");
	base = cg_ll("scancost", "memory.current");
	mem = map_aligned(len);
	for (off = 0; off < len; off += PAGE)
		mem[off] = 1;
	c0 = read_ll(THP "thp_scan/cpu_time_ms");
	t0 = now();
	snooze(window);
	c1 = read_ll(THP "thp_scan/cpu_time_ms");
	t = now() - t0;
	printf("BENCH scancost-dense mib=%zu anon_thp_mib=%.2f window_s=%.3f cpu_ms=%lld cpu_pct_per_gib=%.4f\n",
	       len / MiB, mib(cg_key("scancost", "memory.stat", "anon_thp")), t, c1 - c0,
	       (c1 - c0) / (t * 1e3) * 100 / (len / (double)(1UL << 30)));
	munmap(mem, len);

	mem = map_aligned(len);
	for (off = 0; off < len; off += SZ_2M)
		mem[off] = 1;
	once = cg_ll("scancost", "memory.current") - base;
	c0 = read_ll(THP "thp_scan/cpu_time_ms");
	t0 = now();
	do {
		snooze(1);
		cur = cg_ll("scancost", "memory.current") - base;
	} while (now() - t0 < 4 * window && cur > (long long)(len / 512) * 2 + 8 * (long long)MiB);
	c1 = read_ll(THP "thp_scan/cpu_time_ms");
	t = now() - t0;
	printf("BENCH scancost-sparse mib=%zu once_mib=%.2f end_mib=%.2f t_s=%.3f cpu_ms=%lld cpu_ms_per_gib_recovered=%.3f\n",
	       len / MiB, mib(once), mib(cur), t, c1 - c0,
	       once > cur ? (c1 - c0) / ((once - cur) / (double)(1UL << 30)) : -1.0);
	munmap(mem, len);
	cg_leave("scancost");
	return 0;
}

/*
 * swap KB PCT MIB MODE: MIB of (m)THPs with PCT % written, pushed out to
 * swap (zram, set up by the caller) with memory.reclaim; what was written
 * to swap (pswpout), and zram's view of it; every byte read back.
 */
static int swapbench(int argc, char **argv)
{
	unsigned long kb, pct, fpages, k, bad;
	size_t len;
	long long out0, out1, thp0, thp1, fb0, fb1, once, cur, base, zo, zc, zu, zs;
	char *mem, val[64], mm[256] = "";
	const char *mode;

	if (argc < 6)
		die("usage: swap KB PCT MIB MODE");
	kb = strtoul(argv[2], NULL, 0);
	pct = strtoul(argv[3], NULL, 0);
	len = strtoul(argv[4], NULL, 0) * MiB;
	mode = argv[5];
	fpages = kb * 1024 / PAGE;
	k = per_folio(fpages, pct);
	cg_enter("swap");
	base = cg_ll("swap", "memory.current");
	mem = map_aligned(len);
	touch(mem, len, fpages, k, 0);
	once = cg_ll("swap", "memory.current") - base;
	out0 = vmstat("pswpout");
	thp0 = vmstat("thp_swpout");
	fb0 = vmstat("thp_swpout_fallback");
	snprintf(val, sizeof(val), "%zu", len);
	cg_set("swap", "memory.reclaim", val);	/* -EAGAIN when not all of it */
	out1 = vmstat("pswpout");
	thp1 = vmstat("thp_swpout");
	fb1 = vmstat("thp_swpout_fallback");
	cur = cg_ll("swap", "memory.current") - base;
	/* zram: orig_data_size compr_data_size mem_used_total ... same_pages */
	if (read_str("/sys/block/zram0/mm_stat", mm, sizeof(mm)) ||
	    sscanf(mm, "%lld %lld %lld %*s %*s %lld", &zo, &zc, &zu, &zs) != 4)
		zo = zc = zu = zs = -1;
	bad = touch(mem, len, fpages, k, 1);
	printf("BENCH swap kb=%lu pct=%lu mode=%s mib=%zu written_mib=%.2f once_mib=%.2f after_mib=%.2f swapout_mib=%.2f thp_swpout=%lld thp_swpout_fallback=%lld zram_stored_mib=%.2f zram_same_pages=%lld zram_used_mib=%.2f data=%s\n",
	       kb, pct, mode, len / MiB, mib(len / PAGE / fpages * k * PAGE), mib(once), mib(cur),
	       mib((out1 - out0) * PAGE), thp1 - thp0, fb1 - fb0, mib(zo), zs, mib(zu),
	       bad ? "CORRUPTED" : "ok");
	(void)zc;
	munmap(mem, len);
	cg_leave("swap");
	return bad ? 1 : 0;
}

/*
 * ccloop N PROGRAM: PROGRAM run N times one after the other (argument:
 * the run's number), each a short process, in the memcg "cc": total guest
 * time, the memcg's peak, THPs faulted.
 */
static int ccloop(int argc, char **argv)
{
	unsigned long n, i;
	double t0, t;
	long long thp0, m0, fail = 0;
	char arg[32];

	if (argc < 4)
		die("usage: ccloop N PROGRAM");
	n = strtoul(argv[2], NULL, 0);
	cg_enter("cc");
	thp0 = vmstat("thp_fault_alloc");
	m0 = read_ll(THP "hugepages-64kB/stats/anon_fault_alloc");
	t0 = now();
	for (i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid == 0) {
			snprintf(arg, sizeof(arg), "%lu", i);
			execl(argv[3], argv[3], arg, (char *)NULL);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		fail += !WIFEXITED(status) || WEXITSTATUS(status);
	}
	t = now() - t0;
	printf("BENCH cc jobs=%lu failed=%lld time_s=%.4f per_job_ms=%.3f peak_mib=%.2f thp_faults=%lld mthp64_faults=%lld\n",
	       n, fail, t, t / n * 1e3, mib(cg_ll("cc", "memory.peak")),
	       vmstat("thp_fault_alloc") - thp0,
	       m0 >= 0 ? read_ll(THP "hugepages-64kB/stats/anon_fault_alloc") - m0 : -1);
	cg_leave("cc");
	return fail ? 1 : 0;
}

/* sample CGROUP INTERVAL COUNT TAG: memory.current of a memcg, over time. */
static int sample(int argc, char **argv)
{
	unsigned long count, i;
	double interval, t0, t;
	char cur[256], stat[256];
	long long c, thp;

	if (argc < 6)
		die("usage: sample CGROUP INTERVAL_S COUNT TAG");
	interval = atof(argv[3]);
	count = strtoul(argv[4], NULL, 0);
	snprintf(cur, sizeof(cur), "%s/memory.current", argv[2]);
	snprintf(stat, sizeof(stat), "%s/memory.stat", argv[2]);
	t0 = now();
	for (i = 0; i <= count; i++) {
		if (i)
			snooze(t0 + i * interval - now());
		t = now() - t0;
		c = read_ll(cur);
		thp = keyed(stat, "anon_thp");
		printf("BENCH %s t=%.3f mib=%.2f anon_thp_mib=%.2f thp_collapse_alloc=%lld thp_split_page=%lld\n",
		       argv[5], t, mib(c), mib(thp), vmstat("thp_collapse_alloc"),
		       vmstat("thp_split_page"));
	}
	return 0;
}

/* --- a minimal RESP client over a unix socket ---------------------------- */

static int rfd;
static char rbuf[1 << 16];
static size_t rlen, rpos;

static int rgetc(void)
{
	if (rpos == rlen) {
		ssize_t n = read(rfd, rbuf, sizeof(rbuf));

		if (n <= 0)
			die("redis: connection closed");
		rlen = n;
		rpos = 0;
	}
	return (unsigned char)rbuf[rpos++];
}

/* One reply; returns its first byte ('+', '-', ':', '$'), skips its content. */
static int reply(char *first, size_t len)
{
	char line[128];
	size_t n = 0;
	int c, type = rgetc();

	while ((c = rgetc()) != '\n')
		if (n < sizeof(line) - 1 && c != '\r')
			line[n++] = (char)c;
	line[n] = 0;
	if (type == '$') {
		long l = atol(line), i;

		for (i = 0; l >= 0 && i < l + 2; i++) {
			c = rgetc();
			if (first && (size_t)i < len)
				first[i] = (char)c;
		}
	}
	if (type == '-')
		fprintf(stderr, "redis: error reply: %s\n", line);
	return type;
}

static void send_all(const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(rfd, buf, len);

		if (n <= 0)
			die("redis: write");
		buf += n;
		len -= n;
	}
}

static void value(char *v, unsigned long size, unsigned long i)
{
	unsigned long j;

	for (j = 0; j < size; j++)
		v[j] = 'a' + (char)((i * 31 + j * 7) % 26);
}

/*
 * redisload SOCKET N SIZE DEL_PCT: N SETs of SIZE-byte values (keys
 * key:0 .. key:N-1, pipelined), then DEL of DEL_PCT % of the keys, spread
 * (every key whose number is not a multiple of 100/(100-DEL_PCT)); checks
 * that a kept key reads back.
 */
static int redisload(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	unsigned long n, size, del, i, inflight = 0, deleted = 0, keep;
	char *cmd, *v, hdr[128];
	double t0, tset, tdel;
	int hl;

	if (argc < 6)
		die("usage: redisload SOCKET N SIZE DEL_PCT");
	n = strtoul(argv[3], NULL, 0);
	size = strtoul(argv[4], NULL, 0);
	del = strtoul(argv[5], NULL, 0);
	keep = del < 100 ? 100 / (100 - del) : 0;
	rfd = socket(AF_UNIX, SOCK_STREAM, 0);
	strncpy(sa.sun_path, argv[2], sizeof(sa.sun_path) - 1);
	for (i = 0; connect(rfd, (struct sockaddr *)&sa, sizeof(sa)); i++) {
		if (i > 300)
			die("connect %s", argv[2]);
		snooze(0.1);
	}
	cmd = malloc(size + 256);
	v = malloc(size);
	t0 = now();
	for (i = 0; i < n; i++) {
		char key[32];
		int kl = snprintf(key, sizeof(key), "key:%lu", i);

		hl = snprintf(cmd, 256, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%lu\r\n", kl, key, size);
		value(cmd + hl, size, i);
		memcpy(cmd + hl + size, "\r\n", 2);
		send_all(cmd, hl + size + 2);
		if (++inflight == 16) {
			for (; inflight; inflight--)
				if (reply(NULL, 0) != '+')
					die("redis: SET failed");
		}
	}
	for (; inflight; inflight--)
		if (reply(NULL, 0) != '+')
			die("redis: SET failed");
	tset = now() - t0;
	t0 = now();
	for (i = 0; i < n; i++) {
		char key[32];
		int kl;

		if (keep && i % keep == 0)
			continue;
		kl = snprintf(key, sizeof(key), "key:%lu", i);
		hl = snprintf(hdr, sizeof(hdr), "*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n", kl, key);
		send_all(hdr, hl);
		deleted++;
		if (++inflight == 64)
			for (; inflight; inflight--)
				reply(NULL, 0);
	}
	for (; inflight; inflight--)
		reply(NULL, 0);
	tdel = now() - t0;
	/* A kept key reads back. */
	hl = snprintf(hdr, sizeof(hdr), "*2\r\n$3\r\nGET\r\n$5\r\nkey:0\r\n");
	send_all(hdr, hl);
	memset(cmd, 0, size);
	reply(cmd, size);
	value(v, size, 0);
	printf("BENCH redis-load sets=%lu size=%lu deleted=%lu set_s=%.3f del_s=%.3f data=%s\n",
	       n, size, deleted, tset, tdel, memcmp(cmd, v, size) ? "CORRUPTED" : "ok");
	close(rfd);
	return memcmp(cmd, v, size) ? 1 : 0;
}

/*
 * The time tasks ran on the CPUs, in ns: the sum over the "cpuN" lines of
 * /proc/schedstat of their 7th field (rq_cpu_time; CONFIG_SCHEDSTATS,
 * Documentation/scheduler/sched-stats.rst).  The idle task does not count.
 * -1 without the file or without cpu lines.
 */
static long long schedstat_busy(void)
{
	char line[512];
	long long sum = 0, v;
	int cpus = 0;
	FILE *f = fopen("/proc/schedstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %lld", &v) != 1) {
			fclose(f);
			return -1;
		}
		sum += v;
		cpus++;
	}
	fclose(f);
	return cpus ? sum : -1;
}

/* The pid of the task whose comm is @comm, 0 if none. */
static pid_t find_comm(const char *comm)
{
	char path[300], buf[64];
	struct dirent *d;
	pid_t pid = 0;
	DIR *dir = opendir("/proc");

	if (!dir)
		return 0;
	while (!pid && (d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		if (read_str(path, buf, sizeof(buf)))
			continue;
		buf[strcspn(buf, "\n")] = 0;
		if (!strcmp(buf, comm))
			pid = atoi(d->d_name);
	}
	closedir(dir);
	return pid;
}

/* The time task @pid has run, in ns (first field of /proc/PID/schedstat). */
static long long task_runtime(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	return read_ll(path);
}

/*
 * idle SETTLE SECONDS MEMCGS SETTING: SETTLE s asleep (what the caller
 * changed settles, and this program's own start is counted before the
 * window), then the time tasks ran on the CPUs during SECONDS s of this
 * program asleep, and kthpscand's share of it if there is a kthpscand.
 * MEMCGS and SETTING (what the caller set up) are labels for the output.
 */
static int idle(int argc, char **argv)
{
	double settle, window, t0, t;
	long long b0, b1, k0 = -1, k1 = -1;
	pid_t kpid;
	char kbuf[32] = "none";

	if (argc < 6)
		die("usage: idle SETTLE_S SECONDS MEMCGS SETTING");
	settle = atof(argv[2]);
	window = atof(argv[3]);
	snooze(settle);
	kpid = find_comm("kthpscand");
	t0 = now();
	b0 = schedstat_busy();
	if (kpid)
		k0 = task_runtime(kpid);
	snooze(window);
	b1 = schedstat_busy();
	if (kpid)
		k1 = task_runtime(kpid);
	t = now() - t0;
	if (b0 < 0 || b1 < 0) {
		printf("BENCH-ERROR idle: no run time in /proc/schedstat (CONFIG_SCHEDSTATS?)\n");
		return 1;
	}
	if (k0 >= 0 && k1 >= 0)
		snprintf(kbuf, sizeof(kbuf), "%lld", k1 - k0);
	printf("BENCH idle memcgs=%s setting=%s seconds=%.3f busy_ns=%lld kthpscand_ns=%s auto_state=%s\n",
	       argv[4], argv[5], t, b1 - b0, kbuf, auto_state());
	return 0;
}

/*
 * Lock statistics (/proc/lock_stat, CONFIG_LOCK_STAT) summed over the
 * classes whose name holds @key: each class line is the name, right
 * aligned in 40 columns ("-W"/"-R" for the two sides of a rwlock), a
 * colon, then con-bounces, contentions, four wait times, acq-bounces,
 * acquisitions and four hold times.  Names longer than 37 characters are
 * cut there: the deferred split queues' are "&ds_queue->split_queue_lock"
 * (a node's, 6.12), "&memcg->deferred_split_queue.split_qu..." (a
 * memcg's, 6.12) and "&lruvec->deferred_split.split_queue_l..." (an
 * lruvec's, the series): "split_qu" finds them all.
 */
struct lockstat {
	long long acq, con;
	int classes;
};

static struct lockstat lock_stat(const char *key)
{
	struct lockstat ls = { 0, 0, 0 };
	char line[512];
	FILE *f = fopen("/proc/lock_stat", "r");

	if (!f)
		die("/proc/lock_stat");
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[12];
		char *colon;

		if (strlen(line) < 42 || line[40] != ':')
			continue;
		line[40] = 0;
		if (!strstr(line, key))
			continue;
		colon = line + 41;
		if (sscanf(colon, "%llu %llu %*s %*s %*s %*s %llu %llu",
			   &v[0], &v[1], &v[6], &v[7]) != 4)
			continue;
		ls.con += v[1];
		ls.acq += v[7];
		ls.classes++;
	}
	fclose(f);
	return ls;
}

/*
 * locks KB MIB REPS PROCS [TAG]: PROCS processes (each its own mm: no mmap_lock
 * between them) in one memcg, each faulting MIB of anonymous memory, one
 * write per 4 KiB, and unmapping it, REPS times, under a policy (set by
 * the caller) that gives folios of KB KiB.  /proc/lock_stat is cleared
 * before and read after: acquisitions and contentions of the deferred
 * split queues' split_queue_lock, of lru_lock and of the zone lock, and
 * the guest time the whole took; order 0 (KB 4): folios are the pages
 * faulted, and no PMD THP may have been made (thp_fault_alloc).  The statistics are the machine's: the
 * kernel's own threads count too (an idle guest takes none of these
 * locks often; the report gives the folios made to divide by).
 */
static int locks(int argc, char **argv)
{
	unsigned long kb, reps, procs, i;
	struct lockstat sq, lru, zone;
	long long m0, m1, thp0, thp1;
	char path[128];
	const char *tag;
	size_t len;
	double t0, t;

	if (argc < 6)
		die("usage: locks KB MIB REPS PROCS");
	kb = strtoul(argv[2], NULL, 0);
	len = strtoul(argv[3], NULL, 0) * MiB;
	reps = strtoul(argv[4], NULL, 0);
	procs = strtoul(argv[5], NULL, 0);
	tag = argc > 6 ? argv[6] : "default";
	if (procs < 1 || procs > 16)
		die("PROCS 1..16");
	snprintf(path, sizeof(path), THP "hugepages-%lukB/stats/anon_fault_alloc", kb);
	cg_enter("locks");
	m0 = kb > 4 ? read_ll(path) : 0;
	thp0 = vmstat("thp_fault_alloc");
	if (write_str("/proc/lock_stat", "0"))
		die("clear /proc/lock_stat");
	t0 = now();
	for (i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid) {
			unsigned long r, p;

			for (r = 0; r < reps; r++) {
				char *mem = map_aligned(len);

				for (p = 0; p < len; p += PAGE)
					mem[p] = 1;
				munmap(mem, len);
			}
			_exit(0);
		}
	}
	for (i = 0; i < procs; i++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			die("a worker failed");
	}
	t = now() - t0;
	sq = lock_stat("split_qu");
	lru = lock_stat("&lruvec->lru_lock");
	zone = lock_stat("&zone->lock");
	m1 = kb > 4 ? read_ll(path) : 0;
	thp1 = vmstat("thp_fault_alloc");
	cg_leave("locks");
	if (kb == 4 && thp1 != thp0)
		die("locks: %lld PMD THPs made at order 0", thp1 - thp0);
	printf("BENCH locks kb=%lu tag=%s procs=%lu mib=%zu reps=%lu seconds=%.4f folios=%lld expected_folios=%lu sq_acq=%lld sq_con=%lld sq_classes=%d lru_acq=%lld lru_con=%lld zone_acq=%lld zone_con=%lld\n",
	       kb, tag, procs, len / MiB, reps, t,
	       kb > 4 ? m1 - m0 : (long long)(procs * reps * (len / PAGE)),
	       procs * reps * (len / (kb * 1024)),
	       sq.acq, sq.con, sq.classes, lru.acq, lru.con, zone.acq, zone.con);
	return 0;
}

/*
 * profile MIB: for bench/insn_profile.py, which has QEMU log every guest
 * instruction between two markers and counts them per kernel function.
 * An idle window (the noise: timer ticks, the markers' own writes), MIB
 * faulted (one write per 4 KiB, folios as the policy says), then unmapped,
 * each window after its "PROFILE NAME-begin" line and a pause in which the
 * host switches the log on, and followed by "PROFILE NAME-end" and a pause
 * in which it switches it off.
 */
static void profile_mark(const char *what)
{
	printf("PROFILE %s\n", what);
	snooze(2);
}

static int profile(int argc, char **argv)
{
	size_t len, p;
	char *mem;

	if (argc < 3)
		die("usage: profile MIB");
	len = strtoul(argv[2], NULL, 0) * MiB;
	mem = map_aligned(len);
	profile_mark("idle-begin");
	profile_mark("idle-end");
	profile_mark("fault-begin");
	for (p = 0; p < len; p += PAGE)
		mem[p] = 1;
	profile_mark("fault-end");
	profile_mark("unmap-begin");
	munmap(mem, len);
	profile_mark("unmap-end");
	printf("PROFILE done pages=%zu\n", len / PAGE);
	return 0;
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} workloads[] = {
	{ "sparse", sparse }, { "fault", fault }, { "hawkeye", hawkeye },
	{ "scancost", scancost }, { "swap", swapbench }, { "ccloop", ccloop },
	{ "sample", sample }, { "redisload", redisload }, { "idle", idle },
	{ "locks", locks }, { "profile", profile }, { "dense", dense },
	{ "folios", folios }, { "rounds", rounds },
};

int main(int argc, char **argv)
{
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		die("usage: thpbench WORKLOAD ARGS... (see the source)");
	for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (!strcmp(argv[1], workloads[i].name))
			return workloads[i].run(argc, argv);
	errno = EINVAL;
	die("unknown workload %s", argv[1]);
	return 2;
}
