//! The copy `rocescope annotate` writes: the input capture with a packet comment added to some
//! frames (docs/annotate.md). Everything else is kept as it is:
//!
//! - a pcapng input is copied block by block, byte for byte (section headers, interface
//!   descriptions with all their options, name resolution, statistics, ...); only the packet
//!   blocks given a comment, or holding an old rocescope comment, are rewritten: the same
//!   header, captured bytes and padding, then the options they had (other comments included,
//!   in their order) without any earlier rocescope comment, then the new comment;
//! - a pcap input becomes pcapng (a comment needs it): one section, one interface with the
//!   file's link type, snapshot length and time resolution (`if_tsresol` 6 or 9), and each
//!   record an Enhanced Packet Block with the same timestamp, lengths and bytes.
//!
//! The copier follows a [`Session`](crate::session::Session) (or a reader) over the same file:
//! [`Annotator::frame`] is called with each record in file order, and reads its own stream of
//! the file up to that record's block.

use std::io::{self, Read, Write};

use super::compressed::read_head;
use super::reader::{CaptureError, Record};
use super::reader::{OPT_COMMENT, OPT_ENDOFOPT};
use crate::annotation;

/// What can go wrong while copying: the input (located) or the output.
#[derive(Debug)]
pub enum CopyError {
    Input(CaptureError),
    Output(io::Error),
}

impl From<io::Error> for CopyError {
    fn from(e: io::Error) -> Self {
        CopyError::Output(e)
    }
}

const SHB: u32 = 0x0a0d0d0a;
const IDB: u32 = 1;
const PB: u32 = 2;
const SPB: u32 = 3;
const EPB: u32 = 6;
const BYTE_ORDER_MAGIC: u32 = 0x1a2b3c4d;
const IF_TSRESOL: u16 = 9;
/// The longest option value (its length is 16 bits).
const MAX_OPTION: usize = u16::MAX as usize;

/// A comment cut to what one option holds: whole lines (a comment of `rocescope annotate` is
/// far shorter; a frame named by hundreds of findings would lose its last lines).
pub fn fit_comment(c: &str) -> &str {
    if c.len() <= MAX_OPTION {
        return c;
    }
    let mut end = MAX_OPTION;
    while !c.is_char_boundary(end) {
        end -= 1;
    }
    match c[..end].rfind('\n') {
        Some(i) => &c[..i],
        None => &c[..end],
    }
}

enum Kind {
    /// pcapng, copied: the current section's byte order.
    PcapNg { big: bool },
    /// pcap, converted (its header already written as a section and an interface).
    Pcap { nanos: bool },
}

/// Copies a capture, adding packet comments.
pub struct Annotator<R: Read, W: Write> {
    src: R,
    /// Bytes of `src` consumed.
    pos: u64,
    out: W,
    kind: Kind,
    block: Vec<u8>,
    new: Vec<u8>,
    /// Packet blocks whose options were malformed (their malformed tail is dropped).
    pub malformed_options: u64,
}

fn input(offset: u64, message: impl Into<String>) -> CopyError {
    CopyError::Input(CaptureError { offset, message: message.into() })
}

fn word(big: bool, b: &[u8]) -> u32 {
    let a = [b[0], b[1], b[2], b[3]];
    if big {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    }
}

fn half(big: bool, b: &[u8]) -> u16 {
    if big {
        u16::from_be_bytes([b[0], b[1]])
    } else {
        u16::from_le_bytes([b[0], b[1]])
    }
}

fn push_word(v: &mut Vec<u8>, big: bool, w: u32) {
    v.extend_from_slice(&if big { w.to_be_bytes() } else { w.to_le_bytes() });
}

fn push_half(v: &mut Vec<u8>, big: bool, h: u16) {
    v.extend_from_slice(&if big { h.to_be_bytes() } else { h.to_le_bytes() });
}

fn pad4(n: usize) -> usize {
    n + (4 - n % 4) % 4
}

