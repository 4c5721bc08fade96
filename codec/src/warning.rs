//! Per-packet problems. Each is a small `Copy` value (no allocation) with a short text; a frame
//! keeps up to [`Warnings::CAPACITY`] of them and counts the rest.

use core::fmt;

/// The layer or header a problem was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    Link,
    Vlan,
    Ipv4,
    Ipv6,
    Grh,
    Udp,
    Bth,
    Rdeth,
    Deth,
    Xrceth,
    Feth,
    Reth,
    AtomicEth,
    Aeth,
    AtomicAckEth,
    ImmDt,
    Ieth,
    IrnSack,
    Cnp,
    Payload,
    Icrc,
    Cm,
    Pfc,
    Dcpeth,
    Sseth,
    Tcp,
    Sdr,
    /// SDR data packets (immediate, RETH cross-checks).
    SdrData,
    Flor,
    /// Flor software ACK.
    FlorAck,
    Netrt,
    Erd,
    /// ERD's NACK stream over TCP.
    ErdNack,
    Detection,
}

impl Layer {
    pub fn name(self) -> &'static str {
        use Layer::*;
        match self {
            Link => "link header",
            Vlan => "VLAN tag",
            Ipv4 => "IPv4 header",
            Ipv6 => "IPv6 header",
            Grh => "GRH",
            Udp => "UDP header",
            Bth => "BTH",
            Rdeth => "RDETH",
            Deth => "DETH",
            Xrceth => "XRCETH",
            Feth => "FETH",
            Reth => "RETH",
            AtomicEth => "AtomicETH",
            Aeth => "AETH",
            AtomicAckEth => "AtomicAckETH",
            ImmDt => "ImmDt",
            Ieth => "IETH",
            IrnSack => "IRN SACK",
            Cnp => "CNP reserved bytes",
            Payload => "payload",
            Icrc => "ICRC",
            Cm => "CM MAD",
            Pfc => "MAC control frame",
            Dcpeth => "DCPETH",
            Sseth => "SSNETH",
            Tcp => "TCP header",
            Sdr => "SDR control message",
            SdrData => "SDR data packet",
            Flor => "Flor header",
            FlorAck => "Flor ACK",
            Netrt => "NetRT message",
            Erd => "ERD header",
            ErdNack => "ERD NACK stream",
            Detection => "profile detection",
        }
    }
}

/// One problem with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Warning {
    /// The capture stops inside a header (snaplen): `have` of `need` bytes were captured.
    Truncated { layer: Layer, need: u16, have: u16 },
    /// The packet claims more bytes than the frame had on the wire.
    LengthBeyondFrame { layer: Layer, claimed: u32, available: u32 },
    /// A length field too small for the header it must contain.
    LengthTooShort { layer: Layer, claimed: u32, minimum: u32 },
    /// IP payload length and UDP length disagree.
    IpUdpLengthMismatch { ip_payload: u16, udp: u16 },
    /// The opcode is not in the IBTA tables.
    UnknownOpcode(u8),
    /// 0x80 is read as a CNP (Linux names 0x80 the CNP base; hardware sends 0x81).
    CnpOpcode0x80,
    /// PadCnt exceeds the bytes after the headers.
    PadCntTooLarge { padcnt: u8, available: u16 },
    /// PadCnt is not 0 on an opcode that carries no payload.
    PadOnNoPayload { padcnt: u8 },
    /// Payload present on an opcode that carries none.
    UnexpectedPayload { len: u16 },
    /// An ATOMIC WRITE must carry exactly 8 bytes.
    AtomicWriteLength { len: u16 },
    /// TVer other than 0.
    TVer(u8),
    /// The AETH syndrome uses the reserved pattern 10 (or bit 7).
    AethReserved(u8),
    /// ICRC on the wire differs from the computed one.
    IcrcMismatch { wire: u32, computed: u32 },
    /// IPv4 header checksum is wrong.
    Ipv4Checksum { wire: u16, computed: u16 },
    /// A CM MAD of an unknown or unsupported attribute.
    CmAttribute(u16),
    /// A MAC control frame with an opcode other than PAUSE or PFC.
    MacControlOpcode(u16),
    /// A DCP header-only packet whose RoCE part is not BTH + 3 bytes.
    HeaderOnlyLength { len: u16 },
    /// An extension's data does not parse: which extension, and what is wrong.
    Ext { layer: Layer, what: ExtProblem },
    /// Something in the encapsulation this decoder does not follow.
    Unsupported(Unsupported),
    /// More problems than a frame keeps ([`Warnings::CAPACITY`]): how many were not kept.
    NotKept(u16),
}

