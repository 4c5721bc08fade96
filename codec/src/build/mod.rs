//! Builders that emit byte-exact frames: Ethernet (0-2 VLAN tags) · IPv4/IPv6 · UDP 4791 · BTH ·
//! extension headers · payload · pad · ICRC (RoCEv2), or Ethernet · GRH · BTH … (RoCEv1), with
//! IP/UDP lengths, the IPv4 header checksum, the UDP checksum (always for IPv6, optional for
//! IPv4, where NICs send 0) and the ICRC computed; or native InfiniBand packets (LRH · GRH or
//! not · BTH … · ICRC · VCRC, [`IbFrameRepr`]). Used by tests, fuzz seeds and the simulator.
//! Header fields are written as given, so tests can also build malformed packets.
//!
//! The builders import the views and the decoder, never the reverse
//! (`codec/tests/module_graph.rs`). One file per concern: the RoCE packet ([`RoceRepr`]),
//! whole frames ([`FrameRepr`], [`fix_icrc`]), TCP frames ([`TcpFrameRepr`]), PAUSE/PFC frames,
//! DCP header-only packets ([`header_only`]), and the extensions' whole packets
//! (`DataRepr::roce` for SDR, `NetrtRepr::roce` for NetRT), which put an extension's `Repr` into
//! a [`RoceRepr`].

mod dcp;
mod frame;
mod ib;
mod mac_control;
mod netrt;
mod roce;
mod sdr;
mod tcp;

pub use dcp::header_only;
pub use frame::{fix_icrc, FrameRepr, NetRepr};
pub use ib::{IbFrameRepr, IbGrhRepr};
pub use mac_control::mac_control_frame;
pub use roce::{RoceRepr, CNP_RESERVED};
pub use tcp::{fix_tcp_checksum, TcpFrameRepr};

/// The RFC 1071 checksum, from [`crate::checksum`] (kept here for the crates that build frames
/// with it).
pub use crate::checksum::internet_checksum;
