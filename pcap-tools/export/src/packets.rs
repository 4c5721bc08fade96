//! The `packets` table: one row per frame, built column by column as the capture is read
//! ([`PacketsBuilder::add`]), a window of [`WINDOW_ROWS`] rows at a time; each window is handed
//! to [`crate::window`], which sorts it by flow and time and writes it as a file of its own, so
//! memory holds a window or two, not the capture.

use std::net::IpAddr;
use std::sync::Arc;

use arrow::array::new_null_array;
use arrow::array::{
    ArrayRef, BinaryBuilder, BooleanBuilder, FixedSizeBinaryBuilder, Int64Builder, ListBuilder, StringBuilder,
    StringDictionaryBuilder, TimestampMicrosecondBuilder, UInt16Builder, UInt32Builder, UInt64Builder, UInt8Builder,
};
use arrow::datatypes::{DataType, Int16Type, Int32Type, Schema};
use arrow::record_batch::RecordBatch;
use rocescope_analysis::analyze::fields::AField;
use rocescope_analysis::capture::Record;
use rocescope_analysis::output;
use rocescope_codec::decoder::Decoded;
use rocescope_codec::{Value, FIELDS};

use crate::notes::{Events, Live};
use crate::schema;

/// Rows a window holds: a file of the export, one row group ([`crate::ROW_GROUP_ROWS`]).
pub const WINDOW_ROWS: usize = 128 * 1024;

/// One registry field's column being built.
enum Col {
    U8(UInt8Builder),
    U16(UInt16Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
    Bool(BooleanBuilder),
    Bin(BinaryBuilder),
    Str(StringBuilder),
    Dict(StringDictionaryBuilder<Int16Type>),
    ListU(ListBuilder<UInt64Builder>),
    ListB(ListBuilder<BinaryBuilder>),
    ListS(ListBuilder<StringBuilder>),
}

impl Col {
    fn for_type(t: &DataType) -> Col {
        match t {
            DataType::UInt8 => Col::U8(UInt8Builder::new()),
            DataType::UInt16 => Col::U16(UInt16Builder::new()),
            DataType::UInt32 => Col::U32(UInt32Builder::new()),
            DataType::UInt64 => Col::U64(UInt64Builder::new()),
            DataType::Boolean => Col::Bool(BooleanBuilder::new()),
            DataType::Binary => Col::Bin(BinaryBuilder::new()),
            DataType::Dictionary(..) => Col::Dict(StringDictionaryBuilder::new()),
            DataType::List(item) => match item.data_type() {
                DataType::UInt64 => Col::ListU(ListBuilder::new(UInt64Builder::new())),
                DataType::Binary => Col::ListB(ListBuilder::new(BinaryBuilder::new())),
                _ => Col::ListS(ListBuilder::new(StringBuilder::new())),
            },
            _ => Col::Str(StringBuilder::new()),
        }
    }

    /// One value of this frame's (a repeated field's next item).
    fn push(&mut self, v: &Value<'_>) {
        let n = v.as_u64().unwrap_or(0);
        match self {
            Col::U8(b) => b.append_value(n as u8),
            Col::U16(b) => b.append_value(n as u16),
            Col::U32(b) => b.append_value(n as u32),
            Col::U64(b) => b.append_value(n),
            Col::Bool(b) => b.append_value(n != 0),
            Col::Bin(b) => b.append_value(bytes_of(v)),
            // (Names and fixed texts as they are: no string made per value.)
            Col::Str(b) => match v {
                Value::Str(t) => b.append_value(t),
                _ => b.append_value(v.to_string()),
            },
            Col::Dict(b) => {
                match v {
                    Value::Str(t) => b.append_value(t),
                    _ => b.append_value(v.to_string()),
                };
            }
            Col::ListU(b) => b.values().append_value(n),
            Col::ListB(b) => b.values().append_value(bytes_of(v)),
            Col::ListS(b) => match v {
                Value::Str(t) => b.values().append_value(t),
                _ => b.values().append_value(v.to_string()),
            },
        }
    }

    /// `n` rows without a value.
    fn nulls(&mut self, n: usize) {
        match self {
            Col::U8(b) => b.append_nulls(n),
            Col::U16(b) => b.append_nulls(n),
            Col::U32(b) => b.append_nulls(n),
            Col::U64(b) => b.append_nulls(n),
            Col::Bool(b) => b.append_nulls(n),
            Col::Bin(b) => (0..n).for_each(|_| b.append_null()),
            Col::Str(b) => (0..n).for_each(|_| b.append_null()),
            Col::Dict(b) => b.append_nulls(n),
            Col::ListU(b) => (0..n).for_each(|_| b.append_null()),
            Col::ListB(b) => (0..n).for_each(|_| b.append_null()),
            Col::ListS(b) => (0..n).for_each(|_| b.append_null()),
        }
    }

