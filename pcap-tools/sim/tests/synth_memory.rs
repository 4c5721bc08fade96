//! Without the ground truth the simulator keeps a transmission's record only while its frame is
//! in flight: the records it holds are bounded by what the wire and the queues hold, not by the
//! length of the run.

use rocescope_sim::synth::{simulate, SynthOptions};
use rocescope_stacks::StackKind;

#[test]
fn without_the_truth_transmission_records_are_recycled() {
    for stack in StackKind::ALL {
        let opts = SynthOptions { stack, messages: 2000, loss: 0.01, seed: 3, ..Default::default() };
        let f = simulate(&opts, None, false, None).unwrap();
        let s = f.stats;
        assert!(s.transmissions > 8000, "{stack:?}: {s:?}");
        // The window (128 packets) and the ACKs in flight, far below the transmissions.
        assert!(f.txs.len() < 1000, "{stack:?}: {} records kept for {} transmissions", f.txs.len(), s.transmissions);
        assert_eq!(f.unfinished(), vec![], "{stack:?}");
        // With the truth every record stays.
        let small = SynthOptions { messages: 200, ..opts };
        let f = simulate(&small, None, true, None).unwrap();
        assert_eq!(f.txs.len() as u64, f.stats.transmissions, "{stack:?}");
    }
}
