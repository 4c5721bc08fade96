//! rocescope-testsupport (not published): what tests, benchmarks and fuzz targets share.
//!
//! - [`testgen`]: the standard mix of `fixtures/std-mix.pcapng` (every IBTA opcode, CM, PFC,
//!   IPv4/IPv6/VLAN encapsulations), built with the codec's builders.
//! - [`testgen_ext`]: the research-extension mix of `fixtures/ext-mix.pcapng`.
//! - [`testgen_ib`]: native InfiniBand packets (link type 247) of `fixtures/ib-native.pcapng`.
//! - [`fuzzing`]: the fuzz targets' bodies (`fuzz/`), also replayed over the corpus by
//!   `tests/fuzz_corpus_replay.rs`.

pub mod fuzzing;
pub mod testgen;
pub mod testgen_ext;
pub mod testgen_ib;
