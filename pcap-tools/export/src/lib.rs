//! `rocescope export`: captures and what the analysers say of them as Apache Parquet, for the
//! engines users already run (DuckDB on one machine, Spark on many; docs/cluster.md). Its own
//! crate, so that the Parquet writer (arrow-rs `arrow` and `parquet`) stays out of the wasm
//! build.
//!
//! Per capture, four tables, each a folder of Parquet files (one file per capture, under the
//! Hive-style partition folders given, `host=h1/date=2026-11-29/`):
//! - `packets/`: one row per frame, the capture columns and one nullable column per registry
//!   field ([`schema`], [`packets`]), in capture order;
//! - `flows/`: `rocescope flows`' rows; `messages/` and `events/` (losses, retransmissions,
//!   capture gaps): `rocescope timeline`'s entries ([`reports`]), joined to `packets` by
//!   (`capture_file`, `frame`) and to `flows` by (`capture_file`, `flow`).
//!
//! Memory: a record batch of packets and the writer's open row group, and what `flows` and
//! `timeline` hold (live flows; the timeline's events, spilled to a temporary file as
//! `timeline` spills them).

pub mod packets;
pub mod reports;
pub mod schema;

use std::fs;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use rocescope_analysis::analyze::{run, Options};
use rocescope_analysis::capture::{self, CaptureError};
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::Decoder;

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

/// The writer's settings: Snappy, page statistics, and bloom filters on the columns users look
/// rows up by (a QPN, an address).
fn properties(bloom: bool) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_created_by(format!("rocescope {}", env!("CARGO_PKG_VERSION")));
    if bloom {
        for c in ["bth_destqp", "src_addr", "dst_addr"] {
            b = b.set_column_bloom_filter_enabled(ColumnPath::from(c), true);
        }
    }
    b.build()
}

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

/// Exports capture `path` (named `name` in the tables' `capture_file` and files) into `dir`,
/// under the partition folders `partition` (`""`, or `k=v/k2=v2`), decoding with `decoder()`;
/// `tick(frame, offset)` reports progress. A damaged capture's frames before the damage are
/// exported, and the error returned after.
pub fn export_capture(
    path: &str,
    name: &str,
    dir: &Path,
    partition: &str,
    decoder: &dyn Fn() -> Decoder,
    tick: &mut dyn FnMut(u64, u64),
) -> Result<Exported, ExportError> {
    let out_err = |e: parquet::errors::ParquetError| ExportError::Output(format!("{name}: {e}"));
    let open = || capture::open(path).map_err(|e| ExportError::Input(path.to_string(), e));
    let mut done = Exported::default();

    // packets: as `rocescope decode` reads a file (a detection pass first).
    let file = table_file(dir, "packets", partition, name)?;
    let f = fs::File::create(&file).map_err(|e| ExportError::Output(format!("{}: {e}", file.display())))?;
    let mut w = packets::PacketsWriter::new(f, properties(true)).map_err(out_err)?;
    let mut session = Session::new(open()?, decoder()).with_detection_pass(open()?);
    let mut failed = None;
    let r = session.run(|rec, d| {
        tick(rec.number, rec.offset);
        if let Err(e) = w.add(name, rec, d) {
            failed = Some(e);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });
    if let Some(e) = failed {
        return Err(out_err(e));
    }
    done.frames = w.finish("capture order (frame, time)").map_err(out_err)?;
    done.files.push(file);
    let read_error = r.err();

    // flows, messages, events: as `rocescope flows` and `timeline` read a file.
    let mut session = Session::new(open()?, decoder().checksums_for_detection_only());
    let opts = Options { keep_events: true, spill_to_file: true, ..Options::default() };
    let mut a = match run::analyze(&mut session, opts, run::Window::default(), |_| {}) {
        Ok(a) => a,
        // (The frames before the damage were exported; their analysis needs the whole pass.)
        Err(e) => return Err(ExportError::Input(path.to_string(), e)),
    };
    let flows = reports::flows_rows(name, &a.flows());
    done.flows = flows.len() as u64;
    if !flows.is_empty() {
        let file = table_file(dir, "flows", partition, name)?;
        reports::write_flows(&file, &flows, properties(false)).map_err(ExportError::Output)?;
        done.files.push(file);
    }
    // (Written flow by flow as the timeline gives them: memory holds one flow's report.)
    let (mfile, efile) = (table_file(dir, "messages", partition, name)?, table_file(dir, "events", partition, name)?);
    let mut messages =
        reports::RowsWriter::new(&mfile, reports::messages_schema(), properties(false)).map_err(ExportError::Output)?;
    let mut events =
        reports::RowsWriter::new(&efile, reports::events_schema(), properties(false)).map_err(ExportError::Output)?;
    let mut index = 0;
    a.each_flow_timeline(|f, _| {
        reports::timeline_rows(name, index, &f, &mut messages, &mut events)?;
        index += 1;
        Ok(())
    })
    .map_err(ExportError::Output)?;
    done.messages = messages.finish().map_err(ExportError::Output)?;
    done.events = events.finish().map_err(ExportError::Output)?;
    done.files.extend([mfile, efile]);
    match read_error {
        Some(e) => Err(ExportError::Input(path.to_string(), e)),
        None => Ok(done),
    }
}
