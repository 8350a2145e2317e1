//! DeviceID (reference §4): the segmented identifier of a device, and the V3 plain path.
//!
//! On disk (V4) a DeviceID is `UVarInt segment_count, segment_count × VarStr segment`, where a
//! segment may be null. Segment 0 is the table name (table model) or the path prefix (tree
//! model). The C++ writer keeps trailing null segments, Java trims them; [`DeviceId`] keeps the
//! segments exactly as written (so it re-encodes byte for byte) but compares, hashes and tests
//! equality with trailing nulls ignored, which is how both libraries order devices (§4.3).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use crate::cursor::{Cursor, Writer};
use crate::error::Result;
use crate::types::FormatVersion;

/// A device identifier: a list of nullable UTF-8 segments (table name first).
#[derive(Debug, Clone, Default)]
pub struct DeviceId {
    segments: Vec<Option<String>>,
}

impl DeviceId {
    /// A DeviceID from its segments, kept exactly (trailing nulls included).
    pub fn new(segments: Vec<Option<String>>) -> Self {
        Self { segments }
    }

    /// A DeviceID whose segments are all non-null.
    pub fn from_strs<S: AsRef<str>>(segments: &[S]) -> Self {
        Self::new(
            segments
                .iter()
                .map(|s| Some(s.as_ref().to_owned()))
                .collect(),
        )
    }

    /// The DeviceID of a tree-model device path (§4.2): the path is split into nodes on `.`
    /// (dots inside back-quotes or quotes do not split); one node gives one segment, two or
    /// three nodes give `[all but the last joined by ".", last]`, and four or more give
    /// `[first three joined by ".", node 4, …]`.
    ///
    /// The way back is the string form ([`Display`](fmt::Display)): joining the segments with
    /// `.` gives the tree path again (`["root.sg", "d1"]` → `root.sg.d1`).
    pub fn from_tree_path(path: &str) -> Self {
        let nodes = split_path(path);
        let head = match nodes.len() {
            0 | 1 => nodes.len(),
            2 | 3 => nodes.len() - 1,
            _ => 3,
        };
        let mut segments = Vec::with_capacity(nodes.len());
        if head > 0 {
            segments.push(Some(nodes[..head].join(".")));
        }
        segments.extend(nodes[head..].iter().map(|n| Some((*n).to_owned())));
        Self::new(segments)
    }

    /// The segments as written (trailing nulls included).
    pub fn segments(&self) -> &[Option<String>] {
        &self.segments
    }

    /// The segments without trailing nulls: what ordering and equality look at.
    pub fn significant_segments(&self) -> &[Option<String>] {
        let keep = self
            .segments
            .iter()
            .rposition(Option::is_some)
            .map_or(0, |i| i + 1);
        &self.segments[..keep]
    }

    /// Segment 0: the table name (or tree-model path prefix); `None` when absent or null.
    pub fn table_name(&self) -> Option<&str> {
        self.segments.first().and_then(|s| s.as_deref())
    }

    /// True when segment 0 starts with `root.` (a tree-model device, §4.2).
    pub fn is_tree_model(&self) -> bool {
        self.table_name().is_some_and(|t| t.starts_with("root."))
    }

    /// Reads a V4 DeviceID: `UVarInt count, count × VarStr`.
    pub fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        let at = c.offset();
        let count = c.read_uvarint("device id segment count")?;
        // Every segment takes at least one byte (the VarStr length).
        let n = c.check_len(i64::from(count), 1, "device id segment count", at)?;
        let mut segments = Vec::with_capacity(n);
        for _ in 0..n {
            segments.push(c.read_var_str("device id segment")?);
        }
        Ok(Self { segments })
    }

    /// Writes the V4 form, segments exactly as held.
    pub fn encode(&self, w: &mut Writer) {
        w.write_uvarint(self.segments.len() as u32);
        for s in &self.segments {
            w.write_var_str(s.as_deref());
        }
    }
}

/// The string form (§4.4): segments joined with `.`, a null segment rendered as `null`.
/// Series paths for the Bloom filter are `device + "." + measurement`.
impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.segments.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            f.write_str(s.as_deref().unwrap_or("null"))?;
        }
        Ok(())
    }
}

impl PartialEq for DeviceId {
    fn eq(&self, other: &Self) -> bool {
        self.significant_segments() == other.significant_segments()
    }
}

impl Eq for DeviceId {}

impl Hash for DeviceId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.significant_segments().hash(state);
    }
}

impl PartialOrd for DeviceId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// §4.3: segment by segment, `null` before any string, strings by UTF-8 bytes, and on a
/// common prefix the shorter ID first; trailing nulls are ignored.
impl Ord for DeviceId {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.significant_segments(), other.significant_segments());
        for (x, y) in a.iter().zip(b) {
            let ord = match (x, y) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
                (Some(x), Some(y)) => x.as_bytes().cmp(y.as_bytes()),
            };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        a.len().cmp(&b.len())
    }
}

