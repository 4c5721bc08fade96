//! rocescope-analysis: what every front end (the `rocescope` command, the browser page) does
//! with a capture, without a command line or a terminal; analysers of flows and messages belong
//! here too. It builds for `wasm32-unknown-unknown` as it is (docs/ARCHITECTURE.md).
//!
//! - [`capture`]: the streaming pcap/pcapng reader and the pcapng writer.
//! - [`session`]: the one read → decode loop ([`session::Session`]), over the codec's stateful
//!   [`Decoder`](rocescope_codec::decoder::Decoder).
//! - [`analyze`]: the analysers (flow table, timeline: losses, retransmissions, messages).
//! - [`flows`]: the flow table (one direction of one QP between two addresses).
//! - [`annotation`]: the packet comments of `rocescope annotate` (analysis and replay verdicts).
//! - [`check`]: the integrity verdict of `rocescope check`.
//! - [`filter`]: display filters (`decode -Y`), a subset of Wireshark's language.
//! - [`output`]: the output formats (summary line, JSON, `-e` fields); [`tree`]: `-V`'s tree of
//!   layers and fields, and `-x`'s hex dump.

pub mod analyze;
pub mod annotation;
pub mod capture;
pub mod check;
pub mod filter;
pub mod flows;
pub mod output;
mod prefetch;
pub mod session;
pub mod tree;

use rocescope_codec::LinkType;

/// Maps a capture's link type, `None` for one rocescope does not decode (frames are then listed
/// but not decoded).
pub fn link_type(linktype: u32) -> Option<LinkType> {
    LinkType::from_linktype(linktype)
}
