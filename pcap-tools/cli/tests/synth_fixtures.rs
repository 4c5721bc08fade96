//! The `fixtures/synth-*` captures and truths are what their documented command lines
//! (docs/truth.md, "Fixtures") write, byte for byte; each file is under 1 MB; running a command
//! twice gives the same bytes; the truth has the documented shape (it reads into the typed
//! `rocescope_sim::truth::Truth`, which denies unknown keys) and reads back to the same bytes.

use std::path::{Path, PathBuf};
use std::process::Command;

use rocescope_sim::truth::{Format, Role, TapName, Truth};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `rocescope synth … -o fixtures/X.pcapng --truth fixtures/X.truth.json` lines of the doc.
fn documented() -> Vec<Vec<String>> {
    let doc = std::fs::read_to_string(root().join("docs/truth.md")).unwrap();
    let cmds: Vec<Vec<String>> = doc
        .lines()
        .filter(|l| l.starts_with("rocescope synth ") && l.contains("-o fixtures/synth-"))
        .map(|l| l.split_whitespace().skip(1).map(str::to_string).collect())
        .collect();
    assert_eq!(cmds.len(), 11, "docs/truth.md lists the eleven fixtures");
    cmds
}

fn temp_dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rocescope-synth-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `args` with its `fixtures/…` outputs redirected to `dir`; returns (fixture, written)
/// path pairs.
fn regenerate(args: &[String], dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut pairs = Vec::new();
    let args: Vec<String> = args
        .iter()
        .map(|a| match a.strip_prefix("fixtures/") {
            Some(name) => {
                let out = dir.join(name);
                pairs.push((root().join(a), out.clone()));
                out.to_string_lossy().into_owned()
            }
            None => a.clone(),
        })
        .collect();
    let out = Command::new(BIN).args(&args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(pairs.len(), 2);
    pairs
}

#[test]
fn fixtures_are_what_their_command_lines_write() {
    let dir = temp_dir("fixtures");
    for cmd in documented() {
        for (fixture, fresh) in regenerate(&cmd, &dir) {
            let want = std::fs::read(&fixture).unwrap_or_else(|e| panic!("{}: {e}", fixture.display()));
            let got = std::fs::read(&fresh).unwrap();
            assert!(want.len() < 1 << 20, "{} is {} bytes (over 1 MB)", fixture.display(), want.len());
            assert!(
                want == got,
                "{} differs from what `rocescope {}` writes now: regenerate the fixtures (docs/truth.md) if the change is intended",
                fixture.display(),
                cmd.join(" ")
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn same_seed_same_bytes() {
    let dir = temp_dir("twice");
    let args = "synth --stack irn --incast 3 --paths 8 --spray --reorder 2000 --loss 0.03 --burst-loss 0.01,0.2 --queue-bytes 20000 --ecn-threshold 5000 --op mix";
    let run = |name: &str, seed: &str| {
        let (p, t) = (dir.join(format!("{name}.pcapng")), dir.join(format!("{name}.json")));
        let out = Command::new(BIN)
            .args(args.split_whitespace())
            .args(["--seed", seed, "-o"])
            .arg(&p)
            .arg("--truth")
            .arg(&t)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (std::fs::read(p).unwrap(), std::fs::read(t).unwrap())
    };
    let a = run("a", "77");
    let b = run("b", "77");
    let c = run("c", "78");
    assert!(a == b, "two runs with the same seed differ");
    assert!(a.0 != c.0, "another seed gives the same capture");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fixture truths, parsed into the typed structs: a key the structs do not know, a missing
/// key or a value outside a documented set fails here.
fn fixture_truths() -> Vec<(String, Vec<u8>, Truth)> {
    documented()
        .iter()
        .map(|cmd| {
            let path = root().join(cmd.iter().find(|a| a.ends_with(".truth.json")).unwrap());
            let name = path.display().to_string();
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            let t: Truth = serde_json::from_reader(&bytes[..]).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, bytes, t)
        })
        .collect()
}

#[test]
fn fixture_truths_read_back_through_the_typed_structs() {
    for (name, bytes, t) in fixture_truths() {
        // Written back in the file layout: the same bytes.
        let mut out = Vec::new();
        t.write(&mut out).unwrap();
        assert!(out == bytes, "{name}: parsed and written back, the truth differs");
        // The derived serialisation holds the same JSON value, and from_json reads the same.
        let want: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(serde_json::to_value(&t).unwrap(), want, "{name}");
        assert!(Truth::from_json(std::str::from_utf8(&bytes).unwrap()).unwrap() == t, "{name}");
    }
}

#[test]
fn fixture_truths_have_the_documented_shape_and_agree_with_the_captures() {
    for (cmd, (name, _, t)) in documented().iter().zip(fixture_truths()) {
        let pcap_path = root().join(cmd.iter().find(|a| a.ends_with(".pcapng")).unwrap());
        assert_eq!(t.format, Format::RocescopeSynthTruth);
        assert_eq!(t.version, 1);
        // The canonical command line and the configuration say how the fixture was made.
        let arg = |k: &str| cmd.iter().position(|a| a == k).map(|i| cmd[i + 1].as_str());
        let (stack, seed) = (arg("--stack").unwrap(), arg("--seed").unwrap());
        assert!(t.command.starts_with(&format!("rocescope synth --stack {stack} ")), "{name}: {}", t.command);
        assert!(t.command.contains(&format!(" --seed {seed} ")), "{name}: {}", t.command);
        assert_eq!(t.config.seed.to_string(), seed, "{name}");
        assert_eq!(serde_json::to_value(t.config.stack).unwrap(), stack, "{name}");
        assert_eq!(t.summary.delivered_once, t.summary.messages, "{name}");
        assert_eq!(t.summary.completed, t.summary.messages, "{name}");
        assert_eq!(t.connections.len() as u32, t.config.senders, "{name}");
        assert_eq!(t.taps.iter().map(|tap| tap.name).collect::<Vec<_>>(), t.config.taps, "{name}");
        // Every frame of the capture is described once, with its interface and timestamp.
        let mut rd = rocescope_analysis::capture::open(pcap_path.to_str().unwrap()).unwrap();
        let mut by_frame = std::collections::BTreeMap::new();
        for (i, tap) in t.taps.iter().enumerate() {
            assert_eq!(tap.interface as usize, i, "{name}");
            for f in &tap.frames {
                assert!(
                    by_frame.insert(f.frame, (tap.interface, f.time_ns)).is_none(),
                    "{name}: frame {} twice",
                    f.frame
                );
            }
            // Per connection, its requests flow then its responses flow.
            assert_eq!(tap.flows.len(), 2 * t.connections.len(), "{name}");
            for (k, flow) in tap.flows.iter().enumerate() {
                let role = if k % 2 == 0 { Role::Requests } else { Role::Responses };
                assert_eq!((flow.conn as usize, flow.role, flow.tap), (k / 2, role, tap.name), "{name}");
                assert_eq!(flow.id, format!("{}>{}/{}", flow.src, flow.dst, flow.destqp), "{name}");
                assert_eq!(flow.profile, t.config.profile, "{name}");
                // (An SDR connection's data frames are each in their own data QP's flow; a Flor
                // connection's ACKs in its ACK QP's, of the responses direction.)
                let sdr_data = stack.starts_with("sdr-") && role == Role::Requests;
                let flor_acks = stack == "flor" && role == Role::Responses;
                let pair = format!("{}>{}/", flow.src, flow.dst);
                let of_flow = |f: &&rocescope_sim::truth::Frame| {
                    f.flow == flow.id || ((sdr_data || flor_acks) && f.flow.starts_with(&pair))
                };
                assert_eq!(flow.frames, tap.frames.iter().filter(of_flow).count() as u64, "{name}");
                if role == Role::Responses {
                    assert!(flow.messages.is_empty(), "{name}: a responses flow with messages");
                }
            }
        }
        // (Except NetRT's switch messages, which the truth leaves out like PFC frames: RoCEv2
        // packets of opcode 0xC0, WIRE.md B.4.)
        let (mut n, mut switch) = (0, 0);
        while let Some(rec) = rd.next_record().unwrap() {
            let Some((iface, ts)) = by_frame.get(&rec.number) else {
                let opts = rocescope_codec::DecodeOptions { verify: false, ..Default::default() };
                let f =
                    rocescope_codec::Frame::parse(rocescope_codec::LinkType::Ethernet, rec.data, rec.data.len(), &opts);
                let op = f.roce().map(|p| p.opcode().0);
                assert!(stack == "netrt" && op == Some(0xC0), "{name}: frame {} not in the truth", rec.number);
                switch += 1;
                continue;
            };
            n += 1;
            assert_eq!(*iface, rec.interface, "{name}: frame {}", rec.number);
            assert_eq!(ts.0, rec.ts_ns, "{name}: frame {}", rec.number);
        }
        assert_eq!(n, by_frame.len(), "{name}");
        assert_eq!(switch > 0, stack == "netrt", "{name}: {switch} NetRT messages");
        // The sender sees each message complete when the simulator's requester does; ERD's
        // sender is told nothing (it completes after a quiet time): only the receiver's tap sees
        // a message complete, when the simulator's receiver delivered it.
        let sim: Vec<_> = t.sim.messages.iter().filter(|m| m.conn == 0).collect();
        let erd = stack == "erd";
        let at = |n: TapName| &t.taps.iter().find(|x| x.name == n).unwrap().flows[0];
        let (sender, receiver) = (at(TapName::Sender), at(TapName::Receiver));
        assert_eq!(sender.messages.len(), sim.len(), "{name}");
        for ((m, r), s) in sender.messages.iter().zip(&receiver.messages).zip(sim) {
            let sent = if erd { None } else { s.completed_ns };
            assert_eq!(m.complete_time_ns, sent, "{name}: message {} at the sender's tap", m.index);
            if erd {
                assert_eq!(r.complete_time_ns, s.delivered_ns, "{name}: message {} at the receiver's tap", m.index);
            }
        }
    }
}
