//! The map file (`docs/lake-map.md` §2): an Arrow IPC file of map schema 3, written
//! atomically (temporary file in the same directory, fsync, rename, fsync of the directory)
//! and loaded from a memory map through arrow-ipc's `FileDecoder`, one record batch at a
//! time as entries are used (zero-copy where a buffer is stored uncompressed). Legacy schema
//! 1 and 2 maps are read whole, with the old defaults.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_buffer::Buffer;
use arrow_ipc::convert::fb_to_schema;
use arrow_ipc::reader::{FileDecoder, read_footer_length};
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::config::{
    DEFAULT_STRIDE, Fingerprint, MapConfig, TextEncoding, stats_columns_from_json,
};
use crate::discovery::resolve_map_path;
use crate::error::{Error, Result};
use crate::lake_map::{
    ChunkDecoder, HeadDecoder, LakeMap, LazyHeads, LazyJson, MapEntry, TextColumn,
    assign_first_global_rows, first_column,
};
// The schema lives with the batches built under it; re-exported here, where it always was.
pub use crate::lake_map::{MAP_SCHEMA, map_schema};

const ARROW_MAGIC: &[u8; 6] = b"ARROW1";

/// Entries per record batch of a map file the writer stores: the loader decodes the JSON
/// columns one record batch at a time, when an entry of it is first used.
pub const MAP_BATCH_ROWS: usize = 2048;

/// The body compression of the map files the writer stores (`docs/lake-map.md` §2.4), and
/// its level. ZSTD rather than LZ4: arrow-ipc decompresses an LZ4 buffer through a frame
/// decoder that zeroes a block buffer of its own for each buffer (the load of a 30,000-entry
/// map spends a quarter of its time in `memset`), a ZSTD buffer straight into its output.
const MAP_COMPRESSION: (arrow_ipc::CompressionType, i32) = (arrow_ipc::CompressionType::ZSTD, 1);

/// The columns read from the map file only when an entry's value is first used.
const JSON_COLUMNS: [&str; 3] = ["row_groups_json", "stats_json", "schema_json"];

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `map` to `<root>/.br_map.bazan` atomically and returns the path.
pub fn write_map(map: &LakeMap) -> Result<PathBuf> {
    let path = resolve_map_path(map.root());
    write_map_to(map, &path)?;
    Ok(path)
}

/// Writes `map` as a schema-3 map file at `path`, atomically: a temporary file in the same
/// directory is written, flushed and fsynced, renamed over `path`, and the directory is
/// fsynced, so a reader sees the old complete map or the new complete map, never a torn one.
pub fn write_map_to(map: &LakeMap, path: &Path) -> Result<()> {
    publish(path, |tmp| write_tmp(map, tmp).map(Some)).map(|_| ())
}

/// Writes `bytes`, a whole map file, to `path` atomically, as [`write_map_to`] does, once the
/// map they hold loads for the lake at `root` and passes `check`; `None` (and nothing
/// written) when it does not.
pub(crate) fn write_bytes_checked(
    root: &Path,
    path: &Path,
    bytes: &[u8],
    check: impl FnOnce(&LakeMap) -> bool,
) -> Result<Option<LakeMap>> {
    publish(path, |tmp| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(tmp)
            .map_err(|e| Error::io(tmp, e))?;
        file.write_all(bytes).map_err(|e| Error::io(tmp, e))?;
        file.sync_all().map_err(|e| Error::io(tmp, e))?;
        // The map stays mapped from the file's inode, which the rename keeps.
        Ok(load_map_file(root, tmp).ok().filter(|m| check(m)))
    })
}

