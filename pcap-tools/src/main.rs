//! `rocescope`: command-line parsing only; the work is in the library.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use rocescope::capture::{self, CaptureError};
use rocescope::output::{self, Column};
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice, Selector};
use rocescope_codec::{FlorAckSetMeans, ImmSplit, Params, Profile, FIELDS};

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
    Synth(rocescope::fabric::synth::SynthArgs),
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
        Cmd::Fields => list_fields(&mut out).map(|_| 0),
        Cmd::Dissector => {
            let _ = out.write_all(rocescope::lua::dissector().as_bytes());
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

/// Output errors (a closed pipe) end the run quietly.
fn io_ok(r: io::Result<()>) -> Result<bool, Failure> {
    Ok(r.is_ok())
}

fn decode(
    out: &mut impl Write,
    file: &str,
    format: Format,
    names: &[String],
    count: Option<u64>,
    verbose: bool,
    mut decoder: Decoder,
) -> Result<u8, Failure> {
    let cols: Vec<Column> = names
        .iter()
        .map(|n| Column::parse(n).ok_or_else(|| Failure::Usage(format!("unknown field '{n}' (see `rocescope fields`)"))))
        .collect::<Result<_, _>>()?;
    if matches!(format, Format::Fields) && cols.is_empty() {
        return Err(Failure::Usage("--format fields needs at least one -e NAME".into()));
    }
    let mut reader = capture::open(file).map_err(|e| Failure::Input(file.into(), e))?;
    let progress = Progress::for_file(file);
    let mut cells = Vec::new();
    let mut first = true;
    if matches!(format, Format::Json) && !io_ok(out.write_all(b"[\n"))? {
        return Ok(0);
    }
    loop {
        if count.is_some_and(|c| reader.offset() > 0 && c == 0) {
            break;
        }
        let rec = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                if matches!(format, Format::Json) {
                    let _ = out.write_all(b"\n]\n");
                }
                let _ = out.flush();
                return Err(Failure::Input(file.into(), e));
            }
        };
        if count.is_some_and(|c| rec.number > c) {
            break;
        }
        progress.tick(rec.number, rec.offset);
        let frame = match rocescope::link_type(rec.linktype) {
            Some(lt) => decoder.decode(lt, rec.data, rec.orig_len as usize),
            // A link type rocescope does not decode: the frame is listed, not decoded.
            None => rocescope_codec::decoder::Decoded {
                frame: rocescope_codec::Frame::new(rocescope_codec::LinkType::RawIp, &[]),
                extra: Default::default(),
                nacks: None,
            },
        };
        let ok = match format {
            Format::Fields => output::write_fields_line(out, &cols, &rec, &frame, &mut cells),
            Format::Json => {
                let sep: &[u8] = if first { b"" } else { b",\n" };
                first = false;
                out.write_all(sep).and_then(|_| {
                    serde_json::to_writer(&mut *out, &output::frame_json(&rec, &frame)).map_err(io::Error::other)
                })
            }
            Format::Text => output::write_summary(out, &rec, &frame).and_then(|_| {
                if verbose {
                    output::write_tree(out, &frame)
                } else {
                    Ok(())
                }
            }),
        };
        if !io_ok(ok)? {
            return Ok(0);
        }
    }
    if matches!(format, Format::Json) {
        let _ = out.write_all(b"\n]\n");
    }
    drop(progress);
    report_detection(&decoder);
    Ok(0)
}

