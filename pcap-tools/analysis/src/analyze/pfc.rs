//! PFC pauses (IEEE 802.1Qbb; WIRE.md A.6) per interface, sending MAC and priority: a frame
//! with a non-zero pause time pauses the priority for quanta × 512 bit times at the link rate
//! (not in a capture: `--link-gbps`, default 100), renewed by the next frame; a zero pause time
//! resumes it. A pause longer than the storm threshold is a storm.

use std::collections::{BTreeMap, BTreeSet};

use super::pkt::PfcPkt;
use super::report::PauseRow;

/// One paused interval.
#[derive(Clone, Copy, Debug)]
struct Open {
    start: u64,
    end: u64,
}

#[derive(Debug, Default)]
struct Row {
    frames: u64,
    paused_ns: u64,
    longest_ns: u64,
    storms: u64,
    open: Option<Open>,
    flows: BTreeSet<usize>,
}

/// Every PFC pause of a capture.
#[derive(Debug)]
pub struct Pauses {
    bits_per_ns: f64,
    storm_ns: u64,
    rows: BTreeMap<(u32, [u8; 6], u8), Row>,
    /// Closed intervals per interface, for the flows' paused time.
    intervals: BTreeMap<u32, Vec<(u64, u64)>>,
}

impl Pauses {
    pub fn new(link_gbps: f64, storm_ns: u64) -> Pauses {
        Pauses { bits_per_ns: link_gbps, storm_ns, rows: BTreeMap::new(), intervals: BTreeMap::new() }
    }

    fn close(&mut self, key: (u32, [u8; 6], u8), at: u64) {
        let storm = self.storm_ns;
        let Some(row) = self.rows.get_mut(&key) else { return };
        let Some(o) = row.open.take() else { return };
        let end = at.min(o.end).max(o.start);
        let d = end - o.start;
        row.paused_ns += d;
        row.longest_ns = row.longest_ns.max(d);
        if d >= storm {
            row.storms += 1;
        }
        self.intervals.entry(key.0).or_default().push((o.start, end));
    }

    pub fn add(&mut self, p: &PfcPkt) {
        for prio in 0..8u8 {
            if p.class_enable >> prio & 1 == 0 {
                continue;
            }
            let key = (p.iface, p.src_mac, prio);
            let q = p.quanta[prio as usize];
            let row = self.rows.entry(key).or_default();
            row.frames += 1;
            let expired = row.open.is_some_and(|o| o.end <= p.time_ns);
            if q == 0 || expired {
                self.close(key, p.time_ns);
            }
            if q > 0 {
                let dur = (q as f64 * 512.0 / self.bits_per_ns).round() as u64;
                let row = self.rows.get_mut(&key).expect("row exists");
                match &mut row.open {
                    Some(o) => o.end = p.time_ns + dur,
                    None => row.open = Some(Open { start: p.time_ns, end: p.time_ns + dur }),
                }
            }
        }
    }

    /// Some pause frame was seen.
    pub fn any(&self) -> bool {
        !self.rows.is_empty()
    }

    /// A frame of flow `flow` on `iface` at `t`: affected when a priority there is paused.
    pub fn frame(&mut self, iface: u32, t: u64, flow: usize) {
        for ((i, _, _), row) in self.rows.range_mut((iface, [0; 6], 0)..=(iface, [0xff; 6], 7)) {
            debug_assert_eq!(*i, iface);
            if row.open.is_some_and(|o| o.start <= t && t < o.end) {
                row.flows.insert(flow);
            }
        }
    }

    /// Closes every pause at the end of the capture; rows and per-interface intervals.
    pub fn finish(&mut self, end: u64, name: impl Fn(usize) -> String) -> Vec<PauseRow> {
        let keys: Vec<_> = self.rows.keys().copied().collect();
        for k in keys {
            self.close(k, end);
        }
        self.rows
            .iter()
            .map(|(&(iface, mac, prio), r)| PauseRow {
                interface: iface,
                src_mac: mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":"),
                priority: prio,
                frames: r.frames,
                paused_ns: r.paused_ns,
                longest_ns: r.longest_ns,
                storms: r.storms,
                flows_affected: r.flows.iter().map(|&f| name(f)).collect(),
            })
            .collect()
    }

    /// Paused time on `iface` overlapping `[from, to]`.
    pub fn paused_between(&self, iface: u32, from: u64, to: u64) -> u64 {
        self.intervals
            .get(&iface)
            .map_or(0, |v| v.iter().map(|&(s, e)| e.min(to).saturating_sub(s.max(from))).sum())
    }
}
