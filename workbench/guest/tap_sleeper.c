// SPDX-License-Identifier: GPL-2.0
/*
 * tap_sleeper: a program that never ends, for the workbench's check of the
 * guest's time limits (workbench/test.sh, selfcheck-timeout).  It prints a
 * TAP plan, starts a test the way the kselftest harness does (a child in
 * a process group of its own), and both wait to be killed: the check
 * needs a program that is surely running, with a child, when its limit
 * comes, whatever the speed of the machine.
 */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	pid_t child;

	printf("TAP version 13\n1..1\n# tap_sleeper: waiting to be killed\n");
	fflush(stdout);
	child = fork();
	if (child == 0)
		setpgid(0, 0);
	for (;;)
		pause();
	return 0;
}
