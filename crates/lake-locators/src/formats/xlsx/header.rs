//! The header row's cell text read straight from the worksheet XML (zip + quick-xml, the
//! crates calamine itself reads with), for the two spellings calamine does not give: strings
//! as stored, leading and trailing whitespace kept (calamine 0.38 trims text without
//! `xml:space="preserve"`), and numbers as openpyxl reads them (`0.0` stays a float and is
//! named `0.0`, `0` an int named `0`: Python's `str` of the value). Only the header row is
//! read this way; the data cells stay calamine's.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use zip::ZipArchive;

use crate::error::{Error, Result};

const FORMAT: &str = "xlsx";

fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::malformed(path, FORMAT, format!("header row XML: {what}"))
}

/// The text of the header cells of sheet row `row` (0-based) of the worksheet `sheet`, by
/// 0-based sheet column: strings untrimmed (shared, inline and formula strings) and
/// numbers spelled as Python spells the int or float openpyxl reads. Cells of other types
/// (booleans, errors, ISO dates) are left out.
pub(super) fn header_texts(path: &Path, sheet: &str, row: u32) -> Result<HashMap<u32, String>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut zip = ZipArchive::new(BufReader::new(file)).map_err(|e| bad(path, e))?;
    let names: HashMap<String, String> = zip
        .file_names()
        .filter_map(|n| n.ok())
        .map(|n| (n.replace('\\', "/").to_ascii_lowercase(), n.to_string()))
        .collect();
    let part = |zip: &mut ZipArchive<BufReader<File>>, name: &str| -> Result<Option<Vec<u8>>> {
        let Some(real) = names.get(&name.to_ascii_lowercase()) else {
            return Ok(None);
        };
        let mut f = zip.by_name(real).map_err(|e| bad(path, e))?;
        let mut out = Vec::new();
        f.read_to_end(&mut out)
            .map_err(|e| bad(path, format!("{name}: {e}")))?;
        Ok(Some(out))
    };
    // The workbook part (the root relationships' officeDocument), its folder and its rels.
    let workbook = match part(&mut zip, "_rels/.rels")? {
        Some(xml) => relationships(path, &xml)?
            .into_iter()
            .find(|r| r.kind.ends_with("/officeDocument"))
            .map(|r| r.target.trim_start_matches('/').to_string()),
        None => None,
    }
    .unwrap_or_else(|| "xl/workbook.xml".to_string());
    let folder = workbook
        .rfind('/')
        .map_or("", |i| &workbook[..=i])
        .to_string();
    let file_name = &workbook[folder.len()..];
    let wb = part(&mut zip, &workbook)?.ok_or_else(|| bad(path, "no workbook part"))?;
    let rid = sheet_rel_id(path, &wb, sheet)?;
    let rels = match part(&mut zip, &format!("{folder}_rels/{file_name}.rels"))? {
        Some(xml) => relationships(path, &xml)?,
        None => Vec::new(),
    };
    let resolve = |t: &str| match t.strip_prefix('/') {
        Some(abs) => abs.to_string(),
        None => format!("{folder}{t}"),
    };
    let sheet_part = rels
        .iter()
        .find(|r| r.id == rid)
        .map(|r| resolve(&r.target))
        .ok_or_else(|| bad(path, format!("no relationship {rid:?} for sheet {sheet:?}")))?;
    let Some(real) = names.get(&sheet_part.to_ascii_lowercase()) else {
        return Err(bad(path, format!("no worksheet part {sheet_part:?}")));
    };
    let cells = {
        let f = zip.by_name(real).map_err(|e| bad(path, e))?;
        row_cells(path, BufReader::new(f), row)?
    };
    let wanted: Vec<usize> = cells
        .iter()
        .filter_map(|c| match c.kind {
            CellKind::Shared(i) => Some(i),
            _ => None,
        })
        .collect();
    let shared = match wanted.iter().max() {
        None => Vec::new(),
        Some(&max) => {
            let target = rels
                .iter()
                .find(|r| r.kind.ends_with("/sharedStrings"))
                .map_or_else(
                    || format!("{folder}sharedStrings.xml"),
                    |r| resolve(&r.target),
                );
            // Streamed: the part can be large, and only the strings up to `max` are read.
            let real = names
                .get(&target.to_ascii_lowercase())
                .ok_or_else(|| bad(path, "a shared string cell without sharedStrings"))?;
            let f = zip.by_name(real).map_err(|e| bad(path, e))?;
            shared_strings(path, BufReader::new(f), max)?
        }
    };
    let mut out = HashMap::new();
    for c in cells {
        let text = match c.kind {
            CellKind::Shared(i) => match shared.get(i) {
                Some(s) => s.clone(),
                None => return Err(bad(path, format!("shared string {i} is missing"))),
            },
            CellKind::Text => c.text,
            CellKind::Number => match python_number(&c.text) {
                Some(t) => t,
                None => continue,
            },
            CellKind::Other => continue,
        };
        out.insert(c.col, text);
    }
    Ok(out)
}

