#!/usr/bin/env python3
"""Count the results of one guest boot.

Reads LOGDIR/console.log (kernel console: KUnit KTAP and any kernel
report) and LOGDIR/results.log (in-guest tests, between THPSCAN-TEST-BEGIN
and THPSCAN-TEST-END markers, in kselftest TAP), prints one line per
failure and a closing line "NAME: N passed, N failed, N skipped", and
exits 1 if anything failed.

Counted: every KUnit case (parsed by the tree's kunit.py parse), every
top-level TAP result of every in-guest test program, one check that the
guest finished, one that the extra command (if any) exited 0, and one that
the console is free of kernel reports.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# A line of the console that means the kernel found a bug, whatever the
# tests said.
KERNEL_REPORT = re.compile(
    r'(BUG:|WARNING:|Oops|Kernel panic|kernel BUG at|Unable to handle kernel'
    r'|general protection fault|UBSAN:|KASAN|KFENCE|possible recursive locking'
    r'|possible circular locking|INFO: possible|INFO: task .* blocked'
    r'|rcu: INFO:|detected stall|list_add corruption|list_del corruption'
    r'|Bad page state|page dumped because|Bad rss-counter|Call [Tt]race:)')

TAP_RESULT = re.compile(r'^(not ok|ok) +\d+ *-? *(.*?)(?: *# *(SKIP|skip|XFAIL)\b.*)?$')


class Counts:
    def __init__(self, name):
        self.name = name
        self.passed = self.failed = self.skipped = 0
        self.failures = []

    def add(self, status, what):
        if status == 'pass':
            self.passed += 1
        elif status == 'skip':
            self.skipped += 1
        else:
            self.failed += 1
            self.failures.append(what)


def kunit_cases(tree, console, counts, expect):
    """Count KUnit cases with kunit.py parse --json."""
    kunit = os.path.join(tree, 'tools/testing/kunit/kunit.py')
    with tempfile.NamedTemporaryFile('r', suffix='.json') as js:
        proc = subprocess.run([sys.executable, kunit, 'parse', console, '--json=' + js.name],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            data = json.load(js)
        except ValueError:
            data = None
    if data is None:
        if expect:
            counts.add('fail', 'kunit: no KUnit results in the console (kunit.py parse: %s)'
                       % proc.stdout.strip().splitlines()[-1:] )
        return
    seen = set()

    def walk(group, path):
        for case in group.get('test_cases', []):
            what = 'kunit: %s.%s' % ('.'.join(path), case['name'])
            st = case['status']
            counts.add('pass' if st == 'PASS' else 'skip' if st == 'SKIP' else 'fail',
                       what + ('' if st in ('PASS', 'SKIP') else ' ' + st))
        for sub in group.get('sub_groups', []):
            if not path:
                seen.add(sub['name'])
            walk(sub, path + [sub['name']])

    walk(data, [])
    for suite in expect:
        if suite not in seen:
            counts.add('fail', 'kunit: suite %s did not run' % suite)


def guest_tests(results, counts, expect):
    """Count the top-level TAP results of each in-guest test program."""
    cur = None
    tap = []
    finished = set()
    done = False
    for line in results:
        line = line.rstrip('\r\n')
        m = re.match(r'^THPSCAN-TEST-BEGIN (\S+)', line)
        if m:
            cur, tap = m.group(1), []
            continue
        m = re.match(r'^THPSCAN-TEST-END (\S+) rc=(\d+)', line)
        if m and cur:
            rc = int(m.group(2))
            finished.add(cur)
            fails = [t for t in tap if t[0] == 'fail']
            for st, what in tap:
                counts.add(st, '%s: %s' % (cur, what))
            if not tap:
                counts.add('fail', '%s: printed no TAP result (exit %d)' % (cur, rc))
            elif rc != 0 and not fails and rc != 4:
                # kselftest exits 4 when everything was skipped.
                counts.add('fail', '%s: exit status %d' % (cur, rc))
            cur = None
            continue
        m = re.match(r'^THPSCAN-CMD-END rc=(\d+)', line)
        if m:
            counts.add('pass' if m.group(1) == '0' else 'fail',
                       'extra command: exit status %s' % m.group(1))
            continue
        if line.startswith('THPSCAN-END'):
            done = True
            continue
        if cur:
            m = TAP_RESULT.match(line)
            if m:
                st = 'fail' if m.group(1) == 'not ok' else 'skip' if m.group(3) else 'pass'
                tap.append((st, m.group(2)))
    if cur:
        counts.add('fail', '%s: did not finish' % cur)
        finished.add(cur)
    for t in expect:
        if t not in finished:
            counts.add('fail', '%s: did not run' % t)
    return done


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('logdir')
    ap.add_argument('--name', required=True)
    ap.add_argument('--tree', required=True, help='assembled kernel tree (for kunit.py)')
    ap.add_argument('--qemu-rc', type=int, default=0)
    ap.add_argument('--seconds', type=float, default=0)
    ap.add_argument('--expect-kunit', default='', help='suites that must have run')
    ap.add_argument('--expect-tests', default='', help='guest tests that must have run')
    ap.add_argument('--counts', help='also write "passed failed skipped" to this file')
    args = ap.parse_args()

    counts = Counts(args.name)
    console = os.path.abspath(os.path.join(args.logdir, 'console.log'))
    results = os.path.join(args.logdir, 'results.log')
    clines = open(console, errors='replace').read().splitlines() if os.path.exists(console) else []
    rlines = open(results, errors='replace').read().splitlines() if os.path.exists(results) else []

    kunit_cases(args.tree, console, counts, args.expect_kunit.split())
    done = guest_tests(rlines, counts, args.expect_tests.split())
    counts.add('pass' if done else 'fail',
               'guest finished (qemu exit status %d)' % args.qemu_rc)

    reports = [l for l in clines if KERNEL_REPORT.search(l)]
    counts.add('fail' if reports else 'pass', 'console: kernel reports:\n    '
               + '\n    '.join(reports[:20]))

    for f in counts.failures:
        print('%s: FAIL %s' % (args.name, f))
    print('%s: %d passed, %d failed, %d skipped (%.0f s)' %
          (args.name, counts.passed, counts.failed, counts.skipped, args.seconds))
    if args.counts:
        with open(args.counts, 'w') as f:
            f.write('%d %d %d\n' % (counts.passed, counts.failed, counts.skipped))
    return 1 if counts.failed else 0


if __name__ == '__main__':
    sys.exit(main())
