//! Issue 12 (first slice): `replay` judges the responder's rules at the responder's tap. The
//! simulator's captures (whose endpoints are the reference stacks) are conformant at every
//! receiver tap, the sender and fabric taps are listed as not judged, and faults injected into
//! the receiver tap's frames are found, each by its rule, at its frame: a NAK sent twice, a NAK
//! naming the wrong PSN, an ACK ahead of what was received. Frames deleted (a capture gap: a
//! NAK, a selective NAK, a returned header-only packet, request packets) are never departures:
//! the requester's reaction shows the answer was sent, so the finding is `ambiguous`, with both
//! explanations.

use std::path::{Path, PathBuf};

use rocescope_analysis::capture::{self, CaptureWriter};
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions};
use rocescope_codec::ext::dcp;
use rocescope_codec::ib::aeth::Syndrome;
use rocescope_codec::{DecodeOptions, Frame, LinkType, Params, Profile};
use rocescope_replay::{self as replay, FindingKind, Options, Report};

#[path = "../../cli/tests/common/explained.rs"]
mod explained;

/// The synth fixtures' interfaces: the sender's, the receiver's and a fabric tap.
const SENDER: u32 = 0;
const RECEIVER: u32 = 1;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../fixtures/synth-{name}.pcapng"))
}

fn run(path: &Path) -> Report {
    let session = || {
        let r = capture::open(&path.display().to_string()).expect("open");
        Session::new(r, Decoder::new(DecoderOptions::default()).checksums_for_detection_only())
    };
    let report = replay::replay(session(), session(), &Options::default()).expect("replay");
    if path.starts_with(std::env::temp_dir()) {
        let _ = std::fs::remove_file(path);
    }
    report
}

#[test]
fn docs_replay_md_lists_every_rule_with_its_summary_source() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/replay.md")).expect("docs/replay.md");
    for r in replay::rules::ALL {
        let row = doc.lines().find(|l| l.starts_with(&format!("| `{}` |", r.id))).unwrap_or_else(|| panic!("docs/replay.md has no row for {}", r.id));
        // The row cites the same document and section the rule does (its first words).
        let cited = r.source.split(" (").next().unwrap().split(';').next().unwrap();
        assert!(row.contains(cited.trim()), "{}: row {row:?} does not cite {cited:?}", r.id);
    }
}

/// One frame of a capture, as read.
#[derive(Clone)]
struct Rec {
    number: u64,
    interface: u32,
    ts_ns: u64,
    data: Vec<u8>,
}

fn records(path: &Path) -> Vec<Rec> {
    let mut r = capture::open(&path.display().to_string()).expect("open");
    let mut v = Vec::new();
    while let Some(rec) = r.next_record().expect("read") {
        v.push(Rec { number: rec.number, interface: rec.interface, ts_ns: rec.ts_ns, data: rec.data.to_vec() });
    }
    v
}

fn write(recs: &[Rec], name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("rocescope-replay-{}-{name}.pcapng", std::process::id()));
    let out = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    let mut w = CaptureWriter::new(out, &["sender", "receiver", "fabric"]).expect("writer");
    for r in recs {
        w.write(r.interface, r.ts_ns, &r.data).expect("write");
    }
    drop(w);
    path
}

fn decode(data: &[u8], profile: Profile) -> Frame<'_> {
    Frame::parse(LinkType::Ethernet, data, data.len(), &DecodeOptions { verify: false, profile, params: Params::default() })
}

/// What a responder's frame is, read independently of replay: (opcode, PSN, AETH syndrome,
/// SACK PSN, DCP tag).
fn control(r: &Rec, profile: Profile) -> Option<(u8, u32, Option<Syndrome>, Option<u32>, u8)> {
    let f = decode(&r.data, profile);
    let p = f.roce()?;
    let tag = dcp::tag(f.tos()?, Params::default().dcp_tag_shift);
    Some((p.opcode().0, p.bth().psn(), p.aeth().map(|a| a.syndrome()), p.irn_sack().map(|s| s.sack_psn()), tag))
}

fn departures<'a>(r: &'a Report, rule: &str) -> Vec<&'a replay::Finding> {
    r.findings.iter().filter(|f| f.kind == FindingKind::Departure && f.rule == rule).collect()
}

