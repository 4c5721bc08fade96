//! The analysers' summary fast path (`pcap-tools/analysis/src/analyze/plain.rs`) answers what
//! the long way (every frame decoded by the codec, then summarised) answers:
//! - on every fixture, whole: the same flow table, timelines and decoder counts, with most
//!   frames of the plain captures taken by the fast path;
//! - on the fixtures' frames mutated byte by byte, cut and with lengths changed: every frame the
//!   fast path still reads has the summary of its `std` decoding (the frames it refuses go the
//!   long way; both kinds occur).
//!
//! The fuzz harnesses check the same on every input (`fuzz_frame` per frame, `fuzz_analysis`
//! per capture; replayed over the corpora by `fuzz_corpus_replay.rs`).

use std::path::{Path, PathBuf};

use rocescope_analysis::capture;
use rocescope_codec::LinkType;
use rocescope_testsupport::fuzzing::{check_fast_path_run, check_plain_summary};

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcapng" || e == "pcap"))
        .collect();
    v.sort();
    assert!(v.len() >= 14, "fixtures found: {v:?}");
    v
}

#[test]
fn every_fixture_analysed_alike_with_the_fast_path() {
    for path in fixtures() {
        let data = std::fs::read(&path).expect("read");
        let run = check_fast_path_run(&data, u64::MAX);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        eprintln!("{name}: {} of {} frames by the fast path", run.plain, run.frames);
        assert!(run.frames > 0, "{name}: no frames");
        // Plain RoCEv2 over IPv4 (GBN, IRN): most frames (a DSCP-26 flow's first packets go the
        // long way, to detection). Native InfiniBand: none.
        if name.starts_with("synth-gbn") || name.starts_with("synth-irn") {
            assert!(run.plain * 5 > run.frames * 4, "{name}: {} of {} frames", run.plain, run.frames);
        }
        if name == "ib-native.pcapng" {
            assert_eq!(run.plain, 0, "{name}");
        }
    }
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn mutated_frames_summarised_alike() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut read, mut refused, mut frames) = (0u64, 0u64, 0u64);
    for path in fixtures() {
        let mut reader = capture::open(&path.display().to_string()).expect("open");
        // The first frames of each fixture: every opcode its transport sends early.
        let mut taken = 0;
        while let Ok(Some(rec)) = reader.next_record() {
            if taken == 150 {
                break;
            }
            if rocescope_analysis::link_type(rec.linktype) != Some(LinkType::Ethernet) {
                continue;
            }
            let orig = rec.data.to_vec();
            if !check_plain_summary(&orig, rec.orig_len as usize) {
                continue;
            }
            taken += 1;
            frames += 1;
            let mut check = |bytes: &[u8], orig_len: usize| {
                if check_plain_summary(bytes, orig_len) {
                    read += 1;
                } else {
                    refused += 1;
                }
            };
            // Every header byte (Ethernet, IPv4, UDP, BTH and the next 20) changed: a bit, all
            // bits, to zero, to random.
            let head = orig.len().min(14 + 20 + 8 + 12 + 20);
            for i in 0..head {
                let r = rng.next() as u8;
                for b in [orig[i] ^ 1, orig[i] ^ 0x80, !orig[i], 0, r] {
                    let mut m = orig.clone();
                    m[i] = b;
                    check(&m, m.len());
                }
            }
            // The IPv4 total length and the UDP length moved by a little, alone and together.
            for delta in [-9i32, -4, -1, 1, 3, 4, 12] {
                for (at, also) in [(16usize, false), (38, false), (16, true)] {
                    let mut m = orig.clone();
                    let bump = |m: &mut Vec<u8>, at: usize| {
                        let v = (i32::from(u16::from_be_bytes([m[at], m[at + 1]])) + delta).clamp(0, 0xffff) as u16;
                        m[at..at + 2].copy_from_slice(&v.to_be_bytes());
                    };
                    bump(&mut m, at);
                    if also {
                        bump(&mut m, 38);
                    }
                    check(&m, m.len());
                }
            }
            // Cut: by the snaplen (longer on the wire), and frames that are themselves shorter.
            for k in [0, 13, 14, 33, 34, 41, 42, 45, 53, 54, 57, 58, 66, 70, orig.len() - 1] {
                let k = k.min(orig.len());
                check(&orig[..k], orig.len());
                check(&orig[..k], k);
            }
            // Trailing bytes (Ethernet padding, a frame check sequence).
            let mut m = orig.clone();
            m.extend_from_slice(&[0, 0, 0, 0]);
            check(&m, m.len());
        }
    }
    eprintln!("{frames} frames mutated: {read} variants read by the fast path, {refused} refused");
    assert!(frames > 300, "{frames} frames");
    assert!(read > 10_000 && refused > 10_000, "read {read}, refused {refused}");
}
