"""How the CuPy peer scripts time an operation: CUDA events around each of `reps` calls after one
warm-up call, the median printed as a `PEER name ms` line for benchmarks/compare.py."""
import statistics

import cupy as cp


def timed(name, fn, reps, note=""):
    fn()
    cp.cuda.Device().synchronize()
    ms = []
    for _ in range(reps):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        fn()
        e.record()
        e.synchronize()
        ms.append(cp.cuda.get_elapsed_time(s, e))
    print(f"PEER {name} {statistics.median(ms):.3f} ms cupy {cp.__version__} {note}".rstrip(), flush=True)
