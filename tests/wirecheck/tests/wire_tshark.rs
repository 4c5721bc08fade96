//! A second decoder on the standard-profile captures (GBN, IRN; issue 9: "cross-check the
//! truth's per-tap retransmissions and losses with tshark on the capture"): tshark's own
//! `infiniband` dissector must read every frame's interface, IP addresses, DestQP, opcode and
//! PSN as the codec does, and the retransmissions counted from tshark's rows alone (a request
//! PSN leaving the sender's tap again) must be the truth's, per tap and flow, and so must the
//! losses (per flow and PSN: the frames that left one end's tap and never reached the other's).

mod common;

use std::collections::BTreeMap;

use common::*;
use rocescope_sim::truth::TapName;
use rocescope_stacks::StackKind;
use rocescope_wirecheck::tshark;

#[test]
fn tshark_reads_the_same_psns_and_retransmissions_as_the_truth() {
    assert!(tshark::available(), "tshark not found on PATH: install it (Debian: apt-get install tshark)");
    let (mut compared, mut lost) = (0, 0);
    for stack in [StackKind::Gbn, StackKind::Irn] {
        for s in [Scenario::Clean, Scenario::Loss, Scenario::Spray] {
            for seed in 1..=2 {
                let o = opts(stack, s, seed);
                let r = synth(&o, "tshark");
                let dir = r.pcap.parent().unwrap().to_path_buf();
                let rows = tshark::rows(&r.pcap, &dir.join("wireshark-config")).unwrap();
                let ours = tshark::codec_rows(&r.wire.pkts);
                assert_eq!(rows.len(), ours.len(), "{}: frames with a BTH", o.command_line());
                if let Some((a, b)) = rows.iter().zip(&ours).find(|(a, b)| a != b) {
                    panic!("{}: tshark {a:?}, codec {b:?}", o.command_line());
                }
                // Retransmissions from tshark's rows at the sender tap (interface of `sender`).
                let sender = r.truth.taps.iter().find(|t| t.name == TapName::Sender).unwrap();
                let s0 = r.truth.connections[0].requester.ip.to_string();
                let mut seen: BTreeMap<(String, u32), u32> = BTreeMap::new();
                let mut retx: BTreeMap<String, Vec<u64>> = BTreeMap::new();
                for row in rows.iter().filter(|x| x.interface == sender.interface && x.src == s0 && x.opcode <= 0x0C) {
                    let flow = format!("{}>{}/{}", row.src, row.dst, row.destqp);
                    let n = seen.entry((flow.clone(), row.psn)).or_default();
                    if *n > 0 {
                        retx.entry(flow).or_default().push(row.frame);
                    }
                    *n += 1;
                }
                for f in sender.flows.iter().filter(|f| f.src.to_string() == s0) {
                    let truth: Vec<u64> = f.retransmissions.iter().map(|x| x.frame).collect();
                    let ts = retx.remove(&f.id).unwrap_or_default();
                    assert_eq!(
                        ts,
                        truth,
                        "{}: flow {}: tshark's retransmissions against the truth's",
                        o.command_line(),
                        f.id
                    );
                    compared += truth.len();
                }
                assert!(retx.is_empty(), "{}: flows the truth does not list: {retx:?}", o.command_line());
                // Losses from tshark's rows: what left one end's tap and did not reach the
                // other's, per flow and PSN, against the truth's losses.
                let receiver = r.truth.taps.iter().find(|t| t.name == TapName::Receiver).unwrap();
                let r0 = r.truth.connections[0].responder.ip.to_string();
                let mut balance: BTreeMap<(String, u32, u8), i64> = BTreeMap::new();
                for row in &rows {
                    let key = (format!("{}>{}/{}", row.src, row.dst, row.destqp), row.psn, row.opcode);
                    let (at_s0, at_r0) = (row.interface == sender.interface, row.interface == receiver.interface);
                    let leaving = (at_s0 && row.src == s0) || (at_r0 && row.src == r0);
                    let arriving = (at_s0 && row.dst == s0) || (at_r0 && row.dst == r0);
                    *balance.entry(key).or_default() += leaving as i64 - arriving as i64;
                }
                let mut ts_lost: BTreeMap<(String, u32), i64> = BTreeMap::new();
                for ((flow, psn, _), n) in balance {
                    assert!(n >= 0, "{}: {flow} PSN {psn} arrived more often than it left", o.command_line());
                    if n > 0 {
                        *ts_lost.entry((flow, psn)).or_default() += n;
                    }
                }
                let mut truth_lost: BTreeMap<(String, u32), i64> = BTreeMap::new();
                for f in &sender.flows {
                    for l in &f.losses {
                        *truth_lost.entry((f.id.clone(), l.psn)).or_default() += 1;
                    }
                }
                assert_eq!(
                    ts_lost,
                    truth_lost,
                    "{}: losses per flow and PSN, tshark against the truth",
                    o.command_line()
                );
                lost += truth_lost.values().sum::<i64>();
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }
    eprintln!("{compared} retransmissions, {lost} losses compared");
    assert!(compared > 100 && lost > 20);
}
