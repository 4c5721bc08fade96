//! The research transports' extensions (WIRE.md part B), one module each. A module says how a
//! packet's bytes are laid out under its profile ([`layout`]), reads what the packet carries
//! into a small `Copy` value (no allocation), and walks those fields. State that spans packets
//! (detection, SDR fragment reassembly, ERD's TCP stream) lives in `crate::decoder`; whole
//! packets carrying an extension's `Repr` are built in `crate::build`, which imports these modules
//! (never the reverse).

pub mod dcp;
pub mod flor;
pub mod sdr;
pub mod erd;
pub mod netrt;

use core::ops::Range;

use crate::field::FieldId;
use crate::ib::packet::Layout;
use crate::ib::RocePacket;
use crate::params::Params;
use crate::profile::Profile;
use crate::value::Value;
use crate::warning::Warnings;

/// The frame range of a field at byte range `r` of a header at `at`.
#[inline]
pub(crate) fn range_at(at: usize, r: Range<usize>) -> Range<usize> {
    at + r.start..at + r.end
}

/// The frame range of the one-byte field at offset `i` of a header at `at`.
#[inline]
pub(crate) fn byte_at(at: usize, i: usize) -> Range<usize> {
    at + i..at + i + 1
}

/// What a packet's network layer tells an extension.
#[derive(Clone, Copy, Debug)]
pub struct Ctx<'p> {
    /// IPv4 ToS / IPv6 traffic class (None for RoCEv1).
    pub tos: Option<u8>,
    pub params: &'p Params,
}

/// What an extension decoded from one packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ext {
    #[default]
    None,
    Dcp(dcp::Dcp),
    Netrt(netrt::Netrt),
    Sdr(sdr::Sdr),
    Flor(flor::Flor),
    Erd(erd::Erd),
}

/// The layout of the bytes after the BTH under `profile`.
#[inline]
pub fn layout(profile: Profile, ctx: &Ctx<'_>, opcode: u8) -> Layout {
    match profile {
        Profile::Dcp => dcp::layout(ctx, opcode),
        Profile::Netrt => netrt::layout(ctx, opcode),
        _ => Layout::Std,
    }
}

/// Reads the extension's fields of a packet decoded with `layout(profile, …)`; `Ext::None`
/// when the profile does not apply to this packet (it is then plain `std`).
#[inline]
pub fn parse(profile: Profile, ctx: &Ctx<'_>, p: &RocePacket<'_>, warnings: &mut Warnings) -> Ext {
    match profile {
        Profile::Dcp => dcp::Dcp::parse(ctx, p).map_or(Ext::None, Ext::Dcp),
        Profile::Netrt => netrt::Netrt::parse(ctx, p, warnings).map_or(Ext::None, Ext::Netrt),
        Profile::Sdr => sdr::Sdr::parse(ctx, p, warnings).map_or(Ext::None, Ext::Sdr),
        Profile::Flor => flor::Flor::parse(ctx, p, warnings).map_or(Ext::None, Ext::Flor),
        Profile::Erd => erd::Erd::parse(ctx, p, warnings).map_or(Ext::None, Ext::Erd),
        _ => Ext::None,
    }
}

impl Ext {
    /// The profile whose extension this is (`Std` for none).
    pub fn profile(&self) -> Profile {
        match self {
            Ext::None => Profile::Std,
            Ext::Dcp(_) => Profile::Dcp,
            Ext::Netrt(_) => Profile::Netrt,
            Ext::Sdr(_) => Profile::Sdr,
            Ext::Flor(_) => Profile::Flor,
            Ext::Erd(_) => Profile::Erd,
        }
    }

    /// Walks the extension's fields; `base` is the BTH's offset in the frame.
    #[inline]
    pub fn visit<'a>(&self, p: &RocePacket<'a>, base: usize, f: &mut impl FnMut(FieldId, Value<'a>, Range<usize>)) {
        match self {
            Ext::None => {}
            Ext::Dcp(d) => d.visit(p, base, f),
            Ext::Netrt(n) => n.visit(p, base, f),
            Ext::Sdr(s) => s.visit(p, base, f),
            Ext::Flor(x) => x.visit(p, base, f),
            Ext::Erd(e) => e.visit(p, base, f),
        }
    }
}
