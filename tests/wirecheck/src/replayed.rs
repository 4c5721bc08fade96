//! `rocescope replay` (the `rocescope-replay` library, as `replay --stack STACK FILE` runs it)
//! over a grid cell's capture (issue 13, acceptance 1: "replay reports no departure on
//! unmodified captures"): the simulator's stacks are the references replay judges by, so an
//! unmodified capture must show none. Ambiguous findings (a tap that cannot tell a departure
//! from a capture gap or a loss) are counted, not failures.

use std::path::Path;

use rocescope_analysis::capture;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice};
use rocescope_replay::{FindingKind, Options, StackChoice};
use rocescope_sim::synth::SynthOptions;

/// What replay said of one capture.
#[derive(Clone, Debug, Default)]
pub struct Replayed {
    /// (tap, connection) pairs judged.
    pub connections: u64,
    pub ambiguous: u64,
    /// Each departure: rule, flow, frames.
    pub departures: Vec<String>,
}

/// Replays `pcap`, written by a run of `opts`, with the run's stack as the reference.
pub fn replay(opts: &SynthOptions, pcap: &Path) -> Result<Replayed, String> {
    let params = opts.fabric_config().params;
    let session = || -> Result<_, String> {
        let r = capture::open(&pcap.display().to_string()).map_err(|e| format!("{}: {e}", pcap.display()))?;
        let dec = Decoder::new(DecoderOptions {
            profile: ProfileChoice::Fixed(opts.stack.profile()),
            params,
            ..Default::default()
        })
        .checksums_for_detection_only();
        Ok(Session::new(r, dec))
    };
    let o = Options { stack: StackChoice::Fixed(opts.stack), params, ..Default::default() };
    let report = rocescope_replay::replay(session()?, session()?, &o).map_err(|e| format!("replay: {e}"))?;
    let mut out = Replayed { connections: report.connections.len() as u64, ..Default::default() };
    for f in &report.findings {
        match f.kind {
            FindingKind::Ambiguous => out.ambiguous += 1,
            FindingKind::Departure => out.departures.push(format!(
                "{} {}: frames {:?}: expected {}, seen {}",
                f.rule,
                f.flow,
                &f.frames[..f.frames.len().min(4)],
                f.expected,
                f.seen
            )),
        }
    }
    Ok(out)
}
