//! NetRT (`--stack netrt`, issue 13) on the leaf-spine fabric: Go-Back-N hosts behind ToRs that
//! keep duplicates and repair fabric loss themselves (NetRT paper, seed 003 §III).
//! - One data frame lost on a leaf-to-spine link is repaired by the source ToR: one request,
//!   one resend, no end-host retransmission; the receiver's link shows every PSN once and in
//!   order, unmarked; the analyser finds the loss at the fabric tap, repaired in the network,
//!   and no retransmission at the hosts' taps (acceptance 3, first half).
//! - With no duplicate left (a pool too small), the request is unfulfilled, the destination
//!   ToR goes to Waiting and the hosts' Go-Back-N recovers, from the receiver's NAK of the lost
//!   PSN (acceptance 3, second half).
//! - A burst of 25 losses asked for at once: the sender paused by PFC, the resends at §III-D's
//!   reduced rate, then at line rate, and the sender resumed.
//! - Conservation over a grid of loss rates (both directions), spines and seeds, with incast,
//!   and NetRT ahead of plain Go-Back-N on the same fabric and losses.

mod common;

use rocescope_analysis::analyze::report::{FlowTimeline, Repair, Role, Signal};
use rocescope_analysis::analyze::{run, Options};
use rocescope_analysis::capture::CaptureReader;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice};
use rocescope_codec::ext::netrt::Netrt;
use rocescope_codec::ext::Ext;
use rocescope_codec::{DecodeOptions, Frame, LinkType, Profile};
use rocescope_sim::sim::{DropCause, Fate, Kind, LossDir, Origin, TopologyKind};
use rocescope_sim::synth::SynthOptions;
use rocescope_sim::Fabric;
use rocescope_stacks::{RetxReason, StackKind};

/// Two leaves, one host each (h1.0 sends to h0.0), `spines` spines; taps at the sender, the
/// receiver and the sender's leaf's first uplink (`leaf1>spine0`, both ways).
fn netrt(spines: u32, seed: u64) -> SynthOptions {
    SynthOptions {
        stack: StackKind::Netrt,
        topology: TopologyKind::LeafSpine { leaves: 2, spines, hosts_per_leaf: 1 },
        messages: 4,
        message_size: 65_536,
        mtu: 1024,
        seed,
        time_limit_ns: 2_000_000_000,
        ..SynthOptions::for_stack(StackKind::Netrt)
    }
}

fn timeline(pcap: &[u8]) -> Vec<FlowTimeline> {
    let dec = Decoder::new(DecoderOptions { profile: ProfileChoice::Fixed(Profile::Netrt), ..Default::default() });
    let mut s = Session::new(CaptureReader::new(pcap).unwrap(), dec);
    let mut a = run::analyze(&mut s, Options::default(), run::Window::default(), |_| {}).unwrap();
    a.timeline().flows
}

fn data_flow(flows: &[FlowTimeline], iface: u32) -> &FlowTimeline {
    flows
        .iter()
        .find(|f| f.head.interface == iface && f.head.role == Role::Requests && f.head.serves.is_none())
        .unwrap()
}

/// The capture's frames as (interface, bytes).
fn frames(pcap: &[u8]) -> Vec<(u32, Vec<u8>)> {
    let mut rd = CaptureReader::new(pcap).unwrap();
    let mut out = Vec::new();
    while let Some(r) = rd.next_record().unwrap() {
        out.push((r.interface, r.data.to_vec()));
    }
    out
}

fn run(o: &SynthOptions) -> (Fabric<'static>, Vec<u8>) {
    common::run_conserved("netrt", o)
}

