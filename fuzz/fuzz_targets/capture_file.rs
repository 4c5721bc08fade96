//! A whole pcap/pcapng file: read every record with the streaming reader, decode and print each
//! frame (see `rocescope_testsupport::fuzzing::fuzz_capture`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rocescope_testsupport::fuzzing::fuzz_capture(data));
