//! How rocescope's fields map to Wireshark's (tshark 4.0's `infiniband`, `macc`, `data`
//! fields), shared by the tshark differential tests: `tshark_diff.rs` compares values through
//! [`MAPPINGS`], `tshark_filter.rs` translates display filters through [`tshark_name`]. The
//! quirks behind each normaliser are listed at the top of `tshark_diff.rs`.
#![allow(dead_code)]

use std::collections::HashMap;
use std::process::Command;

/// Heuristic sub-dissectors that swallow SEND payloads (names from `tshark -G protocols`).
pub const DISABLED_PROTOCOLS: &[&str] =
    &["rpcordma", "smb_direct", "iser", "nvme-rdma", "lnet", "smc", "infiniband_sdp", "fcoib"];

/// Opcodes tshark 4.0 decodes with the IBTA header layout: RC (without FLUSH/ATOMIC WRITE), UC,
/// UD. Everything else gets only its BTH compared.
pub fn tshark_decodes(opcode: u8) -> bool {
    matches!(opcode, 0x00..=0x14 | 0x16 | 0x17 | 0x20..=0x2B | 0x64 | 0x65)
}

/// RD (read by tshark as Mellanox DC, sometimes malformed).
pub fn is_rd(opcode: u8) -> bool {
    (0x40..=0x55).contains(&opcode)
}

/// One frame: both tools' columns by field name.
pub struct Row<'a> {
    pub number: usize,
    pub ours: HashMap<&'static str, &'a str>,
    pub theirs: HashMap<&'static str, &'a str>,
}

impl Row<'_> {
    pub fn ours(&self, name: &str) -> &str {
        self.ours.get(name).copied().unwrap_or("")
    }
    pub fn theirs(&self, name: &str) -> &str {
        self.theirs.get(name).copied().unwrap_or("")
    }
    /// The BTH opcode as tshark read it.
    pub fn opcode(&self) -> Option<u8> {
        parse_int(self.theirs("infiniband.bth.opcode")).ok().map(|v| v as u8)
    }
    /// CM message by tshark's MAD attribute id (management class 0x07 only).
    pub fn cm_attr(&self) -> Option<u64> {
        (parse_int(self.theirs("infiniband.mad.mgmtclass")).ok() == Some(7))
            .then(|| parse_int(self.theirs("infiniband.mad.attributeid")).ok())
            .flatten()
    }
}

/// Turns the values of a mapping's tshark columns (in table order) into rocescope's text.
pub type Norm = fn(&Row, &[&str]) -> Result<String, String>;
/// Whether a mapping applies to a frame.
pub type When = fn(&Row) -> bool;

/// rocescope field ↔ tshark field(s), through a normaliser, on the frames where it applies.
pub struct Mapping {
    pub ours: &'static str,
    pub theirs: &'static [&'static str],
    pub norm: Norm,
    pub when: When,
}

// ---- where a mapping applies ----

/// Every RoCE frame (tshark decodes the BTH of every opcode).
pub fn roce(r: &Row) -> bool {
    r.opcode().is_some()
}
/// RoCE frames whose opcode tshark decodes.
pub fn decodable(r: &Row) -> bool {
    r.opcode().is_some_and(tshark_decodes)
}
/// Every frame: both sides must agree on presence too.
pub fn always(_: &Row) -> bool {
    true
}
/// Decodable, and not an IRN SACK NAK (tshark drops its ICRC).
pub fn icrc_shown(r: &Row) -> bool {
    decodable(r) && r.ours("rocescope.irn.sack_psn").is_empty()
}
/// Decodable and not a CM MAD (tshark dissects those instead of listing the payload).
pub fn plain_payload(r: &Row) -> bool {
    decodable(r) && r.cm_attr().is_none()
}
/// CM MADs other than MRA (which tshark does not dissect).
pub fn cm_not_mra(r: &Row) -> bool {
    r.cm_attr() != Some(0x11)
}
pub fn is_atomic_request(r: &Row) -> bool {
    matches!(r.opcode(), Some(0x13 | 0x14))
}

