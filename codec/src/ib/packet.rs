//! A RoCE packet from its BTH to its ICRC (WIRE.md A.1-A.4): where each extension header,
//! the payload, the pad and the ICRC are, found from the opcode table and the length the
//! encapsulation gives (never from the frame length). Decoding goes as far as the captured bytes
//! go; every problem becomes a [`Warning`].

use super::aeth::{Aeth, Syndrome};
use super::bth::Bth;
use super::ext_headers::*;
use super::opcode::{Hdr, HeaderSet, OpInfo, Opcode};
use crate::warning::{Layer, Warning, Warnings};

/// ICRC length.
pub const ICRC_LEN: usize = 4;
/// CNP: reserved bytes after the BTH.
pub const CNP_RESERVED: usize = 16;
/// ATOMIC WRITE's payload length (IBTA 1.5).
pub const ATOMIC_WRITE_LEN: usize = 8;

/// Opcode 0x80 is read as a CNP, with a warning (hardware sends 0x81; WIRE.md A.4).
#[inline]
pub const fn is_cnp_0x80(opcode: u8) -> bool {
    opcode == 0x80
}

/// The opcode that may carry IRN's selective-NAK tail after its AETH: RC Acknowledge.
#[inline]
pub const fn may_carry_irn_sack(opcode: u8) -> bool {
    opcode == 0x11
}

/// RC ATOMIC WRITE, whose payload is [`ATOMIC_WRITE_LEN`] bytes.
#[inline]
pub fn is_rc_atomic_write(opcode: Opcode) -> bool {
    opcode.op() == 0x1D && opcode.transport() == super::opcode::Transport::Rc
}

/// How the bytes after the BTH are laid out, as the profile decides (WIRE.md part B).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// IBTA (WIRE.md A.4).
    #[default]
    Std,
    /// DCP data packet (tag 10): the DCP opcode table (WIRE.md B.1).
    DcpData,
    /// DCP header-only packet (tag 11): BTH and 3 bytes of MSN, no payload, no ICRC; the BTH
    /// describes the original packet, so its opcode and PadCnt raise no warnings.
    DcpHeaderOnly,
    /// An opcode outside the IBTA table that an extension defines (NetRT's 0xC0): BTH, an
    /// opaque body, ICRC; no unknown-opcode warning.
    ExtensionBody,
}

/// Length of the MSN a DCP header-only packet keeps.
pub const HO_MSN_LEN: usize = 3;

/// A parsed RoCE packet. Offsets are relative to the BTH.
#[derive(Clone, Copy, Debug)]
pub struct RocePacket<'a> {
    /// Captured bytes of the packet, from the BTH, never beyond its wire length.
    buf: &'a [u8],
    /// Length of the packet on the wire (from the UDP length or the GRH PayLen).
    wire_len: u32,
    info: Option<&'static OpInfo>,
    /// The extension headers the packet is long enough to hold (offsets come from the table).
    present: HeaderSet,
    /// Offset of the IRN SACK tail, 0 if absent.
    sack_at: u8,
    /// Offset after the headers (and after the CNP reserved bytes / SACK tail).
    hdr_end: u32,
    payload_len: u32,
    /// Offset of the ICRC (0: the packet is too short to hold one).
    icrc_at: u32,
}

impl<'a> RocePacket<'a> {
    /// Parses the packet in `captured` (from the BTH on; may be cut short by the snaplen) whose
    /// length on the wire is `wire_len`. Returns `None` when not even the BTH was captured.
    #[inline(always)]
    pub fn parse(captured: &'a [u8], wire_len: usize, warnings: &mut Warnings) -> Option<Self> {
        Self::parse_with(captured, wire_len, Layout::Std, warnings)
    }

