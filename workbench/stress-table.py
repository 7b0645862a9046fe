#!/usr/bin/env python3
"""The table of make stress (workbench/stress.sh): one row per boot.

Usage: stress-table.py LOGDIR NAME...

Each boot's build/logs/NAME/ holds results.log, with thp_scan_stress's
"# stress-summary key=value ..." line (what the run did: its counters are
/proc/vmstat's differences over the run, and the stress is all the guest
runs), console.log (the kernel's reports, counted as qemu/results.py
finds them) and counts (results.py's "passed failed skipped").  A boot
that did not get as far as the summary shows "-" where its figures
would be.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'qemu'))
import results  # noqa: E402  (the kernel report patterns of the test command)

SUMMARY = re.compile(r'# stress-summary (.*)$')

# Columns: title, and how to get the value from the summary's fields.
COLUMNS = [
    ('steps', lambda s: s['steps']),
    ('pages verified', lambda s: s['verified']),
    ('bad', lambda s: s['bad']),
    ('thp_scan splits', lambda s: s['thp_split_scan_underused'] +
     s['thp_split_scan_partial'] + s['thp_split_scan_swapout']),
    ('splits', lambda s: s['thp_split_page']),
    ('collapses', lambda s: s['thp_collapse_alloc']),
    ('swap-outs (pages)', lambda s: s['pswpout']),
    ('migrations (pages)', lambda s: s['pgmigrate_success']),
    ('CPU hotplug cycles', lambda s: s['hotplug_cycles']),
    ('injected: page', lambda s: s['injected_page']),
    ('injected: slab', lambda s: s['injected_slab']),
    ('failed: collapse alloc', lambda s: s['thp_collapse_alloc_failed']),
    ('failed: split', lambda s: s['thp_split_page_failed']),
    ('failed: thp_scan split', lambda s: s['thp_split_scan_failed']),
    ('kept: busy', lambda s: s['thp_split_scan_keep_busy']),
]


def summary(logdir):
    """The fields of the boot's stress-summary line, or None."""
    try:
        with open(os.path.join(logdir, 'results.log'), errors='replace') as f:
            for line in f:
                m = SUMMARY.search(line)
                if m:
                    return {k: int(v) for k, v in
                            (kv.split('=', 1) for kv in m.group(1).split())}
    except OSError:
        pass
    return None


def splats(logdir):
    """The console's kernel reports, by label; None without a console."""
    found = {}
    try:
        with open(os.path.join(logdir, 'console.log'), errors='replace') as f:
            for line in f:
                for label, pat in results.KERNEL_REPORT_RES:
                    if pat.search(line):
                        found[label] = found.get(label, 0) + 1
                        break
    except OSError:
        return None
    return found


def leaks(logdir):
    """kmemleak's verdict: the stress's own check and init's scan."""
    verdict = '-'
    try:
        with open(os.path.join(logdir, 'results.log'), errors='replace') as f:
            for line in f:
                if 'kmemleak:' in line and line.lstrip().startswith('#'):
                    verdict = 'reported'
                m = re.match(r'THPSCAN-KMEMLEAK (\d+)', line)
                if m:
                    verdict = m.group(1) if verdict != 'reported' else 'reported'
    except OSError:
        pass
    return verdict


def counts(logdir):
    try:
        with open(os.path.join(logdir, 'counts')) as f:
            p, fl, s = f.read().split()
            return 'passed' if fl == '0' and p != '0' else f'FAILED ({fl})'
    except (OSError, ValueError):
        return 'no result'


def main():
    logs, names = sys.argv[1], sys.argv[2:]
    rows = []
    for name in names:
        d = os.path.join(logs, name)
        s = summary(d)
        sp = splats(d)
        row = [name, counts(d)]
        for _, get in COLUMNS:
            try:
                row.append(str(get(s)) if s else '-')
            except KeyError:
                row.append('-')
        row.append('-' if sp is None else
                   ', '.join(f'{k} {v}' for k, v in sorted(sp.items())) or '0')
        row.append(leaks(d))
        rows.append(row)
    head = ['boot', 'result'] + [c for c, _ in COLUMNS] + ['splats', 'kmemleak']
    # Transposed: one line per figure, one column per boot (they are few).
    width = max(len(h) for h in head)
    cw = max([len(v) for r in rows for v in r] + [8])
    print('stress: what each boot did')
    for i, h in enumerate(head):
        print(f'  {h:<{width}}  ' + '  '.join(f'{r[i]:>{cw}}' for r in rows))
    return 0


if __name__ == '__main__':
    sys.exit(main())
