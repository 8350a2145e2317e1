//! Integration tests of `lake-doctor`.
