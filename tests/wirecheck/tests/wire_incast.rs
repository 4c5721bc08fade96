//! Seed 000 §4.2 judged from the wire: in an 8-to-1 DCP incast with trimming, every data packet
//! of `s0` that left its NIC and did not reach the receiver whole reached it as its
//! header-only form (the control queue lost none) when the WRR weight is §4.2's; with a weight
//! well below it, some trimmed packets reach the receiver in no form at all. (The simulator's
//! own `max_control_queue_bytes <= control_queue_bytes` holds by construction; this counts
//! frames.)

mod common;

use common::*;
use rocescope_sim::sim::TapPoint;
use rocescope_sim::synth::SynthOptions;
use rocescope_stacks::StackKind;
use rocescope_wirecheck::ledger::requests_lost;
use rocescope_wirecheck::verdict::judge;

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
        taps: vec![TapPoint::Sender, TapPoint::Receiver],
        seed,
        time_limit_ns: 20_000_000,
        ..Default::default()
    }
}

#[test]
fn with_the_section_4_2_weight_every_lost_packet_arrives_header_only() {
    let mut trimmed = 0;
    for seed in 1..=4 {
        let o = incast(seed, None);
        let r = synth_once(&o, "incast");
        let v = judge(&r);
        v.ok().unwrap_or_else(|e| panic!("{}:\n{e}", o.command_line()));
        let c = r.wire.conns.iter().find(|c| r.wire.tap_at(c.requester).is_some()).expect("s0's connection");
        let l = requests_lost(&r.wire, c).expect("both ends tapped");
        assert_eq!(l.data_per_psn, l.ho_arrived, "{}: lost packets without a header-only arrival", o.command_line());
        trimmed += l.data_total();
    }
    // Measured: 4,312 over seeds 1-4.
    eprintln!("s0: {trimmed} packets trimmed, all arrived header-only");
    assert!(trimmed > 20, "{trimmed}");
}

#[test]
fn with_an_eighth_of_the_weight_some_trimmed_packets_vanish() {
    let mut vanished = 0;
    for seed in 1..=4 {
        let w = incast(seed, None).fabric_config().effective_wrr_weight();
        let o = incast(seed, Some(w / 8.0));
        let r = synth_once(&o, "incast-w8");
        let c = r.wire.conns.iter().find(|c| r.wire.tap_at(c.requester).is_some()).expect("s0's connection");
        let l = requests_lost(&r.wire, c).expect("both ends tapped");
        vanished += l.data_total() - l.ho_arrived.values().map(|&n| n as u64).sum::<u64>();
    }
    // Measured: 292 over seeds 1-4.
    eprintln!("s0: {vanished} lost packets never arrived in any form");
    assert!(vanished > 0);
}
