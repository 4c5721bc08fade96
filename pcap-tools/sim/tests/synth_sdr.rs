//! SDR-RDMA's stacks (`sdr-sr`, `sdr-ec`) on the simulated fabric (issue 13): conservation under
//! loss in both directions, spraying and incast, with every captured frame decoding cleanly
//! under the SDR profile (the stateful decoder's VA and immediate checks included); the paper's
//! selective-repeat model (Appendix A) where it is exact, over 1,000 messages of 64 chunks at
//! three drop rates; and §5's long-haul comparison, where erasure coding beats selective repeat.

mod common;

use rocescope_analysis::capture::CaptureReader;
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice};
use rocescope_codec::ext::sdr::Ctrl;
use rocescope_codec::{IcrcStatus, LinkType, Profile};
use rocescope_sim::sim::{CongestionControl, Fabric, LossDir, Routing, TapPoint};
use rocescope_sim::synth::{simulate, SdrOptions, SynthOptions};
use rocescope_stacks::sdr::Code;
use rocescope_stacks::sdr_model::{self, SrModel};
use rocescope_stacks::StackKind;

/// Runs `opts` (writing the capture), checks every message was delivered intact once and
/// completed once, and every frame decodes under the SDR profile with no warning and a good
/// ICRC; returns the fabric.
fn run_checked(label: &str, opts: &SynthOptions) -> Fabric<'static> {
    let mut pcap = Vec::new();
    let f = simulate(opts, Some(Box::new(&mut pcap)), false, None).unwrap();
    let ctx = || format!("{label}: {}", opts.command_line());
    common::assert_conserved(&f, &ctx);
    let f = f;
    let params = f.cfg.params;
    drop(f);
    let mut dec =
        Decoder::new(DecoderOptions { profile: ProfileChoice::Fixed(Profile::Sdr), params, ..Default::default() });
    let mut rd = CaptureReader::new(&pcap[..]).unwrap();
    let (mut data, mut ctrl) = (0u64, 0u64);
    while let Some(rec) = rd.next_record().unwrap() {
        let d = dec.emit(LinkType::Ethernet, rec.data, rec.orig_len as usize);
        let f = &d.frame;
        let Some(p) = f.roce() else { continue };
        assert!(f.warnings.is_empty(), "{}: frame {}: {:?}", ctx(), rec.number, f.warnings.iter().collect::<Vec<_>>());
        assert_eq!(f.icrc_status(), IcrcStatus::Good, "{}: frame {}", ctx(), rec.number);
        match p.opcode().0 {
            0x2b => {
                data += 1;
                assert_eq!(d.extra.sdr.and_then(|a| a.va_ok), Some(true), "{}: frame {}: RETH VA", ctx(), rec.number);
            }
            0x24 => ctrl += 1,
            0x81 => {} // CNP
            op => panic!("{}: frame {}: opcode {op:#x} in an SDR run", ctx(), rec.number),
        }
    }
    assert!(data > 0 && ctrl > 0, "{}", ctx());
    // (Re-run without the capture for the caller: the fabric borrowed `pcap`.)
    simulate(opts, None, false, None).unwrap()
}

fn sdr(stack: StackKind, seed: u64, o: SdrOptions) -> SynthOptions {
    SynthOptions {
        stack,
        seed,
        messages: 10,
        message_size: 20_000,
        mtu: 1024,
        taps: vec![TapPoint::Sender, TapPoint::Receiver],
        time_limit_ns: 2_000_000_000,
        sdr: o,
        ..Default::default()
    }
}

fn modes() -> Vec<(StackKind, SdrOptions)> {
    let d = SdrOptions::default();
    vec![
        (StackKind::SdrSr, SdrOptions { chunk_packets: 2, channels: 2, ..d }),
        (StackKind::SdrSr, SdrOptions { nack: true, alpha: 0.0, ..d }),
        (StackKind::SdrEc, SdrOptions { k: 4, m: 2, code: Code::Xor, channels: 4, ..d }),
        (StackKind::SdrEc, SdrOptions { k: 8, m: 4, code: Code::Mds, chunk_packets: 2, ..d }),
    ]
}

#[test]
fn every_sdr_mode_delivers_under_loss_spraying_and_incast() {
    for (stack, o) in modes() {
        for seed in 1..=4 {
            let lossy = SynthOptions { loss: 0.02, loss_dir: LossDir::Both, incast: 3, ..sdr(stack, seed, o) };
            run_checked("loss both ways, 3-to-1", &lossy);
            let sprayed = SynthOptions {
                paths: 4,
                routing: Routing::Spray,
                reorder_ns: 3_000,
                loss: 0.01,
                ..sdr(stack, seed, o)
            };
            run_checked("sprayed over 4 paths", &sprayed);
        }
    }
}