#[test]
fn the_simulators_captures_are_conformant_at_every_tap() {
    for name in ["gbn-clean", "gbn-loss", "irn-clean", "irn-loss", "dcp-clean", "dcp-loss"] {
        let r = run(&fixture(name));
        // No finding but an ambiguous one the network explains, by the truth (the sprayed DCP
        // capture reorders a whole message ahead of a packet its ACK names).
        let truth = fixture(name).with_extension("truth.json");
        let truth: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(truth).unwrap()).unwrap();
        let truth = explained::Truth::new(&truth);
        let index = explained::capture_index(&fixture(name), if name.starts_with("dcp") { Profile::Dcp } else { Profile::Std });
        for f in &r.findings {
            let why = truth.explains(&serde_json::to_value(f).unwrap(), |n| index[&n].0, |n| index[&n].1);
            assert!(why.is_ok(), "{name}: {why:?}");
        }
        assert!(!r.connections.is_empty(), "{name}: nothing judged");
        let stack = &name[..3];
        // The responder judged at the receiver's tap, the requester at the sender's, what any
        // tap can say at the fabric's: every connection at every tap.
        for c in &r.connections {
            assert_eq!(c.stack, stack, "{name}: {}", c.flow);
            assert!(c.requests > 0 && c.responses > 0, "{name}: {c:?}");
        }
        for tap in [SENDER, RECEIVER, 2] {
            assert!(r.connections.iter().any(|c| c.interface == tap), "{name}: tap {tap}");
        }
        // Listed as not judged: only where the fabric tap stopped showing every PSN (lost before
        // it, or on another path), from that PSN on; and, where the arrivals were reordered
        // (the IRN captures take several paths), the requester's go-backs and timers at the
        // responder's tap.
        assert!(
            r.unjudged.iter().all(|u| (u.interface == 2 && u.reason.contains("never crossed it"))
                || (u.interface == RECEIVER && u.reason.starts_with("arrivals reordered"))),
            "{name}: {:?}",
            r.unjudged
        );
    }
    // The GBN responder's ACK coalescing (the simulator's ack_every is 4) is inferred.
    let r = run(&fixture("gbn-loss"));
    let i = r.connections.iter().find(|c| c.interface == RECEIVER).unwrap().inferred.iter().find(|i| i.name == "ack_coalescing").expect("inferred");
    assert_eq!(i.value, 4.0, "{i:?}");
}

/// The receiver tap's first frame that `is` picks, and its index.
fn find(recs: &[Rec], is: impl Fn(&Rec) -> bool) -> usize {
    recs.iter().position(|r| r.interface == RECEIVER && is(r)).expect("such a frame at the receiver tap")
}

#[test]
fn a_data_packet_sent_again_after_the_ack_that_covered_it_is_a_needless_retransmission_at_the_sender() {
    // (GBN: fixtures/synth-gbn-loss.pcapng asks a READ again early, after which the requester's
    // rules are not judged; pcap-tools/cli/tests/replay_faults.rs copies a frame in a
    // write-only GBN capture.)
    for (name, rule) in [("irn-loss", "irn.retx-needless")] {
        let recs = records(&fixture(name));
        // At the sender's tap: its first ACK, and the first data packet it covers.
        let ack = recs
            .iter()
            .position(|r| r.interface == SENDER && matches!(control(r, Profile::Std), Some((0x11, _, Some(Syndrome::Ack { .. }), _, _))))
            .expect("an ACK at the sender's tap");
        let acked = control(&recs[ack], Profile::Std).unwrap().1;
        let data = recs[..ack].iter().position(|r| r.interface == SENDER && control(r, Profile::Std).is_some_and(|c| c.0 != 0x11 && c.1 <= acked)).unwrap();
        // The data packet copied to 10 µs after the ACK (past the 5 µs reaction time).
        let (faulty, at) = copied_after(&recs, data, ack);
        let r = run(&write(&faulty, &format!("needless-{name}")));
        assert_eq!(r.departures(), 1, "{name}: {:#?}", r.findings);
        let d = departures(&r, rule);
        assert_eq!(d.len(), 1, "{name}: {:#?}", r.findings);
        // It names the copy, and the first acknowledgement at the sender's tap that covered the
        // packet: an ACK through its PSN or beyond, or a NAK naming a later PSN.
        let psn = control(&recs[data], Profile::Std).unwrap().1;
        let covers = |r: &Rec| match control(r, Profile::Std) {
            Some((0x11, p, Some(Syndrome::Ack { .. }), _, _)) => p >= psn,
            Some((0x11, p, Some(Syndrome::Nak { code: 0 }), _, _)) => p > psn,
            _ => false,
        };
        let first = recs.iter().find(|r| r.interface == SENDER && covers(r)).unwrap();
        assert_eq!(d[0].frames, [first.number, at as u64 + 1], "{name}");
        assert!(d[0].flow.ends_with("@0"), "{name}: {:?}", d[0]);
    }

    // DCP: a data packet of a message the first ACK at the sender's tap shows complete (its eMSN
    // past it), sent again 10 µs after that ACK.
    let recs = records(&fixture("dcp-loss"));
    let emsn = |r: &Rec| {
        let f = decode(&r.data, Profile::Dcp);
        let tagged = f.tos().is_some_and(|t| dcp::tag(t, Params::default().dcp_tag_shift) == dcp::TAG_ACK);
        f.roce().filter(|p| tagged && p.opcode().0 == 0x11).and_then(|p| p.aeth()).map(|a| a.msn())
    };
    let ack = recs.iter().position(|r| r.interface == SENDER && emsn(r).is_some_and(|m| m > 0)).expect("a DCP ACK at the sender's tap");
    let msn_of = |r: &Rec| match decode(&r.data, Profile::Dcp).ext() {
        rocescope_codec::ext::Ext::Dcp(x) if !x.ho => decode(&r.data, Profile::Dcp).roce().and_then(|p| x.msn(&p)),
        _ => None,
    };
    let data = recs[..ack].iter().position(|r| r.interface == SENDER && msn_of(r).is_some_and(|m| m < emsn(&recs[ack]).unwrap())).unwrap();
    let (faulty, at) = copied_after(&recs, data, ack);
    let r = run(&write(&faulty, "needless-dcp"));
    assert_eq!(r.departures(), 1, "{:#?}", r.findings);
    let d = departures(&r, "dcp.retx-needless");
    assert_eq!(d.len(), 1, "{:#?}", r.findings);
    assert_eq!(*d[0].frames.last().unwrap(), at as u64 + 1);
    assert!(d[0].flow.ends_with("@0"), "{:?}", d[0]);
}

