//! Big-endian field access shared by the header views.

/// Reads up to 8 bytes as a big-endian unsigned integer.
#[inline(always)]
pub fn get(b: &[u8]) -> u64 {
    let mut v = 0u64;
    for &x in b {
        v = (v << 8) | x as u64;
    }
    v
}

/// Writes the low `b.len()` bytes of `v` big-endian.
#[inline(always)]
pub fn put(b: &mut [u8], mut v: u64) {
    for x in b.iter_mut().rev() {
        *x = v as u8;
        v >>= 8;
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

/// A smoltcp-style view over a fixed-length header: the struct, `LEN`, `new_unchecked` and a
/// length-checked `new_checked` whose error names the layer. Accessors go in the header's own
/// `impl` block (or come from [`fixed_header!`]).
macro_rules! header_view {
    ($(#[$m:meta])* $view:ident, len $len:expr, $layer:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug)]
        pub struct $view<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> $view<T> {
            /// Header length in bytes.
            pub const LEN: usize = $len;

            /// Wraps a buffer without checking its length (accessors may then panic).
            #[inline]
            pub fn new_unchecked(buffer: T) -> Self {
                Self { buffer }
            }

            /// Wraps a buffer holding at least [`Self::LEN`] bytes.
            #[inline]
            pub fn new_checked(buffer: T) -> Result<Self, $crate::ib::bytes::Short> {
                let have = buffer.as_ref().len();
                if have < $len {
                    Err($crate::ib::bytes::Short { layer: $crate::warning::Layer::$layer, need: $len, have })
                } else {
                    Ok(Self { buffer })
                }
            }
        }
    };
}
pub(crate) use header_view;

/// Declares a fixed-size header made of whole-byte big-endian fields: a borrowed view with
/// checked construction and accessors (`$view<T: AsRef<[u8]>>`) and a plain `Repr` that parses
/// from the view and emits into a buffer (smoltcp's `wire` pattern).
macro_rules! fixed_header {
    (
        $(#[$m:meta])* $view:ident / $repr:ident, len $len:literal, $layer:ident {
            $( $(#[$fm:meta])* $f:ident : $ty:ty = $off:literal .. $end:literal ),* $(,)?
        }
    ) => {
        $crate::ib::bytes::header_view!($(#[$m])* $view, len $len, $layer);

        impl<T: AsRef<[u8]>> $view<T> {
            $(
                $(#[$fm])*
                #[inline]
                pub fn $f(&self) -> $ty {
                    $crate::ib::bytes::get(&self.buffer.as_ref()[$off..$end]) as $ty
                }
            )*
        }

        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $repr {
            $( $(#[$fm])* pub $f: $ty ),*
        }

        impl $repr {
            /// Header length in bytes.
            pub const LEN: usize = $len;

            /// Reads every field of a view.
            pub fn parse<T: AsRef<[u8]>>(view: &$view<T>) -> Self {
                Self { $( $f: view.$f() ),* }
            }

            /// Writes the header (reserved bits zero) into the first [`Self::LEN`] bytes of `buf`.
            pub fn emit(&self, buf: &mut [u8]) {
                buf[..$len].fill(0);
                $( $crate::ib::bytes::put(&mut buf[$off..$end], self.$f as u64); )*
            }
        }
    };
}
pub(crate) use fixed_header;
