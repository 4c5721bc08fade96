//! The BTH OpCode table (WIRE.md A.4): bits 7..5 select the transport, bits 4..0 the operation;
//! the table says which extension headers follow the BTH and whether a payload may.

use super::aeth::AethRepr;
use super::ext_headers::{
    AtomicAckEthRepr, AtomicEthRepr, DcpethRepr, DethRepr, FethRepr, IethRepr, ImmDtRepr, RdethRepr, RethRepr, SsethRepr, XrcethRepr,
};
use super::fixed_header::HeaderLayout;

/// Extension headers, in the order they follow the BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Hdr {
    Rdeth,
    Deth,
    Xrceth,
    /// DCP: MSN · sRetryNo (WIRE.md B.1).
    Dcpeth,
    Feth,
    Reth,
    AtomicEth,
    Aeth,
    AtomicAckEth,
    /// DCP: SSN · reserved (WIRE.md B.1).
    Sseth,
    ImmDt,
    Ieth,
}

impl Hdr {
    pub const ALL: [Hdr; 12] = [
        Hdr::Rdeth,
        Hdr::Deth,
        Hdr::Xrceth,
        Hdr::Dcpeth,
        Hdr::Feth,
        Hdr::Reth,
        Hdr::AtomicEth,
        Hdr::Aeth,
        Hdr::AtomicAckEth,
        Hdr::Sseth,
        Hdr::ImmDt,
        Hdr::Ieth,
    ];

    /// The header's layout, from its declaration (`crate::layout`).
    pub const fn layout(self) -> &'static HeaderLayout {
        match self {
            Hdr::Rdeth => &RdethRepr::LAYOUT,
            Hdr::Deth => &DethRepr::LAYOUT,
            Hdr::Xrceth => &XrcethRepr::LAYOUT,
            Hdr::Dcpeth => &DcpethRepr::LAYOUT,
            Hdr::Feth => &FethRepr::LAYOUT,
            Hdr::Reth => &RethRepr::LAYOUT,
            Hdr::AtomicEth => &AtomicEthRepr::LAYOUT,
            Hdr::Aeth => &AethRepr::LAYOUT,
            Hdr::AtomicAckEth => &AtomicAckEthRepr::LAYOUT,
            Hdr::Sseth => &SsethRepr::LAYOUT,
            Hdr::ImmDt => &ImmDtRepr::LAYOUT,
            Hdr::Ieth => &IethRepr::LAYOUT,
        }
    }

    /// Header length in bytes.
    pub const fn len(self) -> usize {
        self.layout().len
    }

    pub fn layer(self) -> crate::warning::Layer {
        self.layout().layer
    }
}

/// A set of extension headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HeaderSet(u16);

impl HeaderSet {
    pub const EMPTY: HeaderSet = HeaderSet(0);

    pub const fn of(hdrs: &[Hdr]) -> HeaderSet {
        let mut bits = 0u16;
        let mut i = 0;
        while i < hdrs.len() {
            bits |= 1 << hdrs[i] as u8;
            i += 1;
        }
        HeaderSet(bits)
    }
    #[inline]
    pub const fn with(self, h: Hdr) -> HeaderSet {
        HeaderSet(self.0 | 1 << h as u8)
    }
    #[inline]
    pub const fn contains(self, h: Hdr) -> bool {
        self.0 & (1 << h as u8) != 0
    }
    /// Total length of the headers in the set.
    pub fn len(self) -> usize {
        self.iter().map(Hdr::len).sum()
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The headers in wire order.
    #[inline]
    pub fn iter(self) -> impl Iterator<Item = Hdr> {
        let mut bits = self.0;
        core::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let i = bits.trailing_zeros();
            bits &= bits - 1;
            Some(Hdr::ALL[i as usize])
        })
    }
}

