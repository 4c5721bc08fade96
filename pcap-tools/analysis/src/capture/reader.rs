//! Streaming pcap/pcapng reader (pcap-file's slice parsers over a growing buffer) that knows the
//! byte offset of every record, so an unusable file is reported as `FILE: byte N: what`.
//! Memory is bounded by the largest record, not the file size.

use std::io::Read;
use std::ops::Range;

use pcap_file::pcap::PcapParser;
use pcap_file::pcapng::{Block, PcapNgParser};
use pcap_file::PcapError;

/// Largest record accepted (a corrupt length field must not make us allocate gigabytes).
pub(crate) const MAX_RECORD: usize = 64 << 20;
/// How far ahead of the block being parsed the reader asks for the file's bytes
/// ([`next_plain_epb`](CaptureReader::next_plain_epb)).
const PREFETCH_AHEAD: usize = 2048;
const READ_CHUNK: usize = 256 << 10;

/// An unusable capture: what went wrong and at which byte of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureError {
    pub offset: u64,
    pub message: String,
}

impl CaptureError {
    /// [`offset`](Self::offset) of an error about the file as a whole (it could not be opened
    /// or read at all): printed without a byte position.
    pub const NOT_LOCATED: u64 = u64::MAX;

    /// The file could not be opened: `cannot open: No such file or directory`.
    pub fn cannot_open(e: std::io::Error) -> CaptureError {
        CaptureError { offset: Self::NOT_LOCATED, message: format!("cannot open: {}", io_text(&e)) }
    }
}

/// An I/O error's text without Rust's "(os error N)" suffix, as other tools print it.
pub fn io_text(e: &std::io::Error) -> String {
    let t = e.to_string();
    match t.find(" (os error ") {
        Some(i) => t[..i].to_string(),
        None => t,
    }
}

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.offset == Self::NOT_LOCATED {
            write!(f, "{}", self.message)
        } else {
            write!(f, "byte {}: {}", self.offset, self.message)
        }
    }
}

/// One captured frame.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// 1-based frame number, as in Wireshark.
    pub number: u64,
    /// pcap LINKTYPE_ value.
    pub linktype: u32,
    /// Nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// Length on the wire.
    pub orig_len: u32,
    /// Captured bytes.
    pub data: &'a [u8],
    /// File offset of the record.
    pub offset: u64,
    /// File offset of the captured bytes (`data`) in the file.
    pub data_offset: u64,
    /// pcapng interface id (0 for pcap).
    pub interface: u32,
    /// The options of a pcapng Enhanced Packet Block, as in the file (empty for any other
    /// record): read its packet comments with [`comments`](Self::comments).
    pub options: &'a [u8],
    /// Whether `options` are big-endian (their section's byte order).
    pub big_endian: bool,
}

impl<'a> Record<'a> {
    /// The packet comments (`opt_comment`, pcapng 4.3) of an Enhanced Packet Block, in file
    /// order; nothing for a record without options. Read without allocating; a malformed option
    /// (a length running past the block, a comment that is not UTF-8) is an `Err` naming its
    /// byte in the file, and ends the reading of this record's options (the frame itself is
    /// intact).
    pub fn comments(&self) -> Comments<'a> {
        let padded = self.data.len() + (4 - self.data.len() % 4) % 4;
        Comments { rest: self.options, at: self.data_offset + padded as u64, big: self.big_endian }
    }
}

/// The packet comments of a record ([`Record::comments`]).
#[derive(Clone, Debug)]
pub struct Comments<'a> {
    rest: &'a [u8],
    /// File offset of `rest`.
    at: u64,
    big: bool,
}

/// pcapng option codes.
pub(super) const OPT_ENDOFOPT: u16 = 0;
pub(super) const OPT_COMMENT: u16 = 1;

impl<'a> Iterator for Comments<'a> {
    type Item = Result<&'a str, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (head, body) = self.rest.split_first_chunk::<4>()?;
            let at = self.at;
            let half = |b: [u8; 2]| if self.big { u16::from_be_bytes(b) } else { u16::from_le_bytes(b) };
            let code = half([head[0], head[1]]);
            let len = half([head[2], head[3]]) as usize;
            if code == OPT_ENDOFOPT {
                self.rest = &[];
                return None;
            }
            let padded = len + (4 - len % 4) % 4;
            if padded > body.len() {
                self.rest = &[];
                return Some(Err(err(at, format!("packet option {code} of {len} bytes runs past its block"))));
            }
            let value = &body[..len];
            self.rest = &body[padded..];
            self.at += 4 + padded as u64;
            if code == OPT_COMMENT {
                // (pcapng: UTF-8, not zero-terminated; some writers add a terminating zero.)
                let value = value.strip_suffix(&[0]).unwrap_or(value);
                return Some(std::str::from_utf8(value).map_err(|_| err(at + 4, "packet comment is not UTF-8")));
            }
        }
    }
}

