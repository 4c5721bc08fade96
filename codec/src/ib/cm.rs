//! Connection Manager MADs (WIRE.md A.6; IBTA Vol. 1 §12.6), carried as the whole payload of a
//! UD SEND Only to QP1: a 24-byte common MAD header (management class 0x07 for CM) and the CM
//! message. Offsets below are from the start of the MAD.

use super::bytes::get;

/// Management class of the Communication Manager.
pub const MGMT_CLASS_CM: u8 = 0x07;
/// The packets that carry CM MADs: UD SEND Only to QP1.
pub const OPCODE: u8 = 0x64;
pub const QP: u32 = 1;
/// Offset of the MAD's management class.
pub const MGMT_CLASS: usize = 1;
/// Offset of the MAD's AttributeID, and its length.
pub const ATTR_ID: usize = 16;
pub const ATTR_ID_LEN: usize = 2;
/// A CM message starts after the common MAD header.
pub const DATA: usize = 24;
/// Byte ranges (in the MAD) of the communication ids every message starts with.
pub const LOCAL_COMM_ID: core::ops::Range<usize> = DATA..DATA + 4;
pub const REMOTE_COMM_ID: core::ops::Range<usize> = DATA + 4..DATA + 8;
/// Length of the 24-bit QPN and PSN fields.
pub const U24_LEN: usize = 3;

/// The CM messages decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmMsg {
    Req,
    Mra,
    Rej,
    Rep,
    Rtu,
    Dreq,
    Drep,
}

impl CmMsg {
    /// The MAD AttributeID of the message.
    pub fn attribute_id(self) -> u16 {
        match self {
            CmMsg::Req => 0x0010,
            CmMsg::Mra => 0x0011,
            CmMsg::Rej => 0x0012,
            CmMsg::Rep => 0x0013,
            CmMsg::Rtu => 0x0014,
            CmMsg::Dreq => 0x0015,
            CmMsg::Drep => 0x0016,
        }
    }
    pub fn from_attribute_id(id: u16) -> Option<CmMsg> {
        Some(match id {
            0x0010 => CmMsg::Req,
            0x0011 => CmMsg::Mra,
            0x0012 => CmMsg::Rej,
            0x0013 => CmMsg::Rep,
            0x0014 => CmMsg::Rtu,
            0x0015 => CmMsg::Dreq,
            0x0016 => CmMsg::Drep,
            _ => return None,
        })
    }
    /// The `rocescope.cm.msg` name.
    pub fn name(self) -> &'static str {
        match self {
            CmMsg::Req => "req",
            CmMsg::Mra => "mra",
            CmMsg::Rej => "rej",
            CmMsg::Rep => "rep",
            CmMsg::Rtu => "rtu",
            CmMsg::Dreq => "dreq",
            CmMsg::Drep => "drep",
        }
    }

    /// Byte offset (in the MAD) of the 24-bit fields this message carries.
    pub fn local_qpn_at(self) -> Option<usize> {
        match self {
            CmMsg::Req => Some(56),
            CmMsg::Rep => Some(36),
            _ => None,
        }
    }
    pub fn start_psn_at(self) -> Option<usize> {
        match self {
            CmMsg::Req => Some(68),
            CmMsg::Rep => Some(44),
            _ => None,
        }
    }
    pub fn remote_qpn_at(self) -> Option<usize> {
        match self {
            CmMsg::Dreq => Some(32),
            _ => None,
        }
    }
    /// Every CM message but REQ names the peer's communication id after its own.
    pub fn has_remote_comm_id(self) -> bool {
        self != CmMsg::Req
    }
    /// The bytes of a MAD this message needs: up to its last decoded field, at least the
    /// communication ids (and what follows them up to `DATA + 12`).
    pub fn needed_len(self) -> usize {
        self.start_psn_at().map_or(DATA + 12, |o| o + U24_LEN).max(self.local_qpn_at().map_or(0, |o| o + U24_LEN))
    }
}

/// A view over a CM MAD.
#[derive(Clone, Copy, Debug)]
pub struct CmMad<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> CmMad<T> {
    /// The shortest MAD this view decodes: common header plus the fields read from a REQ.
    pub const MIN_LEN: usize = 72;

