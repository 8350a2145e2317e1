//! Walking the metadata index tree (reference §7.4): devices in index order, lookup of one
//! device, and the TimeseriesMetadata of a device.
//!
//! Every node is read as exactly the byte range its parent's entry declares, decoded, and
//! validated (the five rules of `MetadataIndexNode::decode_checked`) before it is followed.
//! On top of that, a child range must lie inside the index area and end at or before its
//! parent's own offset: both writers serialize children before their parents, so offsets
//! strictly decrease along every path and a walk always terminates. Full walks also refuse to
//! visit a node twice, so a crafted index that shares subtrees cannot make them quadratic.

use std::cmp::Ordering;
use std::collections::HashSet;

use tsfile_format::device_id::{DeviceId, DeviceKey};
use tsfile_format::metadata_index::{IndexKey, MetadataIndexNode};
use tsfile_format::types::{FormatVersion, IndexLevel, MetadataIndexNodeType as NodeType};

use crate::error::{Error, Result};
use crate::reader::TsFileReader;

/// A device found in the index: its key, table, and where its measurement index lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceEntry {
    /// The device as written in the index (a DeviceID, or a V3 path).
    pub key: DeviceKey,
    /// The name of the index "table" the device was found under.
    pub table: String,
    /// Byte range `[start, end)` of the device's measurement root node.
    pub root_range: (u64, u64),
    /// Offset of the node that points at the measurement root (bounds its children).
    pub(crate) parent_at: u64,
}

impl DeviceEntry {
    /// The device as a DeviceID (a V3 path is split with §4.2).
    pub fn id(&self) -> DeviceId {
        self.key.device_id()
    }

    /// The device path: segments joined with `.`, a null segment as `null` (§4.4); a V3
    /// device's path as written.
    pub fn path(&self) -> String {
        self.key.to_string()
    }

    /// The segments, table name first (a V3 path as one segment per §4.2 split).
    pub fn segments(&self) -> Vec<Option<String>> {
        match &self.key {
            DeviceKey::Id(id) => id.segments().to_vec(),
            DeviceKey::Path(_) => self.id().segments().to_vec(),
        }
    }

    /// The table name: segment 0 of the DeviceID.
    pub fn table_name(&self) -> String {
        match &self.key {
            DeviceKey::Id(id) => id.table_name().unwrap_or_default().to_string(),
            DeviceKey::Path(_) => self.table.clone(),
        }
    }
}

/// One node read from the file, with the offset it was read at.
#[derive(Debug, Clone)]
pub(crate) struct PlacedNode {
    pub node: MetadataIndexNode,
    pub at: u64,
}

impl TsFileReader {
    /// Reads and validates the index node at `range`, a child of a node of type `parent`
    /// placed at `parent_at` (the metadata start for the table roots).
    pub(crate) fn read_node(
        &self,
        range: (i64, i64),
        level: IndexLevel,
        parent: Option<NodeType>,
        parent_at: u64,
    ) -> Result<PlacedNode> {
        let (start, end) = self.child_range(range, parent_at, "metadata index node")?;
        let bytes = self.source().get_bytes(start, (end - start) as usize)?;
        let node =
            MetadataIndexNode::decode_checked(&bytes, start, self.format_version(), level, parent)?;
        Ok(PlacedNode { node, at: start })
    }

    /// Checks that a child range read from a node lies in the index area, is not empty, and
    /// ends at or before its parent's offset.
    pub(crate) fn child_range(
        &self,
        (start, end): (i64, i64),
        parent_at: u64,
        what: &'static str,
    ) -> Result<(u64, u64)> {
        let lo = self.index_start();
        let ok = start >= 0 && end > start && (start as u64) >= lo && (end as u64) <= parent_at;
        if !ok {
            return Err(Error::corrupt(
                what,
                start.max(0) as u64,
                format!(
                    "child range [{start}, {end}) must be non-empty and lie inside the index area [{lo}, {parent_at}) before its parent"
                ),
            ));
        }
        Ok((start as u64, end as u64))
    }

