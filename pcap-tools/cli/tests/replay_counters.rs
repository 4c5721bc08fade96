//! `rocescope replay --counters BEFORE AFTER` (issue 12, acceptance 5; docs/replay.md "Counter
//! reconciliation"): the counters `synth` writes in its truth for the hosts at the sender and
//! receiver taps reconcile with its capture (Go-Back-N with timeouts and implied NAKs, IRN and
//! DCP under loss, an ECN-marked incast), each counter the run exercised being nonzero; one
//! counter altered is reported by name, alone, with exit 1; an unsettled host or a bad snapshot
//! exits 2.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("rocescope-counters-{}-{name}", std::process::id()))
}

fn rocescope(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().expect("run rocescope");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A synthesized run: its capture and its truth.
struct Run {
    pcap: String,
    truth: Value,
    truth_path: String,
}

fn synth(name: &str, args: &[&str]) -> Run {
    let pcap = tmp(&format!("{name}.pcapng")).display().to_string();
    let truth = tmp(&format!("{name}.json")).display().to_string();
    let mut all = vec!["synth"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", &pcap, "--truth", &truth]);
    let (code, _, err) = rocescope(&all);
    assert_eq!(code, 0, "synth {args:?}: {err}");
    let v = serde_json::from_str(&std::fs::read_to_string(&truth).expect("truth")).expect("truth JSON");
    Run { pcap, truth: v, truth_path: truth }
}

impl Drop for Run {
    /// A run leaves no capture or truth behind (each is megabytes).
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.pcap);
        let _ = std::fs::remove_file(&self.truth_path);
    }
}

/// The truth's counters of the host at `tap`: (its IP, name → change over the run).
fn host_counters(r: &Run, tap: &str) -> (String, Vec<(String, u64)>) {
    let h =
        r.truth["counters"].as_array().expect("counters").iter().find(|h| h["tap"] == tap).expect("a host at the tap");
    let values =
        h["values"].as_object().expect("values").iter().map(|(k, v)| (k.clone(), v.as_u64().expect("count"))).collect();
    (h["ip"].as_str().expect("ip").to_string(), values)
}

/// `ethtool -S` text: a header, indented lines, other counters rocescope ignores, and each
/// counter at `base + i` before and that plus its change after.
fn ethtool(values: &[(String, u64)], after: bool) -> String {
    let mut s = String::from("NIC statistics:\n     rx_packets: 123456\n     tx_bytes: 99\n");
    for (i, (k, v)) in values.iter().enumerate() {
        let base = 1000 + 7 * i as u64;
        s.push_str(&format!("     {k}: {}\n", if after { base + v } else { base }));
    }
    s.push_str("     rnr_nak_retry_err: 5\n");
    s
}

/// Replays `r` with the counters of the host at `tap` (changed by `alter`), as JSON.
fn reconcile(r: &Run, name: &str, tap: &str, alter: Option<(&str, i64)>) -> (i32, Value, String) {
    let (ip, mut values) = host_counters(r, tap);
    let before = tmp(&format!("{name}-{tap}.before"));
    std::fs::write(&before, ethtool(&values, false)).unwrap();
    if let Some((k, by)) = alter {
        let v = values.iter_mut().find(|(n, _)| n == k).expect("altered counter");
        v.1 = v.1.checked_add_signed(by).expect("no underflow");
    }
    let after = tmp(&format!("{name}-{tap}.after"));
    std::fs::write(&after, ethtool(&values, true)).unwrap();
    let (b, a) = (before.display().to_string(), after.display().to_string());
    // (The ECN run's NICs pace CNPs at 2 µs: replay is told, or its CNP pacing rule departs.)
    let (code, out, err) = rocescope(&[
        "replay",
        "-T",
        "json",
        "--param",
        "cnp_interval_ns=2000",
        "--counters",
        &b,
        &a,
        "--counters-host",
        &ip,
        &r.pcap,
    ]);
    let _ = (std::fs::remove_file(&before), std::fs::remove_file(&after));
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{name} {tap}: {e}: {out} {err}"));
    (code, v, err)
}

fn row<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["counters"]
        .as_array()
        .expect("counters")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no row {name}: {v}"))
}

