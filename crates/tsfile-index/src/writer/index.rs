//! The index section (`docs/tsfile.md` §7): TimeseriesMetadata of every device in DeviceID
//! order, each device's measurement index, the device index of each table, and the Bloom
//! filter and properties of TsFileMetadata — built exactly as §7.4 describes, so that the
//! output is byte-identical to the official writers'.

use std::collections::VecDeque;

use tsfile_format::bloom_filter::{self, BloomFilter, TailBytes};
use tsfile_format::cursor::Writer;
use tsfile_format::device_id::{DeviceId, DeviceKey};
use tsfile_format::file::{Property, TableIndexRoot};
use tsfile_format::metadata_index::{IndexKey, MetadataIndexEntry, MetadataIndexNode};
use tsfile_format::timeseries::TimeseriesMetadata;
use tsfile_format::types::MetadataIndexNodeType;

use super::options::{BloomHashing, Flavor};

/// One device's series, in ascending measurement order (the time column `""` first).
#[derive(Debug)]
pub(crate) struct DeviceSeries {
    pub(crate) id: DeviceId,
    pub(crate) series: Vec<TimeseriesMetadata>,
}

/// The index section being written: bytes and the absolute offset of their first byte.
struct Section {
    w: Writer,
    base: u64,
}

impl Section {
    fn pos(&self) -> i64 {
        (self.base + self.w.len() as u64) as i64
    }
}

fn node(node_type: MetadataIndexNodeType) -> MetadataIndexNode {
    MetadataIndexNode {
        children: Vec::new(),
        end_offset: 0,
        node_type,
    }
}

/// Root generation (§7.4): while more than one node is queued, serialize the queued nodes
/// and collect them under parents of `internal` type holding up to `degree` entries. The
/// remaining node is the root and is not serialized.
fn generate_root(
    mut queue: VecDeque<MetadataIndexNode>,
    internal: MetadataIndexNodeType,
    degree: usize,
    out: &mut Section,
) -> MetadataIndexNode {
    while queue.len() > 1 {
        let mut parents = VecDeque::new();
        let mut parent = node(internal);
        while let Some(child) = queue.pop_front() {
            if parent.children.len() == degree {
                parent.end_offset = out.pos();
                parents.push_back(std::mem::replace(&mut parent, node(internal)));
            }
            let offset = out.pos();
            let key = child.children[0].key.clone();
            child.encode(&mut out.w);
            parent.children.push(MetadataIndexEntry { key, offset });
        }
        parent.end_offset = out.pos();
        parents.push_back(parent);
        queue = parents;
    }
    queue
        .pop_front()
        .unwrap_or_else(|| node(MetadataIndexNodeType::LeafMeasurement))
}

/// Serializes one device's TimeseriesMetadata and intermediate measurement nodes; returns its
/// measurement root (not yet serialized).
fn device_measurements(dev: &DeviceSeries, degree: usize, out: &mut Section) -> MetadataIndexNode {
    let mut queue = VecDeque::new();
    let mut leaf = node(MetadataIndexNodeType::LeafMeasurement);
    for (i, ts) in dev.series.iter().enumerate() {
        if i % degree == 0 {
            if leaf.children.len() == degree {
                leaf.end_offset = out.pos();
                queue.push_back(std::mem::replace(
                    &mut leaf,
                    node(MetadataIndexNodeType::LeafMeasurement),
                ));
            }
            leaf.children.push(MetadataIndexEntry {
                key: IndexKey::Measurement(ts.measurement_id.clone()),
                offset: out.pos(),
            });
        }
        ts.encode(&mut out.w);
    }
    leaf.end_offset = out.pos();
    queue.push_back(leaf);
    generate_root(
        queue,
        MetadataIndexNodeType::InternalMeasurement,
        degree,
        out,
    )
}

