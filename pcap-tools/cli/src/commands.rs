//! The loops behind `decode` and `check`: a [`Session`] over the capture, each frame handed to
//! the analysis library's output format or verdict, a progress bar on a terminal.

use std::io::{self, Write};
use std::ops::ControlFlow;

use rocescope_analysis::capture::{self, CaptureError};
use rocescope_analysis::filter::Filter;
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

pub fn decode(out: &mut impl Write, args: crate::DecodeArgs) -> Result<u8, Failure> {
    use rocescope_analysis::analyze::{fields, pkt::Pkt, Analyzer};
    let crate::DecodeArgs { file, read, format, fields: names, layout, filter, time, count, verbose, hex, analysis, profile } = args;
    let file = &crate::capture_file(file, read)?;
    // `-e` alone means the fields format (tshark needs `-T fields`; rocescope infers it).
    let format = format.unwrap_or(if names.is_empty() { Format::Text } else { Format::Fields });
    if verbose && !matches!(format, Format::Text) {
        return Err(Failure::Usage(format!(
            "-V prints every field under the text summary; it does not combine with --format {}",
            if matches!(format, Format::Json) { "json (which holds every field already)" } else { "fields" }
        )));
    }
    let mut style = output::FieldsStyle::default();
    for option in &layout {
        style.set(option).map_err(Failure::Usage)?;
    }
    if !layout.is_empty() && !matches!(format, Format::Fields) {
        return Err(Failure::Usage("-E sets the layout of --format fields (give -e NAME)".into()));
    }
    let mut filter = match &filter {
        Some(text) => Some(Filter::parse(text).map_err(|e| Failure::Usage(format!("-Y: {e}")))?),
        None => None,
    };
    // Checksums are verified only where the output shows their verdict (text and JSON show
    // every field; `fields` and `-Y` when they read a verdict or the warnings); elsewhere only
    // where detection compares decodings, which labels as full verification does.
    let shows_checksums = !matches!(format, Format::Fields)
        || names.iter().filter_map(|n| rocescope_codec::FieldId::from_name(n)).any(|id| id.shows_verification())
        || filter.as_ref().is_some_and(|f| rocescope_codec::FIELDS.iter().any(|d| d.id.shows_verification() && f.reads(d.id)));
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
        notes = Some(analysis_pass(file, &profile)?);
    }
    // Packet comments `rocescope annotate` could not have written (malformed options) are
    // reported once, with their count.
    let mut bad_comments: (u64, Option<CaptureError>) = (0, None);
    let reads_comments = cols.iter().any(|c| matches!(c, Column::Replay(_)));
    let decoder = if shows_checksums { profile.decoder() } else { profile.decoder().checksums_for_detection_only() };
    let mut session = printing_session(file, decoder)?;
    let bar = progress::FileBar::for_file(file);
    let header = matches!(format, Format::Fields) && style.header;
    let mut fields_out = output::FieldsWriter::new(cols, style);
    let mut first = true;
    let json = matches!(format, Format::Json);
    // Output errors (a closed pipe) end the run quietly.
    if json && out.write_all(b"[\n").is_err() {
        return Ok(0);
    }
    if header && fields_out.style().write_header(out, &names).is_err() {
        return Ok(0);
    }
    let mut clock = output::Clock::default();
    let mut closed = false;
    let r = session.run(|rec, frame| {
        if count.is_some_and(|c| rec.number > c) {
            return ControlFlow::Break(());
        }
        bar.tick(rec.number, rec.offset);
        let times = clock.read(rec.ts_ns);
        if reads_comments {
            for e in rec.comments().filter_map(Result::err) {
                bad_comments.0 += 1;
                bad_comments.1.get_or_insert(e);
            }
        }
        // The analyser replays every frame, the ones the filter drops too.
        let live = notes.as_mut().map(|(_, a)| {
            a.add_noted(&Pkt::from_decoded(frame, rec.number, rec.ts_ns, rec.interface, rec.orig_len))
        });
        if filter.as_mut().is_some_and(|f| !f.matches(rec, &times, frame)) {
            return ControlFlow::Continue(());
        }
        clock.displayed(&times);
        let notes = notes.as_ref().map(|(n, _)| n);
        let value = |f: fields::AField, cell: &mut String| {
            if let (Some(n), Some(l)) = (notes, live.as_ref()) {
                fields::write_value(f, n.by_frame.get(&rec.number), l, n, cell);
            }
        };
        let ok = match format {
            Format::Fields => fields_out.write(out, rec, frame, &times, value),
            Format::Json => {
                let sep: &[u8] = if first { b"" } else { b",\n" };
                first = false;
                let mut j = output::frame_json(rec, frame, &times);
                if notes.is_some() {
                    add_analysis_json(&mut j, value);
                }
                add_replay_json(&mut j, rec);
                out.write_all(sep).and_then(|_| serde_json::to_writer(&mut *out, &j).map_err(io::Error::other))
            }
            Format::Text => output::write_summary(out, rec, frame, &times, time).and_then(|_| {
                if verbose {
                    rocescope_analysis::tree::write_tree(out, rec, frame)?;
                    if notes.is_some() {
                        write_analysis_tree(out, value)?;
                    }
                    write_replay_tree(out, rec)?;
                }
                if hex {
                    rocescope_analysis::tree::write_hex(out, rec.data)?;
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
    warn_bad_comments(file, bad_comments);
    Ok(0)
}

/// The warning about malformed packet options (the frames themselves were read).
pub(crate) fn warn_bad_comments(file: &str, (count, first): (u64, Option<CaptureError>)) {
    if let Some(e) = first {
        let more = if count > 1 { format!(" (and {} more)", count - 1) } else { String::new() };
        eprintln!("rocescope: warning: {file}: {e}{more}; such packet options are skipped");
    }
}

/// The first pass of the per-packet analysis fields (`decode -e rocescope.analysis.*`,
/// `annotate`): the timeline's notes by frame, and the analyser the second pass replays in step
/// with the decoding.
pub(crate) fn analysis_pass(
    file: &str,
    profile: &crate::ProfileArgs,
) -> Result<(rocescope_analysis::analyze::fields::EventNotes, rocescope_analysis::analyze::Analyzer), Failure> {
    use rocescope_analysis::analyze::{fields, run, Analyzer, Options};
    let reader = capture::open(file).map_err(|e| Failure::Input(file.into(), e))?;
    // (The analysers read no checksums: verify only what detection compares, as `analyze` does.)
    let mut s = Session::new(reader, profile.decoder().checksums_for_detection_only());
    let bar = progress::FileBar::for_file(file);
    let mut a = run::analyze(&mut s, Options::default(), run::Window::default(), |rec| bar.tick(rec.number, rec.offset))
        .map_err(|e| Failure::Input(file.into(), e))?;
    drop(bar);
    let (t, messages) = a.timeline_and_messages();
    let n = fields::EventNotes::new(&t, messages);
    let opts = Options::with_params(Options { keep_events: false, ..Options::default() }, &s.decoder().options().params);
    Ok((n, Analyzer::new(opts)))
}

/// The session of a command that prints every packet (`decode`, `check`): over a file, `auto`
/// detection first reads it whole, so every flow is decided before its first packet is printed;
/// standard input can be read once only, so detection holds frames back there (a bounded
/// look-ahead, `rocescope_analysis::session`).
pub(crate) fn printing_session(file: &str, decoder: Decoder) -> Result<Session<Box<dyn io::Read + Send>>, Failure> {
    let open = || capture::open(file).map_err(|e| Failure::Input(file.into(), e));
    let session = Session::new(open()?, decoder);
    Ok(if file == "-" { session } else { session.with_detection_pass(open()?) })
}

/// `check`: each frame (up to `-c N`, those `-Y` keeps) judged; exit 1 when any is bad.
pub fn check(
    out: &mut impl Write,
    file: &str,
    count: Option<u64>,
    filter: Option<&str>,
    decoder: Decoder,
) -> Result<u8, Failure> {
    let mut filter = match filter {
        Some(text) => Some(Filter::parse(text).map_err(|e| Failure::Usage(format!("-Y: {e}")))?),
        None => None,
    };
    let mut session = printing_session(file, decoder)?;
    let bar = progress::FileBar::for_file(file);
    let mut totals = rocescope_analysis::check::Totals::default();
    let mut closed = false;
    let mut clock = output::Clock::default();
    let r = session.run(|rec, d| {
        if count.is_some_and(|c| rec.number > c) {
            return ControlFlow::Break(());
        }
        bar.tick(rec.number, rec.offset);
        let times = clock.read(rec.ts_ns);
        if filter.as_mut().is_some_and(|f| !f.matches(rec, &times, d)) {
            return ControlFlow::Continue(());
        }
        clock.displayed(&times);
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
    drop(bar);
    // The summary of the frames judged, also when the file turns out damaged part-way (then the
    // located error follows, exit 2).
    eprintln!("{totals}");
    if let Err(e) = r {
        let _ = out.flush();
        return Err(Failure::Input(file.into(), e));
    }
    Ok(if totals.bad > 0 { 1 } else { 0 })
}

/// `flows` and `timeline`: one pass of the analysers, then the report in the chosen format.
pub fn analyze(out: &mut impl Write, args: &crate::AnalyzeArgs, timeline: bool) -> Result<u8, Failure> {
    use rocescope_analysis::analyze::{render, run, Options};
    let file = &args.file;
    let reader = capture::open(file).map_err(|e| Failure::Input(file.into(), e))?;
    // The analysers never read checksums: verify only what detection compares.
    let session = Session::new(reader, args.profile.decoder().checksums_for_detection_only());
    let bar = progress::FileBar::for_file(file);
    if args.svg.is_some() && !timeline {
        return Err(Failure::Usage("--svg is an option of `rocescope timeline`".into()));
    }
    let opts = Options {
        keep_events: timeline,
        link_gbps: args.link_gbps,
        plot: args.svg.is_some(),
        spill_to_file: timeline,
        ..Options::default()
    };
    let window = run::Window { from_s: args.from, to_s: args.to };
    // An unusable stretch of the file ends the reading: the frames before it are reported, then
    // the error (exit 2), as `decode` prints the frames before it.
    let (mut a, read) = run::analyze_threaded(session, opts, window, |number, offset| bar.tick(number, offset));
    drop(bar);
    // A flow is kept when --flow names it (its id, or its SRC>DST/DESTQP part) and --qpn names
    // its DestQP or its peer's.
    // (Which --flow ids matched a flow, whatever --qpn says: the others are named on standard
    // error, as a typo would otherwise give an empty report without a word.)
    let matched = std::cell::RefCell::new(vec![false; args.flow.len()]);
    let keep = |id: &str, destqp: u32, peer: Option<&str>| {
        let mut by_flow = args.flow.is_empty();
        for (f, m) in args.flow.iter().zip(matched.borrow_mut().iter_mut()) {
            if f == id || base_id(id) == f {
                *m = true;
                by_flow = true;
            }
        }
        let peer_qp = peer.and_then(|p| base_id(p).rsplit_once('/')).and_then(|(_, q)| q.parse::<u32>().ok());
        let by_qpn = args.qpn.is_empty() || args.qpn.contains(&destqp) || peer_qp.is_some_and(|q| args.qpn.contains(&q));
        by_flow && by_qpn
    };
    let r = if timeline {
        write_timeline(out, &mut a, args, &keep)
    } else {
        let mut t = a.flows();
        t.flows.retain(|f| keep(&f.id, f.destqp, f.peer.as_deref()));
        match args.format {
            crate::TableFormat::Json => serde_json::to_writer(&mut *out, &t).map_err(io::Error::other).and_then(|_| writeln!(out)),
            crate::TableFormat::Csv => render::flows_csv(out, &t),
            crate::TableFormat::Text => render::flows_text(out, &t),
        }
    };
    for (f, _) in args.flow.iter().zip(matched.borrow().iter()).filter(|(_, m)| !**m && r.is_ok()) {
        eprintln!("rocescope: warning: {file}: --flow {f} matches no flow (`rocescope flows` lists them)");
    }
    if let Err(e) = r {
        // A closed pipe ends the output quietly; anything else is the plots' directory.
        if e.kind() != io::ErrorKind::BrokenPipe {
            return Err(Failure::Usage(e.to_string()));
        }
    }
    if let Err(e) = read {
        let _ = out.flush();
        return Err(Failure::Input(file.into(), e));
    }
    Ok(0)
}

/// The timeline written one flow at a time (JSON as one document, INTERFACES.md; text; CSV),
/// and with `--svg` each flow's plot and the overview.
fn write_timeline(
    out: &mut impl Write,
    a: &mut rocescope_analysis::analyze::Analyzer,
    args: &crate::AnalyzeArgs,
    keep: &dyn Fn(&str, u32, Option<&str>) -> bool,
) -> io::Result<()> {
    use rocescope_analysis::analyze::{plot, render, report::TimelineReport, series::Series};
    let svg = args.svg.as_deref();
    let one = args.flow.len() == 1;
    if let Some(dir) = svg.filter(|_| !one) {
        std::fs::create_dir_all(dir)?;
    }
    match args.format {
        crate::TableFormat::Json => out.write_all(b"{\"flows\":[")?,
        crate::TableFormat::Csv => render::timeline_csv_header(out)?,
        // As text, the flow table comes first (as tcptrace lists its connections before their
        // details), then each flow's events.
        crate::TableFormat::Text => {
            let mut t = a.flows();
            t.flows.retain(|f| keep(&f.id, f.destqp, f.peer.as_deref()));
            render::flows_text(out, &t)?;
            writeln!(out)?;
        }
    }
    // The overview needs every flow, but only its messages and plot points: the flows' reports
    // without their events.
    let mut overview = TimelineReport { flows: Vec::new() };
    let mut overview_series: Vec<Option<Series>> = Vec::new();
    let mut first = true;
    let mut wrote_one = false;
    let empty = Series::default();
    a.each_flow_timeline(|f, s| -> io::Result<()> {
        if !keep(&f.id, f.destqp, f.peer.as_deref()) {
            return Ok(());
        }
        match args.format {
            crate::TableFormat::Json => {
                if !first {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, &f).map_err(io::Error::other)?;
            }
            crate::TableFormat::Csv => render::timeline_csv_flow(out, &f)?,
            crate::TableFormat::Text => render::timeline_text_flow(out, &f)?,
        }
        first = false;
        if let Some(path) = svg {
            let series = s.unwrap_or(&empty);
            if one {
                if !wrote_one {
                    std::fs::write(path, plot::flow_svg(&f, series))?;
                    wrote_one = true;
                }
            } else {
                if !(series.originals.is_empty() && f.retransmissions.is_empty()) {
                    let name: String = f.id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect();
                    std::fs::write(std::path::Path::new(path).join(format!("{name}.svg")), plot::flow_svg(&f, series))?;
                }
                let mut light = f;
                light.losses = Vec::new();
                light.retransmissions = Vec::new();
                light.capture_gaps = Vec::new();
                overview.flows.push(light);
                overview_series.push(s.cloned());
            }
        }
        Ok(())
    })?;
    if let crate::TableFormat::Json = args.format {
        out.write_all(b"]}\n")?;
    }
    if let Some(dir) = svg {
        if one && !wrote_one {
            return Err(io::Error::other("--flow matched no flow"));
        }
        if !one {
            let refs: Vec<Option<&Series>> = overview_series.iter().map(|s| s.as_ref()).collect();
            std::fs::write(std::path::Path::new(dir).join("overview.svg"), plot::overview_svg(&overview, &refs))?;
        }
    }
    Ok(())
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

/// The replay fields of an annotated frame (its rocescope comment) as JSON keys: booleans, and
/// the per-finding fields as arrays (numbers for `cause`).
fn add_replay_json(j: &mut serde_json::Value, rec: &capture::Record<'_>) {
    use rocescope_analysis::annotation::{unescape, RField, REPLAY_FIELDS};
    let Some(comment) = rocescope_analysis::annotation::rocescope_comment(rec) else { return };
    let Some(m) = j.as_object_mut() else { return };
    // (One pass over the comment, the values kept per field in the table's order.)
    let mut values: Vec<Vec<serde_json::Value>> = vec![Vec::new(); REPLAY_FIELDS.len()];
    for (n, v) in rocescope_analysis::annotation::entries(comment) {
        let Some(i) = REPLAY_FIELDS.iter().position(|d| d.name == n) else { continue };
        values[i].push(match REPLAY_FIELDS[i].field {
            RField::Departure | RField::Ambiguous => serde_json::Value::Bool(v == "1"),
            RField::Cause => v.parse::<u64>().map_or_else(|_| unescape(v).into_owned().into(), Into::into),
            _ => unescape(v).into_owned().into(),
        });
    }
    for (d, values) in REPLAY_FIELDS.iter().zip(values) {
        if values.is_empty() {
            continue;
        }
        let v = if d.repeated { serde_json::Value::Array(values) } else { values.into_iter().next().unwrap() };
        m.insert(d.name.into(), v);
    }
}

/// The replay fields of an annotated frame under its `-V` tree, one line per value.
fn write_replay_tree(out: &mut impl Write, rec: &capture::Record<'_>) -> io::Result<()> {
    use rocescope_analysis::annotation::{entries, unescape, RField};
    let Some(comment) = rocescope_analysis::annotation::rocescope_comment(rec) else { return Ok(()) };
    let mut lines = String::new();
    for (n, v) in entries(comment).filter(|(n, _)| RField::from_name(n).is_some()) {
        lines.push_str(&format!("            {n}: {}\n", unescape(v)));
    }
    if lines.is_empty() {
        return Ok(());
    }
    write!(out, "        [RoCE replay (packet comment)]\n{lines}")
}

/// The analysis fields under a frame's `-V` tree.
fn write_analysis_tree(out: &mut impl Write, mut value: impl FnMut(rocescope_analysis::analyze::fields::AField, &mut String)) -> io::Result<()> {
    let mut lines = String::new();
    let mut cell = String::new();
    for d in rocescope_analysis::analyze::fields::ANALYSIS_FIELDS {
        cell.clear();
        value(d.field, &mut cell);
        if !cell.is_empty() {
            lines.push_str(&format!("            {}: {}\n", d.name, cell));
        }
    }
    if lines.is_empty() {
        return Ok(());
    }
    // Under its own heading, as tshark's "[SEQ/ACK analysis]".
    write!(out, "        [RoCE analysis]\n{lines}")
}

/// A flow id without its `@IF` and `#N` parts: `SRC>DST/DESTQP`.
fn base_id(id: &str) -> &str {
    id.split(['@', '#']).next().unwrap_or(id)
}
