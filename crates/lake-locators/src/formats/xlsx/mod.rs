//! The XLSX locator (calamine's streaming cell reader): the first worksheet in workbook
//! order, its first non-empty row = header, one row per following sheet row, logical blocks
//! of `stride` rows (no byte positions: the sheet XML sits Deflate-compressed in the ZIP).
//! Values in a column without a header cell are kept in a column `Unnamed: N` (pandas' name,
//! N the 0-based sheet column), in sheet order.
//!
//! Numbers are IEEE doubles in the file; a column whose numbers are all integral within i64
//! becomes Int64. Reading streams the sheet from the start (there is no skip-ahead inside a
//! compressed XML part), keeps only the cells of the wanted rows and stops after the last one.
//! Header names, and date cells in text columns, are spelled as openpyxl and pandas spell the
//! value (`2021-01-01 00:00:00`, see docs/formats.md).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};

use arrow_schema::{DataType, Field, FieldRef, Schema};
use calamine::{Data, DataRef, ExcelDateTime, Reader, Xlsx, XlsxError};

use crate::error::{Error, Result};
use crate::locator::{
    BatchIter, Block, FileIndex, IndexOptions, Locator, ReadRequest, StatsColumns,
};
use crate::text::infer::Columns;
use crate::text::rowread::{batch_size, check_stride, projection_indices};

const FORMAT: &str = "xlsx";

/// The locator of XLSX workbooks.
#[derive(Debug, Clone, Copy, Default)]
pub struct XlsxLocator;

/// 2^63 as f64: integral doubles below it (and at or above -2^63) fit i64.
const I64_LIMIT: f64 = 9_223_372_036_854_775_808.0;

fn integral(f: f64) -> Option<i64> {
    (f.fract() == 0.0 && (-I64_LIMIT..I64_LIMIT).contains(&f)).then_some(f as i64)
}

fn open(path: &Path) -> Result<Xlsx<BufReader<File>>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    Xlsx::new(BufReader::new(file)).map_err(|e| not_xlsx(path, e))
}

/// A workbook that calamine cannot open: the ZIP structure or the workbook parts are
/// expected from the file's start, so the error names byte 0.
fn not_xlsx(path: &Path, e: XlsxError) -> Error {
    Error::malformed(path, FORMAT, format!("not a readable XLSX workbook: {e}")).at_byte(0)
}

fn cell_error(path: &Path, e: XlsxError, row: u64) -> Error {
    Error::malformed(path, FORMAT, format!("worksheet XML: {e}")).at_row(row)
}

/// The header row's index and the columns `(sheet column, name)` in sheet order, from the
/// cells of the first non-empty row.
struct Sheet {
    header_row: u32,
    columns: Vec<(u32, String)>,
}

fn data_text(v: &DataRef<'_>) -> Option<String> {
    Some(match v {
        DataRef::Int(i) => i.to_string(),
        DataRef::Float(f) => match integral(*f) {
            Some(i) => i.to_string(),
            None => f.to_string(),
        },
        DataRef::String(s) => s.clone(),
        DataRef::SharedString(s) => (*s).to_string(),
        DataRef::Bool(b) => b.to_string(),
        DataRef::DateTime(d) => datetime_text(d),
        DataRef::DateTimeIso(s) => iso_text(s),
        DataRef::DurationIso(s) => s.clone(),
        DataRef::Error(_) | DataRef::Empty => return None,
    })
}

/// A date/time cell as text, spelled as openpyxl and pandas spell the value they read
/// (Python's `str` of a `datetime`, `time` or `timedelta`): `2021-01-01 00:00:00`, a serial
/// below 1 as a time of day `10:10:10`, a duration format as `1 day, 2:03:04`; milliseconds,
/// when there are some, as `.123000`. Used for header names and for dates in text columns.
fn datetime_text(d: &ExcelDateTime) -> String {
    const DAY_MS: i64 = 86_400_000;
    let v = d.as_f64();
    let millis = |ms: i64| {
        if ms == 0 {
            String::new()
        } else {
            format!(".{ms:03}000")
        }
    };
    let hms = |ms_of_day: i64| {
        let s = ms_of_day / 1000;
        (s / 3600, s / 60 % 60, s % 60, ms_of_day % 1000)
    };
    if !v.is_finite() {
        return v.to_string();
    }
    let total = (v * DAY_MS as f64).round() as i64;
    if d.is_duration() {
        let (days, rest) = (total.div_euclid(DAY_MS), total.rem_euclid(DAY_MS));
        let (h, m, s, ms) = hms(rest);
        let days = match days {
            0 => String::new(),
            1 | -1 => format!("{days} day, "),
            _ => format!("{days} days, "),
        };
        return format!("{days}{h}:{m:02}:{s:02}{}", millis(ms));
    }
    if (0..DAY_MS).contains(&total) && v < 1.0 {
        let (h, m, s, ms) = hms(total);
        return format!("{h:02}:{m:02}:{s:02}{}", millis(ms));
    }
    let (y, mo, day, h, mi, s, ms) = d.to_ymd_hms_milli();
    format!(
        "{y:04}-{mo:02}-{day:02} {h:02}:{mi:02}:{s:02}{}",
        millis(i64::from(ms))
    )
}

