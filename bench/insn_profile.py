#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest kernel instructions per function, for the fault and unmap paths.

QEMU's TCG runs one guest instruction per translation block (-singlestep),
never chains one block to the next (-d nochain, from the start: a chain
made before the log is switched on would skip it), and, while the host
says so, logs every block it executes (HMP "log exec,nochain", -dfilter
on the kernel's text): one line per kernel instruction executed.  Guest
time counts instructions (-icount shift=0), so that the slow, logged
execution does not see timer ticks come due faster than it handles them
(in real time it would do nothing else), while an idle guest's time
runs with the host's clock: the pause after each marker is long enough
for the host to switch the log.  The guest runs "thpbench profile MIB", which marks
an idle window (the noise: timer ticks, the markers' own writes), MIB of
anonymous memory faulted, and the same memory unmapped; this script
switches the log on and off at the markers, then counts the lines of each
window per kernel function (System.map).  A benchmark, not a test: it
says where instructions go, as a complement to bench/run.sh's fault cost
under -icount, which says how many.

  bench/insn_profile.py run --arch ARCH --obj KERNEL_OBJ_DIR --kb KB
        --mib MIB --out DIR [--scan on|off] [--thpbench PATH]
  bench/insn_profile.py compare DIR_A DIR_B [--window fault] [--top N]

"run" writes DIR/WINDOW.tsv (function, instructions) for the windows idle,
fault and unmap, and DIR/info (kernel, folio size, pages).  "compare"
prints, per folio, the functions whose counts differ most between two
runs (B minus A), and the totals.
"""
import argparse
import bisect
import collections
import os
import re
import socket
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WINDOWS = ("idle", "fault", "unmap")
TRACE = re.compile(rb"^Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/")


def load_map(obj):
    """Sorted (address, name) of the text symbols of a kernel's System.map."""
    syms = []
    with open(os.path.join(obj, "System.map")) as f:
        for line in f:
            addr, kind, name = line.split()[:3]
            if kind in "tTwW":
                syms.append((int(addr, 16), name))
    syms.sort()
    return syms


def text_range(syms):
    addrs = {name: a for a, name in syms}
    start = addrs.get("_stext", addrs.get("_text", syms[0][0]))
    end = addrs.get("_etext", syms[-1][0] + 0x100000)
    return start, end


class Monitor:
    """QEMU's human monitor on a unix socket."""

    def __init__(self, path, timeout=60):
        deadline = time.time() + timeout
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        self.s.settimeout(10)
        self._read_prompt()

    def _read_prompt(self):
        buf = b""
        while not buf.endswith(b"(qemu) "):
            chunk = self.s.recv(4096)
            if not chunk:
                raise RuntimeError("monitor closed")
            buf += chunk
        return buf

    def cmd(self, line):
        self.s.sendall(line.encode() + b"\n")
        return self._read_prompt()


def run(args):
    syms = load_map(args.obj)
    start, end = text_range(syms)
    os.makedirs(args.out, exist_ok=True)
    out = os.path.abspath(args.out)
    sock = os.path.join(out, "monitor.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    if args.arch == "arm64":
        kernel = os.path.join(args.obj, "arch/arm64/boot/Image")
    else:
        kernel = os.path.join(args.obj, "arch/x86/boot/bzImage")
    thpbench = args.thpbench or os.path.join(
        TOP, "build/bench/guest" + ("-arm64" if args.arch == "arm64" else ""), "thpbench")
    name = "profile-" + os.path.basename(out.rstrip("/"))
    t = "/sys/kernel/mm/transparent_hugepage"
    # Folios of KB KiB only (KB 4: order 0 only), as bench/guest/bench.sh's
    # policy() sets them.
    cmd = ("T=%s; echo never > $T/enabled; "
           "for d in $T/hugepages-*kB; do echo never 2>/dev/null > $d/enabled; done; " % t)
    if args.kb == 2048:
        cmd += "echo always > $T/enabled; echo inherit > $T/hugepages-2048kB/enabled; "
    elif args.kb != 4:
        cmd += "echo always > $T/enabled; echo always > $T/hugepages-%dkB/enabled; " % args.kb
    cmd += ("[ ! -e $T/thp_scan/enabled ] || echo %d > $T/thp_scan/enabled; "
            % (args.scan == "on"))
    cmd += "/extra/thpbench profile %d" % args.mib
    boot = [os.path.join(TOP, "qemu/boot.sh"), "--arch", args.arch, "--kernel", kernel,
            "--tests", "none", "--file", thpbench + ":/extra/thpbench", "--cmd", cmd, "--smp", "1",
            "--numa", "1", "--timeout", str(args.timeout), "--name", name, "--quiet",
            "--append", "kunit.enable=0 nokaslr",
            "--icount", "shift=0",
            "--qemu-arg", "-singlestep", "--qemu-arg", "-d", "--qemu-arg", "nochain",
            "--qemu-arg", "-monitor", "--qemu-arg", "unix:%s,server=on,wait=off" % sock,
            "--qemu-arg", "-D", "--qemu-arg", os.path.join(out, "boot.log"),
            "--qemu-arg", "-dfilter", "--qemu-arg", "0x%x..0x%x" % (start, end)]
    build = os.environ.get("BUILD", os.path.join(TOP, "build"))
    results = os.path.join(build, "logs", name, "results.log")
    if os.path.exists(results):
        os.unlink(results)
    # No KUnit case expected: the suites run only when asked (kunit.enable=0).
    proc = subprocess.Popen(boot, env=dict(os.environ, EXPECT_KUNIT=""))
    mon = Monitor(sock)
    seen = 0
    pages = None
    pos = 0
    while proc.poll() is None and pages is None:
        time.sleep(0.02)
        try:
            with open(results, "rb") as f:
                f.seek(pos)
                data = f.read()
        except FileNotFoundError:
            continue
        # Whole lines only.
        data = data[:data.rfind(b"\n") + 1]
        pos += len(data)
        for line in data.decode(errors="replace").splitlines():
            m = re.search(r"PROFILE (\w+)-(begin|end)", line)
            if m and m.group(2) == "begin":
                mon.cmd("logfile %s" % os.path.join(out, m.group(1) + ".log"))
                mon.cmd("log exec,nochain")
                seen += 1
            elif m:
                mon.cmd("log nochain")
            m = re.search(r"PROFILE done pages=(\d+)", line)
            if m:
                pages = int(m.group(1))
    rc = proc.wait()
    if pages is None or seen != len(WINDOWS):
        sys.exit("insn_profile: the guest did not finish its windows (boot rc %d, see %s)"
                 % (rc, os.path.dirname(results)))
    addrs = [a for a, _ in syms]
    for w in WINDOWS:
        counts = collections.Counter()
        pcs = collections.Counter()
        with open(os.path.join(out, w + ".log"), "rb") as f:
            for line in f:
                m = TRACE.match(line)
                if m:
                    pcs[int(m.group(1), 16)] += 1
        for pc, n in pcs.items():
            i = bisect.bisect_right(addrs, pc) - 1
            counts[syms[i][1] if i >= 0 else "?"] += n
        with open(os.path.join(out, w + ".tsv"), "w") as f:
            for fn, n in counts.most_common():
                f.write("%s\t%d\n" % (fn, n))
        os.unlink(os.path.join(out, w + ".log"))
    with open(os.path.join(out, "info"), "w") as f:
        f.write("kernel=%s\narch=%s\nkb=%d\nmib=%d\npages=%d\nscan=%s\n"
                % (kernel, args.arch, args.kb, args.mib, pages, args.scan))
    print("insn_profile: %s: %s" % (out, ", ".join(
        "%s %d" % (w, sum(load_counts(out, w).values())) for w in WINDOWS)))


def load_counts(d, w):
    counts = {}
    with open(os.path.join(d, w + ".tsv")) as f:
        for line in f:
            fn, n = line.split("\t")
            counts[fn] = int(n)
    return counts


def load_info(d):
    with open(os.path.join(d, "info")) as f:
        return dict(line.strip().split("=", 1) for line in f if "=" in line)


def compare(args):
    ia, ib = load_info(args.a), load_info(args.b)
    folios = int(ia["pages"]) * 4 // int(ia["kb"])
    if ia["pages"] != ib["pages"] or ia["kb"] != ib["kb"]:
        sys.exit("insn_profile: the two runs faulted different memory")
    a, b = load_counts(args.a, args.window), load_counts(args.b, args.window)
    na, nb = load_counts(args.a, "idle"), load_counts(args.b, "idle")
    print("%s window, %d folios of %s kB; A = %s, B = %s; instructions per folio"
          % (args.window, folios, ia["kb"], args.a, args.b))
    print("%-44s %10s %10s %10s" % ("function", "A", "B", "B - A"))
    rows = sorted(set(a) | set(b), key=lambda f: -abs(b.get(f, 0) - a.get(f, 0)))
    for fn in rows[:args.top]:
        print("%-44s %10.1f %10.1f %+10.1f" % (fn[:44], a.get(fn, 0) / folios,
                                              b.get(fn, 0) / folios,
                                              (b.get(fn, 0) - a.get(fn, 0)) / folios))
    ta, tb = sum(a.values()), sum(b.values())
    print("%-44s %10.1f %10.1f %+10.1f" % ("total", ta / folios, tb / folios, (tb - ta) / folios))
    print("%-44s %10.1f %10.1f %+10.1f   (the idle window's total, per folio of the above)"
          % ("noise", sum(na.values()) / folios, sum(nb.values()) / folios,
             (sum(nb.values()) - sum(na.values())) / folios))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run")
    r.add_argument("--arch", choices=("x86_64", "arm64"), required=True)
    r.add_argument("--obj", required=True, help="the kernel's object folder")
    r.add_argument("--kb", type=int, required=True, help="folio size (4: order 0)")
    r.add_argument("--mib", type=int, default=4)
    r.add_argument("--out", required=True)
    r.add_argument("--scan", choices=("on", "off"), default="on")
    r.add_argument("--thpbench")
    r.add_argument("--timeout", type=int, default=1800)
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--window", choices=WINDOWS, default="fault")
    c.add_argument("--top", type=int, default=30)
    args = p.parse_args()
    if args.what == "run":
        run(args)
    else:
        compare(args)


if __name__ == "__main__":
    main()