/// Appends one option (code, value, padding to 32 bits).
fn push_option(v: &mut Vec<u8>, big: bool, code: u16, value: &[u8]) {
    debug_assert!(value.len() <= MAX_OPTION, "an option holds at most 65535 bytes");
    push_half(v, big, code);
    push_half(v, big, value.len() as u16);
    v.extend_from_slice(value);
    v.resize(v.len() + pad4(value.len()) - value.len(), 0);
}

impl<R: Read, W: Write> Annotator<R, W> {
    /// Starts the copy of the capture `src` (decompressed) into `out`.
    pub fn new(mut src: R, mut out: W) -> Result<Self, CopyError> {
        let mut head = [0u8; 24];
        let n = read_head(&mut src, &mut head).map_err(|e| input(0, format!("read error: {e}")))?;
        let magic = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        let (kind, pos) = match magic {
            0xa1b2c3d4 | 0xd4c3b2a1 | 0xa1b23c4d | 0x4d3cb2a1 if n == 24 => {
                let big = matches!(magic, 0xa1b2c3d4 | 0xa1b23c4d);
                let nanos = matches!(magic, 0xa1b23c4d | 0x4d3cb2a1);
                let snaplen = word(big, &head[16..20]);
                let linktype = word(big, &head[20..24]);
                // One section, one interface (little-endian, as the writer's).
                let mut v = Vec::with_capacity(60);
                for w in [SHB, 28, BYTE_ORDER_MAGIC, 1, u32::MAX, u32::MAX, 28] {
                    push_word(&mut v, false, w);
                }
                push_word(&mut v, false, IDB);
                push_word(&mut v, false, 32);
                push_half(&mut v, false, linktype as u16);
                push_half(&mut v, false, 0);
                push_word(&mut v, false, snaplen);
                push_option(&mut v, false, IF_TSRESOL, &[if nanos { 9 } else { 6 }]);
                push_option(&mut v, false, OPT_ENDOFOPT, &[]);
                push_word(&mut v, false, 32);
                out.write_all(&v)?;
                (Kind::Pcap { nanos }, 24)
            }
            SHB => {
                // Copied as it comes, from the first block.
                out.write_all(&head[..n])?;
                (Kind::PcapNg { big: false }, n as u64)
            }
            _ => return Err(input(0, format!("not a pcap or pcapng file (magic {magic:08x})"))),
        };
        let mut a = Annotator { src, pos: 0, out, kind, block: Vec::new(), new: Vec::new(), malformed_options: 0 };
        if matches!(a.kind, Kind::PcapNg { .. }) {
            // The 24 bytes read belong to the first block: read the rest of it.
            a.block.extend_from_slice(&head[..n]);
            a.pos = 0;
            a.finish_block_from_head()?;
        } else {
            a.pos = pos;
        }
        Ok(a)
    }

    /// The first block (a section header) whose first bytes are in `self.block`, already
    /// written: its byte order, and the rest of it copied.
    fn finish_block_from_head(&mut self) -> Result<(), CopyError> {
        if self.block.len() < 12 {
            return Err(input(0, "file too short for a pcapng section header"));
        }
        let big = self.block[8..12] == BYTE_ORDER_MAGIC.to_be_bytes();
        let len = word(big, &self.block[4..8]) as usize;
        if len < 28 || !len.is_multiple_of(4) || len < self.block.len() {
            return Err(input(0, format!("invalid pcapng block length {len}")));
        }
        let have = self.block.len();
        self.block.resize(len, 0);
        self.read_into(have, 0)?;
        self.out.write_all(&self.block[have..])?;
        self.pos = len as u64;
        self.kind = Kind::PcapNg { big };
        Ok(())
    }

    /// Fills `self.block[from..]` from the source (the block starting at `at`).
    fn read_into(&mut self, from: usize, at: u64) -> Result<(), CopyError> {
        let n = read_head(&mut self.src, &mut self.block[from..]).map_err(|e| input(at, format!("read error: {e}")))?;
        if from + n < self.block.len() {
            return Err(input(at, "file ends in the middle of a block"));
        }
        Ok(())
    }

