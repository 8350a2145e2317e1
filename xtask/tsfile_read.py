#!/usr/bin/env python3
"""Reads TsFiles with the official Apache TsFile reader (Python package `tsfile` 2.5.0) and
prints, per file, what it returns: table rows (table model, through the Arrow batch API) or
device rows (tree model), and the series statistics, as one JSON object per line.

Used by `cargo xtask conformance tsfile-write`. Exit code 3 when the package is missing, so
that the suite reports "peer unavailable" instead of passing.
"""
import datetime
import json
import sys

try:
    import tsfile
except ImportError:
    print("peer unavailable: python package tsfile==2.5.0 is not installed", file=sys.stderr)
    sys.exit(3)


def cell(v):
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, float) and v != v:
        return "NaN"
    return v


def plain(col):
    # Timestamps come back as nanosecond timestamps; compare their raw int64 values.
    import pyarrow as pa

    if pa.types.is_timestamp(col.type):
        return col.cast(pa.int64())
    return col


def read(path):
    out = {"file": path, "tables": {}, "devices": {}, "series": {}}
    r = tsfile.TsFileReader(path)
    try:
        schemas = r.get_all_table_schemas() or {}
        for name, schema in schemas.items():
            cols = [c.get_column_name() for c in schema.get_columns()]
            rs = r.query_table(name, cols, batch_size=4096)
            rows = []
            while True:
                b = rs.read_arrow_batch()
                if b is None or b.num_rows == 0:
                    break
                names = b.column_names
                data = [plain(b.column(i)).to_pylist() for i in range(len(names))]
                for i in range(b.num_rows):
                    rows.append([cell(col[i]) for col in data])
            rs.close()
            out["tables"][name] = {"columns": ["time"] + cols, "rows": rows}
        md = r.get_timeseries_metadata()
        for key, group in md.items():
            dev = ".".join("null" if s is None else str(s) for s in group.segments)
            for ts in group.timeseries:
                st = ts.statistic
                out["series"][dev + "/" + ts.measurement_name] = {
                    "count": st.row_count,
                    "start_time": st.start_time,
                    "end_time": st.end_time,
                    "chunks": ts.chunk_meta_count,
                }
        if not schemas:
            for d in r.get_all_devices():
                ms = [
                    ts.measurement_name
                    for ts in md[tuple(d.segments)].timeseries
                ] if tuple(d.segments) in md else []
                rs = r.query_timeseries(d.path, ms, -(2**63), 2**63 - 1)
                rows = []
                while rs.next():
                    row = [rs.get_value_by_index(1)]
                    for i in range(len(ms)):
                        v = None if rs.is_null_by_index(i + 2) else rs.get_value_by_index(i + 2)
                        row.append(cell(v))
                    rows.append(row)
                rs.close()
                out["devices"][d.path] = {"columns": ["time"] + ms, "rows": rows}
    finally:
        r.close()
    return out


def main():
    args = sys.argv[1:]
    if args and args[0] == "--plain-time":
        args = args[1:]
        # The setting only takes effect once the library is initialised by a first writer.
        import os
        import tempfile

        d = tempfile.mkdtemp()
        w = tsfile.TsFileTableWriter(
            os.path.join(d, "init.tsfile"),
            tsfile.TableSchema("init", [tsfile.ColumnSchema("v", tsfile.TSDataType.INT32, tsfile.ColumnCategory.FIELD)]),
        )
        w.close()
        tsfile.set_tsfile_config({"time_encoding_type_": tsfile.TSEncoding.PLAIN})
    for path in args:
        try:
            print(json.dumps(read(path)))
        except Exception as e:  # the reader refused the file: report it, keep going
            print(json.dumps({"file": path, "error": f"{type(e).__name__}: {e}"}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
