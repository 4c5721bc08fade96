//! What several simulator tests share: a run whose capture is kept in memory, and its frames.
#![allow(dead_code)] // each test file uses part of it

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use rocescope_analysis::capture::CaptureReader;
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice};
use rocescope_codec::{Frame, LinkType, Params, Profile};
use rocescope_sim::synth::{simulate, SynthOptions};
use rocescope_sim::Fabric;

/// A `Write` into a shared buffer, so a test can read the capture after the run.
pub struct Shared(pub Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One captured frame: (pcapng interface, time ns since the epoch, bytes).
pub type Captured = (u32, u64, Vec<u8>);

/// Simulates `o` (keeping the truth's records when `keep_truth`) with its capture in memory;
/// the fabric after the run and the capture's bytes.
pub fn run_pcap(o: &SynthOptions, keep_truth: bool) -> (Fabric<'static>, Vec<u8>) {
    let buf = Rc::new(RefCell::new(Vec::new()));
    let f = simulate(o, Some(Box::new(Shared(buf.clone()))), keep_truth, None).expect("simulating");
    let bytes = buf.borrow().clone();
    (f, bytes)
}

/// [`run_pcap`] keeping the truth's records, with the run's conservation checked
/// ([`assert_conserved`]; `label` names the run in a failure).
pub fn run_conserved(label: &str, o: &SynthOptions) -> (Fabric<'static>, Vec<u8>) {
    let (f, pcap) = run_pcap(o, true);
    assert_conserved(&f, &|| format!("{label}: {}", o.command_line()));
    (f, pcap)
}

/// Decodes every frame of `pcap` under `profile` and `params` as the analysers' session does
/// (the decoder told each frame's interface), calling `each(frame number, frame)`.
pub fn decode_each(pcap: &[u8], profile: Profile, params: Params, mut each: impl FnMut(u64, &Frame<'_>)) {
    let mut dec = Decoder::new(DecoderOptions { profile: ProfileChoice::Fixed(profile), params, ..Default::default() });
    let mut rd = CaptureReader::new(pcap).expect("a pcapng");
    while let Some(rec) = rd.next_record().expect("a record") {
        dec.set_interface(rec.interface);
        let d = dec.emit(LinkType::Ethernet, rec.data, rec.orig_len as usize);
        each(rec.number, &d.frame);
    }
}

/// Simulates `o` (keeping the truth's records when `keep_truth`) with its capture in memory;
/// the fabric after the run and the capture's frames.
pub fn run_captured(o: &SynthOptions, keep_truth: bool) -> (Fabric<'static>, Vec<Captured>) {
    let (f, bytes) = run_pcap(o, keep_truth);
    let mut r = CaptureReader::new(&bytes[..]).expect("a pcapng");
    let mut frames = Vec::new();
    while let Some(rec) = r.next_record().expect("a record") {
        frames.push((rec.interface, rec.ts_ns, rec.data.to_vec()));
    }
    (f, frames)
}

/// Every message of the run was delivered intact once and completed once, after its delivery;
/// no connection failed and the run was not cut (the research stacks' conservation; `ctx` names
/// the run in a failure).
pub fn assert_conserved(f: &Fabric<'_>, ctx: &dyn Fn() -> String) {
    assert!(!f.stats.timed_out && !f.stats.watchdog, "{}: the run was cut", ctx());
    for (ci, c) in f.conns.iter().enumerate() {
        assert!(c.failed.is_none(), "{}: connection {ci} failed", ctx());
        for (mi, m) in c.messages.iter().enumerate() {
            assert_eq!(m.delivered.len(), 1, "{}: conn {ci} message {mi} delivered {} times", ctx(), m.delivered.len());
            assert!(m.delivered[0].2 && m.delivered[0].1 == m.msg.len, "{}: conn {ci} message {mi} bytes", ctx());
            assert_eq!(m.completed.len(), 1, "{}: conn {ci} message {mi} completed {} times", ctx(), m.completed.len());
            assert!(m.delivered[0].0 <= m.completed[0], "{}: conn {ci} message {mi} completed first", ctx());
        }
    }
}
