//! The crates' arrows (docs/ARCHITECTURE.md), checked with `cargo tree`: the browser build and
//! the analysis library pull in no command-line or terminal code and no simulator, replay no
//! command-line code and only the stacks of the simulation; the codec
//! depends on no other rocescope crate; the stacks know nothing of files or the simulator.

use std::collections::BTreeSet;
use std::process::Command;

/// The packages `package` depends on at run time (normal edges, the whole tree).
fn normal_deps(package: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "--offline", "-e", "normal", "--prefix", "none", "--format", "{p}", "-p", package])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(out.status.success(), "cargo tree -p {package}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|name| name != package)
        .collect()
}

fn assert_none_of(package: &str, forbidden: &[&str]) {
    let deps = normal_deps(package);
    assert!(deps.len() > 1, "{package}: {deps:?}");
    let found: Vec<&&str> = forbidden.iter().filter(|f| deps.contains(**f)).collect();
    assert!(found.is_empty(), "{package} depends on {found:?}; its dependencies: {deps:?}");
}

const CLI_AND_TERMINAL: &[&str] = &["clap", "indicatif", "rocescope"];
const SIMULATION: &[&str] = &["rocescope-sim", "rocescope-stacks"];

#[test]
fn the_browser_build_has_no_cli_terminal_or_simulator() {
    assert_none_of(
        "rocescope-wasm",
        &[CLI_AND_TERMINAL, SIMULATION, &["rocescope-testsupport", "rocescope-wirecheck"]].concat(),
    );
}

#[test]
fn the_analysis_library_has_no_cli_terminal_or_simulator() {
    assert_none_of("rocescope-analysis", &[CLI_AND_TERMINAL, SIMULATION].concat());
}

#[test]
fn replay_has_no_cli_terminal_or_simulator() {
    // (It judges with the reference stacks, as the simulator runs them: the stacks, not the
    // simulator.)
    assert_none_of("rocescope-replay", &[CLI_AND_TERMINAL, &["rocescope-sim"]].concat());
}

#[test]
fn the_plugin_generator_needs_no_replay_cli_or_simulator() {
    // (It reads the analysis and replay fields' tables from the analysis library.)
    assert_none_of("rocescope-dissector", &[CLI_AND_TERMINAL, SIMULATION, &["rocescope-replay"]].concat());
}

#[test]
fn the_codec_depends_on_no_other_rocescope_crate() {
    assert_none_of(
        "rocescope-codec",
        &[CLI_AND_TERMINAL, SIMULATION, &["rocescope-analysis", "rocescope-dissector", "pcap-file", "serde_json"]].concat(),
    );
}

#[test]
fn the_stacks_know_nothing_of_files_terminals_or_the_simulator() {
    // (The stacks' tests use the wire checks, which know the simulator: a dev-dependency only.)
    assert_none_of(
        "rocescope-stacks",
        &[CLI_AND_TERMINAL, &["rocescope-sim", "rocescope-analysis", "pcap-file", "rocescope-wirecheck"]].concat(),
    );
}

#[test]
fn the_simulator_reports_progress_without_a_terminal() {
    assert_none_of("rocescope-sim", CLI_AND_TERMINAL);
}