    /// Reads the next pcapng block (at `self.pos`) into `self.block`; `false` at the end of
    /// the file. A section header sets the byte order.
    fn next_block(&mut self) -> Result<bool, CopyError> {
        let at = self.pos;
        self.block.resize(12, 0);
        let n = read_head(&mut self.src, &mut self.block[..12]).map_err(|e| input(at, format!("read error: {e}")))?;
        if n == 0 {
            return Ok(false);
        }
        if n < 12 {
            return Err(input(at, "file ends in the middle of a block"));
        }
        let Kind::PcapNg { big } = &mut self.kind else { unreachable!("pcap is not copied block by block") };
        if self.block[..4] == SHB.to_be_bytes() {
            *big = self.block[8..12] == BYTE_ORDER_MAGIC.to_be_bytes();
        }
        let len = word(*big, &self.block[4..8]) as usize;
        if len < 12 || !len.is_multiple_of(4) || len > super::reader::MAX_RECORD {
            return Err(input(at, format!("invalid pcapng block length {len}")));
        }
        self.block.resize(len, 0);
        self.read_into(12, at)?;
        self.pos += len as u64;
        Ok(true)
    }

    /// Copies the blocks before `offset` as they are.
    fn copy_to(&mut self, offset: u64) -> Result<(), CopyError> {
        while self.pos < offset {
            if !self.next_block()? {
                return Err(input(self.pos, "file ends before the frame the copy was given"));
            }
            self.out.write_all(&self.block)?;
        }
        if self.pos != offset {
            return Err(input(offset, "the copy is out of step with the frames read"));
        }
        Ok(())
    }

    /// Writes the frame `rec` (the next one in the file) with the packet comment `comment`, if
    /// any, after copying the blocks before it.
    pub fn frame(&mut self, rec: &Record<'_>, comment: Option<&str>) -> Result<(), CopyError> {
        let big = match self.kind {
            Kind::Pcap { nanos } => {
                let ts = if nanos { rec.ts_ns } else { rec.ts_ns / 1000 };
                self.new.clear();
                epb(&mut self.new, false, 0, ts, rec.data, rec.orig_len, &[], comment);
                self.out.write_all(&self.new)?;
                return Ok(());
            }
            Kind::PcapNg { .. } => {
                self.copy_to(rec.offset)?;
                if !self.next_block()? {
                    return Err(input(rec.offset, "file ends before the frame the copy was given"));
                }
                let Kind::PcapNg { big } = self.kind else { unreachable!() };
                big
            }
        };
        let b = &self.block;
        let ty = word(big, &b[..4]);
        match ty {
            EPB | PB => {
                let captured = word(big, &b[20..24]) as usize;
                let opts = 28 + pad4(captured);
                if opts > b.len() - 4 {
                    return Err(input(rec.offset, "packet block's captured length runs past the block"));
                }
                // The options kept: all but an earlier rocescope comment, up to opt_endofopt.
                let mut kept: Vec<(usize, usize)> = Vec::new();
                let mut dropped = false;
                let mut at = opts;
                let end = b.len() - 4;
                while at + 4 <= end {
                    let code = half(big, &b[at..]);
                    let len = half(big, &b[at + 2..]) as usize;
                    if code == OPT_ENDOFOPT {
                        break;
                    }
                    let next = at + 4 + pad4(len);
                    if next > end {
                        self.malformed_options += 1;
                        dropped = true;
                        break;
                    }
                    let value = &b[at + 4..at + 4 + len];
                    let ours = code == OPT_COMMENT
                        && std::str::from_utf8(value.strip_suffix(&[0]).unwrap_or(value))
                            .is_ok_and(annotation::is_rocescope);
                    if ours {
                        dropped = true;
                    } else {
                        kept.push((at, next));
                    }
                    at = next;
                }
                if comment.is_none() && !dropped {
                    self.out.write_all(&self.block)?;
                    return Ok(());
                }
                let n = &mut self.new;
                n.clear();
                n.extend_from_slice(&b[..opts]);
                for &(from, to) in &kept {
                    n.extend_from_slice(&b[from..to]);
                }
                if let Some(c) = comment {
                    push_option(n, big, OPT_COMMENT, fit_comment(c).as_bytes());
                }
                if n.len() > opts {
                    push_option(n, big, OPT_ENDOFOPT, &[]);
                }
                let len = n.len() as u32 + 4;
                push_word(n, big, len);
                n[4..8].copy_from_slice(&if big { len.to_be_bytes() } else { len.to_le_bytes() });
                self.out.write_all(n)?;
            }
            SPB if comment.is_some() => {
                // A Simple Packet Block has no options: an Enhanced one on interface 0, without
                // a timestamp (it had none).
                self.new.clear();
                epb(&mut self.new, big, 0, 0, rec.data, rec.orig_len, &[], comment);
                self.out.write_all(&self.new)?;
            }
            _ => self.out.write_all(&self.block)?,
        }
        Ok(())
    }

