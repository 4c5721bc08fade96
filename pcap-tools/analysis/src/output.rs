//! Formatting decoded frames for `rocescope decode`: tshark-like `fields` lines, JSON, and a
//! text summary (optionally with every field). All three read the codec's one field walk
//! ([`rocescope_codec::Frame::visit`]) and the registry; none lists fields of its own.

use std::fmt::Write as _;
use std::io::{self, Write};

use rocescope_codec::decoder::Decoded;
use rocescope_codec::{FieldId, FieldType, Frame, Value};
use std::ops::Range;

use crate::capture::Record;

/// Capture metadata columns that `-e` accepts besides the registry (tshark's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meta {
    Number,
    TimeEpoch,
    Len,
    CapLen,
    IpSrc,
    IpDst,
    UdpSrcPort,
    UdpDstPort,
}

impl Meta {
    pub const ALL: [(&'static str, Meta, &'static str); 8] = [
        ("frame.number", Meta::Number, "Frame number, from 1"),
        ("frame.time_epoch", Meta::TimeEpoch, "Capture time, seconds since the epoch with 9 decimals"),
        ("frame.len", Meta::Len, "Frame length on the wire"),
        ("frame.cap_len", Meta::CapLen, "Captured length"),
        ("ip.src", Meta::IpSrc, "Source IP address (or GRH source GID)"),
        ("ip.dst", Meta::IpDst, "Destination IP address (or GRH destination GID)"),
        ("udp.srcport", Meta::UdpSrcPort, "UDP source port"),
        ("udp.dstport", Meta::UdpDstPort, "UDP destination port"),
    ];

    fn write(self, rec: &Record<'_>, frame: &Frame<'_>, out: &mut String) {
        match self {
            Meta::Number => write!(out, "{}", rec.number),
            Meta::TimeEpoch => write!(out, "{}.{:09}", rec.ts_ns / 1_000_000_000, rec.ts_ns % 1_000_000_000),
            Meta::Len => write!(out, "{}", rec.orig_len),
            Meta::CapLen => write!(out, "{}", rec.data.len()),
            Meta::IpSrc => frame.ip_addrs().map_or(Ok(()), |(s, _)| write!(out, "{s}")),
            Meta::IpDst => frame.ip_addrs().map_or(Ok(()), |(_, d)| write!(out, "{d}")),
            Meta::UdpSrcPort => frame.udp_ports().map_or(Ok(()), |(s, _)| write!(out, "{s}")),
            Meta::UdpDstPort => frame.udp_ports().map_or(Ok(()), |(_, d)| write!(out, "{d}")),
        }
        .expect("writing to a String");
    }
}

/// One `-e` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    Field(FieldId),
    Meta(Meta),
    /// A per-packet analysis field (`rocescope.analysis.*`, [`crate::analyze::fields`]).
    Analysis(crate::analyze::fields::AField),
}

impl Column {
    pub fn parse(name: &str) -> Option<Column> {
        if let Some(id) = FieldId::from_name(name) {
            return Some(Column::Field(id));
        }
        if let Some(a) = crate::analyze::fields::AField::from_name(name) {
            return Some(Column::Analysis(a));
        }
        Meta::ALL.iter().find(|(n, _, _)| *n == name).map(|(_, m, _)| Column::Meta(*m))
    }
}

/// Writes one tab-separated line: each column's values joined by commas, empty where absent.
pub fn write_fields_line(
    out: &mut impl Write,
    cols: &[Column],
    rec: &Record<'_>,
    d: &Decoded<'_, '_>,
    cells: &mut Vec<String>,
) -> io::Result<()> {
    write_fields_line_with(out, cols, rec, d, cells, |_, _| {})
}

/// The same, with the analysis columns' values from `analysis`.
pub fn write_fields_line_with(
    out: &mut impl Write,
    cols: &[Column],
    rec: &Record<'_>,
    d: &Decoded<'_, '_>,
    cells: &mut Vec<String>,
    mut analysis: impl FnMut(crate::analyze::fields::AField, &mut String),
) -> io::Result<()> {
    let frame = &d.frame;
    cells.resize(cols.len(), String::new());
    cells.iter_mut().for_each(String::clear);
    for (i, c) in cols.iter().enumerate() {
        if let Column::Analysis(a) = c {
            analysis(*a, &mut cells[i]);
        }
        if let Column::Meta(m) = c {
            m.write(rec, frame, &mut cells[i]);
        }
    }
    d.visit(|id, v, _| {
        for (i, c) in cols.iter().enumerate() {
            if *c == Column::Field(id) {
                let cell = &mut cells[i];
                if !cell.is_empty() {
                    cell.push(',');
                }
                write!(cell, "{v}").expect("writing to a String");
            }
        }
    });
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            out.write_all(b"\t")?;
        }
        out.write_all(cell.as_bytes())?;
    }
    out.write_all(b"\n")
}