#[test]
fn the_source_tor_repairs_a_single_fabric_loss_without_the_hosts() {
    // The 50th frame leaf1 puts on its uplink: data packet 50 of the first message.
    let o = SynthOptions { frame_drops: vec![("leaf1>spine0".into(), 50)], ..netrt(1, 1) };
    let (f, pcap) = run(&o);
    let n = f.stats.netrt;
    assert_eq!((n.resends, n.unfulfilled, n.waiting, n.dropped), (1, 0, 0, 0), "{n:?}");
    assert!(n.requests >= 1, "{n:?}");
    let lost: Vec<_> =
        f.txs.iter().filter(|t| matches!(t.fate, Fate::Dropped { cause: DropCause::Link, .. })).collect();
    assert_eq!(lost.len(), 1);
    let (p, start) = (lost[0].psn, f.conns[0].cfg.start_psn);
    assert_eq!(p, start + 49);
    // No end-host retransmission; the switch's one resend is of the lost PSN and accepted.
    assert!(f.txs.iter().filter(|t| t.origin == Origin::Requester).all(|t| t.reason.is_none()));
    let resends: Vec<_> = f.txs.iter().filter(|t| t.origin == Origin::Switch && t.kind == Kind::Data).collect();
    assert_eq!(resends.len(), 1);
    assert_eq!(resends[0].psn, p);
    assert_eq!(resends[0].accept, Some(rocescope_sim::sim::Accept::Accepted));
    // The receiver's link: every PSN once, in order, none marked. The fabric tap: the marked
    // resend after a request naming the lost PSN as its ePSN.
    let opts = DecodeOptions { profile: Profile::Netrt, ..Default::default() };
    let all = frames(&pcap);
    let mut expect = start;
    let (mut request_at, mut resend_at) = (None, None);
    for (i, (iface, b)) in all.iter().enumerate() {
        let fr = Frame::parse(LinkType::Ethernet, b, b.len(), &opts);
        let Some(r) = fr.roce() else { continue };
        match (*iface, fr.ext()) {
            (1, Ext::Netrt(Netrt::Data { rtx_mark })) if r.bth().dest_qp() == f.conns[0].cfg.responder.qpn => {
                assert!(!rtx_mark, "frame {}: marked at the host", i + 1);
                assert_eq!(r.bth().psn(), expect, "frame {}: out of order at the receiver", i + 1);
                expect += 1;
            }
            (2, Ext::Netrt(Netrt::Request { epsn })) if request_at.is_none() => {
                assert_eq!(*epsn, p);
                request_at = Some(i);
            }
            (2, Ext::Netrt(Netrt::Data { rtx_mark: true })) => {
                assert_eq!(r.bth().psn(), p);
                resend_at = Some(i);
            }
            _ => {}
        }
    }
    assert_eq!(expect, start + 256, "the receiver saw every PSN");
    assert!(request_at.unwrap() < resend_at.unwrap());
    // The analyser: nothing at the hosts' taps; at the fabric tap one loss, repaired in the
    // network on the request, and its one retransmission.
    let tl = timeline(&pcap);
    for iface in [0, 1] {
        let d = data_flow(&tl, iface);
        assert!(d.losses.is_empty() && d.retransmissions.is_empty(), "interface {iface}: {:?}", d.losses);
        assert_eq!(d.messages.iter().filter(|m| m.complete_frame.is_some()).count(), 4);
    }
    let fab = data_flow(&tl, 2);
    assert_eq!(fab.losses.len(), 1);
    let l = &fab.losses[0];
    assert_eq!((l.psn, l.signal, l.repair), (p, Signal::NetrtRequest, Repair::InNetwork));
    assert_eq!(fab.retransmissions.len(), 1);
    assert_eq!((fab.retransmissions[0].psn, fab.retransmissions[0].trigger), (p, Signal::NetrtRequest));
    // The request flow names the data flow it serves.
    assert!(tl.iter().any(|t| t.head.serves.as_deref() == Some(fab.head.id.as_str())));
}

