"""Queries a gpudf server through ADBC's Flight SQL driver (adbc_driver_flightsql), when installed.

    python3 clients/python/examples/adbc_query.py --port 8815
Prints one JSON line: a plain query's answer, a query with a bound parameter, and the tables
ADBC's metadata call lists; or that the driver is not installed here.
"""

import argparse
import json


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="localhost")
    p.add_argument("--port", type=int, required=True)
    a = p.parse_args()
    try:
        import adbc_driver_flightsql.dbapi as flightsql
    except ImportError as e:
        print(json.dumps({"adbc": "not installed: %s" % e}))
        return
    with flightsql.connect("grpc://%s:%d" % (a.host, a.port)) as conn:
        with conn.cursor() as cur:
            cur.execute("SELECT COUNT(*) AS n FROM t")
            count = cur.fetchone()[0]
            cur.execute("SELECT COUNT(*) AS n FROM t WHERE y < ?", parameters=(100,))
            below = cur.fetchone()[0]
        objects = conn.adbc_get_objects(depth="tables").read_all().to_pylist()
        tables = sorted(t["table_name"] for c in objects for s in c["catalog_db_schemas"] or []
                        for t in s["db_schema_tables"] or [])
    print(json.dumps({"adbc": "ok", "count": count, "count_y_below_100": below, "tables": tables}))


if __name__ == "__main__":
    main()
