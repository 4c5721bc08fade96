//! A capture mixing all six profiles (WIRE.md part B), for auto-detection and field tests:
//! every frame carries the profile `auto` must give it — its flow's profile once one of the
//! flow's packets has identified itself, `std` before (single pass, never relabelled) — and,
//! mixed in, ordinary RoCE traffic marked DSCP 26 and 27 that must stay `std`.

use rocescope_codec::build::{header_only, FrameRepr, NetRepr, RoceRepr, TcpFrameRepr};
use rocescope_codec::ext::erd::{EethRepr, NackEntry, NackRepr};
use rocescope_codec::ext::flor::{AckRepr, AddrRepr, SendRepr};
use rocescope_codec::ext::sdr::{CtrlRepr, DataRepr};
use rocescope_codec::ib::{AethRepr, DcpethRepr, DethRepr, ImmDtRepr, RethRepr, SsethRepr, Syndrome};
use rocescope_codec::{LinkType, Params, Profile};

/// One frame of the mix and the profile auto-detection must label it with.
#[derive(Clone, Debug)]
pub struct MixFrame {
    pub desc: String,
    pub bytes: Vec<u8>,
    pub expect: Profile,
}

fn v4(a: u8, b: u8, tos: u8) -> NetRepr {
    NetRepr::Ipv4 { src: [10, 1, 0, a], dst: [10, 1, 0, b], tos, ttl: 64, ident: 0 }
}

fn push(out: &mut Vec<MixFrame>, desc: impl Into<String>, bytes: Vec<u8>, expect: Profile) {
    out.push(MixFrame { desc: desc.into(), bytes, expect });
}

/// DCP: a 3-packet WRITE whose Middle confirms the flow, a header-only packet, an eMSN ACK,
/// a SEND with its SSN, another WRITE.
fn dcp(out: &mut Vec<MixFrame>) {
    let payload = [0x5au8; 1024];
    let net = v4(1, 2, 0x68);
    for (m, base) in [(0u32, 100u32), (1, 103)] {
        for i in 0..3u32 {
            let op = [0x06, 0x07, 0x08][i as usize];
            let mut r = RoceRepr::new_dcp(op, 0x100, base + i).with_payload(&payload);
            r.dcpeth = Some(DcpethRepr { msn: m, sretryno: 0 });
            r.reth = Some(RethRepr { va: 0x2000_0000 + (m as u64 * 3 + i as u64) * 1024, r_key: 0x42, dma_len: 3072 });
            // (The First is labelled DCP too: detection looks ahead to the Middle that decides.)
            let expect = Profile::Dcp;
            let f = FrameRepr::new(net, r).to_vec();
            if m == 1 && i == 1 {
                // This one is trimmed in the fabric: the receiver sees its header-only form.
                let ho = header_only(LinkType::Ethernet, &f, 2).unwrap();
                push(out, "DCP header-only (trimmed WRITE Middle)", ho, Profile::Dcp);
            }
            push(out, format!("DCP WRITE {op:#04x} msn {m}"), f, expect);
        }
    }
    let mut s = RoceRepr::new_dcp(0x04, 0x100, 106).with_payload(b"dcp send");
    s.dcpeth = Some(DcpethRepr { msn: 2, sretryno: 1 });
    s.sseth = Some(SsethRepr { ssn: 0 });
    push(out, "DCP SEND Only", FrameRepr::new(net, s).to_vec(), Profile::Dcp);
    let mut ack = RoceRepr::new(0x11, 0x100, 106);
    ack.aeth = Some(AethRepr { syndrome: Syndrome::Ack { credit: 31 }, msn: 3 });
    // The ACK travels back on the same QP number, tagged 01: its own flow, which a tag 01 ACK
    // alone does not identify (std until something does).
    // Tagged 01 and coming back from a DCP flow's destination: a DCP ACK.
    push(out, "DCP ACK (eMSN 3)", FrameRepr::new(v4(2, 1, 0x64), ack).to_vec(), Profile::Dcp);
}

/// SDR: data packets of one message over two channel QPs, then the receiver's SR_ACK.
fn sdr(out: &mut Vec<MixFrame>) {
    let params = Params::default();
    let payload = [0x33u8; 4096];
    for off in 0..8u32 {
        let d = DataRepr::new(params.sdr_split, 5, off, 0xCAFEF00D);
        let qp = 0x200 + (off % 2);
        let r = d.roce(&params, 4096, qp, off / 2, &payload);
        push(out, format!("SDR data msg 5 off {off}"), FrameRepr::new(v4(3, 4, 0x68), r).to_vec(), Profile::Sdr);
    }
    let sack = [0xffu8];
    let ctrl = CtrlRepr::SrAck { msg_seq: 5, cum_ack: 8, sack_bits: 8, sack: &sack }.to_vec();
    let r = RoceRepr::new(0x24, 0x300, 1).with_payload(&ctrl);
    push(out, "SDR SR_ACK", FrameRepr::new(v4(4, 3, 0x68), r).to_vec(), Profile::Sdr);
    let ctrl = CtrlRepr::Cts { msg_seq: 6, buf_len: 1 << 20 }.to_vec();
    let r = RoceRepr::new(0x24, 0x300, 2).with_payload(&ctrl);
    push(out, "SDR CTS", FrameRepr::new(v4(4, 3, 0x68), r).to_vec(), Profile::Sdr);
    let ctrl = CtrlRepr::SrNack { msg_seq: 6, indices: &[3, 7] }.to_vec();
    let mut r = RoceRepr::new(0x64, 0x301, 3).with_payload(&ctrl);
    r.deth = Some(DethRepr { q_key: 0x5d5, src_qp: 0x302 });
    push(out, "SDR SR_NACK over UD", FrameRepr::new(v4(4, 3, 0x68), r).to_vec(), Profile::Sdr);
}

