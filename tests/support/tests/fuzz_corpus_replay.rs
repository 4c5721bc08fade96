//! Replays the fuzz corpus on stable: every file under `fuzz/corpus/<target>/` goes through the
//! same harness the cargo-fuzz target runs (`rocescope_testsupport::fuzzing`), so `cargo test` catches a
//! regression on any input the fuzzer ever kept, crash reproducers included (docs/fuzzing.md).
//!
//! The seed inputs are generated here too, from the codec's builders:
//! `cargo test -p rocescope --test fuzz_corpus_replay -- --ignored write_seed_corpus`
//! writes them to `fuzz/corpus/<target>/seed-*` (then minimise with `cargo fuzz cmin`).

use std::path::{Path, PathBuf};

use rocescope_analysis::capture::CaptureWriter;
use rocescope_codec::build::{self, FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ext::dcp;
use rocescope_codec::ib::*;
use rocescope_codec::mac_control::MacControlRepr;
use rocescope_codec::{LinkType, Profile};
use rocescope_testsupport::fuzzing::{fuzz_analysis, fuzz_capture, fuzz_frame, fuzz_roundtrip};

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target)
}

/// Runs `harness` on every file in the target's corpus; returns how many there were.
fn replay(target: &str, harness: fn(&[u8])) -> usize {
    let dir = corpus_dir(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("{}: no corpus", dir.display());
        return 0;
    };
    let mut paths: Vec<PathBuf> = entries.map(|e| e.expect("corpus entry").path()).filter(|p| p.is_file()).collect();
    paths.sort();
    for p in &paths {
        let data = std::fs::read(p).expect("read corpus file");
        if let Err(e) = std::panic::catch_unwind(|| harness(&data)) {
            std::panic::resume_unwind(Box::new(format!("{target}: {} panicked: {e:?}", p.display())));
        }
    }
    paths.len()
}

#[test]
fn replay_frame_decode_corpus() {
    let n = replay("frame_decode", fuzz_frame);
    eprintln!("frame_decode: {n} inputs replayed");
}

#[test]
fn replay_capture_file_corpus() {
    let n = replay("capture_file", fuzz_capture);
    eprintln!("capture_file: {n} inputs replayed");
}

#[test]
fn replay_roundtrip_corpus() {
    let n = replay("roundtrip", fuzz_roundtrip);
    eprintln!("roundtrip: {n} inputs replayed");
}

#[test]
fn replay_analysis_corpus() {
    let n = replay("analysis", fuzz_analysis);
    eprintln!("analysis: {n} inputs replayed");
}

/// The generated seeds pass the harnesses even where no corpus is checked out.
#[test]
fn generated_seeds_pass() {
    let s = seeds();
    for (target, name, data) in &s {
        let h: fn(&[u8]) = match *target {
            "frame_decode" => fuzz_frame,
            "capture_file" => fuzz_capture,
            _ => fuzz_roundtrip,
        };
        if let Err(e) = std::panic::catch_unwind(|| h(data)) {
            panic!("seed {target}/{name} panicked: {e:?}");
        }
    }
    assert!(s.len() > 300, "{} seeds", s.len());
}

/// Writes the generated seeds into `fuzz/corpus/<target>/seed-<name>`.
#[test]
#[ignore = "writes fuzz/corpus; run by hand (docs/fuzzing.md)"]
fn write_seed_corpus() {
    for (target, name, data) in seeds() {
        let dir = corpus_dir(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("seed-{name}")), data).unwrap();
    }
}

// ---- seed generation ----

/// Every opcode the table knows, plus a few it does not.
fn opcodes() -> Vec<u8> {
    let mut v: Vec<u8> = (0..=255u8).filter(|&o| Opcode(o).info().is_some()).collect();
    v.extend([0x15, 0x1e, 0x2c, 0x60, 0x82, 0xc0, 0xff]);
    v
}

/// A small deterministic byte generator.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u8 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 56) as u8
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next()).collect()
    }
}

