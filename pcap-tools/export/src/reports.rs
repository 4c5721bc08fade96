//! The analysers' tables (docs/cluster.md): `flows` (`rocescope flows`' rows), `messages` and
//! `events` (losses, retransmissions, capture gaps: `rocescope timeline`'s entries), each row
//! keyed by its capture file and its flow (`flow`, the id `flows` prints, and `flow_index`) and,
//! for messages and events, the frame numbers that join to `packets` (`capture_file`, `frame`).
//! The flows' rows are the report's own serialisation (INTERFACES.md), their times as integers,
//! their schema inferred (a capture has few flows); messages and events, as many as the
//! capture's packets nearly, are built column by column into declared schemas
//! ([`MessagesColumns`], [`EventsColumns`]) and written 8,192 rows at a time ([`TableWriter`]).

use std::fs::File;
use std::sync::Arc;

use arrow::array::{
    ArrayBuilder, ArrayRef, BooleanBuilder, Int64Builder, ListBuilder, StringBuilder, StringDictionaryBuilder,
    UInt32Builder, UInt64Builder,
};
use arrow::datatypes::{DataType, Field, Int16Type, Int32Type, Schema};
use arrow::json::reader::{infer_json_schema_from_iterator, ReaderBuilder};
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use rocescope_analysis::analyze::render::json_name;
use rocescope_analysis::analyze::report::{CaptureGap, FlowsReport, Loss, Message, Retransmission};
use serde_json::{json, Value};

/// A report's row with its times (`…time_ns`, strings in the JSON reports: 64-bit) as integers.
fn with_integer_times(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        for (k, x) in m.iter_mut() {
            if k.ends_with("time_ns") {
                if let Some(n) = x.as_str().and_then(|s| s.parse::<i64>().ok()) {
                    *x = json!(n);
                }
            }
        }
    }
    v
}

/// A column every row of a capture left null is inferred as the null type; its type is the one
/// other captures' files give it, so that engines merge the files' schemas (Spark refuses to
/// merge a null-typed column with a typed one): times and counts of nanoseconds `…_ns` and
/// `samples` are 64-bit integers, `goodput_bps` a double, anything else text.
fn typed_nulls(fields: &arrow::datatypes::Fields) -> Vec<Field> {
    fields
        .iter()
        .map(|f| {
            let t = match f.data_type() {
                DataType::Null if f.name().ends_with("_ns") || f.name() == "samples" => DataType::Int64,
                DataType::Null if f.name() == "goodput_bps" => DataType::Float64,
                DataType::Null => DataType::Utf8,
                DataType::Struct(children) => DataType::Struct(typed_nulls(children).into()),
                t => t.clone(),
            };
            Field::new(f.name(), t, true)
        })
        .collect()
}

/// Writes `rows` as one Parquet file, their schema inferred from them, with the writer
/// properties `props` gives that schema.
fn write_inferred(
    path: &std::path::Path,
    rows: &[Value],
    props: impl FnOnce(&Schema) -> WriterProperties,
) -> Result<(), String> {
    let schema = infer_json_schema_from_iterator(rows.iter().map(|r| Ok(r.clone()))).map_err(|e| e.to_string())?;
    let schema = Schema::new(typed_nulls(schema.fields()));
    let props = props(&schema);
    let schema = Arc::new(schema);
    let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(|e| e.to_string())?;
    // (A capture's flows are few: decoded in one batch.)
    let mut decoder = ReaderBuilder::new(schema).build_decoder().map_err(|e| e.to_string())?;
    decoder.serialize(rows).map_err(|e| e.to_string())?;
    if let Some(batch) = decoder.flush().map_err(|e| e.to_string())? {
        out.write(&batch).map_err(|e| e.to_string())?;
    }
    out.close().map(|_| ()).map_err(|e| format!("{}: {e}", path.display()))
}

/// The `flows` table's columns (its schema is inferred from the rows; a test checks this list
/// against the files written): what a partition key may not be named.
pub const FLOWS_COLUMNS: &[&str] = &[
    "capture_file",
    "flow_index",
    "id",
    "src",
    "dst",
    "destqp",
    "interface",
    "profile",
    "transport",
    "role",
    "tap",
    "peer",
    "serves",
    "frames",
    "bytes",
    "data_frames",
    "data_bytes",
    "unique_bytes",
    "retransmitted",
    "spurious",
    "max_retries",
    "timeouts",
    "losses",
    "capture_gaps",
    "out_of_order",
    "sequence_errors",
    "acks",
    "naks",
    "sacks",
    "rnr_naks",
    "cnps",
    "ecn_ce",
    "header_only",
    "messages",
    "messages_completed",
    "messages_failed",
    "fct_ns",
    "message_latency",
    "rtt",
    "first_time_ns",
    "last_time_ns",
    "goodput_bps",
    "idle_max_ns",
    "pfc_paused_ns",
];

