//! I/O discipline: looking one device up reads only the index nodes on its path, shown by an
//! insta snapshot of the byte ranges read (as arrow-rs does for Parquet footers).

use std::fmt::Write;
use std::sync::Arc;

use bytes::Bytes;
use tsfile_format::device_id::DeviceId;
use tsfile_index::TsFileReader;
use tsfile_index::io::{ReadRecord, RecordingReader};

fn describe(reads: &[ReadRecord], labels: &[(u64, &str)]) -> String {
    let mut out = String::new();
    for r in reads {
        let label = labels
            .iter()
            .find(|(o, _)| *o == r.offset)
            .map_or("", |(_, l)| l);
        writeln!(out, "{:>7} +{:<6} {label}", r.offset, r.len).unwrap();
    }
    out
}

#[test]
fn one_device_lookup_reads_only_its_path() {
    let Some(dir) = crate::common::corpus("tsfile") else {
        return;
    };
    let bytes = Bytes::from(std::fs::read(dir.join("table_many_devices.tsfile")).unwrap());
    let len = bytes.len() as u64;
    let rec = Arc::new(RecordingReader::new(bytes));
    let reader = TsFileReader::from_reader(rec.clone()).unwrap();
    let open = rec.take_reads();
    let m = reader.metadata_start();
    let open_labels = [
        (0, "head magic + version"),
        (len - 10, "tail: metadata length + magic"),
        (m, "TsFileMetadata"),
        (reader.meta_offset(), "separator byte"),
    ];
    let id = DeviceId::from_strs(&["fleet", "r2", "s27", "n817"]);
    let device = reader.device(&id).unwrap().expect("device exists");
    let lookup = rec.take_reads();
    let series = reader.timeseries(&device).unwrap();
    let walk = rec.take_reads();
    let names: Vec<&str> = series.iter().map(|s| s.name()).collect();
    let snapshot = format!(
        "file: {len} bytes, index area [{}, {m})\n\nopen:\n{}\nlookup of {id} (device index nodes on its path):\n{}\nits measurement index and TimeseriesMetadata ({names:?}):\n{}",
        reader.index_start(),
        describe(&open, &open_labels),
        describe(&lookup, &[]),
        describe(&walk, &[]),
    );
    // Every lookup read is a device-level node inside the index area, strictly descending
    // from the root towards the leaves.
    assert!(
        lookup
            .iter()
            .all(|r| r.offset >= reader.index_start() && r.offset + r.len <= m)
    );
    assert!(lookup.windows(2).all(|w| w[1].offset < w[0].offset));
    insta::assert_snapshot!(snapshot);
    // An absent measurement is answered by the Bloom filter, without reading the index.
    assert_eq!(
        reader
            .timeseries_named(&device, "absent_measurement")
            .unwrap(),
        None
    );
    assert!(rec.take_reads().is_empty());
    // A present one reads only its path: the measurement root and one leaf range.
    let load = reader.timeseries_named(&device, "load").unwrap().unwrap();
    assert_eq!(load.name(), "load");
    assert_eq!(rec.take_reads().len(), 2);
}

#[test]
fn mapped_and_unmapped_reads_agree() {
    let Some(dir) = crate::common::corpus("tsfile") else {
        return;
    };
    let path = dir.join("tree_multi_chunk.tsfile");
    let mapped = tsfile_index::dump::dump_path(&path).unwrap();
    let unmapped = tsfile_index::dump::dump(&TsFileReader::open_unmapped(&path).unwrap()).unwrap();
    assert_eq!(mapped, unmapped);
}
