//! Unit tests of the epoch plan and reader over small CSV lakes with blocks of very
//! different sizes.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;

use super::*;
use crate::lake::{CreateOptions, create_map};

/// A lake of CSV files with these row counts (column `id` is the global row number), mapped
/// with checkpoints every `stride` rows.
fn lake(rows: &[u64], stride: u64) -> (tempfile::TempDir, Arc<Lake>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut g = 0u64;
    for (i, &n) in rows.iter().enumerate() {
        let mut text = String::from("id,name\n");
        for _ in 0..n {
            text.push_str(&format!("{g},row{g}\n"));
            g += 1;
        }
        std::fs::write(dir.path().join(format!("f{i:02}.csv")), text).expect("write");
    }
    let options = CreateOptions {
        stride,
        threads: Some(1),
        ..CreateOptions::default()
    };
    let created = create_map(dir.path(), &options).expect("map");
    (dir, Arc::new(created.lake))
}

fn options(shuffle: Shuffle, bs: usize, world: u64, rank: u64) -> EpochOptions {
    EpochOptions {
        batch_size: bs,
        shuffle,
        seed: 11,
        epoch: 2,
        shard: Shard {
            index: rank,
            count: world,
        },
        buffer_rows: 40,
        ..EpochOptions::default()
    }
}

/// Every batch of a part, as planned.
fn planned(lake: &Lake, o: &EpochOptions) -> Vec<Vec<u64>> {
    let plan = lake.epoch_plan(o).expect("plan");
    (0..plan.num_batches())
        .map(|b| plan.batch_rows(b))
        .collect()
}

#[test]
fn the_permutation_is_a_bijection_keyed_by_its_seed() {
    for n in [0u64, 1, 2, 3, 4, 5, 17, 64, 100, 1000, 4097] {
        let p = Perm::new(n, 42);
        let mut seen = vec![false; n as usize];
        for i in 0..n {
            let v = p.at(i);
            assert!(v < n && !seen[v as usize], "n={n}: {i} -> {v}");
            seen[v as usize] = true;
        }
    }
    let a: Vec<u64> = (0..1000).map(|i| Perm::new(1000, 1).at(i)).collect();
    let b: Vec<u64> = (0..1000).map(|i| Perm::new(1000, 2).at(i)).collect();
    assert_ne!(a, b);
    // Not the identity, and spread: few fixed points.
    let fixed = a
        .iter()
        .enumerate()
        .filter(|(i, v)| *i as u64 == **v)
        .count();
    assert!(fixed < 20, "{fixed} fixed points");
}

