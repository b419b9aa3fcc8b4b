"""Device arrays into gpudf and back: ingest, SQL over it, export, change in CuPy, ingest again, join.

Run against a gpudf server on the GPU backend (IngestBenchmark starts one and runs this):
    PYTHONPATH=clients/python python3 clients/python/examples/ingest_roundtrip.py --port 8815 [--rows N]
Prints one JSON line: each check (the server's SQL answers against CuPy's own sums), what each
step took, and the server's counts of bytes it copied and copied to the host.
"""

import argparse
import json
import time

import cupy
import numpy

import gpudf_client


def features(rows):
    """A table of every kind of column: ints, floats, bools, dates, decimals, strings (non-ASCII), NULLs by mask."""
    rng = cupy.random.default_rng(42)
    words = ["alpha", "Zürich", "日本語", "", "naïve café", "😀 emoji"]
    # strings: row r holds words[r % 6] (built on the host once, then on the device)
    encoded = [w.encode() for w in words]
    lengths = numpy.array([len(encoded[r % len(words)]) for r in range(rows)], dtype=numpy.int32)
    offsets = numpy.zeros(rows + 1, dtype=numpy.int32)
    numpy.cumsum(lengths, out=offsets[1:])
    chars = numpy.frombuffer(b"".join(encoded[r % len(words)] for r in range(rows)), dtype=numpy.uint8)
    columns = {
        "id": cupy.arange(rows, dtype=cupy.int64),
        "x": rng.random(rows, dtype=cupy.float64),
        "y": gpudf_client.column(cupy.arange(rows, dtype=cupy.int32) % 1000, valid=cupy.arange(rows) % 10 != 0),
        "flag": cupy.arange(rows) % 3 == 0,
        # NULLs as an Arrow bitmap already packed (every 4th row NULL)
        "z": gpudf_client.column(cupy.arange(rows, dtype=cupy.int16) % 100,
                                 valid=cupy.packbits(cupy.arange(rows) % 4 != 0, bitorder="little")),
        "shipped": gpudf_client.column(cupy.arange(rows, dtype=cupy.int32) % 20000, type="DATE"),
        "price": gpudf_client.column(cupy.arange(rows, dtype=cupy.int64) * 7 % 100000, type="DECIMAL", precision=12, scale=2),
        "name": gpudf_client.strings(cupy.asarray(offsets), cupy.asarray(chars) if chars.size else cupy.zeros(0, cupy.uint8),
                                     valid=cupy.arange(rows) % 7 != 0),
    }
    try:
        import torch
        columns["w"] = torch.arange(rows, device="cuda", dtype=torch.float32) / 4
    except ImportError:
        pass
    return columns


