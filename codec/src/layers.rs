//! The headers below RoCE as a byte map: the link layer (Ethernet II, 802.1Q and 802.1ad tags,
//! Linux cooked captures), IPv4, IPv6, RoCEv1's and native InfiniBand's GRH, UDP and TCP, named
//! and formatted as Wireshark's `-T fields` prints them (`eth.src` `02:00:00:00:00:01`,
//! `ip.checksum` `0xdee1`, `ipv6.flow` `0x050001`), each with the bytes it occupies; then what
//! no header claims (a payload, Ethernet padding and trailer) as `data`. With the registry's
//! fields ([`crate::Frame::visit`]: LRH, BTH and every header above it), every captured byte of a
//! frame belongs to a field: the inspector page's field tree and hex view are built on both
//! (WIRE.md A.1-A.3 for where each header sits).
//!
//! This is not the registry (`field.rs`): the command line's outputs carry these layers as the
//! capture columns of `output::Meta` (`ip.src`, `udp.srcport`, …), and Wireshark decodes them
//! itself.

use core::ops::Range;

use crate::frame::{Frame, LinkType, Net};

/// The subtree a layer field is shown under: its name and its label.
pub fn group_label(group: &str) -> &'static str {
    match group {
        "eth" => "Ethernet II",
        "vlan" => "802.1Q Virtual LAN",
        "ieee8021ad" => "IEEE 802.1ad",
        "sll" => "Linux cooked capture",
        "ip" => "Internet Protocol Version 4",
        "ipv6" => "Internet Protocol Version 6",
        "grh" => "Global Route Header",
        "udp" => "User Datagram Protocol",
        "tcp" => "Transmission Control Protocol",
        "reserved" => "Reserved",
        "pad" => "Pad",
        _ => "Data",
    }
}

