//! The ground truth of Go-Back-N READs (issue 9): the requester accepts READ responses in one
//! PSN sequence across the connection's READs, so a resent response it needed is never
//! "spurious". Judged from the capture: the sender tap (at the requester's NIC) records every
//! response as it arrives; replaying the requester's rule on those bytes — accept the response
//! whose PSN is the next one the oldest incomplete READ needs, in arrival order — tells which
//! copies were needed, and the truth must not call any of them spurious.

use std::collections::HashMap;

use rocescope_analysis::capture::CaptureReader;
use rocescope_codec::{DecodeOptions, Frame, LinkType};
use rocescope_sim::sim::TapPoint;
use rocescope_sim::synth::{self, simulate, OpChoice, SynthOptions};
use rocescope_stacks::{Op, StackKind};

/// `rocescope synth --stack gbn --loss 0.05 --op read --seed 162618 --messages 30
/// --message-size 10000` (the run issue 9 reports: 1,744 of 1,817 retransmissions were
/// labelled spurious, the resend that completed message 2 among them).
fn issue_run() -> SynthOptions {
    SynthOptions {
        stack: StackKind::Gbn,
        loss: 0.05,
        op: OpChoice::One(Op::Read),
        seed: 162618,
        messages: 30,
        message_size: 10000,
        ..Default::default()
    }
}

#[test]
fn no_read_response_the_requester_needed_is_labelled_spurious() {
    for opts in [issue_run(), SynthOptions { seed: 5, op: OpChoice::Mix, messages: 24, ..issue_run() }] {
        let ctx = opts.command_line();
        let mut pcap = Vec::new();
        let t = {
            let f = simulate(&opts, Some(Box::new(&mut pcap)), true, None).unwrap();
            synth::truth(&opts, &f)
        };
        let sender_if = opts.taps.iter().position(|&x| x == TapPoint::Sender).unwrap() as u32;
        let requester_qpn = t.connections[0].requester.qpn;
        let mtu = opts.mtu;
        // Replay the requester on the sender tap's frames.
        let mut reads: Vec<(u32, u32)> = Vec::new(); // (first PSN, packets), in posting order
        let mut next: usize = 0; // the READ whose responses are awaited
        let mut want: Option<u32> = None;
        let mut needed = Vec::new(); // frame numbers of the responses the requester accepted
        let mut rd = CaptureReader::new(&pcap[..]).unwrap();
        let dec = DecodeOptions::default();
        while let Some(rec) = rd.next_record().unwrap() {
            if rec.interface != sender_if {
                continue;
            }
            let f = Frame::parse(LinkType::Ethernet, rec.data, rec.orig_len as usize, &dec);
            let Some(p) = f.roce() else { continue };
            let (op, psn) = (p.opcode().0, p.bth().psn());
            if op == 0x0C {
                // A READ Request. First copies give the READs in order; a re-issued one (from
                // its first missing response) falls inside a READ already seen.
                let n = p.reth().unwrap().dma_len().div_ceil(mtu).max(1);
                if !reads.iter().any(|r| (psn.wrapping_sub(r.0) & 0xff_ffff) < r.1) {
                    reads.push((psn, n));
                }
            } else if (0x0D..=0x10).contains(&op) && p.bth().dest_qp() == requester_qpn {
                let Some(&(first_of_next, _)) = reads.get(next) else { continue }; // a late copy
                let w = *want.get_or_insert(first_of_next);
                if psn == w {
                    needed.push(rec.number);
                    let (first, n) = reads[next];
                    if psn == (first + n - 1) & 0xff_ffff {
                        next += 1;
                        want = reads.get(next).map(|r| r.0);
                    } else {
                        want = Some((psn + 1) & 0xff_ffff);
                    }
                }
            }
        }
        let reads_posted = t.sim.messages.iter().filter(|m| m.op == rocescope_sim::truth::Op::Read).count();
        assert_eq!(next, reads_posted, "{ctx}: the replay completes every READ");
        // The truth's view of those frames.
        let tap = &t.taps[sender_if as usize];
        let by_frame: HashMap<u64, &rocescope_sim::truth::Frame> = tap.frames.iter().map(|f| (f.frame, f)).collect();
        let mut resent_needed = 0;
        for n in &needed {
            let fr = by_frame[n];
            if let Some(r) = fr.retx {
                resent_needed += 1;
                assert!(!r.spurious, "{ctx}: frame {n} (PSN {}) was needed but is labelled spurious", fr.psn);
            }
        }
        assert!(resent_needed >= 5, "{ctx}: the run resends needed responses ({resent_needed})");
        // The resend that completed each message was needed.
        let txs: HashMap<u32, _> = t.sim.transmissions.iter().map(|x| (x.id, x)).collect();
        for m in &t.sim.messages {
            let by = txs[&m.completed_by_tx.unwrap()];
            assert!(by.retx.is_none_or(|r| !r.spurious), "{ctx}: message {} completed by a 'spurious' copy", m.index);
        }
        // What the truth still calls spurious arrived after a copy of its PSN was accepted (or
        // never arrived), so it cannot exceed the responses the replay did not accept.
        let responses_seen = tap.frames.iter().filter(|f| f.kind == rocescope_sim::truth::Kind::ReadResponse).count();
        let spurious_seen = tap
            .frames
            .iter()
            .filter(|f| f.kind == rocescope_sim::truth::Kind::ReadResponse && f.retx.is_some_and(|r| r.spurious))
            .count();
        assert!(spurious_seen <= responses_seen - needed.len(), "{ctx}");
    }
}
