//! The research transports' loss signals in the timeline (docs/analysis.md, "Research
//! transports"): small captures built frame by frame with the codec's builders, each with a few
//! messages, losses, the transport's signal and the repairs; every expected value below is
//! derived by hand from the frames written (frame numbers count from 1, frame n is written at
//! `T0 + n µs`).

use std::path::{Path, PathBuf};

use rocescope_analysis::analyze::report::{Evidence, FlowTimeline, Repair, Signal, Tap, TimelineReport};
use rocescope_analysis::analyze::{run, Options};
use rocescope_analysis::capture::{self, CaptureWriter};
use rocescope_analysis::session::Session;
use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice};
use rocescope_codec::ib::{AethRepr, Syndrome};

const T0: u64 = 1_700_000_000_000_000_000;

fn t(frame: u64) -> u64 {
    T0 + frame * 1000
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("rocescope-research-{}-{name}.pcapng", std::process::id()))
}

/// Writes `frames` (frame n at `t(n)`) on one interface and returns the timeline under `profile`.
fn timeline_of(name: &str, frames: &[Vec<u8>], profile: &str) -> TimelineReport {
    let path = tmp(name);
    {
        let out = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
        let mut w = CaptureWriter::new(out, &["tap"]).expect("writer");
        for (n, f) in frames.iter().enumerate() {
            w.write(0, t(n as u64 + 1), f).expect("write");
        }
    }
    let t = analyse(&path, profile);
    std::fs::remove_file(&path).ok();
    t
}

fn analyse(path: &Path, profile: &str) -> TimelineReport {
    let reader = capture::open(&path.display().to_string()).expect("open");
    let profile = ProfileChoice::parse(profile).expect("profile");
    let decoder = Decoder::new(DecoderOptions { profile, maps: vec![], params: Default::default(), no_verify: false });
    let mut s = Session::new(reader, decoder);
    let mut a = run::analyze(&mut s, Options::default(), run::Window::default(), |_| {}).expect("analyse");
    a.timeline()
}

fn flow<'a>(t: &'a TimelineReport, id: &str) -> &'a FlowTimeline {
    t.flows.iter().find(|f| f.id == id).unwrap_or_else(|| panic!("flow {id} in {:?}", t.flows.iter().map(|f| &f.id).collect::<Vec<_>>()))
}

fn v4(src: u8, dst: u8, ttl: u8) -> NetRepr {
    NetRepr::Ipv4 { src: [10, 0, 0, src], dst: [10, 0, 0, dst], tos: 0x68, ttl, ident: 0 }
}

/// (psn, frame, signal, repair, evidence, message) of each loss.
type LossRow = (u32, u64, Signal, Repair, Evidence, Option<u64>);

fn losses(f: &FlowTimeline) -> Vec<LossRow> {
    f.losses.iter().map(|l| (l.psn, l.frame, l.signal, l.repair, l.evidence, l.message)).collect()
}

fn loss_times_match(f: &FlowTimeline) {
    for l in &f.losses {
        assert_eq!(l.time_ns.0, t(l.frame), "loss of {} at frame {}", l.psn, l.frame);
    }
}

