//! ERD (WIRE.md B.5; seed 004 §4.3-4.5).
//!
//! - **EETH** (stateless): every ERD data packet is an RD SEND Only (0x44: BTH · RDETH · DETH)
//!   or a UD SEND Only (0x64: BTH · DETH), or their with-Immediate variants (0x45, 0x65: the
//!   EETH follows the ImmDt), whose payload begins with the 12-byte EETH
//!   `Type 1 · Last 1 · reserved 6 · reserved 8 · Msg_ID 16 · S_Len 16 · reserved 16 · S_Offset 32`.
//!   [`Erd`] is what [`crate::frame::Frame`] keeps of it (no allocation).
//! - **NACK** (stateful): the retransmission-info path is a TCP stream to or from the NACK port
//!   (`Params::erd_nack_port`, 4792) of messages `magic 0x4E · version 1 · count 16` followed by
//!   `count` 12-byte entries `reserved 8 · source QPN 24 · reserved 8 · destination QPN 24 ·
//!   reserved 8 · lost PSN 24`. A message can span TCP segments, so decoding it needs the
//!   stream in order: [`NackReassembler`] does that with bounded memory and reports each message
//!   on the segment that holds its last byte ([`NackBatch`], [`NackBatch::visit`]). The stateless
//!   frame parser shows no NACK fields.

use core::ops::Range;
use std::collections::HashMap;
use std::net::IpAddr;

use super::Ctx;
use crate::field::FieldId as F;
use crate::frame::Frame;
use crate::ib::bytes::{get, put};
use crate::ib::RocePacket;
use crate::value::Value;
use crate::warning::{ExtProblem, Layer, Note, Warning, Warnings};

/// EETH length in bytes.
pub const EETH_LEN: usize = 12;
/// NACK message magic (`'N'`).
pub const NACK_MAGIC: u8 = 0x4e;
/// NACK message version.
pub const NACK_VERSION: u8 = 1;
/// NACK message header length (magic, version, count).
pub const NACK_HEADER_LEN: usize = 4;
/// NACK entry length.
pub const NACK_ENTRY_LEN: usize = 12;
/// The streams `NackReassembler::new` follows at most.
pub const NACK_MAX_STREAMS: usize = 1024;
/// The longest NACK message the format allows (65535 entries).
pub const NACK_MAX_LEN: usize = NACK_HEADER_LEN + u16::MAX as usize * NACK_ENTRY_LEN;

/// Byte ranges of the EETH.
pub mod field {
    use core::ops::Range;
    /// Byte 0: bit 7 Type, bit 6 Last, bits 5..0 reserved.
    pub const FLAGS: usize = 0;
    pub const MSG_ID: Range<usize> = 2..4;
    pub const S_LEN: Range<usize> = 4..6;
    pub const S_OFFSET: Range<usize> = 8..12;
    pub const TYPE_BIT: u8 = 0x80;
    pub const LAST_BIT: u8 = 0x40;
}

/// Byte ranges of a NACK message header, and of an entry (from the entry's start).
pub mod nack_field {
    use core::ops::Range;
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 1;
    pub const COUNT: Range<usize> = 2..4;
    pub const SRC_QPN: Range<usize> = 1..4;
    pub const DST_QPN: Range<usize> = 5..8;
    pub const PSN: Range<usize> = 9..12;
}

/// UD packets to these QPs (0: subnet management, 1: general services, CM) never carry an EETH.
pub const MGMT_QP_MAX: u32 = 1;

/// The opcodes whose payload begins with an EETH: RD SEND Only (0x44), RD SEND Only with
/// Immediate (0x45), UD SEND Only (0x64), UD SEND Only with Immediate (0x65).
#[inline]
pub fn carries_eeth(opcode: u8) -> bool {
    matches!(opcode, 0x44 | 0x45 | 0x64 | 0x65)
}

