//! Base Transport Header (WIRE.md A.2), 12 bytes: the view and `Repr` from its declaration
//! (`crate::layout::bth`), and PSN arithmetic.

use super::fixed_header::fixed_header;

crate::layout::bth!(fixed_header);

impl<T: AsRef<[u8]>> Bth<T> {
    /// Byte 4 as a whole (FECN, BECN and the six reserved bits; NetRT's mark is bit 0).
    #[inline]
    pub fn byte4(&self) -> u8 {
        self.buffer.as_ref()[const { BthRepr::LAYOUT.field("fecn").offset }]
    }
}

/// PSN arithmetic modulo 2^24 (WIRE.md A.2).
pub mod psn {
    pub const MASK: u32 = 0x00ff_ffff;

    /// `a + n` modulo 2^24.
    #[inline]
    pub fn add(a: u32, n: u32) -> u32 {
        a.wrapping_add(n) & MASK
    }

    /// Signed distance `b - a` in serial-number arithmetic (range -2^23 .. 2^23).
    #[inline]
    pub fn diff(a: u32, b: u32) -> i32 {
        ((b.wrapping_sub(a) << 8) as i32) >> 8
    }

    /// `a` precedes `b` in serial-number order.
    #[inline]
    pub fn lt(a: u32, b: u32) -> bool {
        diff(a, b) > 0
    }
}
