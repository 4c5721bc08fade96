//! The timeline judged against the truth's observable view (docs/truth.md, "What a tap can
//! observe"; issue 10 acceptance 1): per tap (pcapng interface) and flow, the analyser's
//! losses, retransmissions, capture gaps and messages must equal the view's observable facts
//! exactly — frames, PSNs, times to the nanosecond, and the values the view knows (trigger,
//! spurious, cause, signal, repair), with "unknown" exactly where the view says unobservable.
//! Facts of a PSN the view marks unobservable are not judged (on either side); neither are
//! the message fields it lists as unknown.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rocescope_analysis::analyze::report::{self as rep, FlowTimeline, TimelineReport};
use rocescope_analysis::analyze::{run, Options};
use rocescope_analysis::capture;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice};
use rocescope_codec::Params;
use rocescope_sim::observe::{Fact, FlowView, Position, TapView};
use rocescope_sim::truth::{Repair, RetxCause, Signal};

/// Runs the timeline analyser over a capture, as `rocescope timeline --profile P` does.
pub fn timeline(pcap: &Path, params: Params, profile: &str) -> Result<TimelineReport, String> {
    let reader = capture::open(&pcap.display().to_string()).map_err(|e| e.to_string())?;
    let profile = ProfileChoice::parse(profile).ok_or_else(|| format!("unknown profile {profile}"))?;
    let decoder = Decoder::new(DecoderOptions { profile, maps: vec![], params, no_verify: false });
    let mut s = Session::new(reader, decoder);
    let mut a = run::analyze(&mut s, Options::default(), run::Window::default(), |_| {}).map_err(|e| e.to_string())?;
    Ok(a.timeline())
}

/// What the comparison found.
#[derive(Debug, Default)]
pub struct Cmp {
    /// Facts compared and found equal.
    pub equal: u64,
    pub mismatches: Vec<String>,
}

fn signal_name(s: Option<Signal>) -> &'static str {
    match s {
        Some(Signal::Nak) => "nak",
        Some(Signal::Sack) => "sack",
        Some(Signal::Ho) => "ho",
        Some(Signal::Timeout) => "timeout",
        Some(Signal::Gap) => "gap",
        Some(Signal::NetrtRequest) => "netrt_request",
        Some(Signal::ErdNack) => "erd_nack",
        Some(Signal::SdrBitmap) => "sdr_bitmap",
        Some(Signal::FlorAck) => "flor_ack",
        Some(Signal::None) | None => "unknown",
    }
}


fn cause_name(c: Option<RetxCause>) -> &'static str {
    match c {
        Some(RetxCause::Loss) => "loss",
        Some(RetxCause::GoBack) => "go_back",
        Some(RetxCause::Timeout) => "timeout",
        Some(RetxCause::Spurious) => "spurious",
        None => "unknown",
    }
}


fn base_id(id: &str) -> &str {
    id.split(['@', '#']).next().unwrap_or(id)
}

/// Compares the analyser's report with the observable view of every tap.
pub fn compare(report: &TimelineReport, views: &[TapView]) -> Cmp {
    let mut c = Cmp::default();
    for tap in views {
        for fv in &tap.flows {
            let Some(af) = report.flows.iter().find(|f| f.interface == tap.interface && base_id(&f.id) == fv.id) else {
                c.mismatches.push(format!("tap {:?}: flow {} not in the timeline", tap.name, fv.id));
                continue;
            };
            compare_flow(&mut c, &format!("{:?} {}", tap.name, fv.id), af, fv);
        }
    }
    c
}

fn unobservable_psns(fv: &FlowView, fact: Fact) -> BTreeSet<u32> {
    fv.unobservable.iter().filter(|u| u.fact == fact).filter_map(|u| u.psn).collect()
}

/// A retransmission as both sides are compared; of an ambiguous PSN only its frame, time and
/// trigger.
fn retx_line(psn: u32, t: u64, trigger: &str, spurious: Option<bool>, cause: &str, ambiguous: &BTreeSet<u32>) -> String {
    if ambiguous.contains(&psn) {
        return format!("psn {psn} t {t} trigger {trigger}");
    }
    let sp = spurious.map_or("unknown".to_string(), |s| s.to_string());
    format!("psn {psn} t {t} trigger {trigger} spurious {sp} cause {cause}")
}

