//! Native InfiniBand's ICRC and VCRC (docs/link-types.md) against an independent CRC
//! implementation: `tests/ib_crc_crcmod.py` computes both with Python's `crcmod` (configured
//! with the IBTA polynomials, its own masking of the variant fields) over the bytes of a
//! capture of link type 247, and its verdicts must be rocescope's, frame for frame: the packets
//! of `testgen_ib` (all good), copies with a payload byte changed (both bad), with the VL or a
//! global packet's DLID changed (fields the ICRC does not cover: ICRC good, VCRC bad), and the
//! bundled `fixtures/ib-native.pcapng` (all good). `rocescope check` fails the corrupted capture.
//!
//! Needs `python3` with crcmod (`pip install crcmod`); the test fails without them (`.ci/run`
//! installs crcmod).

use std::path::{Path, PathBuf};
use std::process::Command;

use rocescope_testsupport::testgen_ib;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `N icrc=… vcrc=…` per frame, from the script.
fn crcmod_verdicts(capture: &Path) -> Vec<String> {
    let out = Command::new("python3")
        .arg(root().join("tests/ib_crc_crcmod.py"))
        .arg(capture)
        .output()
        .expect("running python3");
    assert!(out.status.success(), "tests/ib_crc_crcmod.py failed:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
}

/// The same lines from rocescope's `rocescope.icrc.status` and `rocescope.vcrc.status`.
fn rocescope_verdicts(capture: &Path) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["decode", "--format", "fields", "-e", "frame.number", "-e", "rocescope.icrc.status", "-e", "rocescope.vcrc.status"])
        .arg(capture)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            format!("{} icrc={} vcrc={}", c[0], c[1], c[2])
        })
        .collect()
}

#[test]
fn icrc_and_vcrc_agree_with_crcmod() {
    match Command::new("python3").args(["-c", "import crcmod"]).output() {
        Err(e) => panic!("python3 is needed to compare the InfiniBand CRCs with crcmod ({e})"),
        Ok(o) if !o.status.success() => {
            panic!("crcmod is needed (`pip install crcmod`)\n{}", String::from_utf8_lossy(&o.stderr))
        }
        Ok(_) => {}
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("ib-crc-crcmod-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    // The packets, then corrupted copies: (frame, expected ICRC verdict, VCRC verdict).
    let frames = testgen_ib::ib_native();
    let mut all = frames.clone();
    let mut expect: Vec<(&str, &str)> = frames.iter().map(|_| ("good", "good")).collect();
    for f in &frames {
        let n = f.bytes.len();
        let mut payload = f.clone();
        payload.bytes[n - 7] ^= 0x10; // the last byte before the ICRC
        all.push(payload);
        expect.push(("bad", "bad"));
        let mut vl = f.clone();
        vl.bytes[0] ^= 0x70;
        all.push(vl);
        expect.push(("good", "bad"));
        if f.bytes[1] & 3 == 3 {
            let mut dlid = f.clone();
            dlid.bytes[3] ^= 0x01;
            all.push(dlid);
            expect.push(("good", "bad"));
        }
    }
    let path = dir.join("ib-crc.pcapng");
    testgen_ib::write_pcapng_ib(&path, &all).unwrap();

    let theirs = crcmod_verdicts(&path);
    let ours = rocescope_verdicts(&path);
    let want: Vec<String> = expect.iter().enumerate().map(|(i, (ic, vc))| format!("{} icrc={ic} vcrc={vc}", i + 1)).collect();
    assert_eq!(theirs, want, "crcmod's verdicts");
    assert_eq!(ours, want, "rocescope's verdicts");

    // `check` fails the capture and lists each bad frame's mismatches.
    let out = Command::new(env!("CARGO_BIN_EXE_rocescope")).arg("check").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("VCRC mismatch").count(), expect.iter().filter(|e| e.1 == "bad").count(), "{text}");

    // The bundled fixture.
    let fixture = root().join("fixtures/ib-native.pcapng");
    let theirs = crcmod_verdicts(&fixture);
    assert_eq!(theirs.len(), frames.len());
    assert!(theirs.iter().all(|l| l.ends_with("icrc=good vcrc=good")), "{theirs:?}");
    assert_eq!(rocescope_verdicts(&fixture), theirs);
    let _ = std::fs::remove_dir_all(&dir);
}
