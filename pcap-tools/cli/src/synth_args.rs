//! `rocescope synth`'s command line: the flags, parsed into the simulator's [`SynthOptions`].

use clap::Args;
use rocescope_sim::sim::{CongestionControl, Red, TopologyKind};
use rocescope_sim::synth::{self, OpChoice, Pattern, SynthOptions};
use rocescope_sim::{LossDir, LossMode, LossPlace, Routing, TapPoint};
use rocescope_stacks::faults::{Fault, FaultSpec};
use rocescope_stacks::StackKind;

use crate::params_args::{ParamArgs, SynthParams};
use crate::sdr_args::SdrArgs;
use crate::progress;

/// The command line of `rocescope synth`.
#[derive(Args, Clone, Debug)]
pub struct SynthArgs {
    /// Reference stack: gbn, irn, dcp, sdr-sr, sdr-ec (the SDR stacks: --sdr-*, --ec-*), flor, erd,
    /// netrt (Go-Back-N hosts; NetRT in the ToR switches: --netrt-*).
    #[arg(long, value_parser = parse_stack)]
    pub stack: StackKind,
    /// The pcapng to write (`-`: standard output).
    #[arg(short = 'o', long = "output", value_name = "OUT.pcapng")]
    pub output: String,
    /// Also write the ground truth (docs/truth.md).
    #[arg(long, value_name = "OUT.json")]
    pub truth: Option<std::path::PathBuf>,
    /// Random (Bernoulli) loss probability per frame on the lossy links (where the frame is
    /// lost: --loss-mode).
    #[arg(long, default_value_t = 0.0, value_name = "P")]
    pub loss: f64,
    /// Bursty (Gilbert-Elliott) loss: good→bad and bad→good transition probabilities per
    /// frame; every frame is lost in the bad state.
    #[arg(long, value_name = "P_GB,P_BG", value_parser = parse_pair)]
    pub burst_loss: Option<(f64, f64)>,
    /// Which links lose frames: fabric (every fabric link), sender (s0's link), receiver.
    #[arg(long, default_value = "fabric", value_parser = parse_loss_on)]
    pub loss_on: LossPlace,
    /// Which direction of those links loses frames: both, forward (towards the receiver), reverse.
    #[arg(long, default_value = "both", value_parser = parse_loss_dir)]
    pub loss_dir: LossDir,
    /// Where a frame chosen for random loss (--loss, --burst-loss) is lost. trim: at the switch
    /// port feeding the lossy link (for a host's own uplink, the switch it enters), as the DCP
    /// paper makes loss (§6.1, §6.3): a DCP data packet is trimmed to its header-only form
    /// (with trimming on), anything else is dropped there. drop: on the wire (corruption), the
    /// frame lost whole after occupying the link. Default: trim for --stack dcp, drop otherwise.
    #[arg(long, value_name = "MODE", value_parser = parse_loss_mode)]
    pub loss_mode: Option<LossMode>,
    /// Extra propagation delay of the slowest path over the fastest (ns), spread evenly.
    #[arg(long, default_value_t = 0, value_name = "NS")]
    pub reorder: u64,
    /// Parallel paths between the two switches.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub paths: u32,
    /// Packet spraying: a random path per packet.
    #[arg(long, conflicts_with = "adaptive")]
    pub spray: bool,
    /// Adaptive routing: the least-loaded path per packet.
    #[arg(long)]
    pub adaptive: bool,
    /// Messages per connection.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub messages: u32,
    #[arg(long, default_value_t = 4096, value_name = "BYTES")]
    pub message_size: u32,
    /// write, send, read (gbn only), write_imm, or mix (cycle through what the stack supports).
    #[arg(long, default_value = "write", value_parser = parse_op)]
    pub op: OpChoice,
    /// Payload bytes per packet.
    #[arg(long, default_value_t = 1024, value_name = "BYTES")]
    pub mtu: u32,
    /// Host link rate, Gbit/s.
    #[arg(long, default_value_t = 100.0, value_name = "GBPS")]
    pub rate: f64,
    /// Fabric link rate, Gbit/s (default: rate × ⌈senders/paths⌉, a non-blocking core).
    #[arg(long, value_name = "GBPS")]
    pub fabric_rate: Option<f64>,
    /// Propagation delay of every link, ns.
    #[arg(long, default_value_t = 1000, value_name = "NS")]
    pub delay: u64,
    /// Switch data queue threshold, bytes (above it: drop, or trim with --trim). Default 1 MiB:
    /// about what a shared-buffer data-centre switch lets one congested 100 Gb/s port hold
    /// (tens of MB shared by 32-64 ports); with 256 KB a 64-to-1 Go-Back-N incast lost whole
    /// connections to retry exhaustion.
    #[arg(long, default_value_t = 1_048_576, value_name = "N")]
    pub queue_bytes: u64,
    /// DCP switch trimming: data packets over the threshold become header-only packets in a
    /// control queue served by WRR. On by default for --stack dcp (the DCP paper §4.2).
    #[arg(long, conflicts_with = "no_trim")]
    pub trim: bool,
    /// DCP without switch trimming: data packets over the threshold are dropped.
    #[arg(long)]
    pub no_trim: bool,
    /// WRR weight of the control queue (default: the DCP paper §4.2's (N−1)/(r−N+1); when r ≤ N−1,
    /// the weight for the largest N the formula supports, N−1 = ⌈r⌉−1, as §6.3 does; `inf`:
    /// strict priority).
    #[arg(long, value_name = "W")]
    pub wrr_weight: Option<f64>,
    /// Switch radix N for the §4.2 weight (default: senders + 1).
    #[arg(long, value_name = "N")]
    pub radix: Option<u32>,
    /// Control queue size, bytes.
    #[arg(long, default_value_t = 65536, value_name = "N")]
    pub control_queue_bytes: u64,
    /// ECN: mark CE on every packet entering a data queue longer than this (instead of RED);
    /// the receiver NIC then sends CNPs.
    #[arg(long, value_name = "BYTES", conflicts_with = "no_ecn")]
    pub ecn_threshold: Option<u64>,
    /// ECN by RED: below KMIN bytes of queue no mark, above KMAX every packet, in between with
    /// a probability rising to PMAX. Default: the DCQCN paper's 5000,200000,0.01.
    #[arg(long, value_name = "KMIN,KMAX,PMAX", value_parser = parse_red, conflicts_with = "no_ecn")]
    pub ecn_red: Option<Red>,
    /// No ECN marking (then no CNPs, and DCQCN never acts).
    #[arg(long)]
    pub no_ecn: bool,
    /// Congestion control of the requesters' NICs: dcqcn (DCQCN's reaction point with its
    /// published parameters: CNPs lower a QP's rate, timers and a byte counter raise it back)
    /// or none (CNPs end at the NIC). CNPs need --ecn-threshold.
    #[arg(long, default_value = "dcqcn", value_parser = parse_cc)]
    pub cc: CongestionControl,
    /// At most one CNP per QP per this many ns.
    #[arg(long, default_value_t = 50000, value_name = "NS")]
    pub cnp_interval: u64,
    /// DCQCN's rate-increase timer T at the requesters' NICs, ns (the paper's 55 µs).
    #[arg(long, default_value_t = 55000, value_name = "NS")]
    pub dcqcn_timer: u64,
    /// Senders: N connections into one receiver.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub incast: u32,
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,
    /// Capture taps, one pcapng interface each, in this order.
    #[arg(long, default_value = "sender,receiver,fabric", value_parser = parse_taps)]
    pub taps: Taps,
    /// The fabric link the fabric tap watches.
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub fabric_tap_path: u32,
    /// Stop after this much simulated time, ns (default 10 s: a lossy Go-Back-N incast waits
    /// out 67 ms local ACK timeouts; idle simulated time costs nothing, and the watchdog stops
    /// a run that makes no progress). A run cut with messages unfinished names them on
    /// standard error and exits with status 1.
    #[arg(long, default_value_t = 10_000_000_000, value_name = "NS")]
    pub time_limit: u64,
    /// GBN's local ACK timeout exponent t (IBTA): the timeout is 4.096 µs · 2^t, 0 disables it
    /// (0-31; 14 ≈ 67 ms, a common ConnectX setting).
    #[arg(long, default_value_t = rocescope_stacks::timeouts::DEFAULT_LOCAL_ACK_TIMEOUT, value_name = "T")]
    pub local_ack_timeout: u8,
    /// DCP's coarse timeout, ns: the first round's; each further timeout round of the same
    /// message doubles it (up to 64×). The DCP paper (§4.5) gives no value; 1 ms by default.
    #[arg(long, default_value_t = rocescope_stacks::timeouts::DCP_TIMEOUT_NS, value_name = "NS")]
    pub dcp_timeout: u64,
    /// One retransmission timeout (ns) for every stack, replacing GBN's local ACK timeout,
    /// IRN's RTO_low/RTO_high (100/320 µs) and DCP's coarse timeout (no back-off).
    #[arg(long, value_name = "NS")]
    pub rto: Option<u64>,
    /// No-progress watchdog, ns: stop when, for this long, messages are outstanding and none
    /// was posted, completed or delivered and no receiver accepted a new data packet; the
    /// unfinished messages are named on standard error and the exit status is 1. Default:
    /// 4 × the stack's longest timer (GBN's local ACK timeout, IRN's RTO_high, DCP's timeout at
    /// its largest back-off, or --rto), at least 10 ms; 0: off.
    #[arg(long, value_name = "NS")]
    pub watchdog: Option<u64>,
    /// The responder ACKs at least every N packets.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub ack_every: u32,
    /// GBN/IRN window (packets).
    #[arg(long, default_value_t = 128, value_name = "N")]
    pub bdp_packets: u32,
    /// DCP messages in flight per QP.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub msg_window: u32,
    /// GBN retry count (0-7).
    #[arg(long, default_value_t = 7, value_name = "N")]
    pub retry_cnt: u8,
    /// Time between two posts on a connection, ns (0: all at once).
    #[arg(long, default_value_t = 0, value_name = "NS")]
    pub post_interval: u64,
    /// `--dcp-tag-shift`, the decoders' flag (the codec's parameter table).
    #[command(flatten)]
    pub params: ParamArgs<SynthParams>,
    /// The fabric: dumbbell (senders on one switch, the receiver on another, --paths links
    /// between them) or leaf-spine (--leaves × --hosts-per-leaf hosts, every leaf linked to
    /// every one of --spines spines).
    #[arg(long, default_value = "dumbbell", value_parser = ["dumbbell", "leaf-spine"])]
    pub topology: String,
    /// Leaf-spine: leaf (top-of-rack) switches.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub leaves: u32,
    /// Leaf-spine: spine switches (each leaf has one uplink to each).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub spines: u32,
    /// Leaf-spine: hosts per leaf (host j of leaf l is h{l}.{j}, 10.1.l.(j+1)).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub hosts_per_leaf: u32,
    /// Leaf-spine traffic: incast (--incast senders to h0.0, other leaves first), permutation
    /// (each host to one other, a random derangement), all-to-all.
    #[arg(long, default_value = "incast", value_parser = parse_pattern)]
    pub pattern: Pattern,
    /// Lossless mode: switches pause their upstream ports with PFC frames (802.1Qbb, priority
    /// 3) before their queues fill; the frames appear in the capture.
    #[arg(long)]
    pub pfc: bool,
    /// A link fails at a time: LINK@NS, LINK named by either direction as in the truth's
    /// places (s0>sw0, sw0>sw1#1, leaf0>spine1). Repeatable. Routing moves off it at once;
    /// what it held or carried is lost.
    #[arg(long = "fail-link", value_name = "LINK@NS", value_parser = parse_failure)]
    pub fail_link: Vec<(String, u64)>,
    /// A frame lost on purpose: LINK:N, the Nth frame (from 1, PFC frames not counted) that
    /// one-way link LINK (named as in the truth's places: s0>sw0, sw0>sw1#1, leaf1>spine0)
    /// carries is lost on it, whatever --loss says. Repeatable.
    #[arg(long = "drop-frame", value_name = "LINK:N", value_parser = parse_drop)]
    pub drop_frame: Vec<(String, u64)>,
    /// A fault on purpose, to test `rocescope replay`: one end of one connection breaks a rule
    /// once, at the Nth occasion (default 1): omit-nak, double-nak, early-msn, false-nack (erd, sdr-sr)
    /// (responder); needless-retx, late-go-back (gbn), early-timeout, late-timeout (requester). The truth's
    /// `summary.faults` says what it did (docs/replay.md "Faults").
    #[arg(long, value_name = "FAULT[:N]", value_parser = parse_fault)]
    pub fault: Option<FaultSpec>,
    /// The connection (from 0) whose end --fault makes misbehave.
    #[arg(long, default_value_t = 0, value_name = "C")]
    pub fault_connection: u32,
    /// --stack netrt: the source ToR's duplicate pool per host port, bytes (default: one BDP
    /// of the fabric rate and the idle round trip, at least 64 KiB).
    #[arg(long, value_name = "BYTES")]
    pub netrt_pool_bytes: Option<u64>,
    /// --stack netrt: the destination ToR re-sends its request this often, ns (default: the
    /// idle round trip).
    #[arg(long, value_name = "NS")]
    pub netrt_request_interval: Option<u64>,
    #[command(flatten)]
    pub sdr: SdrArgs,
}

