//! Mutation tests (issue 9, acceptance 4): faulty stacks, made by wrapping the reference ones
//! (`rocescope_wirecheck::mutants`), run through the same fabric and the same wire checks as
//! the reference stacks. Each fault must be reported, and the unmodified stack in the same runs
//! must pass; the stacks' own labels would hide both faults (the resends are unlabelled; the
//! short go-back is labelled `go_back` like a correct one).

mod common;

use common::*;
use rocescope_sim::synth::SynthOptions;
use rocescope_stacks::{new_pair, ConnConfig, Endpoint, Requester, StackKind};
use rocescope_wirecheck::mutants::{GoBackShort, ResendAcked};
use rocescope_wirecheck::run::{self, Run};
use rocescope_wirecheck::verdict::{judge, Verdict};

fn mutant_run(o: &SynthOptions, wrap: fn(Box<dyn Requester>) -> Box<dyn Requester>) -> Run {
    let kind = o.stack;
    let mut factory = move |c: &ConnConfig| -> (Box<dyn Requester>, Box<dyn Endpoint>) {
        let (req, resp) = new_pair(kind, c);
        (wrap(req), resp)
    };
    let dir = run::temp_dir("mutant");
    let r = run::synth_with(o, &dir, "mutant", &mut factory).unwrap_or_else(|e| panic!("{}: {e}", o.command_line()));
    r.in_scratch(dir)
}

/// Runs the reference stack and the mutant on `seeds`; returns their verdicts.
fn both(
    seeds: std::ops::RangeInclusive<u64>,
    o: impl Fn(u64) -> SynthOptions,
    wrap: fn(Box<dyn Requester>) -> Box<dyn Requester>,
) -> Vec<(u64, Verdict, Verdict)> {
    seeds
        .map(|seed| {
            let opts = o(seed);
            let good = judge(&synth_once(&opts, "reference"));
            let bad = judge(&mutant_run(&opts, wrap));
            (seed, good, bad)
        })
        .collect()
}

/// The mislabelling IRN: after each SACK NAK it resends, unlabelled, two packets the
/// receiver had cumulatively acknowledged. The wire shows each of them leaving after the ACK
/// that covered it, and IRN's resends per lost packet leave the measured 1.0.
#[test]
fn an_irn_resending_acknowledged_packets_unlabelled_is_caught() {
    let runs = both(1..=4, |s| forward_loss(StackKind::Irn, 0.02, s), |r| Box::new(ResendAcked::new(r)));
    let (mut good_retx, mut good_lost, mut bad_retx, mut bad_lost, mut caught) = (0, 0, 0, 0, 0);
    for (seed, good, bad) in &runs {
        good.ok().unwrap_or_else(|e| panic!("reference IRN, seed {seed}: {e}"));
        // The resent packets arrive whole and change nothing the receiver delivers.
        assert!(bad.delivery.is_empty() && bad.truth.is_empty(), "seed {seed}: {:?}", bad.all());
        caught += bad.numbers.resent_after_ack;
        good_retx += good.numbers.retx;
        good_lost += good.numbers.data_lost;
        bad_retx += bad.numbers.retx;
        bad_lost += bad.numbers.data_lost;
    }
    eprintln!("reference: {good_retx} retransmissions / {good_lost} losses; mutant: {bad_retx} / {bad_lost}, {caught} after their ACK");
    assert!(caught > 0, "the check missed every injected resend");
    assert!(runs.iter().any(|(_, _, b)| !b.resends.is_empty()));
    assert!(bad_retx as f64 / bad_lost as f64 > 1.5, "resends per loss {bad_retx}/{bad_lost}");
}

/// A Go-Back-N that goes back to one past the NAK's PSN: the burst starts where no NAK, ACK or
/// timeout puts it; the receiver still gets everything (the local ACK timeout resends the
/// missing packet), so only the go-back check sees it.
#[test]
fn a_gbn_going_back_one_packet_too_few_is_caught() {
    let runs = both(1..=4, |s| forward_loss(StackKind::Gbn, 0.02, s), |r| Box::new(GoBackShort::new(r)));
    let mut bad_bursts = 0;
    for (seed, good, bad) in &runs {
        good.ok().unwrap_or_else(|e| panic!("reference GBN, seed {seed}: {e}"));
        assert!(good.numbers.go_backs > 0, "seed {seed}: no go-back to judge");
        assert!(bad.delivery.is_empty(), "seed {seed}: {:?}", bad.delivery);
        bad_bursts += bad.numbers.bad_go_backs;
    }
    eprintln!("mutant GBN: {bad_bursts} misplaced go-back bursts");
    assert!(runs.iter().all(|(_, _, b)| !b.go_back.is_empty()), "a run whose short go-back was not reported");
}
