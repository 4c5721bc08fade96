//! The field registry (INTERFACES.md, "One field vocabulary").
//!
//! Every decoded field has exactly one definition: its dotted name (used verbatim as the JSON
//! key, the `-e` name, the Wireshark `ProtoField` abbreviation and the browser's label key), its
//! type and a one-line description. The fields of the fixed-layout headers (BTH, the extension
//! headers, IRN's SACK tail, DCP's DCPETH and SSNETH) are defined on their lines of the header's
//! declaration (`crate::layout`), which `@header name;` splices in here; every other field is
//! defined here. Everything that prints or lists fields reads this table; nothing else spells a
//! field name.

/// How a field's value is typed (and how the Lua dissector declares it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// Unsigned integer of the given bit width (8, 16, 24, 32 or 64), printed in decimal.
    UInt(u8),
    /// 0 or 1.
    Bool,
    /// A byte string or bitmap, printed as two lowercase hex digits per wire byte.
    Bytes,
    /// One of a fixed set of lowercase names (`values`).
    Enum,
    /// Free text (warnings, opcode names).
    Text,
}

/// One entry of the registry.
#[derive(Clone, Copy, Debug)]
pub struct FieldDef {
    pub id: FieldId,
    pub name: &'static str,
    pub ty: FieldType,
    pub desc: &'static str,
    /// For [`FieldType::Enum`]: every value the field can take.
    pub values: &'static [&'static str],
    /// The field may appear several times in one packet.
    pub repeated: bool,
}

