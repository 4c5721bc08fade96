//! The NIC counters each simulated host would show (`ethtool -S` on an mlx5 NIC: the names
//! below), counted by the simulator from what each host NIC really received, sent and did —
//! never from a capture — for `rocescope replay --counters` to reconcile with the capture
//! (docs/replay.md "Counter reconciliation", docs/truth.md `counters`).
//!
//! Every counter starts at 0 when the run starts: the truth's values are the deltas over the run.

use std::collections::BTreeMap;

/// One host NIC's counters over the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NicCounters {
    /// Request packets the host's responder QPs received (whole, not header-only) with a PSN
    /// beyond the one expected next: Go-Back-N, any but the expected PSN that is not a
    /// duplicate; IRN and DCP (which keep out-of-order packets), a new PSN while an earlier one
    /// is missing.
    pub out_of_sequence: u64,
    /// Request packets the host's responder QPs received whose PSN had already been received
    /// (in order for Go-Back-N).
    pub duplicate_request: u64,
    /// NAKs (PSN sequence error, IRN's selective NAKs included) the host's requester QPs
    /// received.
    pub packet_seq_err: u64,
    /// ACKs or READ responses a requester QP received that passed the READ response it expected
    /// next (the responses were lost: IBTA's implied NAK), once per missing response PSN.
    pub implied_nak_seq_err: u64,
    /// Retransmission timer expiries of the host's requester QPs that made the QP send again
    /// (GBN's local ACK timeout, IRN's RTO, DCP's coarse timeout).
    pub local_ack_timeout_err: u64,
    /// CNPs the host's NIC sent.
    pub np_cnp_sent: u64,
    /// RoCE packets that reached the host's NIC with the CE mark (ECN bits 11).
    pub np_ecn_marked_roce_packets: u64,
    /// CNPs that reached one of the host's requester QPs with DCQCN on (its rate reacted).
    pub rp_cnp_handled: u64,
    /// CNPs that reached the host and changed no rate (no DCQCN, or not a requester QP).
    pub rp_cnp_ignored: u64,
    /// RoCE packets that reached the host's NIC.
    pub rx_vport_rdma_unicast_packets: u64,
    /// RoCE packets the host's NIC put on its wire.
    pub tx_vport_rdma_unicast_packets: u64,
}

impl NicCounters {
    /// The counters by their mlx5 names, sorted by name.
    pub fn values(&self) -> BTreeMap<String, u64> {
        [
            ("duplicate_request", self.duplicate_request),
            ("implied_nak_seq_err", self.implied_nak_seq_err),
            ("local_ack_timeout_err", self.local_ack_timeout_err),
            ("np_cnp_sent", self.np_cnp_sent),
            ("np_ecn_marked_roce_packets", self.np_ecn_marked_roce_packets),
            ("out_of_sequence", self.out_of_sequence),
            ("packet_seq_err", self.packet_seq_err),
            ("rp_cnp_handled", self.rp_cnp_handled),
            ("rp_cnp_ignored", self.rp_cnp_ignored),
            ("rx_vport_rdma_unicast_packets", self.rx_vport_rdma_unicast_packets),
            ("tx_vport_rdma_unicast_packets", self.tx_vport_rdma_unicast_packets),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// `values` as `ethtool -S` prints them (`NIC statistics:`, then one indented `name: value`
/// line each).
pub fn ethtool_text(values: &BTreeMap<String, u64>) -> String {
    let mut s = String::from("NIC statistics:\n");
    for (k, v) in values {
        s.push_str(&format!("     {k}: {v}\n"));
    }
    s
}

/// What the simulator keeps to count: per host, its counters; per requester endpoint, whether
/// its timer just expired; per connection, the READ response PSN last found missing.
#[derive(Clone, Debug, Default)]
pub struct CounterState {
    /// Per host (its index in the topology's hosts, which is its node index).
    pub hosts: Vec<NicCounters>,
    timer_fired: Vec<bool>,
    implied_at: Vec<Option<u32>>,
}

impl CounterState {
    /// Host `h`'s counters (room made as needed).
    pub fn host(&mut self, h: usize) -> &mut NicCounters {
        if self.hosts.len() <= h {
            self.hosts.resize(h + 1, NicCounters::default());
        }
        &mut self.hosts[h]
    }

    /// A timer of requester endpoint `ep` expired without rescheduling itself.
    pub(crate) fn timer_fired(&mut self, ep: usize) {
        if self.timer_fired.len() <= ep {
            self.timer_fired.resize(ep + 1, false);
        }
        self.timer_fired[ep] = true;
    }

    /// Requester endpoint `ep` (of host `h`) sends a packet its stack tags `timeout` (resent
    /// for a timer) or `other` (new data, or a Go-Back-N resend for a NAK): the first
    /// timeout-tagged packet after an expiry counts one timeout; an `other` packet first means
    /// the expiry made the QP resend nothing (or a NAK overtook it). Resends for selective NAKs
    /// and header-only packets leave it pending (DCP serves those before a timeout's round).
    pub(crate) fn requester_sent(&mut self, ep: usize, h: usize, timeout: bool, other: bool) {
        let Some(f) = self.timer_fired.get_mut(ep) else { return };
        if *f && timeout {
            *f = false;
            self.host(h).local_ack_timeout_err += 1;
        } else if other {
            *f = false;
        }
    }

    /// Connection `conn`'s requester (on host `h`) found the READ response `want` missing:
    /// counted once per PSN.
    pub(crate) fn implied_nak(&mut self, conn: usize, h: usize, want: u32) {
        if self.implied_at.len() <= conn {
            self.implied_at.resize(conn + 1, None);
        }
        if self.implied_at[conn] != Some(want) {
            self.implied_at[conn] = Some(want);
            self.host(h).implied_nak_seq_err += 1;
        }
    }
}
