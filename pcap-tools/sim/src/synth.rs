//! `rocescope synth`: builds a fabric from the options, puts one connection per sender on it
//! with the chosen reference stack, posts the messages, runs, and writes the pcapng and the
//! ground truth.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use rocescope_stacks::rng::Rng;
use super::sim::{
    AcceptModel, CongestionControl, Fabric, Red, FabricConfig, LossDir, LossMode, LossModel, LossPlace, Progress, Routing,
    RunStats, TapPoint, TopologyKind, Unfinished,
};
use super::topology::Topology;
use super::truth;
use rocescope_analysis::capture::CaptureWriter;
use rocescope_stacks::faults::{self, FaultSpec};
use rocescope_stacks::{
    erd, flor, new_pair, sdr, ConnConfig, Endpoint, Host, Message, Op, Requester, StackKind, Timeouts,
};

impl LossMode {
    /// The command line's default for `stack`: `trim` for DCP, as its paper measures loss
    /// (seed 000 §6.1 Fig. 10, §6.3 Fig. 17: loss made at the switches, which trim DCP data);
    /// `drop` for the others (a switch drops their packets whole, so `trim` would differ from
    /// `drop` only in the frame not occupying the lossy link).
    pub fn default_for(stack: StackKind) -> LossMode {
        if stack == StackKind::Dcp {
            LossMode::Trim
        } else {
            LossMode::Drop
        }
    }
}

/// Which operations the messages use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpChoice {
    One(Op),
    /// Cycle through the operations the stack supports.
    Mix,
}

impl OpChoice {
    pub fn parse(s: &str) -> Option<OpChoice> {
        if s == "mix" {
            Some(OpChoice::Mix)
        } else {
            Op::from_name(s).map(OpChoice::One)
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            OpChoice::One(op) => op.name(),
            OpChoice::Mix => "mix",
        }
    }
}

/// Who sends to whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// `incast` senders to one receiver (the dumbbell's only pattern). On a leaf-spine the
    /// receiver is the first host (`h0.0`) and the senders are taken from the other leaves
    /// first (leaf 1's hosts, then leaf 2's, …, then leaf 0's), so the incast crosses the
    /// spines.
    Incast,
    /// Every host sends to one other host and receives from one: a random derangement of the
    /// hosts drawn from the seed.
    Permutation,
    /// Every host sends to every other host.
    AllToAll,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Incast => "incast",
            Pattern::Permutation => "permutation",
            Pattern::AllToAll => "all-to-all",
        }
    }
    pub fn from_name(s: &str) -> Option<Pattern> {
        [Pattern::Incast, Pattern::Permutation, Pattern::AllToAll].into_iter().find(|p| p.name() == s)
    }
}

/// Everything `rocescope synth` takes (besides where to write).
#[derive(Clone, Debug)]
pub struct SynthOptions {
    pub stack: StackKind,
    /// Bernoulli loss probability per frame on the lossy links.
    pub loss: f64,
    /// Gilbert-Elliott transition probabilities (good→bad, bad→good).
    pub burst_loss: Option<(f64, f64)>,
    pub loss_on: LossPlace,
    pub loss_dir: LossDir,
    /// Where frames chosen for random loss are lost ([`LossMode`]; the command line's default
    /// is [`LossMode::default_for`] the stack).
    pub loss_mode: LossMode,
    pub reorder_ns: u64,
    pub paths: u32,
    pub routing: Routing,
    /// Messages per connection.
    pub messages: u32,
    pub message_size: u32,
    pub op: OpChoice,
    pub mtu: u32,
    pub rate_gbps: f64,
    pub fabric_rate_gbps: Option<f64>,
    pub delay_ns: u64,
    pub queue_bytes: u64,
    pub trim: bool,
    pub wrr_weight: Option<f64>,
    pub radix: Option<u32>,
    pub control_queue_bytes: u64,
    pub ecn_threshold: Option<u64>,
    /// RED ECN marking (default: the DCQCN paper's); `None` with no threshold: no marking.
    pub ecn_red: Option<Red>,
    pub cnp_interval_ns: u64,
    /// DCQCN's rate-increase timer `T` (the paper's 55 µs).
    pub dcqcn_timer_ns: u64,
    /// Senders (an N-to-1 incast when above 1).
    pub incast: u32,
    pub seed: u64,
    pub taps: Vec<TapPoint>,
    pub fabric_tap_path: u32,
    pub time_limit_ns: u64,
    /// GBN's local ACK timeout exponent t: 4.096 µs · 2^t (IBTA; 0: none). Default 14 ≈ 67 ms
    /// ([`rocescope_stacks::timeouts::DEFAULT_LOCAL_ACK_TIMEOUT`]).
    pub local_ack_timeout: u8,
    /// DCP's coarse timeout (ns) of a message's first round, doubled per round (default 1 ms,
    /// [`rocescope_stacks::timeouts::DCP_TIMEOUT_NS`]).
    pub dcp_timeout_ns: u64,
    /// One retransmission timeout for every stack instead of their own (`--rto`).
    pub rto_ns: Option<u64>,
    /// The no-progress watchdog (ns, 0: off); `None`: the default of [`SynthOptions::watchdog`].
    pub watchdog_ns: Option<u64>,
    pub ack_every: u32,
    pub bdp_packets: u32,
    pub msg_window: u32,
    pub retry_cnt: u8,
    /// Gap between two posts on a connection (0: all at time 0).
    pub post_interval_ns: u64,
    pub dcp_tag_shift: u8,
    /// Congestion control of the requesters' NICs (`--cc`).
    pub cc: CongestionControl,
    /// The fabric's shape.
    pub topology: TopologyKind,
    /// Who sends to whom (leaf-spine; the dumbbell is always an incast).
    pub pattern: Pattern,
    /// Lossless mode: PFC (`pfc.rs`).
    pub pfc: bool,
    /// Links that fail during the run: (link name, time ns).
    pub link_failures: Vec<(String, u64)>,
    /// Frames lost on purpose: (one-way link name, N) ([`FabricConfig::frame_drops`]).
    pub frame_drops: Vec<(String, u64)>,
    /// A fault on purpose (`--fault`, `rocescope_stacks::faults`): one end of connection
    /// [`Self::fault_connection`] misbehaves once; the truth's `summary.faults` says where.
    pub fault: Option<FaultSpec>,
    /// The connection (from 0) whose end [`Self::fault`] makes misbehave.
    pub fault_connection: u32,
    /// SDR's parameters (`--stack sdr-sr`/`sdr-ec` only).
    pub sdr: SdrOptions,
    /// NetRT: the source ToR's duplicate pool per host port, bytes (`None`: one BDP of the
    /// fabric rate and the idle round trip, at least 64 KiB).
    pub netrt_pool_bytes: Option<u64>,
    /// NetRT: the destination ToR's request interval, ns (`None`: the idle round trip).
    pub netrt_request_interval_ns: Option<u64>,
    /// Flor's UNIT_SIZE, bytes (`--flor-unit-size`; `--stack flor` only).
    pub flor_unit_size: u32,
}

