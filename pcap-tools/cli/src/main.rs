//! `rocescope`: argument parsing and dispatch only. The work is in the libraries:
//! `rocescope-analysis` (capture I/O, the read → decode session, output formats, `check`'s
//! verdict), `rocescope-sim` (synth), `rocescope-dissector` (the Lua plugin); the terminal's
//! progress bars are in `progress.rs`, synth's flags in `synth_args.rs` and the transports'
//! parameter flags, generated from the codec's parameter table, in `params_args.rs`.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use rocescope_analysis::output;
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice, Selector};
use rocescope_codec::Profile;

mod annotate_cmd;
mod commands;
mod export_cmd;
mod params_args;
mod progress;
mod replay_cmd;
mod sdr_args;
mod synth_args;

use commands::Failure;

#[derive(Parser)]
#[command(
    name = "rocescope",
    version,
    propagate_version = true,
    disable_version_flag = true,
    about = "Decode and analyse RoCE (RDMA over Converged Ethernet) captures"
)]
struct Cli {
    /// Print the version (every subcommand takes it; `-V` is decode's verbose tree, as in tshark).
    #[arg(long, action = clap::ArgAction::Version, global = true)]
    version: (),
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    Text,
    Json,
    Fields,
}

/// Profile selection and the transports' parameters (INTERFACES.md), shared by every
/// subcommand that reads a capture.
#[derive(Args, Clone)]
pub(crate) struct ProfileArgs {
    #[arg(
        long,
        default_value = rocescope_codec::profile::CHOICE_DEFAULT,
        help = rocescope_codec::profile::CHOICE_HELP,
        value_parser = parse_profile_choice
    )]
    profile: ProfileChoice,
    /// Profile for the traffic a selector picks (repeatable): qpn=0x12=flor, udp=4791=dcp,
    /// ip=10.0.0.1-10.0.0.2=sdr.
    #[arg(long = "map", value_name = "SELECTOR=PROFILE", value_parser = rocescope_codec::decoder::parse_map)]
    maps: Vec<(Selector, Profile)>,
    /// The transports' parameters: one flag per entry of the codec's parameter table.
    #[command(flatten)]
    params: params_args::ParamArgs,
}

impl ProfileArgs {
    pub(crate) fn decoder(&self) -> Decoder {
        Decoder::new(DecoderOptions {
            profile: self.profile,
            maps: self.maps.clone(),
            params: self.params.params,
            no_verify: false,
        })
    }
}

fn parse_profile_choice(s: &str) -> Result<ProfileChoice, String> {
    ProfileChoice::parse(s).ok_or_else(|| format!("unknown profile '{s}' (auto std dcp sdr flor netrt erd)"))
}

/// Arguments of `flows` and `timeline`.
#[derive(Args)]
pub(crate) struct AnalyzeArgs {
    pub file: String,
    #[arg(long = "format", short = 'T', value_enum, default_value = "text")]
    pub format: TableFormat,
    /// Only this flow (an id as printed: SRC>DST/DESTQP, with @IF and #N when printed so).
    #[arg(long = "flow", value_name = "ID")]
    pub flow: Vec<String>,
    /// Only flows with this DestQP, and the flows paired with them (decimal or 0x hex).
    #[arg(long = "qpn", value_name = "QPN", value_parser = parse_u32)]
    pub qpn: Vec<u32>,
    /// Analyse frames from this many seconds after the capture's first frame.
    #[arg(long = "from", value_name = "SECONDS")]
    pub from: Option<f64>,
    /// Analyse frames up to this many seconds after the capture's first frame.
    #[arg(long = "to", value_name = "SECONDS")]
    pub to: Option<f64>,
    /// timeline: write sequence plots (SVG): into this directory one per flow and
    /// overview.svg, or with one --flow into this file.
    #[arg(long = "svg", value_name = "DIR|FILE")]
    pub svg: Option<String>,
    /// Link rate for converting PFC pause quanta to time, Gb/s.
    #[arg(long = "link-gbps", value_name = "GBPS", default_value_t = 100.0)]
    pub link_gbps: f64,
    #[command(flatten)]
    pub profile: ProfileArgs,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum TableFormat {
    Text,
    Json,
    Csv,
}

fn parse_u32(s: &str) -> Result<u32, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("'{s}' is not a number"))
}

