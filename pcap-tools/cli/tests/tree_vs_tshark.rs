//! `decode -V` and `-x` as tshark prints them (issue 11): every layer of the tree carries the
//! value and the bytes tshark's PDML gives the same field (`pos`, `size`), the header fields
//! rocescope shares with Wireshark's `infiniband` dissector sit on the same bytes, QPNs and keys
//! print in hex as Wireshark shows them, and `-x` prints exactly tshark's hex dump. tshark is
//! the oracle (installed by `.ci/run`; without it the test fails).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures").join(name)
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run");
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// tshark without plugins, the heuristic SEND-payload dissectors off (as tshark_diff.rs).
fn tshark(capture: &Path) -> Command {
    let mut c = Command::new("tshark");
    let conf = std::env::temp_dir().join(format!("rocescope-tree-ws-{}", std::process::id()));
    std::fs::create_dir_all(&conf).unwrap();
    c.env("WIRESHARK_CONFIG_DIR", &conf).args(["-n", "-r"]).arg(capture);
    for p in ["rpcordma", "smb_direct", "iser", "nvme-rdma", "lnet", "smc", "infiniband_sdp", "fcoib"] {
        c.args(["--disable-protocol", p]);
    }
    c
}

/// Per frame: PDML field name → (show, pos, size) of its first occurrence (protocols too, as
/// `proto:NAME`).
fn pdml(capture: &Path) -> Vec<HashMap<String, (String, usize, usize)>> {
    let xml = run(tshark(capture).args(["-T", "pdml"]));
    let doc = roxmltree::Document::parse(&xml).expect("tshark's PDML parses");
    doc.root_element()
        .children()
        .filter(|n| n.has_tag_name("packet"))
        .map(|p| {
            let mut m = HashMap::new();
            for n in p.descendants().filter(|n| n.has_tag_name("field") || n.has_tag_name("proto")) {
                let name = n.attribute("name").unwrap_or("");
                let key = if n.has_tag_name("proto") { format!("proto:{name}") } else { name.to_string() };
                let num = |a| n.attribute(a).and_then(|v: &str| v.parse().ok()).unwrap_or(0);
                m.entry(key).or_insert((n.attribute("show").unwrap_or("").to_string(), num("pos"), num("size")));
            }
            m
        })
        .collect()
}

/// Our tree per frame: (line text without the bytes, the bytes range) for every line.
fn ours(capture: &Path) -> Vec<Vec<(String, Option<(usize, usize)>)>> {
    let text = run(Command::new(BIN).args(["decode", "-V", "--profile", "std"]).arg(capture));
    let mut frames: Vec<Vec<(String, Option<(usize, usize)>)>> = Vec::new();
    for line in text.lines() {
        if !line.starts_with(' ') || line.trim_start().starts_with(char::is_numeric) && line.contains('→') {
            frames.push(Vec::new());
            continue;
        }
        let (body, range) = match line.rsplit_once("    [bytes ") {
            Some((b, r)) => {
                let first = r.trim_end_matches(']').split(", ").next().unwrap();
                let (a, z) = first.split_once("..").unwrap();
                (b.trim().to_string(), Some((a.parse().unwrap(), z.parse::<usize>().unwrap())))
            }
            None => (line.trim().to_string(), None),
        };
        frames.last_mut().expect("a summary line first").push((body, range));
    }
    frames
}

/// Our line starting with `prefix` in a frame: its text after the prefix and its range.
fn find<'a>(frame: &'a [(String, Option<(usize, usize)>)], prefix: &str) -> Option<(&'a str, Option<(usize, usize)>)> {
    frame.iter().find_map(|(t, r)| t.strip_prefix(prefix).map(|rest| (rest, *r)))
}

