//! pcapng blocks beyond the Enhanced Packet Block, laid out by hand from the pcapng
//! specification (draft-ietf-opsawg-pcapng): the Simple Packet Block (its data padded to 32 bits
//! and cut by the interface's snaplen, §4.4), the obsolete Packet Block (type 2, timestamp high
//! word then low word), and the interface's `if_tsresol` (option 9) and `if_tsoffset` (option 14,
//! seconds added to every timestamp), and a file of two sections in opposite byte orders (as
//! `cat big.pcapng little.pcapng` makes). Each file is read by `rocescope decode` and by tshark
//! (the oracle), and both must print the same frame lengths and times; the expected values are
//! also written out.

use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rocescope-pcapng-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// One block in the section's byte order: type, total length, body (padded to 32 bits), length.
fn block(big: bool, ty: u32, body: &[u8]) -> Vec<u8> {
    let mut body = body.to_vec();
    while body.len() % 4 != 0 {
        body.push(0);
    }
    let total = (body.len() + 12) as u32;
    let w = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
    [w(ty).as_slice(), &w(total), &body, &w(total)].concat()
}

fn u16b(big: bool, v: u16) -> [u8; 2] {
    if big {
        v.to_be_bytes()
    } else {
        v.to_le_bytes()
    }
}

fn u32b(big: bool, v: u32) -> [u8; 4] {
    if big {
        v.to_be_bytes()
    } else {
        v.to_le_bytes()
    }
}

fn shb(big: bool) -> Vec<u8> {
    let body = [u32b(big, 0x1a2b_3c4d).as_slice(), &u16b(big, 1), &u16b(big, 0), &[0xff; 8]].concat();
    block(big, 0x0a0d_0d0a, &body)
}

/// Interface Description Block: Ethernet, a snaplen, options (code, value) then opt_endofopt.
fn idb(big: bool, snaplen: u32, options: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let mut body = [u16b(big, 1).as_slice(), &u16b(big, 0), &u32b(big, snaplen)].concat();
    for (code, value) in options {
        body.extend_from_slice(&u16b(big, *code));
        body.extend_from_slice(&u16b(big, value.len() as u16));
        body.extend_from_slice(value);
        while body.len() % 4 != 0 {
            body.push(0);
        }
    }
    body.extend_from_slice(&[0; 4]);
    block(big, 1, &body)
}

/// A 66-byte Ethernet/IPv4/UDP frame (not RoCE: only its lengths and times matter here).
fn frame(len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f[14] = 0x45;
    f[16..18].copy_from_slice(&((len - 14) as u16).to_be_bytes());
    f[22] = 64;
    f[23] = 17;
    f[26..30].copy_from_slice(&[10, 0, 0, 1]);
    f[30..34].copy_from_slice(&[10, 0, 0, 2]);
    f[34..36].copy_from_slice(&1234u16.to_be_bytes());
    f[36..38].copy_from_slice(&5678u16.to_be_bytes());
    f[38..40].copy_from_slice(&((len - 34) as u16).to_be_bytes());
    f
}

/// Simple Packet Block: original length, then the packet (padded by `block`).
fn spb(big: bool, data: &[u8], orig_len: u32) -> Vec<u8> {
    block(big, 3, &[u32b(big, orig_len).as_slice(), data].concat())
}

/// Obsolete Packet Block: interface 16 · drops 16 · timestamp high 32 · low 32 · captured 32 ·
/// original 32 · data.
fn opb(big: bool, ts: u64, data: &[u8]) -> Vec<u8> {
    let head = [
        u16b(big, 0).as_slice(),
        &u16b(big, 0),
        &u32b(big, (ts >> 32) as u32),
        &u32b(big, ts as u32),
        &u32b(big, data.len() as u32),
        &u32b(big, data.len() as u32),
    ]
    .concat();
    block(big, 2, &[head.as_slice(), data].concat())
}

/// Enhanced Packet Block on interface 0.
fn epb(big: bool, ts: u64, data: &[u8]) -> Vec<u8> {
    let head = [
        u32b(big, 0).as_slice(),
        &u32b(big, (ts >> 32) as u32),
        &u32b(big, ts as u32),
        &u32b(big, data.len() as u32),
        &u32b(big, data.len() as u32),
    ]
    .concat();
    block(big, 6, &[head.as_slice(), data, &[0; 4]].concat())
}