/// One `<Relationship>`.
struct Rel {
    id: String,
    kind: String,
    target: String,
}

fn reader<R: BufRead>(xml: R) -> Reader<R> {
    let mut r = Reader::from_reader(xml);
    let config = r.config_mut();
    config.trim_text(false);
    config.check_end_names = false;
    config.expand_empty_elements = true;
    r
}

/// The value of attribute `name` (local name, any prefix), unescaped.
fn attr(path: &Path, e: &BytesStart<'_>, name: &str) -> Result<Option<String>> {
    for a in e.attributes() {
        let a = a.map_err(|e| bad(path, e))?;
        if a.key.local_name().as_ref() == name {
            return Ok(Some(
                a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .map_err(|e| bad(path, e))?
                    .into_owned(),
            ));
        }
    }
    Ok(None)
}

fn relationships(path: &Path, xml: &[u8]) -> Result<Vec<Rel>> {
    let mut r = reader(xml);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    loop {
        match r.read_event_into(&mut buf).map_err(|e| bad(path, e))? {
            Event::Start(e) if e.local_name().as_ref() == "Relationship" => out.push(Rel {
                id: attr(path, &e, "Id")?.unwrap_or_default(),
                kind: attr(path, &e, "Type")?.unwrap_or_default(),
                target: attr(path, &e, "Target")?.unwrap_or_default(),
            }),
            Event::Eof => return Ok(out),
            _ => {}
        }
        buf.clear();
    }
}

/// The relationship id (`r:id`) of the first `<sheet>` named `sheet` in the workbook.
fn sheet_rel_id(path: &Path, xml: &[u8], sheet: &str) -> Result<String> {
    let mut r = reader(xml);
    let mut buf = Vec::new();
    loop {
        match r.read_event_into(&mut buf).map_err(|e| bad(path, e))? {
            Event::Start(e)
                if e.local_name().as_ref() == "sheet"
                    && attr(path, &e, "name")?.as_deref() == Some(sheet) =>
            {
                return attr(path, &e, "id")?
                    .ok_or_else(|| bad(path, format!("sheet {sheet:?} has no r:id")));
            }
            Event::Eof => return Err(bad(path, format!("no sheet {sheet:?} in the workbook"))),
            _ => {}
        }
        buf.clear();
    }
}

#[derive(Debug, PartialEq)]
enum CellKind {
    Shared(usize),
    Text,
    Number,
    Other,
}

/// A cell of the header row: its sheet column, type and raw text (`<v>` or inline `<t>`).
#[derive(Debug)]
struct RawCell {
    col: u32,
    kind: CellKind,
    text: String,
}

/// The 0-based column of a cell reference (`B3` → 1).
fn ref_column(r: &str) -> Option<u32> {
    let letters = r.bytes().take_while(u8::is_ascii_alphabetic);
    let mut col: u32 = 0;
    let mut any = false;
    for b in letters {
        col = col
            .checked_mul(26)?
            .checked_add(u32::from(b.to_ascii_uppercase() - b'A') + 1)?;
        any = true;
    }
    any.then(|| col - 1)
}

/// Appends the text of a text or entity event to `out`.
fn push_text(path: &Path, ev: &Event<'_>, out: &mut String) -> Result<()> {
    match ev {
        Event::Text(t) => out.push_str(&t.xml10_content()),
        Event::CData(t) => out.push_str(&t.xml10_content()),
        Event::GeneralRef(r) => match r.resolve_char_ref().map_err(|e| bad(path, e))? {
            Some(c) => out.push(c),
            None => {
                let name = r.xml10_content();
                out.push_str(match name.as_ref() {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    "quot" => "\"",
                    "apos" => "'",
                    other => return Err(bad(path, format!("unknown entity &{other};"))),
                });
            }
        },
        _ => {}
    }
    Ok(())
}

