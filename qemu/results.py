#!/usr/bin/env python3
"""Count the results of one guest boot.

Reads LOGDIR/console.log (kernel console: KUnit KTAP and any kernel
report) and LOGDIR/results.log (in-guest tests, between THPSCAN-TEST-BEGIN
and THPSCAN-TEST-END markers, in kselftest TAP; see qemu/init), prints one
line per failure and a closing line "NAME: N passed, N failed, N skipped",
and exits 1 if anything failed.

Every result is counted once: passed, failed, or skipped.  A skip counts
as skipped only when the allowlist (qemu/skips.allow) has an entry for this
boot, this test and this skip message; any other skip counts as failed.

What must be there comes from the expected list (qemu/expected-tests):
each KUnit case of the expected suites and each kselftest-harness test of
the expected programs.  One failure is counted for each expected test
that did not report, each result that is not in the list, each program
whose TAP plan (1..N) is missing or does not match its results, that
exits non-zero without a failing result, that was killed at its time
limit, that left processes running, or that was not started, and each
repeated report of a test (the first counts); each pseudo file system the
guest's init could not mount; plus one check that the guest finished,
one that the extra command (if any; --expect-cmd: there must be one)
exited 0 and was not killed, one that the console is free of kernel
reports, and, in a kernel with kmemleak, one that its scans at the end
of the boot (THPSCAN-KMEMLEAK) found no unreferenced object.
"""
import argparse
import fnmatch
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
EXPECTED = os.path.join(HERE, 'expected-tests')
ALLOW = os.path.join(HERE, 'skips.allow')


def show(path):
    """A path as the messages name it: relative to the repository."""
    path = os.path.abspath(path)
    return os.path.relpath(path, TOP) if path.startswith(TOP + os.sep) else path

# Lines of the console that mean the kernel found a bug, whatever the tests
# said, each with a label (the first pattern that matches names the line).
# The detectors' formats are those of Linux 6.12: kernel/hung_task.c
# (check_hung_task()), kernel/watchdog.c (watchdog_timer_fn()).
KERNEL_REPORTS = [
    ('hung task', r'INFO: task .+:\d+ blocked for more than \d+ seconds\.'),
    ('soft lockup', r'BUG: soft lockup - CPU#\d+ stuck for \d+s!'),
    ('rcu stall', r'rcu: INFO: |detected stall'),
    ('lockdep', r'possible recursive locking|possible circular locking|INFO: possible'),
    ('KASAN', r'KASAN|KFENCE'),
    ('list corruption', r'list_add corruption|list_del corruption'),
    ('bad page', r'Bad page state|page dumped because|Bad rss-counter'),
    ('panic', r'Kernel panic'),
    ('oops', r'Oops|Unable to handle kernel|general protection fault|kernel BUG at'),
    ('UBSAN', r'UBSAN:'),
    ('BUG', r'BUG:'),
    ('WARNING', r'WARNING:'),
    ('call trace', r'Call [Tt]race:'),
]
KERNEL_REPORT_RES = [(label, re.compile(pat)) for label, pat in KERNEL_REPORTS]

# kmemleak is in the kernel and on: its line at the end of the boot's
# initcalls (mm/kmemleak.c, kmemleak_late_init(), Linux 6.12).  Such a
# boot must end with the guest's init saying what kmemleak found.
KMEMLEAK_ON = re.compile(r'kmemleak: Kernel memory leak detector initialized')

# kselftest TAP: "ok 3 fixture.variant.test # SKIP message",
# "not ok 4 name #  diagnostic".
TAP_RESULT = re.compile(r'^(not ok|ok)\s+(\d+)\s*(?:-\s*)?([^#]*?)\s*(?:#\s*(.*))?$')
TAP_PLAN = re.compile(r'^1\.\.(\d+)\s*(?:#.*)?$')
# KTAP in the console, after the printk time stamp.
KTAP_STAMP = re.compile(r'^\[\s*\d+\.\d+\] ?')
KTAP_SUBTEST = re.compile(r'^( *)# Subtest: (\S+)')
KTAP_RESULT = re.compile(r'^( *)(?:not ok|ok) \d+ (?:- )?(\S+)(?: # SKIP ?(.*))?$')