/// Calls `f(group, name, text, bytes)` for each field of the frame's headers below RoCE, in wire
/// order. `covered` is what the registry's walk covers (its fields' byte ranges); the bytes no
/// header and no registry field covers are given last: `reserved` among a RoCE packet's
/// headers (a reserved byte the registry does not walk), `data.data` for its payload (or any
/// other payload), `pad` for the pad bytes after it, `eth.trailer` past the IP packet's end.
pub fn visit_layers(
    frame: &Frame<'_>,
    covered: &[Range<usize>],
    mut f: impl FnMut(&'static str, &'static str, String, Range<usize>),
) {
    let d = frame.data();
    let mut claimed: Vec<Range<usize>> = covered.iter().filter(|r| r.start < r.end).cloned().collect();
    let mut emit = |g: &'static str, name: &'static str, text: String, r: Range<usize>| {
        if r.end <= d.len() && r.start < r.end {
            claimed.push(r.clone());
            f(g, name, text, r);
        }
    };
    let u16_at = |o: usize| d.get(o..o + 2).map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
    let u32_at = |o: usize| d.get(o..o + 4).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let mac = |o: usize| d.get(o..o + 6).map(|b| b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":"));
    let hex_end =
        |o: usize, n: usize| d.get(o..o + n).map(|b| b.iter().map(|x| format!("{x:02x}")).collect::<String>());

    // The link layer, and the tags.
    let mut tpid_at = None;
    match frame.link() {
        LinkType::Ethernet => {
            if let (Some(dst), Some(src)) = (mac(0), mac(6)) {
                emit("eth", "eth.dst", dst, 0..6);
                emit("eth", "eth.src", src, 6..12);
                emit("eth", "eth.type", format!("0x{:04x}", u16_at(12)), 12..14);
                tpid_at = Some(12);
            }
        }
        LinkType::LinuxSll => {
            emit("sll", "sll.pkttype", u16_at(0).to_string(), 0..2);
            emit("sll", "sll.hatype", u16_at(2).to_string(), 2..4);
            emit("sll", "sll.halen", u16_at(4).to_string(), 4..6);
            if let Some(a) = hex_end(6, 8) {
                emit("sll", "sll.src.other", a, 6..14);
            }
            emit("sll", "sll.etype", format!("0x{:04x}", u16_at(14)), 14..16);
            tpid_at = Some(14);
        }
        LinkType::LinuxSll2 => {
            emit("sll", "sll.etype", format!("0x{:04x}", u16_at(0)), 0..2);
            emit("sll", "sll.reserved", format!("0x{:04x}", u16_at(2)), 2..4);
            emit("sll", "sll.ifindex", u32_at(4).to_string(), 4..8);
            emit("sll", "sll.hatype", u16_at(8).to_string(), 8..10);
            if let (Some(&t), Some(&l)) = (d.get(10), d.get(11)) {
                emit("sll", "sll.pkttype", t.to_string(), 10..11);
                emit("sll", "sll.halen", l.to_string(), 11..12);
            }
            if let Some(a) = hex_end(12, 8) {
                emit("sll", "sll.src.other", a, 12..20);
            }
            tpid_at = Some(0);
        }
        LinkType::RawIp | LinkType::Infiniband => {}
    }
    for o in frame.vlan_offsets() {
        // (The tag's TPID is the EtherType before it.)
        let g = match tpid_at.map(u16_at) {
            Some(0x88a8) => "ieee8021ad",
            _ => "vlan",
        };
        let tci = u16_at(o);
        let (pcp, dei, id) = (tci >> 13, (tci >> 12) & 1, tci & 0x0fff);
        let names = if g == "vlan" {
            ["vlan.priority", "vlan.dei", "vlan.id", "vlan.etype"]
        } else {
            ["ieee8021ad.priority", "ieee8021ad.dei", "ieee8021ad.id", "ieee8021ad.etype"]
        };
        emit(g, names[0], pcp.to_string(), o..o + 2);
        emit(g, names[1], dei.to_string(), o..o + 2);
        emit(g, names[2], id.to_string(), o..o + 2);
        emit(g, names[3], format!("0x{:04x}", u16_at(o + 2)), o + 2..o + 4);
        tpid_at = Some(o + 2);
    }

    // The network layer.
    let mut ip_end = None;
    match frame.net() {
        Some(Net::Ipv4 { off, hdr_len }) => {
            let (o, hl) = (off as usize, hdr_len as usize);
            let b = |k: usize| d.get(o + k).copied().unwrap_or(0);
            emit("ip", "ip.version", (b(0) >> 4).to_string(), o..o + 1);
            emit("ip", "ip.hdr_len", ((b(0) & 0x0f) as usize * 4).to_string(), o..o + 1);
            emit("ip", "ip.dsfield.dscp", (b(1) >> 2).to_string(), o + 1..o + 2);
            emit("ip", "ip.dsfield.ecn", (b(1) & 3).to_string(), o + 1..o + 2);
            emit("ip", "ip.len", u16_at(o + 2).to_string(), o + 2..o + 4);
            emit("ip", "ip.id", format!("0x{:04x}", u16_at(o + 4)), o + 4..o + 6);
            emit("ip", "ip.flags", format!("0x{:02x}", b(6) >> 5), o + 6..o + 7);
            emit("ip", "ip.frag_offset", (u16_at(o + 6) & 0x1fff).to_string(), o + 6..o + 8);
            emit("ip", "ip.ttl", b(8).to_string(), o + 8..o + 9);
            emit("ip", "ip.proto", b(9).to_string(), o + 9..o + 10);
            emit("ip", "ip.checksum", format!("0x{:04x}", u16_at(o + 10)), o + 10..o + 12);
            if let Some(ip) = d.get(o + 12..o + 20) {
                emit("ip", "ip.src", format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3]), o + 12..o + 16);
                emit("ip", "ip.dst", format!("{}.{}.{}.{}", ip[4], ip[5], ip[6], ip[7]), o + 16..o + 20);
            }
            if hl > 20 {
                emit("ip", "ip.options", bytes_text(hl - 20), o + 20..o + hl);
            }
            ip_end = Some(o + u16_at(o + 2) as usize);
        }
        Some(Net::Ipv6 { off }) => {
            let o = off as usize;
            let w = u32_at(o);
            // (Wireshark's IPv6 dissector names its version `ip.version`, as IPv4's does.)
            emit("ipv6", "ip.version", (w >> 28).to_string(), o..o + 1);
            emit("ipv6", "ipv6.tclass", format!("0x{:08x}", (w >> 20) & 0xff), o..o + 2);
            emit("ipv6", "ipv6.flow", format!("0x{:06x}", w & 0xf_ffff), o + 1..o + 4);
            emit("ipv6", "ipv6.plen", u16_at(o + 4).to_string(), o + 4..o + 6);
            emit("ipv6", "ipv6.nxt", d.get(o + 6).copied().unwrap_or(0).to_string(), o + 6..o + 7);
            emit("ipv6", "ipv6.hlim", d.get(o + 7).copied().unwrap_or(0).to_string(), o + 7..o + 8);
            if let Some(a) = d.get(o + 8..o + 40) {
                emit("ipv6", "ipv6.src", ipv6_text(&a[..16]), o + 8..o + 24);
                emit("ipv6", "ipv6.dst", ipv6_text(&a[16..]), o + 24..o + 40);
            }
            ip_end = Some(o + 40 + u16_at(o + 4) as usize);
        }
        Some(Net::Grh { off }) => {
            let o = off as usize;
            let w = u32_at(o);
            emit("grh", "infiniband.grh.ipver", (w >> 28).to_string(), o..o + 1);
            emit("grh", "infiniband.grh.tclass", ((w >> 20) & 0xff).to_string(), o..o + 2);
            emit("grh", "infiniband.grh.flowlabel", (w & 0xf_ffff).to_string(), o + 1..o + 4);
            emit("grh", "infiniband.grh.paylen", u16_at(o + 4).to_string(), o + 4..o + 6);
            emit("grh", "infiniband.grh.nxthdr", format!("0x{:02x}", d.get(o + 6).copied().unwrap_or(0)), o + 6..o + 7);
            emit("grh", "infiniband.grh.hoplmt", d.get(o + 7).copied().unwrap_or(0).to_string(), o + 7..o + 8);
            if let Some(a) = d.get(o + 8..o + 40) {
                emit("grh", "infiniband.grh.sgid", ipv6_text(&a[..16]), o + 8..o + 24);
                emit("grh", "infiniband.grh.dgid", ipv6_text(&a[16..]), o + 24..o + 40);
            }
            if frame.link() != LinkType::Infiniband {
                ip_end = Some(o + 40 + u16_at(o + 4) as usize);
            }
        }
        None => {}
    }

    // The transport layer.
    if let Some(o) = frame.udp_offset() {
        emit("udp", "udp.srcport", u16_at(o).to_string(), o..o + 2);
        emit("udp", "udp.dstport", u16_at(o + 2).to_string(), o + 2..o + 4);
        emit("udp", "udp.length", u16_at(o + 4).to_string(), o + 4..o + 6);
        emit("udp", "udp.checksum", format!("0x{:04x}", u16_at(o + 6)), o + 6..o + 8);
    }
    if let Some(t) = frame.tcp() {
        let o = t.header_offset;
        emit("tcp", "tcp.srcport", t.src_port.to_string(), o..o + 2);
        emit("tcp", "tcp.dstport", t.dst_port.to_string(), o + 2..o + 4);
        emit("tcp", "tcp.seq_raw", t.seq.to_string(), o + 4..o + 8);
        emit("tcp", "tcp.ack_raw", t.ack.to_string(), o + 8..o + 12);
        emit("tcp", "tcp.hdr_len", (t.payload_offset - o).to_string(), o + 12..o + 13);
        emit("tcp", "tcp.flags", format!("0x{:04x}", u16_at(o + 12) & 0x0fff), o + 12..o + 14);
        emit("tcp", "tcp.window_size_value", u16_at(o + 14).to_string(), o + 14..o + 16);
        emit("tcp", "tcp.checksum", format!("0x{:04x}", u16_at(o + 16)), o + 16..o + 18);
        emit("tcp", "tcp.urgent_pointer", u16_at(o + 18).to_string(), o + 18..o + 20);
        if t.payload_offset > o + 20 {
            emit("tcp", "tcp.options", bytes_text(t.payload_offset - o - 20), o + 20..t.payload_offset);
        }
    }

    // What nothing claims: a header's reserved bytes, the payload, the pad before the ICRC,
    // and past the IP packet the Ethernet padding or trailer.
    let roce = frame.roce().map(|p| {
        let hdr_end = frame.roce_offset() + p.payload_offset();
        (frame.roce_offset(), hdr_end, hdr_end + p.payload_len())
    });
    let mut cuts: Vec<usize> = roce.map_or(vec![], |(a, b, c)| vec![a, b, c]);
    cuts.extend(ip_end);
    claimed.sort_by_key(|r| r.start);
    let mut at = 0;
    let mut gaps = Vec::new();
    for r in claimed.iter() {
        if r.start > at {
            gaps.push(at..r.start);
        }
        at = at.max(r.end);
    }
    if at < d.len() {
        gaps.push(at..d.len());
    }
    for g in gaps {
        let mut points: Vec<usize> = cuts.iter().copied().filter(|&c| g.start < c && c < g.end).collect();
        points.sort_unstable();
        points.dedup();
        let mut from = g.start;
        for to in points.into_iter().chain([g.end]) {
            let p = from..to;
            from = to;
            let (group, name) = match roce {
                _ if ip_end.is_some_and(|e| p.start >= e) => ("eth", "eth.trailer"),
                Some((ro, hdr_end, _)) if ro <= p.start && p.start < hdr_end => ("reserved", "reserved"),
                Some((_, _, payload_end)) if payload_end <= p.start && p.start < payload_end + 4 => ("pad", "pad"),
                _ => ("data", "data.data"),
            };
            f(group, name, bytes_text(p.len()), p);
        }
    }
}

/// The value of a run of bytes no field names: `1 byte`, `42 bytes`.
pub fn bytes_text(n: usize) -> String {
    format!("{n} byte{}", if n == 1 { "" } else { "s" })
}

/// An IPv6 address (or GID) as Wireshark prints it: RFC 5952 text.
fn ipv6_text(b: &[u8]) -> String {
    let mut a = [0u8; 16];
    a.copy_from_slice(&b[..16]);
    std::net::Ipv6Addr::from(a).to_string()
}
