//! `rocescope replay` on the command line (issue 12): exit 0 on a conformant capture with the
//! report in text and JSON (and on one with a NAK deleted: a capture gap is ambiguous, not a
//! departure), 1 when a departure is found (a NAK sent twice), 2 on unusable input (garbage,
//! standard input, an unknown stack); SDR, Flor and ERD captures listed as not judged; NetRT
//! captures judged as Go-Back-N at the hosts with the switches' resends and unfulfilled
//! requests checked against the requests seen.

use std::path::Path;
use std::process::Command;

use rocescope_analysis::capture::{self, CaptureWriter};

#[path = "common/explained.rs"]
mod explained;

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../fixtures/synth-{name}.pcapng")).display().to_string()
}

/// `rocescope synth ARGS -o DIR/NAME.pcapng`, which must succeed: the capture.
fn synth_into(dir: &Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    let pcap = dir.join(format!("{name}.pcapng"));
    let out = Command::new(BIN).arg("synth").args(args).arg("-o").arg(&pcap).output().unwrap();
    assert!(out.status.success(), "synth {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    pcap
}

/// `rocescope replay -T json FILE`: its exit status and its report.
fn replay_report(file: &Path) -> (i32, serde_json::Value) {
    let (code, json, err) = replay(&["-T", "json", file.to_str().unwrap()]);
    (code, serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}{err}")))
}

fn replay(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).arg("replay").args(args).output().expect("run rocescope");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_conformant_capture_exits_0_with_its_connections_at_every_tap() {
    let (code, text, err) = replay(&[&fixture("gbn-loss")]);
    assert_eq!(code, 0, "{err}");
    assert!(text.starts_with("replay --stack auto: 3 connection(s) judged, 0 departure(s), 1 flow(s) not judged"), "{text}");
    // (The fabric tap missed a PSN lost before it: judged up to there, and listed.)
    assert!(text.contains("not judged: 10.0.0.1>10.0.1.1/512@2: fabric tap: PSN 11582648 never crossed it"), "{text}");
    assert!(text.contains("10.0.0.1>10.0.1.1/512@0 (gbn, Sender tap; responses 10.0.1.1>10.0.0.1/256@0)"), "{text}");
    assert!(text.contains("10.0.0.1>10.0.1.1/512@1 (gbn, Receiver tap; responses 10.0.1.1>10.0.0.1/256@1)"), "{text}");
    assert!(text.contains("10.0.0.1>10.0.1.1/512@2 (gbn, Fabric tap; responses 10.0.1.1>10.0.0.1/256@2)"), "{text}");
    let (code, json, _) = replay(&["--stack", "gbn", "-T", "json", &fixture("gbn-loss")]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["stack"], "gbn");
    assert_eq!(v["connections"][2]["flow"], "10.0.0.1>10.0.1.1/512@1");
    assert_eq!(v["connections"][2]["tap"], "receiver");
    assert_eq!(v["findings"].as_array().unwrap().len(), 0);
}

#[test]
fn a_departure_exits_1_and_unusable_input_2() {
    // The receiver tap's first NAK deleted, or sent twice (frames of interface 1 that are
    // Acknowledge packets with a NAK syndrome, byte 0x60 of the AETH's syndrome: NAK code 0).
    let src = fixture("gbn-loss");
    let mut r = capture::open(&src).expect("open");
    let path = std::env::temp_dir().join(format!("rocescope-replay-cli-{}.pcapng", std::process::id()));
    let (mut deleted, mut doubled) = (
        CaptureWriter::new(std::io::BufWriter::new(std::fs::File::create(&path).unwrap()), &["sender", "receiver", "fabric"]).unwrap(),
        CaptureWriter::new(Vec::new(), &["sender", "receiver", "fabric"]).unwrap(),
    );
    let mut done = false;
    while let Some(rec) = r.next_record().expect("read") {
        // Ethernet 14 + IPv4 20 + UDP 8: BTH opcode at 42, AETH syndrome at 42 + 12.
        let nak = rec.data.get(42) == Some(&0x11) && rec.data.get(54) == Some(&0x60);
        doubled.write(rec.interface, rec.ts_ns, rec.data).unwrap();
        if rec.interface == 1 && nak && !done {
            done = true;
            doubled.write(rec.interface, rec.ts_ns + 100, rec.data).unwrap();
            continue;
        }
        deleted.write(rec.interface, rec.ts_ns, rec.data).unwrap();
    }
    drop(deleted);
    assert!(done, "the fixture has a NAK at the receiver tap");
    let (code, text, _) = replay(&[&path.display().to_string()]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("0 departure(s)") && text.contains("Ambiguous gbn.nak-missing on 10.0.0.1>10.0.1.1/512@1"), "{text}");
    std::fs::write(&path, doubled.into_inner()).unwrap();
    let (code, text, _) = replay(&[&path.display().to_string()]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("Departure gbn.nak-repeated on 10.0.0.1>10.0.1.1/512@1"), "{text}");

    let garbage = std::env::temp_dir().join(format!("rocescope-replay-garbage-{}", std::process::id()));
    std::fs::write(&garbage, b"not a capture at all, just text").unwrap();
    let (code, _, err) = replay(&[&garbage.display().to_string()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("rocescope-replay-garbage"), "{err}");
    let (code, _, err) = replay(&["-"]);
    assert_eq!((code, err.contains("give a file")), (2, true), "{err}");
    let (code, _, err) = replay(&["--stack", "tcp", &fixture("gbn-loss")]);
    assert_eq!((code, err.contains("unknown stack 'tcp'")), (2, true), "{err}");
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(garbage);
}

/// Acceptance 1 of issue 12, on a grid: every unmodified capture the simulator writes (each
/// stack, lossy, incast and sprayed over several paths, four seeds, taps at the sender, the
/// receiver and in the fabric) shows no departure, with every connection judged at the
/// receiver's tap; and every ambiguous finding is one the network explains, by the truth (a
/// go-back's first resend lost on its way; whole messages reordered ahead of a packet).
#[test]
fn the_simulators_captures_on_a_grid_show_no_departure() {
    let dir = std::env::temp_dir().join(format!("rocescope-replay-grid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for stack in ["gbn", "irn", "dcp"] {
        for shape in [&["--incast", "8"][..], &["--incast", "4", "--paths", "4", "--spray", "--reorder", "2000"][..]] {
            for seed in ["1", "2", "3", "4"] {
                let file = dir.join(format!("{stack}-{}-{seed}.pcapng", shape.len()));
                let truth = dir.join(format!("{stack}-{}-{seed}.json", shape.len()));
                let file = file.display().to_string();
                let out = Command::new(BIN)
                    .args(["synth", "--stack", stack, "--messages", "12", "--loss", "0.02", "--taps", "sender,receiver,fabric", "--seed", seed, "-o", &file])
                    .arg("--truth")
                    .arg(&truth)
                    .args(shape)
                    .output()
                    .expect("synth");
                assert!(out.status.success(), "synth: {}", String::from_utf8_lossy(&out.stderr));
                let (code, json, err) = replay(&["--stack", stack, "-T", "json", &file]);
                assert_eq!(code, 0, "{stack} {shape:?} {seed}: {json}{err}");
                let v: serde_json::Value = serde_json::from_str(&json).unwrap();
                // Every sender's connection at the receiver's tap, and the first sender's at its
                // own tap (the requester's rules).
                let senders: usize = shape[1].parse().unwrap();
                let conns = v["connections"].as_array().unwrap();
                assert_eq!(conns.iter().filter(|c| c["tap"] == "receiver").count(), senders, "{stack} {shape:?} {seed}: {json}");
                assert_eq!(conns.iter().filter(|c| c["tap"] == "sender").count(), 1, "{json}");
                assert!(conns.iter().all(|c| c["stack"] == stack), "{json}");
                let truth: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
                let truth = explained::Truth::new(&truth);
                let profile = if stack == "dcp" { rocescope_codec::Profile::Dcp } else { rocescope_codec::Profile::Std };
                let index = explained::capture_index(Path::new(&file), profile);
                for f in v["findings"].as_array().unwrap() {
                    let why = truth.explains(f, |n| index[&n].0, |n| index[&n].1);
                    assert!(why.is_ok(), "{stack} {shape:?} {seed}: {why:?}");
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Acceptance 3 for READs: a READ response the requester's tap missed (deleted from a
/// simulated capture with READs and losses, one at a time) is a capture gap, never a departure:
/// the requester went on as one that got it.
#[test]
fn read_responses_missing_from_the_requesters_tap_are_no_departure() {
    let dir = std::env::temp_dir().join(format!("rocescope-replay-reads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut tried = 0;
    for seed in ["2", "4"] {
        let src = dir.join(format!("mix-{seed}.pcapng"));
        let out = Command::new(BIN)
            .args(["synth", "--stack", "gbn", "--op", "mix", "--loss", "0.05", "--messages", "30", "--message-size", "8192", "--seed", seed, "-o"])
            .arg(&src)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut records = Vec::new();
        let mut r = capture::open(&src.display().to_string()).unwrap();
        while let Some(rec) = r.next_record().unwrap() {
            records.push((rec.interface, rec.ts_ns, rec.data.to_vec()));
        }
        // Every READ response (opcodes 0x0D-0x10, BTH at byte 42) at the sender's tap.
        let responses: Vec<usize> = (0..records.len())
            .filter(|&i| records[i].0 == 0 && records[i].2.get(42).is_some_and(|op| (0x0D..=0x10).contains(op)))
            .collect();
        for &gone in &responses {
            let path = dir.join("gap.pcapng");
            let mut w = CaptureWriter::new(std::io::BufWriter::new(std::fs::File::create(&path).unwrap()), &["sender", "receiver", "fabric"]).unwrap();
            for (i, (iface, ts, data)) in records.iter().enumerate() {
                if i != gone {
                    w.write(*iface, *ts, data).unwrap();
                }
            }
            drop(w);
            let (code, json, err) = replay(&["--stack", "gbn", "-T", "json", &path.display().to_string()]);
            let v: serde_json::Value = serde_json::from_str(&json).unwrap_or_else(|_| panic!("{err}"));
            let departures: Vec<_> = v["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "departure").collect();
            assert!(departures.is_empty(), "seed {seed}, record {gone} deleted: {departures:#?}");
            assert_eq!(code, 0);
            tried += 1;
        }
    }
    assert!(tried >= 20, "{tried}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_capture_cut_in_its_last_record_is_judged_up_to_the_cut_then_exits_2() {
    // As `flows` does: the report of the frames before the damage, then the located error.
    let bytes = std::fs::read(fixture("gbn-loss")).unwrap();
    let path = std::env::temp_dir().join(format!("rocescope-replay-cut-{}.pcapng", std::process::id()));
    std::fs::write(&path, &bytes[..bytes.len() - 30]).unwrap();
    let (code, text, err) = replay(&[path.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(text.starts_with("replay --stack auto: 3 connection(s) judged, 0 departure(s)"), "{text}");
    assert!(err.contains("byte") && err.contains("middle of a record"), "{err}");
}

/// Acceptance 1, beyond the grid: other shapes the simulator writes (a leaf-spine all-to-all,
/// where every host is both requester and responder; READs; PFC; bursty loss; a NIC timer other
/// than the reference's; adaptive routing) show no departure at any tap.
#[test]
fn other_simulated_shapes_show_no_departure() {
    let dir = std::env::temp_dir().join(format!("rocescope-replay-shapes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shapes: [&[&str]; 6] = [
        &["--topology", "leaf-spine", "--pattern", "all-to-all", "--loss", "0.02"],
        &["--op", "mix", "--loss", "0.05"],
        &["--pfc", "--incast", "4"],
        &["--burst-loss", "0.01,0.3"],
        &["--rto", "200000", "--loss", "0.05"],
        &["--adaptive", "--paths", "4", "--loss", "0.05"],
    ];
    for stack in ["gbn", "irn", "dcp"] {
        for (k, shape) in shapes.iter().enumerate() {
            if stack != "gbn" && shape.contains(&"mix") {
                continue; // READs: Go-Back-N only
            }
            let file = dir.join(format!("{stack}-{k}.pcapng")).display().to_string();
            let out = Command::new(BIN)
                .args(["synth", "--stack", stack, "--messages", "12", "--message-size", "8192", "--seed", "3", "-o", &file])
                .args(*shape)
                .output()
                .expect("synth");
            assert!(out.status.success(), "synth: {}", String::from_utf8_lossy(&out.stderr));
            let (code, json, err) = replay(&["-T", "json", &file]);
            let v: serde_json::Value = serde_json::from_str(&json).unwrap_or_else(|_| panic!("{json}{err}"));
            let departures: Vec<_> = v["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "departure").collect();
            assert!(departures.is_empty(), "{stack} {shape:?}: {departures:#?}");
            assert_eq!(code, 0, "{stack} {shape:?}: {err}");
            assert!(v["connections"].as_array().unwrap().len() >= 3, "{stack} {shape:?}: {json}");
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sdr_captures_are_judged_at_the_sender_and_a_packet_resent_after_its_ack_is_a_departure() {
    // `synth --stack sdr-sr` and `sdr-ec`: one connection (all its data QPs and its control QP)
    // judged at the sender's tap, conformant (listed as `sdr-ec` once it shows an EC_ACK); with a
    // data packet copied to the end of the capture (after the SR_ACKs that showed it received),
    // `sdr.resend-acked` at that copy.
    let dir = std::env::temp_dir().join(format!("rocescope-replay-sdr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for stack in ["sdr-sr", "sdr-ec"] {
        let args = ["--stack", stack, "--messages", "4", "--message-size", "8192", "--loss", "0.02"];
        let pcap = synth_into(&dir, stack, &[&args[..], &["--ec-k", "4", "--ec-m", "2", "--taps", "sender"]].concat());
        for choice in ["auto", stack] {
            let (code, text, err) = replay(&["--stack", choice, pcap.to_str().unwrap()]);
            assert_eq!(code, 0, "{err}");
            let head = format!("replay --stack {choice}: 1 connection(s) judged, 0 departure(s), 0 flow(s) not judged");
            assert!(text.starts_with(&head), "{text}");
            assert!(text.contains(&format!("/512 ({stack}, Sender tap")), "{text}");
        }
        // The first data packet (a UC WRITE Only with Immediate, 0x2B) sent again 1 ms after the
        // capture's last frame (erasure coding: D0's packet 0, after its message's EC_ACK).
        let mut recs = capture_records(&pcap);
        let first = recs.iter().find(|(_, _, d)| d.get(42) == Some(&0x2B)).cloned().expect("a data packet");
        let end = recs.last().unwrap().1;
        recs.push((first.0, end + 1_000_000, first.2));
        let copied = dir.join("sdr-copied.pcapng");
        write_capture(&recs, &copied);
        let (code, v) = replay_report(&copied);
        assert_eq!(code, 1, "{v}");
        let f = v["findings"].as_array().unwrap();
        assert_eq!(f.len(), 1, "{v}");
        assert_eq!((f[0]["rule"].as_str(), f[0]["kind"].as_str()), (Some("sdr.resend-acked"), Some("departure")));
        assert_eq!(f[0]["frames"], serde_json::json!([recs.len()]));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn flor_captures_are_judged_at_the_sender() {
    // `synth --stack flor` captures tapped at the sender only, with their truth: judged there
    // (its data QP, conformant; the receiver's ADDR_RESPs, on the reverse QP, arrive at this tap
    // and are judged as a receiver's, owed no ACK), under `auto` and under its own stack.
    let dir = std::env::temp_dir().join(format!("rocescope-replay-flor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for stack in ["flor"] {
        let pcap = dir.join(format!("{stack}.pcapng"));
        let mut c = Command::new(BIN);
        c.args(["synth", "--stack", stack, "--messages", "4", "--message-size", "50000", "--loss", "0.02"]);
        c.args(["--taps", "sender", "-o"]).arg(&pcap);
        c.arg("--truth").arg(dir.join("truth.json"));
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(dir.join("truth.json").exists());
        for choice in ["auto", stack] {
            let (code, text, err) = replay(&["--stack", choice, pcap.to_str().unwrap()]);
            assert_eq!(code, 0, "{err}");
            let head = format!("replay --stack {choice}: 2 connection(s) judged, 0 departure(s), 0 flow(s) not judged");
            assert!(text.starts_with(&head), "{text}");
            assert!(text.contains("10.0.0.1>10.0.1.1/512 (flor, Sender tap; responses -)"), "{text}");
            assert!(text.contains("10.0.1.1>10.0.0.1/256 (flor, Receiver tap; responses -)"), "{text}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn erd_captures_are_judged_at_both_ends_taps() {
    // `synth --stack erd` with its truth, replayed under `auto` (the EETH says ERD) and `erd`:
    // the sender's and the receiver's taps judged and conformant, the fabric tap listed as not
    // judged with why; text and JSON agree.
    let dir = std::env::temp_dir().join(format!("rocescope-replay-erd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let truth = dir.join("truth.json");
    let args = ["--stack", "erd", "--messages", "4", "--message-size", "50000", "--loss", "0.02", "--loss-dir", "both"];
    let pcap = synth_into(&dir, "erd", &[&args[..], &["--truth", truth.to_str().unwrap()]].concat());
    for choice in ["auto", "erd"] {
        let (code, text, err) = replay(&["--stack", choice, pcap.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        let head = format!("replay --stack {choice}: 2 connection(s) judged, 0 departure(s), 1 flow(s) not judged");
        assert!(text.starts_with(&head), "{text}");
        assert!(text.contains("(erd, Sender tap;") && text.contains("(erd, Receiver tap;"), "{text}");
        assert!(text.contains("@2: fabric tap: ERD's NACKs and resends may take paths"), "{text}");
        let (code, json, _) = replay(&["--stack", choice, "-T", "json", pcap.to_str().unwrap()]);
        assert_eq!(code, 0);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let conns = v["connections"].as_array().unwrap();
        assert!(conns.iter().all(|c| c["stack"] == "erd" && c["departures"] == 0), "{json}");
        // At the sender's tap: every data packet (4 messages of 49 packets, and the resends)
        // and the NACK segments the losses caused (ERD's responses).
        let sender = conns.iter().find(|c| c["tap"] == "sender").unwrap();
        assert!(sender["requests"].as_u64().unwrap() > 4 * 49 && sender["responses"].as_u64().unwrap() >= 1, "{sender}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `synth --stack netrt` on a leaf-spine with frames lost on purpose on the sender's leaf's
/// uplink (where the fabric tap is), then the capture as written, and with a switch fault
/// injected into the fabric tap's frames.
fn netrt_capture(dir: &Path, name: &str, extra: &[&str]) -> std::path::PathBuf {
    let pcap = dir.join(format!("{name}.pcapng"));
    let mut c = Command::new(BIN);
    c.args(["synth", "--stack", "netrt", "--topology", "leaf-spine", "--leaves", "2", "--spines", "1"]);
    c.args(["--hosts-per-leaf", "1", "--messages", "4", "--message-size", "65536"]);
    c.args(extra).arg("-o").arg(&pcap);
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    pcap
}

/// (interface, time, bytes) of every record.
fn capture_records(path: &Path) -> Vec<(u32, u64, Vec<u8>)> {
    let mut r = capture::open(&path.display().to_string()).unwrap();
    let mut v = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        v.push((rec.interface, rec.ts_ns, rec.data.to_vec()));
    }
    v
}

fn write_capture(recs: &[(u32, u64, Vec<u8>)], path: &Path) {
    let out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w = CaptureWriter::new(out, &["sender", "receiver", "fabric"]).unwrap();
    for (i, t, d) in recs {
        w.write(*i, *t, d).unwrap();
    }
}

#[test]
fn netrt_captures_are_conformant_and_a_switch_resending_what_no_request_asked_is_a_departure() {
    use rocescope_codec::ext::netrt::Netrt;
    use rocescope_codec::ext::Ext;
    use rocescope_codec::{DecodeOptions, Frame, LinkType, Profile};
    let dir = std::env::temp_dir().join(format!("rocescope-replay-netrt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Two frames lost on leaf1's uplink: two requests (the second for the new gap), two marked
    // resends; and with an empty pool, the unfulfilled request and the hosts' Go-Back-N.
    let repaired =
        netrt_capture(&dir, "repaired", &["--drop-frame", "leaf1>spine0:50", "--drop-frame", "leaf1>spine0:60"]);
    let unfulfilled =
        netrt_capture(&dir, "unfulfilled", &["--drop-frame", "leaf1>spine0:50", "--netrt-pool-bytes", "1"]);
    for pcap in [&repaired, &unfulfilled] {
        for choice in ["auto", "netrt"] {
            let (code, text, err) = replay(&["--stack", choice, pcap.to_str().unwrap()]);
            assert_eq!(code, 0, "{err}");
            assert!(
                text.starts_with(&format!("replay --stack {choice}: 3 connection(s) judged, 0 departure(s)")),
                "{text}"
            );
            // The switch's resends are kept from the hosts' judges: nothing ambiguous either.
            assert!(!text.contains("Ambiguous"), "{text}");
        }
    }
    let opts = DecodeOptions { profile: Profile::Netrt, ..Default::default() };
    let kind = |d: &[u8]| match Frame::parse(LinkType::Ethernet, d, d.len(), &opts).ext() {
        Ext::Netrt(n) => Some(*n),
        _ => None,
    };
    let psn_at = |d: &[u8]| 14 + usize::from(d[14] & 0x0f) * 4 + 8 + 9;
    // The fault: the source ToR resends a PSN no request named (the second resend's PSN moved
    // one down, to a PSN the requests say the destination ToR holds).
    let mut recs = capture_records(&repaired);
    let resends: Vec<usize> = (0..recs.len())
        .filter(|&i| recs[i].0 == 2 && kind(&recs[i].2) == Some(Netrt::Data { rtx_mark: true }))
        .collect();
    assert_eq!(resends.len(), 2, "two marked resends at the fabric tap");
    let at = psn_at(&recs[resends[1]].2);
    let p = u32::from_be_bytes([0, recs[resends[1]].2[at], recs[resends[1]].2[at + 1], recs[resends[1]].2[at + 2]]);
    recs[resends[1]].2[at..at + 3].copy_from_slice(&(p - 1).to_be_bytes()[1..]);
    let faulty = dir.join("faulty.pcapng");
    write_capture(&recs, &faulty);
    let (code, json, err) = replay(&["--stack", "netrt", "-T", "json", faulty.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}{json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let f = v["findings"].as_array().unwrap();
    assert_eq!(f.len(), 1, "{json}");
    assert_eq!(f[0]["rule"], "netrt.resend-unasked");
    assert_eq!(f[0]["frames"][0].as_u64(), Some(resends[1] as u64 + 1));
    // The fault: an unfulfilled request for a PSN no request asked for: one the destination
    // ToR holds (below the latest request's highest held PSN), inserted after the last request.
    let mut recs = capture_records(&repaired);
    let last_req = (0..recs.len())
        .filter(|&i| recs[i].0 == 2 && matches!(kind(&recs[i].2), Some(Netrt::Request { .. })))
        .last()
        .expect("a request");
    let Some(Netrt::Request { epsn }) = kind(&recs[last_req].2) else { unreachable!() };
    let held = epsn + 3;
    let body = rocescope_codec::ext::netrt::NetrtRepr::Unfulfilled { psn: held }.to_vec();
    let roce = rocescope_codec::ext::netrt::NetrtRepr::Unfulfilled { psn: held }.roce(0xc0, 0x800000, 0xffff, &body);
    let net = rocescope_codec::build::NetRepr::ipv4([10, 1, 1, 1], [10, 1, 0, 1]);
    let frame = rocescope_codec::build::FrameRepr::new(net, roce).to_vec();
    let t = recs[last_req].1 + 1;
    recs.insert(last_req + 1, (2, t, frame));
    let faulty = dir.join("faulty2.pcapng");
    write_capture(&recs, &faulty);
    let (code, json, err) = replay(&["--stack", "netrt", "-T", "json", faulty.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}{json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rules: Vec<&str> = v["findings"].as_array().unwrap().iter().filter_map(|f| f["rule"].as_str()).collect();
    assert_eq!(rules, ["netrt.unfulfilled-unasked"], "{json}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Flor's receiver (docs/replay.md "Flor"): a lossy capture is conformant at the receiver's tap;
/// with one of the ACKs the receiver sent taken out of its tap's frames (as if it had never sent
/// it), each WQE that ACK listed is a `flor.ack-late` departure at the frame that completed it.
#[test]
fn flor_receiver_leaving_a_wqe_unacknowledged_is_a_departure() {
    use rocescope_codec::ext::flor::Flor;
    use rocescope_codec::ext::Ext;
    use rocescope_codec::{DecodeOptions, Frame, LinkType, Profile};
    let dir = std::env::temp_dir().join(format!("rocescope-replay-flor-ack-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let args =
        ["--stack", "flor", "--messages", "8", "--message-size", "100000", "--loss", "0.01", "--loss-dir", "both"];
    let pcap = synth_into(&dir, "flor", &args);
    let (code, v) = replay_report(&pcap);
    assert_eq!(code, 0, "{v}");
    let receiver =
        v["connections"].as_array().unwrap().iter().find(|c| c["flow"] == "10.0.0.1>10.0.1.1/512@1").cloned();
    assert!(receiver.is_some_and(|c| c["stack"] == "flor" && c["tap"] == "receiver"), "{v}");
    // The third ACK the receiver's tap shows leaving, and how many WQEs it lists.
    let opts = DecodeOptions { verify: false, profile: Profile::Flor, ..Default::default() };
    let mut recs = capture_records(&pcap);
    let acks: Vec<(usize, usize)> = recs
        .iter()
        .enumerate()
        .filter(|(_, (iface, _, _))| *iface == 1)
        .filter_map(|(i, (_, _, d))| {
            let f = Frame::parse(LinkType::Ethernet, d, d.len(), &opts);
            let p = f.roce()?;
            match f.ext() {
                Ext::Flor(Flor::Ack(a)) => Some((i, a.acked(p.payload()).count())),
                _ => None,
            }
        })
        .collect();
    assert!(acks.len() > 3, "{} ACKs", acks.len());
    let (at, listed) = acks[2];
    recs.remove(at);
    let cut = dir.join("flor-ack-removed.pcapng");
    write_capture(&recs, &cut);
    let (code, v) = replay_report(&cut);
    assert_eq!(code, 1, "{v}");
    let found = v["findings"].as_array().unwrap();
    // One finding per WQE the ACK listed: `flor.ack-slow` for one that was owed an ACK at once
    // (its hint, or its number out of order), `flor.ack-late` for the others (the timer's). (The
    // third ACK of this run answers a hinted WRITE chunk at once.)
    assert_eq!(found.len(), listed, "{v}");
    assert!(found.iter().any(|f| f["rule"] == "flor.ack-slow"), "{v}");
    for f in found {
        let rule = f["rule"].as_str().unwrap();
        assert!(matches!(rule, "flor.ack-late" | "flor.ack-slow") && f["kind"] == "departure", "{f}");
        assert_eq!(f["flow"], "10.0.0.1>10.0.1.1/512@1");
        // At a data frame of the receiver's tap before the ACK that was taken out.
        let n = f["frames"][0].as_u64().unwrap() as usize;
        assert!(n <= at && recs[n - 1].0 == 1, "{f}");
        let seen = f["seen"].as_str().unwrap();
        if rule == "flor.ack-slow" && seen.contains("its hint") {
            // The WQE's last packet says so (a WRITE's immediate; a one-packet SEND's header).
            let d = &recs[n - 1].2;
            let hint = match Frame::parse(LinkType::Ethernet, d, d.len(), &opts).ext() {
                Ext::Flor(Flor::Write(rn)) => rn.hint,
                Ext::Flor(Flor::Send(h)) => h.hint(),
                _ => false,
            };
            assert!(hint, "{f}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// NetRT on a sprayed leaf-spine (docs/replay.md "NetRT's switches"): the fabric tap is on one of
/// several paths and may miss the requests that asked, so a resend it cannot match to one is
/// ambiguous, not a departure (this run gave two false departures before).
#[test]
fn netrt_on_a_sprayed_fabric_finds_no_departure_where_requests_may_take_another_path() {
    let dir = std::env::temp_dir().join(format!("rocescope-replay-netrt-spray-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let args = [
        ["--stack", "netrt", "--topology", "leaf-spine", "--leaves", "2", "--spines", "4", "--hosts-per-leaf", "2"],
        ["--messages", "16", "--message-size", "16384", "--loss", "0.03", "--loss-dir", "both", "--incast", "2"],
    ]
    .concat();
    let pcap = synth_into(&dir, "netrt-spray", &[&args[..], &["--seed", "5", "--spray"]].concat());
    let (code, v) = replay_report(&pcap);
    assert_eq!(code, 0, "{v}");
    let netrt: Vec<_> =
        v["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "netrt.resend-unasked").collect();
    assert!(!netrt.is_empty(), "the run shows what it was chosen for: {v}");
    for f in netrt {
        assert_eq!(f["kind"], "ambiguous", "{f}");
        assert!(f["seen"].as_str().unwrap().contains("one of several paths"), "{f}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