/// What is wrong with an extension's data (WIRE.md part B), with the values involved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtProblem {
    /// A magic or version byte other than expected.
    Magic { got: u8, want: u8 },
    Version { got: u8, want: u8 },
    /// A type code outside the defined ones.
    Type(u8),
    /// A body length that does not match its type: `got` bytes where `want` were expected.
    BodyLength { got: u32, want: u32 },
    /// A header cut short: `got` of `want` bytes present.
    Short { got: u32, want: u32 },
    /// A field that disagrees with another: `got` in the packet, `want` from the other.
    Mismatch { field: crate::field::FieldId, got: u32, want: u32 },
    /// A problem described by a fixed note.
    Other(Note),
}

impl fmt::Display for ExtProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ExtProblem::Magic { got, want } => write!(f, "magic 0x{got:02x} (expected 0x{want:02x})"),
            ExtProblem::Version { got, want } => write!(f, "version {got} (expected {want})"),
            ExtProblem::Type(t) => write!(f, "unknown type {t}"),
            ExtProblem::BodyLength { got, want } => {
                write!(f, "body of {got} bytes where its type needs {want}")
            }
            ExtProblem::Short { got, want } => write!(f, "only {got} of {want} bytes present"),
            ExtProblem::Mismatch { field, got, want } => {
                write!(f, "{} {got} disagrees with {want}", field.name())
            }
            ExtProblem::Other(n) => f.write_str(n.text()),
        }
    }
}

/// Fixed texts for extension problems that carry no values (a one-byte code keeps warnings
/// small).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Note {
    /// SDR: a retransmitted fragment differs from the one seen before.
    SdrFragmentConflict,
    /// SDR: RETH VA does not match the immediate.
    SdrVaMismatch,
    /// SDR control message: the flags byte is not 0.
    SdrCtrlFlags,
    /// SDR SR_ACK: bits of the last bitmap byte beyond `sack_bits` are set.
    SdrSackTrailingBits,
    /// Flor SEND header: reserved flag bits (5..0) or the reserved byte are not 0.
    FlorReserved,
    /// Flor SEND header: `write_rn` is not 0 on a type other than WRITE_RETX.
    FlorWriteRnNotRetx,
    /// Flor ACK: the payload is not 24 + 4n bytes with 1 <= n <= 32.
    FlorAckLength,
    /// Flor ACK: bitmap bits are set for entries beyond the last one.
    FlorAckBitmapBeyond,
    /// Flor ACK: the top byte of the acknowledged QP number is not 0.
    FlorAckQpnHigh,
    /// NetRT: BTH fields that must be zero are not.
    NetrtBthFlags,
    /// ERD: a TCP segment left a gap in the NACK stream.
    ErdStreamGap,
    /// ERD: a NACK message header announces more entries than the reassembly limit.
    ErdNackTooLong,
    /// Auto-detection: several rules matched one packet of the flow.
    DetectionAmbiguous,
    /// Auto-detection: the flow carries a DCP tag but no DCP layout confirmed it.
    DcpUnconfirmed,
}

impl Note {
    /// Every note (the Lua plugin's table is generated from it).
    pub const ALL: [Note; 14] = [
        Note::SdrFragmentConflict,
        Note::SdrVaMismatch,
        Note::SdrCtrlFlags,
        Note::SdrSackTrailingBits,
        Note::FlorReserved,
        Note::FlorWriteRnNotRetx,
        Note::FlorAckLength,
        Note::FlorAckBitmapBeyond,
        Note::FlorAckQpnHigh,
        Note::NetrtBthFlags,
        Note::ErdStreamGap,
        Note::ErdNackTooLong,
        Note::DetectionAmbiguous,
        Note::DcpUnconfirmed,
    ];