// ---- normalisers ----

/// Integer in decimal or `0x` hex.
pub fn parse_int(s: &str) -> Result<u64, String> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
    .map_err(|e| format!("not an integer: {s:?} ({e})"))
}

/// The column's only value, checking repeated occurrences agree.
pub fn single(v: &str) -> Result<&str, String> {
    let mut it = v.split(',');
    let first = it.next().unwrap_or("");
    match it.find(|o| *o != first) {
        Some(o) => Err(format!("occurrences disagree: {first:?} vs {o:?}")),
        None => Ok(first),
    }
}

/// An integer field (tshark prints decimal or hex by the field's base).
pub fn int(_: &Row, v: &[&str]) -> Result<String, String> {
    let s = single(v[0])?;
    if s.is_empty() {
        return Ok(String::new());
    }
    Ok(parse_int(s)?.to_string())
}

/// A boolean: tshark 4.0 prints 0/1, later versions True/False.
pub fn boolean(_: &Row, v: &[&str]) -> Result<String, String> {
    Ok(match single(v[0])? {
        "" => "",
        "1" | "True" | "TRUE" => "1",
        "0" | "False" | "FALSE" => "0",
        s => return Err(format!("not a boolean: {s:?}")),
    }
    .into())
}

/// Whichever of several columns is present (at most one may be), as an integer.
pub fn any_int(r: &Row, v: &[&str]) -> Result<String, String> {
    let present: Vec<&str> = v.iter().copied().filter(|s| !s.is_empty()).collect();
    match present.len() {
        0 => Ok(String::new()),
        1 => int(r, &present),
        _ => Err(format!("more than one tshark column present: {present:?}")),
    }
}

/// A 4-byte byte field (ImmDt, IETH) as a decimal integer; tshark adds it twice.
pub fn bytes_u32(_: &Row, v: &[&str]) -> Result<String, String> {
    let s = single(v[0])?;
    if s.is_empty() {
        return Ok(String::new());
    }
    if s.len() != 8 {
        return Err(format!("expected 4 bytes, got {s:?}"));
    }
    u32::from_str_radix(s, 16).map(|v| v.to_string()).map_err(|e| e.to_string())
}

/// A 16-bit bitmap tshark prints as an integer (`0x00a5`): its two wire bytes in hex, as
/// rocescope prints bitmaps (INTERFACES.md).
pub fn bitmap_u16(_: &Row, v: &[&str]) -> Result<String, String> {
    let s = single(v[0])?;
    if s.is_empty() {
        return Ok(String::new());
    }
    let n = parse_int(s)?;
    u16::try_from(n).map(|n| format!("{n:04x}")).map_err(|e| format!("{s}: {e}"))
}

/// Bit `mask` of BTH byte 4, the first `infiniband.reserved`.
pub fn byte4_bit(v: &str, mask: u8) -> Result<String, String> {
    let first = v.split(',').next().unwrap_or("");
    if first.len() != 2 {
        return Err(format!("expected BTH byte 4 first in infiniband.reserved, got {v:?}"));
    }
    let b = u8::from_str_radix(first, 16).map_err(|e| e.to_string())?;
    Ok(((b & mask != 0) as u8).to_string())
}
pub fn fecn(_: &Row, v: &[&str]) -> Result<String, String> {
    byte4_bit(v[0], 0x80)
}
pub fn becn(_: &Row, v: &[&str]) -> Result<String, String> {
    byte4_bit(v[0], 0x40)
}

/// AETH syndrome bits 6..5 (tshark's "OpCode") as `rocescope.aeth.kind`.
pub fn aeth_kind(_: &Row, v: &[&str]) -> Result<String, String> {
    Ok(match single(v[0])? {
        "" => "",
        "0" => "ack",
        "1" => "rnr_nak",
        "2" => "reserved",
        "3" => "nak",
        s => return Err(format!("unexpected AETH opcode {s:?}")),
    }
    .into())
}

