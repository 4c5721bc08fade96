//! `rocescope export`: captures and their analysis as Apache Parquet (the library:
//! `rocescope-export`; docs/cluster.md): arguments, names, progress, the summary.

use clap::Args;

use crate::{progress, Failure, ProfileArgs};

#[derive(Args)]
pub(crate) struct ExportArgs {
    /// The captures (pcap or pcapng, also gzip- or Zstandard-compressed).
    #[arg(required_unless_present = "schema")]
    pub files: Vec<String>,
    /// The output folder: a folder per table (packets, flows, messages, events), a Parquet
    /// file per capture in each.
    #[arg(short = 'o', long = "out", value_name = "DIR", required_unless_present = "schema")]
    pub out: Option<String>,
    /// Hive-style partition folders for these captures, KEY=VALUE[,KEY=VALUE…], e.g.
    /// `host=h1,date=2026-11-29` (engines read them back as columns); a VALUE of @hardware,
    /// @os, @application, @comment (pcapng's section header), @interface,
    /// @interface_description (each interface's rows to their own folder), @date (the first
    /// frame's UTC date) or @file is taken from each capture.
    #[arg(long, value_name = "KEY=VALUE,…")]
    pub partition: Option<String>,
    /// Judge each capture against the reference stacks as `rocescope replay` does (stack auto,
    /// its default windows and timers) and add its findings to `events` (kind `departure` or
    /// `ambiguous`, with the rule, the frames, what was expected and what was seen). Reads
    /// each capture twice more.
    #[arg(long)]
    pub replay: bool,
    /// Print the packets table's schema (Markdown: column, type, registry field, description)
    /// and exit.
    #[arg(long)]
    pub schema: bool,
    #[command(flatten)]
    pub profile: ProfileArgs,
}

pub(crate) fn run(out: &mut impl std::io::Write, args: &ExportArgs) -> Result<u8, Failure> {
    if args.schema {
        let _ = out.write_all(rocescope_export::schema::schema_markdown().as_bytes());
        return Ok(0);
    }
    if args.files.iter().any(|f| f == "-") {
        return Err(Failure::Usage(
            "export reads each capture more than once (the analysis, then the packets): give files, not standard input"
                .into(),
        ));
    }
    let dir = std::path::PathBuf::from(args.out.as_deref().unwrap_or("."));
    let partition = rocescope_export::partition::Partition::parse(args.partition.as_deref().unwrap_or(""))
        .map_err(Failure::Usage)?;
    partition.check_keys(&rocescope_export::column_names()).map_err(Failure::Usage)?;
    let replay = args.replay.then(|| rocescope_replay::Options {
        params: args.profile.params.params,
        ..rocescope_replay::Options::default()
    });
    let mut names = std::collections::HashSet::new();
    let mut status = 0;
    for file in &args.files {
        // (Two captures of one name get -2, -3, … in the export.)
        let stem = rocescope_export::file_stem(file);
        let mut name = stem.clone();
        let mut k = 1;
        while !names.insert(name.clone()) {
            k += 1;
            name = format!("{stem}-{k}");
        }
        let bar = progress::FileBar::for_file(file);
        let mut shown = 0;
        let r = rocescope_export::export_capture(
            file,
            &name,
            &dir,
            &partition,
            &|| args.profile.decoder(),
            replay.as_ref(),
            &mut |pass, n, o| {
                if pass != shown {
                    // (The second pass over the file: the bar starts again, named for it.)
                    shown = pass;
                    bar.restart("packets");
                }
                bar.tick(n, o)
            },
        );
        drop(bar);
        match r {
            Ok(e) => eprintln!(
                "rocescope export: {file}: {} frames, {} flows, {} messages, {} events",
                e.frames, e.flows, e.messages, e.events
            ),
            Err(rocescope_export::ExportError::Output(m)) => return Err(Failure::Usage(m)),
            Err(e) => {
                // (The frames before the damage are exported; the next captures still are.)
                eprintln!("rocescope: {e}");
                status = 2;
            }
        }
    }
    Ok(status)
}
