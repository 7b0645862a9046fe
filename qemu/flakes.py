#!/usr/bin/env python3
"""The table of a boot whose programs ran several rounds (qemu/boot.sh
--rounds N, make flake-hunt): for each program, how many times it ran,
how many of those runs failed and the first failure's line.

A run fails as it would in results.py: a failing, or not allowed skipped,
TAP result; no TAP plan, or a plan that does not match its results; results
not numbered 1..N; a non-zero exit status; killed at its time limit;
processes left running; no end (the guest stopped).  A program that the
boot's deadline left unstarted is counted in "not run".  The boot itself
fails when the guest did not finish or the console holds a kernel report
(results.py's patterns).  Prints the table (Markdown) and exits 1 if any
run, or the boot, failed.

    qemu/flakes.py --name NAME [--allow-name ARCH-CFG] LOGDIR
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402  (the parser and the console's patterns)

# A kselftest-harness assertion: "# FILE.c:LINE:TEST:Expected ..." and the
# like; failing checks print a "# ... .c:LINE:" line before "not ok".
ASSERT = re.compile(r'^#\s.*\.[ch]:\d+:')


def runs_of(lines):
    """[(round, program, [lines])] in order; NOTRUN markers as lines of
    their own program with no BEGIN."""
    out, rnd, cur = [], 0, None
    for line in lines:
        line = line.rstrip('\r\n')
        if line.startswith('THPSCAN-ROUND '):
            rnd = int(line.split()[1])
            cur = None
            continue
        if line.startswith('THPSCAN-TEST-BEGIN '):
            cur = (rnd, line.split(None, 1)[1].strip(), [line])
            out.append(cur)
            continue
        if line.startswith('THPSCAN-TEST-NOTRUN '):
            name = line.split(None, 1)[1].partition(':')[0]
            out.append((rnd, name, [line]))
            cur = None
            continue
        if cur:
            cur[2].append(line)
            if line.startswith('THPSCAN-TEST-END '):
                cur = None
    return out


def judge(boot, allow, name, lines):
    """None if the run passed, else its first failure line."""
    progs, _ = results.parse_results(lines)
    if not progs:
        return 'not run'
    p = progs[0]
    # The failing check: the last harness line with a FILE:LINE before the
    # first "not ok" (the assertion that ended the test), else that line.
    first, last_assert = None, None
    for line in lines:
        if line.startswith('ok '):
            last_assert = None
        elif ASSERT.match(line):
            last_assert = line
        elif line.startswith('not ok '):
            first = last_assert or line
            break
    why = []
    for num, status, test, msg in p.results:
        if status == 'fail':
            why.append('not ok %d %s %s' % (num, test, msg))
        elif status == 'skip' and not allow.match(boot, '%s %s' % (name, test), msg):
            why.append('%s: skipped (%s), not allowed' % (test, msg))
    if p.plan is None:
        why.append('no TAP plan')
    elif p.plans > 1 or p.plan != len(p.results):
        why.append('TAP plan 1..%d, %d plans, %d results' % (p.plan, p.plans, len(p.results)))
    nums = [r[0] for r in p.results]
    if nums != list(range(1, len(nums) + 1)):
        why.append('results not numbered 1..%d' % len(nums))
    if p.rc is None:
        why.append('did not finish')
    elif p.killed:
        why.append('killed by the guest\'s init ' + p.killed)
    elif p.rc != 0:
        why.append('exit status %d' % p.rc)
    if p.strays:
        why.append('left processes running: ' + p.strays)
    if not why:
        return None
    return first if first and why[0].startswith('not ok') else why[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('logdir')
    ap.add_argument('--name', required=True)
    ap.add_argument('--allow-name', help='the boot name the allowlist entries are matched '
                    'against (default: --name), e.g. x86_64-test for flake-x86_64-test')
    ap.add_argument('--allow', action='append', help='skip allowlist (default: qemu/skips.allow)')
    args = ap.parse_args()
    allow = results.Allow(args.allow or [results.ALLOW])
    read = lambda f: (open(os.path.join(args.logdir, f), errors='replace').read().splitlines()
                      if os.path.exists(os.path.join(args.logdir, f)) else [])
    rlines, clines = read('results.log'), read('console.log')

    table, order = {}, []
    rounds = 0
    for rnd, name, lines in runs_of(rlines):
        rounds = max(rounds, rnd)
        if name not in table:
            table[name] = {'runs': 0, 'fail': 0, 'notrun': 0, 'first': ''}
            order.append(name)
        t = table[name]
        if lines[0].startswith('THPSCAN-TEST-NOTRUN'):
            t['notrun'] += 1
            continue
        t['runs'] += 1
        why = judge(args.allow_name or args.name, allow, name, lines)
        if why:
            t['fail'] += 1
            if not t['first']:
                t['first'] = 'round %d: %s' % (rnd, why)

    bad = 0
    print('%s: %d round(s)' % (args.name, max(rounds, 1)))
    print()
    print('| program | runs | failures | not run | first failure |')
    print('|---|---|---|---|---|')
    for name in order:
        t = table[name]
        bad |= t['fail'] > 0 or t['notrun'] > 0
        first = t['first'].replace('|', '\\|')
        print('| `%s` | %d | %d | %d | %s |' % (name, t['runs'], t['fail'], t['notrun'], first))
    print()
    finished = any(l.rstrip('\r\n') == 'THPSCAN-END' for l in rlines)
    if not finished:
        print('%s: FAIL the guest did not finish (no THPSCAN-END)' % args.name)
        bad = 1
    reports = []
    for l in clines:
        for label, rx in results.KERNEL_REPORT_RES:
            if rx.search(l):
                reports.append('[%s] %s' % (label, l))
                break
    if reports:
        print('%s: FAIL console: kernel reports:\n    %s' % (args.name, '\n    '.join(reports[:30])))
        bad = 1
    if not order:
        print('%s: FAIL no program ran' % args.name)
        bad = 1
    print('%s: %s' % (args.name, 'every run passed' if not bad else 'failures above'))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
