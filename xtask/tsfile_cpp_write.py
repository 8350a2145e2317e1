#!/usr/bin/env python3
"""Writes the rows of a table-model corpus case again with the official writer (Python
package `tsfile` 2.5.0, C++ core), with the case's configuration and a compression override,
so that `cargo xtask conformance tsfile-write` can compare our bytes with the C++ writer's.

Usage: tsfile_cpp_write.py CASE.expected.json OUT.tsfile COMPRESSION
Exit code 3 when the package is missing.
"""
import datetime
import json
import os
import sys
import tempfile

try:
    import tsfile
    from tsfile import ColumnCategory, ColumnSchema, Compressor, TableSchema, Tablet, TSDataType, TSEncoding
except ImportError:
    print("peer unavailable: python package tsfile==2.5.0 is not installed", file=sys.stderr)
    sys.exit(3)


def main():
    exp = json.load(open(sys.argv[1]))
    out, compression = sys.argv[2], Compressor[sys.argv[3]]
    cfg = dict(exp["writer"]["config"])
    # The configuration only takes effect once a first writer initialised the library.
    init = os.path.join(tempfile.mkdtemp(), "init.tsfile")
    tsfile.TsFileWriter(init).close()
    conf = {}
    for k, v in cfg.items():
        if k.endswith("_encoding_type_"):
            conf[k] = TSEncoding[v]
        elif k in ("time_compress_type_", "default_compression_type_"):
            conf[k] = compression
        else:
            conf[k] = v
    tsfile.set_tsfile_config(conf)
    w = tsfile.TsFileWriter(out)
    for t in exp["tables"]:
        cols = [ColumnSchema(c["name"], TSDataType[c["data_type"]], ColumnCategory[c["category"]]) for c in t["columns"]]
        w.register_table(TableSchema(t["name"], cols))
    for d in exp["data"]["tables"]:
        names, types, rows = d["columns"][1:], d["types"][1:], d["rows"]
        if not rows:
            continue
        tab = Tablet(names, [TSDataType[x] for x in types], len(rows))
        tab.set_table_name(d["table"])
        for r, row in enumerate(rows):
            tab.add_timestamp(r, row[0])
            for i, (v, ty) in enumerate(zip(row[1:], types)):
                if v is None:
                    continue
                if ty == "DATE":
                    v = datetime.date.fromisoformat(v)
                elif ty == "BLOB":
                    v = bytes.fromhex(v)
                tab.add_value_by_index(i, r, v)
        w.write_table(tab)
    w.close()


if __name__ == "__main__":
    main()
