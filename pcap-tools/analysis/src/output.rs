//! Formatting decoded frames for `rocescope decode`: tshark-like `fields` lines, JSON, and a
//! text summary (`-V`'s tree is in [`crate::tree`]). All three read the codec's one field walk
//! ([`rocescope_codec::Frame::visit`]) and the registry; none lists fields of its own.

use std::fmt::Write as _;
use std::io::{self, Write};

use rocescope_codec::decoder::Decoded;
use rocescope_codec::{FieldId, FieldType, Frame, Value};

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
    TimeRelative,
    TimeDelta,
    TimeDeltaDisplayed,
    IpAddr,
    Ipv6Src,
    Ipv6Dst,
    Ipv6Addr,
    UdpPort,
}

impl Meta {
    pub const ALL: [(&'static str, Meta, &'static str); 16] = [
        ("frame.number", Meta::Number, "Frame number, from 1"),
        ("frame.time_epoch", Meta::TimeEpoch, "Capture time, seconds since the epoch with 9 decimals"),
        ("frame.len", Meta::Len, "Frame length on the wire"),
        ("frame.cap_len", Meta::CapLen, "Captured length"),
        ("ip.src", Meta::IpSrc, "Source IP address (or GRH source GID); in -Y filters the IPv4 source only, as tshark"),
        ("ip.dst", Meta::IpDst, "Destination IP address (or GRH destination GID); in -Y filters the IPv4 destination only, as tshark"),
        ("udp.srcport", Meta::UdpSrcPort, "UDP source port"),
        ("udp.dstport", Meta::UdpDstPort, "UDP destination port"),
        ("frame.time_relative", Meta::TimeRelative, "Seconds since the capture's first frame, with 9 decimals"),
        ("frame.time_delta", Meta::TimeDelta, "Seconds since the previous frame of the capture, with 9 decimals"),
        ("frame.time_delta_displayed", Meta::TimeDeltaDisplayed, "Seconds since the previous frame printed (after -Y), with 9 decimals"),
        ("ip.addr", Meta::IpAddr, "IPv4 source and destination (two occurrences)"),
        ("ipv6.src", Meta::Ipv6Src, "IPv6 source address (not a RoCEv1 GRH's)"),
        ("ipv6.dst", Meta::Ipv6Dst, "IPv6 destination address (not a RoCEv1 GRH's)"),
        ("ipv6.addr", Meta::Ipv6Addr, "IPv6 source and destination (two occurrences)"),
        ("udp.port", Meta::UdpPort, "UDP source and destination port (two occurrences)"),
    ];