enum Format {
    Pcap { parser: PcapParser, linktype: u32 },
    PcapNg { parser: PcapNgParser, ifaces: Vec<Iface>, names: Vec<InterfaceName> },
}

/// An interface's `if_name` and `if_description` (pcapng 4.2), as described.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InterfaceName {
    pub name: Option<String>,
    pub description: Option<String>,
}

/// What a capture says of where it was taken (pcapng's Section Header Block options, 4.1):
/// `shb_hardware`, `shb_os`, `shb_userappl` and the section's first comment; none for pcap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SectionInfo {
    pub hardware: Option<String>,
    pub os: Option<String>,
    pub userappl: Option<String>,
    pub comment: Option<String>,
}

#[derive(Clone, Copy)]
struct Iface {
    linktype: u32,
    /// Timestamp units per second (`if_tsresol`).
    units_per_sec: u64,
    /// Seconds added to every timestamp (`if_tsoffset`, signed).
    offset_s: i64,
    /// The interface's snapshot length (0: none), which bounds a Simple Packet Block's data.
    snaplen: u32,
    /// Whole nanoseconds per unit when that is exact and there is no offset (ns, µs, ms, s
    /// without `if_tsoffset`: every capture in practice), else 0. Worked out once per interface,
    /// so a packet's timestamp costs one multiplication, not two divisions.
    ns_per_unit: u64,
}

impl Iface {
    /// An interface of `linktype` with pcapng's default resolution (µs) until its options say
    /// otherwise ([`with_clock`](Self::with_clock)).
    fn new(linktype: u32, snaplen: u32) -> Iface {
        Iface { linktype, units_per_sec: 1_000_000, offset_s: 0, snaplen, ns_per_unit: 0 }.with_clock(1_000_000, 0)
    }

    /// This interface with timestamps in `units_per_sec` (at least 1) offset by `offset_s`.
    fn with_clock(self, units_per_sec: u64, offset_s: i64) -> Iface {
        let whole = offset_s == 0 && 1_000_000_000 % units_per_sec == 0;
        Iface { units_per_sec, offset_s, ns_per_unit: if whole { 1_000_000_000 / units_per_sec } else { 0 }, ..self }
    }

    /// A raw pcapng timestamp in nanoseconds since the Unix epoch.
    #[inline]
    fn ts_ns(&self, raw: u64) -> u64 {
        if self.ns_per_unit != 0 {
            return raw.saturating_mul(self.ns_per_unit);
        }
        let ns = (raw as u128 * 1_000_000_000 / self.units_per_sec as u128) as i128;
        (ns + self.offset_s as i128 * 1_000_000_000).clamp(0, u64::MAX as i128) as u64
    }
}

/// Where the bytes come from: a source read with `read()` into a buffer, or (a regular file,
/// not in the browser) a memory-mapped window of the file.
enum Source<R> {
    Read { src: R, buf: Vec<u8> },
    #[cfg(not(target_arch = "wasm32"))]
    Mapped(super::mapped::MappedFile),
}

impl<R> Source<R> {
    /// The bytes at hand; those from `start` to `end` (the reader's) are unread.
    #[inline]
    fn bytes(&self) -> &[u8] {
        match self {
            Source::Read { buf, .. } => buf,
            #[cfg(not(target_arch = "wasm32"))]
            Source::Mapped(m) => m.bytes(),
        }
    }
}

/// Reads records one at a time.
pub struct CaptureReader<R: Read> {
    source: Source<R>,
    start: usize,
    end: usize,
    /// File offset of the first byte of `source.bytes()`.
    base: u64,
    eof: bool,
    format: Format,
    number: u64,
    /// File offset of the last record's captured bytes.
    data_offset: u64,
}

fn err(offset: u64, message: impl Into<String>) -> CaptureError {
    CaptureError { offset, message: message.into() }
}

fn describe(e: &PcapError) -> String {
    match e {
        PcapError::IncompleteBuffer => "file ends in the middle of a record".into(),
        PcapError::IoError(e) => format!("read error: {e}"),
        PcapError::InvalidField(s) => plain_text(s),
        PcapError::Utf8Error(e) => format!("invalid text: {e}"),
        PcapError::FromUtf8Error(e) => format!("invalid text: {e}"),
        PcapError::InvalidInterfaceId(i) => format!("packet names interface {i}, which was never described"),
    }
}

