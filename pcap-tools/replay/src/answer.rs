//! What a responder sends, as replay compares it (docs/replay.md): ACKs, and the answers that
//! are compared one for one (NAKs, IRN's selective NAKs, DCP's returned header-only packets),
//! read from a frame the same way for the reference's output and the capture's.

use std::collections::VecDeque;

use rocescope_codec::ext::dcp;
use rocescope_codec::ib::aeth::Syndrome;
use rocescope_codec::ib::psn;
use rocescope_codec::{Frame, Params};
use rocescope_stacks::StackKind;

use crate::rules::{self, Rule};

/// A control packet a responder sends, as the judge compares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Answer {
    /// A PSN sequence error NAK naming the expected PSN.
    Nak { psn: u32 },
    /// IRN's selective NAK: the expected PSN and the PSN that arrived out of order.
    Sack { epsn: u32, sacked: u32 },
    /// DCP: a header-only packet returned to the sender.
    Bounce { psn: u32 },
}

impl Answer {
    /// The PSN the answer makes the requester send again.
    pub(super) fn resend_psn(self) -> u32 {
        match self {
            Answer::Nak { psn } | Answer::Bounce { psn } => psn,
            Answer::Sack { epsn, .. } => epsn,
        }
    }

    pub(super) fn describe(self) -> String {
        match self {
            Answer::Nak { psn } => format!("NAK (PSN sequence error) naming PSN {psn}"),
            Answer::Sack { epsn, sacked } => format!("selective NAK: expected PSN {epsn}, PSN {sacked} received"),
            Answer::Bounce { psn } => format!("header-only packet of PSN {psn} returned to the sender"),
        }
    }

    /// The rules for a missing answer and for an answer nobody asked for.
    pub(super) fn rules(self) -> (Rule, Rule) {
        match self {
            Answer::Nak { .. } => (rules::GBN_NAK_MISSING, rules::GBN_NAK_UNEXPECTED),
            Answer::Sack { .. } => (rules::IRN_SACK_MISSING, rules::IRN_SACK_UNEXPECTED),
            Answer::Bounce { .. } => (rules::DCP_HO_UNANSWERED, rules::DCP_HO_UNEXPECTED),
        }
    }
}

/// What a frame sent by a responder is to the judge.
#[derive(Clone, Copy, Debug)]
pub(super) enum Control {
    /// An ACK: the PSN acknowledged through, the MSN (DCP's ACK, tagged 01: the eMSN).
    Ack { psn: u32, msn: u32 },
    /// An answer, with the MSN its AETH carries.
    Answer(Answer, u32),
}

/// Reads a responder's frame: ACK, NAK, selective NAK or returned header-only packet.
pub(super) fn control_of(f: &Frame<'_>, params: &Params) -> Option<Control> {
    let p = f.roce()?;
    let psn = p.bth().psn();
    let tag = f.tos().map(|t| dcp::tag(t, params.dcp_tag_shift));
    if tag == Some(dcp::TAG_HO) && p.opcode().0 != 0x11 {
        return Some(Control::Answer(Answer::Bounce { psn }, 0));
    }
    if p.opcode().0 != 0x11 {
        return None;
    }
    let a = p.aeth()?;
    match a.syndrome() {
        Syndrome::Ack { .. } => Some(Control::Ack { psn, msn: a.msn() }),
        Syndrome::Nak { code: 0 } => Some(Control::Answer(
            match p.irn_sack() {
                Some(s) => Answer::Sack { epsn: psn, sacked: s.sack_psn() },
                None => Answer::Nak { psn },
            },
            a.msn(),
        )),
        _ => None,
    }
}

/// Rises of what is acknowledged remembered (a packet sent or arriving again from further back
/// is not judged).
const RISES_KEPT: usize = 1024;

/// One rise of what is acknowledged: through this PSN (DCP: this message), by the frame at
/// this time.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rise {
    pub through: u32,
    pub frame: u64,
    pub time: u64,
}

/// The rises of what a connection's acknowledgements acknowledge, the latest [`RISES_KEPT`]: a
/// packet seen again is judged against the first one that covered it.
#[derive(Debug, Default)]
pub(super) struct Rises(VecDeque<Rise>);

impl Rises {
    /// An acknowledgement through `through`: true when it acknowledges more than any before.
    pub(super) fn rise(&mut self, through: u32, frame: u64, time: u64) -> bool {
        if self.through().is_some_and(|a| psn::diff(a, through) <= 0) {
            return false;
        }
        if self.0.len() == RISES_KEPT {
            self.0.pop_front();
        }
        self.0.push_back(Rise { through, frame, time });
        true
    }

    /// What is acknowledged so far.
    pub(super) fn through(&self) -> Option<u32> {
        self.0.back().map(|r| r.through)
    }

    /// The first rise that covered `n`.
    pub(super) fn first_covering(&self, n: u32) -> Option<Rise> {
        self.0.iter().find(|r| psn::diff(n, r.through) >= 0).copied()
    }
}

/// What an ACK acknowledges through: its PSN, or for DCP the message before its eMSN (every
/// message before the eMSN is complete).
/// The MSN a DCP data packet (ToS tag 10) carries in its DCPETH; `None` for any other packet.
pub(super) fn dcp_data_msn(f: &Frame<'_>, params: &Params) -> Option<u32> {
    let data = f.tos().is_some_and(|t| dcp::tag(t, params.dcp_tag_shift) == dcp::TAG_DATA);
    match (f.ext(), f.roce()) {
        (rocescope_codec::ext::Ext::Dcp(x), Some(p)) if data => x.msn(p),
        _ => None,
    }
}

pub(super) fn ack_through(kind: StackKind, psn: u32, msn: u32) -> u32 {
    match kind {
        StackKind::Dcp => psn::add(msn, psn::MASK),
        _ => psn,
    }
}
