//! Issue 12, acceptance 4, "Verdicts in Wireshark": `rocescope annotate IN -o OUT.pcapng` writes
//! each frame's analysis fields and replay findings as packet comments; tshark with the plugin
//! prints, from those comments, exactly what `rocescope decode` prints for every
//! `rocescope.analysis.*` and `rocescope.replay.*` field, on every fixture and on captures with
//! injected replay findings (a NAK sent twice: a departure; a NAK deleted: ambiguous). The
//! comments are not empty: a retransmission the synth fixtures' truth names, and the injected
//! departure at its frame, show. The copy keeps every block but the comments byte for byte; a
//! pcap input becomes a pcapng with the same frames.
//!
//! Without tshark the comparisons fail: they are never skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rocescope_analysis::capture::{self, CaptureWriter};
use rocescope_codec::ib::aeth::Syndrome;
use rocescope_codec::{DecodeOptions, Frame, LinkType, Params, Profile};

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("annotate-{}-{name}", std::process::id()))
}

/// Every `rocescope.analysis.*` and `rocescope.replay.*` field, as `rocescope fields` lists them.
fn verdict_fields() -> Vec<String> {
    let out = Command::new(BIN).arg("fields").output().unwrap();
    let names: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split('\t').next())
        .filter(|n| n.starts_with("rocescope.analysis.") || n.starts_with("rocescope.replay."))
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 20 && names.iter().any(|n| n == "rocescope.replay.departure"), "{names:?}");
    names
}

fn annotate(input: &Path, out: &Path) {
    let o = Command::new(BIN).arg("annotate").arg(input).arg("-o").arg(out).output().unwrap();
    assert!(o.status.success(), "annotate {}: {}", input.display(), String::from_utf8_lossy(&o.stderr));
}