/// Runs `write` on a temporary file in `path`'s directory and, when it returns a value,
/// renames the file over `path` and fsyncs the directory; the temporary file is removed
/// otherwise.
fn publish<T>(path: &Path, write: impl FnOnce(&Path) -> Result<Option<T>>) -> Result<Option<T>> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(".br_map.bazan");
    let tmp = dir.join(format!(
        ".{}.tmp-{}-{}",
        name.trim_start_matches('.'),
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = write(&tmp).and_then(|value| {
        if value.is_none() {
            return Ok(None);
        }
        fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
        // The rename is durable only once the directory entry is on disk.
        File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(&dir, e))?;
        Ok(value)
    });
    if !matches!(result, Ok(Some(_))) {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Maps whose entries take at most this many bytes of Arrow memory are stored uncompressed
/// (`docs/lake-map.md` §2.4): at most 64 KiB more on disk, where a loader would create a ZSTD
/// context for each record batch and JSON column it decodes, each of which detects the CPU's
/// features again (`cpuid`, tens of microseconds in a virtual machine): more than the rest of
/// a small map's load.
pub(crate) const COMPRESS_ABOVE_BYTES: usize = 64 << 10;

/// The IPC options of a map file whose entries take `bytes` bytes uncompressed.
pub(crate) fn write_options(
    bytes: usize,
) -> std::result::Result<IpcWriteOptions, arrow_schema::ArrowError> {
    if bytes <= COMPRESS_ABOVE_BYTES {
        return Ok(IpcWriteOptions::default());
    }
    IpcWriteOptions::default()
        .try_with_compression(Some(MAP_COMPRESSION.0))
        .and_then(|o| o.try_with_compression_level(Some(MAP_COMPRESSION.1)))
}

fn write_tmp(map: &LakeMap, tmp: &Path) -> Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(tmp)
        .map_err(|e| Error::io(tmp, e))?;
    let arrow = |source| Error::Arrow {
        path: tmp.to_path_buf(),
        source,
    };
    let batch = file_layout(map.to_record_batch()?).map_err(arrow)?;
    let schema = batch.schema();
    let n = batch.num_rows();
    let options = write_options(batch.get_array_memory_size()).map_err(arrow)?;
    let mut writer =
        FileWriter::try_new_with_options(Vec::new(), &schema, options).map_err(arrow)?;
    if n == 0 {
        writer.write(&batch).map_err(arrow)?;
    }
    for start in (0..n).step_by(MAP_BATCH_ROWS) {
        let len = MAP_BATCH_ROWS.min(n - start);
        writer.write(&batch.slice(start, len)).map_err(arrow)?;
    }
    writer.finish().map_err(arrow)?;
    let bytes = writer.into_inner().map_err(arrow)?;
    // `first_global_row` stored uncompressed (docs/lake-map.md §2).
    let firsts = batch
        .column_by_name("first_global_row")
        .and_then(|c| c.as_primitive_opt::<Int64Type>())
        .map(|a| a.values().to_vec());
    let plain = firsts.and_then(|f| crate::splice::with_plain_firsts(&bytes, &f));
    let mut file = BufWriter::new(file);
    file.write_all(plain.as_deref().unwrap_or(&bytes))
        .map_err(|e| Error::io(tmp, e))?;
    file.flush().map_err(|e| Error::io(tmp, e))?;
    let file = file
        .into_inner()
        .map_err(|e| Error::io(tmp, e.into_error()))?;
    file.sync_all().map_err(|e| Error::io(tmp, e))
}

/// The batch as the writer stores it: `schema_json` dictionary-encoded (the files of a lake
/// share a few schemas, each then stored once), every other column as it is.
fn file_layout(batch: RecordBatch) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
    let schema = batch.schema();
    let Ok(i) = schema.index_of("schema_json") else {
        return Ok(batch);
    };
    let Some(text) = batch.column(i).as_string_opt::<i32>() else {
        return Ok(batch);
    };
    let mut b = arrow_array::builder::StringDictionaryBuilder::<Int32Type>::new();
    for v in text.iter() {
        match v {
            Some(v) => {
                b.append(v)?;
            }
            None => b.append_null(),
        }
    }
    let mut columns = batch.columns().to_vec();
    columns[i] = Arc::new(b.finish());
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields[i] = Field::new(
        "schema_json",
        DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        true,
    );
    RecordBatch::try_new(
        Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
        columns,
    )
}

/// Loads `<root>/.br_map.bazan`.
pub fn load_map(root: &Path) -> Result<LakeMap> {
    load_map_file(root, &resolve_map_path(root))
}

