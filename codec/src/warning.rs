//! Per-packet problems. Each is a small `Copy` value (no allocation) with a short text; a frame
//! keeps up to [`Warnings::CAPACITY`] of them and counts the rest.

use core::fmt;

/// The layer or header a problem was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    Link,
    /// Native InfiniBand's Local Route Header.
    Lrh,
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
    Vcrc,
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
    /// Every layer (the Lua plugin's table of names is generated from it).
    pub const ALL: [Layer; 36] = [
        Layer::Link,
        Layer::Lrh,
        Layer::Vlan,
        Layer::Ipv4,
        Layer::Ipv6,
        Layer::Grh,
        Layer::Udp,
        Layer::Bth,
        Layer::Rdeth,
        Layer::Deth,
        Layer::Xrceth,
        Layer::Feth,
        Layer::Reth,
        Layer::AtomicEth,
        Layer::Aeth,
        Layer::AtomicAckEth,
        Layer::ImmDt,
        Layer::Ieth,
        Layer::IrnSack,
        Layer::Cnp,
        Layer::Payload,
        Layer::Icrc,
        Layer::Vcrc,
        Layer::Cm,
        Layer::Pfc,
        Layer::Dcpeth,
        Layer::Sseth,
        Layer::Tcp,
        Layer::Sdr,
        Layer::SdrData,
        Layer::Flor,
        Layer::FlorAck,
        Layer::Netrt,
        Layer::Erd,
        Layer::ErdNack,
        Layer::Detection,
    ];

    pub fn name(self) -> &'static str {
        use Layer::*;
        match self {
            Link => "link header",
            Lrh => "LRH",
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
            Vcrc => "VCRC",
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
    /// VCRC of a native InfiniBand packet on the wire differs from the computed one.
    VcrcMismatch { wire: u16, computed: u16 },
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

impl ExtProblem {
    /// The template of this problem's text and its values, in the template's slot order.
    fn template_args(&self) -> (&'static Template, [Arg<'static>; 3]) {
        use templates as t;
        let n = |v: u32| Arg::Int(v as u64);
        match *self {
            ExtProblem::Magic { got, want } => (&t::MAGIC, [n(got as u32), n(want as u32), Arg::None]),
            ExtProblem::Version { got, want } => (&t::VERSION, [n(got as u32), n(want as u32), Arg::None]),
            ExtProblem::Type(ty) => (&t::TYPE, [n(ty as u32), Arg::None, Arg::None]),
            ExtProblem::BodyLength { got, want } => (&t::BODY_LENGTH, [n(got), n(want), Arg::None]),
            ExtProblem::Short { got, want } => (&t::SHORT, [n(got), n(want), Arg::None]),
            ExtProblem::Mismatch { field, got, want } => (&t::MISMATCH, [Arg::Str(field.name()), n(got), n(want)]),
            ExtProblem::Other(note) => (&t::NOTE, [Arg::Str(note.text()), Arg::None, Arg::None]),
        }
    }
}

impl fmt::Display for ExtProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (t, args) = self.template_args();
        t.render(f, &args)
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
    /// Native InfiniBand: LRH LNH 0 or 1 (a raw packet, no IBA transport).
    LrhRawPacket,
}

impl Unsupported {
    pub const ALL: [Unsupported; 5] = [
        Unsupported::VlanDepth,
        Unsupported::Ipv4Fragment,
        Unsupported::Ipv6ExtensionHeaders,
        Unsupported::GrhNextHeader,
        Unsupported::LrhRawPacket,
    ];

