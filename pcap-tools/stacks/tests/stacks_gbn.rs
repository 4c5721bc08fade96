//! The standard RoCE RC stack (Go-Back-N; seed 000 §2.1 "RNIC-GBN", IBTA Vol. 1 ch. 9) on the
//! two-node harness.

mod stacks_common;

use rocescope_stacks::harness::{Fate, Harness, Side};
use rocescope_stacks::{remote_va, Action, Message, Op, RetxReason, StackKind, R_KEY};
use rocescope_codec::ib::{psn, Syndrome};
use rocescope_codec::{DecodeOptions, Frame, LinkType, Profile};
use stacks_common::*;

fn decode(bytes: &[u8]) -> Frame<'_> {
    Frame::parse(LinkType::Ethernet, bytes, bytes.len(), &DecodeOptions::with_profile(Profile::Std))
}

/// Acceptance 2: every SEND, WRITE, WRITE with Immediate and READ posted is delivered exactly
/// once, intact, and completed exactly once, under loss up to 5% and reordering; every frame
/// decodes under `std` without warnings and its ICRC verifies.
#[test]
fn conservation_under_loss_and_reordering() {
    conservation(StackKind::Gbn, &[Op::Send, Op::Write, Op::WriteImm, Op::Read], 80, 0.05, false);
}

#[test]
fn a_clean_link_needs_no_retransmission_and_acks_are_coalesced() {
    let cfg = conn(1);
    let msgs: Vec<Message> = (0..6).map(|id| Message { id, op: Op::Write, len: 8 * cfg.mtu }).collect();
    let mut h = Harness::new(StackKind::Gbn, &cfg, DELAY);
    for m in &msgs {
        h.post(0, *m);
    }
    h.run(LIMIT);
    h.check_conservation().unwrap();
    h.check_frames().unwrap();
    assert!(h.retransmissions(Side::Requester).is_empty());
    let data: Vec<_> = h.txs().iter().filter(|t| t.from == Side::Requester).collect();
    let acks = h.txs().iter().filter(|t| t.from == Side::Responder).count();
    assert_eq!(data.len(), 48);
    // One ACK per ack_every (4) packets or AckReq, not one per packet.
    assert!(acks <= 48 / 4 + 6, "{acks} ACKs");
    for (i, t) in data.iter().enumerate() {
        let f = decode(&t.frame);
        let p = f.roce().unwrap();
        let k = i % 8;
        // RETH on WRITE First only, AckReq on the Last packet of every message.
        assert_eq!(p.reth().is_some(), k == 0, "packet {i}");
        if k == 0 {
            let r = p.reth().unwrap();
            assert_eq!((r.va(), r.r_key(), r.dma_len()), (remote_va(i as u64 / 8), R_KEY, 8 * cfg.mtu));
        }
        if k == 7 {
            assert!(p.bth().ack_req());
        }
        assert_eq!(p.opcode().0, [0x06, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x08][k]);
        assert_eq!(p.bth().psn(), psn::add(cfg.start_psn, i as u32));
    }
}