/// The cells of sheet row `target` (0-based), streaming the sheet up to that row.
fn row_cells(path: &Path, input: impl BufRead, target: u32) -> Result<Vec<RawCell>> {
    let mut r = reader(input);
    let mut buf = Vec::new();
    let mut row: Option<u32> = None;
    let mut next_col = 0u32;
    let mut cells = Vec::new();
    // The cell being read, and whether we are inside its `<v>` or an inline `<t>` (not in a
    // phonetic `<rPh>` run).
    let mut cell: Option<RawCell> = None;
    let (mut in_text, mut in_phonetic) = (false, false);
    loop {
        let ev = r.read_event_into(&mut buf).map_err(|e| bad(path, e))?;
        match &ev {
            Event::Start(e) => match e.local_name().as_ref() {
                "row" => {
                    let r = match attr(path, e, "r")? {
                        Some(v) => v
                            .trim()
                            .parse::<u32>()
                            .ok()
                            .and_then(|v| v.checked_sub(1))
                            .ok_or_else(|| bad(path, format!("row number {v:?}")))?,
                        None => row.map_or(0, |p| p.saturating_add(1)),
                    };
                    if r > target {
                        return Ok(cells);
                    }
                    row = Some(r);
                    next_col = 0;
                }
                "c" if row == Some(target) => {
                    let col = match attr(path, e, "r")? {
                        Some(v) => ref_column(&v)
                            .ok_or_else(|| bad(path, format!("cell reference {v:?}")))?,
                        None => next_col,
                    };
                    next_col = col.saturating_add(1);
                    let kind = match attr(path, e, "t")?.as_deref() {
                        None | Some("n") => CellKind::Number,
                        Some("s") => CellKind::Shared(0),
                        Some("inlineStr" | "str") => CellKind::Text,
                        Some(_) => CellKind::Other,
                    };
                    cell = Some(RawCell {
                        col,
                        kind,
                        text: String::new(),
                    });
                }
                "v" | "t" if cell.is_some() && !in_phonetic => in_text = true,
                "rPh" => in_phonetic = true,
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                "v" | "t" => in_text = false,
                "rPh" => in_phonetic = false,
                "c" => {
                    if let Some(mut c) = cell.take() {
                        if c.kind == CellKind::Shared(0) {
                            let i = c.text.trim().parse::<usize>().map_err(|_| {
                                bad(path, format!("shared string index {:?}", c.text))
                            })?;
                            c.kind = CellKind::Shared(i);
                        }
                        cells.push(c);
                    }
                }
                "row" if row == Some(target) => return Ok(cells),
                "sheetData" => return Ok(cells),
                _ => {}
            },
            Event::Eof => return Ok(cells),
            other if in_text => {
                if let Some(c) = &mut cell {
                    push_text(path, other, &mut c.text)?;
                }
            }
            _ => {}
        }
        buf.clear();
    }
}

/// The shared strings `0..=max`, each the text of its `<t>` runs (phonetic runs left out).
fn shared_strings(path: &Path, xml: impl BufRead, max: usize) -> Result<Vec<String>> {
    let mut r = reader(xml);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    let (mut in_text, mut in_phonetic) = (false, false);
    loop {
        let ev = r.read_event_into(&mut buf).map_err(|e| bad(path, e))?;
        match &ev {
            Event::Start(e) => match e.local_name().as_ref() {
                "si" => current = Some(String::new()),
                "t" if !in_phonetic => in_text = current.is_some(),
                "rPh" => in_phonetic = true,
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                "t" => in_text = false,
                "rPh" => in_phonetic = false,
                "si" => {
                    out.push(current.take().unwrap_or_default());
                    if out.len() > max {
                        return Ok(out);
                    }
                }
                _ => {}
            },
            Event::Eof => return Ok(out),
            other if in_text => {
                if let Some(s) = &mut current {
                    push_text(path, other, s)?;
                }
            }
            _ => {}
        }
        buf.clear();
    }
}

/// A numeric cell's stored text as Python's `str` of the value openpyxl reads: an int when
/// the text has no `.`, `e` or `E` (openpyxl's rule), else a float in Python's shortest
/// repr (`0.0`, `1500.0`, `1e+16`, `1e-05`). `None` when the text is not a number.
fn python_number(raw: &str) -> Option<String> {
    let t = raw.trim();
    if !t.contains(['.', 'e', 'E']) {
        return t.parse::<i128>().ok().map(|i| i.to_string());
    }
    t.parse::<f64>().ok().map(python_float)
}

/// Python's `repr` of a float: the shortest round-trip digits, positional when the decimal
/// exponent is in -4..16, else scientific with a signed two-digit (or longer) exponent.
fn python_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let s = format!("{f:e}");
    let Some((mantissa, exp)) = s.split_once('e') else {
        return s;
    };
    let Ok(exp) = exp.parse::<i32>() else {
        return s;
    };
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            let (int, frac) = if digits.len() > int_len {
                (digits[..int_len].to_string(), digits[int_len..].to_string())
            } else {
                (format!("{digits:0<int_len$}"), "0".to_string())
            };
            format!("{sign}{int}.{frac}")
        } else {
            let zeros = "0".repeat((-exp - 1) as usize);
            format!("{sign}0.{zeros}{digits}")
        }
    } else {
        let rest = if digits.len() > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{}{rest}e{esign}{:02}", &digits[..1], exp.abs())
    }
}