/// A RETH field, unless the packet is an atomic request (whose AtomicETH tshark also names
/// `infiniband.reth.*`).
pub fn reth_only(r: &Row, v: &[&str]) -> Result<String, String> {
    if is_atomic_request(r) {
        Ok(String::new())
    } else {
        int(r, v)
    }
}
/// AtomicETH VA / R_Key: tshark's `infiniband.reth.*` on an atomic request.
pub fn atomic_via_reth(r: &Row, v: &[&str]) -> Result<String, String> {
    if is_atomic_request(r) {
        int(r, v)
    } else {
        Ok(String::new())
    }
}

/// Payload length: tshark's `data.len` includes the pad; absent means no payload.
pub fn payload_len(_: &Row, v: &[&str]) -> Result<String, String> {
    let len = if v[0].is_empty() { 0 } else { parse_int(single(v[0])?)? };
    let pad = parse_int(v[1])?;
    if len == 0 {
        return Ok("0".into());
    }
    len.checked_sub(pad).map(|n| n.to_string()).ok_or_else(|| format!("data.len {len} < pad {pad}"))
}

/// `0x2400c49e` → `2400c49e` (the wire bytes in order).
pub fn icrc(_: &Row, v: &[&str]) -> Result<String, String> {
    let s = single(v[0])?;
    if s.is_empty() {
        return Ok(String::new());
    }
    Ok(format!("{:08x}", parse_int(s)?))
}

/// MAD attribute id as `rocescope.cm.msg`.
pub fn cm_msg(r: &Row, _: &[&str]) -> Result<String, String> {
    Ok(match r.cm_attr() {
        None => "",
        Some(0x10) => "req",
        Some(0x11) => "mra",
        Some(0x12) => "rej",
        Some(0x13) => "rep",
        Some(0x14) => "rtu",
        Some(0x15) => "dreq",
        Some(0x16) => "drep",
        Some(a) => return Err(format!("CM attribute 0x{a:04x} not decoded by rocescope")),
    }
    .into())
}

/// 32-bit word at `at` of `infiniband.mad.data` (the CM message after the 24-byte MAD header).
pub fn mad_word(v: &str, at: usize) -> Result<String, String> {
    if v.is_empty() {
        return Ok(String::new());
    }
    let hex = v.get(2 * at..2 * at + 8).ok_or_else(|| format!("MAD data too short: {v:?}"))?;
    u32::from_str_radix(hex, 16).map(|v| v.to_string()).map_err(|e| e.to_string())
}
/// Local communication id: word 0 of the CM message, every message.
pub fn mad_local_comm_id(_: &Row, v: &[&str]) -> Result<String, String> {
    mad_word(v[0], 0)
}
/// Remote communication id: word 1, every message but REQ (where it is reserved).
pub fn mad_remote_comm_id(r: &Row, v: &[&str]) -> Result<String, String> {
    if r.cm_attr() == Some(0x10) {
        return Ok(String::new());
    }
    mad_word(v[0], 4)
}

/// PAUSE's one pause time or PFC's eight, comma-joined in decimal.
pub fn quanta(_: &Row, v: &[&str]) -> Result<String, String> {
    let vals: Result<Vec<String>, String> =
        v.iter().filter(|s| !s.is_empty()).map(|s| parse_int(s).map(|n| n.to_string())).collect();
    Ok(vals?.join(","))
}