/// Whether the profile applies to this packet: an EETH-carrying opcode whose headers are all
/// present, excluding UD to QP0/QP1 (subnet and general management: CM MADs are never ERD data).
fn applies(p: &RocePacket<'_>) -> bool {
    let op = p.opcode().0;
    carries_eeth(op)
        && p.info().is_some_and(|i| p.headers() == i.headers)
        && !(crate::ib::Opcode(op).transport() == crate::ib::Transport::Ud && p.bth().dest_qp() <= MGMT_QP_MAX)
}

/// The ERD detection rule for data packets (WIRE.md part B): an RD or UD SEND whose payload
/// starts with an EETH whose S_Len equals the bytes that follow it (the EETH must be captured).
pub fn detect(p: &RocePacket<'_>) -> bool {
    applies(p)
        && p.payload_len() >= EETH_LEN
        && EethRepr::parse(p.payload()).is_some_and(|e| e.s_len as usize == p.payload_len() - EETH_LEN)
}

/// The ERD detection rule for the NACK path: TCP to or from the NACK port.
pub fn is_nack_segment(frame: &Frame<'_>, nack_port: u16) -> bool {
    frame.tcp().is_some_and(|t| t.src_port == nack_port || t.dst_port == nack_port)
}

/// The EETH (ERD Extended Header), as a plain value: [`Self::parse`] and [`Self::emit`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EethRepr {
    /// Type (byte 0 bit 7): 1 = part of a multi-packet message. 0 or 1; [`Self::emit`] writes
    /// bit 0 of this value.
    pub ty: u8,
    /// Last (byte 0 bit 6): this packet holds the message's final bytes.
    pub last: bool,
    pub msg_id: u16,
    /// Valid payload bytes after the EETH.
    pub s_len: u16,
    /// Byte offset of this payload in the message.
    pub s_offset: u32,
}

impl EethRepr {
    pub const LEN: usize = EETH_LEN;

    /// Reads the first [`EETH_LEN`] bytes of `b` (reserved bits are ignored); `None` if `b` is
    /// shorter.
    #[inline]
    pub fn parse(b: &[u8]) -> Option<EethRepr> {
        let b = b.get(..EETH_LEN)?;
        Some(EethRepr {
            ty: (b[field::FLAGS] & field::TYPE_BIT != 0) as u8,
            last: b[field::FLAGS] & field::LAST_BIT != 0,
            msg_id: get(&b[field::MSG_ID]) as u16,
            s_len: get(&b[field::S_LEN]) as u16,
            s_offset: get(&b[field::S_OFFSET]) as u32,
        })
    }

    /// Writes the EETH (reserved bits zero) into the first [`EETH_LEN`] bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..EETH_LEN];
        b.fill(0);
        b[field::FLAGS] = if self.ty & 1 != 0 { field::TYPE_BIT } else { 0 } | if self.last { field::LAST_BIT } else { 0 };
        put(&mut b[field::MSG_ID], self.msg_id as u64);
        put(&mut b[field::S_LEN], self.s_len as u64);
        put(&mut b[field::S_OFFSET], self.s_offset as u64);
    }

    /// The EETH as bytes.
    pub fn to_bytes(&self) -> [u8; EETH_LEN] {
        let mut b = [0u8; EETH_LEN];
        self.emit(&mut b);
        b
    }

    /// The message's length, known from its last packet (S_Offset + S_Len).
    pub fn msg_len(&self) -> Option<u64> {
        self.last.then_some(self.s_offset as u64 + self.s_len as u64)
    }
}

/// What an ERD data packet carries beyond the IBTA headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Erd {
    pub eeth: EethRepr,
}

