//! Issue 10, acceptance 3: every per-packet analysis field set on a frame has its timeline
//! entry, and every timeline entry its frame's field — `rocescope decode -e rocescope.analysis.*`
//! against `rocescope timeline -T json`, on every synth fixture and on synthesized runs (lossy
//! gbn, irn, dcp; sprayed; incast; three taps).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

const COLUMNS: &[&str] = &[
    "frame.number",
    "rocescope.analysis.flow",
    "rocescope.analysis.retransmission",
    "rocescope.analysis.retransmission.cause",
    "rocescope.analysis.retransmission.trigger",
    "rocescope.analysis.spurious",
    "rocescope.analysis.loss",
    "rocescope.analysis.loss.signal",
    "rocescope.analysis.acked_unseen",
    "rocescope.analysis.message_complete",
    "rocescope.analysis.message",
];

fn run(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().expect("run rocescope");
    assert!(out.status.success(), "rocescope {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8")
}

/// What the timeline says per frame, as the fields would print it.
fn from_timeline(t: &serde_json::Value) -> BTreeMap<(u64, &'static str), String> {
    let mut m: BTreeMap<(u64, &'static str), String> = BTreeMap::new();
    let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    for f in t["flows"].as_array().unwrap() {
        for r in f["retransmissions"].as_array().unwrap() {
            let fr = r["frame"].as_u64().unwrap();
            m.insert((fr, "retransmission"), "1".into());
            m.insert((fr, "cause"), s(&r["cause"]));
            m.insert((fr, "trigger"), s(&r["trigger"]));
            if let Some(b) = r["spurious"].as_bool() {
                m.insert((fr, "spurious"), if b { "1" } else { "0" }.into());
            }
        }
        for l in f["losses"].as_array().unwrap() {
            let fr = l["frame"].as_u64().unwrap();
            m.insert((fr, "loss"), "1".into());
            m.insert((fr, "signal"), s(&l["signal"]));
        }
        let mut gaps: BTreeMap<u64, u32> = BTreeMap::new();
        for g in f["capture_gaps"].as_array().unwrap() {
            *gaps.entry(g["frame"].as_u64().unwrap()).or_default() += 1;
        }
        for (fr, n) in gaps {
            m.insert((fr, "acked_unseen"), n.to_string());
        }
        for msg in f["messages"].as_array().unwrap() {
            if let Some(fr) = msg["complete_frame"].as_u64() {
                let e = m.entry((fr, "complete")).or_default();
                if !e.is_empty() {
                    e.push(',');
                }
                e.push_str(&msg["index"].to_string());
            }
        }
    }
    m
}

/// What the fields say per frame; and each data frame's message and flow, to check against
/// the messages' frames.
fn from_fields(text: &str) -> BTreeMap<(u64, &'static str), String> {
    let names = ["", "flow", "retransmission", "cause", "trigger", "spurious", "loss", "signal", "acked_unseen", "complete", "message"];
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('\t').collect();
        let fr: u64 = cells[0].parse().unwrap();
        for (i, c) in cells.iter().enumerate().skip(2) {
            if !c.is_empty() && names[i] != "message" {
                m.insert((fr, names[i]), c.to_string());
            }
        }
    }
    m
}

