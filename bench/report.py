#!/usr/bin/env python3
"""The benchmark's report: tables, plots and the run's facts.

Reads the "BENCH ..." lines (bench/guest/thpbench.c, bench/guest/bench.sh)
of each boot's build/logs/bench-NAME/results.log and writes to --out:
README.md (the tables and how they were made), data/*.dat (the series
behind the plots) and the plots (PNG, gnuplot from Debian's gnuplot-nox).
No thresholds: a benchmark reports, it does not pass or fail.
"""
import argparse
import datetime
import os
import shutil
import subprocess
import sys

POLICIES = ['never', 'madvise', 'always', 'defer', 'auto']
KERNELS = ['stock', 'patched']
SIZES = {2048: 'PMD THP (2 MiB)', 64: '64K mTHP', 16: '16K mTHP', 4: 'order 0 (4 KiB)'}


def parse(path):
    """The BENCH lines of one results.log: [(kind, {key: value})]."""
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path, errors='replace'):
        line = line.strip()
        if line.startswith('BENCH-SKIP ') or line.startswith('BENCH-ERROR '):
            kind, _, text = line.partition(' ')
            out.append((kind, {'text': text}))
            continue
        if not line.startswith('BENCH '):
            continue
        words = line.split()
        kv = {}
        for w in words[2:]:
            k, sep, v = w.partition('=')
            if sep:
                kv[k] = v
        out.append((words[1], kv))
    return out


def num(v, default=None):
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def fmt(v, nd=1):
    return '–' if v is None else ('%.*f' % (nd, v))


ARCHES = (('', ''), ('-arm64', ' (arm64)'))


def cols(boots):
    """(label, name) of the memory boots: x86_64 then arm64, stock first, in policy order."""
    res = []
    for suffix, tag in ARCHES:
        for k in KERNELS:
            for p in POLICIES:
                n = '%s-%s%s' % (k, p, suffix)
                if n in boots:
                    res.append(('%s %s%s' % (k, p, tag), n))
    return res