impl Erd {
    /// `None` for a packet ERD does not apply to (another opcode: it is then `std`, silently),
    /// for a payload too short to hold an EETH (a warning) and for an EETH the snaplen cut
    /// (the frame says truncated). An S_Len that disagrees with the payload is a warning on
    /// `rocescope.erd.s_len`; the EETH is still reported.
    pub(super) fn parse(_ctx: &Ctx<'_>, p: &RocePacket<'_>, warnings: &mut Warnings) -> Option<Erd> {
        if !applies(p) {
            return None;
        }
        let warn = |w: &mut Warnings, what| w.push(Warning::Ext { layer: Layer::Erd, what });
        let len = p.payload_len();
        if len < EETH_LEN {
            warn(warnings, ExtProblem::Short { got: len as u32, want: EETH_LEN as u32 });
            return None;
        }
        let eeth = EethRepr::parse(p.payload())?;
        let after = len - EETH_LEN;
        if eeth.s_len as usize != after {
            warn(warnings, ExtProblem::Mismatch { field: F::ErdSLen, got: eeth.s_len as u32, want: after as u32 });
        }
        Some(Erd { eeth })
    }

    pub(super) fn visit<'a>(&self, p: &RocePacket<'a>, base: usize, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        use super::{byte_at, range_at};
        let o = base + p.payload_offset();
        let e = &self.eeth;
        f(F::ErdType, Value::UInt(e.ty as u64), byte_at(o, field::FLAGS));
        f(F::ErdLast, Value::Bool(e.last), byte_at(o, field::FLAGS));
        f(F::ErdMsgId, Value::UInt(e.msg_id as u64), range_at(o, field::MSG_ID));
        f(F::ErdSLen, Value::UInt(e.s_len as u64), range_at(o, field::S_LEN));
        f(F::ErdSOffset, Value::UInt(e.s_offset as u64), range_at(o, field::S_OFFSET));
    }
}

// ---------------------------------------------------------------------------------------------
// NACK messages

/// One NACK entry: the lost packet's PSN on the (source QPN, destination QPN) pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NackEntry {
    pub src_qpn: u32,
    pub dst_qpn: u32,
    pub psn: u32,
}

impl NackEntry {
    pub const LEN: usize = NACK_ENTRY_LEN;

    /// Reads the first 12 bytes of `b` (reserved bytes are ignored); `None` if `b` is shorter.
    #[inline]
    pub fn parse(b: &[u8]) -> Option<NackEntry> {
        let b = b.get(..NACK_ENTRY_LEN)?;
        use nack_field as nf;
        Some(NackEntry { src_qpn: get(&b[nf::SRC_QPN]) as u32, dst_qpn: get(&b[nf::DST_QPN]) as u32, psn: get(&b[nf::PSN]) as u32 })
    }

    /// Writes the entry (reserved bytes zero, each value masked to 24 bits) into `buf[..12]`.
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..NACK_ENTRY_LEN];
        b.fill(0);
        put(&mut b[1..4], (self.src_qpn & 0xff_ffff) as u64);
        put(&mut b[5..8], (self.dst_qpn & 0xff_ffff) as u64);
        put(&mut b[9..12], (self.psn & 0xff_ffff) as u64);
    }
}

/// A NACK message to emit: the header (magic, version, count = `entries.len()`) and entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NackRepr<'e> {
    pub entries: &'e [NackEntry],
}

impl<'e> NackRepr<'e> {
    pub fn new(entries: &'e [NackEntry]) -> Self {
        assert!(entries.len() <= u16::MAX as usize, "a NACK message holds at most 65535 entries");
        NackRepr { entries }
    }

    /// The message length: 4 + 12 · count.
    pub fn buffer_len(&self) -> usize {
        NACK_HEADER_LEN + NACK_ENTRY_LEN * self.entries.len()
    }

    /// Writes the message into the first [`Self::buffer_len`] bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = NACK_MAGIC;
        buf[1] = NACK_VERSION;
        put(&mut buf[2..4], self.entries.len() as u64);
        for (e, chunk) in self.entries.iter().zip(buf[NACK_HEADER_LEN..self.buffer_len()].chunks_exact_mut(NACK_ENTRY_LEN)) {
            e.emit(chunk);
        }
    }

    /// Appends the message to `out`.
    pub fn emit_to(&self, out: &mut Vec<u8>) {
        let o = out.len();
        out.resize(o + self.buffer_len(), 0);
        self.emit(&mut out[o..]);
    }

    /// The message as a new vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.buffer_len());
        self.emit_to(&mut v);
        v
    }
}

