//! The wire checks on a leaf-spine (issue 9, acceptance 2's topology dimension): several
//! connections between different hosts, a host at once requester and responder, taps that watch
//! only the first connection's two hosts. A connection is judged at the ends that are tapped and
//! the verdict says which; connections between the same two hosts in opposite directions are
//! told apart by DestQP (`rocescope_wirecheck::wire`).

mod common;

use rocescope_sim::sim::{TapPoint, TopologyKind};
use rocescope_sim::synth::{OpChoice, Pattern, SynthOptions};
use rocescope_stacks::StackKind;
use rocescope_wirecheck::grid::{self, Cell};
use rocescope_wirecheck::ledger;
use rocescope_wirecheck::run;
use rocescope_wirecheck::verdict::{judge, judge_wire};
use rocescope_wirecheck::wire::Coverage;

/// The grid's leaf-spine under 1 % loss: six connections, of which the first is judged at both
/// ends, one at its requester only, one at its responder only, three nowhere; the first crosses
/// the spines, so it loses packets on the uplinks, and the losses the wire shows are the truth's.
#[test]
fn grid_leaf_spine_judges_the_tapped_ends() {
    let cell = Cell { messages: 16, message_size: 16_384, ..Cell::leaf_spine(StackKind::Irn, 0.01, 1, 1) };
    let dir = run::temp_dir("leaf-spine-cover");
    let v = grid::run_cell(&cell, &dir, false, false).expect("synth");
    let _ = std::fs::remove_dir(&dir);
    v.ok().expect("every invariant holds");
    let n = &v.numbers;
    assert_eq!(
        (n.conns, n.conns_both, n.conns_requester, n.conns_responder, n.conns_neither),
        (6, 1, 1, 1, 3),
        "{:?}",
        v.coverage
    );
    assert_eq!(v.coverage[0], ("10.1.0.1>10.1.1.2/8388608".to_string(), Coverage::Both));
    // Two requesters tapped (the first connection's and the one its responder sends).
    assert_eq!(n.messages_judged, 32);
    assert_eq!(n.completed_on_wire, 32);
    assert!(n.data_lost > 0 && n.compared.losses > 0, "the judged connection crosses lossy uplinks: {n:?}");
    // Retransmissions at both tapped requesters, those of the doubly-tapped connection among them.
    assert!(n.retx > n.retx_both && n.retx_both > 0, "{n:?}");
}

/// Two hosts on two leaves, all-to-all: one connection each way between the same two hosts, so
/// every frame from one host to the other is either the first connection's request or the
/// second's response (and READ responses run beside the other connection's requests). DestQP
/// tells them apart: both connections are judged at both ends and every invariant holds.
#[test]
fn opposite_connections_between_two_hosts_are_told_apart() {
    let o = SynthOptions {
        stack: StackKind::Gbn,
        loss: 0.02,
        op: OpChoice::Mix,
        messages: 16,
        message_size: 16_384,
        topology: TopologyKind::LeafSpine { leaves: 2, spines: 2, hosts_per_leaf: 1 },
        pattern: Pattern::AllToAll,
        taps: vec![TapPoint::Sender, TapPoint::Receiver],
        ..Default::default()
    };
    let r = common::synth_once(&o, "leaf-spine-opposite");
    let v = judge(&r);
    v.ok().expect("every invariant holds");
    let w = &r.wire;
    assert_eq!(w.conns.len(), 2);
    let (a, b) = (&w.conns[0], &w.conns[1]);
    assert_eq!((a.requester, a.responder), (b.responder, b.requester));
    // Host a holds two QPs: the requester of a and the responder of b.
    assert!(a.requester_qpn.is_some() && b.requester_qpn.is_some());
    assert_ne!(a.requester_qpn, Some(b.responder_qpn));
    // The same IP pair carries both connections: a's requests are only some of its frames.
    let same_way = w.pkts.iter().filter(|p| p.src == a.requester && p.dst == a.responder).count();
    let requests = w.pkts.iter().filter(|p| a.is_request(p)).count();
    let responses_of_b = w.pkts.iter().filter(|p| b.is_response(p)).count();
    assert!(requests > 0 && responses_of_b > 0);
    assert_eq!(same_way, requests + responses_of_b);
    // Each connection's own retransmissions and losses.
    for c in [a, b] {
        assert!(ledger::requests_sent(w, c).is_some_and(|s| s.data_frames() >= 16));
        assert!(ledger::requests_lost(w, c).is_some());
    }
    assert_eq!((v.numbers.conns, v.numbers.conns_both), (2, 2));
    assert_eq!(v.numbers.completed_on_wire, 32);
    assert!(v.numbers.data_lost > 0, "{:?}", v.numbers);
    // What no tap shows is held to the truth's summary: one message short of delivered exactly
    // once, with no connection failed, is reported.
    let mut t = r.truth.clone();
    t.summary.delivered_once -= 1;
    let bad = judge_wire(&t, &r.wire);
    assert_eq!(bad.reported.len(), 1, "{:?}", bad.reported);
    assert!(bad.truth.is_empty() && bad.delivery.is_empty());
}

/// The same with DCP trimming (its `synth` defaults) at 5 % loss: a data packet trimmed on the
/// way arrives as a header-only packet to the responder's QPN, the same way as the other
/// connection's responses (its bounced header-only packets, its ACKs), and must not be taken for
/// one when the requester's QPN is read off the wire (it was: the first connection then had the
/// second's responder QPN as its requester's, and half the messages went unacknowledged).
#[test]
fn opposite_dcp_connections_with_trimmed_packets_are_told_apart() {
    let o = SynthOptions {
        loss: 0.05,
        messages: 16,
        message_size: 16_384,
        topology: TopologyKind::LeafSpine { leaves: 2, spines: 2, hosts_per_leaf: 1 },
        pattern: Pattern::AllToAll,
        taps: vec![TapPoint::Sender, TapPoint::Receiver],
        ..SynthOptions::for_stack(StackKind::Dcp)
    };
    let r = common::synth_once(&o, "leaf-spine-opposite-dcp");
    let w = &r.wire;
    let trimmed = w.pkts.iter().filter(|p| p.kind == rocescope_wirecheck::packet::PktKind::HeaderOnly).count();
    assert!(trimmed > 0, "header-only packets on the wire");
    let qpns: Vec<(u32, Option<u32>)> = w.conns.iter().map(|c| (c.responder_qpn, c.requester_qpn)).collect();
    let truth: Vec<(u32, Option<u32>)> =
        r.truth.connections.iter().map(|c| (c.responder.qpn, Some(c.requester.qpn))).collect();
    assert_eq!(qpns, truth);
    let v = judge(&r);
    v.ok().expect("every invariant holds");
    assert_eq!((v.numbers.conns_both, v.numbers.completed_on_wire), (2, 32));
}