    pub fn text(self) -> &'static str {
        match self {
            Unsupported::VlanDepth => "more than two VLAN tags",
            Unsupported::Ipv4Fragment => "IPv4 fragment",
            Unsupported::Ipv6ExtensionHeaders => "IPv6 extension headers",
            Unsupported::GrhNextHeader => "GRH next header is not the IBA transport",
            Unsupported::LrhRawPacket => "raw packet (LRH LNH 0 or 1)",
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
            | Warning::VcrcMismatch { .. }
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

impl Warning {
    /// The template of this warning's text and its values, in the template's slot order.
    fn template_args(&self) -> (&'static Template, [Arg<'_>; 3]) {
        use templates as t;
        use Warning::*;
        let n = |v: u64| Arg::Int(v);
        let s = |l: Layer| Arg::Str(l.name());
        const NO: Arg<'static> = Arg::None;
        match self {
            &Truncated { layer, need, have } => (&t::TRUNCATED, [s(layer), n(need as u64), n(have as u64)]),
            &LengthBeyondFrame { layer, claimed, available } => {
                let t = t::BEYOND_FRAME.iter().find(|t| t.layer.is_none_or(|l| l == layer)).expect("a catch-all text");
                (t, [s(layer), n(claimed as u64), n(available as u64)])
            }
            &LengthTooShort { layer, claimed, minimum } => (&t::TOO_SHORT, [s(layer), n(claimed as u64), n(minimum as u64)]),
            &IpUdpLengthMismatch { ip_payload, udp } => (&t::IP_UDP_MISMATCH, [n(ip_payload as u64), n(udp as u64), NO]),
            &UnknownOpcode(op) => (&t::UNKNOWN_OPCODE, [n(op as u64), NO, NO]),
            CnpOpcode0x80 => (&t::CNP_0X80, [NO, NO, NO]),
            &PadCntTooLarge { padcnt, available } => (&t::PAD_TOO_LARGE, [n(padcnt as u64), n(available as u64), NO]),
            &PadOnNoPayload { padcnt } => (&t::PAD_NO_PAYLOAD, [n(padcnt as u64), NO, NO]),
            &UnexpectedPayload { len } => (&t::UNEXPECTED_PAYLOAD, [n(len as u64), NO, NO]),
            &AtomicWriteLength { len } => (&t::ATOMIC_WRITE_LENGTH, [n(len as u64), NO, NO]),
            &TVer(v) => (&t::TVER, [n(v as u64), NO, NO]),
            &AethReserved(syn) => (&t::AETH_RESERVED, [n(syn as u64), NO, NO]),
            &IcrcMismatch { wire, computed } => (&t::ICRC_MISMATCH, [n(wire as u64), n(computed as u64), NO]),
            &VcrcMismatch { wire, computed } => (&t::VCRC_MISMATCH, [n(wire as u64), n(computed as u64), NO]),
            &Ipv4Checksum { wire, computed } => (&t::IPV4_CHECKSUM, [n(wire as u64), n(computed as u64), NO]),
            &CmAttribute(a) => (&t::CM_ATTRIBUTE, [n(a as u64), NO, NO]),
            &MacControlOpcode(op) => (&t::MAC_CONTROL_OPCODE, [n(op as u64), NO, NO]),
            &Unsupported(what) => (&t::UNSUPPORTED, [Arg::Str(what.text()), NO, NO]),
            &HeaderOnlyLength { len } => (&t::HEADER_ONLY_LENGTH, [n(len as u64), NO, NO]),
            Ext { layer, what } => (&t::EXT, [s(*layer), Arg::Show(what), NO]),
            &NotKept(k) => (&t::NOT_KEPT, [n(k as u64), NO, NO]),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (t, args) = self.template_args();
        t.render(f, &args)
    }
}

// ---- the texts ----

/// How a count wider than its slot was narrowed where the warning was made (the slot's Rust
/// type is narrower than the lengths it reports); the Lua plugin, which passes plain numbers,
/// narrows the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Narrow {
    /// Stored as it is.
    None,
    /// Kept modulo 2^16 (`as u16`).
    Wrap16,
    /// Saturated at 65535.
    Sat16,
    /// Saturated at 2^32 − 1.
    Sat32,
}

impl Narrow {
    /// `v` narrowed.
    pub const fn apply(self, v: u64) -> u64 {
        match self {
            Narrow::None => v,
            Narrow::Wrap16 => v & 0xffff,
            Narrow::Sat16 => if v > 0xffff { 0xffff } else { v },
            Narrow::Sat32 => if v > 0xffff_ffff { 0xffff_ffff } else { v },
        }
    }
}

/// One value of a template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotKind {
    /// A text (a layer's name, a field's name, a fixed note).
    Text,
    /// An integer, narrowed as said.
    Int(Narrow),
}

/// A named value of a template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub name: &'static str,
    pub kind: SlotKind,
}

