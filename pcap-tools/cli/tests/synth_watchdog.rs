//! `rocescope synth` ends a run that cannot finish with a report instead of growing without
//! bound: the no-progress watchdog (default 100 × --rto) stops it, the time limit cuts it, and
//! either way the unfinished messages are named on standard error and the exit status is 1.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

fn synth(args: &str) -> (Output, rocescope_sim::truth::Truth) {
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("rocescope-watchdog-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(BIN)
        .arg("synth")
        .args(args.split_whitespace())
        .arg("-o")
        .arg(dir.join("x.pcapng"))
        .arg("--truth")
        .arg(dir.join("x.json"))
        .output()
        .unwrap();
    let truth = std::fs::read_to_string(dir.join("x.json")).unwrap();
    let t = rocescope_sim::truth::Truth::from_json(&truth).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (out, t)
}

#[test]
fn total_loss_stops_at_the_watchdog_and_names_every_unfinished_message() {
    for stack in ["irn", "dcp"] {
        let (out, t) = synth(&format!("--stack {stack} --loss 1 --messages 3 --rto 100000"));
        assert!(t.summary.watchdog && !t.summary.timed_out && t.summary.completed == 0);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stack}: {err}");
        // 100 × the 100 µs RTO without progress, from time 0.
        assert!(err.contains("0/3 messages completed (stopped by the watchdog)"), "{stack}: {err}");
        assert!(err.contains("no progress for 10000000 ns (--watchdog) at 10000.0 µs simulated"), "{stack}: {err}");
        for m in 0..3 {
            let line = format!("connection 0 message {m} (write of 4096 bytes): 0/4 packets accepted by the receiver");
            assert!(err.contains(&line), "{stack}: no line for message {m}: {err}");
        }
    }
}

#[test]
fn the_watchdog_flag_sets_the_stretch_and_zero_leaves_the_time_limit() {
    let (out, _) = synth("--stack irn --loss 1 --messages 1 --watchdog 2000000");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("at 2000.0 µs simulated"), "{err}");
    let (out, t) = synth("--stack irn --loss 1 --messages 1 --watchdog 0 --time-limit 3000000");
    assert!(t.summary.timed_out && !t.summary.watchdog);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the time limit (--time-limit 3000000 ns) cut the run; 1 messages unfinished"), "{err}");
    assert!(err.contains("connection 0 message 0 (write of 4096 bytes)"), "{err}");
}

#[test]
fn a_run_that_finishes_exits_zero_and_reports_nothing_unfinished() {
    let (out, t) = synth("--stack irn --loss 0.05 --messages 4");
    assert_eq!(t.summary.completed, 4);
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("unfinished"));
}
