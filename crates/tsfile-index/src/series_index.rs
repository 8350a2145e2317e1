//! The measurement level of the index (reference §7.1–§7.4): a device's TimeseriesMetadata,
//! all of them in order or one looked up by name.

use std::cmp::Ordering;
use std::collections::HashSet;

use tsfile_format::cursor::Cursor;
use tsfile_format::metadata_index::IndexKey;
use tsfile_format::timeseries::TimeseriesMetadata;
use tsfile_format::types::{IndexLevel, MetadataIndexNodeType as NodeType};

use crate::error::{Error, Result};
use crate::index::{DeviceEntry, PlacedNode};
use crate::reader::TsFileReader;

/// One TimeseriesMetadata with the place its record occupies in the index area.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesEntry {
    /// The decoded record.
    pub meta: TimeseriesMetadata,
    /// Absolute offset of the record.
    pub offset: u64,
    /// Length of the record in bytes.
    pub length: u64,
}

impl SeriesEntry {
    /// The measurement name (`""` for the aligned time column).
    pub fn name(&self) -> &str {
        &self.meta.measurement_id
    }
}

impl TsFileReader {
    /// The measurement root node of a device.
    fn measurement_root(&self, device: &DeviceEntry) -> Result<PlacedNode> {
        let (s, e) = device.root_range;
        self.read_node(
            (s as i64, e as i64),
            IndexLevel::Measurement,
            Some(NodeType::LeafDevice),
            device.parent_at,
        )
    }

    /// Every TimeseriesMetadata of a device, in index order (the aligned time column `""`
    /// first, then measurements by name).
    pub fn timeseries(&self, device: &DeviceEntry) -> Result<Vec<SeriesEntry>> {
        let root = self.measurement_root(device)?;
        let mut out = Vec::new();
        let mut visited = HashSet::new();
        let mut stack = vec![root];
        // Depth-first, children in entry order; the stack holds nodes still to expand in
        // reverse so that output stays in index order.
        while let Some(placed) = stack.pop() {
            if !visited.insert(placed.at) {
                return Err(Error::corrupt(
                    "metadata index node",
                    placed.at,
                    "reached twice while walking a measurement index (shared subtree)",
                ));
            }
            match placed.node.node_type {
                NodeType::LeafMeasurement => {
                    for i in 0..placed.node.children.len() {
                        let range = placed.node.child_range(i).unwrap_or((0, 0));
                        self.read_series_range(range, placed.at, &mut out, None)?;
                    }
                }
                NodeType::InternalMeasurement => {
                    let mut children = Vec::with_capacity(placed.node.children.len());
                    for i in 0..placed.node.children.len() {
                        let range = placed.node.child_range(i).unwrap_or((0, 0));
                        children.push(self.read_node(
                            range,
                            IndexLevel::Measurement,
                            Some(NodeType::InternalMeasurement),
                            placed.at,
                        )?);
                    }
                    stack.extend(children.into_iter().rev());
                }
                other => {
                    return Err(Error::corrupt(
                        "metadata index node",
                        placed.at,
                        format!("a {other} node inside a measurement index"),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// The TimeseriesMetadata of one measurement of a device, reading only the nodes on its
    /// path; `None` when the device has no such measurement.
    pub fn timeseries_named(
        &self,
        device: &DeviceEntry,
        name: &str,
    ) -> Result<Option<SeriesEntry>> {
        // The time column's path (`device.`) is in the filters of the C++ writer, but the
        // Java writer's content is not verified, so only value series trust a Bloom miss.
        if !name.is_empty() && !self.bloom_may_contain(device, name) {
            return Ok(None);
        }
        let key = IndexKey::Measurement(name.to_string());
        let mut placed = self.measurement_root(device)?;
        loop {
            let n = &placed.node;
            let pos = n
                .children
                .partition_point(|e| e.key.compare(&key) != Some(Ordering::Greater));
            let Some(i) = pos.checked_sub(1) else {
                return Ok(None);
            };
            let range = n.child_range(i).unwrap_or((0, 0));
            match n.node_type {
                NodeType::LeafMeasurement => {
                    let mut out = Vec::new();
                    self.read_series_range(range, placed.at, &mut out, Some(name))?;
                    return Ok(out.pop());
                }
                NodeType::InternalMeasurement => {
                    placed = self.read_node(
                        range,
                        IndexLevel::Measurement,
                        Some(NodeType::InternalMeasurement),
                        placed.at,
                    )?;
                }
                other => {
                    return Err(Error::corrupt(
                        "metadata index node",
                        placed.at,
                        format!("a {other} node inside a measurement index"),
                    ));
                }
            }
        }
    }

    /// Decodes the consecutive TimeseriesMetadata records of one leaf entry's range. With
    /// `only`, stops at (and keeps only) the record of that name.
    fn read_series_range(
        &self,
        range: (i64, i64),
        parent_at: u64,
        out: &mut Vec<SeriesEntry>,
        only: Option<&str>,
    ) -> Result<()> {
        let (start, end) = self.child_range(range, parent_at, "timeseries metadata range")?;
        let bytes = self.source().get_bytes(start, (end - start) as usize)?;
        let mut c = Cursor::new(&bytes, start);
        while !c.is_empty() {
            let offset = c.offset();
            let meta = TimeseriesMetadata::decode(&mut c)?;
            let length = c.offset() - offset;
            match only {
                None => out.push(SeriesEntry {
                    meta,
                    offset,
                    length,
                }),
                Some(name) => match meta.measurement_id.as_str().cmp(name) {
                    Ordering::Equal => {
                        out.push(SeriesEntry {
                            meta,
                            offset,
                            length,
                        });
                        return Ok(());
                    }
                    Ordering::Greater => return Ok(()),
                    Ordering::Less => {}
                },
            }
        }
        Ok(())
    }
}
