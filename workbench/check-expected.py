#!/usr/bin/env python3
"""Check that qemu/expected-tests matches what the sources define.

   workbench/check-expected.py [--root DIR] [--list FILE] [--allow FILE] [--print]

The sources, under DIR (the repository by default):
  - every KUnit case: the KUNIT_CASE*() entries of the kunit_case array of
    each kunit_suite, in the repository's C files and headers and in the
    lines the quilt patches add ("kunit SUITE.CASE");
  - every kselftest-harness test of every in-guest program, the files
    workbench/build-tests.sh builds (tools/testing/selftests/mm/
    thp_scan_*.c and thp_policy_*.c, thp_scan_util.c excepted): TEST(),
    TEST_SIGNAL(), TEST_F(), TEST_F_SIGNAL(), TEST_F_TIMEOUT(), once per
    FIXTURE_VARIANT_ADD() of their fixture, named as the harness prints them
    ("PROGRAM FIXTURE[.VARIANT].TEST", fixture "global" for TEST());
  - the upstream mm selftests of workbench/upstream/tests, one result
    each of the guest programs upstream_mm and upstream_mm_quick
    ("upstream_mm upstream.NAME");
  - the TAP results the guest scripts workbench/guest/*.sh print
    ('echo "ok N PROGRAM.NAME"' lines; the program is the script's name).

Prints one line per difference, saying what to do, and exits 1 if there is
any; also checks that each entry of the skip allowlist names a test of the
list (or of a fixture's list, workbench/selfcheck/*/expected-tests).  --print prints the list the sources define instead.
"""
import argparse
import glob
import os
import re
import sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(top, 'qemu'))
import results  # noqa: E402  (read_expected, Allow)

# Must match the globs of workbench/build-tests.sh, and what it leaves out:
# thp_scan_util.c, the programs' helpers, is no program.
PROGRAM_GLOBS = ['tools/testing/selftests/mm/thp_scan_*.c',
                 'tools/testing/selftests/mm/thp_policy_*.c']
NOT_PROGRAMS = {'thp_scan_util'}
# The upstream mm selftests the guest programs upstream_mm (set "full") and
# upstream_mm_quick (set "quick") run (workbench/upstream/run.sh).
UPSTREAM_LIST = 'workbench/upstream/tests'
UPSTREAM_PROGRAMS = {'upstream_mm': 'full', 'upstream_mm_quick': 'quick'}
GUEST_SCRIPTS = 'workbench/guest/*.sh'


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', text)


def kunit_from_text(text):
    """{suite: [case, ...]} of the kunit_suite definitions in C text."""
    text = strip_comments(text)
    arrays = {}
    for m in re.finditer(r'struct\s+kunit_case\s+(\w+)\s*\[\s*\]\s*=\s*\{(.*?)\n\s*\}\s*;',
                         text, re.S):
        arrays[m.group(1)] = re.findall(r'KUNIT_CASE\w*\(\s*(\w+)', m.group(2))
    suites = {}
    for m in re.finditer(r'struct\s+kunit_suite\s+\w+\s*=\s*\{(.*?)\}\s*;', text, re.S):
        name = re.search(r'\.name\s*=\s*"([^"]+)"', m.group(1))
        cases = re.search(r'\.test_cases\s*=\s*(\w+)', m.group(1))
        if name and cases:
            suites[name.group(1)] = arrays.get(cases.group(1), [])
    return suites


def patch_added_text(path):
    """{file: text of the lines the patch adds} (a + line's content)."""
    out, cur = {}, None
    with open(path, errors='replace') as f:
        for line in f:
            if line.startswith('+++ '):
                cur = re.sub(r'^[ab]/', '', line[4:].split('\t')[0].strip())
                out.setdefault(cur, '')
            elif cur and line.startswith('+'):
                out[cur] += line[1:]
    return out


def kunit_cases(root):
    texts = []
    for d in ('mm', 'include', 'lib', 'kernel', 'fs', 'drivers'):
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in files:
                if f.endswith(('.c', '.h')):
                    texts.append(open(os.path.join(dirpath, f), errors='replace').read())
    for p in sorted(glob.glob(os.path.join(root, 'patches', '*.patch'))):
        for f, text in patch_added_text(p).items():
            if f.endswith(('.c', '.h')):
                texts.append(text)
    cases = []
    for text in texts:
        for suite, names in kunit_from_text(text).items():
            cases += ['%s.%s' % (suite, n) for n in names]
    return cases


