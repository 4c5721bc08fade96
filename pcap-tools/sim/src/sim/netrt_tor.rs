//! NetRT in the fabric's top-of-rack switches (NetRT paper, seed 003 §III; the switch logic is
//! `rocescope_stacks::netrt`, docs/stacks.md "NetRT"). A ToR is a switch with hosts: the
//! leaf-spine's leaves, the dumbbell's two switches. For a request-direction data packet of a
//! connection between hosts of different ToRs:
//! - the **source ToR** (the packet came in from a host, and leaves into the fabric) keeps a
//!   copy in the pool of the host's port ([`Pool`], one BDP by default);
//! - the **destination ToR** (the packet came in from the fabric, and leaves to a host) runs the
//!   flow's state machine ([`DstFlow`]): in order it passes the packet on, out of order it holds
//!   it and asks the source ToR for what is missing.
//!
//! A request travels from the destination ToR to the source ToR "at the address of the flow
//! served" (IP source the data receiver, destination the data sender; the flow's UDP source
//! port and DestQP), and an unfulfilled request the other way; the ToR at the far end takes it
//! off the wire (§III-D), so only fabric links carry them. The source ToR resends at NetRT's
//! rate (`rate.rs`) through the egress port's high-priority queue, each resend marked (BTH byte
//! 4 bit 0, which the destination ToR clears before the host sees it), and pauses the sender's
//! port with a PFC frame while K_l bytes or more are asked of it (over its connections). Resends and messages are the
//! switch's transmissions ([`Origin::Switch`]); packets the destination ToR drops are
//! [`DropCause::Reorder`].
//!
//! Not modelled: a ToR's shared buffer (the pool and the reordering buffer are outside the
//! queues' thresholds); random loss in `--loss-mode trim` at the high-priority queue (the wire's
//! loss, `drop`, applies to it as to any frame); NetRT for READ (`StackKind::supports`).

use std::collections::VecDeque;

use rocescope_codec::build::{FrameRepr, NetRepr};
use rocescope_codec::ext::netrt::{self as wire, NetrtRepr, RTX_MARK};
use rocescope_codec::fxhash::{FxHashMap, FxHashSet};
use rocescope_stacks::netrt::dst_tor::{DstAction, DstFlow, State};
use rocescope_stacks::netrt::pool::Pool;
use rocescope_stacks::netrt::{rate, NetrtConfig};

use super::*;

/// A duplicate in a source ToR's pool: the packet's bytes as it entered, and its message.
#[derive(Clone)]
pub(super) struct Dup {
    bytes: Vec<u8>,
    msg: Option<u64>,
    /// The transmission copied ([`TxRec::id`]).
    tx_id: u32,
}

struct Resend {
    conn: u32,
    psn: u32,
    /// The sender's port on this switch (what a pause stops).
    port: u32,
    dup: Dup,
}

struct Flow {
    state: DstFlow<u32>,
    /// When the pending request timer fires (a timer event at another time is stale).
    timer_at: Option<Nanos>,
}

#[derive(Default)]
struct Tor {
    /// Source side: per host port of the switch (the port facing the host), its pool.
    pools: FxHashMap<u32, Pool<u32, Dup>>,
    /// Destination side: per connection, its flow state.
    flows: FxHashMap<u32, Flow>,
    /// Source side: resends waiting for their turn at NetRT's rate.
    resends: VecDeque<Resend>,
    /// Per connection: bytes asked for and not yet resent (the rate formula's N).
    pending: FxHashMap<u32, u64>,
    /// The same per sender's port (PFC pauses a port, not a connection).
    port_pending: FxHashMap<u32, u64>,
    /// A `NetrtResend` event is scheduled.
    resend_scheduled: bool,
    /// Host ports this ToR paused.
    paused: FxHashSet<u32>,
}

/// Every ToR's NetRT state.
pub(super) struct Tors {
    cfg: NetrtConfig,
    tors: FxHashMap<u16, Tor>,
    actions: Vec<DstAction<u32>>,
}

