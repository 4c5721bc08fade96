//! The three front ends against the codec's parameter table (`rocescope_codec::params::PARAMS`,
//! `codec/src/params/table.rs`):
//!
//! - the command line: every entry is a flag of `decode` and `check` (`synth`: the DCP tag shift
//!   and Flor's unit size only) with the entry's value name, help text, default and enumeration values, and a bad
//!   value is exit 2 with the entry's message (the built `rocescope` binary is run, as in
//!   `cli_parity.rs`);
//! - the browser: the options' keys are the table's names, read with the entries' setters (the
//!   same message); `params_table()` is the table; the page (`wasm/www/index.html`, `app.js`)
//!   spells no parameter: app.js builds the controls from `params_table()`;
//! - the Wireshark plugin (`dissector/rocescope.lua`, checked against its generator by
//!   `pcap-tools/cli/tests/lua_dissector.rs`): every entry is a preference with the entry's
//!   title, default, help text and enumeration values, and a `PARAM_DEFS` entry with its kind,
//!   range and default.

use std::process::Command;

use rocescope_codec::params::{ParamDef, ParamKind, PARAMS};
use rocescope_codec::Params;
use serde_json::Value;

mod common;
use common::{bin, root};


fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}


fn rocescope(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(bin()).args(args).output().expect("run rocescope");
    (o.status.code().unwrap_or(-1), String::from_utf8(o.stdout).unwrap(), String::from_utf8(o.stderr).unwrap())
}

/// A text every setter rejects.
const BAD: &str = "0,1";

#[test]
fn the_command_line_is_the_table() {
    for (sub, names) in [("decode", &Params::NAMES[..]), ("check", &Params::NAMES[..]), ("synth", &["dcp_tag_shift", "flor_unit_size"][..])] {
        let (code, help, _) = rocescope(&[sub, "--help"]);
        assert_eq!(code, 0);
        for d in PARAMS {
            let spec = format!("{} <{}>", d.flag, d.value_name);
            let Some(at) = help.find(&spec) else {
                assert!(!names.contains(&d.name), "rocescope {sub} --help has no {spec}:\n{help}");
                assert!(!help.contains(&format!("{} ", d.flag)), "rocescope {sub} takes {}", d.flag);
                continue;
            };
            assert!(names.contains(&d.name), "rocescope {sub} takes {}", d.flag);
            // The flag's help: on its line, or on the next (clap's long layout).
            let mut lines = help[at + spec.len()..].lines().map(str::trim);
            let first = lines.next().unwrap_or("");
            let text = if first.is_empty() { lines.next().unwrap_or("") } else { first };
            assert!(text.contains(&d.help_text()), "{sub} {}: {text}", d.flag);
            if !d.default.is_empty() {
                assert!(text.contains(&format!("[default: {}]", d.default)), "{sub} {}: {text}", d.flag);
            } else {
                assert!(!text.split(d.help).nth(1).unwrap_or("").contains("[default:"), "{sub} {}: {text}", d.flag);
            }
            if let ParamKind::Enum { values } = d.kind {
                assert!(text.contains(&format!("[possible values: {}]", values.join(", "))), "{sub} {}: {text}", d.flag);
            }
        }
    }
    let fixture = root().join("fixtures").join("std-mix.pcapng");
    for d in PARAMS {
        let (code, _, err) = rocescope(&["decode", d.flag, BAD, fixture.to_str().unwrap()]);
        assert_eq!(code, 2, "{} {BAD}", d.flag);
        assert!(err.contains(&d.parse(BAD).unwrap_err()), "{} {BAD}: {err}", d.flag);
    }
}