    /// [`Self::parse`] with the layout a profile chose.
    #[inline(always)]
    pub fn parse_with(captured: &'a [u8], wire_len: usize, layout: Layout, warnings: &mut Warnings) -> Option<Self> {
        let buf = &captured[..captured.len().min(wire_len)];
        if wire_len < Bth::<&[u8]>::LEN {
            warnings.push(Warning::LengthTooShort {
                layer: Layer::Bth,
                claimed: wire_len as u32,
                minimum: Bth::<&[u8]>::LEN as u32,
            });
        }
        let bth = match Bth::new_checked(buf) {
            Ok(b) => b,
            Err(short) => {
                if wire_len >= Bth::<&[u8]>::LEN {
                    warnings.push(short.into());
                }
                return None;
            }
        };
        let opcode = Opcode(bth.opcode());
        if layout == Layout::DcpHeaderOnly {
            return Some(Self::header_only(buf, wire_len, warnings));
        }
        let info = match layout {
            Layout::DcpData => opcode.info_dcp(),
            Layout::ExtensionBody => None,
            _ => opcode.info(),
        };
        if bth.tver() != 0 {
            warnings.push(Warning::TVer(bth.tver()));
        }
        let (icrc_at, body_end) = if wire_len >= Bth::<&[u8]>::LEN + ICRC_LEN {
            (Some(wire_len - ICRC_LEN), wire_len - ICRC_LEN)
        } else {
            if wire_len >= Bth::<&[u8]>::LEN {
                warnings.push(Warning::LengthTooShort {
                    layer: Layer::Icrc,
                    claimed: wire_len as u32,
                    minimum: (Bth::<&[u8]>::LEN + ICRC_LEN) as u32,
                });
            }
            (None, wire_len)
        };
        let headers = match info {
            Some(i) => i.headers,
            None => {
                if layout != Layout::ExtensionBody {
                    warnings.push(Warning::UnknownOpcode(opcode.0));
                }
                HeaderSet::EMPTY
            }
        };
        if is_cnp_0x80(opcode.0) {
            warnings.push(Warning::CnpOpcode0x80);
        }
        let mut p = RocePacket {
            buf,
            wire_len: wire_len as u32,
            info,
            present: HeaderSet::EMPTY,
            sack_at: 0,
            hdr_end: Bth::<&[u8]>::LEN as u32,
            payload_len: 0,
            icrc_at: icrc_at.unwrap_or(0) as u32,
        };
        let mut off = Bth::<&[u8]>::LEN;
        let all_len = info.map_or(0, |i| i.headers_len as usize);
        if off + all_len <= body_end {
            p.present = headers;
            off += all_len;
        } else {
            for h in headers.iter() {
                if off + h.len() > body_end {
                    warnings.push(Warning::LengthTooShort {
                        layer: h.layer(),
                        claimed: body_end.saturating_sub(off) as u32,
                        minimum: h.len() as u32,
                    });
                    p.hdr_end = (body_end.max(off)) as u32;
                    return Some(p);
                }
                p.present = p.present.with(h);
                off += h.len();
            }
        }
        // A header the capture cut (the snaplen) is named, as the layers before the BTH are;
        // the headers after it are missing too.
        if buf.len() < off {
            if let Some(i) = info {
                if let Some(h) = p.present.iter().find(|&h| i.offsets[h as usize] as usize + h.len() > buf.len()) {
                    let have = buf.len().saturating_sub(i.offsets[h as usize] as usize);
                    warnings.push(Warning::Truncated { layer: h.layer(), need: h.len() as u16, have: have as u16 });
                }
            }
        }
        let avail = body_end.saturating_sub(off);
        let pad = bth.pad_cnt() as usize;
        let info = match info {
            Some(i) => i,
            None => {
                p.hdr_end = (off) as u32;
                p.payload_len = (avail) as u32;
                return Some(p);
            }
        };
        if info.cnp {
            if avail < CNP_RESERVED {
                warnings.push(Warning::LengthTooShort {
                    layer: Layer::Cnp,
                    claimed: avail as u32,
                    minimum: CNP_RESERVED as u32,
                });
            } else if avail > CNP_RESERVED {
                // Bytes beyond the 16 reserved ones: a CNP carries no payload.
                let extra = avail - CNP_RESERVED;
                warnings.push(Warning::UnexpectedPayload { len: extra.min(u16::MAX as usize) as u16 });
            }
            p.hdr_end = (off + avail.min(CNP_RESERVED)) as u32;
            p.payload_len = (avail.saturating_sub(CNP_RESERVED)) as u32;
            if pad != 0 {
                warnings.push(Warning::PadOnNoPayload { padcnt: pad as u8 });
            }
            return Some(p);
        }
        // IRN's selective NAK: an RC Acknowledge NAK(PSN sequence error) with 4 more bytes. When
        // the snaplen cut the AETH's syndrome byte, the length alone decides (as it does for
        // every other header), so a truncated capture decodes like the whole packet.
        if may_carry_irn_sack(opcode.0) && avail == IrnSack::<&[u8]>::LEN {
            let syndrome = p.header_offset(Hdr::Aeth).and_then(|o| buf.get(o)).map(|&b| Syndrome::from_byte(b));
            if syndrome.is_none_or(|s| s.is_psn_seq_error()) {
                p.sack_at = off as u8;
                off += IrnSack::<&[u8]>::LEN;
            }
        }
        let avail = body_end.saturating_sub(off);
        p.hdr_end = (off) as u32;
        if info.payload {
            if pad > avail {
                warnings.push(Warning::PadCntTooLarge { padcnt: pad as u8, available: avail as u16 });
                p.payload_len = (avail) as u32;
            } else {
                p.payload_len = (avail - pad) as u32;
            }
            if is_rc_atomic_write(opcode) && p.payload_len as usize != ATOMIC_WRITE_LEN {
                warnings.push(Warning::AtomicWriteLength { len: p.payload_len as u16 });
            }
        } else {
            if pad != 0 {
                warnings.push(Warning::PadOnNoPayload { padcnt: pad as u8 });
            }
            if avail > 0 {
                warnings.push(Warning::UnexpectedPayload { len: avail.min(u16::MAX as usize) as u16 });
            }
            p.payload_len = (avail) as u32;
        }
        if let Some(aeth) = p.aeth() {
            if let Syndrome::Reserved(s) = aeth.syndrome() {
                warnings.push(Warning::AethReserved(s));
            }
        }
        Some(p)
    }