#[test]
fn message_ids_and_generations_wrap_on_the_fabric() {
    // 1,200 messages: past the 1,024 message ids, into the second generation.
    let o = SynthOptions {
        messages: 1_200,
        message_size: 2_048,
        loss: 0.01,
        ..sdr(StackKind::SdrSr, 3, SdrOptions::default())
    };
    run_checked("ids wrap", &o);
}

/// Appendix A's parameters for a dumbbell run of `opts` (one sender, one-packet chunks): `T_INJ`
/// a data frame's time on a link; the round trip from a chunk's last bit leaving the sender to
/// its SR_ACK's arrival (three links each way, store and forward: the data frame is sent twice
/// more, the SR_ACK three times); `O` the stack's RTO (its timer starts as the packet starts to
/// leave, so the model's `RTO + T_INJ` is the stack's RTO).
fn model(opts: &SynthOptions, chunks: u64, p: f64) -> SrModel {
    let ser = |bytes: u64| ((bytes + 24) as f64 * 8.0 / opts.rate_gbps).ceil();
    let t_inj = ser(78 + opts.mtu as u64);
    // An SR_ACK: Ethernet, IPv4, UDP, BTH, the 16-byte header and its bitmap (up to 8 bytes
    // for 64 chunks), ICRC.
    let ack = ser(14 + 20 + 8 + 12 + 16 + 8 + 4);
    let rtt = 6.0 * opts.delay_ns as f64 + 2.0 * t_inj + 3.0 * ack;
    let rto = opts.sdr_config().rto_ns() as f64;
    SrModel { chunks, t_inj_ns: t_inj, rtt_ns: rtt, alpha: (rto - t_inj) / rtt - 1.0, p_drop: p }
}

#[test]
fn selective_repeat_on_the_fabric_matches_appendix_a() {
    // 1,000 messages of 64 one-packet chunks, one at a time (posted 2 ms apart on an idle
    // dumbbell, no congestion control), data frames lost at random on the fabric link: the
    // mean completion time (from the message's post, when its first packet leaves, to the
    // sender's completion) is within 5 % of Appendix A at three drop rates.
    let chunks = 64u64;
    for (i, p) in [1e-3, 1e-2, 1e-1].into_iter().enumerate() {
        let opts = SynthOptions {
            messages: 1_000,
            message_size: chunks as u32 * 1024,
            post_interval_ns: 2_000_000,
            loss: p,
            loss_dir: LossDir::Forward,
            cc: CongestionControl::None,
            taps: vec![],
            time_limit_ns: 10_000_000_000,
            ..sdr(StackKind::SdrSr, 10 + i as u64, SdrOptions::default())
        };
        let m = model(&opts, chunks, p);
        assert!(m.exact(), "the first pass ends before the RTO");
        let f = simulate(&opts, None, false, None).unwrap();
        let c = &f.conns[0];
        let times: Vec<f64> = c.messages.iter().map(|m| (m.completed[0] - m.posted.unwrap()) as f64).collect();
        assert_eq!(times.len(), 1_000);
        let got = times.iter().sum::<f64>() / times.len() as f64;
        let want = sdr_model::sr_mean_ns(&m);
        let err = (got - want) / want;
        eprintln!("fabric sdr-sr p = {p}: mean {got:.0} ns, Appendix A {want:.0} ns ({:+.2}%)", err * 100.0);
        assert!(err.abs() < 0.05, "p = {p}: measured {got:.0} ns, Appendix A {want:.0} ns");
    }
}