    pub fn text(self) -> &'static str {
        match self {
            Note::SdrFragmentConflict => "user-immediate fragment differs from the one seen before",
            Note::SdrVaMismatch => "RETH VA does not match the immediate's message id and offset",
            Note::SdrCtrlFlags => "flags byte is not 0",
            Note::SdrSackTrailingBits => "bitmap bits beyond sack_bits are not 0",
            Note::FlorReserved => "reserved flag bits or reserved byte are not 0",
            Note::FlorWriteRnNotRetx => "write_rn is not 0 on a header that is not WRITE_RETX",
            Note::FlorAckLength => "payload is not 24 + 4n bytes with 1 <= n <= 32",
            Note::FlorAckBitmapBeyond => "bitmap marks entries beyond the last one",
            Note::FlorAckQpnHigh => "top byte of the acknowledged QP number is not 0",
            Note::NetrtBthFlags => "BTH SE/M/PadCnt/TVer/byte 4/A must be 0",
            Note::ErdStreamGap => "bytes missing in the NACK stream; resynchronised",
            Note::ErdNackTooLong => "message longer than the reassembly limit; resynchronised",
            Note::DetectionAmbiguous => "several detection rules match this flow; decoded as std",
            Note::DcpUnconfirmed => {
                "DCP tag set but no header-only packet or consistent WRITE layout confirms DCP (rule dcp); decoded as std"
            }
        }
    }
}

/// Encapsulations not decoded (each a warning, never an error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unsupported {
    VlanDepth,
    Ipv4Fragment,
    Ipv6ExtensionHeaders,
    GrhNextHeader,
}

impl Unsupported {
    pub const ALL: [Unsupported; 4] =
        [Unsupported::VlanDepth, Unsupported::Ipv4Fragment, Unsupported::Ipv6ExtensionHeaders, Unsupported::GrhNextHeader];

    pub fn text(self) -> &'static str {
        match self {
            Unsupported::VlanDepth => "more than two VLAN tags",
            Unsupported::Ipv4Fragment => "IPv4 fragment",
            Unsupported::Ipv6ExtensionHeaders => "IPv6 extension headers",
            Unsupported::GrhNextHeader => "GRH next header is not the IBA transport",
        }
    }
}

