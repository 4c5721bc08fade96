//! The tracker's finished records as bytes for the spill (`spill.rs`), and back: a
//! retransmission, a loss, a message, each a fixed little-endian layout, and what a tracker
//! hands over for the report ([`Drained`]).

use super::report::{Cause, Evidence, Loss, Ns, Repair, Signal};
use super::spill::Cursor;
use super::spill::Rec;
use super::track::{MsgState, RetxEvent};

/// What a tracker holds for the report.
#[derive(Debug, Default)]
pub struct Drained {
    pub retx: Vec<RetxEvent>,
    pub gaps: Vec<(u32, u64)>,
    pub losses: Vec<(Loss, u64, u32)>,
    /// (message id, message), ids as the tracker numbered them.
    pub msgs: Vec<(u32, MsgState)>,
}

const OPS: [&str; 6] = ["send", "write", "write_imm", "read", "other", ""];

fn op_code(op: &str) -> u8 {
    OPS.iter().position(|&o| o == op).unwrap_or(4) as u8
}

fn cause_code(c: Cause) -> u8 {
    match c {
        Cause::Loss => 0,
        Cause::GoBack => 1,
        Cause::Timeout => 2,
        Cause::Spurious => 3,
        Cause::Unknown => 4,
    }
}

fn cause_of(b: u8) -> Cause {
    [Cause::Loss, Cause::GoBack, Cause::Timeout, Cause::Spurious, Cause::Unknown][(b as usize).min(4)]
}

const SIGNALS: [Signal; 10] = [
    Signal::Gap,
    Signal::Nak,
    Signal::Sack,
    Signal::Ho,
    Signal::Timeout,
    Signal::SdrBitmap,
    Signal::FlorAck,
    Signal::NetrtRequest,
    Signal::ErdNack,
    Signal::Unknown,
];

fn signal_code(s: Signal) -> u8 {
    SIGNALS.iter().position(|&x| x == s).unwrap_or(9) as u8
}

fn signal_of(b: u8) -> Signal {
    SIGNALS[(b as usize).min(9)]
}

const REPAIRS: [Repair; 5] = [Repair::EndHost, Repair::InNetwork, Repair::ErasureCode, Repair::None, Repair::Unknown];
const EVIDENCE: [Evidence; 3] = [Evidence::HeaderOnly, Evidence::AskedFor, Evidence::Gap];

pub(crate) fn encode_retx(out: &mut Vec<u8>, e: &RetxEvent) {
    let sp = match e.spurious {
        Some(false) => 0,
        Some(true) => 1,
        None => 2,
    };
    let r = Rec::new()
        .u64(e.v)
        .opt(e.msn)
        .u32(e.psn)
        .u64(e.frame)
        .u64(e.time_ns)
        .u8(sp)
        .u8(cause_code(e.cause))
        .u8(signal_code(e.trigger))
        .u32(e.copy)
        .u32(e.msg);
    out.extend_from_slice(&r.0);
}

pub(crate) fn decode_retx(c: &mut Cursor<'_>) -> RetxEvent {
    let v = c.u64();
    let msn = c.opt();
    let psn = c.u32();
    let frame = c.u64();
    let time_ns = c.u64();
    let spurious = match c.u8() {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    };
    let cause = cause_of(c.u8());
    let trigger = signal_of(c.u8());
    let copy = c.u32();
    let msg = c.u32();
    RetxEvent { v, msn, psn, frame, time_ns, spurious, cause, trigger, copy, msg }
}

pub(crate) fn encode_loss(out: &mut Vec<u8>, l: &Loss, v: u64, m: u32) {
    let repair = REPAIRS.iter().position(|&x| x == l.repair).unwrap_or(4) as u8;
    let evidence = EVIDENCE.iter().position(|&x| x == l.evidence).unwrap_or(0) as u8;
    let r = Rec::new().u32(l.psn).u64(l.frame).u64(l.time_ns.0).u8(signal_code(l.signal)).u8(repair).u8(evidence).u64(v).u32(m);
    out.extend_from_slice(&r.0);
}

pub(crate) fn decode_loss(c: &mut Cursor<'_>) -> (Loss, u64, u32) {
    let psn = c.u32();
    let frame = c.u64();
    let time_ns = Ns(c.u64());
    let signal = signal_of(c.u8());
    let repair = REPAIRS[(c.u8() as usize).min(4)];
    let evidence = EVIDENCE[(c.u8() as usize).min(2)];
    let v = c.u64();
    let m = c.u32();
    (Loss { psn, frame, time_ns, signal, repair, evidence, message: None }, v, m)
}

pub(crate) fn encode_msg(out: &mut Vec<u8>, id: u32, m: &MsgState) {
    let r = Rec::new()
        .u32(id)
        .u8(op_code(m.op))
        .u64(m.first_psn)
        .opt(m.last_psn)
        .opt(m.dcp_msn)
        .u64(m.first_frame)
        .u64(m.first_time)
        .u64(m.last_frame)
        .opt(m.complete_frame)
        .opt(m.complete_time)
        .u64(m.retransmitted)
        .u64(m.bytes);
    out.extend_from_slice(&r.0);
}

pub(crate) fn decode_msg(c: &mut Cursor<'_>) -> (u32, MsgState) {
    let id = c.u32();
    let op = OPS[(c.u8() as usize).min(4)];
    let first_psn = c.u64();
    let last_psn = c.opt();
    let dcp_msn = c.opt();
    let first_frame = c.u64();
    let first_time = c.u64();
    let last_frame = c.u64();
    let complete_frame = c.opt();
    let complete_time = c.opt();
    let retransmitted = c.u64();
    let bytes = c.u64();
    let m = MsgState {
        op,
        first_psn,
        last_psn,
        dcp_msn,
        first_frame,
        first_time,
        last_frame,
        complete_frame,
        complete_time,
        retransmitted,
        bytes,
        finalized: true,
    };
    (id, m)
}


pub(crate) fn encode_gap(out: &mut Vec<u8>, psn: u32, frame: u64) {
    out.extend_from_slice(&Rec::new().u32(psn).u64(frame).0);
}

pub(crate) fn decode_gap(c: &mut Cursor<'_>) -> (u32, u64) {
    (c.u32(), c.u64())
}

/// Every record of one kind: those spilled (`spilled`, in the order written), then those still
/// held (`held`, which this empties).
pub(crate) fn decode_all<T>(mut spilled: Vec<u8>, held: &mut Vec<u8>, decode: fn(&mut Cursor<'_>) -> T) -> Vec<T> {
    spilled.extend_from_slice(held);
    held.clear();
    let mut c = Cursor { b: &spilled };
    let mut out = Vec::new();
    while !c.done() {
        out.push(decode(&mut c));
    }
    out
}

/// Every record of one kind, one at a time, as [`decode_all`] gives them but without holding
/// them: those spilled to `stream` (read a chunk at a time into `buf`), then those still held
/// (`held`).
pub(crate) fn each_record<T>(
    spill: &mut super::spill::Spill,
    stream: Option<usize>,
    held: &[u8],
    buf: &mut Vec<u8>,
    decode: fn(&mut Cursor<'_>) -> T,
    mut f: impl FnMut(T),
) -> std::io::Result<()> {
    let mut all = |b: &[u8]| {
        let mut c = Cursor { b };
        while !c.done() {
            f(decode(&mut c));
        }
    };
    if let Some(s) = stream {
        for k in 0..spill.chunk_count(s) {
            spill.read_chunk(s, k, buf)?;
            all(buf);
        }
        all(spill.unflushed(s));
    }
    all(held);
    Ok(())
}
