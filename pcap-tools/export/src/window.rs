//! Writing the `packets` table a window at a time ([`crate::packets::Window`]), on a thread of
//! its own, so that reading and decoding the next window overlaps sorting, encoding and
//! compressing this one. Each window's rows are sorted by partition folder, flow
//! (`flow_index`, frames of no flow last), time and frame, and each folder's rows written as a
//! file of their own, `packets/FOLDERS/NAME-WWWWW.parquet` (window `WWWWW` from 0): within each
//! file, rows are in flow and time order, and each file's metadata says so (the Parquet
//! footer's sorting columns and [`schema::SORT_KEY`]). Memory: the window being written (and
//! the writer's row group, encoded), and the one being built.

use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use arrow::array::{Array, ArrayRef, AsArray, UInt32Array};
use arrow::datatypes::{Int64Type, Schema, UInt32Type, UInt64Type};
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::{KeyValue, SortingColumn};
use parquet::file::properties::WriterProperties;

use crate::packets::Window;
use crate::schema;

/// The order of each file's rows, as [`schema::SORT_KEY`] states it.
pub const SORT_ORDER: &str = "flow_index ASC NULLS LAST, time_ns ASC, frame ASC";

/// What the packets of a capture came to.
#[derive(Debug, Default)]
pub struct Written {
    pub rows: u64,
    pub files: Vec<PathBuf>,
}

/// Sorts and writes the windows it is sent.
pub struct WindowWriter {
    tx: Option<SyncSender<Window>>,
    thread: Option<JoinHandle<Result<Written, String>>>,
}

/// Where a window's files go: `DIR/packets/FOLDER/NAME-WWWWW.parquet`.
pub struct Target {
    pub dir: PathBuf,
    pub name: String,
    pub folders: Vec<String>,
}

impl WindowWriter {
    /// Starts the writing thread; `props` are the files' writer properties (the sort order is
    /// added here).
    pub fn spawn(target: Target, schema: Arc<Schema>, props: WriterProperties) -> WindowWriter {
        // (No window waits: the builder fills the next while this one is written, and hands it
        // over when this one is done.)
        let (tx, rx) = sync_channel::<Window>(0);
        let thread = std::thread::spawn(move || -> Result<Written, String> {
            let col = |n: &str| schema.index_of(n).expect("a capture column") as i32;
            let sorting = ["flow_index", "time_ns", "frame"]
                .iter()
                .map(|n| SortingColumn { column_idx: col(n), descending: false, nulls_first: false })
                .collect();
            let props = props.into_builder().set_sorting_columns(Some(sorting)).build();
            let mut done = Written::default();
            for (k, w) in rx.into_iter().enumerate() {
                write_window(&target, k, w, &schema, &props, &mut done)?;
            }
            Ok(done)
        });
        WindowWriter { tx: Some(tx), thread: Some(thread) }
    }

    /// Hands a window over (waits while another is being written). An error is the writing
    /// thread's.
    pub fn send(&mut self, w: Window) -> Result<(), String> {
        let sent = self.tx.as_ref().map(|tx| tx.send(w).is_ok()).unwrap_or(false);
        if sent {
            return Ok(());
        }
        // (The thread has stopped: its error says why.)
        self.join().map(|_| ()).and(Err("the packets writer stopped".into()))
    }

    fn join(&mut self) -> Result<Written, String> {
        self.tx = None;
        match self.thread.take() {
            Some(t) => t.join().unwrap_or_else(|_| Err("the packets writer failed".into())),
            None => Err("the packets writer stopped".into()),
        }
    }

    /// Waits for every window to be written.
    pub fn finish(mut self) -> Result<Written, String> {
        self.join()
    }
}

/// Rows taken from a window in sorted order at a time.
const TAKE_ROWS: usize = 16 * 1024;

