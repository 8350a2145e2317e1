"""DuckDB peer of the bazan-sql tests: builds views over the same CSV/NDJSON/JSON/Parquet files
as the lakes the test maps, runs the test's queries and prints their rows as JSON.

Input (stdin, JSON): {"views": {NAME: {"columns": [[name, duckdb_type], ...],
                                         "files": [{"path", "rel", "format", "delim",
                                                    "columns": [[name, duckdb_type], ...]}]}},
                      "queries": [SQL, ...]}
Each view has the unified columns plus `_gid` (the global row: rows of the files before, in
byte order of their relative paths, counted by DuckDB, plus the row's number in its file) and
`_path` (the relative path). Output: one JSON list, per query {"rows": [[...], ...]} or
{"error": message}.
"""
import decimal
import json
import sys

try:
    import duckdb
except ImportError as e:  # the test skips its comparisons with this reason
    print(f"peer unavailable: duckdb is not importable ({e})", file=sys.stderr)
    sys.exit(3)


def q(s):
    return "'" + s.replace("'", "''") + "'"


def struct(cols):
    return "{" + ", ".join(f"{q(n)}: {q(t)}" for n, t in cols) + "}"


def reader(f):
    path, fmt, cols = f["path"], f["format"], f["columns"]
    if fmt in ("csv", "tsv", "psv", "txt"):
        return (f"read_csv({q(path)}, header=true, delim={q(f['delim'])}, quote='\"', "
                f"escape='\"', auto_detect=false, columns={struct(cols)})")
    if fmt in ("ndjson", "jsonl", "json"):
        return f"read_json({q(path)}, format='auto', columns={struct(cols)})"
    if fmt == "parquet":
        return f"read_parquet({q(path)})"
    raise ValueError(f"no DuckDB reader for {fmt}")


def main():
    req = json.load(sys.stdin)
    con = duckdb.connect()
    # One thread: row_number() over () numbers rows in file order.
    con.execute("set threads=1")
    con.execute("set preserve_insertion_order=true")
    for name, view in req["views"].items():
        files = view["files"]
        rels = [f["rel"] for f in files]
        if rels != sorted(rels, key=lambda r: r.encode("utf-8")):
            raise SystemExit(f"files of view {name} are not in byte order of their paths")
        parts = []
        first = 0
        for i, f in enumerate(files):
            own = {n for n, _ in f["columns"]}
            if not own:
                continue  # a file without columns has no rows (an empty JSON file)
            con.execute(
                f"create or replace temp table f_{name}_{i} as "
                f"select *, row_number() over () - 1 as __rn from {reader(f)}")
            n = con.execute(f"select count(*) from f_{name}_{i}").fetchone()[0]
            cols = []
            for c, t in view["columns"]:
                src = f'"{c}"::{t}' if c in own else f"NULL::{t}"
                cols.append(f'{src} as "{c}"')
            cols += [f"({first} + __rn)::BIGINT as _gid", f"{q(f['rel'])} as _path"]
            parts.append(f"select {', '.join(cols)} from f_{name}_{i}")
            first += n
        con.execute(f"create or replace temp view {name} as " + " union all ".join(parts))
    out = []
    for sql in req["queries"]:
        try:
            rows = con.execute(sql).fetchall()
            out.append({"rows": [[cell(v) for v in r] for r in rows]})
        except Exception as e:  # reported to the test, which fails on it
            out.append({"error": str(e)})
    json.dump(out, sys.stdout)


def cell(v):
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return str(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, decimal.Decimal):
        return float(v)
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


main()