/// Writes the whole index section, which starts at absolute offset `base` (one past the
/// separator), and returns its bytes and the table roots for TsFileMetadata, in ascending
/// table name order. `devices` must be sorted by DeviceID.
pub(crate) fn build(
    devices: &[DeviceSeries],
    base: u64,
    degree: usize,
) -> (Vec<u8>, Vec<TableIndexRoot>) {
    let degree = degree.max(2);
    let mut out = Section {
        w: Writer::new(),
        base,
    };
    // Step 1: every device's series (and intermediate measurement nodes), in device order.
    let roots: Vec<MetadataIndexNode> = devices
        .iter()
        .map(|d| device_measurements(d, degree, &mut out))
        .collect();
    // Step 2: per table, the measurement roots under leaf device nodes, then the device tree.
    let mut tables = Vec::new();
    let mut i = 0;
    while i < devices.len() {
        let table = devices[i].id.table_name().unwrap_or("").to_string();
        let mut j = i;
        while j < devices.len() && devices[j].id.table_name().unwrap_or("") == table {
            j += 1;
        }
        let mut queue = VecDeque::new();
        let mut leaf = node(MetadataIndexNodeType::LeafDevice);
        for k in i..j {
            if leaf.children.len() == degree {
                leaf.end_offset = out.pos();
                queue.push_back(std::mem::replace(
                    &mut leaf,
                    node(MetadataIndexNodeType::LeafDevice),
                ));
            }
            leaf.children.push(MetadataIndexEntry {
                key: IndexKey::Device(DeviceKey::Id(devices[k].id.clone())),
                offset: out.pos(),
            });
            roots[k].encode(&mut out.w);
        }
        leaf.end_offset = out.pos();
        queue.push_back(leaf);
        let root = generate_root(
            queue,
            MetadataIndexNodeType::InternalDevice,
            degree,
            &mut out,
        );
        tables.push(TableIndexRoot {
            table_name: table,
            root,
        });
        i = j;
    }
    tables.sort_by(|a, b| a.table_name.as_bytes().cmp(b.table_name.as_bytes()));
    (out.w.into_inner(), tables)
}

/// The Bloom filter over every series path (`device.measurement`, the time column included),
/// sized as `flavor` does and hashed with `hashing` (§7.7).
pub(crate) fn bloom(
    devices: &[DeviceSeries],
    error_rate: f64,
    flavor: Flavor,
    hashing: BloomHashing,
) -> BloomFilter {
    let entries: usize = match flavor {
        // C++ sizes by the number of TimeseriesMetadata, time columns included, minus one
        // (derived from its files: 5 devices × 10 fields → n = 54, 300 devices × 3 fields →
        // n = 1199, 1 device × 100 fields → n = 100).
        Flavor::Cpp => devices
            .iter()
            .map(|d| d.series.len())
            .sum::<usize>()
            .saturating_sub(1),
        // Java sizes by the chunk metadata entries, time chunks included.
        Flavor::Java => devices
            .iter()
            .flat_map(|d| &d.series)
            .map(|s| s.chunk_metadata.len())
            .sum(),
    };
    let mut filter = BloomFilter::with_capacity(entries, error_rate);
    let tails: &[TailBytes] = match hashing {
        BloomHashing::Java => &[TailBytes::SignExtended],
        BloomHashing::Cpp => &[TailBytes::ZeroExtended],
        // Identical for ASCII paths; a non-ASCII path sets the bits of both variants.
        BloomHashing::Both => &[TailBytes::SignExtended, TailBytes::ZeroExtended],
    };
    let size = filter.size_in_bits.max(1);
    let k = (filter.hash_count as usize).min(bloom_filter::SEEDS.len());
    for d in devices {
        let device = d.id.to_string();
        for s in &d.series {
            let path = format!("{device}.{}", s.measurement_id);
            for (&seed, &tail) in bloom_filter::SEEDS[..k]
                .iter()
                .flat_map(|s| tails.iter().map(move |t| (s, t)))
            {
                let h = bloom_filter::murmur3_x64_128_low32(path.as_bytes(), seed, tail);
                let h = if h == i32::MIN { 0 } else { h };
                let p = h.unsigned_abs() % size;
                let byte = (p / 8) as usize;
                if filter.bits.len() <= byte {
                    filter.bits.resize(byte + 1, 0);
                }
                filter.bits[byte] |= 1 << (p % 8);
            }
        }
    }
    filter
}