class Counts:
    def __init__(self, name):
        self.name = name
        self.passed = self.failed = self.skipped = 0
        self.failures = []
        self.notes = []

    def add(self, status, what, n=1):
        if status == 'pass':
            self.passed += n
        elif status == 'skip':
            self.skipped += n
        else:
            self.failed += n
            self.failures.append(what if n == 1 else '%s [%d failures]' % (what, n))


def read_expected(path):
    """The expected list: {program: [test, ...]}, KUnit under 'kunit'.

    Each line is "PROGRAM TEST" ("kunit SUITE.CASE" for a KUnit case);
    # starts a comment.
    """
    expected = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 2:
                raise SystemExit('%s:%d: want "PROGRAM TEST", got %r' % (path, n, line))
            tests = expected.setdefault(fields[0], [])
            if fields[1] in tests:
                raise SystemExit('%s:%d: %s %s listed twice' % (path, n, fields[0], fields[1]))
            tests.append(fields[1])
    return expected


class Allow:
    """The skip allowlist: "BOOTS | PROGRAM TEST | SKIP MESSAGE | WHY" lines.

    BOOTS: comma-separated shell patterns of boot names (--name);
    PROGRAM TEST: exactly as in the expected list ("kunit SUITE.CASE");
    SKIP MESSAGE: a shell pattern the skip's message must match;
    WHY: why the skip is expected there (required).
    """

    def __init__(self, paths):
        self.entries = []
        self.files = ' '.join(show(p) for p in paths)
        for path in paths:
            with open(path) as f:
                for n, line in enumerate(f, 1):
                    if not line.strip() or line.lstrip().startswith('#'):
                        continue
                    fields = [x.strip() for x in line.rstrip('\n').split(' | ', 3)]
                    if len(fields) != 4 or not all(fields) or len(fields[1].split()) != 2:
                        raise SystemExit('%s:%d: want "BOOTS | PROGRAM TEST | SKIP MESSAGE | WHY"'
                                         ', got %r' % (path, n, line.strip()))
                    boots = [b.strip() for b in fields[0].split(',')]
                    self.entries.append({'where': '%s:%d' % (show(path), n),
                                         'boots': boots, 'test': ' '.join(fields[1].split()),
                                         'message': fields[2], 'why': fields[3], 'used': False})

    def match(self, boot, test, message):
        for e in self.entries:
            if (e['test'] == test and any(fnmatch.fnmatchcase(boot, b) for b in e['boots'])
                    and fnmatch.fnmatchcase(message, e['message'])):
                e['used'] = True
                return e
        return None

    def unused(self, boot, ran):
        """Entries for this boot and a test that ran, whose skip did not happen."""
        return [e for e in self.entries if not e['used'] and e['test'] in ran
                and any(fnmatch.fnmatchcase(boot, b) for b in e['boots'])]


class Run:
    def __init__(self, name, counts, allow):
        self.name, self.counts, self.allow = name, counts, allow
        self.ran = set()

    def result(self, prog, test, status, message=''):
        """Count one result; a skip fails unless it is allowed here."""
        tid = '%s %s' % (prog, test)
        self.ran.add(tid)
        what = '%s: %s' % (prog, test)
        if status == 'skip':
            if self.allow.match(self.name, tid, message):
                self.counts.add('skip', what)
            else:
                self.counts.add('fail', '%s: skipped (%s), and no entry of %s allows that '
                                'skip on %s' % (what, message or 'no message',
                                                self.allow.files, self.name))
        else:
            self.counts.add(status, what + ('' if status == 'pass' else
                                            ' ' + message if message else ''))


def ktap_skip_messages(lines):
    """{SUITE.CASE: message} of the skipped KUnit cases in the console."""
    stack, msgs = [], {}
    for line in lines:
        line = KTAP_STAMP.sub('', line)
        m = KTAP_SUBTEST.match(line)
        if m:
            depth = len(m.group(1)) // 4
            stack = stack[:depth - 1] + [m.group(2)] if depth else []
            continue
        m = KTAP_RESULT.match(line)
        if m and m.group(3) is not None:
            depth = len(m.group(1)) // 4
            if depth:
                msgs['.'.join(stack[:depth] + [m.group(2)])] = m.group(3).strip()
    return msgs


