//! A test-side walker over a whole TsFile: it decodes every structure reachable from the
//! footer and the data section, re-encodes each one and asserts the bytes are identical.
//!
//! The walker lives in the tests on purpose: index walking belongs to `tsfile-index`, and this
//! crate only has to prove that each structure round-trips on real files.

use std::collections::BTreeMap;
use std::path::PathBuf;

use tsfile_format::chunk::{ChunkHeader, DataRecord};
use tsfile_format::cursor::{Cursor, Writer};
use tsfile_format::device_id::DeviceId;
use tsfile_format::file::{FileTail, TAIL_LEN, TsFileMetadata, TsFileMetadataV3, decode_head};
use tsfile_format::metadata_index::MetadataIndexNode;
use tsfile_format::page::PageHeader;
use tsfile_format::timeseries::TimeseriesMetadata;
use tsfile_format::types::{FormatVersion, IndexLevel, MetadataIndexNodeType};

/// The conformance corpus root, or `None` (with a printed reason) when it is absent.
pub(crate) fn corpus_dir(sub: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance"
    ))
    .join(sub);
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("skipping: conformance corpus {} is absent", dir.display());
        None
    }
}

/// Every `.tsfile` of a corpus directory, sorted by name.
pub(crate) fn tsfiles(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("corpus directory is readable")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "tsfile"))
        .collect();
    files.sort();
    files
}

/// One TimeseriesMetadata found in the index, with its device and location.
#[derive(Debug)]
pub(crate) struct Series {
    pub(crate) device: DeviceId,
    pub(crate) offset: u64,
    pub(crate) len: usize,
    pub(crate) meta: TimeseriesMetadata,
}

/// How many structures of each kind were decoded and re-encoded.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counts {
    pub(crate) index_nodes: usize,
    pub(crate) timeseries: usize,
    pub(crate) chunk_metadata: usize,
    pub(crate) chunk_groups: usize,
    pub(crate) chunks: usize,
    pub(crate) pages: usize,
    pub(crate) operation_indexes: usize,
}

impl Counts {
    /// All structures, the footer metadata included.
    pub(crate) fn total(&self) -> usize {
        1 + self.index_nodes
            + self.timeseries
            + self.chunk_metadata
            + self.chunk_groups
            + self.chunks
            + self.pages
            + self.operation_indexes
    }
}

/// What the walk found.
#[derive(Debug)]
pub(crate) struct Walk {
    pub(crate) version: FormatVersion,
    pub(crate) metadata: Option<TsFileMetadata>,
    /// Devices in index order (table roots in file order, depth first).
    pub(crate) devices: Vec<DeviceId>,
    pub(crate) series: Vec<Series>,
    pub(crate) counts: Counts,
}

/// A chunk met in the data section.
struct ChunkSeen {
    header: ChunkHeader,
    /// Sum of the page statistics counts, for chunks whose pages carry statistics.
    page_count_sum: Option<u64>,
}

/// Walks the whole file, asserting the byte-exact round trip of every structure and the
/// agreement of the index with the data section. Panics with the file name and offset.
pub(crate) fn walk(name: &str, bytes: &[u8]) -> Walk {
    let size = bytes.len() as u64;
    let version = decode_head(bytes.get(..7).unwrap_or(bytes)).expect("head");
    let tail_at = bytes.len() - TAIL_LEN as usize;
    let tail = FileTail::decode(&bytes[tail_at..], size).expect("tail");
    let range = tail.metadata_range(size);
    let meta_bytes = &bytes[range.start as usize..range.end as usize];
    let mut w = Walker {
        name,
        bytes,
        version,
        devices: Vec::new(),
        series: Vec::new(),
        counts: Counts::default(),
    };
    let (metadata, meta_offset) = match version {
        FormatVersion::V4 => {
            let m = TsFileMetadata::decode(meta_bytes, range.start)
                .unwrap_or_else(|e| panic!("{name}: TsFileMetadata: {e}"));
            w.same("TsFileMetadata", range.start, meta_bytes, |x| m.encode(x));
            for t in &m.table_roots {
                t.root
                    .validate(range.start, None)
                    .unwrap_or_else(|e| panic!("{name}: root of {}: {e}", t.table_name));
                w.device_node(&t.root);
            }
            let off = m.meta_offset;
            (Some(m), off)
        }
        FormatVersion::V3 => {
            let m = TsFileMetadataV3::decode(meta_bytes, range.start)
                .unwrap_or_else(|e| panic!("{name}: TsFileMetadata V3: {e}"));
            w.same("TsFileMetadata V3", range.start, meta_bytes, |x| {
                m.encode(x)
            });
            m.root
                .validate(range.start, None)
                .unwrap_or_else(|e| panic!("{name}: V3 root: {e}"));
            w.device_node(&m.root);
            (None, m.meta_offset)
        }
    };
    let chunks = w.data_section(meta_offset);
    w.check_chunk_metadata(&chunks);
    Walk {
        version,
        metadata,
        devices: w.devices,
        series: w.series,
        counts: w.counts,
    }
}

