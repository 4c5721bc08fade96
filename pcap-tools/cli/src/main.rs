//! `rocescope`: argument parsing and dispatch only. The work is in the libraries:
//! `rocescope-analysis` (capture I/O, the read → decode session, output formats, `check`'s
//! verdict), `rocescope-sim` (synth), `rocescope-dissector` (the Lua plugin); the terminal's
//! progress bars are in `progress.rs` and synth's flags in `synth_args.rs`.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use rocescope_analysis::output;
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice, Selector};
use rocescope_codec::{FlorAckSetMeans, ImmSplit, Params, Profile};

mod commands;
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

#[derive(Clone, Copy, ValueEnum)]
enum AckPolarity {
    Send,
    Write,
}

/// Profile selection and the transports' parameters (INTERFACES.md), shared by every
/// subcommand that reads a capture.
#[derive(Args, Clone)]
struct ProfileArgs {
    /// Transport profile: auto (detect per flow), std, dcp, sdr, flor, netrt, erd.
    #[arg(long, default_value = "auto", value_parser = parse_profile_choice)]
    profile: ProfileChoice,
    /// Profile for the traffic a selector picks (repeatable): qpn=0x12=flor, udp=4791=dcp,
    /// ip=10.0.0.1-10.0.0.2=sdr.
    #[arg(long = "map", value_name = "SELECTOR=PROFILE", value_parser = rocescope_codec::decoder::parse_map)]
    maps: Vec<(Selector, Profile)>,
    /// DCP: the tag is (ToS >> SHIFT) & 3 (SHIFT 0-6).
    #[arg(long, default_value_t = 2, value_name = "SHIFT", value_parser = clap::value_parser!(u8).range(0..=rocescope_codec::Params::MAX_DCP_TAG_SHIFT as i64))]
    dcp_tag_shift: u8,
    /// SDR immediate split: message id, packet offset, fragment bits.
    #[arg(long, default_value = "10,18,4", value_parser = parse_split)]
    sdr_split: ImmSplit,
    /// SDR MTU in bytes (default: the DMA length of the flow's full-size packets, else 4096).
    #[arg(long)]
    sdr_mtu: Option<u32>,
    /// SDR maximum message size in bytes (default: 2^OFF x MTU).
    #[arg(long)]
    sdr_max_message: Option<u64>,
    /// SDR packets per chunk.
    #[arg(long, default_value_t = 1)]
    sdr_chunk_packets: u32,
    /// Flor immediate split: hint, message id, chunk offset bits.
    #[arg(long, default_value = "1,21,10", value_parser = parse_split)]
    flor_split: ImmSplit,
    /// Flor UNIT_SIZE in bytes.
    #[arg(long, default_value_t = 4096)]
    flor_unit_size: u32,
    /// Flor ACK bitmap: what a set bit marks.
    #[arg(long, value_enum, default_value = "send")]
    flor_ack_set_means: AckPolarity,
    /// NetRT message opcode.
    #[arg(long, default_value = "0xc0", value_parser = parse_u8)]
    netrt_opcode: u8,
    /// ERD NACK TCP port.
    #[arg(long, default_value_t = 4792)]
    erd_nack_port: u16,
}

impl ProfileArgs {
    fn decoder(&self) -> Decoder {
        Decoder::new(DecoderOptions {
            profile: self.profile,
            maps: self.maps.clone(),
            params: Params {
                dcp_tag_shift: self.dcp_tag_shift,
                sdr_split: self.sdr_split,
                sdr_mtu: self.sdr_mtu,
                sdr_max_message: self.sdr_max_message,
                sdr_chunk_packets: self.sdr_chunk_packets,
                flor_split: self.flor_split,
                flor_unit_size: self.flor_unit_size,
                flor_ack_set_means: match self.flor_ack_set_means {
                    AckPolarity::Send => FlorAckSetMeans::Send,
                    AckPolarity::Write => FlorAckSetMeans::Write,
                },
                netrt_opcode: self.netrt_opcode,
                erd_nack_port: self.erd_nack_port,
            },
            no_verify: false,
        })
    }
}

fn parse_profile_choice(s: &str) -> Result<ProfileChoice, String> {
    ProfileChoice::parse(s).ok_or_else(|| format!("unknown profile '{s}' (auto std dcp sdr flor netrt erd)"))
}

fn parse_split(s: &str) -> Result<ImmSplit, String> {
    ImmSplit::parse(s).ok_or_else(|| format!("'{s}' is not three bit widths adding up to 32"))
}

fn parse_u8(s: &str) -> Result<u8, String> {
    rocescope_codec::params::parse_uint(s)
        .and_then(|n| u8::try_from(n).ok())
        .ok_or_else(|| format!("'{s}' is not a byte value"))
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
        Cmd::Synth(args) => args.run().map(|_| 0).map_err(Failure::Usage),
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