def kunit_cases(tree, console, clines, run, expected, suites):
    """Count KUnit cases with kunit.py parse --json; check the expected ones."""
    counts = run.counts
    want = {}
    for case in expected.get('kunit', []):
        want.setdefault(case.split('.', 1)[0], []).append(case)
    for suite in suites:
        if suite not in want:
            counts.add('fail', 'kunit: suite %s is expected but has no case in %s'
                       % (suite, show(EXPECTED)))
    kunit = os.path.join(tree, 'tools/testing/kunit/kunit.py')
    with tempfile.NamedTemporaryFile('r', suffix='.json') as js:
        proc = subprocess.run([sys.executable, kunit, 'parse', console, '--json=' + js.name],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            data = json.load(js)
        except ValueError:
            data = None
    seen = []
    skips = ktap_skip_messages(clines)

    def walk(group, path):
        for case in group.get('test_cases', []):
            if not case['name']:
                # kunit.py adds a nameless case for each one the plan
                # announced and the log lacks.
                counts.add('fail', 'kunit: %s: fewer cases than its KTAP plan announced '
                           '(kunit.py: %s)' % ('.'.join(path), case['status']))
                continue
            cid = '.'.join(path + [case['name']])
            seen.append(cid)
            st = case['status']
            if st == 'SKIP':
                run.result('kunit', cid, 'skip', skips.get(cid, ''))
            else:
                run.result('kunit', cid, 'pass' if st == 'PASS' else 'fail', st)
        for sub in group.get('sub_groups', []):
            walk(sub, path + [sub['name']])

    if data is None:
        if suites:
            counts.add('fail', 'kunit: no KUnit results in the console (kunit.py parse: %s)'
                       % proc.stdout.strip().splitlines()[-1:])
    else:
        walk(data, [])
    listed = set(expected.get('kunit', []))
    for cid in seen:
        # A parameterised case reports SUITE.CASE.PARAM.
        if not any(cid == c or cid.startswith(c + '.') for c in listed):
            counts.add('fail', 'kunit: %s ran but is not in %s: add it there'
                       % (cid, show(EXPECTED)))
    ran_suites = {cid.split('.', 1)[0] for cid in seen}
    for suite in suites:
        missing = [c for c in want.get(suite, [])
                   if not any(s == c or s.startswith(c + '.') for s in seen)]
        if missing and suite not in ran_suites:
            counts.add('fail', 'kunit: suite %s did not run (expected: %d cases)'
                       % (suite, len(missing)), len(missing))
        elif missing:
            counts.add('fail', 'kunit: %s did not report' % ', '.join(missing), len(missing))


class Program:
    def __init__(self, name):
        self.name = name
        self.plan = None
        self.plans = 0
        self.results = []      # (number, status, test, message)
        self.lines = 0
        self.rc = None
        self.killed = None
        self.strays = None


def parse_results(lines):
    """The programs (in order), the command's status and the init markers."""
    progs, cur = [], None
    st = {'cmd_rc': None, 'cmd_killed': None, 'cmd_strays': None, 'begin': False,
          'end': False, 'abort': None, 'mounts': [], 'notrun': {},
          'kmemleak': None, 'kmemleak_report': [], 'kmemleak_off': []}
    # kmemleak's report follows THPSCAN-KMEMLEAK, up to the next marker.
    in_kmemleak = False
    for line in lines:
        line = line.rstrip('\r\n')
        if line.startswith('THPSCAN-'):
            word, _, rest = line.partition(' ')
            in_kmemleak = False
            if word == 'THPSCAN-TEST-BEGIN':
                cur = Program(rest.strip())
                progs.append(cur)
            elif word == 'THPSCAN-TEST-END' and cur:
                m = re.search(r'rc=(\d+)', rest)
                cur.rc = int(m.group(1)) if m else -1
                cur = None
            elif word == 'THPSCAN-TEST-KILLED' and cur:
                cur.killed = rest.partition(' ')[2]
            elif word == 'THPSCAN-TEST-STRAY' and cur:
                cur.strays = rest.partition(' ')[2]
            elif word == 'THPSCAN-TEST-NOTRUN':
                name, _, why = rest.partition(': ')
                st['notrun'][name] = why
            elif word == 'THPSCAN-CMD-END':
                m = re.search(r'rc=(\d+)', rest)
                st['cmd_rc'] = int(m.group(1)) if m else -1
            elif word == 'THPSCAN-CMD-KILLED':
                st['cmd_killed'] = rest.replace('extra command ', '', 1)
            elif word == 'THPSCAN-CMD-STRAY':
                st['cmd_strays'] = rest.replace('extra command ', '', 1)
            elif word == 'THPSCAN-CMD-NOTRUN':
                st['cmd_rc'] = 'not started: ' + rest.partition(': ')[2]
            elif word == 'THPSCAN-MOUNT-FAILED':
                st['mounts'].append(rest)
            elif word == 'THPSCAN-ABORT':
                st['abort'] = rest
            elif word == 'THPSCAN-BEGIN':
                st['begin'] = True
            elif word == 'THPSCAN-END':
                st['end'] = True
            elif word == 'THPSCAN-KMEMLEAK':
                if rest.strip().isdigit():
                    st['kmemleak'] = int(rest)
                    in_kmemleak = True
                else:
                    st['kmemleak_off'].append('no count in %r' % line)
            elif word.startswith('THPSCAN-KMEMLEAK-'):
                # OFF REASON, or a scan that run or left in qemu/init
                # killed at its time limit (KILLED) or did not start
                # (NOTRUN), as they do a program.
                kind = word[len('THPSCAN-KMEMLEAK-'):]
                st['kmemleak_off'].append(
                    {'OFF': 'off: ' + rest,
                     'KILLED': 'a scan killed by the guest\'s init ' + rest.partition(' ')[2],
                     'NOTRUN': 'a scan not started: ' + rest.partition(': ')[2]}.get(
                         kind, '%s %s' % (word, rest)))
            continue
        if in_kmemleak:
            st['kmemleak_report'].append(line)
            continue
        if not cur:
            continue
        cur.lines += 1
        m = TAP_PLAN.match(line)
        if m:
            cur.plans += 1
            if cur.plan is None:
                cur.plan = int(m.group(1))
            continue
        m = TAP_RESULT.match(line)
        if m:
            directive = (m.group(4) or '').strip()
            word = directive.split(None, 1)[0].upper() if directive else ''
            msg = directive.split(None, 1)[1] if len(directive.split(None, 1)) > 1 else ''
            if word in ('SKIP', 'XFAIL'):
                status = 'skip'
                msg = directive if word == 'XFAIL' else msg
            elif m.group(1) == 'not ok' or word in ('XPASS', 'TODO'):
                status, msg = 'fail', directive
            else:
                status, msg = 'pass', ''
            cur.results.append((int(m.group(2)), status, m.group(3).strip(), msg))
    return progs, st


def guest_tests(rlines, run, expected, expect, expect_cmd=False):
    """Count the TAP results of each in-guest test program."""
    counts = run.counts
    progs, st = parse_results(rlines)
    ran = {}
    for p in progs:
        name = p.name
        if name in ran:
            counts.add('fail', '%s: ran twice' % name)
        ran[name] = p
        listed = expected.get(name)
        if listed is None:
            counts.add('fail', '%s: ran but has no test in %s: add its tests there'
                       % (name, show(EXPECTED)))
            listed = []
        fails = 0
        reported = []
        for num, status, test, msg in p.results:
            reported.append(test)
            if reported.count(test) > 1:
                # Counted once, as the first report said; the repeat is a
                # failure of its own (below).
                continue
            run.result(name, test, status, msg)
            fails += status == 'fail'
            if listed and test not in listed:
                counts.add('fail', '%s: %s ran but is not in %s: add it there'
                           % (name, test, show(EXPECTED)))
        for test in set(reported):
            if reported.count(test) > 1:
                counts.add('fail', '%s: %s reported %d times' % (name, test, reported.count(test)))
        no_tap = not p.results and p.plan is None
        if no_tap:
            counts.add('fail', '%s: printed no TAP (exit status %s)' % (name, p.rc))
        else:
            if p.plan is None:
                counts.add('fail', '%s: no TAP plan (1..N)' % name)
            elif p.plans > 1:
                counts.add('fail', '%s: %d TAP plans' % (name, p.plans))
            elif p.plan != len(p.results):
                counts.add('fail', '%s: TAP plan 1..%d but %d results'
                           % (name, p.plan, len(p.results)))
            nums = [r[0] for r in p.results]
            if nums != list(range(1, len(nums) + 1)):
                counts.add('fail', '%s: TAP results not numbered 1..%d in order: %s'
                           % (name, len(nums), ' '.join(map(str, nums))))
        if p.rc is None:
            counts.add('fail', '%s: did not finish' % name)
        elif p.killed:
            counts.add('fail', '%s: killed by the guest\'s init %s' % (name, p.killed))
        elif p.rc != 0 and not fails and not no_tap:
            # kselftest: 4 is "skipped"; a skip is counted (or failed) above.
            counts.add('fail', '%s: exit status %d without a failing result' % (name, p.rc))
        if p.strays:
            counts.add('fail', '%s: left processes running after it exited (killed): %s'
                       % (name, p.strays))
        missing = [t for t in listed if t not in reported]
        if missing:
            counts.add('fail', '%s: %s did not report' % (name, ', '.join(missing)),
                       len(missing))
    for name in expect:
        if name in ran:
            continue
        n = len(expected.get(name, [])) or 1
        if name in st['notrun']:
            why = 'not started: ' + st['notrun'][name]
        elif st['abort']:
            why = 'did not run: the guest\'s init stopped: ' + st['abort']
        else:
            why = 'did not run'
        counts.add('fail', '%s: %s (expected: %d tests)' % (name, why, n), n)

    if st['cmd_killed']:
        counts.add('fail', 'extra command: killed by the guest\'s init %s' % st['cmd_killed'])
    elif isinstance(st['cmd_rc'], str):
        counts.add('fail', 'extra command: ' + st['cmd_rc'])
    elif st['cmd_rc'] is not None:
        counts.add('pass' if st['cmd_rc'] == 0 else 'fail',
                   'extra command: exit status %s' % st['cmd_rc'])
    elif expect_cmd:
        counts.add('fail', 'extra command: did not finish (no THPSCAN-CMD-END)')
    if st['cmd_strays']:
        counts.notes.append('extra command: left processes running (killed): '
                            + st['cmd_strays'])
    return st


def kmemleak_first(report):
    """The first object of kmemleak's report in a few words: the object,
    the task that allocated it and the first frames of where (kmemleak's
    own left out), from print_unreferenced()'s lines (6.12):
    "unreferenced object 0x... (size N):", "  comm "C", pid P, jiffies J",
    a hex dump, "  backtrace (crc X):", then a "    %pS" line per frame.
    """
    what, comm, frames, trace = None, None, [], False
    for line in report:
        if line.startswith('unreferenced object'):
            if what:
                break
            what = line[len('unreferenced '):].rstrip(':')
        elif what is None:
            continue
        elif line.startswith('  comm '):
            m = re.match(r'\s*comm "(.*)", pid (\d+)', line)
            comm = 'comm "%s" pid %s' % m.groups() if m else line.strip()
        elif line.startswith('  backtrace'):
            trace = True
        elif trace and line.startswith('    '):
            frame = re.sub(r'\+0x[0-9a-f]+/0x[0-9a-f]+', '', line.strip())
            if not frame.startswith('kmemleak_'):
                frames.append(frame)
        else:
            trace = False
    if what is None:
        return 'not in the report'
    return '%s, %s, %s' % (what, comm or 'no comm line',
                           'from ' + ' < '.join(frames[:4]) if frames else 'no backtrace')


def kmemleak(st, clines, counts):
    """Count kmemleak's verdict at the end of the boot (qemu/init), if the
    kernel has kmemleak: one result, failed by any unreferenced object,
    by no verdict (kmemleak off, a scan killed or not started), or by no
    word of kmemleak at all from a guest that finished."""
    n, off = st['kmemleak'], st['kmemleak_off']
    on = next((l for l in clines if KMEMLEAK_ON.search(l)), None)
    if n:
        report = st['kmemleak_report']
        counts.add('fail', 'kmemleak: %d unreferenced object%s at the end of the boot, the '
                   'first: %s\n    ' % (n, '' if n == 1 else 's', kmemleak_first(report))
                   + '\n    '.join(report[:40] + (['...'] if len(report) > 40 else [])))
        for o in off:
            counts.notes.append('kmemleak: ' + o)
    elif off:
        counts.add('fail', 'kmemleak: not checked at the end of the boot: ' + '; '.join(off))
    elif n == 0:
        counts.add('pass', 'kmemleak: no unreferenced object at the end of the boot')
    elif on and st['end']:
        counts.add('fail', 'kmemleak: the kernel has it (console: "%s") but the guest\'s '
                   'init said nothing of it (no THPSCAN-KMEMLEAK): nothing checked'
                   % KTAP_STAMP.sub('', on).strip())


def main():
    global EXPECTED
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('logdir')
    ap.add_argument('--name', required=True, help='the boot\'s name (allowlist entries match it)')
    ap.add_argument('--tree', required=True, help='assembled kernel tree (for kunit.py)')
    ap.add_argument('--qemu-rc', type=int, default=0)
    ap.add_argument('--seconds', type=float, default=0)
    ap.add_argument('--expected', default=EXPECTED, help='the expected list (%(default)s)')
    ap.add_argument('--allow', action='append',
                    help='skip allowlist (repeatable; default %s)' % ALLOW)
    ap.add_argument('--expect-kunit', default='all',
                    help='KUnit suites that must have run: "all" (every suite of the '
                    'expected list), none (""), or names')
    ap.add_argument('--expect-tests', default='',
                    help='guest test programs that must have run: "all" (every program '
                    'of the expected list but the *_boot and upstream_* ones), or names')
    ap.add_argument('--expect-cmd', action='store_true',
                    help='the boot has an extra command (qemu/boot.sh --cmd): it must '
                    'report its exit status')
    ap.add_argument('--counts', help='also write "passed failed skipped" to this file')
    args = ap.parse_args()

    EXPECTED = args.expected
    expected = read_expected(args.expected)
    allow = Allow(args.allow or [ALLOW])
    counts = Counts(args.name)
    run = Run(args.name, counts, allow)
    console = os.path.abspath(os.path.join(args.logdir, 'console.log'))
    results = os.path.join(args.logdir, 'results.log')
    clines = open(console, errors='replace').read().splitlines() if os.path.exists(console) else []
    rlines = open(results, errors='replace').read().splitlines() if os.path.exists(results) else []

    suites = args.expect_kunit.split()
    if suites == ['all']:
        suites = sorted({c.split('.', 1)[0] for c in expected.get('kunit', [])})
    progs = args.expect_tests.split()
    if progs == ['all']:
        # *_boot: boots of their own; upstream_*: the upstream mm
        # selftests, in boots of their own (workbench/upstream/run.sh);
        # the guest scripts (workbench/guest/*.sh, trace_cmd) as well.
        scripts = {os.path.basename(f)[:-3] for f in glob.glob(
            os.path.join(HERE, '..', 'workbench', 'guest', '*.sh'))}
        progs = [p for p in expected if p != 'kunit' and not p.endswith('_boot')
                 and not p.startswith('upstream_') and p not in scripts]

    kunit_cases(args.tree, console, clines, run, expected, suites)
    # A failed mount is reported on the results channel and on the console
    # (the channel may be what did not come up).
    rlines_all = rlines + [l for l in clines if l.startswith(('THPSCAN-MOUNT-FAILED',
                                                              'THPSCAN-ABORT'))
                           and l not in rlines]
    st = guest_tests(rlines_all, run, expected, progs, args.expect_cmd)
    for m in sorted(set(st['mounts'])):
        counts.add('fail', 'guest init: mount failed: %s' % m)
    if st['abort']:
        counts.add('fail', 'guest init stopped the run: %s (qemu exit status %d)'
                   % (st['abort'], args.qemu_rc))
    else:
        counts.add('pass' if st['end'] else 'fail',
                   'guest finished (qemu exit status %d)' % args.qemu_rc)
    kmemleak(st, clines, counts)

    reports = []
    for l in clines:
        for label, rx in KERNEL_REPORT_RES:
            if rx.search(l):
                reports.append('[%s] %s' % (label, l))
                break
    counts.add('fail' if reports else 'pass', 'console: kernel reports:\n    '
               + '\n    '.join(reports[:30]))

    for e in allow.unused(args.name, run.ran):
        counts.notes.append('%s: %s reported, but not with a skip this entry allows: '
                            'is the entry still needed?' % (e['where'], e['test']))
    for n in counts.notes:
        print('%s: note: %s' % (args.name, n))
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
