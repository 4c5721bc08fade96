//! The `packets` table's schema (docs/cluster.md, "Schema"), generated from the codec's field
//! registry: a few capture columns, then one nullable column per registry field, every field in
//! every file whether a frame has it or not, so that every export of every capture has the same
//! columns. A registry field's column is its name without `rocescope.` and with `_` for `.`
//! (`rocescope.bth.psn` → `bth_psn`: no quoting in SQL), and carries the field's name and
//! description as Arrow field metadata (`rocescope.field`, `description`). The schema's version
//! is in each file's key-value metadata ([`VERSION_KEY`]).
//!
//! After the registry's columns come the per-packet analysis fields (`rocescope.analysis.*`,
//! docs/analysis.md), named the same way (`analysis_retransmission`), with the frame's flow in
//! the capture columns (`flow`, `flow_index`). `rocescope.analysis.message` is left out: a data
//! packet's message is found by joining `messages` on the flow and the PSN range
//! (docs/cluster.md), which keeps the export's memory independent of the capture's length.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use rocescope_analysis::analyze::fields::{AField, AnalysisFieldDef, ANALYSIS_FIELDS};
use rocescope_codec::{FieldDef, FieldType, FIELDS};

/// The key-value metadata key of the schema's version, and the version: bumped whenever a
/// column is added, removed or retyped.
pub const VERSION_KEY: &str = "rocescope.schema_version";
pub const VERSION: &str = "2";
/// The key-value metadata key saying how each file's rows are ordered.
pub const SORT_KEY: &str = "rocescope.sort_order";

/// The column of a registry field.
pub fn column_name(field: &str) -> String {
    field.strip_prefix("rocescope.").unwrap_or(field).replace('.', "_")
}

/// The Arrow type of a registry field's column: unsigned integers of the field's width (24-bit
/// fields in 32), booleans, binary, dictionary-encoded names for enumerations, text; a repeated
/// field is a list of its values (integers as 64-bit).
pub fn field_type(d: &FieldDef) -> DataType {
    let one = match d.ty {
        FieldType::UInt(8) => DataType::UInt8,
        FieldType::UInt(16) => DataType::UInt16,
        FieldType::UInt(24 | 32) => DataType::UInt32,
        FieldType::UInt(_) => DataType::UInt64,
        FieldType::Bool => DataType::Boolean,
        FieldType::Bytes => DataType::Binary,
        FieldType::Enum => DataType::Dictionary(Box::new(DataType::Int16), Box::new(DataType::Utf8)),
        FieldType::Text => DataType::Utf8,
    };
    if !d.repeated {
        return one;
    }
    let item = match d.ty {
        FieldType::UInt(_) | FieldType::Bool => DataType::UInt64,
        FieldType::Bytes => DataType::Binary,
        FieldType::Enum | FieldType::Text => DataType::Utf8,
    };
    DataType::List(Arc::new(Field::new("item", item, true)))
}