    /// Copies what follows the last frame, and hands the output back.
    pub fn finish(mut self) -> Result<W, CopyError> {
        if matches!(self.kind, Kind::PcapNg { .. }) {
            while self.next_block()? {
                self.out.write_all(&self.block)?;
            }
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

/// An Enhanced Packet Block (pcapng 4.3).
#[allow(clippy::too_many_arguments)]
fn epb(
    v: &mut Vec<u8>,
    big: bool,
    interface: u32,
    ts: u64,
    data: &[u8],
    orig_len: u32,
    options: &[u8],
    comment: Option<&str>,
) {
    let start = v.len();
    for w in [EPB, 0, interface, (ts >> 32) as u32, ts as u32, data.len() as u32, orig_len] {
        push_word(v, big, w);
    }
    v.extend_from_slice(data);
    v.resize(v.len() + pad4(data.len()) - data.len(), 0);
    v.extend_from_slice(options);
    if let Some(c) = comment {
        push_option(v, big, OPT_COMMENT, fit_comment(c).as_bytes());
        push_option(v, big, OPT_ENDOFOPT, &[]);
    }
    let len = (v.len() - start + 4) as u32;
    push_word(v, big, len);
    v[start + 4..start + 8].copy_from_slice(&if big { len.to_be_bytes() } else { len.to_le_bytes() });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{CaptureReader, CaptureWriter};

    fn frames(bytes: &[u8]) -> Vec<(u64, u32, u64, Vec<u8>, u32, Vec<String>)> {
        let mut r = CaptureReader::new(bytes).unwrap();
        let mut v = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            let comments = rec.comments().map(|c| c.unwrap().to_string()).collect();
            v.push((rec.number, rec.interface, rec.ts_ns, rec.data.to_vec(), rec.orig_len, comments));
        }
        v
    }

    fn annotate(input: &[u8], comment: impl Fn(u64) -> Option<String>) -> Vec<u8> {
        let mut a = Annotator::new(input, Vec::new()).unwrap();
        let mut r = CaptureReader::new(input).unwrap();
        while let Some(rec) = r.next_record().unwrap() {
            a.frame(&rec, comment(rec.number).as_deref()).unwrap();
        }
        a.finish().unwrap()
    }

    #[test]
    fn pcapng_is_copied_with_comments_added_and_old_ones_kept_or_replaced() {
        let mut w = CaptureWriter::new(Vec::new(), &["a", "b"]).unwrap();
        w.write(0, 1_000, &[1, 2, 3]).unwrap();
        w.write_with_comment(1, 2_000, &[4; 61], "someone's note").unwrap();
        w.write_with_comment(0, 3_000, &[5; 8], "rocescope 1\nrocescope.analysis.loss=1").unwrap();
        w.write(1, 4_000, &[6; 64]).unwrap();
        let input = w.into_inner();
        let c = |n: u64| (n % 2 == 0).then(|| format!("rocescope 1\nrocescope.analysis.message={n}"));
        let out = annotate(&input, c);
        let (a, b) = (frames(&input), frames(&out));
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((x.0, x.1, x.2, &x.3, x.4), (y.0, y.1, y.2, &y.3, y.4), "frame {}", x.0);
        }
        assert_eq!(b[0].5, Vec::<String>::new());
        assert_eq!(b[1].5, vec!["someone's note".to_string(), c(2).unwrap()]);
        // An old rocescope comment is replaced (here by none).
        assert_eq!(b[2].5, Vec::<String>::new());
        assert_eq!(b[3].5, vec![c(4).unwrap()]);
        // The section and interfaces are the input's, byte for byte (everything before the
        // first packet block).
        assert_eq!(input[..100], out[..100]);
        // Annotating again gives the same file.
        assert_eq!(annotate(&out, c), out);
    }

    #[test]
    fn a_comment_longer_than_an_option_keeps_its_whole_lines() {
        let line = "rocescope.replay.seen=".to_string() + &"x".repeat(100);
        let long = std::iter::repeat_n(line.as_str(), 1000).collect::<Vec<_>>().join("\n");
        let cut = fit_comment(&long);
        assert!(cut.len() <= 65535 && cut.len() > 60000 && long.starts_with(cut) && cut.ends_with('x'));
        assert_eq!(long[cut.len()..].chars().next(), Some('\n'));
        let mut w = CaptureWriter::new(Vec::new(), &["a"]).unwrap();
        w.write(0, 1, &[1; 60]).unwrap();
        let input = w.into_inner();
        let out = annotate(&input, |_| Some(long.clone()));
        assert_eq!(frames(&out)[0].5, vec![cut.to_string()]);
    }

    #[test]
    fn a_big_endian_section_is_annotated_in_its_byte_order() {
        let mut v = Vec::new();
        for w in [SHB, 28, BYTE_ORDER_MAGIC, 1 << 16, u32::MAX, u32::MAX, 28, IDB, 20, 1 << 16, 0, 20] {
            push_word(&mut v, true, w);
        }
        for (i, data) in [&[1u8, 2, 3][..], &[4; 8]].iter().enumerate() {
            epb(&mut v, true, 0, 1000 + i as u64, data, data.len() as u32, &[], (i == 1).then_some("theirs"));
        }
        let c = |n: u64| Some(format!("rocescope 1\nrocescope.analysis.message={n}"));
        let out = annotate(&v, c);
        let (a, b) = (frames(&v), frames(&out));
        assert_eq!(a.len(), 2);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((x.0, x.1, x.2, &x.3, x.4), (y.0, y.1, y.2, &y.3, y.4), "frame {}", x.0);
        }
        assert_eq!(b[0].5, vec![c(1).unwrap()]);
        assert_eq!(b[1].5, vec!["theirs".to_string(), c(2).unwrap()]);
    }

    #[test]
    fn pcap_becomes_pcapng_with_the_same_frames() {
        for nanos in [false, true] {
            let mut v = Vec::new();
            let magic: u32 = if nanos { 0xa1b23c4d } else { 0xa1b2c3d4 };
            for w in [magic, 0x0004_0002, 0, 0, 96, 1] {
                v.extend_from_slice(&w.to_le_bytes());
            }
            for (i, len) in [(0u32, 60u32), (1, 96)] {
                for w in [100 + i, 999_999, len.min(96), len + 4 * i] {
                    v.extend_from_slice(&w.to_le_bytes());
                }
                v.extend(std::iter::repeat_n(i as u8, len.min(96) as usize));
            }
            let out = annotate(&v, |n| (n == 2).then(|| "rocescope 1\nx=y".to_string()));
            let (a, b) = (frames(&v), frames(&out));
            assert_eq!(a.len(), 2);
            for (x, y) in a.iter().zip(&b) {
                assert_eq!((x.0, x.1, x.2, &x.3, x.4), (y.0, y.1, y.2, &y.3, y.4), "frame {}", x.0);
            }
            assert_eq!(b[1].5, vec!["rocescope 1\nx=y".to_string()]);
        }
    }
}