struct Walker<'a> {
    name: &'a str,
    bytes: &'a [u8],
    version: FormatVersion,
    devices: Vec<DeviceId>,
    series: Vec<Series>,
    counts: Counts,
}

impl<'a> Walker<'a> {
    fn same(&self, what: &str, at: u64, original: &[u8], encode: impl FnOnce(&mut Writer)) {
        let mut w = Writer::new();
        encode(&mut w);
        assert!(
            w.as_bytes() == original,
            "{}: {what} at byte {at} does not re-encode identically",
            self.name
        );
    }

    fn slice(&self, start: i64, end: i64) -> &'a [u8] {
        assert!(
            0 <= start && start <= end && end as usize <= self.bytes.len(),
            "{}: range {start}..{end} outside the file",
            self.name
        );
        &self.bytes[start as usize..end as usize]
    }

    fn child(
        &mut self,
        node: &MetadataIndexNode,
        i: usize,
        level: IndexLevel,
    ) -> MetadataIndexNode {
        let (start, end) = node.child_range(i).expect("entry exists");
        let bytes = self.slice(start, end);
        let child = MetadataIndexNode::decode_checked(
            bytes,
            start as u64,
            self.version,
            level,
            Some(node.node_type),
        )
        .unwrap_or_else(|e| panic!("{}: child node at {start}: {e}", self.name));
        self.same("MetadataIndexNode", start as u64, bytes, |w| {
            child.encode(w)
        });
        self.counts.index_nodes += 1;
        child
    }

    fn device_node(&mut self, node: &MetadataIndexNode) {
        for i in 0..node.children.len() {
            match node.node_type {
                MetadataIndexNodeType::InternalDevice => {
                    let child = self.child(node, i, IndexLevel::Device);
                    self.device_node(&child);
                }
                MetadataIndexNodeType::LeafDevice => {
                    let device = match &node.children[i].key {
                        tsfile_format::metadata_index::IndexKey::Device(d) => d.device_id(),
                        other => panic!("{}: device node holds {other}", self.name),
                    };
                    let child = self.child(node, i, IndexLevel::Measurement);
                    self.devices.push(device.clone());
                    self.measurement_node(&child, &device);
                }
                other => panic!("{}: {other} node at device level", self.name),
            }
        }
    }

    fn measurement_node(&mut self, node: &MetadataIndexNode, device: &DeviceId) {
        for i in 0..node.children.len() {
            match node.node_type {
                MetadataIndexNodeType::InternalMeasurement => {
                    let child = self.child(node, i, IndexLevel::Measurement);
                    self.measurement_node(&child, device);
                }
                MetadataIndexNodeType::LeafMeasurement => {
                    let (start, end) = node.child_range(i).expect("entry exists");
                    self.timeseries_range(start, end, device);
                }
                other => panic!("{}: {other} node at measurement level", self.name),
            }
        }
    }

    fn timeseries_range(&mut self, start: i64, end: i64, device: &DeviceId) {
        let bytes = self.slice(start, end);
        let mut c = Cursor::new(bytes, start as u64);
        while !c.is_empty() {
            let at = c.position();
            let meta = TimeseriesMetadata::decode(&mut c)
                .unwrap_or_else(|e| panic!("{}: TimeseriesMetadata: {e}", self.name));
            let raw = &bytes[at..c.position()];
            self.same("TimeseriesMetadata", start as u64 + at as u64, raw, |w| {
                meta.encode(w)
            });
            self.counts.timeseries += 1;
            self.counts.chunk_metadata += meta.chunk_metadata.len();
            self.series.push(Series {
                device: device.clone(),
                offset: start as u64 + at as u64,
                len: raw.len(),
                meta,
            });
        }
    }

    /// Walks the data section from byte 7 to the separator; returns the chunks by offset.
    fn data_section(&mut self, meta_offset: i64) -> BTreeMap<u64, ChunkSeen> {
        let name = self.name;
        let end = usize::try_from(meta_offset).expect("meta offset is non-negative") + 1;
        let mut c = Cursor::new(&self.bytes[7..end], 7);
        let mut chunks = BTreeMap::new();
        loop {
            let at = c.position();
            let offset = c.offset();
            let rec = DataRecord::decode(&mut c, self.version)
                .unwrap_or_else(|e| panic!("{name}: data record: {e}"));
            let raw = &c.data()[at..c.position()];
            self.same("data record", offset, raw, |w| rec.encode(w));
            match rec {
                DataRecord::Separator => {
                    assert_eq!(offset, meta_offset as u64, "{name}: separator position");
                    assert!(c.is_empty(), "{name}: bytes after the separator");
                    break;
                }
                DataRecord::ChunkGroup(_) => self.counts.chunk_groups += 1,
                DataRecord::OperationIndex(_) => self.counts.operation_indexes += 1,
                DataRecord::Chunk(header) => {
                    self.counts.chunks += 1;
                    let mut pages = c
                        .sub(header.data_size as usize, "chunk pages")
                        .unwrap_or_else(|e| panic!("{name}: chunk at {offset}: {e}"));
                    let mut n_pages = 0;
                    let mut sum = header.pages_have_statistics().then_some(0u64);
                    while !pages.is_empty() {
                        let p_at = pages.position();
                        let p_off = pages.offset();
                        let ph = PageHeader::decode_for_chunk(&mut pages, &header)
                            .unwrap_or_else(|e| panic!("{name}: page header: {e}"));
                        let raw = &pages.data()[p_at..pages.position()];
                        self.same("PageHeader", p_off, raw, |w| ph.encode(w));
                        ph.take_payload(&mut pages)
                            .unwrap_or_else(|e| panic!("{name}: page payload: {e}"));
                        if let (Some(s), Some(st)) = (sum.as_mut(), &ph.statistics) {
                            *s += u64::from(st.count);
                        }
                        n_pages += 1;
                    }
                    if !header.pages_have_statistics() {
                        assert!(
                            n_pages <= 1,
                            "{name}: single-page chunk at {offset} has {n_pages} pages"
                        );
                    }
                    self.counts.pages += n_pages;
                    chunks.insert(
                        offset,
                        ChunkSeen {
                            header,
                            page_count_sum: sum,
                        },
                    );
                }
            }
        }
        chunks
    }

    /// Every ChunkMetadata points at a chunk header of the same series and type, and a
    /// multi-page chunk's page counts add up to the chunk statistics count.
    fn check_chunk_metadata(&self, chunks: &BTreeMap<u64, ChunkSeen>) {
        let name = self.name;
        for s in &self.series {
            let m = &s.meta;
            let mut total = 0u64;
            for (i, cm) in m.chunk_metadata.iter().enumerate() {
                let seen = chunks
                    .get(&(cm.offset_of_chunk_header as u64))
                    .unwrap_or_else(|| {
                        panic!(
                            "{name}: {}.{} points at no chunk",
                            s.device, m.measurement_id
                        )
                    });
                assert_eq!(seen.header.measurement_id, m.measurement_id, "{name}");
                assert_eq!(seen.header.data_type, m.data_type, "{name}");
                let stats = m.chunk_statistics(i).expect("chunk exists");
                total += u64::from(stats.count);
                if let Some(sum) = seen.page_count_sum {
                    assert_eq!(
                        sum,
                        u64::from(stats.count),
                        "{name}: page counts of {}",
                        m.measurement_id
                    );
                }
            }
            assert_eq!(
                total,
                u64::from(m.statistics.count),
                "{name}: chunk counts of {}",
                m.measurement_id
            );
        }
    }
}
