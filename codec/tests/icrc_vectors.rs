//! ICRC test vectors from scapy's `test/contrib/roce.uts` (WIRE.md A.5).

use rocescope_codec::{DecodeOptions, Frame, IcrcStatus, LinkType};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn decode(bytes: &[u8]) -> (IcrcStatus, Vec<u8>) {
    let f = Frame::parse(LinkType::Ethernet, bytes, bytes.len(), &DecodeOptions::default());
    let p = f.roce().expect("RoCE packet");
    (f.icrc_status(), p.icrc_bytes().unwrap().to_vec())
}

#[test]
fn scapy_uc_send_only_ipv4_padcnt2() {
    let f = hex("248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca2\
                 2460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3");
    let (status, icrc) = decode(&f);
    assert_eq!(icrc, [0x78, 0xf3, 0x53, 0xf3]);
    assert_eq!(status, IcrcStatus::Good);
}

#[test]
fn scapy_connectx4_cnp() {
    let f = hex("e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a0012010000\
                 12b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a");
    let (status, icrc) = decode(&f);
    assert_eq!(icrc, [0x82, 0xfd, 0x00, 0x2a]);
    assert_eq!(status, IcrcStatus::Good);
}

#[test]
fn a_flipped_bit_is_bad() {
    let mut f = hex("248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca2\
                 2460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3");
    f[60] ^= 1;
    assert_eq!(decode(&f).0, IcrcStatus::Bad);
}