#[test]
fn every_layer_and_field_sits_on_the_bytes_tshark_gives_it() {
    let mut compared = 0;
    for name in ["std-mix.pcapng", "synth-irn-loss.pcapng"] {
        let cap = fixture(name);
        let (theirs, ours) = (pdml(&cap), ours(&cap));
        assert_eq!(theirs.len(), ours.len(), "{name}: frame counts");
        for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
            let at = |k: &str| t.get(k).map(|(show, pos, size)| (show.as_str(), Some((*pos, pos + size))));
            let mut check = |what: &str, mine: Option<(&str, Option<(usize, usize)>)>, theirs: Option<(&str, Option<(usize, usize)>)>| {
                if let (Some(m), Some(th)) = (mine, theirs) {
                    // Hex values by number (tshark 4.0 pads the 32-bit Q_Key to 16 digits).
                    let num = |v: &str| v.strip_prefix("0x").and_then(|h| u64::from_str_radix(h, 16).ok());
                    let same = m.0 == th.0 || (num(m.0).is_some() && num(m.0) == num(th.0));
                    assert!(same && m.1 == th.1, "{name} frame {}: {what}: ours {m:?}, tshark {th:?}", i + 1);
                    compared += 1;
                }
            };
            // Layers: the protocol's bytes, then a few of its fields with value and bytes.
            let range_only = |x: Option<(&str, Option<(usize, usize)>)>| x.map(|(_, r)| ("", r));
            check("Ethernet", range_only(find(o, "Ethernet II, ")), range_only(at("proto:eth")));
            check("802.1Q", range_only(find(o, "802.1Q Virtual LAN, ")), range_only(at("proto:vlan")));
            check("IPv4", range_only(find(o, "Internet Protocol Version 4, ")), range_only(at("proto:ip")));
            check("IPv6", range_only(find(o, "Internet Protocol Version 6, ")), range_only(at("proto:ipv6")));
            check("UDP", range_only(find(o, "User Datagram Protocol, ")), range_only(at("proto:udp")));
            check("ip.ttl", find(o, "Time to Live: "), at("ip.ttl"));
            check("ip.len", find(o, "Total Length: "), at("ip.len"));
            check("ipv6.hlim", find(o, "Hop Limit: "), at("ipv6.hlim"));
            check("ipv6.plen", find(o, "Payload Length: "), at("ipv6.plen"));
            check("udp.length", find(o, "Length: "), at("udp.length"));
            // Header fields shared with the infiniband dissector: value (QPNs and keys in hex,
            // as Wireshark shows them) and bytes. Only RC, UC and UD opcodes: tshark 4.0 reads
            // RD, XRC and the newer opcodes' headers at other offsets (tshark_diff.rs excuses
            // them the same way).
            let opcode: u8 = find(o, "rocescope.bth.opcode: ").map_or(0xff, |(v, _)| v.parse().unwrap());
            if !matches!(opcode >> 5, 0 | 1 | 3) || (opcode & 0x1f) > 0x12 {
                continue;
            }
            for (ours_name, theirs_name) in [
                ("rocescope.bth.opcode: ", "infiniband.bth.opcode"),
                ("rocescope.bth.destqp: ", "infiniband.bth.destqp"),
                ("rocescope.bth.psn: ", "infiniband.bth.psn"),
                ("rocescope.bth.p_key: ", "infiniband.bth.p_key"),
                ("rocescope.reth.r_key: ", "infiniband.reth.r_key"),
                ("rocescope.reth.dmalen: ", "infiniband.reth.dma_length"),
                ("rocescope.deth.q_key: ", "infiniband.deth.q_key"),
                ("rocescope.deth.srcqp: ", "infiniband.deth.src_qp"),
                ("rocescope.aeth.msn: ", "infiniband.aeth.msn"),
            ] {
                check(theirs_name, find(o, ours_name), at(theirs_name));
            }
        }
    }
    assert!(compared > 500, "compared {compared} values");
}

#[test]
fn dash_x_prints_tshark_s_hex_dump() {
    for name in ["std-mix.pcapng", "ext-mix.pcapng"] {
        let cap = fixture(name);
        let theirs = run(tshark(&cap).arg("-x"));
        // Ours: the summary line, then the dump; drop the summary lines.
        let ours = run(Command::new(BIN).args(["decode", "-x"]).arg(&cap));
        let ours: String = ours.lines().filter(|l| !l.contains('→')).map(|l| format!("{l}\n")).collect();
        assert_eq!(ours, theirs, "{name}");
    }
}

#[test]
fn json_carries_tshark_s_dotted_names_with_tshark_s_values() {
    // Every frame of the IPv4/IPv6/VLAN mix: frame.number, the times, ip.* (IPv4 only), ipv6.*
    // (IPv6 only) and the UDP ports as tshark -T fields prints them.
    let cap = fixture("std-mix.pcapng");
    let names = ["frame.number", "frame.len", "frame.time_relative", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "udp.srcport", "udp.dstport"];
    let mut c = tshark(&cap);
    c.args(["-T", "fields", "-E", "occurrence=f"]);
    for n in names {
        c.args(["-e", n]);
    }
    let theirs = run(&mut c);
    let json: serde_json::Value = serde_json::from_str(&run(Command::new(BIN).args(["decode", "-T", "json"]).arg(&cap))).unwrap();
    let frames = json.as_array().unwrap();
    let lines: Vec<&str> = theirs.lines().collect();
    assert_eq!(frames.len(), lines.len());
    let (mut v4, mut v6) = (0, 0);
    for (f, line) in frames.iter().zip(&lines) {
        for (n, want) in names.iter().zip(line.split('\t')) {
            let got = match &f[*n] {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            assert_eq!(got, want, "frame {}: {n}", f["frame"]);
        }
        v4 += f.get("ip.src").is_some() as usize;
        v6 += f.get("ipv6.src").is_some() as usize;
        // The short keys stay beside them.
        assert_eq!(f["frame"], f["frame.number"]);
    }
    assert!(v4 > 10 && v6 > 10, "both families compared ({v4} IPv4, {v6} IPv6)");
}
