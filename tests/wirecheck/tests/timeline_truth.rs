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
