#!/usr/bin/env python3
"""Peer side of `cargo xtask bench tsfile-write`: reads a table of a TsFile with the official
reader, then times the official writer (`TsFileWriter.write_arrow_batch`, C++ core of the
Python package `tsfile` 2.5.0) writing the same rows. Prints one JSON line:
{"rows": N, "points": P, "seconds": [t1, t2, ...]}. Exit code 3 when the package is missing.
"""
import json
import os
import sys
import tempfile
import time

try:
    import pyarrow as pa
    import tsfile
except ImportError:
    print("peer unavailable: python package tsfile==2.5.0 is not installed", file=sys.stderr)
    sys.exit(3)


def main():
    src, table, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    r = tsfile.TsFileReader(src)
    schema = r.get_table_schema(table)
    cols = [c.get_column_name() for c in schema.get_columns()]
    rs = r.query_table(table, cols, batch_size=65536)
    parts = []
    while True:
        b = rs.read_arrow_batch()
        if b is None or b.num_rows == 0:
            break
        parts.append(b)
    rs.close()
    r.close()
    data = pa.concat_tables(parts)
    fields = sum(1 for c in schema.get_columns() if c.get_category() == tsfile.ColumnCategory.FIELD)
    times = []
    d = tempfile.mkdtemp()
    for i in range(reps):
        path = os.path.join(d, f"peer{i}.tsfile")
        start = time.perf_counter()
        w = tsfile.TsFileWriter(path)
        w.register_table(schema)
        w.write_arrow_batch(table, data, 0)
        w.close()
        times.append(time.perf_counter() - start)
        size = os.path.getsize(path)
        os.remove(path)
    print(json.dumps({"rows": data.num_rows, "points": data.num_rows * fields, "seconds": times, "bytes": size}))


if __name__ == "__main__":
    main()
