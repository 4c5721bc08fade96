//! A display filter is parsed once and evaluated without allocating (docs/cli.md "Display
//! filters"; `filter/mod.rs`): a counting global allocator watches `Filter::matches` (and the
//! clock that feeds it the frame's times) over every frame of the bundled mixes, for filters on
//! every kind of name and literal.

use std::ops::ControlFlow;
use std::path::Path;

use rocescope_analysis::capture;
use rocescope_analysis::filter::Filter;
use rocescope_analysis::output::Clock;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice};

#[path = "../../../codec/tests/common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocs;

/// (filter, frames of std-mix it keeps, from tshark 4.0.17's `-Y` on the tshark twin where there is
/// one: `infiniband.reth.dmalen && infiniband.bth.opcode < 0x1c` 13 frames (RC and its opcodes
/// tshark decodes), `macc.cbfc.pause_time.c1 == 4369` frame 304, `frame.number in {…}` 13.)
const FILTERS: &[(&str, Option<usize>)] = &[
    ("rocescope.reth.dmalen && rocescope.bth.opcode < 0x1c", Some(13)),
    ("rocescope.pfc.quanta == 4369", Some(1)),
    ("rocescope.pfc.quanta != 4369", Some(1)),
    ("frame.number in {1, 3, 10..20}", Some(13)),
    ("!rocescope.aeth && (ip.addr == 192.168.77.10 || ipv6.src == fd00:5ce0::a/64)", None),
    ("frame.time_relative > 0.0001 && frame.time_delta <= 0.000001 && frame.time_epoch > 1", None),
    ("rocescope.aeth.kind == nak || rocescope.profile == \"std\" && udp.port == 4791", None),
    ("rocescope.icrc == 24:00:c4:9e || rocescope.icrc contains c4", None),
    ("rocescope.opcode_name contains \"SEND\" and not rocescope.bth.se == True", None),
    ("rocescope.warning == \"x\" || rocescope.sdr.ctrl || tcp || rocescope", None),
];

#[test]
fn filters_evaluate_without_allocating() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    for file in ["std-mix.pcapng", "ext-mix.pcapng"] {
        for (text, want) in FILTERS {
            let mut filter = Filter::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let reader = capture::open(&root.join(file).display().to_string()).expect("open");
            let decoder = Decoder::new(DecoderOptions {
                profile: ProfileChoice::Auto,
                maps: vec![],
                params: Default::default(),
                no_verify: false,
            });
            let mut session = Session::new(reader, decoder);
            let mut clock = Clock::default();
            let (mut kept, mut frames, mut allocated) = (0usize, 0usize, 0usize);
            session
                .run(|rec, d| {
                    let before = allocs();
                    let times = clock.read(rec.ts_ns);
                    let keep = filter.matches(rec, &times, d);
                    if keep {
                        clock.displayed(&times);
                    }
                    allocated += allocs() - before;
                    kept += keep as usize;
                    frames += 1;
                    ControlFlow::Continue(())
                })
                .expect("read");
            assert!(frames > 50, "{file}: {frames} frames");
            assert_eq!(allocated, 0, "{file}: {text:?} allocated {allocated} times over {frames} frames");
            if file == "std-mix.pcapng" {
                if let Some(want) = want {
                    assert_eq!(kept, *want, "{file}: {text:?}");
                }
            }
        }
    }
}
