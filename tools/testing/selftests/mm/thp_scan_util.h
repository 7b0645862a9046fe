/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the thp_scan and thp_policy selftests: sysfs
 * and procfs files read and written in one system call, and the trace
 * buffer.
 */
#ifndef __THP_SCAN_UTIL_H
#define __THP_SCAN_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

#endif /* __THP_SCAN_UTIL_H */