/// NetRT at a fabric tap (every frame routed: TTL 62, so no host is tapped). The sender
/// 10.0.0.1 sends SENDs to 10.0.0.2 on DestQP 17; the receiver acknowledges on DestQP 34; the
/// destination ToR's requests travel 10.0.0.2 → 10.0.0.1 at DestQP 17, the source ToR's
/// unfulfilled request 10.0.0.1 → 10.0.0.2. The frames are listed, numbered, in the test.
#[test]
fn netrt_requests_are_losses_repaired_in_network_or_by_the_end_host() {
    let payload = [0x21u8; 256];
    let data = |op: u8, psn: u32, mark: bool| {
        let mut r = RoceRepr::new(op, 17, psn).with_payload(&payload);
        r.bth.resv6 = mark as u8;
        FrameRepr::new(v4(1, 2, 62), r).to_vec()
    };
    let request = |epsn: u32, bitmap: u8| {
        let mut body = vec![1u8, (epsn >> 16) as u8, (epsn >> 8) as u8, epsn as u8];
        body.extend([0u8; 15]);
        body.push(bitmap);
        let mut r = RoceRepr::new(0xc0, 17, epsn);
        r.payload = &body;
        FrameRepr::new(v4(2, 1, 62), r).to_vec()
    };
    let ack = |psn: u32, syndrome: Syndrome| {
        let mut r = RoceRepr::new(0x11, 34, psn);
        r.aeth = Some(AethRepr { syndrome, msn: 0 });
        FrameRepr::new(v4(2, 1, 62), r).to_vec()
    };
    let unfulfilled = |psn: u32| {
        let body = [2u8, (psn >> 16) as u8, (psn >> 8) as u8, psn as u8];
        let mut r = RoceRepr::new(0xc0, 17, psn);
        r.payload = &body;
        FrameRepr::new(v4(1, 2, 62), r).to_vec()
    };
    let frames = vec![
        data(0x04, 100, false),                     // 1  message 0
        data(0x00, 101, false),                     // 2  message 1
        data(0x01, 102, false),                     // 3  lost after the tap
        data(0x02, 103, false),                     // 4
        data(0x04, 105, false),                     // 5  message 3 (104 lost before the tap)
        request(102, 0b101),                        // 6  asks for 102 and 104
        data(0x01, 102, false),                     // 7  the switch's copy (unmarked)
        data(0x04, 104, true),                      // 8  the switch's copy (marked), message 2
        ack(105, Syndrome::Ack { credit: 31 }),     // 9  covers 100-105
        data(0x04, 106, false),                     // 10 message 4, lost after the tap
        data(0x04, 107, false),                     // 11 message 5
        request(106, 0b1),                          // 12 asks for 106
        unfulfilled(106),                           // 13 the source ToR cannot
        ack(106, Syndrome::Nak { code: 0 }),        // 14 the receiver's Go-Back-N NAK
        data(0x04, 106, false),                     // 15 the sender's copy
        data(0x04, 107, false),                     // 16 Go-Back-N resends 107 too
        ack(107, Syndrome::Ack { credit: 31 }),     // 17 covers 106-107
    ];
    let tl = timeline_of("netrt", &frames, "netrt");
    let d = flow(&tl, "10.0.0.1>10.0.0.2/17");
    assert_eq!(d.tap, Tap::Fabric);
    assert_eq!(d.peer.as_deref(), Some("10.0.0.2>10.0.0.1/34"));
    let use_ = (Signal::NetrtRequest, Evidence::AskedFor);
    assert_eq!(
        losses(d),
        vec![
            // 102: its copy at frame 3 was lost after the tap; the request asked for it and the
            // next copy (7) came with no unfulfilled request or NAK between: the switch's.
            (102, 3, use_.0, Repair::InNetwork, use_.1, Some(1)),
            // 104: never seen before its marked copy (8): lost before the tap.
            (104, 8, use_.0, Repair::InNetwork, use_.1, Some(2)),
            // 106: copy 10 lost; unfulfilled (13) and a NAK (14) before the copy 15: the host's.
            (106, 10, use_.0, Repair::EndHost, use_.1, Some(4)),
        ]
    );
    loss_times_match(d);
    let retx: Vec<_> =
        d.retransmissions.iter().map(|r| (r.psn, r.frame, r.trigger, r.spurious, r.cause, r.copy, r.message)).collect();
    use rocescope_analysis::analyze::report::Cause;
    assert_eq!(
        retx,
        vec![
            (102, 7, Signal::NetrtRequest, Some(false), Cause::Loss, 1, Some(1)),
            (106, 15, Signal::NetrtRequest, Some(false), Cause::Loss, 1, Some(4)),
            // Go-Back-N's resend of 107 (seen at frame 11): nothing asked for it; at a fabric
            // tap its trigger and whether it was needed are unknown.
            (107, 16, Signal::Unknown, None, Cause::Unknown, 1, Some(5)),
        ]
    );
    for r in &d.retransmissions {
        assert_eq!(r.time_ns.0, t(r.frame));
    }
    let msgs: Vec<_> = d
        .messages
        .iter()
        .map(|m| (m.index, m.first_psn, m.last_psn, m.first_frame, m.last_frame, m.complete_frame, m.retransmitted))
        .collect();
    assert_eq!(
        msgs,
        vec![
            (0, 100, Some(100), 1, 1, Some(9), 0),
            (1, 101, Some(103), 2, 7, Some(9), 1),
            (2, 104, Some(104), 8, 8, Some(9), 0),
            (3, 105, Some(105), 5, 5, Some(9), 0),
            (4, 106, Some(106), 10, 15, Some(17), 1),
            (5, 107, Some(107), 11, 16, Some(17), 1),
        ]
    );
    assert_eq!(d.messages[1].latency_ns, Some(t(9) - t(2)));
    assert_eq!(d.messages[1].complete_time_ns.map(|n| n.0), Some(t(9)));
    // The requests are a control flow serving the data flow.
    let c = flow(&tl, "10.0.0.2>10.0.0.1/17");
    assert_eq!(c.serves.as_deref(), Some("10.0.0.1>10.0.0.2/17"));
    assert!(c.losses.is_empty() && c.messages.is_empty() && c.retransmissions.is_empty());
    assert_eq!(tl.flows.len(), 3);
}
