//! What a fixed-layout header's declaration (`crate::layout`, WIRE.md A.2, A.3, B.1) becomes in
//! `ib`: `fixed_header!` turns it into the borrowed view (`new_checked`, one accessor per
//! field, `visit`: the field walk), the owned `Repr` (`parse`, `emit`) and the const layout table
//! ([`HeaderLayout`], `DethRepr::LAYOUT`) that tests and the Lua generator read.

use core::ops::Range;

use super::bytes::read;
use crate::field::FieldId;
use crate::warning::Layer;

/// Where one field of a fixed-layout header lies, as declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldLayout {
    /// The view's accessor (and the `Repr`'s field, when the `Repr` holds it).
    pub accessor: &'static str,
    /// The registry field the walk shows it as (`None`: not walked).
    pub field: Option<FieldId>,
    /// First byte, from the header's start.
    pub offset: usize,
    /// Bytes that hold it (big-endian).
    pub len: usize,
    /// Position of its least significant bit in those bytes (0 for whole bytes).
    pub shift: u32,
    /// Width in bits (`8 * len` for whole bytes).
    pub width: u32,
}

impl FieldLayout {
    /// The bytes that hold the field, from the header's start (its range in the walk).
    #[inline]
    pub const fn bytes(&self) -> Range<usize> {
        self.offset..self.offset + self.len
    }

    /// The field's value in `header` (at least `offset + len` bytes).
    #[inline]
    pub fn read(&self, header: &[u8]) -> u64 {
        read(&header[self.bytes()], self.shift, self.width)
    }

    /// The field takes only part of its bytes (a bit field).
    #[inline]
    pub const fn is_bits(&self) -> bool {
        self.width as usize != 8 * self.len
    }
}

/// A fixed-layout header's layout, as declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderLayout {
    /// The short name (`deth`; the Lua plugin's key).
    pub name: &'static str,
    /// Length in bytes.
    pub len: usize,
    /// The layer warnings about it name.
    pub layer: Layer,
    /// Its fields, in declaration order (the walk's order).
    pub fields: &'static [FieldLayout],
}

