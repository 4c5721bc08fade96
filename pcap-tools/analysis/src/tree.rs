//! `decode -V` and `-x`, as tshark prints them: a tree with one line per layer (frame, link,
//! VLAN tags, IP or GRH, UDP or TCP, each with its byte range), then rocescope's fields grouped
//! under their headers (the groups of `rocescope_codec::field_group`, shared with the Wireshark
//! plugin and the browser), each with its bytes; and a hex dump of the captured bytes. QPNs,
//! keys and virtual addresses show in hex, as Wireshark shows them
//! (`rocescope_codec::field::HEX_DISPLAY`); everything else reads as `-e` prints it.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::ops::Range;

use rocescope_codec::decoder::Decoded;
use rocescope_codec::frame::Net;
use rocescope_codec::{field_group, FieldId, Frame, LinkType, Value};

use crate::capture::Record;

/// A value as the tree and the summary show it: hex for [`FieldId::hex_digits`] fields.
pub fn display_value(id: FieldId, v: &Value<'_>) -> String {
    match (id.hex_digits(), v) {
        (Some(w), Value::UInt(n)) => format!("0x{n:0w$x}"),
        _ => v.to_string(),
    }
}

/// Writes the tree of one frame (the summary line is written before it).
pub fn write_tree(out: &mut impl Write, rec: &Record<'_>, d: &Decoded<'_, '_>) -> io::Result<()> {
    let mut t = String::new();
    layers(&mut t, rec, &d.frame);
    fields(&mut t, d);
    out.write_all(t.as_bytes())
}

fn bytes(r: Range<usize>) -> String {
    format!("    [bytes {}..{}]", r.start, r.end)
}

fn mac(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":")
}

/// The frame line and the L2-L4 layers rocescope decodes, each with its byte range.
fn layers(t: &mut String, rec: &Record<'_>, f: &Frame<'_>) {
    let (wire, cap) = (rec.orig_len as usize, rec.data.len());
    writeln!(t, "    Frame {}: {wire} bytes on wire ({} bits), {cap} bytes captured ({} bits) on interface {}", rec.number, wire * 8, cap * 8, rec.interface)
        .unwrap();
    let d = f.data();
    match f.link() {
        LinkType::Ethernet if d.len() >= 14 => {
            writeln!(t, "    Ethernet II, Src: {}, Dst: {}{}", mac(&d[6..12]), mac(&d[0..6]), bytes(0..14)).unwrap()
        }
        LinkType::LinuxSll if d.len() >= 16 => writeln!(t, "    Linux cooked capture v1{}", bytes(0..16)).unwrap(),
        LinkType::LinuxSll2 if d.len() >= 20 => writeln!(t, "    Linux cooked capture v2{}", bytes(0..20)).unwrap(),
        // (Its fields are rocescope.lrh.*, under rocescope's part of the tree.)
        LinkType::Infiniband if d.len() >= 8 => writeln!(t, "    InfiniBand Local Route Header{}", bytes(0..8)).unwrap(),
        _ => {}
    }
    for o in f.vlan_offsets() {
        let tci = u16::from_be_bytes([d[o], d[o + 1]]);
        // (The tag as Wireshark shows it: the TCI and the EtherType after it; the TPID before
        // it names the kind.)
        let name = if d[o - 2..o] == [0x88, 0xa8] { "IEEE 802.1ad" } else { "802.1Q Virtual LAN" };
        writeln!(t, "    {name}, PRI: {}, DEI: {}, ID: {}{}", tci >> 13, (tci >> 12) & 1, tci & 0x0fff, bytes(o..o + 4)).unwrap();
    }
    if let (Some(net), Some((src, dst))) = (f.net(), f.ip_addrs()) {
        let o = net.offset();
        let r = o..(o + net.header_len()).min(d.len());
        let tos = f.tos().unwrap_or(0);
        match net {
            Net::Ipv4 { .. } => {
                writeln!(t, "    Internet Protocol Version 4, Src: {src}, Dst: {dst}{}", bytes(r)).unwrap();
                writeln!(t, "        Differentiated Services: 0x{tos:02x} (DSCP {}, ECN {}){}", tos >> 2, tos & 3, bytes(o + 1..o + 2)).unwrap();
                writeln!(t, "        Total Length: {}{}", u16::from_be_bytes([d[o + 2], d[o + 3]]), bytes(o + 2..o + 4)).unwrap();
                writeln!(t, "        Identification: 0x{:04x}{}", u16::from_be_bytes([d[o + 4], d[o + 5]]), bytes(o + 4..o + 6)).unwrap();
                writeln!(t, "        Time to Live: {}{}", d[o + 8], bytes(o + 8..o + 9)).unwrap();
                writeln!(t, "        Protocol: {}{}", d[o + 9], bytes(o + 9..o + 10)).unwrap();
                writeln!(t, "        Header Checksum: 0x{:04x}{}", u16::from_be_bytes([d[o + 10], d[o + 11]]), bytes(o + 10..o + 12)).unwrap();
            }
            Net::Ipv6 { .. } | Net::Grh { .. } => {
                let name = if matches!(net, Net::Grh { .. }) { "Global Route Header" } else { "Internet Protocol Version 6" };
                writeln!(t, "    {name}, Src: {src}, Dst: {dst}{}", bytes(r)).unwrap();
                writeln!(t, "        Traffic Class: 0x{tos:02x} (DSCP {}, ECN {}){}", tos >> 2, tos & 3, bytes(o..o + 2)).unwrap();
                writeln!(t, "        Payload Length: {}{}", u16::from_be_bytes([d[o + 4], d[o + 5]]), bytes(o + 4..o + 6)).unwrap();
                writeln!(t, "        Next Header: {}{}", d[o + 6], bytes(o + 6..o + 7)).unwrap();
                writeln!(t, "        Hop Limit: {}{}", d[o + 7], bytes(o + 7..o + 8)).unwrap();
            }
        }
    }
    if let (Some(u), Some((sp, dp))) = (f.udp_offset(), f.udp_ports()) {
        writeln!(t, "    User Datagram Protocol, Src Port: {sp}, Dst Port: {dp}{}", bytes(u..u + 8)).unwrap();
        writeln!(t, "        Length: {}{}", u16::from_be_bytes([d[u + 4], d[u + 5]]), bytes(u + 4..u + 6)).unwrap();
        writeln!(t, "        Checksum: 0x{:04x}{}", u16::from_be_bytes([d[u + 6], d[u + 7]]), bytes(u + 6..u + 8)).unwrap();
    }
    if let Some(tcp) = f.tcp() {
        writeln!(
            t,
            "    Transmission Control Protocol, Src Port: {}, Dst Port: {}, Seq: {}, Ack: {}{}",
            tcp.src_port,
            tcp.dst_port,
            tcp.seq,
            tcp.ack,
            bytes(tcp.header_offset..tcp.payload_offset)
        )
        .unwrap();
    }
}