#[test]
fn an_unfulfilled_request_hands_the_loss_to_go_back_n() {
    // A pool that holds nothing: the source ToR cannot serve the request.
    let o = SynthOptions { frame_drops: vec![("leaf1>spine0".into(), 50)], netrt_pool_bytes: Some(1), ..netrt(1, 1) };
    let (f, pcap) = run(&o);
    let n = f.stats.netrt;
    assert_eq!((n.resends, n.unfulfilled, n.waiting), (0, 1, 1), "{n:?}");
    let start = f.conns[0].cfg.start_psn;
    let p = start + 49;
    // The destination ToR released the smallest held packet (p + 1) and flushed the rest; the
    // receiver NAKed p and the sender went back to it.
    let nak = f.txs.iter().find(|t| t.kind == Kind::Nak).expect("a NAK");
    assert_eq!(nak.psn, p);
    let first_retx = f.txs.iter().find(|t| t.origin == Origin::Requester && t.reason.is_some()).expect("a resend");
    assert_eq!((first_retx.psn, first_retx.reason), (p, Some(RetxReason::GoBack)));
    assert!(first_retx.sent > nak.sent);
    let flushed = f.txs.iter().filter(|t| matches!(t.fate, Fate::Dropped { cause: DropCause::Reorder, .. })).count();
    assert_eq!(flushed as u64, n.dropped);
    assert!(flushed > 0);
    // On the fabric tap: the request, then the unfulfilled request for p.
    let opts = DecodeOptions { profile: Profile::Netrt, ..Default::default() };
    let msgs: Vec<Netrt> = frames(&pcap)
        .iter()
        .filter(|(i, _)| *i == 2)
        .filter_map(|(_, b)| match Frame::parse(LinkType::Ethernet, b, b.len(), &opts).ext() {
            Ext::Netrt(m @ (Netrt::Request { .. } | Netrt::Unfulfilled { .. })) => Some(*m),
            _ => None,
        })
        .collect();
    assert_eq!(msgs.first(), Some(&Netrt::Request { epsn: p }));
    assert!(msgs.contains(&Netrt::Unfulfilled { psn: p }), "{msgs:?}");
    // The analyser at the sender's tap: the host's Go-Back-N, moved by the NAK.
    let tl = timeline(&pcap);
    let snd = data_flow(&tl, 0);
    assert_eq!(snd.retransmissions[0].psn, p);
    assert_eq!(snd.retransmissions[0].trigger, Signal::Nak);
    assert!(snd.losses.iter().all(|l| l.repair == Repair::EndHost));
}

#[test]
fn netrt_conserves_over_loss_paths_and_seeds_and_beats_plain_go_back_n() {
    let (mut netrt_retx, mut gbn_retx) = (0usize, 0usize);
    for spines in [1, 2, 4] {
        for loss in [0.005, 0.02] {
            for seed in 1..=2 {
                let o = SynthOptions {
                    topology: TopologyKind::LeafSpine { leaves: 2, spines, hosts_per_leaf: 2 },
                    incast: 3,
                    loss,
                    loss_dir: LossDir::Both,
                    messages: 6,
                    ..netrt(spines, seed)
                };
                let (f, _) = common::run_conserved("grid", &o);
                let ctx = || o.command_line();
                // Every switch resend is a copy of a PSN its connection's sender sent.
                for t in f.txs.iter().filter(|t| t.origin == Origin::Switch && t.kind == Kind::Data) {
                    assert!(
                        f.txs.iter().any(|u| u.origin == Origin::Requester && u.conn == t.conn && u.psn == t.psn),
                        "{}",
                        ctx()
                    );
                }
                netrt_retx += f.txs.iter().filter(|t| t.origin == Origin::Requester && t.reason.is_some()).count();
                let g = SynthOptions { stack: StackKind::Gbn, ..o.clone() };
                let (fg, _) = common::run_pcap(&g, true);
                gbn_retx += fg.txs.iter().filter(|t| t.origin == Origin::Requester && t.reason.is_some()).count();
            }
        }
    }
    // The ToRs repair most fabric loss: the hosts resend far less than plain Go-Back-N.
    assert!(netrt_retx * 4 < gbn_retx, "NetRT hosts resent {netrt_retx}, Go-Back-N hosts {gbn_retx}");
}

