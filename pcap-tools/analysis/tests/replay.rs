//! Issue 12 (first slice): `replay` judges the responder's rules at the responder's tap. The
//! simulator's captures (whose endpoints are the reference stacks) are conformant at every
//! receiver tap, the sender and fabric taps are listed as not judged, and faults injected into
//! the receiver tap's frames are found, each by its rule, at its frame: a NAK sent twice, a NAK
//! never sent, an ACK ahead of what was received, a selective NAK never sent, a header-only
//! packet never returned.

use std::path::{Path, PathBuf};

use rocescope_analysis::capture::{self, CaptureWriter};
use rocescope_analysis::replay::{self, FindingKind, Options, Report};
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions};
use rocescope_codec::ext::dcp;
use rocescope_codec::ib::aeth::Syndrome;
use rocescope_codec::{DecodeOptions, Frame, LinkType, Params, Profile};

/// The synth fixtures' interfaces: the sender's, the receiver's and a fabric tap.
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
fn the_simulators_captures_are_conformant_at_the_receiver_and_the_other_taps_are_not_judged() {
    for name in ["gbn-clean", "gbn-loss", "irn-clean", "irn-loss", "dcp-clean", "dcp-loss"] {
        let r = run(&fixture(name));
        assert!(r.findings.is_empty(), "{name}: {:#?}", r.findings);
        assert!(!r.connections.is_empty(), "{name}: nothing judged");
        let stack = &name[..3];
        for c in &r.connections {
            assert_eq!((c.interface, c.stack), (RECEIVER, stack), "{name}: {}", c.flow);
            assert!(c.requests > 0 && c.responses > 0, "{name}: {c:?}");
        }
        // Every requests flow of the other taps is listed with the reason.
        assert!(r.unjudged.iter().any(|u| u.interface == 0 && u.reason.starts_with("sender tap")), "{name}: {:?}", r.unjudged);
        assert!(r.unjudged.iter().any(|u| u.interface == 2 && u.reason.starts_with("fabric tap")), "{name}: {:?}", r.unjudged);
        assert!(r.unjudged.iter().all(|u| u.interface != RECEIVER), "{name}: {:?}", r.unjudged);
    }
    // The GBN responder's ACK coalescing (the simulator's ack_every is 4) is inferred.
    let r = run(&fixture("gbn-loss"));
    let i = r.connections[0].inferred.iter().find(|i| i.name == "ack_coalescing").expect("inferred");
    assert_eq!(i.value, 4.0, "{i:?}");
}

/// The receiver tap's first frame that `is` picks, and its index.
fn find(recs: &[Rec], is: impl Fn(&Rec) -> bool) -> usize {
    recs.iter().position(|r| r.interface == RECEIVER && is(r)).expect("such a frame at the receiver tap")
}

#[test]
fn a_nak_sent_twice_never_sent_or_an_ack_ahead_is_a_departure_at_its_frame() {
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

    // Never sent: the NAK deleted; the departure names the request that called for it (the
    // receiver tap's last request before where the NAK was) and the NAK's PSN.
    let mut without = recs.clone();
    without.remove(nak);
    let r = run(&write(&without, "nak-missing"));
    let d = departures(&r, "gbn.nak-missing");
    assert_eq!(d.len(), 1, "{:#?}", r.findings);
    let trigger = recs[..nak].iter().rev().find(|r| r.interface == RECEIVER && control(r, Profile::Std).is_some_and(|c| c.0 != 0x11)).unwrap();
    assert_eq!(d[0].frames, [trigger.number]);
    assert!(d[0].expected.contains(&format!("naming PSN {nak_psn}")), "{:?}", d[0]);

    // An ACK ahead: the receiver's first ACK after the NAK claims 3 more PSNs (and its MSN is
    // left as is) than were received in order.
    let ack = nak + 1 + find(&recs[nak + 1..], |r| matches!(control(r, Profile::Std), Some((0x11, _, Some(Syndrome::Ack { .. }), _, _))));
    let mut ahead = recs.clone();
    // (Ethernet, IPv4: the BTH follows the IP header and the 8-byte UDP header.)
    let d = &ahead[ack].data;
    assert_eq!(&d[12..14], &[0x08, 0x00]);
    let psn_at = 14 + usize::from(d[14] & 0x0f) * 4 + 8 + 9;
    let psn = u32::from_be_bytes([0, ahead[ack].data[psn_at], ahead[ack].data[psn_at + 1], ahead[ack].data[psn_at + 2]]);
    let bumped = (psn + 3) & 0xff_ffff;
    ahead[ack].data[psn_at..psn_at + 3].copy_from_slice(&bumped.to_be_bytes()[1..]);
    let r = run(&write(&ahead, "ack-ahead"));
    let d = departures(&r, "gbn.ack-ahead");
    assert_eq!(d.len(), 1, "{:#?}", r.findings);
    assert_eq!(d[0].frames, [recs[ack].number]);
    assert!(d[0].seen.contains(&format!("PSN {bumped}")), "{:?}", d[0]);
}

#[test]
fn a_selective_nak_or_a_returned_header_only_packet_never_sent_is_a_departure() {
    // IRN: the receiver tap's first selective NAK deleted.
    let recs = records(&fixture("irn-loss"));
    let sack = find(&recs, |r| matches!(control(r, Profile::Std), Some((0x11, _, Some(Syndrome::Nak { code: 0 }), Some(_), _))));
    let (_, epsn, _, sacked, _) = control(&recs[sack], Profile::Std).unwrap();
    let mut without = recs.clone();
    without.remove(sack);
    let r = run(&write(&without, "sack-missing"));
    let d = departures(&r, "irn.sack-missing");
    assert_eq!(d.len(), 1, "{:#?}", r.findings);
    assert!(d[0].expected.contains(&format!("expected PSN {epsn}, PSN {} received", sacked.unwrap())), "{:?}", d[0]);
    assert_eq!(r.departures(), 1, "{:#?}", r.findings);

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
    let r = run(&write(&without, "ho-unanswered"));
    let d = departures(&r, "dcp.ho-unanswered");
    assert_eq!(d.len(), 1, "{:#?}", r.findings);
    assert!(d[0].expected.contains(&format!("PSN {psn} returned")), "{:?}", d[0]);
    assert_eq!(r.departures(), 1, "{:#?}", r.findings);
}
