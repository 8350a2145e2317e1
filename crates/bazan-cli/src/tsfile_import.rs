//! `bazan tsfile import INPUT OUTPUT --table T --time COL [--tags A,B…] [--encoding COL=ENC…]
//! [--compression C]`: a table-model TsFile from a Parquet, CSV or Arrow IPC file, read with
//! the lake locators (cli.md, "TsFile commands"). Rows may come in any order; a duplicate
//! timestamp within a device is an input error (exit 2) and leaves no file under OUTPUT.

use std::path::PathBuf;

use anyhow::bail;
use bazan::tsfile::WriteOptions;

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
    let mut encodings = Vec::new();
    for spec in &args.encoding {
        let Some((col, enc)) = spec.split_once('=') else {
            bail!("--encoding {spec:?}: expected COL=ENC");
        };
        encodings.push((col.to_string(), enc.to_string()));
    }
    let options = WriteOptions {
        table: args.table,
        time: args.time,
        tags: args.tags,
        encodings,
        compression: args.compression,
    };
    let written = bazan::tsfile::import(&args.input, &args.output, &options)?;
    println!(
        "wrote {}: {} rows, {} bytes",
        written.path.display(),
        written.rows,
        written.bytes
    );
    Ok(Outcome::Ok)
}