/// What `synth` sets of an SDR connection (docs/stacks.md "SDR-RDMA"; `--sdr-*`, `--ec-*`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SdrOptions {
    /// `sdr-sr`: the receiver also NACKs missing chunks (SR_NACK).
    pub nack: bool,
    /// `sdr-ec`: k data and m parity chunks a submessage, and the code.
    pub k: u32,
    pub m: u32,
    pub code: sdr::Code,
    /// Packets a chunk, channels (UC QPs a generation), generations.
    pub chunk_packets: u32,
    pub channels: u32,
    pub generations: u32,
    /// RTO = RTT·(1 + α).
    pub alpha: f64,
    /// The round trip the timers are set from (`None`: [`SynthOptions::base_rtt_ns`]).
    pub rtt_ns: Option<u64>,
    /// Messages the receiver keeps receives posted for.
    pub recv_window: u32,
    /// SR_ACK coalescing (0: one per completed chunk).
    pub ack_period_ns: u64,
}

impl Default for SdrOptions {
    fn default() -> Self {
        SdrOptions {
            nack: false,
            k: 32,
            m: 8,
            code: sdr::Code::Mds,
            chunk_packets: 1,
            channels: 1,
            generations: 4,
            alpha: 2.0,
            rtt_ns: None,
            recv_window: 16,
            ack_period_ns: 0,
        }
    }
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            stack: StackKind::Gbn,
            loss: 0.0,
            burst_loss: None,
            loss_on: LossPlace::Fabric,
            loss_dir: LossDir::Both,
            loss_mode: LossMode::Drop,
            reorder_ns: 0,
            paths: 1,
            routing: Routing::Ecmp,
            messages: 8,
            message_size: 4096,
            op: OpChoice::One(Op::Write),
            mtu: 1024,
            rate_gbps: 100.0,
            fabric_rate_gbps: None,
            delay_ns: 1000,
            queue_bytes: 1024 * 1024,
            trim: false,
            wrr_weight: None,
            radix: None,
            control_queue_bytes: 64 * 1024,
            ecn_threshold: None,
            ecn_red: Some(Red::DCQCN),
            cnp_interval_ns: 50_000,
            dcqcn_timer_ns: 55_000,
            incast: 1,
            seed: 1,
            taps: vec![TapPoint::Sender, TapPoint::Receiver, TapPoint::Fabric],
            fabric_tap_path: 0,
            time_limit_ns: 10_000_000_000,
            local_ack_timeout: rocescope_stacks::timeouts::DEFAULT_LOCAL_ACK_TIMEOUT,
            dcp_timeout_ns: rocescope_stacks::timeouts::DCP_TIMEOUT_NS,
            rto_ns: None,
            watchdog_ns: None,
            ack_every: 4,
            bdp_packets: 128,
            msg_window: 8,
            retry_cnt: 7,
            post_interval_ns: 0,
            dcp_tag_shift: rocescope_codec::Params::default().dcp_tag_shift,
            cc: CongestionControl::Dcqcn,
            topology: TopologyKind::Dumbbell,
            pattern: Pattern::Incast,
            pfc: false,
            link_failures: Vec::new(),
            frame_drops: Vec::new(),
            fault: None,
            fault_connection: 0,
            sdr: SdrOptions::default(),
            netrt_pool_bytes: None,
            netrt_request_interval_ns: None,
            flor_unit_size: rocescope_codec::Params::default().flor_unit_size,
        }
    }
}

/// The default no-progress watchdog, in units of the longest wait a stack's timers can make
/// (GBN's local ACK timeout, IRN's RTO_high, DCP's coarse timeout at its largest back-off, or
/// `--rto`), and never below [`MIN_WATCHDOG_NS`]. No paper sets one; it is our choice: a stack
/// that makes no progress for four of its longest timeouts in a row is caught in a loop, not
/// recovering (GBN gives up after `--retry-cnt` ≤ 7 timeouts anyway).
pub const DEFAULT_WATCHDOG_TIMERS: u64 = 4;

/// The shortest default watchdog: 10 ms.
pub const MIN_WATCHDOG_NS: u64 = 10_000_000;

impl SynthOptions {
    /// The defaults `rocescope synth --stack STACK` runs with: for DCP, trimming on and random
    /// loss made at the switch (`--loss-mode trim`); otherwise [`SynthOptions::default`].
    pub fn for_stack(stack: StackKind) -> SynthOptions {
        SynthOptions {
            stack,
            trim: stack == StackKind::Dcp,
            loss_mode: LossMode::default_for(stack),
            ..Default::default()
        }
    }

    /// Every `--fail-link` names a link of the topology.
    pub fn check_links(&self) -> Result<(), String> {
        if self.link_failures.is_empty() && self.frame_drops.is_empty() {
            return Ok(());
        }
        let topo = Topology::new(self.fabric_config().shape());
        let one_way = |name: &str| {
            (0..topo.links.len()).any(|l| {
                let (ab, ba) = topo.link_names(l);
                ab == name || ba == name
            })
        };
        if let Some((name, n)) = self.frame_drops.iter().find(|(name, n)| *n == 0 || !one_way(name)) {
            return Err(format!(
                "--drop-frame {name}:{n}: no such one-way link, or N is 0 (links are named like s0>sw0, sw0>sw1#0, leaf0>spine1; N counts from 1)"
            ));
        }
        match self.link_failures.iter().find(|(name, _)| topo.link_by_name(name).is_none()) {
            Some((name, _)) => Err(format!(
                "--fail-link {name}: no such link (links are named like s0>sw0, sw0>sw1#0, leaf0>spine1)"
            )),
            None => Ok(()),
        }
    }

