//! Big-endian field access shared by the header views: whole bytes ([`get`], [`put`]) and bit
//! fields within them ([`read`], [`put_bits`]), and the types a field reads as ([`FieldValue`]).

/// Reads up to 8 bytes as a big-endian unsigned integer. The usual widths are spelt out as
/// whole-word loads (a field's width is a constant where this is inlined, so only one arm
/// remains), which the byte loop alone does not always become.
#[inline(always)]
pub fn get(b: &[u8]) -> u64 {
    match *b {
        [x] => x as u64,
        [x, y] => u16::from_be_bytes([x, y]) as u64,
        [x, y, z] => u32::from_be_bytes([0, x, y, z]) as u64,
        [x, y, z, w] => u32::from_be_bytes([x, y, z, w]) as u64,
        [a, b, c, d, e, f, g, h] => u64::from_be_bytes([a, b, c, d, e, f, g, h]),
        _ => {
            let mut v = 0u64;
            for &x in b {
                v = (v << 8) | x as u64;
            }
            v
        }
    }
}

/// Writes the low `b.len()` bytes of `v` big-endian.
#[inline(always)]
pub fn put(b: &mut [u8], mut v: u64) {
    for x in b.iter_mut().rev() {
        *x = v as u8;
        v >>= 8;
    }
}

/// The low `width` bits set.
#[inline(always)]
pub const fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}

/// Reads the `width`-bit field whose least significant bit is bit `shift` of the big-endian
/// integer `b` holds.
#[inline(always)]
pub fn read(b: &[u8], shift: u32, width: u32) -> u64 {
    (get(b) >> shift) & mask(width)
}

/// Writes `v` (its low `width` bits) into the field [`read`] reads, leaving the other bits of `b`.
#[inline]
pub fn put_bits(b: &mut [u8], shift: u32, width: u32, v: u64) {
    let m = mask(width) << shift;
    put(b, (get(b) & !m) | ((v << shift) & m));
}

/// A type a header field reads as: the view's accessor returns it and the `Repr` holds it.
pub trait FieldValue: Copy {
    /// Bits the type holds (a declared field may not be wider).
    const BITS: u32;
    /// The value of the field's bits.
    fn from_raw(raw: u64) -> Self;
    /// The bits to write.
    fn to_raw(self) -> u64;
}

macro_rules! uint_field_value {
    ($($t:ty),*) => {$(
        impl FieldValue for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn from_raw(raw: u64) -> Self {
                raw as $t
            }
            #[inline(always)]
            fn to_raw(self) -> u64 {
                self as u64
            }
        }
    )*};
}
uint_field_value!(u8, u16, u32, u64);

impl FieldValue for bool {
    const BITS: u32 = 1;
    #[inline(always)]
    fn from_raw(raw: u64) -> Self {
        raw != 0
    }
    #[inline(always)]
    fn to_raw(self) -> u64 {
        self as u64
    }
}

/// A header that does not fit in the bytes given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Short {
    pub layer: crate::warning::Layer,
    pub need: usize,
    pub have: usize,
}

impl From<Short> for crate::warning::Warning {
    fn from(s: Short) -> Self {
        crate::warning::Warning::Truncated {
            layer: s.layer,
            need: s.need.min(u16::MAX as usize) as u16,
            have: s.have.min(u16::MAX as usize) as u16,
        }
    }
}
