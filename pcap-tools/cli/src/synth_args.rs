//! `rocescope synth`'s command line: the flags, parsed into the simulator's [`SynthOptions`].

use clap::Args;
use rocescope_sim::synth::{self, OpChoice, SynthOptions};
use rocescope_sim::{LossDir, LossMode, LossPlace, Routing, TapPoint};
use rocescope_stacks::StackKind;

use crate::params_args::{DcpTagShift, ParamArgs};
use crate::progress;

/// The command line of `rocescope synth`.
#[derive(Args, Clone, Debug)]
pub struct SynthArgs {
    /// Reference stack: gbn, irn, dcp.
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
    /// Switch data queue threshold, bytes (above it: drop, or trim with --trim).
    #[arg(long, default_value_t = 262144, value_name = "N")]
    pub queue_bytes: u64,
    /// DCP switch trimming: data packets over the threshold become header-only packets in a
    /// control queue served by WRR. On by default for --stack dcp (seed 000 §4.2).
    #[arg(long, conflicts_with = "no_trim")]
    pub trim: bool,
    /// DCP without switch trimming: data packets over the threshold are dropped.
    #[arg(long)]
    pub no_trim: bool,
    /// WRR weight of the control queue (default: seed 000 §4.2's (N−1)/(r−N+1); when r ≤ N−1,
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
    /// ECN: mark CE on packets entering a data queue longer than this; the receiver NIC then
    /// sends CNPs.
    #[arg(long, value_name = "BYTES")]
    pub ecn_threshold: Option<u64>,
    /// At most one CNP per QP per this many ns.
    #[arg(long, default_value_t = 50000, value_name = "NS")]
    pub cnp_interval: u64,
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
    /// Stop after this much simulated time, ns. A run cut with messages unfinished names them
    /// on standard error and exits with status 1.
    #[arg(long, default_value_t = 1_000_000_000, value_name = "NS")]
    pub time_limit: u64,
    /// No-progress watchdog, ns: stop when, for this long, messages are outstanding and none
    /// was posted, completed or delivered and no receiver accepted a new data packet; the
    /// unfinished messages are named on standard error and the exit status is 1. Default:
    /// 100 × --rto; 0: off.
    #[arg(long, value_name = "NS")]
    pub watchdog: Option<u64>,
    /// Retransmission timeout, ns.
    #[arg(long, default_value_t = 100_000, value_name = "NS")]
    pub rto: u64,
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
    pub params: ParamArgs<DcpTagShift>,
}

/// A list of taps (a newtype so clap takes the whole comma-separated list as one value).
#[derive(Clone, Debug)]
pub struct Taps(pub Vec<TapPoint>);

fn parse_stack(s: &str) -> Result<StackKind, String> {
    StackKind::from_name(s).ok_or_else(|| format!("unknown stack '{s}' (gbn irn dcp)"))
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
        SynthOptions {
            stack: self.stack,
            loss: self.loss,
            burst_loss: self.burst_loss,
            loss_on: self.loss_on,
            loss_dir: self.loss_dir,
            loss_mode: self.loss_mode.unwrap_or(LossMode::default_for(self.stack)),
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
            // Trimming is on by default for DCP (its switches trim, seed 000 §4.2); --trim
            // with another stack is refused by `SynthOptions::validate`.
            trim: self.trim || (self.stack == StackKind::Dcp && !self.no_trim),
            wrr_weight: self.wrr_weight,
            radix: self.radix,
            control_queue_bytes: self.control_queue_bytes,
            ecn_threshold: self.ecn_threshold,
            cnp_interval_ns: self.cnp_interval,
            incast: self.incast,
            seed: self.seed,
            taps: self.taps.0.clone(),
            fabric_tap_path: self.fabric_tap_path,
            time_limit_ns: self.time_limit,
            watchdog_ns: self.watchdog,
            rto_ns: self.rto,
            ack_every: self.ack_every,
            bdp_packets: self.bdp_packets,
            msg_window: self.msg_window,
            retry_cnt: self.retry_cnt,
            post_interval_ns: self.post_interval,
            dcp_tag_shift: self.params.params.dcp_tag_shift,
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
            "rocescope synth: {}: {}/{} messages completed{}{}; {} transmissions, {} dropped, {} trimmed, {} CE-marked, {} CNPs; {} frames captured; {:.1} µs simulated",
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
            o.frames,
            s.end_ns as f64 / 1e3,
        );
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