    /// RED marking as it applies: `--ecn-threshold` replaces it.
    pub fn ecn_red_in_force(&self) -> Option<Red> {
        self.ecn_threshold.is_none().then_some(self.ecn_red).flatten()
    }

    /// The stacks' timers these options give.
    pub fn timeouts(&self) -> Timeouts {
        Timeouts {
            local_ack_timeout: self.local_ack_timeout,
            dcp_timeout_ns: self.dcp_timeout_ns,
            override_ns: self.rto_ns,
            ..Timeouts::default()
        }
    }

    /// The round trip of an idle path, ns, SDR's timers are set from unless `--sdr-rtt` says:
    /// the propagation delay of every link both ways, a full data frame's and an 80-byte
    /// control frame's time on each (3 links on the dumbbell, 4 on a leaf-spine), at the slower
    /// of the host and fabric rates.
    pub fn base_rtt_ns(&self) -> u64 {
        let (hops, rate) = self.path();
        let ser = |bytes: u64| ((bytes + 24) as f64 * 8.0 / rate).ceil() as u64;
        2 * hops * self.delay_ns + hops * (ser(78 + self.mtu as u64) + ser(80))
    }

    /// A path's links (3 on the dumbbell, 4 on a leaf-spine) and the slower of the host and
    /// fabric rates, Gbit/s.
    fn path(&self) -> (u64, f64) {
        let hops = match self.topology {
            TopologyKind::Dumbbell => 3,
            TopologyKind::LeafSpine { .. } => 4,
        };
        (hops, self.fabric_rate_gbps.map_or(self.rate_gbps, |f| f.min(self.rate_gbps)).max(1e-9))
    }

    /// The receivers' posted messages: `self.messages` of `self.message_size` bytes (what the
    /// SDR, Flor and ERD receivers are told).
    fn posted_lengths(&self) -> sdr::MsgLengths {
        let (n, len) = (self.messages as u64, self.message_size);
        sdr::MsgLengths(std::sync::Arc::new(move |i| (i < n).then_some(len)))
    }

    /// The SDR parameters of a connection whose receiver takes `self.messages` messages of
    /// `self.message_size` bytes.
    pub fn sdr_config(&self) -> sdr::SdrConfig {
        let o = &self.sdr;
        sdr::SdrConfig {
            mode: if self.stack == StackKind::SdrEc {
                sdr::SdrMode::Ec { k: o.k, m: o.m, code: o.code }
            } else {
                sdr::SdrMode::Sr { nack: o.nack }
            },
            chunk_packets: o.chunk_packets,
            channels: o.channels,
            generations: o.generations,
            rtt_ns: o.rtt_ns.unwrap_or_else(|| self.base_rtt_ns()),
            alpha: o.alpha,
            rate_bps: (self.rate_gbps * 1e9).round() as u64,
            recv_window: o.recv_window,
            ack_period_ns: o.ack_period_ns,
            lengths: self.posted_lengths(),
        }
    }

    /// The Flor parameters of a connection (`cfg`'s ACK QPNs; `None`: the connection's QPNs
    /// are not known yet): the paper's settings, the idle round trip, the host rate, the posted
    /// messages' lengths; `--rto` overrides the RTO's floor.
    pub fn flor_config_for(&self, cfg: Option<&ConnConfig>) -> flor::FlorConfig {
        let placeholder = ConnConfig::ipv4(([0; 4], 0), ([0; 4], 0));
        let rate = (self.rate_gbps * 1e9).round() as u64;
        let mut f = flor::FlorConfig::new(
            cfg.unwrap_or(&placeholder),
            self.base_rtt_ns(),
            rate,
            Some(self.posted_lengths()),
        );
        if let Some(rto) = self.rto_ns {
            f.rto_min_ns = rto;
        }
        f
    }

    /// The ERD parameters of a connection (`None`: its ports are not known yet): timers from the
    /// largest round trip ([`Self::max_rtt_ns`]), the posted messages' lengths.
    pub fn erd_config_for(&self, cfg: Option<&ConnConfig>) -> erd::ErdConfig {
        let placeholder = ConnConfig::ipv4(([0; 4], 0), ([0; 4], 0));
        erd::ErdConfig::new(cfg.unwrap_or(&placeholder), self.max_rtt_ns(), Some(self.posted_lengths()))
    }

    /// The largest round trip: the idle one ([`Self::base_rtt_ns`]) with every queue on the
    /// path full both ways (`--queue-bytes` drained at the slower rate, per hop).
    pub fn max_rtt_ns(&self) -> u64 {
        let (hops, rate) = self.path();
        let drain = (self.queue_bytes as f64 * 8.0 / rate).ceil() as u64;
        self.base_rtt_ns() + 2 * hops * drain
    }

