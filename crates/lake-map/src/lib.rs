//! `lake-map`: the Lake Map, a catalog of a directory of data files in one Arrow IPC file.
//!
//! Layer 2 of Bazan's lake stack, on top of the format locators of `lake-locators`. It owns
//! discovery (which files of a lake are data), the handler registry (built-in and dynamic
//! handlers), the map file (`.br_map.bazan`, schemas 1–3, written atomically, loaded
//! zero-copy from a memory map), global row numbering, `locate_row` and `slice`. It must
//! never parse a data format itself (that is a locator's job) and never depend on TsFile.
//!
//! The usual flow: [`create_map`] (discover, index in parallel, write), later [`load_map`],
//! then [`LakeMap::locate_row`] and [`LakeMap::slice`]; [`update_map`] refreshes a map by
//! re-indexing only the files that changed.

pub mod config;
pub mod create;
pub mod discovery;
pub mod error;
mod etag;
pub mod handlers;
pub mod lake_map;
pub mod map_file;
pub mod read;
pub mod show;
pub mod source;
mod splice;
pub mod update;

pub use config::{DEFAULT_STRIDE, Fingerprint, MapConfig, TextEncoding};
pub use create::{
    CreateOptions, CreateReport, FileFailure, Progress, ProgressFn, ProgressTally, create_map,
    create_map_with, entry_from_index, hash_file,
};
pub use discovery::{
    DiscoveredFile, Discovery, LEGACY_MAP_FILE_NAME, MAP_FILE_NAME, SkipReason, Skipped,
    classify_relative, discover, resolve_map_path,
};
pub use error::{Error, Result};
pub use etag::ETAG_COLUMN;
pub use handlers::{Handler, HandlerRegistry};
pub use lake_locators::StatsColumns;
pub use lake_map::{
    Entry, EntryHead, LakeMap, Location, MapEntry, Segment, assign_first_global_rows,
};
pub use map_file::{MAP_SCHEMA, load_map, load_map_file, map_schema, write_map, write_map_to};
pub use read::FileSlice;
pub use source::{EntrySource, ReadNeed, SourceEntry};
pub use update::{UpdateOptions, UpdateReport, update_map, update_map_with};