/// Flor: a WRITE chunk before anything identifies the pair (std), the ADDR exchange, WRITE
/// chunks, a small SEND, the software ACK.
fn flor(out: &mut Vec<MixFrame>) {
    let params = Params::default();
    let chunk = [0x77u8; 4096];
    let write = |psn: u32, off: u32, hint: bool| {
        let mut r = RoceRepr::new(0x0B, 0x400, psn).with_payload(&chunk);
        r.reth = Some(RethRepr { va: 0x7000_0000 + off as u64 * 4096, r_key: 0x99, dma_len: 4096 });
        let imm = rocescope_codec::ext::flor::imm(params.flor_split, hint, 3, off);
        r.immdt = Some(ImmDtRepr { imm });
        FrameRepr::new(v4(5, 6, 0x68), r).to_vec()
    };
    // (Flor too: the flow is decided later in the file, and detection looks ahead.)
    push(out, "Flor WRITE chunk before the pair is known", write(10, 9, false), Profile::Flor);
    let req = SendRepr::addr(0, 1, AddrRepr::Req { mid: 3, msg_len: 3 * 4096 }).to_vec();
    push(out, "Flor ADDR_REQ", FrameRepr::new(v4(5, 6, 0x68), RoceRepr::new(0x04, 0x400, 11).with_payload(&req)).to_vec(), Profile::Flor);
    let resp = SendRepr::addr(0, 1, AddrRepr::Resp { mid: 3, r_key: 0x99, va: 0x7000_0000, buf_len: 3 * 4096 }).to_vec();
    push(out, "Flor ADDR_RESP", FrameRepr::new(v4(6, 5, 0x68), RoceRepr::new(0x04, 0x401, 1).with_payload(&resp)).to_vec(), Profile::Flor);
    for (i, off) in [0u32, 1, 2].iter().enumerate() {
        push(out, format!("Flor WRITE chunk {off}"), write(12 + i as u32, *off, *off == 2), Profile::Flor);
    }
    let retx = SendRepr::write_retx(2, 3, rocescope_codec::ext::flor::imm(params.flor_split, false, 3, 1), &chunk[..1024]).to_vec();
    push(out, "Flor WRITE_RETX SEND", FrameRepr::new(v4(5, 6, 0x68), RoceRepr::new(0x04, 0x400, 16).with_payload(&retx)).to_vec(), Profile::Flor);
    let small = SendRepr::data(1, 2, true, b"small flor message").to_vec();
    push(out, "Flor DATA SEND", FrameRepr::new(v4(5, 6, 0x68), RoceRepr::new(0x04, 0x400, 15).with_payload(&small)).to_vec(), Profile::Flor);
    let entries = [0u32, 0x00000C00, 0x00000C01, 0x80000C02];
    let bitmap = rocescope_codec::ext::flor::ack_bitmap([true, false, false, false], params.flor_ack_set_means);
    let ack = AckRepr { qpn: 0x400, bitmap, least_gn: 2, delay_ns: 1500, entries: &entries }.to_vec();
    let mut r = RoceRepr::new(0x64, 0x402, 1).with_payload(&ack);
    r.deth = Some(DethRepr { q_key: 0x1234, src_qp: 0x403 });
    push(out, "Flor software ACK", FrameRepr::new(v4(6, 5, 0x68), r).to_vec(), Profile::Flor);
}