/// The transport selected by OpCode bits 7..5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transport {
    Rc,
    Uc,
    Rd,
    Ud,
    Cnp,
    Xrc,
    /// 0xC0-0xFF.
    Vendor,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Rc => "RC",
            Transport::Uc => "UC",
            Transport::Rd => "RD",
            Transport::Ud => "UD",
            Transport::Cnp => "CNP",
            Transport::Xrc => "XRC",
            Transport::Vendor => "Vendor",
        }
    }
}

/// What the table says about one opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    /// "RC SEND First", …
    pub name: &'static str,
    pub transport: Transport,
    /// Extension headers after the BTH, before any payload.
    pub headers: HeaderSet,
    /// The opcode may carry a payload (and therefore pad bytes).
    pub payload: bool,
    /// CNP: 16 reserved bytes after the BTH.
    pub cnp: bool,
    /// Offset from the BTH of each header in `headers` (indexed by [`Hdr`]; 0 when absent).
    pub offsets: [u8; 12],
    /// Total length of `headers`.
    pub headers_len: u8,
}

/// A BTH OpCode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opcode(pub u8);

/// The operation (bits 4..0) of the RC table, with its headers and payload rule.
const fn rc_op(op: u8) -> Option<(&'static str, HeaderSet, bool)> {
    use Hdr::*;
    Some(match op {
        0x00 => ("SEND First", HeaderSet::EMPTY, true),
        0x01 => ("SEND Middle", HeaderSet::EMPTY, true),
        0x02 => ("SEND Last", HeaderSet::EMPTY, true),
        0x03 => ("SEND Last with Immediate", HeaderSet::of(&[ImmDt]), true),
        0x04 => ("SEND Only", HeaderSet::EMPTY, true),
        0x05 => ("SEND Only with Immediate", HeaderSet::of(&[ImmDt]), true),
        0x06 => ("RDMA WRITE First", HeaderSet::of(&[Reth]), true),
        0x07 => ("RDMA WRITE Middle", HeaderSet::EMPTY, true),
        0x08 => ("RDMA WRITE Last", HeaderSet::EMPTY, true),
        0x09 => ("RDMA WRITE Last with Immediate", HeaderSet::of(&[ImmDt]), true),
        0x0A => ("RDMA WRITE Only", HeaderSet::of(&[Reth]), true),
        0x0B => ("RDMA WRITE Only with Immediate", HeaderSet::of(&[Reth, ImmDt]), true),
        0x0C => ("RDMA READ Request", HeaderSet::of(&[Reth]), false),
        0x0D => ("RDMA READ Response First", HeaderSet::of(&[Aeth]), true),
        0x0E => ("RDMA READ Response Middle", HeaderSet::EMPTY, true),
        0x0F => ("RDMA READ Response Last", HeaderSet::of(&[Aeth]), true),
        0x10 => ("RDMA READ Response Only", HeaderSet::of(&[Aeth]), true),
        0x11 => ("Acknowledge", HeaderSet::of(&[Aeth]), false),
        0x12 => ("ATOMIC Acknowledge", HeaderSet::of(&[Aeth, AtomicAckEth]), false),
        0x13 => ("CmpSwap", HeaderSet::of(&[AtomicEth]), false),
        0x14 => ("FetchAdd", HeaderSet::of(&[AtomicEth]), false),
        0x16 => ("SEND Last with Invalidate", HeaderSet::of(&[Ieth]), true),
        0x17 => ("SEND Only with Invalidate", HeaderSet::of(&[Ieth]), true),
        0x1C => ("FLUSH", HeaderSet::of(&[Feth, Reth]), false),
        0x1D => ("ATOMIC WRITE", HeaderSet::of(&[Reth]), true),
        _ => return None,
    })
}

/// Operations 0x0D-0x12 are responses (READ responses and acknowledges).
const fn is_response(op: u8) -> bool {
    op >= 0x0D && op <= 0x12
}

