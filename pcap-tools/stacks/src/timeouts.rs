//! The requesters' retransmission timers, with the values real NICs and the papers use.
//!
//! - GBN (standard RoCE RC): the IBTA *Local ACK Timeout* (IBTA Vol. 1 §9.7.6.1.3 and the QP
//!   attribute of §11.2.4.2): a 5-bit exponent `t` gives 4.096 µs · 2^t; `t = 0` disables the
//!   timer. ConnectX NICs implement it as such (`ibv_modify_qp`'s `timeout`).
//! - IRN (Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM 2018, §3.1): two timeout
//!   values, RTO_low when at most N packets are in flight (a small window whose loss no SACK can
//!   reveal) and RTO_high otherwise; the paper's settings are RTO_low = 100 µs, RTO_high = 320 µs,
//!   N = 3.
//! - DCP (seed 000 §4.5): a "coarse-grained timeout" per unaMSN message, a fallback for when the
//!   lossless control plane fails; the paper gives no value. Chosen here: 1 ms (above IRN's
//!   RTO_high, so HO-based recovery, one RTT, always has the first word; in the paper's
//!   intra-DC setting an RTT is ≈ 10 µs), doubled with each timeout round of the same message
//!   up to 2^[`DCP_MAX_BACKOFF`] times (a choice: successive rounds of one message must be able
//!   to outlast a queue that keeps them from completing, or they restart for ever).
//!
//! An `override_ns` replaces all of them with one value (`rocescope synth --rto`), for
//! experiments that want the old single timeout.

use super::Nanos;

/// IBTA's timeout unit: 4.096 µs (IBTA Vol. 1 §9.7.6.1.3, Local ACK Timeout).
pub const IBTA_TIMEOUT_UNIT_NS: Nanos = 4_096;

/// Default local ACK timeout exponent: 14, i.e. 4.096 µs · 2^14 ≈ 67.1 ms, the value commonly
/// configured on ConnectX RoCE deployments (perftest's default `--timeout`; issue 9).
pub const DEFAULT_LOCAL_ACK_TIMEOUT: u8 = 14;

/// IRN's RTO_low (IRN paper, SIGCOMM 2018, §3.1 / its evaluation settings): 100 µs.
pub const IRN_RTO_LOW_NS: Nanos = 100_000;

/// IRN's RTO_high (IRN paper, SIGCOMM 2018, §3.1 / its evaluation settings): 320 µs.
pub const IRN_RTO_HIGH_NS: Nanos = 320_000;

/// IRN's N: RTO_low applies when at most this many packets are in flight (IRN paper §3.1): 3.
pub const IRN_LOW_RTO_PACKETS: u32 = 3;

/// DCP's coarse timeout: 1 ms (seed 000 §4.5 gives no value; see the module notes).
pub const DCP_TIMEOUT_NS: Nanos = 1_000_000;

/// DCP's coarse timeout doubles per timeout round of the same message up to 2^this (a choice,
/// see the module notes): 64 × 1 ms.
pub const DCP_MAX_BACKOFF: u8 = 6;

/// The timers of one connection's requester.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// GBN: the IBTA local ACK timeout exponent `t` (0-31; 0 disables the timer).
    pub local_ack_timeout: u8,
    /// IRN: RTO_low, RTO_high and N.
    pub irn_rto_low_ns: Nanos,
    pub irn_rto_high_ns: Nanos,
    pub irn_low_rto_packets: u32,
    /// DCP: the coarse timeout of a message's first round.
    pub dcp_timeout_ns: Nanos,
    /// One value for every stack instead of the above (no back-off, one IRN value).
    pub override_ns: Option<Nanos>,
    /// A fault on purpose (`synth --fault early-timeout` or `late-timeout`, [`crate::faults`]):
    /// the timer runs at another value until it first expires. [`TimerFault::None`] for every
    /// real configuration.
    pub until_expiry: TimerFault,
}

/// How a faulty retransmission timer runs until it first expires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimerFault {
    /// At its value.
    #[default]
    None,
    /// At half its value (`early-timeout`).
    Half,
    /// At one and a half times its value (`late-timeout`).
    OneAndHalf,
}

