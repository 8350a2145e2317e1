//! Row output shared by the commands that print rows (`read`, `slice`, `tsfile query`):
//! an aligned human table, newline-delimited JSON in the contract's value representation
//! (`bazan::rows`), or CSV.

use std::io::{self, Write};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bazan::rows;

/// Standard output for commands that write much data (`tsfile query`): on Unix a duplicate
/// of file descriptor 1 written directly, because `Stdout` is line-buffered and scans every
/// write for its last newline, splitting binary output (Arrow IPC) into extra small writes
/// there; elsewhere `Stdout` itself. Wrap it in one large `BufWriter`.
pub(crate) enum RawStdout {
    /// A duplicate of file descriptor 1.
    #[cfg(unix)]
    Fd(std::fs::File),
    /// The standard library's handle (other platforms, or when `dup` fails).
    Std(io::Stdout),
}

/// Standard output for large writes; see [`RawStdout`].
pub(crate) fn raw_stdout() -> RawStdout {
    let out = io::stdout();
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        // Nothing may stay buffered in `Stdout` ahead of the direct writes.
        if out.lock().flush().is_ok()
            && let Ok(fd) = out.as_fd().try_clone_to_owned()
        {
            return RawStdout::Fd(std::fs::File::from(fd));
        }
    }
    RawStdout::Std(out)
}

impl Write for RawStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            #[cfg(unix)]
            RawStdout::Fd(f) => f.write(buf),
            RawStdout::Std(s) => s.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            #[cfg(unix)]
            RawStdout::Fd(f) => f.write_vectored(bufs),
            RawStdout::Std(s) => s.write_vectored(bufs),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            #[cfg(unix)]
            RawStdout::Fd(f) => f.write_all(buf),
            RawStdout::Std(s) => s.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            #[cfg(unix)]
            RawStdout::Fd(f) => f.flush(),
            RawStdout::Std(s) => s.flush(),
        }
    }
}

/// How rows are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum Format {
    /// An aligned table for people.
    #[default]
    Table,
    /// One JSON object per row (the stable value representation).
    Ndjson,
    /// CSV with a header line.
    Csv,
}

/// Table rows buffered before they are printed: the column widths come from the first chunk
/// of a section, so a long read streams in bounded memory.
const TABLE_CHUNK: usize = 1000;

/// Cells wider than this are cut in table output, so one long text does not hide the rest.
const MAX_TABLE_CELL: usize = 60;

/// Writes batches in one [`Format`]. Batches may change schema (rows of different files):
/// CSV then writes a new header line and the table starts a new section.
pub(crate) struct RowWriter<W: Write> {
    format: Format,
    out: W,
    schema: Option<SchemaRef>,
    /// Table rows buffered until the chunk is full or the section ends.
    table: Vec<Vec<String>>,
    /// True while the buffer's first row is the section's header.
    header_pending: bool,
    /// The section's column widths, fixed once its first chunk is printed.
    widths: Option<Vec<usize>>,
}

impl<W: Write> RowWriter<W> {
    /// A writer of `format` into `out`.
    pub(crate) fn new(format: Format, out: W) -> Self {
        RowWriter {
            format,
            out,
            schema: None,
            table: Vec::new(),
            header_pending: false,
            widths: None,
        }
    }

