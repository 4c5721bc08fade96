//! The `rocescope` command's library: capture I/O and the subcommands' logic, so tests and the
//! browser build can call it without the CLI.

pub mod capture;
pub mod fabric;
pub mod fuzzing;
pub mod lua;
pub mod output;
pub mod stacks;
pub mod testgen;
pub mod testgen_ext;

use rocescope_codec::LinkType;

/// Maps a capture's link type, `None` for one rocescope does not decode (frames are then listed
/// but not decoded).
pub fn link_type(linktype: u32) -> Option<LinkType> {
    LinkType::from_linktype(linktype)
}