impl TimerFault {
    /// `rto` as the faulty timer runs it.
    pub fn apply(self, rto: Nanos) -> Nanos {
        match self {
            TimerFault::None => rto,
            TimerFault::Half => rto / 2,
            TimerFault::OneAndHalf => rto.saturating_add(rto / 2),
        }
    }
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            local_ack_timeout: DEFAULT_LOCAL_ACK_TIMEOUT,
            irn_rto_low_ns: IRN_RTO_LOW_NS,
            irn_rto_high_ns: IRN_RTO_HIGH_NS,
            irn_low_rto_packets: IRN_LOW_RTO_PACKETS,
            dcp_timeout_ns: DCP_TIMEOUT_NS,
            override_ns: None,
            until_expiry: TimerFault::None,
        }
    }
}

/// 4.096 µs · 2^t (IBTA's local ACK timeout), `None` for `t = 0` (no timeout) ; `t` above 31
/// is taken as 31.
pub fn local_ack_timeout_ns(t: u8) -> Option<Nanos> {
    (t > 0).then(|| IBTA_TIMEOUT_UNIT_NS << t.min(31))
}

impl Timeouts {
    /// Every stack uses `ns` (the `--rto` override).
    pub fn fixed(ns: Nanos) -> Timeouts {
        Timeouts { override_ns: Some(ns), ..Default::default() }
    }

    /// GBN's local ACK timeout; `None`: no timer.
    pub fn gbn_ns(&self) -> Option<Nanos> {
        match self.override_ns {
            Some(ns) => Some(ns),
            None => local_ack_timeout_ns(self.local_ack_timeout),
        }
    }

    /// IRN's RTO with `in_flight` packets outstanding: RTO_low when at most N, else RTO_high.
    pub fn irn_ns(&self, in_flight: u32) -> Nanos {
        match self.override_ns {
            Some(ns) => ns,
            None if in_flight <= self.irn_low_rto_packets => self.irn_rto_low_ns,
            None => self.irn_rto_high_ns,
        }
    }

    /// Whether `irn_ns(in_flight)` is RTO_low (and so may be too short once more are in flight).
    pub fn irn_is_low(&self, in_flight: u32) -> bool {
        self.override_ns.is_none() && in_flight <= self.irn_low_rto_packets
    }

    /// DCP's coarse timeout of timeout round `round` (0: the message's first transmission).
    pub fn dcp_ns(&self, round: u8) -> Nanos {
        match self.override_ns {
            Some(ns) => ns,
            None => self.dcp_timeout_ns.saturating_mul(1 << round.min(DCP_MAX_BACKOFF)),
        }
    }

    /// The base timeout of `kind` (the truth records it): GBN's local ACK timeout (0 when
    /// disabled), IRN's RTO_high, DCP's first-round timeout; for SDR and Flor the override or 0
    /// (their RTOs are set from the round trip: `SdrConfig::rto_ns`, `FlorSender::rto_ns`).
    pub fn base_ns(&self, kind: super::StackKind) -> Nanos {
        match kind {
            super::StackKind::Gbn | super::StackKind::Netrt => self.gbn_ns().unwrap_or(0),
            super::StackKind::Irn => self.irn_ns(u32::MAX),
            super::StackKind::Dcp => self.dcp_ns(0),
            super::StackKind::SdrSr | super::StackKind::SdrEc | super::StackKind::Flor | super::StackKind::Erd => {
                self.override_ns.unwrap_or(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ibta_formula() {
        assert_eq!(local_ack_timeout_ns(0), None);
        assert_eq!(local_ack_timeout_ns(1), Some(8_192));
        assert_eq!(local_ack_timeout_ns(14), Some(67_108_864));
        assert_eq!(local_ack_timeout_ns(31), Some(4_096 << 31));
        assert_eq!(Timeouts::default().gbn_ns(), Some(67_108_864));
    }

    #[test]
    fn irn_low_and_high() {
        let t = Timeouts::default();
        assert_eq!((t.irn_ns(1), t.irn_ns(3), t.irn_ns(4)), (100_000, 100_000, 320_000));
        assert_eq!(Timeouts::fixed(7).irn_ns(1), 7);
    }

    #[test]
    fn dcp_backs_off() {
        let t = Timeouts::default();
        let got = [t.dcp_ns(0), t.dcp_ns(1), t.dcp_ns(6), t.dcp_ns(200)];
        assert_eq!(got, [1_000_000, 2_000_000, 64_000_000, 64_000_000]);
        assert_eq!(Timeouts::fixed(5).dcp_ns(3), 5);
    }
}
