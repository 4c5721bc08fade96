//! Writes the bundled capture `fixtures/std-mix.pcapng` (or the path given) from
//! `rocescope::testgen::standard_mix`. Run after changing the generator:
//! `cargo run -p rocescope --example write_std_mix`; `pcap-tools/tests/fixtures.rs` fails until
//! the committed file matches a fresh run.

fn main() -> std::io::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/std-mix.pcapng").to_string());
    let frames = rocescope::testgen::standard_mix();
    rocescope::testgen::write_pcapng(&path, &frames)?;
    eprintln!("wrote {} frames to {path}", frames.len());
    Ok(())
}
