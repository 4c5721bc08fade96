//! Build a frame from the input with the codec's builders, decode it, and check every header
//! reads back as built with a good ICRC (see `rocescope_testsupport::fuzzing::fuzz_roundtrip`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rocescope_testsupport::fuzzing::fuzz_roundtrip(data));
