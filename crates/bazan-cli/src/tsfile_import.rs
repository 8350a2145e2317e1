//! `bazan tsfile import INPUT OUTPUT --table T --time COL [--tags A,B…] [--encoding COL=ENC…]
//! [--compression C]`: a table-model TsFile from a Parquet, CSV or Arrow IPC file, read with
//! the lake locators (cli.md, "TsFile commands"). Rows may come in any order; a duplicate
//! timestamp within a device is an input error (exit 2) and leaves no file under OUTPUT.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::DataType;
use lake_locators::{ReadRequest, registry};
use tsfile_format::schema::TableSchema;
use tsfile_format::types::{ColumnCategory, CompressionType, TSDataType, TSEncoding};
use tsfile_index::writer::{TsFileWriter, WriterOptions, encoding_is_writable, tsfile_type_of};

use crate::Outcome;

/// Arguments of `bazan tsfile import`.
#[derive(Debug, clap::Args)]
pub(crate) struct ImportArgs {
    /// The input file (Parquet, CSV/TSV/PSV or Arrow IPC).
    input: PathBuf,
    /// The TsFile to write (replaced atomically when it exists).
    output: PathBuf,
    /// The table name.
    #[arg(long)]
    table: String,
    /// The time column (integer or timestamp).
    #[arg(long)]
    time: String,
    /// TAG columns, in this order (comma-separated); they become STRING.
    #[arg(long, value_delimiter = ',')]
    tags: Vec<String>,
    /// Per-column encodings, `COL=ENC` (repeatable or comma-separated), e.g. `v=RLE`.
    #[arg(long, value_delimiter = ',')]
    encoding: Vec<String>,
    /// Compression of every column and of the time column (default LZ4).
    #[arg(long)]
    compression: Option<String>,
}

/// Runs `bazan tsfile import`.
pub(crate) fn run(args: ImportArgs) -> anyhow::Result<Outcome> {
    let ext = args
        .input
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let Some(locator) = registry::for_extension(&ext) else {
        bail!(
            "{}: unknown input format (extension {ext:?})",
            args.input.display()
        );
    };
    let request = ReadRequest {
        rows: 0..u64::MAX,
        blocks: None,
        schema: None,
        projection: None,
        batch_size: 0,
    };
    let mut batches = Vec::new();
    for b in locator
        .read(&args.input, &request)
        .map_err(|e| anyhow::anyhow!("{e}"))?
    {
        let b = b.map_err(|e| anyhow::anyhow!("{e}"))?;
        batches.push(prepare(b, &args.tags)?);
    }
    let Some(first) = batches.first() else {
        bail!("{}: no rows to import", args.input.display());
    };
    let schema = first.schema();
    let mut opts = WriterOptions::default();
    if let Some(c) = &args.compression {
        let c = CompressionType::from_name(&c.to_uppercase())
            .with_context(|| format!("unknown compression {c:?}"))?;
        if c == CompressionType::Lzo {
            bail!("LZO is never written: Java readers cannot decompress it");
        }
        opts.default_compression = c;
        opts.time_compression = c;
    }
    let time = schema
        .field_with_name(&args.time)
        .with_context(|| format!("{}: no time column {:?}", args.input.display(), args.time))?;
    if !matches!(
        time.data_type(),
        DataType::Int32 | DataType::Int64 | DataType::Timestamp(_, _)
    ) {
        bail!(
            "time column {:?} is {}, not an integer or timestamp column",
            args.time,
            time.data_type()
        );
    }
    let mut columns = Vec::new();
    for tag in &args.tags {
        if schema.field_with_name(tag).is_err() {
            bail!("{}: no TAG column {tag:?}", args.input.display());
        }
        columns.push(opts.column(tag, TSDataType::String, ColumnCategory::Tag));
    }
    for f in schema.fields() {
        if f.name() == &args.time || args.tags.contains(f.name()) {
            continue;
        }
        let Some(t) = tsfile_type_of(f.data_type()) else {
            bail!(
                "column {:?} has type {}, which TsFile cannot store",
                f.name(),
                f.data_type()
            );
        };
        columns.push(opts.column(f.name(), t, ColumnCategory::Field));
    }
    for spec in &args.encoding {
        let Some((col, enc)) = spec.split_once('=') else {
            bail!("--encoding {spec:?}: expected COL=ENC");
        };
        let enc = TSEncoding::from_name(&enc.to_uppercase())
            .with_context(|| format!("--encoding {spec:?}: unknown encoding"))?;
        let Some(c) = columns
            .iter_mut()
            .find(|c| c.schema.name == col && c.category == ColumnCategory::Field)
        else {
            bail!("--encoding {spec:?}: {col:?} is not a FIELD column");
        };
        if !encoding_is_writable(enc, c.schema.data_type) {
            bail!(
                "--encoding {spec:?}: {} cannot be written as {}",
                c.schema.data_type.name(),
                enc.name()
            );
        }
        c.schema.encoding = enc;
    }
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let mut w = TsFileWriter::create(&args.output, opts)?;
    w.register_table(&args.table, TableSchema { columns })?;
    w.write_table_unsorted(&args.table, &args.time, &batches)
        .with_context(|| args.input.display().to_string())?;
    let path = w.close()?;
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!("wrote {}: {rows} rows, {size} bytes", path.display());
    Ok(Outcome::Ok)
}

/// Turns integer TAG columns (CSV inference makes `1`, `2` integers) into strings.
fn prepare(batch: RecordBatch, tags: &[String]) -> anyhow::Result<RecordBatch> {
    let schema = batch.schema();
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (f, a) in schema.fields().iter().zip(batch.columns()) {
        let is_tag = tags.contains(f.name());
        let converted: Option<ArrayRef> = match (is_tag, a.data_type()) {
            (true, DataType::Int64) => {
                Some(Arc::new(strings(a.as_primitive::<Int64Type>().iter())))
            }
            (true, DataType::Int32) => {
                Some(Arc::new(strings(a.as_primitive::<Int32Type>().iter())))
            }
            (true, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) | (false, _) => None,
            (true, other) => bail!(
                "TAG column {:?} is {other}; it must be a string column",
                f.name()
            ),
        };
        match converted {
            Some(c) => {
                fields.push(arrow_schema::Field::new(f.name(), DataType::Utf8, true));
                arrays.push(c);
            }
            None => {
                fields.push(f.as_ref().clone());
                arrays.push(a.clone());
            }
        }
    }
    Ok(RecordBatch::try_new(
        Arc::new(arrow_schema::Schema::new(fields)),
        arrays,
    )?)
}

fn strings<T: ToString>(values: impl Iterator<Item = Option<T>>) -> StringArray {
    values.map(|v| v.map(|v| v.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_tags_become_strings() {
        let b = RecordBatch::try_from_iter([(
            "id",
            Arc::new(arrow_array::Int64Array::from(vec![Some(1), None])) as ArrayRef,
        )])
        .unwrap();
        let out = prepare(b, &["id".to_string()]).unwrap();
        let s = out.column(0).as_string::<i32>();
        assert_eq!(s.value(0), "1");
        assert!(s.is_null(1));
    }
}