macro_rules! names {
    ($prefix:literal) => {
        [
            concat!($prefix, " SEND First"),
            concat!($prefix, " SEND Middle"),
            concat!($prefix, " SEND Last"),
            concat!($prefix, " SEND Last with Immediate"),
            concat!($prefix, " SEND Only"),
            concat!($prefix, " SEND Only with Immediate"),
            concat!($prefix, " RDMA WRITE First"),
            concat!($prefix, " RDMA WRITE Middle"),
            concat!($prefix, " RDMA WRITE Last"),
            concat!($prefix, " RDMA WRITE Last with Immediate"),
            concat!($prefix, " RDMA WRITE Only"),
            concat!($prefix, " RDMA WRITE Only with Immediate"),
            concat!($prefix, " RDMA READ Request"),
            concat!($prefix, " RDMA READ Response First"),
            concat!($prefix, " RDMA READ Response Middle"),
            concat!($prefix, " RDMA READ Response Last"),
            concat!($prefix, " RDMA READ Response Only"),
            concat!($prefix, " Acknowledge"),
            concat!($prefix, " ATOMIC Acknowledge"),
            concat!($prefix, " CmpSwap"),
            concat!($prefix, " FetchAdd"),
            concat!($prefix, " RESYNC"),
            concat!($prefix, " SEND Last with Invalidate"),
            concat!($prefix, " SEND Only with Invalidate"),
            "",
            "",
            "",
            "",
            concat!($prefix, " FLUSH"),
            concat!($prefix, " ATOMIC WRITE"),
            "",
            "",
        ]
    };
}

const RC_NAMES: [&str; 32] = names!("RC");
const UC_NAMES: [&str; 32] = names!("UC");
const RD_NAMES: [&str; 32] = names!("RD");
const XRC_NAMES: [&str; 32] = names!("XRC");

impl Opcode {
    /// The CNP opcode as hardware, scapy and DPDK send it (WIRE.md A.4).
    pub const CNP: Opcode = Opcode(0x81);

    #[inline]
    pub const fn transport(self) -> Transport {
        match self.0 >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            2 => Transport::Rd,
            3 => Transport::Ud,
            4 => Transport::Cnp,
            5 => Transport::Xrc,
            _ => Transport::Vendor,
        }
    }

    /// Operation bits 4..0.
    #[inline]
    pub fn op(self) -> u8 {
        self.0 & 0x1f
    }

    /// The table entry, or `None` for an opcode outside the table.
    #[inline]
    pub fn info(self) -> Option<&'static OpInfo> {
        OP_TABLE[self.0 as usize].as_ref()
    }

    /// The entry for a DCP data packet (tag 10, WIRE.md B.1): every RC SEND, RDMA WRITE and
    /// RDMA READ Request gains a DCPETH after the BTH, every WRITE a RETH, every SEND and the
    /// last packet of a WRITE with Immediate an SSNETH. Other opcodes are as in [`Self::info`].
    #[inline]
    pub fn info_dcp(self) -> Option<&'static OpInfo> {
        DCP_TABLE[self.0 as usize].as_ref()
    }

    /// RC SEND, RDMA WRITE or RDMA READ Request: the packets that carry DCP headers.
    pub const fn is_dcp_request(self) -> bool {
        self.0 <= 0x0C || self.0 == 0x16 || self.0 == 0x17
    }

    /// The opcode's name, or "Unknown" outside the table ("Vendor" for 0xC0-0xFF).
    pub fn name(self) -> &'static str {
        match self.info() {
            Some(i) => i.name,
            None if self.transport() == Transport::Vendor => "Vendor-specific",
            None => "Unknown",
        }
    }

    /// A CNP (0x80, 0x81): BTH and reserved bytes, no message.
    fn is_cnp(self) -> bool {
        self.transport() == Transport::Cnp
    }
    /// SEND First/Middle/Last/Only with or without Immediate or Invalidate (any transport).
    pub fn is_send(self) -> bool {
        matches!(self.op(), 0x00..=0x05 | 0x16 | 0x17) && self.info().is_some() && !self.is_cnp()
    }
    /// RDMA WRITE First/Middle/Last/Only with or without Immediate.
    pub fn is_write(self) -> bool {
        matches!(self.op(), 0x06..=0x0B) && self.info().is_some() && !self.is_cnp()
    }
    /// Position of the packet in its message; `None` for what carries no message (CNPs,
    /// Acknowledges) and unknown opcodes.
    pub fn position(self) -> Option<Position> {
        if self.info().is_none() || self.is_cnp() || matches!(self.op(), 0x11 | 0x12) {
            return None;
        }
        Some(match self.op() {
            0x00 | 0x06 | 0x0D => Position::First,
            0x01 | 0x07 | 0x0E => Position::Middle,
            0x02 | 0x03 | 0x08 | 0x09 | 0x0F | 0x16 => Position::Last,
            _ => Position::Only,
        })
    }
}

