//! tshark's habits on `decode` and `check` (docs/cli.md): `-r FILE`, `-e` implying the fields
//! format, `-E header/separator/quote/occurrence/aggregator`, `-t r|a|ad|d|dd|e`, the
//! `frame.time_*` columns, `-Y` on fields present several times and its errors, `-V` refused
//! with JSON, `check -c N` and `check -Y`.
//!
//! The expected values are tshark 4.0.17's on the same fixture (`tshark -r FILE -t …`, `-T fields
//! -e infiniband.bth.psn -e ip.addr -e udp.port -e macc.cbfc.pause_time.c0 …`, with TZ=UTC for the
//! absolute times), written here by hand; `fixtures/std-mix.pcapng` has one frame per
//! microsecond from 1700000000 s (2023-11-14 22:13:20 UTC), frame 304 is a PFC frame with quanta
//! 65535, 4369, 8738, 13107, 17476, 21845, 26214, 30583 and frame 305 a PAUSE of 48879.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures").join(name)
}

fn std_mix() -> String {
    fixture("std-mix.pcapng").to_string_lossy().into_owned()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope")
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}\n{}", o.status, String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// A usage error: exit 2 and the message on standard error.
fn usage(args: &[&str]) -> String {
    let o = run(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&o.stdout));
    assert!(o.stdout.is_empty() || !args.contains(&"-Y"), "{args:?} printed frames");
    String::from_utf8(o.stderr).unwrap()
}