    /// This column's name (`frame.number`).
    pub fn name(self) -> &'static str {
        Meta::ALL.iter().find(|(_, m, _)| *m == self).map_or("", |(n, _, _)| n)
    }

    /// Looks a column up by its name.
    pub fn from_name(name: &str) -> Option<Meta> {
        Meta::ALL.iter().find(|(n, _, _)| *n == name).map(|(_, m, _)| *m)
    }

    /// The column's text: its values joined by `style`'s aggregator (or only the first or last
    /// as its occurrence says), nothing when absent.
    fn write(self, rec: &Record<'_>, frame: &Frame<'_>, times: &Times, style: &FieldsStyle, out: &mut String) {
        let mut each = |v: MetaValue| {
            if !style.open_occurrence(out) {
                return;
            }
            match v {
                MetaValue::UInt(n) => push_uint(out, n),
                MetaValue::Time(ns) => write_seconds(out, ns).expect("writing to a String"),
                MetaValue::Ip(std::net::IpAddr::V4(a)) => {
                    for (k, b) in a.octets().into_iter().enumerate() {
                        if k > 0 {
                            out.push('.');
                        }
                        push_uint(out, b as u64);
                    }
                }
                MetaValue::Ip(a) => write!(out, "{a}").expect("writing to a String"),
            }
        };
        match self {
            // The -e columns ip.src/ip.dst print IPv6 and GRH addresses too (INTERFACES.md).
            Meta::IpSrc => frame.ip_addrs().into_iter().for_each(|(s, _)| each(MetaValue::Ip(s))),
            Meta::IpDst => frame.ip_addrs().into_iter().for_each(|(_, d)| each(MetaValue::Ip(d))),
            m => m.values(rec, frame, times, each),
        }
    }

    /// Every occurrence of this column in a frame, as tshark's field of the same name has them
    /// (`ip.*` IPv4 only, `ipv6.*` IPv6 only, `ip.addr`/`ipv6.addr`/`udp.port` twice).
    pub fn values(self, rec: &Record<'_>, frame: &Frame<'_>, times: &Times, mut f: impl FnMut(MetaValue)) {
        let v4 = || frame.ip_addrs().filter(|(s, _)| s.is_ipv4());
        let v6 = || frame.ip_addrs().filter(|(s, _)| s.is_ipv6() && !frame.is_rocev1());
        match self {
            Meta::Number => f(MetaValue::UInt(rec.number)),
            Meta::TimeEpoch => f(MetaValue::Time(times.epoch_ns)),
            Meta::Len => f(MetaValue::UInt(rec.orig_len as u64)),
            Meta::CapLen => f(MetaValue::UInt(rec.data.len() as u64)),
            Meta::TimeRelative => f(MetaValue::Time(times.relative_ns)),
            Meta::TimeDelta => f(MetaValue::Time(times.delta_ns)),
            Meta::TimeDeltaDisplayed => f(MetaValue::Time(times.delta_displayed_ns)),
            Meta::IpSrc => v4().into_iter().for_each(|(s, _)| f(MetaValue::Ip(s))),
            Meta::IpDst => v4().into_iter().for_each(|(_, d)| f(MetaValue::Ip(d))),
            Meta::Ipv6Src => v6().into_iter().for_each(|(s, _)| f(MetaValue::Ip(s))),
            Meta::Ipv6Dst => v6().into_iter().for_each(|(_, d)| f(MetaValue::Ip(d))),
            Meta::IpAddr | Meta::Ipv6Addr => {
                let a = if self == Meta::IpAddr { v4() } else { v6() };
                if let Some((s, d)) = a {
                    f(MetaValue::Ip(s));
                    f(MetaValue::Ip(d));
                }
            }
            Meta::UdpSrcPort => frame.udp_ports().into_iter().for_each(|(s, _)| f(MetaValue::UInt(s as u64))),
            Meta::UdpDstPort => frame.udp_ports().into_iter().for_each(|(_, d)| f(MetaValue::UInt(d as u64))),
            Meta::UdpPort => {
                if let Some((s, d)) = frame.udp_ports() {
                    f(MetaValue::UInt(s as u64));
                    f(MetaValue::UInt(d as u64));
                }
            }
        }
    }
}

/// One value of a [`Meta`] column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaValue {
    UInt(u64),
    /// Nanoseconds (since the epoch, or a difference).
    Time(i64),
    Ip(std::net::IpAddr),
}

/// A frame's times, as tshark's `frame.time_*` fields hold them (nanoseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Times {
    /// Since the Unix epoch.
    pub epoch_ns: i64,
    /// Since the capture's first frame (`frame.time_relative`).
    pub relative_ns: i64,
    /// Since the previous frame of the capture (`frame.time_delta`; 0 for the first).
    pub delta_ns: i64,
    /// Since the previous frame printed (`frame.time_delta_displayed`; 0 for the first).
    pub delta_displayed_ns: i64,
}

/// Turns each frame's timestamp into its [`Times`]: [`Clock::read`] for every frame read (in
/// capture order), [`Clock::displayed`] for those printed.
#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    first: Option<i64>,
    prev: Option<i64>,
    prev_displayed: Option<i64>,
}