/// Reads one whole NACK message from the start of `b`: its entries and its length. Errors are
/// the problem with the header (`Magic`, `Version`, or `Short` when `b` ends early).
pub fn parse_nack(b: &[u8]) -> Result<(impl Iterator<Item = NackEntry> + '_, usize), ExtProblem> {
    let short = |want: usize| ExtProblem::Short { got: b.len() as u32, want: want as u32 };
    match b.get(nack_field::MAGIC) {
        None => return Err(short(NACK_HEADER_LEN)),
        Some(&m) if m != NACK_MAGIC => return Err(ExtProblem::Magic { got: m, want: NACK_MAGIC }),
        _ => {}
    }
    match b.get(nack_field::VERSION) {
        None => return Err(short(NACK_HEADER_LEN)),
        Some(&v) if v != NACK_VERSION => return Err(ExtProblem::Version { got: v, want: NACK_VERSION }),
        _ => {}
    }
    let count = get(b.get(nack_field::COUNT).ok_or(short(NACK_HEADER_LEN))?) as usize;
    let len = NACK_HEADER_LEN + NACK_ENTRY_LEN * count;
    let body = b.get(NACK_HEADER_LEN..len).ok_or(short(len))?;
    Ok((body.chunks_exact(NACK_ENTRY_LEN).filter_map(NackEntry::parse), len))
}

/// Identifies one direction of a TCP connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
}

/// One TCP segment as the reassembler needs it.
#[derive(Clone, Copy, Debug)]
pub struct Segment<'p> {
    /// Sequence number of the segment (of the SYN itself when `syn`).
    pub seq: u32,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    /// The captured payload.
    pub payload: &'p [u8],
    /// The payload's length on the wire (more than `payload.len()` when the snaplen cut it).
    pub wire_len: usize,
}

impl<'p> Segment<'p> {
    /// A data segment without flags, fully captured.
    pub fn data(seq: u32, payload: &'p [u8]) -> Self {
        Segment { seq, syn: false, fin: false, rst: false, payload, wire_len: payload.len() }
    }
}

/// A NACK message completed by a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NackMessage {
    pub count: u16,
    /// Offset of the message's first byte from the start of the segment's captured payload;
    /// negative when the message began in an earlier segment.
    pub start: i64,
    /// Index of its first entry in [`NackBatch::entries`].
    first: u32,
}

impl NackMessage {
    /// The range of its entries in [`NackBatch::entries`].
    pub fn entry_range(&self) -> Range<usize> {
        self.first as usize..self.first as usize + self.count as usize
    }
}

/// What one segment completed: the messages whose last byte it holds, in stream order, and the
/// problems it revealed. Borrowed from the reassembler until its next `push`.
#[derive(Clone, Copy, Debug)]
pub struct NackBatch<'r> {
    messages: &'r [NackMessage],
    entries: &'r [NackEntry],
    /// Problems found in this segment (gap, wrong magic or version, stream ended mid-message).
    pub warnings: Warnings,
    /// Frame offset of the segment's payload ([`NackReassembler::push_frame`]; 0 otherwise),
    /// used by [`Self::visit`] for byte ranges.
    pub payload_offset: usize,
    /// Captured payload length.
    captured: usize,
}

