//! `flows` and `timeline` as a user drives them (issue 10, scope: selection, ids, formats):
//! `--flow` by full id or by its `SRC>DST/DESTQP` part, `--qpn` with the paired flows, `--from`
//! and `--to`, CSV with one row per JSON event, and a DestQP reused with a new PSN range named
//! `#1`, on captures whose contents the test writes itself.

use std::path::{Path, PathBuf};
use std::process::Command;

use rocescope_analysis::capture::CaptureWriter;
use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ib::aeth::{AethRepr, Syndrome};

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

fn run(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().expect("run rocescope");
    assert!(out.status.success(), "rocescope {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8")
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&run(args)).expect("json")
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../fixtures/synth-{name}.pcapng")).display().to_string()
}

fn ids(v: &serde_json::Value) -> Vec<String> {
    v["flows"].as_array().unwrap().iter().map(|f| f["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn flow_selects_by_id_and_by_its_address_part() {
    let f = fixture("gbn-loss");
    let one = json(&["timeline", "-T", "json", "--flow", "10.0.0.1>10.0.1.1/512@1", &f]);
    assert_eq!(ids(&one), ["10.0.0.1>10.0.1.1/512@1"]);
    let all = json(&["flows", "-T", "json", "--flow", "10.0.0.1>10.0.1.1/512", &f]);
    let mut got = ids(&all);
    got.sort();
    assert_eq!(got, ["10.0.0.1>10.0.1.1/512@0", "10.0.0.1>10.0.1.1/512@1", "10.0.0.1>10.0.1.1/512@2"]);
    // --qpn 256 (the requester's QP, where the ACKs go): those flows and their peers.
    let q = json(&["flows", "-T", "json", "--qpn", "256", &f]);
    assert_eq!(q["flows"].as_array().unwrap().len(), 6);
    let q = json(&["flows", "-T", "json", "--qpn", "0x200", "--flow", "10.0.0.1>10.0.1.1/512@0", &f]);
    assert_eq!(ids(&q), ["10.0.0.1>10.0.1.1/512@0"]);
}

#[test]
fn a_flow_id_that_matches_nothing_is_named_on_standard_error() {
    let f = fixture("gbn-loss");
    for cmd in ["flows", "timeline"] {
        // A typo'd id beside a real one: the real one is reported, the typo named, exit 0.
        let out = Command::new(BIN)
            .args([cmd, "-T", "json", "--flow", "10.0.0.1>10.0.1.1/512@1", "--flow", "10.0.0.9>10.0.1.1/512", &f])
            .output()
            .expect("run rocescope");
        assert!(out.status.success(), "{cmd}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(ids(&v), ["10.0.0.1>10.0.1.1/512@1"], "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--flow 10.0.0.9>10.0.1.1/512 matches no flow"), "{cmd}: {err}");
        assert!(!err.contains("--flow 10.0.0.1>10.0.1.1/512@1 matches"), "{cmd}: {err}");
    }
}

#[test]
fn from_and_to_keep_a_window_of_the_capture() {
    let f = fixture("gbn-loss");
    // Every frame's time, from decode, to know which frames a window keeps.
    // (seconds.nanoseconds, read as integer nanoseconds: an f64 of the epoch loses them)
    let times: Vec<(u64, u64)> = run(&["decode", "-T", "fields", "-e", "frame.number", "-e", "frame.time_epoch", &f])
        .lines()
        .map(|l| {
            let (n, t) = l.split_once('\t').unwrap();
            let (s, ns) = t.split_once('.').unwrap();
            (n.parse().unwrap(), s.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap())
        })
        .collect();
    let t0 = times[0].1;
    let (from, to) = (4_000u64, 12_000u64);
    let kept: Vec<u64> = times.iter().filter(|(_, t)| t - t0 >= from && t - t0 <= to).map(|x| x.0).collect();
    let w = json(&["flows", "-T", "json", "--from", "0.000004", "--to", "0.000012", &f]);
    let frames: u64 = w["flows"].as_array().unwrap().iter().map(|f| f["frames"].as_u64().unwrap()).sum();
    assert_eq!(frames, kept.len() as u64);
    assert!(frames > 0 && frames < times.len() as u64);
    let t = json(&["timeline", "-T", "json", "--from", "0.000004", "--to", "0.000012", &f]);
    for fl in t["flows"].as_array().unwrap() {
        for r in fl["retransmissions"].as_array().unwrap() {
            assert!(kept.contains(&r["frame"].as_u64().unwrap()));
        }
    }
}

#[test]
fn csv_has_a_row_per_event() {
    let f = fixture("irn-loss");
    let t = json(&["timeline", "-T", "json", &f]);
    let events: usize = t["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            ["losses", "retransmissions", "capture_gaps", "messages"].iter().map(|k| f[k].as_array().unwrap().len()).sum::<usize>()
        })
        .sum();
    let csv = run(&["timeline", "-T", "csv", &f]);
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("flow,event,frame,time_ns,psn,message,detail"));
    assert_eq!(lines.count(), events);
    let flows_csv = run(&["flows", "-T", "csv", &f]);
    let header: Vec<&str> = flows_csv.lines().next().unwrap().split(',').collect();
    for row in flows_csv.lines().skip(1) {
        assert_eq!(row.split(',').count(), header.len(), "{row}");
    }
    assert_eq!(flows_csv.lines().count() - 1, t["flows"].as_array().unwrap().len());
}

/// A SEND Only from 10.0.0.1 to QP 0x42 of 10.0.0.2 at `psn`, or the ACK of it.
fn frame(psn: u32, ack: bool) -> Vec<u8> {
    let payload = [7u8; 64];
    let (net, roce) = if ack {
        let mut r = RoceRepr::new(0x11, 0x41, psn);
        r.aeth = Some(AethRepr { syndrome: Syndrome::Ack { credit: 31 }, msn: 0 });
        (NetRepr::Ipv4 { src: [10, 0, 0, 2], dst: [10, 0, 0, 1], tos: 0, ttl: 62, ident: 0 }, r)
    } else {
        (NetRepr::Ipv4 { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], tos: 0, ttl: 64, ident: 0 }, RoceRepr::new(0x04, 0x42, psn).with_payload(&payload))
    };
    FrameRepr::new(net, roce).to_vec()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rocescope-acli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn a_reused_destqp_with_a_new_psn_range_is_a_new_flow() {
    let path = tmp("reuse.pcapng");
    {
        let mut w = CaptureWriter::new(std::fs::File::create(&path).unwrap(), &["tap"]).unwrap();
        let mut t = 1_700_000_000_000_000_000u64;
        // First use: PSNs 100..104, each acknowledged; then the QP is torn down and reused from
        // PSN 9,000,000 (far from the first range), and 3 more.
        for psn in (100..104).chain(9_000_000..9_000_003) {
            w.write(0, t, &frame(psn, false)).unwrap();
            w.write(0, t + 500, &frame(psn, true)).unwrap();
            t += 1000;
        }
    }
    let p = path.display().to_string();
    let t = json(&["timeline", "-T", "json", &p]);
    let flows = t["flows"].as_array().unwrap();
    let requests: Vec<(&str, usize)> = flows
        .iter()
        .filter(|f| f["role"] == "requests")
        .map(|f| (f["id"].as_str().unwrap(), f["messages"].as_array().unwrap().len()))
        .collect();
    assert_eq!(requests, [("10.0.0.1>10.0.0.2/66", 4), ("10.0.0.1>10.0.0.2/66#1", 3)]);
    for f in flows.iter().filter(|f| f["role"] == "requests") {
        assert_eq!(f["tap"], "sender", "{}", f["id"]);
        for m in f["messages"].as_array().unwrap() {
            assert!(m["complete_frame"].as_u64().is_some(), "{}: {m}", f["id"]);
        }
        assert!(f["retransmissions"].as_array().unwrap().is_empty());
    }
    // --flow takes the #N id.
    let one = json(&["timeline", "-T", "json", "--flow", "10.0.0.1>10.0.0.2/66#1", &p]);
    assert_eq!(ids(&one), ["10.0.0.1>10.0.0.2/66#1"]);
}

/// A frame of the little conversation below: `send` from 10.0.0.1 (TTL 64: the tap is at the
/// sender) to QP 0x42, else from 10.0.0.2 to QP 0x41.
fn conv(opcode: u8, psn: u32, tos: u8, aeth: Option<Syndrome>) -> Vec<u8> {
    let payload = [1u8; 32];
    let send = aeth.is_none() && opcode != 0x81;
    let mut r = if send { RoceRepr::new(opcode, 0x42, psn).with_payload(&payload) } else { RoceRepr::new(opcode, 0x41, psn) };
    r.aeth = aeth.map(|syndrome| AethRepr { syndrome, msn: 0 });
    let net = if send {
        NetRepr::Ipv4 { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], tos, ttl: 64, ident: 0 }
    } else {
        NetRepr::Ipv4 { src: [10, 0, 0, 2], dst: [10, 0, 0, 1], tos, ttl: 62, ident: 0 }
    };
    FrameRepr::new(net, r).to_vec()
}