/// An ISO 8601 cell (`t="d"`) as openpyxl spells the value it reads: a date and time with a
/// space instead of the `T` (`2021-01-01 10:10:10`); a date or a time alone as written.
fn iso_text(s: &str) -> String {
    match s.split_once('T') {
        Some((date, time)) if date.len() == 10 && !time.is_empty() => format!("{date} {time}"),
        _ => s.to_string(),
    }
}

/// Where a data cell belongs: a header column (its position among them), or a sheet column
/// whose header cell is empty.
#[derive(Debug, Clone, Copy)]
enum Col {
    Header(usize),
    Unnamed(u32),
}

/// The name of a column whose header cell is empty but that holds values: pandas' name,
/// `Unnamed: N` with `N` the 0-based sheet column.
fn unnamed(c: u32) -> String {
    format!("Unnamed: {c}")
}

/// Walks the first worksheet: `f(sheet, local_row, column, value)` for every data cell;
/// stops when `f` returns false. Returns the sheet's header.
fn walk(
    path: &Path,
    mut f: impl FnMut(&Sheet, u64, Col, &DataRef<'_>) -> Result<bool>,
) -> Result<Sheet> {
    let mut wb = open(path)?;
    let Some(name) = wb.sheet_names().into_iter().next() else {
        return Ok(Sheet {
            header_row: 0,
            columns: Vec::new(),
        });
    };
    let mut cells = wb
        .worksheet_cells_reader(&name)
        .map_err(|e| not_xlsx(path, e))?;
    let mut sheet: Option<Sheet> = None;
    // Header cells (positions in `columns`) calamine read as numbers or strings: their
    // names are spelled from the sheet XML once the header row is complete.
    let mut respell: Vec<usize> = Vec::new();
    // Sheet column → position among the header's columns.
    let mut position: Vec<Option<usize>> = Vec::new();
    let mut row_seen = 0u64;
    while let Some(cell) = cells
        .next_cell()
        .map_err(|e| cell_error(path, e, row_seen))?
    {
        let (r, c) = cell.get_position();
        let value = cell.get_value();
        match &mut sheet {
            None => {
                if let Some(text) = data_text(value) {
                    if raw_spelled(value) {
                        respell.push(0);
                    }
                    sheet = Some(Sheet {
                        header_row: r,
                        columns: vec![(c, text)],
                    });
                }
            }
            Some(s) if r == s.header_row => {
                if let Some(text) = data_text(value) {
                    if raw_spelled(value) {
                        respell.push(s.columns.len());
                    }
                    s.columns.push((c, text));
                }
            }
            Some(s) => {
                if position.is_empty() {
                    respell_header(path, &name, s, &respell)?;
                    let max = s.columns.iter().map(|(c, _)| *c).max().unwrap_or(0);
                    position = vec![None; max as usize + 1];
                    for (i, (c, _)) in s.columns.iter().enumerate() {
                        position[*c as usize] = Some(i);
                    }
                }
                let local = u64::from(r.saturating_sub(s.header_row + 1));
                row_seen = local;
                let col = match position.get(c as usize) {
                    Some(Some(i)) => Col::Header(*i),
                    _ => Col::Unnamed(c),
                };
                if !f(s, local, col, value)? {
                    break;
                }
            }
        }
    }
    match sheet {
        Some(mut s) => {
            if position.is_empty() {
                respell_header(path, &name, &mut s, &respell)?;
            }
            Ok(s)
        }
        None => Ok(Sheet {
            header_row: 0,
            columns: Vec::new(),
        }),
    }
}

/// True for a header cell whose name comes from the sheet XML ([`header`]): numbers
/// (not dates) and strings, whose text calamine changes.
fn raw_spelled(v: &DataRef<'_>) -> bool {
    matches!(
        v,
        DataRef::Int(_) | DataRef::Float(_) | DataRef::String(_) | DataRef::SharedString(_)
    )
}

/// Names the header columns at positions `respell` by their text in the sheet XML.
fn respell_header(path: &Path, sheet_name: &str, s: &mut Sheet, respell: &[usize]) -> Result<()> {
    if respell.is_empty() {
        return Ok(());
    }
    let texts = header::header_texts(path, sheet_name, s.header_row)?;
    for &i in respell {
        if let Some((c, name)) = s.columns.get_mut(i)
            && let Some(t) = texts.get(c)
        {
            name.clone_from(t);
        }
    }
    Ok(())
}

fn names(sheet: &Sheet) -> Vec<String> {
    sheet.columns.iter().map(|(_, n)| n.clone()).collect()
}

/// Records one cell in its column's accumulator.
fn observe(cols: &mut Columns, i: usize, v: &DataRef<'_>) {
    let Some(col) = cols.cols.get_mut(i) else {
        return;
    };
    let track = col.tracks();
    // The text form only matters for the string bounds of a column that turns Utf8.
    let text = |t: &dyn Fn() -> String| if track { t() } else { String::new() };
    match v {
        DataRef::Int(x) => col.int(*x, text(&|| x.to_string()).as_bytes()),
        DataRef::Float(f) => match integral(*f) {
            Some(x) => col.int(x, text(&|| x.to_string()).as_bytes()),
            None => col.float(*f, text(&|| f.to_string()).as_bytes()),
        },
        DataRef::DateTime(d) => {
            col.float(d.as_f64(), text(&|| datetime_text(d)).as_bytes());
        }
        DataRef::Bool(b) => col.boolean(if *b { b"true" } else { b"false" }),
        DataRef::DateTimeIso(s) => col.text(iso_text(s).as_bytes()),
        DataRef::String(s) | DataRef::DurationIso(s) => col.text(s.as_bytes()),
        DataRef::SharedString(s) => col.text(s.as_bytes()),
        DataRef::Error(_) | DataRef::Empty => {}
    }
}

fn index_file(path: &Path, options: &IndexOptions) -> Result<FileIndex> {
    check_stride(path, options)?;
    let wanted = &options.stats;
    let mut cols: Option<Columns> = None;
    // Sheet columns without a header cell that hold values, each with its own accumulator.
    let mut extra: BTreeMap<u32, Columns> = BTreeMap::new();
    let mut rows = 0u64;
    let sheet = walk(path, |sheet, local, col, v| {
        let has_value = !matches!(v, DataRef::Empty | DataRef::Error(_));
        match col {
            Col::Header(i) => {
                let c = cols.get_or_insert_with(|| Columns::with_names(&names(sheet), wanted));
                observe(c, i, v);
            }
            Col::Unnamed(c) if has_value => {
                let e = extra
                    .entry(c)
                    .or_insert_with(|| Columns::with_names(&[unnamed(c)], wanted));
                observe(e, 0, v);
            }
            Col::Unnamed(_) => {}
        }
        if has_value {
            rows = rows.max(local + 1);
        }
        Ok(true)
    })?;
    let cols = cols.unwrap_or_else(|| Columns::with_names(&names(&sheet), wanted));
    let mut blocks = Vec::new();
    let mut first = 0;
    while first < rows {
        let n = options.stride.min(rows - first);
        blocks.push(Block::rows(blocks.len() as u64, first, n));
        first += n;
    }
    // Header columns and unnamed ones in sheet-column order, as pandas orders them.
    let mut fields: Vec<(u32, FieldRef)> = sheet
        .columns
        .iter()
        .map(|(c, _)| *c)
        .zip(cols.schema().fields().iter().cloned())
        .collect();
    let mut stats = cols.stats();
    for (c, e) in &extra {
        fields.extend(e.schema().fields().iter().map(|f| (*c, f.clone())));
        stats.extend(e.stats());
    }
    fields.sort_by_key(|(c, _)| *c);
    let schema = Arc::new(Schema::new(
        fields.into_iter().map(|(_, f)| f).collect::<Vec<_>>(),
    ));
    Ok(FileIndex {
        format: FORMAT.to_string(),
        row_count: rows,
        blocks,
        schema,
        stats: (!wanted.is_none()).then_some(stats),
    })
}

/// Where the cells of the sheet go in `schema` (a stored schema or the index's): the
/// position of each header column, and of each unnamed sheet column.
struct Layout {
    header: Vec<usize>,
    unnamed: HashMap<u32, usize>,
}

fn layout(path: &Path, schema: &Schema, sheet: &Sheet) -> Result<Layout> {
    let stale = |message: String| Error::StaleIndex {
        path: path.to_path_buf(),
        message,
    };
    let mut header = Vec::with_capacity(sheet.columns.len());
    let mut unnamed = HashMap::new();
    for (k, f) in schema.fields().iter().enumerate() {
        if sheet
            .columns
            .get(header.len())
            .is_some_and(|(_, name)| name == f.name())
        {
            header.push(k);
        } else if let Some(c) = f
            .name()
            .strip_prefix("Unnamed: ")
            .and_then(|c| c.parse::<u32>().ok())
        {
            unnamed.insert(c, k);
        } else {
            return Err(stale(format!(
                "the stored column {:?} is not in the sheet's header",
                f.name()
            )));
        }
    }
    if header.len() != sheet.columns.len() {
        return Err(stale(format!(
            "the stored schema has {} of the header's {} columns",
            header.len(),
            sheet.columns.len()
        )));
    }
    Ok(Layout { header, unnamed })
}

fn type_error(path: &Path, field: &Field, row: u64) -> Error {
    Error::StaleIndex {
        path: path.to_path_buf(),
        message: format!(
            "a cell of column {:?} at row {row} does not fit the stored type {}",
            field.name(),
            crate::types::type_name(field.data_type())
        ),
    }
}

/// One column of `n` rows from the kept cells (`None` = empty).
fn build_column(
    path: &Path,
    field: &Field,
    cells: &[Option<Data>],
    first_row: u64,
) -> Result<ArrayRef> {
    let row = |k: usize| first_row + k as u64;
    Ok(match field.data_type() {
        DataType::Int64 => {
            let mut b = Int64Builder::with_capacity(cells.len());
            for (k, c) in cells.iter().enumerate() {
                match c {
                    None | Some(Data::Empty | Data::Error(_)) => b.append_null(),
                    Some(Data::Int(i)) => b.append_value(*i),
                    Some(Data::Float(f)) => match integral(*f) {
                        Some(i) => b.append_value(i),
                        None => return Err(type_error(path, field, row(k))),
                    },
                    Some(_) => return Err(type_error(path, field, row(k))),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Float64 => {
            let mut b = Float64Builder::with_capacity(cells.len());
            for (k, c) in cells.iter().enumerate() {
                match c {
                    None | Some(Data::Empty | Data::Error(_)) => b.append_null(),
                    Some(Data::Int(i)) => b.append_value(*i as f64),
                    Some(Data::Float(f)) => b.append_value(*f),
                    Some(Data::DateTime(d)) => b.append_value(d.as_f64()),
                    Some(_) => return Err(type_error(path, field, row(k))),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Boolean => {
            let mut b = BooleanBuilder::with_capacity(cells.len());
            for (k, c) in cells.iter().enumerate() {
                match c {
                    None | Some(Data::Empty | Data::Error(_)) => b.append_null(),
                    Some(Data::Bool(v)) => b.append_value(*v),
                    Some(_) => return Err(type_error(path, field, row(k))),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Utf8 => {
            let mut b = StringBuilder::new();
            for c in cells {
                match c.as_ref().and_then(|d| data_text(&data_ref(d))) {
                    Some(t) => b.append_value(t),
                    None => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        _ => return Err(type_error(path, field, first_row)),
    })
}

fn data_ref(d: &Data) -> DataRef<'_> {
    match d {
        Data::Int(i) => DataRef::Int(*i),
        Data::Float(f) => DataRef::Float(*f),
        Data::String(s) => DataRef::SharedString(s),
        Data::Bool(b) => DataRef::Bool(*b),
        Data::DateTime(d) => DataRef::DateTime(*d),
        Data::DateTimeIso(s) => DataRef::DateTimeIso(s.clone()),
        Data::DurationIso(s) => DataRef::DurationIso(s.clone()),
        Data::Error(e) => DataRef::Error(e.clone()),
        Data::Empty => DataRef::Empty,
    }
}

impl Locator for XlsxLocator {
    fn name(&self) -> &str {
        FORMAT
    }

    fn infers_schema(&self) -> bool {
        true
    }

    fn extensions(&self) -> &[&str] {
        &[FORMAT]
    }

    fn formats(&self) -> &[&str] {
        &[FORMAT]
    }

    fn index(&self, path: &Path, options: &IndexOptions) -> Result<FileIndex> {
        index_file(path, options)
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> Result<BatchIter> {
        let (schema, total) = match &request.schema {
            Some(s) => (
                s.clone(),
                request
                    .blocks
                    .map(|b| b.iter().map(|b| b.row_count).sum::<u64>()),
            ),
            None => {
                let options = IndexOptions {
                    stats: StatsColumns::None,
                    ..IndexOptions::default()
                };
                let index = index_file(path, &options)?;
                (index.schema, Some(index.row_count))
            }
        };
        let projection = projection_indices(path, &schema, request.projection)?;
        let a = request.rows.start;
        let b = total.map_or(request.rows.end, |t| request.rows.end.min(t));
        let width = schema.fields().len();
        // Cells of the wanted rows only, row by row; `last` is the last row holding a value.
        let mut kept: Vec<Vec<Option<Data>>> = Vec::new();
        let mut last: Option<u64> = None;
        let mut past_end = false;
        if a < b {
            let mut places: Option<Layout> = None;
            let sheet = walk(path, |sheet, local, col, v| {
                if local >= b {
                    past_end = true;
                    return Ok(false);
                }
                if local < a {
                    return Ok(true);
                }
                let places = match &mut places {
                    Some(p) => p,
                    None => places.insert(layout(path, &schema, sheet)?),
                };
                let has_value = !matches!(v, DataRef::Empty | DataRef::Error(_));
                let i = match col {
                    Col::Header(i) => places.header.get(i).copied(),
                    Col::Unnamed(c) => places.unnamed.get(&c).copied(),
                };
                let Some(i) = i else {
                    if has_value {
                        return Err(Error::StaleIndex {
                            path: path.to_path_buf(),
                            message: format!(
                                "row {local} holds a value in a column the stored schema does not have ({col:?})"
                            ),
                        });
                    }
                    return Ok(true);
                };
                let k = (local - a) as usize;
                while kept.len() <= k {
                    kept.push(vec![None; width]);
                }
                if has_value {
                    last = Some(local);
                }
                kept[k][i] = Some(Data::from(v.clone()));
                Ok(true)
            })?;
            if places.is_none() {
                layout(path, &schema, &sheet)?;
            }
        }
        let n = if a >= b {
            0
        } else if past_end || total.is_some() {
            b - a
        } else {
            last.map_or(0, |l| l + 1 - a)
        };
        kept.resize(n as usize, vec![None; width]);
        let mut columns = Vec::with_capacity(width);
        for (ci, field) in schema.fields().iter().enumerate() {
            let cells: Vec<Option<Data>> = kept.iter_mut().map(|r| r[ci].take()).collect();
            columns.push(build_column(path, field, &cells, a)?);
        }
        let batch = RecordBatch::try_new_with_options(
            schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(n as usize)),
        )
        .map_err(|e| Error::library(path, FORMAT, e))?;
        let batch = match &projection {
            Some(p) => batch
                .project(p)
                .map_err(|e| Error::library(path, FORMAT, e))?,
            None => batch,
        };
        let size = batch_size(request.batch_size);
        let total_rows = batch.num_rows();
        let batches: Vec<Result<RecordBatch>> = (0..total_rows)
            .step_by(size)
            .map(|o| Ok(batch.slice(o, size.min(total_rows - o))))
            .collect();
        Ok(Box::new(batches.into_iter()))
    }
}

mod header;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_doubles() {
        assert_eq!(integral(5.0), Some(5));
        assert_eq!(integral(-0.0), Some(0));
        assert_eq!(integral(2.5), None);
        assert_eq!(integral(9.3e18), None);
        assert_eq!(integral(f64::NAN), None);
    }

    /// Dates are named as openpyxl and pandas name them (Python's `str` of the value read).
    #[test]
    fn dates_spelled_as_python_does() {
        use calamine::ExcelDateTimeType::{DateTime, TimeDelta};
        let t = |v: f64, kind, is_1904| datetime_text(&ExcelDateTime::new(v, kind, is_1904));
        assert_eq!(t(44197.0, DateTime, false), "2021-01-01 00:00:00");
        assert_eq!(t(42735.0, DateTime, true), "2021-01-01 00:00:00");
        assert_eq!(t(44197.5, DateTime, false), "2021-01-01 12:00:00");
        assert_eq!(
            t(44197.0 + 1.5 / 86_400.0, DateTime, false),
            "2021-01-01 00:00:01.500000"
        );
        assert_eq!(t(0.4237268518518518, DateTime, false), "10:10:10");
        assert_eq!(t(1.5, TimeDelta, false), "1 day, 12:00:00");
        assert_eq!(t(2.0 / 24.0, TimeDelta, false), "2:00:00");
        assert_eq!(t(3.25, TimeDelta, false), "3 days, 6:00:00");
        assert_eq!(t(-0.5, TimeDelta, false), "-1 day, 12:00:00");
        assert_eq!(iso_text("2021-01-01T10:10:10"), "2021-01-01 10:10:10");
        assert_eq!(iso_text("2021-01-01"), "2021-01-01");
        assert_eq!(iso_text("10:10:10"), "10:10:10");
    }
}
