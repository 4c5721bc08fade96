//! The `packets` table: one row per frame, built column by column as the capture is read
//! ([`PacketsWriter::add`]), written to Parquet a record batch at a time ([`BATCH_ROWS`]), so
//! memory holds one batch and the writer's open row group, not the capture.

use std::fs::File;
use std::net::IpAddr;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryBuilder, BooleanBuilder, FixedSizeBinaryBuilder, Int64Builder, ListBuilder, StringBuilder,
    StringDictionaryBuilder, TimestampMicrosecondBuilder, UInt16Builder, UInt32Builder, UInt64Builder, UInt8Builder,
};
use arrow::datatypes::{DataType, Int16Type, Schema};
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use rocescope_analysis::capture::Record;
use rocescope_analysis::output;
use rocescope_codec::decoder::Decoded;
use rocescope_codec::{Value, FIELDS};

use crate::schema;

/// Rows a record batch holds before it is handed to the Parquet writer.
pub const BATCH_ROWS: usize = 16 * 1024;

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
    file: StringBuilder,
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
    protocol: StringBuilder,
}

impl CaptureCols {
    fn new() -> CaptureCols {
        CaptureCols {
            file: StringBuilder::new(),
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
            protocol: StringBuilder::new(),
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
        ]
    }
}

/// Writes one capture's `packets` file.
pub struct PacketsWriter {
    schema: Arc<Schema>,
    capture: CaptureCols,
    cols: Vec<Col>,
    /// Per column: whether this row has a value, and how many rows it holds (most columns are
    /// null in most rows: their nulls are appended in runs, when a value comes or the batch
    /// ends, so that a row costs its fields, not every column).
    set: Vec<bool>,
    held: Vec<usize>,
    touched: Vec<usize>,
    rows: usize,
    pub written: u64,
    out: ArrowWriter<File>,
}

impl PacketsWriter {
    pub fn new(
        file: File,
        props: parquet::file::properties::WriterProperties,
    ) -> parquet::errors::Result<PacketsWriter> {
        let schema = Arc::new(schema::packets_schema());
        let cols =
            schema.fields()[schema::capture_fields().len()..].iter().map(|f| Col::for_type(f.data_type())).collect();
        let out = ArrowWriter::try_new(file, schema.clone(), Some(props))?;
        Ok(PacketsWriter {
            schema,
            capture: CaptureCols::new(),
            cols,
            set: vec![false; FIELDS.len()],
            held: vec![0; FIELDS.len()],
            touched: Vec::new(),
            rows: 0,
            written: 0,
            out,
        })
    }

    /// One frame's row.
    pub fn add(&mut self, capture_file: &str, rec: &Record<'_>, d: &Decoded<'_, '_>) -> parquet::errors::Result<()> {
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
                c.src.append_value(addr16(s)).expect("16 bytes");
                c.dst.append_value(addr16(t)).expect("16 bytes");
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
        if self.rows == BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> parquet::errors::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        for (k, col) in self.cols.iter_mut().enumerate() {
            col.nulls(self.rows - self.held[k]);
            self.held[k] = 0;
        }
        let mut arrays = self.capture.finish();
        arrays.extend(self.cols.iter_mut().map(Col::finish));
        let batch = RecordBatch::try_new(self.schema.clone(), arrays)?;
        self.out.write(&batch)?;
        self.written += self.rows as u64;
        self.rows = 0;
        Ok(())
    }

    /// Writes what is left and the file's footer, with `sort` as its rows' order.
    pub fn finish(mut self, sort: &str) -> parquet::errors::Result<u64> {
        self.flush()?;
        for (k, v) in [(schema::SORT_KEY, sort), (schema::VERSION_KEY, schema::VERSION)] {
            self.out.append_key_value_metadata(parquet::file::metadata::KeyValue::new(k.to_string(), v.to_string()));
        }
        self.out.close()?;
        Ok(self.written)
    }
}
