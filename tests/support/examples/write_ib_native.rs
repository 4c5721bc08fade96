//! Writes the bundled capture `fixtures/ib-native.pcapng` (or the path given) from
//! `rocescope_testsupport::testgen_ib::ib_native`: native InfiniBand packets, link type 247.
//! Run after changing the generator: `cargo run -p rocescope-testsupport --example write_ib_native`;
//! `pcap-tools/cli/tests/fixtures.rs` fails until the committed file matches a fresh run.

fn main() -> std::io::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/ib-native.pcapng").to_string());
    let frames = rocescope_testsupport::testgen_ib::ib_native();
    rocescope_testsupport::testgen_ib::write_pcapng_ib(&path, &frames)?;
    eprintln!("wrote {} frames to {path}", frames.len());
    Ok(())
}
