//! Every capture `rocescope synth` writes is well formed (issue 4, acceptance 1): it decodes
//! with zero warnings under the stack's profile (`decode --profile std|dcp`), every ICRC
//! verifies (`check`), and tshark reports no malformed frame.
//!
//! tshark's own `infiniband` dissector cannot know DCP's header-only packets (BTH + 3 bytes of
//! MSN, no ICRC: docs/wire.md B.1) and calls each of them malformed, so DCP captures are checked
//! twice: with the stock dissector every malformed frame must be a header-only one
//! (from the truth; tshark reads those by the IBTA layout, which a header-only WRITE First
//! or Only cannot fill); with the project's plugin beside it (`rocescope.profile:dcp`) the
//! malformed frames are the same, the plugin decodes the DCP headers and warns about none.
//! Without tshark the test fails.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use rocescope_sim::truth::{Kind, Truth};

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

/// Heuristic sub-dissectors that claim SEND payloads (as in tshark_diff.rs).
const DISABLED_PROTOCOLS: &[&str] =
    &["rpcordma", "smb_direct", "iser", "nvme-rdma", "lnet", "smc", "infiniband_sdp", "fcoib"];

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rocescope-synth-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn synth(dir: &Path, name: &str, args: &str) -> (PathBuf, Truth) {
    let pcap = dir.join(format!("{name}.pcapng"));
    let truth = dir.join(format!("{name}.json"));
    let out = Command::new(BIN)
        .arg("synth")
        .args(args.split_whitespace())
        .arg("-o")
        .arg(&pcap)
        .arg("--truth")
        .arg(&truth)
        .output()
        .unwrap();
    assert!(out.status.success(), "synth {args}: {}", String::from_utf8_lossy(&out.stderr));
    // The truth as written must read into the typed structs (which deny unknown keys).
    let t = Truth::from_json(&std::fs::read_to_string(&truth).unwrap())
        .unwrap_or_else(|e| panic!("synth {args}: truth: {e}"));
    (pcap, t)
}

fn tshark_available() -> bool {
    if Command::new("tshark").arg("-v").output().is_ok_and(|o| o.status.success()) {
        return true;
    }
    panic!("tshark not found on PATH: install it (Debian: apt-get install tshark)");
}

/// Frame numbers tshark calls malformed.
fn tshark_malformed(dir: &Path, pcap: &Path, lua: Option<&str>) -> BTreeSet<u64> {
    tshark_frames(dir, pcap, lua, "_ws.malformed")
}

/// Frame numbers tshark's display filter `filter` keeps (with the plugin under `lua`'s profile).
fn tshark_frames(dir: &Path, pcap: &Path, lua: Option<&str>, filter: &str) -> BTreeSet<u64> {
    let mut cmd = Command::new("tshark");
    cmd.env("WIRESHARK_CONFIG_DIR", dir.join("wireshark-config"));
    cmd.args(["-n", "-r"]).arg(pcap);
    for p in DISABLED_PROTOCOLS {
        cmd.args(["--disable-protocol", p]);
    }
    if let Some(profile) = lua {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dissector/rocescope.lua");
        cmd.arg("-X").arg(format!("lua_script:{}", script.display()));
        cmd.args(["-o", &format!("rocescope.profile:{profile}")]);
    }
    cmd.args(["-Y", filter, "-T", "fields", "-e", "frame.number"]);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "tshark: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.is_empty()).map(|l| l.trim().parse().unwrap()).collect()
}

/// The frames the truth says are header-only (trimmed) forms.
fn ho_frames(t: &Truth) -> BTreeSet<u64> {
    t.taps.iter().flat_map(|tap| &tap.frames).filter(|f| f.ho || f.kind == Kind::HoBounce).map(|f| f.frame).collect()
}