/// The mapping table: every standard-header field rocescope prints that tshark 4.0 can confirm.
/// Fields tshark cannot confirm are listed in [`NOT_COMPARED`] with the reason.
pub const MAPPINGS: &[Mapping] = &[
    // BTH (every RoCE frame, whatever the opcode).
    Mapping { ours: "rocescope.bth.opcode", theirs: &["infiniband.bth.opcode"], norm: int, when: always },
    Mapping { ours: "rocescope.bth.se", theirs: &["infiniband.bth.se"], norm: boolean, when: always },
    Mapping { ours: "rocescope.bth.m", theirs: &["infiniband.bth.m"], norm: boolean, when: always },
    Mapping { ours: "rocescope.bth.padcnt", theirs: &["infiniband.bth.padcnt"], norm: int, when: always },
    Mapping { ours: "rocescope.bth.tver", theirs: &["infiniband.bth.tver"], norm: int, when: always },
    Mapping { ours: "rocescope.bth.p_key", theirs: &["infiniband.bth.p_key"], norm: int, when: always },
    Mapping { ours: "rocescope.bth.fecn", theirs: &["infiniband.reserved"], norm: fecn, when: roce },
    Mapping { ours: "rocescope.bth.becn", theirs: &["infiniband.reserved"], norm: becn, when: roce },
    Mapping { ours: "rocescope.bth.destqp", theirs: &["infiniband.bth.destqp"], norm: int, when: always },
    Mapping { ours: "rocescope.bth.a", theirs: &["infiniband.bth.a"], norm: boolean, when: always },
    Mapping { ours: "rocescope.bth.psn", theirs: &["infiniband.bth.psn"], norm: int, when: always },
    // DETH (UD here; tshark's RD-as-DC reading is excluded by `decodable`).
    Mapping { ours: "rocescope.deth.q_key", theirs: &["infiniband.deth.q_key"], norm: int, when: decodable },
    Mapping { ours: "rocescope.deth.srcqp", theirs: &["infiniband.deth.srcqp"], norm: int, when: decodable },
    // RETH.
    Mapping { ours: "rocescope.reth.va", theirs: &["infiniband.reth.va"], norm: reth_only, when: decodable },
    Mapping { ours: "rocescope.reth.r_key", theirs: &["infiniband.reth.r_key"], norm: reth_only, when: decodable },
    Mapping { ours: "rocescope.reth.dmalen", theirs: &["infiniband.reth.dmalen"], norm: int, when: decodable },
    // AtomicETH (VA and R_Key under tshark's RETH names).
    Mapping { ours: "rocescope.atomiceth.va", theirs: &["infiniband.reth.va"], norm: atomic_via_reth, when: decodable },
    Mapping {
        ours: "rocescope.atomiceth.r_key",
        theirs: &["infiniband.reth.r_key"],
        norm: atomic_via_reth,
        when: decodable,
    },
    Mapping {
        ours: "rocescope.atomiceth.swapdt",
        theirs: &["infiniband.atomiceth.swapdt"],
        norm: int,
        when: decodable,
    },
    Mapping { ours: "rocescope.atomiceth.cmpdt", theirs: &["infiniband.atomiceth.cmpdt"], norm: int, when: decodable },
    // AETH.
    Mapping { ours: "rocescope.aeth.syndrome", theirs: &["infiniband.aeth.syndrome"], norm: int, when: decodable },
    Mapping { ours: "rocescope.aeth.msn", theirs: &["infiniband.aeth.msn"], norm: int, when: decodable },
    Mapping {
        ours: "rocescope.aeth.kind",
        theirs: &["infiniband.aeth.syndrome.opcode"],
        norm: aeth_kind,
        when: decodable,
    },
    Mapping {
        ours: "rocescope.aeth.credit",
        theirs: &["infiniband.aeth.syndrome.credit_count"],
        norm: int,
        when: decodable,
    },
    Mapping {
        ours: "rocescope.aeth.rnr_timer",
        theirs: &["infiniband.aeth.syndrome.timer"],
        norm: int,
        when: decodable,
    },
    Mapping {
        ours: "rocescope.aeth.nak_code",
        theirs: &["infiniband.aeth.syndrome.error_code"],
        norm: int,
        when: decodable,
    },
    // AtomicAckETH, ImmDt, IETH.
    Mapping {
        ours: "rocescope.atomicacketh.origremdt",
        theirs: &["infiniband.atomicacketh.origremdt"],
        norm: int,
        when: decodable,
    },
    Mapping { ours: "rocescope.immdt", theirs: &["infiniband.immdt"], norm: bytes_u32, when: decodable },
    Mapping { ours: "rocescope.ieth.r_key", theirs: &["infiniband.ieth"], norm: bytes_u32, when: decodable },
    // Payload and ICRC.
    Mapping {
        ours: "rocescope.payload_len",
        theirs: &["data.len", "infiniband.bth.padcnt"],
        norm: payload_len,
        when: plain_payload,
    },
    Mapping { ours: "rocescope.icrc", theirs: &["infiniband.invariant.crc"], norm: icrc, when: icrc_shown },
    // CM MADs.
    Mapping { ours: "rocescope.cm.msg", theirs: &["infiniband.mad.attributeid"], norm: cm_msg, when: always },
    Mapping {
        ours: "rocescope.cm.local_comm_id",
        theirs: &[
            "infiniband.cm.req",
            "infiniband.cm.rep",
            "infiniband.cm.rtu.localcommid",
            "infiniband.cm.dreq.localcommid",
            "infiniband.cm.drsp.localcommid",
            "infiniband.cm.rej.localcommid",
        ],
        norm: any_int,
        when: cm_not_mra,
    },
    Mapping {
        ours: "rocescope.cm.remote_comm_id",
        theirs: &[
            "infiniband.cm.rep.remotecommid",
            "infiniband.cm.rtu.remotecommid",
            "infiniband.cm.dreq.remotecommid",
            "infiniband.cm.drsp.remotecommid",
            "infiniband.cm.rej.remotecommid",
        ],
        norm: any_int,
        when: cm_not_mra,
    },
    Mapping {
        ours: "rocescope.cm.local_comm_id",
        theirs: &["infiniband.mad.data"],
        norm: mad_local_comm_id,
        when: always,
    },
    Mapping {
        ours: "rocescope.cm.remote_comm_id",
        theirs: &["infiniband.mad.data"],
        norm: mad_remote_comm_id,
        when: always,
    },
    Mapping {
        ours: "rocescope.cm.local_qpn",
        theirs: &["infiniband.cm.req.localqpn", "infiniband.cm.rep.localqpn"],
        norm: any_int,
        when: always,
    },
    Mapping {
        ours: "rocescope.cm.start_psn",
        theirs: &["infiniband.cm.req.startpsn", "infiniband.cm.rep.startpsn"],
        norm: any_int,
        when: always,
    },
    Mapping {
        ours: "rocescope.cm.remote_qpn",
        theirs: &["infiniband.cm.req.remoteqpneecn"],
        norm: any_int,
        when: always,
    },
    // PFC and PAUSE (tshark's MAC Control dissector).
    Mapping { ours: "rocescope.pfc.class_enable", theirs: &["macc.cbfc.enbv"], norm: bitmap_u16, when: always },
    Mapping {
        ours: "rocescope.pfc.quanta",
        theirs: &[
            "macc.pause_time",
            "macc.cbfc.pause_time.c0",
            "macc.cbfc.pause_time.c1",
            "macc.cbfc.pause_time.c2",
            "macc.cbfc.pause_time.c3",
            "macc.cbfc.pause_time.c4",
            "macc.cbfc.pause_time.c5",
            "macc.cbfc.pause_time.c6",
            "macc.cbfc.pause_time.c7",
        ],
        norm: quanta,
        when: always,
    },
];

/// tshark's name for a rocescope field whose mapping is one tshark field (`None` otherwise).
pub fn tshark_name(ours: &str) -> Option<&'static str> {
    MAPPINGS.iter().find(|m| m.ours == ours && m.theirs.len() == 1).map(|m| m.theirs[0])
}

/// tshark's version line, `None` when it is not installed.
pub fn tshark_available() -> Option<String> {
    let out = Command::new("tshark").arg("-v").output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_string())
}

/// Runs a command that must succeed; its standard output.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?} failed with {}:\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