    /// SDR's options make a connection an SDR QP can run.
    fn validate_sdr(&self) -> Result<(), String> {
        let o = &self.sdr;
        if o.chunk_packets == 0 || o.channels == 0 || o.generations == 0 || o.recv_window == 0 {
            return Err("--sdr-chunk, --sdr-channels, --sdr-generations and --sdr-recv-window must be at least 1".into());
        }
        if o.alpha.is_nan() || o.alpha < 0.0 {
            return Err("--sdr-alpha must be 0 or more".into());
        }
        let split = rocescope_codec::Params::default().sdr_split;
        let ids = 1u64 << split.0;
        if o.chunk_packets as u64 * self.mtu as u64 > 1 << 30 {
            return Err("--sdr-chunk · --mtu must be at most 1 GiB".into());
        }
        if o.generations as u64 * o.channels as u64 > 4096 {
            return Err("--sdr-generations · --sdr-channels must be at most 4096 data QPs".into());
        }
        let qpns = o.generations as u64 * o.channels as u64 * self.pairs().len() as u64;
        if 0x80_0000 + qpns > 0xff_ffff {
            return Err("too many SDR data QPs for 24-bit QPNs (connections · generations · channels)".into());
        }
        if self.stack == StackKind::SdrEc && (o.k > 32_768 || o.m > 32_768) {
            return Err("--ec-k and --ec-m must be at most 32768 (the Reed-Solomon code's limit)".into());
        }
        let ec = (self.stack == StackKind::SdrEc).then_some(sdr::EcShape { k: o.k, m: o.m });
        if let Some(e) = ec {
            if e.k == 0 || e.m == 0 {
                return Err("--ec-k and --ec-m must be at least 1".into());
            }
            if o.code == sdr::Code::Mds && !(o.chunk_packets * self.mtu).is_multiple_of(2) {
                return Err("--ec-code mds needs chunks of an even number of bytes (--mtu · --sdr-chunk)".into());
            }
        }
        let sends = sdr::layout::send_count(self.message_size, self.mtu, o.chunk_packets, ec) as u64;
        let most_packets = sdr::layout::sends(self.message_size, self.mtu, o.chunk_packets, ec)
            .iter()
            .map(|s| s.packets as u64)
            .max()
            .unwrap_or(1);
        if most_packets > 1u64 << split.1 {
            return Err(format!(
                "an SDR send of {most_packets} packets: the immediate's packet offset has {} bits (a larger --mtu, or --ec-k)",
                split.1
            ));
        }
        if o.recv_window as u64 > ids || sends > ids {
            return Err(format!(
                "SDR's {ids} message ids cannot hold --sdr-recv-window {} messages or one message's {sends} sends",
                o.recv_window
            ));
        }
        Ok(())
    }

    /// The watchdog in force, ns (0: off).
    pub fn watchdog(&self) -> u64 {
        self.watchdog_ns.unwrap_or_else(|| {
            let t = self.timeouts();
            let longest = match self.stack {
                StackKind::Gbn | StackKind::Netrt => t.gbn_ns().unwrap_or(0),
                StackKind::Irn => t.irn_ns(u32::MAX),
                StackKind::Dcp => t.dcp_ns(u8::MAX),
                // A message's injection, a round trip and the per-chunk RTO; EC's guard (the FTO
                // with its parity, a round trip and an RTO).
                StackKind::SdrSr => {
                    let sdr = self.sdr_config();
                    let inject = (self.message_size as u64 * 8 * 1_000_000_000).div_ceil(sdr.rate_bps.max(1));
                    sdr.rto_ns() + sdr.rtt_ns + inject
                }
                StackKind::SdrEc => {
                    let chunks = sdr::layout::chunks(self.message_size, self.mtu, self.sdr.chunk_packets);
                    self.sdr_config().guard_ns(self.mtu, chunks)
                }
                // 32 RTO floors (500 µs, or the override): UC loses a whole WQE for one packet,
                // so at high loss a WQE may take many RTOs (seed 002 studies 1/256 and below).
                StackKind::Flor => 32 * self.flor_config_for(None).rto_min_ns,
                // The sender's quiet time before it completes a message, and as long again.
                StackKind::Erd => 2 * self.erd_config_for(None).quiet_ns,
            };
            DEFAULT_WATCHDOG_TIMERS.saturating_mul(longest).max(MIN_WATCHDOG_NS)
        })
    }

    /// Checks the combination; the message is a one-line usage error.
    pub fn validate(&self) -> Result<(), String> {
        if self.mtu == 0 || self.mtu > 9000 {
            return Err(format!("--mtu {} out of range (1-9000)", self.mtu));
        }
        if self.stack.is_sdr() {
            self.validate_sdr()?;
        }
        if self.flor_unit_size == 0 || self.flor_unit_size > 1 << 30 {
            return Err(format!("--flor-unit-size {} out of range (1 B - 1 GiB)", self.flor_unit_size));
        }
        if self.stack == StackKind::Netrt && self.pfc {
            return Err("--stack netrt runs on a lossy fabric (its ToRs pause senders themselves): not with --pfc".into());
        }
        if self.stack == StackKind::Flor && self.routing == Routing::Spray {
            // A WQE of several packets is one UC verb: reordered, it is dropped whole, every time.
            return Err("--stack flor runs over UC, which needs a QP's packets in order: not with --spray".into());
        }
        if !(0.0..=1.0).contains(&self.loss) {
            return Err("--loss must be a probability (0-1)".into());
        }
        if let Some((a, b)) = self.burst_loss {
            if !(0.0..=1.0).contains(&a) || !(0.0..=1.0).contains(&b) {
                return Err("--burst-loss takes two probabilities P_GB,P_BG".into());
            }
        }
        if self.paths == 0 || self.paths > 64 {
            return Err("--paths must be 1-64".into());
        }
        if self.incast == 0 || self.incast > 200 {
            return Err("--incast must be 1-200".into());
        }
        match self.topology {
            TopologyKind::Dumbbell => {
                if self.pattern != Pattern::Incast {
                    return Err(format!("--pattern {} needs --topology leaf-spine", self.pattern.name()));
                }
            }
            TopologyKind::LeafSpine { leaves, spines, hosts_per_leaf } => {
                if leaves == 0 || spines == 0 || hosts_per_leaf == 0 || leaves > 64 || spines > 64 || hosts_per_leaf > 64 {
                    return Err("--leaves, --spines and --hosts-per-leaf must be 1-64".into());
                }
                let hosts = leaves * hosts_per_leaf;
                if hosts < 2 {
                    return Err("a leaf-spine needs at least two hosts".into());
                }
                if self.pattern == Pattern::Incast && self.incast >= hosts {
                    return Err(format!("--incast {} needs more hosts than {hosts}", self.incast));
                }
                if self.fabric_tap_path >= spines {
                    return Err(format!("--fabric-tap-path {} but only {spines} spines", self.fabric_tap_path));
                }
                if self.paths != 1 || self.reorder_ns != 0 {
                    return Err("--paths and --reorder shape the dumbbell: a leaf-spine's paths are its spines".into());
                }
            }
        }
        if self.rate_gbps <= 0.0 || self.fabric_rate_gbps.is_some_and(|r| r <= 0.0) {
            return Err("rates must be positive".into());
        }
        if self.trim && self.stack != StackKind::Dcp {
            return Err("--trim applies to DCP data packets: use it with --stack dcp".into());
        }
        if self.wrr_weight.is_some_and(|w| w.is_nan() || w < 0.0) {
            return Err("--wrr-weight must be 0 or more".into());
        }
        let ops: Vec<Op> = self.ops();
        if let Some(op) = ops.iter().find(|&&op| !self.stack.supports(op)) {
            return Err(format!("the {} stack does not model {} (READ is GBN only)", self.stack.name(), op.name()));
        }
        if self.topology == TopologyKind::Dumbbell && self.fabric_tap_path >= self.paths {
            return Err(format!("--fabric-tap-path {} but only {} paths", self.fabric_tap_path, self.paths));
        }
        if self.local_ack_timeout > 31 {
            return Err("--local-ack-timeout is IBTA's 5-bit exponent: 0-31".into());
        }
        if self.dcp_timeout_ns == 0 || self.rto_ns == Some(0) {
            return Err("timeouts must be positive (ns)".into());
        }
        if self.taps.is_empty() {
            return Err("--taps needs at least one of sender, receiver, fabric".into());
        }
        self.check_links()?;
        Ok(())
    }

