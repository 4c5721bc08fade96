//! `rocescope`: argument parsing and dispatch only. The work is in the libraries:
//! `rocescope-analysis` (capture I/O, the read → decode session, output formats, `check`'s
//! verdict), `rocescope-sim` (synth), `rocescope-dissector` (the Lua plugin); the terminal's
//! progress bars are in `progress.rs`, synth's flags in `synth_args.rs` and the transports'
//! parameter flags, generated from the codec's parameter table, in `params_args.rs`.

use std::io::{self, BufWriter, Write};
use std::ops::ControlFlow;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use rocescope_analysis::capture::{self, CaptureError};
use rocescope_analysis::output::{self, Column};
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice, Selector};
use rocescope_codec::Profile;

mod params_args;
mod progress;
mod synth_args;

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
enum Format {
    Text,
    Json,
    Fields,
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

/// How a run ended.
enum Failure {
    /// The input is unusable (exit 2).
    Input(String, CaptureError),
    /// Bad arguments (exit 2).
    Usage(String),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let r = match cli.cmd {
        Cmd::Decode { file, format, fields, count, verbose, profile } => {
            decode(&mut out, &file, format, &fields, count, verbose, profile.decoder())
        }
        Cmd::Check { file, profile } => check(&mut out, &file, profile.decoder()),
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

fn decode(
    out: &mut impl Write,
    file: &str,
    format: Format,
    names: &[String],
    count: Option<u64>,
    verbose: bool,
    decoder: Decoder,
) -> Result<u8, Failure> {
    let cols: Vec<Column> = names
        .iter()
        .map(|n| Column::parse(n).ok_or_else(|| Failure::Usage(format!("unknown field '{n}' (see `rocescope fields`)"))))
        .collect::<Result<_, _>>()?;
    if matches!(format, Format::Fields) && cols.is_empty() {
        return Err(Failure::Usage("--format fields needs at least one -e NAME".into()));
    }
    let reader = capture::open(file).map_err(|e| Failure::Input(file.into(), e))?;
    let mut session = Session::new(reader, decoder);
    let bar = progress::FileBar::for_file(file);
    let mut cells = Vec::new();
    let mut first = true;
    let json = matches!(format, Format::Json);
    // Output errors (a closed pipe) end the run quietly.
    if json && out.write_all(b"[\n").is_err() {
        return Ok(0);
    }
    let mut closed = false;
    let r = session.run(|rec, frame| {
        if count.is_some_and(|c| rec.number > c) {
            return ControlFlow::Break(());
        }
        bar.tick(rec.number, rec.offset);
        let ok = match format {
            Format::Fields => output::write_fields_line(out, &cols, rec, frame, &mut cells),
            Format::Json => {
                let sep: &[u8] = if first { b"" } else { b",\n" };
                first = false;
                out.write_all(sep).and_then(|_| {
                    serde_json::to_writer(&mut *out, &output::frame_json(rec, frame)).map_err(io::Error::other)
                })
            }
            Format::Text => output::write_summary(out, rec, frame).and_then(|_| if verbose { output::write_tree(out, frame) } else { Ok(()) }),
        };
        closed = ok.is_err();
        if closed {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    if closed {
        return Ok(0);
    }
    if json {
        let _ = out.write_all(b"\n]\n");
    }
    if let Err(e) = r {
        let _ = out.flush();
        return Err(Failure::Input(file.into(), e));
    }
    drop(bar);
    if let Some(note) = output::detection_note(session.decoder()) {
        eprintln!("rocescope: {note}");
    }
    Ok(0)
}

fn check(out: &mut impl Write, file: &str, decoder: Decoder) -> Result<u8, Failure> {
    let reader = capture::open(file).map_err(|e| Failure::Input(file.into(), e))?;
    let mut session = Session::new(reader, decoder);
    let bar = progress::FileBar::for_file(file);
    let mut totals = rocescope_analysis::check::Totals::default();
    let mut closed = false;
    let r = session.run(|rec, d| {
        bar.tick(rec.number, rec.offset);
        let Some(v) = rocescope_analysis::check::judge(&d.frame) else { return ControlFlow::Continue(()) };
        totals.add(&v);
        if !v.problems.is_empty() && writeln!(out, "frame {}: {}", rec.number, v.problems.join("; ")).is_err() {
            closed = true;
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });
    if closed {
        return Ok(1);
    }
    if let Err(e) = r {
        let _ = out.flush();
        return Err(Failure::Input(file.into(), e));
    }
    drop(bar);
    eprintln!("{totals}");
    Ok(if totals.bad > 0 { 1 } else { 0 })
}