/// Arguments of `decode` (tshark's names where tshark has the flag: docs/cli.md).
#[derive(Args)]
pub(crate) struct DecodeArgs {
    /// The capture (or `-r FILE`).
    pub file: Option<String>,
    /// Read this capture (tshark's `-r`; the same as the positional FILE).
    #[arg(short = 'r', value_name = "FILE")]
    pub read: Option<String>,
    /// Output format; `-e` without it means `fields` (default `text`).
    #[arg(long = "format", short = 'T', value_enum)]
    pub format: Option<Format>,
    /// Field to print with `--format fields` (repeatable), e.g. `-e rocescope.bth.psn`.
    #[arg(short = 'e', value_name = "NAME")]
    pub fields: Vec<String>,
    /// Layout of `--format fields` as tshark's -E: header=y|n, separator=/t|/s|CHAR,
    /// quote=d|s|n, occurrence=f|l|a, aggregator=,|/s|CHAR (repeatable).
    #[arg(short = 'E', value_name = "KEY=VALUE")]
    pub layout: Vec<String>,
    /// Display filter (Wireshark's language, a subset: docs/cli.md), e.g.
    /// `-Y 'rocescope.bth.opcode == 0x11 && rocescope.aeth.kind == nak'`.
    #[arg(short = 'Y', value_name = "FILTER")]
    pub filter: Option<String>,
    /// Time in the text summary as tshark's -t: r (seconds since the first frame, the
    /// default), a (time of day, UTC), ad (date and time, UTC), d (since the previous frame),
    /// dd (since the previous frame printed), e (seconds since the epoch); u and ud as a and ad.
    #[arg(short = 't', value_name = "FORMAT", default_value = "r", value_parser = parse_time_format)]
    pub time: output::TimeFormat,
    /// Stop after N frames.
    #[arg(short = 'c', value_name = "N")]
    pub count: Option<u64>,
    /// With `--format text`, show each frame's tree: every layer, then every field, with
    /// their bytes (tshark's `-V`).
    #[arg(short = 'V', long)]
    pub verbose: bool,
    /// With `--format text`, add each frame's bytes as a hex and ASCII dump (tshark's `-x`).
    #[arg(short = 'x')]
    pub hex: bool,
    /// Add the per-packet analysis fields (`rocescope.analysis.*`) to `-V` and JSON: the
    /// capture is read twice, so not from standard input. `-e rocescope.analysis.*` implies it.
    #[arg(long)]
    pub analysis: bool,
    #[command(flatten)]
    pub profile: ProfileArgs,
}

fn parse_time_format(s: &str) -> Result<output::TimeFormat, String> {
    output::TimeFormat::parse(s).ok_or_else(|| format!("unknown time format '{s}' (r a ad d dd e u ud)"))
}