impl<'r> NackBatch<'r> {
    fn empty() -> Self {
        NackBatch { messages: &[], entries: &[], warnings: Warnings::default(), payload_offset: 0, captured: 0 }
    }
    /// The completed messages.
    pub fn messages(&self) -> &'r [NackMessage] {
        self.messages
    }
    /// Every entry of every completed message, in order.
    pub fn entries(&self) -> &'r [NackEntry] {
        self.entries
    }
    /// Each completed message with its entries.
    pub fn iter(&self) -> impl Iterator<Item = (&'r NackMessage, &'r [NackEntry])> + 'r {
        let entries = self.entries;
        self.messages.iter().map(move |m| (m, &entries[m.entry_range()]))
    }
    /// Nothing completed and nothing wrong.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty() && self.warnings.is_empty()
    }

    /// Walks the NACK fields: `rocescope.erd.nack.count` once per completed message, then
    /// `.src_qpn`, `.dst_qpn`, `.psn` once per entry (all repeated fields), with their byte
    /// ranges in the frame clipped to this segment (empty for bytes of earlier segments). The
    /// warnings are not walked: add them to the frame's.
    pub fn visit<'a>(&self, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        let clip = |a: i64, b: i64| -> Range<usize> {
            let (lo, hi) = (a.max(0), b.min(self.captured as i64));
            if lo < hi {
                self.payload_offset + lo as usize..self.payload_offset + hi as usize
            } else {
                0..0
            }
        };
        for (m, entries) in self.iter() {
            f(F::ErdNackCount, Value::UInt(m.count as u64), clip(m.start + 2, m.start + 4));
            for (i, e) in entries.iter().enumerate() {
                let o = m.start + (NACK_HEADER_LEN + i * NACK_ENTRY_LEN) as i64;
                f(F::ErdNackSrcQpn, Value::UInt(e.src_qpn as u64), clip(o + 1, o + 4));
                f(F::ErdNackDstQpn, Value::UInt(e.dst_qpn as u64), clip(o + 5, o + 8));
                f(F::ErdNackPsn, Value::UInt(e.psn as u64), clip(o + 9, o + 12));
            }
        }
    }
}

/// Per-direction state: the next expected sequence number and at most one partial message.
#[derive(Debug)]
struct Stream {
    next_seq: u32,
    /// Lost the message boundary (gap, bad header): looking for the next header.
    hunting: bool,
    /// The bytes received so far of the current, incomplete message.
    partial: Vec<u8>,
    last_used: u64,
}

/// Reassembles ERD NACK streams (WIRE.md B.5) from TCP segments, one direction of one
/// connection per [`StreamKey`], and reports each message on the segment that holds its last
/// byte.
///
/// - In-order segments are consumed as they come; a message split across segments (anywhere,
///   even inside its header) is kept as the stream's one partial message, and one segment may
///   complete several messages.
/// - Bytes already seen (retransmissions, duplicates, overlaps) are ignored.
/// - A segment that starts beyond the next expected byte (a gap: loss in the capture, or
///   reordering) warns once ([`Note::ErdStreamGap`]), drops the partial message and
///   resynchronises on the next plausible message header (magic, version, zero reserved bytes
///   in the entries in view, and another header or the segment's end right after the message).
///   Bytes of the gap that arrive later are old and ignored. A payload cut by the snaplen is a
///   gap at its end.
/// - A wrong magic or version warns and resynchronises the same way (one warning per loss of
///   synchronisation, not one per segment while searching).
/// - A stream first seen without its SYN is assumed to start at a message boundary (NACK
///   batches are written whole); if it does not, the wrong magic says so.
/// - FIN or RST forgets the stream (a FIN inside a message warns `Short`).
///
/// Memory is bounded: per stream, one partial message of at most `max_message_len` bytes
/// (default and ceiling [`NACK_MAX_LEN`], the longest message the format allows; a longer
/// header warns and resynchronises), and at most `max_streams` streams (default 1024; the least
/// recently used is forgotten to make room). Per push, the completed messages and entries are
/// kept in two vectors reused from push to push (they grow to the largest segment's worth).
#[derive(Debug)]
pub struct NackReassembler {
    streams: HashMap<StreamKey, Stream>,
    max_streams: usize,
    max_message_len: usize,
    tick: u64,
    evicted: u64,
    messages: Vec<NackMessage>,
    entries: Vec<NackEntry>,
}

impl Default for NackReassembler {
    fn default() -> Self {
        Self::new()
    }
}