/// The per-packet fields a frame shows at once, on a conversation written for them: a SEND of
/// five packets whose PSN 12 comes late (after 13: a PSN gap, then out of order), a NAK of 12
/// twice (the second a duplicate), the last packet CE-marked, its ACK 4,000 ns after it (an RTT
/// sample; it completes message 0), and a CNP 4,500 ns after the CE mark.
#[test]
fn immediate_fields_on_a_hand_written_conversation() {
    let path = tmp("fields.pcapng");
    let nak = Some(Syndrome::Nak { code: 0 });
    let frames: [(u64, Vec<u8>); 9] = [
        (0, conv(0x00, 10, 0x02, None)),
        (1000, conv(0x01, 11, 0x02, None)),
        (2000, conv(0x01, 13, 0x02, None)),
        (3000, conv(0x11, 12, 0, nak)),
        (3100, conv(0x11, 12, 0, nak)),
        (4000, conv(0x01, 12, 0x02, None)),
        (5000, conv(0x02, 14, 0x03, None)),
        (9000, conv(0x11, 14, 0, Some(Syndrome::Ack { credit: 31 }))),
        (9500, conv(0x81, 0, 0, None)),
    ];
    {
        let mut w = CaptureWriter::new(std::fs::File::create(&path).unwrap(), &["tap"]).unwrap();
        for (t, f) in &frames {
            w.write(0, 1_700_000_000_000_000_000 + t, f).unwrap();
        }
    }
    let cols = [
        "frame.number",
        "rocescope.analysis.psn_gap",
        "rocescope.analysis.out_of_order",
        "rocescope.analysis.duplicate_nak",
        "rocescope.analysis.ack_rtt_ns",
        "rocescope.analysis.message_complete",
        "rocescope.analysis.ce_to_cnp_ns",
        "rocescope.analysis.message",
        "rocescope.analysis.retransmission",
    ];
    let p = path.display().to_string();
    let mut args = vec!["decode", "-T", "fields"];
    for c in cols {
        args.extend(["-e", c]);
    }
    args.push(&p);
    let got = run(&args);
    let want = "\
1\t\t\t\t\t\t\t0\t
2\t\t\t\t\t\t\t0\t
3\t1\t\t\t\t\t\t0\t
4\t\t\t\t\t\t\t\t
5\t\t\t1\t\t\t\t\t
6\t\t1\t\t\t\t\t0\t
7\t\t\t\t\t\t\t0\t
8\t\t\t\t4000\t0\t\t\t
9\t\t\t\t\t\t4500\t\t
";
    assert_eq!(got, want);
}

