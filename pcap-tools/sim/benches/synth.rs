//! Simulation speed of `rocescope synth`: simulated packets per second, where a packet is one
//! frame put on one link (a frame crossing three links counts three times), for three
//! scenarios: GBN under 1 % loss, IRN sprayed over 8 paths with reordering and loss, and DCP
//! under an 8-to-1 incast with trimming, and 100 GBN flows on a leaf-spine. Captures go to a sink (pcapng encoding included) and
//! the truth is not built.
//!
//! `cargo bench -p rocescope-sim --bench synth` (criterion reports the packets per second as
//! elements/s).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rocescope_sim::sim::{Routing, TopologyKind};
use rocescope_sim::synth::{simulate, OpChoice, Pattern, SynthOptions};
use rocescope_stacks::StackKind;

fn scenarios() -> Vec<(&'static str, SynthOptions)> {
    let base = SynthOptions { messages: 64, message_size: 64 * 1024, seed: 1, ..Default::default() };
    vec![
        ("gbn_loss1pct", SynthOptions { stack: StackKind::Gbn, loss: 0.01, ..base.clone() }),
        (
            "irn_spray8_loss1pct",
            SynthOptions {
                stack: StackKind::Irn,
                loss: 0.01,
                paths: 8,
                routing: Routing::Spray,
                reorder_ns: 2000,
                op: OpChoice::Mix,
                ..base.clone()
            },
        ),
        (
            "dcp_incast8_trim",
            SynthOptions {
                stack: StackKind::Dcp,
                incast: 8,
                messages: 16,
                trim: true,
                queue_bytes: 32 * 1024,
                rto_ns: Some(1_000_000),
                ..base.clone()
            },
        ),
        (
            // Issue 9's speed target: 100 flows on a leaf-spine (10 leaves × 10 hosts, 4
            // spines, a random permutation), 16 × 64 KB each.
            "leafspine_100flows",
            SynthOptions {
                stack: StackKind::Gbn,
                topology: TopologyKind::LeafSpine { leaves: 10, spines: 4, hosts_per_leaf: 10 },
                pattern: Pattern::Permutation,
                messages: 16,
                ..base.clone()
            },
        ),
    ]
}

fn run(o: &SynthOptions) -> u64 {
    let f = simulate(o, Some(Box::new(std::io::sink())), false, None).expect("simulating");
    assert!(!f.stats.timed_out);
    f.stats.link_frames
}

fn bench_synth(c: &mut Criterion) {
    let mut g = c.benchmark_group("synth");
    g.sample_size(10);
    for (name, o) in scenarios() {
        let packets = run(&o);
        eprintln!("synth/{name}: {packets} packets per run");
        g.throughput(Throughput::Elements(packets));
        g.bench_function(name, |b| b.iter(|| run(&o)));
    }
    g.finish();
}

criterion_group!(benches, bench_synth);
criterion_main!(benches);
