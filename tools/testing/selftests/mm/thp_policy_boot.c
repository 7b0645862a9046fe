// SPDX-License-Identifier: GPL-2.0
/*
 * The THP policy boot parameters. Booted with transparent_hugepage= and
 * thp_anon= and with what they should give, as
 *
 *   thpscan.expect_global=POLICY          transparent_hugepage/enabled
 *   thpscan.expect_<size>kB=POLICY        hugepages-<size>kB/enabled
 *   thpscan.expect_thp_scan=0|1           thp_scan/enabled (thp_scan=)
 *   thpscan.expect_log=TEXT               a kernel log line holds TEXT
 *                                         (a '+' in TEXT stands for a space)
 *
 * this checks that sysfs shows each expected policy in brackets (and
 * thp_scan/enabled its value), that the kernel log holds every expected
 * line, and that it complains of no boot parameter value but those an
 * expected line names.
 *
 * Without any thpscan.expect_ parameter there is nothing to check: the
 * program skips as a whole (kselftest exit code 4), as run_vmtests.sh
 * runs it in an ordinary boot.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kselftest_harness.h"

#define THP "/sys/kernel/mm/transparent_hugepage/"

static char cmdline[4096];

/* The complaints of transparent_hugepage=, thp_scan= and thp_anon= about a bad value. */
static bool boot_param_complaint(const char *line)
{
	if ((strstr(line, "transparent_hugepage=") || strstr(line, "thp_scan=")) &&
	    strstr(line, "cannot parse"))
		return true;
	return strstr(line, "thp_anon") &&
	       (strstr(line, "error parsing") || strstr(line, "invalid policy"));
}

static void read_cmdline(void)
{
	FILE *f = fopen("/proc/cmdline", "r");

	if (f) {
		if (!fgets(cmdline, sizeof(cmdline), f))
			cmdline[0] = '\0';
		fclose(f);
	}
}

/* Next "thpscan.expect_<key>=<val>" after @from; NULL when none is left. */
static const char *next_expect(const char *from, char *key, char *val)
{
	const char *p = strstr(from, "thpscan.expect_");

	if (!p || sscanf(p, "thpscan.expect_%63[^=]=%255s", key, val) != 2)
		return NULL;
	return p + 1;
}

/* The bracketed word of a policy file, e.g. "defer". */
static int bracketed(const char *path, char *out, size_t len)
{
	char buf[256], *l, *r;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	l = strchr(buf, '[');
	r = strchr(buf, ']');
	if (!l || !r || r < l || (size_t)(r - l) >= len)
		return -EINVAL;
	memcpy(out, l + 1, r - l - 1);
	out[r - l - 1] = '\0';
	return 0;
}

TEST(policies_from_boot_parameters)
{
	char key[64], val[256], path[128], got[64];
	const char *p = cmdline;
	int n = 0;

	read_cmdline();
	while ((p = next_expect(p, key, val))) {
		if (!strcmp(key, "log"))
			continue;
		if (!strcmp(key, "thp_scan")) {
			int fd = open(THP "thp_scan/enabled", O_RDONLY);
			ssize_t len;

			ASSERT_LE(0, fd) TH_LOG("no thp_scan/enabled");
			len = read(fd, got, sizeof(got) - 1);
			close(fd);
			ASSERT_LT(0, len);
			got[len] = '\0';
			got[strcspn(got, "\n")] = '\0';
			EXPECT_STREQ(val, got) TH_LOG("thp_scan/enabled");
			n++;
			continue;
		}
		if (!strcmp(key, "global"))
			snprintf(path, sizeof(path), THP "enabled");
		else
			snprintf(path, sizeof(path), THP "hugepages-%s/enabled", key);
		ASSERT_EQ(0, bracketed(path, got, sizeof(got))) TH_LOG("%s", path);
		EXPECT_STREQ(val, got) TH_LOG("%s", path);
		n++;
	}
	if (!n)
		SKIP(return, "no thpscan.expect_ policy on the command line");
}

TEST(bad_values_are_logged)
{
	char key[64], val[256], line[1024];
	char want[8][256];
	bool found[8] = { };
	const char *p = cmdline;
	int n = 0, i;
	FILE *f;

	read_cmdline();
	while ((p = next_expect(p, key, val))) {
		char *c;

		if (strcmp(key, "log"))
			continue;
		ASSERT_LT(n, 8) TH_LOG("more than 8 thpscan.expect_log=");
		for (c = val; *c; c++)
			if (*c == '+')
				*c = ' ';
		snprintf(want[n++], sizeof(want[0]), "%s", val);
	}
	/*
	 * /dev/kmsg: the whole log, one record per read, then EAGAIN.  Every
	 * expected line is there, and every complaint about a boot
	 * parameter is one of them.
	 */
	f = fdopen(open("/dev/kmsg", O_RDONLY | O_NONBLOCK), "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		bool expected = false;

		for (i = 0; i < n; i++) {
			if (strstr(line, want[i])) {
				found[i] = true;
				expected = true;
			}
		}
		if (!expected)
			EXPECT_FALSE(boot_param_complaint(line)) TH_LOG("%s", line);
	}
	fclose(f);
	for (i = 0; i < n; i++)
		EXPECT_TRUE(found[i]) TH_LOG("no kernel log line with \"%s\"", want[i]);
}

int main(int argc, char **argv)
{
	read_cmdline();
	/* Booted without transparent_hugepage=, thp_anon= and what they give. */
	if (!strstr(cmdline, "thpscan.expect_")) {
		ksft_print_header();
		ksft_exit_skip("no thpscan.expect_ parameter on the kernel command line\n");
	}
	return test_harness_run(argc, argv);
}