impl Warning {
    /// A failed integrity check: a wrong ICRC or IPv4 checksum, or lengths that do not add up
    /// (`rocescope check` reports these). Not: bytes the capture did not keep (`Truncated`),
    /// opcodes or values outside the tables (flagged, never errors: WIRE.md A.4), or what the
    /// decoder does not follow.
    pub fn is_integrity_failure(&self) -> bool {
        match self {
            Warning::IcrcMismatch { .. }
            | Warning::Ipv4Checksum { .. }
            | Warning::LengthBeyondFrame { .. }
            | Warning::LengthTooShort { .. }
            | Warning::IpUdpLengthMismatch { .. }
            | Warning::PadCntTooLarge { .. }
            | Warning::PadOnNoPayload { .. }
            | Warning::UnexpectedPayload { .. }
            | Warning::AtomicWriteLength { .. }
            | Warning::HeaderOnlyLength { .. } => true,
            Warning::Ext { what, .. } => matches!(what, ExtProblem::BodyLength { .. } | ExtProblem::Short { .. }),
            Warning::Truncated { .. }
            | Warning::UnknownOpcode(_)
            | Warning::CnpOpcode0x80
            | Warning::TVer(_)
            | Warning::AethReserved(_)
            | Warning::CmAttribute(_)
            | Warning::MacControlOpcode(_)
            | Warning::Unsupported(_)
            | Warning::NotKept(_) => false,
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Warning::*;
        match *self {
            Truncated { layer, need, have } => {
                write!(f, "truncated in {}: {have} of {need} bytes captured", layer.name())
            }
            LengthBeyondFrame { layer, claimed, available } => match layer {
                // Name the length field: IPv4's total length, IPv6's header + payload length,
                // the GRH's PayLen (which counts the bytes after the GRH).
                Layer::Ipv4 => write!(f, "IPv4 total length {claimed} exceeds the {available} bytes in the frame"),
                Layer::Ipv6 => write!(f, "IPv6 packet length {claimed} exceeds the {available} bytes in the frame"),
                Layer::Grh => write!(f, "GRH PayLen {claimed} exceeds the {available} bytes after the GRH"),
                _ => write!(f, "{} length {claimed} exceeds the {available} bytes in the frame", layer.name()),
            },
            LengthTooShort { layer, claimed, minimum } => {
                write!(f, "{} length {claimed} is below the minimum {minimum}", layer.name())
            }
            IpUdpLengthMismatch { ip_payload, udp } => {
                write!(f, "IP payload length {ip_payload} and UDP length {udp} disagree")
            }
            UnknownOpcode(op) => write!(f, "unknown opcode 0x{op:02x}: payload left opaque"),
            CnpOpcode0x80 => f.write_str("opcode 0x80 read as CNP (hardware sends 0x81)"),
            PadCntTooLarge { padcnt, available } => {
                write!(f, "PadCnt {padcnt} exceeds the {available} bytes after the headers")
            }
            PadOnNoPayload { padcnt } => {
                write!(f, "PadCnt {padcnt} on an opcode that carries no payload")
            }
            UnexpectedPayload { len } => {
                write!(f, "{len} payload bytes on an opcode that carries no payload")
            }
            AtomicWriteLength { len } => {
                write!(f, "ATOMIC WRITE carries {len} payload bytes instead of 8")
            }
            TVer(v) => write!(f, "BTH TVer {v} (expected 0)"),
            AethReserved(s) => write!(f, "AETH syndrome 0x{s:02x} uses a reserved pattern"),
            IcrcMismatch { wire, computed } => {
                write!(f, "ICRC mismatch: wire {wire:08x} computed {computed:08x}")
            }
            Ipv4Checksum { wire, computed } => {
                write!(f, "IPv4 header checksum 0x{wire:04x} where 0x{computed:04x} was expected")
            }
            CmAttribute(a) => write!(f, "CM MAD attribute 0x{a:04x} not decoded"),
            MacControlOpcode(op) => write!(f, "MAC control opcode 0x{op:04x} not decoded"),
            Unsupported(what) => write!(f, "not decoded: {}", what.text()),
            HeaderOnlyLength { len } => {
                write!(f, "DCP header-only packet with {len} bytes after UDP (expected BTH + 3)")
            }
            Ext { layer, what } => write!(f, "{}: {what}", layer.name()),
            NotKept(n) => write!(f, "{n} more problems not listed"),
        }
    }
}

/// A frame's warnings: a fixed-size list (no allocation) plus a count of any that did not fit.
///
/// The slots are left uninitialised until used, so creating an empty list (once per frame)
/// writes two bytes, not a hundred.
#[derive(Clone, Copy)]
pub struct Warnings {
    items: [core::mem::MaybeUninit<Warning>; Warnings::CAPACITY],
    len: u8,
    /// `Truncated` warnings pushed, kept or not.
    cut: u8,
    dropped: u16,
}

impl Default for Warnings {
    #[inline]
    fn default() -> Self {
        Warnings { items: [core::mem::MaybeUninit::uninit(); Warnings::CAPACITY], len: 0, cut: 0, dropped: 0 }
    }
}

impl core::fmt::Debug for Warnings {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Warnings {
    pub const CAPACITY: usize = 8;

    #[inline]
    pub fn push(&mut self, w: Warning) {
        if let Warning::Truncated { .. } = w {
            self.cut = self.cut.saturating_add(1);
        }
        if (self.len as usize) < Self::CAPACITY {
            self.items[self.len as usize] = core::mem::MaybeUninit::new(w);
            self.len += 1;
        } else {
            self.dropped = self.dropped.saturating_add(1);
        }
    }
    pub fn len(&self) -> usize {
        self.len as usize + self.dropped as usize
    }
    /// How many warnings did not fit.
    #[inline]
    pub fn not_kept(&self) -> u16 {
        self.dropped
    }
    /// How many warnings speak of the packet rather than of the capture: all but `Truncated`
    /// (which only says the snaplen cut it), counting those not kept. Detection compares these
    /// so that a cut packet is judged by what was captured of it.
    pub fn problem_count(&self) -> usize {
        self.len() - self.cut as usize
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = &Warning> {
        // SAFETY: `push` initialised every slot below `len`, and slots are never cleared.
        self.items[..self.len as usize].iter().map(|w| unsafe { w.assume_init_ref() })
    }
    /// What a frame shows: the kept warnings, then `NotKept(n)` when `n` did not fit.
    #[inline]
    pub fn listed(&self) -> impl Iterator<Item = Warning> + '_ {
        let more = (self.dropped > 0).then_some(Warning::NotKept(self.dropped));
        self.iter().copied().chain(more)
    }
    pub fn contains(&self, pred: impl Fn(&Warning) -> bool) -> bool {
        self.iter().any(pred)
    }
}
