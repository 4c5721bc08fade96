//! RFC 1071 Internet checksums: the IPv4 header checksum the decoder verifies (`frame`) and the
//! IPv4, UDP and TCP checksums the builders write (`build`).

/// RFC 1071 one's-complement sum over the concatenated chunks (each of even length but the last).
pub fn internet_checksum(chunks: &[&[u8]]) -> u16 {
    let mut sum = 0u32;
    let mut odd: Option<u8> = None;
    for c in chunks {
        for &b in c.iter() {
            match odd.take() {
                Some(hi) => sum += u16::from_be_bytes([hi, b]) as u32,
                None => odd = Some(b),
            }
        }
    }
    if let Some(hi) = odd {
        sum += (hi as u32) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// UDP checksum with the IPv4 or IPv6 pseudo-header; 0 is sent as 0xFFFF.
pub(crate) fn udp_checksum(ip: &[u8], udp: &[u8], payload: &[u8]) -> u16 {
    let len = ((udp.len() + payload.len()) as u32).to_be_bytes();
    let mut hdr = [0u8; 8];
    hdr[..6].copy_from_slice(&udp[..6]);
    let c = if ip.len() == 20 {
        let pseudo = [&ip[12..20], &[0, 17], &len[2..4]].concat();
        internet_checksum(&[&pseudo, &hdr, payload])
    } else {
        let pseudo = [&ip[8..40], &len[..], &[0, 0, 0, 17]].concat();
        internet_checksum(&[&pseudo, &hdr, payload])
    };
    if c == 0 {
        0xffff
    } else {
        c
    }
}