/// The capture named by the positional FILE or `-r FILE` (exactly one of them).
pub(crate) fn capture_file(file: Option<String>, read: Option<String>) -> Result<String, Failure> {
    match (file, read) {
        (Some(f), None) | (None, Some(f)) => Ok(f),
        (Some(_), Some(_)) => Err(Failure::Usage("name the capture once: either FILE or -r FILE".into())),
        (None, None) => Err(Failure::Usage("no capture given: rocescope COMMAND FILE (or -r FILE)".into())),
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Decode every frame of a capture (pcap or pcapng; `-` reads standard input).
    Decode(DecodeArgs),
    /// Validate ICRCs and lengths: one line per bad packet; exit 1 if any.
    Check {
        /// The capture (or `-r FILE`).
        file: Option<String>,
        /// Read this capture (tshark's `-r`; the same as the positional FILE).
        #[arg(short = 'r', value_name = "FILE")]
        read: Option<String>,
        /// Stop after N frames.
        #[arg(short = 'c', value_name = "N")]
        count: Option<u64>,
        /// Only judge the frames this display filter keeps (as `decode -Y`).
        #[arg(short = 'Y', value_name = "FILTER")]
        filter: Option<String>,
        #[command(flatten)]
        profile: ProfileArgs,
    },
    /// List every field name the decoder can print, with its type and description.
    Fields,
    /// Print the Wireshark Lua plugin (dissector/rocescope.lua), generated from the field
    /// registry and the opcode table.
    Dissector {
        /// Write it into Wireshark's personal Lua plugin folder instead (created if missing:
        /// ~/.local/lib/wireshark/plugins on Linux and macOS, %APPDATA%\Wireshark\plugins on
        /// Windows), and print where.
        #[arg(long)]
        install: bool,
    },
    /// One row per flow (per direction of each QP, per interface): packets, bytes, messages,
    /// retransmissions, losses, ECN marks, CNPs, RTT, PFC pauses (docs/analysis.md).
    Flows(AnalyzeArgs),
    /// Per flow: every loss, capture gap, retransmission and message completion
    /// (docs/analysis.md; the JSON of docs/interfaces.md).
    Timeline(AnalyzeArgs),
    /// Judge the capture against the reference stacks (docs/replay.md): every departure with
    /// its frames, rule and source; exit 0 conformant, 1 departures, 2 unusable input.
    Replay(replay_cmd::ReplayArgs),
    /// Copy the capture with each frame's analysis fields and replay findings as pcapng packet
    /// comments (docs/annotate.md), which Wireshark shows, and the plugin as
    /// rocescope.analysis.* / rocescope.replay.* fields.
    Annotate(annotate_cmd::AnnotateArgs),
    /// Simulate a lossy fabric with a reference stack: write a pcapng (one interface per tap)
    /// and, with --truth, the ground truth (docs/truth.md).
    Synth(synth_args::SynthArgs),
    /// Write captures and their analysis as Apache Parquet for DuckDB and Spark
    /// (docs/cluster.md): packets, flows, messages and events tables.
    Export(export_cmd::ExportArgs),
}


fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let r = match cli.cmd {
        Cmd::Decode(args) => commands::decode(&mut out, args),
        Cmd::Check { file, read, count, filter, profile } => capture_file(file, read)
            .and_then(|file| commands::check(&mut out, &file, count, filter.as_deref(), profile.decoder())),
        Cmd::Fields => {
            let _ = output::write_field_list(&mut out);
            Ok(0)
        }
        Cmd::Dissector { install: false } => {
            let _ = out.write_all(rocescope_dissector::dissector().as_bytes());
            Ok(0)
        }
        Cmd::Dissector { install: true } => match rocescope_dissector::personal_plugin_dir() {
            None => Err(Failure::Usage("no home folder (HOME, or APPDATA on Windows) to install the plugin into".into())),
            Some(dir) => match rocescope_dissector::install(&dir) {
                Ok(path) => {
                    let _ = writeln!(out, "installed {}", path.display());
                    Ok(0)
                }
                Err(e) => Err(Failure::Usage(format!("{}: {e}", dir.display()))),
            },
        },
        Cmd::Flows(args) => commands::analyze(&mut out, &args, false),
        Cmd::Timeline(args) => commands::analyze(&mut out, &args, true),
        Cmd::Replay(args) => replay_cmd::run(&mut out, &args),
        Cmd::Annotate(args) => annotate_cmd::run(&args),
        Cmd::Synth(args) => args.run().map_err(Failure::Usage),
        Cmd::Export(args) => export_cmd::run(&mut out, &args),
    };
    let flushed = out.flush();
    match r {
        Ok(code) => {
            let _ = flushed;
            ExitCode::from(code)
        }
        Err(Failure::Input(file, e)) => {
            eprintln!("rocescope: {file}: {e}");
            ExitCode::from(2)
        }
        Err(Failure::Usage(msg)) => {
            eprintln!("rocescope: {msg}");
            ExitCode::from(2)
        }
    }
}

