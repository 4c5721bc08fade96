//! Golden outputs: what `rocescope` prints for every bundled capture, byte for byte.
//!
//! Each case runs the real binary and compares its standard output with
//! `fixtures/golden/<case>.out` and its exit status plus standard error with
//! `fixtures/golden/<case>.meta`. The goldens were recorded before the workspace was reshaped
//! (issue 8) and guard every later change: a change that alters an output on purpose rewrites
//! them in the same commit (`ROCESCOPE_BLESS=1 cargo test -p rocescope --test golden`) and its
//! note names each change. The synthesiser's captures and truths are guarded the same way by
//! `synth_fixtures.rs` (the `fixtures/synth-*` files against their documented command lines).

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn golden_dir() -> PathBuf {
    root().join("fixtures/golden")
}

/// The bundled captures, by file stem.
fn captures() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("fixtures"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "pcapng").then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    v.sort();
    assert!(v.len() >= 8, "fixtures/ holds the bundled captures: {v:?}");
    v
}

/// Every field `--format fields` accepts: the frame and address columns, then the registry
/// (the per-packet analysis fields have goldens of their own, `<capture>.analysis`; the replay
/// fields come from `annotate`'s packet comments, which the fixtures do not have:
/// tests/annotate.rs).
fn every_field() -> Vec<String> {
    let out = Command::new(BIN).arg("fields").output().unwrap();
    assert!(out.status.success());
    let mut v: Vec<String> = ["frame.number", "frame.time_epoch", "frame.len", "frame.cap_len", "ip.src", "ip.dst", "udp.srcport", "udp.dstport"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.extend(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .filter(|n| !n.starts_with("rocescope.analysis.") && !n.starts_with("rocescope.replay.")),
    );
    v
}

/// The per-packet analysis fields (`rocescope fields` lists them last).
fn analysis_fields() -> Vec<String> {
    let out = Command::new(BIN).arg("fields").output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .filter(|n| n.starts_with("rocescope.analysis."))
        .collect()
}

/// (case name, arguments).
fn cases() -> Vec<(String, Vec<String>)> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let mut cases = vec![("fields".to_string(), s(&["fields"]))];
    let mut fields_args = s(&["decode", "--format", "fields"]);
    for f in every_field() {
        fields_args.push("-e".into());
        fields_args.push(f);
    }
    for c in captures() {
        let file = format!("fixtures/{c}.pcapng");
        cases.push((format!("{c}.text"), s(&["decode", &file])));
        cases.push((format!("{c}.verbose"), s(&["decode", "-V", &file])));
        cases.push((format!("{c}.json"), s(&["decode", "--format", "json", &file])));
        let mut fa = fields_args.clone();
        fa.push(file.clone());
        cases.push((format!("{c}.fields"), fa));
        cases.push((format!("{c}.check"), s(&["check", &file])));
        // The analysers (issue 10): the flow table as text and CSV, the timeline as JSON and
        // text, and every analysis field.
        cases.push((format!("{c}.flows"), s(&["flows", &file])));
        cases.push((format!("{c}.flows.csv"), s(&["flows", "-T", "csv", &file])));
        cases.push((format!("{c}.timeline"), s(&["timeline", &file])));
        cases.push((format!("{c}.timeline.json"), s(&["timeline", "-T", "json", &file])));
        let mut aa = s(&["decode", "--format", "fields", "-e", "frame.number"]);
        for f in analysis_fields() {
            aa.push("-e".into());
            aa.push(f);
        }
        aa.push(file.clone());
        cases.push((format!("{c}.analysis"), aa));
    }
    // The research extensions under each explicit profile, and the standard decoding of them.
    for p in ["std", "dcp", "sdr", "flor", "netrt", "erd"] {
        cases.push((format!("ext-mix.profile-{p}.verbose"), s(&["decode", "-V", "--profile", p, "fixtures/ext-mix.pcapng"])));
    }
    cases
}

#[test]
fn every_output_matches_its_golden() {
    let bless = std::env::var_os("ROCESCOPE_BLESS").is_some();
    let dir = golden_dir();
    let mut failures = Vec::new();
    let mut names = Vec::new();
    for (name, args) in cases() {
        let out = Command::new(BIN).args(&args).current_dir(root()).output().unwrap();
        let meta = format!("exit {}\n{}", out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr));
        for (ext, have) in [("out", out.stdout.clone()), ("meta", meta.into_bytes())] {
            let path = dir.join(format!("{name}.{ext}"));
            names.push(path.file_name().unwrap().to_string_lossy().into_owned());
            if bless {
                std::fs::write(&path, &have).unwrap();
                continue;
            }
            let want = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e} (bless with ROCESCOPE_BLESS=1)", path.display()));
            if want != have {
                let line = want.split(|&b| b == b'\n').zip(have.split(|&b| b == b'\n')).position(|(a, b)| a != b);
                failures.push(format!(
                    "rocescope {} differs from {} (first differing line {:?}: {} bytes expected, {} printed)",
                    args.join(" "),
                    path.display(),
                    line.map(|l| l + 1),
                    want.len(),
                    have.len()
                ));
            }
        }
    }
    // No stale golden lies around unchecked.
    let mut on_disk: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    on_disk.sort();
    names.sort();
    if !bless {
        assert_eq!(on_disk, names, "fixtures/golden holds exactly the goldens of the cases");
    }
    assert!(failures.is_empty(), "{} golden outputs differ:\n{}", failures.len(), failures.join("\n"));
}