    /// The end of a row that has a value (a repeated field's list closes).
    fn end_set_row(&mut self) {
        match self {
            Col::ListU(b) => b.append(true),
            Col::ListB(b) => b.append(true),
            Col::ListS(b) => b.append(true),
            _ => {}
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Col::U8(b) => Arc::new(b.finish()),
            Col::U16(b) => Arc::new(b.finish()),
            Col::U32(b) => Arc::new(b.finish()),
            Col::U64(b) => Arc::new(b.finish()),
            Col::Bool(b) => Arc::new(b.finish()),
            Col::Bin(b) => Arc::new(b.finish()),
            Col::Str(b) => Arc::new(b.finish()),
            Col::Dict(b) => Arc::new(b.finish()),
            Col::ListU(b) => Arc::new(b.finish()),
            Col::ListB(b) => Arc::new(b.finish()),
            Col::ListS(b) => Arc::new(b.finish()),
        }
    }
}

fn bytes_of<'a>(v: &Value<'a>) -> &'a [u8] {
    match *v {
        Value::Bytes(b) => b,
        _ => &[],
    }
}

/// An address as 16 bytes (IPv4 mapped into IPv6).
fn addr16(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V4(v) => v.to_ipv6_mapped().octets(),
        IpAddr::V6(v) => v.octets(),
    }
}

/// The capture columns being built.
struct CaptureCols {
    file: StringDictionaryBuilder<Int32Type>,
    frame: UInt64Builder,
    interface: UInt32Builder,
    time_ns: Int64Builder,
    time: TimestampMicrosecondBuilder,
    len: UInt32Builder,
    cap_len: UInt32Builder,
    src: FixedSizeBinaryBuilder,
    dst: FixedSizeBinaryBuilder,
    sport: UInt16Builder,
    dport: UInt16Builder,
    protocol: StringDictionaryBuilder<Int16Type>,
    flow: StringDictionaryBuilder<Int32Type>,
    flow_index: UInt32Builder,
    tap: StringDictionaryBuilder<Int16Type>,
}

impl CaptureCols {
    fn new() -> CaptureCols {
        CaptureCols {
            file: StringDictionaryBuilder::new(),
            frame: UInt64Builder::new(),
            interface: UInt32Builder::new(),
            time_ns: Int64Builder::new(),
            time: TimestampMicrosecondBuilder::new().with_timezone("UTC"),
            len: UInt32Builder::new(),
            cap_len: UInt32Builder::new(),
            src: FixedSizeBinaryBuilder::new(16),
            dst: FixedSizeBinaryBuilder::new(16),
            sport: UInt16Builder::new(),
            dport: UInt16Builder::new(),
            protocol: StringDictionaryBuilder::new(),
            flow: StringDictionaryBuilder::new(),
            flow_index: UInt32Builder::new(),
            tap: StringDictionaryBuilder::new(),
        }
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        vec![
            Arc::new(self.file.finish()),
            Arc::new(self.frame.finish()),
            Arc::new(self.interface.finish()),
            Arc::new(self.time_ns.finish()),
            Arc::new(self.time.finish()),
            Arc::new(self.len.finish()),
            Arc::new(self.cap_len.finish()),
            Arc::new(self.src.finish()),
            Arc::new(self.dst.finish()),
            Arc::new(self.sport.finish()),
            Arc::new(self.dport.finish()),
            Arc::new(self.protocol.finish()),
            Arc::new(self.flow.finish()),
            Arc::new(self.flow_index.finish()),
            Arc::new(self.tap.finish()),
        ]
    }
}

/// The analysis columns being built ([`schema::analysis_columns`], in that order).
struct AnalysisCols {
    retransmission: BooleanBuilder,
    cause: StringDictionaryBuilder<Int16Type>,
    trigger: StringDictionaryBuilder<Int16Type>,
    spurious: BooleanBuilder,
    loss: BooleanBuilder,
    signal: StringDictionaryBuilder<Int16Type>,
    out_of_order: BooleanBuilder,
    psn_gap: BooleanBuilder,
    acked_unseen: UInt32Builder,
    duplicate_nak: BooleanBuilder,
    ack_rtt_ns: UInt64Builder,
    message_complete: ListBuilder<UInt64Builder>,
    ce_to_cnp_ns: UInt64Builder,
}