    /// Wraps a UD payload if it is a CM MAD of a known message.
    pub fn new_checked(buffer: T) -> Result<Self, CmError> {
        let b = buffer.as_ref();
        if b.len() < DATA {
            return Err(CmError::Short(b.len()));
        }
        if b[MGMT_CLASS] != MGMT_CLASS_CM {
            return Err(CmError::NotCm);
        }
        let attr = get(&b[ATTR_ID..ATTR_ID + ATTR_ID_LEN]) as u16;
        let msg = CmMsg::from_attribute_id(attr).ok_or(CmError::Attribute(attr))?;
        if b.len() < msg.needed_len() {
            return Err(CmError::Short(b.len()));
        }
        Ok(CmMad { buffer })
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    pub fn attribute_id(&self) -> u16 {
        get(&self.b()[ATTR_ID..ATTR_ID + ATTR_ID_LEN]) as u16
    }
    pub fn msg(&self) -> CmMsg {
        CmMsg::from_attribute_id(self.attribute_id()).expect("checked in new_checked")
    }
    pub fn local_comm_id(&self) -> u32 {
        get(&self.b()[DATA..DATA + 4]) as u32
    }
    pub fn remote_comm_id(&self) -> Option<u32> {
        self.msg().has_remote_comm_id().then(|| get(&self.b()[DATA + 4..DATA + 8]) as u32)
    }
    pub fn local_qpn(&self) -> Option<u32> {
        self.msg().local_qpn_at().map(|o| get(&self.b()[o..o + 3]) as u32)
    }
    pub fn remote_qpn(&self) -> Option<u32> {
        self.msg().remote_qpn_at().map(|o| get(&self.b()[o..o + 3]) as u32)
    }
    pub fn start_psn(&self) -> Option<u32> {
        self.msg().start_psn_at().map(|o| get(&self.b()[o..o + 3]) as u32)
    }
    /// Byte ranges (in the MAD) of the decoded fields, for hex highlighting.
    pub fn local_qpn_range(&self) -> Option<core::ops::Range<usize>> {
        self.msg().local_qpn_at().map(|o| o..o + 3)
    }
    pub fn remote_qpn_range(&self) -> Option<core::ops::Range<usize>> {
        self.msg().remote_qpn_at().map(|o| o..o + 3)
    }
    pub fn start_psn_range(&self) -> Option<core::ops::Range<usize>> {
        self.msg().start_psn_at().map(|o| o..o + 3)
    }
}

/// Why a UD payload on QP1 was not decoded as a CM message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmError {
    /// Shorter than the fields of its message.
    Short(usize),
    /// Another management class (SA, PerfMgt, …): not a problem, just not CM.
    NotCm,
    /// A CM attribute this decoder does not read (SIDR, LAP, APR, ClassPortInfo).
    Attribute(u16),
}

/// An owned CM message, for building test and simulator packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CmRepr {
    pub msg: CmMsg,
    pub transaction_id: u64,
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    /// REQ, REP: the sender's QPN; DREQ: the peer's QPN. Ignored by the others.
    pub qpn: u32,
    /// REQ, REP: the starting PSN.
    pub start_psn: u32,
}

impl CmRepr {
    /// A MAD is always 256 bytes.
    pub const LEN: usize = 256;

    /// Writes the 256-byte MAD.
    pub fn emit(&self, buf: &mut [u8]) {
        use super::bytes::put;
        let b = &mut buf[..Self::LEN];
        b.fill(0);
        b[0] = 1; // BaseVersion
        b[1] = MGMT_CLASS_CM;
        b[2] = 2; // ClassVersion
        b[3] = 0x03; // Method: Send
        put(&mut b[8..16], self.transaction_id);
        put(&mut b[ATTR_ID..ATTR_ID + 2], self.msg.attribute_id() as u64);
        put(&mut b[DATA..DATA + 4], self.local_comm_id as u64);
        if self.msg.has_remote_comm_id() {
            put(&mut b[DATA + 4..DATA + 8], self.remote_comm_id as u64);
        }
        if let Some(o) = self.msg.local_qpn_at().or(self.msg.remote_qpn_at()) {
            put(&mut b[o..o + 3], self.qpn as u64);
        }
        if let Some(o) = self.msg.start_psn_at() {
            put(&mut b[o..o + 3], self.start_psn as u64);
        }
        if self.msg == CmMsg::Req {
            // Transport service type RC (0) and a plausible path MTU 1024 (3) at offset 72..74.
            b[74] = 0x30;
        }
    }
}