/// A progress bar over the input file's bytes, on standard error, for long runs: only when
/// standard error is a terminal and standard output is not (so the bar never mixes with the
/// output), and only for a regular file of known size.
struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    fn for_file(path: &str) -> Progress {
        use std::io::IsTerminal;
        let len = std::fs::metadata(path).ok().filter(|m| m.is_file()).map(|m| m.len());
        let show = path != "-" && io::stderr().is_terminal() && !io::stdout().is_terminal();
        Progress(len.filter(|_| show).map(|len| {
            let bar = indicatif::ProgressBar::new(len);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} {bytes}/{total_bytes} · {msg} frames · {elapsed}")
                    .expect("valid template"),
            );
            bar
        }))
    }

    #[inline]
    fn tick(&self, frame: u64, offset: u64) {
        if let Some(bar) = &self.0 {
            if frame % 4096 == 0 {
                bar.set_position(offset);
                bar.set_message(frame.to_string());
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

/// In `auto` mode, says how many packets detection could not classify.
fn report_detection(decoder: &Decoder) {
    let s = decoder.stats();
    if decoder.options().profile == ProfileChoice::Auto && s.flows_unsure > 0 {
        eprintln!(
            "rocescope: auto: {} packets in {} flows could not be classified and were decoded as std (see their warnings)",
            s.packets_unsure, s.flows_unsure
        );
    }
}

fn check(out: &mut impl Write, file: &str, mut decoder: Decoder) -> Result<u8, Failure> {
    let mut reader = capture::open(file).map_err(|e| Failure::Input(file.into(), e))?;
    let progress = Progress::for_file(file);
    let (mut roce, mut bad, mut truncated) = (0u64, 0u64, 0u64);
    loop {
        let rec = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                let _ = out.flush();
                return Err(Failure::Input(file.into(), e));
            }
        };
        progress.tick(rec.number, rec.offset);
        let Some(lt) = rocescope::link_type(rec.linktype) else { continue };
        let frame = decoder.decode(lt, rec.data, rec.orig_len as usize).frame;
        // RoCE only: a RoCE packet, or a frame to UDP 4791 or a GRH too broken to hold one.
        // Other traffic is not ours to judge (a host capture's IPv4 checksums are often left
        // to the NIC).
        let port = rocescope_codec::frame::ROCEV2_PORT;
        let rocev2 = frame.udp_ports().is_some_and(|(s, d)| s == port || d == port);
        if frame.roce().is_none() && !rocev2 && !frame.is_rocev1() {
            continue;
        }
        let is_roce = frame.roce().is_some();
        roce += is_roce as u64;
        // Integrity failures only: unknown opcodes and the like are flagged by `decode`, not
        // failures (WIRE.md A.4), and bytes the capture did not keep are counted apart.
        let mut problems: Vec<String> =
            frame.warnings.iter().filter(|w| w.is_integrity_failure()).map(|w| w.to_string()).collect();
        let icrc_listed = frame.warnings.iter().any(|w| matches!(w, rocescope_codec::Warning::IcrcMismatch { .. }));
        if frame.icrc_status() == rocescope_codec::IcrcStatus::Bad && !icrc_listed {
            // Its warning did not fit in the frame's list (`Warnings::CAPACITY`).
            problems.push("ICRC mismatch".into());
        }
        if is_roce && frame.truncated() {
            truncated += 1;
        }
        if !problems.is_empty() {
            bad += 1;
            if writeln!(out, "frame {}: {}", rec.number, problems.join("; ")).is_err() {
                return Ok(1);
            }
        }
    }
    drop(progress);
    eprintln!("{roce} RoCE packets checked: {bad} bad, {truncated} cut short by the capture (ICRC not verifiable)");
    Ok(if bad > 0 { 1 } else { 0 })
}

fn list_fields(out: &mut impl Write) -> Result<(), Failure> {
    let mut w = || -> io::Result<()> {
        for f in FIELDS {
            let ty = match f.ty {
                rocescope_codec::FieldType::UInt(n) => format!("uint{n}"),
                rocescope_codec::FieldType::Bool => "bool".into(),
                rocescope_codec::FieldType::Bytes => "bytes".into(),
                rocescope_codec::FieldType::Enum => format!("enum({})", f.values.join("|")),
                rocescope_codec::FieldType::Text => "text".into(),
            };
            writeln!(out, "{}\t{}\t{}", f.name, ty, f.desc)?;
        }
        for (name, _, desc) in output::Meta::ALL {
            writeln!(out, "{name}\tmeta\t{desc}")?;
        }
        Ok(())
    };
    let _ = w();
    Ok(())
}
