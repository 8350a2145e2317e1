//! The JSON-lines scanners: this CPU's vector path, the portable path and the scan split in
//! byte ranges must give the same index (or the same error) on any input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lake_locators::fuzzing::json(data);
});
