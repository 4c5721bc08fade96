//! The IRN stack (selective repeat with the SACK NAK of WIRE.md A.3; seed 000 §2.2) on the
//! two-node harness.

mod stacks_common;

use rocescope_stacks::harness::{Fate, Harness, Side};
use rocescope_stacks::{Action, Message, Op, RetxReason, StackKind};
use rocescope_codec::ib::{psn, Syndrome};
use rocescope_codec::{DecodeOptions, Frame, LinkType, Profile};
use stacks_common::*;

fn decode(bytes: &[u8]) -> Frame<'_> {
    Frame::parse(LinkType::Ethernet, bytes, bytes.len(), &DecodeOptions::with_profile(Profile::Std))
}

/// Acceptance 2 for IRN: SEND, WRITE and WRITE with Immediate under loss up to 5% and
/// reordering; every frame (SACK NAKs included) decodes under `std` without warnings.
#[test]
fn conservation_under_loss_and_reordering() {
    conservation(StackKind::Irn, &[Op::Send, Op::Write, Op::WriteImm], 80, 0.05, false);
}

/// §2.2: "Upon every OOO packet arrival, the IRN receiver sends a SACK, which carries both the
/// cumulative acknowledgment (ePSN) and the PSN of the OOO packets" — WIRE.md A.3's layout.
#[test]
fn every_out_of_order_arrival_is_answered_with_a_sack_nak() {
    let cfg = conn(7);
    let mut h = Harness::new(StackKind::Irn, &cfg, DELAY).with_fate(drop_first_tx_of(cfg.start_psn, &[4]));
    h.post(0, Message { id: 0, op: Op::Write, len: 10 * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    h.check_frames().unwrap();
    let sacks: Vec<(u32, u32)> = h
        .txs()
        .iter()
        .filter(|t| t.from == Side::Responder)
        .filter_map(|t| {
            let f = decode(&t.frame);
            assert!(f.warnings.is_empty());
            let p = f.roce().unwrap();
            assert_eq!(p.opcode().0, 0x11);
            let s = p.irn_sack()?;
            assert_eq!(p.aeth().unwrap().syndrome(), Syndrome::Nak { code: 0 });
            Some((p.bth().psn(), s.sack_psn()))
        })
        .collect();
    let lost = psn::add(cfg.start_psn, 4);
    let want: Vec<_> = (5..10).map(|k| (lost, psn::add(cfg.start_psn, k))).collect();
    assert_eq!(sacks, want);
}

/// Selective repeat: only the lost packet is resent, once, because of the SACKs.
#[test]
fn only_the_lost_packet_is_resent() {
    let cfg = conn(8);
    let mut h = Harness::new(StackKind::Irn, &cfg, DELAY).with_fate(drop_first_tx_of(cfg.start_psn, &[4, 11]));
    h.post(0, Message { id: 0, op: Op::Send, len: 16 * cfg.mtu });
    h.post(0, Message { id: 1, op: Op::Write, len: 3 * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    let r: Vec<_> = h.retransmissions(Side::Requester).iter().map(|&(i, r)| (h.txs()[i].info.psn, r)).collect();
    assert_eq!(
        r,
        vec![(psn::add(cfg.start_psn, 4), RetxReason::Sack), (psn::add(cfg.start_psn, 11), RetxReason::Sack)]
    );
    assert_eq!(h.spurious_retransmissions(), 0);
}

/// §2.2 issue #2: recovery is entered only once; a retransmission lost again is recovered by
/// the RTO.
#[test]
fn a_retransmission_lost_again_needs_the_rto() {
    let cfg = conn(9);
    let mut n = 0;
    let lost = psn::add(cfg.start_psn, 3);
    let mut h = Harness::new(StackKind::Irn, &cfg, DELAY).with_fate(move |c| {
        if c.from == Side::Requester && c.info.psn == lost && n < 2 {
            n += 1;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    h.post(0, Message { id: 0, op: Op::Send, len: 12 * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    assert_eq!(retx(&h, RetxReason::Sack), 1);
    assert_eq!(retx(&h, RetxReason::Timeout), 1);
    let done = h.events().iter().find(|e| matches!(e.action, Action::Completed { .. })).unwrap();
    assert!(done.at > cfg.timeouts.irn_rto_low_ns);
}

/// BDP flow control: never more than `bdp_packets` PSNs outstanding.
#[test]
fn the_window_is_the_bdp() {
    let mut cfg = conn(10);
    cfg.bdp_packets = 8;
    let mut h = Harness::new(StackKind::Irn, &cfg, DELAY);
    h.post(0, Message { id: 0, op: Op::Write, len: 40 * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    let first_ack = h.txs().iter().find(|t| t.from == Side::Responder).unwrap().arrived.unwrap();
    let before = h.txs().iter().filter(|t| t.from == Side::Requester && t.at < first_ack).count();
    assert_eq!(before, 8);
}

#[test]
fn read_is_not_modelled() {
    let cfg = conn(11);
    let mut h = Harness::new(StackKind::Irn, &cfg, DELAY);
    h.post(0, Message { id: 0, op: Op::Read, len: 10 });
    h.run(LIMIT);
    assert!(h.events().iter().any(|e| matches!(e.action, Action::Failed { .. })));
    assert!(!StackKind::Irn.supports(Op::Read) && StackKind::Gbn.supports(Op::Read));
}
