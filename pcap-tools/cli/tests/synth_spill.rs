//! `rocescope synth --truth` spills the run's records to temporary files in `TMPDIR`
//! (docs/truth.md, "Memory"): they are gone when it ends, and a `TMPDIR` it cannot write to
//! stops it at the start with a message naming the directory.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

fn synth(dir: &Path, tmpdir: &Path) -> Output {
    Command::new(BIN)
        .args("synth --stack gbn --messages 50 --loss 0.02".split_whitespace())
        .arg("-o")
        .arg(dir.join("x.pcapng"))
        .arg("--truth")
        .arg(dir.join("x.json"))
        .env("TMPDIR", tmpdir)
        .output()
        .unwrap()
}

#[test]
fn the_spill_files_go_with_the_run_and_an_unusable_tmpdir_is_reported() {
    let dir = std::env::temp_dir().join(format!("rocescope-spill-test-{}", std::process::id()));
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = synth(&dir, &tmp);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let truth = std::fs::read_to_string(dir.join("x.json")).unwrap();
    let t = rocescope_sim::truth::Truth::from_json(&truth).unwrap();
    assert!(t.summary.dropped > 0 && t.sim.transmissions.len() as u64 == t.summary.transmissions);
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "temporary files left behind");

    let missing = dir.join("no-such-dir");
    let out = synth(&dir, &missing);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("a temporary file for the truth in") && err.contains("no-such-dir"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
