//! Seed 000 §4.2 on the simulated fabric with the DCP reference stack: under an N-to-1 incast
//! through one switch port, with trimming on, the control queue loses no header-only packet
//! when its WRR weight is §4.2's (N−1)/(r−N+1); with a weight well below it, header-only packets
//! are lost (so the test can fail) and the stack falls back on its coarse timeout.

use rocescope_sim::sim::{DropCause, Fate, TapPoint};
use rocescope_sim::synth::{simulate, SynthOptions};
use rocescope_stacks::StackKind;

fn incast(seed: u64, weight: Option<f64>) -> SynthOptions {
    SynthOptions {
        stack: StackKind::Dcp,
        incast: 8,
        trim: true,
        queue_bytes: 32_768,
        control_queue_bytes: 4096,
        wrr_weight: weight,
        messages: 8,
        message_size: 16_384,
        rto_ns: Some(1_000_000),
        taps: vec![TapPoint::Receiver],
        seed,
        time_limit_ns: 20_000_000,
        ..Default::default()
    }
}

#[test]
fn section_4_2_weight_loses_no_header_only_packet() {
    for seed in 1..=6 {
        let o = incast(seed, None);
        let w = o.fabric_config().effective_wrr_weight();
        // r = (1102 + 24) / (60 + 24) on the wire, N − 1 = 8 senders.
        let r = 1126.0 / 84.0;
        assert!((w - 8.0 / (r - 8.0)).abs() < 1e-9);
        let f = simulate(&o, None, false, None).unwrap();
        let s = f.stats;
        assert!(s.trimmed > 500, "seed {seed}: the incast trims ({s:?})");
        assert_eq!(s.ho_dropped, 0, "seed {seed}: {s:?}");
        assert!(!s.timed_out);
        for c in &f.conns {
            assert!(c.failed.is_none());
            assert!(c.messages.iter().all(|m| m.delivered.len() == 1 && m.delivered[0].2 && m.completed.len() == 1));
        }
        // Every trimmed packet came back as a header-only packet and was resent because of it.
        for t in f.txs.iter().filter(|t| t.trimmed.is_some()) {
            assert!(matches!(t.fate, Fate::Delivered { .. }), "seed {seed}: trimmed tx {} lost", t.id);
        }
        assert!(
            !f.txs.iter().any(|t| t.reason == Some(rocescope_stacks::RetxReason::Timeout)),
            "seed {seed}: no timeout needed"
        );
    }
}

#[test]
fn too_small_a_weight_loses_header_only_packets() {
    for seed in 1..=3 {
        let w = incast(seed, None).fabric_config().effective_wrr_weight();
        let o = incast(seed, Some(w / 8.0));
        let f = simulate(&o, None, false, None).unwrap();
        let s = f.stats;
        assert!(s.ho_dropped > 0, "seed {seed}: {s:?}");
        assert!(f
            .txs
            .iter()
            .any(|t| t.trimmed.is_some() && matches!(t.fate, Fate::Dropped { cause: DropCause::ControlQueue, .. })));
    }
}
