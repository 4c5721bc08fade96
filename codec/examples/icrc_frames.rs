//! Random RoCEv2 frames built by `rocescope_codec::build`, printed one per line in hex, for
//! `tests/icrc_scapy.py` to check their ICRCs with scapy (WIRE.md A.5).
//!
//! `cargo run -q -p rocescope-codec --example icrc_frames -- [SEED [COUNT]]`
//!
//! Every opcode of the table but 0x80 is used in turn, over IPv4 or IPv6 with 0-2 VLAN tags, random header
//! values (reserved bits included where the builder keeps them), payloads of 0-64 bytes (now and
//! then up to 1024) with their pad, with and without a UDP checksum and minimum-size padding.
//! The same seed gives the same frames. `pcap-tools/cli/tests/icrc_scapy.rs` includes this file as a
//! module to generate the same frames without running cargo.

use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ib::{AethRepr, IrnSackRepr, Opcode, Syndrome};

/// splitmix64: small, seedable and good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    pub fn bool(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }
    pub fn u24(&mut self) -> u32 {
        self.next_u64() as u32 & 0x00ff_ffff
    }
    pub fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut b = [0u8; N];
        b.iter_mut().for_each(|x| *x = self.next_u64() as u8);
        b
    }
    pub fn vec(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// `count` frames from `seed`; frame `i` uses the `i`-th opcode of the table (cyclically).
pub fn frames(seed: u64, count: usize) -> Vec<Vec<u8>> {
    // 0x80 decodes as a CNP with a note, which `rocescope check` reports: CNPs use 0x81 here.
    let opcodes: Vec<u8> = (0..=255u8).filter(|&o| o != 0x80 && Opcode(o).info().is_some()).collect();
    let mut rng = Rng::new(seed);
    (0..count).map(|i| frame(&mut rng, opcodes[i % opcodes.len()])).collect()
}

/// One random frame with the given opcode.
pub fn frame(rng: &mut Rng, opcode: u8) -> Vec<u8> {
    let info = Opcode(opcode).info().expect("an opcode of the table");
    let payload = if info.cnp {
        rng.vec(16)
    } else if opcode == 0x1d {
        rng.vec(8)
    } else if info.payload {
        let n = if rng.below(8) == 0 { rng.below(1025) } else { rng.below(65) };
        rng.vec(n as usize)
    } else {
        Vec::new()
    };
    let mut r = RoceRepr::new(opcode, rng.u24(), rng.u24());
    let b = &mut r.bth;
    b.se = rng.bool();
    b.mig_req = rng.bool();
    b.p_key = rng.next_u64() as u16;
    b.fecn = rng.bool();
    b.becn = rng.bool();
    b.resv6 = rng.below(64) as u8;
    b.ack_req = rng.bool();
    if let Some(h) = &mut r.rdeth {
        h.eecnxt = rng.u24();
    }
    if let Some(h) = &mut r.deth {
        h.q_key = rng.next_u64() as u32;
        h.src_qp = rng.u24();
    }
    if let Some(h) = &mut r.xrceth {
        h.xrc_srq = rng.u24();
    }
    if let Some(h) = &mut r.feth {
        h.sel = rng.below(4) as u8;
        h.plt = rng.below(16) as u8;
    }
    if let Some(h) = &mut r.reth {
        h.va = rng.next_u64();
        h.r_key = rng.next_u64() as u32;
        h.dma_len = rng.next_u64() as u32;
    }
    if let Some(h) = &mut r.atomic_eth {
        h.va = rng.next_u64();
        h.r_key = rng.next_u64() as u32;
        h.swap_add = rng.next_u64();
        h.compare = rng.next_u64();
    }
    if r.aeth.is_some() {
        let low = rng.below(32) as u8;
        let syndrome = match rng.below(3) {
            0 => Syndrome::Ack { credit: low },
            1 => Syndrome::RnrNak { timer: low },
            _ => Syndrome::Nak { code: low },
        };
        r.aeth = Some(AethRepr { syndrome, msn: rng.u24() });
        if opcode == 0x11 && rng.below(3) == 0 {
            r.aeth = Some(AethRepr { syndrome: Syndrome::Nak { code: 0 }, msn: rng.u24() });
            r.irn_sack = Some(IrnSackRepr { sack_psn: rng.u24() });
        }
    }
    if let Some(h) = &mut r.atomic_ack_eth {
        h.orig_rem_data = rng.next_u64();
    }
    if let Some(h) = &mut r.immdt {
        h.imm = rng.next_u64() as u32;
    }
    if let Some(h) = &mut r.ieth {
        h.r_key = rng.next_u64() as u32;
    }
    let r = r.with_payload(&payload);
    let net = if rng.bool() {
        NetRepr::Ipv4 {
            src: rng.bytes(),
            dst: rng.bytes(),
            tos: rng.next_u64() as u8,
            ttl: rng.next_u64() as u8,
            ident: rng.next_u64() as u16,
        }
    } else {
        NetRepr::Ipv6 {
            src: rng.bytes(),
            dst: rng.bytes(),
            traffic_class: rng.next_u64() as u8,
            flow_label: rng.next_u64() as u32 & 0xf_ffff,
            hop_limit: rng.next_u64() as u8,
        }
    };
    let mut f = FrameRepr::new(net, r);
    f.eth_dst = rng.bytes();
    f.eth_src = rng.bytes();
    let tags = rng.below(3);
    f.vlans = [(tags > 0).then(|| rng.next_u64() as u16), (tags > 1).then(|| rng.next_u64() as u16)];
    // The range NICs use: scapy reads a well-known source port (520, …) as that protocol.
    f.udp_src = 0xc000 | rng.next_u64() as u16;
    f.udp_checksum = rng.bool();
    f.pad_to_min = rng.bool();
    f.to_vec()
}

#[allow(dead_code)]
fn main() {
    let mut args = std::env::args().skip(1);
    let seed = args.next().map_or(1, |s| s.parse().expect("SEED: an unsigned integer"));
    let count = args.next().map_or(200, |s| s.parse().expect("COUNT: an unsigned integer"));
    let mut out = String::new();
    for f in frames(seed, count) {
        for b in f {
            out.push_str(&format!("{b:02x}"));
        }
        out.push('\n');
    }
    print!("{out}");
}
