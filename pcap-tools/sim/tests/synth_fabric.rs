//! The fabric on its own, driven by test-only endpoints that have no reliability at all: a
//! "blaster" requester that puts every packet of a message in its NIC's FIFO the moment it is posted
//! (plain RC WRITEs, or DCP-tagged ones), and a sink responder that counts what arrives. With
//! these the fabric's own properties are checked independently of the reference stacks: timing,
//! loss statistics, what each tap sees, trimming and the control queue, ECN and CNPs,
//! reordering across paths, and determinism.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use rocescope_stacks::rng::Rng;
use rocescope_sim::sim::{
    self, DropCause, Fabric, FabricConfig, Fate, Kind, LossModel, LossPlace, Routing, TapPoint,
};
use rocescope_sim::synth::conn_config;
use rocescope_sim::synth::SynthOptions;
use rocescope_stacks::{message_byte, Action, ConnConfig, Endpoint, Message, Nanos, Requester, TxInfo};
use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ext::dcp::{self, TAG_DATA, TAG_HO};
use rocescope_codec::ib::{DcpethRepr, RethRepr};
use rocescope_codec::{Frame, Profile};

/// Sends each message's packets at once, never retransmits.
struct Blaster {
    cfg: ConnConfig,
    dcp: bool,
    psn: u32,
}

