// SPDX-License-Identifier: GPL-2.0
/*
 * thp_neighbour: another task's large folios, beside the tests.
 *
 *   thp_neighbour [hold-ms]
 *
 * A test reads what belongs to it: its pfns' events, its memcg, its
 * pids.  This program is the task it must not be confused by.  Until it
 * is killed it maps 8 MiB at a time (2 MiB aligned, not madvised), writes
 * one page of each 2 MiB (sparse THPs under "always" or "auto", mTHPs of
 * whatever sizes the test allows), unmaps the second half of the second
 * 2 MiB (a partially mapped THP), holds it all for hold-ms (default 1500:
 * longer than the minimum ages the tests set, so that kthpscand and the
 * deferred split shrinker judge its folios too) and unmaps it.  The
 * policy "madvise" or "never" gives it no large folio: a test whose
 * setting is exclusive is not disturbed.  qemu/boot.sh --neighbour runs it
 * beside every program of the boot (make flake-hunt FLAKE_NEIGHBOUR=1).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/mman.h>

#define SZ_2M (2UL << 20)
#define LEN (4 * SZ_2M)

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	long hold = argc > 1 ? strtol(argv[1], NULL, 0) : 1500;
	unsigned long off;
	char *raw, *p;

	if (hold < 0) {
		fprintf(stderr, "usage: thp_neighbour [hold-ms]\n");
		return 2;
	}
	for (;;) {
		raw = mmap(NULL, LEN + SZ_2M, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (raw == MAP_FAILED) {
			sleep_ms(hold);
			continue;
		}
		p = (char *)(((uintptr_t)raw + SZ_2M - 1) & ~(SZ_2M - 1));
		for (off = 0; off < LEN; off += SZ_2M)
			p[off + 7 * 4096] = 1;
		munmap(p + SZ_2M + SZ_2M / 2, SZ_2M / 2);
		sleep_ms(hold);
		munmap(raw, LEN + SZ_2M);
	}
	return 0;
}