    /// Every device of every table, in index order (tables by name, devices by §4.3),
    /// read lazily: only the nodes needed so far are read.
    pub fn devices(&self) -> Result<Devices<'_>> {
        Ok(Devices {
            reader: self,
            next_table: 0,
            only_table: None,
            table: String::new(),
            stack: Vec::new(),
            visited: HashSet::new(),
            done: false,
        })
    }

    /// The devices of one table, in index order.
    pub fn table_devices(&self, table: &str) -> Result<Devices<'_>> {
        let index = self
            .table_roots()
            .iter()
            .position(|(name, _)| name == table)
            .ok_or_else(|| Error::NotFound {
                what: "table",
                name: table.to_string(),
            })?;
        Ok(Devices {
            reader: self,
            next_table: index,
            only_table: Some(index),
            table: String::new(),
            stack: Vec::new(),
            visited: HashSet::new(),
            done: false,
        })
    }

    /// Looks one device up, reading only the index nodes on its path (binary search in each
    /// node). `None` when the file has no such device.
    pub fn device(&self, id: &DeviceId) -> Result<Option<DeviceEntry>> {
        let table = id.table_name().unwrap_or_default();
        let key = match self.format_version() {
            FormatVersion::V4 => IndexKey::Device(DeviceKey::Id(id.clone())),
            FormatVersion::V3 => IndexKey::Device(DeviceKey::Path(id.to_string())),
        };
        self.find_device(table, &key)
    }

    /// Looks a device up by its path string: as a tree path (§4.2) first, then, if that
    /// finds nothing, by comparing the rendered path of every device (table-model paths with
    /// dots inside tag values cannot be split back unambiguously).
    pub fn device_by_path(&self, path: &str) -> Result<Option<DeviceEntry>> {
        if self.format_version() == FormatVersion::V3 {
            let key = IndexKey::Device(DeviceKey::Path(path.to_string()));
            return self.find_device("", &key);
        }
        if let Some(found) = self.device(&DeviceId::from_tree_path(path))? {
            return Ok(Some(found));
        }
        for device in self.devices()? {
            let device = device?;
            if device.path() == path {
                return Ok(Some(device));
            }
        }
        Ok(None)
    }

    fn find_device(&self, table: &str, key: &IndexKey) -> Result<Option<DeviceEntry>> {
        let roots = self.table_roots();
        let root = match self.format_version() {
            FormatVersion::V3 => roots.first(),
            FormatVersion::V4 => roots.iter().find(|(name, _)| name == table),
        };
        let Some((table_name, root)) = root else {
            return Ok(None);
        };
        let mut node = PlacedNode {
            node: root.clone(),
            at: self.metadata_start(),
        };
        loop {
            let n = &node.node;
            let pos = n
                .children
                .partition_point(|e| e.key.compare(key) != Some(Ordering::Greater));
            let Some(i) = pos.checked_sub(1) else {
                return Ok(None);
            };
            let range = n.child_range(i).unwrap_or((0, 0));
            match n.node_type {
                NodeType::LeafDevice => {
                    if n.children[i].key != *key {
                        return Ok(None);
                    }
                    let IndexKey::Device(found) = &n.children[i].key else {
                        return Ok(None);
                    };
                    let root_range = self.child_range(range, node.at, "device measurement root")?;
                    return Ok(Some(DeviceEntry {
                        key: found.clone(),
                        table: table_name.clone(),
                        root_range,
                        parent_at: node.at,
                    }));
                }
                NodeType::InternalDevice => {
                    node = self.read_node(
                        range,
                        IndexLevel::Device,
                        Some(NodeType::InternalDevice),
                        node.at,
                    )?;
                }
                other => {
                    return Err(Error::corrupt(
                        "metadata index node",
                        node.at,
                        format!("a {other} node where a device-level node was expected"),
                    ));
                }
            }
        }
    }
}

/// A frame of the device walk: a node and the next child to visit.
#[derive(Debug)]
struct Frame {
    placed: PlacedNode,
    next: usize,
}

impl TsFileReader {
    /// False only when the Bloom filter proves that `device.measurement` is absent (see
    /// [`TsFileReader::bloom_may_contain_path`]).
    pub(crate) fn bloom_may_contain(&self, device: &DeviceEntry, measurement: &str) -> bool {
        self.bloom_may_contain_path(&format!("{}.{measurement}", device.path()))
    }
}

/// Lazy iterator over devices in index order; see [`TsFileReader::devices`].
#[derive(Debug)]
pub struct Devices<'a> {
    reader: &'a TsFileReader,
    next_table: usize,
    only_table: Option<usize>,
    table: String,
    stack: Vec<Frame>,
    visited: HashSet<u64>,
    done: bool,
}

impl Devices<'_> {
    fn step(&mut self) -> Result<Option<DeviceEntry>> {
        loop {
            let Some(top) = self.stack.last_mut() else {
                let roots = self.reader.table_roots();
                let exhausted = self.next_table >= roots.len()
                    || self.only_table.is_some_and(|only| self.next_table != only);
                if exhausted {
                    return Ok(None);
                }
                let (name, root) = &roots[self.next_table];
                self.next_table += 1;
                self.table = name.clone();
                self.stack.push(Frame {
                    placed: PlacedNode {
                        node: root.clone(),
                        at: self.reader.metadata_start(),
                    },
                    next: 0,
                });
                continue;
            };
            let i = top.next;
            if i >= top.placed.node.children.len() {
                self.stack.pop();
                if self.only_table.is_some() && self.stack.is_empty() {
                    self.next_table = usize::MAX;
                }
                continue;
            }
            top.next += 1;
            let range = top.placed.node.child_range(i).unwrap_or((0, 0));
            let at = top.placed.at;
            match top.placed.node.node_type {
                NodeType::LeafDevice => {
                    let IndexKey::Device(key) = &top.placed.node.children[i].key else {
                        return Err(Error::corrupt(
                            "metadata index node",
                            at,
                            "a measurement entry in a device node",
                        ));
                    };
                    let key = key.clone();
                    let root_range =
                        self.reader
                            .child_range(range, at, "device measurement root")?;
                    return Ok(Some(DeviceEntry {
                        key,
                        table: self.table.clone(),
                        root_range,
                        parent_at: at,
                    }));
                }
                NodeType::InternalDevice => {
                    let child = self.reader.read_node(
                        range,
                        IndexLevel::Device,
                        Some(NodeType::InternalDevice),
                        at,
                    )?;
                    if !self.visited.insert(child.at) {
                        return Err(Error::corrupt(
                            "metadata index node",
                            child.at,
                            "reached twice while walking the device index (shared subtree)",
                        ));
                    }
                    self.stack.push(Frame {
                        placed: child,
                        next: 0,
                    });
                }
                other => {
                    return Err(Error::corrupt(
                        "metadata index node",
                        at,
                        format!("a {other} node where a device-level node was expected"),
                    ));
                }
            }
        }
    }
}

impl Iterator for Devices<'_> {
    type Item = Result<DeviceEntry>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        // The iterator fuses after its end and after its first error.
        let item = self.step().transpose();
        self.done = !matches!(item, Some(Ok(_)));
        item
    }
}
