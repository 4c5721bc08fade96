//! The bundled capture `fixtures/std-mix.pcapng` is exactly what `rocescope_testsupport::testgen` generates
//! today (fixed timestamps, so byte for byte), and rocescope decodes it cleanly. After changing
//! the generator, regenerate it with `cargo run -p rocescope-testsupport --example write_std_mix`.

use std::path::PathBuf;
use std::process::Command;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/std-mix.pcapng")
}

#[test]
fn std_mix_fixture_is_up_to_date() {
    let want = rocescope_testsupport::testgen::pcapng_bytes(&rocescope_testsupport::testgen::standard_mix());
    let have = std::fs::read(fixture()).unwrap_or_else(|e| panic!("{}: {e}", fixture().display()));
    let first_diff = want.iter().zip(&have).position(|(a, b)| a != b);
    assert!(
        want == have,
        "fixtures/std-mix.pcapng is stale ({} bytes committed, {} generated, first difference at byte {:?}); \
         regenerate it with `cargo run -p rocescope-testsupport --example write_std_mix`",
        have.len(),
        want.len(),
        first_diff.unwrap_or(want.len().min(have.len()))
    );
}

#[test]
fn std_mix_fixture_checks_clean() {
    let out = Command::new(env!("CARGO_BIN_EXE_rocescope")).arg("check").arg(fixture()).output().unwrap();
    assert!(
        out.status.success(),
        "rocescope check failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["decode", "--format", "fields", "-e", "frame.number"])
        .arg(fixture())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&lines.stdout).lines().count(), rocescope_testsupport::testgen::standard_mix().len());
}