    /// The operations messages cycle through.
    pub fn ops(&self) -> Vec<Op> {
        match self.op {
            OpChoice::One(op) => vec![op],
            OpChoice::Mix => Op::ALL.into_iter().filter(|&o| self.stack.supports(o)).collect(),
        }
    }

    /// The canonical command line (every option explicit, no file names): the truth records it.
    pub fn command_line(&self) -> String {
        let mut a = vec![format!("rocescope synth --stack {}", self.stack.name())];
        a.push(format!(
            "--messages {} --message-size {} --op {} --mtu {}",
            self.messages,
            self.message_size,
            self.op.name(),
            self.mtu
        ));
        a.push(format!(
            "--rate {} --delay {} --paths {} --reorder {}",
            self.rate_gbps, self.delay_ns, self.paths, self.reorder_ns
        ));
        match self.routing {
            Routing::Spray => a.push("--spray".into()),
            Routing::Adaptive => a.push("--adaptive".into()),
            Routing::Ecmp => {}
        }
        if let Some(r) = self.fabric_rate_gbps {
            a.push(format!("--fabric-rate {r}"));
        }
        if let Some(f) = self.fault {
            a.push(format!("--fault {}:{} --fault-connection {}", f.fault.name(), f.nth, self.fault_connection));
        }
        if self.stack == StackKind::Flor && self.flor_unit_size != rocescope_codec::Params::default().flor_unit_size {
            a.push(format!("--flor-unit-size {}", self.flor_unit_size));
        }
        if self.stack.is_sdr() {
            let o = &self.sdr;
            let mut s = format!(
                "--sdr-chunk {} --sdr-channels {} --sdr-generations {} --sdr-alpha {} --sdr-recv-window {} --sdr-ack-period {}",
                o.chunk_packets, o.channels, o.generations, o.alpha, o.recv_window, o.ack_period_ns
            );
            if let Some(r) = o.rtt_ns {
                s += &format!(" --sdr-rtt {r}");
            }
            if self.stack == StackKind::SdrEc {
                s += &format!(" --ec-k {} --ec-m {} --ec-code {}", o.k, o.m, o.code.name());
            } else if o.nack {
                s += " --sdr-nack";
            }
            a.push(s);
        }
        if let Some(b) = self.netrt_pool_bytes {
            a.push(format!("--netrt-pool-bytes {b}"));
        }
        if let Some(t) = self.netrt_request_interval_ns {
            a.push(format!("--netrt-request-interval {t}"));
        }
        a.push(format!("--loss {}", self.loss));
        if let Some((g, b)) = self.burst_loss {
            a.push(format!("--burst-loss {g},{b}"));
        }
        a.push(format!(
            "--loss-on {} --loss-dir {} --loss-mode {}",
            self.loss_on.name(),
            self.loss_dir.name(),
            self.loss_mode.name()
        ));
        a.push(format!("--queue-bytes {}", self.queue_bytes));
        if !self.trim && self.stack == StackKind::Dcp {
            a.push("--no-trim".into());
        }
        if self.trim {
            a.push(format!("--trim --control-queue-bytes {}", self.control_queue_bytes));
            if let Some(w) = self.wrr_weight {
                a.push(format!("--wrr-weight {w}"));
            }
            if let Some(n) = self.radix {
                a.push(format!("--radix {n}"));
            }
        }
        match (self.ecn_threshold, self.ecn_red) {
            (Some(e), _) => a.push(format!("--ecn-threshold {e} --cnp-interval {}", self.cnp_interval_ns)),
            (None, Some(r)) => {
                a.push(format!("--ecn-red {},{},{} --cnp-interval {}", r.kmin, r.kmax, r.pmax, self.cnp_interval_ns))
            }
            (None, None) => a.push("--no-ecn".into()),
        }
        a.push(format!("--cc {}", self.cc.name()));
        // (Only when not the paper's: the commands of earlier truths stay as they were.)
        if self.dcqcn_timer_ns != 55_000 {
            a.push(format!("--dcqcn-timer {}", self.dcqcn_timer_ns));
        }
        a.push(format!("--incast {} --seed {}", self.incast, self.seed));
        let taps: Vec<&str> = self.taps.iter().map(|t| t.name()).collect();
        a.push(format!("--taps {} --fabric-tap-path {}", taps.join(","), self.fabric_tap_path));
        a.push(format!("--local-ack-timeout {} --dcp-timeout {}", self.local_ack_timeout, self.dcp_timeout_ns));
        if let Some(r) = self.rto_ns {
            a.push(format!("--rto {r}"));
        }
        a.push(format!(
            "--ack-every {} --bdp-packets {} --msg-window {} --retry-cnt {} --post-interval {} --time-limit {} --watchdog {}",
            self.ack_every,
            self.bdp_packets,
            self.msg_window,
            self.retry_cnt,
            self.post_interval_ns,
            self.time_limit_ns,
            self.watchdog()
        ));
        if self.dcp_tag_shift != rocescope_codec::Params::default().dcp_tag_shift {
            a.push(format!("--dcp-tag-shift {}", self.dcp_tag_shift));
        }
        if let TopologyKind::LeafSpine { leaves, spines, hosts_per_leaf } = self.topology {
            a.push(format!(
                "--topology leaf-spine --leaves {leaves} --spines {spines} --hosts-per-leaf {hosts_per_leaf} --pattern {}",
                self.pattern.name()
            ));
        }
        if self.pfc {
            a.push("--pfc".into());
        }
        for (link, at) in &self.link_failures {
            a.push(format!("--fail-link {link}@{at}"));
        }
        for (link, n) in &self.frame_drops {
            a.push(format!("--drop-frame {link}:{n}"));
        }
        a.join(" ")
    }