/// Where a packet stands in a multi-packet message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    First,
    Middle,
    Last,
    Only,
}

const fn merge(a: HeaderSet, b: HeaderSet) -> HeaderSet {
    HeaderSet(a.0 | b.0)
}

/// The whole table, computed at compile time so a lookup is one load.
static OP_TABLE: [Option<OpInfo>; 256] = {
    let mut t = [None; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = lookup(i as u8);
        i += 1;
    }
    t
};

const fn entry(name: &'static str, transport: Transport, headers: HeaderSet, payload: bool) -> Option<OpInfo> {
    let mut offsets = [0u8; 12];
    let mut off = 12usize;
    let mut i = 0;
    while i < Hdr::ALL.len() {
        let h = Hdr::ALL[i];
        if headers.contains(h) {
            offsets[i] = off as u8;
            off += h.len();
        }
        i += 1;
    }
    Some(OpInfo { name, transport, headers, payload, cnp: false, offsets, headers_len: (off - 12) as u8 })
}

/// The DCP variant of the table (WIRE.md B.1).
static DCP_TABLE: [Option<OpInfo>; 256] = {
    let mut t = [None; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = match lookup(i as u8) {
            Some(info) if Opcode(i as u8).is_dcp_request() => {
                let op = i as u8;
                let mut h = info.headers.with(Hdr::Dcpeth);
                let is_write = op >= 0x06 && op <= 0x0B;
                let is_send = op <= 0x05 || op == 0x16 || op == 0x17;
                if is_write {
                    h = h.with(Hdr::Reth);
                }
                if is_send || op == 0x09 || op == 0x0B {
                    h = h.with(Hdr::Sseth);
                }
                entry(info.name, info.transport, h, info.payload)
            }
            other => other,
        };
        i += 1;
    }
    t
};

