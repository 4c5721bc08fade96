//! Runs `tests/icrc_scapy.py`, the ICRC cross-check with scapy (WIRE.md A.5), against this
//! build's `rocescope` binary and the codec's builder: scapy-built random packets over IPv4 and
//! IPv6 must decode with scapy's ICRC and status `good`, corrupted ones `bad`, builder frames must
//! verify with scapy's `compute_icrc`, and the A.5 test vectors must match.
//!
//! Needs `python3` with scapy (`pip install scapy`); the test fails without them
//! (`.ci/run` installs scapy). The packets are random: the seed is printed, `ICRC_SCAPY_SEED=N`
//! repeats a run and `ICRC_SCAPY_COUNT=N` sets the number of packets per direction.

use std::path::Path;
use std::process::Command;

#[path = "../../../codec/examples/icrc_frames.rs"]
#[allow(dead_code)]
mod icrc_frames;

#[test]
fn icrc_matches_scapy() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    match Command::new("python3").args(["-c", "import scapy.contrib.roce"]).output() {
        Err(e) => panic!("python3 is needed to compare ICRCs with scapy ({e})"),
        Ok(o) if !o.status.success() => panic!(
            "scapy is needed to compare ICRCs (`pip install scapy`)\n{}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Ok(_) => {}
    }

    let seed: u64 = match std::env::var("ICRC_SCAPY_SEED") {
        Ok(s) => s.parse().expect("ICRC_SCAPY_SEED: an unsigned integer"),
        Err(_) => {
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            (t.as_nanos() as u64 ^ std::process::id() as u64) & 0xffff_ffff
        }
    };
    let count: usize =
        std::env::var("ICRC_SCAPY_COUNT").ok().map_or(340, |s| s.parse().expect("ICRC_SCAPY_COUNT: an unsigned integer"));

    // The builder's frames, made here (the same generator as the `icrc_frames` example) so the
    // script need not run cargo.
    let dir = std::env::temp_dir().join(format!("rocescope-icrc-scapy-{}-{seed}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let hex: String = icrc_frames::frames(seed, count)
        .iter()
        .map(|f| f.iter().map(|b| format!("{b:02x}")).collect::<String>() + "\n")
        .collect();
    let frames_file = dir.join("builder.hex");
    std::fs::write(&frames_file, hex).unwrap();

    let out = Command::new("python3")
        .arg(root.join("tests/icrc_scapy.py"))
        .args(["--seed", &seed.to_string(), "--count", &count.to_string()])
        .arg("--rocescope")
        .arg(env!("CARGO_BIN_EXE_rocescope"))
        .arg("--builder-frames")
        .arg(&frames_file)
        .current_dir(root)
        .output()
        .expect("running python3");
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "tests/icrc_scapy.py failed (exit {:?}; rerun with ICRC_SCAPY_SEED={seed}):\n{stdout}\n{stderr}",
        out.status.code()
    );
    assert!(stdout.trim_end().ends_with(" passed, 0 failed"), "unexpected summary:\n{stdout}");
}
