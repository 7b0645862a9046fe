// SPDX-License-Identifier: GPL-2.0
/*
 * thp_sparse: a THP workload for the demo and for manual runs.
 *
 *   thp_sparse [MiB] [touch-KiB-per-2MiB] [seconds]
 *
 * Maps MiB of anonymous memory (2 MiB aligned), writes touch-KiB at the
 * start of every 2 MiB, prints what that cost (Rss and AnonHugePages of
 * the mapping, from /proc/self/smaps), optionally waits, prints again,
 * and checks that every written byte reads back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define SZ_2M (2UL << 20)

/* Rss and AnonHugePages (kB) of the mapping that contains @addr. */
static void smaps_of(void *addr, unsigned long *rss, unsigned long *ahp)
{
	char line[256];
	unsigned long start, end;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	*rss = *ahp = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)addr >= start && (uintptr_t)addr < end;
			continue;
		}
		if (!in)
			continue;
		sscanf(line, "Rss: %lu kB", rss);
		sscanf(line, "AnonHugePages: %lu kB", ahp);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	unsigned long mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 64;
	unsigned long touch = (argc > 2 ? strtoul(argv[2], NULL, 0) : 4) << 10;
	unsigned long secs = argc > 3 ? strtoul(argv[3], NULL, 0) : 0;
	unsigned long len = mib << 20, off, i, rss, ahp, bad = 0;
	char *raw, *mem;

	if (!mib || touch > SZ_2M) {
		fprintf(stderr, "usage: thp_sparse [MiB] [touch-KiB-per-2MiB<=2048] [seconds]\n");
		return 2;
	}
	raw = mmap(NULL, len + SZ_2M, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	mem = (char *)(((uintptr_t)raw + SZ_2M - 1) & ~(SZ_2M - 1));
	for (off = 0; off < len; off += SZ_2M)
		for (i = 0; i < touch; i++)
			mem[off + i] = (char)(off / SZ_2M + i + 1);

	smaps_of(mem, &rss, &ahp);
	printf("thp_sparse: %lu MiB mapped, %lu KiB written: Rss %lu kB, AnonHugePages %lu kB\n",
	       mib, (len / SZ_2M) * (touch >> 10), rss, ahp);
	if (secs) {
		sleep(secs);
		smaps_of(mem, &rss, &ahp);
		printf("thp_sparse: after %lu s: Rss %lu kB, AnonHugePages %lu kB\n",
		       secs, rss, ahp);
	}
	for (off = 0; off < len; off += SZ_2M)
		for (i = 0; i < touch; i++)
			bad += mem[off + i] != (char)(off / SZ_2M + i + 1);
	printf("thp_sparse: data check: %s\n", bad ? "CORRUPTED" : "every byte reads back");
	return bad ? 1 : 0;
}