/// Loads a map file for the lake at `root`: memory-maps it, checks the kind, schema version,
/// columns and types and every record batch's metadata, and reads `first_global_row`; the
/// other columns of a record batch are decoded and checked (every entry path among them)
/// when one of its entries is first used ([`LakeMap::check_entries`] checks them all).
pub fn load_map_file(root: &Path, path: &Path) -> Result<LakeMap> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if len < (ARROW_MAGIC.len() * 2 + 4) as u64 {
        return Err(Error::invalid(
            path,
            format!("{len} bytes is too short for an Arrow IPC file"),
        ));
    }
    // SAFETY: the map is only read; a concurrent writer replaces it by rename, never in
    // place, so the mapped bytes do not change under us. No `populate`: pages of the JSON
    // columns are only touched when an entry's blocks, stats or schema are read.
    let mmap = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
    let buffer = Buffer::from(bytes::Bytes::from_owner(mmap));
    // arrow-ipc 59 can panic on some damaged buffers (e.g. a validity bitmap shorter than
    // the array) instead of returning an error; a damaged map must be a clear error.
    let decoded =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decode_ipc(&buffer, path)))
            .map_err(|_| {
                Error::invalid(path, "the Arrow IPC data is damaged (the decoder panicked)")
            })?;
    let (schema, batches, json, heads) = decoded?;
    Ok(from_decoded(root, path, &schema, batches, json, heads)?.with_mapping(buffer))
}

/// What [`decode_ipc`] reads at load: the file's schema, its record batches (without the
/// JSON columns of a schema-3 map) and those columns, read as they are used.
type Decoded = (
    SchemaRef,
    Vec<RecordBatch>,
    Option<LazyJson>,
    Option<LazyHeads>,
);

