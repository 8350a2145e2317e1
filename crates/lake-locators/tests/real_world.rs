//! Files as real writers produce them (issue 23): each is either read right or refused with
//! a one-line typed error naming the file, never a silent wrong count and never a panic.

use crate::common::{self, write};

use lake_locators::{FileIndex, Locator, csv::DelimitedLocator};
use serde_json::json;

fn index_and_read(
    locator: &dyn Locator,
    path: &std::path::Path,
) -> (FileIndex, Vec<serde_json::Value>) {
    let idx = common::index_every(locator, path, 2).unwrap_or_else(|e| panic!("{e}"));
    let rows = common::read_rows(
        locator,
        path,
        &common::request(Some(&idx), 0..idx.row_count, None, 0),
    );
    (idx, rows)
}

/// Old Mac line ends (lone carriage returns) end records as in Python's csv and DuckDB; a
/// carriage return inside quotes stays in the value.
#[test]
fn csv_with_carriage_return_line_ends() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "mac.csv", b"a,b\r1,x\r2,\"y\rz\"\r3,w\r");
    let (idx, rows) = index_and_read(&DelimitedLocator, &path);
    assert_eq!(idx.row_count, 3);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1], json!({"a": 2, "b": "y\rz"}));
    // Direct reads without the index agree.
    let direct = common::read_rows(
        &DelimitedLocator,
        &path,
        &common::request(None, 1..3, None, 1),
    );
    assert_eq!(direct, rows[1..3]);
    // A CRLF file is untouched, and a lone carriage return after the first record stays data.
    let crlf = write(&dir, "crlf.csv", b"a,b\r\n1,x\r\n2,y\r\n");
    assert_eq!(index_and_read(&DelimitedLocator, &crlf).0.row_count, 2);
}