/// Builds [`FieldId`] and [`FIELDS`] from the entries `Id = "name", Type, "description"
/// [, values = …] [, repeated = …];` and the lines `@header name;`, where the fields of that
/// fixed-layout header go, taken from its declaration (`crate::layout::name`).
macro_rules! registry {
    // The entries up to a header: the header's declaration hands its fields to `@splice`.
    (@munch [$($done:tt)*]
        $($id:ident = $name:literal, $ty:expr, $desc:literal $(, values = $vals:expr)? $(, repeated = $rep:expr)? ;)*
        @header $h:ident; $($rest:tt)*
    ) => {
        crate::layout::$h!(registry @splice
            [$($done)* $($id = $name, $ty, $desc $(, values = $vals)? $(, repeated = $rep)?;)*]
            [$($rest)*]
        );
    };
    (@splice [$($done:tt)*] [$($rest:tt)*] header {
        $(#[$m:meta])* view $view:ident repr $repr:ident name $hname:literal len $len:literal layer $layer:ident
        fields [$({
            [$(#[$fm:meta])*] $f:ident : $fty:ident @ $off:literal .. $end:literal shift $shift:tt width $width:tt
            repr [$($(#[$rdoc:meta])* $rf:ident)?]
            reg [$($id:ident $name:literal ($($ty:tt)+) $desc:literal)?]
        })*]
    }) => {
        registry! { @munch [$($done)* $($($id = $name, $($ty)+, $desc;)?)*] $($rest)* }
    };
    // The last entries: every entry is known.
    (@munch [$($done:tt)*]
        $($id:ident = $name:literal, $ty:expr, $desc:literal $(, values = $vals:expr)? $(, repeated = $rep:expr)? ;)*
    ) => {
        registry! { @emit $($done)* $($id = $name, $ty, $desc $(, values = $vals)? $(, repeated = $rep)?;)* }
    };
    (@emit $( $id:ident = $name:literal, $ty:expr, $desc:literal $(, values = $vals:expr)? $(, repeated = $rep:expr)? ; )*) => {
        /// Identifies one field of the registry.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum FieldId { $($id),* }

        /// The registry, in [`FieldId`] order.
        pub static FIELDS: &[FieldDef] = &[
            $(FieldDef {
                id: FieldId::$id,
                name: $name,
                ty: $ty,
                desc: $desc,
                values: registry!(@vals $($vals)?),
                repeated: registry!(@rep $($rep)?),
            }),*
        ];
    };
    (@vals) => { &[] };
    (@vals $v:expr) => { $v };
    (@rep) => { false };
    (@rep $v:expr) => { $v };
    ($($entries:tt)*) => {
        registry! { @munch [] $($entries)* }
    };
}

use FieldType::*;

/// Profile names (`rocescope.profile`).
pub const PROFILE_VALUES: &[&str] = &["std", "dcp", "sdr", "flor", "netrt", "erd"];
/// AETH kinds (`rocescope.aeth.kind`).
pub const AETH_KIND_VALUES: &[&str] = &["ack", "rnr_nak", "nak", "reserved"];
/// ICRC and VCRC verdicts (`rocescope.icrc.status`, `rocescope.vcrc.status`).
pub const ICRC_STATUS_VALUES: &[&str] = &["good", "bad", "absent", "truncated"];
/// CM message kinds (`rocescope.cm.msg`).
pub const CM_MSG_VALUES: &[&str] = &["req", "rep", "rtu", "dreq", "drep", "rej", "mra"];
/// SDR control message types (`rocescope.sdr.ctrl.type`), type codes 1-5 in order.
pub const SDR_CTRL_VALUES: &[&str] = &["cts", "sr_ack", "sr_nack", "ec_ack", "ec_nack"];
/// Flor SEND header types (`rocescope.flor.send.type`), type codes 1-4 in order.
pub const FLOR_SEND_VALUES: &[&str] = &["data", "write_retx", "addr_req", "addr_resp"];
/// NetRT message types (`rocescope.netrt.type`), type codes 1-2 in order.
pub const NETRT_VALUES: &[&str] = &["request", "unfulfilled"];

registry! {
    Profile = "rocescope.profile", Enum, "Transport profile the packet was decoded with", values = PROFILE_VALUES;
    Truncated = "rocescope.truncated", Bool, "The capture holds fewer bytes than the packet's headers describe";
    OpcodeName = "rocescope.opcode_name", Text, "Transport and operation named by the BTH OpCode";
    PayloadLen = "rocescope.payload_len", UInt(32), "Payload bytes between the last header and the pad";
    Warning = "rocescope.warning", Text, "One problem found while decoding", repeated = true;

    @header lrh;
    @header bth;

    @header rdeth;
    @header deth;
    @header xrceth;
    @header reth;
    @header atomic_eth;
    @header aeth;
    AethKind = "rocescope.aeth.kind", Enum, "AETH syndrome kind", values = AETH_KIND_VALUES;
    AethCredit = "rocescope.aeth.credit", UInt(8), "AETH ACK credit count (31: invalid)";
    AethRnrTimer = "rocescope.aeth.rnr_timer", UInt(8), "AETH RNR NAK timer code";
    AethNakCode = "rocescope.aeth.nak_code", UInt(8), "AETH NAK code (0 PSN sequence error, 1 invalid request, 2 remote access, 3 remote operational, 4 invalid RD request)";
    @header irn_sack;
    @header atomic_ack_eth;
    @header immdt;
    @header ieth;
    @header feth;
    Icrc = "rocescope.icrc", Bytes, "Invariant CRC as it appears on the wire";
    IcrcStatus = "rocescope.icrc.status", Enum, "ICRC verdict", values = ICRC_STATUS_VALUES;
    Vcrc = "rocescope.vcrc", Bytes, "Variant CRC of a native InfiniBand packet as it appears on the wire";
    VcrcStatus = "rocescope.vcrc.status", Enum, "VCRC verdict", values = ICRC_STATUS_VALUES;

    CmMsg = "rocescope.cm.msg", Enum, "Connection Manager message", values = CM_MSG_VALUES;
    CmLocalQpn = "rocescope.cm.local_qpn", UInt(24), "CM sender's QPN";
    CmRemoteQpn = "rocescope.cm.remote_qpn", UInt(24), "CM peer's QPN (DREQ)";
    CmStartPsn = "rocescope.cm.start_psn", UInt(24), "CM starting PSN of the sender's send queue";
    CmLocalCommId = "rocescope.cm.local_comm_id", UInt(32), "CM sender's communication id";
    CmRemoteCommId = "rocescope.cm.remote_comm_id", UInt(32), "CM peer's communication id";

    PfcClassEnable = "rocescope.pfc.class_enable", Bytes, "PFC class-enable vector (bit i of the last byte: priority i)";
    PfcQuanta = "rocescope.pfc.quanta", UInt(16), "Pause time per class in quanta (one value for 802.3x PAUSE)", repeated = true;

    DcpTag = "rocescope.dcp.tag", UInt(8), "DCP ToS tag (0 non-DCP, 2 data, 3 header-only, 1 ACK)";
    @header dcpeth;
    @header sseth;
    DcpEmsn = "rocescope.dcp.emsn", UInt(24), "DCP ACK: receiver's expected MSN (all messages below it are complete)";
    DcpHo = "rocescope.dcp.ho", Bool, "DCP header-only (trimmed) packet";

    SdrMsgId = "rocescope.sdr.msg_id", UInt(32), "SDR message id (immediate)";
    SdrPktOff = "rocescope.sdr.pkt_off", UInt(32), "SDR packet offset in MTUs from the buffer start (immediate)";
    SdrImmFrag = "rocescope.sdr.imm_frag", UInt(8), "SDR user-immediate fragment carried by this packet";
    SdrUserImm = "rocescope.sdr.user_imm", UInt(32), "SDR user immediate, once rebuilt from its fragments";
    SdrVaOk = "rocescope.sdr.va_ok", Bool, "SDR RETH VA agrees with msg_id and pkt_off";
    SdrCtrlType = "rocescope.sdr.ctrl.type", Enum, "SDR control message type", values = SDR_CTRL_VALUES;
    SdrCtrlMsgSeq = "rocescope.sdr.ctrl.msg_seq", UInt(32), "SDR control: posted-receive sequence number";
    SdrCtrlBufLen = "rocescope.sdr.ctrl.buf_len", UInt(64), "SDR CTS: posted buffer length in bytes";
    SdrCtrlCumAck = "rocescope.sdr.ctrl.cum_ack", UInt(32), "SDR SR_ACK: index of the first missing chunk";
    SdrCtrlSackBits = "rocescope.sdr.ctrl.sack_bits", UInt(32), "SDR SR_ACK: number of bitmap bits";
    SdrCtrlSack = "rocescope.sdr.ctrl.sack", Bytes, "SDR SR_ACK: chunk bitmap after cum_ack";
    SdrCtrlCount = "rocescope.sdr.ctrl.count", UInt(32), "SDR NACK: number of indices";
    SdrCtrlIndices = "rocescope.sdr.ctrl.indices", UInt(32), "SDR NACK: chunk (SR) or data-submessage (EC) indices", repeated = true;

    FlorHint = "rocescope.flor.hint", Bool, "Flor hint: last WQE in the congestion window";
    FlorMid = "rocescope.flor.mid", UInt(32), "Flor message id (WRITE immediate)";
    FlorChunkOff = "rocescope.flor.chunk_off", UInt(32), "Flor chunk offset in UNIT_SIZE units (WRITE immediate)";
    FlorSendType = "rocescope.flor.send.type", Enum, "Flor SEND header type", values = FLOR_SEND_VALUES;
    FlorSendFlags = "rocescope.flor.send.flags", UInt(8), "Flor SEND header flags (bit 7 hint, bit 6 retransmission)";
    FlorSendRn = "rocescope.flor.send.rn", UInt(32), "Flor SEND reliable sequence number";
    FlorSendGn = "rocescope.flor.send.gn", UInt(64), "Flor global sequence number";
    FlorSendWriteRn = "rocescope.flor.send.write_rn", UInt(32), "Flor WRITE_RETX: original WRITE reliable sequence number";
    FlorSendBodyLen = "rocescope.flor.send.body_len", UInt(32), "Flor SEND header: message bytes after the header";
    FlorAddrMid = "rocescope.flor.addr.mid", UInt(32), "Flor address exchange: message id";
    FlorAddrMsgLen = "rocescope.flor.addr.msg_len", UInt(64), "Flor ADDR_REQ: message length";
    FlorAddrRKey = "rocescope.flor.addr.r_key", UInt(32), "Flor ADDR_RESP: remote key";
    FlorAddrVa = "rocescope.flor.addr.va", UInt(64), "Flor ADDR_RESP: remote address";
    FlorAddrBufLen = "rocescope.flor.addr.buf_len", UInt(64), "Flor ADDR_RESP: buffer length";
    FlorAckQpn = "rocescope.flor.ack.qpn", UInt(32), "Flor ACK: data QP acknowledged";
    FlorAckBitmap = "rocescope.flor.ack.bitmap", Bytes, "Flor ACK: entry kinds (bit 31 = entry 0)";
    FlorAckLeastGn = "rocescope.flor.ack.least_gn", UInt(64), "Flor ACK: least acknowledged global sequence number";
    FlorAckDelayNs = "rocescope.flor.ack.delay_ns", UInt(64), "Flor ACK: ACK delay in nanoseconds";
    FlorAckCount = "rocescope.flor.ack.count", UInt(32), "Flor ACK: number of entries";
    FlorAckAcked = "rocescope.flor.ack.acked", UInt(64), "Flor ACK: acknowledged numbers (SEND entries as global numbers)", repeated = true;

    NetrtType = "rocescope.netrt.type", Enum, "NetRT message type", values = NETRT_VALUES;
    NetrtEpsn = "rocescope.netrt.epsn", UInt(24), "NetRT request: expected PSN at the destination ToR";
    NetrtBitmap = "rocescope.netrt.bitmap", Bytes, "NetRT request: PSNs ePSN+1+i held (bit 0 = last byte's LSB)";
    NetrtRequested = "rocescope.netrt.requested", UInt(24), "NetRT request: PSNs asked for", repeated = true;
    NetrtUnfulfilledPsn = "rocescope.netrt.unfulfilled_psn", UInt(24), "NetRT: PSN the source ToR could not resend";
    NetrtRtxMark = "rocescope.netrt.rtx_mark", Bool, "NetRT in-network retransmission mark (BTH byte 4 bit 0)";

    ErdType = "rocescope.erd.type", UInt(8), "ERD EETH type (1: part of a multi-packet message)";
    ErdLast = "rocescope.erd.last", Bool, "ERD EETH: packet holds the message's final bytes";
    ErdMsgId = "rocescope.erd.msg_id", UInt(16), "ERD EETH message id";
    ErdSLen = "rocescope.erd.s_len", UInt(16), "ERD EETH: valid payload bytes after the EETH";
    ErdSOffset = "rocescope.erd.s_offset", UInt(32), "ERD EETH: byte offset of this payload in the message";
    ErdNackCount = "rocescope.erd.nack.count", UInt(16), "ERD NACK message: number of entries", repeated = true;
    ErdNackSrcQpn = "rocescope.erd.nack.src_qpn", UInt(24), "ERD NACK: source QPN", repeated = true;
    ErdNackDstQpn = "rocescope.erd.nack.dst_qpn", UInt(24), "ERD NACK: destination QPN", repeated = true;
    ErdNackPsn = "rocescope.erd.nack.psn", UInt(24), "ERD NACK: lost PSN", repeated = true;
}

impl FieldId {
    /// This field's registry entry.
    #[inline]
    pub fn def(self) -> &'static FieldDef {
        &FIELDS[self as usize]
    }
    /// The dotted name (`rocescope.bth.psn`).
    #[inline]
    pub fn name(self) -> &'static str {
        self.def().name
    }
    /// Looks a field up by its dotted name.
    pub fn from_name(name: &str) -> Option<FieldId> {
        FIELDS.iter().find(|f| f.name == name).map(|f| f.id)
    }
    /// The field's value depends on checksum verification (`DecodeOptions::verify`): the
    /// ICRC and VCRC verdicts, and the warnings (checksum mismatches are warnings). A reader
    /// that shows none of these may decode without verifying.
    pub fn shows_verification(self) -> bool {
        matches!(self, FieldId::IcrcStatus | FieldId::VcrcStatus | FieldId::Warning)
    }
    /// For a field shown in hexadecimal ([`HEX_DISPLAY`]), its width in hex digits.
    pub fn hex_digits(self) -> Option<usize> {
        match self.def().ty {
            FieldType::UInt(bits) if HEX_DISPLAY.contains(&self.name()) => Some(bits.div_ceil(4) as usize),
            _ => None,
        }
    }
}

/// The fields Wireshark's InfiniBand dissector shows in hexadecimal — queue pair numbers, keys and
/// virtual addresses: the text summary and the `-V` tree print them as `0x` and the field's width
/// in hex digits (`QP=0x000200`); `fields`, JSON and filters keep decimal values (INTERFACES.md).
pub const HEX_DISPLAY: &[&str] = &[
    "rocescope.bth.destqp",
    "rocescope.deth.q_key",
    "rocescope.deth.srcqp",
    "rocescope.reth.va",
    "rocescope.reth.r_key",
    "rocescope.atomiceth.va",
    "rocescope.atomiceth.r_key",
    "rocescope.ieth.r_key",
    "rocescope.cm.local_qpn",
    "rocescope.cm.remote_qpn",
    "rocescope.flor.addr.r_key",
    "rocescope.flor.addr.va",
    "rocescope.flor.ack.qpn",
    "rocescope.erd.nack.src_qpn",
    "rocescope.erd.nack.dst_qpn",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hex_display_field_is_an_unsigned_registry_field() {
        for n in HEX_DISPLAY {
            let id = FieldId::from_name(n).unwrap_or_else(|| panic!("{n} is not a registry field"));
            assert!(id.hex_digits().is_some(), "{n} is not an unsigned integer");
        }
        assert_eq!(FieldId::from_name("rocescope.bth.destqp").unwrap().hex_digits(), Some(6));
        assert_eq!(FieldId::from_name("rocescope.reth.va").unwrap().hex_digits(), Some(16));
        assert_eq!(FieldId::from_name("rocescope.bth.psn").unwrap().hex_digits(), None);
    }

    #[test]
    fn registry_is_in_id_order_with_unique_prefixed_names() {
        let mut names = std::collections::HashSet::new();
        for (i, f) in FIELDS.iter().enumerate() {
            assert_eq!(f.id as usize, i, "{}", f.name);
            assert!(f.name.starts_with("rocescope."), "{}", f.name);
            assert!(names.insert(f.name), "duplicate {}", f.name);
            assert_eq!(FieldId::from_name(f.name), Some(f.id));
            assert_eq!(f.ty == FieldType::Enum, !f.values.is_empty(), "{}", f.name);
        }
        assert_eq!(FieldId::from_name("rocescope.nope"), None);
    }
}
