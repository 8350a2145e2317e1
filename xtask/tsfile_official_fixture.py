#!/usr/bin/env python3
"""Writes `testdata/tsfile-official/float_ts2diff_snappy.tsfile` for `cargo xtask fixtures`
with the official writer (Python package `tsfile` 2.5.0, C++ core): a table-model file whose
FLOAT and DOUBLE fields are encoded TS_2DIFF (lossy for floats: values are stored as
round(v * 100)) and every page is SNAPPY-compressed, the case of issue 22 where `check` must
not flag the statistics the writer computed on the original values.

Usage: tsfile_official_fixture.py OUT.tsfile
Exit code 3 when the package is missing.
"""
import os
import sys
import tempfile

try:
    import tsfile
    from tsfile import ColumnCategory, ColumnSchema, Compressor, TableSchema, Tablet, TSDataType, TSEncoding
except ImportError:
    print("peer unavailable: python package tsfile==2.5.0 is not installed", file=sys.stderr)
    sys.exit(3)

ROWS = 400


def main():
    out = sys.argv[1]
    # The configuration only takes effect once a first writer initialised the library.
    init = os.path.join(tempfile.mkdtemp(), "init.tsfile")
    tsfile.TsFileWriter(init).close()
    tsfile.set_tsfile_config({
        "float_encoding_type_": TSEncoding.TS_2DIFF,
        "double_encoding_type_": TSEncoding.TS_2DIFF,
        "default_compression_type_": Compressor.SNAPPY,
        "time_compress_type_": Compressor.SNAPPY,
        "page_writer_max_point_num_": 128,
    })
    if os.path.exists(out):
        os.remove(out)
    w = tsfile.TsFileWriter(out)
    names = ["station", "temp", "pressure", "level"]
    types = [TSDataType.STRING, TSDataType.FLOAT, TSDataType.FLOAT, TSDataType.DOUBLE]
    cats = [ColumnCategory.TAG, ColumnCategory.FIELD, ColumnCategory.FIELD, ColumnCategory.FIELD]
    w.register_table(TableSchema("sensors", [ColumnSchema(n, t, c) for n, t, c in zip(names, types, cats)]))
    for d, station in enumerate(["north", "south"]):
        tab = Tablet(names, types, ROWS)
        tab.set_table_name("sensors")
        for r in range(ROWS):
            tab.add_timestamp(r, 1_700_000_000_000 + r * 1000)
            tab.add_value_by_index(0, r, station)
            # Values with more than two decimals, so TS_2DIFF rounds them: around -4877.49
            # (the example) and around 1e5, where a float's last place (1/128) is
            # larger than the decimal step.
            x = (r * 7919 + d * 104729) % 1000
            tab.add_value_by_index(1, r, -4877.4858 + x * 0.01237)
            if r == 0:
                # Decodes as 99996.7265625: 1/128 from the written value, the first value
                # of the statistics.
                tab.add_value_by_index(2, r, 99_996.734375)
            elif r % 11 != 5:
                tab.add_value_by_index(2, r, 99_990.0 + x * 0.013579)
            tab.add_value_by_index(3, r, 1234.56789 * (1 + d) - x * 0.0031)
        w.write_table(tab)
    w.close()


if __name__ == "__main__":
    main()
