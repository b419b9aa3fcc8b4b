"""Ingest speed: CuPy columns into gpudf through CUDA IPC, against a device-to-device copy and the host path.

Run against a gpudf server on the GPU backend (IngestBenchmark starts one and runs this):
    PYTHONPATH=clients/python python3 clients/python/examples/ingest_bench.py --port 8815 [--rows N] [--reps R]
Four columns (int64, float64, int32, float32: 24 bytes a row). Per repetition: CuPy copying the
same bytes device to device (the peer: what one copy costs), the IPC ingest (the call, end to end,
replacing the table, the server mapping the arrays anew each time), then an action that does nothing
(``--empty-calls`` times, the last 100 timed: the floor under every call; a server in use has its
RPC path compiled by the JIT, and a few hundred calls leave much of it interpreted), then the same
ingest with the arrays' allocations kept mapped between calls (``keep_mapped``: the first call
maps, ``--kept-warm`` more warm the path untimed, the timed ones, ``--kept-reps`` of them, find the
mappings open), and once or more the host path (device to host, an Arrow table, Flight
SQL's bulk ingest over gRPC). Prints one JSON line with every time (ms), medians, and the sums
of the columns for the server to check.
"""

import argparse
import json
import statistics
import time

import cupy
import pyarrow
import pyarrow.flight as flight

import gpudf_client
from gpudf_client import flightsql


def host_ingest(client, arrays, table):
    """The host path: each column to host memory, one Arrow table, a DoPut of Flight SQL's bulk ingest."""
    flightsql.bulk_ingest(client, table, pyarrow.table({name: cupy.asnumpy(a) for name, a in arrays.items()}), mode="replace")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="localhost")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--rows", type=int, default=100_000_000)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--kept-reps", type=int, default=100)
    p.add_argument("--kept-warm", type=int, default=200)
    p.add_argument("--empty-calls", type=int, default=3000)
    p.add_argument("--host-reps", type=int, default=2)
    a = p.parse_args()
    rng = cupy.random.default_rng(1)
    arrays = {
        "a": cupy.arange(a.rows, dtype=cupy.int64),
        "b": rng.random(a.rows, dtype=cupy.float64),
        "c": (cupy.arange(a.rows, dtype=cupy.int64) % 100003).astype(cupy.int32),
        "d": rng.random(a.rows, dtype=cupy.float32),
    }
    nbytes = sum(int(x.nbytes) for x in arrays.values())
    cupy.cuda.runtime.deviceSynchronize()
    out = {"rows": a.rows, "bytes": nbytes, "ms": {"copy": [], "ipc_ingest": [], "ipc_ingest_kept": [], "host_ingest": []}}
    out["kept_first_ms"] = None
    with gpudf_client.connect("grpc://%s:%d" % (a.host, a.port)) as conn:
        conn.ingest("bench", arrays)  # the first (made, not timed)
        for _ in range(a.reps):
            targets = {k: cupy.empty_like(v) for k, v in arrays.items()}
            cupy.cuda.runtime.deviceSynchronize()
            t0 = time.perf_counter()
            for k, v in arrays.items():
                targets[k].data.copy_from_device(v.data, v.nbytes)
            cupy.cuda.runtime.deviceSynchronize()
            out["ms"]["copy"].append((time.perf_counter() - t0) * 1e3)
            del targets
            t0 = time.perf_counter()
            answer = conn.ingest("bench", arrays, mode="replace")
            out["ms"]["ipc_ingest"].append((time.perf_counter() - t0) * 1e3)
        out["last_ingest"] = answer
        # the floor under any call: an action that does nothing (an unmap of no handles), end to end;
        # its first calls warm the server's RPC path (a server in use is warm), the last ones are kept
        nothing = flight.Action(gpudf_client.UNMAP, json.dumps({"handles": []}).encode())
        floor = []
        for _ in range(max(a.empty_calls, 100)):
            t0 = time.perf_counter()
            list(conn._client.do_action(nothing, conn._options))
            floor.append((time.perf_counter() - t0) * 1e3)
        out["ms"]["empty_action"] = floor[-100:]
        for _ in range(1 + a.kept_warm):  # the first maps and keeps; none is timed
            conn.ingest("bench", arrays, mode="replace", keep_mapped=True)
        for _ in range(a.kept_reps):
            t0 = time.perf_counter()
            answer = conn.ingest("bench", arrays, mode="replace", keep_mapped=True)
            out["ms"]["ipc_ingest_kept"].append((time.perf_counter() - t0) * 1e3)
        out["kept_first_ms"] = out["ms"]["ipc_ingest_kept"][0]
        out["last_ingest_kept"] = answer
        out["unmap"] = conn.unmap()
        client = flight.FlightClient("grpc://%s:%d" % (a.host, a.port))
        for _ in range(a.host_reps):
            t0 = time.perf_counter()
            host_ingest(client, arrays, "bench_host")
            out["ms"]["host_ingest"].append((time.perf_counter() - t0) * 1e3)
        client.close()
    out["median_ms"] = {k: statistics.median(v) for k, v in out["ms"].items() if v}
    m = out["median_ms"]
    out["copy_gbps"] = nbytes / m["copy"] / 1e6
    out["ipc_over_copy"] = m["ipc_ingest"] / m["copy"]
    out["kept_over_copy"] = m["ipc_ingest_kept"] / m["copy"]
    if "host_ingest" in m:
        out["host_over_ipc"] = m["host_ingest"] / m["ipc_ingest"]
    out["sums"] = {"a": int(arrays["a"].sum()), "c": int(arrays["c"].astype(cupy.int64).sum()),
                   "b": float(arrays["b"].sum()), "d": float(arrays["d"].astype(cupy.float64).sum())}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
