//! `auto` detection looks ahead (issue 11, acceptance 1; WIRE.md B "Detection may look ahead",
//! docs/profiles.md): on every bundled capture and on synthesized DCP captures, no packet is
//! printed under a profile other than the one its flow ends with, and every DCP data packet's
//! RETH reads as `--profile dcp` (no detection: the layout is imposed) reads it. The same holds
//! on standard input, where detection holds frames back instead of reading the file twice, and
//! the analysers (which read that way too) see the same profiles.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Per frame: (flow = src, dst, DestQP; profile; RETH VA; RETH DMA length), from
/// `decode --format fields`, reading the file or (with `stdin`) a pipe.
fn rows(capture: &Path, profile: &str, stdin: bool) -> Vec<(String, String, String, String)> {
    let fields = ["ip.src", "ip.dst", "rocescope.bth.destqp", "rocescope.profile", "rocescope.reth.va", "rocescope.reth.dmalen"];
    let mut cmd = Command::new(BIN);
    cmd.args(["decode", "--format", "fields", "--profile", profile]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = if stdin {
        cmd.arg("-").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let bytes = std::fs::read(capture).unwrap();
        let mut input = child.stdin.take().unwrap();
        let feeder = std::thread::spawn(move || input.write_all(&bytes));
        let out = child.wait_with_output().unwrap();
        feeder.join().unwrap().unwrap();
        out
    } else {
        cmd.arg(capture).output().unwrap()
    };
    assert!(out.status.success(), "decode {}: {}", capture.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (format!("{}>{}/{}", c[0], c[1], c[2]), c[3].to_string(), c[4].to_string(), c[5].to_string())
        })
        .collect()
}

/// Checks one capture; returns the number of DCP packets seen.
fn check(capture: &Path) -> usize {
    let auto = rows(capture, "auto", false);
    let last: HashMap<&str, &str> = auto.iter().filter(|r| !r.1.is_empty()).map(|r| (r.0.as_str(), r.1.as_str())).collect();
    // A profile applies to the opcodes its transport defines (a CNP in a DCP flow stays std, as
    // under --profile dcp): a packet may print std in a flow that ends X only if --profile X
    // prints it std too.
    let mut fixed: HashMap<String, Vec<(String, String, String, String)>> = HashMap::new();
    for (i, r) in auto.iter().enumerate() {
        let end = last.get(r.0.as_str()).copied().unwrap_or("");
        if r.1.is_empty() || r.1 == end {
            continue;
        }
        let under = fixed.entry(end.to_string()).or_insert_with(|| rows(capture, end, false));
        assert!(
            r.1 == "std" && under[i].1 == "std",
            "{}: frame {} of flow {} printed as {} but the flow ends {} (--profile {end} prints {})",
            capture.display(),
            i + 1,
            r.0,
            r.1,
            end,
            under[i].1
        );
    }
    let dcp = rows(capture, "dcp", false);
    assert_eq!(dcp.len(), auto.len());
    let mut n = 0;
    for (i, (a, d)) in auto.iter().zip(&dcp).enumerate() {
        if a.1 == "dcp" {
            n += 1;
            assert_eq!((&a.2, &a.3), (&d.2, &d.3), "{}: frame {}: RETH (va, dmalen) under auto differs from --profile dcp", capture.display(), i + 1);
        }
    }
    // Standard input: the held-back frames give the same profiles and fields, but for NetRT's
    // data packets before the flow's first NetRT message: they carry nothing of NetRT, so no
    // frame is held for them, and they print as `std` (docs/profiles.md).
    let piped = rows(capture, "auto", true);
    assert_eq!(piped.len(), auto.len(), "{}", capture.display());
    for (i, (p, f)) in piped.iter().zip(&auto).enumerate() {
        let netrt_early = p.1 == "std" && f.1 == "netrt" && (&p.0, &p.2, &p.3) == (&f.0, &f.2, &f.3);
        let at = format!("{}: frame {}", capture.display(), i + 1);
        assert!(p == f || netrt_early, "{at}: decode - (a pipe) {p:?}, decode FILE {f:?}");
    }
    n
}

#[test]
fn every_bundled_capture_prints_each_packet_under_its_flows_final_profile() {
    let mut dcp = 0;
    for e in std::fs::read_dir(repo().join("fixtures")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "pcapng" || x == "pcap") {
            dcp += check(&p);
        }
    }
    assert!(dcp > 100, "the fixtures hold DCP traffic ({dcp} packets)");
}

#[test]
fn synthesized_dcp_captures_decode_as_dcp_from_their_first_packet() {
    let dir = std::env::temp_dir().join(format!("rocescope-lookahead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, args) in [
        ("write", "--stack dcp --loss 0.02 --seed 3"),
        ("send", "--stack dcp --op send --loss 0.02 --seed 4 --incast 3"),
        ("mix", "--stack dcp --op mix --spray --paths 4 --loss 0.01 --seed 5 --incast 4 --message-size 16384"),
    ] {
        let pcap = dir.join(format!("{name}.pcapng"));
        let out = Command::new(BIN).arg("synth").args(args.split_whitespace()).arg("-o").arg(&pcap).output().unwrap();
        assert!(out.status.success(), "synth {args}: {}", String::from_utf8_lossy(&out.stderr));
        let auto = rows(&pcap, "auto", false);
        // Every RoCE request packet of the data QPs is DCP, the first one of each flow included
        // (the stack marks its data with the DCP tag; only the responder's ACKs are untagged).
        let first_data = auto.iter().find(|r| r.1 == "dcp" || r.3 != "").unwrap();
        assert_eq!(first_data.1, "dcp", "{name}: the first data packet is decoded as {}", first_data.1);
        assert!(check(&pcap) > 0, "{name}: no DCP packet");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_analysers_see_the_first_dcp_packet_as_dcp() {
    // synth-dcp-clean's first frame is a DCP WRITE First: decoded std (as before look-ahead) its
    // RETH is read 4 bytes off and it starts a message of its own; the sender tap's flow then
    // showed 9 messages for the 8 the truth has.
    let cap = repo().join("fixtures/synth-dcp-clean.pcapng");
    let out = Command::new(BIN).args(["flows", "-T", "csv"]).arg(&cap).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}"));
    let truth = std::fs::read_to_string(repo().join("fixtures/synth-dcp-clean.truth.json")).unwrap();
    let messages = truth.matches("\"msg\"").count().max(truth.matches("\"message\"").count());
    for l in lines {
        let c: Vec<&str> = l.split(',').collect();
        if c[col("id")].starts_with("10.0.0.1>10.0.1.1/512") && c[col("interface")] == "0" {
            assert_eq!(c[col("messages")], "8", "sender tap: {l} (truth mentions {messages})");
        }
    }
}
