//! The command line as INTERFACES.md fixes it: `decode` formats, `-e`, `-c`, standard input,
//! exit codes and located errors for unusable input, `check`, and decoding that goes on past
//! bad packets.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use rocescope_analysis::capture::CaptureWriter;
use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ib::{AethRepr, RethRepr, Syndrome};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rocescope"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run rocescope")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Frames: 1 WRITE First (RETH), 2 NAK, 3 ARP (not IP), 4 SEND Only cut to 60 bytes
/// (snaplen), 5 SEND with an impossible PadCnt, 6 SEND with a corrupted ICRC.
fn sample_frames() -> Vec<(Vec<u8>, usize)> {
    let net = NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]);
    let payload = [0x42u8; 100];
    let mut w = RoceRepr::new(0x06, 0x123, 7).with_payload(&payload);
    w.reth = Some(RethRepr { va: 0xffff_0000_0000_0001, r_key: 0xabcd, dma_len: 1000 });
    let mut ack = RoceRepr::new(0x11, 0x456, 7);
    ack.aeth = Some(AethRepr { syndrome: Syndrome::Nak { code: 0 }, msn: 3 });
    let mut not_ip = vec![0xffu8; 12];
    not_ip.extend_from_slice(&[0x08, 0x06]);
    not_ip.resize(60, 0);
    let send = FrameRepr::new(net, RoceRepr::new(0x04, 0x123, 8).with_payload(&payload)).to_vec();
    let mut bad_pad = RoceRepr::new(0x04, 0x123, 9).with_payload(&payload[..2]);
    bad_pad.bth.pad_cnt = 0;
    let mut bad_pad = FrameRepr::new(net, bad_pad).to_vec();
    // PadCnt 3 with only 2 payload bytes: fix the ICRC so only the PadCnt is wrong.
    bad_pad[14 + 20 + 8 + 1] |= 0x30;
    assert!(rocescope_codec::build::fix_icrc(rocescope_codec::LinkType::Ethernet, &mut bad_pad));
    let mut bad_icrc = FrameRepr::new(net, RoceRepr::new(0x04, 0x123, 10).with_payload(&payload)).to_vec();
    let n = bad_icrc.len();
    bad_icrc[n - 1] ^= 0x5a;
    vec![
        (FrameRepr::new(net, w).to_vec(), usize::MAX),
        (FrameRepr::new(net, ack).to_vec(), usize::MAX),
        (not_ip, usize::MAX),
        (send, 60),
        (bad_pad, usize::MAX),
        (bad_icrc, usize::MAX),
    ]
}

fn write_capture(path: &std::path::Path) {
    let mut w = CaptureWriter::new(std::fs::File::create(path).unwrap(), &["tap"]).unwrap();
    for (i, (f, caplen)) in sample_frames().iter().enumerate() {
        w.write_truncated(0, 1_700_000_000_000_000_000 + i as u64 * 1000, f, *caplen).unwrap();
    }
}

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rocescope-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn fields_prints_one_line_per_frame_in_flag_order() {
    let p = tmp("a.pcapng");
    write_capture(&p);
    let o = run(&[
        "decode", "--format", "fields", "-e", "frame.number", "-e", "rocescope.bth.psn", "-e",
        "rocescope.reth.va", "-e", "rocescope.aeth.kind", "-e", "rocescope.truncated",
        p.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "{lines:?}");
    assert_eq!(lines[0], "1\t7\t18446462598732840961\t\t0");
    assert_eq!(lines[1], "2\t7\t\tnak\t0");
    assert_eq!(lines[2], "3\t\t\t\t", "a non-RoCE frame still gets its (empty) line");
    assert_eq!(lines[3], "4\t8\t\t\t1", "snaplen-cut frame is flagged truncated");
}

#[test]
fn warnings_are_per_packet_and_decoding_continues() {
    let p = tmp("b.pcapng");
    write_capture(&p);
    let o = run(&["decode", "-T", "fields", "-e", "rocescope.icrc.status", "-e", "rocescope.warning", p.to_str().unwrap()]);
    assert!(o.status.success());
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "good\t");
    assert!(lines[3].starts_with("truncated\t"), "{}", lines[3]);
    assert!(lines[4].contains("PadCnt 3 exceeds the 2 bytes after the headers"), "{}", lines[4]);
    assert!(lines[5].starts_with("bad\tICRC mismatch"), "{}", lines[5]);
}

