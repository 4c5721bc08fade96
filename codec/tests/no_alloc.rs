//! The decode path allocates nothing (DEVELOPERS.md: "the codec must not allocate per
//! packet"): a counting global allocator watches parse + visit over frames of every kind.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::{DecodeOptions, Frame, LinkType};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn decode_and_visit_do_not_allocate() {
    let payload = vec![7u8; 333];
    let mut frames = Vec::new();
    for op in 0..=255u8 {
        for net in [NetRepr::ipv4([1, 2, 3, 4], [5, 6, 7, 8]), NetRepr::ipv6([1; 16], [2; 16])] {
            let mut r = RoceRepr::new(op, 0x55, 0xfffffe);
            if rocescope_codec::ib::Opcode(op).info().is_some_and(|i| i.payload) {
                r = r.with_payload(&payload);
            }
            let f = FrameRepr::new(net, r).to_vec();
            // A snaplen-cut copy and a corrupted copy too.
            frames.push(f[..f.len().min(70)].to_vec());
            let mut bad = f.clone();
            let n = bad.len();
            bad[n - 1] ^= 0xff;
            frames.push(bad);
            frames.push(f);
        }
    }
    let opts = DecodeOptions::default();
    let before = ALLOCS.load(Ordering::SeqCst);
    let mut fields = 0usize;
    for f in &frames {
        let frame = Frame::parse(LinkType::Ethernet, f, f.len() + 10, &opts);
        frame.visit(|_, _, _| fields += 1);
    }
    let after = ALLOCS.load(Ordering::SeqCst);
    assert!(fields > frames.len() * 10);
    assert_eq!(after - before, 0, "allocations while decoding {} frames", frames.len());
}