/// Every counter at both host taps of `r` agrees (or, for `cannot`, cannot be judged), and
/// each of `nonzero` (tap, counter) is > 0 in the capture's count.
fn all_agree(r: &Run, name: &str, cannot: &[(&str, &str)], nonzero: &[(&str, &str)]) {
    for tap in ["sender", "receiver"] {
        let (code, v, err) = reconcile(r, name, tap, None);
        assert_eq!(code, 0, "{name} {tap}: {v} {err}");
        assert_eq!(v["counters_host"]["interface"], if tap == "sender" { 0 } else { 1 }, "{name} {tap}");
        let rows = v["counters"].as_array().expect("rows");
        // The judged ten, rp_cnp_ignored and rnr_nak_retry_err; rx_packets and tx_bytes ignored.
        assert_eq!(rows.len(), 12, "{name} {tap}: {v}");
        assert!(rows.iter().all(|c| c["name"] != "rx_packets" && c["name"] != "tx_bytes"));
        for c in rows {
            let n = c["name"].as_str().unwrap();
            let expect = if n == "rp_cnp_ignored" || n == "rnr_nak_retry_err" || cannot.contains(&(tap, n)) {
                "cannot_judge"
            } else {
                "agree"
            };
            assert_eq!(c["verdict"], expect, "{name} {tap}: {c}");
            if expect == "agree" {
                assert_eq!(c["capture"], c["delta"], "{name} {tap}: {c}");
            }
        }
        for &(t, n) in nonzero.iter().filter(|(t, _)| *t == tap) {
            assert!(row(&v, n)["capture"].as_u64().unwrap() > 0, "{name} {t}: {n} is 0: {v}");
        }
    }
}

/// Go-Back-N, WRITE/SEND/READ under 10 % loss both ways and a 65 µs local ACK timeout.
const GBN_MIX: [&str; 14] = [
    "--stack", "gbn", "--op", "mix", "--messages", "20", "--message-size", "4096", "--loss", "0.1", "--loss-dir",
    "both", "--local-ack-timeout", "4",
];

#[test]
fn synthesized_counters_reconcile_with_their_captures() {
    // Go-Back-N, WRITE/SEND/READ under 10 % loss both ways and a 65 µs local ACK timeout.
    let gbn = GBN_MIX;
    let r = synth("gbn", &[&gbn[..], &["--seed", "2"]].concat());
    all_agree(
        &r,
        "gbn",
        &[],
        &[
            ("receiver", "out_of_sequence"),
            ("receiver", "duplicate_request"),
            ("sender", "packet_seq_err"),
            ("sender", "local_ack_timeout_err"),
            ("sender", "tx_vport_rdma_unicast_packets"),
            ("receiver", "rx_vport_rdma_unicast_packets"),
        ],
    );
    let r = synth("gbn-read", &[&gbn[..], &["--seed", "4"]].concat());
    all_agree(&r, "gbn-read", &[], &[("sender", "implied_nak_seq_err"), ("sender", "packet_seq_err")]);

    // IRN and DCP: their timers' resends are not told from the others on the wire.
    let irn =
        synth("irn", &["--stack", "irn", "--messages", "20", "--loss", "0.1", "--loss-dir", "both", "--seed", "3"]);
    all_agree(
        &irn,
        "irn",
        &[("sender", "local_ack_timeout_err")],
        &[("receiver", "out_of_sequence"), ("receiver", "duplicate_request"), ("sender", "packet_seq_err")],
    );
    let (_, values) = host_counters(&irn, "sender");
    assert!(values.iter().any(|(k, v)| k == "local_ack_timeout_err" && *v > 0), "the IRN run has timeouts");
    let dcp = [
        "--stack",
        "dcp",
        "--messages",
        "10",
        "--loss",
        "0.05",
        "--loss-mode",
        "drop",
        "--loss-dir",
        "both",
        "--seed",
        "4",
    ];
    all_agree(
        &synth("dcp", &dcp),
        "dcp",
        &[("sender", "local_ack_timeout_err")],
        &[("receiver", "out_of_sequence"), ("receiver", "duplicate_request")],
    );
    let dcp_trim = [
        "--stack",
        "dcp",
        "--op",
        "mix",
        "--messages",
        "8",
        "--incast",
        "2",
        "--trim",
        "--queue-bytes",
        "8192",
        "--loss",
        "0.02",
        "--seed",
        "2",
    ];
    all_agree(
        &synth("dcp-trim", &dcp_trim),
        "dcp-trim",
        &[("sender", "local_ack_timeout_err")],
        &[("receiver", "out_of_sequence")],
    );

    // A leaf-spine, all to all: the host at each tap is a requester and a responder.
    let mesh = [
        "--stack",
        "gbn",
        "--topology",
        "leaf-spine",
        "--leaves",
        "2",
        "--spines",
        "2",
        "--hosts-per-leaf",
        "2",
        "--pattern",
        "all-to-all",
        "--messages",
        "4",
        "--loss",
        "0.05",
        "--seed",
        "3",
    ];
    all_agree(
        &synth("mesh", &mesh),
        "mesh",
        &[],
        &[
            ("sender", "out_of_sequence"),
            ("sender", "packet_seq_err"),
            ("receiver", "out_of_sequence"),
            ("receiver", "packet_seq_err"),
        ],
    );

    // A 4-to-1 incast marked at 20 KB of queue: CE marks and CNPs at the receiver, CNPs handled
    // at the sender.
    let ecn = [
        "--stack",
        "gbn",
        "--incast",
        "4",
        "--messages",
        "8",
        "--message-size",
        "65536",
        "--ecn-threshold",
        "20000",
        "--cnp-interval",
        "2000",
        "--seed",
        "1",
    ];
    all_agree(
        &synth("ecn", &ecn),
        "ecn",
        &[],
        &[("receiver", "np_ecn_marked_roce_packets"), ("receiver", "np_cnp_sent"), ("sender", "rp_cnp_handled")],
    );
}

