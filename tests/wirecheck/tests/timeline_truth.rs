//! Issue 10, acceptance 1: the timeline equals the truth's observable view on every bundled
//! synth fixture (gbn, irn, dcp; clean and lossy; erd, netrt, sdr-sr, sdr-ec and flor lossy; sender, receiver and fabric taps; incast and
//! spraying), and the share of facts a tap cannot observe is printed per tap.

use std::path::Path;

use rocescope_codec::Params;
use rocescope_sim::observe;
use rocescope_sim::truth::Truth;
use rocescope_wirecheck::timeline_cmp;

fn fixture(name: &str) -> (std::path::PathBuf, Truth) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let truth = std::fs::read_to_string(root.join(format!("synth-{name}.truth.json"))).expect("truth");
    (root.join(format!("synth-{name}.pcapng")), Truth::from_json(&truth).expect("parse truth"))
}

#[test]
fn timeline_equals_the_observable_view_on_the_fixtures() {
    let mut bad = Vec::new();
    let names = ["gbn-clean", "gbn-loss", "irn-clean", "irn-loss", "dcp-clean", "dcp-loss", "erd-loss", "netrt-loss", "sdr-loss", "sdr-ec-loss", "flor-loss"];
    for name in names {
        let (pcap, truth) = fixture(name);
        let views = observe::view(&truth);
        for v in &views {
            eprintln!("{name} {:?}: {} facts, {:.1} % unobservable {:?}", v.name, v.facts, 100.0 * v.share_unobservable(), v.unobservable);
        }
        // Detected (`auto`, as users run it) and imposed (the stack's profile).
        for profile in ["auto", profile_name(truth.config.profile)] {
            let report = timeline_cmp::timeline(&pcap, Params::default(), profile).expect("analyse");
            let c = timeline_cmp::compare(&report, &views);
            eprintln!("{name} ({profile}): {} equal, {} mismatches", c.equal, c.mismatches.len());
            bad.extend(c.mismatches.iter().map(|m| format!("{name} ({profile}): {m}")));
        }
    }
    assert!(bad.is_empty(), "{} mismatches:\n{}", bad.len(), bad.join("\n"));
}

fn profile_name(p: rocescope_sim::truth::Profile) -> &'static str {
    use rocescope_sim::truth::Profile::*;
    match p {
        Std => "std",
        Dcp => "dcp",
        Sdr => "sdr",
        Flor => "flor",
        Netrt => "netrt",
        Erd => "erd",
    }
}

/// The per-packet `message` field (`rocescope.analysis.message`, as the golden
/// `analysis.out` of `decode --format fields` records it: column 14) of SDR's and Flor's data
/// frames names the message the truth says the frame carries, numbered as the tap's view numbers
/// the flow's messages (SDR selective repeat: in the flow listing the message, none on another
/// QP; Flor: the user's message): a frame given a message index is given the right one, and at
/// least 90 % of the data frames whose message the flow lists are given one.
#[test]
fn per_packet_message_field_is_the_truths_message() {
    for name in ["sdr-loss", "flor-loss"] {
        let (_, truth) = fixture(name);
        let golden =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../fixtures/golden/synth-{name}.analysis.out"));
        let text = std::fs::read_to_string(golden).expect("golden");
        // frame → (flow id with @interface, message column)
        let cols: std::collections::HashMap<u64, (String, String)> = text
            .lines()
            .map(|l| {
                let c: Vec<&str> = l.split('\t').collect();
                (c[0].parse().unwrap(), (c[1].to_string(), c.get(13).unwrap_or(&"").to_string()))
            })
            .collect();
        let views = observe::view(&truth);
        let tx = |id: u32| truth.sim.transmissions.iter().find(|x| x.id == id).unwrap();
        let (mut named, mut data) = (0, 0);
        for (tap, v) in truth.taps.iter().zip(&views) {
            let msg_of_frame = |fr: u64| tx(tap.frames.iter().find(|f| f.frame == fr).unwrap().tx).msg;
            for fv in &v.flows {
                let id = format!("{}@{}", fv.id, tap.interface);
                // The truth's message → the view's index in this flow.
                let index: std::collections::HashMap<u64, u64> =
                    fv.messages.iter().filter_map(|m| Some((msg_of_frame(m.first_frame?)?, m.index))).collect();
                for f in &tap.frames {
                    let x = tx(f.tx);
                    let Some(m) = x.msg.filter(|_| x.kind == rocescope_sim::truth::Kind::Data) else { continue };
                    let (flow, got) = &cols[&f.frame];
                    if *flow != id || fv.unjudged.contains(&f.psn) {
                        continue;
                    }
                    // (An SDR packet on another QP than its message's first names none.)
                    let Some(want) = index.get(&m) else {
                        assert!(got.is_empty(), "{name} {:?}: frame {}: message {got}", tap.name, f.frame);
                        continue;
                    };
                    data += 1;
                    if got.is_empty() {
                        continue;
                    }
                    assert_eq!(got, &want.to_string(), "{name} {:?}: frame {}", tap.name, f.frame);
                    named += 1;
                }
            }
        }
        eprintln!("{name}: {named} of {data} data frames name their message");
        assert!(named * 10 >= data * 9 && named > 50, "{name}: {named} of {data}");
    }
}