/// The text of one kind of warning (or of an extension problem): literal text with slots
/// `{name}` (a text, or an integer in decimal) and `{name:0Nx}` (an integer in lowercase
/// hexadecimal, zero-padded to N digits). `Display` prints from these; the Lua plugin's
/// warning functions are generated from them (`dissector/src/lib.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Template {
    /// The plugin's name for it (`W.<key>`, `X.<key>` for extension problems).
    pub key: &'static str,
    /// Only for this layer: a more specific text of the same warning (the last one of a key
    /// is for every other layer).
    pub layer: Option<Layer>,
    /// The values, in the order of the variant's fields (the plugin function's parameters).
    pub slots: &'static [Slot],
    pub text: &'static str,
}

/// A template's value.
#[derive(Clone, Copy)]
enum Arg<'a> {
    None,
    Int(u64),
    Str(&'static str),
    Show(&'a dyn fmt::Display),
}

/// One piece of a template: literal text, or a slot with its format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece<'t> {
    Lit(&'t str),
    /// Slot index; hexadecimal width (None: decimal or text).
    Slot(usize, Option<usize>),
}

impl Template {
    /// The pieces of the text, in order.
    pub fn pieces(&self) -> impl Iterator<Item = Piece<'static>> + '_ {
        let slots = self.slots;
        let mut rest: &'static str = self.text;
        core::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            match rest.find('{') {
                Some(0) => {
                    let end = rest.find('}').expect("a closed slot");
                    let (spec, after) = (&rest[1..end], &rest[end + 1..]);
                    rest = after;
                    let (name, hex) = match spec.split_once(':') {
                        Some((name, f)) => {
                            let w = f.strip_prefix('0').and_then(|f| f.strip_suffix('x')).expect("format 0Nx");
                            (name, Some(w.parse::<usize>().expect("a width")))
                        }
                        None => (spec, None),
                    };
                    let i = slots.iter().position(|s| s.name == name).expect("a declared slot");
                    Some(Piece::Slot(i, hex))
                }
                Some(i) => {
                    let (lit, after) = rest.split_at(i);
                    rest = after;
                    Some(Piece::Lit(lit))
                }
                None => {
                    let lit = rest;
                    rest = "";
                    Some(Piece::Lit(lit))
                }
            }
        })
    }

    fn render(&self, f: &mut fmt::Formatter<'_>, args: &[Arg<'_>]) -> fmt::Result {
        for piece in self.pieces() {
            match piece {
                Piece::Lit(s) => f.write_str(s)?,
                Piece::Slot(i, hex) => match (args[i], hex) {
                    (Arg::Int(v), None) => write!(f, "{v}")?,
                    (Arg::Int(v), Some(w)) => write!(f, "{v:0w$x}")?,
                    (Arg::Str(s), _) => f.write_str(s)?,
                    (Arg::Show(d), _) => write!(f, "{d}")?,
                    (Arg::None, _) => unreachable!("template {} has no value for slot {i}", self.key),
                },
            }
        }
        Ok(())
    }
}

/// Every warning text (the Lua plugin's `W` and `X` functions are generated from these).
pub mod templates {
    use super::Layer;
    use super::Narrow::{self, *};
    use super::SlotKind::{self, Int, Text};
    use super::{Slot, Template};

    const fn slot(name: &'static str, kind: SlotKind) -> Slot {
        Slot { name, kind }
    }
    const fn int(name: &'static str, narrow: Narrow) -> Slot {
        slot(name, Int(narrow))
    }
    const LAYER: Slot = slot("layer", Text);
    const fn t(key: &'static str, slots: &'static [Slot], text: &'static str) -> Template {
        Template { key, layer: Option::None, slots, text }
    }

