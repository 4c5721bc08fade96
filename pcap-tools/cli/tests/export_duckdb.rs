//! `rocescope export` read back by DuckDB (issue 15, acceptance 1, the DuckDB half): several
//! captures of different stacks, taps and seeds exported under Hive partition folders, then
//! queried with the `duckdb` Python package (tests/export/duckdb_check.py); row counts, each
//! frame's PSN, each flow's retransmissions, losses and completed messages, each message's
//! completion frame and latency, and the events of each kind equal what `rocescope decode`,
//! `flows` and `timeline` print on the same files.
//!
//! Needs python3 with duckdb (`pip install duckdb`; `.ci/run` installs it): without it the test
//! fails and says so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod export_common;
use export_common::{json, rocescope};

#[test]
fn duckdb_reads_what_the_command_line_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::temp_dir().join(format!("rocescope-export-duckdb-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Different stacks, taps and seeds: two fixtures and one synthesized here.
    let made = dir.join("irn-sprayed.pcapng");
    rocescope(&[
        "synth",
        "--stack",
        "irn",
        "--messages",
        "20",
        "--message-size",
        "8192",
        "--loss",
        "0.02",
        "--paths",
        "4",
        "--spray",
        "--seed",
        "11",
        "-o",
        made.to_str().unwrap(),
    ]);
    let captures: Vec<PathBuf> =
        vec![root.join("fixtures/synth-gbn-loss.pcapng"), root.join("fixtures/synth-erd-loss.pcapng"), made.clone()];
    let out = dir.join("export");
    let got = export_common::export_and_read(
        &captures,
        &out,
        "host=h7,date=2026-11-29",
        &root.join("pcap-tools/cli/tests/export/duckdb_check.py"),
        "python3 -m pip install duckdb",
    );
    assert_eq!(got["_partitions"], serde_json::json!([["h7", "2026-11-29"]]));
    assert_eq!(got["_versions"], serde_json::json!(["1"]));

    let mut compared = BTreeMap::new();
    for c in &captures {
        let file = c.to_str().unwrap();
        let name = c.file_name().unwrap().to_str().unwrap();
        let g = &got[name];
        // packets: every frame, with its PSN as decode prints it.
        let fields =
            String::from_utf8(rocescope(&["decode", "-e", "frame.number", "-e", "rocescope.bth.psn", file])).unwrap();
        let want: Vec<Value> = fields
            .lines()
            .map(|l| {
                let mut it = l.split('\t');
                let n: u64 = it.next().unwrap().parse().unwrap();
                let psn = it.next().filter(|s| !s.is_empty()).map(|s| s.parse::<u64>().unwrap());
                serde_json::json!([n, psn])
            })
            .collect();
        assert_eq!(g["frames"], want.len(), "{name}: rows");
        assert_eq!(g["psn"], Value::Array(want), "{name}: PSNs");
        // flows.
        let flows = json(&["flows", "--format", "json", file]);
        let want: Vec<Value> = flows["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| serde_json::json!([f["id"], f["retransmitted"], f["losses"], f["messages_completed"]]))
            .collect();
        assert_eq!(g["flows"], Value::Array(want.clone()), "{name}: flows");
        // messages and events.
        let t = json(&["timeline", "--format", "json", file]);
        let (mut messages, mut events) = (Vec::new(), BTreeMap::<&str, u64>::new());
        for f in t["flows"].as_array().unwrap() {
            for m in f["messages"].as_array().unwrap() {
                messages.push(serde_json::json!([f["id"], m["index"], m["complete_frame"], m["latency_ns"]]));
            }
            for (kind, key) in
                [("loss", "losses"), ("retransmission", "retransmissions"), ("capture_gap", "capture_gaps")]
            {
                let n = f[key].as_array().unwrap().len() as u64;
                if n > 0 {
                    *events.entry(kind).or_default() += n;
                }
            }
        }
        assert_eq!(g["messages"], Value::Array(messages.clone()), "{name}: messages");
        assert_eq!(g["events"], serde_json::to_value(&events).unwrap(), "{name}: events");
        compared.insert(name.to_string(), (want.len(), messages.len(), events.values().sum::<u64>()));
    }
    assert!(compared.values().all(|(f, m, e)| *f > 0 && *m > 0 && *e > 0), "{compared:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// docs/cluster.md's schema is `rocescope export --schema`'s.
#[test]
fn the_documented_schema_is_the_commands() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/cluster.md")).unwrap();
    let (start, end) = ("<!-- schema:start -->\n", "<!-- schema:end -->");
    let at = doc.find(start).expect("the schema's start marker") + start.len();
    let documented = &doc[at..at + doc[at..].find(end).expect("the end marker")];
    assert_eq!(documented, String::from_utf8(rocescope(&["export", "--schema"])).unwrap());
}