/// tshark with the plugin under test, an empty configuration and home, the plugin's checks on
/// (a field or value the tables do not allow is a Lua error): `frame.number`, then `fields`.
fn tshark_lines(capture: &Path, fields: &[String]) -> Vec<String> {
    let config = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("annotate-wireshark-config");
    std::fs::create_dir_all(&config).unwrap();
    let mut cmd = Command::new("tshark");
    cmd.env("WIRESHARK_CONFIG_DIR", &config)
        .env("HOME", &config)
        .env("ROCESCOPE_LUA_CHECKS", "1")
        .arg("-n")
        .arg("-X")
        .arg(format!("lua_script:{}", repo().join("dissector/rocescope.lua").display()))
        .arg("-r")
        .arg(capture)
        .args(["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,", "-E", "quote=n"])
        .args(["-e", "_ws.lua.error", "-e", "frame.number"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("running tshark (install it: apt-get install tshark)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tshark failed on {}:\n{stderr}", capture.display());
    assert!(
        !stderr.contains("Lua") && !stderr.contains("rocescope"),
        "tshark reported a problem with the plugin:\n{stderr}"
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (err, rest) = l.split_once('\t').unwrap();
            assert!(err.is_empty(), "{}: Lua error: {err}", capture.display());
            rest.to_string()
        })
        .collect()
}

fn decode_lines(capture: &Path, fields: &[String]) -> Vec<String> {
    let mut cmd = Command::new(BIN);
    cmd.args(["decode", "-T", "fields", "-e", "frame.number"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.arg(capture).output().unwrap();
    assert!(out.status.success(), "decode: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
}

/// Annotates `input`, compares tshark and decode on the copy line by line, and gives the
/// values by frame number and field name.
fn annotate_and_compare(input: &Path, name: &str) -> (PathBuf, BTreeMap<(u64, String), String>) {
    let fields = verdict_fields();
    let out = tmp(&format!("{name}.pcapng"));
    annotate(input, &out);
    let theirs = tshark_lines(&out, &fields);
    let ours = decode_lines(&out, &fields);
    assert_eq!(theirs.len(), ours.len(), "{name}: tshark printed {} lines, decode {}", theirs.len(), ours.len());
    let diffs: Vec<String> = theirs
        .iter()
        .zip(&ours)
        .filter(|(t, o)| t != o)
        .take(5)
        .map(|(t, o)| format!("  tshark: {t:?}\n  decode: {o:?}"))
        .collect();
    assert!(diffs.is_empty(), "{name}: tshark and decode differ:\n{}", diffs.join("\n"));
    let mut values = BTreeMap::new();
    for line in &ours {
        let cells: Vec<&str> = line.split('\t').collect();
        let frame: u64 = cells[0].parse().unwrap();
        for (f, v) in fields.iter().zip(&cells[1..]) {
            if !v.is_empty() {
                values.insert((frame, f.clone()), v.to_string());
            }
        }
    }
    (out, values)
}

fn fixtures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcapng"))
        .collect();
    v.sort();
    assert!(v.len() >= 9, "{v:?}");
    v
}

/// The fixture's truth: the frames of the sender's tap (interface 0) that are retransmissions;
/// where the sender resent nothing (NetRT's in-network repairs), the fabric tap's (interface 2:
/// the source ToR's resends, between the ToRs).
fn truth_retransmissions(pcapng: &Path) -> Vec<u64> {
    let truth = pcapng.with_extension("truth.json");
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
    let at = |iface: u64| -> Vec<u64> {
        let tap = t["taps"].as_array().unwrap().iter().find(|tap| tap["interface"] == iface).unwrap();
        let frames = tap["frames"].as_array().unwrap().iter();
        frames.filter(|f| !f["retx"].is_null()).map(|f| f["frame"].as_u64().unwrap()).collect()
    };
    let sender = at(0);
    if sender.is_empty() {
        at(2)
    } else {
        sender
    }
}

#[test]
fn tshark_prints_what_decode_prints_on_every_annotated_fixture() {
    for input in fixtures() {
        let name = input.file_stem().unwrap().to_string_lossy().to_string();
        let (out, values) = annotate_and_compare(&input, &name);
        assert!(values.keys().any(|(_, f)| f == "rocescope.analysis.flow"), "{name}: no frame annotated");
        if name.ends_with("-loss") {
            let retx = truth_retransmissions(&input);
            assert!(!retx.is_empty(), "{name}: the truth names no retransmission");
            for fr in retx {
                assert_eq!(
                    values.get(&(fr, "rocescope.analysis.retransmission".into())).map(String::as_str),
                    Some("1"),
                    "{name}: frame {fr} is a retransmission in the truth"
                );
            }
        }
        same_frames_and_blocks(&input, &out);
        let _ = std::fs::remove_file(out);
    }
}

/// A pcap input (a fixture converted by editcap: microsecond timestamps, one link type) becomes a
/// pcapng with one interface holding the file's link type and snapshot length, the same frames
/// and times, and the verdicts.
#[test]
fn a_pcap_capture_is_annotated_as_pcapng() {
    let pcap = tmp("gbn-loss.pcap");
    let fixture = repo().join("fixtures/synth-gbn-loss.pcapng");
    let o = Command::new("editcap")
        .args(["-F", "pcap"])
        .arg(&fixture)
        .arg(&pcap)
        .output()
        .expect("editcap (wireshark-common)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (out, values) = annotate_and_compare(&pcap, "from-pcap");
    assert!(values.keys().any(|(_, f)| f == "rocescope.analysis.retransmission"), "no retransmission shown");
    let read = |p: &Path| {
        let mut r = capture::open(&p.display().to_string()).unwrap();
        let mut v = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            v.push((rec.number, rec.linktype, rec.ts_ns, rec.orig_len, rec.data.to_vec()));
        }
        v
    };
    let (a, b) = (read(&pcap), read(&out));
    assert!(a.len() > 100 && a == b, "{} and {} frames, or their contents, differ", a.len(), b.len());
    let head = std::fs::read(&pcap).unwrap();
    let blocks = blocks(&std::fs::read(&out).unwrap());
    let idb = &blocks[1];
    assert_eq!(idb.0, 1, "the second block describes the interface");
    // (The IDB whole: its link type at byte 8, its snapshot length at 12.)
    assert_eq!(u16::from_le_bytes([idb.1[8], idb.1[9]]) as u32, u32::from_le_bytes(head[20..24].try_into().unwrap()));
    assert_eq!(idb.1[12..16], head[16..20]);
    assert!(blocks[2..].iter().all(|b| b.0 == 6), "one Enhanced Packet Block per record");
    for p in [pcap, out] {
        let _ = std::fs::remove_file(p);
    }
}

// ---- the copy keeps everything but the comments ----

/// The blocks of a pcapng file: (type, bytes) with a packet block cut to its header and data
/// (without its length fields and options).
fn blocks(bytes: &[u8]) -> Vec<(u32, Vec<u8>)> {
    let mut v = Vec::new();
    let mut at = 0;
    let mut big = false;
    while at + 12 <= bytes.len() {
        let b = &bytes[at..];
        let ty = u32::from_be_bytes(b[..4].try_into().unwrap());
        if ty == 0x0a0d0d0a {
            big = b[8..12] == [0x1a, 0x2b, 0x3c, 0x4d];
        }
        let word = |o: usize| {
            let a: [u8; 4] = b[o..o + 4].try_into().unwrap();
            if big {
                u32::from_be_bytes(a)
            } else {
                u32::from_le_bytes(a)
            }
        };
        let (ty, len) = (word(0), word(4) as usize);
        let kept = if ty == 6 || ty == 2 {
            let captured = word(20) as usize;
            [&b[..4], &b[8..28 + captured]].concat()
        } else {
            b[..len].to_vec()
        };
        v.push((ty, kept));
        at += len;
    }
    assert_eq!(at, bytes.len());
    v
}

/// Every frame of `out` is `input`'s (number, interface, time, lengths, bytes), and every block
/// other than a packet block is the same, byte for byte (section, interfaces and their options).
fn same_frames_and_blocks(input: &Path, out: &Path) {
    let read = |p: &Path| {
        let mut r = capture::open(&p.display().to_string()).unwrap();
        let mut v = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            v.push((rec.number, rec.interface, rec.linktype, rec.ts_ns, rec.orig_len, rec.data.to_vec()));
        }
        v
    };
    let (a, b) = (read(input), read(out));
    assert_eq!(a.len(), b.len(), "{}", input.display());
    for (x, y) in a.iter().zip(&b) {
        assert!(x == y, "{}: frame {} differs in the copy", input.display(), x.0);
    }
    let (a, b) = (blocks(&std::fs::read(input).unwrap()), blocks(&std::fs::read(out).unwrap()));
    assert_eq!(a.len(), b.len(), "{}", input.display());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!(x == y, "{}: block {i} (type {}) differs in the copy", input.display(), x.0);
    }
    // Annotated, the copy has comments (so it is not the input).
    assert_ne!(std::fs::read(input).unwrap(), std::fs::read(out).unwrap());
}

// ---- injected replay findings ----

const RECEIVER: u32 = 1;

#[derive(Clone)]
struct Rec {
    interface: u32,
    ts_ns: u64,
    data: Vec<u8>,
}

fn records(path: &Path) -> Vec<Rec> {
    let mut r = capture::open(&path.display().to_string()).unwrap();
    let mut v = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        v.push(Rec { interface: rec.interface, ts_ns: rec.ts_ns, data: rec.data.to_vec() });
    }
    v
}

