//! `rocescope`: command-line parsing only; the work is in the library.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use rocescope::capture::{self, CaptureError};
use rocescope::output::{self, Column};
use rocescope_codec::{DecodeOptions, Frame, FIELDS};

#[derive(Parser)]
#[command(name = "rocescope", version, about = "Decode and analyse RoCE (RDMA over Converged Ethernet) captures")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
    Fields,
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
    },
    /// Validate ICRCs and lengths: one line per bad packet; exit 1 if any.
    Check { file: String },
    /// List every field name the decoder can print, with its type and description.
    Fields,
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
        Cmd::Decode { file, format, fields, count, verbose } => decode(&mut out, &file, format, &fields, count, verbose),
        Cmd::Check { file } => check(&mut out, &file),
        Cmd::Fields => list_fields(&mut out).map(|_| 0),
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
) -> Result<u8, Failure> {
    let cols: Vec<Column> = names
        .iter()
        .map(|n| Column::parse(n).ok_or_else(|| Failure::Usage(format!("unknown field '{n}' (see `rocescope fields`)"))))
        .collect::<Result<_, _>>()?;
    if matches!(format, Format::Fields) && cols.is_empty() {
        return Err(Failure::Usage("--format fields needs at least one -e NAME".into()));
    }
    let mut reader = capture::open(file).map_err(|e| Failure::Input(file.into(), e))?;
    let opts = DecodeOptions::default();
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
        let frame = match rocescope::link_type(rec.linktype) {
            Some(lt) => Frame::parse(lt, rec.data, rec.orig_len as usize, &opts),
            None => Frame::parse(rocescope_codec::LinkType::RawIp, &[], 0, &opts),
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
    Ok(0)
}

fn check(out: &mut impl Write, file: &str) -> Result<u8, Failure> {
    let mut reader = capture::open(file).map_err(|e| Failure::Input(file.into(), e))?;
    let opts = DecodeOptions::default();
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
        let Some(lt) = rocescope::link_type(rec.linktype) else { continue };
        let frame = Frame::parse(lt, rec.data, rec.orig_len as usize, &opts);
        if frame.roce().is_none() && frame.warnings.is_empty() {
            continue;
        }
        roce += frame.roce().is_some() as u64;
        let problems: Vec<String> = frame
            .warnings
            .iter()
            .filter(|w| !matches!(w, rocescope_codec::Warning::Truncated { .. }))
            .map(|w| w.to_string())
            .collect();
        if frame.truncated() {
            truncated += 1;
        }
        if !problems.is_empty() {
            bad += 1;
            if writeln!(out, "frame {}: {}", rec.number, problems.join("; ")).is_err() {
                return Ok(1);
            }
        }
    }
    eprintln!("{roce} RoCE packets checked: {bad} bad, {truncated} truncated (ICRC not verifiable)");
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
