// SPDX-License-Identifier: GPL-2.0
/*
 * thp_state: save the THP and thp_scan settings the guest booted with, and
 * put them back.
 *
 *   thp_state save FILE
 *   thp_state restore FILE
 *
 * qemu/init saves them before the first program and restores them after a
 * program killed at its time limit: a program restores the settings it
 * changed when it exits (thp_scan_save_start()), which SIGKILL does not
 * let it do, and the programs after it would otherwise start from what it
 * left (THP policies, thp_scan and "auto" knobs, its memcgs, zram swap).
 * The settings are those thp_scan_util.c saves for the programs.
 */
#include <stdio.h>
#include <string.h>

#include "thp_scan_util.h"

int main(int argc, char **argv)
{
	int ret;

	if (argc == 3 && !strcmp(argv[1], "save"))
		ret = thp_scan_state_to_file(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "restore"))
		ret = thp_scan_state_from_file(argv[2]);
	else {
		fprintf(stderr, "usage: thp_state save|restore FILE\n");
		return 2;
	}
	if (ret) {
		fprintf(stderr, "thp_state %s %s: %s\n", argv[1], argv[2], strerror(-ret));
		return 1;
	}
	return 0;
}
