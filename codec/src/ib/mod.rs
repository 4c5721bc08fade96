//! InfiniBand transport headers as carried by RoCE (WIRE.md part A): the fixed-layout headers'
//! views and `Repr`s, made from their declarations in `crate::layout` (`fixed_header.rs`; the
//! BTH with PSN arithmetic in `bth.rs`, the AETH with its typed syndrome in `aeth.rs`, the
//! others in `ext_headers.rs`; native InfiniBand's LRH there too), the opcode table, the packet
//! layout, the ICRC, native InfiniBand's VCRC (`vcrc.rs`) and the CM MADs.

pub mod aeth;
pub mod bth;
pub mod bytes;
pub mod cm;
pub mod ext_headers;
pub mod fixed_header;
pub mod icrc;
pub mod vcrc;
pub mod opcode;
pub mod packet;

pub use aeth::{Aeth, AethRepr, Syndrome};
pub use bth::{psn, Bth, BthRepr};
pub use cm::{CmMad, CmMsg, CmRepr};
pub use ext_headers::*;
pub use fixed_header::{FieldLayout, HeaderLayout};
pub use opcode::{Hdr, HeaderSet, OpInfo, Opcode, Position, Transport};
pub use packet::RocePacket;

/// Every fixed-layout header's layout: native InfiniBand's LRH, the BTH, the extension headers
/// in [`Hdr`] order, then IRN's SACK tail.
pub fn layouts() -> impl Iterator<Item = &'static HeaderLayout> {
    [&LrhRepr::LAYOUT, &BthRepr::LAYOUT]
        .into_iter()
        .chain(Hdr::ALL.iter().map(|h| h.layout()))
        .chain(core::iter::once(&IrnSackRepr::LAYOUT))
}