fn parse_fault(s: &str) -> Result<FaultSpec, String> {
    let (name, nth) = s.split_once(':').unwrap_or((s, "1"));
    let names = || Fault::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ");
    let fault = Fault::from_name(name).ok_or_else(|| format!("'{name}' is not a fault (one of {})", names()))?;
    let nth = nth.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| format!("'{nth}' is not a count from 1"))?;
    Ok(FaultSpec { fault, nth })
}

/// A list of taps (a newtype so clap takes the whole comma-separated list as one value).
#[derive(Clone, Debug)]
pub struct Taps(pub Vec<TapPoint>);

fn parse_red(s: &str) -> Result<Red, String> {
    let v: Vec<&str> = s.split(',').map(str::trim).collect();
    let [kmin, kmax, pmax] = v[..] else { return Err(format!("'{s}' is not KMIN,KMAX,PMAX")) };
    let num = |x: &str| x.parse::<u64>().map_err(|_| format!("'{x}' is not a byte count"));
    let (kmin, kmax) = (num(kmin)?, num(kmax)?);
    let pmax =
        pmax.parse::<f64>().ok().filter(|p| (0.0..=1.0).contains(p)).ok_or(format!("'{pmax}' is not a probability"))?;
    if kmin >= kmax {
        return Err(format!("--ecn-red: KMIN {kmin} must be below KMAX {kmax}"));
    }
    Ok(Red { kmin, kmax, pmax })
}
fn parse_cc(s: &str) -> Result<CongestionControl, String> {
    CongestionControl::from_name(s).ok_or_else(|| format!("unknown congestion control '{s}' (dcqcn none)"))
}
fn parse_pattern(s: &str) -> Result<Pattern, String> {
    Pattern::from_name(s).ok_or_else(|| format!("unknown pattern '{s}' (incast permutation all-to-all)"))
}
fn parse_failure(s: &str) -> Result<(String, u64), String> {
    let (link, at) = s.rsplit_once('@').ok_or_else(|| format!("'{s}' is not LINK@NS"))?;
    let at = at.parse::<u64>().map_err(|_| format!("'{at}' is not a time in ns"))?;
    Ok((link.to_string(), at))
}
fn parse_drop(s: &str) -> Result<(String, u64), String> {
    let (link, n) = s.rsplit_once(':').ok_or_else(|| format!("'{s}' is not LINK:N"))?;
    let n = n.parse::<u64>().map_err(|_| format!("'{n}' is not a frame count"))?;
    Ok((link.to_string(), n))
}
fn parse_stack(s: &str) -> Result<StackKind, String> {
    StackKind::from_name(s).ok_or_else(|| format!("unknown stack '{s}' (gbn irn dcp sdr-sr sdr-ec flor erd netrt)"))
}
fn parse_op(s: &str) -> Result<OpChoice, String> {
    OpChoice::parse(s).ok_or_else(|| format!("unknown op '{s}' (write send read write_imm mix)"))
}
fn parse_pair(s: &str) -> Result<(f64, f64), String> {
    let (a, b) = s.split_once(',').ok_or_else(|| format!("'{s}' is not P_GB,P_BG"))?;
    let p = |x: &str| x.trim().parse::<f64>().map_err(|_| format!("'{x}' is not a probability"));
    Ok((p(a)?, p(b)?))
}
fn parse_loss_on(s: &str) -> Result<LossPlace, String> {
    LossPlace::from_name(s).ok_or_else(|| format!("unknown link '{s}' (fabric sender receiver)"))
}
fn parse_loss_dir(s: &str) -> Result<LossDir, String> {
    LossDir::from_name(s).ok_or_else(|| format!("unknown direction '{s}' (both forward reverse)"))
}
fn parse_loss_mode(s: &str) -> Result<LossMode, String> {
    LossMode::from_name(s).ok_or_else(|| format!("unknown loss mode '{s}' (trim drop)"))
}
fn parse_taps(s: &str) -> Result<Taps, String> {
    let mut v = Vec::new();
    for name in s.split(',').filter(|x| !x.is_empty()) {
        let t = TapPoint::from_name(name).ok_or_else(|| format!("unknown tap '{name}' (sender receiver fabric)"))?;
        if v.contains(&t) {
            return Err(format!("tap '{name}' given twice"));
        }
        v.push(t);
    }
    Ok(Taps(v))
}

