//! `rocescope replay` (docs/replay.md): the capture judged against the reference stacks; exit 0
//! when conformant, 1 on any departure, 2 when the input is unusable.

use std::io::Write;

use clap::Args;
use rocescope_analysis::capture;
use rocescope_replay::{self as replay, StackChoice};
use rocescope_analysis::session::Session;

use crate::commands::Failure;

/// Arguments of `replay`.
#[derive(Args)]
pub(crate) struct ReplayArgs {
    /// The capture (a file: replay reads it twice).
    pub file: String,
    /// The reference stack: gbn, irn, dcp, or auto (per connection, by the transport its
    /// packets show: dcp for DCP, irn when the responder sends selective NAKs, else gbn).
    #[arg(long, default_value = "auto", value_parser = parse_stack)]
    pub stack: StackChoice,
    #[arg(long = "format", short = 'T', value_enum, default_value = "text")]
    pub format: ReplayFormat,
    /// How long an answer (NAK, selective NAK, returned header-only packet) may take to show
    /// at the responder's tap after the request that calls for it, µs.
    #[arg(long = "answer-window-us", value_name = "US", default_value_t = 100)]
    pub answer_window_us: u64,
    /// How long after an acknowledgement reaches the requester it may still send a packet the
    /// acknowledgement covers (already on its way to the wire), µs.
    #[arg(long = "reaction-us", value_name = "US", default_value_t = 5)]
    pub reaction_us: u64,
    /// The reference's timers, to match the NIC under test (the report infers `timeout_ns`):
    /// local_ack_timeout=T (GBN, IBTA exponent: 4.096 µs·2^T, 0: none), irn_rto_low_ns=NS,
    /// irn_rto_high_ns=NS, dcp_timeout_ns=NS, rto_ns=NS (one value for every stack); and the
    /// responder NIC's cnp_interval_ns=NS (DCQCN's 50 µs). Repeatable.
    #[arg(long = "param", value_name = "K=V", value_parser = parse_param)]
    pub param: Vec<(String, u64)>,
    /// Two `ethtool -S` snapshots of the NIC at the capture's host-side tap, taken before and
    /// after it: each counter's change is reconciled with what the capture shows.
    #[arg(long = "counters", num_args = 2, value_names = ["BEFORE", "AFTER"])]
    pub counters: Option<Vec<String>>,
    /// The host the counters are of (default: the only host-side tap).
    #[arg(long = "counters-host", value_name = "IP", requires = "counters")]
    pub counters_host: Option<std::net::IpAddr>,
    /// The capture interface at the counters' host (default: the only host-side tap).
    #[arg(long = "counters-interface", value_name = "N", requires = "counters")]
    pub counters_interface: Option<u32>,
    #[command(flatten)]
    pub profile: crate::ProfileArgs,
}

/// The keys `--param` takes.
const PARAM_KEYS: &str = "local_ack_timeout, irn_rto_low_ns, irn_rto_high_ns, dcp_timeout_ns, rto_ns, cnp_interval_ns";

pub(crate) fn parse_param(s: &str) -> Result<(String, u64), String> {
    let (k, v) = s.split_once('=').ok_or_else(|| format!("'{s}' is not K=V"))?;
    if !PARAM_KEYS.split(", ").any(|x| x == k) {
        return Err(format!("unknown parameter '{k}' (one of {PARAM_KEYS})"));
    }
    let v = v.parse::<u64>().map_err(|_| format!("'{v}' is not a whole number"))?;
    if k == "local_ack_timeout" && v > 31 {
        return Err(format!("local_ack_timeout is 0-31, not {v}"));
    }
    Ok((k.to_string(), v))
}

/// The responder NIC's CNP interval with `--param cnp_interval_ns` applied (DCQCN's 50 µs).
pub(crate) fn cnp_interval(params: &[(String, u64)]) -> u64 {
    params.iter().rev().find(|(k, _)| k == "cnp_interval_ns").map_or(50_000, |p| p.1)
}

/// The reference's timers with `--param`s applied.
pub(crate) fn timeouts(params: &[(String, u64)]) -> rocescope_stacks::Timeouts {
    let mut t = rocescope_stacks::Timeouts::default();
    for (k, v) in params {
        match k.as_str() {
            "local_ack_timeout" => t.local_ack_timeout = *v as u8,
            "irn_rto_low_ns" => t.irn_rto_low_ns = *v,
            "irn_rto_high_ns" => t.irn_rto_high_ns = *v,
            "dcp_timeout_ns" => t.dcp_timeout_ns = *v,
            "cnp_interval_ns" => {}
            _ => t.override_ns = Some(*v),
        }
    }
    t
}

#[derive(Clone, Copy, clap::ValueEnum, PartialEq, Eq)]
pub(crate) enum ReplayFormat {
    Text,
    Json,
}

pub(crate) fn parse_stack(s: &str) -> Result<StackChoice, String> {
    StackChoice::parse(s).ok_or_else(|| format!("unknown stack '{s}' (gbn irn dcp sdr-sr sdr-ec flor erd auto)"))
}

pub(crate) fn run(out: &mut impl Write, args: &ReplayArgs) -> Result<u8, Failure> {
    let file = &args.file;
    if file == "-" {
        return Err(Failure::Usage("replay reads its capture twice: give a file, not standard input".into()));
    }
    let open = || capture::open(file).map_err(|e| Failure::Input(file.into(), e));
    let session = || -> Result<_, Failure> { Ok(Session::new(open()?, args.profile.decoder().checksums_for_detection_only())) };
    let opts = replay::Options {
        stack: args.stack,
        answer_window_ns: args.answer_window_us.saturating_mul(1000),
        reaction_ns: args.reaction_us.saturating_mul(1000),
        params: args.profile.params.params,
        timeouts: timeouts(&args.param),
        cnp_interval_ns: cnp_interval(&args.param),
        timers_given: args.param.iter().any(|(k, _)| k != "cnp_interval_ns"),
    };
    let counters = match &args.counters {
        Some(files) => {
            let snap = |path: &String| -> Result<replay::counters::Snapshot, Failure> {
                let text = std::fs::read_to_string(path).map_err(|e| Failure::Usage(format!("{path}: {e}")))?;
                replay::counters::parse_ethtool(&text).map_err(|(line, why)| Failure::Usage(format!("{path} line {line}: {why}")))
            };
            Some(replay::counters::CountersInput {
                before: snap(&files[0])?,
                after: snap(&files[1])?,
                host: args.counters_host,
                interface: args.counters_interface,
            })
        }
        None => None,
    };
    // (A capture unusable part-way: the report of the frames before the error, then the
    // located error, exit 2.)
    let (report, error) = replay::replay_partial(session()?, session()?, &opts, counters.as_ref()).map_err(|e| match e {
        replay::ReplayError::Capture(e) => Failure::Input(file.into(), e),
        replay::ReplayError::Counters(why) => Failure::Usage(format!("--counters: {why}")),
    })?;
    let written = match args.format {
        ReplayFormat::Json => serde_json::to_writer(&mut *out, &report).map_err(std::io::Error::other).and_then(|_| writeln!(out)),
        ReplayFormat::Text => replay::write_text(out, &report),
    };
    if let Err(e) = written {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(Failure::Usage(e.to_string()));
        }
    }
    if let Some(e) = error {
        let _ = out.flush();
        return Err(Failure::Input(file.into(), e));
    }
    Ok(if report.departures() > 0 || report.counter_disagreements() > 0 { 1 } else { 0 })
}
