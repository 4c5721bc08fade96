//! rocescope-codec: a zero-copy codec for RoCEv2 and RoCEv1 (the InfiniBand transport over
//! Ethernet), following `shared/spec/WIRE.md`, and for native InfiniBand packets (link type 247,
//! docs/link-types.md).
//!
//! - [`frame::Frame::parse`] decodes a captured frame without allocating; [`frame::Frame::visit`]
//!   walks every decoded field with its registry id ([`field`]), value ([`value::Value`]) and
//!   byte range.
//! - [`layout`] declares each fixed-layout header (InfiniBand's LRH, BTH, extension headers, IRN's SACK tail, DCP's
//!   DCPETH and SSNETH) once, byte and bit layout and registry entries together; [`ib`] makes
//!   each a borrowed view plus an owned `Repr` from its declaration, with its part of the field
//!   walk and its layout table, and holds the opcode table, the packet layout, the ICRC and CM.
//! - [`ext`] reads what the research transports add to a packet (stateless, like `frame`);
//!   [`decoder`] keeps what spans packets (per-flow profile detection, SDR's user immediates,
//!   ERD's NACK stream).
//! - [`build`] emits byte-exact frames (lengths, checksums, ICRC) from `Repr`s.
//!
//! Arrows go one way (`codec/tests/module_graph.rs`): the builders import the views and the
//! decoder, never the reverse, and no two modules import each other, directly or in a ring.

pub mod build;
pub mod checksum;
pub mod decoder;
pub mod ext;
pub mod field;
pub mod field_group;
pub mod frame;
pub mod fxhash;
pub mod ib;
pub mod layers;
pub mod layout;
pub mod mac_control;
pub mod params;
pub mod profile;
pub mod recent_map;
pub mod value;
pub mod warning;

pub use field::{FieldDef, FieldId, FieldType, FIELDS};
pub use frame::{DecodeOptions, Frame, IcrcStatus, LinkType};
pub use params::{FlorAckSetMeans, ImmSplit, Params};
pub use profile::Profile;
pub use value::Value;
pub use warning::{Layer, Warning, Warnings};