/// The `flows` rows of one capture.
pub fn flows_rows(capture_file: &str, report: &FlowsReport) -> Vec<Value> {
    report
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut v = with_integer_times(serde_json::to_value(f).expect("a flow row serialises"));
            if let Value::Object(m) = &mut v {
                m.insert("capture_file".into(), json!(capture_file));
                m.insert("flow_index".into(), json!(i));
            }
            v
        })
        .collect()
}

pub fn write_flows(
    path: &std::path::Path,
    rows: &[Value],
    props: impl FnOnce(&Schema) -> WriterProperties,
) -> Result<(), String> {
    write_inferred(path, rows, props)
}

/// A table built column by column: [`TableWriter`] writes it a batch at a time.
pub trait Columns: Default {
    fn schema() -> Schema;
    fn rows(&self) -> usize;
    fn finish(&mut self) -> Vec<ArrayRef>;
}

/// Rows a [`TableWriter`] holds before it writes them.
const TABLE_BATCH: usize = 8192;

/// One table's file, written a batch at a time.
pub struct TableWriter<C: Columns> {
    pub cols: C,
    schema: Arc<Schema>,
    out: ArrowWriter<File>,
    pub written: u64,
    pub path: std::path::PathBuf,
}

impl<C: Columns> TableWriter<C> {
    pub fn new(path: &std::path::Path, props: WriterProperties) -> Result<TableWriter<C>, String> {
        let schema = Arc::new(C::schema());
        let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let out = ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(|e| e.to_string())?;
        Ok(TableWriter { cols: C::default(), schema, out, written: 0, path: path.to_path_buf() })
    }

    /// Writes the rows held once there are enough.
    pub fn maybe_flush(&mut self) -> Result<(), String> {
        if self.cols.rows() >= TABLE_BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        let n = self.cols.rows();
        if n == 0 {
            return Ok(());
        }
        let batch = RecordBatch::try_new(self.schema.clone(), self.cols.finish()).map_err(|e| e.to_string())?;
        self.out.write(&batch).map_err(|e| e.to_string())?;
        self.written += n as u64;
        Ok(())
    }

    pub fn finish(mut self) -> Result<u64, String> {
        self.flush()?;
        self.out.close().map_err(|e| format!("{}: {e}", self.path.display()))?;
        Ok(self.written)
    }
}

/// The key columns of a messages or events row.
#[derive(Default)]
struct Keys {
    capture_file: StringDictionaryBuilder<Int32Type>,
    flow: StringDictionaryBuilder<Int32Type>,
    flow_index: UInt32Builder,
}

impl Keys {
    fn add(&mut self, capture_file: &str, flow: &str, index: usize) {
        self.capture_file.append_value(capture_file);
        self.flow.append_value(flow);
        self.flow_index.append_value(index as u32);
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        vec![Arc::new(self.capture_file.finish()), Arc::new(self.flow.finish()), Arc::new(self.flow_index.finish())]
    }

    fn fields() -> Vec<Field> {
        let dict = || DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        vec![
            Field::new("capture_file", dict(), false),
            Field::new("flow", dict(), false),
            Field::new("flow_index", DataType::UInt32, true),
        ]
    }
}

/// A time in nanoseconds as the tables keep it (INT64).
fn ns(t: u64) -> i64 {
    t.min(i64::MAX as u64) as i64
}

/// The `messages` table's columns: `rocescope timeline`'s messages.
#[derive(Default)]
pub struct MessagesColumns {
    keys: Keys,
    index: UInt64Builder,
    op: StringDictionaryBuilder<Int16Type>,
    first_psn: UInt32Builder,
    last_psn: UInt32Builder,
    first_frame: UInt64Builder,
    last_frame: UInt64Builder,
    complete_frame: UInt64Builder,
    complete_time_ns: Int64Builder,
    packets: UInt32Builder,
    retransmitted: UInt64Builder,
    bytes: UInt64Builder,
    latency_ns: UInt64Builder,
}