fn write(recs: &[Rec], name: &str) -> PathBuf {
    let path = tmp(&format!("{name}-in.pcapng"));
    let out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut w = CaptureWriter::new(out, &["sender", "receiver", "fabric"]).unwrap();
    for r in recs {
        w.write(r.interface, r.ts_ns, &r.data).unwrap();
    }
    drop(w);
    path
}

/// Whether a frame is a NAK (PSN sequence error), read with the codec.
fn is_nak(r: &Rec) -> bool {
    let f = Frame::parse(
        LinkType::Ethernet,
        &r.data,
        r.data.len(),
        &DecodeOptions { verify: false, profile: Profile::Std, params: Params::default() },
    );
    f.roce().is_some_and(|p| {
        p.opcode().0 == 0x11 && matches!(p.aeth().map(|a| a.syndrome()), Some(Syndrome::Nak { code: 0 }))
    })
}

#[test]
fn an_injected_departure_and_an_ambiguous_finding_show_at_their_frames() {
    let recs = records(&repo().join("fixtures/synth-gbn-loss.pcapng"));
    let nak = recs.iter().position(|r| r.interface == RECEIVER && is_nak(r)).expect("a NAK at the receiver's tap");

    // The NAK sent twice: the copy (frame nak + 2, 1-based) departs from gbn.nak-repeated.
    let mut twice = recs.clone();
    let mut copy = recs[nak].clone();
    copy.ts_ns += 100;
    twice.insert(nak + 1, copy);
    let input = write(&twice, "nak-twice");
    let (out, values) = annotate_and_compare(&input, "nak-twice");
    let at = nak as u64 + 2;
    let get = |f: u64, name: &str| values.get(&(f, name.to_string())).cloned().unwrap_or_default();
    assert_eq!(get(at, "rocescope.replay.departure"), "1", "{values:?}");
    assert_eq!(get(at, "rocescope.replay.kind"), "departure");
    assert_eq!(get(at, "rocescope.replay.rule"), "gbn.nak-repeated");
    assert_eq!(get(at, "rocescope.replay.stack"), "gbn");
    assert_eq!(get(at, "rocescope.replay.cause"), at.to_string());
    assert!(!get(at, "rocescope.replay.expected").is_empty() && !get(at, "rocescope.replay.seen").is_empty());
    let departed: Vec<u64> =
        values.keys().filter(|(_, f)| f == "rocescope.replay.departure").map(|(fr, _)| *fr).collect();
    assert_eq!(departed, [at], "the departure shows on its frame only");
    // decode's JSON and -V show them too.
    let o = Command::new(BIN).args(["decode", "-T", "json"]).arg(&out).output().unwrap();
    assert!(o.status.success());
    let frames: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = frames.as_array().unwrap().iter().find(|f| f["frame.number"] == at).unwrap();
    assert_eq!(f["rocescope.replay.departure"], true, "{f}");
    assert_eq!(f["rocescope.replay.rule"], serde_json::json!(["gbn.nak-repeated"]), "{f}");
    assert_eq!(f["rocescope.replay.cause"], serde_json::json!([at]), "{f}");
    let o = Command::new(BIN).args(["decode", "-V", "-c", &at.to_string()]).arg(&out).output().unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    let last = text.rsplit_once("\n    Frame ").map_or(text.as_str(), |(_, l)| l);
    assert!(
        last.contains("[RoCE replay (packet comment)]") && last.contains("rocescope.replay.rule: gbn.nak-repeated"),
        "{last}"
    );
    same_frames_and_blocks(&input, &out);
    // Annotating the annotated copy gives the same copy (its rocescope comments replaced).
    let again = tmp("nak-twice-again.pcapng");
    annotate(&out, &again);
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());
    for p in [input, out, again] {
        let _ = std::fs::remove_file(p);
    }

    // The NAK deleted: the requester's going back shows it was sent, so replay cannot tell a
    // capture gap from a departure: ambiguous, never a departure.
    let mut gone = recs.clone();
    gone.remove(nak);
    let input = write(&gone, "nak-gone");
    let (out, values) = annotate_and_compare(&input, "nak-gone");
    assert!(values.keys().any(|(_, f)| f == "rocescope.replay.ambiguous"), "no ambiguous finding shown");
    assert!(!values.keys().any(|(_, f)| f == "rocescope.replay.departure"), "{values:?}");
    for p in [input, out] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn annotate_rejects_unusable_input_with_the_file_and_byte() {
    // A pcapng whose second block's length is broken.
    let mut w = CaptureWriter::new(Vec::new(), &["a"]).unwrap();
    w.write(0, 1, &[0u8; 60]).unwrap();
    let mut bytes = w.into_inner();
    let n = bytes.len();
    bytes[n - 4] ^= 0x40;
    let input = tmp("bad.pcapng");
    std::fs::write(&input, &bytes).unwrap();
    let out = tmp("bad-out.pcapng");
    let o = Command::new(BIN).arg("annotate").arg(&input).arg("-o").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with(&format!("rocescope: {}: byte ", input.display())) && err.lines().count() == 1, "{err}");
    assert!(!out.exists(), "no copy of an unusable capture");
    let _ = std::fs::remove_file(input);
}