#[test]
fn r_names_the_capture_and_e_implies_the_fields_format() {
    let f = std_mix();
    assert_eq!(ok(&["decode", "-r", &f, "-c", "3", "-e", "frame.number", "-e", "rocescope.bth.psn"]), "1\t16777215\n2\t16773136\n3\t16777213\n");
    assert_eq!(ok(&["decode", &f, "-c", "2", "-e", "rocescope.bth.destqp"]), format!("{}\n{}\n", 0xa50000, 0xa50123));
    assert!(usage(&["decode", &f, "-r", &f]).contains("either FILE or -r FILE"));
    assert!(usage(&["decode", "-e", "frame.number"]).contains("no capture given"));
    let o = run(&["check", "-r", &f, "-c", "10"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("10 RoCE packets checked: 0 bad"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn e_layout_options_as_tshark() {
    let f = std_mix();
    let base = ["decode", f.as_str(), "-c", "3", "-e", "frame.number", "-e", "ip.addr", "-e", "udp.port"];
    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        for e in extra {
            a.extend(["-E", e]);
        }
        ok(&a)
    };
    assert_eq!(
        with(&["header=y"]),
        "frame.number\tip.addr\tudp.port\n\
         1\t192.168.77.10,192.168.77.20\t49152,4791\n\
         2\t\t49211,4791\n\
         3\t192.168.77.10,192.168.77.20\t49270,4791\n"
    );
    assert_eq!(
        with(&["separator=/s", "quote=d"]),
        "\"1\" \"192.168.77.10,192.168.77.20\" \"49152,4791\"\n\"2\"  \"49211,4791\"\n\"3\" \"192.168.77.10,192.168.77.20\" \"49270,4791\"\n"
    );
    assert_eq!(with(&["separator=;", "quote=s", "header=y", "occurrence=f"]), "frame.number;ip.addr;udp.port\n'1';'192.168.77.10';'49152'\n'2';;'49211'\n'3';'192.168.77.10';'49270'\n");
    assert_eq!(with(&["occurrence=l", "quote=n"]), "1\t192.168.77.20\t4791\n2\t\t4791\n3\t192.168.77.20\t4791\n");
    assert_eq!(with(&["aggregator=/s", "separator=|"]), "1|192.168.77.10 192.168.77.20|49152 4791\n2||49211 4791\n3|192.168.77.10 192.168.77.20|49270 4791\n");
    assert!(usage(&["decode", &f, "-e", "frame.number", "-E", "quote=x"]).contains("quote is d, s or n"));
    assert!(usage(&["decode", &f, "-E", "header=y"]).contains("-E sets the layout of --format fields"));
}

#[test]
fn t_sets_the_summary_time_relative_by_default() {
    let f = std_mix();
    let second_line = |args: &[&str]| {
        let mut a = vec!["decode", f.as_str(), "-c", "2"];
        a.extend(args);
        ok(&a).lines().nth(1).unwrap().to_string()
    };
    let time_of = |line: &str| line.split_whitespace().nth(1).unwrap().to_string();
    assert_eq!(time_of(&second_line(&[])), "0.000001000");
    assert_eq!(time_of(&second_line(&["-t", "r"])), "0.000001000");
    assert_eq!(time_of(&second_line(&["-t", "e"])), "1700000000.000001000");
    assert_eq!(time_of(&second_line(&["-t", "a"])), "22:13:20.000001000");
    assert!(second_line(&["-t", "ad"]).contains(" 2023-11-14 22:13:20.000001000 "));
    assert!(second_line(&["-t", "ud"]).contains(" 2023-11-14 22:13:20.000001000 "));
    assert_eq!(time_of(&second_line(&["-t", "d"])), "0.000001000");
    // Two taps interleaved: tshark -t d shows 8 ns before frame 10 of synth-gbn-loss.
    let gbn = fixture("synth-gbn-loss.pcapng").to_string_lossy().into_owned();
    let tenth = ok(&["decode", &gbn, "-c", "10", "-t", "d"]).lines().nth(9).unwrap().to_string();
    assert_eq!(time_of(&tenth), "0.000000008");
    // dd: since the previous frame printed.
    let out = ok(&["decode", &f, "-Y", "frame.number in {1, 4, 10}", "-t", "dd"]);
    let times: Vec<String> = out.lines().map(time_of).collect();
    assert_eq!(times, ["0.000000000", "0.000003000", "0.000006000"]);
    assert!(usage(&["decode", &f, "-t", "x"]).contains("unknown time format"));
}

#[test]
fn time_columns_and_json_keys() {
    let f = std_mix();
    // tshark -Y 'frame.number > 1 && frame.number != 3' -c 3 prints frame 2 with
    // time_relative 0.000001000, time_delta 0.000001000, time_delta_displayed 0.000000000.
    assert_eq!(
        ok(&[
            "decode", &f, "-c", "4", "-Y", "frame.number > 1 && frame.number != 3", "-e", "frame.number", "-e",
            "frame.time_relative", "-e", "frame.time_delta", "-e", "frame.time_delta_displayed", "-e", "frame.time_epoch"
        ]),
        "2\t0.000001000\t0.000001000\t0.000000000\t1700000000.000001000\n\
         4\t0.000003000\t0.000001000\t0.000002000\t1700000000.000003000\n"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(&["decode", &f, "-T", "json", "-c", "3"])).unwrap();
    assert_eq!(json[2]["time_relative"], "0.000002000");
    assert_eq!(json[2]["time_delta"], "0.000001000");
    assert_eq!(json[0]["time_delta"], "0.000000000");
}

#[test]
fn filters_on_a_field_present_several_times() {
    let f = std_mix();
    let frames = |filter: &str| ok(&["decode", &f, "-Y", filter, "-e", "frame.number"]);
    assert_eq!(frames("rocescope.pfc.quanta == 4369"), "304\n");
    assert_eq!(frames("rocescope.pfc.quanta > 60000"), "304\n");
    // != : every occurrence differs (frame 304 has one 4369; absent elsewhere).
    assert_eq!(frames("rocescope.pfc.quanta != 4369"), "305\n");
    assert_eq!(frames("rocescope.pfc.quanta ~= 4369"), "304\n305\n");
    assert_eq!(frames("rocescope.pfc.quanta === 48879"), "305\n");
    assert_eq!(frames("rocescope.pfc.quanta all_eq 4369"), "");
    assert_eq!(frames("rocescope.pfc.quanta in {1..4369}"), "304\n");
    assert_eq!(frames("!rocescope.pfc.quanta").lines().count(), 303);
    // An empty filter keeps all 305 frames, as tshark -Y ''.
    assert_eq!(frames(" ").lines().count(), 305);
    assert_eq!(frames("rocescope.pfc && frame.number == 305"), "305\n");
    assert_eq!(frames("ip.addr != 192.168.77.10 && frame.number <= 3"), "");
    assert_eq!(frames("ipv6.addr == fd00:5ce0::14 && frame.number <= 3"), "2\n");
    assert_eq!(frames("udp.port === 4791"), "");
    assert_eq!(frames("rocescope.opcode_name == \"RC SEND First\" && frame.number <= 4"), "1\n2\n3\n4\n");
    // Opcode 0x12 (frame 67, tshark's "RC Atomic Acknowledge") is IBTA's "ATOMIC Acknowledge";
    // 0x13 and 0x14 (frames 68, 69) are "CmpSwap" and "FetchAdd".
    assert_eq!(frames("rocescope.opcode_name contains \"ATOMIC\" && frame.number < 70"), "67\n");
    // -Y on check: only the frames kept are judged.
    let o = run(&["check", &f, "-Y", "frame.number in {1..5}"]);
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("5 RoCE packets checked"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn bad_filters_are_usage_errors_pointing_at_the_culprit() {
    let f = std_mix();
    let e = usage(&["decode", &f, "-Y", "rocescope.bth.psn = 1"]);
    assert_eq!(e, "rocescope: -Y: \"=\" was unexpected in this context.\n    rocescope.bth.psn = 1\n                      ^\n");
    let e = usage(&["decode", &f, "-Y", "rocescope.bth.psx == 1"]);
    assert!(e.contains("Left side of \"==\" expression must be a field or function, not rocescope.bth.psx."), "{e}");
    assert!(e.ends_with("    ^~~~~~~~~~~~~~~~~\n"), "{e}");
    assert!(usage(&["decode", &f, "-Y", "frame.number == 1 &&"]).contains("Unexpected end of filter expression."));
    assert!(usage(&["decode", &f, "-Y", "rocescope.bth.psn == 0x1000000"]).contains("too big for this field, maximum 16777215"));
    assert!(usage(&["decode", &f, "-Y", "ip.src == fd00::a"]).contains("not a valid hostname or IPv4 address"));
    assert!(usage(&["decode", &f, "-Y", "frame.number == frame.len"]).contains("Comparing two fields"));
    assert!(usage(&["check", &f, "-Y", "(udp"]).contains("Unexpected end"));
    assert!(usage(&["decode", &f, "-Y", "udp.port contains 1"]).contains("udp.port (type=Unsigned integer) cannot participate in contains comparison."));
    assert!(usage(&["decode", &f, "-V", "--format", "json"]).contains("-V prints every field under the text summary"));
}
