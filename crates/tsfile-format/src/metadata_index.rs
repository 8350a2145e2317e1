//! MetadataIndexEntry and MetadataIndexNode (reference §7.3–§7.4), and the five checks a
//! reader makes before following a node (reference §7.4, "Index lookup checks").
//!
//! ```text
//! MetadataIndexNode  := UVarInt child_count, child_count × MetadataIndexEntry,
//!                       i64 end_offset, u8 node_type
//! device entry       := DeviceID device, i64 offset         (V3: VarStr device_path, i64)
//! measurement entry  := VarStr name, i64 offset
//! ```
//!
//! The entry shape is not self-described: it follows from the level the caller expects
//! (the table roots in TsFileMetadata and the children of device nodes are device-level until
//! a `LEAF_DEVICE` node, whose children are measurement-level). Entry `i` covers the bytes
//! `[entry[i].offset, entry[i+1].offset)`, the last one `[entry[last].offset, end_offset)`.

use std::cmp::Ordering;
use std::fmt;

use crate::cursor::{Cursor, Writer};
use crate::device_id::{DeviceId, DeviceKey};
use crate::error::{Error, Result};
use crate::types::{FormatVersion, IndexLevel, MetadataIndexNodeType};

/// The key of an index entry: the first key of the range the entry covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IndexKey {
    /// A device-level key (nodes of type 0 and 1).
    Device(DeviceKey),
    /// A measurement-level key (nodes of type 2 and 3); `""` for the aligned time column.
    Measurement(String),
}

impl IndexKey {
    /// The level this key belongs to.
    pub fn level(&self) -> IndexLevel {
        match self {
            IndexKey::Device(_) => IndexLevel::Device,
            IndexKey::Measurement(_) => IndexLevel::Measurement,
        }
    }

    /// Orders two keys by the comparator of their level: DeviceIDs by §4.3, measurement names
    /// by UTF-8 bytes. Keys of different levels are not comparable (`None`).
    pub fn compare(&self, other: &IndexKey) -> Option<Ordering> {
        match (self, other) {
            (IndexKey::Device(a), IndexKey::Device(b)) => Some(a.cmp(b)),
            (IndexKey::Measurement(a), IndexKey::Measurement(b)) => {
                Some(a.as_bytes().cmp(b.as_bytes()))
            }
            _ => None,
        }
    }
}

impl fmt::Display for IndexKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexKey::Device(d) => write!(f, "device {d}"),
            IndexKey::Measurement(m) => write!(f, "measurement {m:?}"),
        }
    }
}

/// One entry of a MetadataIndexNode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataIndexEntry {
    /// The first key of the covered range.
    pub key: IndexKey,
    /// Absolute offset where the covered range starts.
    pub offset: i64,
}

impl MetadataIndexEntry {
    /// Reads one entry of `level` in the form of `version`.
    pub fn decode(c: &mut Cursor<'_>, version: FormatVersion, level: IndexLevel) -> Result<Self> {
        let key = match level {
            IndexLevel::Device => IndexKey::Device(DeviceKey::decode(c, version)?),
            IndexLevel::Measurement => {
                let at = c.offset();
                let name = c
                    .read_var_str("index entry measurement name")?
                    .ok_or_else(|| Error::Invalid {
                        what: "index entry measurement name",
                        offset: at,
                        reason: "must not be null".into(),
                    })?;
                IndexKey::Measurement(name)
            }
        };
        let offset = c.read_i64("index entry offset")?;
        Ok(Self { key, offset })
    }

    /// Writes the entry.
    pub fn encode(&self, w: &mut Writer) {
        match &self.key {
            IndexKey::Device(d) => d.encode(w),
            IndexKey::Measurement(m) => w.write_var_str(Some(m)),
        }
        w.write_i64(self.offset);
    }
}

/// The five checks of the index lookup rules (defined beside [`Error::IndexNode`], which
/// names them).
pub use crate::error::IndexNodeRule;