/// NetRT: data of the served flow (std until a message names it), a retransmission request
/// (fabric tap: receiver ToR to sender ToR), the retransmitted copy with the mark, an
/// unfulfilled request.
fn netrt(out: &mut Vec<MixFrame>) {
    let data = |psn: u32, mark: bool| {
        let mut r = RoceRepr::new(0x07, 0x500, psn).with_payload(&[0x21; 1024]);
        r.bth.resv6 = mark as u8;
        FrameRepr::new(v4(7, 8, 0x68), r).to_vec()
    };
    push(out, "NetRT flow data before any request", data(0x102, false), Profile::Netrt);
    let mut body = vec![1u8, 0, 1, 2];
    body.extend([0u8; 15]);
    body.push(0x0b);
    let mut req = RoceRepr::new(0xc0, 0x500, 0x102);
    req.payload = &body;
    push(out, "NetRT retransmission request", FrameRepr::new(v4(8, 7, 0x68), req).to_vec(), Profile::Netrt);
    push(out, "NetRT in-network retransmission", data(0x102, true), Profile::Netrt);
    let body2 = [2u8, 0, 1, 5];
    let mut unf = RoceRepr::new(0xc0, 0x500, 0x105);
    unf.payload = &body2;
    push(out, "NetRT unfulfilled request", FrameRepr::new(v4(7, 8, 0x68), unf).to_vec(), Profile::Netrt);
}

/// ERD: RD and UD SENDs with their EETH, and the NACK stream over TCP in two segments.
fn erd(out: &mut Vec<MixFrame>) {
    for (i, op) in [0x44u8, 0x64, 0x44].iter().enumerate() {
        let mut payload = EethRepr { ty: 1, last: i == 2, msg_id: 77, s_len: 512, s_offset: i as u32 * 512 }.to_bytes().to_vec();
        payload.extend([0x44u8; 512]);
        let mut r = RoceRepr::new(*op, 0x600, 20 + i as u32).with_payload(&payload);
        if let Some(d) = r.deth.as_mut() {
            *d = DethRepr { q_key: 0x11112222, src_qp: 0x601 };
        }
        push(out, format!("ERD {} SEND with EETH", if *op == 0x44 { "RD" } else { "UD" }), FrameRepr::new(v4(9, 10, 0x68), r).to_vec(), Profile::Erd);
    }
    let entries = [NackEntry { src_qpn: 0x601, dst_qpn: 0x600, psn: 21 }, NackEntry { src_qpn: 0x601, dst_qpn: 0x600, psn: 23 }];
    let stream = NackRepr::new(&entries).to_vec();
    let net = NetRepr::ipv4([10, 1, 0, 10], [10, 1, 0, 9]);
    push(out, "ERD NACK segment 1", TcpFrameRepr::new(net, 50000, 4792, 7, &stream[..10]).to_vec(), Profile::Erd);
    push(out, "ERD NACK segment 2", TcpFrameRepr::new(net, 50000, 4792, 17, &stream[10..]).to_vec(), Profile::Erd);
}

/// Ordinary RoCE marked DSCP 26 and 27: WRITEs (refuted as DCP at their Middle) and SENDs.
fn ordinary(out: &mut Vec<MixFrame>) {
    for (tos, qp) in [(0x68u8, 0x700u32), (0x6c, 0x701)] {
        let net = v4(11, 12, tos);
        let mut first = RoceRepr::new(0x06, qp, 1).with_payload(&[0u8; 1024]);
        first.reth = Some(RethRepr { va: 0x9000, r_key: 1, dma_len: 2048 });
        push(out, format!("ordinary WRITE First tos {tos:#x}"), FrameRepr::new(net, first).to_vec(), Profile::Std);
        push(out, format!("ordinary WRITE Last tos {tos:#x}"), FrameRepr::new(net, RoceRepr::new(0x08, qp, 2).with_payload(&[0u8; 1024])).to_vec(), Profile::Std);
        push(out, format!("ordinary SEND tos {tos:#x}"), FrameRepr::new(net, RoceRepr::new(0x04, qp, 3).with_payload(&[1u8; 64])).to_vec(), Profile::Std);
    }
    // A SEND-only flow marked DSCP 26: nothing confirms or refutes DCP, so after
    // UNSURE_AFTER packets detection reports it once (and it stays std).
    for psn in 0..rocescope_codec::decoder::UNSURE_AFTER as u32 {
        let r = RoceRepr::new(0x04, 0x702, psn).with_payload(&[2u8; 64]);
        push(out, "ordinary SEND-only flow, DSCP 26", FrameRepr::new(v4(11, 12, 0x68), r).to_vec(), Profile::Std);
    }
}

/// The mix, flows interleaved round-robin so detection state must be kept per flow.
pub fn extension_mix() -> Vec<MixFrame> {
    let mut groups: Vec<Vec<MixFrame>> = vec![];
    for g in [dcp, sdr, flor, netrt, erd, ordinary] {
        let mut v = vec![];
        g(&mut v);
        groups.push(v);
    }
    let mut out = vec![];
    let longest = groups.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..longest {
        for g in &groups {
            if let Some(f) = g.get(i) {
                out.push(f.clone());
            }
        }
    }
    out
}

/// The mix as a pcapng file (fixed timestamps, descriptions as packet comments).
pub fn extension_mix_pcapng() -> Vec<u8> {
    let frames: Vec<crate::testgen::TestFrame> =
        extension_mix().into_iter().map(|f| crate::testgen::TestFrame { desc: f.desc, bytes: f.bytes }).collect();
    crate::testgen::pcapng_bytes(&frames)
}
