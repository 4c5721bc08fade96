//! Issue 12, acceptance 2: each fault `synth --fault` injects, with each stack, yields at the
//! tap beside the faulty end exactly that departure, at the frames where the capture shows it,
//! and nothing else; the test states what every other tap reports.
//!
//! The oracle for the frames is the truth (`summary.faults`: the fault's time and PSN, written
//! by the faulty end as it misbehaved) and the capture read here independently of replay: the
//! frame of that PSN and kind, on the tap's interface, nearest the fault's time.

use std::path::PathBuf;
use std::process::Command;

#[path = "common/explained.rs"]
mod explained;

use rocescope_analysis::capture;
use rocescope_codec::ib::aeth::Syndrome;
use rocescope_codec::ib::psn;
use rocescope_codec::{DecodeOptions, Frame, LinkType, Params, Profile};

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");
/// Interfaces `synth` writes by default: the sender's, the receiver's, the fabric's taps.
const SENDER: u32 = 0;
const RECEIVER: u32 = 1;
const FABRIC: u32 = 2;

struct Run {
    capture: PathBuf,
    truth: serde_json::Value,
    report: serde_json::Value,
    code: i32,
    /// The capture and truth files, removed with the run.
    _files: [Scratch; 2],
}

/// A file the test wrote, removed when the test is done with it (a run leaves nothing behind).
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        // (The run's directory too, once it is empty.)
        if let Some(d) = self.0.parent() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

fn run(stack: &str, fault: &str, args: &str) -> Run {
    let name = format!("{stack}-{}", fault.replace(':', "-"));
    let dir = scratch_dir(&name);
    let capture = dir.join(format!("{name}.pcapng"));
    let truth = dir.join(format!("{name}.json"));
    let files = [Scratch(capture.clone()), Scratch(truth.clone())];
    // (20 messages of 8 KB unless `args` says otherwise.)
    let size = if args.contains("--message-size") { &[][..] } else { &["--message-size", "8192"][..] };
    let out = Command::new(BIN)
        .args(["synth", "--stack", stack, "--fault", fault, "--messages", "20"])
        .args(size)
        .args(args.split_whitespace())
        .arg("-o")
        .arg(&capture)
        .arg("--truth")
        .arg(&truth)
        .output()
        .unwrap();
    assert!(out.status.success(), "synth: {}", String::from_utf8_lossy(&out.stderr));
    let truth: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
    // The stack named: a clean IRN run shows no selective NAK, which `--stack auto` reads as gbn.
    let out = Command::new(BIN).args(["replay", "--stack", stack, "-T", "json"]).arg(&capture).output().unwrap();
    let report =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    Run { capture, truth, report, code: out.status.code().unwrap_or(-1), _files: files }
}

/// What one captured frame is, read here: interface, time, PSN, opcode, AETH syndrome, MSN.
struct Seen {
    number: u64,
    interface: u32,
    ts_ns: u64,
    psn: u32,
    opcode: u8,
    syndrome: Option<Syndrome>,
    msn: Option<u32>,
    src: String,
}

fn frames(path: &PathBuf, profile: Profile) -> Vec<Seen> {
    let mut r = capture::open(&path.display().to_string()).unwrap();
    let opts = DecodeOptions { verify: false, profile, params: Params::default() };
    let mut v = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        let f = Frame::parse(LinkType::Ethernet, rec.data, rec.data.len(), &opts);
        let (Some(p), Some((src, _))) = (f.roce(), f.ip_addrs()) else {
            continue;
        };
        v.push(Seen {
            number: rec.number,
            interface: rec.interface,
            ts_ns: rec.ts_ns,
            psn: p.bth().psn(),
            opcode: p.opcode().0,
            syndrome: p.aeth().map(|a| a.syndrome()),
            msn: p.aeth().map(|a| a.msn()),
            src: src.to_string(),
        });
    }
    v
}

/// The fault the truth records (exactly one), its time and PSN.
fn applied(r: &Run, name: &str) -> (u64, u32) {
    let faults = r.truth["summary"]["faults"].as_array().expect("summary.faults");
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(faults[0]["fault"], name);
    (faults[0]["time_ns"].as_str().unwrap().parse().unwrap(), faults[0]["psn"].as_u64().unwrap() as u32)
}

/// The frame on `iface` that `is` picks, nearest `t` (within 5 µs).
fn nearest<'a>(v: &'a [Seen], iface: u32, t: u64, is: impl Fn(&Seen) -> bool) -> &'a Seen {
    let f =
        v.iter().filter(|s| s.interface == iface && is(s)).min_by_key(|s| s.ts_ns.abs_diff(t)).expect("such a frame");
    assert!(f.ts_ns.abs_diff(t) <= 5_000, "frame {} is {} ns from the fault", f.number, f.ts_ns.abs_diff(t));
    f
}

/// The report's findings: (kind, rule, interface of the flow, frames).
fn findings(r: &Run) -> Vec<(String, String, u32, Vec<u64>)> {
    r.report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let flow = f["flow"].as_str().unwrap();
            let iface = flow.rsplit('@').next().unwrap().parse().unwrap();
            let frames = f["frames"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).collect();
            (f["kind"].as_str().unwrap().to_string(), f["rule"].as_str().unwrap().to_string(), iface, frames)
        })
        .collect()
}

/// The findings are exactly `want` (kind, rule, tap), in any order, beside the ambiguous ones the
/// network explains (by the truth: e.g. a go-back's first resend lost on the way, which the
/// responder's tap cannot tell from a requester going back short); the exit status follows;
/// every tap is judged (the fabric tap too: what any tap proves of the responder and suspects of
/// the requester).
fn only(r: &Run, want: &[(&str, &str, u32)]) {
    let stack = r.report["stack"].as_str().unwrap();
    let index = explained::capture_index(&r.capture, if stack == "dcp" { Profile::Dcp } else { Profile::Std });
    let truth = explained::Truth::new(&r.truth);
    let mut got = Vec::new();
    for (f, (k, rule, i, _)) in r.report["findings"].as_array().unwrap().iter().zip(findings(r)) {
        if truth.explains(f, |n| index[&n].0, |n| index[&n].1).is_err() {
            got.push((k, rule, i));
        }
    }
    let mut want: Vec<_> = want.iter().map(|&(k, rule, i)| (k.to_string(), rule.to_string(), i)).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want, "{:#}", r.report["findings"]);
    assert_eq!(r.code, if want.iter().any(|w| w.0 == "departure") { 1 } else { 0 });
    // (Not judged: only where the fabric tap missed a PSN, lost before it.)
    let unjudged = r.report["unjudged"].as_array().unwrap();
    assert!(
        unjudged.iter().all(|u| u["interface"] == 2 && u["reason"].as_str().unwrap().contains("never crossed")),
        "{unjudged:?}"
    );
    let mut taps: Vec<_> =
        r.report["connections"].as_array().unwrap().iter().map(|c| c["tap"].as_str().unwrap()).collect();
    taps.sort();
    assert_eq!(taps, ["fabric", "receiver", "sender"]);
}