def harness_tests(path):
    """The TAP names a kselftest-harness program prints, in source order."""
    text = strip_comments(open(path, errors='replace').read())
    variants = {}
    for m in re.finditer(r'\bFIXTURE_VARIANT_ADD\(\s*(\w+)\s*,\s*(\w+)\s*\)', text):
        variants.setdefault(m.group(1), []).append(m.group(2))
    tests = []
    for m in re.finditer(r'^\s*(TEST|TEST_SIGNAL|TEST_F|TEST_F_SIGNAL|TEST_F_TIMEOUT)'
                         r'\(\s*(\w+)\s*(?:,\s*(\w+))?', text, re.M):
        kind, a, b = m.groups()
        fixture, name = ('global', a) if kind in ('TEST', 'TEST_SIGNAL') else (a, b)
        for v in variants.get(fixture, [None]):
            tests.append('%s.%s%s' % (fixture, v + '.' if v else '', name))
    return tests


def upstream_tests(root):
    """{program: ["upstream.NAME", ...]} of workbench/upstream/tests."""
    path = os.path.join(root, UPSTREAM_LIST)
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path):
        f = line.split()
        if not f or f[0].startswith('#'):
            continue
        for prog, which in UPSTREAM_PROGRAMS.items():
            if which in f[0].split(','):
                out.setdefault(prog, []).append('upstream.' + f[1])
    return out


def script_tests(root):
    """{program: ["PROGRAM.NAME", ...]} of the guest scripts, in order."""
    out = {}
    for src in sorted(glob.glob(os.path.join(root, GUEST_SCRIPTS))):
        prog = os.path.basename(src)[:-3]
        names = re.findall(r'\bok [0-9]+ (%s\.\w+)' % re.escape(prog), open(src).read())
        out[prog] = list(dict.fromkeys(names))
    return out


def from_sources(root):
    defined = {'kunit': kunit_cases(root)}
    defined.update(upstream_tests(root))
    defined.update(script_tests(root))
    for g in PROGRAM_GLOBS:
        for src in sorted(glob.glob(os.path.join(root, g))):
            if os.path.basename(src)[:-2] not in NOT_PROGRAMS:
                defined[os.path.basename(src)[:-2]] = harness_tests(src)
    return defined


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default=top, help='the sources (default: the repository)')
    ap.add_argument('--list', default=os.path.join(top, 'qemu', 'expected-tests'))
    ap.add_argument('--allow', default=os.path.join(top, 'qemu', 'skips.allow'))
    ap.add_argument('--print', action='store_true', help='print the list the sources define')
    args = ap.parse_args()

    defined = from_sources(args.root)
    if args.print:
        for prog in ['kunit'] + sorted(p for p in defined if p != 'kunit'):
            for t in defined[prog]:
                print('%s %s' % (prog, t))
        return 0
    listed = results.read_expected(args.list)
    lname = os.path.relpath(args.list)
    bad = 0
    for prog in sorted(set(defined) | set(listed)):
        d, l = defined.get(prog, []), listed.get(prog, [])
        if prog != 'kunit' and not d and prog in defined:
            print('check-expected: %s: no kselftest-harness TEST() found in its source'
                  % prog)
            bad += 1
        for t in sorted(set(d) - set(l)):
            print('check-expected: %s %s is defined in the sources but not in %s: add the '
                  'line "%s %s" there' % (prog, t, lname, prog, t))
            bad += 1
        for t in sorted(set(l) - set(d)):
            print('check-expected: %s %s is in %s but the sources do not define it: did it '
                  'disappear?  Remove it there only if it was removed on purpose'
                  % (prog, t, lname))
            bad += 1
        for t in sorted({t for t in d if d.count(t) > 1}):
            print('check-expected: %s %s is defined %d times' % (prog, t, d.count(t)))
            bad += 1
    # Allowlist entries name a test of the list, or of a self-check fixture.
    every = set()
    for f in [args.list] + sorted(glob.glob(os.path.join(top, 'workbench', 'selfcheck', '*',
                                                         'expected-tests'))):
        every |= {'%s %s' % (p, t) for p, ts in results.read_expected(f).items() for t in ts}
    for e in results.Allow([args.allow]).entries:
        if e['test'] not in every:
            print('check-expected: %s: %s is not a test of %s or of a self-check fixture'
                  % (e['where'], e['test'], lname))
            bad += 1
    n = sum(len(v) for v in listed.values())
    print('check-expected: %s: %d tests (%d KUnit cases, %d programs): %s'
          % (lname, n, len(listed.get('kunit', [])), len([p for p in listed if p != 'kunit']),
             'matches the sources' if not bad else '%d differences' % bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
