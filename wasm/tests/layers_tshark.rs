//! The headers below RoCE in the page's tree (`rocescope_codec::layers`, `FrameInfo::layers`):
//! every captured byte of every frame of every fixture belongs to a field (the registry's or a
//! layer's), and each layer field's value is the text Wireshark's dissectors give it: `tshark -T
//! fields` (the outside oracle) on the same files, frame by frame, every occurrence.

use std::collections::BTreeMap;
use std::process::Command;

use rocescope_wasm::inspect;

mod common;
use common::fixtures;

/// The layer fields compared with tshark's (those Wireshark names alike).
const NAMES: &[&str] = &[
    "eth.dst",
    "eth.src",
    "eth.type",
    "vlan.priority",
    "vlan.id",
    "vlan.etype",
    "ieee8021ad.id",
    "ip.version",
    "ip.hdr_len",
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "ip.len",
    "ip.id",
    "ip.flags",
    "ip.frag_offset",
    "ip.ttl",
    "ip.proto",
    "ip.checksum",
    "ip.src",
    "ip.dst",
    "ipv6.tclass",
    "ipv6.flow",
    "ipv6.plen",
    "ipv6.nxt",
    "ipv6.hlim",
    "ipv6.src",
    "ipv6.dst",
    "udp.srcport",
    "udp.dstport",
    "udp.length",
    "udp.checksum",
    "tcp.srcport",
    "tcp.dstport",
    "tcp.seq_raw",
    "tcp.ack_raw",
    "tcp.hdr_len",
    "tcp.flags",
    "tcp.window_size_value",
    "tcp.checksum",
    "tcp.urgent_pointer",
];


#[test]
fn every_byte_of_every_frame_belongs_to_a_field() {
    let mut frames = 0;
    for file in fixtures() {
        let r = inspect(&std::fs::read(&file).unwrap(), "{}");
        for f in &r.frames {
            let mut owned = vec![false; f.cap_len];
            let ranges = f.fields.iter().map(|x| x.start..x.end).chain(f.layers.iter().map(|x| x.start..x.end));
            for range in ranges {
                assert!(range.end <= f.cap_len, "{}: frame {}: {range:?}", file.display(), f.number);
                owned[range].iter_mut().for_each(|b| *b = true);
            }
            let orphan: Vec<usize> = (0..f.cap_len).filter(|&i| !owned[i]).collect();
            assert!(orphan.is_empty(), "{}: frame {}: bytes {orphan:?} belong to no field", file.display(), f.number);
            frames += 1;
        }
    }
    assert!(frames > 1000, "{frames} frames");
}

#[test]
fn layer_fields_are_what_tshark_says() {
    let mut compared = BTreeMap::<&str, usize>::new();
    let mut inner = 0;
    for file in fixtures() {
        let mut cmd = Command::new("tshark");
        cmd.args(["-n", "-r"]).arg(&file).args(["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"]);
        for n in NAMES {
            cmd.args(["-e", n]);
        }
        // (No configuration: Wireshark's own dissectors, not the project's plugin.)
        let empty = std::env::temp_dir().join(format!("rocescope-layers-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let o = cmd.env("WIRESHARK_CONFIG_DIR", &empty).output().expect("run tshark (apt-get install tshark)");
        assert!(o.status.success(), "tshark: {}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8(o.stdout).unwrap();
        let ours = inspect(&std::fs::read(&file).unwrap(), "{}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), ours.frames.len(), "{}", file.display());
        for (line, f) in lines.iter().zip(&ours.frames) {
            for (name, theirs) in NAMES.iter().zip(line.split('\t')) {
                let mine: Vec<&str> = f.layers.iter().filter(|l| l.name == *name).map(|l| l.value.as_str()).collect();
                if theirs.is_empty() && mine.is_empty() {
                    continue;
                }
                // (tshark also decodes what it guesses inside a payload, an extension's most of
                // all: its first occurrences are the frame's own headers.)
                let theirs: Vec<&str> = theirs.split(',').collect();
                if mine.is_empty() {
                    // Only inside a RoCE payload can tshark see a header the frame lacks.
                    assert!(
                        f.profile.is_some(),
                        "{}: frame {}: no {name}; tshark: {theirs:?}",
                        file.display(),
                        f.number
                    );
                    inner += 1;
                    continue;
                }
                let outer = &theirs[..mine.len().min(theirs.len())];
                assert_eq!(mine, outer, "{}: frame {}: {name} (tshark: {theirs:?})", file.display(), f.number);
                *compared.entry(name).or_default() += 1;
            }
        }
    }
    eprintln!("{inner} values tshark found only inside RoCE payloads");
    // Every compared name was present somewhere (the fixtures have VLAN tags, IPv6 and TCP).
    for n in NAMES {
        assert!(compared.get(n).copied().unwrap_or(0) > 0, "{n} never compared: {compared:?}");
    }
}
