//! The field registry (INTERFACES.md, "One field vocabulary").
//!
//! Every decoded field has exactly one definition here: its dotted name (used verbatim as the
//! JSON key, the `-e` name, the Wireshark `ProtoField` abbreviation and the browser's label key),
//! its type and a one-line description. Everything that prints or lists fields reads this table;
//! nothing else spells a field name.

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

macro_rules! registry {
    ($( $id:ident = $name:literal, $ty:expr, $desc:literal $(, values = $vals:expr)? $(, repeated = $rep:expr)? ; )*) => {
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
}

use FieldType::*;

/// Profile names (`rocescope.profile`).
pub const PROFILE_VALUES: &[&str] = &["std", "dcp", "sdr", "flor", "netrt", "erd"];
/// AETH kinds (`rocescope.aeth.kind`).
pub const AETH_KIND_VALUES: &[&str] = &["ack", "rnr_nak", "nak", "reserved"];
/// ICRC verdicts (`rocescope.icrc.status`).
pub const ICRC_STATUS_VALUES: &[&str] = &["good", "bad", "absent", "truncated"];
/// CM message kinds (`rocescope.cm.msg`).
pub const CM_MSG_VALUES: &[&str] = &["req", "rep", "rtu", "dreq", "drep", "rej", "mra"];

registry! {
    Profile = "rocescope.profile", Enum, "Transport profile the packet was decoded with", values = PROFILE_VALUES;
    Truncated = "rocescope.truncated", Bool, "The capture holds fewer bytes than the packet's headers describe";
    OpcodeName = "rocescope.opcode_name", Text, "Transport and operation named by the BTH OpCode";
    PayloadLen = "rocescope.payload_len", UInt(32), "Payload bytes between the last header and the pad";
    Warning = "rocescope.warning", Text, "One problem found while decoding", repeated = true;

    BthOpcode = "rocescope.bth.opcode", UInt(8), "BTH OpCode";
    BthSe = "rocescope.bth.se", Bool, "BTH Solicited Event";
    BthM = "rocescope.bth.m", Bool, "BTH MigReq";
    BthPadcnt = "rocescope.bth.padcnt", UInt(8), "BTH Pad Count";
    BthTver = "rocescope.bth.tver", UInt(8), "BTH Transport Header Version";
    BthPKey = "rocescope.bth.p_key", UInt(16), "BTH Partition Key";
    BthFecn = "rocescope.bth.fecn", Bool, "BTH Forward ECN (reserved in RoCEv2)";
    BthBecn = "rocescope.bth.becn", Bool, "BTH Backward ECN";
    BthDestqp = "rocescope.bth.destqp", UInt(24), "BTH Destination QP";
    BthA = "rocescope.bth.a", Bool, "BTH Acknowledge Request";
    BthPsn = "rocescope.bth.psn", UInt(24), "BTH Packet Sequence Number";

    RdethEecnxt = "rocescope.rdeth.eecnxt", UInt(24), "RDETH EE-Context";
    DethQKey = "rocescope.deth.q_key", UInt(32), "DETH Queue Key";
    DethSrcqp = "rocescope.deth.srcqp", UInt(24), "DETH Source QP";
    XrcethXrcsrq = "rocescope.xrceth.xrcsrq", UInt(24), "XRCETH XRC Shared Receive Queue";
    RethVa = "rocescope.reth.va", UInt(64), "RETH Virtual Address";
    RethRKey = "rocescope.reth.r_key", UInt(32), "RETH Remote Key";
    RethDmalen = "rocescope.reth.dmalen", UInt(32), "RETH DMA Length";
    AtomicethVa = "rocescope.atomiceth.va", UInt(64), "AtomicETH Virtual Address";
    AtomicethRKey = "rocescope.atomiceth.r_key", UInt(32), "AtomicETH Remote Key";
    AtomicethSwapdt = "rocescope.atomiceth.swapdt", UInt(64), "AtomicETH Swap (or Add) Data";
    AtomicethCmpdt = "rocescope.atomiceth.cmpdt", UInt(64), "AtomicETH Compare Data";
    AethSyndrome = "rocescope.aeth.syndrome", UInt(8), "AETH Syndrome byte";
    AethMsn = "rocescope.aeth.msn", UInt(24), "AETH Message Sequence Number";
    AethKind = "rocescope.aeth.kind", Enum, "AETH syndrome kind", values = AETH_KIND_VALUES;
    AethCredit = "rocescope.aeth.credit", UInt(8), "AETH ACK credit count (31: invalid)";
    AethRnrTimer = "rocescope.aeth.rnr_timer", UInt(8), "AETH RNR NAK timer code";
    AethNakCode = "rocescope.aeth.nak_code", UInt(8), "AETH NAK code (0 PSN sequence error, 1 invalid request, 2 remote access, 3 remote operational, 4 invalid RD request)";
    IrnSackPsn = "rocescope.irn.sack_psn", UInt(24), "IRN selective NAK: PSN of the out-of-order packet that triggered it";
    AtomicackethOrigremdt = "rocescope.atomicacketh.origremdt", UInt(64), "AtomicAckETH Original Remote Data";
    Immdt = "rocescope.immdt", UInt(32), "Immediate Data";
    IethRKey = "rocescope.ieth.r_key", UInt(32), "IETH Remote Key to invalidate";
    FethSel = "rocescope.feth.sel", UInt(8), "FETH selectivity level";
    FethPlt = "rocescope.feth.plt", UInt(8), "FETH placement type";
    Icrc = "rocescope.icrc", Bytes, "Invariant CRC as it appears on the wire";
    IcrcStatus = "rocescope.icrc.status", Enum, "ICRC verdict", values = ICRC_STATUS_VALUES;

    CmMsg = "rocescope.cm.msg", Enum, "Connection Manager message", values = CM_MSG_VALUES;
    CmLocalQpn = "rocescope.cm.local_qpn", UInt(24), "CM sender's QPN";
    CmRemoteQpn = "rocescope.cm.remote_qpn", UInt(24), "CM peer's QPN (DREQ)";
    CmStartPsn = "rocescope.cm.start_psn", UInt(24), "CM starting PSN of the sender's send queue";
    CmLocalCommId = "rocescope.cm.local_comm_id", UInt(32), "CM sender's communication id";
    CmRemoteCommId = "rocescope.cm.remote_comm_id", UInt(32), "CM peer's communication id";

    PfcClassEnable = "rocescope.pfc.class_enable", UInt(16), "PFC class-enable vector";
    PfcQuanta = "rocescope.pfc.quanta", UInt(16), "Pause time per class in quanta (one value for 802.3x PAUSE)", repeated = true;
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