    pub const TRUNCATED: Template = t(
        "truncated",
        &[LAYER, int("need", Wrap16), int("have", Wrap16)],
        "truncated in {layer}: {have} of {need} bytes captured",
    );
    const BEYOND: [Slot; 3] = [LAYER, int("claimed", None), int("available", None)];
    /// The IP and GRH texts name the length field: IPv4's total length, IPv6's header + payload
    /// length, the GRH's PayLen (which counts the bytes after the GRH).
    pub const BEYOND_FRAME: [Template; 4] = [
        Template {
            layer: Some(Layer::Ipv4),
            ..t("beyond_frame", &BEYOND, "IPv4 total length {claimed} exceeds the {available} bytes in the frame")
        },
        Template {
            layer: Some(Layer::Ipv6),
            ..t("beyond_frame", &BEYOND, "IPv6 packet length {claimed} exceeds the {available} bytes in the frame")
        },
        Template {
            layer: Some(Layer::Grh),
            ..t("beyond_frame", &BEYOND, "GRH PayLen {claimed} exceeds the {available} bytes after the GRH")
        },
        t("beyond_frame", &BEYOND, "{layer} length {claimed} exceeds the {available} bytes in the frame"),
    ];
    pub const TOO_SHORT: Template = t(
        "too_short",
        &[LAYER, int("claimed", None), int("minimum", None)],
        "{layer} length {claimed} is below the minimum {minimum}",
    );
    pub const IP_UDP_MISMATCH: Template = t(
        "ip_udp_mismatch",
        &[int("ip_payload", Wrap16), int("udp", Wrap16)],
        "IP payload length {ip_payload} and UDP length {udp} disagree",
    );
    pub const UNKNOWN_OPCODE: Template =
        t("unknown_opcode", &[int("op", None)], "unknown opcode 0x{op:02x}: payload left opaque");
    pub const CNP_0X80: Template = t("cnp_0x80", &[], "opcode 0x80 read as CNP (hardware sends 0x81)");
    pub const PAD_TOO_LARGE: Template = t(
        "pad_too_large",
        &[int("padcnt", None), int("available", Wrap16)],
        "PadCnt {padcnt} exceeds the {available} bytes after the headers",
    );
    pub const PAD_NO_PAYLOAD: Template =
        t("pad_no_payload", &[int("padcnt", None)], "PadCnt {padcnt} on an opcode that carries no payload");
    pub const UNEXPECTED_PAYLOAD: Template =
        t("unexpected_payload", &[int("len", Sat16)], "{len} payload bytes on an opcode that carries no payload");
    pub const ATOMIC_WRITE_LENGTH: Template =
        t("atomic_write_length", &[int("len", Wrap16)], "ATOMIC WRITE carries {len} payload bytes instead of 8");
    pub const TVER: Template = t("tver", &[int("tver", None)], "BTH TVer {tver} (expected 0)");
    pub const AETH_RESERVED: Template =
        t("aeth_reserved", &[int("syndrome", None)], "AETH syndrome 0x{syndrome:02x} uses a reserved pattern");
    pub const ICRC_MISMATCH: Template = t(
        "icrc_mismatch",
        &[int("wire", None), int("computed", None)],
        "ICRC mismatch: wire {wire:08x} computed {computed:08x}",
    );
    pub const VCRC_MISMATCH: Template = t(
        "vcrc_mismatch",
        &[int("wire", None), int("computed", None)],
        "VCRC mismatch: wire {wire:04x} computed {computed:04x}",
    );
    pub const IPV4_CHECKSUM: Template = t(
        "ipv4_checksum",
        &[int("wire", None), int("computed", None)],
        "IPv4 header checksum 0x{wire:04x} where 0x{computed:04x} was expected",
    );
    pub const CM_ATTRIBUTE: Template =
        t("cm_attribute", &[int("attribute", None)], "CM MAD attribute 0x{attribute:04x} not decoded");
    pub const MAC_CONTROL_OPCODE: Template =
        t("mac_control_opcode", &[int("opcode", None)], "MAC control opcode 0x{opcode:04x} not decoded");
    pub const UNSUPPORTED: Template = t("unsupported", &[slot("what", Text)], "not decoded: {what}");
    pub const HEADER_ONLY_LENGTH: Template = t(
        "header_only_length",
        &[int("len", Sat16)],
        "DCP header-only packet with {len} bytes after UDP (expected BTH + 3)",
    );
    pub const EXT: Template = t("ext", &[LAYER, slot("what", Text)], "{layer}: {what}");
    pub const NOT_KEPT: Template = t("not_kept", &[int("count", Sat16)], "{count} more problems not listed");

