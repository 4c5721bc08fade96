//! `rocescope check`'s verdict on one frame: integrity failures only (ICRC, IPv4 header
//! checksum, lengths that do not add up). Unknown opcodes, TVer, a CNP sent as 0x80 and the like
//! are flagged by `decode`'s warnings, not failures (WIRE.md A.4); bytes the capture did not keep
//! are counted apart. Only RoCE is judged: a RoCE packet, or a frame to UDP 4791 or with a GRH
//! too broken to hold one (a host capture's other traffic often carries checksums left to the
//! NIC).

use rocescope_codec::frame::ROCEV2_PORT;
use rocescope_codec::{Frame, IcrcStatus, Warning};

/// What `check` makes of one frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The frame holds a RoCE packet.
    pub roce: bool,
    /// A RoCE packet the capture cut short (its ICRC cannot be verified).
    pub cut: bool,
    /// The integrity failures, as one text each (empty: the frame is good).
    pub problems: Vec<String>,
}

/// Judges a frame; `None` for a frame that is not RoCE's to judge.
pub fn judge(frame: &Frame<'_>) -> Option<Verdict> {
    let rocev2 = frame.udp_ports().is_some_and(|(s, d)| s == ROCEV2_PORT || d == ROCEV2_PORT);
    if frame.roce().is_none() && !rocev2 && !frame.is_rocev1() {
        return None;
    }
    let roce = frame.roce().is_some();
    let mut problems: Vec<String> =
        frame.warnings.iter().filter(|w| w.is_integrity_failure()).map(|w| w.to_string()).collect();
    let icrc_listed = frame.warnings.iter().any(|w| matches!(w, Warning::IcrcMismatch { .. }));
    if frame.icrc_status() == IcrcStatus::Bad && !icrc_listed {
        // Its warning did not fit in the frame's list (`Warnings::CAPACITY`).
        problems.push("ICRC mismatch".into());
    }
    Some(Verdict { roce, cut: roce && frame.truncated(), problems })
}

/// The totals of a `check` run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub roce: u64,
    pub bad: u64,
    pub cut: u64,
}

impl Totals {
    pub fn add(&mut self, v: &Verdict) {
        self.roce += v.roce as u64;
        self.cut += v.cut as u64;
        self.bad += !v.problems.is_empty() as u64;
    }
}

impl std::fmt::Display for Totals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} RoCE packets checked: {} bad, {} cut short by the capture (ICRC not verifiable)", self.roce, self.bad, self.cut)
    }
}