    /// The fabric's configuration.
    pub fn fabric_config(&self) -> FabricConfig {
        let params = rocescope_codec::Params {
            dcp_tag_shift: self.dcp_tag_shift,
            sdr_chunk_packets: self.sdr.chunk_packets,
            flor_unit_size: self.flor_unit_size,
            ..Default::default()
        };
        FabricConfig {
            senders: self.incast as usize,
            rate_bps: (self.rate_gbps * 1e9).round() as u64,
            fabric_rate_bps: self.fabric_rate_gbps.map(|r| (r * 1e9).round() as u64),
            delay_ns: self.delay_ns,
            paths: self.paths,
            reorder_ns: self.reorder_ns,
            routing: self.routing,
            queue_bytes: self.queue_bytes,
            trim: self.trim,
            wrr_weight: self.wrr_weight,
            radix: self.radix,
            control_queue_bytes: self.control_queue_bytes,
            ecn_threshold: self.ecn_threshold,
            ecn_red: self.ecn_red_in_force(),
            cnp_interval_ns: self.cnp_interval_ns,
            dcqcn_timer_ns: self.dcqcn_timer_ns,
            loss: LossModel { p: self.loss, burst: self.burst_loss },
            loss_place: self.loss_on,
            loss_dir: self.loss_dir,
            loss_mode: self.loss_mode,
            taps: self.taps.clone(),
            fabric_tap_path: self.fabric_tap_path,
            seed: self.seed,
            time_limit_ns: self.time_limit_ns,
            watchdog_ns: self.watchdog(),
            profile: self.stack.profile(),
            params,
            // Ethernet 14 · IPv4 20 · UDP 8 · BTH 12 · DCPETH 4 · RETH 16 · payload · ICRC 4.
            data_frame_bytes: 78 + self.mtu,
            accept: if matches!(self.stack, StackKind::Gbn | StackKind::Netrt) {
                AcceptModel::InOrder
            } else {
                AcceptModel::AnyOrder
            },
            cc: self.cc,
            topology: self.topology,
            focus: self.pairs().first().copied(),
            pfc: self.pfc,
            link_failures: self.link_failures.clone(),
            frame_drops: self.frame_drops.clone(),
            netrt: (self.stack == StackKind::Netrt).then(|| self.netrt_config()),
        }
    }

    /// NetRT's switch parameters: the paper's (`NetrtConfig::paper`) for the fabric rate and the
    /// idle round trip, with `--netrt-pool-bytes` and `--netrt-request-interval` applied.
    pub fn netrt_config(&self) -> rocescope_stacks::netrt::NetrtConfig {
        let rate = (self.fabric_rate_gbps.unwrap_or(self.rate_gbps) * 1e9).round() as u64;
        let mut c = rocescope_stacks::netrt::NetrtConfig::paper(rate, self.base_rtt_ns());
        if let Some(b) = self.netrt_pool_bytes {
            c.pool_bytes = b;
        }
        if let Some(t) = self.netrt_request_interval_ns {
            c.request_interval_ns = t.max(1);
            c.max_age_ns = 4 * c.request_interval_ns;
        }
        c
    }

    /// The options as the truth records them (its `config`).
    pub fn truth_config(&self, fabric: &FabricConfig) -> truth::Config {
        truth::Config {
            ack_every: self.ack_every,
            bdp_packets: self.bdp_packets,
            burst_loss: self.burst_loss.map(|(a, b)| [a, b]),
            cc: self.cc.into(),
            cnp_interval_ns: self.cnp_interval_ns,
            control_queue_bytes: self.trim.then_some(self.control_queue_bytes),
            dcp_tag_shift: self.dcp_tag_shift,
            dcp_timeout_ns: self.dcp_timeout_ns,
            delay_ns: self.delay_ns,
            ecn_red: self.ecn_red_in_force().map(|r| truth::EcnRed { kmin: r.kmin, kmax: r.kmax, pmax: r.pmax }),
            ecn_threshold: self.ecn_threshold,
            fabric_rate_bps: fabric.effective_fabric_rate(),
            fabric_tap_path: self.fabric_tap_path,
            local_ack_timeout: self.local_ack_timeout,
            loss: self.loss,
            loss_dir: self.loss_dir.into(),
            loss_mode: self.loss_mode.into(),
            loss_on: self.loss_on.into(),
            message_size: self.message_size,
            messages: self.messages,
            msg_window: self.msg_window,
            mtu: self.mtu,
            op: match self.op {
                OpChoice::One(op) => truth::Op::from(op).into(),
                OpChoice::Mix => truth::ConfigOp::Mix,
            },
            paths: self.paths,
            post_interval_ns: self.post_interval_ns,
            profile: self.stack.profile().into(),
            queue_bytes: self.queue_bytes,
            rate_bps: fabric.rate_bps,
            reorder_ns: self.reorder_ns,
            retry_cnt: self.retry_cnt,
            routing: self.routing.into(),
            rto_ns: self.rto_ns,
            sdr_chunk_packets: if self.stack.is_sdr() { self.sdr.chunk_packets } else { 1 },
            flor_unit_size: if self.stack == StackKind::Flor {
                self.flor_unit_size
            } else {
                rocescope_codec::Params::default().flor_unit_size
            },
            seed: self.seed,
            senders: self.incast,
            stack: self.stack.into(),
            taps: self.taps.iter().map(|&t| t.into()).collect(),
            time_limit_ns: self.time_limit_ns,
            trim: self.trim,
            watchdog_ns: self.watchdog(),
            wrr_weight: self.trim.then(|| fabric.effective_wrr_weight()),
        }
    }
}