    // Extension problems (the `what` of `EXT`).
    pub const MAGIC: Template =
        t("magic", &[int("got", None), int("want", None)], "magic 0x{got:02x} (expected 0x{want:02x})");
    pub const VERSION: Template = t("version", &[int("got", None), int("want", None)], "version {got} (expected {want})");
    pub const TYPE: Template = t("type", &[int("code", None)], "unknown type {code}");
    pub const BODY_LENGTH: Template = t(
        "body_length",
        &[int("got", Sat32), int("want", Sat32)],
        "body of {got} bytes where its type needs {want}",
    );
    pub const SHORT: Template = t("short", &[int("got", Sat32), int("want", Sat32)], "only {got} of {want} bytes present");
    pub const MISMATCH: Template = t(
        "mismatch",
        &[slot("field", Text), int("got", Sat32), int("want", Sat32)],
        "{field} {got} disagrees with {want}",
    );
    pub const NOTE: Template = t("note", &[slot("note", Text)], "{note}");

    /// The warnings' templates, in the order of `Warning`'s variants.
    pub const WARNINGS: [&Template; 24] = [
        &TRUNCATED,
        &BEYOND_FRAME[0],
        &BEYOND_FRAME[1],
        &BEYOND_FRAME[2],
        &BEYOND_FRAME[3],
        &TOO_SHORT,
        &IP_UDP_MISMATCH,
        &UNKNOWN_OPCODE,
        &CNP_0X80,
        &PAD_TOO_LARGE,
        &PAD_NO_PAYLOAD,
        &UNEXPECTED_PAYLOAD,
        &ATOMIC_WRITE_LENGTH,
        &TVER,
        &AETH_RESERVED,
        &ICRC_MISMATCH,
        &VCRC_MISMATCH,
        &IPV4_CHECKSUM,
        &CM_ATTRIBUTE,
        &MAC_CONTROL_OPCODE,
        &HEADER_ONLY_LENGTH,
        &EXT,
        &UNSUPPORTED,
        &NOT_KEPT,
    ];
    /// The extension problems' templates, in the order of `ExtProblem`'s variants.
    pub const EXT_PROBLEMS: [&Template; 7] = [&MAGIC, &VERSION, &TYPE, &BODY_LENGTH, &SHORT, &MISMATCH, &NOTE];
}

#[cfg(test)]
mod template_tests {
    use super::*;

    #[test]
    fn templates_parse_and_use_every_slot() {
        for t in templates::WARNINGS.iter().chain(&templates::EXT_PROBLEMS) {
            let used: Vec<usize> = t
                .pieces()
                .filter_map(|p| match p {
                    Piece::Slot(i, _) => Some(i),
                    Piece::Lit(_) => None,
                })
                .collect();
            // A text for one layer need not name it.
            for i in (0..t.slots.len()).filter(|&i| t.layer.is_none() || t.slots[i].name != "layer") {
                assert!(used.contains(&i), "{}: slot {} unused", t.key, t.slots[i].name);
            }
        }
    }

    #[test]
    fn texts_as_before() {
        let w = Warning::Truncated { layer: Layer::Bth, need: 12, have: 3 };
        assert_eq!(w.to_string(), "truncated in BTH: 3 of 12 bytes captured");
        assert_eq!(Warning::UnknownOpcode(0x1c).to_string(), "unknown opcode 0x1c: payload left opaque");
        assert_eq!(
            Warning::IcrcMismatch { wire: 0xab, computed: 0x1234_5678 }.to_string(),
            "ICRC mismatch: wire 000000ab computed 12345678"
        );
        assert_eq!(
            Warning::LengthBeyondFrame { layer: Layer::Grh, claimed: 9, available: 8 }.to_string(),
            "GRH PayLen 9 exceeds the 8 bytes after the GRH"
        );
        assert_eq!(
            Warning::LengthBeyondFrame { layer: Layer::Udp, claimed: 9, available: 8 }.to_string(),
            "UDP header length 9 exceeds the 8 bytes in the frame"
        );
        assert_eq!(
            Warning::Ext { layer: Layer::Sdr, what: ExtProblem::Magic { got: 1, want: 0x53 } }.to_string(),
            "SDR control message: magic 0x01 (expected 0x53)"
        );
        assert_eq!(
            Warning::Unsupported(Unsupported::VlanDepth).to_string(),
            "not decoded: more than two VLAN tags"
        );
        assert_eq!(Warning::NotKept(3).to_string(), "3 more problems not listed");
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
