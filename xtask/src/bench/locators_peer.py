# Peer side of `cargo xtask bench locators` (columnar formats): the same two operations as
# Bazan's locators -- "index" (row count and per-block rows) and "deep" (100 rows at a deep
# offset) -- done with pyarrow and DuckDB, timed inside Python (median of REPEAT runs).
# Usage: python3 locators_peer.py FORMAT PATH DEEP REPEAT; prints one JSON object per peer.
import json
import sys
import time

fmt, path, deep, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])


def median(f):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


def emit(peer, index=None, deep_s=None, note=None):
    print(json.dumps({"peer": peer, "index": index, "deep": deep_s, "note": note}))


def check(gids):
    if list(gids) != list(range(deep, deep + 100)):
        raise SystemExit(f"{fmt}: peer returned wrong rows")


def pyarrow_peer():
    import pyarrow as pa
    if fmt == "parquet":
        import pyarrow.parquet as pq

        def index():
            md = pq.ParquetFile(path).metadata
            return [md.row_group(i).num_rows for i in range(md.num_row_groups)]

        def read():
            pf = pq.ParquetFile(path)
            md = pf.metadata
            first = 0
            for i in range(md.num_row_groups):
                n = md.row_group(i).num_rows
                if deep < first + n:
                    t = pf.read_row_group(i).slice(deep - first, 100)
                    return t.column("gid").to_pylist()
                first += n

        check(read())
        emit("pyarrow", median(index), median(read), "pyarrow decodes the whole row group")
    elif fmt == "orc":
        import pyarrow.orc as orc

        def index():
            f = orc.ORCFile(path)
            return f.nrows, f.nstripes

        def read():
            # pyarrow.orc exposes no per-stripe row counts, so stripes are read in order.
            f = orc.ORCFile(path)
            first = 0
            for i in range(f.nstripes):
                b = f.read_stripe(i)
                if deep < first + b.num_rows:
                    return b.slice(deep - first, 100).column(0).to_pylist()
                first += b.num_rows

        check(read())
        emit("pyarrow", median(index), median(read),
             "pyarrow.orc index = row/stripe counts only (no per-stripe rows)")
    elif fmt == "arrow":
        def index():
            r = pa.ipc.open_file(pa.memory_map(path))
            return [r.get_batch(i).num_rows for i in range(r.num_record_batches)]

        def read():
            r = pa.ipc.open_file(pa.memory_map(path))
            first = 0
            for i in range(r.num_record_batches):
                b = r.get_batch(i)
                if deep < first + b.num_rows:
                    return b.slice(deep - first, 100).column(0).to_pylist()
                first += b.num_rows

        check(read())
        emit("pyarrow", median(index), median(read), "pyarrow over a memory map (zero-copy batches)")
    elif fmt == "arrows":
        def index():
            return [b.num_rows for b in pa.ipc.open_stream(pa.memory_map(path))]

        def read():
            first = 0
            for b in pa.ipc.open_stream(pa.memory_map(path)):
                if deep < first + b.num_rows:
                    return b.slice(deep - first, 100).column(0).to_pylist()
                first += b.num_rows

        check(read())
        emit("pyarrow", median(index), median(read), "a stream has no footer: pyarrow walks every batch")
    else:
        emit("pyarrow", note="pyarrow has no Avro reader")


def duckdb_peer():
    import duckdb
    con = duckdb.connect()
    if fmt == "parquet":
        def index():
            return con.execute(
                "select row_group_id, row_group_num_rows from parquet_metadata(?) "
                "group by all", [path]).fetchall()

        def read():
            return [r[0] for r in con.execute(
                f"select gid from read_parquet(?) limit 100 offset {deep}", [path]).fetchall()]

        check(read())
        emit("duckdb", median(index), median(read))
    elif fmt == "avro":
        try:
            con.execute("install avro; load avro")
        except Exception as e:  # noqa: BLE001 - any failure means the extension is missing
            emit("duckdb", note=f"peer unavailable: DuckDB avro extension ({type(e).__name__})")
            return

        def index():
            return con.execute("select count(*) from read_avro(?)", [path]).fetchall()

        def read():
            return [r[0] for r in con.execute(
                f"select gid from read_avro(?) limit 100 offset {deep}", [path]).fetchall()]

        check(read())
        emit("duckdb", median(index), median(read), "DuckDB counts by decoding every record")
    else:
        emit("duckdb", note=f"peer unavailable: DuckDB has no built-in {fmt} reader")


for peer in (pyarrow_peer, duckdb_peer):
    try:
        peer()
    except ImportError as e:
        emit(peer.__name__.replace("_peer", ""), note=f"peer unavailable: {e}")