#[test]
fn erasure_coding_beats_selective_repeat_on_a_lossy_long_haul_link() {
    // §5's cross-continent case: one 128 MiB message at 400 Gbit/s over a 25 ms round trip
    // (three links of 4.17 ms each way), 4 KiB packets in 64 KiB chunks (M = 2,048), one packet
    // in 1,000 lost on the long link, EC(32, 8) against selective repeat with RTO = 3 RTT. SR
    // waits out at least one RTO for the ~33 chunks lost; EC rebuilds them from parity and
    // completes about one round trip after the first pass. (Two messages 300 ms apart: the
    // second is measured, its CTS long arrived, so it starts as it is posted; the first waited
    // half a round trip for its CTS.)
    let run = |stack: StackKind| {
        let opts = SynthOptions {
            stack,
            seed: 5,
            messages: 2,
            post_interval_ns: 300_000_000,
            message_size: 128 << 20,
            mtu: 4096,
            rate_gbps: 400.0,
            delay_ns: 25_000_000 / 6,
            loss: 1e-3,
            loss_dir: LossDir::Forward,
            cc: CongestionControl::None,
            queue_bytes: 64 << 20,
            taps: vec![],
            time_limit_ns: 10_000_000_000,
            sdr: SdrOptions { chunk_packets: 16, k: 32, m: 8, code: Code::Mds, ..SdrOptions::default() },
            ..Default::default()
        };
        let f = simulate(&opts, None, false, None).unwrap();
        let m = &f.conns[0].messages[1];
        assert!(m.delivered.len() == 1 && m.delivered[0].2, "{}: delivered intact", stack.name());
        assert!(f.stats.dropped > 0, "{}: the link lost packets", stack.name());
        (m.completed[0] - m.posted.unwrap()) as f64 / 1e6
    };
    let (sr, ec) = (run(StackKind::SdrSr), run(StackKind::SdrEc));
    eprintln!("128 MiB, 400 Gbit/s, 25 ms RTT, 1e-3: sdr-sr {sr:.1} ms, sdr-ec {ec:.1} ms");
    // EC: the first pass (data and 25 % parity, 3.4 ms) and a round trip, no fallback.
    assert!(ec > 28.0 && ec < 30.0, "sdr-ec {ec:.1} ms");
    // SR: at least an RTO (75 ms) beyond the first pass and its round trip.
    assert!(sr > 2.0 * ec && sr > 100.0, "sdr-sr {sr:.1} ms against sdr-ec {ec:.1} ms");
}

#[test]
fn erasure_coding_on_the_fabric_falls_back_as_often_as_appendix_b_says() {
    // EC(32, 8) XOR, 1,000 messages of 64 one-packet chunks (L = 2 submessages), one data packet
    // in 50 lost on the fabric link: ~60 fallbacks expected. The share of messages whose
    // receiver sent an EC_NACK (read from the sender tap's capture) is within three standard
    // errors of Appendix B's 1 − P_EC^L.
    let opts = SynthOptions {
        messages: 1_000,
        message_size: 64 * 1024,
        post_interval_ns: 200_000,
        loss: 0.02,
        loss_dir: LossDir::Forward,
        cc: CongestionControl::None,
        taps: vec![TapPoint::Sender],
        time_limit_ns: 10_000_000_000,
        ..sdr(StackKind::SdrEc, 21, SdrOptions { k: 32, m: 8, code: Code::Xor, ..SdrOptions::default() })
    };
    let mut pcap = Vec::new();
    let f = simulate(&opts, Some(Box::new(&mut pcap)), false, None).unwrap();
    assert!(f.conns[0].messages.iter().all(|m| m.completed.len() == 1 && m.delivered.len() == 1 && m.delivered[0].2));
    drop(f);
    let mut dec = Decoder::new(DecoderOptions { profile: ProfileChoice::Fixed(Profile::Sdr), ..Default::default() });
    let mut rd = CaptureReader::new(&pcap[..]).unwrap();
    let mut nacked = std::collections::BTreeSet::new();
    while let Some(rec) = rd.next_record().unwrap() {
        let d = dec.emit(LinkType::Ethernet, rec.data, rec.orig_len as usize);
        let Some(p) = d.frame.roce() else { continue };
        if p.opcode().0 != 0x24 {
            continue;
        }
        let mut w = rocescope_codec::Warnings::default();
        if let Some(c @ Ctrl::EcNack { .. }) = Ctrl::parse(p.payload(), p.payload_len(), &mut w) {
            nacked.insert(c.msg_seq());
        }
    }
    let ec = sdr_model::EcModel {
        sr: SrModel { chunks: 64, t_inj_ns: 0.0, rtt_ns: 0.0, alpha: 2.0, p_drop: 0.02 },
        code: sdr_model::Code::Xor { k: 32, m: 8 },
        beta: 1.0,
    };
    let want = ec.p_fallback();
    let got = nacked.len() as f64 / 1_000.0;
    let se = (want * (1.0 - want) / 1_000.0).sqrt();
    eprintln!("fabric sdr-ec XOR(32,8) p = 0.02: fallbacks {got:.4}, Appendix B {want:.4} ± {se:.4}");
    assert!(want * 1_000.0 >= 30.0);
    assert!((got - want).abs() <= 3.0 * se, "fallbacks {got:.4}, Appendix B {want:.4} (SE {se:.4})");
}