/// The pcap-file library's texts for a malformed structure, said as a capture's user would:
/// what is wrong with which part of the file (the rest keep their library text, after
/// "malformed").
fn plain_text(s: &str) -> String {
    let t = match s {
        "Block: (initial_len % 4) != 0" => "pcapng block length is not a multiple of 4",
        "Block: initial_len < 12" => "pcapng block shorter than its 12-byte frame",
        "Block: initial_length != trailer_length" => "pcapng block's leading and trailing lengths differ (a damaged or cut block)",
        "EnhancedPacketBlock: block length length < 20" => "packet block too short for its header",
        "EnhancedPacketBlock: captured_len + padding > block length" => "packet block's captured length runs past the block",
        "PcapHeader: wrong magic number" => "not a pcap or pcapng file (unknown magic number)",
        "PcapNg: SectionHeader invalid or missing" => "pcapng section header block missing or invalid",
        "PacketHeader incl_len > orig_len" | "PcapPacket: incl_len > orig_len" => {
            "record's captured length exceeds its length on the wire"
        }
        "PacketHeader incl_len > snap_len" => "record's captured length exceeds the file's snapshot length",
        "PacketHeader orig_len > snap_len" => "record's length on the wire exceeds the file's snapshot length",
        "PacketHeader ts_nanosecond >= 1_000_000_000" | "PacketHeader ts_nanosecond is invalid" => {
            "record's timestamp fraction is out of range"
        }
        _ => return format!("malformed {}", s.replace(": ", " (").replace("_", " ") + ")"),
    };
    t.to_string()
}

/// The interface a packet block names, which an Interface Description Block must have described.
#[inline]
fn described(ifaces: &[Iface], id: u32, offset: u64) -> Result<&Iface, CaptureError> {
    match ifaces.get(id as usize) {
        Some(iface) => Ok(iface),
        None => Err(undescribed(id, offset)),
    }
}

/// The error for a packet naming an interface never described (kept out of the hot path).
#[cold]
fn undescribed(id: u32, offset: u64) -> CaptureError {
    err(offset, describe(&PcapError::InvalidInterfaceId(id)))
}

impl<R: Read> CaptureReader<R> {
    /// Reads the file header; fails on anything that is not pcap or pcapng.
    pub fn new(src: R) -> Result<Self, CaptureError> {
        Self::with_source(Source::Read { src, buf: Vec::with_capacity(READ_CHUNK) })
    }

    /// [`new`](Self::new) over a regular file read by mapping it (`capture::open`).
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn mapped(file: super::mapped::MappedFile) -> Result<Self, CaptureError> {
        Self::with_source(Source::Mapped(file))
    }

    fn with_source(source: Source<R>) -> Result<Self, CaptureError> {
        let mut r = CaptureReader {
            source,
            start: 0,
            end: 0,
            base: 0,
            eof: false,
            format: Format::Pcap { parser: PcapParser::new(&PCAP_DUMMY).unwrap().1, linktype: 1 },
            number: 0,
            data_offset: 0,
        };
        r.fill(24)?;
        let head = &r.source.bytes()[..r.end];
        if head.len() < 4 {
            return Err(err(0, if head.is_empty() { "empty file" } else { "file too short for a capture header" }));
        }
        let magic = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        match magic {
            0xa1b2c3d4 | 0xd4c3b2a1 | 0xa1b23c4d | 0x4d3cb2a1 => {
                if head.len() < 24 {
                    return Err(err(0, "file too short for a pcap header"));
                }
                let (rem, parser) = PcapParser::new(head).map_err(|e| err(0, describe(&e)))?;
                let linktype = u32::from(parser.header().datalink);
                r.start = r.end - rem.len();
                r.format = Format::Pcap { parser, linktype };
            }
            0x0a0d0d0a => {
                let need = r.block_len_at(0)?;
                r.fill(need)?;
                let head = &r.source.bytes()[..r.end];
                let (rem, parser) = PcapNgParser::new(head).map_err(|e| err(0, describe(&e)))?;
                r.start = r.end - rem.len();
                r.format = Format::PcapNg { parser, ifaces: Vec::new(), names: Vec::new() };
            }
            _ => return Err(err(0, format!("not a pcap or pcapng file (magic {magic:08x})"))),
        }
        Ok(r)
    }

