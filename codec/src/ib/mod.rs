//! InfiniBand transport headers as carried by RoCE (WIRE.md part A): one file per header, the
//! opcode table, the packet layout, the ICRC and the CM MADs.

pub mod aeth;
pub mod bth;
pub mod bytes;
pub mod cm;
pub mod ext_headers;
pub mod feth;
pub mod icrc;
pub mod opcode;
pub mod packet;

pub use aeth::{Aeth, AethRepr, Syndrome};
pub use bth::{psn, Bth, BthRepr};
pub use cm::{CmMad, CmMsg, CmRepr};
pub use ext_headers::*;
pub use feth::{Feth, FethRepr};
pub use opcode::{Hdr, HeaderSet, OpInfo, Opcode, Position, Transport};
pub use packet::RocePacket;
