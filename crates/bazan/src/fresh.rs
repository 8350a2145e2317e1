//! Freshness of answers that come from the map alone: [`Lake::check_fresh`] compares the
//! files behind a set of entries with what the map stored, the same size and mtime check
//! that every read runs before it opens a file (`lake_map::LakeMap::check_fresh`).
//!
//! A front end calls it before it answers from the map without reading the files (a row
//! count, the global row numbers or paths of a range, files skipped by their statistics), so
//! that such an answer fails `Stale` exactly when a read of the same rows would. A local lake
//! checks one `stat` per file; many files are checked on several threads.

use crate::{Lake, Result};

/// Entries checked on one thread; more are split over the available cores.
const PER_THREAD: usize = 2048;

impl Lake {
    /// Checks that the file of every entry in `files` (indices into the map) still has the
    /// size and mtime the map stored; the first changed, missing or escaping file in entry
    /// order is a [`crate::ErrorKind::Stale`] (or I/O) error naming it. An index past the end
    /// of the map is [`crate::ErrorKind::OutOfRange`].
    pub fn check_fresh(&self, files: &[usize]) -> Result<()> {
        for &i in files {
            self.check_index(i)?;
        }
        // A lake in an object store: one listing of its prefix, compared by size and ETag.
        if let Some(remote) = crate::remote::remote_of(&self.map) {
            return crate::remote::check_fresh(&self.map, &remote.store, files);
        }
        // Few files are checked on this thread, without asking for the core count, which
        // reads the cgroup files each time.
        if files.len() <= PER_THREAD {
            return files.iter().try_for_each(|&i| self.check_one(i));
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(files.len().div_ceil(PER_THREAD));
        if threads <= 1 {
            return files.iter().try_for_each(|&i| self.check_one(i));
        }
        let chunk = files.len().div_ceil(threads);
        // Each thread stops at its first stale entry; the earliest chunk's error is reported,
        // so the answer names the same file whatever the thread count.
        let errors: Vec<Result<()>> = std::thread::scope(|s| {
            let handles: Vec<_> = files
                .chunks(chunk)
                .map(|part| s.spawn(move || part.iter().try_for_each(|&i| self.check_one(i))))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(crate::Error::new(
                            crate::ErrorKind::Other,
                            "a freshness check thread panicked",
                        ))
                    })
                })
                .collect()
        });
        errors.into_iter().collect()
    }

    /// [`Lake::check_fresh`] of every entry of the map.
    pub fn check_all_fresh(&self) -> Result<()> {
        let all: Vec<usize> = (0..self.map.total_files()).collect();
        self.check_fresh(&all)
    }

    fn check_one(&self, i: usize) -> Result<()> {
        self.map.check_fresh(i)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::ErrorKind;

    fn lake(n: usize) -> (tempfile::TempDir, crate::Lake) {
        let dir = tempfile::tempdir().expect("temp dir");
        for i in 0..n {
            std::fs::write(dir.path().join(format!("f{i:05}.csv")), "a\n1\n").expect("write");
        }
        crate::create_map(dir.path(), &crate::CreateOptions::default()).expect("map");
        let lake = crate::load_map(dir.path()).expect("load");
        (dir, lake)
    }

    #[test]
    fn a_changed_file_is_stale_and_named() {
        let (dir, lake) = lake(3);
        lake.check_all_fresh().expect("fresh");
        std::fs::write(dir.path().join("f00001.csv"), "a\n1\n2\n").expect("rewrite");
        let e = lake.check_all_fresh().expect_err("stale");
        assert_eq!(e.kind(), ErrorKind::Stale, "{e}");
        assert!(e.to_string().contains("f00001.csv"), "{e}");
        // Entries that did not change still pass.
        lake.check_fresh(&[0, 2]).expect("others fresh");
        let past = lake.check_fresh(&[7]).expect_err("past the end");
        assert_eq!(past.kind(), ErrorKind::OutOfRange);
    }

    #[test]
    fn many_files_report_the_first_stale_entry() {
        let (dir, lake) = lake(2 * super::PER_THREAD + 10);
        lake.check_all_fresh().expect("fresh");
        let late = format!("f{:05}.csv", 2 * super::PER_THREAD + 5);
        let early = format!("f{:05}.csv", 100);
        std::fs::remove_file(dir.path().join(&late)).expect("remove");
        let e = lake.check_all_fresh().expect_err("stale");
        assert!(e.to_string().contains(&late), "{e}");
        std::fs::write(dir.path().join(&early), "a\n22\n").expect("rewrite");
        let e = lake.check_all_fresh().expect_err("stale");
        assert!(e.to_string().contains(&early), "{e}");
    }
}