/// Splits a tree path on `.`, except inside back-quotes, single or double quotes.
fn split_path(path: &str) -> Vec<&str> {
    let mut nodes = Vec::new();
    let mut quote: Option<char> = None;
    let mut start = 0;
    for (i, ch) in path.char_indices() {
        match (quote, ch) {
            (None, '`' | '\'' | '"') => quote = Some(ch),
            (Some(q), _) if q == ch => quote = None,
            (None, '.') => {
                nodes.push(&path[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !path.is_empty() {
        nodes.push(&path[start..]);
    }
    nodes
}

/// How a file names a device: a V4 [`DeviceId`] or a V3 plain path string.
///
/// V3 chunk group headers and V3 device-level index entries hold a `VarStr` path (e.g.
/// `root.sg.d1`); V4 ones hold a DeviceID. Keeping the V3 string lets a V3 structure re-encode
/// byte for byte; [`DeviceKey::device_id`] converts it with §4.2 when a DeviceID is needed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DeviceKey {
    /// A V4 DeviceID.
    Id(DeviceId),
    /// A V3 device path.
    Path(String),
}

impl DeviceKey {
    /// Reads the form used by `version`.
    pub fn decode(c: &mut Cursor<'_>, version: FormatVersion) -> Result<Self> {
        match version {
            FormatVersion::V4 => DeviceId::decode(c).map(DeviceKey::Id),
            FormatVersion::V3 => {
                let at = c.offset();
                match c.read_var_str("device path")? {
                    Some(p) => Ok(DeviceKey::Path(p)),
                    None => Err(crate::Error::Invalid {
                        what: "device path",
                        offset: at,
                        reason: "a V3 device path must not be null".into(),
                    }),
                }
            }
        }
    }

    /// Writes the key in the form it was read in.
    pub fn encode(&self, w: &mut Writer) {
        match self {
            DeviceKey::Id(id) => id.encode(w),
            DeviceKey::Path(p) => w.write_var_str(Some(p)),
        }
    }

    /// The key as a DeviceID (a V3 path is split with §4.2).
    pub fn device_id(&self) -> DeviceId {
        match self {
            DeviceKey::Id(id) => id.clone(),
            DeviceKey::Path(p) => DeviceId::from_tree_path(p),
        }
    }
}

impl fmt::Display for DeviceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceKey::Id(id) => id.fmt(f),
            DeviceKey::Path(p) => f.write_str(p),
        }
    }
}

impl PartialOrd for DeviceKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// DeviceIDs compare by §4.3, V3 paths by their UTF-8 bytes (Java's V3 order for ASCII
/// paths); a V3 path sorts before any DeviceID, a case that never occurs within one file.
impl Ord for DeviceKey {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (DeviceKey::Id(a), DeviceKey::Id(b)) => a.cmp(b),
            (DeviceKey::Path(a), DeviceKey::Path(b)) => a.as_bytes().cmp(b.as_bytes()),
            (DeviceKey::Path(_), DeviceKey::Id(_)) => Ordering::Less,
            (DeviceKey::Id(_), DeviceKey::Path(_)) => Ordering::Greater,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(segs: &[Option<&str>]) -> DeviceId {
        DeviceId::new(segs.iter().map(|s| s.map(str::to_owned)).collect())
    }

    fn round_trip(d: &DeviceId, bytes: &[u8]) {
        let mut w = Writer::new();
        d.encode(&mut w);
        assert_eq!(w.as_bytes(), bytes, "{d}");
        let back = DeviceId::decode(&mut Cursor::new(bytes, 0)).unwrap();
        assert_eq!(back.segments(), d.segments());
    }

    #[test]
    fn tv2_device_ids() {
        round_trip(&id(&[Some("t"), Some("d1")]), &[2, 2, b't', 4, b'd', b'1']);
        round_trip(
            &id(&[Some("tb"), Some("r1"), None]),
            &[3, 4, b't', b'b', 4, b'r', b'1', 1],
        );
        round_trip(&id(&[Some("tab")]), &[1, 6, b't', b'a', b'b']);
    }

    #[test]
    fn tree_paths_split_per_reference() {
        let cases: &[(&str, &[&str])] = &[
            ("root.sg.d1", &["root.sg", "d1"]),
            ("root.d1", &["root", "d1"]),
            ("edge1", &["edge1"]),
            ("root.a.b.c.d", &["root.a.b", "c", "d"]),
            (
                "edge.x.y.z.w.v.u.d6",
                &["edge.x.y", "z", "w", "v", "u", "d6"],
            ),
            ("root.sg.`a.b`", &["root.sg", "`a.b`"]),
        ];
        for (path, segs) in cases {
            assert_eq!(
                DeviceId::from_tree_path(path).segments(),
                DeviceId::from_strs(segs).segments()
            );
            assert_eq!(DeviceId::from_tree_path(path).to_string(), *path);
        }
        assert!(DeviceId::from_tree_path("root.sg.d1").is_tree_model());
        assert!(!DeviceId::from_strs(&["t", "d1"]).is_tree_model());
        assert_eq!(DeviceId::from_tree_path("").segments().len(), 0);
    }

    #[test]
    fn ordering_nulls_first_shorter_first_trailing_nulls_ignored() {
        let a = id(&[Some("t"), None, Some("x")]);
        let b = id(&[Some("t"), Some(""), Some("a")]);
        assert!(a < b);
        assert!(id(&[Some("t")]) < id(&[Some("t"), Some("a")]));
        assert_eq!(
            id(&[Some("tb"), Some("r1"), None]),
            id(&[Some("tb"), Some("r1")])
        );
        assert_eq!(
            id(&[Some("tb"), Some("r1"), None]).cmp(&id(&[Some("tb"), Some("r1")])),
            Ordering::Equal
        );
        // UTF-8 byte order, not UTF-16: U+10000 sorts after U+FFFD.
        assert!(id(&[Some("\u{FFFD}")]) < id(&[Some("\u{10000}")]));
    }

    #[test]
    fn string_form_renders_null() {
        assert_eq!(id(&[Some("t"), None, Some("x")]).to_string(), "t.null.x");
    }

    #[test]
    fn lying_segment_count_is_refused() {
        let err = DeviceId::decode(&mut Cursor::new(&[0xff, 0xff, 0x03, 0x00], 10)).unwrap_err();
        assert!(
            matches!(err, crate::Error::LengthOutOfBounds { offset: 10, .. }),
            "{err}"
        );
    }
}