/// Reads a worksheet given as text (tests).
#[cfg(test)]
fn row_cells_of(xml: &str, target: u32) -> Result<Vec<RawCell>> {
    row_cells(Path::new("t.xlsx"), xml.as_bytes(), target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_python_spells_them() {
        let p = |s: &str| python_number(s).unwrap();
        assert_eq!(p("0"), "0");
        assert_eq!(p("0.0"), "0.0");
        assert_eq!(p("1.5E3"), "1500.0");
        assert_eq!(p("-2.25"), "-2.25");
        assert_eq!(p("1e16"), "1e+16");
        assert_eq!(p("1.5e16"), "1.5e+16");
        assert_eq!(p("123456789012345.6"), "123456789012345.6");
        assert_eq!(p("0.0001"), "0.0001");
        assert_eq!(p("0.00001"), "1e-05");
        assert_eq!(p("-0.0"), "-0.0");
        assert_eq!(p("1e-300"), "1e-300");
        assert_eq!(p("12"), "12");
        assert_eq!(python_number("x"), None);
        assert_eq!(python_number("1.2.3"), None);
    }

    #[test]
    fn cell_references() {
        assert_eq!(ref_column("A1"), Some(0));
        assert_eq!(ref_column("B3"), Some(1));
        assert_eq!(ref_column("Z9"), Some(25));
        assert_eq!(ref_column("AA1"), Some(26));
        assert_eq!(ref_column("1"), None);
        assert_eq!(ref_column("ZZZZZZZZZZZZ1"), None);
    }

    #[test]
    fn header_row_text_untrimmed() {
        let xml = r#"<worksheet><sheetData>
            <row r="2"><c r="A2" t="s"><v>0</v></c></row>
            <row r="3"><c r="A3" t="inlineStr"><is><t>  a &amp; b&#33; </t></is></c>
              <c r="C3"><v>0.0</v></c><c t="str"><v> f </v></c><c r="E3" t="b"><v>1</v></c>
              <c r="F3" t="s"><v>7</v></c></row>
            <row r="4"><c r="A4" t="inlineStr"><is><t>no</t></is></c></row>
            </sheetData></worksheet>"#;
        let cells = row_cells_of(xml, 2).unwrap();
        let got: Vec<(u32, &CellKind, &str)> = cells
            .iter()
            .map(|c| (c.col, &c.kind, c.text.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, &CellKind::Text, "  a & b! "),
                (2, &CellKind::Number, "0.0"),
                (3, &CellKind::Text, " f "),
                (4, &CellKind::Other, "1"),
                (5, &CellKind::Shared(7), "7"),
            ]
        );
        // A row past the last one gives no cells.
        assert!(row_cells_of(xml, 9).unwrap().is_empty());
    }

    #[test]
    fn shared_strings_keep_whitespace_and_skip_phonetics() {
        let xml = br#"<sst><si><t>  x  </t></si><si><r><t>a</t></r><r><t xml:space="preserve"> b</t></r><rPh><t>ignored</t></rPh></si><si><t>never read</t></si></sst>"#;
        let got = shared_strings(Path::new("t.xlsx"), &xml[..], 1).unwrap();
        assert_eq!(got, vec!["  x  ".to_string(), "a b".to_string()]);
    }

    #[test]
    fn bad_xml_is_an_error_naming_the_file() {
        let xml = r#"<worksheet><sheetData><row r="x"><c r="A1"><v>1</v></c></row></sheetData></worksheet>"#;
        let e = row_cells_of(xml, 0).unwrap_err().to_string();
        assert!(e.contains("t.xlsx") && e.contains("row number"), "{e}");
        let xml = r#"<worksheet><sheetData><row><c r="A1" t="s"><v>q</v></c></row></sheetData></worksheet>"#;
        let e = row_cells_of(xml, 0).unwrap_err().to_string();
        assert!(e.contains("shared string index"), "{e}");
        let e = shared_strings(
            Path::new("t.xlsx"),
            &b"<sst><si><t>&bogus;</t></si></sst>"[..],
            0,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("t.xlsx") && e.contains("entity"), "{e}");
        // Not a zip at all.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.xlsx");
        std::fs::write(&file, b"not a zip").unwrap();
        let e = header_texts(&file, "S", 0).unwrap_err().to_string();
        assert!(e.contains("header row XML"), "{e}");
    }
}
