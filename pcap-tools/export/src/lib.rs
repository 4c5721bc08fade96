//! `rocescope export`: captures and what the analysers say of them as Apache Parquet, for the
//! engines users already run (DuckDB on one machine, Spark on many; docs/cluster.md). Its own
//! crate, so that the Parquet writer (arrow-rs `arrow` and `parquet`) stays out of the wasm
//! build.
//!
//! Per capture, four tables, each a folder of Parquet files under the Hive-style partition
//! folders asked for ([`partition`]: `host=h1/date=2026-11-29/`):
//! - `packets/`: one row per frame: the capture columns, the frame's flow, one nullable column
//!   per registry field and the per-packet analysis fields ([`schema`], [`packets`]); a file per
//!   window of rows, sorted by flow and time within it ([`window`]);
//! - `flows/`: `rocescope flows`' rows; `messages/` and `events/` (losses, retransmissions,
//!   capture gaps): `rocescope timeline`'s entries ([`reports`]), joined to `packets` by
//!   (`capture_file`, `frame`) and to `flows` by (`capture_file`, `flow_index`).
//!
//! Two passes over each capture. The first analyses it (as `flows` and `timeline` do: two
//! threads) and writes `flows`, `messages` and `events`, keeping on disk what the second needs
//! of it frame by frame ([`notes`]). The second decodes every frame (as `decode` does: a
//! detection pass first) into the packets windows, which a third thread sorts and writes.
//!
//! Memory: live flows and their messages (and the flow being written out), the packets
//! window being built and the one being written; not the capture's length.

pub mod notes;
pub mod packets;
pub mod partition;
pub mod reports;
pub mod schema;
pub mod window;

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use rocescope_analysis::analyze::render::json_name;
use rocescope_analysis::analyze::{run, Options};
use rocescope_analysis::capture::{self, CaptureError};
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::Decoder;

use partition::{CaptureInfo, Partition};

/// Rows a Parquet row group holds at most (about 16 MB of packets: row groups engines can skip
/// by their statistics).
pub const ROW_GROUP_ROWS: usize = 128 * 1024;

/// Why an export stopped.
#[derive(Debug)]
pub enum ExportError {
    /// A capture could not be read (the frames before the damage are exported).
    Input(String, CaptureError),
    /// An output file could not be written.
    Output(String),
}

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExportError::Input(file, e) => write!(f, "{file}: {e}"),
            ExportError::Output(m) => f.write_str(m),
        }
    }
}

/// What one capture's export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exported {
    pub frames: u64,
    pub flows: u64,
    pub messages: u64,
    pub events: u64,
    pub files: Vec<PathBuf>,
}

/// The writer's settings for a table of `schema`: Snappy, page statistics, bloom filters on
/// the columns users look rows up by (a QPN, an address) when `bloom`, and dictionary encoding
/// only where values repeat: names, texts and enumerations, addresses, 8- and 16-bit fields, and the
/// few 32-bit ones that take few values ([`FEW_VALUES`]). (Every column dictionary-encoded,
/// Parquet's default, the encoder interned every time, frame number and PSN only to fall back
/// to plain encoding: 13 % of an export's time for no smaller file.)
fn properties(schema: &arrow::datatypes::Schema, bloom: bool) -> WriterProperties {
    use arrow::datatypes::DataType as T;
    let mut b = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_dictionary_enabled(false)
        .set_created_by(format!("rocescope {}", env!("CARGO_PKG_VERSION")));
    for f in schema.fields() {
        let repeats = match f.data_type() {
            T::Dictionary(..) | T::Utf8 | T::UInt8 | T::UInt16 | T::FixedSizeBinary(_) => true,
            T::List(item) => matches!(item.data_type(), T::Utf8),
            _ => FEW_VALUES.contains(&f.name().as_str()),
        };
        if repeats {
            let path = match f.data_type() {
                T::List(item) => ColumnPath::new(vec![f.name().clone(), "list".into(), item.name().clone()]),
                _ => ColumnPath::from(f.name().as_str()),
            };
            b = b.set_column_dictionary_enabled(path, true);
        }
    }
    if bloom {
        for c in ["bth_destqp", "src_addr", "dst_addr"] {
            b = b.set_column_bloom_filter_enabled(ColumnPath::from(c), true);
        }
    }
    b.build()
}