/// IBTA: the responder NAKs (PSN sequence error) once per gap and drops the rest silently until
/// the expected PSN arrives; the requester goes back to the NAKed PSN and resends everything.
#[test]
fn one_nak_per_gap_then_go_back_n() {
    let cfg = conn(2);
    let mut h = Harness::new(StackKind::Gbn, &cfg, DELAY).with_fate(drop_first_tx_of(cfg.start_psn, &[5]));
    h.post(0, Message { id: 0, op: Op::Send, len: 20 * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    h.check_frames().unwrap();
    let naks: Vec<_> = h
        .txs()
        .iter()
        .filter(|t| t.from == Side::Responder)
        .filter(|t| matches!(decode(&t.frame).roce().unwrap().aeth().unwrap().syndrome(), Syndrome::Nak { code: 0 }))
        .collect();
    assert_eq!(naks.len(), 1);
    assert_eq!(naks[0].info.psn, psn::add(cfg.start_psn, 5));
    // Everything from the lost PSN on was resent, in order, for GoBack.
    let r: Vec<_> =
        h.txs().iter().filter(|t| t.info.retx.is_some()).map(|t| (t.info.psn, t.info.retx.unwrap())).collect();
    let want: Vec<_> = (5..20).map(|k| (psn::add(cfg.start_psn, k), RetxReason::GoBack)).collect();
    assert_eq!(r, want);
}

/// The local ACK timeout recovers a lost tail (no later packet makes the responder NAK).
#[test]
fn a_lost_tail_waits_for_the_local_ack_timeout() {
    let cfg = conn(3);
    let mut h = Harness::new(StackKind::Gbn, &cfg, DELAY).with_fate(drop_first_tx_of(cfg.start_psn, &[3]));
    h.post(0, Message { id: 0, op: Op::Write, len: 4 * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    // Packets 0-2 were never acknowledged (3 < ack_every and no AckReq): the timeout resends
    // from the oldest unacknowledged PSN, all four.
    assert_eq!(retx(&h, RetxReason::Timeout), 4);
    assert_eq!(retx(&h, RetxReason::GoBack), 0);
    let done = h.events().iter().find(|e| matches!(e.action, Action::Completed { .. })).unwrap();
    assert!(done.at > cfg.timeouts.gbn_ns().unwrap());
}

/// After `retry_cnt` expiries without progress the QP goes to error.
#[test]
fn retry_count_exhausted_fails_the_connection() {
    let mut cfg = conn(4);
    cfg.retry_cnt = 3;
    // A dead link.
    let mut h = Harness::new(StackKind::Gbn, &cfg, DELAY).with_fate(|_| Fate::Drop);
    h.post(0, Message { id: 0, op: Op::Send, len: 10 });
    h.run(LIMIT);
    let failed: Vec<_> = h.events().iter().filter(|e| matches!(e.action, Action::Failed { .. })).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(retx(&h, RetxReason::Timeout), 3);
    assert!(h.requester_idle());
    assert!(h.check_conservation().is_err());
}

/// A lost READ response: the requester sees the next response out of order, re-issues the READ
/// from the missing PSN (VA and length adjusted), and the responder, seeing a duplicate READ
/// Request, sends those responses again.
#[test]
fn a_lost_read_response_is_read_again() {
    let cfg = conn(5);
    let mut lost = false;
    let mut h = Harness::new(StackKind::Gbn, &cfg, DELAY).with_fate(move |c| {
        if c.from == Side::Responder && c.info.msg.is_some() && c.info.psn == psn::add(conn(5).start_psn, 2) && !lost {
            lost = true;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    h.post(0, Message { id: 0, op: Op::Read, len: 6 * cfg.mtu - 3 });
    h.post(0, Message { id: 1, op: Op::Send, len: 100 });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    h.check_frames().unwrap();
    // The READ data is delivered at the requester.
    assert!(h
        .events()
        .iter()
        .any(|e| e.side == Side::Requester && matches!(e.action, Action::Delivered { msg: 0, .. })));
    let reissued: Vec<_> = h.txs().iter().filter(|t| t.from == Side::Requester && t.info.retx.is_some()).collect();
    let f = decode(&reissued[0].frame);
    let p = f.roce().unwrap();
    assert_eq!(p.opcode().0, 0x0C);
    assert_eq!(p.bth().psn(), psn::add(cfg.start_psn, 2));
    assert_eq!(p.reth().unwrap().va(), remote_va(0) + 2 * cfg.mtu as u64);
    assert_eq!(p.reth().unwrap().dma_len(), 4 * cfg.mtu - 3);
    let resent: Vec<u32> = h.retransmissions(Side::Responder).iter().map(|&(i, _)| h.txs()[i].info.psn).collect();
    assert_eq!(resent, (2..6).map(|k| psn::add(cfg.start_psn, k)).collect::<Vec<_>>());
}