/// Makes one connection's two ends.
pub type PairFactory<'a> = dyn FnMut(&ConnConfig) -> (Box<dyn Requester>, Box<dyn Endpoint>) + 'a;

impl SynthOptions {
    /// The connections as (requester host, responder host), in connection order: on the
    /// dumbbell, sender `i` to the receiver; on a leaf-spine, per [`Pattern`].
    pub fn pairs(&self) -> Vec<(usize, usize)> {
        match self.topology {
            TopologyKind::Dumbbell => (0..self.incast as usize).map(|i| (i, self.incast as usize)).collect(),
            TopologyKind::LeafSpine { leaves, hosts_per_leaf, .. } => {
                let (l, h) = (leaves as usize, hosts_per_leaf as usize);
                let n = l * h;
                match self.pattern {
                    Pattern::Incast => {
                        // Other leaves first, so that the incast crosses the spines.
                        let order = (h..n).chain(1..h);
                        order.take(self.incast as usize).map(|s| (s, 0)).collect()
                    }
                    Pattern::Permutation => {
                        // Sattolo's algorithm: a uniformly random cyclic permutation, so no
                        // host sends to itself.
                        let mut p: Vec<usize> = (0..n).collect();
                        let mut rng = Rng::new(self.seed, 11);
                        for i in (1..n).rev() {
                            let j = rng.below(i as u64) as usize;
                            p.swap(i, j);
                        }
                        (0..n).map(|i| (i, p[i])).collect()
                    }
                    Pattern::AllToAll => {
                        (0..n).flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j))).collect()
                    }
                }
            }
        }
    }
}

/// The connection parameters of connection `c` from host `src` to host `dst` on `fabric`.
/// QPNs: requester `0x100 + c`, responder `0x200 + c` on the dumbbell (as in the first
/// captures); `0x10000 + c` and `0x800000 + c` on a leaf-spine, where a host may hold both
/// ends of many connections.
pub fn conn_config_between(
    opts: &SynthOptions,
    fabric: &Fabric<'_>,
    c: usize,
    (src, dst): (usize, usize),
    rng: &mut Rng,
) -> ConnConfig {
    let (smac, sip) = fabric.host(src);
    let (rmac, rip) = fabric.host(dst);
    // SDR's receiver has G × C data QPs from its responder QPN on: a stride that keeps the
    // connections' QPNs apart.
    let stride = if opts.stack.is_sdr() { opts.sdr.generations * opts.sdr.channels } else { 1 };
    let (req_qpn, resp_qpn) = match opts.topology {
        TopologyKind::Dumbbell => (0x100 + c as u32, 0x200 + stride * c as u32),
        TopologyKind::LeafSpine { .. } => (0x10000 + c as u32, 0x800000 + stride * c as u32),
    };
    let mut cfg = ConnConfig {
        requester: Host { mac: smac, ip: sip, qpn: req_qpn },
        responder: Host { mac: rmac, ip: rip, qpn: resp_qpn },
        start_psn: (rng.next_u64() & 0xff_ffff) as u32,
        mtu: opts.mtu,
        udp_sport: 0xC000 | (rng.next_u64() & 0x3fff) as u16,
        // DSCP 26 with ECT(0): the DCP tag (bits 3..2 at shift 2) stays clear of the ECN bits.
        tos: 0x6a,
        params: fabric.cfg.params,
        timeouts: opts.timeouts(),
        retry_cnt: opts.retry_cnt,
        ack_every: opts.ack_every,
        bdp_packets: opts.bdp_packets,
        msg_window: opts.msg_window,
        sdr: opts.stack.is_sdr().then(|| opts.sdr_config()),
        flor: None,
        erd: None,
    };
    if opts.stack == StackKind::Flor {
        cfg.flor = Some(opts.flor_config_for(Some(&cfg)));
    }
    if opts.stack == StackKind::Erd {
        cfg.erd = Some(opts.erd_config_for(Some(&cfg)));
    }
    cfg
}

/// The connection parameters of sender `i` on the dumbbell `fabric`.
pub fn conn_config(opts: &SynthOptions, fabric: &Fabric<'_>, i: usize, rng: &mut Rng) -> ConnConfig {
    conn_config_between(opts, fabric, i, (i, fabric.hosts() - 1), rng)
}

/// Builds the fabric with the connections of [`SynthOptions::pairs`] made by `factory` and
/// posts the messages.
pub fn build<'w>(
    opts: &SynthOptions,
    writer: Option<Box<dyn Write + 'w>>,
    factory: &mut PairFactory<'_>,
) -> std::io::Result<Fabric<'w>> {
    let cfg = opts.fabric_config();
    let writer = match writer {
        Some(w) => {
            let names: Vec<&str> = cfg.taps.iter().map(|t| t.name()).collect();
            Some(CaptureWriter::new(w, &names)?)
        }
        None => None,
    };
    opts.check_links().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let mut fabric = Fabric::new(cfg, writer);
    fabric.fault_connection = opts.fault_connection;
    if let Some(spec) = opts.fault {
        if !spec.fault.applies_to(opts.stack) {
            let which: Vec<&str> =
                StackKind::ALL.iter().filter(|&&k| spec.fault.applies_to(k)).map(|k| k.name()).collect();
            let e = format!(
                "--fault {} does not apply to --stack {}: it needs {}",
                spec.fault.name(),
                opts.stack.name(),
                which.join(", ")
            );
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, e));
        }
    }
    let mut rng = Rng::new(opts.seed, 7);
    let ops = opts.ops();
    for (i, pair) in opts.pairs().into_iter().enumerate() {
        let cc = conn_config_between(opts, &fabric, i, pair, &mut rng);
        let (req, resp) = match opts.fault {
            Some(spec) if i as u32 == opts.fault_connection => {
                let pair = factory(&faults::config_for(&cc, spec));
                faults::inject(opts.stack, &cc, spec, fabric.faults.clone(), pair)
            }
            _ => factory(&cc),
        };
        let c = fabric.add_connection_between(pair.0, pair.1, cc, req, resp);
        // Every message's record lives for the run: exactly as many as will be posted.
        fabric.conns[c as usize].messages.reserve_exact(opts.messages as usize);
        for m in 0..opts.messages as u64 {
            let op = ops[m as usize % ops.len()];
            fabric.post(c, m * opts.post_interval_ns, Message { id: m, op, len: opts.message_size });
        }
    }
    Ok(fabric)
}

