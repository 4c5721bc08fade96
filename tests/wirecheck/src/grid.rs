//! One cell of issue 9's grid (acceptance 2): a stack under one random loss rate, over one
//! fabric path or several sprayed ones, with one seed; `synth` with taps at the sender and the
//! receiver, judged by [`crate::verdict`], and (when asked) run twice to show the same seed
//! writes the same bytes. `examples/sim_grid.rs` (the whole grid, `scripts/sim-grid.sh`) and the
//! CI slice (`tests/wire_grid.rs`) both run cells through here.

use std::path::Path;

use rocescope_sim::sim::{Routing, TapPoint};
use rocescope_sim::synth::SynthOptions;
use rocescope_stacks::StackKind;

use super::run;
use super::verdict::{judge, Verdict};

/// A cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    pub stack: StackKind,
    pub loss: f64,
    /// 1: one path (ECMP); more: sprayed per packet, path delays `delay + reorder·k/(paths−1)`.
    pub paths: u32,
    pub seed: u64,
    /// Messages per connection and their size (the grid: at least 64 of 64 KB).
    pub messages: u32,
    pub message_size: u32,
    /// Extra delay of the slowest sprayed path, ns.
    pub reorder_ns: u64,
}

impl Cell {
    /// The grid's defaults: 64 messages of 64 KB (issue 9, acceptance 2: at least that), 2 µs
    /// between the fastest and the slowest sprayed path (the issue gives no path delays: this
    /// crate's choice, between the 1.5 and 3 µs the simulator's own tests use).
    pub fn new(stack: StackKind, loss: f64, paths: u32, seed: u64) -> Cell {
        Cell { stack, loss, paths, seed, messages: 64, message_size: 65_536, reorder_ns: 2000 }
    }

    pub fn options(&self) -> SynthOptions {
        SynthOptions {
            stack: self.stack,
            loss: self.loss,
            paths: self.paths,
            routing: if self.paths > 1 { Routing::Spray } else { Routing::Ecmp },
            reorder_ns: if self.paths > 1 { self.reorder_ns } else { 0 },
            messages: self.messages,
            message_size: self.message_size,
            seed: self.seed,
            taps: vec![TapPoint::Sender, TapPoint::Receiver],
            time_limit_ns: 10_000_000_000,
            ..Default::default()
        }
    }

    /// `stack loss paths seed`, the start of the grid log's line.
    pub fn label(&self) -> String {
        format!("{} {} {} {}", self.stack.name(), self.loss, self.paths, self.seed)
    }
}

/// Runs `cell` in `dir` (its files are removed unless `keep`); `twice`: run it again and require
/// the same capture bytes.
pub fn run_cell(cell: &Cell, dir: &Path, twice: bool, keep: bool) -> Result<Verdict, String> {
    let opts = cell.options();
    let name = format!("{}-loss{}-paths{}-seed{}", cell.stack.name(), cell.loss, cell.paths, cell.seed);
    let r = run::synth(&opts, dir, &name)?;
    let mut v = judge(&r);
    if r.truth.summary.timed_out {
        v.errors.push("the run hit its time limit".into());
    }
    if twice {
        let again = run::synth(&opts, dir, &format!("{name}-again"));
        let same = again.as_ref().is_ok_and(|a| std::fs::read(&a.pcap).ok() == std::fs::read(&r.pcap).ok());
        if !same {
            v.errors.push("the same seed wrote different bytes".into());
        }
        if let Ok(a) = again {
            let _ = std::fs::remove_file(&a.pcap);
            let _ = std::fs::remove_file(&a.truth_path);
        }
    }
    if !keep {
        let _ = std::fs::remove_file(&r.pcap);
        let _ = std::fs::remove_file(&r.truth_path);
    }
    Ok(v)
}

/// The names of the invariants `v` breaks, and the first message.
pub fn broken(v: &Verdict) -> Option<(Vec<&'static str>, String)> {
    let all: Vec<(&'static str, &Vec<String>)> = [
        ("truth", &v.truth),
        ("labels", &v.labels),
        ("read_labels", &v.read_labels),
        ("delivery", &v.delivery),
        ("resends", &v.resends),
        ("go_back", &v.go_back),
        ("other", &v.errors),
    ]
    .into_iter()
    .filter(|(_, e)| !e.is_empty())
    .collect();
    let first = all.first()?.1[0].lines().next().unwrap_or_default().to_string();
    Some((all.iter().map(|(n, _)| *n).collect(), first))
}

/// The grid log's line for a judged cell.
pub fn line(cell: &Cell, v: &Verdict) -> String {
    let n = &v.numbers;
    let verdict = match broken(v) {
        None => "ok".to_string(),
        Some((names, first)) => format!("FAIL[{}]: {}", names.join(","), first.chars().take(160).collect::<String>()),
    };
    format!(
        "{} | {} {} {} {:.2} {} {} {} {}/{} {} {} | {verdict}",
        cell.label(),
        n.data_frames,
        n.retx,
        n.data_lost,
        n.retx_per_loss(),
        n.resent_after_ack,
        n.go_backs,
        n.bad_go_backs,
        n.completed_on_wire,
        cell.messages,
        n.compared.frames,
        n.labels_checked
    )
}