#[test]
fn a_nak_sent_twice_or_naming_the_wrong_psn_or_an_ack_ahead_is_a_departure_at_its_frame() {
    let recs = records(&fixture("gbn-loss"));
    let is_nak = |r: &Rec| matches!(control(r, Profile::Std), Some((0x11, _, Some(Syndrome::Nak { code: 0 }), None, _)));
    let nak = find(&recs, is_nak);
    let nak_psn = control(&recs[nak], Profile::Std).unwrap().1;

    // Sent twice: a copy of the NAK right after it (frame number nak + 2, 1-based).
    let mut twice = recs.clone();
    let mut copy = recs[nak].clone();
    copy.ts_ns += 100;
    twice.insert(nak + 1, copy);
    let r = run(&write(&twice, "nak-twice"));
    let d = departures(&r, "gbn.nak-repeated");
    assert_eq!(d.len(), 1, "{:#?}", r.findings);
    assert_eq!(d[0].frames, [nak as u64 + 2]);
    assert_eq!(r.departures(), 1, "{:#?}", r.findings);

    // Naming the wrong PSN (one the responder had already received in order): that NAK is
    // unexpected, a departure at its frame; the right one is missing, but the requester went
    // back to it as a NAK makes it do, so that one is ambiguous (the NAK could have been sent
    // and not captured), not a departure.
    let bumped = (nak_psn - 1) & 0xff_ffff;
    let r = run(&write(&with_psn(&recs, nak, bumped), "nak-wrong"));
    let d = the_departure(&r, "gbn.nak-unexpected", &[recs[nak].number]);
    assert!(d.seen.contains(&format!("naming PSN {bumped}")), "{d:?}");
    let trigger = recs[..nak].iter().rev().find(|r| r.interface == RECEIVER && control(r, Profile::Std).is_some_and(|c| c.0 != 0x11)).unwrap();
    let a: Vec<_> = r.findings.iter().filter(|f| f.kind == FindingKind::Ambiguous).collect();
    // (At the responder's tap the requester's go-back after that NAK starts past the PSN it
    // names, but the capture ends inside the answer window: nothing is said of it.)
    assert_eq!(a.len(), 1, "{:#?}", r.findings);
    assert_eq!((a[0].rule, a[0].frames[0]), ("gbn.nak-missing", trigger.number));
    assert!(a[0].expected.contains(&format!("naming PSN {nak_psn}")), "{:?}", a[0]);
    assert!(a[0].seen.contains(&format!("the requester sent PSN {nak_psn} again")), "{:?}", a[0]);

    // An ACK ahead: the receiver's first ACK after the NAK claims 3 more PSNs (and its MSN is
    // left as is) than were received in order.
    let ack = nak + 1 + find(&recs[nak + 1..], |r| matches!(control(r, Profile::Std), Some((0x11, _, Some(Syndrome::Ack { .. }), _, _))));
    let bumped = (control(&recs[ack], Profile::Std).unwrap().1 + 3) & 0xff_ffff;
    let r = run(&write(&with_psn(&recs, ack, bumped), "ack-ahead"));
    let d = the_departure(&r, "gbn.ack-ahead", &[recs[ack].number]);
    assert!(d.seen.contains(&format!("PSN {bumped}")), "{d:?}");
}