/// The frames of the one finding of `rule` at tap `iface`.
fn frames_of(r: &Run, rule: &str, iface: u32) -> Vec<u64> {
    let f: Vec<_> = findings(r).into_iter().filter(|f| f.1 == rule && f.2 == iface).collect();
    assert_eq!(f.len(), 1, "{f:?}");
    f[0].3.clone()
}

const LOSSY: &str = "--loss 0.05 --seed 2";

fn is_nak(s: &Seen) -> bool {
    s.opcode == 0x11 && matches!(s.syndrome, Some(Syndrome::Nak { code: 0 }))
}

#[test]
fn omit_nak_is_a_departure_at_the_receiver_where_it_was_due() {
    for (stack, rule) in [
        ("gbn", "gbn.nak-missing"),
        ("dcp", "dcp.ho-unanswered"),
        // IRN's fault withholds every selective NAK of the loss (one among others naming the same
        // PSN would look like a capture gap): one departure, counting them all.
        ("irn", "irn.sack-missing"),
    ] {
        let r = run(stack, "omit-nak", LOSSY);
        let (t, psn) = applied(&r, "omit-nak");
        let v = frames(&r.capture, if stack == "dcp" { Profile::Dcp } else { Profile::Std });
        // The cause: the request that arrived at the receiver just before the answer was due
        // (GBN, IRN: one past the expected PSN; DCP: the header-only packet of that PSN).
        let at_receiver = |s: &&Seen| s.interface == RECEIVER && s.src == "10.0.0.1" && s.ts_ns <= t;
        let cause =
            v.iter().filter(|s| at_receiver(s) && (s.psn != psn) != (stack == "dcp")).max_by_key(|s| s.ts_ns).unwrap();
        // The requester's tap and the fabric's: the requester times out having sent packets
        // past the hole, with no answer for it (ambiguous: the network may have lost the answer;
        // DCP: a fabric that trims may still drop a packet whole).
        only(&r, &[("departure", rule, RECEIVER), ("ambiguous", rule, SENDER), ("ambiguous", rule, FABRIC)]);
        for tap in [SENDER, FABRIC] {
            // The finding is the timer's resend, from the oldest PSN not acknowledged: the
            // omitted answer's or one before (DCP: its message's first), after the timer
            // (GBN's 67 ms, IRN's RTO, DCP's 1 ms).
            let at = frames_of(&r, rule, tap);
            let resend = v.iter().find(|s| s.number == at[0]).unwrap();
            assert!(resend.interface == tap && resend.src == "10.0.0.1" && psn::diff(psn, resend.psn) <= 0);
            let timer = match stack {
                "gbn" => 60_000_000,
                "dcp" => 900_000,
                _ => 90_000,
            };
            assert!(resend.ts_ns > t + timer, "{stack}: after the timer");
        }
        assert_eq!(frames_of(&r, rule, RECEIVER), vec![cause.number], "{stack}");
        if stack == "irn" {
            // Every selective NAK the reference owed for that loss is counted in it.
            let f = r.report["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["flow"].as_str().unwrap().ends_with("@1"))
                .unwrap();
            assert!(
                f["seen"].as_str().unwrap().contains(&format!("more selective NAK(s) naming PSN {psn} missing")),
                "{f}"
            );
        }
    }
}

#[test]
fn double_nak_is_a_departure_at_the_second_copy() {
    for (stack, rule) in [("gbn", "gbn.nak-repeated"), ("irn", "irn.sack-unexpected"), ("dcp", "dcp.ho-unexpected")] {
        let r = run(stack, "double-nak", LOSSY);
        let (t, psn) = applied(&r, "double-nak");
        let v = frames(&r.capture, if stack == "dcp" { Profile::Dcp } else { Profile::Std });
        // The answers naming the PSN that left the receiver: the copy is the one right after
        // the first, with the same bytes' PSN.
        let answer =
            |s: &Seen| s.src == "10.0.1.1" && s.psn == psn && (is_nak(s) || (stack == "dcp" && s.opcode != 0x11));
        let first = nearest(&v, RECEIVER, t, answer);
        let second = v.iter().find(|s| s.interface == RECEIVER && s.number > first.number && answer(s)).unwrap();
        assert!(second.ts_ns - first.ts_ns < 1_000, "{stack}: the copy follows at once");
        // The requester's tap proves it too: a Go-Back-N responder NAKs a PSN once; an IRN
        // selective NAK or a returned header-only packet answers one copy sent.
        // So does the fabric tap, which the answers cross on their way.
        only(&r, &[("departure", rule, RECEIVER), ("departure", rule, SENDER), ("departure", rule, FABRIC)]);
        assert_eq!(frames_of(&r, rule, RECEIVER), vec![second.number]);
        let copies: Vec<_> = v.iter().filter(|s| s.interface == FABRIC && answer(s)).map(|s| s.number).collect();
        assert_eq!(frames_of(&r, rule, FABRIC), vec![copies[1]], "{stack}: the second copy crossing");
        let copies: Vec<_> = v.iter().filter(|s| s.interface == SENDER && answer(s)).map(|s| s.number).collect();
        assert_eq!(frames_of(&r, rule, SENDER), vec![copies[1]], "{stack}: the second copy arriving");
    }
}

#[test]
fn early_msn_is_a_departure_at_the_ack_that_claims_it() {
    // A clean run: every packet the ACK covers is in the capture, so the receiver's tap proves it.
    for (stack, rule) in [("gbn", "gbn.ack-ahead"), ("irn", "irn.ack-ahead"), ("dcp", "dcp.emsn-ahead")] {
        let r = run(stack, "early-msn:5", "--seed 2");
        let (t, psn) = applied(&r, "early-msn");
        let v = frames(&r.capture, if stack == "dcp" { Profile::Dcp } else { Profile::Std });
        let ack = nearest(&v, RECEIVER, t, |s| {
            s.src == "10.0.1.1" && s.psn == psn && matches!(s.syndrome, Some(Syndrome::Ack { .. }))
        });
        // Its MSN is one more than the ACK before it would allow: the truth's detail says which.
        let detail = r.truth["summary"]["faults"][0]["detail"].as_str().unwrap();
        assert!(detail.contains(&format!("MSN {}", ack.msn.unwrap())), "{detail}");
        // The requester's tap proves it for GBN and IRN: it knows where the messages it sent
        // end, so which MSN an ACK's PSN allows. DCP's eMSN counts messages received whole,
        // which only the responder knows; the other taps see the ACK name a packet of an earlier
        // message and claim one sent whole after that packet left (ambiguous: the network may
        // have reordered the later message ahead of it).
        if stack == "dcp" {
            only(&r, &[("departure", rule, RECEIVER), ("ambiguous", rule, SENDER), ("ambiguous", rule, FABRIC)]);
            for tap in [SENDER, FABRIC] {
                let crossing = nearest(&v, tap, t, |s| s.src == "10.0.1.1" && s.psn == psn && s.msn == ack.msn);
                assert_eq!(frames_of(&r, rule, tap), vec![crossing.number], "{tap}");
            }
        } else {
            only(&r, &[("departure", rule, RECEIVER), ("departure", rule, SENDER), ("departure", rule, FABRIC)]);
            let arrived = nearest(&v, SENDER, t, |s| s.src == "10.0.1.1" && s.psn == psn && s.msn == ack.msn);
            assert_eq!(frames_of(&r, rule, SENDER), vec![arrived.number], "{stack}");
        }
        assert_eq!(frames_of(&r, rule, RECEIVER), vec![ack.number]);
    }
}

#[test]
fn needless_retx_is_a_departure_at_the_sender_naming_the_ack_that_covered_it() {
    for (stack, rule) in [("gbn", "gbn.retx-needless"), ("irn", "irn.retx-needless"), ("dcp", "dcp.retx-needless")] {
        let r = run(stack, "needless-retx", LOSSY);
        let (t, psn) = applied(&r, "needless-retx");
        let v = frames(&r.capture, if stack == "dcp" { Profile::Dcp } else { Profile::Std });
        let resend = nearest(&v, SENDER, t, |s| s.src == "10.0.0.1" && s.psn == psn && s.opcode != 0x11);
        // The responder's tap sees the packet arrive again after its ACK left: ambiguous (that
        // ACK may have been lost on its way).
        only(&r, &[("departure", rule, SENDER), ("ambiguous", rule, RECEIVER), ("ambiguous", rule, FABRIC)]);
        let f = frames_of(&r, rule, SENDER);
        assert_eq!(f[1], resend.number, "{stack}");
        // The first frame is an acknowledgement that reached the sender before, covering it
        // (200 µs before the resend, by the fault's design).
        let ack = v.iter().find(|s| s.number == f[0]).unwrap();
        assert!(ack.interface == SENDER && ack.src == "10.0.1.1" && ack.ts_ns + 15_000 <= resend.ts_ns, "{stack}");
        let g = frames_of(&r, rule, RECEIVER);
        let arrived = v.iter().find(|s| s.number == g[1]).unwrap();
        assert_eq!((arrived.interface, arrived.psn), (RECEIVER, psn), "{stack}");
    }
}

#[test]
fn late_go_back_is_a_departure_at_the_first_packet_after_the_nak() {
    let r = run("gbn", "late-go-back", LOSSY);
    let (t, psn) = applied(&r, "late-go-back");
    let v = frames(&r.capture, Profile::Std);
    // The packet that left in place of the NAK'd PSN: the next one.
    let sent = nearest(&v, SENDER, t, |s| s.src == "10.0.0.1" && s.psn == (psn + 1) & 0xff_ffff);
    let nak = v
        .iter()
        .filter(|s| s.interface == SENDER && is_nak(s) && s.psn == psn && s.ts_ns <= sent.ts_ns)
        .last()
        .unwrap();
    // The other taps cannot tell it from the network losing the NAK'd PSN's resend: ambiguous,
    // at the NAK and the first resend they show (a step back: what was on its way when the NAK
    // left arrives first).
    let rule = "gbn.go-back-short";
    only(&r, &[("departure", rule, SENDER), ("ambiguous", rule, RECEIVER), ("ambiguous", rule, FABRIC)]);
    assert_eq!(frames_of(&r, rule, SENDER), vec![nak.number, sent.number]);
    for tap in [RECEIVER, FABRIC] {
        let nak = nearest(&v, tap, t, |s| is_nak(s) && s.psn == psn);
        let first = v
            .iter()
            .filter(|s| s.interface == tap && s.src == "10.0.0.1" && s.number > nak.number)
            .find(|s| s.psn == (psn + 1) & 0xff_ffff && s.ts_ns > sent.ts_ns)
            .unwrap();
        assert_eq!(frames_of(&r, rule, tap), vec![nak.number, first.number], "{tap}");
    }
}

#[test]
fn early_timeout_is_a_departure_at_the_resend_that_came_too_soon() {
    timer_fault("early-timeout", "early", 1, 2);
}

#[test]
fn late_timeout_is_a_departure_at_the_resend_that_came_too_late() {
    timer_fault("late-timeout", "late", 3, 2);
}

/// A timer fault (the timer at `num/den` of its value until it first expires), with each
/// stack: a departure `*.timeout-{word}` at the sender's tap, at the resend and the frame that
/// started the timer (late: proven there because no CNP or PAUSE reached it and its NIC sent
/// nothing between the timer's due time and the resend, so nothing held it); ambiguous at the
/// other taps, at the same resend there.
fn timer_fault(fault: &str, word: &str, num: u64, den: u64) {
    for stack in ["gbn", "irn", "dcp"] {
        let args = match stack {
            // (Forward losses only: a run whose timeout is not also a NAK the network lost, which
            // the sender's tap reports as ambiguous.)
            "gbn" => "--loss 0.05 --loss-dir forward --seed 5",
            // (A run with more timeouts than the faulty one: each is judged against the timer the
            // connection's timeouts of its kind agree on, the inferred timer.)
            "irn" => "--loss 0.15 --seed 1",
            // With DCP's trimming, header-only packets recover every loss: drop them whole.
            _ => "--loss 0.1 --loss-mode drop --seed 2",
        };
        let rule = format!("{stack}.timeout-{word}");
        let rule = rule.as_str();
        let r = run(stack, fault, args);
        let (t, psn) = applied(&r, fault);
        let v = frames(&r.capture, if stack == "dcp" { Profile::Dcp } else { Profile::Std });
        let resend = nearest(&v, SENDER, t, |s| s.src == "10.0.0.1" && s.psn == psn && s.opcode != 0x11);
        // The other taps see the resend come after a silence the timer they infer does not
        // allow: ambiguous (the frame that started the timer, or the resend, may have been
        // delayed on its way more than the other).
        only(&r, &[("departure", rule, SENDER), ("ambiguous", rule, RECEIVER), ("ambiguous", rule, FABRIC)]);
        for tap in [RECEIVER, FABRIC] {
            let f = frames_of(&r, rule, tap);
            let there = v.iter().find(|s| s.number == f[1]).unwrap();
            assert!(there.interface == tap && there.psn == psn && there.ts_ns > resend.ts_ns, "{stack} {tap}");
            assert!(there.ts_ns - resend.ts_ns < 50_000, "{stack} {tap}: the same resend");
        }
        let f = frames_of(&r, rule, SENDER);
        assert_eq!(f[1], resend.number, "{stack}");
        // The timer's start frame: `num/den` of the stack's timer before the resend.
        let start = v.iter().find(|s| s.number == f[0]).unwrap();
        let took = resend.ts_ns - start.ts_ns;
        let values: &[u64] = match stack {
            "gbn" => &[4_096 << 14],
            "dcp" => &[1_000_000],
            // IRN: RTO_low or RTO_high, depending on the packets in flight.
            _ => &[100_000, 320_000],
        };
        let want: Vec<u64> = values.iter().map(|v| v * num / den).collect();
        assert!(want.iter().any(|w| took.abs_diff(*w) < w / 10), "{stack}: {took} ns, want one of {want:?}");
    }
}

#[test]
fn unmodified_runs_of_the_same_shapes_have_no_finding_but_inferred_timers() {
    for (stack, args) in [
        ("gbn", "--loss 0.05 --loss-dir forward --seed 5"),
        ("irn", "--loss 0.1 --seed 2"),
        ("dcp", "--loss 0.1 --loss-mode drop --seed 2"),
    ] {
        // The fault never applies past the run's occasions: the capture is the unmodified one.
        let r = run(stack, "omit-nak:100000", args);
        assert_eq!(r.truth["summary"].get("faults"), None);
        // (But what the network explains: e.g. a go-back's first resend lost on its way.)
        only(&r, &[]);
        // The sender's connection infers its timer from the timeouts it shows, at the stack's
        // value (GBN 4.096 µs · 2^14; IRN RTO_low or RTO_high; DCP 1 ms), within 10%.
        let sender = r.report["connections"].as_array().unwrap().iter().find(|c| c["tap"] == "sender").unwrap();
        let inferred = sender["inferred"].as_array().unwrap();
        let t = inferred.iter().find(|i| i["name"] == "timeout_ns").unwrap_or_else(|| panic!("{stack}: {inferred:?}"));
        let value = t["value"].as_f64().unwrap();
        let ok = match stack {
            "gbn" => (value - 67_108_864.0).abs() < 6_710_886.0,
            "dcp" => (value - 1_000_000.0).abs() < 100_000.0,
            _ => (value - 100_000.0).abs() < 10_000.0 || (value - 320_000.0).abs() < 32_000.0,
        };
        assert!(ok, "{stack}: {t}");
    }
}

#[test]
fn a_gbn_data_frame_copied_after_the_ack_that_covered_it_is_a_needless_retransmission_there() {
    // Issue 12, acceptance 3, for Go-Back-N (the bundled GBN capture carries READs asked again,
    // after which the requester is not judged): an unmodified write-only run, one data frame of
    // the sender's tap copied to 10 µs after the first ACK there that covers it.
    let r = run("gbn", "omit-nak:100000", LOSSY);
    assert!(findings(&r).is_empty(), "{:#}", r.report["findings"]);
    let v = frames(&r.capture, Profile::Std);
    let ack = v.iter().find(|s| s.interface == SENDER && matches!(s.syndrome, Some(Syndrome::Ack { .. }))).unwrap();
    let data =
        v.iter().find(|s| s.interface == SENDER && s.src == "10.0.0.1" && psn::diff(ack.psn, s.psn) <= 0).unwrap();
    let mut out =
        rocescope_analysis::capture::CaptureWriter::new(Vec::new(), &["sender", "receiver", "fabric"]).unwrap();
    let mut rd = capture::open(&r.capture.display().to_string()).unwrap();
    let (mut copy, mut at) = (None, 0u64);
    let mut n = 0u64;
    while let Some(rec) = rd.next_record().unwrap() {
        if rec.number == data.number {
            copy = Some((rec.interface, rec.data.to_vec()));
        }
        let t = ack.ts_ns + 10_000;
        if let Some((i, d)) = copy.take_if(|_| rec.ts_ns > t) {
            out.write(i, t, &d).unwrap();
            n += 1;
            at = n;
        }
        out.write(rec.interface, rec.ts_ns, rec.data).unwrap();
        n += 1;
    }
    let path = Scratch(r.capture.with_extension("copied.pcapng"));
    std::fs::write(&*path, out.into_inner()).unwrap();
    let out = Command::new(BIN).args(["replay", "--stack", "gbn", "-T", "json"]).arg(&*path).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f: Vec<_> = report["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "departure").collect();
    assert_eq!(f.len(), 1, "{report:#}");
    assert_eq!(f[0]["rule"], "gbn.retx-needless");
    assert_eq!(f[0]["frames"], serde_json::json!([ack.number, at]));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn cnps_closer_than_the_interval_are_a_departure_and_the_interval_is_inferred() {
    // The simulator's NICs pace CNPs at --cnp-interval: the reference's 50 µs when it is 50 µs
    // (no finding), a departure per CNP that came sooner when it is 20 µs, unless replay is
    // told the NIC's interval (--param cnp_interval_ns).
    for (interval, params, departures) in
        [(50_000u64, vec![], false), (20_000, vec!["--param", "cnp_interval_ns=20000"], false), (20_000, vec![], true)]
    {
        let n = interval.to_string();
        let args = ["--stack", "gbn", "--messages", "20", "--message-size", "8192", "--incast", "4"];
        let (capture, err) = synth_capture(
            &format!("cnp-{interval}"),
            &[&args[..], &["--ecn-threshold", "20000", "--seed", "1", "--cnp-interval", &n]].concat(),
        );
        assert!(capture.exists(), "{err}");
        let (report, code) = replay_json(&capture, &params);
        let found = report["findings"].as_array().unwrap();
        let receivers: Vec<_> =
            report["connections"].as_array().unwrap().iter().filter(|c| c["tap"] == "receiver").collect();
        assert_eq!(receivers.len(), 4);
        for c in &receivers {
            // Every connection got CNPs; the closest two are the NIC's interval apart (+10%).
            let i = c["inferred"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["name"] == "cnp_interval_ns")
                .expect("cnp_interval_ns");
            let v = i["value"].as_f64().unwrap();
            assert!(v >= interval as f64 && v < interval as f64 * 1.1, "{interval}: {i}");
        }
        if departures {
            assert!(!found.is_empty());
            // Departures at the receiver's tap; where the CNPs arrive (the sender's tap) or cross
            // (the fabric's), ambiguous: a queue may have brought them closer.
            let at_receiver = |f: &serde_json::Value| f["flow"].as_str().unwrap().ends_with("@1");
            assert!(
                found.iter().all(|f| f["rule"] == "dcqcn.cnp-fast"
                    && f["kind"] == if at_receiver(f) { "departure" } else { "ambiguous" }),
                "{found:?}"
            );
            for tap in ["@0", "@2"] {
                assert!(found.iter().any(|f| f["flow"].as_str().unwrap().ends_with(tap)), "{tap}");
            }
            // One per connection at least, each naming two CNPs about 20 µs apart.
            for c in &receivers {
                assert!(found.iter().any(|f| f["flow"] == c["flow"]), "{}", c["flow"]);
            }
            assert_eq!(code, Some(1));
        } else {
            assert!(found.is_empty(), "{interval} {params:?}: {found:?}");
            assert_eq!(code, Some(0));
        }
    }
}

/// A new directory for one run's files. (One per run: tests run in parallel threads, and a
/// [`Scratch`] removes its directory once empty, which must not pull a shared one from under
/// another run about to write into it.)
fn scratch_dir(name: &str) -> PathBuf {
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let k = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("rocescope-faults-{}-{name}-{k}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `synth` with `args` into a capture of its own; its standard error.
fn synth_capture(name: &str, args: &[&str]) -> (Scratch, String) {
    let capture = scratch_dir(name).join(format!("{name}.pcapng"));
    let out = Command::new(BIN).arg("synth").args(args).arg("-o").arg(&capture).output().unwrap();
    (Scratch(capture), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// `replay -T json` with `args` on `capture`: the report and the exit status.
fn replay_json(capture: &PathBuf, args: &[&str]) -> (serde_json::Value, Option<i32>) {
    let out = Command::new(BIN).args(["replay", "-T", "json"]).args(args).arg(capture).output().unwrap();
    (serde_json::from_slice(&out.stdout).unwrap(), out.status.code())
}

/// The parameter `name` the report infers for the connection at the sender's tap.
fn inferred_at_sender(report: &serde_json::Value, name: &str) -> serde_json::Value {
    let sender = report["connections"].as_array().unwrap().iter().find(|c| c["tap"] == "sender").unwrap();
    sender["inferred"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("{name}"))
        .clone()
}

#[test]
fn timeouts_are_judged_against_the_inferred_timer_or_the_one_param_gives() {
    // A GBN NIC whose timer is 200 µs (synth --rto): conformant against its own timeouts, the
    // inferred timer at that value; told the reference's 67 ms (--param local_ack_timeout=14),
    // every timeout is early; told 131 µs, late.
    let r = run("gbn", "omit-nak:100000", "--rto 200000 --loss 0.05 --seed 3");
    assert!(findings(&r).is_empty(), "{:#}", r.report["findings"]);
    let t = inferred_at_sender(&r.report, "timeout_ns");
    assert!((t["value"].as_f64().unwrap() - 200_000.0).abs() < 20_000.0, "{t}");
    let (report, code) = replay_json(&r.capture, &["--stack", "gbn", "--param", "local_ack_timeout=14"]);
    let f = report["findings"].as_array().unwrap();
    assert!(!f.is_empty() && f.iter().all(|f| f["rule"] == "gbn.timeout-early"), "{report:#}");
    assert_eq!(code, Some(1));
    // Told 4.096 µs · 2^5 = 131 µs, every timeout is late, at the sender's tap (a departure where
    // the NIC was idle and nothing could hold the resend, else ambiguous); the other taps judge
    // only early ones against a given timer.
    let (report, code) = replay_json(&r.capture, &["--stack", "gbn", "--param", "local_ack_timeout=5"]);
    let f = report["findings"].as_array().unwrap();
    assert!(
        !f.is_empty()
            && f.iter().all(|f| f["rule"] == "gbn.timeout-late" && f["flow"].as_str().unwrap().ends_with("@0")),
        "{report:#}"
    );
    assert!(f.iter().any(|f| f["kind"] == "departure"), "{report:#}");
    assert_eq!(code, Some(1));
}

#[test]
fn the_rate_cut_on_a_cnp_is_inferred_at_the_sender() {
    // An ECN incast: the sender's NIC runs DCQCN (synth --cc dcqcn, α = 1 at the first CNP: the
    // rate halves, DCQCN §3.2) or nothing (--cc none: the rate stays).
    for (cc, want) in [("dcqcn", 0.5), ("none", 1.0)] {
        let args = ["--stack", "gbn", "--messages", "8", "--message-size", "65536", "--incast", "4"];
        let (capture, err) = synth_capture(
            &format!("rate-{cc}"),
            &[&args[..], &["--ecn-threshold", "20000", "--seed", "1", "--cc", cc]].concat(),
        );
        let (report, _) = replay_json(&capture, &[]);
        let cut = inferred_at_sender(&report, "dcqcn_rate_cut");
        assert!((cut["value"].as_f64().unwrap() - want).abs() < 0.05, "{cc}: {cut} {err}");
    }
}

#[test]
fn the_rate_increase_after_a_cut_is_inferred_at_the_sender() {
    // A longer ECN incast, so that the congestion ends while the senders still send: after the
    // last CNP the QP's rate climbs back when DCQCN's timer T fires (synth --dcqcn-timer; the
    // paper's 55 µs), by half the cut (fast recovery, DCQCN §3.2). The first rise shows in the
    // packet gaps at the sender's tap at most one gap after T.
    for t in [55_000u64, 100_000] {
        let n = t.to_string();
        let args = ["--stack", "gbn", "--messages", "64", "--message-size", "65536", "--incast", "4"];
        let (capture, err) = synth_capture(
            &format!("increase-{t}"),
            &[&args[..], &["--ecn-threshold", "20000", "--seed", "1", "--dcqcn-timer", &n]].concat(),
        );
        let (report, _) = replay_json(&capture, &[]);
        let period = inferred_at_sender(&report, "dcqcn_increase_period_ns");
        let v = period["value"].as_f64().unwrap();
        assert!(v >= t as f64 && v < t as f64 + 2_000.0, "{t}: {period} {err}");
        let step = inferred_at_sender(&report, "dcqcn_recovery_step");
        assert!((step["value"].as_f64().unwrap() - 0.5).abs() < 0.05, "{t}: {step}");
    }
    // With no congestion control the rate never moves: nothing to infer.
    let args = ["--stack", "gbn", "--messages", "64", "--message-size", "65536", "--incast", "4"];
    let (capture, _) = synth_capture(
        "increase-none",
        &[&args[..], &["--ecn-threshold", "20000", "--seed", "1", "--cc", "none"]].concat(),
    );
    let (report, _) = replay_json(&capture, &[]);
    let sender = report["connections"].as_array().unwrap().iter().find(|c| c["tap"] == "sender").unwrap().clone();
    assert!(sender["inferred"].as_array().unwrap().iter().all(|i| i["name"] != "dcqcn_increase_period_ns"), "{sender}");
}

#[test]
fn the_retry_count_is_inferred_from_a_connection_that_gave_up() {
    // The only fabric link fails after the first ACKs: the GBN requester times out with no
    // progress until its retry count is spent (synth --retry-cnt), then the QP is in error.
    for retries in [3, 5] {
        let n = retries.to_string();
        let args = ["--stack", "gbn", "--messages", "40", "--message-size", "8192", "--local-ack-timeout", "8"];
        let failing = ["--retry-cnt", &n, "--fail-link", "sw0>sw1#0@8000", "--seed", "1"];
        let (capture, err) = synth_capture(&format!("retry-{retries}"), &[&args[..], &failing[..]].concat());
        assert!(err.contains("retry count exceeded"), "{err}");
        let (report, _) = replay_json(&capture, &[]);
        let r = inferred_at_sender(&report, "retry_cnt_at_least");
        assert_eq!(r["value"].as_f64().unwrap(), retries as f64, "{r}");
    }
}

/// ERD (issue 13; docs/replay.md "ERD"): lossy runs (data, NACK segments and their TCP ACKs lost
/// both ways; one path, a 2-to-1 incast sprayed over 8, a sprayed leaf-spine at 10 %) are
/// conformant at both ends' taps;
/// `needless-retx` is an `erd.resend-unasked` departure at the resent copy at both taps, and
/// `false-nack` an `erd.nack-unexpected` departure at the receiver's tap, at the NACK segment
/// and the frame where the PSN it names had arrived, and nothing at the sender's tap (whose
/// resend answers the NACK). The fabric tap is listed as not judged.
#[test]
fn erd_departures_are_found_at_the_frames_the_fault_made_and_clean_runs_have_none() {
    let erd_frames = |r: &Run| frames(&r.capture, Profile::Erd);
    // (Also run by hand over 60 shapes, to 10 % loss and on a sprayed leaf-spine: no finding.)
    for args in [
        "--loss 0.05 --loss-dir both --seed 4",
        "--loss 0.03 --loss-dir both --incast 2 --paths 8 --spray --seed 5",
        "--loss 0.1 --loss-dir both --topology leaf-spine --spines 4 --spray --seed 3",
    ] {
        let r = run("erd", "false-nack:100000", args);
        assert_eq!(r.truth["summary"].get("faults"), None);
        assert!(r.truth["summary"]["dropped"].as_u64().unwrap() > 0, "{args}");
        assert_eq!(findings(&r), vec![], "{args}: {:#}", r.report);
        assert_eq!(r.code, 0);
        let taps: Vec<_> = r.report["connections"].as_array().unwrap().iter().map(|c| c["tap"].clone()).collect();
        assert!(taps.contains(&"sender".into()) && taps.contains(&"receiver".into()), "{taps:?}");
        let unjudged = r.report["unjudged"].as_array().unwrap();
        assert!(unjudged.iter().all(|u| u["interface"] == FABRIC), "{unjudged:?}");
    }
    // A needless resend: both taps, at the resent copy.
    let r = run("erd", "needless-retx", "--loss 0.02 --loss-dir both --seed 2");
    let (t, psn) = applied(&r, "needless-retx");
    let v = erd_frames(&r);
    let sent = nearest(&v, SENDER, t, |s| s.psn == psn && s.opcode == 0x64);
    let got = findings(&r);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.iter().all(|f| f.0 == "departure" && f.1 == "erd.resend-unasked"), "{got:?}");
    assert_eq!(frames_of(&r, "erd.resend-unasked", SENDER), vec![sent.number]);
    let arrived = frames_of(&r, "erd.resend-unasked", RECEIVER);
    let a = v.iter().find(|s| s.number == arrived[0]).unwrap();
    assert_eq!((a.interface, a.psn), (RECEIVER, psn));
    assert_eq!(r.code, 1);
    // A NACK naming a PSN the receiver holds: the receiver's tap, at the NACK and at the PSN's
    // arrival.
    let r = run("erd", "false-nack", "--loss 0.03 --loss-dir both --seed 3");
    let (t, psn) = applied(&r, "false-nack");
    let got = findings(&r);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].0.as_str(), got[0].1.as_str(), got[0].2), ("departure", "erd.nack-unexpected", RECEIVER));
    let v = erd_frames(&r);
    let held = v.iter().find(|s| s.number == got[0].3[1]).unwrap();
    assert_eq!((held.interface, held.psn, held.opcode), (RECEIVER, psn, 0x64));
    assert!(held.ts_ns < t);
    // The first frame is the NACK segment, sent when the fault says (TCP: not in `frames`).
    let nack = got[0].3[0];
    assert!(nack > held.number && v.iter().all(|s| s.number != nack), "{nack}");
    assert_eq!(r.code, 1);
}

/// Flor (issue 13; docs/replay.md "Flor"; no ground truth yet, so the fault's PSN and time are
/// read from `synth`'s report): lossy runs (both ways, large messages as WRITE chunks, an incast)
/// are conformant at the sender's and the receiver's taps, the fabric tap listed as not judged; `needless-retx`
/// resending a WRITE chunk's last packet (a 100,000-byte message) or a one-packet SEND (512
/// bytes) after its ACK is a `flor.resend-acked` departure at the resent frame.
#[test]
fn flor_resending_what_an_ack_acknowledged_is_a_departure_at_the_sender() {
    let synth = |name: &str, args: &str| {
        let mut all = vec!["--stack", "flor", "--messages", "20"];
        all.extend(args.split_whitespace());
        synth_capture(name, &all)
    };
    // (Also run by hand over 144 shapes, to 5 % loss both ways: no finding.)
    for (i, args) in [
        "--message-size 100000 --loss 0.02 --loss-dir both --seed 3",
        "--message-size 300000 --loss 0.05 --loss-dir both --incast 2 --seed 1",
    ]
    .into_iter()
    .enumerate()
    {
        let (capture, err) = synth(&format!("flor-clean-{i}"), args);
        assert!(err.contains("messages completed"), "{err}");
        let (report, code) = replay_json(&capture, &[]);
        assert_eq!(report["findings"], serde_json::json!([]), "{args}: {report:#}");
        assert_eq!(code, Some(0));
        let conns = report["connections"].as_array().unwrap();
        assert!(conns.iter().any(|c| c["tap"] == "sender" && c["stack"] == "flor"), "{conns:?}");
        let unjudged = report["unjudged"].as_array().unwrap();
        let why = "Flor: judged at the sender's and the receiver's taps (this is a fabric tap)";
        assert!(unjudged.iter().all(|u| u["reason"].as_str().unwrap().contains(why)), "{unjudged:?}");
    }
    for size in ["100000", "512"] {
        let args = format!("--message-size {size} --loss 0.01 --loss-dir both --seed 2 --fault needless-retx:3");
        let (capture, err) = synth(&format!("flor-fault-{size}"), &args);
        // "fault needless-retx at 239.474 µs: PSN 10743721 sent again after its message completed"
        let line = err.lines().find(|l| l.contains("fault needless-retx at")).unwrap_or_else(|| panic!("{err}"));
        let psn: u32 = line.split("PSN ").nth(1).and_then(|s| s.split_whitespace().next()).unwrap().parse().unwrap();
        let us: f64 = line.split(" at ").nth(1).and_then(|s| s.split_whitespace().next()).unwrap().parse().unwrap();
        let t = 1_700_000_000_000_000_000 + (us * 1000.0).round() as u64;
        let v = frames(&capture, Profile::Flor);
        let resent = nearest(&v, SENDER, t, |s| s.src == "10.0.0.1" && s.psn == psn);
        let (report, code) = replay_json(&capture, &[]);
        let f = report["findings"].as_array().unwrap();
        assert_eq!(f.len(), 1, "{size}: {report:#}");
        assert_eq!((f[0]["kind"].as_str(), f[0]["rule"].as_str()), (Some("departure"), Some("flor.resend-acked")));
        assert_eq!(f[0]["frames"], serde_json::json!([resent.number]), "{size}");
        assert!(f[0]["flow"].as_str().unwrap().ends_with("@0"), "{size}: the sender's tap");
        assert_eq!(code, Some(1));
    }
}

/// SDR selective repeat (issue 13; docs/replay.md "SDR-RDMA"): lossy runs (both ways; the
/// SR_NACK variant; two channels; an incast) are conformant at the sender's and the receiver's
/// taps, the fabric tap listed as not judged; `needless-retx` (the last packet of a message sent
/// again 200 µs after the message completed) is an `sdr.resend-acked` departure at the sender's
/// tap, at the frame the truth names as that resend (the spurious copy of the fault's PSN sent
/// at the fault's time); `false-nack` an `sdr.nack-unexpected` departure at the receiver's tap,
/// at the SR_NACK and at the arrival of the chunk it names.
#[test]
fn sdr_sr_resending_a_packet_its_sr_ack_covered_is_a_departure_at_the_sender() {
    // (Also run by hand over 45 shapes: 1, 3 and 5 % loss both ways; timers only, the SR_NACK
    // variant (also with α = 0), two channels, a 3-to-1 incast sprayed over 4 paths: no finding.)
    for args in [
        "--loss 0.03 --loss-dir both --seed 4",
        "--loss 0.05 --loss-dir both --sdr-nack --sdr-channels 2 --seed 1",
        "--loss 0.02 --loss-dir both --incast 3 --paths 4 --spray --seed 2",
    ] {
        let r = run("sdr-sr", "needless-retx:100000", args);
        assert_eq!(r.truth["summary"].get("faults"), None);
        assert!(r.truth["summary"]["dropped"].as_u64().unwrap() > 0, "{args}");
        assert_eq!(findings(&r), vec![], "{args}: {:#}", r.report);
        assert_eq!(r.code, 0);
        let unjudged = r.report["unjudged"].as_array().unwrap();
        assert!(unjudged.iter().all(|u| u["interface"] == FABRIC), "{unjudged:?}");
    }
    let r = run("sdr-sr", "needless-retx:3", "--loss 0.01 --loss-dir both --seed 2");
    let (t, psn) = applied(&r, "needless-retx");
    // The truth's copy of that packet sent at the fault's time, and its frame at the sender's tap.
    let txs = r.truth["sim"]["transmissions"].as_array().unwrap();
    let resent = txs
        .iter()
        .find(|x| {
            x["psn"] == psn && x["retx"].is_object() && x["time_ns"].as_str().unwrap().parse::<u64>().unwrap() >= t
        })
        .expect("the resend in the truth");
    assert_eq!(resent["retx"]["spurious"], true, "{resent}");
    let tap = &r.truth["taps"][SENDER as usize]["frames"];
    let frame = tap.as_array().unwrap().iter().find(|f| f["tx"] == resent["id"]).expect("its frame")["frame"].as_u64();
    let got = findings(&r);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].0.as_str(), got[0].1.as_str()), ("departure", "sdr.resend-acked"));
    assert_eq!(frames_of(&r, "sdr.resend-acked", SENDER), vec![frame.unwrap()]);
    assert_eq!(r.code, 1);
}