#[test]
fn count_limits_frames_and_stdin_works() {
    let p = tmp("c.pcapng");
    write_capture(&p);
    let bytes = std::fs::read(&p).unwrap();
    let mut child = bin()
        .args(["decode", "-T", "fields", "-e", "rocescope.bth.destqp", "-c", "2", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    assert_eq!(stdout(&o), "291\n1110\n");
}

#[test]
fn json_is_one_document_with_64_bit_values_as_strings() {
    let p = tmp("d.pcapng");
    write_capture(&p);
    let o = run(&["decode", "--format", "json", p.to_str().unwrap()]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    let frames = v.as_array().unwrap();
    assert_eq!(frames.len(), 6);
    assert_eq!(frames[0]["rocescope.reth.va"], "18446462598732840961");
    assert_eq!(frames[0]["rocescope.reth.r_key"], 0xabcd);
    assert_eq!(frames[0]["time_ns"], "1700000000000000000");
    assert_eq!(frames[0]["rocescope.icrc"].as_str().unwrap().len(), 8);
    assert_eq!(frames[1]["rocescope.aeth.nak_code"], 0);
    assert!(!frames[4]["rocescope.warning"].as_array().unwrap().is_empty());
    assert!(frames[2].get("rocescope.bth.psn").is_none());
}

#[test]
fn text_summary_and_verbose_tree() {
    let p = tmp("e.pcapng");
    write_capture(&p);
    let o = run(&["decode", "-V", "-c", "1", p.to_str().unwrap()]);
    let out = stdout(&o);
    assert!(out.contains("RC RDMA WRITE First QP=0x000123 PSN=7"), "{out}");
    assert!(out.contains("rocescope.reth.dmalen: 1000"), "{out}");
    // A field repeated in one packet is one line, its values joined by commas (INTERFACES.md).
    let ext = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/ext-mix.pcapng");
    let o = run(&["decode", "-V", ext]);
    let out = stdout(&o);
    assert!(out.lines().any(|l| l.starts_with("            rocescope.netrt.requested: 258,261    [bytes ")), "{out}");
    assert_eq!(out.matches("rocescope.netrt.requested:").count(), 1, "{out}");
}

#[test]
fn check_reports_bad_packets_by_frame_number() {
    let p = tmp("f.pcapng");
    write_capture(&p);
    let o = run(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("frame 5: PadCnt 3"), "{out}");
    assert!(lines[1].starts_with("frame 6: ICRC mismatch"), "{out}");

    let good = tmp("g.pcapng");
    let mut w = CaptureWriter::new(std::fs::File::create(&good).unwrap(), &["tap"]).unwrap();
    for (f, _) in sample_frames().iter().take(2) {
        w.write(0, 1, f).unwrap();
    }
    // Flagged by decode but not integrity failures (WIRE.md A.4: an opcode outside the table
    // is "flagged, never an error"): an unknown opcode, TVer 1, a CNP sent as 0x80; and a
    // SEND cut short by the snaplen (not verifiable, not bad).
    let net = NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]);
    let mut tver = RoceRepr::new(0x04, 0x123, 11).with_payload(&[1, 2, 3, 4]);
    tver.bth.tver = 1;
    let mut cnp = RoceRepr::new(0x80, 0x123, 0).with_payload(&[0; 16]);
    cnp.bth.becn = true;
    for r in [RoceRepr::new(0x1f, 0x123, 12).with_payload(&[9; 8]), tver, cnp] {
        w.write(0, 2, &FrameRepr::new(net, r).to_vec()).unwrap();
    }
    w.write_truncated(0, 3, &sample_frames()[3].0, 60).unwrap();
    // Not RoCE (UDP 1234 both ways) with a wrong IPv4 checksum, as host captures of offloaded
    // traffic have: not check's to judge.
    let mut other = FrameRepr::new(net, RoceRepr::new(0x04, 0x123, 13).with_payload(&[5; 4])).to_vec();
    other[34..38].copy_from_slice(&[0x04, 0xd2, 0x04, 0xd2]);
    other[24] ^= 0xff;
    w.write(0, 4, &other).unwrap();
    drop(w);
    let flagged = run(&["decode", "--profile", "std", "--format", "fields", "-e", "rocescope.warning", "-e", "rocescope.truncated", good.to_str().unwrap()]);
    let lines: Vec<String> = stdout(&flagged).lines().skip(2).map(String::from).collect();
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert!(lines[4].starts_with("IPv4 header checksum"), "{lines:?}");
    assert!(lines[..3].iter().all(|l| !l.starts_with('\t') && l.ends_with("\t0")), "{lines:?}");
    assert_eq!(lines[3], "\t1");
    let o = run(&["check", "--profile", "std", good.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).contains("6 RoCE packets checked: 0 bad, 1 cut short by the capture"), "{}", stderr(&o));
}

#[test]
fn unusable_input_is_one_located_line_and_exit_2() {
    let garbage = tmp("garbage.pcap");
    std::fs::write(&garbage, b"this is not a capture at all").unwrap();
    for cmd in ["decode", "check"] {
        let o = run(&[cmd, garbage.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2));
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains("garbage.pcap: byte 0: not a pcap or pcapng file"), "{e}");
    }
    let missing = run(&["decode", "/nonexistent/x.pcap"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("/nonexistent/x.pcap"));
}

#[test]
fn a_file_cut_mid_record_keeps_what_came_before_and_names_the_offset() {
    let p = tmp("cut.pcapng");
    write_capture(&p);
    let bytes = std::fs::read(&p).unwrap();
    let cut = tmp("cut2.pcapng");
    // Cut 10 bytes into every record in turn: the frames before it decode, then exit 2.
    let mut seen_offsets = vec![];
    for (keep, whole) in [(bytes.len() - 10, 5), (bytes.len() - 200, 4)] {
        std::fs::write(&cut, &bytes[..keep]).unwrap();
        let o = run(&["decode", "-T", "fields", "-e", "frame.number", cut.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2));
        let e = stderr(&o);
        assert!(e.contains("cut2.pcapng: byte ") && e.contains("file ends in the middle of a record"), "{e}");
        assert_eq!(stdout(&o).lines().count(), whole, "frames before the cut");
        let off: u64 = e.split("byte ").nth(1).unwrap().split(':').next().unwrap().parse().unwrap();
        assert!(off < keep as u64);
        seen_offsets.push(off);
    }
    assert!(seen_offsets[0] > seen_offsets[1]);
    // check judges the frames before the cut, prints its summary of them, then the error.
    std::fs::write(&cut, &bytes[..bytes.len() - 10]).unwrap();
    let o = run(&["check", cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    let summary = e.find("RoCE packets checked").unwrap_or_else(|| panic!("no summary: {e}"));
    assert!(summary < e.find("file ends in the middle of a record").unwrap(), "summary first: {e}");
}

#[test]
fn unknown_field_is_a_usage_error() {
    let p = tmp("h.pcapng");
    write_capture(&p);
    let o = run(&["decode", "-T", "fields", "-e", "rocescope.nope", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown field 'rocescope.nope'"));
}

#[test]
fn version_and_field_list() {
    let o = run(&["--version"]);
    assert!(o.status.success());
    assert!(stdout(&o).starts_with("rocescope "));
    // INTERFACES.md: every subcommand takes --version.
    for sub in ["decode", "check", "fields", "dissector", "synth"] {
        let s = run(&[sub, "--version"]);
        assert!(s.status.success(), "{sub} --version: {}", stderr(&s));
        assert_eq!(stdout(&s), stdout(&o).replace("rocescope ", &format!("rocescope-{sub} ")), "{sub} --version");
    }
    let o = run(&["fields"]);
    let out = stdout(&o);
    for f in rocescope_codec::FIELDS {
        assert!(out.lines().any(|l| l.starts_with(&format!("{}\t", f.name))), "{}", f.name);
    }
}

/// `tcpdump -s 128` and ibdump write classic pcap files whose records are cut by the snaplen:
/// every cut frame decodes as far as it goes and is flagged, the file is not rejected.
#[test]
fn snaplen_cut_classic_pcap_decodes_with_truncated_frames() {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let p = tmp("snaplen.pcap");
    let header = PcapHeader { snaplen: 128, ..Default::default() };
    let mut w = PcapWriter::with_header(std::fs::File::create(&p).unwrap(), header).unwrap();
    let frames = sample_frames();
    for (i, (f, _)) in frames.iter().enumerate() {
        let cut = &f[..f.len().min(128)];
        w.write_packet(&PcapPacket::new(std::time::Duration::from_micros(i as u64), f.len() as u32, cut)).unwrap();
    }
    drop(w);
    let o = run(&["decode", "--profile", "std", "-T", "fields", "-e", "frame.len", "-e", "frame.cap_len", "-e", "rocescope.truncated", "-e", "rocescope.bth.psn", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), frames.len());
    // Frame 1 (a 174-byte WRITE First) is cut to 128 bytes: truncated, BTH still decoded.
    assert_eq!(lines[0], "174\t128\t1\t7");
    let c = run(&["check", "--profile", "std", p.to_str().unwrap()]);
    assert_ne!(c.status.code(), Some(2), "{}", stderr(&c));
}

/// `rocescope … | head`: when the reader of standard output goes away, the run ends quietly
/// with exit 0, as a filter's does (no error line, no panic).
#[test]
fn a_closed_output_pipe_ends_the_run_quietly() {
    use std::io::Read;
    let path = tmp("pipe.pcapng");
    write_capture(&path);
    let runs: [&[&str]; 2] = [
        &["synth", "--stack", "gbn", "--messages", "3000", "-o", "-"],
        &["decode", "--format", "json", path.to_str().unwrap(), path.to_str().unwrap()],
    ];
    for args in runs {
        // Decode reads one file; repeat it through standard input to make the output long.
        let mut child = if args[0] == "decode" {
            let data = std::fs::read(&path).unwrap();
            let mut c = bin().args(["decode", "--format", "json", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
            let mut stdin = c.stdin.take().unwrap();
            std::thread::spawn(move || {
                let mut big = data.clone();
                // A pcapng may hold many sections: append the whole file again and again.
                for _ in 0..2000 {
                    big.extend_from_slice(&data);
                }
                let _ = stdin.write_all(&big);
            });
            c
        } else {
            bin().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
        };
        let mut first = [0u8; 10];
        child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}: {}", args[0], stderr(&o));
        assert!(!stderr(&o).contains("rocescope:"), "{}: {}", args[0], stderr(&o));
    }
}

#[test]
fn bth_columns_read_directly_equal_the_walk() {
    // `-e` with only BTH fields reads them from the BTH's layout; with any other registry field
    // the frame's whole walk runs. Both must print the same BTH columns on every bundled capture
    // (every link type, truncated and non-RoCE frames included).
    let bth = ["rocescope.bth.opcode", "rocescope.bth.se", "rocescope.bth.m", "rocescope.bth.padcnt", "rocescope.bth.tver",
        "rocescope.bth.p_key", "rocescope.bth.fecn", "rocescope.bth.becn", "rocescope.bth.destqp", "rocescope.bth.a", "rocescope.bth.psn"];
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures");
    let mut rows = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if !p.extension().is_some_and(|x| x == "pcapng") {
            continue;
        }
        let mut args = vec!["decode", "-T", "fields"];
        for f in &bth {
            args.extend(["-e", f]);
        }
        let direct = stdout(&run(&[&args[..], &[p.to_str().unwrap()]].concat()));
        let walked = stdout(&run(&[&args[..], &["-e", "rocescope.profile", p.to_str().unwrap()]].concat()));
        let walked: Vec<String> = walked.lines().map(|l| l.rsplit_once('\t').unwrap().0.to_string()).collect();
        let direct: Vec<&str> = direct.lines().collect();
        assert_eq!(direct, walked, "{}", p.display());
        rows += direct.iter().filter(|l| !l.trim().is_empty()).count();
    }
    assert!(rows > 1000, "{rows} rows with BTH values compared");
}

#[test]
fn checksum_verdicts_asked_for_alone_are_verified() {
    // `fields` skips verification unless a column or the filter reads a verdict or the warnings;
    // asked for alone, each verdict is the one JSON (always verified) gives, bad ones included.
    let p = tmp("verdicts.pcapng");
    write_capture(&p);
    let ib = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/ib-native.pcapng");
    for (file, field) in [(p.to_str().unwrap(), "rocescope.icrc.status"), (ib, "rocescope.vcrc.status"), (p.to_str().unwrap(), "rocescope.warning")] {
        let alone = stdout(&run(&["decode", "-T", "fields", "-e", field, file]));
        let json: serde_json::Value = serde_json::from_str(&stdout(&run(&["decode", "-T", "json", file]))).unwrap();
        let want: Vec<String> = json
            .as_array()
            .unwrap()
            .iter()
            .map(|f| match &f[field] {
                serde_json::Value::Null => String::new(),
                serde_json::Value::Array(a) => a.iter().map(|v| v.as_str().unwrap()).collect::<Vec<_>>().join(","),
                v => v.as_str().unwrap().to_string(),
            })
            .collect();
        assert_eq!(alone.lines().collect::<Vec<_>>(), want, "{file} {field}");
        assert!(want.iter().any(|v| !v.is_empty()), "{file} {field}: some value compared");
    }
    // A filter on a verdict sees it verified: the corrupted frame is kept.
    let bad = stdout(&run(&["decode", "-T", "fields", "-e", "frame.number", "-Y", "rocescope.icrc.status == \"bad\"", p.to_str().unwrap()]));
    let json: serde_json::Value = serde_json::from_str(&stdout(&run(&["decode", "-T", "json", p.to_str().unwrap()]))).unwrap();
    let want: Vec<String> = json
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rocescope.icrc.status"] == "bad")
        .map(|f| f["frame"].to_string())
        .collect();
    assert!(!want.is_empty());
    assert_eq!(bad.lines().collect::<Vec<_>>(), want);
}