/// A node of the metadata index tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataIndexNode {
    /// The entries, in key order.
    pub children: Vec<MetadataIndexEntry>,
    /// Absolute offset where the last entry's range ends (exclusive).
    pub end_offset: i64,
    /// The node's level and kind.
    pub node_type: MetadataIndexNodeType,
}

/// Smallest serialized entry: a one-byte key (a DeviceID with no segment or an empty name)
/// and the `i64` offset.
const MIN_ENTRY_BYTES: usize = 9;

impl MetadataIndexNode {
    /// Reads a node whose entries are of `level`. A node type of the other level is refused
    /// as a [`IndexNodeRule::ChildLevel`] error, since its entries were then read with the
    /// wrong shape.
    pub fn decode(c: &mut Cursor<'_>, version: FormatVersion, level: IndexLevel) -> Result<Self> {
        let at = c.offset();
        let count = c.read_uvarint("index node child count")?;
        let n = c.check_len(
            i64::from(count),
            MIN_ENTRY_BYTES,
            "index node child count",
            at,
        )?;
        let mut children = Vec::with_capacity(n);
        for _ in 0..n {
            children.push(MetadataIndexEntry::decode(c, version, level)?);
        }
        let end_offset = c.read_i64("index node end offset")?;
        let type_at = c.offset();
        let node_type = MetadataIndexNodeType::from_code(c.read_u8("index node type")?, type_at)?;
        if node_type.level() != level {
            return Err(Error::IndexNode {
                rule: IndexNodeRule::ChildLevel,
                offset: type_at,
                reason: format!("node type {node_type} where a {level:?}-level node was expected"),
            });
        }
        Ok(Self {
            children,
            end_offset,
            node_type,
        })
    }

    /// Writes the node.
    pub fn encode(&self, w: &mut Writer) {
        w.write_uvarint(self.children.len() as u32);
        for e in &self.children {
            e.encode(w);
        }
        w.write_i64(self.end_offset);
        w.write_u8(self.node_type.code());
    }

    /// Decodes a node from exactly the bytes of its range and runs all five checks; every
    /// failure of a check is an [`Error::IndexNode`] naming the rule.
    ///
    /// `bytes` is the child range given by the parent entry (starting at absolute offset
    /// `base`), `level` the level the parent implies, and `parent` the parent's type (`None`
    /// for a table root embedded in TsFileMetadata). Bytes missing for the declared entries,
    /// or bytes left over after them, break rule 1.
    pub fn decode_checked(
        bytes: &[u8],
        base: u64,
        version: FormatVersion,
        level: IndexLevel,
        parent: Option<MetadataIndexNodeType>,
    ) -> Result<Self> {
        let mut c = Cursor::new(bytes, base);
        let node = Self::decode(&mut c, version, level).map_err(|e| match e {
            Error::Truncated { .. } | Error::LengthOutOfBounds { .. } => Error::IndexNode {
                rule: IndexNodeRule::ChildCount,
                offset: base,
                reason: format!("the declared entries do not fit in the node's range: {e}"),
            },
            other => other,
        })?;
        if !c.is_empty() {
            return Err(Error::IndexNode {
                rule: IndexNodeRule::ChildCount,
                offset: c.offset(),
                reason: format!(
                    "{} bytes follow the {} declared entries inside the node's range",
                    c.remaining(),
                    node.children.len()
                ),
            });
        }
        node.validate(base, parent)?;
        Ok(node)
    }

