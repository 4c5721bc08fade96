//! Priority-based Flow Control (IEEE 802.1Qbb; frame layout WIRE.md A.6): the lossless mode of
//! the fabric, as the pieces a port needs, with no fabric state of their own.
//!
//! - [`IngressMeter`]: a switch counts, per ingress port and priority, the bytes that came in
//!   through that port and still wait in its egress queues. Crossing `xoff` asks the upstream
//!   sender to pause (a PFC frame with the maximum pause time for the priority); falling back
//!   to `xon` asks it to resume (pause time 0). Between the two it stays silent (hysteresis).
//!   A pause that runs out while the meter is still above `xon` is renewed
//!   ([`IngressMeter::refresh_due`]), as switches re-send XOFF before the quanta expire.
//! - [`EgressPause`]: a port that received a PFC frame stops starting new frames of the paused
//!   priority until the pause time has run out or a resume arrives; the frame on the wire
//!   finishes (802.1Qbb: the pause takes effect at the next frame boundary).
//! - [`pfc_frame`]: the MAC control frame itself, built with the codec (destination
//!   01-80-C2-00-00-01, padded to 60 bytes), so captures decode with the `rocescope.pfc.*` fields
//!   and Wireshark's MAC control dissector.
//!
//! Thresholds: [`PfcConfig::for_buffer`] derives `xoff` from the buffer per port minus the
//! headroom the pause needs to take effect: the bytes that keep arriving for one round trip of
//! the link plus the frame being sent at each end: 2 × (propagation delay × rate) + 2 × maximum
//! frame (the usual headroom rule of switch vendors' PFC guides; it ignores the receiver's
//! processing delay, which the simulator does not have). `xon` is `xoff` minus two maximum
//! frames (our choice: the smallest gap that avoids a pause/resume pair per frame).

use rocescope_codec::build::mac_control_frame;
use rocescope_codec::mac_control::MacControlRepr;
use rocescope_stacks::Nanos;

/// The largest pause time a PFC frame carries, in quanta of 512 bit times.
pub const MAX_QUANTA: u16 = 0xffff;

/// Bits in one pause quantum (802.3 annex 31B).
pub const QUANTUM_BITS: u64 = 512;

/// The priority RoCE traffic runs in (DSCP 26 maps to priority 3 on common NIC and switch
/// defaults); CNPs (DSCP 48) run in priority 6, which is never paused here.
pub const ROCE_PRIORITY: u8 = 3;

/// A lossless priority's thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcConfig {
    /// Ingress bytes above which the upstream port is paused.
    pub xoff_bytes: u64,
    /// Ingress bytes at or below which the upstream port is resumed.
    pub xon_bytes: u64,
    /// The paused priority.
    pub priority: u8,
}

impl PfcConfig {
    /// Thresholds for a port with `buffer_bytes` of buffer on a link of `rate_bps` and
    /// `delay_ns` propagation delay carrying frames of at most `max_frame` bytes (see the
    /// module doc for the headroom rule). `None` when the buffer cannot hold the headroom.
    pub fn for_buffer(buffer_bytes: u64, rate_bps: u64, delay_ns: u64, max_frame: u64) -> Option<PfcConfig> {
        let in_flight = (2 * delay_ns as u128 * rate_bps as u128).div_ceil(8_000_000_000) as u64;
        let headroom = in_flight + 2 * max_frame;
        let xoff = buffer_bytes.checked_sub(headroom)?;
        let xon = xoff.saturating_sub(2 * max_frame);
        (xoff > 0).then_some(PfcConfig { xoff_bytes: xoff, xon_bytes: xon, priority: ROCE_PRIORITY })
    }
}

/// What an [`IngressMeter`] asks of its port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcSignal {
    /// Send a pause (maximum quanta) upstream.
    Pause,
    /// Send a resume (quanta 0) upstream.
    Resume,
}

/// A switch's count of the bytes that entered through one ingress port and are still queued.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IngressMeter {
    bytes: u64,
    paused: bool,
    /// When the pause last sent runs out (to renew it).
    pause_until: Nanos,
}

impl IngressMeter {
    /// Bytes counted.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether the upstream port is (asked to be) paused.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// A frame of `len` bytes entered through this port and was queued.
    pub fn on_queued(&mut self, cfg: &PfcConfig, len: u64) -> Option<PfcSignal> {
        self.bytes += len;
        (!self.paused && self.bytes > cfg.xoff_bytes).then(|| {
            self.paused = true;
            PfcSignal::Pause
        })
    }

    /// A frame of `len` bytes that entered through this port left its egress queue (sent or
    /// dropped).
    pub fn on_dequeued(&mut self, cfg: &PfcConfig, len: u64) -> Option<PfcSignal> {
        self.bytes = self.bytes.saturating_sub(len);
        (self.paused && self.bytes <= cfg.xon_bytes).then(|| {
            self.paused = false;
            PfcSignal::Resume
        })
    }

    /// Records that a pause lasting `duration` was sent at `now`.
    pub fn pause_sent(&mut self, now: Nanos, duration: Nanos) {
        self.pause_until = now.saturating_add(duration);
    }