const V4: ([u8; 4], [u8; 4]) = ([192, 168, 1, 1], [192, 168, 1, 2]);
const V6: ([u8; 16], [u8; 16]) =
    ([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);

fn nets() -> [(&'static str, NetRepr); 3] {
    [
        ("v4", NetRepr::ipv4(V4.0, V4.1)),
        ("v6", NetRepr::ipv6(V6.0, V6.1)),
        ("v1", NetRepr::Grh { src: V6.0, dst: V6.1, traffic_class: 0x68, flow_label: 7, hop_limit: 64 }),
    ]
}

/// A RoCE packet for `opcode` with every header filled with recognisable values.
fn roce(opcode: u8, payload: &[u8]) -> RoceRepr<'_> {
    let mut r = RoceRepr::new(opcode, 0x12, 0x00ab_cdef);
    r.bth.ack_req = true;
    if let Some(h) = &mut r.rdeth {
        h.eecnxt = 5;
    }
    if let Some(h) = &mut r.deth {
        h.q_key = 0x1111_1111;
        h.src_qp = 0x22;
    }
    if let Some(h) = &mut r.xrceth {
        h.xrc_srq = 9;
    }
    if let Some(h) = &mut r.feth {
        h.sel = 1;
        h.plt = 2;
    }
    if let Some(h) = &mut r.reth {
        *h = RethRepr { va: 0x7f00_0000_1000, r_key: 0x1234, dma_len: payload.len() as u32 };
    }
    if let Some(h) = &mut r.atomic_eth {
        *h = AtomicEthRepr { va: 0x1000, r_key: 7, swap_add: 1, compare: 2 };
    }
    if let Some(h) = &mut r.immdt {
        h.imm = 0xdead_beef;
    }
    if let Some(h) = &mut r.ieth {
        h.r_key = 0x4321;
    }
    match Opcode(opcode).info() {
        Some(i) if i.payload => r.with_payload(payload),
        None => {
            r.payload = payload;
            r
        }
        _ => r,
    }
}

fn eth_frame(net: NetRepr, r: RoceRepr<'_>, vlans: [Option<u16>; 2]) -> Vec<u8> {
    let mut fr = FrameRepr::new(net, r);
    fr.vlans = vlans;
    fr.to_vec()
}

/// Rewraps an Ethernet frame (no VLAN) for another link type.
fn relink(link: LinkType, eth: &[u8]) -> Vec<u8> {
    let ethertype = &eth[12..14];
    let body = &eth[14..];
    let mut v = Vec::new();
    match link {
        LinkType::Ethernet => v.extend_from_slice(eth),
        LinkType::LinuxSll => {
            v.extend_from_slice(&[0, 0, 0, 1, 0, 6]);
            v.extend_from_slice(&eth[6..12]);
            v.extend_from_slice(&[0, 0]);
            v.extend_from_slice(ethertype);
            v.extend_from_slice(body);
        }
        LinkType::LinuxSll2 => {
            v.extend_from_slice(ethertype);
            v.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 6]);
            v.extend_from_slice(&eth[6..12]);
            v.extend_from_slice(&[0, 0]);
            v.extend_from_slice(body);
        }
        LinkType::RawIp => v.extend_from_slice(body),
        // Not a fuzzed link type (fuzzing::LINKS): an Ethernet frame has no InfiniBand form.
        LinkType::Infiniband => unreachable!("relink to native InfiniBand"),
    }
    v
}

fn link_ctl(link: LinkType) -> u8 {
    rocescope_testsupport::fuzzing::LINKS.iter().position(|l| *l == link).unwrap() as u8
}

/// `frame_decode` input: control byte, profile byte (0: std, defaults), frame.
fn fd(ctl: u8, frame: &[u8]) -> Vec<u8> {
    fdp(ctl, 0, frame)
}

/// `frame_decode` input with a profile byte (see `rocescope_testsupport::fuzzing::decode_options`).
fn fdp(ctl: u8, profile: u8, frame: &[u8]) -> Vec<u8> {
    let mut v = vec![ctl, profile];
    v.extend_from_slice(frame);
    v
}

/// Profile bytes with the default parameters (DCP tag shift 2, NetRT opcode 0xC0).
const DCP: u8 = 1 | 2 << 3;
const SDR: u8 = 2 | 2 << 3;
const FLOR: u8 = 3 | 2 << 3;
const NETRT: u8 = 4 | 2 << 3;
const ERD: u8 = 5 | 2 << 3;

