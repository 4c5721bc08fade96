//! `rocescope annotate FILE -o OUT.pcapng` (docs/annotate.md): the capture copied with each
//! frame's per-packet analysis fields and replay findings as a pcapng packet comment, which the
//! Wireshark plugin shows as `rocescope.analysis.*` / `rocescope.replay.*` fields and expert
//! infos, and `rocescope decode` reads back.

use std::io::{BufWriter, Write};
use std::ops::ControlFlow;

use clap::Args;
use rocescope_analysis::analyze::{fields, pkt::Pkt};
use rocescope_analysis::annotation;
use rocescope_analysis::capture::{self, annotate::Annotator, annotate::CopyError, CaptureError};
use rocescope_analysis::session::Session;
use rocescope_replay::{self as replay, StackChoice};

use crate::commands::{self, Failure};
use crate::progress;

/// Arguments of `annotate`.
#[derive(Args)]
pub(crate) struct AnnotateArgs {
    /// The capture (a file: it is read several times).
    pub file: String,
    /// The annotated copy (pcapng).
    #[arg(short = 'o', value_name = "OUT.pcapng")]
    pub output: String,
    /// Replay's reference stack: gbn, irn, dcp, or auto (as `rocescope replay --stack`).
    #[arg(long, default_value = "auto", value_parser = crate::replay_cmd::parse_stack)]
    pub stack: StackChoice,
    /// As `rocescope replay --answer-window-us`.
    #[arg(long = "answer-window-us", value_name = "US", default_value_t = 100)]
    pub answer_window_us: u64,
    /// As `rocescope replay --reaction-us`.
    #[arg(long = "reaction-us", value_name = "US", default_value_t = 5)]
    pub reaction_us: u64,
    /// As `rocescope replay --param K=V` (the reference's timers). Repeatable.
    #[arg(long = "param", value_name = "K=V", value_parser = crate::replay_cmd::parse_param)]
    pub param: Vec<(String, u64)>,
    #[command(flatten)]
    pub profile: crate::ProfileArgs,
}

pub(crate) fn run(args: &AnnotateArgs) -> Result<u8, Failure> {
    let file = &args.file;
    if file == "-" {
        return Err(Failure::Usage("annotate reads its capture several times: give a file, not standard input".into()));
    }
    let same = match (std::fs::canonicalize(file), std::fs::canonicalize(&args.output)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        return Err(Failure::Usage(format!("-o {}: the annotated copy cannot replace its input", args.output)));
    }
    // The analysis fields: as `decode -e rocescope.analysis.*` computes them (same passes, same
    // decoder), so the comment holds what `decode` prints.
    let (notes, mut analyzer) = commands::analysis_pass(file, &args.profile)?;
    // Replay's findings.
    let open = || capture::open(file).map_err(|e| Failure::Input(file.into(), e));
    let session =
        || -> Result<_, Failure> { Ok(Session::new(open()?, args.profile.decoder().checksums_for_detection_only())) };
    let opts = replay::Options {
        stack: args.stack,
        answer_window_ns: args.answer_window_us.saturating_mul(1000),
        reaction_ns: args.reaction_us.saturating_mul(1000),
        params: args.profile.params.params,
        timeouts: crate::replay_cmd::timeouts(&args.param),
        cnp_interval_ns: crate::replay_cmd::cnp_interval(&args.param),
        timers_given: args.param.iter().any(|(k, _)| k != "cnp_interval_ns"),
    };
    let report = replay::replay(session()?, session()?, &opts).map_err(|e| Failure::Input(file.into(), e))?;
    let findings = replay::notes_by_frame(&report);
    // The copy, in step with the decoding of `decode`'s second pass.
    let raw = std::fs::File::open(file).map_err(|e| Failure::Input(file.into(), CaptureError::cannot_open(e)))?;
    let raw = capture::compressed::sniffed(raw).map_err(|e| {
        Failure::Input(
            file.into(),
            CaptureError { offset: CaptureError::NOT_LOCATED, message: format!("cannot read: {e}") },
        )
    })?;
    let out = std::fs::File::create(&args.output).map_err(|e| Failure::Usage(format!("-o {}: {e}", args.output)))?;
    let fail = |e: CopyError| -> Failure {
        let _ = std::fs::remove_file(&args.output);
        match e {
            CopyError::Input(e) => Failure::Input(file.into(), e),
            CopyError::Output(e) => Failure::Usage(format!("-o {}: {e}", args.output)),
        }
    };
    // (Buffered: the copy reads each block's header and body apart.)
    let raw = std::io::BufReader::with_capacity(1 << 20, raw);
    let mut copy = Annotator::new(raw, BufWriter::with_capacity(1 << 20, out)).map_err(fail)?;
    let mut s = commands::printing_session(file, args.profile.decoder().checksums_for_detection_only())?;
    let bar = progress::FileBar::for_file(file);
    let mut comment = String::new();
    let (mut frames, mut annotated) = (0u64, 0u64);
    let mut copy_error = None;
    let mut bad_comments: (u64, Option<CaptureError>) = (0, None);
    let r = s.run(|rec, frame| {
        bar.tick(rec.number, rec.offset);
        frames += 1;
        for e in rec.comments().filter_map(Result::err) {
            bad_comments.0 += 1;
            bad_comments.1.get_or_insert(e);
        }
        let live = analyzer.add_noted(&Pkt::from_decoded(frame, rec.number, rec.ts_ns, rec.interface, rec.orig_len));
        let ev = notes.by_frame.get(&rec.number);
        let found = findings.get(&rec.number).map_or(&[][..], Vec::as_slice);
        let has =
            annotation::write_comment(&mut comment, |f, cell| fields::write_value(f, ev, &live, &notes, cell), found);
        annotated += has as u64;
        match copy.frame(rec, has.then_some(comment.as_str())) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                copy_error = Some(e);
                ControlFlow::Break(())
            }
        }
    });
    drop(bar);
    if let Some(e) = copy_error {
        return Err(fail(e));
    }
    if let Err(e) = r {
        return Err(fail(CopyError::Input(e)));
    }
    let malformed = copy.malformed_options;
    let mut out = copy.finish().map_err(fail)?;
    out.flush().map_err(|e| fail(CopyError::Output(e)))?;
    commands::warn_bad_comments(file, bad_comments);
    if malformed > 0 {
        eprintln!("rocescope: warning: {file}: {malformed} packet blocks had malformed options; their malformed tail was dropped from the copy");
    }
    eprintln!(
        "rocescope: {}: {annotated} of {frames} frames annotated ({} departures, {} ambiguous findings)",
        args.output,
        report.departures(),
        report.findings.len() - report.departures()
    );
    Ok(0)
}