/// Builds and runs with the reference stack `opts.stack`.
/// `keep_truth`: keep what the truth needs (every tap frame). `progress`, when given, is called
/// now and then with how far the run is (the command line shows it as a progress bar).
pub fn simulate<'w>(
    opts: &SynthOptions,
    writer: Option<Box<dyn Write + 'w>>,
    keep_truth: bool,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> std::io::Result<Fabric<'w>> {
    let keep = if keep_truth { Keep::Memory } else { Keep::Nothing };
    simulate_keeping(opts, writer, keep, progress)
}

/// What a run keeps for its truth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Nothing: transmission records are recycled once final.
    Nothing,
    /// Every transmission and tap frame, in memory ([`Fabric::txs`], [`Fabric::tap_frames`]).
    Memory,
    /// The same, spilled to temporary files ([`Fabric::spill_truth`], `docs/truth.md`
    /// "Memory"): what `rocescope synth --truth` does.
    Disk,
}

/// [`simulate`], keeping `keep` for the truth.
pub fn simulate_keeping<'w>(
    opts: &SynthOptions,
    writer: Option<Box<dyn Write + 'w>>,
    keep: Keep,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> std::io::Result<Fabric<'w>> {
    let kind = opts.stack;
    let mut factory = |c: &ConnConfig| new_pair(kind, c);
    let mut fabric = build(opts, writer, &mut factory)?;
    fabric.keep_tap_frames = keep == Keep::Memory;
    fabric.keep_txs = keep == Keep::Memory;
    if keep == Keep::Disk {
        fabric.spill_truth()?;
    }
    fabric.run(progress)?;
    fabric.finish_spill();
    if let Some(w) = fabric.take_writer() {
        w.into_inner().flush()?;
    }
    Ok(fabric)
}

/// The truth document of a finished run.
pub fn truth(opts: &SynthOptions, fabric: &Fabric<'_>) -> truth::Truth {
    truth::build(fabric, opts.command_line(), opts.truth_config(&fabric.cfg))
}

/// Writes the truth document of a finished run (docs/truth.md), streaming.
pub fn write_truth(opts: &SynthOptions, fabric: &Fabric<'_>, w: &mut impl Write) -> std::io::Result<()> {
    truth::write_truth(fabric, &opts.command_line(), &opts.truth_config(&fabric.cfg), w)
}

/// What `rocescope synth` reports.
pub struct Outcome {
    pub stats: RunStats,
    pub messages: u64,
    pub completed: u64,
    pub failed: usize,
    pub frames: usize,
    /// The messages left unfinished, by connection then id.
    pub unfinished: Vec<Unfinished>,
    /// What the fault (`--fault`) did.
    pub faults: Vec<faults::Applied>,
}

impl Outcome {
    /// The run was cut short (time limit, watchdog, or nothing left to happen) with messages
    /// unfinished: `rocescope synth` exits non-zero.
    pub fn cut(&self) -> bool {
        let s = &self.stats;
        (s.timed_out || s.watchdog || s.stuck) && !self.unfinished.is_empty()
    }

    /// Why the run ended early, in words; `None` if it did not.
    pub fn cut_reason(&self, opts: &SynthOptions) -> Option<String> {
        let s = &self.stats;
        if !self.cut() {
            None
        } else if s.watchdog {
            Some(format!(
                "the watchdog stopped the run: no progress for {} ns (--watchdog) at {:.1} µs simulated",
                opts.watchdog(),
                s.end_ns as f64 / 1e3
            ))
        } else if s.timed_out {
            Some(format!("the time limit (--time-limit {} ns) cut the run", opts.time_limit_ns))
        } else {
            Some(format!("the run stalled at {:.1} µs simulated: nothing left to happen", s.end_ns as f64 / 1e3))
        }
    }
}

/// `rocescope synth`: simulate, write `out` (pcapng; `-` for standard output) and, if asked,
/// the truth JSON.
/// Simulates and writes; `Ok(None)` when the output is a pipe its reader closed (as with
/// `synth -o - | head`): the run stops quietly, like any filter's.
pub fn run(
    opts: &SynthOptions,
    out: &str,
    truth_path: Option<&Path>,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<Option<Outcome>, String> {
    opts.validate()?;
    let writer: Box<dyn Write> = if out == "-" {
        Box::new(BufWriter::new(std::io::stdout().lock()))
    } else {
        Box::new(BufWriter::new(File::create(out).map_err(|e| format!("{out}: {e}"))?))
    };
    let keep = if truth_path.is_some() { Keep::Disk } else { Keep::Nothing };
    let fabric = match simulate_keeping(opts, Some(writer), keep, progress) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(None),
        Err(e) => return Err(format!("{out}: {e}")),
    };
    if let Some(p) = truth_path {
        let mut w = BufWriter::new(File::create(p).map_err(|e| format!("{}: {e}", p.display()))?);
        write_truth(opts, &fabric, &mut w).and_then(|_| w.flush()).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let messages: u64 = fabric.conns.iter().map(|c| c.messages.len() as u64).sum();
    let completed: u64 =
        fabric.conns.iter().flat_map(|c| c.messages.iter()).filter(|m| !m.completed.is_empty()).count() as u64;
    Ok(Some(Outcome {
        stats: fabric.stats,
        messages,
        completed,
        failed: fabric.conns.iter().filter(|c| c.failed.is_some()).count(),
        frames: fabric.stats.captured as usize,
        unfinished: fabric.unfinished(),
        faults: fabric.faults.lock().map(|l| l.clone()).unwrap_or_default(),
    }))
}
