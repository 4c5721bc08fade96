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

#[allow(clippy::too_many_arguments)]
pub fn decode(
    out: &mut impl Write,
    file: &str,
    format: Format,
    names: &[String],
    count: Option<u64>,
    verbose: bool,
    analysis: bool,
    profile: &crate::ProfileArgs,
) -> Result<u8, Failure> {
    use rocescope_analysis::analyze::{fields, pkt::Pkt, run, Analyzer, Options};
    let cols: Vec<Column> = names
        .iter()
        .map(|n| Column::parse(n).ok_or_else(|| Failure::Usage(format!("unknown field '{n}' (see `rocescope fields`)"))))
        .collect::<Result<_, _>>()?;
    if matches!(format, Format::Fields) && cols.is_empty() {
        return Err(Failure::Usage("--format fields needs at least one -e NAME".into()));
    }
    // The analysis fields: a first pass makes the timeline; the second replays the analyser in
    // step with the decoding.
    let analysis = analysis || cols.iter().any(|c| matches!(c, Column::Analysis(_)));
    let mut notes: Option<(fields::EventNotes, Analyzer)> = None;
    if analysis {
        if file == "-" {
            return Err(Failure::Usage("the analysis fields need a file (the capture is read twice), not standard input".into()));
        }
        let reader = capture::open(file).map_err(|e| Failure::Input(file.into(), e))?;
        let mut s = Session::new(reader, profile.decoder());
        let bar = progress::FileBar::for_file(file);
        let mut a = run::analyze(&mut s, Options::default(), run::Window::default(), |rec| bar.tick(rec.number, rec.offset))
            .map_err(|e| Failure::Input(file.into(), e))?;
        drop(bar);
        let mut n = fields::EventNotes::from_timeline(&a.timeline());
        (n.ranges, n.msns) = a.message_tables();
        notes = Some((n, Analyzer::new(Options { keep_events: false, ..Options::default() })));
    }
    let reader = capture::open(file).map_err(|e| Failure::Input(file.into(), e))?;
    let mut session = Session::new(reader, profile.decoder());
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
        let live = notes.as_mut().map(|(_, a)| {
            a.add_noted(&Pkt::from_decoded(frame, rec.number, rec.ts_ns, rec.interface, rec.orig_len))
        });
        let notes = notes.as_ref().map(|(n, _)| n);
        let value = |f: fields::AField, cell: &mut String| {
            if let (Some(n), Some(l)) = (notes, live.as_ref()) {
                fields::write_value(f, n.by_frame.get(&rec.number), l, n, cell);
            }
        };
        let ok = match format {
            Format::Fields => output::write_fields_line_with(out, &cols, rec, frame, &mut cells, value),
            Format::Json => {
                let sep: &[u8] = if first { b"" } else { b",\n" };
                first = false;
                let mut j = output::frame_json(rec, frame);
                if notes.is_some() {
                    add_analysis_json(&mut j, value);
                }
                out.write_all(sep).and_then(|_| serde_json::to_writer(&mut *out, &j).map_err(io::Error::other))
            }
            Format::Text => output::write_summary(out, rec, frame).and_then(|_| {
                if !verbose {
                    return Ok(());
                }
                output::write_tree(out, frame)?;
                if notes.is_some() {
                    write_analysis_tree(out, value)?;
                }
                Ok(())
            }),
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

/// `flows` and `timeline`: one pass of the analysers, then the report in the chosen format.
pub fn analyze(out: &mut impl Write, args: &crate::AnalyzeArgs, timeline: bool) -> Result<u8, Failure> {
    use rocescope_analysis::analyze::{render, run, Options};
    let file = &args.file;
    let reader = capture::open(file).map_err(|e| Failure::Input(file.into(), e))?;
    // The analysers never read checksums: verify only what detection compares.
    let mut session = Session::new(reader, args.profile.decoder().checksums_for_detection_only());
    let bar = progress::FileBar::for_file(file);
    if args.svg.is_some() && !timeline {
        return Err(Failure::Usage("--svg is an option of `rocescope timeline`".into()));
    }
    let opts = Options { keep_events: timeline, link_gbps: args.link_gbps, plot: args.svg.is_some(), ..Options::default() };
    let window = run::Window { from_s: args.from, to_s: args.to };
    let mut a = run::analyze(&mut session, opts, window, |rec| bar.tick(rec.number, rec.offset))
        .map_err(|e| Failure::Input(file.into(), e))?;
    drop(bar);
    let keep = |id: &str, destqp: u32, peer: Option<&str>| {
        let by_flow = args.flow.is_empty()
            || args.flow.iter().any(|f| f == id || id.split(['@', '#']).next() == Some(f.as_str()));
        let by_qpn = args.qpn.is_empty() || args.qpn.contains(&destqp) || peer.is_some_and(|p| args.qpn.iter().any(|q| p.ends_with(&format!("/{q}")) || p.contains(&format!("/{q}@")) || p.contains(&format!("/{q}#"))));
        by_flow && by_qpn
    };
    let r = if timeline {
        let mut t = a.timeline();
        let series = a.series();
        let mut kept = Vec::new();
        let mut flows = Vec::new();
        for (f, s) in std::mem::take(&mut t.flows).into_iter().zip(series) {
            if keep(&f.id, f.destqp, f.peer.as_deref()) {
                kept.push(s);
                flows.push(f);
            }
        }
        t.flows = flows;
        if let Some(svg) = &args.svg {
            write_svgs(svg, &t, &kept, args.flow.len() == 1)?;
        }
        match args.format {
            crate::TableFormat::Json => serde_json::to_writer(&mut *out, &t).map_err(io::Error::other).and_then(|_| writeln!(out)),
            crate::TableFormat::Csv => render::timeline_csv(out, &t),
            crate::TableFormat::Text => render::timeline_text(out, &t),
        }
    } else {
        let mut t = a.flows();
        t.flows.retain(|f| keep(&f.id, f.destqp, f.peer.as_deref()));
        match args.format {
            crate::TableFormat::Json => serde_json::to_writer(&mut *out, &t).map_err(io::Error::other).and_then(|_| writeln!(out)),
            crate::TableFormat::Csv => render::flows_csv(out, &t),
            crate::TableFormat::Text => render::flows_text(out, &t),
        }
    };
    let _ = r;
    Ok(0)
}

/// `--svg`: one plot per flow that carries data and `overview.svg` into a directory, or with
/// one `--flow` the flow's plot into a file.
fn write_svgs(
    path: &str,
    t: &rocescope_analysis::analyze::report::TimelineReport,
    series: &[Option<&rocescope_analysis::analyze::series::Series>],
    one: bool,
) -> Result<(), Failure> {
    use rocescope_analysis::analyze::plot;
    let io = |e: io::Error| Failure::Usage(format!("{path}: {e}"));
    let empty = rocescope_analysis::analyze::series::Series::default();
    if one {
        let (Some(f), s) = (t.flows.first(), series.first().copied().flatten()) else {
            return Err(Failure::Usage("--flow matched no flow".into()));
        };
        return std::fs::write(path, plot::flow_svg(f, s.unwrap_or(&empty))).map_err(io);
    }
    std::fs::create_dir_all(path).map_err(io)?;
    for (f, s) in t.flows.iter().zip(series) {
        let s = s.unwrap_or(&empty);
        if s.originals.is_empty() && f.retransmissions.is_empty() {
            continue;
        }
        let name: String = f.id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect();
        std::fs::write(std::path::Path::new(path).join(format!("{name}.svg")), plot::flow_svg(f, s)).map_err(io)?;
    }
    std::fs::write(std::path::Path::new(path).join("overview.svg"), plot::overview_svg(t, series)).map_err(io)
}

/// The analysis fields a frame has, as JSON keys (values typed as the registry's are).
fn add_analysis_json(j: &mut serde_json::Value, mut value: impl FnMut(rocescope_analysis::analyze::fields::AField, &mut String)) {
    use rocescope_analysis::analyze::fields::ANALYSIS_FIELDS;
    use rocescope_codec::FieldType;
    let Some(m) = j.as_object_mut() else { return };
    let mut cell = String::new();
    for d in ANALYSIS_FIELDS {
        cell.clear();
        value(d.field, &mut cell);
        if cell.is_empty() {
            continue;
        }
        let v = match d.ty {
            FieldType::Bool => serde_json::Value::Bool(cell == "1"),
            FieldType::UInt(64) => serde_json::Value::String(cell.clone()),
            FieldType::UInt(_) if d.field == rocescope_analysis::analyze::fields::AField::MessageComplete => {
                serde_json::Value::Array(cell.split(',').filter_map(|x| x.parse::<u64>().ok()).map(Into::into).collect())
            }
            FieldType::UInt(_) => cell.parse::<u64>().map_or_else(|_| cell.clone().into(), Into::into),
            _ => serde_json::Value::String(cell.clone()),
        };
        m.insert(d.name.into(), v);
    }
}

/// The analysis fields under a frame's `-V` tree.
fn write_analysis_tree(out: &mut impl Write, mut value: impl FnMut(rocescope_analysis::analyze::fields::AField, &mut String)) -> io::Result<()> {
    let mut cell = String::new();
    for d in rocescope_analysis::analyze::fields::ANALYSIS_FIELDS {
        cell.clear();
        value(d.field, &mut cell);
        if !cell.is_empty() {
            writeln!(out, "    {}: {}", d.name, cell)?;
        }
    }
    Ok(())
}