impl NackReassembler {
    /// Default limits: 1024 streams, messages up to [`NACK_MAX_LEN`] bytes.
    pub fn new() -> Self {
        Self::with_limits(1024, NACK_MAX_LEN)
    }

    /// Explicit limits (`max_streams` at least 1; `max_message_len` at least the 4-byte header,
    /// at most [`NACK_MAX_LEN`]).
    pub fn with_limits(max_streams: usize, max_message_len: usize) -> Self {
        NackReassembler {
            streams: HashMap::new(),
            max_streams: max_streams.max(1),
            max_message_len: max_message_len.clamp(NACK_HEADER_LEN, NACK_MAX_LEN),
            tick: 0,
            evicted: 0,
            messages: Vec::new(),
            entries: Vec::new(),
        }
    }

    /// Streams currently tracked.
    pub fn stream_count(&self) -> usize {
        self.streams.len()
    }

    /// Streams forgotten to stay within `max_streams`.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// Bytes buffered in partial messages, over all streams.
    pub fn buffered_bytes(&self) -> usize {
        self.streams.values().map(|s| s.partial.len()).sum()
    }

    /// Feeds one in-order-or-not data segment without TCP flags (fully captured): `seq` is the
    /// sequence number of `payload[0]`. An empty payload does nothing.
    pub fn push(&mut self, key: StreamKey, seq: u32, payload: &[u8]) -> NackBatch<'_> {
        self.push_segment(key, Segment::data(seq, payload))
    }

    /// Feeds the TCP segment of a decoded frame if it goes to or comes from `nack_port`
    /// (`Params::erd_nack_port`); `None` for any other frame. The batch's byte ranges are the
    /// frame's.
    pub fn push_frame(&mut self, frame: &Frame<'_>, nack_port: u16) -> Option<NackBatch<'_>> {
        let t = frame.tcp()?;
        if t.src_port != nack_port && t.dst_port != nack_port {
            return None;
        }
        let (src, dst) = frame.ip_addrs()?;
        let key = StreamKey { src, dst, src_port: t.src_port, dst_port: t.dst_port };
        let seg = Segment {
            seq: t.seq,
            syn: t.flags.syn(),
            fin: t.flags.fin(),
            rst: t.flags.rst(),
            payload: t.payload,
            wire_len: t.payload_len,
        };
        let mut batch = self.push_segment(key, seg);
        batch.payload_offset = t.payload_offset;
        Some(batch)
    }

    /// Feeds one TCP segment with its flags.
    pub fn push_segment(&mut self, key: StreamKey, seg: Segment<'_>) -> NackBatch<'_> {
        self.messages.clear();
        self.entries.clear();
        let mut warnings = Warnings::default();
        let wire_len = seg.wire_len.max(seg.payload.len());
        let data_seq = seg.seq.wrapping_add(seg.syn as u32);
        if seg.rst {
            self.streams.remove(&key);
            return NackBatch::empty();
        }
        if wire_len == 0 && !seg.syn && !seg.fin {
            return NackBatch::empty();
        }
        self.tick += 1;
        let tick = self.tick;
        if !self.streams.contains_key(&key) {
            if wire_len == 0 && !seg.syn {
                return NackBatch::empty(); // a bare FIN of a stream never seen
            }
            if self.streams.len() >= self.max_streams {
                if let Some(old) = self.streams.iter().min_by_key(|(_, s)| s.last_used).map(|(k, _)| *k) {
                    self.streams.remove(&old);
                    self.evicted += 1;
                }
            }
            self.streams.insert(key, Stream { next_seq: data_seq, hunting: false, partial: Vec::new(), last_used: tick });
        }
        let st = self.streams.get_mut(&key).expect("inserted above");
        st.last_used = tick;
        if seg.syn && data_seq != st.next_seq {
            // A new connection on the same addresses and ports.
            *st = Stream { next_seq: data_seq, hunting: false, partial: Vec::new(), last_used: tick };
        }
        let max_len = self.max_message_len;
        let warn = |w: &mut Warnings, what| w.push(Warning::Ext { layer: Layer::ErdNack, what });
        let rel = data_seq.wrapping_sub(st.next_seq) as i32;
        let gap = rel > 0;
        let skip = if gap {
            warn(&mut warnings, ExtProblem::Other(Note::ErdStreamGap));
            st.lose_sync();
            st.next_seq = data_seq;
            0
        } else {
            rel.unsigned_abs() as usize
        };
        if skip < seg.payload.len() {
            let mut out = Out { messages: &mut self.messages, entries: &mut self.entries, warnings: &mut warnings };
            st.consume(&seg.payload[skip..], skip, max_len, &mut out);
        }
        let end = data_seq.wrapping_add(wire_len as u32);
        if (end.wrapping_sub(st.next_seq) as i32) > 0 {
            if skip.max(seg.payload.len()) < wire_len {
                // The snaplen cut new bytes: a gap at the end of this segment (one warning per
                // segment).
                if !gap {
                    warn(&mut warnings, ExtProblem::Other(Note::ErdStreamGap));
                }
                st.lose_sync();
            }
            st.next_seq = end;
        }
        if seg.fin {
            if !st.hunting && !st.partial.is_empty() {
                let want = st.partial_len_wanted();
                warn(&mut warnings, ExtProblem::Short { got: st.partial.len() as u32, want: want as u32 });
            }
            self.streams.remove(&key);
        }
        NackBatch {
            messages: &self.messages,
            entries: &self.entries,
            warnings,
            payload_offset: 0,
            captured: seg.payload.len(),
        }
    }
}

/// Where `Stream::consume` puts what it finds.
struct Out<'o> {
    messages: &'o mut Vec<NackMessage>,
    entries: &'o mut Vec<NackEntry>,
    warnings: &'o mut Warnings,
}