/// Decodes an Arrow IPC file held in `buffer` (zero-copy for aligned, uncompressed data).
/// The JSON columns of a schema-3 map are left out of the batches and read later, one
/// record batch at a time, when an entry's value is first used.
fn decode_ipc(buffer: &Buffer, path: &Path) -> Result<Decoded> {
    let bytes = buffer.as_slice();
    let n = bytes.len();
    if &bytes[..6] != ARROW_MAGIC || &bytes[n - 6..] != ARROW_MAGIC {
        return Err(Error::invalid(
            path,
            "no Arrow IPC file magic (ARROW1) at start and end",
        ));
    }
    let mut tail = [0u8; 10];
    tail.copy_from_slice(&bytes[n - 10..]);
    let footer_len = read_footer_length(tail)
        .map_err(|e| Error::invalid(path, format!("footer length at byte {}: {e}", n - 10)))?;
    if footer_len + 10 + 8 > n {
        return Err(Error::invalid(
            path,
            format!("footer length {footer_len} exceeds the file ({n} bytes)"),
        ));
    }
    let footer_start = n - 10 - footer_len;
    let footer = arrow_ipc::root_as_footer(&bytes[footer_start..n - 10]).map_err(|e| {
        Error::invalid(
            path,
            format!("footer at byte {footer_start} is damaged: {e}"),
        )
    })?;
    let fb_schema = footer
        .schema()
        .ok_or_else(|| Error::invalid(path, "footer has no schema"))?;
    let schema = Arc::new(fb_to_schema(fb_schema));
    let decode_schema = lazy_json_schema(&schema);
    let lazy: Vec<usize> = if meta_or(&schema, "bazan.map_schema") == Some("3") {
        JSON_COLUMNS
            .iter()
            .filter_map(|c| schema.index_of(c).ok())
            .collect()
    } else {
        Vec::new()
    };
    let lazy = if lazy.len() == JSON_COLUMNS.len() {
        lazy
    } else {
        Vec::new()
    };
    let version = footer.version();
    let decoder_of = |projection: Option<Vec<usize>>| {
        let d = FileDecoder::new(Arc::clone(&decode_schema), version);
        match projection {
            Some(p) => d.with_projection(p),
            None => d,
        }
    };
    let eager: Vec<usize> = (0..schema.fields().len())
        .filter(|i| !lazy.contains(i))
        .collect();
    // A schema-3 map with its JSON columns read lazily has its head columns read lazily too:
    // the load decodes `first_global_row` alone, and each record batch's other columns when
    // an entry of it is first used.
    let first_at = schema
        .index_of("first_global_row")
        .ok()
        .filter(|_| !lazy.is_empty());
    let mut decoders = vec![match first_at {
        Some(f) => decoder_of(Some(vec![f])),
        None => decoder_of(None),
    }];
    decoders.extend(lazy.iter().map(|&i| decoder_of(Some(vec![i]))));
    let rows_at = schema.index_of("row_count").ok();
    if let (Some(f), Some(r)) = (first_at, rows_at) {
        // The head columns of a record batch, and the row count alone (of the last entry).
        decoders.push(decoder_of(Some(
            eager.iter().copied().filter(|&i| i != f).collect(),
        )));
        decoders.push(decoder_of(Some(vec![r])));
    }
    // Which decoders read a dictionary-encoded column (the others skip the dictionaries).
    let dictionary_columns: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| matches!(schema.field(i).data_type(), DataType::Dictionary(..)))
        .collect();
    let mut projections: Vec<Option<Vec<usize>>> = vec![first_at.map(|f| vec![f])];
    projections.extend(lazy.iter().map(|&i| Some(vec![i])));
    let needs_dictionaries: Vec<bool> = projections
        .iter()
        .map(|p| match p {
            None => true,
            Some(p) => p.iter().any(|i| dictionary_columns.contains(i)),
        })
        .chain(std::iter::repeat(false))
        .take(decoders.len())
        .collect();
    let block_buf = |block: &arrow_ipc::Block| -> Result<Buffer> {
        let off = usize::try_from(block.offset()).ok();
        let meta = usize::try_from(block.metaDataLength()).ok();
        let body = usize::try_from(block.bodyLength()).ok();
        match (off, meta, body) {
            (Some(o), Some(m), Some(b))
                if o.checked_add(m)
                    .and_then(|x| x.checked_add(b))
                    .is_some_and(|end| end <= footer_start) =>
            {
                Ok(buffer.slice_with_length(o, m + b))
            }
            _ => Err(Error::invalid(
                path,
                format!(
                    "block at byte {} (metadata {}, body {}) lies outside the file",
                    block.offset(),
                    block.metaDataLength(),
                    block.bodyLength()
                ),
            )),
        }
    };
    if let Some(dicts) = footer.dictionaries() {
        for block in dicts {
            let buf = block_buf(block)?;
            check_compressed_lengths(block, &buf, path)?;
            for (decoder, _) in decoders
                .iter_mut()
                .zip(&needs_dictionaries)
                .filter(|(_, needs)| **needs)
            {
                decoder.read_dictionary(block, &buf).map_err(|e| {
                    Error::invalid(path, format!("dictionary at byte {}: {e}", block.offset()))
                })?;
            }
        }
    }
    let mut batches = Vec::new();
    // The record batches' blocks, for the JSON columns' later reads.
    let mut blocks = Vec::new();
    let mut null_counts: Vec<Vec<usize>> = vec![Vec::new(); lazy.len()];
    // The head columns that may hold no null, checked from each record batch's metadata.
    let not_null: Vec<(usize, &str)> = match first_at {
        Some(_) => ["path", "format", "size_bytes", "mtime_ms", "row_count"]
            .into_iter()
            .filter_map(|c| schema.index_of(c).ok().map(|i| (i, c)))
            .collect(),
        None => Vec::new(),
    };
    if let Some(list) = footer.recordBatches() {
        for block in list {
            let buf = block_buf(block)?;
            let nodes = check_compressed_lengths(block, &buf, path)?;
            if let Some(&(_, name)) = not_null
                .iter()
                .find(|(i, _)| nodes.get(*i).is_some_and(|&n| n > 0))
            {
                return Err(Error::invalid(path, format!("column {name:?} has nulls")));
            }
            let batch = decoders[0].read_record_batch(block, &buf).map_err(|e| {
                Error::invalid(
                    path,
                    format!("record batch at byte {}: {e}", block.offset()),
                )
            })?;
            if let Some(batch) = batch {
                // The JSON columns' null counts (flat schema: one field node per column).
                for (k, &i) in lazy.iter().enumerate() {
                    null_counts[k].push(nodes.get(i).copied().unwrap_or(usize::MAX));
                }
                batches.push(batch);
                blocks.push((*block, buf));
            }
        }
    }
    let mut starts = Vec::with_capacity(batches.len() + 1);
    let mut at = 0usize;
    starts.push(0);
    for b in &batches {
        at += b.num_rows();
        starts.push(at);
    }
    let starts: Arc<[usize]> = Arc::from(starts);
    let blocks = Arc::new(blocks);
    let heads = match (first_at, rows_at) {
        (Some(_), Some(_)) if decoders.len() == lazy.len() + 3 => {
            let rows_decoder = decoders.pop();
            let decoder = decoders.pop();
            let (Some(rows_decoder), Some(decoder)) = (rows_decoder, decoder) else {
                return Err(Error::invalid(path, "no decoder of the head columns"));
            };
            let first_global_row = batches
                .iter()
                .map(|b| first_column(b.column(0), path))
                .collect::<Result<Vec<_>>>()?;
            batches.clear();
            // The last entry's row count: the end of the lake.
            let last_row_count = match blocks
                .iter()
                .zip(starts.windows(2))
                .rev()
                .find(|(_, w)| w[1] > w[0])
            {
                Some(((block, buf), w)) => {
                    let batch = rows_decoder.read_record_batch(block, buf).map_err(|e| {
                        Error::invalid(
                            path,
                            format!("record batch at byte {}: {e}", block.offset()),
                        )
                    })?;
                    batch.and_then(|b| {
                        b.column(0)
                            .as_primitive_opt::<Int64Type>()
                            .filter(|a| a.len() == w[1] - w[0] && !a.is_null(a.len() - 1))
                            .map(|a| a.value(a.len() - 1))
                    })
                }
                None => None,
            };
            let blocks = Arc::clone(&blocks);
            let decode: HeadDecoder = Arc::new(move |c| {
                let (block, buf) = blocks.get(c).ok_or("no such record batch")?;
                // As at load: a damaged buffer can make arrow-ipc panic.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    decoder.read_record_batch(block, buf)
                }))
                .map_err(|_| "the decoder panicked".to_string())?
                .map_err(|e| e.to_string())?
                .ok_or_else(|| "not a record batch".to_string())
            });
            Some(LazyHeads {
                starts: Arc::clone(&starts),
                first_global_row,
                last_row_count,
                decode,
            })
        }
        _ => None,
    };
    let json = if lazy.is_empty() {
        None
    } else {
        let mut cols = decoders.into_iter().skip(1).map(|decoder| {
            let blocks = Arc::clone(&blocks);
            let decode: ChunkDecoder = Arc::new(move |c| {
                let (block, buf) = blocks.get(c).ok_or("no such record batch")?;
                // As at load: a damaged buffer can make arrow-ipc panic.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    decoder.read_record_batch(block, buf)
                }))
                .map_err(|_| "the decoder panicked".to_string())?
                .map_err(|e| e.to_string())?
                .map(|b| Arc::clone(b.column(0)))
                .ok_or_else(|| "not a record batch".to_string())
            });
            decode
        });
        let mut counts = null_counts.into_iter();
        let mut next = |nullable| {
            let column = cols
                .next()
                .map(|d| TextColumn::lazy(Arc::clone(&starts), d, nullable));
            match counts.next() {
                Some(c) => column.map(|col| col.with_null_counts(c)),
                None => column,
            }
        };
        match (next(false), next(true), next(true)) {
            (Some(row_groups_json), Some(stats_json), Some(schema_json)) => Some(LazyJson {
                row_groups_json,
                stats_json,
                schema_json,
            }),
            _ => None,
        }
    };
    Ok((schema, batches, json, heads))
}

