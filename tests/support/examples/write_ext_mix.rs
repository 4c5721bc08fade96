//! Writes the bundled capture `fixtures/ext-mix.pcapng` (or the path given) from
//! `rocescope_testsupport::testgen_ext::extension_mix`: all six profiles interleaved, with ordinary RoCE
//! marked DSCP 26/27. `pcap-tools/cli/tests/ext_mix.rs` fails until the committed file matches.

fn main() -> std::io::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/ext-mix.pcapng").to_string());
    let bytes = rocescope_testsupport::testgen_ext::extension_mix_pcapng();
    std::fs::write(&path, &bytes)?;
    eprintln!("wrote {} bytes to {path}", bytes.len());
    Ok(())
}