def gnuplot(script, cwd):
    if not shutil.which('gnuplot'):
        print('report: no gnuplot (workbench/install-deps.sh installs gnuplot-nox): no plots')
        return False
    r = subprocess.run(['gnuplot'], input=script, text=True, cwd=cwd,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode:
        print('report: gnuplot failed:\n' + r.stdout)
        return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--logs', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--boots', required=True)
    ap.add_argument('--quick', default='0')
    ap.add_argument('--seconds', type=int, default=0)
    ap.add_argument('--redis-version', default='unknown')
    ap.add_argument('--patched-config')
    ap.add_argument('--stock-config')
    ap.add_argument('--tree')
    ap.add_argument('--only', default='', help='the boots a run of some boots (--only) asked for')
    ap.add_argument('--readme', help='a README.md whose benchmark block (between '
                    '<!-- bench:begin --> and <!-- bench:end -->) gets the headline tables')
    a = ap.parse_args()

    names = a.boots.split()
    data = {n: parse(os.path.join(a.logs, 'bench-' + n, 'results.log')) for n in names}
    rcs = {}
    for n in names:
        try:
            rcs[n] = open(os.path.join(a.logs, 'bench-%s.rc' % n)).read().strip()
        except OSError:
            rcs[n] = '?'
    mem = cols(names)
    os.makedirs(os.path.join(a.out, 'data'), exist_ok=True)
    md = []
    w = md.append
    mark = {}

    def lines(n, kind):
        return [kv for k, kv in data.get(n, []) if k == kind]

    # --- facts -----------------------------------------------------------
    info = {}
    for n in names:
        for kv in lines(n, 'info'):
            info.setdefault(kv.get('kernel'), kv)
    qemu = subprocess.run(['qemu-system-x86_64', '--version'], stdout=subprocess.PIPE,
                          text=True).stdout.splitlines()[0]
    debver = subprocess.run(['dpkg-query', '-W', '-f=${Version}', 'linux-source-6.12'],
                            stdout=subprocess.PIPE, text=True).stdout.strip() or 'unknown'
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    head = subprocess.run(['git', '-C', top, 'log', '-1', '--format=%h %s'],
                          stdout=subprocess.PIPE, text=True).stdout.strip()
    npatch = 0
    series = os.path.join(top, 'patches', 'series')
    if os.path.exists(series):
        npatch = len([l for l in open(series) if l.strip() and not l.startswith('#')])
    cpu = ''
    for l in open('/proc/cpuinfo'):
        if l.startswith('model name'):
            cpu = l.split(':', 1)[1].strip()
            break
    quick = a.quick == '1'
    w('# Benchmark: stock Linux 6.12 against the patched kernel (thp_scan, `defer`, `auto`)')
    w('')
    w('%s run of `%s`, %s UTC, %d min %d s on %d host cores (%s).' % (
        'Quick' if quick else ('Partial' if a.only else 'Full'),
        ('bench/run.sh' if a.only else './run bench') + (' --quick' if quick else '') +
        (' --arm64' if any(n.endswith('-arm64') for n in names) else '') +
        (' --only "%s"' % a.only if a.only else ''),
        datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M'), a.seconds // 60, a.seconds % 60,
        os.cpu_count(), cpu))
    w('')
    w('| | |')
    w('|---|---|')
    w('| stock kernel | Linux %s, Debian `linux-source-6.12` %s, no patches |' % (
        info.get('stock', {}).get('release', '?'), debver))
    w('| patched kernel | Linux %s, the same source + this repository\'s %d patches and overlay (commit %s) |' % (
        info.get('patched', {}).get('release', '?'), npatch, head))
    w('| configs | `allnoconfig` + `configs/base.config` + `configs/x86_64.config` + `configs/bench.config` (`CONFIG_NET`, `CONFIG_UNIX`, `CONFIG_SCHEDSTATS`)%s; stock without `CONFIG_THP_SCAN*` and `CONFIG_THP_AUTO_KUNIT_TEST` (differences: `configs.diff`) |' % (
        '; the lock boots add `configs/lockstat.config` (`CONFIG_LOCK_STAT`)' if any(n.startswith('locks-') for n in names) else ''))
    w('| guest | QEMU TCG, `-icount shift=0,sleep=off -smp 1 -m 1024` (the lock boots: `-smp 4`); x86_64: `-M pc -cpu max`%s; %s |' % (
        ', arm64: `-M virt -cpu max` (4 KiB pages), Debian\'s arm64 redis' if any(n.endswith('-arm64') for n in names) else '',
        qemu))
    w('| redis | Debian redis-server / redis-benchmark %s (jemalloc), `--disable-thp no`, unix socket |' % a.redis_version)
    w('| boot exit status | %s |' % ', '.join('%s: %s' % (n, rcs[n]) for n in names))
    w('')
    w('**How to read it.** Memory is what the memcg is charged (`memory.current`), '
      'never RSS. Times are guest time under `-icount shift=0`: one guest '
      'nanosecond per instruction, whatever the host\'s load, repeatable to about '
      '0.05 %; they count instructions, not cycles: caches, TLB misses and the page walks '
      'that huge pages save do not show (QEMU\'s soft TLB does not model them), so '
      'THPs show their costs here (zeroing, scanning) and not their main benefit. '
      'With `sleep=off` an idle guest jumps to its next timer: the windows of '
      'tens of seconds cost the host nothing. `madvise` equals `never` in these '
      'workloads: none of them calls `madvise(MADV_HUGEPAGE)` (they are not tuned for THP).')
    w('')

    # --- sparse ------------------------------------------------------------
    sp = {}
    series = {}
    for label, n in mem:
        for kv in lines(n, 'sparse'):
            key = (int(kv['kb']), int(kv['pct']), int(kv['pressure']))
            sp.setdefault(key, {})[n] = dict(kv)
        for kv in lines(n, 'sparse-end'):
            key = (int(kv['kb']), int(kv['pct']), int(kv['pressure']))
            sp.setdefault(key, {}).setdefault(n, {}).update(kv)
        for kv in lines(n, 'sparse-t'):
            key = (int(kv['kb']), int(kv['pct']), int(kv['pressure']))
            series.setdefault(key, {}).setdefault(n, []).append((num(kv['t']), num(kv['mib'])))
    for pressure in (0, 1):
        keys = sorted([k for k in sp if k[2] == pressure], key=lambda k: (-k[0], k[1]))
        if not keys:
            continue
        if pressure == 0:
            w('## 1. Sparse THPs and 64K mTHPs, no memory pressure')
            w('')
            w('Each row maps %s MiB, writes the given share of every folio\'s 4 KiB '
              'subpages (at least one; evenly spread), and watches memcg '
              '`memory.current` every second. Cell: MiB at once → MiB at the end of the '
              'window (guest seconds until 90 %% of the bloat, the footprint above the '
              'written memory, was gone; ∞: not within the window; –: no bloat at once). '
              'ᵖ: `auto/state` read `pressure` (auto behaving as `defer`) right after the fault.' % (
                  next(iter(sp[keys[0]].values())).get('mib', '?')))
        else:
            w('## 1b. The same with memcg pressure')
            w('')
            w('After the fault, `memory.high` is set to the written memory plus a quarter '
              'of the bloat (no swap): the reclaim that write starts, and what follows in '
              'the window. These run after all the rows above: a memcg throttled at '
              '`memory.high` stalls, PSI is system-wide, and `auto` reads it (ᵖ: `auto/state` '
              'read `pressure` right after the fault, although the machine had plenty '
              'of free memory).')
        w('')
        w('| folios | written | ideal MiB | ' + ' | '.join(l for l, _ in mem) + ' |')
        w('|---|---|---|' + '---|' * len(mem))
        for key in keys:
            row = sp[key]
            any_kv = next(iter(row.values()))
            cells = []
            for _, n in mem:
                kv = row.get(n)
                if not kv:
                    cells.append('–')
                    continue
                g = num(kv.get('gone_s'))
                gs = '∞' if g is None or g < 0 else ('–' if g == 0 else '%.0f s' % g if g >= 1 else '%.2f s' % g)
                cells.append('%s → %s (%s)%s%s' % (
                    fmt(num(kv.get('once_mib'))), fmt(num(kv.get('end_mib'))), gs,
                    ' ᵖ' if kv.get('auto_state') == 'pressure' and n.split('-')[1] == 'auto' else '',
                    '' if kv.get('data', 'ok') == 'ok' else ' **data %s**' % kv.get('data')))
            w('| %s | %s %% | %s | %s |' % ('PMD' if key[0] == 2048 else '%dK' % key[0],
                                           any_kv.get('written_pct', key[1]), any_kv.get('ideal_mib', '?'),
                                           ' | '.join(cells)))
        w('')

    # --- dense -------------------------------------------------------------------
    # Boots dense-KERNEL[-arm64]: "BENCH dense setting=S shape=H pct=P ..."
    # per row; setting never, always, always-keep0 (patched only).
    dn = {}
    for suffix, atag in ARCHES:
        for k in KERNELS:
            for kv in lines('dense-%s%s' % (k, suffix), 'dense'):
                dn[(atag, k, kv['setting'], kv['shape'], int(kv['pct']))] = kv
    if dn:
        mark['dense'] = len(md)
        kv0 = next(iter(dn.values()))
        w('## 1c. Keeping the dense parts: 2 MiB THPs partly written')
        w('')
        w('%s MiB of 2 MiB THPs (every mTHP size at `inherit`, so a split may keep '
          'any size), the given share of each written, every byte of a written page: '
          '`runs` as one run from the THP\'s start (25 %%: its first 512K; 75 %%: an '
          'aligned 1M and 512K), `spread64k` as 64K runs spread evenly, `spread4k` as '
          'single pages spread evenly. memcg `memory.current` %s guest seconds after the '
          'fault (kthpscand\'s minimum age is 10 s), against `never` on the same kernel, '
          'and the share of the written bytes in folios of 64K or more (in 2M ones). '
          'Patched `keep0`: `thp_scan/split_keep_dense=0` (the rule before it).' % (
              kv0['mib'], fmt(num(kv0['window_s']), 0)))
        w('')
        cols_d = [(k, st) for k in KERNELS for st in ('never', 'always', 'always-keep0')
                  if any(key[1] == k and key[2] == st for key in dn)]
        w('| shape | written | ' + ' | '.join('%s %s' % (k, st.replace('always-keep0', 'always keep0'))
                                             for k, st in cols_d) + ' |')
        w('|---|---|' + '---|' * len(cols_d))
        for _, atag in ARCHES:
            for shape in ('runs', 'spread64k', 'spread4k'):
                for pct in (25, 50, 75):
                    cells = []
                    for k, st in cols_d:
                        kv = dn.get((atag, k, st, shape, pct))
                        nv = dn.get((atag, k, 'never', shape, pct))
                        if not kv:
                            cells.append('–')
                            continue
                        end = num(kv['end_mib'])
                        c = '%s MiB' % fmt(end)
                        if st != 'never' and nv and num(nv['end_mib']):
                            c += ', %.2fx' % (end / num(nv['end_mib']))
                        if st != 'never':
                            c += ', %s %% (%s %%)' % (kv['ge64k_pct'], kv['ge2m_pct'])
                        if kv.get('data') != 'ok':
                            c += ' **data %s**' % kv.get('data')
                        cells.append(c)
                    if all(c == '–' for c in cells):
                        continue
                    w('| %s%s | %d %% | %s |' % (shape, atag, pct, ' | '.join(cells)))
        w('')
    mark['dense_end'] = len(md)

    # --- rounds (issue 22) --------------------------------------------------------
    # Boots rounds-KERNEL[-arm64]: "BENCH rounds-t tag=POLICY-SHAPE-LIMIT
    # round=R mib=M anon_thp_mib=T fault_ms=F dense=D" per round and
    # "BENCH rounds-end tag=... fault_ms=F scan_cpu_ms=C limited=L data=..".
    rd = {}
    for suffix, atag in ARCHES:
        for k in KERNELS:
            n = 'rounds-%s%s' % (k, suffix)
            for kv in lines(n, 'rounds-t'):
                rd.setdefault((atag, k, kv['tag']), {'t': [], 'end': None})['t'].append(kv)
            for kv in lines(n, 'rounds-end'):
                rd.setdefault((atag, k, kv['tag']), {'t': [], 'end': None})['end'] = kv
    if rd:
        mark['rounds'] = len(md)
        w('## 1d. A program that maps memory round by round (the fault feedback)')
        w('')
        w('A process maps 4 MiB every 2 guest seconds and writes 1 % of each round\'s '
          'pages (`sparse`), all of them (`dense`), or 1 % and then, from the middle '
          'round on, all (`phase`). memcg `memory.current` after rounds 16, 32 and the '
          'last, against `never` on the same kernel; the guest time of the writes '
          '(faults and zeroing) plus kthpscand\'s CPU over the run, against `never`\'s; '
          'for `phase`, the first dense round made of 2M THPs only, counted from the '
          'change; the faults served smaller (`anon_fault_limited`). `limit`: '
          '`thp_scan/fault_limit_secs` (0: off, the default).')
        w('')
        w('| arch, kernel, policy, limit | shape | MiB at 16 / 32 / end | vs never (end) | '
          'writes + scan ms | vs never | full THPs after the change | smaller | data |')
        w('|---|---|---|---|---|---|---|---|---|')

        def cpu(e):
            return num(e['fault_ms'], 0) + num(e['scan_cpu_ms'], 0)

        def at(t, r):
            kv = next((x for x in t if int(x['round']) == r), None)
            return num(kv['mib']) if kv else None

        for _, atag in ARCHES:
            for k in KERNELS:
                tags = sorted({key[2] for key in rd if key[0] == atag and key[1] == k},
                              key=lambda t: (['never', 'always', 'auto'].index(t.split('-')[0])
                                             if t.split('-')[0] in ('never', 'always', 'auto') else 9,
                                             t.split('-')[-1], ['sparse', 'dense', 'phase'].index(t.split('-')[1])
                                             if t.split('-')[1] in ('sparse', 'dense', 'phase') else 9))
                for tag in tags:
                    pol, shape, ls = (tag.split('-') + ['', '', ''])[:3]
                    r = rd[(atag, k, tag)]
                    e, t = r['end'], r['t']
                    if not e or not t:
                        continue
                    last = max(int(x['round']) for x in t)
                    nv = next((v for key, v in rd.items() if key[0] == atag and key[1] == k and
                               key[2].startswith('never-%s-' % shape) and v['end']), None)
                    ends = [at(t, 15), at(t, 31), at(t, last)]
                    vs = '–'
                    if nv and at(nv['t'], last):
                        vs = '%.2fx' % (ends[2] / at(nv['t'], last))
                    cvs = '–'
                    if nv and cpu(nv['end']):
                        cvs = '%.2fx' % (cpu(e) / cpu(nv['end']))
                    full = '–'
                    if shape == 'phase':
                        frm = int(e['dense_from'])
                        full = 'none'
                        for x in sorted(t, key=lambda x: int(x['round'])):
                            rr = int(x['round'])
                            prev = next((y for y in t if int(y['round']) == rr - 1), None)
                            if rr >= frm and prev and \
                                    num(x['anon_thp_mib']) - num(prev['anon_thp_mib']) >= 4 - 0.01:
                                full = '%d' % (rr - frm)
                                break
                    w('| %s%s, %s, %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
                        k, atag, pol, 'limit %s' % ls if ls != 'default' else '–', shape,
                        ' / '.join(fmt(v) if v is not None else '–' for v in ends), vs,
                        fmt(cpu(e), 1), cvs, full, e.get('limited', '–'),
                        e.get('data') if e.get('data') == 'ok' else '**%s**' % e.get('data')))
        w('')
    mark['rounds_end'] = len(md)

    # --- redis -----------------------------------------------------------------
    red = {n: lines(n, 'redis-t') for _, n in mem}
    if any(red.values()):
        mark['redis'] = len(md)
        w('## 2. redis: 10000 SETs of 16000 bytes, 80 % of the keys deleted')
        w('')
        w('memcg `memory.current` of redis-server after the deletes (what khugepaged '
          'collapses again counts), every 30 s; then redis-benchmark (8 clients, '
          '1 KiB values) in requests per guest second: under TCG and `-icount` that is '
          'requests per 10^9 guest instructions, with no cache or TLB effects, so the '
          'policies\' main benefit does not show; the differences are path lengths '
          '(faults, zeroing, splits).')
        w('')
        ts = sorted({round(num(kv['t']) / 30) * 30 for v in red.values() for kv in v})
        tests = []
        for _, n in mem:
            for kv in lines(n, 'redis-bench'):
                if kv['test'] not in tests:
                    tests.append(kv['test'])
        w('| kernel, policy | ' + ' | '.join('+%d s' % t for t in ts) + ' | vs never (end) | '
          + ' | '.join('%s req/s' % t for t in tests) + ' |')
        w('|---|' + '---|' * (len(ts) + 1 + len(tests)))
        for label, n in mem:
            if not red[n]:
                continue
            byt = {round(num(kv['t']) / 30) * 30: num(kv['mib']) for kv in red[n]}
            # never on the same kernel and arch: stock-never, patched-never-arm64.
            nev = '%s-never%s' % (n.split('-')[0], '-arm64' if n.endswith('-arm64') else '')
            ratio = '–'
            if red.get(nev) and byt:
                last = num(red[nev][-1]['mib'])
                ratio = '%.2fx' % (byt[max(byt)] / last) if last else '–'
            rb = {kv['test']: kv['rps'] for kv in lines(n, 'redis-bench')}
            w('| %s | %s | %s | %s |' % (label, ' | '.join(fmt(byt.get(t)) for t in ts), ratio,
                                       ' | '.join(rb.get(t, '–') for t in tests)))
        fol = [(label, kv) for label, n in mem for kv in lines(n, 'folios') if kv.get('tag') == 'redis']
        if fol:
            w('')
            w('redis-server\'s resident anonymous memory at the end, by the size of its folios '
              '(`/proc/PID/pagemap` and `/proc/kpageflags`):')
            w('')
            w('| kernel, policy | resident MiB | in folios of 64K or more | in 2M folios |')
            w('|---|---|---|---|')
            for label, kv in fol:
                w('| %s | %s | %s MiB (%s %%) | %s MiB (%s %%) |' % (
                    label, kv['resident_mib'], kv['ge64k_mib'], kv['ge64k_pct'], kv['ge2m_mib'], kv['ge2m_pct']))
        load = {n: lines(n, 'redis-load') for _, n in mem}
        bad = [n for n, v in load.items() for kv in v if kv.get('data') != 'ok']
        if bad:
            w('')
            w('**redis data check failed in: %s**' % ', '.join(bad))
        w('')
        with open(os.path.join(a.out, 'data', 'redis.dat'), 'w') as f:
            for label, n in mem:
                if not red[n]:
                    continue
                f.write('# %s\n' % label)
                for kv in red[n]:
                    f.write('%s %s\n' % (kv['t'], kv['mib']))
                f.write('\n\n')

    mark['redis_end'] = len(md)
    # --- hawkeye -------------------------------------------------------------------
    hk = {n: lines(n, 'hawkeye') for _, n in mem}
    if any(hk.values()):
        kv0 = next(v[0] for v in hk.values() if v)
        w('## 3. HawkEye\'s three phases in a memcg (memory.max %s MiB, no swap)' % kv0['limit_mib'])
        w('')
        w('Fill %s MiB (one write per 4 KiB), free 80 %% of it in 16 KiB pieces spread over '
          'every 2 MiB (an allocator\'s purge), 20 s idle, fill %s MiB more: it fits only '
          'if the freed memory comes back. MiB of `memory.current` after each phase.' % (
              kv0['fill_mib'], kv0['refill_mib']))
        w('')
        w('| kernel, policy | result | after fill | after free | after idle | after refill | peak | refill time |')
        w('|---|---|---|---|---|---|---|---|')
        for label, n in mem:
            for kv in hk[n]:
                w('| %s | %s | %s | %s | %s | %s | %s | %s s |' % (
                    label, kv.get('result'), kv.get('after_fill_mib', '–'), kv.get('after_free_mib', '–'),
                    kv.get('after_idle_mib', '–'), kv.get('after_refill_mib', '–'), kv.get('peak_mib', '–'),
                    kv.get('p3_s', '–')))
        w('')

    # --- fault cost -------------------------------------------------------------------
    fc = {}
    for suffix, atag in ARCHES:
        for k in KERNELS:
            for kv in lines('fault-' + k + suffix, 'fault'):
                tag = kv.get('tag', 'default')
                fc.setdefault((atag, int(kv['kb'])), {})[k if tag == 'default' else k + ' ' + tag] = kv
    if fc:
        mark['fault'] = len(md)
        w('## 4. Fault cost, patched against stock')
        w('')
        w('Guest time (`-icount shift=0 -smp 1`: instructions) to fault 64 MiB, one '
          'write per 4 KiB, under a policy that gives folios of that size only; the '
          'minimum and the median of the repetitions, and the time to unmap it. '
          'Each kernel runs the same sequence twice; in the second pass the patched '
          'kernel has `thp_scan/enabled=0`, compared with stock\'s second pass. '
          'Goal (issue "mTHPs cost nothing until they are judged"): within 0.3 % of '
          'stock for every size, on both arches.')
        w('')
        w('| folios | stock fault ms (min / med) | patched fault ms (min / med) | ratio (min) | ratio (median) | unmap ratio (min) | second pass, patched with `thp_scan/enabled=0`: ratio (min) | folios made (stock / patched / expected) |')
        w('|---|---|---|---|---|---|---|---|')
        with open(os.path.join(a.out, 'data', 'fault.dat'), 'w') as f:
            f.write('# size ratio_min ratio_median unmap_ratio_min\n')
            for key in [(t, kb) for _, t in ARCHES for kb in (2048, 64, 16, 4)]:
                atag, kb = key
                if key not in fc or 'stock' not in fc[key] or 'patched' not in fc[key]:
                    continue
                s, p = fc[key]['stock'], fc[key]['patched']
                rmin = num(p['fault_ms_min']) / num(s['fault_ms_min'])
                rmed = num(p['fault_ms_med']) / num(s['fault_ms_med'])
                umin = num(p['unmap_ms_min']) / num(s['unmap_ms_min'])
                off, s2 = fc[key].get('patched pass2'), fc[key].get('stock pass2')
                offs = '–'
                if off and s2:
                    offs = 'fault %+.2f %%, unmap %+.2f %%' % (
                        (num(off['fault_ms_min']) / num(s2['fault_ms_min']) - 1) * 100,
                        (num(off['unmap_ms_min']) / num(s2['unmap_ms_min']) - 1) * 100)
                w('| %s%s | %s / %s | %s / %s | %+.2f %% | %+.2f %% | %+.2f %% | %s | %s / %s / %s |' % (
                    SIZES[kb], atag, s['fault_ms_min'], s['fault_ms_med'], p['fault_ms_min'], p['fault_ms_med'],
                    (rmin - 1) * 100, (rmed - 1) * 100, (umin - 1) * 100, offs,
                    s['folios'], p['folios'], s['expected_folios'] if kb > 4 else '–'))
                f.write('"%s%s" %.5f %.5f %.5f\n' % (SIZES[kb], atag.replace(' (arm64)', ', arm64'), (rmin - 1) * 100, (rmed - 1) * 100, (umin - 1) * 100))
        w('')

    mark['fault_end'] = len(md)
    # --- idle cost ---------------------------------------------------------------------
    # Boots idle-KERNEL[-arm64]: "BENCH idle memcgs=N setting=S seconds=T
    # busy_ns=B kthpscand_ns=K" per window; per 60 s in the table.
    def per60(ns, sec):
        return None if ns is None or ns < 0 or not sec else ns / sec * 60 / 1e6

    idle_arches = [(suffix, atag) for suffix, atag in ARCHES
                   if any('idle-%s%s' % (k, suffix) in names for k in KERNELS)]
    if idle_arches:
        mark['idle'] = len(md)
        ic = {}
        for suffix, atag in idle_arches:
            for k in KERNELS:
                for kv in lines('idle-%s%s' % (k, suffix), 'idle'):
                    sec = num(kv.get('seconds'))
                    try:
                        n = int(kv['memcgs'])
                    except (KeyError, ValueError):
                        continue
                    ic[(atag, k, kv.get('setting'), n)] = (per60(num(kv.get('busy_ns')), sec),
                                                          per60(num(kv.get('kthpscand_ns')), sec))
        counts = sorted({key[3] for key in ic}) or [0, 500 if quick else 2000]
        top_n = max(counts)
        w('## 4b. Idle cost: the CPU time of an idle machine')
        w('')
        w('Time tasks ran on the CPU (`/proc/schedstat`, the `cpuN` lines\' 7th field: '
          'every task but the idle task; `CONFIG_SCHEDSTATS` on both kernels), in ms of '
          'guest time (instructions) per 60 s of an idle guest, with that many empty '
          'memcgs (no processes, `memory.max` 64M each), after 5 s to settle; and '
          '`kthpscand`\'s own share (`/proc/PID/schedstat`; –: none). Settings: `off` '
          '(patched: `thp_scan/enabled=0`; both: `enabled=always`), `on-always` and '
          '`on-auto` (`thp_scan/enabled=1`, `enabled=always` or `auto`). The busy time '
          'includes what every window has, on both kernels: the boot\'s own watcher '
          '(`qemu/init`, a wake-up a second) and the kernel\'s periodic work; compare '
          'the differences. Goal (issue "mTHPs cost nothing until they are judged"): '
          '`on-auto` and `on-always` at most 5 ms per 60 s above `off` with 2000 memcgs%s.' % (
              '' if top_n == 2000 else ' (this run: at most %d)' % top_n))
        w('')
        w('| kernel, setting | ' + ' | '.join('busy ms / 60 s, %d memcgs' % n for n in counts) + ' | '
          + ' | '.join('kthpscand ms / 60 s, %d memcgs' % n for n in counts) + ' |')
        w('|---|' + '---|' * (2 * len(counts)))
        rows = [('stock', 'off'), ('patched', 'off'), ('patched', 'on-always'), ('patched', 'on-auto')]
        diffs = [(('patched', 'on-always'), ('patched', 'off')), (('patched', 'on-auto'), ('patched', 'off')),
                 (('patched', 'off'), ('stock', 'off'))]

        def cell(atag, ks, n, i):
            v = ic.get((atag, ks[0], ks[1], n))
            return None if v is None else v[i]

        for suffix, atag in idle_arches:
            for ks in rows:
                w('| %s %s%s | %s | %s |' % (
                    ks[0], ks[1], atag,
                    ' | '.join(fmt(cell(atag, ks, n, 0), 2) for n in counts),
                    ' | '.join(fmt(cell(atag, ks, n, 1), 2) for n in counts)))
            for x, y in diffs:
                out = []
                for i in (0, 1):
                    for n in counts:
                        vx, vy = cell(atag, x, n, i), cell(atag, y, n, i)
                        out.append('–' if vx is None or vy is None else '%+.2f' % (vx - vy))
                w('| **%s %s − %s %s**%s | %s |' % (x[0], x[1], y[0], y[1], atag, ' | '.join(out)))
        w('')
        mark['idle_end'] = len(md)
    # --- locks ----------------------------------------------------------------------
    # Boots locks-KERNEL: "BENCH locks kb=K tag=T procs=P ... folios=F
    # sq_acq= sq_con= lru_acq= lru_con= zone_acq= zone_con=" per run.
    lk = {}
    for k in KERNELS:
        for kv in lines('locks-' + k, 'locks'):
            lk[(k, kv.get('tag'), int(kv['kb']))] = kv
    if lk:
        mark['locks'] = len(md)

        def per(kv, key):
            f = num(kv.get('folios'))
            v = num(kv.get(key))
            if v is None:
                return '–'
            if not f:
                return '%d' % v
            return '%.4f' % (v / f)

        w('## 4c. Locks taken at fault and free')
        w('')
        w('Kernels with `CONFIG_LOCK_STAT` (`configs/lockstat.config` on top of the bench '
          'configuration, both kernels), four CPUs (`-smp 4 -icount shift=0`). One '
          'process faults 64 MiB, one write per 4 KiB, and unmaps it, %s times, under a '
          'policy that gives folios of that size only; `/proc/lock_stat` is cleared before '
          'and read after. Acquisitions per folio made: every deferred split queue\'s '
          '`split_queue_lock` (6.12: per memcg and per node; the series: per lruvec), '
          '`lru_lock`, the zone lock (order 0: per 4 KiB page). The counts are the machine\'s, kernel threads included. Goal (issue '
          '"mTHPs cost nothing until they are judged"): at most 0.05 `split_queue_lock` '
          'acquisitions per mTHP fault and free.' % (
              next(iter(lk.values())).get('reps', '?')))
        w('')
        w('| folios | kernel, thp_scan | folios made | split_queue_lock per folio | lru_lock per folio | zone lock per folio | guest s |')
        w('|---|---|---|---|---|---|---|')
        for kb in (2048, 64, 16, 4):
            for k, tag, label in (('stock', 'none', 'stock 6.12'), ('patched', 'scan-on', 'patched, on'),
                                  ('patched', 'scan-off', 'patched, `enabled=0`')):
                kv = lk.get((k, tag, kb))
                if not kv:
                    continue
                w('| %s | %s | %s | %s | %s | %s | %s |' % (
                    SIZES[kb], label, kv.get('folios'), per(kv, 'sq_acq'), per(kv, 'lru_acq'),
                    per(kv, 'zone_acq'), kv.get('seconds')))
        w('')
        w('Contention: four processes in one memcg, each faulting and unmapping %s MiB '
          '%s times at once, on four CPUs. Under TCG one host thread runs the four vCPUs '
          'in turn, so a lock holder preempted by the round robin is what makes another '
          'CPU wait: the counts compare the kernels, they do not predict a real machine\'s.' % (
              next((kv.get('mib') for (k, t, kb), kv in lk.items() if t == 'contention'), '?'),
              next(iter(lk.values())).get('reps', '?')))
        w('')
        w('| folios | kernel | folios made | guest s | split_queue_lock acquisitions / contentions | lru_lock acquisitions / contentions | zone lock acquisitions / contentions |')
        w('|---|---|---|---|---|---|---|')
        for kb in (64, 2048):
            for k in KERNELS:
                kv = lk.get((k, 'contention', kb))
                if not kv:
                    continue
                w('| %s | %s | %s | %s | %s / %s | %s / %s | %s / %s |' % (
                    SIZES[kb], k, kv.get('folios'), kv.get('seconds'), kv.get('sq_acq'), kv.get('sq_con'),
                    kv.get('lru_acq'), kv.get('lru_con'), kv.get('zone_acq'), kv.get('zone_con')))
        w('')
        mark['locks_end'] = len(md)
    # --- scanner cost ----------------------------------------------------------------
    sc_d = [(label, kv) for label, n in mem for kv in lines(n, 'scancost-dense')]
    sc_s = [kv for _, n in mem for kv in lines(n, 'scancost-sparse')]
    if sc_d or sc_s:
        w('## 5. kthpscand\'s CPU cost (patched, `always`, default knobs)')
        w('')
        w('`thp_scan/cpu_time_ms` (guest time: instructions) over a window with dense '
          'THPs queued, as a share of one CPU per GiB queued (goal, issue 9: under 1 %); '
          'and for sparse THPs (one 4 KiB subpage written per 2 MiB) until recovered, '
          'per GiB recovered.')
        w('')
        w('| kernel | dense MiB | window | cpu ms | % of one CPU per GiB | sparse MiB | MiB at once → end | time | cpu ms | cpu ms per GiB recovered |')
        w('|---|---|---|---|---|---|---|---|---|---|')
        for (label, d), s in zip(sc_d, sc_s):
            w('| %s | %s | %s s | %s | %s %% | %s | %s → %s | %s s | %s | %s |' % (
                label, d['mib'], fmt(num(d['window_s']), 0), d['cpu_ms'], d['cpu_pct_per_gib'], s['mib'],
                s['once_mib'], s['end_mib'], fmt(num(s['t_s']), 1), s['cpu_ms'], fmt(num(s['cpu_ms_per_gib_recovered']), 0)))
        w('')

    # --- swap ----------------------------------------------------------------------
    sw = [(label, kv) for label, n in mem for kv in lines(n, 'swap')]
    skips = sorted({kv['text'] for _, n in mem for k, kv in data.get(n, [])
                    if k == 'BENCH-SKIP' and kv['text'].startswith('swap:')})
    if sw or skips:
        w('## 6. Swap-out of sparse THPs (zram), per `split_on_swapout` mode')
        w('')
        for s in skips:
            w('- %s' % s)
        w('')
        w('%s MiB with 10 %% of every folio\'s subpages written, in a memcg, pushed out '
          'with `memory.reclaim`; what reclaim wrote to swap (`pswpout`), and the data '
          'read back after. Mode `none`: the kernel has no `split_on_swapout` knob (6.12\'s '
          'behaviour).' % (sw[0][1]['mib'] if sw else '?'))
        w('')
        w('| kernel, policy | folios | mode | written MiB | swapped out MiB | THPs swapped whole | THP swap fallbacks | zram: stored MiB / zero-filled pages | left in memory MiB | data |')
        w('|---|---|---|---|---|---|---|---|---|---|')
        for label, kv in sw:
            w('| %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s |' % (
                label, 'PMD' if kv['kb'] == '2048' else kv['kb'] + 'K', kv['mode'], kv['written_mib'],
                kv['swapout_mib'], kv['thp_swpout'], kv['thp_swpout_fallback'], kv.get('zram_stored_mib'),
                kv.get('zram_same_pages'), kv['after_mib'], kv['data']))
        w('')

    # --- cc ------------------------------------------------------------------------
    cc = [(label, kv) for label, n in mem for kv in lines(n, 'cc')]
    if cc:
        w('## 7. Compile-style mixed workload')
        w('')
        w('%s short processes one after the other (`bench/guest/ccjob.c`: a compiler\'s '
          'front end in miniature: 6–12 MiB of small objects in 2 MiB mmap\'d chunks, as '
          'GCC\'s GC heap takes them, a malloc\'d IR on the brk heap, a third of the '
          'nodes dropped, an object file written to tmpfs), in one memcg: guest time, '
          'the memcg\'s peak, THPs made at fault.' % cc[0][1]['jobs'])
        w('')
        w('| kernel, policy | time | per job | peak MiB | PMD THPs at fault | 64K mTHPs at fault | failed |')
        w('|---|---|---|---|---|---|---|')
        for label, kv in cc:
            w('| %s | %s s | %s ms | %s | %s | %s | %s |' % (
                label, fmt(num(kv['time_s']), 3), fmt(num(kv['per_job_ms']), 2), kv['peak_mib'],
                kv['thp_faults'], kv['mthp64_faults'], kv['failed']))
        w('')

    # --- errors --------------------------------------------------------------------
    errs = ['%s: %s' % (n, kv['text']) for n in names for k, kv in data.get(n, []) if k == 'BENCH-ERROR']
    if errs:
        w('## Errors in the guest')
        w('')
        for e in errs:
            w('- ' + e)
        w('')

    # --- knobs -----------------------------------------------------------------------
    w('## Knobs at boot')
    w('')
    for k in KERNELS:
        for n in names:
            if not n.startswith(k + '-'):
                continue
            for kv in lines(n, 'knobs'):
                w('- %s: %s' % (k, ' '.join('`%s=%s`' % (x, y) for x, y in kv.items())))
            for kv in lines(n, 'thp_scan'):
                w('- %s thp_scan: %s' % (k, ' '.join('`%s=%s`' % (x, y) for x, y in kv.items())))
            break
    w('')

    # --- plots -------------------------------------------------------------------------
    plots = []
    pdir = a.out
    # Sparse 1 % over time, per policy and kernel, both sizes.
    for kb in (2048, 64):
        key = next((k for k in sorted(series) if k[0] == kb and k[2] == 0), None)
        if not key:
            continue
        fn = 'sparse-%d.dat' % kb
        with open(os.path.join(a.out, 'data', fn), 'w') as f:
            for label, n in mem:
                pts = series[key].get(n)
                if not pts:
                    continue
                f.write('# %s\n' % label)
                for t, m in pts:
                    f.write('%s %s\n' % (t, m))
                f.write('\n\n')
    styles = {'stock': 'dt 2 lw 2', 'patched': 'dt 1 lw 2'}
    colors = {'never': '#1b9e77', 'madvise': '#7570b3', 'always': '#d95f02', 'defer': '#e7298a', 'auto': '#66a61e'}

    def plot_lines(datfile, title, xlabel, ylabel, out, ymax=None):
        items = []
        idx = 0
        with open(os.path.join(a.out, 'data', datfile)) as f:
            labels = [l[2:].strip() for l in f if l.startswith('# ')]
        for label in labels:
            k, p = label.split()[:2]
            # arm64 rows: the same dash types, thin lines.
            style = styles[k] if '(arm64)' not in label else styles[k].replace('lw 2', 'lw 1')
            items.append("'data/%s' index %d using 1:2 with steps %s lc rgb '%s' title '%s'" % (
                datfile, idx, style, colors.get(p, 'black'), label))
            idx += 1
        if not items:
            return False
        s = ("set terminal pngcairo size 900,520 font 'Sans,10'\nset output '%s'\n"
             "set title '%s'\nset xlabel '%s'\nset ylabel '%s'\nset key outside right\n"
             "set grid\nset yrange [0:%s]\nplot %s\n" % (out, title, xlabel, ylabel,
                                                        ymax or '*', ', \\\n  '.join(items)))
        return gnuplot(s, pdir)

    if os.path.exists(os.path.join(a.out, 'data', 'redis.dat')):
        if plot_lines('redis.dat', 'redis after 80 % of its keys were deleted (memcg memory.current)',
                      'guest seconds after the deletes', 'MiB', 'redis-footprint.png'):
            plots.append(('redis-footprint.png', 'redis: footprint over time per policy and kernel'))
    for kb in (2048, 64):
        fn = 'sparse-%d.dat' % kb
        if os.path.exists(os.path.join(a.out, 'data', fn)):
            name = 'PMD THPs' if kb == 2048 else '64K mTHPs'
            if plot_lines(fn, 'sparse %s, 1 %% of subpages written, no pressure (memcg memory.current)' % name,
                          'guest seconds after the fault', 'MiB', 'sparse-%d-footprint.png' % kb):
                plots.append(('sparse-%d-footprint.png' % kb, 'sparse %s: footprint over time' % name))
    if os.path.exists(os.path.join(a.out, 'data', 'fault.dat')):
        s = ("set terminal pngcairo size 700,420 font 'Sans,10'\nset output 'fault-cost.png'\n"
             "set title 'Fault cost: patched against stock 6.12 (-icount, guest instructions)'\n"
             "set ylabel 'patched / stock - 1 (%)'\nset style data histograms\n"
             "set style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
             "set grid ytics\nset xzeroaxis lt -1\nset key top left\n"
             "plot 'data/fault.dat' using 2:xtic(1) title 'fault (min)' lc rgb '#d95f02', "
             "'' using 3 title 'fault (median)' lc rgb '#7570b3', "
             "'' using 4 title 'unmap (min)' lc rgb '#1b9e77', "
             "0.3 with lines dt 2 lc rgb 'red' title 'goal: +0.3 %'\n")
        if gnuplot(s, pdir):
            plots.append(('fault-cost.png', 'fault cost ratios'))
    if plots:
        w('## Plots')
        w('')
        for fn, t in plots:
            w('![%s](%s)' % (t, fn))
            w('')

    # --- configs ----------------------------------------------------------------------
    if a.patched_config and a.stock_config and os.path.exists(a.patched_config) and os.path.exists(a.stock_config):
        def conf(p):
            return {l.split('=')[0]: l.strip() for l in open(p) if l.startswith('CONFIG_')}
        pc, sc = conf(a.patched_config), conf(a.stock_config)
        with open(os.path.join(a.out, 'configs.diff'), 'w') as f:
            f.write('# .config lines of the patched kernel that stock does not have (+) and the reverse (-)\n')
            for k in sorted(set(pc) | set(sc)):
                if pc.get(k) != sc.get(k):
                    if k in sc:
                        f.write('- %s\n' % sc[k])
                    if k in pc:
                        f.write('+ %s\n' % pc[k])
        shutil.copy(a.patched_config, os.path.join(a.out, 'config-patched'))
        shutil.copy(a.stock_config, os.path.join(a.out, 'config-stock'))

    w('## Reproduce')
    w('')
    w('```sh')
    w('./run bench           # full: every workload, about 15 min on 2 cores with the kernels built')
    w('./run bench --arm64   # the same plus arm64 (fault cost, idle cost, `always`), about 20 min')
    w('./run bench --quick   # fewer, smaller workloads, about 4 min')
    w('bench/run.sh --only "fault-patched fault-stock idle-patched idle-stock"   # some boots only')
    w('```')
    w('')
    w('Logs of each boot: `build/logs/bench-NAME/` (`results.log`: every BENCH line; '
      '`console.log`). The series behind the plots: `data/`.')
    with open(os.path.join(a.out, 'README.md'), 'w') as f:
        f.write('\n'.join(md) + '\n')
    print('report: %s/README.md, %d plots' % (a.out, len(plots)))
    if a.readme:
        readme(a, md, mark, plots)


