"""Peer figures for HashBenchmark, in the same run, on data of the same shape: CuPy group-by
(sort-based: argsort, segment boundaries, segment sums) and a CuPy sort-based join for unique
build keys (sort, searchsorted, gather maps), timed with CUDA events (median of `reps` after a
warm-up); and pyarrow's Acero group-by and hash join on the host's cores (one timed run after a
warm-up). Prints `PEER name ms` lines for benchmarks/compare.py.
    python3 peer_hash.py [rows] [reps] [cpu]"""
import sys
import time

import cupy as cp
import numpy as np

from peer_timing import timed

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000_000
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
cpu = len(sys.argv) <= 3 or sys.argv[3] != "0"
rng = cp.random.default_rng(7)
cp.random.seed(7)  # permutations come from the legacy generator, which has them


def groupby_sum(k, v):
    order = cp.argsort(k)
    ks = k[order]
    vs = v[order]
    starts = cp.flatnonzero(cp.concatenate((cp.ones(1, dtype=cp.bool_), ks[1:] != ks[:-1])))
    csum = cp.cumsum(vs)
    ends = cp.concatenate((starts[1:], cp.array([ks.size]))) - 1
    sums = csum[ends] - cp.concatenate((cp.zeros(1), csum[ends[:-1]]))
    return ks[starts], sums


def join_maps(probe, build):
    order = cp.argsort(build)
    sb = build[order]
    pos = cp.searchsorted(sb, probe)
    pos = cp.minimum(pos, sb.size - 1)
    left = cp.flatnonzero(sb[pos] == probe)
    return left, order[pos[left]]


v = rng.random(rows, dtype=cp.float64)
for groups, label in ((1_000_000, "1m"), (1_000, "1k"), (0, "distinct")):
    k = cp.random.permutation(rows).astype(cp.int32) if groups == 0 else rng.integers(0, groups, rows, dtype=cp.int32)
    timed(f"groupby_sum_{label}", lambda: groupby_sum(k, v), reps, "(sort-based)")
    if cpu and groups == 1_000_000:
        import pyarrow as pa
        t = pa.table({"k": cp.asnumpy(k), "v": cp.asnumpy(v)})
        t.group_by("k").aggregate([("v", "sum")])
        t0 = time.perf_counter()
        t.group_by("k").aggregate([("v", "sum")])
        print(f"PEER cpu_groupby_sum_{label} {(time.perf_counter() - t0) * 1e3:.3f} ms pyarrow {pa.__version__} Acero", flush=True)
    del k
for build in (1_000_000, rows):
    label = f"join_maps_{rows // 1_000_000}m_{build // 1_000_000}m"
    probe = rng.integers(0, build, rows, dtype=cp.int32)
    unique = cp.random.permutation(build).astype(cp.int32)
    timed(label, lambda: join_maps(probe, unique), reps, "(sort + searchsorted, unique build keys)")
    if cpu and build == 1_000_000:
        import pyarrow as pa
        lt = pa.table({"k": cp.asnumpy(probe), "l": np.arange(rows, dtype=np.int32)})
        rt = pa.table({"k": cp.asnumpy(unique), "r": np.arange(build, dtype=np.int32)})
        lt.join(rt, "k")
        t0 = time.perf_counter()
        lt.join(rt, "k")
        print(f"PEER cpu_{label.replace('maps', 'inner')} {(time.perf_counter() - t0) * 1e3:.3f} ms pyarrow {pa.__version__} Acero",
              flush=True)
    del probe, unique