impl HeaderLayout {
    /// The field with this accessor (a compile-time error in a const context if there is none).
    pub const fn field(&self, accessor: &str) -> &FieldLayout {
        let mut i = 0;
        while i < self.fields.len() {
            if str_eq(self.fields[i].accessor, accessor) {
                return &self.fields[i];
            }
            i += 1;
        }
        panic!("no such field in this header")
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The declaration's rules (run at compile time for every header): each field lies in the
/// header, in at most 8 bytes, with at least one bit, and no two fields share a bit.
pub const fn check(h: &HeaderLayout) {
    let mut i = 0;
    while i < h.fields.len() {
        let f = &h.fields[i];
        assert!(f.len >= 1 && f.len <= 8, "a field spans 1 to 8 bytes");
        assert!(f.offset + f.len <= h.len, "a field lies outside its header");
        assert!(f.width >= 1 && f.shift + f.width <= 8 * f.len as u32, "a field's bits lie outside its bytes");
        let mut j = 0;
        while j < i {
            let (a, b) = (bit_span(f), bit_span(&h.fields[j]));
            assert!(a.1 <= b.0 || b.1 <= a.0, "two fields share a bit");
            j += 1;
        }
        i += 1;
    }
}

/// A field's bits counted from the header's first (most significant) bit: `[start, end)`.
const fn bit_span(f: &FieldLayout) -> (usize, usize) {
    let start = 8 * f.offset + 8 * f.len - (f.shift + f.width) as usize;
    (start, start + f.width as usize)
}

/// The field walk's value of a field of registry type `UInt(n)` or `Bool`.
macro_rules! value {
    (Bool; $v:expr) => {
        $crate::value::Value::Bool($v != 0)
    };
    (UInt($w:literal); $v:expr) => {
        $crate::value::Value::UInt($v)
    };
}
pub(crate) use value;

/// A field's registry type holds its width: `Bool` one bit, `UInt(n)` at most n.
macro_rules! type_fits {
    (Bool; $width:expr) => {
        assert!($width == 1, "a Bool field is one bit")
    };
    (UInt($w:literal); $width:expr) => {
        assert!($width <= $w, "a field is wider than its registry type")
    };
}
pub(crate) use type_fits;

/// `Some(FieldId::X)` for a field the walk shows, `None` for one it does not.
macro_rules! field_id {
    () => {
        None
    };
    ($id:ident) => {
        Some($crate::field::FieldId::$id)
    };
}
pub(crate) use field_id;

/// The view, the `Repr` and the layout table of a header declared in `crate::layout`
/// (`crate::layout::deth!(fixed_header)`):
///
/// - `View<T: AsRef<[u8]>>` (smoltcp's `wire` pattern): `LEN`, `new_unchecked`, a
///   length-checked `new_checked` whose error names the layer, one accessor per field, and
///   `visit`, the header's part of the field walk: one length check for the whole header, then
///   fixed-offset reads;
/// - `Repr`: the `pub` fields, `parse` from a view, `emit` (read-only fields written as zero),
///   `LEN` and `LAYOUT`.
macro_rules! fixed_header {
    (header {
        $(#[$m:meta])* view $view:ident repr $repr:ident name $name:literal len $len:literal layer $layer:ident
        fields [$({
            [$(#[$fm:meta])*] $f:ident : $ty:ident @ $off:literal .. $end:literal shift $shift:tt width $width:tt
            repr [$($(#[$rdoc:meta])* $rf:ident)?]
            reg [$($id:ident $rname:literal ($($rty:tt)+) $desc:literal)?]
        })*]
    }) => {
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

            $(
                $(#[$fm])*
                #[inline]
                pub fn $f(&self) -> $ty {
                    let raw = $crate::ib::bytes::read(&self.buffer.as_ref()[$off..$end], const { $shift }, const { $width });
                    <$ty as $crate::ib::bytes::FieldValue>::from_raw(raw)
                }
            )*

            /// The header's part of the field walk (`Frame::visit`): calls `f` with each field
            /// that has a registry entry, in declaration order, with its value and its bytes in
            /// the frame (the header starting at `at`). Nothing if the buffer is short.
            #[inline(always)]
            pub fn visit<'a>(
                &self,
                at: usize,
                f: &mut impl FnMut($crate::field::FieldId, $crate::value::Value<'a>, core::ops::Range<usize>),
            ) {
                let Some(b) = self.buffer.as_ref().first_chunk::<$len>() else { return };
                $($(
                    let raw = $crate::ib::bytes::read(&b[$off..$end], const { $shift }, const { $width });
                    f($crate::field::FieldId::$id, $crate::ib::fixed_header::value!($($rty)+; raw), at + $off..at + $end);
                )?)*
            }
        }

        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $repr {
            $($(
                $(#[$rdoc])*
                pub $rf: $ty,
            )?)*
        }

        impl $repr {
            /// Header length in bytes.
            pub const LEN: usize = $len;

            /// The header's layout, as declared.
            pub const LAYOUT: $crate::ib::fixed_header::HeaderLayout = $crate::ib::fixed_header::HeaderLayout {
                name: $name,
                len: $len,
                layer: $crate::warning::Layer::$layer,
                fields: &[$(
                    $crate::ib::fixed_header::FieldLayout {
                        accessor: stringify!($f),
                        field: $crate::ib::fixed_header::field_id!($($id)?),
                        offset: $off,
                        len: $end - $off,
                        shift: $shift,
                        width: $width,
                    },
                )*],
            };

            /// Reads the fields of a view.
            pub fn parse<T: AsRef<[u8]>>(view: &$view<T>) -> Self {
                Self { $($($rf: view.$rf(),)?)* }
            }

            /// Writes the header (read-only fields and reserved bits zero) into the first
            /// [`Self::LEN`] bytes of `buf`.
            pub fn emit(&self, buf: &mut [u8]) {
                let buf = &mut buf[..$len];
                buf.fill(0);
                $($(
                    let raw = $crate::ib::bytes::FieldValue::to_raw(self.$rf);
                    $crate::ib::bytes::put_bits(&mut buf[$off..$end], $shift, $width, raw);
                )?)*
            }
        }

        const _: () = {
            $crate::ib::fixed_header::check(&$repr::LAYOUT);
            $(
                assert!($width <= <$ty as $crate::ib::bytes::FieldValue>::BITS, "a field is wider than its Rust type");
                $($crate::ib::fixed_header::type_fits!($($rty)+; $width);)?
            )*
        };
    };
}
pub(crate) use fixed_header;

#[cfg(test)]
mod tests {
    #[test]
    fn every_walked_field_is_in_the_registry_with_its_header_prefix() {
        for h in crate::ib::layouts() {
            for f in h.fields {
                let Some(id) = f.field else { continue };
                let def = id.def();
                assert!(def.name.starts_with("rocescope."), "{}", def.name);
                assert!(!def.repeated, "{}", def.name);
                assert_eq!(h.field(f.accessor), f);
            }
        }
        assert_eq!(crate::ib::BthRepr::LAYOUT.field("psn").bytes(), 9..12);
        assert_eq!(crate::ib::FethRepr::LAYOUT.field("sel").read(&[0, 0, 0, 0x3a]), 3);
    }
}