#[test]
fn the_browser_is_the_table() {
    let params: Vec<&str> = rocescope_wasm::options::keys().filter(|k| !rocescope_wasm::options::OTHER_KEYS.contains(k)).collect();
    assert_eq!(params, Params::NAMES);
    for d in PARAMS {
        let e = rocescope_wasm::options::parse(&serde_json::json!({ (d.name): BAD }).to_string()).unwrap_err();
        assert_eq!(e, format!("{}: {}", d.name, d.parse(BAD).unwrap_err()));
    }
    let table: Value = serde_json::from_str(&rocescope_wasm::params_table()).unwrap();
    let table = table.as_array().unwrap();
    assert_eq!(table.len(), PARAMS.len());
    for (j, d) in table.iter().zip(PARAMS) {
        assert_eq!(j["name"], d.name);
        assert_eq!(j["flag"], d.flag);
        assert_eq!(j["title"], d.title);
        assert_eq!(j["help"], d.help_text());
        assert_eq!(j["kind"], d.kind.name());
        assert_eq!(j["default"], d.default);
        assert_eq!(j["optional"], d.optional());
        assert_eq!(j["values"], serde_json::json!(d.values()));
        match d.kind {
            ParamKind::Uint { max, .. } => assert_eq!(j["max"], max.to_string()),
            _ => assert_eq!(j["max"], Value::Null),
        }
    }
    // The page's controls come from params_table(); neither file spells a parameter.
    let (html, js) = (read("wasm/www/index.html"), read("wasm/www/app.js"));
    assert!(js.contains("buildParams(JSON.parse(params_table()))"));
    assert!(html.contains(r#"<form id="params" hidden>"#));
    for d in PARAMS {
        assert!(!html.contains(d.name), "index.html spells {}", d.name);
        assert!(!js.contains(&format!("'{}'", d.name)), "app.js spells {}", d.name);
        if d.default.len() > 1 && d.values().is_empty() {
            assert!(!html.contains(d.default) && !js.contains(d.default), "the page spells the default of {}", d.name);
        }
    }
}

/// A Lua string literal of a text without quotes, backslashes or control characters.
fn lua_str(s: &str) -> String {
    assert!(!s.contains(['"', '\\', '\n']), "{s}");
    format!("\"{s}\"")
}

#[test]
fn the_wireshark_plugin_is_the_table() {
    let lua = read("dissector/rocescope.lua");
    let generated = &lua[..lua.find("-- ==== end of the generated part").unwrap()];
    let template = &lua[generated.len()..];
    for d in PARAMS {
        let desc = lua_str(&format!("{} ({})", d.help_text(), d.flag));
        let (pref, def) = match d.kind {
            ParamKind::Enum { values } => {
                let choices: Vec<String> =
                    values.iter().enumerate().map(|(i, v)| format!("{{{0}, {1}, {0}}}", i + 1, lua_str(v))).collect();
                let default = values.iter().position(|v| *v == d.default).unwrap() + 1;
                (
                    format!("proto.prefs.{} = Pref.enum({}, {default}, {desc},\n        {{{}}}, false)", d.name, lua_str(d.title), choices.join(", ")),
                    format!("{{name = {}, kind = \"enum\", values = {{{}}}, default = {}}}", lua_str(d.name), values.iter().map(|v| lua_str(v)).collect::<Vec<_>>().join(", "), lua_str(d.default)),
                )
            }
            kind => {
                let how = match kind {
                    ParamKind::Uint { bits, max, optional } => format!("kind = \"uint\", bits = {bits}, max = \"{max}\", optional = {optional}"),
                    _ => "kind = \"split\"".into(),
                };
                (
                    format!("proto.prefs.{} = Pref.string({}, {}, {desc})", d.name, lua_str(d.title), lua_str(d.default)),
                    format!("{{name = {}, {how}, default = {}}}", lua_str(d.name), lua_str(d.default)),
                )
            }
        };
        assert_eq!(generated.matches(&pref).count(), 1, "rocescope.lua: no\n{pref}");
        assert_eq!(generated.matches(&def).count(), 1, "rocescope.lua: no\n{def}");
        assert!(!template.contains(&format!("proto.prefs.{} =", d.name)), "template.lua declares {}", d.name);
    }
    // The parameters' preferences, plus the profile (a checked text) and the checksum switch.
    assert_eq!(generated.matches("    proto.prefs.").count(), PARAMS.len() + 2, "a preference the table lacks");
    assert_eq!(generated.matches("    proto.prefs.profile = Pref.string(").count(), 1);
    assert_eq!(generated.matches("    proto.prefs.verify_checksums = Pref.bool(").count(), 1);
    // Every preference is read through PARAM_DEFS.
    assert!(template.contains("for _, def in ipairs(PARAM_DEFS) do"));
    assert!(ParamDef::find("dcp_tag_shift").is_some());
}