fn compare_flow(c: &mut Cmp, at: &str, af: &FlowTimeline, fv: &FlowView) {
    let ambiguous: BTreeSet<u32> = fv.ambiguous.iter().copied().collect();
    // Retransmissions, keyed by frame; of an ambiguous PSN only the frame, time and trigger.
    let mut skip = unobservable_psns(fv, Fact::Retransmission);
    skip.extend(fv.unjudged.iter().copied());
    // A trigger the view leaves null (a signal arrived but the timer fired, or the reverse: no
    // capture shows which) is not judged.
    let null_trigger: BTreeSet<u64> = fv.retransmissions.iter().filter(|r| r.trigger.is_none()).map(|r| r.frame).collect();
    let trigger_of = |frame: u64, s: &'static str| if null_trigger.contains(&frame) { "unknown" } else { s };
    // Nor the cause it decides (the truth puts the timer first).
    let cause_of = |frame: u64, s: &'static str| if null_trigger.contains(&frame) && fv.position == Position::Source { "unknown" } else { s };
    let want: BTreeMap<u64, String> = fv
        .retransmissions
        .iter()
        .filter(|r| !skip.contains(&r.psn))
        .map(|r| {
            let line = retx_line(r.psn, r.time_ns.0, signal_name(r.trigger), r.spurious, cause_name(r.cause), &ambiguous);
            (r.frame, line)
        })
        .collect();
    let got: BTreeMap<u64, String> = af
        .retransmissions
        .iter()
        .filter(|r| !skip.contains(&r.psn))
        .map(|r| {
            let (trigger, cause) = (trigger_of(r.frame, r.trigger.name()), cause_of(r.frame, r.cause.name()));
            (r.frame, retx_line(r.psn, r.time_ns.0, trigger, r.spurious, cause, &ambiguous))
        })
        .collect();
    diff(c, at, "retransmission", &want, &got);
    // Losses, keyed by (frame, psn); none of an ambiguous PSN is judged.
    let mut skip = unobservable_psns(fv, Fact::Loss);
    skip.extend(ambiguous.iter().copied());
    skip.extend(fv.unjudged.iter().copied());
    let want: BTreeMap<(u64, u32), String> = fv
        .losses
        .iter()
        .filter(|l| !skip.contains(&l.psn))
        .map(|l| {
            let repair = match l.repair {
                Some(Repair::EndHost) => "end_host",
                Some(Repair::InNetwork) => "in_network",
                Some(Repair::ErasureCode) => "erasure_code",
                Some(Repair::None) => "none",
                None => "unknown",
            };
            ((l.frame, l.psn), format!("t {} signal {} repair {}", l.time_ns.0, signal_name(l.signal), repair))
        })
        .collect();
    let got: BTreeMap<(u64, u32), String> = af
        .losses
        .iter()
        .filter(|l| !skip.contains(&l.psn))
        .map(|l| {
            let repair = match l.repair {
                rep::Repair::EndHost => "end_host",
                rep::Repair::InNetwork => "in_network",
                rep::Repair::ErasureCode => "erasure_code",
                rep::Repair::None => "none",
                _ => "unknown",
            };
            ((l.frame, l.psn), format!("t {} signal {} repair {}", l.time_ns.0, l.signal.name(), repair))
        })
        .collect();
    diff(c, at, "loss", &want, &got);
    // Capture gaps.
    let skip = unobservable_psns(fv, Fact::CaptureGap);
    let want: BTreeMap<u32, String> =
        fv.capture_gaps.iter().filter(|g| !skip.contains(&g.psn)).map(|g| (g.psn, format!("frame {}", g.frame))).collect();
    let got: BTreeMap<u32, String> =
        af.capture_gaps.iter().filter(|g| !skip.contains(&g.psn)).map(|g| (g.psn, format!("frame {}", g.frame))).collect();
    diff(c, at, "capture gap", &want, &got);
    // Messages, by index, the fields the view knows.
    for m in &fv.messages {
        // (A view that cannot tell the message's place in the flow's list ("index" unknown:
        // SDR sends the tap confused) names it by its first frame.)
        let by_first = m.unknown.contains(&"index");
        let Some(am) =
            af.messages
                .iter()
                .find(|a| if by_first { Some(a.first_frame) == m.first_frame } else { a.index == m.index })
        else {
            c.mismatches.push(format!("{at}: message {} missing", m.index));
            continue;
        };
        let known = |f: &str| !m.unknown.contains(&f);
        let mut check = |name: &str, want: String, got: String| {
            if !known(name) {
                return;
            }
            if want == got {
                c.equal += 1;
            } else {
                c.mismatches.push(format!(
                    "{at}: message {} (first frame {:?}) {name}: truth {want}, timeline {got}",
                    m.index, m.first_frame
                ));
            }
        };
        check("first_frame", format!("{:?}", m.first_frame), format!("{:?}", Some(am.first_frame)));
        check("last_frame", format!("{:?}", m.last_frame), format!("{:?}", Some(am.last_frame)));
        check("packets", format!("{:?}", m.packets), format!("{:?}", am.packets));
        check("retransmitted", format!("{:?}", m.retransmitted), format!("{:?}", Some(am.retransmitted)));
        check("complete_frame", format!("{:?}", m.complete_frame), format!("{:?}", am.complete_frame));
        check(
            "complete_time_ns",
            format!("{:?}", m.complete_time_ns.map(|t| t.0)),
            format!("{:?}", am.complete_time_ns.map(|t| t.0)),
        );
    }
}