impl Clock {
    /// The times of a frame read at `ts_ns`.
    pub fn read(&mut self, ts_ns: u64) -> Times {
        let t = ts_ns.min(i64::MAX as u64) as i64;
        let first = *self.first.get_or_insert(t);
        let times = Times {
            epoch_ns: t,
            relative_ns: t.saturating_sub(first),
            delta_ns: self.prev.map_or(0, |p| t.saturating_sub(p)),
            delta_displayed_ns: self.prev_displayed.map_or(0, |p| t.saturating_sub(p)),
        };
        self.prev = Some(t);
        times
    }
    /// The frame of `times` was printed.
    pub fn displayed(&mut self, times: &Times) {
        self.prev_displayed = Some(times.epoch_ns);
    }
}

/// Nanoseconds as seconds with 9 decimals (`-0.000001000`).
pub fn write_seconds(out: &mut impl std::fmt::Write, ns: i64) -> std::fmt::Result {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    write!(out, "{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

/// The time column of the summary line, as tshark's `-t` names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeFormat {
    /// `r`: seconds since the first frame (tshark's default).
    #[default]
    Relative,
    /// `a`: time of day, `HH:MM:SS.nnnnnnnnn` (UTC: rocescope has no time-zone database).
    Absolute,
    /// `ad`: date and time of day, `YYYY-MM-DD HH:MM:SS.nnnnnnnnn` (UTC).
    AbsoluteDate,
    /// `d`: seconds since the previous frame of the capture.
    Delta,
    /// `dd`: seconds since the previous frame printed.
    DeltaDisplayed,
    /// `e`: seconds since the epoch.
    Epoch,
}

impl TimeFormat {
    /// tshark's `-t` letters: `r a ad d dd e`, and `u ud` (UTC, the same as `a ad` here).
    pub fn parse(s: &str) -> Option<TimeFormat> {
        Some(match s {
            "r" => TimeFormat::Relative,
            "a" | "u" => TimeFormat::Absolute,
            "ad" | "ud" => TimeFormat::AbsoluteDate,
            "d" => TimeFormat::Delta,
            "dd" => TimeFormat::DeltaDisplayed,
            "e" => TimeFormat::Epoch,
            _ => return None,
        })
    }

    /// The time column for a frame's `times`.
    pub fn write(self, out: &mut impl std::fmt::Write, times: &Times) -> std::fmt::Result {
        match self {
            TimeFormat::Relative => write_seconds(out, times.relative_ns),
            TimeFormat::Delta => write_seconds(out, times.delta_ns),
            TimeFormat::DeltaDisplayed => write_seconds(out, times.delta_displayed_ns),
            TimeFormat::Epoch => write_seconds(out, times.epoch_ns),
            TimeFormat::Absolute | TimeFormat::AbsoluteDate => {
                let secs = times.epoch_ns.div_euclid(1_000_000_000);
                let nanos = times.epoch_ns.rem_euclid(1_000_000_000);
                let (days, day_s) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
                if self == TimeFormat::AbsoluteDate {
                    let (y, m, d) = civil_from_days(days);
                    write!(out, "{y:04}-{m:02}-{d:02} ")?;
                }
                write!(out, "{:02}:{:02}:{:02}.{nanos:09}", day_s / 3600, day_s / 60 % 60, day_s % 60)
            }
        }
    }
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, http://howardhinnant.github.io/date_algorithms.html).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + (m <= 2) as i64, m, d)
}

/// One `-e` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    Field(FieldId),
    Meta(Meta),
    /// A per-packet analysis field (`rocescope.analysis.*`, [`crate::analyze::fields`]).
    Analysis(crate::analyze::fields::AField),
    /// A replay field (`rocescope.replay.*`), read from the frame's rocescope packet comment
    /// (`rocescope annotate`, [`crate::annotation`]).
    Replay(crate::annotation::RField),
}

impl Column {
    pub fn parse(name: &str) -> Option<Column> {
        if let Some(id) = FieldId::from_name(name) {
            return Some(Column::Field(id));
        }
        if let Some(a) = crate::analyze::fields::AField::from_name(name) {
            return Some(Column::Analysis(a));
        }
        if let Some(r) = crate::annotation::RField::from_name(name) {
            return Some(Column::Replay(r));
        }
        Meta::from_name(name).map(Column::Meta)
    }
}

