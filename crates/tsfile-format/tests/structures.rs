//! Property tests of the structures: any value encodes to bytes that decode back to it (and
//! re-encode to the same bytes), and DeviceID ordering is a total order that ignores trailing
//! null segments.

use std::cmp::Ordering;

use proptest::prelude::*;
use tsfile_format::bloom_filter::BloomFilter;
use tsfile_format::cursor::{Cursor, Writer};
use tsfile_format::device_id::{DeviceId, DeviceKey};
use tsfile_format::file::{NamedTableSchema, Property, TableIndexRoot, TsFileMetadata};
use tsfile_format::metadata_index::{IndexKey, MetadataIndexEntry, MetadataIndexNode};
use tsfile_format::schema::{MeasurementSchema, TableColumn, TableSchema};
use tsfile_format::statistics::{Statistics, StatisticsValues};
use tsfile_format::timeseries::{ChunkMetadata, TimeseriesMetadata};
use tsfile_format::types::{
    ColumnCategory, CompressionType, FormatVersion, IndexLevel, MetadataIndexNodeType, TSDataType,
    TSEncoding,
};

fn bytes_of(f: impl FnOnce(&mut Writer)) -> Vec<u8> {
    let mut w = Writer::new();
    f(&mut w);
    w.into_inner()
}

fn name() -> impl Strategy<Value = String> {
    "[a-z0-9_.]{0,6}|[\\PC]{0,3}"
}

fn device_id() -> impl Strategy<Value = DeviceId> {
    prop::collection::vec(prop::option::weighted(0.8, name()), 0..5).prop_map(DeviceId::new)
}

fn bin() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::weighted(0.9, prop::collection::vec(any::<u8>(), 0..6))
}

/// A data type with statistics and a matching typed part.
fn typed_statistics() -> impl Strategy<Value = (TSDataType, Statistics)> {
    let values = prop_oneof![
        (any::<bool>(), any::<bool>(), any::<i64>()).prop_map(|(first, last, sum)| (
            TSDataType::Boolean,
            StatisticsValues::Boolean { first, last, sum }
        )),
        (any::<[i32; 4]>(), any::<i64>(), any::<bool>()).prop_map(|(v, sum, date)| (
            if date {
                TSDataType::Date
            } else {
                TSDataType::Int32
            },
            StatisticsValues::Int32 {
                min: v[0],
                max: v[1],
                first: v[2],
                last: v[3],
                sum
            }
        )),
        (any::<[i64; 4]>(), any::<f64>()).prop_map(|(v, sum)| (
            TSDataType::Int64,
            StatisticsValues::Int64 {
                min: v[0],
                max: v[1],
                first: v[2],
                last: v[3],
                sum
            }
        )),
        (any::<[f32; 4]>(), any::<f64>()).prop_map(|(v, sum)| (
            TSDataType::Float,
            StatisticsValues::Float {
                min: v[0],
                max: v[1],
                first: v[2],
                last: v[3],
                sum
            }
        )),
        (any::<[f64; 5]>()).prop_map(|v| (
            TSDataType::Double,
            StatisticsValues::Double {
                min: v[0],
                max: v[1],
                first: v[2],
                last: v[3],
                sum: v[4]
            }
        )),
        (bin(), bin())
            .prop_map(|(first, last)| (TSDataType::Text, StatisticsValues::Text { first, last })),
        (bin(), bin(), bin(), bin()).prop_map(|(first, last, min, max)| (
            TSDataType::String,
            StatisticsValues::String {
                first,
                last,
                min,
                max
            }
        )),
        Just((TSDataType::Blob, StatisticsValues::None)),
        Just((TSDataType::Vector, StatisticsValues::None)),
    ];
    (values, any::<u32>(), any::<i64>(), any::<i64>()).prop_map(
        |((ty, values), count, start_time, end_time)| {
            (
                ty,
                Statistics {
                    count,
                    start_time,
                    end_time,
                    values,
                },
            )
        },
    )
}

fn timeseries() -> impl Strategy<Value = TimeseriesMetadata> {
    (
        typed_statistics(),
        any::<bool>(),
        prop::sample::select(vec![0u8, 0x40, 0x80]),
        name(),
        prop::collection::vec(any::<i64>(), 1..4),
    )
        .prop_map(|((ty, stats), multi, mask, id, offsets)| {
            let offsets = if multi {
                offsets
            } else {
                offsets[..1].to_vec()
            };
            TimeseriesMetadata {
                timeseries_type: mask | u8::from(multi),
                measurement_id: id,
                data_type: ty,
                chunk_metadata: offsets
                    .into_iter()
                    .map(|o| ChunkMetadata {
                        offset_of_chunk_header: o,
                        statistics: multi.then(|| stats.clone()),
                    })
                    .collect(),
                statistics: stats,
            }
        })
}

fn node(level: IndexLevel) -> impl Strategy<Value = MetadataIndexNode> {
    let key = match level {
        IndexLevel::Device => device_id()
            .prop_map(|d| IndexKey::Device(DeviceKey::Id(d)))
            .boxed(),
        IndexLevel::Measurement => name().prop_map(IndexKey::Measurement).boxed(),
    };
    let types = match level {
        IndexLevel::Device => vec![
            MetadataIndexNodeType::InternalDevice,
            MetadataIndexNodeType::LeafDevice,
        ],
        IndexLevel::Measurement => vec![
            MetadataIndexNodeType::InternalMeasurement,
            MetadataIndexNodeType::LeafMeasurement,
        ],
    };
    (
        prop::collection::vec((key, 0i64..1000), 0..6),
        0i64..10_000,
        prop::sample::select(types),
    )
        .prop_map(|(mut entries, end, node_type)| {
            // Sorted keys and ascending offsets: a node that follows the lookup rules.
            entries.sort_by(|a, b| a.0.compare(&b.0).unwrap_or(Ordering::Equal));
            let mut offsets: Vec<i64> = entries.iter().map(|e| e.1).collect();
            offsets.sort_unstable();
            MetadataIndexNode {
                children: entries
                    .into_iter()
                    .zip(offsets)
                    .map(|((key, _), offset)| MetadataIndexEntry { key, offset })
                    .collect(),
                end_offset: 1000 + end,
                node_type,
            }
        })
}