/// A flag as `decode` shows it: a value when set, nothing otherwise.
fn flag(b: &mut BooleanBuilder, set: bool) {
    if set {
        b.append_value(true)
    } else {
        b.append_null()
    }
}

impl AnalysisCols {
    fn new() -> AnalysisCols {
        AnalysisCols {
            retransmission: BooleanBuilder::new(),
            cause: StringDictionaryBuilder::new(),
            trigger: StringDictionaryBuilder::new(),
            spurious: BooleanBuilder::new(),
            loss: BooleanBuilder::new(),
            signal: StringDictionaryBuilder::new(),
            out_of_order: BooleanBuilder::new(),
            psn_gap: BooleanBuilder::new(),
            acked_unseen: UInt32Builder::new(),
            duplicate_nak: BooleanBuilder::new(),
            ack_rtt_ns: UInt64Builder::new(),
            message_complete: ListBuilder::new(UInt64Builder::new()),
            ce_to_cnp_ns: UInt64Builder::new(),
        }
    }

    /// One frame's values, as `decode -e rocescope.analysis.*` shows them
    /// (`fields::write_value`).
    fn add(&mut self, l: &Live, e: &Events) {
        let name = |f: AField, i: u8| f.def().values.get(usize::from(i)).copied().unwrap_or("unknown");
        match e.retransmission {
            Some((c, t, s)) => {
                self.retransmission.append_value(true);
                self.cause.append_value(name(AField::RetransmissionCause, c));
                self.trigger.append_value(name(AField::RetransmissionTrigger, t));
                match s {
                    2 => self.spurious.append_null(),
                    s => self.spurious.append_value(s == 1),
                }
            }
            None => {
                self.retransmission.append_null();
                self.cause.append_null();
                self.trigger.append_null();
                self.spurious.append_null();
            }
        }
        flag(&mut self.loss, e.loss.is_some());
        match e.loss {
            Some(s) => {
                self.signal.append_value(name(AField::LossSignal, s));
            }
            None => self.signal.append_null(),
        }
        flag(&mut self.out_of_order, l.out_of_order);
        flag(&mut self.psn_gap, l.psn_gap);
        self.acked_unseen.append_option((e.acked_unseen > 0).then_some(e.acked_unseen));
        flag(&mut self.duplicate_nak, l.duplicate_nak);
        self.ack_rtt_ns.append_option(l.ack_rtt_ns);
        if e.message_complete.is_empty() {
            self.message_complete.append_null();
        } else {
            self.message_complete.values().append_slice(&e.message_complete);
            self.message_complete.append(true);
        }
        self.ce_to_cnp_ns.append_option(l.ce_to_cnp_ns);
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        vec![
            Arc::new(self.retransmission.finish()),
            Arc::new(self.cause.finish()),
            Arc::new(self.trigger.finish()),
            Arc::new(self.spurious.finish()),
            Arc::new(self.loss.finish()),
            Arc::new(self.signal.finish()),
            Arc::new(self.out_of_order.finish()),
            Arc::new(self.psn_gap.finish()),
            Arc::new(self.acked_unseen.finish()),
            Arc::new(self.duplicate_nak.finish()),
            Arc::new(self.ack_rtt_ns.finish()),
            Arc::new(self.message_complete.finish()),
            Arc::new(self.ce_to_cnp_ns.finish()),
        ]
    }
}

/// `n` (at most [`WINDOW_ROWS`]) nulls of type `t`, without allocating: a slice of one
/// all-null array per type, made once. (Most columns have no value in a window; made anew per
/// window, their zeroed buffers were some 250 MB of a 256 K-row window's resident memory.)
pub fn nulls(t: &DataType, n: usize) -> ArrayRef {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static MADE: OnceLock<Mutex<HashMap<DataType, ArrayRef>>> = OnceLock::new();
    if n > WINDOW_ROWS {
        return new_null_array(t, n);
    }
    let mut made = MADE.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    made.entry(t.clone()).or_insert_with(|| new_null_array(t, WINDOW_ROWS)).slice(0, n)
}

/// A window of rows, finished: the record batch, and each row's partition folder (an index in
/// the capture's [`crate::partition::Folders`]).
pub struct Window {
    pub batch: RecordBatch,
    pub folders: Vec<u32>,
}

/// Builds one capture's `packets` rows, a window at a time.
pub struct PacketsBuilder {
    schema: Arc<Schema>,
    capture: CaptureCols,
    cols: Vec<Col>,
    analysis: AnalysisCols,
    /// Per column: whether this row has a value, and how many rows it holds (most columns are
    /// null in most rows: their nulls are appended in runs, when a value comes or the window
    /// ends, so that a row costs its fields, not every column; a column no row of the window
    /// has a value in is made null at once, without a builder).
    set: Vec<bool>,
    held: Vec<usize>,
    touched: Vec<usize>,
    folders: Vec<u32>,
    rows: usize,
}