/// WIRE.md A.4, one opcode at a time.
const fn lookup(code: u8) -> Option<OpInfo> {
    use Hdr::*;
    let op = code & 0x1f;
    let t = Opcode(code).transport();
    let (h, p) = match rc_op(op) {
        Some((_, h, p)) => (h, p),
        None => (HeaderSet::EMPTY, false),
    };
    let known = rc_op(op).is_some();
    match t {
        Transport::Rc if known => entry(RC_NAMES[op as usize], t, h, p),
        Transport::Uc if known && op <= 0x0B => entry(UC_NAMES[op as usize], t, h, p),
        Transport::Rd if op == 0x15 => entry(RD_NAMES[0x15], t, HeaderSet::of(&[Rdeth, Deth]), false),
        Transport::Rd if known && op <= 0x14 => {
            let base = if is_response(op) { HeaderSet::of(&[Rdeth]) } else { HeaderSet::of(&[Rdeth, Deth]) };
            entry(RD_NAMES[op as usize], t, merge(base, h), p)
        }
        Transport::Ud if op == 0x04 => entry("UD SEND Only", t, HeaderSet::of(&[Deth]), true),
        Transport::Ud if op == 0x05 => entry("UD SEND Only with Immediate", t, HeaderSet::of(&[Deth, ImmDt]), true),
        Transport::Cnp if code == 0x81 || code == 0x80 => {
            Some(OpInfo { name: "CNP", transport: t, headers: HeaderSet::EMPTY, payload: false, cnp: true, offsets: [0; 12], headers_len: 0 })
        }
        Transport::Xrc if known && op <= 0x17 => {
            let h = if is_response(op) { h } else { merge(HeaderSet::of(&[Xrceth]), h) };
            entry(XRC_NAMES[op as usize], t, h, p)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cnps_and_acknowledges_are_no_message_packets() {
        for op in [0x80u8, 0x81] {
            let o = Opcode(op);
            assert!(!o.is_send() && !o.is_write() && o.position().is_none(), "{op:#x}");
        }
        for op in [0x11u8, 0x12, 0x51, 0x52] {
            assert_eq!(Opcode(op).position(), None, "{op:#x}");
        }
        // WIRE.md A.4's names for the message opcodes.
        assert!(Opcode(0x00).is_send() && Opcode(0x64).is_send() && Opcode(0xa4).is_send());
        assert!(Opcode(0x2a).is_write() && !Opcode(0x2a).is_send());
        assert_eq!(Opcode(0x00).position(), Some(Position::First));
        assert_eq!(Opcode(0x41).position(), Some(Position::Middle));
        assert_eq!(Opcode(0x16).position(), Some(Position::Last));
        assert_eq!(Opcode(0x64).position(), Some(Position::Only));
        assert_eq!(Opcode(0x10).position(), Some(Position::Only));
    }

    #[test]
    fn table_matches_wire_md() {
        let known: Vec<u8> = (0..=255u8).filter(|&o| Opcode(o).info().is_some()).collect();
        let rc: Vec<u8> = known.iter().copied().filter(|o| *o < 0x20).collect();
        assert_eq!(
            rc,
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 0x16, 0x17, 0x1c, 0x1d]
        );
        assert_eq!(known.iter().filter(|o| (0x20..0x40).contains(*o)).count(), 12);
        assert_eq!(known.iter().filter(|o| (0x40..0x60).contains(*o)).count(), 22);
        assert_eq!(known.iter().filter(|o| (0x60..0x80).contains(*o)).copied().collect::<Vec<_>>(), [0x64, 0x65]);
        assert_eq!(known.iter().filter(|o| (0xa0..0xc0).contains(*o)).count(), 23);
        assert!(known.contains(&0x81) && known.contains(&0x80));
        assert!(known.iter().all(|&o| o < 0xc0));
    }

    #[test]
    fn headers_per_transport() {
        use Hdr::*;
        let h = |o: u8| Opcode(o).info().unwrap().headers.iter().collect::<Vec<_>>();
        assert_eq!(h(0x0B), [Reth, ImmDt]);
        assert_eq!(h(0x1C), [Feth, Reth]);
        assert_eq!(h(0x12), [Aeth, AtomicAckEth]);
        assert_eq!(h(0x46), [Rdeth, Deth, Reth]);
        assert_eq!(h(0x51), [Rdeth, Aeth]);
        assert_eq!(h(0x4E), [Rdeth]);
        assert_eq!(h(0x55), [Rdeth, Deth]);
        assert_eq!(h(0x65), [Deth, ImmDt]);
        assert_eq!(h(0xA6), [Xrceth, Reth]);
        assert_eq!(h(0xB1), [Aeth]);
        assert_eq!(h(0xB7), [Xrceth, Ieth]);
        assert_eq!(Opcode(0x2B).name(), "UC RDMA WRITE Only with Immediate");
        assert_eq!(Opcode(0x15).info(), None);
        assert_eq!(Opcode(0x2C).info(), None);
    }
}
