//! Seed 000 §2.2 on the simulated fabric, judged by the ground truth (the harness-level versions
//! are in stacks_paper.rs): with packet spraying or adaptive routing across paths of different
//! delays and no loss at all, IRN takes reordering for loss and retransmits spuriously while DCP
//! retransmits nothing; under the same random loss Go-Back-N resends far more per lost packet
//! than IRN.

use rocescope_sim::sim::{Fate, Routing, TapPoint};
use rocescope_sim::synth::{simulate, SynthOptions};
use rocescope_sim::truth::derive;
use rocescope_stacks::StackKind;

fn opts(stack: StackKind, seed: u64) -> SynthOptions {
    SynthOptions {
        stack,
        seed,
        messages: 16,
        message_size: 16 * 1024,
        taps: vec![TapPoint::Sender],
        ..Default::default()
    }
}

#[test]
fn spraying_without_loss_makes_irn_retransmit_spuriously_and_dcp_not_at_all() {
    let (mut irn_spurious, mut irn_sent) = (0, 0);
    for seed in 1..=5 {
        for routing in [Routing::Spray, Routing::Adaptive] {
            let o = |stack| SynthOptions { paths: 8, reorder_ns: 3000, routing, ..opts(stack, seed) };
            let irn = simulate(&o(StackKind::Irn), None, true, None).unwrap();
            assert_eq!(irn.stats.dropped, 0);
            let d = derive(&irn);
            irn_spurious += d.iter().filter(|t| t.spurious).count();
            irn_sent += irn.txs.iter().filter(|t| t.kind.is_data()).count();
            // Every IRN retransmission here is spurious: nothing was lost.
            assert!(d.iter().all(|t| t.cause.is_none() || t.spurious));
            let dcp = simulate(&o(StackKind::Dcp), None, true, None).unwrap();
            assert_eq!(dcp.stats.dropped, 0);
            let d = derive(&dcp);
            assert_eq!(d.iter().filter(|t| t.cause.is_some()).count(), 0, "seed {seed} {routing:?}: DCP retransmitted");
        }
    }
    assert!(irn_spurious * 20 > irn_sent, "IRN: {irn_spurious} spurious of {irn_sent}");
}

#[test]
fn gbn_resends_far_more_per_lost_packet_than_irn() {
    let ratio = |stack| {
        let (mut retx, mut lost) = (0usize, 0usize);
        for seed in 1..=8 {
            let f = simulate(
                &SynthOptions { loss: 0.01, loss_dir: rocescope_sim::LossDir::Forward, ..opts(stack, seed) },
                None,
                true,
                None,
            )
            .unwrap();
            retx += derive(&f).iter().filter(|t| t.cause.is_some()).count();
            lost += f.txs.iter().filter(|t| t.kind.is_data() && matches!(t.fate, Fate::Dropped { .. })).count();
        }
        assert!(lost > 5);
        retx as f64 / lost as f64
    };
    let (gbn, irn) = (ratio(StackKind::Gbn), ratio(StackKind::Irn));
    // Measured (seeds 1-8, 1 % forward loss): GBN 44.19, IRN 1.000; bands of about ±10 % for
    // GBN and ±2 % for IRN (an IRN that resent acknowledged or already-resent packets exceeds it).
    assert!((40.0..=49.0).contains(&gbn), "retransmissions per lost packet: GBN {gbn:.3}");
    assert!((0.98..=1.02).contains(&irn), "retransmissions per lost packet: IRN {irn:.3}");
}