impl PacketsBuilder {
    pub fn new() -> PacketsBuilder {
        let schema = Arc::new(schema::packets_schema());
        let first = schema::capture_fields().len();
        let cols = schema.fields()[first..first + FIELDS.len()].iter().map(|f| Col::for_type(f.data_type())).collect();
        PacketsBuilder {
            schema,
            capture: CaptureCols::new(),
            cols,
            analysis: AnalysisCols::new(),
            set: vec![false; FIELDS.len()],
            held: vec![0; FIELDS.len()],
            touched: Vec::new(),
            folders: Vec::with_capacity(WINDOW_ROWS),
            rows: 0,
        }
    }

    pub fn schema(&self) -> Arc<Schema> {
        self.schema.clone()
    }

    /// One frame's row: its capture columns, its flow (index, id, tap) and analysis, its fields,
    /// the partition folder it goes to. A full window is returned.
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        capture_file: &str,
        rec: &Record<'_>,
        d: &Decoded<'_, '_>,
        flow: Option<(u32, &str, &str)>,
        live: &Live,
        events: &Events,
        folder: u32,
    ) -> Result<Option<Window>, arrow::error::ArrowError> {
        let c = &mut self.capture;
        c.file.append_value(capture_file);
        c.frame.append_value(rec.number);
        c.interface.append_value(rec.interface);
        let t = rec.ts_ns.min(i64::MAX as u64) as i64;
        c.time_ns.append_value(t);
        c.time.append_value(t.div_euclid(1000));
        c.len.append_value(rec.orig_len);
        c.cap_len.append_value(rec.data.len() as u32);
        match d.frame.ip_addrs() {
            Some((s, t)) => {
                c.src.append_value(addr16(s))?;
                c.dst.append_value(addr16(t))?;
            }
            None => {
                c.src.append_null();
                c.dst.append_null();
            }
        }
        match d.frame.udp_ports() {
            Some((s, t)) => {
                c.sport.append_value(s);
                c.dport.append_value(t);
            }
            None => {
                c.sport.append_null();
                c.dport.append_null();
            }
        }
        c.protocol.append_value(output::protocol_name(d));
        match flow {
            Some((i, id, tap)) => {
                c.flow.append_value(id);
                c.flow_index.append_value(i);
                c.tap.append_value(tap);
            }
            None => {
                c.flow.append_null();
                c.flow_index.append_null();
                c.tap.append_null();
            }
        }
        self.analysis.add(live, events);
        self.folders.push(folder);
        let rows = self.rows;
        let (cols, set, held, touched) = (&mut self.cols, &mut self.set, &self.held, &mut self.touched);
        d.visit(|id, v, _| {
            let k = id as usize;
            if set[k] && !FIELDS[k].repeated {
                return;
            }
            if !set[k] {
                // (The rows since this column's last value: null.)
                set[k] = true;
                touched.push(k);
                cols[k].nulls(rows - held[k]);
            }
            cols[k].push(&v);
        });
        for k in self.touched.drain(..) {
            self.cols[k].end_set_row();
            self.set[k] = false;
            self.held[k] = rows + 1;
        }
        self.rows += 1;
        if self.rows == WINDOW_ROWS {
            return self.finish_window().map(Some);
        }
        Ok(None)
    }

    /// The rows not yet handed out, if any.
    pub fn finish(&mut self) -> Result<Option<Window>, arrow::error::ArrowError> {
        if self.rows == 0 {
            return Ok(None);
        }
        self.finish_window().map(Some)
    }

    fn finish_window(&mut self) -> Result<Window, arrow::error::ArrowError> {
        let first = schema::capture_fields().len();
        let mut arrays = self.capture.finish();
        for (k, col) in self.cols.iter_mut().enumerate() {
            if self.held[k] == 0 {
                // (No row of the window had it.)
                arrays.push(nulls(self.schema.field(first + k).data_type(), self.rows));
            } else {
                col.nulls(self.rows - self.held[k]);
                arrays.push(col.finish());
            }
            self.held[k] = 0;
        }
        arrays.extend(self.analysis.finish());
        let batch = RecordBatch::try_new(self.schema.clone(), arrays)?;
        self.rows = 0;
        let folders = std::mem::replace(&mut self.folders, Vec::with_capacity(WINDOW_ROWS));
        Ok(Window { batch, folders })
    }
}

impl Default for PacketsBuilder {
    fn default() -> Self {
        Self::new()
    }
}