/// The order of a window's rows: by folder, flow (none last), time, frame.
pub fn sort_indices(batch: &RecordBatch, folders: &[u32]) -> UInt32Array {
    let s = batch.schema();
    let flow = batch.column(s.index_of("flow_index").expect("flow_index")).as_primitive::<UInt32Type>();
    let time = batch.column(s.index_of("time_ns").expect("time_ns")).as_primitive::<Int64Type>();
    let frame = batch.column(s.index_of("frame").expect("frame")).as_primitive::<UInt64Type>();
    let mut keys: Vec<(u32, u32, i64, u64, u32)> = (0..batch.num_rows())
        .map(|i| {
            let f = if flow.is_null(i) { u32::MAX } else { flow.value(i) };
            (folders[i], f, time.value(i), frame.value(i), i as u32)
        })
        .collect();
    keys.sort_unstable();
    keys.iter().map(|k| k.4).collect()
}

/// `batch`'s rows in the order `indices` gives (columns with no value stay null, untaken).
fn take_rows(batch: &RecordBatch, indices: &UInt32Array) -> Result<RecordBatch, String> {
    let columns: Vec<ArrayRef> = batch
        .columns()
        .iter()
        .map(|c| {
            if c.null_count() == c.len() {
                Ok(crate::packets::nulls(c.data_type(), indices.len()))
            } else {
                arrow::compute::take(c.as_ref(), indices, None).map_err(|e| e.to_string())
            }
        })
        .collect::<Result<_, _>>()?;
    RecordBatch::try_new(batch.schema(), columns).map_err(|e| e.to_string())
}

fn write_window(
    target: &Target,
    k: usize,
    w: Window,
    schema: &Arc<Schema>,
    props: &WriterProperties,
    done: &mut Written,
) -> Result<(), String> {
    let order = sort_indices(&w.batch, &w.folders);
    // Each folder's rows, a file each, taken in sorted order a slice at a time (the window is
    // not copied whole: the writer holds one row group, encoded).
    let mut start = 0;
    while start < order.len() {
        let folder = w.folders[order.value(start) as usize];
        let mut end = start + 1;
        while end < order.len() && w.folders[order.value(end) as usize] == folder {
            end += 1;
        }
        let name = format!("{}-{k:05}", target.name);
        let path = crate::table_file(&target.dir, "packets", &target.folders[folder as usize], &name)
            .map_err(|e| e.to_string())?;
        let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut out = ArrowWriter::try_new(file, schema.clone(), Some(props.clone())).map_err(|e| e.to_string())?;
        let mut at = start;
        while at < end {
            let n = TAKE_ROWS.min(end - at);
            out.write(&take_rows(&w.batch, &order.slice(at, n))?).map_err(|e| e.to_string())?;
            at += n;
        }
        for (key, v) in [(schema::SORT_KEY, SORT_ORDER), (schema::VERSION_KEY, schema::VERSION)] {
            out.append_key_value_metadata(KeyValue::new(key.to_string(), v.to_string()));
        }
        out.close().map_err(|e| format!("{}: {e}", path.display()))?;
        done.rows += (end - start) as u64;
        done.files.push(path);
        start = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, UInt64Array};
    use arrow::datatypes::{DataType, Field};

    #[test]
    fn rows_sort_by_folder_then_flow_with_no_flow_last_then_time() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("frame", DataType::UInt64, false),
            Field::new("time_ns", DataType::Int64, false),
            Field::new("flow_index", DataType::UInt32, true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(UInt64Array::from(vec![1, 2, 3, 4, 5, 6])),
                Arc::new(Int64Array::from(vec![10, 20, 15, 30, 30, 5])),
                Arc::new(UInt32Array::from(vec![Some(1), None, Some(0), Some(1), Some(0), Some(1)])),
            ],
        )
        .unwrap();
        // Frame 4 goes to folder 1; the rest to folder 0.
        let order = sort_indices(&batch, &[0, 0, 0, 1, 0, 0]);
        let frames: Vec<u64> =
            order.values().iter().map(|&i| batch.column(0).as_primitive::<UInt64Type>().value(i as usize)).collect();
        assert_eq!(frames, vec![3, 5, 6, 1, 2, 4]);
    }
}