impl SynthArgs {
    pub fn options(&self) -> SynthOptions {
        // The per-stack defaults (trimming and the trim loss mode for DCP, RED marking).
        let defaults = SynthOptions::for_stack(self.stack);
        SynthOptions {
            stack: self.stack,
            loss: self.loss,
            burst_loss: self.burst_loss,
            loss_on: self.loss_on,
            loss_dir: self.loss_dir,
            loss_mode: self.loss_mode.unwrap_or(defaults.loss_mode),
            reorder_ns: self.reorder,
            paths: self.paths,
            routing: if self.spray {
                Routing::Spray
            } else if self.adaptive {
                Routing::Adaptive
            } else {
                Routing::Ecmp
            },
            messages: self.messages,
            message_size: self.message_size,
            op: self.op,
            mtu: self.mtu,
            rate_gbps: self.rate,
            fabric_rate_gbps: self.fabric_rate,
            delay_ns: self.delay,
            queue_bytes: self.queue_bytes,
            // --trim with another stack than DCP is refused by `SynthOptions::validate`.
            trim: self.trim || (defaults.trim && !self.no_trim),
            wrr_weight: self.wrr_weight,
            radix: self.radix,
            control_queue_bytes: self.control_queue_bytes,
            ecn_threshold: self.ecn_threshold,
            ecn_red: if self.no_ecn { None } else { self.ecn_red.or(defaults.ecn_red) },
            cnp_interval_ns: self.cnp_interval,
            dcqcn_timer_ns: self.dcqcn_timer,
            incast: self.incast,
            seed: self.seed,
            taps: self.taps.0.clone(),
            fabric_tap_path: self.fabric_tap_path,
            time_limit_ns: self.time_limit,
            local_ack_timeout: self.local_ack_timeout,
            dcp_timeout_ns: self.dcp_timeout,
            watchdog_ns: self.watchdog,
            rto_ns: self.rto,
            ack_every: self.ack_every,
            bdp_packets: self.bdp_packets,
            msg_window: self.msg_window,
            retry_cnt: self.retry_cnt,
            post_interval_ns: self.post_interval,
            dcp_tag_shift: self.params.params.dcp_tag_shift,
            cc: self.cc,
            topology: if self.topology == "leaf-spine" {
                TopologyKind::LeafSpine {
                    leaves: self.leaves,
                    spines: self.spines,
                    hosts_per_leaf: self.hosts_per_leaf,
                }
            } else {
                TopologyKind::Dumbbell
            },
            pattern: self.pattern,
            pfc: self.pfc,
            link_failures: self.fail_link.clone(),
            frame_drops: self.drop_frame.clone(),
            fault: self.fault,
            fault_connection: self.fault_connection,
            sdr: self.sdr.options(),
            netrt_pool_bytes: self.netrt_pool_bytes,
            netrt_request_interval_ns: self.netrt_request_interval,
            flor_unit_size: self.params.params.flor_unit_size,
        }
    }

