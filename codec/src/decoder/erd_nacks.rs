//! ERD's NACK stream (WIRE.md B.5), reassembled by the stateful decoder: the retransmission-info
//! path is a TCP stream to or from the NACK port (`Params::erd_nack_port`, 4792) of NACK
//! messages (`crate::ext::erd`: `magic 0x4E · version 1 · count 16` and `count` 12-byte
//! entries). A message can span TCP segments, so decoding it needs the stream in order:
//! [`NackReassembler`] does that with bounded memory and reports each message on the segment that
//! holds its last byte ([`NackBatch`], [`NackBatch::visit`]). The stateless frame parser shows no
//! NACK fields.

use core::ops::Range;
use crate::fxhash::FxHashMap;
use std::net::IpAddr;

use crate::ext::erd::{NackEntry, NACK_ENTRY_LEN, NACK_HEADER_LEN, NACK_MAGIC, NACK_MAX_LEN, NACK_VERSION};
use crate::field::FieldId as F;
use crate::frame::Frame;
use crate::ib::bytes::get;
use crate::value::Value;
use crate::warning::{ExtProblem, Layer, Note, Warning, Warnings};

/// The ERD detection rule for the NACK path: TCP to or from the NACK port.
pub fn is_nack_segment(frame: &Frame<'_>, nack_port: u16) -> bool {
    frame.tcp().is_some_and(|t| t.src_port == nack_port || t.dst_port == nack_port)
}

/// Identifies one direction of a TCP connection, as one capture interface saw it (each tap of
/// a multi-tap capture sees the stream whole: its copies are reassembled apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    /// The capture interface (pcapng interface id; 0 for a single-interface capture).
    pub interface: u32,
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

/// A [`NackBatch`] that owns its messages: kept past the reassembler's next `push` (by a
/// reader that decodes frames again on demand, after one pass).
#[derive(Clone, Debug)]
pub struct NackBatchBuf {
    messages: Vec<NackMessage>,
    entries: Vec<NackEntry>,
    warnings: Warnings,
    payload_offset: usize,
    captured: usize,
}

impl NackBatchBuf {
    /// The batch, borrowed from this copy.
    pub fn batch(&self) -> NackBatch<'_> {
        let (messages, entries) = (&self.messages[..], &self.entries[..]);
        NackBatch { messages, entries, warnings: self.warnings, payload_offset: self.payload_offset, captured: self.captured }
    }
}

impl<'r> NackBatch<'r> {
    /// A copy that owns its messages.
    pub fn to_buf(&self) -> NackBatchBuf {
        NackBatchBuf {
            messages: self.messages.to_vec(),
            entries: self.entries.to_vec(),
            warnings: self.warnings,
            payload_offset: self.payload_offset,
            captured: self.captured,
        }
    }

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
    /// (FxHash: deterministic, as the decoder's other maps, so a decoder's state reads the same
    /// however it was reached.)
    streams: FxHashMap<StreamKey, Stream>,
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
            streams: FxHashMap::default(),
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
        self.push_frame_on(frame, nack_port, 0)
    }

    /// [`Self::push_frame`] for a frame captured on interface `interface`.
    pub fn push_frame_on(&mut self, frame: &Frame<'_>, nack_port: u16, interface: u32) -> Option<NackBatch<'_>> {
        let t = frame.tcp()?;
        if t.src_port != nack_port && t.dst_port != nack_port {
            return None;
        }
        let (src, dst) = frame.ip_addrs()?;
        let key = StreamKey { src, dst, src_port: t.src_port, dst_port: t.dst_port, interface };
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
    use crate::ext::erd::NackRepr;

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