/// A capture cut in the middle of a record: the flows of the frames before the cut are
/// reported, then a one-line error naming the file and the byte offset, exit status 2.
#[test]
fn a_capture_cut_mid_record_reports_what_came_before_then_fails() {
    let whole = std::fs::read(fixture("gbn-loss")).unwrap();
    let path = tmp("cut.pcapng");
    std::fs::write(&path, &whole[..whole.len() * 2 / 3 + 5]).unwrap();
    for cmd in ["flows", "timeline"] {
        let out = Command::new(BIN).args([cmd, "-T", "json", path.to_str().unwrap()]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("cut.pcapng") && err.contains("byte "), "{cmd}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the report of the frames before the cut");
        let flows = v["flows"].as_array().unwrap();
        assert!(!flows.is_empty(), "{cmd}");
    }
}

/// A CM REQ from 10.0.0.1 (QPN `a`, comm id `id`) to 10.0.0.2, or the REP from QPN `b`.
fn cm(rep: bool, id: u32, qpn: u32) -> Vec<u8> {
    use rocescope_codec::ib::cm::{CmMsg, CmRepr};
    let cm = CmRepr {
        msg: if rep { CmMsg::Rep } else { CmMsg::Req },
        transaction_id: 7,
        local_comm_id: if rep { id + 100 } else { id },
        remote_comm_id: if rep { id } else { 0 },
        qpn,
        start_psn: 1000,
    };
    let mut mad = [0u8; CmRepr::LEN];
    cm.emit(&mut mad);
    let mut r = RoceRepr::new(0x64, 1, 0).with_payload(&mad);
    if let Some(d) = &mut r.deth {
        d.q_key = 0x8001_0000;
        d.src_qp = 1;
    }
    let (src, dst) = if rep { ([10, 0, 0, 2], [10, 0, 0, 1]) } else { ([10, 0, 0, 1], [10, 0, 0, 2]) };
    FrameRepr::new(NetRepr::Ipv4 { src, dst, tos: 0, ttl: if rep { 62 } else { 64 }, ident: 0 }, r).to_vec()
}