    /// Has a memory-mapped capture's windows sent to `to` when mapped, to be faulted in ahead
    /// of the reader, and when read, to be unmapped by the receiver (`capture/mapped.rs`); a
    /// capture read with `read()` sends nothing.
    pub fn send_windows_to(&mut self, to: std::sync::mpsc::Sender<super::Window>) {
        #[cfg(not(target_arch = "wasm32"))]
        if let Source::Mapped(m) = &mut self.source {
            m.send_windows_to(to);
        }
        #[cfg(target_arch = "wasm32")]
        drop(to);
    }

    /// The current section's options (pcapng; pcap has none).
    pub fn section_info(&self) -> SectionInfo {
        use pcap_file::pcapng::blocks::section_header::SectionHeaderOption as O;
        let mut info = SectionInfo::default();
        if let Format::PcapNg { parser, .. } = &self.format {
            for o in &parser.section().options {
                match o {
                    O::Hardware(v) => info.hardware = Some(v.to_string()),
                    O::OS(v) => info.os = Some(v.to_string()),
                    O::UserApplication(v) => info.userappl = Some(v.to_string()),
                    O::Comment(v) if info.comment.is_none() => info.comment = Some(v.to_string()),
                    _ => {}
                }
            }
        }
        info
    }

    /// The name and description of interface `id`, as the section has described it so far
    /// (`None` for pcap, or an interface not described yet).
    pub fn interface_name(&self, id: u32) -> Option<&InterfaceName> {
        match &self.format {
            Format::PcapNg { names, .. } => names.get(id as usize),
            Format::Pcap { .. } => None,
        }
    }

    /// Byte offset of the next record.
    pub fn offset(&self) -> u64 {
        self.base + self.start as u64
    }

    /// File offset of the captured bytes of the record [`next_record`](Self::next_record) last
    /// returned (the browser's hex view reads the frame from the file with it).
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    /// Makes at least `n` unread bytes available, unless the file ends first.
    fn fill(&mut self, n: usize) -> Result<(), CaptureError> {
        if n > MAX_RECORD {
            return Err(err(self.offset(), format!("record length {n} exceeds the {MAX_RECORD}-byte limit")));
        }
        match &mut self.source {
            Source::Read { src, buf } => {
                while self.end - self.start < n && !self.eof {
                    if self.start > 0 {
                        buf.copy_within(self.start..self.end, 0);
                        self.base += self.start as u64;
                        self.end -= self.start;
                        self.start = 0;
                    }
                    // Grow as data arrives, not by what a (possibly corrupt) length field claims.
                    let want = READ_CHUNK;
                    if buf.len() < self.end + want {
                        buf.resize(self.end + want, 0);
                    }
                    match src.read(&mut buf[self.end..]) {
                        Ok(0) => self.eof = true,
                        Ok(k) => self.end += k,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(err(self.base + self.end as u64, format!("read error: {e}"))),
                    }
                }
            }
            #[cfg(not(target_arch = "wasm32"))]
            Source::Mapped(m) => {
                if self.end - self.start < n && !self.eof {
                    let from = self.base + self.start as u64;
                    m.slide(from, n).map_err(|e| err(from, format!("read error: {e}")))?;
                    self.base = m.at();
                    self.start = (from - m.at()) as usize;
                    self.end = m.bytes().len();
                    self.eof = self.base + self.end as u64 >= m.file_len();
                }
            }
        }
        Ok(())
    }

    /// Length of the pcapng block at `start + at` (its Block Total Length).
    fn block_len_at(&mut self, at: usize) -> Result<usize, CaptureError> {
        self.fill(at + 12)?;
        let b = &self.source.bytes()[self.start + at..self.end];
        if b.len() < 12 {
            return Ok(12);
        }
        // A Section Header Block says its own byte order (a new section may change it); any
        // other block is in its section's.
        let big = match &self.format {
            Format::PcapNg { parser, .. } if b[..4] != [0x0a, 0x0d, 0x0d, 0x0a] => {
                parser.section().endianness == pcap_file::Endianness::Big
            }
            _ => b[8..12] == [0x1a, 0x2b, 0x3c, 0x4d],
        };
        let len = if big {
            u32::from_be_bytes([b[4], b[5], b[6], b[7]])
        } else {
            u32::from_le_bytes([b[4], b[5], b[6], b[7]])
        } as usize;
        if len < 12 || !len.is_multiple_of(4) {
            return Err(err(self.offset() + at as u64, format!("invalid pcapng block length {len}")));
        }
        Ok(len)
    }