/// rocescope's fields, under one line per group (`Base Transport Header (BTH)    [bytes 42..54]`).
/// A field repeated in one packet is one line: its values joined by commas (INTERFACES.md), then
/// the byte ranges of the values that have some.
fn fields(t: &mut String, d: &Decoded<'_, '_>) {
    struct Line {
        id: FieldId,
        values: String,
        ranges: Vec<Range<usize>>,
    }
    let mut lines: Vec<Line> = Vec::new();
    d.visit(|id, v, range| {
        let shown = display_value(id, &v);
        match lines.last_mut() {
            Some(l) if l.id == id => {
                l.values.push(',');
                l.values.push_str(&shown);
                if !range.is_empty() {
                    l.ranges.push(range);
                }
            }
            _ => lines.push(Line { id, values: shown, ranges: if range.is_empty() { vec![] } else { vec![range] } }),
        }
    });
    if lines.is_empty() {
        return;
    }
    let what = match (d.frame.roce(), d.frame.is_rocev1()) {
        (Some(_), _) if d.frame.link() == LinkType::Infiniband => "InfiniBand",
        (Some(_), false) => "RoCEv2",
        (Some(_), true) => "RoCEv1",
        _ if d.nacks.is_some() => "ERD NACK stream",
        _ if d.frame.mac_control().is_some() => "MAC control",
        _ => "frame",
    };
    writeln!(t, "    rocescope: {what}, profile {}", d.profile().name()).unwrap();
    // Each group once (a group's fields may come in several runs of the walk), the frame's
    // values first, then the headers in wire order (by their first byte).
    let mut groups: Vec<(&str, Option<Range<usize>>, Vec<&Line>)> = Vec::new();
    for l in &lines {
        let g = field_group::group_of(l.id.name());
        let at = match groups.iter().position(|(name, _, _)| *name == g) {
            Some(i) => i,
            None => {
                groups.push((g, None, Vec::new()));
                groups.len() - 1
            }
        };
        let (_, span, members) = &mut groups[at];
        for r in &l.ranges {
            *span = Some(span.clone().map_or(r.clone(), |a| a.start.min(r.start)..a.end.max(r.end)));
        }
        members.push(l);
    }
    groups.sort_by_key(|(g, span, _)| (*g != field_group::FRAME, span.as_ref().map_or(usize::MAX, |r| r.start)));
    for (group, span, members) in groups {
        let label = field_group::label(group).map_or_else(|| group.to_uppercase(), str::to_string);
        let span = if group == field_group::FRAME { None } else { span };
        writeln!(t, "        {label}{}", span.map_or(String::new(), bytes)).unwrap();
        for l in members {
            let ranges: Vec<String> = l.ranges.iter().map(|r| format!("{}..{}", r.start, r.end)).collect();
            if ranges.is_empty() {
                writeln!(t, "            {}: {}", l.id.name(), l.values).unwrap();
            } else {
                writeln!(t, "            {}: {}    [bytes {}]", l.id.name(), l.values, ranges.join(", ")).unwrap();
            }
        }
    }
}

/// `-x`: the captured bytes as tshark prints them — offset, 16 bytes in hex, the same as
/// printable ASCII (`.` for the rest) — then a blank line.
pub fn write_hex(out: &mut impl Write, data: &[u8]) -> io::Result<()> {
    let mut t = String::with_capacity(data.len() * 5);
    for (i, row) in data.chunks(16).enumerate() {
        write!(t, "{:04x}  ", i * 16).unwrap();
        for j in 0..16 {
            match row.get(j) {
                Some(b) => write!(t, "{b:02x} ").unwrap(),
                None => t.push_str("   "),
            }
        }
        t.push_str("  ");
        t.extend(row.iter().map(|&b| if (0x20..0x7f).contains(&b) { b as char } else { '.' }));
        t.push('\n');
    }
    t.push('\n');
    out.write_all(t.as_bytes())
}
