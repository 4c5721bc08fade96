//! Writes the bundled capture `fixtures/std-mix.pcapng` (or the path given) from
//! `rocescope_testsupport::testgen::standard_mix`. Run after changing the generator:
//! `cargo run -p rocescope-testsupport --example write_std_mix`; `pcap-tools/cli/tests/fixtures.rs` fails until
//! the committed file matches a fresh run.

fn main() -> std::io::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/std-mix.pcapng").to_string());
    let frames = rocescope_testsupport::testgen::standard_mix();
    rocescope_testsupport::testgen::write_pcapng(&path, &frames)?;
    eprintln!("wrote {} frames to {path}", frames.len());
    Ok(())
}
