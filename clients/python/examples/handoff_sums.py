"""Imports a gpudf query result through the device hand-off and sums its columns with CuPy.

Run against a gpudf server on the GPU backend (HandOffBenchmark starts one and runs this):
    PYTHONPATH=clients/python python3 clients/python/examples/handoff_sums.py --port 8815 --sql "SELECT ..."
Prints one JSON line: per repetition (after a warm-up one, marked) the export round trip (the server runs the query and
exports it), the time to map the handles, the time of the CuPy sums, the server's count of bytes
copied to the host; and the sums (nulls skipped, as SQL does).
"""

import argparse
import json
import time

import cupy

import gpudf_client


def column_sum(column):
    values = column.to_cupy()
    validity = column.validity()
    if validity is None:
        return values.sum(dtype=cupy.float64 if values.dtype.kind == "f" else cupy.int64), column.rows
    valid = cupy.unpackbits(validity, bitorder="little")[: column.rows].astype(cupy.bool_)
    kept = values[valid]
    return kept.sum(dtype=cupy.float64 if values.dtype.kind == "f" else cupy.int64), int(valid.sum())


def interop_checks(result):
    """The first fixed-width column through __cuda_array_interface__ (CuPy) and DLPack (PyTorch): same memory, same sum."""
    name, column = next((n, c) for n, c in result.columns.items() if c.type in ("INT64", "FLOAT64", "INT32"))
    address = column.__cuda_array_interface__["data"][0]
    via_cai = cupy.asarray(column)
    checks = {"column": name, "cai_zero_copy": via_cai.data.ptr == address}
    try:
        import torch
    except ImportError:
        checks["torch"] = "not installed"
        return checks
    tensor = torch.from_dlpack(column)
    checks["dlpack_zero_copy"] = tensor.data_ptr() == address
    checks["torch_sum_equals_cupy"] = float(tensor.sum().item()) == float(via_cai.sum().item())
    return checks


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="localhost")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--sql", required=True)
    p.add_argument("--reps", type=int, default=5)
    a = p.parse_args()
    cupy.zeros(1).sum()  # CUDA context and CuPy kernels ready before timing
    runs = []
    sums = None
    with gpudf_client.connect("grpc://%s:%d" % (a.host, a.port)) as conn:
        # one warm-up round first: CuPy compiles its kernels (sums, unpackbits, masks) on first use
        for rep in range(a.reps + 1):
            t0 = time.perf_counter()
            result = conn.export(a.sql)  # the server runs the query, exports it; the handles are mapped here
            t_mapped = time.perf_counter()
            try:
                out = {name: column_sum(column) for name, column in result.columns.items()}
                cupy.cuda.Device(result.device).synchronize()
                t_summed = time.perf_counter()
                sums = {k: {"sum": s.item(), "count": n} for k, (s, n) in out.items()}
                interop = interop_checks(result)
                interop["arrow_schema"] = str(result.schema).replace("\n", "; ")
            finally:
                result.close()
            t_closed = time.perf_counter()
            runs.append({
                "warm_up": rep == 0,
                "export_and_map_ms": (t_mapped - t0) * 1e3,
                "sum_ms": (t_summed - t_mapped) * 1e3,
                "close_ms": (t_closed - t_summed) * 1e3,
                "rows": result.rows,
                "allocations": len(result.descriptor["allocations"]),
                "bytes_to_host": result.descriptor["bytes_to_host"],
            })
    print(json.dumps({"runs": runs, "sums": sums, "interop": interop}))


if __name__ == "__main__":
    main()
