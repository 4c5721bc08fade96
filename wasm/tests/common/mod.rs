//! What the wasm crate's tests share: the workspace root and the `rocescope` binary.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The workspace's `rocescope` binary: `ROCESCOPE_BIN`, else `target/<profile>/rocescope` beside
/// the test executable, built with cargo when missing.
#[allow(dead_code)]
pub fn bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("ROCESCOPE_BIN") {
            return PathBuf::from(p);
        }
        // target/<profile>/deps/cli_parity-HASH -> target/<profile>/rocescope
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().unwrap().parent().unwrap();
        let p = profile_dir.join(format!("rocescope{}", std::env::consts::EXE_SUFFIX));
        if !p.exists() {
            let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
            cmd.args(["build", "-p", "rocescope", "--bin", "rocescope"]).current_dir(root());
            if profile_dir.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            if let Some(target_dir) = profile_dir.parent() {
                cmd.env("CARGO_TARGET_DIR", target_dir);
            }
            let st = cmd.status().expect("run cargo build -p rocescope");
            assert!(st.success(), "cargo build -p rocescope failed");
        }
        assert!(p.exists(), "no rocescope binary at {}", p.display());
        p
    })
}

/// The bundled captures (`fixtures/*.pcap`, `*.pcapng`), sorted.
#[allow(dead_code)]
pub fn fixtures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap" || x == "pcapng"))
        .collect();
    v.sort();
    v
}
