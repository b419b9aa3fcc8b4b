"""Joins `RESULT name ms` lines (gpudf) with `PEER name ms` lines (CuPy, pyarrow) from one run's output
and prints gpudf/peer time ratios (below 1 means gpudf is faster).   python3 compare.py LOG"""
import re
import sys

ours, peer = {}, {}
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"(RESULT|PEER) (\S+) ([0-9.]+) ms", line)
    if m:
        (ours if m.group(1) == "RESULT" else peer)[m.group(2)] = float(m.group(3))
print(f"{'operation':24s} {'gpudf ms':>10s} {'peer ms':>10s} {'gpudf/peer':>11s}")
for name, ms in ours.items():
    if name in peer:
        print(f"{name:24s} {ms:10.3f} {peer[name]:10.3f} {ms / peer[name]:11.2f}")
    else:
        print(f"{name:24s} {ms:10.3f} {'':>10s} {'':>11s}")