class DlpackOnly:
    """A device array that offers DLPack and nothing else, as some producers do."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None, **kwargs):
        return self._array.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


# per query exported, the bytes the server copied to the host while running it (no result data:
# a query may bring a scalar sub-query's value there)
HOST_BYTES = {}


def value(result, name):
    """The first row of column ``name`` of an exported one-row result, as a Python number (None for NULL)."""
    HOST_BYTES[",".join(c["name"] for c in result.descriptor["columns"])] = result.descriptor["bytes_to_host"]
    column = result[name]
    if column.null_count:
        return None
    return column.to_cupy()[0].item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="localhost")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--rows", type=int, default=1_000_003)
    a = p.parse_args()
    out = {"rows": a.rows, "checks": {}, "ms": {}}
    checks = out["checks"]
    with gpudf_client.connect("grpc://%s:%d" % (a.host, a.port)) as conn:
        cols = features(a.rows)
        t0 = time.perf_counter()
        answer = conn.ingest("features", cols)
        out["ms"]["ingest_features"] = (time.perf_counter() - t0) * 1e3
        out["features"] = answer
        checks["no_host_bytes"] = answer["bytes_to_host"] == 0
        ids = cols["id"]
        x = cols["x"]
        y = cupy.arange(a.rows, dtype=cupy.int64) % 1000
        y_valid = cupy.arange(a.rows) % 10 != 0
        expected = {
            "n": a.rows, "s_id": int(ids.sum()), "s_y": int(y[y_valid].sum()), "c_y": int(y_valid.sum()),
            "c_name": int((cupy.arange(a.rows) % 7 != 0).sum()), "trues": int((cupy.arange(a.rows) % 3 == 0).sum()),
            "s_price_cents": int((cupy.arange(a.rows, dtype=cupy.int64) * 7 % 100000).sum()),
            "c_z": int((cupy.arange(a.rows) % 4 != 0).sum()),
        }
        sql = ("SELECT COUNT(*) AS n, SUM(id) AS s_id, SUM(x) AS s_x, SUM(y) AS s_y, COUNT(y) AS c_y, COUNT(name) AS c_name,"
               " SUM(CASE WHEN flag THEN 1 ELSE 0 END) AS trues, CAST(SUM(price) * 100 AS BIGINT) AS s_price_cents,"
               " SUM(CHAR_LENGTH(name)) AS chars, MAX(shipped) AS last_day, COUNT(z) AS c_z FROM features")
        with conn.export(sql) as r:
            for k, v in expected.items():
                checks["sql_" + k] = value(r, k) == v
            checks["sql_s_x"] = abs(value(r, "s_x") - float(x.sum())) <= 1e-9 * a.rows
            checks["sql_last_day"] = value(r, "last_day") == min(a.rows - 1, 19999)
            # characters, not bytes: 5 + 6 + 3 + 0 + 10 + 7 per six rows, NULL rows left out
            per = [5, 6, 3, 0, 10, 7]
            checks["sql_chars"] = value(r, "chars") == sum(per[i % 6] for i in range(a.rows) if i % 7 != 0)
        if "w" in cols:
            # summed as doubles on both sides: a float32 sum of a million values is off by thousands
            with conn.export("SELECT SUM(CAST(w AS DOUBLE)) AS s FROM features") as r:
                checks["torch_column"] = abs(value(r, "s") - float(cols["w"].double().sum().item())) <= 1e-9 * a.rows

        # the round trip: a result exported, changed in CuPy, ingested again, joined in SQL
        t0 = time.perf_counter()
        with conn.export("SELECT id, x FROM features WHERE id % 2 = 0") as r:
            out["ms"]["export"] = (time.perf_counter() - t0) * 1e3
            view = r["x"].to_cupy()
            try:
                conn.ingest("refused", {"x": view})
                checks["a_view_of_an_export_is_refused"] = False
            except Exception as e:  # the driver exports no memory this process mapped from another
                checks["a_view_of_an_export_is_refused"] = True
                out["view_refusal"] = str(e).splitlines()[0][:200]
            changed = {"id": r["id"].to_cupy().copy(), "x2": view * 2 + 1}
        t0 = time.perf_counter()
        answer = conn.ingest("changed", changed)
        out["ms"]["ingest_changed"] = (time.perf_counter() - t0) * 1e3
        checks["changed_rows"] = answer["rows"] == (a.rows + 1) // 2
        with conn.export("SELECT COUNT(*) AS n, SUM(c.x2 - 2 * f.x) AS ones FROM changed c JOIN features f ON c.id = f.id") as r:
            n = value(r, "n")
            checks["join_rows"] = n == (a.rows + 1) // 2
            checks["join_values"] = abs(value(r, "ones") - n) <= 1e-9 * n
        # append and replace
        conn.ingest("changed", changed, mode="append")
        with conn.export("SELECT COUNT(*) AS n FROM changed") as r:
            checks["append"] = value(r, "n") == 2 * ((a.rows + 1) // 2)
        conn.ingest("changed", {"id": changed["id"][:5].copy(), "x2": changed["x2"][:5].copy()}, mode="replace")
        with conn.export("SELECT COUNT(*) AS n FROM changed") as r:
            checks["replace"] = value(r, "n") == 5
        # an empty table and a one-row table
        conn.ingest("no_rows", {"e": cupy.zeros(0, cupy.int64), "s": gpudf_client.strings(cupy.zeros(1, cupy.int32),
                                                                                        cupy.zeros(0, cupy.uint8))})
        conn.ingest("one_row", {"e": cupy.ones(1, cupy.float64)})
        with conn.export("SELECT (SELECT COUNT(*) FROM no_rows) AS e, (SELECT SUM(e) FROM one_row) AS s") as r:
            checks["empty_and_single"] = value(r, "e") == 0 and value(r, "s") == 1.0
        # a producer that speaks DLPack alone (no __cuda_array_interface__)
        conn.ingest("dlpack_only", {"v": DlpackOnly(cupy.arange(10, dtype=cupy.int64))})
        with conn.export("SELECT SUM(v) AS s, COUNT(*) AS n FROM dlpack_only") as r:
            checks["dlpack_only"] = value(r, "s") == 45 and value(r, "n") == 10
        # a buffer kept mapped: written in place between two ingests, the second still sees the change
        buf = cupy.arange(1000, dtype=cupy.int64)
        first = conn.ingest("kept", {"v": buf}, keep_mapped=True)
        buf *= 3
        second = conn.ingest("kept", {"v": buf}, mode="replace", keep_mapped=True)
        checks["kept_mapping_reused"] = (first["mappings_opened"] >= 1 and second["mappings_opened"] == 0
                                         and second["mappings_reused"] >= 1)
        with conn.export("SELECT SUM(v) AS s FROM kept") as r:
            checks["kept_sees_changes"] = value(r, "s") == 3 * 999 * 1000 // 2
        unmapped = conn.unmap()
        checks["unmapped"] = unmapped["unmapped"] >= 1 and unmapped["still_kept"] == 0
        # bad input is refused with a message, not a crash
        try:
            conn.ingest("bad", {"s": gpudf_client.strings(cupy.asarray([0, 5, 2], dtype=cupy.int32),
                                                         cupy.zeros(8, cupy.uint8))})
            checks["bad_offsets_refused"] = False
        except Exception as e:
            checks["bad_offsets_refused"] = "bad offsets" in str(e)
            out["bad_offsets"] = str(e).splitlines()[0][:200]
    out["export_bytes_to_host"] = {k: v for k, v in HOST_BYTES.items() if v}
    out["all_ok"] = all(checks.values())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
