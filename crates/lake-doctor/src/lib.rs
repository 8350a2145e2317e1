//! `lake-doctor`: drift detection between a Lake Map and the files on disk.
//!
//! Layer 3 of Bazan's lake stack. It compares a loaded map with the lake as it is now, with
//! the same discovery rules and handlers as map creation, and reports each file as healthy,
//! modified, unindexed or missing. It only reads: it must never write the map or any file.