    /// The pause sent last runs out within `margin` of `now` while the meter is still above
    /// `xon`: it must be renewed.
    pub fn refresh_due(&self, now: Nanos, margin: Nanos) -> bool {
        self.paused && now.saturating_add(margin) >= self.pause_until
    }
}

/// A port's pause state for one priority, set by the PFC frames it receives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EgressPause {
    until: Nanos,
}

impl EgressPause {
    /// A PFC frame with pause time `quanta` for this priority arrived at `now` on a link of
    /// `rate_bps`: pause until then (0 resumes at once).
    pub fn on_frame(&mut self, now: Nanos, quanta: u16, rate_bps: u64) {
        self.until = now.saturating_add(quanta_ns(quanta, rate_bps));
    }

    /// Whether a new frame of the priority may not start at `now`.
    pub fn paused(&self, now: Nanos) -> bool {
        now < self.until
    }

    /// When the pause runs out (if nothing renews or ends it).
    pub fn until(&self) -> Nanos {
        self.until
    }
}

/// The duration of `quanta` pause quanta on a link of `rate_bps`, rounded up.
pub fn quanta_ns(quanta: u16, rate_bps: u64) -> Nanos {
    ((quanta as u128 * QUANTUM_BITS as u128 * 1_000_000_000).div_ceil(rate_bps.max(1) as u128)) as Nanos
}

/// A PFC frame from `src_mac` pausing `priority` for `quanta` (0: resume).
pub fn pfc_frame(src_mac: [u8; 6], priority: u8, quanta: u16) -> Vec<u8> {
    let mut q = [0u16; 8];
    q[(priority & 7) as usize] = quanta;
    let repr = MacControlRepr::Pfc { class_enable: 1 << (priority & 7), quanta: q };
    let mut out = Vec::with_capacity(60);
    mac_control_frame(src_mac, &repr, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_codec::{DecodeOptions, Frame, LinkType};

    #[test]
    fn thresholds_leave_the_headroom_of_one_round_trip_and_two_frames() {
        // 100 Gb/s, 1 µs: 2 × 12,500 bytes in flight + 2 × 1,126-byte frames = 27,252.
        let c = PfcConfig::for_buffer(256 * 1024, 100_000_000_000, 1000, 1126).unwrap();
        assert_eq!(c.xoff_bytes, 262_144 - 27_252);
        assert_eq!(c.xon_bytes, c.xoff_bytes - 2 * 1126);
        assert_eq!(PfcConfig::for_buffer(20_000, 100_000_000_000, 1000, 1126), None);
    }

    #[test]
    fn the_meter_pauses_above_xoff_and_resumes_at_xon_once_each() {
        let cfg = PfcConfig { xoff_bytes: 3000, xon_bytes: 1000, priority: 3 };
        let mut m = IngressMeter::default();
        assert_eq!(m.on_queued(&cfg, 2000), None);
        assert_eq!(m.on_queued(&cfg, 1500), Some(PfcSignal::Pause));
        assert_eq!(m.on_queued(&cfg, 1500), None, "already paused");
        assert_eq!(m.on_dequeued(&cfg, 2000), None, "3000 > xon");
        assert_eq!(m.on_dequeued(&cfg, 2000), Some(PfcSignal::Resume));
        assert_eq!(m.on_dequeued(&cfg, 1000), None);
        assert_eq!(m.bytes(), 0);
    }

    #[test]
    fn a_pause_lasts_its_quanta_at_the_link_rate() {
        // 65,535 × 512 bits at 100 Gb/s = 335,539.2 ns.
        assert_eq!(quanta_ns(MAX_QUANTA, 100_000_000_000), 335_540);
        let mut p = EgressPause::default();
        p.on_frame(1000, MAX_QUANTA, 100_000_000_000);
        assert!(p.paused(1000) && p.paused(336_539) && !p.paused(336_540));
        p.on_frame(2000, 0, 100_000_000_000);
        assert!(!p.paused(2000));
    }

    #[test]
    fn the_frame_decodes_as_pfc_with_the_priority_and_quanta() {
        let f = pfc_frame([2, 0, 0, 0, 0xf1, 0], 3, MAX_QUANTA);
        assert_eq!(f.len(), 60);
        let fr = Frame::parse(LinkType::Ethernet, &f, f.len(), &DecodeOptions::default());
        let mc = fr.mac_control().expect("a MAC control frame");
        assert_eq!(mc.class_enable(), Some(1 << 3));
        assert_eq!((mc.quanta(3), mc.quanta(0)), (MAX_QUANTA, 0));
    }

    #[test]
    fn a_pause_is_renewed_before_it_runs_out() {
        let cfg = PfcConfig { xoff_bytes: 10, xon_bytes: 5, priority: 3 };
        let mut m = IngressMeter::default();
        m.on_queued(&cfg, 11);
        m.pause_sent(0, 1000);
        assert!(!m.refresh_due(100, 100));
        assert!(m.refresh_due(900, 100));
    }
}