/// The capture columns, before the registry's: what names and places a frame.
pub fn capture_fields() -> Vec<Field> {
    let described =
        |f: Field, desc: &str| f.with_metadata(HashMap::from([("description".to_string(), desc.to_string())]));
    vec![
        described(
            Field::new(
                "capture_file",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                false,
            ),
            "The capture file, as named on the command line",
        ),
        described(Field::new("frame", DataType::UInt64, false), "Frame number in its capture, from 1 (frame.number)"),
        described(Field::new("interface", DataType::UInt32, false), "pcapng interface id (0 for pcap)"),
        described(Field::new("time_ns", DataType::Int64, false), "Capture time, nanoseconds since the Unix epoch"),
        described(
            Field::new("time", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), false),
            "Capture time as a microsecond timestamp (Spark reads no nanosecond timestamps)",
        ),
        described(Field::new("len", DataType::UInt32, false), "Frame length on the wire (frame.len)"),
        described(Field::new("cap_len", DataType::UInt32, false), "Captured length (frame.cap_len)"),
        described(
            Field::new("src_addr", DataType::FixedSizeBinary(16), true),
            "Source address, 16 bytes: IPv6, GRH GID, or IPv4 mapped (::ffff:a.b.c.d)",
        ),
        described(Field::new("dst_addr", DataType::FixedSizeBinary(16), true), "Destination address, as src_addr"),
        described(Field::new("src_port", DataType::UInt16, true), "UDP source port"),
        described(Field::new("dst_port", DataType::UInt16, true), "UDP destination port"),
        described(
            Field::new("protocol", DataType::Dictionary(Box::new(DataType::Int16), Box::new(DataType::Utf8)), false),
            "The summary line's protocol column (RoCEv2, RoCEv1, …)",
        ),
        described(
            Field::new("flow", DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)), true),
            "The frame's flow (rocescope.analysis.flow: SRC>DST/DESTQP[@IF][#N]), as `flows` names it",
        ),
        described(
            Field::new("flow_index", DataType::UInt32, true),
            "The flow's index in its capture (the flows, messages and events tables' flow_index)",
        ),
        described(
            Field::new("tap", DataType::Dictionary(Box::new(DataType::Int16), Box::new(DataType::Utf8)), true),
            "Where the capture was taken for the frame's flow (sender, receiver, fabric, unknown), as `flows` infers it",
        ),
    ]
}

/// The analysis fields with a column of their own (all but the flow, which is `flow`, and the
/// message, which a join finds).
pub fn analysis_columns() -> impl Iterator<Item = &'static AnalysisFieldDef> {
    ANALYSIS_FIELDS.iter().filter(|d| !matches!(d.field, AField::Flow | AField::Message))
}

/// An analysis field's Arrow type (as [`field_type`]: the repeated `message_complete` is a list).
pub fn analysis_type(d: &AnalysisFieldDef) -> DataType {
    match d.ty {
        _ if d.field == AField::MessageComplete => DataType::List(Arc::new(Field::new("item", DataType::UInt64, true))),
        FieldType::UInt(32) => DataType::UInt32,
        FieldType::UInt(_) => DataType::UInt64,
        FieldType::Bool => DataType::Boolean,
        FieldType::Enum => DataType::Dictionary(Box::new(DataType::Int16), Box::new(DataType::Utf8)),
        FieldType::Bytes => DataType::Binary,
        FieldType::Text => DataType::Utf8,
    }
}

/// The whole `packets` schema, with its version.
pub fn packets_schema() -> Schema {
    let mut fields = capture_fields();
    for d in FIELDS.iter() {
        let meta = HashMap::from([
            ("rocescope.field".to_string(), d.name.to_string()),
            ("description".to_string(), d.desc.to_string()),
        ]);
        fields.push(Field::new(column_name(d.name), field_type(d), true).with_metadata(meta));
    }
    for d in analysis_columns() {
        let meta = HashMap::from([
            ("rocescope.field".to_string(), d.name.to_string()),
            ("description".to_string(), d.desc.to_string()),
        ]);
        fields.push(Field::new(column_name(d.name), analysis_type(d), true).with_metadata(meta));
    }
    Schema::new(fields).with_metadata(HashMap::from([(VERSION_KEY.to_string(), VERSION.to_string())]))
}

/// The schema as a Markdown table (docs/cluster.md is generated from it: `rocescope export
/// --schema`).
pub fn schema_markdown() -> String {
    let mut out = format!("Schema version {VERSION} (`{VERSION_KEY}` in each file's metadata).\n\n");
    out.push_str("| column | type | nullable | registry field | description |\n|---|---|---|---|---|\n");
    for f in packets_schema().fields() {
        let meta = f.metadata();
        let reg = meta.get("rocescope.field").map(|n| format!("`{n}`")).unwrap_or_default();
        let desc = meta.get("description").cloned().unwrap_or_default().replace('|', "\\|");
        out.push_str(&format!("| `{}` | {} | {} | {reg} | {desc} |\n", f.name(), f.data_type(), f.is_nullable()));
    }
    out
}