fn json_value(id: FieldId, v: Value<'_>) -> serde_json::Value {
    use serde_json::Value as J;
    match (id.def().ty, v) {
        (FieldType::UInt(64), Value::UInt(n)) => J::String(n.to_string()),
        (_, Value::UInt(n)) => J::from(n),
        (_, Value::Bool(b)) => J::Bool(b),
        (_, v) => J::String(v.to_string()),
    }
}

/// The JSON object of one frame: capture metadata, then every field by its registry name
/// (repeated fields as arrays, 64-bit integers as decimal strings).
pub fn frame_json(rec: &Record<'_>, d: &Decoded<'_, '_>) -> serde_json::Value {
    let frame = &d.frame;
    let mut m = serde_json::Map::new();
    m.insert("frame".into(), rec.number.into());
    m.insert("time_ns".into(), rec.ts_ns.to_string().into());
    m.insert("len".into(), rec.orig_len.into());
    m.insert("cap_len".into(), rec.data.len().into());
    m.insert("interface".into(), rec.interface.into());
    if let Some((s, d)) = frame.ip_addrs() {
        m.insert("src".into(), s.to_string().into());
        m.insert("dst".into(), d.to_string().into());
    }
    d.visit(|id, v, _| {
        let jv = json_value(id, v);
        if id.def().repeated {
            m.entry(id.name())
                .or_insert_with(|| serde_json::Value::Array(vec![]))
                .as_array_mut()
                .expect("repeated fields are arrays")
                .push(jv);
        } else {
            m.insert(id.name().into(), jv);
        }
    });
    serde_json::Value::Object(m)
}

/// A one-line summary, like tshark's default output.
pub fn write_summary(out: &mut impl Write, rec: &Record<'_>, d: &Decoded<'_, '_>) -> io::Result<()> {
    let frame = &d.frame;
    let t = format!("{}.{:09}", rec.ts_ns / 1_000_000_000, rec.ts_ns % 1_000_000_000);
    let (src, dst) = match (frame.ip_addrs(), frame.lrh()) {
        (Some((s, d)), _) => (s.to_string(), d.to_string()),
        // A local InfiniBand packet: its LIDs.
        (None, Some(lrh)) => (format!("LID {}", lrh.slid()), format!("LID {}", lrh.dlid())),
        (None, None) => (String::from("-"), String::from("-")),
    };
    let mut info = summary_info(d);
    if d.profile() != rocescope_codec::Profile::Std {
        write!(info, " <{}>", d.profile().name()).unwrap();
    }
    for w in frame.warnings.listed().chain(d.extra.detection.iter().copied()) {
        write!(info, " [{w}]").unwrap();
    }
    writeln!(out, "{:>6} {t} {src} → {dst} {info}", rec.number)
}

/// The protocol part of the summary line (opcode, QP, PSN, AETH, …, `[truncated]`), without
/// the profile tag and the warnings that [`write_summary`] appends (the browser shows those in
/// columns of their own).
pub fn summary_info(d: &Decoded<'_, '_>) -> String {
    let frame = &d.frame;
    let mut info = String::new();
    if let Some(p) = frame.roce() {
        let bth = p.bth();
        write!(info, "{} QP={} PSN={}", p.opcode().name(), bth.dest_qp(), bth.psn()).unwrap();
        if bth.ack_req() {
            info.push_str(" A");
        }
        if let Some(a) = p.aeth() {
            write!(info, " {} MSN={}", a.syndrome().kind_name(), a.msn()).unwrap();
        }
        if let Some(s) = p.irn_sack() {
            write!(info, " SACK={}", s.sack_psn()).unwrap();
        }
        if p.payload_len() > 0 {
            write!(info, " len={}", p.payload_len()).unwrap();
        }
        if let Some(cm) = frame.cm() {
            write!(info, " CM {}", cm.msg().name().to_uppercase()).unwrap();
        }
        if let Some(st) = frame.icrc_status().name() {
            if st != "good" {
                write!(info, " ICRC {st}").unwrap();
            }
        }
    } else if let Some(n) = &d.nacks {
        let entries = n.entries().len();
        write!(info, "ERD NACK stream: {} messages completed, {entries} lost PSNs", n.messages().len()).unwrap();
    } else if let Some(mc) = frame.mac_control() {
        info.push_str(if mc.class_enable().is_some() { "PFC" } else { "PAUSE" });
        let q: Vec<String> = (0..mc.quanta_count()).map(|i| mc.quanta(i).to_string()).collect();
        write!(info, " quanta={}", q.join(",")).unwrap();
    } else {
        info.push_str("(not RoCE)");
    }
    if frame.truncated() {
        info.push_str(" [truncated]");
    }
    info
}

