//! `lake-map`: the Lake Map, a catalog of a directory of data files in one Arrow IPC file.
//!
//! Layer 2 of Bazan's lake stack, on top of the format locators of `lake-locators`. It owns
//! discovery (which files of a lake are data), the handler registry (built-in and dynamic
//! handlers), the map file (`.br_map.bazan`, schemas 1–3, written atomically, loaded
//! zero-copy from a memory map), global row numbering, `locate_row` and `slice`. It must
//! never parse a data format itself (that is a locator's job) and never depend on TsFile.