/// Which occurrences of a repeated field a `fields` cell holds (tshark's `-E occurrence=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Occurrence {
    /// `a`: all, joined by the aggregator.
    #[default]
    All,
    /// `f`: the first.
    First,
    /// `l`: the last.
    Last,
}

/// How `--format fields` lays a line out: tshark's `-E header=`, `separator=`, `quote=`,
/// `occurrence=` and `aggregator=`. The default is rocescope's (and tshark's): no header, tabs,
/// no quotes, every occurrence joined by commas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldsStyle {
    pub header: bool,
    pub separator: char,
    /// `Some('"')` or `Some('\'')`: each non-empty value is wrapped in it.
    pub quote: Option<char>,
    pub occurrence: Occurrence,
    pub aggregator: char,
}

impl Default for FieldsStyle {
    fn default() -> Self {
        FieldsStyle { header: false, separator: '\t', quote: None, occurrence: Occurrence::All, aggregator: ',' }
    }
}

impl FieldsStyle {
    /// Applies one `-E key=value` option as tshark reads it (`separator=/t`, `/s` or one
    /// character; `quote=d|s|n`; `header=y|n`; `occurrence=f|l|a`; `aggregator=/s` or one
    /// character). The error names what was wrong.
    pub fn set(&mut self, option: &str) -> Result<(), String> {
        let (key, value) = option.split_once('=').ok_or_else(|| format!("-E {option}: expected KEY=VALUE"))?;
        let one_char = |v: &str| -> Result<char, String> {
            match v {
                "/t" => Ok('\t'),
                "/s" => Ok(' '),
                _ => {
                    let mut c = v.chars();
                    match (c.next(), c.next()) {
                        (Some(ch), None) => Ok(ch),
                        _ => Err(format!("-E {option}: expected /t, /s or one character")),
                    }
                }
            }
        };
        match key {
            "header" => {
                self.header = match value {
                    "y" => true,
                    "n" => false,
                    _ => return Err(format!("-E {option}: header is y or n")),
                }
            }
            "separator" => self.separator = one_char(value)?,
            "aggregator" => self.aggregator = one_char(value)?,
            "quote" => {
                self.quote = match value {
                    "d" => Some('"'),
                    "s" => Some('\''),
                    "n" => None,
                    _ => return Err(format!("-E {option}: quote is d, s or n")),
                }
            }
            "occurrence" => {
                self.occurrence = match value {
                    "a" => Occurrence::All,
                    "f" => Occurrence::First,
                    "l" => Occurrence::Last,
                    _ => return Err(format!("-E {option}: occurrence is f, l or a")),
                }
            }
            _ => return Err(format!("-E {option}: unknown option (header, separator, quote, occurrence, aggregator)")),
        }
        Ok(())
    }

    /// Prepares `cell` for one more occurrence: `false` when the occurrence setting skips it.
    fn open_occurrence(&self, cell: &mut String) -> bool {
        if cell.is_empty() {
            return true;
        }
        match self.occurrence {
            Occurrence::All => {
                cell.push(self.aggregator);
                true
            }
            Occurrence::First => false,
            Occurrence::Last => {
                cell.clear();
                true
            }
        }
    }

    /// Writes the cells as one line.
    fn write_line<S: AsRef<str>>(&self, out: &mut impl Write, cells: &[S], quote: bool) -> io::Result<()> {
        let mut sb = [0u8; 4];
        let sep: &[u8] = self.separator.encode_utf8(&mut sb).as_bytes();
        let mut qb = [0u8; 4];
        let q: Option<&[u8]> = match self.quote.filter(|_| quote) {
            Some(c) => Some(c.encode_utf8(&mut qb).as_bytes()),
            None => None,
        };
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                out.write_all(sep)?;
            }
            let cell = cell.as_ref();
            match q {
                Some(q) if !cell.is_empty() => {
                    out.write_all(q)?;
                    out.write_all(cell.as_bytes())?;
                    out.write_all(q)?;
                }
                _ => out.write_all(cell.as_bytes())?,
            }
        }
        out.write_all(b"\n")
    }

    /// The header line (`-E header=y`): the field names, unquoted as tshark prints them.
    pub fn write_header(&self, out: &mut impl Write, names: &[String]) -> io::Result<()> {
        self.write_line(out, names, false)
    }
}