/// The capture with frame `data` copied to 10 µs after frame `ack`, in time order, and the
/// copy's index.
fn copied_after(recs: &[Rec], data: usize, ack: usize) -> (Vec<Rec>, usize) {
    let mut copy = recs[data].clone();
    copy.ts_ns = recs[ack].ts_ns + 10_000;
    let mut faulty = recs.to_vec();
    let at = faulty.iter().position(|r| r.ts_ns > copy.ts_ns).unwrap_or(faulty.len());
    faulty.insert(at, copy);
    (faulty, at)
}

/// The capture with frame `i`'s BTH PSN set to `psn`.
fn with_psn(recs: &[Rec], i: usize, psn: u32) -> Vec<Rec> {
    let mut v = recs.to_vec();
    let at = psn_offset(&v[i].data);
    v[i].data[at..at + 3].copy_from_slice(&psn.to_be_bytes()[1..]);
    v
}

/// The report's one departure: of `rule`, at `frames`.
fn the_departure<'a>(r: &'a Report, rule: &str, frames: &[u64]) -> &'a replay::Finding {
    assert_eq!(r.departures(), 1, "{:#?}", r.findings);
    let d = departures(r, rule);
    assert_eq!(d.len(), 1, "{:#?}", r.findings);
    assert_eq!(d[0].frames, frames);
    d[0]
}

/// Where a frame's BTH PSN is (Ethernet, IPv4: the BTH follows the IP header and the 8-byte
/// UDP header; the PSN is its bytes 9-11).
fn psn_offset(d: &[u8]) -> usize {
    assert_eq!(&d[12..14], &[0x08, 0x00]);
    14 + usize::from(d[14] & 0x0f) * 4 + 8 + 9
}

/// The findings of a capture with frames deleted: no departure; the answers deleted each an
/// ambiguous finding of `rule` naming `what`.
fn only_ambiguous(r: &Report, rule: &str, what: &str) {
    assert_eq!(r.departures(), 0, "{:#?}", r.findings);
    let a: Vec<_> = r.findings.iter().filter(|f| f.rule == rule).collect();
    assert_eq!(a.len(), 1, "{:#?}", r.findings);
    assert_eq!(a[0].kind, FindingKind::Ambiguous);
    assert!(a[0].expected.contains(what), "{:?}", a[0]);
    assert!(a[0].seen.contains("a capture gap"), "{:?}", a[0]);
}

#[test]
fn answers_deleted_from_the_capture_are_ambiguous_never_departures() {
    // GBN: the receiver tap's first NAK deleted.
    let recs = records(&fixture("gbn-loss"));
    let nak = find(&recs, |r| matches!(control(r, Profile::Std), Some((0x11, _, Some(Syndrome::Nak { code: 0 }), None, _))));
    let psn = control(&recs[nak], Profile::Std).unwrap().1;
    let mut without = recs.clone();
    without.remove(nak);
    only_ambiguous(&run(&write(&without, "nak-deleted")), "gbn.nak-missing", &format!("naming PSN {psn}"));

    // IRN: the receiver tap's first selective NAK deleted.
    let recs = records(&fixture("irn-loss"));
    let sack = find(&recs, |r| matches!(control(r, Profile::Std), Some((0x11, _, Some(Syndrome::Nak { code: 0 }), Some(_), _))));
    let (_, epsn, _, sacked, _) = control(&recs[sack], Profile::Std).unwrap();
    let mut without = recs.clone();
    without.remove(sack);
    let r = run(&write(&without, "sack-deleted"));
    only_ambiguous(&r, "irn.sack-missing", &format!("expected PSN {epsn}, PSN {} received", sacked.unwrap()));

    // DCP: the first header-only packet the receiver returns, deleted.
    let recs = records(&fixture("dcp-loss"));
    let dst_of = |r: &Rec| decode(&r.data, Profile::Dcp).ip_addrs().map(|(_, d)| d);
    let receiver_ip = dst_of(&recs[find(&recs, |r| matches!(control(r, Profile::Dcp), Some((op, _, None, _, dcp::TAG_DATA)) if op != 0x11))]);
    let bounce = find(&recs, |r| {
        matches!(control(r, Profile::Dcp), Some((_, _, _, _, dcp::TAG_HO))) && decode(&r.data, Profile::Dcp).ip_addrs().map(|(s, _)| s) == receiver_ip
    });
    let psn = control(&recs[bounce], Profile::Dcp).unwrap().1;
    let mut without = recs.clone();
    without.remove(bounce);
    let r = run(&write(&without, "ho-deleted"));
    only_ambiguous(&r, "dcp.ho-unanswered", &format!("PSN {psn} returned"));
}