#[test]
fn a_burst_asked_for_at_once_is_resent_at_the_reduced_rate_with_the_sender_paused() {
    // 25 consecutive frames lost: one request asks for 25 PSNs (≈ 27 KB, past K_l = 20 KB), so
    // the source ToR pauses the sender and resends at R_r = R_max − (N − K_l)(R_max − R_min) /
    // (K_h − K_l) of the line (§III-D), then at line rate once N < K_l, and resumes the sender.
    let drops = (50..75).map(|n| ("leaf1>spine0".to_string(), n)).collect();
    let o = SynthOptions { frame_drops: drops, ..netrt(1, 1) };
    let (f, pcap) = run(&o);
    let n = f.stats.netrt;
    assert_eq!((n.resends, n.unfulfilled, n.waiting, n.pauses, n.resumes), (25, 0, 0, 1, 1), "{n:?}");
    assert!(f.txs.iter().filter(|t| t.origin == Origin::Requester).all(|t| t.reason.is_none()));
    let opts = DecodeOptions { profile: Profile::Netrt, ..Default::default() };
    // The sender's tap: a pause from its ToR, then the resume.
    let mut pfc = Vec::new();
    let mut resend_at = Vec::new();
    let (mut ts, mut rd) = (Vec::new(), CaptureReader::new(&pcap[..]).unwrap());
    while let Some(r) = rd.next_record().unwrap() {
        ts.push((r.interface, r.ts_ns, r.data.to_vec()));
    }
    for (iface, t, b) in &ts {
        let fr = Frame::parse(LinkType::Ethernet, b, b.len(), &opts);
        if let (0, Some(m)) = (*iface, fr.mac_control()) {
            pfc.push((*t, m.quanta(3)));
        }
        if *iface == 2 && matches!(fr.ext(), Ext::Netrt(Netrt::Data { rtx_mark: true })) {
            resend_at.push((*t, b.len()));
        }
    }
    assert_eq!(pfc.len(), 2, "{pfc:?}");
    assert!(pfc[0].1 > 0 && pfc[1].1 == 0 && pfc[0].0 < pfc[1].0, "{pfc:?}");
    assert_eq!(resend_at.len(), 25);
    // One frame's time at the line rate (100 Gbit/s): (bytes + 24) · 8 / 100 ns.
    let ser = |len: usize| (len as f64 + 24.0) * 8.0 / 100.0;
    let gap = |i: usize| (resend_at[i + 1].0 - resend_at[i].0) as f64;
    // The first seven are paced at R_r for the N left before each (N = 25 frames of 1,082
    // bytes, less one frame per resend: 27,050 bytes down to 20,558, still ≥ K_l), e.g.
    // R_r = 0.5 − (27,050 − 20,000) · 0.49 / 80,000 = 45.7 % for the first; the eighth leaves at
    // line rate. The resends share the port with data already on its way (at most one frame
    // ahead of each), so the span of the seven gaps is compared, to within one frame's time.
    let len = resend_at[0].1 as f64;
    let paced: f64 = (0..7)
        .map(|m| {
            let n = (25.0 - m as f64) * len;
            ser(resend_at[0].1) / (0.5 - (n - 20_000.0) * 0.49 / 80_000.0)
        })
        .sum();
    let span = (resend_at[7].0 - resend_at[0].0) as f64;
    assert!((span - paced).abs() <= ser(resend_at[0].1), "seven gaps {span} ns, paced {paced} ns");
    assert!(span > 7.0 * ser(resend_at[0].1) * 1.8, "not at line rate: {span} ns");
    // The last ones (N under K_l) leave back to back.
    assert!((gap(23) - ser(resend_at[23].1)).abs() < 2.0, "last gap {} ns", gap(23));
}