impl MessagesColumns {
    pub fn add(&mut self, capture_file: &str, flow: &str, flow_index: usize, m: &Message) {
        self.keys.add(capture_file, flow, flow_index);
        self.index.append_value(m.index);
        self.op.append_value(m.op);
        self.first_psn.append_value(m.first_psn);
        self.last_psn.append_option(m.last_psn);
        self.first_frame.append_value(m.first_frame);
        self.last_frame.append_value(m.last_frame);
        self.complete_frame.append_option(m.complete_frame);
        self.complete_time_ns.append_option(m.complete_time_ns.map(|t| ns(t.0)));
        self.packets.append_option(m.packets);
        self.retransmitted.append_value(m.retransmitted);
        self.bytes.append_value(m.bytes);
        self.latency_ns.append_option(m.latency_ns);
    }
}

impl Columns for MessagesColumns {
    /// The `messages` table's schema (the same in every file).
    fn schema() -> Schema {
        let u = |n: &str| Field::new(n, DataType::UInt64, true);
        let mut f = Keys::fields();
        f.extend([
            Field::new("index", DataType::UInt64, false),
            Field::new("op", DataType::Dictionary(Box::new(DataType::Int16), Box::new(DataType::Utf8)), false),
            Field::new("first_psn", DataType::UInt32, false),
            Field::new("last_psn", DataType::UInt32, true),
            Field::new("first_frame", DataType::UInt64, false),
            Field::new("last_frame", DataType::UInt64, false),
            u("complete_frame"),
            Field::new("complete_time_ns", DataType::Int64, true),
            Field::new("packets", DataType::UInt32, true),
            Field::new("retransmitted", DataType::UInt64, false),
            Field::new("bytes", DataType::UInt64, false),
            u("latency_ns"),
        ]);
        Schema::new(f)
    }

    fn rows(&self) -> usize {
        self.index.len()
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        let mut v = self.keys.finish();
        v.extend([
            Arc::new(self.index.finish()) as ArrayRef,
            Arc::new(self.op.finish()),
            Arc::new(self.first_psn.finish()),
            Arc::new(self.last_psn.finish()),
            Arc::new(self.first_frame.finish()),
            Arc::new(self.last_frame.finish()),
            Arc::new(self.complete_frame.finish()),
            Arc::new(self.complete_time_ns.finish()),
            Arc::new(self.packets.finish()),
            Arc::new(self.retransmitted.finish()),
            Arc::new(self.bytes.finish()),
            Arc::new(self.latency_ns.finish()),
        ]);
        v
    }
}

/// The `events` table's columns: `rocescope timeline`'s losses, retransmissions and capture
/// gaps and, with `--replay`, `rocescope replay`'s findings (departures and ambiguities), each
/// kind's absent keys null.
#[derive(Default)]
pub struct EventsColumns {
    keys: Keys,
    kind: StringDictionaryBuilder<Int16Type>,
    frame: UInt64Builder,
    psn: UInt32Builder,
    time_ns: Int64Builder,
    signal: StringDictionaryBuilder<Int16Type>,
    repair: StringDictionaryBuilder<Int16Type>,
    evidence: StringDictionaryBuilder<Int16Type>,
    cause: StringDictionaryBuilder<Int16Type>,
    trigger: StringDictionaryBuilder<Int16Type>,
    spurious: BooleanBuilder,
    copy: UInt32Builder,
    message: UInt64Builder,
    rule: StringDictionaryBuilder<Int16Type>,
    frames: ListBuilder<UInt64Builder>,
    expected: StringBuilder,
    seen: StringBuilder,
}

impl EventsColumns {
    fn common(&mut self, capture_file: &str, flow: &str, flow_index: usize, kind: &str, frame: u64, psn: u32) {
        self.keys.add(capture_file, flow, flow_index);
        self.kind.append_value(kind);
        self.frame.append_value(frame);
        self.psn.append_value(psn);
        self.no_finding();
    }

    fn no_finding(&mut self) {
        self.rule.append_null();
        self.frames.append_null();
        self.expected.append_null();
        self.seen.append_null();
    }

