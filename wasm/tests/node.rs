//! The real wasm build, run by Node: `bash wasm/build.sh --no-install` (an incremental release
//! build for wasm32 plus wasm-bindgen), then `node --test wasm/test/node_test.mjs`, which also
//! checks that the wasm output equals this native build's byte for byte.
//!
//! Needs the wasm32-unknown-unknown target, wasm-bindgen-cli of the Cargo.lock version and
//! node; without them the test fails and says why (it never passes by skipping). `bash
//! wasm/build.sh` installs the first two (see wasm/README.md); `.ci/run` runs it first.

use std::path::Path;
use std::process::Command;

#[test]
fn node_runs_the_wasm_build() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    assert!(
        Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success()),
        "node is not installed (Debian: apt-get install nodejs)"
    );
    let mut build = Command::new("bash");
    build.args(["wasm/build.sh", "--no-install"]).current_dir(root);
    build.env("CARGO", std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    let o = build.output().expect("run bash");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "wasm/build.sh failed (run `bash wasm/build.sh` once: it installs the wasm32 target and wasm-bindgen-cli):\n{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    eprint!("{out}");

    // The native build's answers, for the byte-for-byte comparison.
    let dir = std::env::temp_dir().join(format!("rocescope-wasm-node-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["std-mix.pcapng", "ext-mix.pcapng"] {
        let bytes = std::fs::read(root.join("fixtures").join(name)).unwrap();
        std::fs::write(dir.join(format!("{name}.json")), rocescope_wasm::decode_capture(&bytes, "{}")).unwrap();
    }
    let o = Command::new("node")
        .args(["--test", "wasm/test/node_test.mjs"])
        .current_dir(root)
        .env("ROCESCOPE_WASM_EXPECT_DIR", &dir)
        .output()
        .expect("run node");
    std::fs::remove_dir_all(&dir).ok();
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "node --test wasm/test/node_test.mjs failed:\n{report}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(report.contains("# fail 0") && report.contains("# skipped 0"), "{report}");
}