/// The writer's own properties (the three encryption properties, in `flavor`'s order)
/// followed by the user's.
pub(crate) fn properties(flavor: Flavor, user: &[Property]) -> Vec<Property> {
    let key = Property {
        key: "encryptKey".into(),
        value: None,
    };
    let kind = Property {
        key: "encryptType".into(),
        value: Some(b"org.apache.tsfile.encrypt.UNENCRYPTED".to_vec()),
    };
    let level = Property {
        key: "encryptLevel".into(),
        value: Some(b"0".to_vec()),
    };
    let mut props = match flavor {
        Flavor::Cpp => vec![key, kind, level],
        Flavor::Java => vec![level, key, kind],
    };
    props.extend(user.iter().cloned());
    props
}

#[cfg(test)]
mod tests {
    use super::*;
    use tsfile_format::statistics::{Statistics, StatisticsValues};
    use tsfile_format::timeseries::{ChunkMetadata, TimeseriesMetadata};
    use tsfile_format::types::TSDataType;

    fn device(table: &str, tag: &str, field: &str) -> DeviceSeries {
        let ts = |name: &str| TimeseriesMetadata {
            timeseries_type: 0,
            measurement_id: name.to_string(),
            data_type: TSDataType::Vector,
            statistics: Statistics {
                count: 1,
                start_time: 0,
                end_time: 0,
                values: StatisticsValues::None,
            },
            chunk_metadata: vec![ChunkMetadata {
                offset_of_chunk_header: 7,
                statistics: None,
            }],
        };
        DeviceSeries {
            id: DeviceId::from_strs(&[table, tag]),
            series: vec![ts(""), ts(field)],
        }
    }

    fn all_set(f: &BloomFilter, path: &str, tail: TailBytes) -> bool {
        bloom_filter::SEEDS[..f.hash_count as usize]
            .iter()
            .all(|&seed| {
                let h = bloom_filter::murmur3_x64_128_low32(path.as_bytes(), seed, tail);
                let p = if h == i32::MIN { 0 } else { h }.unsigned_abs() % f.size_in_bits;
                f.bits
                    .get((p / 8) as usize)
                    .is_some_and(|b| b & (1 << (p % 8)) != 0)
            })
    }

    /// The §7.7 check values: `t.d1.v` and `t.d1.` in a 256-bit filter (TV9's 31 bytes).
    #[test]
    fn tv9_bloom_filter() {
        let f = bloom(
            &[device("t", "d1", "v")],
            0.05,
            Flavor::Cpp,
            BloomHashing::Both,
        );
        assert_eq!((f.size_in_bits, f.hash_count, f.bits.len()), (256, 5, 31));
        let mut w = Writer::new();
        f.encode(&mut w);
        let tv9 = "1f00000010000000422000000000000000098000001000000000800000000040800205";
        let hex: String = w.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, tv9);
    }

    /// With both hashings a non-ASCII path is found by Java's and C++'s variants.
    #[test]
    fn both_hashings_cover_non_ascii_paths() {
        let devs = [device("tbl", "温度", "x")];
        let path = "tbl.温度.x";
        let both = bloom(&devs, 0.05, Flavor::Cpp, BloomHashing::Both);
        assert!(all_set(&both, path, TailBytes::SignExtended));
        assert!(all_set(&both, path, TailBytes::ZeroExtended));
        let cpp = bloom(&devs, 0.05, Flavor::Cpp, BloomHashing::Cpp);
        assert!(all_set(&cpp, path, TailBytes::ZeroExtended));
        let java = bloom(&devs, 0.05, Flavor::Java, BloomHashing::Java);
        assert!(all_set(&java, path, TailBytes::SignExtended));
    }
}