impl Tors {
    pub(super) fn new(cfg: NetrtConfig) -> Tors {
        Tors { cfg, tors: FxHashMap::default(), actions: Vec::new() }
    }
}

/// Where BTH byte 4 is in an Ethernet · IPv4/IPv6 · UDP · BTH frame.
fn bth_byte4(b: &[u8]) -> Option<usize> {
    let h = Hdr::of(b)?;
    let at = h.ip + if h.v4 { 20 } else { 40 } + 8 + 4;
    (h.roce && at < b.len()).then_some(at)
}

impl Fabric<'_> {
    /// The port of switch `sw` that leads straight to host `dst`, if it hangs off `sw`.
    fn netrt_host_port(&self, sw: u16, dst: u16) -> Option<u32> {
        let cands = self.nodes[sw as usize].routes.get(dst as usize)?;
        match cands[..] {
            [p] if !self.ports[self.ports[p as usize].peer as usize].is_switch => Some(p),
            _ => None,
        }
    }

    /// NetRT's look at a packet switch `sw` is forwarding (after the TTL): true when a ToR
    /// took it (held, dropped, consumed, or sent on itself), false to forward it as usual.
    pub(super) fn netrt_intercept(&mut self, sw: u16, pkt: u32, in_port: u32) -> bool {
        let (tx, dst) = {
            let p = self.pkt(pkt);
            (p.tx, p.dst_host)
        };
        if tx == NO_TX || dst == u16::MAX {
            return false;
        }
        let from_host = !self.ports[self.ports[in_port as usize].peer as usize].is_switch;
        let to_host = self.netrt_host_port(sw, dst);
        let t = &self.txs[tx as usize];
        let (conn, origin, kind, to_requester, psn) = (t.conn, t.origin, t.kind, t.to_requester, t.psn);
        if origin == Origin::Switch && kind == Kind::Other {
            // A NetRT message reaching the ToR of the host it is addressed to: taken off here.
            if !from_host && to_host.is_some() {
                self.netrt_message(sw, pkt);
                return true;
            }
            return false;
        }
        if kind != Kind::Data || to_requester {
            return false;
        }
        match (from_host, to_host) {
            (true, None) => {
                // Source ToR: a copy into the pool of the host's port.
                let (cap, age) = self.netrt.as_ref().map_or((0, 0), |n| (n.cfg.pool_bytes, n.cfg.max_age_ns));
                let now = self.now;
                let t = &self.txs[tx as usize];
                let dup = Dup { bytes: self.pkt(pkt).bytes.clone(), msg: t.msg, tx_id: t.id };
                let len = dup.bytes.len() as u32;
                let n = self.netrt.as_mut().expect("NetRT is on");
                let pool = n.tors.entry(sw).or_default().pools.entry(in_port).or_insert_with(|| Pool::new(cap, age));
                let before = pool.evicted;
                pool.insert(conn, psn, len, dup, now);
                self.stats.netrt.evicted += pool.evicted - before;
                false
            }
            (false, Some(host_port)) => {
                // Destination ToR: the flow's state machine.
                let marked = bth_byte4(&self.pkt(pkt).bytes).is_some_and(|at| self.pkt(pkt).bytes[at] & RTX_MARK != 0);
                let n = self.netrt.as_mut().expect("NetRT is on");
                let cfg = n.cfg;
                let mut actions = std::mem::take(&mut n.actions);
                let flow = n
                    .tors
                    .entry(sw)
                    .or_default()
                    .flows
                    .entry(conn)
                    .or_insert_with(|| Flow { state: DstFlow::new(&cfg), timer_at: None });
                let held_before = flow.state.held();
                flow.state.on_data(psn, marked, pkt, &mut actions);
                self.stats.netrt.held += (flow.state.held() > held_before) as u64;
                self.netrt_dst_actions(sw, conn, host_port, &mut actions);
                self.netrt.as_mut().expect("NetRT is on").actions = actions;
                true
            }
            _ => false,
        }
    }

    /// Carries out what a destination ToR's flow asked.
    fn netrt_dst_actions(&mut self, sw: u16, conn: u32, host_port: u32, actions: &mut Vec<DstAction<u32>>) {
        for a in actions.drain(..) {
            match a {
                DstAction::Forward(p) => {
                    // The host sees the packet as its sender sent it: the mark is cleared.
                    let b = &mut self.packets[p as usize].as_mut().expect("live packet").bytes;
                    if let Some(at) = bth_byte4(b) {
                        b[at] &= !RTX_MARK;
                    }
                    self.enqueue_switch(host_port, p);
                }
                DstAction::Drop(p, _) => {
                    self.stats.netrt.dropped += 1;
                    let name = format!("{} (NetRT reordering)", self.nodes[sw as usize].name);
                    self.drop_packet(p, DropCause::Reorder, name);
                }
                DstAction::Request { epsn, bitmap } => {
                    self.stats.netrt.requests += 1;
                    let repr = NetrtRepr::Request { epsn, bitmap };
                    self.netrt_send(sw, conn, repr, true);
                    // The interval timer runs from the request that entered ReTx, then from each
                    // of its own; a request for a new gap does not move it.
                    let n = self.netrt.as_mut().expect("NetRT is on");
                    let at = self.now + n.cfg.request_interval_ns;
                    if let Some(f) = n.tors.get_mut(&sw).and_then(|t| t.flows.get_mut(&conn)) {
                        if f.timer_at.is_none() {
                            f.timer_at = Some(at);
                            self.queue.push(at, Ev::NetrtRequest { sw, conn });
                        }
                    }
                }
                DstAction::State(State::Waiting) => self.stats.netrt.waiting += 1,
                DstAction::State(_) => {}
            }
        }
    }

    /// A destination ToR's request timer.
    pub(super) fn netrt_request_timer(&mut self, sw: u16, conn: u32) {
        let now = self.now;
        let Some(n) = self.netrt.as_mut() else { return };
        let Some(f) = n.tors.get_mut(&sw).and_then(|t| t.flows.get_mut(&conn)) else { return };
        if f.timer_at != Some(now) {
            return;
        }
        f.timer_at = None;
        let mut actions = std::mem::take(&mut n.actions);
        f.state.on_timer(&mut actions);
        let dst = self.conns[conn as usize].receiver as u16;
        let Some(host_port) = self.netrt_host_port(sw, dst) else {
            self.netrt.as_mut().expect("NetRT is on").actions = actions;
            return;
        };
        self.netrt_dst_actions(sw, conn, host_port, &mut actions);
        self.netrt.as_mut().expect("NetRT is on").actions = actions;
    }

    /// A NetRT message taken off at ToR `sw`: a request (at the source ToR) or an unfulfilled
    /// request (at the destination ToR).
    fn netrt_message(&mut self, sw: u16, pkt: u32) {
        let p = self.take(pkt);
        let tx = p.tx as usize;
        self.txs[tx].fate = Fate::Delivered { at: self.now };
        let conn = self.txs[tx].conn;
        self.release_tx(p.tx);
        let f =
            Frame::parse(LinkType::Ethernet, &p.bytes, p.bytes.len(), &DecodeOptions { verify: false, ..self.decode });
        let Some(body) = f.roce().map(|r| r.payload()) else { return };
        let (Some(&ty), Some(psn_bytes)) = (body.get(wire::field::TYPE), body.get(wire::field::PSN)) else { return };
        let psn_ = psn_bytes.iter().fold(0u32, |a, &b| a << 8 | b as u32);
        match ty {
            wire::TYPE_REQUEST => {
                let Some(bits) = body.get(wire::field::BITMAP).and_then(|b| <[u8; 16]>::try_from(b).ok()) else {
                    return;
                };
                self.netrt_serve(sw, conn, psn_, &bits);
            }
            wire::TYPE_UNFULFILLED => {
                let dst = self.conns[conn as usize].receiver as u16;
                let Some(host_port) = self.netrt_host_port(sw, dst) else { return };
                let n = self.netrt.as_mut().expect("NetRT is on");
                let Some(fl) = n.tors.get_mut(&sw).and_then(|t| t.flows.get_mut(&conn)) else { return };
                let mut actions = std::mem::take(&mut n.actions);
                fl.state.on_unfulfilled(psn_, &mut actions);
                self.netrt_dst_actions(sw, conn, host_port, &mut actions);
                self.netrt.as_mut().expect("NetRT is on").actions = actions;
            }
            _ => {}
        }
    }

    /// The source ToR serves a request: resends what its pool holds (paced), answers an
    /// unfulfilled request for the lowest PSN it lacks, and pauses the sender when much is asked.
    fn netrt_serve(&mut self, sw: u16, conn: u32, epsn: u32, bitmap: &[u8; 16]) {
        let sender = self.topo.hosts[self.conns[conn as usize].sender];
        let host_port = self.ports[self.nodes[sender].ports[0] as usize].peer;
        let now = self.now;
        let n = self.netrt.as_mut().expect("NetRT is on");
        let cfg = n.cfg;
        let tor = n.tors.entry(sw).or_default();
        let pool = tor.pools.entry(host_port).or_insert_with(|| Pool::new(cfg.pool_bytes, cfg.max_age_ns));
        let served = pool.serve(conn, epsn, wire::requested(epsn, bitmap), now, cfg.request_interval_ns);
        // Resends still queued below the new ePSN are no longer wanted.
        let (pending, port_pending) = (&mut tor.pending, &mut tor.port_pending);
        tor.resends.retain(|r| {
            let keep = r.conn != conn || !psn::lt(r.psn, epsn);
            if !keep {
                let len = r.dup.bytes.len() as u64;
                let n = pending.entry(r.conn).or_default();
                *n = n.saturating_sub(len);
                let n = port_pending.entry(r.port).or_default();
                *n = n.saturating_sub(len);
            }
            keep
        });
        for (psn_, dup) in served.resend {
            // (One queued resend of a PSN is enough.)
            if tor.resends.iter().any(|r| r.conn == conn && r.psn == psn_) {
                continue;
            }
            *tor.pending.entry(conn).or_default() += dup.bytes.len() as u64;
            *tor.port_pending.entry(host_port).or_default() += dup.bytes.len() as u64;
            tor.resends.push_back(Resend { conn, psn: psn_, port: host_port, dup });
        }
        let asked = tor.port_pending.get(&host_port).copied().unwrap_or(0);
        let schedule = !tor.resends.is_empty() && !tor.resend_scheduled;
        tor.resend_scheduled |= schedule;
        let pause = asked >= cfg.k_low;
        if pause {
            tor.paused.insert(host_port);
        }
        if let Some(u) = served.unfulfilled {
            self.stats.netrt.unfulfilled += 1;
            self.netrt_send(sw, conn, NetrtRepr::Unfulfilled { psn: u }, false);
        }
        if pause {
            // Pause the sender for as long as the bytes asked of its port take at the resend rate.
            let line = self.cfg.effective_fabric_rate();
            let r = rate::resend_rate_bps(asked, &cfg, line);
            let quanta = rate::pause_quanta(asked, r, self.ports[host_port as usize].rate_bps);
            self.netrt_pfc(sw, host_port, quanta);
            self.stats.netrt.pauses += 1;
        }
        if schedule {
            self.queue.push(now, Ev::NetrtResend { sw });
        }
    }

    /// A source ToR's paced resends: at line rate while less than K_l bytes are asked for (the
    /// high-priority queue then paces them), else one per `wire bytes / R_r`.
    pub(super) fn netrt_resend(&mut self, sw: u16) {
        let line = self.cfg.effective_fabric_rate();
        loop {
            let Some(n) = self.netrt.as_mut() else { return };
            let cfg = n.cfg;
            let Some(tor) = n.tors.get_mut(&sw) else { return };
            let Some(r) = tor.resends.pop_front() else {
                tor.resend_scheduled = false;
                return;
            };
            let pending = tor.pending.entry(r.conn).or_default();
            let rate_bps = rate::resend_rate_bps(*pending, &cfg, line);
            *pending = pending.saturating_sub(r.dup.bytes.len() as u64);
            let port_pending = tor.port_pending.entry(r.port).or_default();
            *port_pending = port_pending.saturating_sub(r.dup.bytes.len() as u64);
            let resume = *port_pending < cfg.k_low && tor.paused.remove(&r.port);
            let len = r.dup.bytes.len();
            let mut bytes = r.dup.bytes;
            if cfg.mark {
                if let Some(at) = bth_byte4(&bytes) {
                    bytes[at] |= RTX_MARK;
                }
            }
            self.stats.netrt.resends += 1;
            let slot = self.netrt_transmit(sw, r.conn, bytes, r.psn, r.dup.msg);
            self.txs[slot as usize].copy_of = Some(r.dup.tx_id);
            if resume {
                self.netrt_pfc(sw, r.port, 0);
                self.stats.netrt.resumes += 1;
            }
            if rate_bps < line {
                self.queue.push(self.now + ser_ns(wire_bytes(len), rate_bps).max(1), Ev::NetrtResend { sw });
                return;
            }
        }
    }

    /// A PFC frame (pause for `quanta`, or resume with 0) from switch port `port` to its host.
    fn netrt_pfc(&mut self, sw: u16, port: u32, quanta: u16) {
        let bytes = pfc::pfc_frame(self.nodes[sw as usize].mac, pfc::ROCE_PRIORITY, quanta);
        self.queue_mac_control(port, bytes);
    }

    /// Sends a NetRT message from ToR `sw` for connection `conn`'s data flow: a request (from
    /// the destination ToR, `to_sender`) or an unfulfilled request (to the receiver's ToR), at
    /// the flow's addresses in the direction it travels.
    fn netrt_send(&mut self, sw: u16, conn: u32, repr: NetrtRepr, to_sender: bool) {
        let c = &self.conns[conn as usize].cfg;
        let (src, dst) = if to_sender { (c.responder, c.requester) } else { (c.requester, c.responder) };
        let body = repr.to_vec();
        let roce = repr.roce(self.cfg.params.netrt_opcode, c.responder.qpn, 0xffff, &body);
        let net = match (src.ip, dst.ip) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                NetRepr::Ipv4 { src: s.octets(), dst: d.octets(), tos: c.tos, ttl: 64, ident: 0 }
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                NetRepr::Ipv6 { src: s.octets(), dst: d.octets(), traffic_class: c.tos, flow_label: 0, hop_limit: 64 }
            }
            _ => return,
        };
        let mut f = FrameRepr::new(net, roce);
        f.eth_src = self.nodes[sw as usize].mac;
        f.eth_dst = dst.mac;
        f.udp_src = c.udp_sport;
        let bytes = f.to_vec();
        self.netrt_transmit(sw, conn, bytes, repr.psn(), None);
    }

    /// A frame switch `sw` puts into the fabric itself, on the high-priority queue of its route.
    /// Returns its record's slot in [`Fabric::txs`].
    fn netrt_transmit(&mut self, sw: u16, conn: u32, bytes: Vec<u8>, psn_: u32, msg: Option<u64>) -> u32 {
        let (slot, _, pkt) = self.new_tx(conn, Origin::Switch, bytes, psn_, msg, None);
        let (dst, flow) = (self.pkt(pkt).dst_host, self.pkt(pkt).flow);
        let Some(port) = self.route(sw, dst, flow) else {
            let name = format!("{} (no route)", self.nodes[sw as usize].name);
            self.drop_packet(pkt, DropCause::NoEndpoint, name);
            return slot;
        };
        self.ports[port as usize].prio.push_back(pkt);
        self.kick(port);
        slot
    }
}
