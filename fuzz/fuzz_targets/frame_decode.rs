//! One captured frame: the first byte picks the link type (Ethernet, Linux SLL, SLL2, raw IP),
//! verification and the original length; the rest is the frame. Decodes it, walks and formats
//! every field and calls every accessor (see `rocescope_testsupport::fuzzing::fuzz_frame`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rocescope_testsupport::fuzzing::fuzz_frame(data));