    /// A DCP header-only packet: BTH · MSN (3 bytes), nothing else.
    fn header_only(buf: &'a [u8], wire_len: usize, warnings: &mut Warnings) -> Self {
        let need = Bth::<&[u8]>::LEN + HO_MSN_LEN;
        if wire_len != need {
            warnings.push(Warning::HeaderOnlyLength { len: wire_len.min(u16::MAX as usize) as u16 });
        }
        RocePacket {
            buf,
            wire_len: wire_len as u32,
            info: None,
            present: HeaderSet::EMPTY,
            sack_at: 0,
            hdr_end: need.min(wire_len).max(Bth::<&[u8]>::LEN) as u32,
            payload_len: wire_len.saturating_sub(need) as u32,
            icrc_at: 0,
        }
    }

    /// The MSN of a DCP header-only packet (the 3 bytes after the BTH), if captured.
    #[inline]
    pub fn ho_msn(&self) -> Option<u32> {
        self.buf.get(12..15).map(|b| super::bytes::get(b) as u32)
    }

    /// The captured bytes (BTH first).
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.buf
    }
    /// The packet's length on the wire, BTH to ICRC inclusive.
    #[inline]
    pub fn wire_len(&self) -> usize {
        self.wire_len as usize
    }
    /// Fewer bytes were captured than the packet holds.
    #[inline]
    pub fn is_truncated(&self) -> bool {
        self.buf.len() < self.wire_len as usize
    }
    #[inline]
    pub fn bth(&self) -> Bth<&'a [u8]> {
        Bth::new_unchecked(self.buf)
    }
    #[inline]
    pub fn opcode(&self) -> Opcode {
        Opcode(self.buf[0])
    }
    /// The opcode table's entry (None for an unknown opcode).
    #[inline]
    pub fn info(&self) -> Option<&'static OpInfo> {
        self.info
    }
    /// Offset of a header, if the opcode calls for it and the packet is long enough to hold it
    /// (it may still be cut by the snaplen: see [`Self::header`]).
    #[inline]
    pub fn header_offset(&self, h: Hdr) -> Option<usize> {
        if self.present.contains(h) {
            self.info.map(|i| i.offsets[h as usize] as usize)
        } else {
            None
        }
    }
    /// The bytes of a header, if present and fully captured.
    #[inline]
    pub fn header(&self, h: Hdr) -> Option<&'a [u8]> {
        let o = self.header_offset(h)?;
        self.buf.get(o..o + h.len())
    }
    /// Headers the packet holds (whether captured or not).
    #[inline]
    pub fn headers(&self) -> HeaderSet {
        self.present
    }
    #[inline]
    pub fn rdeth(&self) -> Option<Rdeth<&'a [u8]>> {
        self.header(Hdr::Rdeth).map(Rdeth::new_unchecked)
    }
    #[inline]
    pub fn deth(&self) -> Option<Deth<&'a [u8]>> {
        self.header(Hdr::Deth).map(Deth::new_unchecked)
    }
    #[inline]
    pub fn xrceth(&self) -> Option<Xrceth<&'a [u8]>> {
        self.header(Hdr::Xrceth).map(Xrceth::new_unchecked)
    }
    #[inline]
    pub fn feth(&self) -> Option<Feth<&'a [u8]>> {
        self.header(Hdr::Feth).map(Feth::new_unchecked)
    }
    #[inline]
    pub fn reth(&self) -> Option<Reth<&'a [u8]>> {
        self.header(Hdr::Reth).map(Reth::new_unchecked)
    }
    #[inline]
    pub fn atomic_eth(&self) -> Option<AtomicEth<&'a [u8]>> {
        self.header(Hdr::AtomicEth).map(AtomicEth::new_unchecked)
    }
    #[inline]
    pub fn aeth(&self) -> Option<Aeth<&'a [u8]>> {
        self.header(Hdr::Aeth).map(Aeth::new_unchecked)
    }
    #[inline]
    pub fn atomic_ack_eth(&self) -> Option<AtomicAckEth<&'a [u8]>> {
        self.header(Hdr::AtomicAckEth).map(AtomicAckEth::new_unchecked)
    }
    #[inline]
    pub fn immdt(&self) -> Option<ImmDt<&'a [u8]>> {
        self.header(Hdr::ImmDt).map(ImmDt::new_unchecked)
    }
    #[inline]
    pub fn ieth(&self) -> Option<Ieth<&'a [u8]>> {
        self.header(Hdr::Ieth).map(Ieth::new_unchecked)
    }
    #[inline]
    pub fn dcpeth(&self) -> Option<Dcpeth<&'a [u8]>> {
        self.header(Hdr::Dcpeth).map(Dcpeth::new_unchecked)
    }
    #[inline]
    pub fn sseth(&self) -> Option<Sseth<&'a [u8]>> {
        self.header(Hdr::Sseth).map(Sseth::new_unchecked)
    }
    /// Offset of IRN's SACK tail, if this is an IRN selective NAK.
    #[inline]
    pub fn sack_offset(&self) -> Option<usize> {
        (self.sack_at != 0).then_some(self.sack_at as usize)
    }
    #[inline]
    pub fn irn_sack(&self) -> Option<IrnSack<&'a [u8]>> {
        let o = self.sack_offset()?;
        self.buf.get(o..o + 4).map(IrnSack::new_unchecked)
    }
    /// Offset of the payload (right after the headers).
    #[inline]
    pub fn payload_offset(&self) -> usize {
        self.hdr_end as usize
    }
    /// Payload length on the wire (bytes between the last header and the pad).
    #[inline]
    pub fn payload_len(&self) -> usize {
        self.payload_len as usize
    }
    /// The captured part of the payload.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        let start = (self.hdr_end as usize).min(self.buf.len());
        let end = (self.hdr_end as usize + self.payload_len as usize).min(self.buf.len());
        &self.buf[start..end]
    }
    /// Offset of the ICRC, if the packet is long enough to hold one.
    #[inline]
    pub fn icrc_offset(&self) -> Option<usize> {
        (self.icrc_at != 0).then_some(self.icrc_at as usize)
    }
    /// The ICRC bytes as on the wire, if captured.
    #[inline]
    pub fn icrc_bytes(&self) -> Option<&'a [u8]> {
        let o = self.icrc_offset()?;
        self.buf.get(o..o + ICRC_LEN)
    }
    /// The bytes the ICRC covers after the BTH (BTH .. ICRC), if all were captured.
    #[inline]
    pub fn icrc_covered(&self) -> Option<&'a [u8]> {
        self.buf.get(..self.icrc_offset()?)
    }
}