#[test]
fn every_row_once_per_epoch_over_ranks_and_workers() {
    // Blocks of 1, 3, 16 and 37 rows, an empty file, and a big one.
    let (_dir, lake) = lake(&[1, 0, 37, 3, 250, 16, 90], 16);
    let n = lake.total_rows();
    for shuffle in [Shuffle::None, Shuffle::Block, Shuffle::Global] {
        for drop_last in [false, true] {
            for world in 1..=4u64 {
                for workers in 1..=3u64 {
                    for bs in [1usize, 7, 32] {
                        let mut count: HashMap<u64, u64> = HashMap::new();
                        let mut per_rank = Vec::new();
                        let mut batch_sizes = Vec::new();
                        for rank in 0..world {
                            let mut rank_batches = 0;
                            for w in 0..workers {
                                let mut o = options(shuffle, bs, world, rank);
                                o.drop_last = drop_last;
                                o.worker = Shard {
                                    index: w,
                                    count: workers,
                                };
                                for batch in planned(&lake, &o) {
                                    rank_batches += 1;
                                    batch_sizes.push(batch.len());
                                    for g in batch {
                                        *count.entry(g).or_default() += 1;
                                    }
                                }
                            }
                            per_rank.push(rank_batches);
                        }
                        let case = format!(
                            "{shuffle:?} drop_last={drop_last} world={world} workers={workers} bs={bs}"
                        );
                        assert!(
                            per_rank.iter().all(|&b| b == per_rank[0]),
                            "{case}: {per_rank:?}"
                        );
                        let read: u64 = count.values().sum();
                        if drop_last {
                            let r = (n / world) / bs as u64 * bs as u64;
                            assert_eq!(read, world * r, "{case}");
                            assert!(count.values().all(|&c| c == 1), "{case}: a row twice");
                            assert!(n - read < world * (bs as u64 + 1), "{case}");
                            assert!(batch_sizes.iter().all(|&s| s == bs), "{case}");
                        } else {
                            let r = n.div_ceil(world);
                            assert_eq!(read, world * r, "{case}");
                            assert_eq!(count.len() as u64, n, "{case}: a row missing");
                            let twice = count.values().filter(|&&c| c == 2).count() as u64;
                            assert!(count.values().all(|&c| c <= 2), "{case}");
                            assert_eq!(twice, world * r - n, "{case}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_batches_of_a_rank_do_not_depend_on_its_worker_count() {
    let (_dir, lake) = lake(&[5, 300, 40, 1, 120], 16);
    for shuffle in [Shuffle::None, Shuffle::Block, Shuffle::Global] {
        for drop_last in [false, true] {
            let mut o = options(shuffle, 7, 3, 1);
            o.drop_last = drop_last;
            let whole = planned(&lake, &o);
            for workers in 2..=5 {
                let mut split = Vec::new();
                for w in 0..workers {
                    o.worker = Shard {
                        index: w,
                        count: workers,
                    };
                    split.extend(planned(&lake, &o));
                }
                o.worker = Shard::WHOLE;
                assert_eq!(
                    split, whole,
                    "{shuffle:?} drop_last={drop_last} workers={workers}"
                );
            }
            // And read so: each worker's reader returns its planned batches.
            o.worker = Shard { index: 1, count: 3 };
            o.with_gid = true;
            let read: Vec<Vec<u64>> = lake
                .epoch(&o, None)
                .expect("reader")
                .map(|b| gids(&b.expect("read")))
                .collect();
            assert_eq!(read, planned(&lake, &o), "{shuffle:?}");
            o.with_gid = false;
            o.worker = Shard::WHOLE;
        }
    }
}

#[test]
fn the_order_is_a_pure_function_of_seed_and_epoch() {
    let (_dir, lake) = lake(&[5, 300, 40, 120], 16);
    for shuffle in [Shuffle::Block, Shuffle::Global] {
        let o = options(shuffle, 8, 1, 0);
        let a = planned(&lake, &o);
        assert_eq!(a, planned(&lake, &o), "{shuffle:?}");
        let next = EpochOptions {
            epoch: o.epoch + 1,
            ..o.clone()
        };
        assert_ne!(a, planned(&lake, &next), "{shuffle:?}: epochs alike");
        let other = EpochOptions { seed: 12, ..o };
        assert_ne!(a, planned(&lake, &other), "{shuffle:?}: seeds alike");
        let flat: Vec<u64> = a.concat();
        let sorted: Vec<u64> = (0..lake.total_rows()).collect();
        assert_ne!(flat, sorted, "{shuffle:?}: not shuffled");
    }
    let none = planned(&lake, &options(Shuffle::None, 8, 1, 0)).concat();
    assert_eq!(none, (0..lake.total_rows()).collect::<Vec<u64>>());
}

fn gids(batch: &RecordBatch) -> Vec<u64> {
    batch
        .column_by_name("_gid")
        .expect("_gid")
        .as_primitive::<Int64Type>()
        .values()
        .iter()
        .map(|&g| g as u64)
        .collect()
}

#[test]
fn the_reader_returns_the_planned_rows_and_resumes_exactly() {
    let (_dir, lake) = lake(&[5, 300, 40, 1, 120], 16);
    for shuffle in [Shuffle::None, Shuffle::Block, Shuffle::Global] {
        let o = EpochOptions {
            with_gid: true,
            columns: Some(vec!["id".into()]),
            ..options(shuffle, 7, 2, 1)
        };
        let plan = planned(&lake, &o);
        let all: Vec<RecordBatch> = lake
            .epoch(&o, None)
            .expect("reader")
            .collect::<Result<_>>()
            .expect("read");
        assert_eq!(all.len(), plan.len());
        for (b, (batch, rows)) in all.iter().zip(&plan).enumerate() {
            assert_eq!(&gids(batch), rows, "{shuffle:?} batch {b}");
            // The data is the row's: column `id` holds the global row number.
            let ids: Vec<u64> = batch
                .column(0)
                .as_primitive::<Int64Type>()
                .values()
                .iter()
                .map(|&v| v as u64)
                .collect();
            assert_eq!(&ids, rows);
        }
        for stop in [0, 1, 5, 6, all.len() - 1, all.len()] {
            let mut first = lake.epoch(&o, None).expect("reader");
            for _ in 0..stop {
                first.next_batch().expect("batch").expect("read");
            }
            let state = EpochState::from_json(&first.state().to_json()).expect("state");
            assert_eq!(state, first.state());
            let rest: Vec<RecordBatch> = lake
                .epoch(&o, Some(&state))
                .expect("resumed")
                .collect::<Result<_>>()
                .expect("read");
            assert_eq!(rest.len(), all.len() - stop, "{shuffle:?} stop {stop}");
            for (a, b) in rest.iter().zip(&all[stop..]) {
                assert_eq!(gids(a), gids(b), "{shuffle:?} resumed at {stop}");
            }
        }
    }
}

#[test]
fn bad_shards_columns_and_states_are_errors() {
    let (_dir, lake) = lake(&[10], 4);
    let kind = |o: &EpochOptions| lake.epoch(o, None).map(|_| ()).unwrap_err().kind();
    let mut o = options(Shuffle::Global, 4, 0, 0);
    assert_eq!(kind(&o), ErrorKind::InvalidArgument);
    o.shard = Shard { index: 2, count: 2 };
    assert_eq!(kind(&o), ErrorKind::InvalidArgument);
    o.shard = Shard::WHOLE;
    o.worker = Shard { index: 3, count: 3 };
    assert_eq!(kind(&o), ErrorKind::InvalidArgument);
    o.worker = Shard::WHOLE;
    o.columns = Some(vec!["nope".into()]);
    let e = lake.epoch(&o, None).map(|_| ()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("nope"), "{e}");
    o.columns = None;
    o.batch_size = 0;
    assert_eq!(kind(&o), ErrorKind::InvalidArgument);
    o.batch_size = 4;
    let reader = lake.epoch(&o, None).expect("reader");
    let other = EpochOptions {
        seed: 99,
        ..o.clone()
    };
    let e = lake
        .epoch(&other, Some(&reader.state()))
        .map(|_| ())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let past = EpochState {
        position: 99,
        ..reader.state()
    };
    assert_eq!(
        lake.epoch(&o, Some(&past)).map(|_| ()).unwrap_err().kind(),
        ErrorKind::OutOfRange
    );
    assert!(EpochState::from_json(&serde_json::json!({"seed": 1})).is_err());
}

#[test]
fn a_file_changed_mid_epoch_is_a_stale_error_naming_it() {
    let (dir, lake) = lake(&[50, 50, 50, 50], 8);
    let o = EpochOptions {
        buffer_rows: 8,
        ..options(Shuffle::Block, 8, 1, 0)
    };
    let mut reader = lake.epoch(&o, None).expect("reader");
    reader.next_batch().expect("batch").expect("read");
    for i in 0..4 {
        let p = dir.path().join(format!("f{i:02}.csv"));
        let mut text = std::fs::read_to_string(&p).expect("read");
        text.push_str("999,extra\n");
        std::fs::write(&p, text).expect("write");
    }
    let err = reader
        .find_map(|r| r.err())
        .expect("a stale error before the end");
    assert_eq!(err.kind(), ErrorKind::Stale, "{err}");
    assert!(err.to_string().contains(".csv"), "{err}");
}

#[test]
fn balanced_ranges_cover_the_lake_at_block_boundaries() {
    let (_dir, lake) = lake(&[1, 0, 37, 3, 250, 16, 90], 16);
    let n = lake.total_rows();
    let bounds: Vec<u64> = lake
        .units(u64::MAX)
        .expect("units")
        .iter()
        .map(|u| u.end)
        .collect();
    for parts in 1..12 {
        let ranges = lake.balanced_ranges(parts).expect("ranges");
        assert!(ranges.len() <= parts);
        assert_eq!(ranges.first().map(|r| r.start), Some(0));
        assert_eq!(ranges.last().map(|r| r.end), Some(n));
        for w in ranges.windows(2) {
            assert_eq!(w[0].end, w[1].start);
            assert!(bounds.contains(&w[0].end));
        }
        let biggest = ranges.iter().map(|r| r.end - r.start).max().unwrap_or(0);
        // Within a block (16 rows) of an equal share.
        assert!(
            biggest <= n.div_ceil(parts as u64) + 16,
            "{parts}: {ranges:?}"
        );
    }
    assert!(lake.balanced_ranges(0).is_err());
}