    /// A finding of `rocescope replay` (`departure` or `ambiguous`), on the flow of index
    /// `flow_index` when the analysis has it.
    pub fn add_finding(&mut self, capture_file: &str, flow_index: Option<usize>, f: &rocescope_replay::Finding) {
        self.keys.capture_file.append_value(capture_file);
        self.keys.flow.append_value(&f.flow);
        self.keys.flow_index.append_option(flow_index.map(|i| i as u32));
        self.kind.append_value(json_name(&f.kind));
        self.frame.append_value(f.frames.first().copied().unwrap_or(0));
        self.psn.append_null();
        self.time_ns.append_value(ns(f.time_ns));
        for b in [&mut self.signal, &mut self.repair, &mut self.evidence, &mut self.cause, &mut self.trigger] {
            b.append_null();
        }
        self.spurious.append_null();
        self.copy.append_null();
        self.message.append_null();
        self.rule.append_value(f.rule);
        self.frames.values().append_slice(&f.frames);
        self.frames.append(true);
        self.expected.append_value(&f.expected);
        self.seen.append_value(&f.seen);
    }

    /// A loss.
    pub fn add_loss(&mut self, capture_file: &str, flow: &str, flow_index: usize, l: &Loss) {
        self.common(capture_file, flow, flow_index, "loss", l.frame, l.psn);
        self.time_ns.append_value(ns(l.time_ns.0));
        self.signal.append_value(l.signal.name());
        self.repair.append_value(json_name(&l.repair));
        self.evidence.append_value(json_name(&l.evidence));
        self.cause.append_null();
        self.trigger.append_null();
        self.spurious.append_null();
        self.copy.append_null();
        self.message.append_option(l.message);
    }

    /// A retransmission.
    pub fn add_retransmission(&mut self, capture_file: &str, flow: &str, flow_index: usize, r: &Retransmission) {
        self.common(capture_file, flow, flow_index, "retransmission", r.frame, r.psn);
        self.time_ns.append_value(ns(r.time_ns.0));
        self.signal.append_null();
        self.repair.append_null();
        self.evidence.append_null();
        self.cause.append_value(r.cause.name());
        self.trigger.append_value(r.trigger.name());
        self.spurious.append_option(r.spurious);
        self.copy.append_value(r.copy);
        self.message.append_option(r.message);
    }

    /// A capture gap.
    pub fn add_capture_gap(&mut self, capture_file: &str, flow: &str, flow_index: usize, g: &CaptureGap) {
        self.common(capture_file, flow, flow_index, "capture_gap", g.frame, g.psn);
        self.time_ns.append_null();
        self.signal.append_null();
        self.repair.append_null();
        self.evidence.append_null();
        self.cause.append_null();
        self.trigger.append_null();
        self.spurious.append_null();
        self.copy.append_null();
        self.message.append_null();
    }
}

impl Columns for EventsColumns {
    /// The `events` table's schema (the same in every file): a loss's, a retransmission's and a
    /// capture gap's keys, each absent one null.
    fn schema() -> Schema {
        let e =
            |n: &str| Field::new(n, DataType::Dictionary(Box::new(DataType::Int16), Box::new(DataType::Utf8)), true);
        let mut f = Keys::fields();
        f.extend([
            Field::new("kind", DataType::Dictionary(Box::new(DataType::Int16), Box::new(DataType::Utf8)), false),
            Field::new("frame", DataType::UInt64, false),
            Field::new("psn", DataType::UInt32, true),
            Field::new("time_ns", DataType::Int64, true),
            e("signal"),
            e("repair"),
            e("evidence"),
            e("cause"),
            e("trigger"),
            Field::new("spurious", DataType::Boolean, true),
            Field::new("copy", DataType::UInt32, true),
            Field::new("message", DataType::UInt64, true),
            e("rule"),
            Field::new("frames", DataType::List(Arc::new(Field::new("item", DataType::UInt64, true))), true),
            Field::new("expected", DataType::Utf8, true),
            Field::new("seen", DataType::Utf8, true),
        ]);
        Schema::new(f)
    }

    fn rows(&self) -> usize {
        self.frame.len()
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        let mut v = self.keys.finish();
        v.extend([
            Arc::new(self.kind.finish()) as ArrayRef,
            Arc::new(self.frame.finish()),
            Arc::new(self.psn.finish()),
            Arc::new(self.time_ns.finish()),
            Arc::new(self.signal.finish()),
            Arc::new(self.repair.finish()),
            Arc::new(self.evidence.finish()),
            Arc::new(self.cause.finish()),
            Arc::new(self.trigger.finish()),
            Arc::new(self.spurious.finish()),
            Arc::new(self.copy.finish()),
            Arc::new(self.message.finish()),
            Arc::new(self.rule.finish()),
            Arc::new(self.frames.finish()),
            Arc::new(self.expected.finish()),
            Arc::new(self.seen.finish()),
        ]);
        v
    }
}