    /// The next frame, `Ok(None)` at the end of the file.
    ///
    /// Inlined for the common block ([`next_plain_epb`](Self::next_plain_epb)), so the record
    /// is built where the caller reads it (returned through memory, its fields were written
    /// and read back at different widths: a store-forwarding stall per record); every other
    /// block takes [`next_record_general`](Self::next_record_general).
    #[inline(always)]
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        let offset = self.offset();
        if let Some(parsed) = self.next_plain_epb()? {
            return Ok(Some(self.record(offset, parsed)));
        }
        self.next_record_general()
    }

    /// [`next_record`](Self::next_record) for any block, through pcap-file's parsers.
    #[inline(never)]
    fn next_record_general(&mut self) -> Result<Option<Record<'_>>, CaptureError> {
        loop {
            let offset = self.offset();
            let big_pcap = match &self.format {
                Format::Pcap { parser, .. } => Some(parser.header().endianness == pcap_file::Endianness::Big),
                Format::PcapNg { .. } => None,
            };
            let need = match big_pcap {
                Some(big) => {
                    self.fill(16)?;
                    let h = &self.source.bytes()[self.start..self.end];
                    if h.is_empty() {
                        return Ok(None);
                    }
                    if h.len() < 16 {
                        return Err(err(offset, "file ends in the middle of a record header"));
                    }
                    // A pcap header where a record should be: two files one after the other
                    // (`cat a.pcap b.pcap`), which pcap cannot express.
                    if matches!(u32::from_be_bytes([h[0], h[1], h[2], h[3]]), 0xa1b2c3d4 | 0xd4c3b2a1 | 0xa1b23c4d | 0x4d3cb2a1) {
                        return Err(err(offset, "a second pcap file starts here (concatenated captures: merge them with mergecap)"));
                    }
                    let incl = if big {
                        u32::from_be_bytes([h[8], h[9], h[10], h[11]])
                    } else {
                        u32::from_le_bytes([h[8], h[9], h[10], h[11]])
                    };
                    16 + incl as usize
                }
                None => {
                    self.fill(1)?;
                    if self.start == self.end {
                        return Ok(None);
                    }
                    self.block_len_at(0)?
                }
            };
            self.fill(need)?;
            if self.end - self.start < need {
                return Err(err(offset, format!("file ends in the middle of a record ({} of {need} bytes)", self.end - self.start)));
            }
            let slice = &self.source.bytes()[self.start..self.start + need];
            let base_ptr = self.source.bytes().as_ptr() as usize;
            // Parse; remember where the packet bytes are so the borrow of `buf` can end.
            let parsed: Option<Parsed> = match &mut self.format {
                Format::Pcap { parser, linktype } => {
                    // The raw record: pcap-file's checked `next_packet` rejects every record whose
                    // original length exceeds the file's snaplen, i.e. every snaplen-cut frame.
                    let (_, pkt) = parser.next_raw_packet(slice).map_err(|e| err(offset, describe(&e)))?;
                    let frac_ns = match parser.header().ts_resolution {
                        pcap_file::TsResolution::NanoSecond => pkt.ts_frac as u64,
                        pcap_file::TsResolution::MicroSecond => pkt.ts_frac as u64 * 1000,
                    };
                    let ts = pkt.ts_sec as u64 * 1_000_000_000 + frac_ns;
                    let d = &pkt.data;
                    Some((*linktype, ts, pkt.orig_len, d.as_ptr() as usize - base_ptr, d.len(), 0, 0..0))
                }
                Format::PcapNg { parser, ifaces, names } => {
                    let big = parser.section().endianness == pcap_file::Endianness::Big;
                    // An Enhanced Packet Block read here as on the fast path (its options kept as
                    // they are: a malformed one does not make the frame unreadable).
                    if let Some(epb) = plain_epb(slice, big) {
                        let iface = described(ifaces, epb.interface_id, offset)?;
                        let at = epb.data.as_ptr() as usize - base_ptr;
                        let opts = epb.options.as_ptr() as usize - base_ptr;
                        let parsed = (iface.linktype, iface.ts_ns(epb.timestamp), epb.original_len, at, epb.data.len(), epb.interface_id, opts..opts + epb.options.len());
                        self.start += need;
                        return Ok(Some(self.record(offset, parsed)));
                    }
                    let (_, block) = parser.next_block(slice).map_err(|e| err(offset, describe(&e)))?;
                    match block {
                        Block::InterfaceDescription(idb) => {
                            use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption as O;
                            let (mut units_per_sec, mut offset_s) = (1_000_000, 0);
                            let mut n = InterfaceName::default();
                            for o in &idb.options {
                                match o {
                                    O::IfTsResol(r) => {
                                        units_per_sec = if r & 0x80 != 0 {
                                            1u64.checked_shl((r & 0x7f) as u32).unwrap_or(u64::MAX)
                                        } else {
                                            10u64.checked_pow(*r as u32).unwrap_or(u64::MAX)
                                        }
                                        .max(1)
                                    }
                                    // pcapng: a signed 64-bit number of seconds.
                                    O::IfTsOffset(o) => offset_s = *o as i64,
                                    O::IfName(v) => n.name = Some(v.to_string()),
                                    O::IfDescription(v) => n.description = Some(v.to_string()),
                                    _ => {}
                                }
                            }
                            ifaces.push(Iface::new(u32::from(idb.linktype), idb.snaplen).with_clock(units_per_sec, offset_s));
                            names.push(n);
                            None
                        }
                        Block::SectionHeader(_) => {
                            ifaces.clear();
                            names.clear();
                            None
                        }
                        Block::EnhancedPacket(epb) => {
                            let iface = described(ifaces, epb.interface_id, offset)?;
                            let ts = iface.ts_ns(epb.timestamp.as_nanos() as u64);
                            let d = &epb.data;
                            Some((iface.linktype, ts, epb.original_len, d.as_ptr() as usize - base_ptr, d.len(), epb.interface_id, 0..0))
                        }
                        // The obsolete Packet Block (type 2), as old captures have it.
                        Block::Packet(pb) => {
                            let id = pb.interface_id as u32;
                            let iface = described(ifaces, id, offset)?;
                            // pcap-file reads the timestamp as one 64-bit word; on the wire it is
                            // the high 32 bits then the low 32 bits, each in the section's order.
                            let raw = if big { pb.timestamp } else { pb.timestamp.rotate_left(32) };
                            let d = &pb.data;
                            Some((iface.linktype, iface.ts_ns(raw), pb.original_len, d.as_ptr() as usize - base_ptr, d.len(), id, 0..0))
                        }
                        Block::SimplePacket(spb) => {
                            let iface = ifaces.first().copied().ok_or_else(|| err(offset, "simple packet before any interface"))?;
                            // The block holds the packet padded to 32 bits: its captured length is
                            // the original length, cut by the interface's snaplen (pcapng 4.4).
                            let mut len = (spb.original_len as usize).min(spb.data.len());
                            if iface.snaplen != 0 {
                                len = len.min(iface.snaplen as usize);
                            }
                            let d = &spb.data[..len];
                            Some((iface.linktype, 0, spb.original_len, d.as_ptr() as usize - base_ptr, d.len(), 0, 0..0))
                        }
                        _ => None,
                    }
                }
            };
            self.start += need;
            if let Some(parsed) = parsed {
                return Ok(Some(self.record(offset, parsed)));
            }
        }
    }

    /// The common case of [`next_record`](Self::next_record) without its general path: a
    /// pcapng Enhanced Packet Block, already whole in the buffer, is consumed
    /// and returned as `(linktype, ts_ns, orig_len, data start, data length, interface)`.
    /// `None` (nothing consumed) for anything else, which the general path then reads, with
    /// the same result for such a block.
    #[inline(always)]
    fn next_plain_epb(&mut self) -> Result<Option<Parsed>, CaptureError> {
        let Format::PcapNg { parser, ifaces, .. } = &self.format else { return Ok(None) };
        // (The source's bytes looked up once: each look-up matches on the source's kind.)
        let all = self.source.bytes();
        let avail = &all[self.start..self.end];
        let Some(head) = avail.get(..8) else { return Ok(None) };
        let big = parser.section().endianness == pcap_file::Endianness::Big;
        let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        let len = if big { len.swap_bytes() } else { len } as usize;
        if len > MAX_RECORD {
            return Ok(None);
        }
        // The bytes `PREFETCH_AHEAD` on from this block, as many as it spans (the blocks
        // after it): asked for now, they are in the cache when parsed. (Records sit in the page
        // cache's pages, where the hardware prefetcher does not run ahead: unasked, the first
        // touch of each record — its trailing length — waited on memory, a tenth of `flows`.)
        let ahead = (self.start + PREFETCH_AHEAD) & !63;
        let ahead_end = (self.start + len + PREFETCH_AHEAD).min(self.end);
        let bytes = all.as_ptr();
        let mut line = ahead;
        while line < ahead_end {
            crate::prefetch::prefetch(bytes.wrapping_add(line));
            line += 64;
        }
        let Some(epb) = avail.get(..len).and_then(|block| plain_epb(block, big)) else { return Ok(None) };
        let iface = described(ifaces, epb.interface_id, self.offset())?;
        let base = all.as_ptr() as usize;
        let at = epb.data.as_ptr() as usize - base;
        let opts = epb.options.as_ptr() as usize - base;
        let parsed = (iface.linktype, iface.ts_ns(epb.timestamp), epb.original_len, at, epb.data.len(), epb.interface_id, opts..opts + epb.options.len());
        self.start += len;
        Ok(Some(parsed))
    }

    /// Numbers a parsed record (its block already consumed) and lends its bytes.
    #[inline]
    fn record(&mut self, offset: u64, (linktype, ts_ns, orig_len, at, len, interface, options): Parsed) -> Record<'_> {
        self.number += 1;
        self.data_offset = self.base + at as u64;
        let big_endian = match &self.format {
            Format::PcapNg { parser, .. } => parser.section().endianness == pcap_file::Endianness::Big,
            Format::Pcap { .. } => false,
        };
        let bytes = self.source.bytes();
        Record {
            number: self.number,
            linktype,
            ts_ns,
            orig_len,
            data: &bytes[at..at + len],
            offset,
            data_offset: self.data_offset,
            interface,
            options: &bytes[options],
            big_endian,
        }
    }
}