fn check_one(dir: &Path, name: &str, args: &str, profile: &str, tshark: bool) {
    let (pcap, truth) = synth(dir, name, args);
    let frames = truth.summary.captured_frames;
    assert!(frames > 0, "{name}: nothing captured");
    // Zero warnings.
    let out = Command::new(BIN)
        .args([
            "decode",
            "--profile",
            profile,
            "--format",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "rocescope.warning",
            "-e",
            "rocescope.profile",
        ])
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count() as u64, frames, "{name}: one line per frame");
    for l in text.lines() {
        let cols: Vec<&str> = l.split('\t').collect();
        assert_eq!(cols[1], "", "{name}: frame {} warns: {}", cols[0], cols[1]);
        if profile == "dcp" {
            // DCP captures decode as dcp throughout, except CNPs (tag 00).
            assert!(cols[2] == "dcp" || cols[2] == "std", "{name}: {l}");
        }
    }
    // Every ICRC verifies.
    let out = Command::new(BIN).args(["check", "--profile", profile]).arg(&pcap).output().unwrap();
    assert!(
        out.status.success(),
        "{name}: check: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    // tshark.
    if tshark {
        if profile == "dcp" {
            let stock = tshark_malformed(dir, &pcap, None);
            let ho = ho_frames(&truth);
            let other: Vec<_> = stock.difference(&ho).collect();
            assert!(other.is_empty(), "{name}: stock tshark: malformed frames that are not header-only: {other:?}");
            // The plugin sits beside infiniband (which still flags the header-only packets it
            // cannot read): it adds no malformed frame, and its own tree warns about none.
            let with_lua = tshark_malformed(dir, &pcap, Some("dcp"));
            assert_eq!(with_lua, stock, "{name}: tshark with the rocescope plugin: malformed frames");
            let warned = tshark_frames(dir, &pcap, Some("dcp"), "rocescope.warning");
            assert!(warned.is_empty(), "{name}: the rocescope plugin warns on frames {warned:?}");
            let shown = tshark_frames(dir, &pcap, Some("dcp"), "rocescope.dcp.msn");
            assert!(!shown.is_empty(), "{name}: the plugin decodes the DCP headers");
        } else {
            let stock = tshark_malformed(dir, &pcap, None);
            assert!(stock.is_empty(), "{name}: tshark: malformed frames {stock:?}");
        }
    }
}