impl Endpoint for Blaster {
    fn on_frame(&mut self, _now: Nanos, _frame: &Frame<'_>, _out: &mut Vec<Action>) {}
    fn on_timer(&mut self, _now: Nanos, _token: u64, _out: &mut Vec<Action>) {}
}

impl Requester for Blaster {
    fn post(&mut self, _now: Nanos, msg: Message, out: &mut Vec<Action>) {
        let mtu = self.cfg.mtu as usize;
        let n = (msg.len as usize).div_ceil(mtu).max(1);
        for i in 0..n {
            let payload: Vec<u8> =
                (i * mtu..((i + 1) * mtu).min(msg.len as usize)).map(|b| message_byte(msg.id, b as u64)).collect();
            let op = match (n, i) {
                (1, _) => 0x0A,
                (_, 0) => 0x06,
                (_, i) if i == n - 1 => 0x08,
                _ => 0x07,
            };
            let dest = self.cfg.responder.qpn;
            let mut r =
                if self.dcp { RoceRepr::new_dcp(op, dest, self.psn) } else { RoceRepr::new(op, dest, self.psn) }
                    .with_payload(&payload);
            if self.dcp {
                r.dcpeth = Some(DcpethRepr { msn: msg.id as u32 & 0xff_ffff, sretryno: 0 });
            }
            if r.reth.is_some() {
                r.reth = Some(RethRepr { va: 0x1000 + (i * mtu) as u64, r_key: 1, dma_len: msg.len });
            }
            let (std::net::IpAddr::V4(s), std::net::IpAddr::V4(d)) = (self.cfg.requester.ip, self.cfg.responder.ip)
            else {
                panic!()
            };
            let tos = if self.dcp { dcp::with_tag(self.cfg.tos, 2, TAG_DATA) } else { self.cfg.tos };
            let mut fr = FrameRepr::new(NetRepr::Ipv4 { src: s.octets(), dst: d.octets(), tos, ttl: 64, ident: 0 }, r);
            fr.eth_src = self.cfg.requester.mac;
            fr.eth_dst = self.cfg.responder.mac;
            fr.udp_src = self.cfg.udp_sport;
            out.push(Action::Transmit {
                frame: fr.to_vec(),
                info: TxInfo { psn: self.psn, msg: Some(msg.id), retx: None },
            });
            self.psn = (self.psn + 1) & 0xff_ffff;
        }
        out.push(Action::Completed { msg: msg.id });
    }
    fn idle(&self) -> bool {
        true
    }
    // The blaster bypasses the NIC scheduler: its frames are immediate transmissions, queued in
    // the host NIC's FIFO at once like control frames.
    fn ready(&self) -> bool {
        false
    }
    fn pull(&mut self, _now: Nanos, _out: &mut Vec<Action>) -> bool {
        false
    }
}

/// What the sinks saw.
#[derive(Default)]
struct Seen {
    data: u64,
    ho: u64,
    /// PSNs in arrival order.
    psns: Vec<u32>,
}

struct Sink {
    seen: Rc<RefCell<Seen>>,
    per_msg: HashMap<u64, u32>,
    packets_per_msg: u32,
    msg_len: u32,
}

impl Endpoint for Sink {
    fn on_frame(&mut self, _now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        let Some(p) = frame.roce() else { return };
        let mut s = self.seen.borrow_mut();
        if frame.tos().map(|t| dcp::tag(t, 2)) == Some(TAG_HO) && frame.profile() == Profile::Dcp {
            s.ho += 1;
            return;
        }
        s.data += 1;
        s.psns.push(p.bth().psn());
        // Message id: the DCP MSN, else from the PSN (the tests post equal messages).
        let msg = p.dcpeth().map(|d| d.msn() as u64).unwrap_or(s.data / self.packets_per_msg as u64);
        let c = self.per_msg.entry(msg).or_default();
        *c += 1;
        if *c == self.packets_per_msg {
            out.push(Action::Delivered { msg, len: self.msg_len, intact: true });
        }
    }
    fn on_timer(&mut self, _now: Nanos, _token: u64, _out: &mut Vec<Action>) {}
}

struct Run {
    fabric: Fabric<'static>,
    seen: Vec<Rc<RefCell<Seen>>>,
    pcap: Rc<RefCell<Vec<u8>>>,
}

/// A `Write` into a shared buffer, so the test can read the capture after the run.
struct Shared(Rc<RefCell<Vec<u8>>>);
impl std::io::Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn run(cfg: FabricConfig, dcp: bool, messages: u32, msg_len: u32) -> Run {
    let pcap = Rc::new(RefCell::new(Vec::new()));
    let names: Vec<&str> = cfg.taps.iter().map(|t| t.name()).collect();
    let w = rocescope_analysis::capture::CaptureWriter::new(Box::new(Shared(pcap.clone())) as Box<dyn std::io::Write>, &names)
        .unwrap();
    let senders = cfg.senders;
    let mut fabric = Fabric::new(cfg, Some(w));
    let opts = SynthOptions::default();
    let mut rng = Rng::new(9, 9);
    let mut seen = Vec::new();
    for i in 0..senders {
        let cc = conn_config(&opts, &fabric, i, &mut rng);
        let s = Rc::new(RefCell::new(Seen::default()));
        seen.push(s.clone());
        let ppm = msg_len.div_ceil(cc.mtu).max(1);
        let req = Box::new(Blaster { cfg: cc.clone(), dcp, psn: cc.start_psn });
        let resp = Box::new(Sink { seen: s, per_msg: HashMap::new(), packets_per_msg: ppm, msg_len });
        let c = fabric.add_connection(i, cc, req, resp);
        for m in 0..messages as u64 {
            fabric.post(c, 0, Message { id: m, op: rocescope_stacks::Op::Write, len: msg_len });
        }
    }
    fabric.run(None).unwrap();
    Run { fabric, seen, pcap }
}

fn base() -> FabricConfig {
    FabricConfig { taps: vec![TapPoint::Sender, TapPoint::Receiver, TapPoint::Fabric], ..Default::default() }
}

#[test]
fn serialization_and_propagation_timing() {
    let r = run(base(), false, 1, 4096);
    let f = &r.fabric;
    // 4 WRITE packets of 1024 bytes; the first carries a RETH: 1098 bytes, 1122 on the wire,
    // 89.76 ns at 100 Gb/s.
    assert_eq!(sim::ser_ns(sim::wire_bytes(1098), 100_000_000_000), 90);
    let ser = |tx: u32| sim::ser_ns(sim::wire_bytes(f.txs[tx as usize].len as usize), 100_000_000_000);
    let sender: Vec<_> = f.tap_frames.iter().filter(|t| t.tap == 0).collect();
    let receiver: Vec<_> = f.tap_frames.iter().filter(|t| t.tap == 1).collect();
    assert_eq!(sender.len(), 4);
    assert_eq!(receiver.len(), 4);
    assert_eq!(sender[0].time, 0);
    for w in sender.windows(2) {
        assert_eq!(w[1].time - w[0].time, ser(w[0].tx), "back-to-back at line rate");
        assert!(!w[1].incoming);
    }
    // Three hops (s0>sw0, sw0>sw1, sw1>r0), each 1 µs plus a store-and-forward serialization.
    assert_eq!(receiver[0].time, 3 * (1000 + ser(receiver[0].tx)));
    assert!(receiver.iter().all(|fr| fr.incoming));
    assert_eq!(r.seen[0].borrow().data, 4);
    // Frames are numbered 1.. over the whole file in time order.
    let nums: Vec<u64> = f.tap_frames.iter().map(|t| t.frame).collect();
    assert_eq!(nums, (1..=nums.len() as u64).collect::<Vec<_>>());
    assert!(f.tap_frames.windows(2).all(|w| w[0].time <= w[1].time));
}

#[test]
fn bernoulli_loss_rate_and_tap_visibility() {
    let cfg = FabricConfig { loss: LossModel { p: 0.05, burst: None }, seed: 11, ..base() };
    let r = run(cfg, false, 50, 64 * 1024);
    let f = &r.fabric;
    let total = f.txs.len() as f64;
    let lost: Vec<_> = f.txs.iter().filter(|t| matches!(t.fate, Fate::Dropped { .. })).collect();
    let rate = lost.len() as f64 / total;
    assert!((0.035..0.065).contains(&rate), "loss rate {rate}");
    assert!(lost.iter().all(|t| matches!(t.fate, Fate::Dropped { cause: DropCause::Link, .. })));
    // Lost on the fabric link: seen by the sender and the fabric tap (at sw0, upstream of the
    // loss), never by the receiver.
    for t in &lost {
        let at: Vec<u8> = f.tap_frames.iter().filter(|fr| fr.tx == t.id).map(|fr| fr.tap).collect();
        assert!(at.contains(&0) && !at.contains(&1), "tx {} seen at {at:?}", t.id);
        // The fabric tap watches path 0, the only path.
        assert!(at.contains(&2));
    }
    assert_eq!(r.seen[0].borrow().data as usize, f.txs.len() - lost.len());
}

#[test]
fn gilbert_elliott_losses_come_in_bursts() {
    // Good→bad 0.5 %, bad→good 25 %: bursts of 4 on average, ~2 % of frames lost.
    let cfg = FabricConfig { loss: LossModel { p: 0.0, burst: Some((0.005, 0.25)) }, seed: 5, ..base() };
    let r = run(cfg, false, 100, 64 * 1024);
    let f = &r.fabric;
    let lost: Vec<bool> = f.txs.iter().map(|t| matches!(t.fate, Fate::Dropped { .. })).collect();
    let n = lost.iter().filter(|&&l| l).count();
    let bursts = lost.windows(2).filter(|w| !w[0] && w[1]).count() + lost[0] as usize;
    let mean = n as f64 / bursts as f64;
    assert!(n > 50, "{n} lost");
    assert!((2.5..6.0).contains(&mean), "mean burst {mean} ({n} lost in {bursts} bursts)");
}

#[test]
fn spraying_over_paths_with_delay_differences_reorders() {
    let cfg = FabricConfig { paths: 8, reorder_ns: 4000, routing: Routing::Spray, seed: 3, ..base() };
    let r = run(cfg, false, 4, 16 * 1024);
    let psns = &r.seen[0].borrow().psns;
    assert_eq!(psns.len(), 64);
    let inversions = psns.windows(2).filter(|w| sim::psn_lt(w[1], w[0])).count();
    assert!(inversions > 5, "{inversions} inversions");
    // ECMP keeps one flow on one path: no reordering.
    let cfg = FabricConfig { paths: 8, reorder_ns: 4000, routing: Routing::Ecmp, seed: 3, ..base() };
    let r = run(cfg, false, 4, 16 * 1024);
    let psns = &r.seen[0].borrow().psns;
    assert!(psns.windows(2).all(|w| sim::psn_lt(w[0], w[1])));
    // The fabric tap watches one path of eight: it sees some of the sprayed packets only.
    let cfg = FabricConfig { paths: 8, reorder_ns: 4000, routing: Routing::Spray, seed: 3, ..base() };
    let r = run(cfg, false, 4, 16 * 1024);
    let fabric_frames = r.fabric.tap_frames.iter().filter(|t| t.tap == 2).count();
    assert!(fabric_frames > 0 && fabric_frames < 32, "{fabric_frames}");
}

#[test]
fn adaptive_routing_balances_an_incast() {
    // Four senders through four paths at host rate (no non-blocking core): adaptive routing
    // spreads them, so nothing queues beyond a few packets.
    let cfg = FabricConfig {
        senders: 4,
        paths: 4,
        routing: Routing::Adaptive,
        fabric_rate_bps: Some(100_000_000_000),
        queue_bytes: 1 << 30,
        seed: 2,
        ..base()
    };
    let r = run(cfg, false, 4, 64 * 1024);
    let per_path = |f: &Fabric<'_>| f.tap_frames.iter().filter(|t| t.tap == 2).count();
    let ar = per_path(&r.fabric);
    let cfg = FabricConfig {
        senders: 4,
        paths: 4,
        routing: Routing::Ecmp,
        fabric_rate_bps: Some(100_000_000_000),
        queue_bytes: 1 << 30,
        seed: 2,
        ..base()
    };
    let ecmp = run(cfg, false, 4, 64 * 1024);
    // 1024 packets over 4 paths: AR puts about a quarter on path 0.
    assert!((150..400).contains(&ar), "adaptive put {ar} of 1024 on path 0");
    assert!(r.fabric.stats.end_ns <= ecmp.fabric.stats.end_ns);
}

#[test]
fn queue_overflow_drops_non_dcp_and_trims_dcp() {
    // Four senders into one receiver port with a small queue.
    let mk = |trim| FabricConfig { senders: 4, queue_bytes: 20_000, trim, profile: Profile::Dcp, seed: 4, ..base() };
    let r = run(mk(false), true, 4, 32 * 1024);
    let s = r.fabric.stats;
    assert!(s.dropped > 0 && s.trimmed == 0);
    assert!(r
        .fabric
        .txs
        .iter()
        .all(|t| !matches!(t.fate, Fate::Dropped { .. })
            || matches!(t.fate, Fate::Dropped { cause: DropCause::Queue, .. })));
    let r = run(mk(true), true, 4, 32 * 1024);
    let s = r.fabric.stats;
    assert!(s.trimmed > 0);
    assert_eq!(s.dropped, 0, "{s:?}");
    let ho: u64 = r.seen.iter().map(|x| x.borrow().ho).sum();
    let data: u64 = r.seen.iter().map(|x| x.borrow().data).sum();
    assert_eq!(ho, s.trimmed);
    assert_eq!(ho + data, 4 * 4 * 32);
    // The receiver tap sees trimmed packets in their header-only form: 60 bytes, tag 11, and
    // they decode without warnings under the DCP profile.
    let trimmed: Vec<_> = r.fabric.tap_frames.iter().filter(|t| t.tap == 1 && t.trimmed).collect();
    assert_eq!(trimmed.len() as u64, ho);
    check_capture(&r.pcap.borrow(), Profile::Dcp);
}

/// Every frame decodes without warnings and with a good (or, header-only, absent) ICRC.
fn check_capture(bytes: &[u8], profile: Profile) {
    let mut rd = rocescope_analysis::capture::CaptureReader::new(bytes).unwrap();
    let opts = rocescope_codec::DecodeOptions::with_profile(profile);
    let mut n = 0;
    while let Some(rec) = rd.next_record().unwrap() {
        n += 1;
        let f = Frame::parse(rocescope_codec::LinkType::Ethernet, rec.data, rec.orig_len as usize, &opts);
        assert!(f.warnings.is_empty(), "frame {}: {:?}", rec.number, f.warnings);
        let ok = matches!(f.icrc_status(), rocescope_codec::IcrcStatus::Good)
            || (f.icrc_status() == rocescope_codec::IcrcStatus::Absent
                && f.tos().map(|t| dcp::tag(t, 2)) == Some(TAG_HO));
        assert!(ok, "frame {}: ICRC {:?}", rec.number, f.icrc_status());
    }
    assert!(n > 0);
}

#[test]
fn wrr_weight_of_section_4_2_keeps_the_control_queue_lossless() {
    // Worst case of §4.2: N−1 senders blast at line rate into one port and (almost) every data
    // packet is trimmed. With the §4.2 weight the control queue drains as fast as it fills.
    let mk = |w: Option<f64>| FabricConfig {
        senders: 8,
        queue_bytes: 16_384,
        trim: true,
        wrr_weight: w,
        control_queue_bytes: 4096,
        profile: Profile::Dcp,
        taps: vec![TapPoint::Receiver],
        seed: 8,
        ..base()
    };
    let auto = mk(None).effective_wrr_weight();
    // r = (1102+24)/(60+24), N = 9: w = 8/(r−8).
    let r = 1126.0 / 84.0;
    assert!((auto - 8.0 / (r - 8.0)).abs() < 1e-9, "{auto}");
    let good = run(mk(None), true, 16, 64 * 1024);
    assert!(good.fabric.stats.trimmed > 1000, "{:?}", good.fabric.stats);
    assert_eq!(good.fabric.stats.ho_dropped, 0, "{:?}", good.fabric.stats);
    let small = run(mk(Some(auto / 4.0)), true, 16, 64 * 1024);
    assert!(small.fabric.stats.ho_dropped > 0, "{:?}", small.fabric.stats);
    assert!(small.fabric.txs.iter().any(|t| matches!(t.fate, Fate::Dropped { cause: DropCause::ControlQueue, .. })));
}

#[test]
fn ecn_marks_and_one_cnp_per_qp_per_interval() {
    let cfg = FabricConfig { senders: 4, ecn_threshold: Some(5_000), cnp_interval_ns: 2_000, seed: 6, ..base() };
    let r = run(cfg, false, 8, 32 * 1024);
    let f = &r.fabric;
    assert!(f.stats.ce_marked > 0);
    assert!(f.stats.cnps > 0);
    let cnps: Vec<_> = f.txs.iter().filter(|t| t.kind == Kind::Cnp).collect();
    assert_eq!(cnps.len() as u64, f.stats.cnps);
    for c in 0..4u32 {
        let times: Vec<u64> = cnps.iter().filter(|t| t.conn == c).map(|t| t.sent).collect();
        assert!(times.windows(2).all(|w| w[1] - w[0] >= 2_000), "conn {c}: {times:?}");
    }
    // CNPs go back to the senders and end at their NICs; the sender tap sees s0's.
    assert!(cnps.iter().all(|t| t.to_requester && matches!(t.fate, Fate::Delivered { .. })));
    assert!(f.tap_frames.iter().any(|fr| fr.tap == 0 && fr.incoming && f.txs[fr.tx as usize].kind == Kind::Cnp));
    // Marked frames are CE at the receiver and still verify (ToS is outside the ICRC).
    assert!(f.tap_frames.iter().any(|fr| fr.tap == 1 && fr.ce));
    check_capture(&r.pcap.borrow(), Profile::Std);
}

#[test]
fn loss_only_where_and_in_the_direction_asked() {
    let cfg =
        FabricConfig { loss: LossModel { p: 0.2, burst: None }, loss_place: LossPlace::Receiver, seed: 12, ..base() };
    let r = run(cfg, false, 10, 16 * 1024);
    let f = &r.fabric;
    let places: std::collections::BTreeSet<&str> = f
        .txs
        .iter()
        .filter_map(|t| match t.fate {
            Fate::Dropped { place, .. } => Some(f.places[place as usize].as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(places.into_iter().collect::<Vec<_>>(), vec!["link sw1>r0"]);
    // Seen by the fabric tap, not by the receiver's.
    for t in f.txs.iter().filter(|t| matches!(t.fate, Fate::Dropped { .. })) {
        let at: Vec<u8> = f.tap_frames.iter().filter(|fr| fr.tx == t.id).map(|fr| fr.tap).collect();
        assert!(at.contains(&2) && !at.contains(&1));
    }
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let mk = |seed| FabricConfig {
        paths: 4,
        routing: Routing::Spray,
        reorder_ns: 1000,
        loss: LossModel { p: 0.05, burst: Some((0.01, 0.3)) },
        seed,
        ..base()
    };
    let a = run(mk(21), false, 10, 16 * 1024);
    let b = run(mk(21), false, 10, 16 * 1024);
    let c = run(mk(22), false, 10, 16 * 1024);
    assert_eq!(*a.pcap.borrow(), *b.pcap.borrow());
    assert_ne!(*a.pcap.borrow(), *c.pcap.borrow());
}

#[test]
fn beyond_section_4_2s_range_the_weight_stays_finite_and_data_keeps_its_share() {
    // 16 senders into one port: N = 17, r = (1102+24)/(60+24) ≈ 13.4 ≤ N−1, where §4.2's
    // formula has no solution. The weight is designed for N−1 = ⌊r/2⌋ = 6: about 1.
    let mk = |w: Option<f64>| FabricConfig {
        senders: 16,
        queue_bytes: 16_384,
        trim: true,
        wrr_weight: w,
        control_queue_bytes: 64 * 1024,
        profile: Profile::Dcp,
        taps: vec![TapPoint::Receiver],
        seed: 8,
        ..base()
    };
    let r = 1126.0 / 84.0;
    let auto = mk(None).effective_wrr_weight();
    assert!((auto - 6.0 / (r - 6.0)).abs() < 1e-9, "{auto}");
    // Inside the formula's range it is unchanged: N = 22 (§6.3) with a 4 KB MTU.
    let big = FabricConfig { radix: Some(22), data_frame_bytes: 78 + 4096, ..mk(None) };
    let r4 = (78.0 + 4096.0 + 24.0) / 84.0;
    assert!((big.effective_wrr_weight() - 21.0 / (r4 - 21.0)).abs() < 1e-9);
    // A data frame shorter than two header-only ones: equal shares.
    assert_eq!(FabricConfig { data_frame_bytes: 50, ..mk(None) }.effective_wrr_weight(), 1.0);
    // On the wire, while header-only packets keep the control queue busy (from the first to the
    // last header-only frame at the receiver), data gets about 1/(1+w) of the port's bytes
    // with the finite weight, and nothing under strict priority.
    let share = |w: Option<f64>| {
        let run = run(mk(w), true, 4, 64 * 1024);
        let fr = &run.fabric.tap_frames;
        let first = fr.iter().position(|f| f.trimmed).unwrap();
        let last = fr.iter().rposition(|f| f.trimmed).unwrap();
        let (mut data, mut all) = (0u64, 0u64);
        for f in &fr[first..=last] {
            let b = if f.trimmed { 84 } else { sim::wire_bytes(run.fabric.txs[f.tx as usize].len as usize) };
            all += b;
            if !f.trimmed {
                data += b;
            }
        }
        data as f64 / all as f64
    };
    let finite = share(None);
    let strict = share(Some(f64::INFINITY));
    let want = 1.0 / (1.0 + auto);
    eprintln!("w {auto}: data share {finite} (want {want}); strict priority {strict}");
    assert!(finite > want * 0.5 && finite < want * 1.5, "data share {finite}, want ≈ {want}");
    assert!(strict < want * 0.2, "strict priority: data share {strict}");
}