/// 32-bit columns whose values repeat (an interface, a length, a QPN, a partition key, a flow).
const FEW_VALUES: &[&str] = &["interface", "len", "cap_len", "bth_destqp", "bth_pkey", "flow_index"];

/// A table's file for one capture: `DIR/TABLE/PARTITION/NAME.parquet`.
fn table_file(dir: &Path, table: &str, partition: &str, name: &str) -> Result<PathBuf, ExportError> {
    let d = dir.join(table).join(partition);
    fs::create_dir_all(&d).map_err(|e| ExportError::Output(format!("{}: {e}", d.display())))?;
    Ok(d.join(format!("{name}.parquet")))
}

/// A capture's file name as a file name of the export (`run 1.pcapng` → `run_1.pcapng`).
pub fn file_stem(path: &str) -> String {
    let base = Path::new(path).file_name().map_or_else(|| path.to_string(), |n| n.to_string_lossy().to_string());
    base.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect()
}

/// Every column of every table: a partition key of one of these names would shadow it
/// ([`partition::Partition::check_keys`]).
pub fn column_names() -> std::collections::BTreeSet<String> {
    use reports::Columns;
    let mut names: std::collections::BTreeSet<String> = reports::FLOWS_COLUMNS.iter().map(|c| c.to_string()).collect();
    for s in [schema::packets_schema(), reports::MessagesColumns::schema(), reports::EventsColumns::schema()] {
        names.extend(s.fields().iter().map(|f| f.name().clone()));
    }
    names
}

/// The writers of one table, a file per partition folder, opened when a row comes.
struct TableWriters<C: reports::Columns> {
    table: &'static str,
    open: BTreeMap<usize, reports::TableWriter<C>>,
}

impl<C: reports::Columns> TableWriters<C> {
    fn new(table: &'static str) -> TableWriters<C> {
        TableWriters { table, open: BTreeMap::new() }
    }

    fn get(
        &mut self,
        dir: &Path,
        folders: &partition::Folders,
        name: &str,
        folder: usize,
    ) -> Result<&mut reports::TableWriter<C>, String> {
        if let std::collections::btree_map::Entry::Vacant(v) = self.open.entry(folder) {
            let file = table_file(dir, self.table, &folders.dirs[folder], name).map_err(|e| e.to_string())?;
            v.insert(reports::TableWriter::new(&file, properties(&C::schema(), false))?);
        }
        Ok(self.open.get_mut(&folder).expect("just opened"))
    }

    /// Adds a row (`add` appends it to the columns) to folder `folder`'s file, written once
    /// enough rows are held.
    fn add(
        &mut self,
        dir: &Path,
        folders: &partition::Folders,
        name: &str,
        folder: usize,
        add: impl FnOnce(&mut C),
    ) -> Result<(), String> {
        let w = self.get(dir, folders, name, folder)?;
        add(&mut w.cols);
        w.maybe_flush()
    }

    /// Closes the files (a capture without rows still has its file, so that every export has
    /// every table).
    fn finish(
        mut self,
        dir: &Path,
        folders: &partition::Folders,
        name: &str,
        done: &mut Exported,
    ) -> Result<u64, String> {
        if self.open.is_empty() {
            self.get(dir, folders, name, folders.of_interface(0))?;
        }
        let mut rows = 0;
        for (_, w) in self.open {
            done.files.push(w.path.clone());
            rows += w.finish()?;
        }
        Ok(rows)
    }
}

