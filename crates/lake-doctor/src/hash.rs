//! BLAKE3 digests of whole files: memory-mapped and hashed with blake3's own rayon
//! parallelism inside one file (`update_mmap_rayon`), which falls back to ordinary reads for
//! files too small to be worth mapping.

use std::io;
use std::path::Path;

/// The lowercase hex BLAKE3 digest of the file at `path`.
///
/// Large files are split across the rayon pool by blake3 itself; calling this from several
/// rayon tasks at once (one per file) is how the doctor hashes a lake of many files.
pub fn blake3_file(path: &Path) -> io::Result<String> {
    let mut hasher = blake3::Hasher::new();
    hasher.update_mmap_rayon(path)?;
    Ok(hasher.finalize().to_hex().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_match_one_shot_hash() {
        let dir = tempfile::tempdir().unwrap();
        // Below and above blake3's 16 KiB mmap threshold, and past one 1 KiB chunk boundary.
        for len in [0usize, 1, 1025, 16 * 1024 - 1, 16 * 1024, 300_000] {
            let data: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let p = dir.path().join(format!("f{len}.bin"));
            std::fs::write(&p, &data).unwrap();
            assert_eq!(
                blake3_file(&p).unwrap(),
                blake3::hash(&data).to_hex().to_string(),
                "{len}"
            );
        }
        let err = blake3_file(&dir.path().join("absent")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