/// Every field of a frame, one `name: value` line each, indented under the summary.
pub fn write_tree(out: &mut impl Write, d: &Decoded<'_, '_>) -> io::Result<()> {
    // A field repeated in one packet is one line: its values joined by commas (INTERFACES.md),
    // then the byte ranges of the values that have some.
    let mut line: Option<(FieldId, String, Vec<Range<usize>>)> = None;
    let mut res = Ok(());
    let mut flush = |line: &mut Option<(FieldId, String, Vec<Range<usize>>)>, res: &mut io::Result<()>| {
        if let Some((id, values, ranges)) = line.take() {
            if res.is_ok() {
                let ranges: Vec<String> = ranges.iter().map(|r| format!("{}..{}", r.start, r.end)).collect();
                *res = if ranges.is_empty() {
                    writeln!(out, "    {}: {values}", id.name())
                } else {
                    writeln!(out, "    {}: {values}    [bytes {}]", id.name(), ranges.join(", "))
                };
            }
        }
    };
    d.visit(|id, v, range| {
        match &mut line {
            Some((cur, values, ranges)) if *cur == id => {
                values.push(',');
                values.push_str(&v.to_string());
                if !range.is_empty() {
                    ranges.push(range);
                }
            }
            _ => {
                flush(&mut line, &mut res);
                line = Some((id, v.to_string(), if range.is_empty() { vec![] } else { vec![range] }));
            }
        }
    });
    flush(&mut line, &mut res);
    res
}

/// A field type as `rocescope fields` and the browser name it: `uint24`, `bool`, `bytes`,
/// `enum`, `text`.
pub fn type_name(ty: FieldType) -> String {
    match ty {
        FieldType::UInt(n) => format!("uint{n}"),
        FieldType::Bool => "bool".into(),
        FieldType::Bytes => "bytes".into(),
        FieldType::Enum => "enum".into(),
        FieldType::Text => "text".into(),
    }
}

/// `rocescope fields`: every registry field (`name<TAB>type<TAB>description`, an enumeration's
/// values in the type as `enum(a|b)`), then the capture columns `-e` accepts (type `meta`).
pub fn write_field_list(out: &mut impl Write) -> io::Result<()> {
    for f in rocescope_codec::FIELDS {
        let ty = match f.ty {
            FieldType::Enum => format!("enum({})", f.values.join("|")),
            ty => type_name(ty),
        };
        writeln!(out, "{}\t{}\t{}", f.name, ty, f.desc)?;
    }
    for (name, _, desc) in Meta::ALL {
        writeln!(out, "{name}\tmeta\t{desc}")?;
    }
    for f in crate::analyze::fields::ANALYSIS_FIELDS {
        let ty = match f.ty {
            FieldType::Enum => format!("enum({})", f.values.join("|")),
            ty => type_name(ty),
        };
        writeln!(out, "{}\t{}\t{}", f.name, ty, f.desc)?;
    }
    Ok(())
}

/// A short protocol name for a packet list: InfiniBand (link type 247), RoCEv2, RoCEv1, ERD
/// NACK, PFC, PAUSE, TCP, UDP, IPv4, IPv6, Ethernet, or `?` for a frame that was not decoded.
pub fn protocol_name(d: &Decoded<'_, '_>) -> &'static str {
    let f = &d.frame;
    if f.lrh().is_some() {
        "InfiniBand"
    } else if f.roce().is_some() {
        if f.is_rocev1() {
            "RoCEv1"
        } else {
            "RoCEv2"
        }
    } else if d.nacks.is_some() {
        "ERD NACK"
    } else if let Some(mc) = f.mac_control() {
        if mc.class_enable().is_some() {
            "PFC"
        } else {
            "PAUSE"
        }
    } else if f.tcp().is_some() {
        "TCP"
    } else if f.udp_ports().is_some() {
        "UDP"
    } else if let Some((a, _)) = f.ip_addrs() {
        if a.is_ipv4() {
            "IPv4"
        } else {
            "IPv6"
        }
    } else if f.data().is_empty() {
        "?"
    } else {
        "Ethernet"
    }
}

/// In `auto` mode, the notes on the packets detection could not classify and on those given out
/// before their flow was decided (beyond the look-ahead); empty when there is nothing to say.
pub fn detection_note(decoder: &rocescope_codec::decoder::Decoder) -> Option<String> {
    let s = decoder.stats();
    if decoder.options().profile != rocescope_codec::decoder::ProfileChoice::Auto {
        return None;
    }
    let plural = |n: u64, one: &'static str, many: &'static str| if n == 1 { one } else { many };
    let mut notes = Vec::new();
    if s.flows_unsure > 0 {
        notes.push(format!(
            "auto: {} {} of {} {} could not be classified and {} decoded as std (the warning is on each flow's first packet)",
            s.packets_unsure,
            plural(s.packets_unsure, "packet", "packets"),
            s.flows_unsure,
            plural(s.flows_unsure, "flow", "flows"),
            plural(s.packets_unsure, "was", "were"),
        ));
    }
    if s.packets_early > 0 {
        notes.push(format!(
            "auto: {} {} decoded as std before {} flow was detected (beyond the look-ahead of {} frames)",
            s.packets_early,
            plural(s.packets_early, "packet was", "packets were"),
            plural(s.packets_early, "its", "their"),
            crate::session::LOOKAHEAD_FRAMES,
        ));
    }
    (!notes.is_empty()).then(|| notes.join("\nrocescope: "))
}
