"""The GPU pipeline end to end: SQL -> a feature matrix in PyTorch -> a model trained on the device ->
its predictions back into gpudf as a table -> joined and aggregated in SQL; then the same pipeline
through host Arrow (Flight SQL queries and bulk ingest) for comparison.

Run against a gpudf server on the GPU backend holding TPC-H (PipelineBenchmark starts one):
    PYTHONPATH=clients/python python3 clients/python/examples/pipeline.py --port 8815 [--steps 20]
Prints one JSON line: per step and path its time (ms), the bytes the server copied to the host
(the hand-off path: none), the model's loss, and the final aggregate of each path (they agree).
"""

import argparse
import json
import time

import cupy
import pyarrow
import pyarrow.flight as flight
import torch

import gpudf_client
from gpudf_client import flightsql

FEATURES = ("SELECT l_orderkey AS k, l_linenumber AS n, CAST(l_quantity AS DOUBLE) AS q,"
            " CAST(l_extendedprice AS DOUBLE) AS p, CAST(l_discount AS DOUBLE) AS d, CAST(l_tax AS DOUBLE) AS t,"
            " CAST(CASE WHEN l_returnflag = 'R' THEN 1 ELSE 0 END AS DOUBLE) AS y FROM lineitem")
REPORT = ("SELECT o.o_orderpriority AS priority, COUNT(*) AS n, AVG(s.score) AS score FROM scores s"
          " JOIN orders o ON s.k = o.o_orderkey GROUP BY o.o_orderpriority ORDER BY o.o_orderpriority")


def train(columns, y, steps):
    """A logistic regression of y on the standardized columns, full batch, on the device; the scores and the last loss."""
    x = torch.stack(columns, dim=1).float()
    x = (x - x.mean(dim=0)) / (x.std(dim=0) + 1e-6)
    y = y.float()
    w = torch.zeros(x.shape[1], device=x.device, requires_grad=True)
    b = torch.zeros(1, device=x.device, requires_grad=True)
    opt = torch.optim.Adam([w, b], lr=0.1)
    loss = None
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(x @ w + b, y)
        loss.backward()
        opt.step()
    with torch.no_grad():
        scores = torch.sigmoid(x @ w + b)
    torch.cuda.synchronize()
    return scores, float(loss.item())


def timed(ms, name, work):
    t0 = time.perf_counter()
    out = work()
    torch.cuda.synchronize()
    ms[name] = (time.perf_counter() - t0) * 1e3
    return out


def on_device(conn, steps, out):
    """The hand-off path: nothing leaves the device."""
    ms = out["device_ms"]
    result = timed(ms, "1_sql_export", lambda: conn.export(FEATURES))
    with result:
        out["device_bytes_to_host"] = result.descriptor["bytes_to_host"]
        cols = timed(ms, "2_to_torch", lambda: [torch.from_dlpack(result[c]) for c in ("q", "p", "d", "t", "y")])
        scores, loss = timed(ms, "3_train", lambda: train(cols[:4], cols[4], steps))
        # the keys view the server's memory: copied on the device before they go back
        keys = {"k": torch.from_dlpack(result["k"]).clone(), "n": torch.from_dlpack(result["n"]).clone()}
    answer = timed(ms, "4_ingest", lambda: conn.ingest("scores", dict(keys, score=scores), mode="replace")
                   if out.get("scores_made") else conn.ingest("scores", dict(keys, score=scores)))
    out["scores_made"] = True
    out["device_bytes_to_host"] += answer["bytes_to_host"]
    out["device_loss"] = loss

    def report():
        with conn.export(REPORT) as r:
            out["device_bytes_to_host"] += r.descriptor["bytes_to_host"]
            # the small answer comes to the host here, in the client, to be printed
            return [[r["n"].to_cupy()[i].item() for i in range(r.rows)], [r["score"].to_cupy()[i].item() for i in range(r.rows)]]
    out["device_report"] = timed(ms, "5_sql_join", report)
    ms["total"] = sum(v for k, v in ms.items() if k != "total")


def on_host(client, steps, out):
    """The same pipeline through host Arrow: Flight SQL answers, host-to-device and back, bulk ingest."""
    ms = out["host_ms"]
    table = timed(ms, "1_sql_arrow", lambda: flightsql.query(client, FEATURES))
    cols = timed(ms, "2_to_torch", lambda: [torch.from_numpy(table.column(c).to_numpy()).cuda() for c in ("q", "p", "d", "t", "y")])
    scores, loss = timed(ms, "3_train", lambda: train(cols[:4], cols[4], steps))

    def ingest():
        data = pyarrow.table({"k": table.column("k"), "n": table.column("n"), "score": scores.cpu().numpy()})
        return flightsql.bulk_ingest(client, "scores_host", data, mode="replace")
    timed(ms, "4_ingest", ingest)
    out["host_loss"] = loss
    report = timed(ms, "5_sql_join", lambda: flightsql.query(client, REPORT.replace("scores s", "scores_host s")))
    out["host_report"] = [report.column("n").to_pylist(), report.column("score").to_pylist()]
    ms["total"] = sum(v for k, v in ms.items() if k != "total")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="localhost")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--host-reps", type=int, default=1)
    a = p.parse_args()
    out = {"steps": a.steps}
    location = "grpc://%s:%d" % (a.host, a.port)

    def repeat(reps, path, run):
        """Runs a path ``reps`` times, each filling out[path + "_ms"]; keeps every run's times (the last stays in place)."""
        runs = []
        for _ in range(reps):
            out[path + "_ms"] = {}
            run()
            runs.append(out[path + "_ms"])
        out[path + "_ms_runs"] = runs

    with gpudf_client.connect(location) as conn:
        repeat(a.reps, "device", lambda: on_device(conn, a.steps, out))
    client = flight.FlightClient(location)
    repeat(a.host_reps, "host", lambda: on_host(client, a.steps, out))
    client.close()
    d, h = out["device_report"], out["host_report"]
    out["reports_agree"] = d[0] == h[0] and all(abs(x - y) <= 1e-4 for x, y in zip(d[1], h[1]))
    out["host_over_device"] = out["host_ms"]["total"] / out["device_ms"]["total"]
    del out["scores_made"]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
