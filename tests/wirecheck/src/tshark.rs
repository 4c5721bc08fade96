//! A second decoder: tshark's own `infiniband` dissector reads the same capture, and its BTH
//! fields per frame (interface, IP addresses, DestQP, opcode, PSN) must be the codec's. Used on
//! standard-profile captures (GBN, IRN); tshark's stock dissector does not know DCP's
//! header-only packets (docs/truth.md, "Validity").

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use super::packet::Pkt;

/// One frame's BTH as tshark reads it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Row {
    pub frame: u64,
    pub interface: u32,
    pub src: String,
    pub dst: String,
    pub destqp: u32,
    pub opcode: u8,
    pub psn: u32,
}

/// Heuristic sub-dissectors that claim SEND payloads (as in `pcap-tools/cli/tests`).
const DISABLED_PROTOCOLS: &[&str] =
    &["rpcordma", "smb_direct", "iser", "nvme-rdma", "lnet", "smc", "infiniband_sdp", "fcoib"];

/// Whether tshark can be run.
pub fn available() -> bool {
    Command::new("tshark").arg("-v").output().is_ok_and(|o| o.status.success())
}

fn num(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// tshark's rows for every frame with a BTH. `config_dir`: an empty Wireshark configuration
/// directory (so no user profile changes the dissection).
pub fn rows(pcap: &Path, config_dir: &Path) -> Result<Vec<Row>, String> {
    let mut cmd = Command::new("tshark");
    cmd.env("WIRESHARK_CONFIG_DIR", config_dir);
    cmd.args(["-n", "-r"]).arg(pcap);
    for p in DISABLED_PROTOCOLS {
        cmd.args(["--disable-protocol", p]);
    }
    cmd.args(["-Y", "infiniband.bth", "-T", "fields", "-E", "separator=\t"]);
    for f in [
        "frame.number",
        "frame.interface_id",
        "ip.src",
        "ip.dst",
        "infiniband.bth.destqp",
        "infiniband.bth.opcode",
        "infiniband.bth.psn",
    ] {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().map_err(|e| format!("tshark: {e}"))?;
    if !out.status.success() {
        return Err(format!("tshark: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut rows = Vec::new();
    for l in text.lines().filter(|l| !l.is_empty()) {
        let c: Vec<&str> = l.split('\t').collect();
        let bad = || format!("tshark line {l:?}");
        if c.len() != 7 {
            return Err(bad());
        }
        rows.push(Row {
            frame: num(c[0]).ok_or_else(bad)?,
            interface: num(c[1]).ok_or_else(bad)? as u32,
            src: c[2].to_string(),
            dst: c[3].to_string(),
            destqp: num(c[4]).ok_or_else(bad)? as u32,
            opcode: num(c[5]).ok_or_else(bad)? as u8,
            psn: num(c[6]).ok_or_else(bad)? as u32,
        });
    }
    Ok(rows)
}

/// The codec's rows for the same frames.
pub fn codec_rows(pkts: &[Pkt]) -> Vec<Row> {
    pkts.iter()
        .map(|p| Row {
            frame: p.number,
            interface: p.interface,
            src: p.src.to_string(),
            dst: p.dst.to_string(),
            destqp: p.destqp,
            opcode: p.opcode,
            psn: p.psn,
        })
        .collect()
}

/// Transmissions per (interface, flow, PSN) of request opcodes (SEND, WRITE, READ Request:
/// 0x00-0x0C) from tshark's rows: the count the retransmission checks are built on.
pub fn request_copies(rows: &[Row]) -> BTreeMap<(u32, String, u32), u32> {
    let mut m = BTreeMap::new();
    for r in rows.iter().filter(|r| r.opcode <= 0x0C) {
        *m.entry((r.interface, format!("{}>{}/{}", r.src, r.dst, r.destqp), r.psn)).or_default() += 1;
    }
    m
}
