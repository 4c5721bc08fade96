//! `rocescope export` read back by DuckDB (issue 15, acceptance 1, the DuckDB half): several
//! captures of different stacks, taps and seeds exported under Hive partition folders, then
//! queried with the `duckdb` Python package (tests/export/duckdb_check.py); row counts, each
//! frame's PSN, each frame's flow and analysis fields, each flow's retransmissions, losses and
//! completed messages, each message's completion frame and latency, and the events of each kind
//! equal what `rocescope decode`, `flows` and `timeline` print on the same files; every packets
//! file's rows are in the order its metadata states.
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
    let (root, dir) = scratch("duckdb");
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
    // A 4-to-1 Go-Back-N incast with ECN marking: CNPs.
    let incast = dir.join("gbn-incast-ecn.pcapng");
    rocescope(&[
        "synth",
        "--stack",
        "gbn",
        "--incast",
        "4",
        "--messages",
        "8",
        "--message-size",
        "16384",
        "--loss",
        "0.02",
        "--ecn-threshold",
        "8000",
        "--seed",
        "5",
        "-o",
        incast.to_str().unwrap(),
    ]);
    let captures: Vec<PathBuf> = vec![
        root.join("fixtures/synth-gbn-loss.pcapng"),
        root.join("fixtures/synth-erd-loss.pcapng"),
        made.clone(),
        incast.clone(),
    ];
    let out = dir.join("export");
    let got = export_common::export_and_read(
        &captures,
        &out,
        "host=h7,date=2026-11-29",
        &root.join("pcap-tools/cli/tests/export/duckdb_check.py"),
        "python3 -m pip install duckdb",
    );
    assert_eq!(got["_partitions"], serde_json::json!([["h7", "2026-11-29"]]));
    assert_eq!(got["_versions"], serde_json::json!(["2"]));
    assert_eq!(got["_sort_orders"], serde_json::json!(["flow_index ASC NULLS LAST, time_ns ASC, frame ASC"]));
    assert_eq!(got["_unsorted_files"], serde_json::json!([]));

    let mut compared = BTreeMap::new();
    let mut fields_set = BTreeMap::<String, u64>::new();
    for c in &captures {
        let name = c.file_name().unwrap().to_str().unwrap();
        compared.insert(name.to_string(), compare(&got, c, Some(&mut fields_set)));
    }
    assert!(compared.values().all(|(f, m, e)| *f > 0 && *m > 0 && *e > 0), "{compared:?}");
    // Every analysis field was set on some frame but `duplicate_nak` (compared all the same:
    // the simulator's receivers NAK a sequence error once; replay_findings_are_events has a
    // responder that NAKs twice).
    assert_eq!(fields_set.len(), 13, "{fields_set:?}");
    assert!(!fields_set.contains_key("rocescope.analysis.duplicate_nak"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A damaged capture (cut in the middle of a record) is exported up to the damage, every table
/// of it (as `decode`, `flows` and `timeline` print what they read before the damage), a file
/// that is no capture is named with its error, the export exits with status 2, and the next
/// capture is exported whole; standard input is refused.
#[test]
fn a_damaged_capture_is_exported_up_to_the_damage() {
    let (root, dir) = scratch("cut");
    let whole = std::fs::read(root.join("fixtures/synth-gbn-loss.pcapng")).unwrap();
    let cut = dir.join("cut.pcapng");
    std::fs::write(&cut, &whole[..whole.len() * 2 / 3]).unwrap();
    let next = root.join("fixtures/synth-irn-loss.pcapng");
    let garbage = dir.join("garbage.pcapng");
    std::fs::write(&garbage, b"not a capture at all, longer than a header").unwrap();
    let out = dir.join("export");
    // Standard input is refused (each capture is read more than once), before anything is written.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["export", "-", "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not standard input"));
    assert!(!out.exists());
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["export", cut.to_str().unwrap(), garbage.to_str().unwrap(), next.to_str().unwrap()])
        .args(["-o", out.to_str().unwrap()])
        .args(["--partition", "host=h1,date=2026-11-29"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cut.pcapng: byte ") && stderr.contains("ends in the middle of a record"), "{stderr}");
    assert!(stderr.contains("garbage.pcapng: byte 0: not a pcap or pcapng file"), "{stderr}");
    let got = duckdb_check(&root, &out);
    let (frames, messages, events) = compare(&got, &cut, None);
    assert!(frames > 100 && messages > 0 && events > 0, "{frames} {messages} {events}");
    compare(&got, &next, Some(&mut BTreeMap::new()));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--replay` adds `rocescope replay`'s findings to `events` (every field as replay prints it,
/// the flow's index as `flows` numbers it), on a capture whose responder NAKs a sequence error
/// twice (the simulator's `--fault double-nak`), whose duplicate NAKs the analysis fields show too.
#[test]
fn replay_findings_are_events() {
    let (root, dir) = scratch("replay");
    let fault = dir.join("double-nak.pcapng");
    rocescope(&[
        "synth",
        "--stack",
        "gbn",
        "--messages",
        "20",
        "--message-size",
        "16384",
        "--loss",
        "0.02",
        "--seed",
        "4",
        "--fault",
        "double-nak",
        "-o",
        fault.to_str().unwrap(),
    ]);
    let captures = vec![fault.clone(), root.join("fixtures/synth-gbn-loss.pcapng")];
    let out = dir.join("export");
    let mut args = vec!["export", "--replay", "-o", out.to_str().unwrap(), "--partition", "host=h1,date=2026-11-29"];
    args.extend(captures.iter().map(|c| c.to_str().unwrap()));
    rocescope(&args);
    let got = duckdb_check(&root, &out);
    let mut fields_set = BTreeMap::new();
    for c in &captures {
        let name = c.file_name().unwrap().to_str().unwrap();
        compare(&got, c, Some(&mut fields_set));
        let file = c.to_str().unwrap();
        let index: BTreeMap<String, usize> = json(&["flows", "--format", "json", file])["flows"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, f)| (f["id"].as_str().unwrap().to_string(), i))
            .collect();
        let r = export_common::rocescope_status(&["replay", "--format", "json", file], &[0, 1]);
        let r: Value = serde_json::from_slice(&r).unwrap();
        let mut want: Vec<Value> = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                serde_json::json!([
                    f["flow"],
                    index.get(f["flow"].as_str().unwrap()),
                    f["kind"],
                    f["rule"],
                    f["frames"][0],
                    f["frames"],
                    f["time_ns"].to_string().trim_matches('"'),
                    f["expected"],
                    f["seen"]
                ])
            })
            .collect();
        want.sort_by_key(|v| v.to_string());
        let mut have = got[name]["findings"].as_array().cloned().unwrap_or_default();
        have.sort_by_key(|v| v.to_string());
        assert_eq!(have, want, "{name}: findings");
        if name == "double-nak.pcapng" {
            assert!(want.iter().any(|f| f[2] == "departure" && f[3] == "gbn.nak-repeated"), "{want:?}");
        }
    }
    assert!(fields_set.contains_key("rocescope.analysis.duplicate_nak"), "{fields_set:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Compares what DuckDB read of capture `c` (`got[its name]`) with what `rocescope decode`,
/// `flows` and `timeline` print of it: frames and PSNs, flows, messages, events and, unless
/// `fields_set` is `None` (a damaged capture, whose analysis fields `decode` refuses), each
/// frame's analysis fields, counting in `fields_set` the fields seen set. Answers the frames,
/// messages and events compared.
fn compare(got: &Value, c: &Path, fields_set: Option<&mut BTreeMap<String, u64>>) -> (usize, usize, u64) {
    // (A damaged capture's commands print what they read, then exit with status 2.)
    let out = |args: &[&str]| export_common::rocescope_status(args, &[0, 2]);
    let from_json = |args: &[&str]| -> Value { serde_json::from_slice(&out(args)).expect("JSON") };
    let file = c.to_str().unwrap();
    let name = c.file_name().unwrap().to_str().unwrap();
    let g = &got[name];
    // packets: every frame, with its PSN as decode prints it.
    let fields = String::from_utf8(out(&["decode", "-e", "frame.number", "-e", "rocescope.bth.psn", file])).unwrap();
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
    let frames = want.len();
    assert_eq!(g["psn"], Value::Array(want), "{name}: PSNs");
    // flows.
    let flows = from_json(&["flows", "--format", "json", file]);
    let want: Vec<Value> = flows["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| serde_json::json!([f["id"], f["retransmitted"], f["losses"], f["messages_completed"]]))
        .collect();
    assert_eq!(g["flows"], Value::Array(want.clone()), "{name}: flows");
    // packets: each flow's frames carry its id and tap (flows that have frames: all).
    let mut taps: Vec<(String, String)> = flows["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["id"].as_str().unwrap().to_string(), f["tap"].as_str().unwrap().to_string()))
        .collect();
    taps.sort();
    assert_eq!(g["taps"], serde_json::to_value(&taps).unwrap(), "{name}: taps");
    // messages and events.
    let t = from_json(&["timeline", "--format", "json", file]);
    let (mut messages, mut events) = (Vec::new(), BTreeMap::<&str, u64>::new());
    for f in t["flows"].as_array().unwrap() {
        for m in f["messages"].as_array().unwrap() {
            messages.push(serde_json::json!([f["id"], m["index"], m["complete_frame"], m["latency_ns"]]));
        }
        for (kind, key) in [("loss", "losses"), ("retransmission", "retransmissions"), ("capture_gap", "capture_gaps")]
        {
            let n = f[key].as_array().unwrap().len() as u64;
            if n > 0 {
                *events.entry(kind).or_default() += n;
            }
        }
    }
    assert_eq!(g["messages"], Value::Array(messages.clone()), "{name}: messages");
    assert_eq!(g["events"], serde_json::to_value(&events).unwrap(), "{name}: events");
    let Some(fields_set) = fields_set else { return (frames, messages.len(), events.values().sum::<u64>()) };
    // The message of each data packet, by docs/cluster.md's join (no column holds it).
    let want: Vec<Value> =
        String::from_utf8(out(&["decode", "-e", "frame.number", "-e", "rocescope.analysis.message", file]))
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('\t').filter(|(_, m)| !m.is_empty()))
            .map(|(f, m)| serde_json::json!([f.parse::<u64>().unwrap(), m.parse::<u64>().unwrap()]))
            .collect();
    assert_eq!(g["message_join"], Value::Array(want), "{name}: messages by the documented join");
    // packets: each frame's flow and analysis fields, as decode prints them.
    let names: Vec<String> = [
        "flow",
        "retransmission",
        "retransmission.cause",
        "retransmission.trigger",
        "spurious",
        "loss",
        "loss.signal",
        "out_of_order",
        "psn_gap",
        "acked_unseen",
        "duplicate_nak",
        "ack_rtt_ns",
        "message_complete",
        "ce_to_cnp_ns",
    ]
    .iter()
    .map(|f| format!("rocescope.analysis.{f}"))
    .collect();
    let mut args = vec!["decode", "-e", "frame.number"];
    for n in &names {
        args.extend(["-e", n]);
    }
    args.push(file);
    let want: Vec<Value> =
        String::from_utf8(out(&args)).unwrap().lines().map(|l| Value::String(l.to_string())).collect();
    assert_eq!(g["analysis"], Value::Array(want.clone()), "{name}: analysis fields");
    // (Which analysis fields the comparison saw set, over the captures.)
    for l in &want {
        for (k, v) in l.as_str().unwrap().split('\t').enumerate().skip(1) {
            if !v.is_empty() {
                *fields_set.entry(names[k - 1].clone()).or_default() += 1;
            }
        }
    }
    (frames, messages.len(), events.values().sum::<u64>())
}

/// The repository's root, and a fresh scratch folder for test `name`.
fn scratch(name: &str) -> (PathBuf, PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::temp_dir().join(format!("rocescope-export-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    (root, dir)
}

/// tests/export/duckdb_check.py's reading of export folder `out`.
fn duckdb_check(root: &Path, out: &Path) -> Value {
    let py = std::process::Command::new("python3")
        .arg(root.join("pcap-tools/cli/tests/export/duckdb_check.py"))
        .arg(out)
        .output()
        .unwrap();
    assert!(
        py.status.success(),
        "duckdb_check.py (python3 -m pip install duckdb): {}",
        String::from_utf8_lossy(&py.stderr)
    );
    serde_json::from_slice(&py.stdout).unwrap()
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

/// `bytes` (a little-endian pcapng file of one section) with its last interface's description
/// moved to just before that interface's first packet: an interface described after the
/// capture's first packet, as in a capture that gained an interface while it ran.
fn describe_last_interface_late(bytes: &[u8]) -> Vec<u8> {
    let word = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let mut blocks: Vec<&[u8]> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let len = word(bytes, at + 4) as usize;
        blocks.push(&bytes[at..at + len]);
        at += len;
    }
    const IDB: u32 = 1;
    const EPB: u32 = 6;
    let idbs: Vec<usize> = (0..blocks.len()).filter(|&i| word(blocks[i], 0) == IDB).collect();
    let id = idbs.len() as u32 - 1;
    let idb = blocks.remove(*idbs.last().unwrap());
    let first = blocks.iter().position(|b| word(b, 0) == EPB && word(b, 8) == id).unwrap();
    assert!(blocks[..first].iter().any(|b| word(b, 0) == EPB), "a packet now comes before the description");
    blocks.insert(first, idb);
    blocks.concat()
}

/// Partition values taken from the captures (`@application`, `@comment`, `@interface`,
/// `@date`, `@hardware`) are what capinfos and tshark read in the same files: the section
/// header's application and comment, each interface's name (each interface's rows, flows,
/// messages and events in its own folder; one interface is described only after the first
/// packet), the first frame's UTC date, and Hive's null for a value the capture lacks.
#[test]
fn partition_values_come_from_the_captures() {
    use std::process::Command;
    let (root, dir) = scratch("parts");
    // A capture with a section comment and editcap's name as its application, its third tap
    // described after the first packets.
    let commented = dir.join("edited.pcapng");
    let st = Command::new("editcap")
        .args(["--capture-comment", "rack 12/host 7"])
        .arg(root.join("fixtures/synth-gbn-loss.pcapng"))
        .arg(&commented)
        .status()
        .expect("editcap (Debian's wireshark-common, with tshark)");
    assert!(st.success());
    let capture = dir.join("commented.pcapng");
    std::fs::write(&capture, describe_last_interface_late(&std::fs::read(&commented).unwrap())).unwrap();
    let out = dir.join("export");
    // A key that names a column (flows' and packets' `tap`) is refused before anything is written.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["export", capture.to_str().unwrap(), "-o", out.to_str().unwrap(), "--partition", "tap=@interface"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("key 'tap' is a column of the export"));
    assert!(!out.exists());
    let got = export_common::export_and_read(
        std::slice::from_ref(&capture),
        &out,
        "app=@application,note=@comment,link=@interface,day=@date,hw=@hardware",
        &root.join("pcap-tools/cli/tests/export/duckdb_partitions.py"),
        "python3 -m pip install duckdb",
    );
    let run = |cmd: &str, args: &[&str]| {
        let o = Command::new(cmd).args(args).output().unwrap_or_else(|e| panic!("{cmd}: {e}"));
        assert!(o.status.success(), "{cmd} {args:?}");
        String::from_utf8(o.stdout).unwrap()
    };
    let file = capture.to_str().unwrap();
    // The oracles: capinfos's section header, tshark's interface names and first time.
    let info = run("capinfos", &[file]);
    let line = |key: &str| info.lines().find_map(|l| l.strip_prefix(key)).map(|v| v.trim().to_string());
    let app = line("Capture application:").expect("editcap writes its name");
    let note = line("Capture comment:").expect("the comment");
    let clean = |s: &str| -> String {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.:".contains(c) { c } else { '_' }).collect()
    };
    let names: BTreeMap<u64, String> =
        run("tshark", &["-r", file, "-T", "fields", "-e", "frame.interface_id", "-e", "frame.interface_name"])
            .lines()
            .map(|l| {
                let (id, name) = l.split_once('\t').unwrap();
                (id.parse().unwrap(), name.to_string())
            })
            .collect();
    assert_eq!(names.len(), 3, "the fixture's three taps");
    let first = run("tshark", &["-r", file, "-c", "1", "-T", "fields", "-e", "frame.time_epoch"]);
    let secs = first.trim().split('.').next().unwrap().to_string();
    let day = run("date", &["-u", "-d", &format!("@{secs}"), "+%F"]).trim().to_string();
    let want: Vec<Value> = names
        .iter()
        .map(|(id, name)| serde_json::json!(["commented.pcapng", id, clean(&app), clean(&note), name, day, null]))
        .collect();
    assert_eq!(got["packets"], Value::Array(want), "packets' partition columns");
    let flows: Vec<Value> = json(&["flows", "--format", "json", file])["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["interface"].as_u64().unwrap())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|i| serde_json::json!(["commented.pcapng", i, names[&i]]))
        .collect();
    assert_eq!(got["flows"], Value::Array(flows), "flows' partition columns");
    // Every row is in some folder.
    let t = json(&["timeline", "--format", "json", file]);
    let count = |k: &str| t["flows"].as_array().unwrap().iter().map(|f| f[k].as_array().unwrap().len()).sum::<usize>();
    let events = count("losses") + count("retransmissions") + count("capture_gaps");
    let frames = run("capinfos", &["-c", "-M", file]);
    let frames: u64 =
        frames.lines().find_map(|l| l.strip_prefix("Number of packets:")).unwrap().trim().parse().unwrap();
    assert_eq!(got["rows"], serde_json::json!({"packets": frames, "messages": count("messages"), "events": events}));
    let _ = std::fs::remove_dir_all(&dir);
}