/// A malformed packet option (a comment whose length runs past its block) is a warning naming
/// the file and byte; every frame is decoded and printed.
#[test]
fn a_malformed_comment_is_a_warning_and_decoding_continues() {
    let mut w = CaptureWriter::new(Vec::new(), &["a"]).unwrap();
    w.write_with_comment(0, 1, &[0u8; 60], "rocescope 1\nrocescope.replay.rule=ok").unwrap();
    w.write_with_comment(0, 2, &[0u8; 60], "rocescope 1\nrocescope.replay.rule=bad").unwrap();
    let mut bytes = w.into_inner();
    let n = bytes.len();
    let last = u32::from_le_bytes(bytes[n - 4..].try_into().unwrap()) as usize;
    let opt = n - last + 28 + 60;
    bytes[opt + 2..opt + 4].copy_from_slice(&0xfff0u16.to_le_bytes());
    let input = tmp("bad-option.pcapng");
    std::fs::write(&input, &bytes).unwrap();
    let o = Command::new(BIN)
        .args(["decode", "-T", "fields", "-e", "frame.number", "-e", "rocescope.replay.rule"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout), "1\tok\n2\t\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("warning: {}: byte {opt}: packet option 1", input.display())), "{err}");
    let _ = std::fs::remove_file(input);
}
