//! What the export tests (export_duckdb.rs, export_spark.rs) share: the binary, and an export of
//! captures read back by a Python script.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// `rocescope ARGS`' standard output (the command must succeed).
pub fn rocescope(args: &[&str]) -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope");
    assert!(o.status.success(), "rocescope {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

/// `rocescope ARGS`' standard output, the command exiting with one of `codes`.
#[allow(dead_code)] // (export_spark.rs reads no damaged capture)
pub fn rocescope_status(args: &[&str], codes: &[i32]) -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope");
    let code = o.status.code().unwrap_or(-1);
    assert!(codes.contains(&code), "rocescope {args:?} exited with {code}: {}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

/// `rocescope ARGS`' JSON.
pub fn json(args: &[&str]) -> Value {
    serde_json::from_slice(&rocescope(args)).expect("JSON")
}

/// Exports `captures` into `out` under the partition folders `partition`, then runs
/// `python3 SCRIPT OUT` and answers its JSON; `needs` says what to install when it fails.
pub fn export_and_read(captures: &[PathBuf], out: &Path, partition: &str, script: &Path, needs: &str) -> Value {
    let mut args = vec!["export".to_string()];
    args.extend(captures.iter().map(|p| p.to_str().unwrap().to_string()));
    args.extend(["-o", out.to_str().unwrap(), "--partition", partition].map(String::from));
    rocescope(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let o = Command::new("python3").arg(script).arg(out).output().expect("run python3");
    let name = script.file_name().unwrap().to_string_lossy();
    assert!(o.status.success(), "{name} ({needs}): {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("the script's JSON")
}