/// The `-e` columns of `fields` output, ready for one line per frame: each column's values
/// joined by the aggregator (commas), empty where absent, laid out as `-E` says.
///
/// Built once per run: the frame's field walk finds each field's columns with one lookup, the
/// cells are reused, numbers are written without `fmt` (the walk visits every field of every
/// frame; with four columns this is most of `decode --format fields`' time).
pub struct FieldsWriter {
    cols: Vec<Column>,
    style: FieldsStyle,
    /// Per registry field (by id), the columns that print it.
    by_field: Vec<Vec<u16>>,
    /// Some column is a registry field: the walk is needed.
    walk: bool,
    /// Every registry column is a BTH field: read them from the BTH's declared layout instead
    /// of walking every field of the frame (the walk gives them the same values; the common
    /// `-e rocescope.bth.psn …` case, about a tenth of the time).
    bth_only: Vec<(usize, &'static rocescope_codec::ib::FieldLayout)>,
    cells: Vec<String>,
}

impl FieldsWriter {
    pub fn new(cols: Vec<Column>, style: FieldsStyle) -> FieldsWriter {
        let mut by_field = vec![Vec::new(); rocescope_codec::FIELDS.len()];
        for (i, c) in cols.iter().enumerate() {
            if let Column::Field(id) = c {
                by_field[*id as usize].push(i as u16);
            }
        }
        let walk = cols.iter().any(|c| matches!(c, Column::Field(_)));
        let bth = rocescope_codec::ib::layouts().next().expect("the BTH's layout comes first");
        let in_bth = |id: FieldId| bth.fields.iter().find(|f| f.field == Some(id));
        let mut bth_only = Vec::new();
        for (i, c) in cols.iter().enumerate() {
            if let Column::Field(id) = c {
                match in_bth(*id) {
                    Some(f) => bth_only.push((i, f)),
                    None => {
                        bth_only.clear();
                        break;
                    }
                }
            }
        }
        let cells = vec![String::new(); cols.len()];
        FieldsWriter { cols, style, by_field, walk, bth_only, cells }
    }

    pub fn style(&self) -> &FieldsStyle {
        &self.style
    }

