//! The session loop and the flow table against Wireshark: for synthesized captures (several
//! taps, loss, retransmissions, three stacks), every flow `FlowTable` lists (source, destination,
//! DestQP) has the packet count, byte count and first/last frame numbers that tshark's
//! `infiniband` dissector gives for the same key, and no flow is missing on either side.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use rocescope_analysis::capture;
use rocescope_analysis::flows::FlowTable;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions};

type Key = (String, String, u32);
/// packets, bytes, first frame, last frame
type Counts = (u64, u64, u64, u64);

fn ours(path: &Path) -> (BTreeMap<Key, Counts>, u64) {
    let reader = capture::open(path.to_str().unwrap()).unwrap();
    let mut session = Session::new(reader, Decoder::new(DecoderOptions::default()));
    let mut table = FlowTable::default();
    let mut frames = 0;
    session
        .run(|rec, d| {
            frames += 1;
            table.add(d, rec.orig_len, rec.number);
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
    let map = table
        .flows()
        .iter()
        .map(|f| ((f.src.to_string(), f.dst.to_string(), f.destqp), (f.packets, f.bytes, f.first_frame, f.last_frame)))
        .collect();
    (map, frames)
}

fn tshark(path: &Path) -> (BTreeMap<Key, Counts>, u64) {
    let out = Command::new("tshark")
        .args(["-n", "-T", "fields", "-E", "occurrence=f"])
        .args(["-e", "frame.number", "-e", "frame.len", "-e", "ip.src", "-e", "ip.dst", "-e", "infiniband.bth.destqp"])
        .arg("-r")
        .arg(path)
        .output()
        .expect("tshark must be installed (Debian: apt-get install tshark)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut map: BTreeMap<Key, Counts> = BTreeMap::new();
    let mut frames = 0;
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        frames += 1;
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() < 5 || c[4].is_empty() || c[2].is_empty() {
            continue;
        }
        let number: u64 = c[0].parse().unwrap();
        let len: u64 = c[1].parse().unwrap();
        let qp = match c[4].strip_prefix("0x") {
            Some(h) => u32::from_str_radix(h, 16).unwrap(),
            None => c[4].parse().unwrap(),
        };
        let e = map.entry((c[2].into(), c[3].into(), qp)).or_insert((0, 0, number, number));
        e.0 += 1;
        e.1 += len;
        e.3 = number;
    }
    (map, frames)
}

#[test]
fn flow_table_agrees_with_tshark() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    for name in ["synth-gbn-loss", "synth-irn-loss", "synth-dcp-clean"] {
        let path = root.join(format!("fixtures/{name}.pcapng"));
        let (have, frames) = ours(&path);
        let (want, tshark_frames) = tshark(&path);
        assert_eq!(frames, tshark_frames, "{name}: frames read");
        assert!(have.len() >= 2, "{name}: {have:?}");
        assert_eq!(have, want, "{name}: flows");
    }
}
