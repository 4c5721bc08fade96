//! A whole pcap/pcapng file through the analysers: the flow table, the timeline with its plots,
//! the per-packet analysis fields and the streamed timeline (see
//! `rocescope_testsupport::fuzzing::fuzz_analysis`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rocescope_testsupport::fuzzing::fuzz_analysis(data));