/// SDR erasure coding (issue 13; docs/replay.md "SDR-RDMA"): lossy runs (both ways; XOR(4, 1),
/// whose second loss in a submessage falls back by EC_NACK, and MDS(8, 2) over two channels; an
/// incast sprayed over 4 paths) are conformant at the sender's and the receiver's taps (the
/// EC_NACKs name only submessages the receiver could not decode), the fabric tap listed as not
/// judged; `needless-retx` (the message's first packet, D0's packet 0, sent again 200 µs after
/// its EC_ACK) is an `sdr.resend-acked` departure at the sender's tap, at the frame the truth
/// names as that resend.
#[test]
fn sdr_ec_resending_a_packet_after_its_ec_ack_is_a_departure_at_the_sender() {
    // (Also run by hand over 48 shapes: 1, 2 and 5 % loss both ways, XOR(4, 1), MDS(8, 2) with
    // two channels and MDS(32, 8), 1 and 3 senders, 1 and 4 sprayed paths: no finding.)
    let mut fallbacks = 0;
    for args in [
        "--loss 0.03 --loss-dir both --ec-code xor --ec-k 4 --ec-m 1 --message-size 16384 --seed 4",
        "--loss 0.05 --loss-dir both --ec-k 8 --ec-m 2 --sdr-channels 2 --message-size 16384 --seed 1",
        "--loss 0.02 --loss-dir both --ec-code xor --ec-k 4 --ec-m 1 --incast 3 --paths 4 --spray --seed 2",
    ] {
        let r = run("sdr-ec", "needless-retx:100000", args);
        assert_eq!(r.truth["summary"].get("faults"), None);
        assert!(r.truth["summary"]["dropped"].as_u64().unwrap() > 0, "{args}");
        let txs = r.truth["sim"]["transmissions"].as_array().unwrap();
        fallbacks += txs.iter().filter(|x| x["sdr_ctrl"]["type"] == "ec_nack").count();
        assert_eq!(findings(&r), vec![], "{args}: {:#}", r.report);
        assert_eq!(r.code, 0);
        let conns = r.report["connections"].as_array().unwrap();
        assert!(conns.iter().all(|c| c["stack"] == "sdr-ec"), "{conns:?}");
        assert!(conns.iter().any(|c| c["tap"] == "receiver"), "{conns:?}");
        let unjudged = r.report["unjudged"].as_array().unwrap();
        assert!(unjudged.iter().all(|u| u["interface"] == FABRIC), "{unjudged:?}");
    }
    assert!(fallbacks >= 2, "{fallbacks} EC_NACKs: no fallback was judged");
    let r = run("sdr-ec", "needless-retx:3", "--loss 0.01 --loss-dir both --ec-code xor --ec-k 4 --ec-m 1 --seed 2");
    let (t, psn) = applied(&r, "needless-retx");
    let txs = r.truth["sim"]["transmissions"].as_array().unwrap();
    let resent = txs
        .iter()
        .find(|x| {
            // (Every data QP starts at the same PSN: D0's packet 0 by its offset too.)
            x["psn"] == psn
                && x["sdr_off"] == 0
                && x["retx"].is_object()
                && x["time_ns"].as_str().unwrap().parse::<u64>().unwrap() >= t
        })
        .expect("the resend in the truth");
    assert_eq!((resent["retx"]["spurious"].as_bool(), resent["sdr_off"].as_u64()), (Some(true), Some(0)), "{resent}");
    let tap = &r.truth["taps"][SENDER as usize]["frames"];
    let frame = tap.as_array().unwrap().iter().find(|f| f["tx"] == resent["id"]).expect("its frame")["frame"].as_u64();
    let got = findings(&r);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].0.as_str(), got[0].1.as_str()), ("departure", "sdr.resend-acked"));
    assert_eq!(frames_of(&r, "sdr.resend-acked", SENDER), vec![frame.unwrap()]);
    assert_eq!(r.code, 1);
}

