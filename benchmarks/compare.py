"""Joins `RESULT name ms` lines (gpudf) with `PEER name ms` lines (CuPy, pyarrow) and `ROOFLINE name ms`
lines (the least time of an operation's traffic at the device's measured copy bandwidth) from one run's
output, and prints gpudf/peer time ratios (below 1 means gpudf is faster) and each one's share of its
roofline.   python3 compare.py LOG"""
import re
import sys

ours, peer, roof = {}, {}, {}
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"(RESULT|PEER|ROOFLINE) (\S+) ([0-9.]+) ms", line)
    if m:
        {"RESULT": ours, "PEER": peer, "ROOFLINE": roof}[m.group(1)][m.group(2)] = float(m.group(3))


def share(name, ms):
    return f"{100 * roof[name] / ms:9.1f}%" if name in roof and ms > 0 else f"{'':>10s}"


print(f"{'operation':24s} {'gpudf ms':>10s} {'peer ms':>10s} {'gpudf/peer':>11s} {'roofline':>10s} {'gpudf %':>10s} {'peer %':>10s}")
for name, ms in ours.items():
    p = f"{peer[name]:10.3f} {ms / peer[name]:11.2f}" if name in peer else f"{'':>10s} {'':>11s}"
    r = f"{roof[name]:10.3f}" if name in roof else f"{'':>10s}"
    print(f"{name:24s} {ms:10.3f} {p} {r} {share(name, ms)} {share(name, peer[name]) if name in peer else ''}")