/// Ethernet · IPv4 (the given ToS) · UDP 4791 · `roce` as given (no ICRC added).
fn ipv4_udp(tos: u8, roce: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00];
    let total = (20 + 8 + roce.len()) as u16;
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[1] = tos;
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip[6] = 0x40;
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&V4.0);
    ip[16..20].copy_from_slice(&V4.1);
    let c = build::internet_checksum(&[&ip]);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&0xc000u16.to_be_bytes());
    f.extend_from_slice(&4791u16.to_be_bytes());
    f.extend_from_slice(&((8 + roce.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(roce);
    f
}

/// (target, name, bytes) for every seed.
fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let mut out: Vec<(&'static str, String, Vec<u8>)> = Vec::new();
    let mut rng = Lcg(0x5eed);
    let payload5 = *b"hello";
    let mut frames: Vec<(String, Vec<u8>)> = Vec::new(); // Ethernet frames, for the captures too

    // Every opcode over IPv4, IPv6 and RoCEv1.
    for op in opcodes() {
        for (nn, net) in nets() {
            let f = eth_frame(net, roce(op, &payload5), [None, None]);
            frames.push((format!("op{op:02x}-{nn}"), f));
        }
    }
    for (name, f) in &frames {
        out.push(("frame_decode", name.clone(), fd(0, f)));
    }

    // VLAN tags: one, two (802.1ad outer), and three (unsupported).
    let base = eth_frame(NetRepr::ipv4(V4.0, V4.1), roce(0x0a, &payload5), [None, None]);
    for (name, vl) in [("vlan1", [Some(0x2064), None]), ("vlan2", [Some(0x0010), Some(0x6064)])] {
        out.push((
            "frame_decode",
            name.into(),
            fd(0, &eth_frame(NetRepr::ipv4(V4.0, V4.1), roce(0x04, &payload5), vl)),
        ));
        out.push((
            "frame_decode",
            format!("{name}-v6"),
            fd(0, &eth_frame(NetRepr::ipv6(V6.0, V6.1), roce(0x11, &[]), vl)),
        ));
    }
    let mut three = base[..12].to_vec();
    for _ in 0..3 {
        three.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    }
    three.extend_from_slice(&base[12..]);
    out.push(("frame_decode", "vlan3".into(), fd(0, &three)));

    // Other link types.
    for link in [LinkType::LinuxSll, LinkType::LinuxSll2, LinkType::RawIp] {
        for (nn, net) in nets() {
            if nn == "v1" && link == LinkType::RawIp {
                continue;
            }
            let f = relink(link, &eth_frame(net, roce(0x0b, &payload5), [None, None]));
            out.push(("frame_decode", format!("{link:?}-{nn}"), fd(link_ctl(link), &f)));
        }
    }

    // Verification off, and snaplen-cut copies at every header boundary (the control byte
    // says the frame was longer on the wire).
    out.push(("frame_decode", "noverify".into(), fd(4, &base)));
    for (src, f) in [
        ("rdwr-v4", &base),
        ("atomic-v6", &eth_frame(NetRepr::ipv6(V6.0, V6.1), roce(0x13, &[]), [Some(5), None])),
        ("cm-v1", &frames.iter().find(|(n, _)| n == "op64-v1").unwrap().1),
        ("rdsend-v4", &eth_frame(NetRepr::ipv4(V4.0, V4.1), roce(0x45, &payload5), [None, None])),
    ] {
        for cut in [0, 1, 6, 13, 14, 15, 20, 33, 34, 41, 42, 50, 53, 54, 58, 62, 70, 74, 78, 90] {
            if cut < f.len() {
                let n = ((f.len() - cut) as u32).next_power_of_two().trailing_zeros() as u8 + 1;
                out.push(("frame_decode", format!("cut{cut}-{src}"), fd(n << 3, &f[..cut])));
            }
        }
    }

    // Malformed RoCE: bad ICRC, PadCnt too large, UDP length mismatch, TVer, IPv4 options,
    // IPv4 fragment, IPv6 extension header, UDP length < 8, GRH next header, non-RoCE UDP.
    let mut bad_icrc = base.clone();
    let n = bad_icrc.len();
    bad_icrc[n - 1] ^= 0xff;
    out.push(("frame_decode", "bad-icrc".into(), fd(0, &bad_icrc)));
    let mut r = roce(0x04, &payload5);
    r.bth.pad_cnt = 3;
    r.payload = b"";
    out.push((
        "frame_decode",
        "padcnt-too-large".into(),
        fd(0, &eth_frame(NetRepr::ipv4(V4.0, V4.1), r, [None, None])),
    ));
    let mut r = roce(0x11, &[]);
    r.bth.tver = 3;
    r.bth.pad_cnt = 2;
    out.push(("frame_decode", "tver-pad-on-ack".into(), fd(0, &eth_frame(NetRepr::ipv4(V4.0, V4.1), r, [None, None]))));
    let mut m = base.clone();
    m[14 + 20 + 5] = 0x08; // UDP length 8: no room for the BTH
    out.push(("frame_decode", "udp-len-8".into(), fd(0, &m)));
    let mut m = base.clone();
    m[14 + 20 + 4] = 0;
    m[14 + 20 + 5] = 0x04;
    out.push(("frame_decode", "udp-len-4".into(), fd(0, &m)));
    let mut m = base.clone();
    m[14 + 20 + 5] = m[14 + 20 + 5].wrapping_add(4);
    out.push(("frame_decode", "udp-ip-mismatch".into(), fd(0, &m)));
    let mut m = base.clone();
    m[14 + 3] = m[14 + 3].wrapping_add(200); // IPv4 total length beyond the frame
    out.push(("frame_decode", "ip-len-beyond".into(), fd(0, &m)));
    let mut m = base.clone();
    m[14 + 6] = 0x20; // more fragments
    out.push(("frame_decode", "ipv4-fragment".into(), fd(4, &m)));
    let mut m = base.clone();
    m[14 + 10] ^= 1; // IPv4 header checksum
    out.push(("frame_decode", "ipv4-checksum".into(), fd(0, &m)));
    let mut m = base[..14 + 20].to_vec(); // IPv4 with 8 bytes of options (IHL 7)
    m[14] = 0x47;
    let tl = u16::from_be_bytes([m[16], m[17]]) + 8;
    m[16..18].copy_from_slice(&tl.to_be_bytes());
    m.extend_from_slice(&[1, 1, 1, 1, 1, 1, 1, 0]);
    m.extend_from_slice(&base[14 + 20..]);
    build::fix_icrc(LinkType::Ethernet, &mut m);
    out.push(("frame_decode", "ipv4-options".into(), fd(4, &m)));
    let v6 = eth_frame(NetRepr::ipv6(V6.0, V6.1), roce(0x04, &payload5), [None, None]);
    let mut m = v6.clone();
    m[14 + 6] = 0; // hop-by-hop options
    out.push(("frame_decode", "ipv6-ext".into(), fd(0, &m)));
    let mut m = v6.clone();
    m[14 + 4] = 0xff; // payload length beyond the frame
    out.push(("frame_decode", "ipv6-len-beyond".into(), fd(0, &m)));
    let v1 = eth_frame(nets()[2].1, roce(0x04, &payload5), [None, None]);
    let mut m = v1.clone();
    m[14 + 6] = 0x11;
    out.push(("frame_decode", "grh-not-iba".into(), fd(0, &m)));
    let mut m = v1.clone();
    m[14 + 4] = 0xff;
    out.push(("frame_decode", "grh-len-beyond".into(), fd(0, &m)));
    let mut m = base.clone();
    m[14 + 20 + 2..14 + 20 + 4].copy_from_slice(&53u16.to_be_bytes()); // DNS, not RoCE
    out.push(("frame_decode", "udp-not-roce".into(), fd(0, &m)));
    let mut m = base.clone();
    m[14 + 9] = 6; // TCP
    out.push(("frame_decode", "tcp".into(), fd(4, &m)));
    let mut m = base.clone();
    m[12..14].copy_from_slice(&[0x08, 0x06]); // ARP
    out.push(("frame_decode", "arp".into(), fd(0, &m)));
    let mut m = base.clone();
    m[14] = 0x75; // IP version 7
    out.push(("frame_decode", "ip-version-7".into(), fd(3, &m[14..])));

    // IRN selective NAK, AETH kinds, CNP variants, atomic write of the wrong size.
    for (name, syn) in [
        ("ack", Syndrome::Ack { credit: 3 }),
        ("rnr", Syndrome::RnrNak { timer: 14 }),
        ("nak-seq", Syndrome::Nak { code: 0 }),
        ("nak-access", Syndrome::Nak { code: 2 }),
        ("reserved", Syndrome::Reserved(0x40)),
    ] {
        let mut r = roce(0x11, &[]);
        r.aeth = Some(AethRepr { syndrome: syn, msn: 77 });
        if name == "nak-seq" {
            r.irn_sack = Some(IrnSackRepr { sack_psn: 0x1234 });
        }
        out.push((
            "frame_decode",
            format!("aeth-{name}"),
            fd(0, &eth_frame(NetRepr::ipv4(V4.0, V4.1), r, [None, None])),
        ));
    }
    let mut r = roce(0x81, &[]);
    r.payload = &[0; 8];
    out.push(("frame_decode", "cnp-short".into(), fd(0, &eth_frame(NetRepr::ipv4(V4.0, V4.1), r, [None, None]))));
    let big = rng.bytes(1500);
    out.push((
        "frame_decode",
        "send-only-1500".into(),
        fd(0, &eth_frame(NetRepr::ipv4(V4.0, V4.1), roce(0x04, &big), [None, None])),
    ));
    out.push((
        "frame_decode",
        "atomic-write-3".into(),
        fd(0, &eth_frame(NetRepr::ipv4(V4.0, V4.1), roce(0x1d, b"abc"), [None, None])),
    ));

    // CM MADs of every message (and a SIDR attribute, and a short one).
    let msgs = [CmMsg::Req, CmMsg::Mra, CmMsg::Rej, CmMsg::Rep, CmMsg::Rtu, CmMsg::Dreq, CmMsg::Drep];
    for msg in msgs {
        let cm =
            CmRepr { msg, transaction_id: 42, local_comm_id: 0x100, remote_comm_id: 0x200, qpn: 0x33, start_psn: 0x44 };
        let mut mad = [0u8; CmRepr::LEN];
        cm.emit(&mut mad);
        let mut r = RoceRepr::new(0x64, 1, 3).with_payload(&mad);
        if let Some(d) = &mut r.deth {
            d.q_key = 0x8001_0000;
            d.src_qp = 1;
        }
        let f = eth_frame(NetRepr::ipv4(V4.0, V4.1), r, [None, None]);
        out.push(("frame_decode", format!("cm-{}", msg.name()), fd(0, &f)));
        frames.push((format!("cm-{}", msg.name()), f));
    }
    let mut mad = [0u8; CmRepr::LEN];
    CmRepr { msg: CmMsg::Req, transaction_id: 1, local_comm_id: 1, remote_comm_id: 0, qpn: 1, start_psn: 1 }
        .emit(&mut mad);
    mad[17] = 0x17; // SIDR REQ
    out.push((
        "frame_decode",
        "cm-sidr".into(),
        fd(0, &eth_frame(NetRepr::ipv4(V4.0, V4.1), RoceRepr::new(0x64, 1, 3).with_payload(&mad), [None, None])),
    ));
    out.push((
        "frame_decode",
        "cm-short".into(),
        fd(0, &eth_frame(NetRepr::ipv4(V4.0, V4.1), RoceRepr::new(0x64, 1, 3).with_payload(&mad[..40]), [None, None])),
    ));

    // PAUSE and PFC (and a MAC control frame of another opcode, and cut ones).
    let mut pause = Vec::new();
    build::mac_control_frame([2, 0, 0, 0, 0, 9], &MacControlRepr::Pause { quanta: 0xffff }, &mut pause);
    let mut pfc = Vec::new();
    build::mac_control_frame(
        [2, 0, 0, 0, 0, 9],
        &MacControlRepr::Pfc { class_enable: 0x08, quanta: [0, 0, 0, 0xffff, 0, 0, 0, 0] },
        &mut pfc,
    );
    out.push(("frame_decode", "pause".into(), fd(0, &pause)));
    out.push(("frame_decode", "pfc".into(), fd(0, &pfc)));
    out.push(("frame_decode", "pfc-cut".into(), fd(3 << 3, &pfc[..24])));
    out.push(("frame_decode", "macctl-cut".into(), fd(3 << 3, &pfc[..15])));
    let mut m = pause.clone();
    m[15] = 0x02;
    out.push(("frame_decode", "macctl-gate".into(), fd(0, &m)));
    frames.push(("pause".into(), pause));
    frames.push(("pfc".into(), pfc));

    // Profiles. DCP: data packets (tag 10) of every DCP opcode, header-only (tag 11), ACK with
    // eMSN (tag 01), untagged; the same frames under a tag shift of 0.
    let tagged = |tos_tag: u8, r: RoceRepr<'_>| {
        let tos = rocescope_codec::ext::dcp::with_tag(0x60, 2, tos_tag);
        eth_frame(NetRepr::Ipv4 { src: V4.0, dst: V4.1, tos, ttl: 64, ident: 0 }, r, [None, None])
    };
    for op in [0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0x0a, 0x0b, 0x0c, 0x16, 0x17] {
        let mut r = RoceRepr::new_dcp(op, 0x12, 0x100);
        if let Some(h) = &mut r.dcpeth {
            *h = DcpethRepr { msn: 7, sretryno: 1 };
        }
        if let Some(h) = &mut r.sseth {
            h.ssn = 9;
        }
        if Opcode(op).info_dcp().is_some_and(|i| i.payload) {
            r = r.with_payload(&payload5);
        }
        out.push(("frame_decode", format!("dcp-data-op{op:02x}"), fdp(0, DCP, &tagged(dcp::TAG_DATA, r))));
    }
    let mut ho = RoceRepr::new(0x0a, 0x12, 0x100);
    ho.reth = None;
    let mut ho_bytes = vec![0u8; 12];
    ho.bth.emit(&mut ho_bytes);
    ho_bytes.extend_from_slice(&[0, 0, 7]);
    let ho_tos = dcp::with_tag(0x60, 2, dcp::TAG_HO);
    out.push(("frame_decode", "dcp-header-only".into(), fdp(0, DCP, &ipv4_udp(ho_tos, &ho_bytes))));
    out.push((
        "frame_decode",
        "dcp-header-only-long".into(),
        fdp(0, DCP, &ipv4_udp(ho_tos, &[&ho_bytes[..], &[0; 8]].concat())),
    ));
    let mut ack = roce(0x11, &[]);
    ack.aeth = Some(AethRepr { syndrome: Syndrome::Ack { credit: 31 }, msn: 5 });
    out.push(("frame_decode", "dcp-ack-emsn".into(), fdp(0, DCP, &tagged(dcp::TAG_ACK, ack))));
    out.push(("frame_decode", "dcp-untagged".into(), fdp(0, DCP, &tagged(dcp::TAG_NONE, roce(0x04, &payload5)))));
    out.push(("frame_decode", "dcp-tos68".into(), fdp(0, DCP, &base)));
    out.push(("frame_decode", "dcp-shift0".into(), fdp(0, 1, &tagged(dcp::TAG_DATA, RoceRepr::new_dcp(0x04, 1, 1)))));
    out.push(("frame_decode", "dcp-v1".into(), fdp(0, DCP, &v1)));
    // NetRT: request (bitmap), unfulfilled, wrong type/length, marked data packet, other opcode.
    let mut body = vec![1u8, 0, 1, 2];
    body.extend_from_slice(&[0; 15]);
    body.push(0x0b);
    let netrt = |body: &[u8], op: u8| {
        let mut r = RoceRepr::new(op, 0x12, 0x102);
        r.payload = body;
        eth_frame(NetRepr::ipv4(V4.0, V4.1), r, [None, None])
    };
    out.push(("frame_decode", "netrt-request".into(), fdp(0, NETRT, &netrt(&body, 0xc0))));
    out.push(("frame_decode", "netrt-unfulfilled".into(), fdp(0, NETRT, &netrt(&[2, 0, 1, 2], 0xc0))));
    out.push(("frame_decode", "netrt-type9".into(), fdp(0, NETRT, &netrt(&[9, 0, 1, 2], 0xc0))));
    out.push(("frame_decode", "netrt-short".into(), fdp(0, NETRT, &netrt(&body[..12], 0xc0))));
    out.push(("frame_decode", "netrt-opcode-ff".into(), fdp(0, NETRT | 3 << 6, &netrt(&body, 0xff))));
    out.push(("frame_decode", "netrt-opcode-0a".into(), fdp(0, NETRT | 2 << 6, &base)));
    let mut marked = roce(0x04, &payload5);
    marked.bth.resv6 = 1;
    out.push((
        "frame_decode",
        "netrt-mark".into(),
        fdp(0, NETRT, &eth_frame(NetRepr::ipv4(V4.0, V4.1), marked, [None, None])),
    ));
    for (name, prof) in [("sdr", SDR), ("flor", FLOR), ("erd", ERD)] {
        out.push((
            "frame_decode",
            format!("{name}-imm"),
            fdp(0, prof, &frames.iter().find(|(n, _)| n == "op0b-v4").unwrap().1),
        ));
    }

    // The six-profile mix the acceptance tests use (rocescope_testsupport::testgen_ext): every frame under
    // the profile it belongs to, and per profile a small capture of its flows in order (the
    // stateful decoder's detection, SDR tracking and ERD NACK reassembly need the sequence).
    let mix = rocescope_testsupport::testgen_ext::extension_mix();
    for (i, m) in mix.iter().enumerate() {
        let k = Profile::ALL.iter().position(|p| *p == m.expect).unwrap() as u8;
        out.push(("frame_decode", format!("mix{i:03}-{}", m.expect.name()), fdp(0, k | 2 << 3, &m.bytes)));
    }
    for p in Profile::ALL {
        let mut w = CaptureWriter::new(Vec::new(), &["mix"]).unwrap();
        let mut size = 0;
        for (i, m) in mix.iter().filter(|m| m.expect == p).enumerate() {
            // Long payloads add nothing the headers do not: keep each file small.
            let cut = if m.bytes.len() <= 600 { m.bytes.len() } else { 160 };
            if size + cut > 12_000 {
                break;
            }
            size += cut;
            w.write_truncated(0, 1_700_000_000_000_000_000 + i as u64 * 1000, &m.bytes, cut).unwrap();
        }
        out.push(("capture_file", format!("mix-{}", p.name()), w.into_inner()));
    }

    // A few random frames (noise, for the mutator).
    for i in 0..4 {
        let len = 20 + 30 * i;
        out.push(("frame_decode", format!("random{i}"), rng.bytes(len)));
    }
    out.push(("frame_decode", "empty".into(), vec![]));

    // ---- capture files ----
    let pick = |names: &[&str]| -> Vec<Vec<u8>> {
        names.iter().map(|n| frames.iter().find(|(m, _)| m == n).unwrap_or_else(|| panic!("{n}")).1.clone()).collect()
    };
    let some = pick(&["op04-v4", "op0a-v6", "op11-v4", "op81-v4", "op64-v1", "cm-req", "pfc"]);
    for big in [false, true] {
        let e = if big { "be" } else { "le" };
        out.push(("capture_file", format!("pcap-us-{e}"), pcap(big, false, 1, 65535, &some, None)));
        out.push(("capture_file", format!("pcap-ns-{e}"), pcap(big, true, 1, 65535, &some[..2], None)));
        out.push(("capture_file", format!("pcapng-{e}"), pcapng(big, &some)));
    }
    // Records cut to 64 bytes, with the file's snaplen 65535 and 64 (pcap-file rejects the
    // latter: orig_len > snaplen; see docs/fuzzing.md).
    out.push(("capture_file", "pcap-caplen64".into(), pcap(false, false, 1, 65535, &some[..3], Some(64))));
    out.push(("capture_file", "pcap-snaplen64".into(), pcap(false, false, 1, 64, &some[..3], Some(64))));
    for link in [LinkType::LinuxSll, LinkType::LinuxSll2, LinkType::RawIp] {
        let lt = match link {
            LinkType::LinuxSll => 113,
            LinkType::LinuxSll2 => 276,
            _ => 101,
        };
        let fs: Vec<Vec<u8>> = some[..3].iter().map(|f| relink(link, f)).collect();
        out.push(("capture_file", format!("pcap-{link:?}"), pcap(false, false, lt, 65535, &fs, None)));
    }
    out.push(("capture_file", "pcap-linktype-unknown".into(), pcap(false, false, 147, 65535, &some[..1], None)));
    // Every opcode in one file, through the project's own pcapng writer.
    let mut w = CaptureWriter::new(Vec::new(), &["eth0", "eth1"]).unwrap();
    for (i, (_, f)) in frames.iter().enumerate().filter(|(_, (n, _))| n.ends_with("-v4")) {
        w.write_truncated(
            (i % 2) as u32,
            1_700_000_000_000_000_000 + i as u64 * 1000,
            f,
            if i % 7 == 0 { 40 } else { f.len() },
        )
        .unwrap();
    }
    out.push(("capture_file", "pcapng-writer-all-opcodes".into(), w.into_inner()));
    // Damaged files.
    let good = pcap(false, false, 1, 65535, &some[..2], None);
    out.push(("capture_file", "pcap-cut-header".into(), good[..20].to_vec()));
    out.push(("capture_file", "pcap-cut-record".into(), good[..good.len() - 10].to_vec()));
    let mut m = good.clone();
    m[24 + 8..24 + 12].copy_from_slice(&0x7fff_ffffu32.to_le_bytes()); // huge incl_len
    out.push(("capture_file", "pcap-huge-caplen".into(), m));
    let ng = pcapng(false, &some[..2]);
    out.push(("capture_file", "pcapng-cut".into(), ng[..ng.len() - 6].to_vec()));
    out.push(("capture_file", "not-a-capture".into(), b"GIF89a not a capture at all".to_vec()));
    out.push(("capture_file", "empty".into(), vec![]));

    // ---- roundtrip ----
    for (k, op) in opcodes().into_iter().enumerate() {
        let mut v = vec![(k % 6) as u8, op];
        v.extend(rng.bytes(40 + k % 50));
        out.push(("roundtrip", format!("op{op:02x}"), v));
    }
    for (k, op) in [0u8, 3, 4, 6, 9, 0x0b, 0x0c, 0x17].into_iter().enumerate() {
        let mut v = vec![5, (k as u8) * 17 + op];
        v.extend(rng.bytes(60 + k * 7));
        out.push(("roundtrip", format!("dcp{k}"), v));
    }
    for sel in [6u8, 7] {
        for k in 0..7u8 {
            let mut v = vec![sel, k];
            v.extend(rng.bytes(60));
            out.push(("roundtrip", format!("sel{sel}-{k}"), v));
        }
    }
    out
}

/// A classic pcap file.
fn pcap(big: bool, nanos: bool, linktype: u32, snaplen: u32, frames: &[Vec<u8>], caplen: Option<usize>) -> Vec<u8> {
    let u32b = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
    let u16b = |v: u16| if big { v.to_be_bytes() } else { v.to_le_bytes() };
    let mut o = Vec::new();
    o.extend_from_slice(&u32b(if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 }));
    o.extend_from_slice(&u16b(2));
    o.extend_from_slice(&u16b(4));
    o.extend_from_slice(&[0; 8]);
    o.extend_from_slice(&u32b(snaplen));
    o.extend_from_slice(&u32b(linktype));
    for (i, f) in frames.iter().enumerate() {
        let incl = caplen.map_or(f.len(), |c| c.min(f.len()));
        o.extend_from_slice(&u32b(1_700_000_000 + i as u32));
        o.extend_from_slice(&u32b(i as u32 * 1000));
        o.extend_from_slice(&u32b(incl as u32));
        o.extend_from_slice(&u32b(f.len() as u32));
        o.extend_from_slice(&f[..incl]);
    }
    o
}