/// Exports capture `path` (named `name` in the tables' `capture_file` and files) into `dir`,
/// under the partition folders `partition` makes of it, decoding with `decoder()`;
/// `tick(pass, frame, offset)` reports progress (pass 0 analyses, pass 1 writes the packets).
/// A damaged capture's frames before the damage are exported (their packets and analysis), and
/// the error returned after.
pub fn export_capture(
    path: &str,
    name: &str,
    dir: &Path,
    partition: &Partition,
    decoder: &dyn Fn() -> Decoder,
    replay: Option<&rocescope_replay::Options>,
    tick: &mut dyn FnMut(u32, u64, u64),
) -> Result<Exported, ExportError> {
    let out_err = |e: String| ExportError::Output(format!("{name}: {e}"));
    let open = || capture::open(path).map_err(|e| ExportError::Input(path.to_string(), e));
    let mut done = Exported::default();
    let info = if partition.reads_capture() {
        CaptureInfo::read(path, &file_stem(path), partition.per_interface())
            .map_err(|e| ExportError::Input(path.to_string(), e))?
    } else {
        CaptureInfo::default()
    };
    let folders = partition.folders(&info);

    // The first pass: the analysis, as `rocescope flows` and `timeline` read a file, with what
    // the analyser shows of each frame at once kept on disk for the packets.
    let session = Session::new(open()?, decoder().checksums_for_detection_only());
    let opts = Options { keep_events: true, spill_to_file: true, ..Options::default() };
    let mut live = notes::LiveLog::new().map_err(|e| out_err(format!("temporary file: {e}")))?;
    let mut live_err = None;
    let (mut a, analysed) = run::analyze_threaded_noted(
        session,
        opts,
        run::Window::default(),
        |n, o| tick(0, n, o),
        |seen, note| {
            if let (Some(frame), None) = (seen.frame(), &live_err) {
                if let Err(e) = live.push(frame, &notes::Live::of(note)) {
                    live_err = Some(e);
                }
            }
        },
    );
    if let Some(e) = live_err {
        return Err(out_err(format!("temporary file: {e}")));
    }
    // (A damaged capture: the analysis of the frames before the damage is written.)
    let read_error = analysed.err();

    // (The packets pass's detection pass runs meanwhile, on the core the analysis has left.)
    let mut packets_session = Session::new(open()?, decoder()).with_detection_pass(open()?);
    let detecting = std::thread::spawn(move || {
        packets_session.detect();
        packets_session
    });
    let report = a.flows();
    let rows = reports::flows_rows(name, &report);
    done.flows = rows.len() as u64;
    let mut by_folder: BTreeMap<usize, Vec<serde_json::Value>> = BTreeMap::new();
    for (row, f) in rows.into_iter().zip(&report.flows) {
        by_folder.entry(folders.of_interface(f.head.interface)).or_default().push(row);
    }
    for (folder, rows) in by_folder {
        let file = table_file(dir, "flows", &folders.dirs[folder], name)?;
        reports::write_flows(&file, &rows, |schema| properties(schema, false)).map_err(out_err)?;
        done.files.push(file);
    }
    drop(report);
    // (Written as the timeline gives them, a record at a time: memory holds what indexes one
    // flow's messages, not its report.)
    let mut messages = TableWriters::<reports::MessagesColumns>::new("messages");
    let mut events = TableWriters::<reports::EventsColumns>::new("events");
    let mut event_log = notes::EventLog::new().map_err(|e| out_err(format!("temporary file: {e}")))?;
    let mut ids = Vec::new();
    let mut folder = 0;
    a.each_flow_streamed(|i, part| -> io::Result<()> {
        use rocescope_analysis::analyze::stream::TimelinePart;
        event_log.push_part(&part).map_err(|e| io::Error::other(format!("temporary file: {e}")))?;
        match part {
            TimelinePart::Flow(head) => {
                folder = folders.of_interface(head.interface);
                ids.push((head.id.clone(), json_name(&head.tap), folder));
            }
            TimelinePart::Message(m) => {
                messages.add(dir, &folders, name, folder, |c| c.add(name, &ids[i].0, i, m)).map_err(io::Error::other)?
            }
            TimelinePart::Loss(l) => events
                .add(dir, &folders, name, folder, |c| c.add_loss(name, &ids[i].0, i, l))
                .map_err(io::Error::other)?,
            TimelinePart::Retransmission(r) => events
                .add(dir, &folders, name, folder, |c| c.add_retransmission(name, &ids[i].0, i, r))
                .map_err(io::Error::other)?,
            TimelinePart::CaptureGap(g) => events
                .add(dir, &folders, name, folder, |c| c.add_capture_gap(name, &ids[i].0, i, g))
                .map_err(io::Error::other)?,
        }
        Ok(())
    })
    .map_err(|e| out_err(e.to_string()))?;
    drop(a);
    // `--replay`: the reference stacks' findings, as events of their flows.
    if let Some(opts) = replay {
        let session = || Ok::<_, ExportError>(Session::new(open()?, decoder().checksums_for_detection_only()));
        let findings = match rocescope_replay::replay_partial(session()?, session()?, opts, None) {
            // (A damaged capture: the findings before the damage.)
            Ok((report, _)) => report.findings,
            Err(rocescope_replay::ReplayError::Capture(_)) => Vec::new(),
            Err(rocescope_replay::ReplayError::Counters(why)) => return Err(out_err(why)),
        };
        let index: std::collections::HashMap<&str, usize> =
            ids.iter().enumerate().map(|(i, (id, _, _))| (id.as_str(), i)).collect();
        for f in &findings {
            let i = index.get(f.flow.as_str()).copied();
            let folder = i.map_or_else(|| folders.of_interface(0), |i| ids[i].2);
            events.add(dir, &folders, name, folder, |c| c.add_finding(name, i, f)).map_err(out_err)?;
        }
    }
    done.messages = messages.finish(dir, &folders, name, &mut done).map_err(out_err)?;
    done.events = events.finish(dir, &folders, name, &mut done).map_err(out_err)?;

    // The second pass: the packets, as `rocescope decode` reads a file (a detection pass
    // first), with the first pass's notes.
    let mut live = live.reader().map_err(|e| out_err(format!("temporary file: {e}")))?;
    let mut event_log = event_log.reader().map_err(|e| out_err(format!("temporary file: {e}")))?;
    let mut builder = packets::PacketsBuilder::new();
    let target = window::Target { dir: dir.to_path_buf(), name: name.to_string(), folders: folders.dirs.clone() };
    let mut writer = window::WindowWriter::spawn(target, builder.schema(), properties(&builder.schema(), true));
    let mut session = detecting.join().map_err(|_| out_err("the detection pass failed".into()))?;
    let mut failed = None;
    let r = session.run(|rec, d| {
        tick(1, rec.number, rec.offset);
        let mut step = || -> Result<(), String> {
            let l = live.of(rec.number).map_err(|e| format!("temporary file: {e}"))?;
            let e = event_log.of(rec.number).map_err(|e| format!("temporary file: {e}"))?;
            let flow = l.flow.and_then(|i| ids.get(i as usize).map(|(id, tap, _)| (i, id.as_str(), tap.as_str())));
            let folder = folders.of_interface(rec.interface) as u32;
            if let Some(w) = builder.add(name, rec, d, flow, &l, &e, folder).map_err(|e| e.to_string())? {
                writer.send(w)?;
            }
            Ok(())
        };
        match step() {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                failed = Some(e);
                ControlFlow::Break(())
            }
        }
    });
    if let Some(e) = failed {
        return Err(out_err(e));
    }
    if let Some(w) = builder.finish().map_err(|e| out_err(e.to_string()))? {
        writer.send(w).map_err(out_err)?;
    }
    let written = writer.finish().map_err(out_err)?;
    done.frames = written.rows;
    done.files.extend(written.files);
    match read_error.or(r.err()) {
        Some(e) => Err(ExportError::Input(path.to_string(), e)),
        None => Ok(done),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flows table's columns, as an export of captures with every kind of flow (a NetRT
    /// control flow `serves` a data flow) writes them, are the ones [`column_names`] lists.
    #[test]
    fn the_flows_columns_listed_are_the_ones_written() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let dir = std::env::temp_dir().join(format!("rocescope-export-columns-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let mut written = std::collections::BTreeSet::new();
        for fixture in ["synth-netrt-loss.pcapng", "synth-gbn-loss.pcapng", "std-mix.pcapng"] {
            let path = root.join(fixture);
            let decoder = || Decoder::new(Default::default());
            export_capture(
                path.to_str().unwrap(),
                fixture,
                &dir,
                &Partition::default(),
                &decoder,
                None,
                &mut |_, _, _| {},
            )
            .unwrap();
            let f = fs::File::open(dir.join("flows").join(format!("{fixture}.parquet"))).unwrap();
            let b = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
            written.extend(b.schema().fields().iter().map(|f| f.name().clone()));
        }
        let listed: std::collections::BTreeSet<String> = reports::FLOWS_COLUMNS.iter().map(|c| c.to_string()).collect();
        assert_eq!(written, listed);
        assert!(column_names().is_superset(&listed) && column_names().contains("bth_psn"));
        let _ = fs::remove_dir_all(&dir);
    }
}