const COLUMNS: [&str; 4] = ["frame.number", "frame.len", "frame.cap_len", "frame.time_epoch"];

fn rocescope(path: &Path) -> Vec<String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rocescope"));
    cmd.args(["decode", "--format", "fields"]);
    for c in COLUMNS {
        cmd.args(["-e", c]);
    }
    let o = cmd.arg(path).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().lines().map(String::from).collect()
}

/// tshark's lines (it must be installed: there is no skipping).
fn tshark(path: &Path) -> Option<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.args(["-n", "-T", "fields"]);
    for c in COLUMNS {
        cmd.args(["-e", c]);
    }
    match cmd.arg("-r").arg(path).output() {
        Ok(o) if o.status.success() => Some(String::from_utf8(o.stdout).unwrap().lines().map(String::from).collect()),
        r => panic!("tshark is needed as the oracle (Debian: apt-get install tshark): {r:?}"),
    }
}

/// Compares both tools, and rocescope with the values worked out by hand.
fn check(name: &str, bytes: Vec<u8>, expected: &[&str]) {
    let path = tmp(name);
    std::fs::write(&path, bytes).unwrap();
    let ours = rocescope(&path);
    assert_eq!(ours, expected, "{name}: rocescope");
    if let Some(theirs) = tshark(&path) {
        // tshark leaves the time of a Simple Packet Block empty; rocescope says 0.
        let theirs: Vec<String> = theirs.iter().map(|l| if l.ends_with('\t') { format!("{l}0.000000000") } else { l.clone() }).collect();
        assert_eq!(ours, theirs, "{name}: rocescope vs tshark");
    }
}

#[test]
fn simple_packet_blocks_drop_their_padding_and_respect_the_snaplen() {
    for big in [false, true] {
        let f = frame(66);
        // 66 bytes padded to 68 in the block: the packet is 66 bytes.
        let file = [shb(big), idb(big, 0, &[]), spb(big, &f, 66)].concat();
        check("spb.pcapng", file, &["1\t66\t66\t0.000000000"]);
        // Interface snaplen 60: the block holds 60 bytes of a 66-byte packet.
        let file = [shb(big), idb(big, 60, &[]), spb(big, &f[..60], 66)].concat();
        check("spb-snap.pcapng", file, &["1\t66\t60\t0.000000000"]);
    }
}

#[test]
fn obsolete_packet_blocks_are_read_with_their_timestamps() {
    // 1 700 000 000.25 s in microseconds (the default resolution): high word 0x00060a24.
    let ts = 1_700_000_000_250_000u64;
    assert!(ts >> 32 != 0 && ts as u32 != 0);
    for big in [false, true] {
        let file = [shb(big), idb(big, 0, &[]), opb(big, ts, &frame(66)), opb(big, ts + 1, &frame(98))].concat();
        check("opb.pcapng", file, &["1\t66\t66\t1700000000.250000000", "2\t98\t98\t1700000000.250001000"]);
    }
}

#[test]
fn interface_time_resolution_and_offset_apply_to_every_packet() {
    for big in [false, true] {
        // Nanosecond resolution and an offset of +100 s.
        let opts = [(9u16, vec![9u8]), (14u16, if big { 100u64.to_be_bytes() } else { 100u64.to_le_bytes() }.to_vec())];
        let file = [shb(big), idb(big, 0, &opts), epb(big, 1_700_000_000_500_000_000, &frame(66))].concat();
        check("tsoffset.pcapng", file, &["1\t66\t66\t1700000100.500000000"]);
        // Binary resolution 2^-10 s: 1024 units are one second.
        let file = [shb(big), idb(big, 0, &[(9, vec![0x8a])]), epb(big, 1_700_000_000 * 1024 + 512, &frame(66))].concat();
        check("tsresol2.pcapng", file, &["1\t66\t66\t1700000000.500000000"]);
    }
}

#[test]
fn a_new_section_may_change_the_byte_order() {
    let ts = 1_700_000_000_000_000u64;
    for first_big in [true, false] {
        let (a, b) = (first_big, !first_big);
        let file = [shb(a), idb(a, 0, &[]), epb(a, ts, &frame(66)), shb(b), idb(b, 0, &[]), epb(b, ts + 2, &frame(98))].concat();
        check("sections.pcapng", file, &["1\t66\t66\t1700000000.000000000", "2\t98\t98\t1700000000.000002000"]);
    }
}