    /// Writes the rows of one batch.
    pub(crate) fn write_batch(&mut self, batch: &RecordBatch) -> io::Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let schema = batch.schema();
        let changed = self
            .schema
            .as_ref()
            .is_none_or(|s| s.fields() != schema.fields());
        if changed {
            if self.format == Format::Table {
                self.flush_table()?;
            }
            self.schema = Some(schema.clone());
            match self.format {
                Format::Csv => {
                    let names: Vec<String> = schema
                        .fields()
                        .iter()
                        .map(|f| csv_field(f.name()))
                        .collect();
                    writeln!(self.out, "{}", names.join(","))?;
                }
                Format::Table => {
                    self.table
                        .push(schema.fields().iter().map(|f| f.name().clone()).collect());
                    self.header_pending = true;
                    self.widths = None;
                }
                Format::Ndjson => {}
            }
        }
        match self.format {
            Format::Ndjson => {
                let mut buf = Vec::with_capacity(batch.num_rows() * 64);
                rows::write_ndjson(batch, &mut buf);
                self.out.write_all(&buf)?;
            }
            Format::Csv => {
                for r in 0..batch.num_rows() {
                    let cells: Vec<String> = batch
                        .columns()
                        .iter()
                        .map(|c| csv_field(&rows::cell_text(c.as_ref(), r)))
                        .collect();
                    writeln!(self.out, "{}", cells.join(","))?;
                }
            }
            Format::Table => {
                for r in 0..batch.num_rows() {
                    self.table.push(
                        batch
                            .columns()
                            .iter()
                            .map(|c| table_cell(c.as_ref(), r))
                            .collect(),
                    );
                    if self.table.len() >= TABLE_CHUNK {
                        self.flush_table()?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes what is buffered and flushes the output.
    pub(crate) fn finish(mut self) -> io::Result<W> {
        self.flush_table()?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn flush_table(&mut self) -> io::Result<()> {
        if self.table.is_empty() {
            return Ok(());
        }
        let columns = self.table[0].len();
        let widths = self.widths.get_or_insert_with(|| {
            let mut widths = vec![0usize; columns];
            for row in &self.table {
                for (w, cell) in widths.iter_mut().zip(row) {
                    *w = (*w).max(display_width(cell));
                }
            }
            widths
        });
        for (i, row) in self.table.iter().enumerate() {
            let mut line = String::new();
            for (j, (cell, w)) in row.iter().zip(widths.iter()).enumerate() {
                if j > 0 {
                    line.push_str("  ");
                }
                line.push_str(cell);
                if j + 1 < columns {
                    let pad = w.saturating_sub(display_width(cell));
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            writeln!(self.out, "{}", line.trim_end())?;
            if i == 0 && self.header_pending {
                let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
                writeln!(self.out, "{}", rule.join("  "))?;
            }
        }
        self.header_pending = false;
        self.table.clear();
        Ok(())
    }
}

/// A cell for the table: control characters escaped, nulls shown as `null`, long text cut.
fn table_cell(array: &dyn arrow_array::Array, row: usize) -> String {
    if array.is_null(row) {
        return "null".into();
    }
    let text = rows::cell_text(array, row);
    let mut out = String::with_capacity(text.len());
    for (n, ch) in text.chars().enumerate() {
        if n == MAX_TABLE_CELL {
            out.push('…');
            break;
        }
        match ch {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

/// A CSV field, quoted when it holds a delimiter, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The columns a cell takes on a terminal: wide characters (CJK, most emoji) count two, so
/// that tables with such text stay aligned.
pub(crate) fn display_width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    #[test]
    fn wide_characters_take_two_columns() {
        assert_eq!(display_width("abc"), 3);
        assert_eq!(display_width("日本語"), 6);
        assert_eq!(display_width("🚀x"), 3);
        assert_eq!(display_width("Łódź"), 4);
    }

    fn batch() -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("name", DataType::Utf8, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int64Array::from(vec![Some(1), None, Some(-300)])),
                Arc::new(StringArray::from(vec![Some("a,b"), Some("x\"y"), None])),
            ],
        )
        .unwrap()
    }

    fn render(format: Format) -> String {
        let mut w = RowWriter::new(format, Vec::new());
        w.write_batch(&batch()).unwrap();
        String::from_utf8(w.finish().unwrap()).unwrap()
    }

    #[test]
    fn csv_quotes_and_nulls() {
        assert_eq!(
            render(Format::Csv),
            "id,name\n1,\"a,b\"\n,\"x\"\"y\"\n-300,\n"
        );
    }

    #[test]
    fn ndjson_keeps_nulls() {
        assert_eq!(
            render(Format::Ndjson),
            "{\"id\":1,\"name\":\"a,b\"}\n{\"id\":null,\"name\":\"x\\\"y\"}\n{\"id\":-300,\"name\":null}\n"
        );
    }

    #[test]
    fn long_tables_stream_in_chunks_with_the_first_chunk_widths() {
        let mut w = RowWriter::new(Format::Table, Vec::new());
        let n = TABLE_CHUNK + 5;
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
        let values: Vec<i64> = (0..n as i64)
            .map(|i| if i < 1000 { 7 } else { i * 1000 })
            .collect();
        let b = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(values))]).unwrap();
        w.write_batch(&b).unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), n + 2, "one header, one rule, every row");
        assert_eq!(&lines[..3], &["v", "-", "7"]);
        assert_eq!(lines[n + 1], "1004000");
    }

    #[test]
    fn table_is_aligned() {
        assert_eq!(
            render(Format::Table),
            "id    name\n----  ----\n1     a,b\nnull  x\"y\n-300  null\n"
        );
    }
}