/// A SEND Only from 10.0.0.1 to QP `qp` of 10.0.0.2, or 10.0.0.2's ACK to QP `qp` of 10.0.0.1.
fn on_qp(send: bool, qp: u32, psn: u32) -> Vec<u8> {
    let payload = [3u8; 16];
    if send {
        let net = NetRepr::Ipv4 { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], tos: 0, ttl: 64, ident: 0 };
        FrameRepr::new(net, RoceRepr::new(0x04, qp, psn).with_payload(&payload)).to_vec()
    } else {
        let mut r = RoceRepr::new(0x11, qp, psn);
        r.aeth = Some(AethRepr { syndrome: Syndrome::Ack { credit: 31 }, msn: 0 });
        FrameRepr::new(NetRepr::Ipv4 { src: [10, 0, 0, 2], dst: [10, 0, 0, 1], tos: 0, ttl: 62, ident: 0 }, r).to_vec()
    }
}

/// Two connections between the same hosts whose PSNs alone would pair them wrong: the CM
/// exchange (REQ/REP: QP 0x11 ↔ 0x21 and 0x12 ↔ 0x22) pairs each ACK flow with its own data
/// flow. Without the CM frames, the first ACK flow pairs with the data flow seen first (its PSNs
/// are as near), as the second capture shows.
#[test]
fn cm_mads_pair_the_two_directions() {
    let write = |name: &str, with_cm: bool| {
        let path = tmp(name);
        let mut w = CaptureWriter::new(std::fs::File::create(&path).unwrap(), &["tap"]).unwrap();
        let mut frames = Vec::new();
        if with_cm {
            frames.extend([cm(false, 1, 0x11), cm(true, 1, 0x21), cm(false, 2, 0x12), cm(true, 2, 0x22)]);
        }
        // QP 0x22 sends first; both end at PSN 1003.
        frames.extend([on_qp(true, 0x22, 1003), on_qp(true, 0x21, 1000), on_qp(true, 0x21, 1001)]);
        frames.extend([on_qp(true, 0x21, 1002), on_qp(true, 0x21, 1003)]);
        frames.extend([on_qp(false, 0x11, 1003), on_qp(false, 0x12, 1003)]);
        for (n, f) in frames.iter().enumerate() {
            w.write(0, 1_700_000_000_000_000_000 + n as u64 * 1000, f).unwrap();
        }
        path
    };
    let peers = |path: &PathBuf| -> Vec<(String, String)> {
        let t = json(&["timeline", "-T", "json", path.to_str().unwrap()]);
        t["flows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["role"] == "responses")
            .map(|f| (f["id"].as_str().unwrap().to_string(), f["peer"].as_str().unwrap_or("").to_string()))
            .collect()
    };
    let with = peers(&write("cm.pcapng", true));
    assert_eq!(
        with,
        [
            ("10.0.0.2>10.0.0.1/17".to_string(), "10.0.0.1>10.0.0.2/33".to_string()),
            ("10.0.0.2>10.0.0.1/18".to_string(), "10.0.0.1>10.0.0.2/34".to_string())
        ]
    );
    let without = peers(&write("nocm.pcapng", false));
    assert_eq!(without[0], ("10.0.0.2>10.0.0.1/17".to_string(), "10.0.0.1>10.0.0.2/34".to_string()));
}
