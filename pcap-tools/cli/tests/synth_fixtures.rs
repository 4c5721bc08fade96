//! The `fixtures/synth-*` captures and truths are what their documented command lines
//! (docs/truth.md, "Fixtures") write, byte for byte; each file is under 1 MB; running a command
//! twice gives the same bytes; the truth has the documented shape.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `rocescope synth … -o fixtures/X.pcapng --truth fixtures/X.truth.json` lines of the doc.
fn documented() -> Vec<Vec<String>> {
    let doc = std::fs::read_to_string(root().join("docs/truth.md")).unwrap();
    let cmds: Vec<Vec<String>> = doc
        .lines()
        .filter(|l| l.starts_with("rocescope synth ") && l.contains("-o fixtures/synth-"))
        .map(|l| l.split_whitespace().skip(1).map(str::to_string).collect())
        .collect();
    assert_eq!(cmds.len(), 6, "docs/truth.md lists the six fixtures");
    cmds
}

fn temp_dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rocescope-synth-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `args` with its `fixtures/…` outputs redirected to `dir`; returns (fixture, written)
/// path pairs.
fn regenerate(args: &[String], dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut pairs = Vec::new();
    let args: Vec<String> = args
        .iter()
        .map(|a| match a.strip_prefix("fixtures/") {
            Some(name) => {
                let out = dir.join(name);
                pairs.push((root().join(a), out.clone()));
                out.to_string_lossy().into_owned()
            }
            None => a.clone(),
        })
        .collect();
    let out = Command::new(BIN).args(&args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(pairs.len(), 2);
    pairs
}

#[test]
fn fixtures_are_what_their_command_lines_write() {
    let dir = temp_dir("fixtures");
    for cmd in documented() {
        for (fixture, fresh) in regenerate(&cmd, &dir) {
            let want = std::fs::read(&fixture).unwrap_or_else(|e| panic!("{}: {e}", fixture.display()));
            let got = std::fs::read(&fresh).unwrap();
            assert!(want.len() < 1 << 20, "{} is {} bytes (over 1 MB)", fixture.display(), want.len());
            assert!(
                want == got,
                "{} differs from what `rocescope {}` writes now: regenerate the fixtures (docs/truth.md) if the change is intended",
                fixture.display(),
                cmd.join(" ")
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn same_seed_same_bytes() {
    let dir = temp_dir("twice");
    let args = "synth --stack irn --incast 3 --paths 8 --spray --reorder 2000 --loss 0.03 --burst-loss 0.01,0.2 --queue-bytes 20000 --ecn-threshold 5000 --op mix";
    let run = |name: &str, seed: &str| {
        let (p, t) = (dir.join(format!("{name}.pcapng")), dir.join(format!("{name}.json")));
        let out = Command::new(BIN)
            .args(args.split_whitespace())
            .args(["--seed", seed, "-o"])
            .arg(&p)
            .arg("--truth")
            .arg(&t)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (std::fs::read(p).unwrap(), std::fs::read(t).unwrap())
    };
    let a = run("a", "77");
    let b = run("b", "77");
    let c = run("c", "78");
    assert!(a == b, "two runs with the same seed differ");
    assert!(a.0 != c.0, "another seed gives the same capture");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fixture_truths_have_the_documented_shape_and_agree_with_the_captures() {
    for cmd in documented() {
        let truth_path = root().join(cmd.iter().find(|a| a.ends_with(".truth.json")).unwrap());
        let pcap_path = root().join(cmd.iter().find(|a| a.ends_with(".pcapng")).unwrap());
        let t: Value = serde_json::from_slice(&std::fs::read(&truth_path).unwrap()).unwrap();
        let name = truth_path.display().to_string();
        assert_eq!(t["format"], "rocescope-synth-truth");
        assert_eq!(t["summary"]["delivered_once"], t["summary"]["messages"], "{name}");
        assert_eq!(t["summary"]["completed"], t["summary"]["messages"], "{name}");
        // Every frame of the capture is described once, with its interface and timestamp.
        let mut rd = rocescope_analysis::capture::open(pcap_path.to_str().unwrap()).unwrap();
        let mut by_frame = std::collections::BTreeMap::new();
        for tap in t["taps"].as_array().unwrap() {
            for f in tap["frames"].as_array().unwrap() {
                by_frame.insert(
                    f["frame"].as_u64().unwrap(),
                    (tap["interface"].as_u64().unwrap(), f["time_ns"].as_str().unwrap().to_string()),
                );
            }
            for flow in tap["flows"].as_array().unwrap() {
                for k in [
                    "id",
                    "src",
                    "dst",
                    "destqp",
                    "profile",
                    "tap",
                    "losses",
                    "capture_gaps",
                    "retransmissions",
                    "messages",
                ] {
                    assert!(!flow[k].is_null(), "{name}: flow without {k}");
                }
                for m in flow["messages"].as_array().unwrap() {
                    for k in [
                        "index",
                        "first_frame",
                        "last_frame",
                        "complete_frame",
                        "complete_time_ns",
                        "packets",
                        "retransmitted",
                    ] {
                        assert!(m.get(k).is_some(), "{name}: message without {k}");
                    }
                }
            }
        }
        let mut n = 0;
        while let Some(rec) = rd.next_record().unwrap() {
            n += 1;
            let (iface, ts) =
                by_frame.get(&rec.number).unwrap_or_else(|| panic!("{name}: frame {} not in the truth", rec.number));
            assert_eq!(*iface, rec.interface as u64, "{name}: frame {}", rec.number);
            assert_eq!(*ts, rec.ts_ns.to_string(), "{name}: frame {}", rec.number);
        }
        assert_eq!(n, by_frame.len(), "{name}");
        // The sender sees each message complete when the simulator's requester does.
        let sim: Vec<&Value> = t["sim"]["messages"].as_array().unwrap().iter().filter(|m| m["conn"] == 0).collect();
        let sender = t["taps"].as_array().unwrap().iter().find(|x| x["name"] == "sender").unwrap();
        let flow = &sender["flows"][0];
        for (m, s) in flow["messages"].as_array().unwrap().iter().zip(sim) {
            assert_eq!(m["complete_time_ns"], s["completed_ns"], "{name}: message {}", m["index"]);
        }
    }
}
