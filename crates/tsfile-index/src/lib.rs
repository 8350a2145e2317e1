//! `tsfile-index`: opening Apache TsFile files and reading their series into Arrow.
//!
//! Layer 2 of Bazan's TsFile stack, on top of the codecs of `tsfile-format`. It owns file
//! access (through one byte-range trait implemented for files, memory maps and in-memory
//! bytes), walking the device/measurement index tree, reading chunks and pages, and the Arrow
//! bridge. It must never implement a byte codec itself (those live in `tsfile-format`) and
//! never knows about lakes or maps.