#[test]
fn one_counter_altered_is_reported_by_name_alone() {
    let gbn = [&GBN_MIX[..], &["--seed", "2"]].concat();
    let r = synth("alter", &gbn);
    for (tap, name, by) in
        [("receiver", "out_of_sequence", 1), ("sender", "local_ack_timeout_err", -1), ("sender", "packet_seq_err", 3)]
    {
        let (code, v, err) = reconcile(&r, "alter", tap, Some((name, by)));
        assert_eq!(code, 1, "{tap} {name}: {v} {err}");
        let bad: Vec<&str> = v["counters"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["verdict"] == "disagree")
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(bad, [name], "{v}");
        let c = row(&v, name);
        assert_eq!(c["delta"].as_i64().unwrap(), c["capture"].as_i64().unwrap() + by, "{c}");
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "no departure: only the counter");
    }
    // In text, by name.
    let (ip, mut values) = host_counters(&r, "receiver");
    let (b, a) = (tmp("alter-text.before"), tmp("alter-text.after"));
    std::fs::write(&b, ethtool(&values, false)).unwrap();
    values.iter_mut().find(|(k, _)| k == "duplicate_request").unwrap().1 += 2;
    std::fs::write(&a, ethtool(&values, true)).unwrap();
    let (code, text, _) = rocescope(&[
        "replay",
        "--counters",
        &b.display().to_string(),
        &a.display().to_string(),
        "--counters-host",
        &ip,
        &r.pcap,
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(&format!("counters of {ip} (interface 1): 9 agree, 1 disagree, 2 cannot be judged")),
        "{text}"
    );
    let bad: Vec<&str> = text.lines().filter(|l| l.contains("DISAGREE")).collect();
    assert_eq!(bad.len(), 1, "{text}");
    assert!(bad[0].trim_start().starts_with("duplicate_request: "), "{text}");
}

#[test]
fn an_unsettled_host_or_a_bad_snapshot_exits_2() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/synth-gbn-loss.pcapng").display().to_string();
    let good = tmp("good.txt");
    std::fs::write(&good, "NIC statistics:\n     out_of_sequence: 0\n").unwrap();
    let g = good.display().to_string();
    // Sender, receiver and fabric taps: which host?
    let (code, _, err) = rocescope(&["replay", "--counters", &g, &g, &fixture]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("interface 0 (10.0.0.1), interface 1 (10.0.1.1)") && err.contains("--counters-host"), "{err}");
    let (code, _, err) = rocescope(&["replay", "--counters", &g, &g, "--counters-interface", "2", &fixture]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--counters-interface 2 is not a host-side tap"), "{err}");
    // The receiver saw out-of-sequence packets; these snapshots say none.
    let (code, out, err) = rocescope(&["replay", "--counters", &g, &g, "--counters-interface", "1", &fixture]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("counters of 10.0.1.1 (interface 1): 0 agree, 1 disagree, 0 cannot be judged"), "{out}");
    assert!(out.contains("  out_of_sequence: 0 -> 0, delta 0; the capture shows 49: DISAGREE"), "{out}");
    let bad = tmp("bad.txt");
    std::fs::write(&bad, "NIC statistics:\n     out_of_sequence: 0\n  this line is garbage\n").unwrap();
    let (code, _, err) =
        rocescope(&["replay", "--counters", &g, &bad.display().to_string(), "--counters-interface", "1", &fixture]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("{} line 3: not a `name: value` line", bad.display())), "{err}");
}
