//! One declaration per fixed-layout header: native InfiniBand's LRH (docs/link-types.md), the
//! BTH (WIRE.md A.2), the IBTA extension headers and IRN's SACK tail (A.3), DCP's DCPETH and
//! SSNETH (B.1). Each header's byte and bit layout is written once, in its file here, and
//! everything else is generated from that declaration:
//!
//! - the borrowed view's accessors and the `Repr` (fields, `parse`, `emit`), in `crate::ib`
//!   (`ib::fixed_header!`);
//! - the header's fields in the field registry (`crate::field`: the registry lists
//!   `@header deth;` where the DETH's entries go);
//! - the field walk: each view's `visit` (registry id, value and byte range of every field, in
//!   declaration order), which `Frame::visit` and the extensions call;
//! - the const layout table of each header (`crate::ib::HeaderLayout`, `DethRepr::LAYOUT`),
//!   which the Lua generator writes into the Wireshark plugin, whose hand-written part reads
//!   header fields through it.
//!
//! So **adding a field to a fixed-layout header is one line in its declaration** (plus its
//! test): the accessor, the `Repr` field (for a `pub` line), the registry entry, the walk, the
//! Wireshark field and the browser's field follow. (Derived values, such as the AETH syndrome's
//! kind, stay hand-written beside the view: `ib/aeth.rs`.)
//!
//! This module depends on nothing: a declaration is a `macro_rules!` that hands its header,
//! normalised by `header!`, to the macro it is given (`crate::layout::deth!(consumer args…)`
//! calls `consumer! { args… header { … } }`).
//!
//! # A declaration
//!
//! ```text
//! macro_rules! deth {
//!     ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
//!         /// DETH (Datagram ETH, WIRE.md A.3): Q_Key 32 · reserved 8 · SrcQP 24.
//!         Deth / DethRepr, "deth", len 8, layer Deth {
//!             pub q_key:  u32 @ 0..4 => DethQKey = "rocescope.deth.q_key", UInt(32), "DETH Queue Key";
//!             pub src_qp: u32 @ 5..8 => DethSrcqp = "rocescope.deth.srcqp", UInt(24), "DETH Source QP";
//!         }
//!     } };
//! }
//! ```
//!
//! The head names the view (`Deth<T>`), the `Repr`, the header's short name (the Lua plugin's
//! key, as the registry spells the header), its length in bytes and its `warning::Layer`. Each
//! field line is
//!
//! `[pub] accessor: Type @ FIRST..END [bits HI..LO | bits B] [=> RegistryId = "name", Type, "description"];`
//!
//! - `@ FIRST..END`: the bytes that hold the field, big-endian, counted from the header's start;
//!   `bits HI..LO` (or `bits B` for one bit) when it is part of them, bit 0 being the least
//!   significant bit of those bytes (WIRE.md's "bits 5..4" of a byte).
//! - `pub`: the field is also a field of the `Repr`, parsed and emitted. Without it the field
//!   is read-only: the view reads it and the walk shows it, and `emit` writes it as zero (a
//!   reserved field).
//! - `=> …`: the field's registry entry (its [`crate::field::FieldId`] variant, dotted name,
//!   `FieldType` (`UInt(n)` or `Bool`) and description). Without it the field is not walked
//!   (the BTH's six reserved bits of byte 4 are kept in the `Repr` only).
//! - `Type`: `u8`, `u16`, `u32`, `u64`, `bool` or a type implementing
//!   `ib::bytes::FieldValue` (the AETH's `Syndrome`).
//!
//! Compile-time checks reject a field outside its header, two fields sharing a bit, and a field
//! wider than its type.

mod aeth;
mod atomic_ack_eth;
mod atomic_eth;
mod bth;
mod dcpeth;
mod deth;
mod feth;
mod ieth;
mod immdt;
mod irn_sack;
mod lrh;
mod rdeth;
mod reth;
mod sseth;
mod xrceth;