/// A parsed record: linktype, timestamp (ns), original length, where its captured bytes start
/// in the buffer and how many there are, interface, where its options are in the buffer.
type Parsed = (u32, u64, u32, usize, usize, u32, Range<usize>);

/// An Enhanced Packet Block's fields (pcapng 4.3), `timestamp` as the raw 64-bit count.
struct PlainEpb<'a> {
    interface_id: u32,
    timestamp: u64,
    original_len: u32,
    data: &'a [u8],
    /// The options, up to the trailing length (not checked: [`Record::comments`] reads them).
    options: &'a [u8],
}

/// `block` (one whole block, its length already checked by `block_len_at`) when it is an
/// Enhanced Packet Block whose fixed part pcap-file would accept: equal leading and trailing
/// lengths, the captured bytes inside the block. Its options are not parsed here (a malformed
/// one must not make the frame unreadable: [`Record::comments`] reports it). `None` for every
/// other block, which then goes through pcap-file (and its error messages).
#[inline]
fn plain_epb(block: &[u8], big: bool) -> Option<PlainEpb<'_>> {
    // (One copy per byte order: the order is tested once, not at every field.)
    if big {
        plain_epb_in::<true>(block)
    } else {
        plain_epb_in::<false>(block)
    }
}

/// [`plain_epb`] for one byte order.
#[inline(always)]
fn plain_epb_in<const BIG: bool>(block: &[u8]) -> Option<PlainEpb<'_>> {
    const ENHANCED_PACKET_BLOCK: u32 = 6;
    let word = |b: [u8; 4]| if BIG { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) };
    // The fixed part (28 bytes) and the trailing length, each bounds-checked once.
    let (head, rest) = block.split_first_chunk::<28>()?;
    let u32_at = |at: usize| word([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    let (_, &trailer) = rest.split_last_chunk::<4>()?;
    let n = block.len();
    if !n.is_multiple_of(4) || u32_at(0) != ENHANCED_PACKET_BLOCK || u32_at(4) as usize != n || word(trailer) as usize != n {
        return None;
    }
    let captured = u32_at(20) as usize;
    let padded = captured.checked_add((4 - captured % 4) % 4)?;
    let opts = 28usize.checked_add(padded)?;
    if opts > n - 4 {
        return None;
    }
    let timestamp = (u64::from(u32_at(12)) << 32) + u64::from(u32_at(16));
    Some(PlainEpb {
        interface_id: u32_at(8),
        timestamp,
        original_len: u32_at(24),
        data: &block[28..28 + captured],
        options: &block[opts..n - 4],
    })
}

/// A minimal pcap header used only to initialise the reader before the real one is read.
static PCAP_DUMMY: [u8; 24] = [
    0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A pcapng file (in `big`-endian order when asked): a section, one Ethernet interface,
    /// then one Enhanced Packet Block per entry, with these raw option bytes.
    fn pcapng(big: bool, packets: &[(&[u8], Vec<u8>)]) -> Vec<u8> {
        let w = |v: &mut Vec<u8>, x: u32| v.extend_from_slice(&if big { x.to_be_bytes() } else { x.to_le_bytes() });
        let mut v = Vec::new();
        for x in [0x0a0d0d0a, 28, 0x1a2b3c4d, 1, u32::MAX, u32::MAX, 28] {
            w(&mut v, x);
        }
        // (LinkType and a reserved zero: two 16-bit halves.)
        for x in [1, 20, if big { 1 << 16 } else { 1 }, 0, 20] {
            w(&mut v, x);
        }
        for (data, opts) in packets {
            let padded = data.len().div_ceil(4) * 4;
            let len = (32 + padded + opts.len()) as u32;
            for x in [6, len, 0, 0, 7, data.len() as u32, data.len() as u32] {
                w(&mut v, x);
            }
            v.extend_from_slice(data);
            v.resize(v.len() + padded - data.len(), 0);
            v.extend_from_slice(opts);
            w(&mut v, len);
        }
        v
    }

    fn opt(big: bool, code: u16, len: u16, value: &[u8]) -> Vec<u8> {
        let h = |x: u16| if big { x.to_be_bytes() } else { x.to_le_bytes() };
        let mut v = [h(code), h(len)].concat();
        v.extend_from_slice(value);
        v.resize(v.len().div_ceil(4) * 4, 0);
        v
    }

    /// Every record's data and comments (errors as their text).
    fn read(bytes: &[u8]) -> Vec<(Vec<u8>, Vec<Result<String, String>>)> {
        let mut r = CaptureReader::new(bytes).unwrap();
        let mut out = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            out.push((rec.data.to_vec(), rec.comments().map(|c| c.map(str::to_string).map_err(|e| e.to_string())).collect()));
        }
        out
    }

    #[test]
    fn packet_comments_are_read_present_absent_and_malformed() {
        for big in [false, true] {
            let end = opt(big, 0, 0, &[]);
            let packets: Vec<(&[u8], Vec<u8>)> = vec![
                // No options at all; only opt_endofopt.
                (&[1, 2, 3], vec![]),
                (&[1, 2, 3, 4], end.clone()),
                // Two comments around another option (a flags word), then the end.
                (&[5; 5], [opt(big, 1, 5, b"first"), opt(big, 2, 4, &[0; 4]), opt(big, 1, 12, "second\nline".as_bytes()), end.clone()].concat()),
                // Without opt_endofopt; a terminating zero some writers add.
                (&[6], opt(big, 1, 4, b"abc\0")),
                // A length running past the block: an error, then nothing; the frame is intact.
                (&[7; 8], [opt(big, 1, 2, b"ok"), opt(big, 1, 200, &[])].concat()),
                // A comment that is not UTF-8, then a good one.
                (&[8], [opt(big, 1, 2, &[0xff, 0xfe]), opt(big, 1, 1, b"z")].concat()),
                // An empty comment.
                (&[9], opt(big, 1, 0, &[])),
            ];
            let file = pcapng(big, &packets);
            let got = read(&file);
            assert_eq!(got.len(), packets.len(), "big {big}");
            for (g, p) in got.iter().zip(&packets) {
                assert_eq!(g.0, p.0, "big {big}: the frame's bytes");
            }
            let ok = |s: &str| Ok(s.to_string());
            assert_eq!(got[0].1, vec![]);
            assert_eq!(got[1].1, vec![]);
            assert_eq!(got[2].1, vec![ok("first"), ok("second\nline")]);
            assert_eq!(got[3].1, vec![ok("abc")]);
            assert_eq!(got[4].1.len(), 2);
            assert_eq!(got[4].1[0], ok("ok"));
            let e = got[4].1[1].as_ref().unwrap_err();
            assert!(e.contains("runs past its block"), "{e}");
            // The error names the option's byte: after the header blocks (48), the packets
            // before (4 blocks) and this one's fixed part, data and first option.
            let at: usize = packets[..4].iter().map(|(d, o)| 32 + d.len().div_ceil(4) * 4 + o.len()).sum::<usize>() + 48 + 28 + 8 + 8;
            assert!(e.starts_with(&format!("byte {at}:")), "{e} (want {at})");
            assert!(got[5].1[0].as_ref().unwrap_err().contains("not UTF-8"));
            assert_eq!(got[5].1[1], ok("z"));
            assert_eq!(got[6].1, vec![ok("")]);
        }
    }

    /// A block cut in the read buffer (read with `read()` in small pieces) goes through the
    /// general path, with the same comments.
    #[test]
    fn comments_of_blocks_read_in_pieces() {
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = buf.len().min(self.0.len()).min(7);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let long = "c".repeat(301);
        let file = pcapng(false, &[(&[1; 60], opt(false, 1, 301, long.as_bytes())), (&[2; 60], opt(false, 1, 3, b"xyz"))]);
        let mut r = CaptureReader::new(Trickle(&file)).unwrap();
        let mut got = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            got.push(rec.comments().map(|c| c.unwrap().to_string()).collect::<Vec<_>>());
        }
        assert_eq!(got, vec![vec![long], vec!["xyz".to_string()]]);
    }
}