fn diff<K: Ord + std::fmt::Debug>(c: &mut Cmp, at: &str, what: &str, want: &BTreeMap<K, String>, got: &BTreeMap<K, String>) {
    for (k, w) in want {
        match got.get(k) {
            Some(g) if g == w => c.equal += 1,
            Some(g) => c.mismatches.push(format!("{at}: {what} {k:?}: truth {w}; timeline {g}")),
            None => c.mismatches.push(format!("{at}: {what} {k:?} ({w}) missing from the timeline")),
        }
    }
    for (k, g) in got {
        if !want.contains_key(k) {
            c.mismatches.push(format!("{at}: {what} {k:?} ({g}) not in the truth's observable view"));
        }
    }
}

/// Per tap, summed over runs: facts of the flows the tap saw, how many of those are
/// unobservable, and of the observable retransmissions how many have no known cause.
#[derive(Debug, Default, Clone, Copy)]
pub struct Share {
    pub facts: u64,
    pub unobservable: u64,
    pub retransmissions: u64,
    pub cause_unknown: u64,
}

impl Share {
    pub fn line(&self, tap: &str) -> String {
        let pct = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
        format!(
            "{tap}: {} facts of the flows it saw, {:.1} % unobservable; {} observable retransmissions, cause unknown for {:.1} %",
            self.facts,
            pct(self.unobservable, self.facts),
            self.retransmissions,
            pct(self.cause_unknown, self.retransmissions)
        )
    }
}

/// Runs `synth` with `opts`, analyses the capture as users do (`auto` detection) and compares the
/// timeline with the truth's observable view; adds each tap's counts to `shares` (by tap name).
pub fn judge_synth(
    opts: &rocescope_sim::synth::SynthOptions,
    dir: &Path,
    name: &str,
    shares: &mut BTreeMap<String, Share>,
) -> Result<Cmp, String> {
    let run = crate::run::synth(opts, dir, name)?;
    // (What a user passes with `--param`: DCP's tag position, SDR's chunk size.)
    let params = Params {
        dcp_tag_shift: opts.dcp_tag_shift,
        sdr_chunk_packets: if opts.stack.is_sdr() { opts.sdr.chunk_packets } else { 0 },
        flor_unit_size: opts.flor_unit_size,
        ..Default::default()
    };
    let report = timeline(&run.pcap, params, "auto")?;
    let views = rocescope_sim::observe::view(&run.truth);
    for v in &views {
        let s = shares.entry(format!("{:?}", v.name).to_lowercase()).or_default();
        let unseen = v.unobservable.get(&rocescope_sim::observe::Why::FlowNotSeen).copied().unwrap_or(0);
        s.facts += v.facts - unseen;
        s.unobservable += v.unobservable.values().sum::<u64>() - unseen;
        for f in &v.flows {
            s.retransmissions += f.retransmissions.len() as u64;
            s.cause_unknown += f.retransmissions.iter().filter(|r| r.cause.is_none()).count() as u64;
        }
    }
    let c = compare(&report, &views);
    if c.mismatches.is_empty() || std::env::var_os("ROCESCOPE_KEEP").is_none() {
        let _ = std::fs::remove_file(&run.pcap);
        let _ = std::fs::remove_file(&run.truth_path);
    } else {
        let keep = dir.join(format!("{name}-{}", shares.values().map(|s| s.facts).sum::<u64>()));
        let _ = std::fs::rename(&run.pcap, keep.with_extension("pcapng"));
        let _ = std::fs::rename(&run.truth_path, keep.with_extension("json"));
        eprintln!("kept {}", keep.display());
    }
    Ok(c)
}

/// A run of the timeline grids (`tests/timeline_grid.rs`, `examples/timeline_grid.rs`): `stack`
/// (`trim`: DCP with its `synth` defaults, trimming; else losses dropped on the wire), `loss` on
/// the fabric, `paths` (more than one: sprayed, path delays up to 1.5 µs apart), `incast`
/// senders, `messages` of 16 KB each, taps at the sender, the receiver and in the fabric.
pub fn grid_options(
    stack: rocescope_stacks::StackKind,
    trim: bool,
    loss: f64,
    paths: u32,
    incast: u32,
    messages: u32,
    seed: u64,
) -> rocescope_sim::synth::SynthOptions {
    use rocescope_sim::synth::SynthOptions;
    use rocescope_sim::{LossMode, Routing, TapPoint};
    let base = if trim { SynthOptions::for_stack(stack) } else { SynthOptions::default() };
    SynthOptions {
        stack,
        loss,
        paths,
        reorder_ns: if paths > 1 { 1500 } else { 0 },
        routing: if paths > 1 { Routing::Spray } else { Routing::Ecmp },
        incast,
        messages,
        message_size: 16_384,
        seed,
        taps: vec![TapPoint::Sender, TapPoint::Receiver, TapPoint::Fabric],
        loss_mode: if trim { base.loss_mode } else { LossMode::Drop },
        ..base
    }
}