    /// Runs the subcommand; the error is a one-line message. Prints a summary to stderr, and
    /// the unfinished messages when there are any; the exit status is 1 when the time limit,
    /// the watchdog or a stall cut the run with messages unfinished, else 0.
    pub fn run(&self) -> Result<u8, String> {
        let opts = self.options();
        let mut bar = progress::Synth::new();
        let Some(o) = synth::run(&opts, &self.output, self.truth.as_deref(), bar.callback())? else { return Ok(0) };
        drop(bar);
        let s = o.stats;
        eprintln!(
            "rocescope synth: {}: {}/{} messages completed{}{}; {} transmissions, {} dropped, {} trimmed, {} CE-marked, {} CNPs{}{}; {} frames captured; {:.1} µs simulated",
            opts.stack.name(),
            o.completed,
            o.messages,
            if o.failed > 0 { format!(", {} connections failed", o.failed) } else { String::new() },
            if s.timed_out {
                " (time limit reached)"
            } else if s.watchdog {
                " (stopped by the watchdog)"
            } else {
                ""
            },
            s.transmissions,
            s.dropped,
            s.trimmed,
            s.ce_marked,
            s.cnps,
            if s.pause_frames > 0 { format!(", {} PFC pauses", s.pause_frames) } else { String::new() },
            if opts.stack == rocescope_stacks::StackKind::Netrt {
                let n = s.netrt;
                format!(
                    "; NetRT: {} requests, {} resends, {} unfulfilled, {} to Waiting, {} held, {} dropped by the ToRs, {} evicted, {} pauses",
                    n.requests, n.resends, n.unfulfilled, n.waiting, n.held, n.dropped, n.evicted, n.pauses
                )
            } else {
                String::new()
            },
            o.frames,
            s.end_ns as f64 / 1e3,
        );
        if let Some(spec) = self.fault {
            match o.faults.first() {
                Some(a) => eprintln!(
                    "rocescope synth: fault {} at {:.3} µs: {}",
                    spec.fault.name(),
                    a.time as f64 / 1e3,
                    a.detail
                ),
                None => eprintln!(
                    "rocescope synth: fault {} never applied (no occasion {} in this run)",
                    spec.fault.name(),
                    spec.nth
                ),
            }
        }
        if let Some(why) = o.cut_reason(&opts) {
            eprintln!("rocescope synth: {why}; {} messages unfinished:", o.unfinished.len());
        } else if !o.unfinished.is_empty() {
            eprintln!("rocescope synth: {} messages unfinished:", o.unfinished.len());
        }
        const SHOWN: usize = 50;
        for u in o.unfinished.iter().take(SHOWN) {
            eprintln!("  {u}");
        }
        if o.unfinished.len() > SHOWN {
            eprintln!("  … and {} more", o.unfinished.len() - SHOWN);
        }
        Ok(if o.cut() { 1 } else { 0 })
    }
}