impl Out<'_> {
    fn message(&mut self, msg: &[u8], start: i64) {
        let count = get(&msg[2..4]) as u16;
        self.messages.push(NackMessage { count, start, first: self.entries.len() as u32 });
        self.entries
            .extend(msg[NACK_HEADER_LEN..].chunks_exact(NACK_ENTRY_LEN).filter_map(NackEntry::parse));
    }
}

impl Stream {
    fn lose_sync(&mut self) {
        self.hunting = true;
        self.partial.clear();
        if self.partial.capacity() > 64 * 1024 {
            self.partial.shrink_to(4096);
        }
    }

    /// The length of the partial message once complete (the header if its count is unknown).
    fn partial_len_wanted(&self) -> usize {
        match self.partial.get(2..4) {
            Some(c) => NACK_HEADER_LEN + NACK_ENTRY_LEN * get(c) as usize,
            None => NACK_HEADER_LEN,
        }
    }

    /// Consumes new in-order bytes `d`, which start at offset `d_off` of the segment's payload.
    fn consume(&mut self, d: &[u8], d_off: usize, max_len: usize, out: &mut Out<'_>) {
        let mut p = 0usize;
        loop {
            if self.hunting {
                match hunt(&d[p..], max_len) {
                    Some(q) => {
                        p += q;
                        self.hunting = false;
                    }
                    None => return,
                }
            }
            let held = self.partial.len();
            let avail = held + (d.len() - p);
            if avail == 0 {
                return;
            }
            let byte = |i: usize| if i < held { self.partial[i] } else { d[p + i - held] };
            let problem = if byte(0) != NACK_MAGIC {
                Some(ExtProblem::Magic { got: byte(0), want: NACK_MAGIC })
            } else if avail >= 2 && byte(1) != NACK_VERSION {
                Some(ExtProblem::Version { got: byte(1), want: NACK_VERSION })
            } else if avail >= NACK_HEADER_LEN
                && NACK_HEADER_LEN + NACK_ENTRY_LEN * (((byte(2) as usize) << 8) | byte(3) as usize) > max_len
            {
                Some(ExtProblem::Other(Note::ErdNackTooLong))
            } else {
                None
            };
            if let Some(what) = problem {
                out.warnings.push(Warning::Ext { layer: Layer::ErdNack, what });
                // Bytes held were checked when they arrived, so the problem is in `d`: search
                // again from the bad message's first byte after its start.
                if held == 0 {
                    p += 1;
                }
                self.lose_sync();
                continue;
            }
            if avail < NACK_HEADER_LEN {
                self.partial.extend_from_slice(&d[p..]);
                return;
            }
            let len = NACK_HEADER_LEN + NACK_ENTRY_LEN * (((byte(2) as usize) << 8) | byte(3) as usize);
            if avail < len {
                self.partial.extend_from_slice(&d[p..]);
                return;
            }
            let from_d = len - held;
            let start = (d_off + p) as i64 - held as i64;
            if held == 0 {
                out.message(&d[p..p + len], start);
            } else {
                self.partial.extend_from_slice(&d[p..p + from_d]);
                out.message(&self.partial, start);
                self.partial.clear();
                if self.partial.capacity() > 64 * 1024 {
                    self.partial.shrink_to(4096);
                }
            }
            p += from_d;
        }
    }
}

