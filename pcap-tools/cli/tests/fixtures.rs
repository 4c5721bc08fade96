//! The bundled capture `fixtures/std-mix.pcapng` is exactly what `rocescope_testsupport::testgen` generates
//! today (fixed timestamps, so byte for byte), and rocescope decodes it cleanly. After changing
//! the generator, regenerate it with `cargo run -p rocescope-testsupport --example write_std_mix`.
//! Likewise `fixtures/ib-native.pcapng` (native InfiniBand, `testgen_ib`, `--example write_ib_native`).

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

/// `fixtures/ib-native.pcapng` (native InfiniBand, link type 247) is what
/// `rocescope_testsupport::testgen_ib` generates today; regenerate it with
/// `cargo run -p rocescope-testsupport --example write_ib_native`.
#[test]
fn ib_native_fixture_is_up_to_date() {
    use rocescope_testsupport::testgen_ib;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/ib-native.pcapng");
    let want = testgen_ib::pcapng_bytes_ib(&testgen_ib::ib_native());
    let have = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(want == have, "fixtures/ib-native.pcapng is stale; regenerate it with `cargo run -p rocescope-testsupport --example write_ib_native`");
}

/// Every LRH field and the transport's fields of the native InfiniBand fixture, against the
/// values the generator was given (each frame's description: LNH, opcode, VL, SL, DLID, SLID,
/// payload length and pad), PktLen from the packet's length (all but the 2-byte VCRC, in
/// words), and both CRCs good.
#[test]
fn ib_native_fixture_decodes_every_lrh_field() {
    use rocescope_testsupport::testgen_ib;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/ib-native.pcapng");
    let fields = [
        "rocescope.lrh.vl",
        "rocescope.lrh.lver",
        "rocescope.lrh.sl",
        "rocescope.lrh.lnh",
        "rocescope.lrh.dlid",
        "rocescope.lrh.pktlen",
        "rocescope.lrh.slid",
        "rocescope.bth.opcode",
        "rocescope.bth.padcnt",
        "rocescope.payload_len",
        "rocescope.icrc.status",
        "rocescope.vcrc.status",
        "rocescope.warning",
    ];
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rocescope"));
    cmd.args(["decode", "--format", "fields"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.arg(&path).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let frames = testgen_ib::ib_native();
    assert_eq!(text.lines().count(), frames.len());
    for (line, f) in text.lines().zip(&frames) {
        // "IB local (LNH 2) opcode 0x04 VL 0 SL 0 DLID 0x0010 SLID 0x0c00 payload 8 pad 0"
        let w: Vec<&str> = f.desc.split(' ').collect();
        let lnh = w[3].trim_end_matches(')');
        let num = |s: &str| match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).unwrap(),
            None => s.parse().unwrap(),
        };
        let want = [
            num(w[7]).to_string(),
            "0".to_string(),
            num(w[9]).to_string(),
            lnh.to_string(),
            num(w[11]).to_string(),
            ((f.bytes.len() - 2) / 4).to_string(),
            num(w[13]).to_string(),
            num(w[5]).to_string(),
            num(w[17]).to_string(),
            num(w[15]).to_string(),
            "good".to_string(),
            "good".to_string(),
            String::new(),
        ];
        let got: Vec<&str> = line.split('\t').collect();
        assert_eq!(got, want, "{}", f.desc);
    }
}
