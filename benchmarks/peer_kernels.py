"""CuPy peer figures for KernelBenchmark, in the same run: the same operations on data of the
same size and distribution, timed with CUDA events (median of `reps` after a warm-up).
Prints `PEER name ms` lines for benchmarks/compare.py.   python3 peer_kernels.py [rows] [reps]"""
import sys

import cupy as cp

from peer_timing import timed

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000_000
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
rng = cp.random.default_rng(1)
x = rng.random(rows, dtype=cp.float64)
mask = rng.random(rows) < 0.5
k = rng.integers(-(2**31), 2**31 - 1, size=rows, dtype=cp.int32)


timed("sum_f64", lambda: float(x.sum()), reps)
timed("filter_f64_50pct", lambda: x[mask], reps)
timed("sort_i32", lambda: cp.sort(k), reps)
timed("argsort_i32", lambda: cp.argsort(k), reps)
timed("sort_i32_f64", lambda: cp.lexsort(cp.stack([x, k.astype(cp.float64)])), reps)
timed("topn_100_f64", lambda: cp.sort(cp.partition(x, rows - 100)[-100:])[::-1], reps)