#[test]
fn synthesized_captures_decode_clean_verify_and_are_not_malformed() {
    let tshark = tshark_available();
    let dir = temp_dir("capture");
    let cases: &[(&str, &str, &str)] = &[
        ("gbn-clean", "--stack gbn --messages 6", "std"),
        ("gbn-lossy-mix", "--stack gbn --loss 0.05 --op mix --messages 12 --message-size 3000 --seed 4", "std"),
        ("gbn-spray-ecn", "--stack gbn --incast 3 --paths 8 --spray --reorder 2000 --loss 0.02 --queue-bytes 30000 --ecn-threshold 4000 --cnp-interval 2000 --seed 5", "std"),
        ("irn-clean", "--stack irn --messages 6 --op send", "std"),
        ("irn-lossy", "--stack irn --loss 0.05 --burst-loss 0.01,0.3 --op mix --messages 12 --seed 6", "std"),
        ("irn-spray-ecn", "--stack irn --incast 3 --paths 8 --spray --reorder 2000 --queue-bytes 30000 --ecn-threshold 4000 --cnp-interval 2000 --seed 7", "std"),
        ("dcp-clean", "--stack dcp --messages 6 --op mix", "dcp"),
        ("dcp-lossy", "--stack dcp --loss 0.05 --op mix --messages 12 --seed 8", "dcp"),
        ("dcp-trim", "--stack dcp --incast 4 --trim --queue-bytes 16384 --paths 4 --adaptive --reorder 1000 --loss 0.01 --ecn-threshold 4000 --cnp-interval 2000 --op mix --seed 9", "dcp"),
    ];
    for (name, args, profile) in cases {
        check_one(&dir, name, args, profile, tshark);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every stack has its ground truth: `sdr-sr` and `sdr-ec` with one-packet chunks (the default,
/// `config.sdr_chunk_packets` left out) and with chunks of several packets (its value written,
/// so the per-tap view reads the control messages' chunks as their packets), and `flor`.
#[test]
fn sdr_with_any_chunk_size_and_flor_have_their_truth() {
    let dir = temp_dir("truth-chunks");
    for stack in ["sdr-sr", "sdr-ec"] {
        let (_, t) = synth(
            &dir,
            &format!("{stack}-chunk2"),
            &format!("--stack {stack} --messages 2 --loss 0.05 --loss-dir both --sdr-chunk 2 --seed 1"),
        );
        assert_eq!(t.config.sdr_chunk_packets, 2, "{stack}");
        assert!(t.sim.transmissions.iter().filter(|x| x.kind == Kind::Data).all(|x| x.sdr_off.is_some()));
        let text = std::fs::read_to_string(dir.join(format!("{stack}-chunk2.json"))).unwrap();
        assert!(text.contains("\"sdr_chunk_packets\":2"), "{stack}");
    }
    for stack in ["sdr-sr", "sdr-ec"] {
        let (_, t) = synth(&dir, stack, &format!("--stack {stack} --messages 2 --loss 0.05 --loss-dir both --seed 1"));
        assert!(t.sim.transmissions.iter().filter(|x| x.kind == Kind::Data).all(|x| x.sdr_off.is_some()));
        assert_eq!(t.config.sdr_chunk_packets, 1, "{stack}");
        let text = std::fs::read_to_string(dir.join(format!("{stack}.json"))).unwrap();
        assert!(!text.contains("sdr_chunk_packets"), "{stack}");
    }
    // (Flor's truth names each data packet's WQE copy: its global number.)
    let (_, t) =
        synth(&dir, "flor", "--stack flor --messages 2 --message-size 50000 --loss 0.05 --loss-dir both --seed 1");
    assert!(t.sim.transmissions.iter().filter(|x| x.kind == Kind::Data).all(|x| x.flor.is_some()));
    assert!(t.sim.transmissions.iter().any(|x| x.flor_ack.is_some()));
    std::fs::remove_dir_all(&dir).ok();
}

/// `decode --profile PROFILE --format fields -e frame.number -e F…` of `pcap`: each frame's
/// columns (the frame number first, then `fields` in order; empty where absent), by frame number.
fn decode_fields(pcap: &Path, profile: &str, fields: &[&str]) -> std::collections::HashMap<u64, Vec<String>> {
    let mut c = Command::new(BIN);
    c.args(["decode", "--profile", profile, "--format", "fields", "-e", "frame.number"]);
    for f in fields {
        c.args(["-e", f]);
    }
    let out = c.arg(pcap).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .map(|l| {
            let c: Vec<String> = l.split('\t').map(str::to_string).collect();
            (c[0].parse().unwrap(), c)
        })
        .collect()
}

/// SDR's truth against its capture's bytes (issue 13, acceptance 1): every data frame's (send,
/// offset) in the truth is the one its immediate carries, as `decode` reads it (message id =
/// the send's sequence number modulo 2^10, the default split: selective repeat sends a message
/// once, as send `msg`; offset); a frame the truth calls a first copy carries a (message id,
/// offset) no earlier frame of its tap carried, and one that repeats an earlier frame's of its
/// tap is a retransmission; and each SR_ACK's cumulative ACK is its bytes'. Over loss both ways,
/// two channels and the SR_NACK variant, and erasure coding (XOR, k = 4, m = 1: the EC_NACK's
/// fallbacks resend packets).
#[test]
fn sdr_truth_agrees_with_the_immediates_in_the_capture() {
    use std::collections::HashSet;
    let dir = temp_dir("sdr-bytes");
    for (i, args) in [
        "--stack sdr-sr --messages 12 --message-size 8192 --mtu 1024 --loss 0.05 --loss-dir both --seed 3",
        "--stack sdr-sr --messages 12 --message-size 8192 --mtu 1024 --loss 0.05 --loss-dir both --sdr-nack --sdr-channels 2 --incast 2 --seed 4",
        "--stack sdr-ec --messages 24 --message-size 8192 --mtu 1024 --loss 0.05 --loss-dir both --ec-code xor --ec-k 4 --ec-m 1 --seed 3",
        // (Chunks of 4 packets: bitmaps, cumulative ACKs and NACKs count chunks.)
        "--stack sdr-sr --messages 12 --message-size 8192 --mtu 1024 --loss 0.05 --loss-dir both --sdr-chunk 4 --sdr-nack --seed 5",
    ]
    .into_iter()
    .enumerate()
    {
        let (pcap, t) = synth(&dir, &format!("sdr{i}"), args);
        let fields = ["rocescope.sdr.msg_id", "rocescope.sdr.pkt_off", "rocescope.sdr.ctrl.cum_ack"];
        let bytes = decode_fields(&pcap, "sdr", &fields);
        let tx = |id: u32| t.sim.transmissions.iter().find(|x| x.id == id).unwrap();
        let (mut data, mut retx, mut acks) = (0, 0, 0);
        for tap in &t.taps {
            let mut seen: HashSet<(u64, u32, u32)> = HashSet::new();
            for f in &tap.frames {
                let x = tx(f.tx);
                let c = &bytes[&f.frame];
                if let Some(off) = x.sdr_off {
                    let seq = x.sdr_seq.unwrap();
                    if !args.contains("sdr-ec") {
                        assert_eq!(seq as u64, x.msg.unwrap(), "{args}: frame {}", f.frame);
                    }
                    assert_eq!(c[1], (seq % 1024).to_string(), "{args}: frame {}", f.frame);
                    assert_eq!(c[2], off.to_string(), "{args}: frame {}", f.frame);
                    let again = !seen.insert((x.conn as u64, c[1].parse().unwrap(), off));
                    if again {
                        assert!(x.retx.is_some(), "{args}: frame {} repeats a packet: no retransmission", f.frame);
                    }
                    if x.retx.is_none() {
                        assert!(!again, "{args}: frame {}", f.frame);
                    }
                    data += 1;
                    retx += again as u32;
                }
                if let Some(cum) = x.sdr_ctrl.as_ref().and_then(|s| s.cum_ack) {
                    assert_eq!(c[3], cum.to_string(), "{args}: frame {}", f.frame);
                    acks += 1;
                }
            }
        }
        // (Erasure coding sends SR_ACKs only for data submessages that fell back.)
        // (Chunks of 4 packets: an SR_ACK per chunk completed, a quarter as many.)
        let min_acks = if args.contains("sdr-ec") {
            0
        } else if args.contains("--sdr-chunk") {
            50
        } else {
            100
        };
        assert!(data > 250 && retx > 5 && acks >= min_acks, "{args}: {data} data frames, {retx} repeats, {acks} SR_ACKs");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Flor's truth against its capture's bytes (issue 13, acceptance 1): every data frame's WQE
/// copy in the truth (`flor`: GN, kind, first unit) is the one its bytes name, as `decode`
/// reads them: a SEND's first packet carries the copy's GN and a type of its kind (a piece's
/// WRITE_RETX names its first unit in its WRITE reliable number, default split 1 · 21 · 10), a
/// chunk's last packet its first unit in the immediate; the packets of one copy are
/// consecutive PSNs of one tap's flow; and each ACK lists as many numbers as the truth's
/// `flor_ack`, the SEND copies' GNs among them. Over large messages (ADDR_REQs, chunks, pieces)
/// and small ones (DATA SENDs), loss both ways.
#[test]
fn flor_truth_agrees_with_the_headers_in_the_capture() {
    use std::collections::HashMap;
    let dir = temp_dir("flor-bytes");
    for (i, args) in [
        "--stack flor --messages 6 --message-size 60000 --mtu 1024 --loss 0.04 --loss-dir both --seed 3",
        "--stack flor --messages 12 --message-size 8192 --mtu 1024 --loss 0.04 --loss-dir both --incast 2 --seed 4",
    ]
    .into_iter()
    .enumerate()
    {
        let (pcap, t) = synth(&dir, &format!("flor{i}"), args);
        let fields = [
            "rocescope.flor.send.type",
            "rocescope.flor.send.gn",
            "rocescope.flor.chunk_off",
            "rocescope.flor.send.write_rn",
            "rocescope.flor.ack.acked",
            "rocescope.bth.psn",
        ];
        let bytes = decode_fields(&pcap, "flor", &fields);
        let tx = |id: u32| t.sim.transmissions.iter().find(|x| x.id == id).unwrap();
        let (mut sends, mut chunks, mut pieces, mut acks) = (0, 0, 0, 0);
        for tap in &t.taps {
            // (Per copy: the PSNs this tap recorded of it.)
            let mut psns: HashMap<(u32, u64), Vec<u32>> = HashMap::new();
            for f in &tap.frames {
                let x = tx(f.tx);
                let c = &bytes[&f.frame];
                let at = format!("{args}: frame {}", f.frame);
                if let Some(w) = x.flor.as_ref() {
                    psns.entry((x.conn, w.gn)).or_default().push(c[6].parse().unwrap());
                    if !c[1].is_empty() {
                        // A SEND's first packet.
                        assert_eq!(c[2], w.gn.to_string(), "{at}");
                        let kind = match w.wqe.as_str() {
                            "data" => "data",
                            "addr_req" => "addr_req",
                            "piece" => "write_retx",
                            k => panic!("{at}: a SEND header on a {k}"),
                        };
                        assert_eq!(c[1], kind, "{at}");
                        if kind == "write_retx" {
                            let write_rn: u32 = c[4].parse().unwrap();
                            assert_eq!(write_rn & 0x3ff, w.off, "{at}");
                            pieces += 1;
                        }
                        sends += 1;
                    } else if !c[3].is_empty() {
                        // A chunk's last packet.
                        assert_eq!(w.wqe, "chunk", "{at}");
                        assert_eq!(c[3], w.off.to_string(), "{at}");
                        chunks += 1;
                    }
                }
                if let Some(gns) = x.flor_ack.as_ref() {
                    let listed: Vec<u64> =
                        c[5].split(',').filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
                    assert_eq!(listed.len(), gns.len(), "{at}: {listed:?} {gns:?}");
                    let send_copies = t.sim.transmissions.iter().filter(|y| y.conn == x.conn && y.flor.is_some());
                    for y in send_copies {
                        let w = y.flor.as_ref().unwrap();
                        if w.wqe != "chunk" && gns.contains(&w.gn) {
                            assert!(listed.contains(&w.gn), "{at}: GN {} not in {listed:?}", w.gn);
                        }
                    }
                    acks += 1;
                }
            }
            for ((conn, gn), v) in psns {
                let sent = t
                    .sim
                    .transmissions
                    .iter()
                    .filter(|y| y.conn == conn && y.flor.as_ref().is_some_and(|w| w.gn == gn));
                let sent: Vec<u32> = sent.map(|y| y.psn).collect();
                let d = |a: u32, b: u32| b.wrapping_sub(a) & 0xff_ffff;
                // (Consecutive PSNs as sent; the tap's, increasing, among them.)
                assert!(sent.windows(2).all(|p| d(p[0], p[1]) == 1), "{args}: GN {gn}: sent {sent:?}");
                assert!(v.windows(2).all(|p| d(p[0], p[1]) >= 1), "{args}: GN {gn}: recorded {v:?}");
                assert!(
                    v.iter().all(|p| d(sent[0], *p) < sent.len() as u32),
                    "{args}: GN {gn}: {v:?} outside {sent:?}"
                );
            }
        }
        assert!(
            sends > 20 && acks > 20 && (chunks > 10 && pieces > 2 || i == 1),
            "{args}: {sends} {chunks} {pieces} {acks}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
