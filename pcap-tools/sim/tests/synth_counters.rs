//! The NIC counters the truth gives per host (`counters[]`, docs/truth.md; `counters.rs`) agree
//! with the rest of the truth, counted another way: CNPs with `summary`, sequence errors and
//! duplicates with the transmissions' `accept` verdicts, NAKs with the transmissions delivered,
//! timeouts with the timeout-tagged resends; and each is nonzero in a run that has its event.
//! (The capture's side of the reconciliation is `pcap-tools/cli/tests/replay_counters.rs`.)

use std::collections::BTreeMap;

use rocescope_sim::synth::{self, simulate, OpChoice, SynthOptions};
use rocescope_sim::truth::{Accept, Fate, Kind, Origin, Reason, Truth};
use rocescope_sim::LossDir;
use rocescope_stacks::StackKind;

fn run(o: &SynthOptions) -> Truth {
    let f = simulate(o, None, true, None).expect("simulating");
    synth::truth(o, &f)
}

/// Every host's counters added up.
fn total(t: &Truth) -> BTreeMap<String, u64> {
    let mut sum = BTreeMap::new();
    for h in &t.counters {
        for (k, v) in &h.values {
            *sum.entry(k.clone()).or_insert(0) += v;
        }
    }
    sum
}

fn count(t: &Truth, f: impl Fn(&rocescope_sim::truth::Transmission) -> bool) -> u64 {
    t.sim.transmissions.iter().filter(|x| f(x)).count() as u64
}

/// What every run must satisfy; returns the totals.
fn consistent(name: &str, t: &Truth) -> BTreeMap<String, u64> {
    assert_eq!(
        t.counters.len(),
        t.counters
            .iter()
            .map(|h| &h.host)
            .collect::<std::collections::HashSet<_>>()
            .len()
    );
    let s = total(t);
    let req_accept = |a: Accept| {
        count(t, |x| {
            x.origin == Origin::Requester && x.kind == Kind::Data && x.accept == Some(a)
        })
    };
    assert_eq!(s["duplicate_request"], req_accept(Accept::Duplicate), "{name}");
    if t.config.stack == rocescope_sim::truth::Stack::Gbn {
        assert_eq!(s["out_of_sequence"], req_accept(Accept::Discarded), "{name}");
    } else {
        assert!(s["out_of_sequence"] <= req_accept(Accept::Accepted), "{name}");
    }
    let naks = count(t, |x| {
        matches!(x.kind, Kind::Nak | Kind::Sack) && x.fate == Fate::Delivered
    });
    assert_eq!(s["packet_seq_err"], naks, "{name}");
    assert_eq!(s["np_cnp_sent"], t.summary.cnps, "{name}");
    assert_eq!(s["rp_cnp_handled"], t.summary.cnps_reacted, "{name}");
    let cnps_delivered = count(t, |x| x.kind == Kind::Cnp && x.fate == Fate::Delivered);
    assert_eq!(s["rp_cnp_handled"] + s["rp_cnp_ignored"], cnps_delivered, "{name}");
    assert!(s["np_ecn_marked_roce_packets"] <= t.summary.ce_marked, "{name}");
    assert_eq!(s["tx_vport_rdma_unicast_packets"], t.summary.transmissions, "{name}");
    let timeout_resends = count(t, |x| {
        x.retx.as_ref().is_some_and(|r| r.reason == Some(Reason::Timeout))
    });
    assert!(s["local_ack_timeout_err"] <= timeout_resends, "{name}");
    assert_eq!(
        s["local_ack_timeout_err"] > 0,
        timeout_resends > 0,
        "{name}: {timeout_resends} timeout-tagged resends"
    );
    s
}

#[test]
fn counters_agree_with_the_rest_of_the_truth_and_show_each_event() {
    // Go-Back-N with READs under loss both ways and a short local ACK timeout: sequence
    // errors, duplicates, NAKs, implied NAKs and timeouts.
    let gbn = SynthOptions {
        messages: 20,
        message_size: 4096,
        op: OpChoice::Mix,
        loss: 0.1,
        loss_dir: LossDir::Both,
        local_ack_timeout: 4,
        seed: 2,
        ..SynthOptions::for_stack(StackKind::Gbn)
    };
    let t = run(&gbn);
    let s = consistent("gbn", &t);
    for k in [
        "out_of_sequence",
        "duplicate_request",
        "packet_seq_err",
        "local_ack_timeout_err",
    ] {
        assert!(s[k] > 0, "gbn: {k} = 0");
    }
    let t = run(&SynthOptions { seed: 4, ..gbn.clone() });
    assert!(consistent("gbn seed 4", &t)["implied_nak_seq_err"] > 0);

    let irn = SynthOptions {
        messages: 20,
        loss: 0.1,
        loss_dir: LossDir::Both,
        seed: 3,
        ..SynthOptions::for_stack(StackKind::Irn)
    };
    let s = consistent("irn", &run(&irn));
    for k in [
        "out_of_sequence",
        "duplicate_request",
        "packet_seq_err",
        "local_ack_timeout_err",
    ] {
        assert!(s[k] > 0, "irn: {k} = 0");
    }

    let dcp = SynthOptions {
        messages: 8,
        incast: 2,
        op: OpChoice::Mix,
        queue_bytes: 8192,
        loss: 0.02,
        seed: 2,
        ..SynthOptions::for_stack(StackKind::Dcp)
    };
    assert!(consistent("dcp", &run(&dcp))["out_of_sequence"] > 0);

    // An incast marked at one threshold: CE marks, CNPs sent, and handled by DCQCN.
    let ecn = SynthOptions {
        incast: 4,
        messages: 8,
        message_size: 65536,
        ecn_red: None,
        ecn_threshold: Some(20_000),
        cnp_interval_ns: 2000,
        seed: 1,
        ..SynthOptions::for_stack(StackKind::Gbn)
    };
    let t = run(&ecn);
    let s = consistent("ecn", &t);
    for k in ["np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled"] {
        assert!(s[k] > 0, "ecn: {k} = 0");
    }
    // The receiver marks and sends; the senders handle.
    let r0 = t.counters.iter().find(|h| h.host == "r0").expect("r0");
    assert_eq!(r0.values["np_cnp_sent"], t.summary.cnps);
    assert_eq!(r0.values["rp_cnp_handled"], 0);
}

#[test]
fn the_ethtool_text_has_a_header_and_one_indented_line_per_counter() {
    let t = run(&SynthOptions {
        messages: 2,
        ..SynthOptions::for_stack(StackKind::Gbn)
    });
    let r0 = t.counters.iter().find(|h| h.host == "r0").expect("r0");
    let text = rocescope_sim::counters::ethtool_text(&r0.values);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("NIC statistics:"));
    assert_eq!(lines.count(), r0.values.len());
    assert!(text.contains("\n     rx_vport_rdma_unicast_packets: "), "{text}");
    assert_eq!(r0.tap, Some(rocescope_sim::truth::TapName::Receiver));
}
