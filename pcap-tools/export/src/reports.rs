//! The analysers' tables (docs/cluster.md): `flows` (`rocescope flows`' rows), `messages` and
//! `events` (losses, retransmissions, capture gaps: `rocescope timeline`'s entries), each row
//! keyed by its capture file and its flow (`flow`, the id `flows` prints, and `flow_index`) and,
//! for messages and events, the frame numbers that join to `packets` (`capture_file`, `frame`).
//! The rows are the reports' own serialisations (INTERFACES.md), their times as integers.

use std::fs::File;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema};
use arrow::json::reader::{infer_json_schema_from_iterator, ReaderBuilder};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use rocescope_analysis::analyze::report::{FlowTimeline, FlowsReport};
use serde_json::{json, Map, Value};

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

/// A table's rows written as they come, 8,192 at a time, to one Parquet file.
pub struct RowsWriter {
    schema: Arc<Schema>,
    rows: Vec<Value>,
    out: ArrowWriter<File>,
    pub written: u64,
}

impl RowsWriter {
    pub fn new(path: &std::path::Path, schema: Schema, props: WriterProperties) -> Result<RowsWriter, String> {
        let schema = Arc::new(schema);
        let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let out = ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(|e| e.to_string())?;
        Ok(RowsWriter { schema, rows: Vec::new(), out, written: 0 })
    }

    pub fn push(&mut self, row: Value) -> Result<(), String> {
        self.rows.push(row);
        if self.rows.len() == 8192 {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let mut decoder = ReaderBuilder::new(self.schema.clone()).build_decoder().map_err(|e| e.to_string())?;
        decoder.serialize(&self.rows).map_err(|e| e.to_string())?;
        if let Some(batch) = decoder.flush().map_err(|e| e.to_string())? {
            self.out.write(&batch).map_err(|e| e.to_string())?;
        }
        self.written += self.rows.len() as u64;
        self.rows.clear();
        Ok(())
    }

    pub fn finish(mut self) -> Result<u64, String> {
        self.flush()?;
        self.out.close().map_err(|e| e.to_string())?;
        Ok(self.written)
    }
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

/// Writes `rows` as one Parquet file, their schema inferred from them.
fn write_inferred(path: &std::path::Path, rows: &[Value], props: WriterProperties) -> Result<(), String> {
    let schema = infer_json_schema_from_iterator(rows.iter().map(|r| Ok(r.clone()))).map_err(|e| e.to_string())?;
    let schema = Schema::new(typed_nulls(schema.fields()));
    let mut w = RowsWriter::new(path, schema, props)?;
    for r in rows {
        w.push(r.clone())?;
    }
    w.finish().map(|_| ())
}

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

/// Writes the `messages` and `events` rows of one flow of one capture.
pub fn timeline_rows(
    capture_file: &str,
    index: usize,
    f: &FlowTimeline,
    messages: &mut RowsWriter,
    events: &mut RowsWriter,
) -> Result<(), String> {
    let key = |m: &mut Map<String, Value>| {
        m.insert("capture_file".into(), json!(capture_file));
        m.insert("flow".into(), json!(f.id));
        m.insert("flow_index".into(), json!(index));
    };
    for m in &f.messages {
        let mut v = with_integer_times(serde_json::to_value(m).expect("a message serialises"));
        if let Value::Object(o) = &mut v {
            key(o);
        }
        messages.push(v)?;
    }
    let mut event = |kind: &str, v: Value| {
        let mut v = with_integer_times(v);
        if let Value::Object(o) = &mut v {
            key(o);
            o.insert("kind".into(), json!(kind));
        }
        events.push(v)
    };
    for l in &f.losses {
        event("loss", serde_json::to_value(l).expect("a loss serialises"))?;
    }
    for r in &f.retransmissions {
        event("retransmission", serde_json::to_value(r).expect("a retransmission serialises"))?;
    }
    for g in &f.capture_gaps {
        event("capture_gap", serde_json::to_value(g).expect("a capture gap serialises"))?;
    }
    Ok(())
}

/// The `messages` table's schema (the same in every file).
pub fn messages_schema() -> Schema {
    let s = |n: &str| Field::new(n, DataType::Utf8, true);
    let u = |n: &str| Field::new(n, DataType::UInt64, true);
    let i = |n: &str| Field::new(n, DataType::Int64, true);
    Schema::new(vec![
        Field::new("capture_file", DataType::Utf8, false),
        Field::new("flow", DataType::Utf8, false),
        Field::new("flow_index", DataType::UInt32, false),
        u("index"),
        s("op"),
        Field::new("first_psn", DataType::UInt32, true),
        Field::new("last_psn", DataType::UInt32, true),
        u("first_frame"),
        u("last_frame"),
        u("complete_frame"),
        i("complete_time_ns"),
        Field::new("packets", DataType::UInt32, true),
        u("retransmitted"),
        u("bytes"),
        u("latency_ns"),
    ])
}

/// The `events` table's schema (the same in every file): a loss's, a retransmission's and a
/// capture gap's keys, each absent one null.
pub fn events_schema() -> Schema {
    let s = |n: &str| Field::new(n, DataType::Utf8, true);
    Schema::new(vec![
        Field::new("capture_file", DataType::Utf8, false),
        Field::new("flow", DataType::Utf8, false),
        Field::new("flow_index", DataType::UInt32, false),
        Field::new("kind", DataType::Utf8, false),
        Field::new("frame", DataType::UInt64, false),
        Field::new("psn", DataType::UInt32, false),
        Field::new("time_ns", DataType::Int64, true),
        s("signal"),
        s("repair"),
        s("evidence"),
        s("cause"),
        s("trigger"),
        Field::new("spurious", DataType::Boolean, true),
        Field::new("copy", DataType::UInt32, true),
        Field::new("message", DataType::UInt64, true),
    ])
}

pub fn write_flows(path: &std::path::Path, rows: &[Value], props: WriterProperties) -> Result<(), String> {
    write_inferred(path, rows, props)
}