#[test]
fn sdr_sr_nacking_a_chunk_the_receiver_holds_is_a_departure_at_the_receiver() {
    // Chunks of 4 packets (the judges read a chunk as one packet): not judged at either tap,
    // rather than misread (a review found 33 false departures at the receiver's tap).
    let (pcap, _) = synth_capture(
        "sdr-chunk4",
        &["--stack", "sdr-sr", "--sdr-nack", "--sdr-chunk", "4", "--messages", "8", "--message-size", "65536"],
    );
    let (report, code) = replay_json(&pcap, &["--stack", "sdr-sr"]);
    assert_eq!(report["findings"], serde_json::json!([]), "{report:#}");
    assert_eq!(code, Some(0));
    let unjudged = report["unjudged"].as_array().unwrap();
    for tap in [SENDER, RECEIVER] {
        let u = unjudged.iter().find(|u| u["interface"] == tap).unwrap_or_else(|| panic!("{report:#}"));
        assert!(u["reason"].as_str().unwrap().contains("far fewer chunks than packets"), "{u}");
    }
    // (Messages of 256 one-packet chunks: an SR_NACK late in one finds a chunk held 20 µs.)
    let r =
        run("sdr-sr", "false-nack", "--sdr-nack --message-size 262144 --mtu 1024 --loss 0.01 --loss-dir both --seed 2");
    let (t, _) = applied(&r, "false-nack");
    let detail = r.truth["summary"]["faults"][0]["detail"].as_str().unwrap().to_string();
    // "SR_NACK of message 0 names chunk 10, which the receiver holds, instead of 228"
    let num = |after: &str| -> u64 {
        detail.split(after).nth(1).unwrap().split_whitespace().next().unwrap().trim_end_matches(',').parse().unwrap()
    };
    let (msg, chunk) = (num("of message "), num("names chunk "));
    let txs = r.truth["sim"]["transmissions"].as_array().unwrap();
    let at = |x: &serde_json::Value| x["time_ns"].as_str().unwrap().parse::<u64>().unwrap();
    let nack = txs.iter().find(|x| x["sdr_ctrl"]["type"] == "sr_nack" && at(x) == t).expect("the SR_NACK in the truth");
    let tap = r.truth["taps"][RECEIVER as usize]["frames"].as_array().unwrap();
    let frame_at_receiver =
        |tx: &serde_json::Value| tap.iter().find(|f| f["tx"] == tx["id"]).and_then(|f| f["frame"].as_u64());
    let frame_of = |tx: &serde_json::Value| frame_at_receiver(tx).expect("a frame at the receiver's tap");
    // (The chunk's first copy that arrived.)
    let copy = txs.iter().filter(|x| x["msg"] == msg && x["sdr_off"] == chunk).find(|x| frame_at_receiver(x).is_some());
    let copy = copy.expect("the chunk's arrival");
    let got = findings(&r);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].0.as_str(), got[0].1.as_str()), ("departure", "sdr.nack-unexpected"));
    assert_eq!(frames_of(&r, "sdr.nack-unexpected", RECEIVER), vec![frame_of(nack), frame_of(copy)]);
    assert_eq!(r.code, 1);
}
