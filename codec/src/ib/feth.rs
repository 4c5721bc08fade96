//! FLUSH Extended Transport Header (IBTA 1.5; WIRE.md A.3): reserved 26 · selectivity level 2 ·
//! placement type 4 (the low six bits of the last byte: `sel` in bits 5..4, `plt` in 3..0).

super::bytes::header_view!(
    /// A view over the FETH.
    Feth, len 4, Feth
);

impl<T: AsRef<[u8]>> Feth<T> {
    /// Selectivity level (2 bits).
    #[inline]
    pub fn sel(&self) -> u8 {
        (self.buffer.as_ref()[3] >> 4) & 3
    }
    /// Placement type (4 bits).
    #[inline]
    pub fn plt(&self) -> u8 {
        self.buffer.as_ref()[3] & 0x0f
    }
}

/// An owned FETH.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FethRepr {
    pub sel: u8,
    pub plt: u8,
}

impl FethRepr {
    pub const LEN: usize = 4;

    pub fn parse<T: AsRef<[u8]>>(v: &Feth<T>) -> Self {
        FethRepr { sel: v.sel(), plt: v.plt() }
    }
    pub fn emit(&self, buf: &mut [u8]) {
        buf[..3].fill(0);
        buf[3] = (self.sel & 3) << 4 | (self.plt & 0x0f);
    }
}