    /// Checks rules 2–5 on a decoded node located at absolute offset `at` (rule 1 concerns
    /// the bytes and is checked by [`MetadataIndexNode::decode_checked`]). `parent` is the
    /// type of the node whose entry led here, if any.
    pub fn validate(&self, at: u64, parent: Option<MetadataIndexNodeType>) -> Result<()> {
        let fail = |rule, reason: String| {
            Err(Error::IndexNode {
                rule,
                offset: at,
                reason,
            })
        };
        if let Some(p) = parent {
            use MetadataIndexNodeType as T;
            let allowed: &[T] = match p {
                T::InternalDevice => &[T::InternalDevice, T::LeafDevice],
                T::LeafDevice | T::InternalMeasurement => {
                    &[T::InternalMeasurement, T::LeafMeasurement]
                }
                T::LeafMeasurement => &[],
            };
            if !allowed.contains(&self.node_type) {
                return fail(
                    IndexNodeRule::ChildLevel,
                    format!("a {p} node cannot have a {} child", self.node_type),
                );
            }
        }
        let level = self.node_type.level();
        if let Some(e) = self.children.iter().find(|e| e.key.level() != level) {
            return fail(
                IndexNodeRule::ChildLevel,
                format!("{} in a {} node", e.key, self.node_type),
            );
        }
        for (i, pair) in self.children.windows(2).enumerate() {
            if pair[1].key.compare(&pair[0].key) == Some(Ordering::Less) {
                return fail(
                    IndexNodeRule::SortedKeys,
                    format!(
                        "entry {} ({}) sorts before entry {i} ({})",
                        i + 1,
                        pair[1].key,
                        pair[0].key
                    ),
                );
            }
        }
        if let Some(first) = self.children.first()
            && first.offset < 0
        {
            return fail(
                IndexNodeRule::MonotonicOffsets,
                format!("entry 0 has negative offset {}", first.offset),
            );
        }
        for (i, pair) in self.children.windows(2).enumerate() {
            if pair[1].offset < pair[0].offset {
                return fail(
                    IndexNodeRule::MonotonicOffsets,
                    format!(
                        "entry {} offset {} is below entry {i} offset {}",
                        i + 1,
                        pair[1].offset,
                        pair[0].offset
                    ),
                );
            }
        }
        if let Some(last) = self.children.last()
            && last.offset > self.end_offset
        {
            return fail(
                IndexNodeRule::LastOffsetWithinEnd,
                format!(
                    "last entry offset {} exceeds end offset {}",
                    last.offset, self.end_offset
                ),
            );
        }
        Ok(())
    }

    /// The absolute byte range `[start, end)` covered by entry `i`, or `None` if there is no
    /// such entry.
    pub fn child_range(&self, i: usize) -> Option<(i64, i64)> {
        let start = self.children.get(i)?.offset;
        let end = self
            .children
            .get(i + 1)
            .map_or(self.end_offset, |next| next.offset);
        Some((start, end))
    }

    /// Index of the last entry whose key is `<= device` (the entry to descend into), or
    /// `None` when every key is greater or the node is measurement-level.
    pub fn find_device(&self, device: &DeviceId) -> Option<usize> {
        let key = IndexKey::Device(DeviceKey::Id(device.clone()));
        self.find(&key)
    }

    /// Index of the last entry whose key is `<= name`, or `None` when every key is greater or
    /// the node is device-level.
    pub fn find_measurement(&self, name: &str) -> Option<usize> {
        self.find(&IndexKey::Measurement(name.to_owned()))
    }

