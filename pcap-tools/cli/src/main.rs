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

mod commands;
mod params_args;
mod progress;
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
struct ProfileArgs {
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
    fn decoder(&self) -> Decoder {
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

#[derive(Subcommand)]
enum Cmd {
    /// Decode every frame of a capture (pcap or pcapng; `-` reads standard input).
    Decode {
        file: String,
        #[arg(long = "format", short = 'T', value_enum, default_value = "text")]
        format: Format,
        /// Field to print with `--format fields` (repeatable), e.g. `-e rocescope.bth.psn`.
        #[arg(short = 'e', value_name = "NAME")]
        fields: Vec<String>,
        /// Stop after N frames.
        #[arg(short = 'c', value_name = "N")]
        count: Option<u64>,
        /// With `--format text`, list every field under each frame.
        #[arg(short = 'V', long)]
        verbose: bool,
        #[command(flatten)]
        profile: ProfileArgs,
    },
    /// Validate ICRCs and lengths: one line per bad packet; exit 1 if any.
    Check {
        file: String,
        #[command(flatten)]
        profile: ProfileArgs,
    },
    /// List every field name the decoder can print, with its type and description.
    Fields,
    /// Print the Wireshark Lua plugin (dissector/rocescope.lua), generated from the field
    /// registry and the opcode table.
    Dissector,
    /// Simulate a lossy fabric with a reference stack: write a pcapng (one interface per tap)
    /// and, with --truth, the ground truth (docs/truth.md).
    Synth(synth_args::SynthArgs),
}


fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let r = match cli.cmd {
        Cmd::Decode { file, format, fields, count, verbose, profile } => {
            commands::decode(&mut out, &file, format, &fields, count, verbose, profile.decoder())
        }
        Cmd::Check { file, profile } => commands::check(&mut out, &file, profile.decoder()),
        Cmd::Fields => {
            let _ = output::write_field_list(&mut out);
            Ok(0)
        }
        Cmd::Dissector => {
            let _ = out.write_all(rocescope_dissector::dissector().as_bytes());
            Ok(0)
        }
        Cmd::Synth(args) => args.run().map_err(Failure::Usage),
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

