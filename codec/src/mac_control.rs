//! MAC control frames (WIRE.md A.6): EtherType 0x8808 with opcode 0x0001 (802.3x PAUSE: one
//! pause time) or 0x0101 (802.1Qbb PFC: class-enable vector and eight pause times).

use crate::ib::bytes::{get, put};

pub const ETHERTYPE: u16 = 0x8808;
pub const OPCODE_PAUSE: u16 = 0x0001;
pub const OPCODE_PFC: u16 = 0x0101;
/// Byte ranges after the EtherType: the opcode, PFC's class-enable vector; each pause time is
/// `QUANTA_LEN` bytes at [`MacControl::quanta_offset`].
pub const OPCODE: core::ops::Range<usize> = 0..2;
pub const CLASS_ENABLE: core::ops::Range<usize> = 2..4;
pub const QUANTA_LEN: usize = 2;

/// A view over a MAC control frame's payload (after the EtherType).
#[derive(Clone, Copy, Debug)]
pub struct MacControl<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> MacControl<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        MacControl { buffer }
    }
    pub fn opcode(&self) -> Option<u16> {
        self.buffer.as_ref().get(OPCODE).map(|b| get(b) as u16)
    }
    /// Bytes this frame's opcode needs (None for an opcode not decoded).
    pub fn needed_len(&self) -> Option<usize> {
        match self.opcode()? {
            OPCODE_PAUSE => Some(4),
            OPCODE_PFC => Some(20),
            _ => None,
        }
    }
    /// Every byte the opcode needs was captured (a snaplen may cut the pause times).
    pub fn is_complete(&self) -> bool {
        self.needed_len().is_some_and(|n| self.buffer.as_ref().len() >= n)
    }
    /// PFC class-enable vector.
    pub fn class_enable(&self) -> Option<u16> {
        (self.opcode()? == OPCODE_PFC).then(|| get(&self.buffer.as_ref()[CLASS_ENABLE]) as u16)
    }
    /// Number of pause times (1 for PAUSE, 8 for PFC).
    pub fn quanta_count(&self) -> usize {
        match self.opcode() {
            Some(OPCODE_PAUSE) => 1,
            Some(OPCODE_PFC) => 8,
            _ => 0,
        }
    }
    /// Offset of pause time `i` in the payload.
    pub fn quanta_offset(&self, i: usize) -> usize {
        if self.opcode() == Some(OPCODE_PFC) {
            4 + 2 * i
        } else {
            2
        }
    }
    pub fn quanta(&self, i: usize) -> u16 {
        let o = self.quanta_offset(i);
        get(&self.buffer.as_ref()[o..o + QUANTA_LEN]) as u16
    }
}

/// An owned PAUSE or PFC frame payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacControlRepr {
    Pause { quanta: u16 },
    Pfc { class_enable: u16, quanta: [u16; 8] },
}

impl MacControlRepr {
    /// Payload length after the EtherType (padded to the Ethernet minimum by the frame builder).
    pub fn len(&self) -> usize {
        match self {
            MacControlRepr::Pause { .. } => 4,
            MacControlRepr::Pfc { .. } => 20,
        }
    }
    pub fn is_empty(&self) -> bool {
        false
    }
    pub fn emit(&self, buf: &mut [u8]) {
        match *self {
            MacControlRepr::Pause { quanta } => {
                put(&mut buf[0..2], OPCODE_PAUSE as u64);
                put(&mut buf[2..4], quanta as u64);
            }
            MacControlRepr::Pfc { class_enable, quanta } => {
                put(&mut buf[0..2], OPCODE_PFC as u64);
                put(&mut buf[2..4], class_enable as u64);
                for (i, q) in quanta.iter().enumerate() {
                    put(&mut buf[4 + 2 * i..6 + 2 * i], *q as u64);
                }
            }
        }
    }
}