#[test]
fn request_packets_deleted_from_the_capture_are_no_departure() {
    // Bursts of the receiver tap's request packets deleted from each lossy synth capture (as
    // ibdump drops them): what the responder answered or acknowledged past them is ambiguous
    // at most.
    for name in ["gbn-loss", "irn-loss", "dcp-loss"] {
        let recs = records(&fixture(name));
        let profile = if name.starts_with("dcp") { Profile::Dcp } else { Profile::Std };
        let requests: Vec<usize> = (0..recs.len())
            .filter(|&i| recs[i].interface == RECEIVER && control(&recs[i], profile).is_some_and(|c| c.0 != 0x11 && c.4 != dcp::TAG_HO))
            .collect();
        // (DCP: not every burst yet. Its eMSN past a burst whose packets the responder
        // received in another order than their PSNs can still read as a departure: see
        // docs/replay.md "Known limits".)
        let bursts: &[(usize, usize)] =
            if name.starts_with("dcp") { &[(1, 2), (10, 12), (15, 20), (25, 26), (30, 31)] } else { &[(4, 7), (1, 2), (10, 12), (15, 20), (25, 26), (30, 31)] };
        for &(a, b) in bursts {
            let gone = &requests[a..b];
            let kept: Vec<Rec> = (0..recs.len()).filter(|i| !gone.contains(i)).map(|i| recs[i].clone()).collect();
            let r = run(&write(&kept, &format!("gap-{name}")));
            assert_eq!(r.departures(), 0, "{name}, requests {a}..{b} deleted: {:#?}", r.findings);
        }
    }
}

#[test]
fn a_capture_that_begins_mid_connection_is_no_departure() {
    // The first frames cut off (a capture started late): the responder's MSN no longer counts
    // from the reference's 0, the first ACKs may come before their requests.
    for name in ["gbn-loss", "irn-loss", "dcp-loss"] {
        let recs = records(&fixture(name));
        for skip in [20, 45, 70] {
            let r = run(&write(&recs[skip..], &format!("late-{name}")));
            assert_eq!(r.departures(), 0, "{name}, first {skip} frames cut: {:#?}", r.findings);
            assert!(!r.connections.is_empty(), "{name}, first {skip} frames cut");
        }
    }
}

#[test]
fn read_responses_leaving_out_of_order_are_a_departure_where_one_goes_back() {
    // The receiver tap's first two READ responses in a row (First/Middle then Middle/Last)
    // swapped: the second one leaves first, one PSN ahead.
    let recs = records(&fixture("gbn-loss"));
    let resp = |r: &Rec| control(r, Profile::Std).filter(|c| (0x0D..=0x10).contains(&c.0));
    let idx: Vec<usize> = (0..recs.len()).filter(|&i| recs[i].interface == RECEIVER && resp(&recs[i]).is_some()).collect();
    let k = idx
        .windows(3)
        .position(|w| {
            let (a, b, c) = (resp(&recs[w[0]]).unwrap(), resp(&recs[w[1]]).unwrap(), resp(&recs[w[2]]).unwrap());
            matches!(a.0, 0x0D | 0x0E) && b.0 == 0x0E && matches!(c.0, 0x0E | 0x0F) && b.1 == a.1 + 1 && c.1 == b.1 + 1
        })
        .expect("three READ responses in a row");
    let (a, b, c) = (idx[k], idx[k + 1], idx[k + 2]);
    let mut swapped = recs.clone();
    let (db, dc) = (recs[b].data.clone(), recs[c].data.clone());
    swapped[b].data = dc;
    swapped[c].data = db;
    let r = run(&write(&swapped, "read-swapped"));
    // The first of them is one PSN ahead: ambiguous (a capture gap could drop the one between);
    // the second one PSN behind: a departure (no capture gap puts a response back).
    let found: Vec<_> = r.findings.iter().map(|f| (f.kind, f.rule, f.frames.clone())).collect();
    assert_eq!(
        found,
        [
            (FindingKind::Ambiguous, "gbn.read-out-of-order", vec![recs[a].number, recs[b].number]),
            (FindingKind::Departure, "gbn.read-out-of-order", vec![recs[b].number, recs[c].number]),
        ],
        "{:#?}",
        r.findings
    );
}