fn table_schema() -> impl Strategy<Value = TableSchema> {
    let column = (
        name(),
        prop::sample::select(TSDataType::ALL.to_vec()),
        prop::sample::select(TSEncoding::ALL.to_vec()),
        prop::sample::select(CompressionType::ALL.to_vec()),
        prop::sample::select(ColumnCategory::ALL.to_vec()),
        prop::collection::vec((prop::option::of(name()), prop::option::of(name())), 0..2),
    )
        .prop_map(|(n, ty, enc, comp, category, properties)| TableColumn {
            schema: MeasurementSchema {
                properties,
                ..MeasurementSchema::new(n, ty, enc, comp)
            },
            category,
        });
    prop::collection::vec(column, 0..4).prop_map(|columns| TableSchema { columns })
}

fn metadata() -> impl Strategy<Value = TsFileMetadata> {
    (
        prop::collection::vec((name(), node(IndexLevel::Device)), 0..3),
        prop::collection::vec((name(), table_schema()), 0..3),
        any::<i64>(),
        prop::collection::vec(name(), 0..4),
        prop::collection::vec((name(), bin()), 0..4),
    )
        .prop_map(|(roots, schemas, meta_offset, paths, props)| {
            let mut bloom_filter = BloomFilter::with_capacity(paths.len(), 0.05);
            for p in &paths {
                bloom_filter.add(p);
            }
            if paths.is_empty() {
                bloom_filter = BloomFilter::default();
            }
            TsFileMetadata {
                table_roots: roots
                    .into_iter()
                    .map(|(table_name, root)| TableIndexRoot { table_name, root })
                    .collect(),
                table_schemas: schemas
                    .into_iter()
                    .map(|(table_name, schema)| NamedTableSchema { table_name, schema })
                    .collect(),
                meta_offset,
                bloom_filter,
                properties: props
                    .into_iter()
                    .map(|(key, value)| Property { key, value })
                    .collect(),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn statistics_round_trip((ty, s) in typed_statistics()) {
        let bytes = bytes_of(|w| s.encode(w));
        let back = Statistics::decode(&mut Cursor::new(&bytes, 0), ty).unwrap();
        // Compared as bytes: float fields may be NaN.
        prop_assert_eq!(bytes_of(|w| back.encode(w)), bytes);
    }

    #[test]
    fn timeseries_metadata_round_trips(t in timeseries()) {
        let bytes = bytes_of(|w| t.encode(w));
        let mut c = Cursor::new(&bytes, 0);
        let back = TimeseriesMetadata::decode(&mut c).unwrap();
        prop_assert!(c.is_empty());
        prop_assert_eq!(back.chunk_metadata.len(), t.chunk_metadata.len());
        prop_assert_eq!(bytes_of(|w| back.encode(w)), bytes);
    }

    #[test]
    fn valid_nodes_round_trip_and_pass_the_checks(
        n in prop_oneof![node(IndexLevel::Device), node(IndexLevel::Measurement)]
    ) {
        let level = n.node_type.level();
        let bytes = bytes_of(|w| n.encode(w));
        let back = MetadataIndexNode::decode_checked(&bytes, 0, FormatVersion::V4, level, None)
            .unwrap();
        prop_assert_eq!(back, n);
    }

    #[test]
    fn tsfile_metadata_round_trips(m in metadata()) {
        let bytes = bytes_of(|w| m.encode(w));
        let back = TsFileMetadata::decode(&bytes, 500).unwrap();
        prop_assert_eq!(&back, &m);
        prop_assert_eq!(bytes_of(|w| back.encode(w)), bytes);
    }

    #[test]
    fn bloom_filter_has_no_false_negatives(paths in prop::collection::vec(name(), 1..20)) {
        let mut f = BloomFilter::with_capacity(paths.len(), 0.05);
        for p in &paths {
            f.add(p);
        }
        let bytes = bytes_of(|w| f.encode(w));
        let back = BloomFilter::decode(&mut Cursor::new(&bytes, 0)).unwrap();
        prop_assert_eq!(back.bits.last().copied().map(|b| b != 0), Some(true));
        for p in &paths {
            prop_assert!(back.might_contain(p));
        }
    }

    #[test]
    fn device_ids_round_trip_and_order_totally(a in device_id(), b in device_id(), c in device_id()) {
        let bytes = bytes_of(|w| a.encode(w));
        let back = DeviceId::decode(&mut Cursor::new(&bytes, 0)).unwrap();
        prop_assert_eq!(back.segments(), a.segments());
        prop_assert_eq!(a.cmp(&b), b.cmp(&a).reverse());
        prop_assert_eq!(a == b, a.cmp(&b) == Ordering::Equal);
        if a <= b && b <= c {
            prop_assert!(a <= c);
        }
        let mut padded = a.segments().to_vec();
        padded.push(None);
        prop_assert_eq!(DeviceId::new(padded).cmp(&a), Ordering::Equal);
    }
}