/// Finds the first plausible message header in `d` while resynchronising: magic and version
/// (at least those two bytes in view), a length within `max_len`, zero reserved bytes in every
/// entry byte in view, and right after the message (if in view) another magic. O(len(d)): each
/// candidate's scan stops at the next candidate of the same residue mod 4.
fn hunt(d: &[u8], max_len: usize) -> Option<usize> {
    let mut q = 0;
    while q + 1 < d.len() {
        q += d[q..d.len() - 1].iter().position(|&b| b == NACK_MAGIC)?;
        if d[q + 1] == NACK_VERSION && plausible(&d[q..], max_len) {
            return Some(q);
        }
        q += 1;
    }
    None
}

fn plausible(m: &[u8], max_len: usize) -> bool {
    let Some(c) = m.get(2..4) else { return true };
    let len = NACK_HEADER_LEN + NACK_ENTRY_LEN * get(c) as usize;
    if len > max_len {
        return false;
    }
    let mut r = NACK_HEADER_LEN;
    while r < len.min(m.len()) {
        if m[r] != 0 {
            return false;
        }
        r += 4;
    }
    m.get(len).is_none_or(|&b| b == NACK_MAGIC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eeth_bits_and_fields() {
        let e = EethRepr { ty: 1, last: true, msg_id: 0x1234, s_len: 8, s_offset: 0x0001_0000 };
        assert_eq!(e.to_bytes(), [0xc0, 0, 0x12, 0x34, 0, 8, 0, 0, 0, 1, 0, 0]);
        assert_eq!(EethRepr::parse(&e.to_bytes()), Some(e));
        assert_eq!(e.msg_len(), Some(0x1_0008));
        // Reserved bits are ignored.
        assert_eq!(EethRepr::parse(&[0xbf, 0xff, 0, 1, 0, 2, 0xff, 0xff, 0, 0, 0, 3]), Some(EethRepr {
            ty: 1,
            last: false,
            msg_id: 1,
            s_len: 2,
            s_offset: 3
        }));
        assert_eq!(EethRepr::parse(&[0; 11]), None);
    }

    #[test]
    fn hunting_skips_lookalikes_inside_entries() {
        // An entry whose source QPN reads 4e 01 00 … is not a header: its reserved byte at +4 of
        // the fake header would be the real entry's 0x4e.
        let e = [NackEntry { src_qpn: 0x4e0100, dst_qpn: 0x4e0102, psn: 7 }];
        let m = NackRepr::new(&e).to_vec();
        let mut d = m[6..].to_vec();
        d.extend_from_slice(&m);
        assert_eq!(hunt(&d, NACK_MAX_LEN), Some(10));
    }
}
