//! The behaviours the DCP paper (seed 000) builds its case on, each reproduced on the two-node
//! harness with the three reference stacks (issue 4, acceptance 3).

mod stacks_common;

use rocescope_stacks::harness::{Fate, FateCtx, Harness, RandomFate, Side, TestRng};
use rocescope_stacks::{Action, ConnConfig, Message, Op, RetxReason, StackKind};
use rocescope_codec::ib::psn;
use stacks_common::*;

fn one_message(
    kind: StackKind,
    cfg: &ConnConfig,
    len: u32,
    fate: impl FnMut(&FateCtx<'_>) -> Fate + 'static,
) -> Harness {
    let mut h = Harness::new(kind, cfg, DELAY).with_fate(fate);
    h.post(0, Message { id: 0, op: Op::Write, len });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    h.check_frames().unwrap();
    wire_check(&h);
    h
}

fn completion(h: &Harness) -> u64 {
    h.events().iter().filter(|e| matches!(e.action, Action::Completed { .. })).map(|e| e.at).max().unwrap()
}

/// §2.1-2.2: RNIC-GBN resends every packet after a loss, RNIC-SR (IRN) only the lost one.
#[test]
fn gbn_resends_everything_after_a_loss_while_irn_resends_only_the_lost_packet() {
    let cfg = conn(20);
    let n = 32;
    let gbn = one_message(StackKind::Gbn, &cfg, n * cfg.mtu, drop_first_tx_of(cfg.start_psn, &[5]));
    let irn = one_message(StackKind::Irn, &cfg, n * cfg.mtu, drop_first_tx_of(cfg.start_psn, &[5]));
    let psns = |h: &Harness| -> Vec<u32> {
        h.retransmissions(Side::Requester)
            .iter()
            .map(|&(i, _)| psn::diff(cfg.start_psn, h.txs()[i].info.psn) as u32)
            .collect()
    };
    assert_eq!(psns(&gbn), (5..n).collect::<Vec<_>>());
    assert_eq!(gbn.spurious_retransmissions(), (n - 6) as usize);
    assert_eq!(psns(&irn), vec![5]);
    assert_eq!(irn.spurious_retransmissions(), 0);
    // The harness serialises frames at 100 Gbit/s: GBN's 26 needless resends cost it time.
    eprintln!("one loss in 32 packets: GBN completes at {} ns, IRN at {} ns", completion(&gbn), completion(&irn));
    assert!(completion(&irn) < completion(&gbn), "{} {}", completion(&irn), completion(&gbn));
}

/// §2.2 issue #1: with packet-level load balancing (here: random extra delay, i.e. packets of
/// one flow on paths of different lengths) and no loss at all, IRN's receiver SACKs every
/// out-of-order arrival and the sender retransmits packets that were never lost; DCP, whose
/// receiver counts packets in any order and whose sender retransmits only on an HO packet,
/// retransmits nothing.
#[test]
fn irn_makes_spurious_retransmissions_under_reordering_while_dcp_makes_none() {
    let (mut irn_spurious, mut irn_retx) = (0, 0);
    for seed in 0..20 {
        let cfg = conn(seed);
        let mut rng = TestRng(seed);
        let msgs = workload(&mut rng, 20, &[Op::Send, Op::Write], 16 * cfg.mtu);
        let fate = RandomFate { seed, loss: 0.0, trim: 0.0, reorder: 0.5, jitter_ns: 2 * DELAY };
        let irn = random_run(StackKind::Irn, &cfg, &msgs, fate);
        let dcp = random_run(StackKind::Dcp, &cfg, &msgs, fate);
        for h in [&irn, &dcp] {
            h.check_conservation().unwrap();
            h.check_frames().unwrap();
            assert!(h.txs().iter().all(|t| t.arrived.is_some()), "no loss");
        }
        assert!(dcp.retransmissions(Side::Requester).is_empty(), "seed {seed}");
        irn_retx += irn.retransmissions(Side::Requester).len();
        irn_spurious += irn.spurious_retransmissions();
    }
    // With no loss every IRN retransmission is spurious.
    assert_eq!(irn_spurious, irn_retx);
    assert!(irn_spurious > 20, "{irn_spurious}");
}

/// §2.2 issue #2: a lost tail packet produces no SACK, so IRN recovers it only by its RTO; in
/// DCP's fabric the packet is trimmed, not lost, and the HO packet brings it back in one RTT.
#[test]
fn dcp_recovers_a_lost_tail_without_timeout_where_irn_needs_one() {
    let mut cfg = conn(21);
    // Per-packet ACKs, so that the RTO finds only the tail unacknowledged.
    cfg.ack_every = 1;
    let n = 8;
    let tail = psn::add(cfg.start_psn, n - 1);
    let irn = one_message(StackKind::Irn, &cfg, n * cfg.mtu, move |c| {
        if c.from == Side::Requester && c.info.psn == tail && c.info.retx.is_none() {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    let dcp = one_message(StackKind::Dcp, &cfg, n * cfg.mtu, move |c| {
        if c.from == Side::Requester && c.info.psn == tail && c.info.retx.is_none() {
            Fate::Trim // a congested DCP switch trims instead of dropping
        } else {
            Fate::Deliver
        }
    });
    assert_eq!(retx(&irn, RetxReason::Timeout), 1);
    assert!(completion(&irn) > cfg.timeouts.irn_rto_low_ns);
    assert_eq!(retx(&dcp, RetxReason::Timeout), 0);
    assert_eq!(retx(&dcp, RetxReason::HeaderOnly), 1);
    // Data, HO to the receiver, HO back, retransmission, ACK: two RTTs (plus the frames'
    // serialisation, well under a microsecond here).
    assert!((4 * DELAY..4 * DELAY + 1_000).contains(&completion(&dcp)), "{}", completion(&dcp));
}

/// §2.2 issue #2, second case: IRN enters recovery once, so a retransmission that is lost again
/// waits for the RTO; DCP trims the retransmission again and again recovers by HO.
#[test]
fn a_lost_retransmission_costs_irn_an_rto_but_not_dcp() {
    let cfg = conn(22);
    let lost = psn::add(cfg.start_psn, 3);
    let twice = |kind_fate: Fate| {
        let mut n = 0;
        move |c: &FateCtx<'_>| {
            if c.from == Side::Requester && c.info.psn == lost && n < 2 {
                n += 1;
                return kind_fate;
            }
            Fate::Deliver
        }
    };
    let irn = one_message(StackKind::Irn, &cfg, 12 * cfg.mtu, twice(Fate::Drop));
    let dcp = one_message(StackKind::Dcp, &cfg, 12 * cfg.mtu, twice(Fate::Trim));
    assert_eq!(retx(&irn, RetxReason::Timeout), 1);
    assert_eq!(retx(&dcp, RetxReason::Timeout), 0);
    assert_eq!(retx(&dcp, RetxReason::HeaderOnly), 2);
    assert!(completion(&dcp) < cfg.timeouts.irn_rto_low_ns && completion(&irn) > cfg.timeouts.irn_rto_low_ns);
}