/// A pcapng file: two sections; interfaces of several link types and timestamp resolutions;
/// enhanced and simple packet blocks; an unknown block type.
fn pcapng(big: bool, frames: &[Vec<u8>]) -> Vec<u8> {
    let u32b = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
    let u16b = |v: u16| if big { v.to_be_bytes() } else { v.to_le_bytes() };
    let block = |o: &mut Vec<u8>, ty: u32, body: &[u8]| {
        let len = 12 + body.len().div_ceil(4) * 4;
        o.extend_from_slice(&u32b(ty));
        o.extend_from_slice(&u32b(len as u32));
        o.extend_from_slice(body);
        o.resize(o.len() + (4 - body.len() % 4) % 4, 0);
        o.extend_from_slice(&u32b(len as u32));
    };
    let shb = |o: &mut Vec<u8>| {
        let mut b = u32b(0x1a2b_3c4d).to_vec();
        b.extend_from_slice(&u16b(1));
        b.extend_from_slice(&u16b(0));
        b.extend_from_slice(&[0xff; 8]);
        block(o, 0x0a0d_0d0a, &b);
    };
    let idb = |o: &mut Vec<u8>, linktype: u16, tsresol: Option<u8>| {
        let mut b = u16b(linktype).to_vec();
        b.extend_from_slice(&u16b(0));
        b.extend_from_slice(&u32b(0));
        if let Some(r) = tsresol {
            b.extend_from_slice(&u16b(9));
            b.extend_from_slice(&u16b(1));
            b.extend_from_slice(&[r, 0, 0, 0]);
            b.extend_from_slice(&u16b(0));
            b.extend_from_slice(&u16b(0));
        }
        block(o, 1, &b);
    };
    let epb = |o: &mut Vec<u8>, iface: u32, ts: u64, data: &[u8], orig: usize| {
        let mut b = u32b(iface).to_vec();
        b.extend_from_slice(&u32b((ts >> 32) as u32));
        b.extend_from_slice(&u32b(ts as u32));
        b.extend_from_slice(&u32b(data.len() as u32));
        b.extend_from_slice(&u32b(orig as u32));
        b.extend_from_slice(data);
        b.resize(b.len().div_ceil(4) * 4, 0);
        block(o, 6, &b);
    };
    let mut o = Vec::new();
    shb(&mut o);
    idb(&mut o, 1, None); // microseconds
    idb(&mut o, 1, Some(9)); // nanoseconds
    idb(&mut o, 113, Some(0x80 | 20)); // 2^-20 s
    for (i, f) in frames.iter().enumerate() {
        epb(&mut o, (i % 2) as u32, 1_700_000_000_000_000 + i as u64, f, f.len());
    }
    if let Some(f) = frames.first() {
        epb(&mut o, 2, 5, &relink(LinkType::LinuxSll, f), f.len() + 2);
        epb(&mut o, 0, 6, &f[..f.len().min(30)], f.len()); // snaplen-cut
        let mut b = u32b(f.len() as u32).to_vec(); // simple packet block
        b.extend_from_slice(f);
        block(&mut o, 3, &b);
    }
    block(&mut o, 0x0000_0bad, &[1, 2, 3, 4]); // unknown block type
    shb(&mut o); // a second section forgets the interfaces
    idb(&mut o, 101, Some(6));
    if let Some(f) = frames.get(1) {
        epb(&mut o, 0, 7, &f[14..], f.len() - 14);
    }
    o
}