    /// Writes one frame's line; the analysis columns' values come from `analysis`.
    pub fn write(
        &mut self,
        out: &mut impl Write,
        rec: &Record<'_>,
        d: &Decoded<'_, '_>,
        times: &Times,
        mut analysis: impl FnMut(crate::analyze::fields::AField, &mut String),
    ) -> io::Result<()> {
        let frame = &d.frame;
        let FieldsWriter { cols, style, by_field, walk, bth_only, cells } = self;
        cells.iter_mut().for_each(String::clear);
        for (i, c) in cols.iter().enumerate() {
            match c {
                Column::Analysis(a) => analysis(*a, &mut cells[i]),
                Column::Meta(m) => m.write(rec, frame, times, style, &mut cells[i]),
                Column::Replay(r) => write_replay(rec, *r, style, &mut cells[i]),
                Column::Field(_) => {}
            }
        }
        if !bth_only.is_empty() {
            if frame.roce().is_some() {
                let bth = &frame.data()[frame.roce_offset()..];
                for (i, f) in bth_only.iter() {
                    push_uint(&mut cells[*i], f.read(bth));
                }
            }
        } else if *walk {
            d.visit(|id, v, _| {
                for &i in &by_field[id as usize] {
                    let cell = &mut cells[i as usize];
                    if style.open_occurrence(cell) {
                        push_value(cell, &v);
                    }
                }
            });
        }
        style.write_line(out, cells, true)
    }
}

/// A replay field's values, from the frame's rocescope comment.
fn write_replay(rec: &Record<'_>, r: crate::annotation::RField, style: &FieldsStyle, cell: &mut String) {
    if let Some(c) = crate::annotation::rocescope_comment(rec) {
        crate::annotation::write_values(c, r.def().name, cell, |cell| style.open_occurrence(cell));
    }
}

/// A value as `-e` prints it (`Value`'s `Display`), integers without `fmt`.
fn push_value(cell: &mut String, v: &Value<'_>) {
    match v {
        Value::UInt(n) => push_uint(cell, *n),
        Value::Bool(b) => cell.push(if *b { '1' } else { '0' }),
        Value::Str(s) => cell.push_str(s),
        v => write!(cell, "{v}").expect("writing to a String"),
    }
}

/// Decimal digits of `n` (two at a time).
fn push_uint(cell: &mut String, mut n: u64) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
                                5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    while n >= 100 {
        let d = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[d..d + 2]);
    }
    if n >= 10 {
        let d = n as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[d..d + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + n as u8;
    }
    cell.push_str(std::str::from_utf8(&buf[i..]).expect("ASCII digits"));
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
pub fn frame_json(rec: &Record<'_>, d: &Decoded<'_, '_>, times: &Times) -> serde_json::Value {
    let frame = &d.frame;
    let mut m = serde_json::Map::new();
    m.insert("frame".into(), rec.number.into());
    m.insert("time_ns".into(), rec.ts_ns.to_string().into());
    let seconds = |ns: i64| {
        let mut t = String::new();
        write_seconds(&mut t, ns).expect("writing to a String");
        serde_json::Value::String(t)
    };
    m.insert("time_relative".into(), seconds(times.relative_ns));
    m.insert("time_delta".into(), seconds(times.delta_ns));
    m.insert("len".into(), rec.orig_len.into());
    m.insert("cap_len".into(), rec.data.len().into());
    m.insert("interface".into(), rec.interface.into());
    if let Some((s, d)) = frame.ip_addrs() {
        m.insert("src".into(), s.to_string().into());
        m.insert("dst".into(), d.to_string().into());
    }
    // The capture columns under tshark's dotted names too, with tshark's meaning (`ip.*` IPv4
    // only, `ipv6.*` IPv6 only): one value, or an array for `ip.addr`, `ipv6.addr`, `udp.port`;
    // absent when the frame has none. The short keys above stay (INTERFACES.md adds, never removes).
    for (name, meta, _) in Meta::ALL {
        let mut values = Vec::new();
        meta.values(rec, frame, times, |v| {
            values.push(match v {
                MetaValue::UInt(n) => serde_json::Value::from(n),
                MetaValue::Time(ns) => seconds(ns),
                MetaValue::Ip(a) => serde_json::Value::String(a.to_string()),
            })
        });
        match values.len() {
            0 => {}
            1 => {
                m.insert(name.into(), values.pop().expect("one value"));
            }
            _ => {
                m.insert(name.into(), serde_json::Value::Array(values));
            }
        }
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

/// A one-line summary, like tshark's default output; the time as `time` says (tshark's `-t`).
pub fn write_summary(
    out: &mut impl Write,
    rec: &Record<'_>,
    d: &Decoded<'_, '_>,
    times: &Times,
    time: TimeFormat,
) -> io::Result<()> {
    let frame = &d.frame;
    let mut t = String::new();
    time.write(&mut t, times).expect("writing to a String");
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
        // (QPNs in hex, as Wireshark prints them: `rocescope_codec::field::HEX_DISPLAY`.)
        write!(info, "{} QP=0x{:06x} PSN={}", p.opcode().name(), bth.dest_qp(), bth.psn()).unwrap();
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
    for f in crate::annotation::REPLAY_FIELDS {
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

#[cfg(test)]
mod tests {
    #[test]
    fn push_uint_writes_decimal_as_format_does() {
        for n in [0u64, 7, 9, 10, 42, 99, 100, 101, 999, 1000, 16777215, 1 << 32, u64::MAX - 1, u64::MAX] {
            let mut s = String::from("x");
            super::push_uint(&mut s, n);
            assert_eq!(s, format!("x{n}"));
        }
    }
}
