#!/usr/bin/env python3
"""Negative controls for the fixtures: each check of qemu/results.py that a
fixture exists for is taken out of a copy of results.py (a mutant), and the
fixture run on that copy (run.sh with RESULTS_PY) must then fail.  A
fixture that still passes without the check it is meant for proves
nothing.  Prints "mutants: ok: ..." or "mutants: FAIL: ..." per mutant and
exits 1 if any mutant survived (or no longer applies: results.py changed,
update the table).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, '..', '..', 'qemu', 'results.py')

# (name, fixture, text of results.py, what it becomes)
MUTANTS = [
    ('a repeated result counted again', 'tap',
     "                continue\n            run.result(name, test, status, msg)",
     "                pass\n            run.result(name, test, status, msg)"),
    ('no check of repeated results', 'tap',
     "counts.add('fail', '%s: %s reported %d times'", "(lambda *a: 0)('%s: %s reported %d times'"),
    ('no check of the numbering', 'tap',
     "if nums != list(range(1, len(nums) + 1)):", "if False:"),
    ('no check of a second TAP plan', 'tap', "elif p.plans > 1:", "elif False:"),
    ("the command's exit status ignored", 'cmd-failed',
     "counts.add('pass' if st['cmd_rc'] == 0 else 'fail',", "counts.add('pass',"),
    ('a killed command not failed', 'cmd-killed', "    if st['cmd_killed']:", "    if False:"),
    ('a command that never reported not failed', 'cmd-missing',
     "    elif expect_cmd:", "    elif False:"),
    ('a KUnit case lost in a crash not failed', 'kunit-crash',
     "counts.add('fail', 'kunit: %s: fewer cases", "(lambda *a: 0)('kunit: %s: fewer cases"),
    ('no KASAN pattern', 'reports', "    ('KASAN', r'KASAN|KFENCE'),\n", ""),
    ('no oops pattern', 'reports',
     "    ('oops', r'Oops|Unable to handle kernel|general protection fault|kernel BUG at'),\n", ""),
    ('no BUG pattern', 'reports', "    ('BUG', r'BUG:'),\n", ""),
    ('no WARNING pattern', 'reports', "    ('WARNING', r'WARNING:'),\n", ""),
    ("kmemleak's unreferenced objects counted as a pass", 'kmemleak',
     "counts.add('fail', 'kmemleak: %d unreferenced", "counts.add('pass', 'kmemleak: %d unreferenced"),
    ('kmemleak off at the end counted as a pass', 'kmemleak-off',
     "counts.add('fail', 'kmemleak: not checked", "counts.add('pass', 'kmemleak: not checked"),
    ("no kmemleak verdict from a kernel with kmemleak not failed", 'kmemleak-missing',
     "    elif on and st['end']:", "    elif False:"),
]


def main():
    src = open(RESULTS).read()
    bad = 0
    # results.py finds the repository from its own folder.
    mutant = os.path.join(os.path.dirname(os.path.abspath(RESULTS)), '.results-mutant.py')
    try:
        for name, fixture, old, new in MUTANTS:
            if src.count(old) != 1:
                print('mutants: FAIL: %s: the text to take out is not in qemu/results.py '
                      'once (update workbench/selfcheck/mutants.py): %r' % (name, old))
                bad = 1
                continue
            with open(mutant, 'w') as f:
                f.write(src.replace(old, new))
            env = dict(os.environ, RESULTS_PY=mutant)
            p = subprocess.run([os.path.join(HERE, 'run.sh'), fixture], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            why = [l.strip() for l in p.stdout.splitlines() if l.startswith('  ') and
                   not l.startswith('  |')]
            if p.returncode == 1:
                print('mutants: ok: %s: the %s fixture fails (%s)' % (name, fixture, why[0]))
            else:
                print('mutants: FAIL: %s: the %s fixture still passes' % (name, fixture))
                bad = 1
    finally:
        if os.path.exists(mutant):
            os.unlink(mutant)
    return bad


if __name__ == '__main__':
    sys.exit(main())
