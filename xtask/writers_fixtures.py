"""Writers of testdata/writers (cargo xtask fixtures writers): files made by other projects'
writers for the classes of issue 23, with their reference reader's answer in expected.json.

Usage: python3 xtask/writers_fixtures.py DIR. Every answer is computed here by the reference
reader from the written bytes, never typed by hand; a damaged file the reference reader does
not refuse stops the script. Output is deterministic for the same package versions.
"""
import csv, datetime, decimal, io, json, os, re, sys, uuid, zipfile

try:
    import duckdb, fastavro, pyorc
    import pyarrow as pa
    import pyarrow.ipc
    import pyarrow.parquet as pq
    import openpyxl
    import tsfile
except ImportError as e:
    sys.exit(f"peer unavailable: {e}")

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
files = []
notes = []


def place_bytes(name, data):
    tmp = os.path.join(out, "." + name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(out, name))


def path(name):
    return os.path.join(out, name)


def entry(name, fmt, classes, writer, reference, **answer):
    files.append({"file": name, "format": fmt, "classes": classes, "writer": writer,
                  "reference": reference, **answer})


# --- Avro (class 3, and codecs of class 3): fastavro ---------------------------------------
FA = f"fastavro {fastavro.__version__}"


def avro(name, schema, rows, classes, codec="null", what=""):
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), rows, codec=codec,
                    sync_interval=4000, sync_marker=b"0123456789abcdef")
    place_bytes(name, buf.getvalue())
    with open(path(name), "rb") as f:
        reader = fastavro.reader(f)
        n = sum(1 for _ in reader)
        ws = reader.writer_schema
    answer = {"rows": n}
    if isinstance(ws, dict) and ws.get("type") == "record":
        answer["columns"] = [fld["name"] for fld in ws["fields"]]
    entry(name, "avro", classes, f"{FA} {what or 'codec ' + codec}", FA, **answer)


flat = {"type": "record", "name": "row", "fields": [
    {"name": "id", "type": "long"},
    {"name": "name", "type": ["null", "string"]},
    {"name": "score", "type": "double"}]}
flat_rows = [{"id": i, "name": None if i % 5 == 0 else f"name {i}", "score": i / 4}
             for i in range(1000)]
for codec in ["bzip2", "xz"]:
    avro(f"avro_{codec}.avro", flat, flat_rows, [3], codec)

nested = {"type": "record", "name": "event", "fields": [
    {"name": "id", "type": "long"},
    {"name": "point", "type": {"type": "record", "name": "point", "fields": [
        {"name": "x", "type": "double"},
        {"name": "tags", "type": {"type": "array", "items": "string"}}]}},
    {"name": "attrs", "type": {"type": "map", "values": "long"}},
    {"name": "choice", "type": ["null", "long", "string", "point"]},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal",
                                "precision": 12, "scale": 2}},
    {"name": "key", "type": {"type": "string", "logicalType": "uuid"}}]}
epoch = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
nested_rows = [{
    "id": i,
    "point": {"x": i / 8, "tags": [f"t{j}" for j in range(i % 3)]},
    "attrs": {f"k{j}": i * j for j in range(i % 4)},
    "choice": [None, i, f"s{i}", {"x": 0.5, "tags": []}][i % 4],
    "day": datetime.date(2024, 1, 1) + datetime.timedelta(days=i),
    "at": epoch + datetime.timedelta(milliseconds=1500 * i),
    "amount": decimal.Decimal(i * 137) / 100,
    "key": uuid.UUID(int=i * 7919 + 1)} for i in range(600)]
avro("avro_nested_logical.avro", nested, nested_rows, [3], "deflate",
     "nested record, array, map, union [null,long,string,record], date, timestamp-millis, "
     "decimal(12,2), uuid; deflate")