    fn find(&self, key: &IndexKey) -> Option<usize> {
        if key.level() != self.node_type.level() {
            return None;
        }
        let n = self
            .children
            .partition_point(|e| e.key.compare(key) != Some(Ordering::Greater));
        n.checked_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TV8: LEAF_MEASUREMENT node with one entry "" → 81, end 164.
    const TV8: &[u8] = &[
        0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0x51, 0, 0, 0, 0, 0, 0, 0, 0xa4, 0x03,
    ];

    fn bytes_of(node: &MetadataIndexNode) -> Vec<u8> {
        let mut w = Writer::new();
        node.encode(&mut w);
        w.into_inner()
    }

    fn measurement_node(keys: &[(&str, i64)], end: i64) -> MetadataIndexNode {
        MetadataIndexNode {
            children: keys
                .iter()
                .map(|(k, o)| MetadataIndexEntry {
                    key: IndexKey::Measurement((*k).into()),
                    offset: *o,
                })
                .collect(),
            end_offset: end,
            node_type: MetadataIndexNodeType::LeafMeasurement,
        }
    }

    fn rule_of(r: Result<MetadataIndexNode>) -> IndexNodeRule {
        match r {
            Err(Error::IndexNode { rule, .. }) => rule,
            other => panic!("expected an index node error, got {other:?}"),
        }
    }

    #[test]
    fn tv8_leaf_measurement_node() {
        let node = MetadataIndexNode::decode_checked(
            TV8,
            164,
            FormatVersion::V4,
            IndexLevel::Measurement,
            Some(MetadataIndexNodeType::LeafDevice),
        )
        .unwrap();
        assert_eq!(node, measurement_node(&[("", 81)], 164));
        assert_eq!(bytes_of(&node), TV8);
        assert_eq!(node.child_range(0), Some((81, 164)));
        assert_eq!(node.find_measurement("v"), Some(0));
    }

    #[test]
    fn each_rule_is_named() {
        let v4 = FormatVersion::V4;
        let m = IndexLevel::Measurement;
        // Rule 1: a missing byte, then a surplus byte.
        assert_eq!(
            rule_of(MetadataIndexNode::decode_checked(
                &TV8[..18],
                0,
                v4,
                m,
                None
            )),
            IndexNodeRule::ChildCount
        );
        let mut long = TV8.to_vec();
        long.push(0);
        assert_eq!(
            rule_of(MetadataIndexNode::decode_checked(&long, 0, v4, m, None)),
            IndexNodeRule::ChildCount
        );
        let check = |node: MetadataIndexNode, parent| {
            rule_of(MetadataIndexNode::decode_checked(
                &bytes_of(&node),
                0,
                v4,
                m,
                parent,
            ))
        };
        assert_eq!(
            check(measurement_node(&[("b", 1), ("a", 2)], 3), None),
            IndexNodeRule::SortedKeys
        );
        assert_eq!(
            check(measurement_node(&[("a", 2), ("b", 1)], 3), None),
            IndexNodeRule::MonotonicOffsets
        );
        assert_eq!(
            check(measurement_node(&[("a", -1)], 3), None),
            IndexNodeRule::MonotonicOffsets
        );
        assert_eq!(
            check(measurement_node(&[("a", 1), ("b", 9)], 3), None),
            IndexNodeRule::LastOffsetWithinEnd
        );
        assert_eq!(
            check(
                measurement_node(&[("a", 1)], 3),
                Some(MetadataIndexNodeType::InternalDevice)
            ),
            IndexNodeRule::ChildLevel
        );
        // A measurement node where a device node was expected.
        assert_eq!(
            rule_of(MetadataIndexNode::decode_checked(
                TV8,
                0,
                v4,
                IndexLevel::Device,
                None
            )),
            IndexNodeRule::ChildLevel
        );
    }

    #[test]
    fn device_lookup_picks_greatest_entry_at_or_below() {
        let entry = |segs: &[&str], offset| MetadataIndexEntry {
            key: IndexKey::Device(DeviceKey::Id(DeviceId::from_strs(segs))),
            offset,
        };
        let node = MetadataIndexNode {
            children: vec![entry(&["t", "d00"], 10), entry(&["t", "d03"], 20)],
            end_offset: 30,
            node_type: MetadataIndexNodeType::InternalDevice,
        };
        node.validate(0, None).unwrap();
        assert_eq!(
            node.find_device(&DeviceId::from_strs(&["t", "d02"])),
            Some(0)
        );
        assert_eq!(
            node.find_device(&DeviceId::from_strs(&["t", "d09"])),
            Some(1)
        );
        assert_eq!(node.find_device(&DeviceId::from_strs(&["s"])), None);
        assert_eq!(node.find_measurement("x"), None);
        let bytes = bytes_of(&node);
        let back = MetadataIndexNode::decode_checked(
            &bytes,
            0,
            FormatVersion::V4,
            IndexLevel::Device,
            None,
        )
        .unwrap();
        assert_eq!(back, node);
    }
}
