//! The loops behind `decode` and `check`: a [`Session`] over the capture, each frame handed to
//! the analysis library's output format or verdict, a progress bar on a terminal.

use std::io::{self, Write};
use std::ops::ControlFlow;

use rocescope_analysis::capture::{self, CaptureError};
use rocescope_analysis::output::{self, Column};
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::Decoder;

use crate::{progress, Format};

/// How a run ended.
pub enum Failure {
    /// The input is unusable (exit 2).
    Input(String, CaptureError),
    /// Bad arguments (exit 2).
    Usage(String),
}

pub fn decode(
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

pub fn check(out: &mut impl Write, file: &str, decoder: Decoder) -> Result<u8, Failure> {
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