pub(crate) use aeth::aeth;
pub(crate) use atomic_ack_eth::atomic_ack_eth;
pub(crate) use atomic_eth::atomic_eth;
pub(crate) use bth::bth;
pub(crate) use dcpeth::dcpeth;
pub(crate) use deth::deth;
pub(crate) use feth::feth;
pub(crate) use ieth::ieth;
pub(crate) use immdt::immdt;
pub(crate) use irn_sack::irn_sack;
pub(crate) use lrh::lrh;
pub(crate) use rdeth::rdeth;
pub(crate) use reth::reth;
pub(crate) use sseth::sseth;
pub(crate) use xrceth::xrceth;

/// Normalises a declaration and hands it to the consumer named first (`[consumer args…]`) as
/// `consumer! { args… header { HEAD fields [ { FIELD } … ] } }`, where each field reads
///
/// ```text
/// [#[doc]…] accessor: Type @ FIRST..END shift (EXPR) width (EXPR)
///     repr [#[doc]… accessor]   (empty for a read-only field)
///     reg [Id "name" (Type) "description"]   (empty for a field not walked)
/// ```
macro_rules! header {
    // A `pub` field: the view's and the Repr's.
    (@field $then:tt $head:tt [$($done:tt)*]
        $(#[$fm:meta])* pub $f:ident : $ty:ident @ $off:literal .. $end:literal $(bits $hi:literal $(.. $lo:literal)?)?
        $(=> $id:ident = $name:literal, $rty:ident $(($w:literal))?, $desc:literal)? ;
        $($rest:tt)*
    ) => {
        $crate::layout::header! { @field $then $head [$($done)* {
            [$(#[$fm])*] $f: $ty @ $off..$end
            shift ($crate::layout::shift(&[$($hi $(, $lo)?)?]))
            width ($crate::layout::width($end - $off, &[$($hi $(, $lo)?)?]))
            repr [$(#[$fm])* $f]
            reg [$($id $name ($rty $(($w))?) $desc)?]
        }] $($rest)* }
    };
    // A read-only field: the view's only.
    (@field $then:tt $head:tt [$($done:tt)*]
        $(#[$fm:meta])* $f:ident : $ty:ident @ $off:literal .. $end:literal $(bits $hi:literal $(.. $lo:literal)?)?
        $(=> $id:ident = $name:literal, $rty:ident $(($w:literal))?, $desc:literal)? ;
        $($rest:tt)*
    ) => {
        $crate::layout::header! { @field $then $head [$($done)* {
            [$(#[$fm])*] $f: $ty @ $off..$end
            shift ($crate::layout::shift(&[$($hi $(, $lo)?)?]))
            width ($crate::layout::width($end - $off, &[$($hi $(, $lo)?)?]))
            repr []
            reg [$($id $name ($rty $(($w))?) $desc)?]
        }] $($rest)* }
    };
    // Every field read: the consumer's turn.
    (@field [$cb:ident $($args:tt)*] [$($head:tt)*] [$($done:tt)*]) => {
        $cb! { $($args)* header { $($head)* fields [$($done)*] } }
    };
    (
        [$($then:tt)*]
        $(#[$m:meta])*
        $view:ident / $repr:ident, $name:literal, len $len:literal, layer $layer:ident {
            $($fields:tt)*
        }
    ) => {
        $crate::layout::header! { @field [$($then)*]
            [$(#[$m])* view $view repr $repr name $name len $len layer $layer]
            []
            $($fields)*
        }
    };
}
pub(crate) use header;

/// The position of a field's least significant bit in its bytes: `bits HI..LO` → LO,
/// `bits B` → B, whole bytes (`[]`) → 0.
pub const fn shift(bits: &[u32]) -> u32 {
    match bits {
        [] => 0,
        [b] => *b,
        [_, lo] => *lo,
        _ => panic!("bits HI..LO or bits B"),
    }
}

/// A field's width in bits: `bits HI..LO` → HI − LO + 1, `bits B` → 1, whole bytes → 8 per
/// byte.
pub const fn width(bytes: usize, bits: &[u32]) -> u32 {
    match bits {
        [] => 8 * bytes as u32,
        [_] => 1,
        [hi, lo] => {
            let (hi, lo) = (*hi, *lo);
            assert!(hi >= lo, "bits HI..LO counts down");
            hi - lo + 1
        }
        _ => panic!("bits HI..LO or bits B"),
    }
}