def readme(a, md, mark, plots):
    """The headline tables and one plot, into the block of --readme."""
    rel = os.path.relpath(a.out, os.path.dirname(os.path.abspath(a.readme)))
    block = ['<!-- bench:begin -->',
             'From the latest full run (%s; every table, the facts of the run and the '
             'other plots: [%s/README.md](%s/README.md)):' % (
                 md[2].split(', ')[1] if len(md) > 2 and ', ' in md[2] else 'see there', rel, rel), '']
    for a0, a1 in (('dense', 'dense_end'), ('rounds', 'rounds_end'), ('redis', 'redis_end'), ('fault', 'fault_end'), ('idle', 'idle_end'),
                   ('locks', 'locks_end')):
        if a0 in mark:
            for l in md[mark[a0]:mark[a1]]:
                block.append(l.replace('## ', '#### ', 1) if l.startswith('## ') else l)
    if any(fn == 'redis-footprint.png' for fn, _ in plots):
        block += ['![redis: footprint over time per policy and kernel](%s/redis-footprint.png)' % rel, '']
    block.append('<!-- bench:end -->')
    text = open(a.readme).read()
    b, e = text.find('<!-- bench:begin -->'), text.find('<!-- bench:end -->')
    if b < 0 or e < 0:
        print('report: no benchmark block in %s' % a.readme)
        return
    text = text[:b] + '\n'.join(block) + text[e + len('<!-- bench:end -->'):]
    open(a.readme, 'w').write(text)
    print('report: the headline tables are in %s' % a.readme)


if __name__ == '__main__':
    sys.exit(main())