/// Refuses a compressed buffer whose stated uncompressed length is out of reach of its
/// compressed bytes (over 1,024 times them, and over 1 MiB): arrow-ipc allocates that length
/// before it decompresses, so a damaged length would abort the process instead of failing.
/// Returns the null count of each field node of a record batch (empty for another message),
/// as its metadata states it.
fn check_compressed_lengths(
    block: &arrow_ipc::Block,
    buf: &Buffer,
    path: &Path,
) -> Result<Vec<usize>> {
    let bytes = buf.as_slice();
    let damaged =
        |what: &str| Error::invalid(path, format!("message at byte {}: {what}", block.offset()));
    let meta = usize::try_from(block.metaDataLength()).unwrap_or(usize::MAX);
    if meta > bytes.len() || meta < 8 {
        return Err(damaged("metadata length outside the block"));
    }
    let fb = if bytes[..4] == [0xff; 4] {
        &bytes[8..meta]
    } else {
        &bytes[4..meta]
    };
    let message = arrow_ipc::root_as_message(fb).map_err(|e| damaged(&format!("metadata: {e}")))?;
    let batch = match message.header_type() {
        arrow_ipc::MessageHeader::RecordBatch => message.header_as_record_batch(),
        arrow_ipc::MessageHeader::DictionaryBatch => {
            message.header_as_dictionary_batch().and_then(|d| d.data())
        }
        _ => None,
    };
    let Some(batch) = batch else {
        return Ok(Vec::new());
    };
    let null_counts: Vec<usize> = match message.header_type() {
        arrow_ipc::MessageHeader::RecordBatch => batch
            .nodes()
            .map(|nodes| {
                nodes
                    .iter()
                    .map(|n| usize::try_from(n.null_count()).unwrap_or(usize::MAX))
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    if batch.compression().is_none() {
        return Ok(null_counts);
    }
    let body = &bytes[meta..];
    for b in batch.buffers().into_iter().flatten() {
        let start = usize::try_from(b.offset()).unwrap_or(usize::MAX);
        let len = usize::try_from(b.length()).unwrap_or(usize::MAX);
        let Some(data) = start.checked_add(len).and_then(|end| body.get(start..end)) else {
            return Err(damaged("a buffer lies outside the message body"));
        };
        if data.len() < 8 {
            continue;
        }
        let mut prefix = [0u8; 8];
        prefix.copy_from_slice(&data[..8]);
        let stated = i64::from_le_bytes(prefix);
        // -1: stored uncompressed.
        if stated == -1 {
            continue;
        }
        let bound = (data.len() as u64).saturating_mul(1024).max(1 << 20);
        if stated < 0 || stated as u64 > bound {
            return Err(damaged(&format!(
                "a compressed buffer of {} bytes states {stated} bytes uncompressed",
                data.len()
            )));
        }
    }
    Ok(null_counts)
}

/// The schema the decoder uses: a schema-3 map's JSON columns read as Binary (same layout as
/// Utf8), so that loading checks their offsets but not the UTF-8 of every byte; the entry
/// accessors check each value's UTF-8 when it is read.
fn lazy_json_schema(schema: &SchemaRef) -> SchemaRef {
    if meta_or(schema, "bazan.map_schema") != Some("3") {
        return Arc::clone(schema);
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let json = JSON_COLUMNS.contains(&f.name().as_str());
            match f.data_type() {
                DataType::Utf8 if json => Field::new(f.name(), DataType::Binary, f.is_nullable()),
                DataType::Dictionary(k, v) if json && v.as_ref() == &DataType::Utf8 => Field::new(
                    f.name(),
                    DataType::Dictionary(k.clone(), Box::new(DataType::Binary)),
                    f.is_nullable(),
                ),
                _ => f.as_ref().clone(),
            }
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

fn meta_or<'a>(schema: &'a Schema, key: &str) -> Option<&'a str> {
    schema.metadata().get(key).map(String::as_str)
}

fn from_decoded(
    root: &Path,
    path: &Path,
    schema: &SchemaRef,
    batches: Vec<RecordBatch>,
    json: Option<LazyJson>,
    heads: Option<LazyHeads>,
) -> Result<LakeMap> {
    if let Some(kind) = meta_or(schema, "bazan.kind")
        && kind != "lake_map"
    {
        return Err(Error::invalid(
            path,
            format!("bazan.kind is {kind:?}, not \"lake_map\""),
        ));
    }
    let ncols = schema.fields().len();
    let version = match meta_or(schema, "bazan.map_schema") {
        Some("3") => 3,
        Some("2") => 2,
        Some("1") => 1,
        Some(other) => {
            return Err(Error::invalid(
                path,
                format!("unknown bazan.map_schema {other:?}"),
            ));
        }
        None if meta_or(schema, "bazan.kind").is_none() && !is_legacy_layout(schema) => {
            return Err(Error::invalid(
                path,
                "no bazan.kind metadata and not a legacy map layout (an Arrow file, not a lake map)",
            ));
        }
        None => match ncols {
            5 => 1,
            7 => 2,
            _ => {
                return Err(Error::invalid(
                    path,
                    format!("no bazan.map_schema and {ncols} columns (legacy maps have 5 or 7)"),
                ));
            }
        },
    };
    if version == 3 {
        let config = read_config(schema, path)?;
        let etag_last = ncols == 11
            && schema.field(10).name() == crate::etag::ETAG_COLUMN
            && schema.field(10).data_type() == &DataType::Utf8;
        if ncols != 10 && !etag_last {
            return Err(Error::invalid(
                path,
                format!(
                    "map schema 3 has 10 columns (11 with an `etag` Utf8 column last), found \
                     {ncols}"
                ),
            ));
        }
        check_types(schema, path)?;
        if let (Some(heads), Some(json)) = (heads, json.clone()) {
            return LakeMap::from_lazy(root, config, heads, json, path);
        }
        let batch = concatenated(schema, batches, path)?;
        return LakeMap::from_parts(root, config, 3, batch, json, path);
    }
    let batch = concatenated(schema, batches, path)?;
    let entries = legacy_entries(&batch, version, path)?;
    let batch = crate::lake_map::entries_to_batch(&entries, &MapConfig::default())?;
    LakeMap::from_batch(root, MapConfig::default(), version, batch, path)
}

/// The record batches as one.
fn concatenated(schema: &SchemaRef, batches: Vec<RecordBatch>, path: &Path) -> Result<RecordBatch> {
    if batches.len() == 1 {
        Ok(batches
            .into_iter()
            .next()
            .unwrap_or_else(|| RecordBatch::new_empty(Arc::clone(schema))))
    } else {
        let decoded = batches
            .first()
            .map(|b| b.schema())
            .unwrap_or_else(|| Arc::clone(schema));
        arrow_select::concat::concat_batches(&decoded, &batches).map_err(|source| Error::Arrow {
            path: path.to_path_buf(),
            source,
        })
    }
}

fn is_legacy_layout(schema: &Schema) -> bool {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    names == ["path", "format", "size_bytes", "mtime_ms", "row_count"]
        || names
            == [
                "path",
                "format",
                "size_bytes",
                "mtime_ms",
                "row_count",
                "first_global_row",
                "row_groups_json",
            ]
}

fn read_config(schema: &Schema, path: &Path) -> Result<MapConfig> {
    let mut config = MapConfig::default();
    if let Some(s) = meta_or(schema, "bazan.checkpoint_stride_rows") {
        config.checkpoint_stride_rows =
            s.parse::<u64>().ok().filter(|&v| v > 0).ok_or_else(|| {
                Error::invalid(path, format!("bad bazan.checkpoint_stride_rows {s:?}"))
            })?;
    } else {
        config.checkpoint_stride_rows = DEFAULT_STRIDE;
    }
    if let Some(s) = meta_or(schema, "bazan.fingerprint") {
        config.fingerprint = s
            .parse::<Fingerprint>()
            .map_err(|e| Error::invalid(path, format!("bazan.fingerprint: {e}")))?;
    }
    if let Some(s) = meta_or(schema, "bazan.stats_columns") {
        let value: serde_json::Value = serde_json::from_str(s)
            .map_err(|e| Error::invalid(path, format!("bazan.stats_columns {s:?}: {e}")))?;
        config.stats_columns = stats_columns_from_json(&value)
            .map_err(|e| Error::invalid(path, format!("bazan.stats_columns: {e}")))?;
    }
    if let Some(s) = meta_or(schema, "bazan.text_encoding") {
        config.text_encoding = s
            .parse::<TextEncoding>()
            .map_err(|e| Error::invalid(path, format!("bazan.text_encoding: {e}")))?;
    }
    Ok(config)
}

fn check_types(schema: &Schema, path: &Path) -> Result<()> {
    let expected = map_schema(&MapConfig::default());
    for want in expected.fields() {
        let got = schema
            .field_with_name(want.name())
            .map_err(|_| Error::invalid(path, format!("missing column {:?}", want.name())))?;
        let dictionary_text = JSON_COLUMNS.contains(&want.name().as_str())
            && got.data_type()
                == &DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        if got.data_type() != want.data_type() && !dictionary_text {
            return Err(Error::invalid(
                path,
                format!(
                    "column {:?} has type {}, expected {}",
                    want.name(),
                    got.data_type(),
                    want.data_type()
                ),
            ));
        }
    }
    Ok(())
}

/// Reads the entries of a schema 1 or 2 map; schema 1 entries are put in path order and get
/// their first global rows by summing row counts, and have no locators.
fn legacy_entries(batch: &RecordBatch, version: u32, path: &Path) -> Result<Vec<MapEntry>> {
    let col = |name: &str| {
        batch
            .schema()
            .index_of(name)
            .map(|i| Arc::clone(batch.column(i)))
            .map_err(|_| Error::invalid(path, format!("legacy map has no column {name:?}")))
    };
    let strs = |name: &str| -> Result<Vec<String>> {
        let c = col(name)?;
        let a = c
            .as_string_opt::<i32>()
            .ok_or_else(|| Error::invalid(path, format!("column {name:?} is not Utf8")))?;
        if a.null_count() > 0 {
            return Err(Error::invalid(path, format!("column {name:?} has nulls")));
        }
        Ok(a.iter()
            .map(|v| v.unwrap_or_default().to_string())
            .collect())
    };
    let ints = |name: &str| -> Result<Vec<i64>> {
        let c = col(name)?;
        let a = c
            .as_primitive_opt::<Int64Type>()
            .ok_or_else(|| Error::invalid(path, format!("column {name:?} is not Int64")))?;
        if a.null_count() > 0 {
            return Err(Error::invalid(path, format!("column {name:?} has nulls")));
        }
        Ok(a.values().to_vec())
    };
    let paths = strs("path")?;
    let formats = strs("format")?;
    let sizes = ints("size_bytes")?;
    let mtimes = ints("mtime_ms")?;
    let rows = ints("row_count")?;
    let (firsts, groups) = if version == 2 {
        (
            Some(ints("first_global_row")?),
            Some(strs("row_groups_json")?),
        )
    } else {
        (None, None)
    };
    let nonneg = |v: i64, what: &str, p: &str| -> Result<u64> {
        u64::try_from(v).map_err(|_| Error::invalid(path, format!("entry {p:?}: negative {what}")))
    };
    let mut entries = Vec::with_capacity(paths.len());
    for i in 0..paths.len() {
        entries.push(MapEntry {
            path: paths[i].clone(),
            format: formats[i].clone(),
            size_bytes: nonneg(sizes[i], "size_bytes", &paths[i])?,
            mtime_ms: mtimes[i],
            row_count: nonneg(rows[i], "row_count", &paths[i])?,
            first_global_row: match &firsts {
                Some(f) => nonneg(f[i], "first_global_row", &paths[i])?,
                None => 0,
            },
            row_groups_json: groups
                .as_ref()
                .map(|g| g[i].clone())
                .unwrap_or_else(|| "[]".to_string()),
            blake3: None,
            stats_json: None,
            schema_json: None,
        });
    }
    if version == 1 {
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        assign_first_global_rows(&mut entries);
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text encoding is read back from the metadata; a name other than utf-8 or
    /// latin-1 makes the map invalid, naming the key.
    #[test]
    fn text_encoding_metadata() {
        let path = Path::new("/lake/.br_map.bazan");
        let config = MapConfig {
            text_encoding: TextEncoding::Latin1,
            ..MapConfig::default()
        };
        let schema = crate::lake_map::map_schema(&config);
        assert_eq!(read_config(&schema, path).unwrap(), config);
        let mut md = schema.metadata().clone();
        md.remove("bazan.text_encoding");
        let old = Schema::new_with_metadata(schema.fields().clone(), md.clone());
        assert_eq!(
            read_config(&old, path).unwrap().text_encoding,
            TextEncoding::Utf8
        );
        md.insert("bazan.text_encoding".into(), "ebcdic".into());
        let bad = Schema::new_with_metadata(schema.fields().clone(), md);
        let e = read_config(&bad, path).unwrap_err().to_string();
        assert!(
            e.contains("bazan.text_encoding") && e.contains("ebcdic"),
            "{e}"
        );
    }
}
