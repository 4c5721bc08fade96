//! `rocescope synth`'s SDR flags (`--stack sdr-sr` / `sdr-ec`; docs/stacks.md "SDR-RDMA").

use clap::Args;
use rocescope_sim::synth::SdrOptions;
use rocescope_stacks::sdr::Code;

/// SDR's parameters.
#[derive(Args, Clone, Debug)]
pub struct SdrArgs {
    /// sdr-sr: the receiver also names missing chunks (SR_NACK), the paper's NACK variant
    /// (use with --sdr-alpha 0).
    #[arg(long)]
    pub sdr_nack: bool,
    /// sdr-ec: data chunks per submessage (k).
    #[arg(long, default_value_t = 32, value_name = "K")]
    pub ec_k: u32,
    /// sdr-ec: parity chunks per submessage (m).
    #[arg(long, default_value_t = 8, value_name = "M")]
    pub ec_m: u32,
    /// sdr-ec: the code, xor or mds (Reed-Solomon).
    #[arg(long, default_value = "mds", value_parser = parse_code)]
    pub ec_code: Code,
    /// SDR packets per chunk (the bitmaps' and the RTO's unit).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub sdr_chunk: u32,
    /// SDR channels: UC data QPs per generation.
    #[arg(long, default_value_t = 1, value_name = "C")]
    pub sdr_channels: u32,
    /// SDR message-id generations (data QPs per channel).
    #[arg(long, default_value_t = 4, value_name = "G")]
    pub sdr_generations: u32,
    /// SDR's RTO = RTT·(1 + α) (the paper: 2 with timeouts, 0 with NACKs).
    #[arg(long, default_value_t = 2.0, value_name = "A")]
    pub sdr_alpha: f64,
    /// The round trip SDR's timers are set from, ns (default: the idle path's, from the
    /// topology, --delay, --rate and --mtu).
    #[arg(long, value_name = "NS")]
    pub sdr_rtt: Option<u64>,
    /// Messages the SDR receiver keeps receives posted (and CTS sent) for.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub sdr_recv_window: u32,
    /// SR_ACK coalescing, ns (0: one SR_ACK per completed chunk).
    #[arg(long, default_value_t = 0, value_name = "NS")]
    pub sdr_ack_period: u64,
}

fn parse_code(s: &str) -> Result<Code, String> {
    match s {
        "xor" => Ok(Code::Xor),
        "mds" => Ok(Code::Mds),
        _ => Err(format!("unknown code '{s}' (xor mds)")),
    }
}

impl SdrArgs {
    pub fn options(&self) -> SdrOptions {
        SdrOptions {
            nack: self.sdr_nack,
            k: self.ec_k,
            m: self.ec_m,
            code: self.ec_code,
            chunk_packets: self.sdr_chunk,
            channels: self.sdr_channels,
            generations: self.sdr_generations,
            alpha: self.sdr_alpha,
            rtt_ns: self.sdr_rtt,
            recv_window: self.sdr_recv_window,
            ack_period_ns: self.sdr_ack_period,
        }
    }
}