fn check(pcap: &Path, profile: &str) -> usize {
    let p = pcap.to_str().unwrap();
    let timeline: serde_json::Value = serde_json::from_str(&run(&["timeline", "-T", "json", "--profile", profile, p])).unwrap();
    let mut args = vec!["decode", "-T", "fields", "--profile", profile, p];
    for c in COLUMNS {
        args.extend(["-e", c]);
    }
    let fields = run(&args);
    let want = from_timeline(&timeline);
    let got = from_fields(&fields);
    let diff: Vec<String> = want
        .iter()
        .filter(|(k, v)| got.get(k) != Some(v))
        .map(|(k, v)| format!("timeline {k:?} = {v}, field {:?}", got.get(k)))
        .chain(got.iter().filter(|(k, _)| !want.contains_key(k)).map(|(k, v)| format!("field {k:?} = {v} not in the timeline")))
        .collect();
    assert!(diff.is_empty(), "{}: {} differences:\n{}", pcap.display(), diff.len(), diff[..diff.len().min(20)].join("\n"));
    // Every message's first and last frame carry its index in `rocescope.analysis.message`,
    // under the flow's id.
    let msg_of: BTreeMap<u64, (String, String)> = fields
        .lines()
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c[0].parse().unwrap(), (c[1].to_string(), c[10].to_string()))
        })
        .collect();
    for f in timeline["flows"].as_array().unwrap() {
        let id = f["id"].as_str().unwrap();
        for msg in f["messages"].as_array().unwrap() {
            let first = msg["first_frame"].as_u64().unwrap();
            assert_eq!(msg_of[&first], (id.to_string(), msg["index"].to_string()), "{}: first frame {first}", pcap.display());
        }
    }
    want.len()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../fixtures/synth-{name}.pcapng"))
}

#[test]
fn fields_and_timeline_agree_on_the_fixtures() {
    let mut n = 0;
    for (name, profile) in
        [("gbn-clean", "std"), ("gbn-loss", "std"), ("irn-clean", "std"), ("irn-loss", "std"), ("dcp-clean", "dcp"), ("dcp-loss", "dcp")]
    {
        n += check(&fixture(name), profile);
    }
    assert!(n > 300, "only {n} annotated facts");
}

#[test]
fn fields_and_timeline_agree_on_synthesized_runs() {
    let dir = std::env::temp_dir().join(format!("rocescope-afields-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let runs = [
        ("gbn", "std", "--stack gbn --messages 16 --message-size 16384 --loss 0.02 --seed 3"),
        ("irn", "std", "--stack irn --messages 16 --message-size 16384 --loss 0.02 --paths 4 --spray --reorder 1500 --seed 4"),
        ("dcp", "dcp", "--stack dcp --messages 16 --message-size 16384 --loss 0.02 --incast 4 --seed 5"),
        ("dcp-drop", "dcp", "--stack dcp --messages 16 --message-size 16384 --loss 0.02 --loss-mode drop --paths 4 --spray --seed 6"),
        // Long enough for the analyser to retire messages and spill its records to a file.
        ("gbn-long", "std", "--stack gbn --messages 300 --message-size 16384 --loss 0.01 --seed 8"),
    ];
    for (name, profile, args) in runs {
        let pcap = dir.join(format!("{name}.pcapng"));
        let mut a: Vec<&str> = vec!["synth"];
        a.extend(args.split_whitespace());
        a.extend(["--taps", "sender,receiver,fabric", "-o", pcap.to_str().unwrap()]);
        run(&a);
        check(&pcap, profile);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The analysis fields are a table of their own: `rocescope fields` lists them after the codec's
/// registry, and the Lua plugin declares them apart from the registry's fields (it shows them
/// from `annotate`'s packet comments, issue 12: pcap-tools/cli/tests/annotate.rs), so the
/// registry-driven plugin parity tests leave them out.
#[test]
fn analysis_fields_are_listed_and_in_the_plugin_apart() {
    let list = run(&["fields"]);
    let names: BTreeSet<&str> = list.lines().filter_map(|l| l.split('\t').next()).collect();
    for c in COLUMNS.iter().skip(1) {
        assert!(names.contains(c), "{c} not listed");
    }
    let lua = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dissector/rocescope.lua")).unwrap();
    assert!(!lua.lines().any(|l| l.starts_with("field(\"rocescope.analysis.")), "the plugin declares analysis fields as registry fields");
    for c in COLUMNS.iter().skip(1) {
        assert_eq!(lua.matches(&format!("ANNOT.field(\"{c}\",")).count(), 1, "{c}: not declared once for the comments");
    }
}
