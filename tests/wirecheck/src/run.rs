//! Running `synth` for the checks: the options in, a pcapng and its truth document written to
//! files (as `rocescope synth -o X --truth Y` writes them), the truth read back from its JSON,
//! and the capture decoded into a [`Wire`].
//!
//! [`synth_with`] runs the same fabric with the stacks made by a factory (`synth::build`), so a
//! test can wrap a reference stack in a fault injector ([`crate::mutants`]) and show the wire
//! checks catch it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rocescope_codec::Params;
use rocescope_sim::synth::{self, PairFactory, SynthOptions};
use rocescope_sim::truth::Truth;

use super::wire::Wire;

/// A finished run: where its files are, the truth and the decoded capture; and, when the run
/// made its own scratch directory ([`Run::in_scratch`]), that directory, removed with the run.
pub struct Run {
    pub pcap: PathBuf,
    pub truth_path: PathBuf,
    pub truth: Truth,
    pub wire: Wire,
    pub scratch: Option<TempDir>,
}

impl Run {
    /// The run keeps `dir` (its files' directory) until it is dropped.
    pub fn in_scratch(mut self, dir: TempDir) -> Run {
        self.scratch = Some(dir);
        self
    }
}

/// A fresh directory under the system's temporary directory (one per call: tests run in
/// parallel threads of one process), removed with everything in it when dropped (unless
/// `ROCESCOPE_KEEP` is set, to look at what a failing run left).
pub fn temp_dir(name: &str) -> TempDir {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("rocescope-wirecheck-{name}-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).expect("create a temporary directory");
    TempDir(d)
}

/// A test's scratch directory ([`temp_dir`]).
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("ROCESCOPE_KEEP").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn decode(opts: &SynthOptions, pcap: PathBuf, truth_path: PathBuf) -> Result<Run, String> {
    let text = std::fs::read_to_string(&truth_path).map_err(|e| format!("{}: {e}", truth_path.display()))?;
    let truth = Truth::from_json(&text).map_err(|e| format!("{}: {e}", truth_path.display()))?;
    let params = Params { dcp_tag_shift: opts.dcp_tag_shift, ..Default::default() };
    let wire = Wire::read(&pcap, super::truth_cmp::taps(&truth), opts.stack.profile(), params)?;
    Ok(Run { pcap, truth_path, truth, wire, scratch: None })
}

/// `rocescope synth` with `opts`, writing `dir/name.pcapng` and `dir/name.json`.
pub fn synth(opts: &SynthOptions, dir: &Path, name: &str) -> Result<Run, String> {
    let (pcap, truth_path) = (dir.join(format!("{name}.pcapng")), dir.join(format!("{name}.json")));
    synth::run(opts, &pcap.display().to_string(), Some(&truth_path), None)?;
    decode(opts, pcap, truth_path)
}

/// The same with the connections' two ends made by `factory`.
pub fn synth_with(opts: &SynthOptions, dir: &Path, name: &str, factory: &mut PairFactory<'_>) -> Result<Run, String> {
    opts.validate()?;
    let (pcap, truth_path) = (dir.join(format!("{name}.pcapng")), dir.join(format!("{name}.json")));
    let io = |e: std::io::Error| e.to_string();
    let out: Box<dyn Write> = Box::new(BufWriter::new(File::create(&pcap).map_err(io)?));
    let mut fabric = synth::build(opts, Some(out), factory).map_err(io)?;
    fabric.keep_tap_frames = true;
    fabric.run(None).map_err(io)?;
    if let Some(w) = fabric.take_writer() {
        w.into_inner().flush().map_err(io)?;
    }
    let mut w = BufWriter::new(File::create(&truth_path).map_err(io)?);
    synth::write_truth(opts, &fabric, &mut w).map_err(io)?;
    w.flush().map_err(io)?;
    drop(fabric);
    decode(opts, pcap, truth_path)
}