logical = {"type": "record", "name": "times", "fields": [
    {"name": "t_ms", "type": {"type": "int", "logicalType": "time-millis"}},
    {"name": "t_us", "type": {"type": "long", "logicalType": "time-micros"}},
    {"name": "ts_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "local_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
    {"name": "price", "type": {"type": "fixed", "name": "dec16", "size": 16,
                               "logicalType": "decimal", "precision": 30, "scale": 4}},
    {"name": "kind", "type": {"type": "enum", "name": "kind", "symbols": ["A", "B", "C"]}},
    {"name": "raw", "type": {"type": "fixed", "name": "four", "size": 4}},
    {"name": "maybe", "type": ["null", {"type": "int", "logicalType": "date"}]}]}
logical_rows = [{
    "t_ms": datetime.time(i % 24, i % 60, i % 60, (i % 1000) * 1000),
    "t_us": datetime.time(i % 24, (i * 7) % 60, 0, i % 1000000),
    "ts_us": epoch + datetime.timedelta(microseconds=123457 * i),
    "local_ms": datetime.datetime(2024, 3, 1) + datetime.timedelta(seconds=i),
    "price": decimal.Decimal(i * 1000003) / 10000,
    "kind": "ABC"[i % 3],
    "raw": bytes([i % 256, 1, 2, 3]),
    "maybe": None if i % 4 == 0 else datetime.date(2000, 1, 1) + datetime.timedelta(days=i)}
    for i in range(500)]
avro("avro_time_fixed_enum.avro", logical, logical_rows, [3], "null",
     "time-millis, time-micros, timestamp-micros, local-timestamp-millis, fixed decimal(30,4), "
     "enum, fixed, [null, date]")
avro("avro_top_array.avro", {"type": "array", "items": "long"},
     [[j for j in range(i % 5)] for i in range(300)], [3], "null",
     "top-level schema array<long> (not a record)")

# --- ORC (class 4): pyorc ------------------------------------------------------------------
PO = f"pyorc {pyorc.__version__}"


def orc(name, type_, values, classes):
    buf = io.BytesIO()
    with pyorc.Writer(buf, type_, compression=pyorc.CompressionKind.ZLIB,
                      stripe_size=64 * 1024) as w:
        for v in values:
            w.write(v)
    place_bytes(name, buf.getvalue())
    with open(path(name), "rb") as f:
        r = pyorc.Reader(f)
        n = sum(1 for _ in r)
        kinds = r.schema
        answer = {"rows": n}
        if isinstance(kinds, pyorc.typedescription.Struct):
            answer["columns"] = list(kinds.fields)
    entry(name, "orc", classes, f"{PO} type {type_}", PO, **answer)


orc("orc_bare_int.orc", "int", [None if i % 7 == 0 else i for i in range(3000)], [4])
orc("orc_bare_array.orc", "array<string>", [["a", "b"], None, [], ["c"]] * 5, [4])
D = decimal.Decimal
orc("orc_decimals.orc", "struct<id:int,small:decimal(10,2),wide:decimal(38,10)>",
    [(i, None if i % 9 == 0 else D(i * 31) / 100,
      D(10) ** 25 + D(i) / 7 if i % 2 else D(-i) / 3) for i in range(2000)], [4])
orc("orc_nested.orc",
    "struct<id:bigint,s:struct<a:int,b:array<string>,m:map<string,double>>,"
    "u:uniontype<int,string>>",
    [(i, None if i % 11 == 0 else (i, [str(j) for j in range(i % 3)],
                                   {f"k{j}": j / 2 for j in range(i % 2)}),
      i if i % 2 else str(i)) for i in range(1500)], [4])

# --- Parquet (class 5): pyarrow ------------------------------------------------------------
PA = f"pyarrow {pa.__version__}"
n_pq = 5000
table = pa.table({
    "id": pa.array(range(n_pq), pa.int64()),
    "city": pa.array([["Oslo", "Lima", "Pune", None][i % 4] for i in range(n_pq)]
                     ).dictionary_encode(),
    "level": pa.array([i % 3 for i in range(n_pq)], pa.int32()).dictionary_encode(),
    "value": pa.array([i / 3 for i in range(n_pq)], pa.float64())})


def parquet(name, tbl, classes, what, **kw):
    sink = pa.BufferOutputStream()
    pq.write_table(tbl, sink, **kw)
    place_bytes(name, sink.getvalue().to_pybytes())
    meta = pq.ParquetFile(path(name)).metadata
    read = pq.read_table(path(name))
    assert read.num_rows == meta.num_rows
    entry(name, "parquet", classes, f"{PA} {what}", PA, rows=read.num_rows,
          columns=read.column_names, row_groups=meta.num_row_groups)
    return sink.getvalue().to_pybytes()


parquet("parquet_dict_groups.parquet", table, [5],
        "dictionary-encoded columns, 5 row groups, zstd", row_group_size=1000,
        compression="zstd", use_dictionary=True)
parquet("parquet_v2_pages.parquet", table.slice(0, 3000), [5],
        "data page v2, format 2.6, small pages, snappy", data_page_version="2.0",
        data_page_size=2048, row_group_size=1500)
name = "parquet_duckdb_null_type.parquet"
con = duckdb.connect()
tmp = path("." + name + ".tmp")
con.execute("copy (select null as n, range as id, [range, 1] as l, {'a': range} as s "
            f"from range(700)) to '{tmp}' (format parquet)")
os.replace(tmp, path(name))
read = pq.read_table(path(name))
entry(name, "parquet", [5], f"DuckDB {duckdb.__version__} COPY TO parquet: a column of the Null "
      "logical type, a list and a struct", PA, rows=read.num_rows, columns=read.column_names)
try:
    empty = pa.table({"id": pa.array([1, 2, 3], pa.int32()),
                      "nothing": pa.array([{}, {}, {}], pa.struct([]))})
    parquet("parquet_empty_struct.parquet", empty, [5], "an empty struct column")
except Exception as e:  # pyarrow refuses to write it: say so in expected.json
    notes.append(f"class 5 empty struct column: {PA} cannot write it ({type(e).__name__}: {e})")

# --- Arrow IPC (classes 2, 7): pyarrow -----------------------------------------------------
ipc_table = pa.table({"id": pa.array(range(4000), pa.int64()),
                      "name": pa.array([f"n{i}" if i % 6 else None for i in range(4000)]),
                      "x": pa.array([i * 0.25 for i in range(4000)], pa.float32())})


def ipc_bytes(stream):
    sink = pa.BufferOutputStream()
    new = pa.ipc.new_stream if stream else pa.ipc.new_file
    with new(sink, ipc_table.schema) as w:
        for batch in ipc_table.to_batches(max_chunksize=500):
            w.write_batch(batch)
    return sink.getvalue().to_pybytes()


def ipc_rows(name, stream):
    with open(path(name), "rb") as f:
        if stream:
            return pa.ipc.open_stream(f).read_all().num_rows
        return pa.ipc.open_file(f).read_all().num_rows


def refuses(name, read):
    """The reference reader's error on a damaged file; stops the script if it reads it."""
    try:
        n = read()
    except Exception as e:  # noqa: BLE001 - any refusal of the reference
        text = str(e).splitlines()[0] if str(e) else ""
        return f"{type(e).__name__}: {text}".replace(path(name), name)
    sys.exit(f"{name}: the reference reader read {n} rows of a file meant to be damaged")


for stream, name, fmt in [(False, "ipc_file.arrow", "arrow_ipc"),
                          (True, "ipc_stream.arrows", "arrow_stream")]:
    place_bytes(name, ipc_bytes(stream))
    entry(name, fmt, [2, 7], f"{PA} {'stream' if stream else 'file'} writer, 8 batches", PA,
          rows=ipc_rows(name, stream), columns=ipc_table.column_names)

name = "ipc_file_zstd.arrow"
sink = pa.BufferOutputStream()
with pa.ipc.new_file(sink, ipc_table.schema,
                     options=pa.ipc.IpcWriteOptions(compression="zstd")) as w:
    for batch in ipc_table.to_batches(max_chunksize=1000):
        w.write_batch(batch)
place_bytes(name, sink.getvalue().to_pybytes())
entry(name, "arrow_ipc", [2], f"{PA} file writer, zstd body compression, 4 batches", PA,
      rows=ipc_rows(name, False), columns=ipc_table.column_names)

stream = ipc_bytes(True)
cut = len(stream) * 3 // 5  # inside a record batch body
name = "bad_ipc_stream_truncated.arrows"
place_bytes(name, stream[:cut])
entry(name, "arrow_stream", [1, 2], f"{PA} stream writer, cut at byte {cut} of {len(stream)}",
      PA, refused=refuses(name, lambda: ipc_rows(name, True)))

name = "bad_ipc_stream_flipped.arrows"
# Past the schema message and the first batch's 8-byte prefix: inside its metadata.
first = len(ipc_table.schema.serialize().to_pybytes()) + 12
for at in range(first, len(stream), 7):
    bad = stream[:at] + bytes(b ^ 0xFF for b in stream[at:at + 4]) + stream[at + 4:]
    place_bytes(name, bad)
    try:
        ipc_rows(name, True)
    except Exception:  # noqa: BLE001 - the first damage the reference refuses
        break
else:
    sys.exit(f"{name}: pyarrow reads every flipped variant")
entry(name, "arrow_stream", [1, 2], f"{PA} stream writer, 4 bytes inverted at {at} (the first "
      f"offset inside the first batch's metadata, in steps of 7, that pyarrow refuses)", PA,
      refused=refuses(name, lambda: ipc_rows(name, True)))

whole = ipc_bytes(False)
cut = len(whole) * 3 // 4  # the footer and the last batches are lost
name = "bad_ipc_file_truncated.arrow"
place_bytes(name, whole[:cut])
entry(name, "arrow_ipc", [1], f"{PA} file writer, cut at byte {cut} of {len(whole)}", PA,
      refused=refuses(name, lambda: ipc_rows(name, False)))

# --- damaged Parquet (class 1): pyarrow ----------------------------------------------------
sink = pa.BufferOutputStream()
pq.write_table(table.slice(0, 2000), sink, row_group_size=1000, compression="snappy")
good = sink.getvalue().to_pybytes()
# The footer length (the 4 bytes before the closing magic) says more than the file holds.
bad = good[:-8] + (len(good) * 2).to_bytes(4, "little") + good[-4:]
name = "bad_parquet_footer_length.parquet"
place_bytes(name, bad)
entry(name, "parquet", [1], f"{PA}, footer length set to {len(good) * 2}", PA,
      refused=refuses(name, lambda: pq.read_table(path(name)).num_rows))
name = "bad_parquet_truncated.parquet"
place_bytes(name, good[: len(good) // 2])
entry(name, "parquet", [1], f"{PA}, cut at byte {len(good) // 2} of {len(good)}", PA,
      refused=refuses(name, lambda: pq.read_table(path(name)).num_rows))
# The footer's thrift bytes overwritten in its middle.
flen = int.from_bytes(good[-8:-4], "little")
start = len(good) - 8 - flen + flen // 2
bad = good[:start] + b"\xff" * 16 + good[start + 16:]
name = "bad_parquet_footer_bytes.parquet"
place_bytes(name, bad)
entry(name, "parquet", [1], f"{PA}, 16 bytes 0xFF at {start} (inside the footer)", PA,
      refused=refuses(name, lambda: pq.read_table(path(name)).num_rows))

# --- NDJSON (class 6): Python json, DuckDB read_json --------------------------------------
lines = []
for i in range(400):
    v = [i, i + 1] if i % 3 == 0 else (i * 1.5 if i % 3 == 1 else {"n": i})
    lines.append(json.dumps({"id": i, "v": v, "s": f"r{i}"}))
name = "ndjson_changing_type.ndjson"
place_bytes(name, ("\n".join(lines) + "\n").encode())
with open(path(name), encoding="utf-8") as f:
    n = sum(1 for line in f if line.strip() and json.loads(line) is not None)
try:
    dd = duckdb.connect().execute(f"select count(*) from read_json('{path(name)}')").fetchall()[0][0]
    duck = f", DuckDB {duckdb.__version__} read_json {dd}"
    assert dd == n, f"DuckDB counts {dd}, Python {n}"
except duckdb.Error as e:
    duck = f", DuckDB {duckdb.__version__} refuses ({str(e).splitlines()[0]})"
entry(name, "ndjson", [6], "Python json.dumps per line: v is an array, a float or an object",
      f"Python json{duck}", rows=n, columns=["id", "v", "s"])

# The same members with types that do not change: the order of the columns without widening.
name = "ndjson_fixed_types.ndjson"
place_bytes(name, "".join(json.dumps({"id": i, "v": i * 1.5, "s": f"r{i}"}) + "\n"
                          for i in range(200)).encode())
with open(path(name), encoding="utf-8") as f:
    parsed = [json.loads(line) for line in f if line.strip()]
dd = duckdb.connect().execute(
    f"select * from read_json('{path(name)}')").description
entry(name, "ndjson", [6], "Python json.dumps per line, members id, v, s of fixed types",
      f"Python json, DuckDB {duckdb.__version__} read_json", rows=len(parsed),
      columns=[d[0] for d in dd])

# --- CSV (classes 2, 9): Python csv, DuckDB ------------------------------------------------
PY = f"Python {sys.version.split()[0]} csv"


def csv_rows(name, encoding="utf-8"):
    with open(path(name), newline="", encoding=encoding) as f:
        rows = list(csv.reader(f))
    return len(rows) - 1, rows[0]


def csv_cells(name, column, picks, encoding="utf-8"):
    """Cells of the string column at index `column` (by header position) in data rows
    `picks`, as Python's csv reads them (None: the row has no such field)."""
    with open(path(name), newline="", encoding=encoding) as f:
        rows = list(csv.reader(f))
    header, data = rows[0], rows[1:]
    return [{"row": k, "column": header[column],
             "value": data[k][column] if column < len(data[k]) else None} for k in picks]


def csv_file(name, rows, classes, what, encoding="utf-8", **kw):
    buf = io.StringIO(newline="")
    w = csv.writer(buf, **{k: v for k, v in kw.items() if k != "ragged"})
    w.writerows(rows)
    place_bytes(name, buf.getvalue().encode(encoding))
    n, header = csv_rows(name, encoding)
    answer = {"rows": n} if kw.get("ragged") else {"rows": n, "columns": header}
    kw.pop("ragged", None)
    answer["cells"] = csv_cells(name, 1, [0, 1, 2, 3, 4, 5, n // 2, n - 1], encoding)
    if encoding != "utf-8":
        answer["encoding"] = encoding
        try:
            csv_rows(name)
            sys.exit(f"{name}: not refused as UTF-8")
        except UnicodeDecodeError as e:
            answer["utf8_refused"] = f"UnicodeDecodeError at byte {e.start}"
    entry(name, "csv", classes, f"{PY} writer, {what}", f"{PY}{duck_csv(name, n, encoding)}",
          **answer)


def duck_csv(name, n, encoding="utf-8"):
    """DuckDB's count of the same file, which must agree with Python's csv."""
    enc = "" if encoding == "utf-8" else f", encoding='{encoding}'"
    dd = duckdb.connect().execute(
        f"select count(*) from read_csv('{path(name)}', null_padding=true{enc})").fetchall()[0][0]
    if dd != n:
        sys.exit(f"{name}: DuckDB counts {dd} rows, Python's csv {n}")
    return f", DuckDB {duckdb.__version__} read_csv(null_padding) {dd}"


base = [["id", "name", "score"]] + [[i, f"name {i}", i / 4] for i in range(800)]
csv_file("csv_cr_only.csv", base, [2], 'lineterminator="\\r" (CR-only line ends)',
         lineterminator="\r")
ragged = [["id", "name", "score"]] + [
    [i, f"n{i}", i / 2][: 1 + i % 3] + ([f"extra{i}"] if i % 5 == 0 else []) for i in range(500)]
csv_file("csv_ragged.csv", ragged, [9], "rows of 1 to 4 fields under a 3-field header",
         ragged=True)
latin = [["id", "city", "note"]] + [
    [i, ["Zürich", "São Paulo", "Malmö", "Reykjavík"][i % 4], "café" if i % 2 else "plain"]
    for i in range(600)]
csv_file("csv_latin1.csv", latin, [9], 'encoding="latin-1"', encoding="latin-1")
# Bytes after a closing quote are not something csv.writer makes: the raw bytes of such
# files as spreadsheets and hand edits leave them, read by Python's csv like any file.
raw = "id,name,score\r\n" + "".join(
    f'{i},"ab"c{i},{i}\r\n' if i % 4 == 0 else f'{i},"q{i}",{i}\r\n' for i in range(300))
name = "csv_after_quote.csv"
place_bytes(name, raw.encode())
n, header = csv_rows(name)
entry(name, "csv", [9], 'raw bytes, "ab"cN fields (bytes after the closing quote)',
      f"{PY}{duck_csv(name, n)}", rows=n, columns=header,
      cells=csv_cells(name, 1, [0, 1, 4, n - 4, n - 1]))
# A plain file from DuckDB's writer, counted by DuckDB's reader.
name = "csv_duckdb.csv"
con = duckdb.connect()
con.execute("create table t as select range as id, 'x' || range as label, range / 7 as q, "
            "date '2024-01-01' + range::int as day from range(1200)")
tmp = path("." + name + ".tmp")
con.execute(f"copy t to '{tmp}' (header, delimiter ',')")
os.replace(tmp, path(name))
dd = con.execute(f"select count(*) from read_csv('{path(name)}')").fetchall()[0][0]
cols = [d[0] for d in con.execute(f"select * from read_csv('{path(name)}') limit 0").description]
entry(name, "csv", [2], f"DuckDB {duckdb.__version__} COPY TO", f"DuckDB {duckdb.__version__}",
      rows=dd, columns=cols)

# --- XLSX (class 2: a real writer's workbook): openpyxl -----------------------------------
OX = f"openpyxl {openpyxl.__version__}"
name = "xlsx_openpyxl.xlsx"
wb = openpyxl.Workbook()
ws = wb.active
ws.title = "data"
ws.append(["id", "when", "label", "amount"])
for i in range(400):
    ws.append([i, datetime.datetime(2024, 1, 1) + datetime.timedelta(hours=i),
               None if i % 6 == 0 else f"item {i}", None if i % 10 == 3 else i * 1.25])
fixed = datetime.datetime(2024, 1, 1)
wb.properties.created = wb.properties.modified = fixed
buf = io.BytesIO()
wb.save(buf)
# openpyxl stamps the zip entries and docProps' modified time with the time of saving: the
# same parts are packed again with a fixed time so that the bytes repeat (the parts are
# openpyxl's but for that one timestamp).
packed = io.BytesIO()
with zipfile.ZipFile(buf) as src, zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as dst:
    for info in src.infolist():
        part = src.read(info)
        if info.filename == "docProps/core.xml":
            part = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>2024-01-01T00:00:00Z", part)
        dst.writestr(zipfile.ZipInfo(info.filename, (2024, 1, 1, 0, 0, 0)), part,
                     compress_type=zipfile.ZIP_DEFLATED)
place_bytes(name, packed.getvalue())
rows = list(openpyxl.load_workbook(path(name), read_only=True).active.iter_rows(values_only=True))
entry(name, "xlsx", [2], f"{OX} Workbook.save (times of the zip and docProps fixed)", OX,
      rows=len(rows) - 1, columns=[str(c) for c in rows[0]])

# --- TsFile (class 8): the official writer (tsfile, C++ core), tree model -----------------
TS = f"tsfile {tsfile.__version__ if hasattr(tsfile, '__version__') else '2.5.0'}"
name = "tsfile_tree_mixed_types.tsfile"
tmp = path("." + name + ".tmp")
if os.path.exists(tmp):
    os.remove(tmp)
T = tsfile.TSDataType
w = tsfile.TsFileWriter(tmp)
w.register_timeseries("root.plant.d1", tsfile.TimeseriesSchema("temp", T.INT32))
w.register_timeseries("root.plant.d2", tsfile.TimeseriesSchema("temp", T.DOUBLE))
w.register_timeseries("root.plant.d2", tsfile.TimeseriesSchema("ok", T.BOOLEAN))
for t in range(300):
    w.write_row_record(tsfile.RowRecord("root.plant.d1", t * 10,
                                        [tsfile.Field("temp", t, T.INT32)]))
    if t % 3:
        w.write_row_record(tsfile.RowRecord("root.plant.d2", t * 10,
                                            [tsfile.Field("temp", t / 2, T.DOUBLE)]))
    if t % 2:
        w.write_row_record(tsfile.RowRecord("root.plant.d2", t * 10 + 5,
                                            [tsfile.Field("ok", t % 4 == 1, T.BOOLEAN)]))
w.close()
os.replace(tmp, path(name))
r = tsfile.TsFileReader(path(name))
n = 0
for dev, ds in r.get_all_timeseries_schemas().items():
    names = [ts.get_timeseries_name() for ts in ds.get_timeseries_list()]
    rs = r.query_timeseries(dev, names, -(2 ** 62), 2 ** 62)
    while rs.next():
        n += 1
    rs.close()
r.close()
entry(name, "tsfile", [8], f"{TS} TsFileWriter (tree model): measurement temp is INT32 in "
      "root.plant.d1 and DOUBLE in root.plant.d2 (with BOOLEAN ok at other times)",
      f"{TS} TsFileReader.query_timeseries per device (rows per distinct time)", rows=n)

place_bytes("expected.json", (json.dumps(
    {"about": "files of other writers; rows and columns as their reference reader gives them, "
              "or its refusal (refused) for damaged files",
     "notes": notes, "files": files}, indent=1) + "\n").encode())
