//! The decode path allocates nothing (DEVELOPERS.md: "the codec must not allocate per
//! packet"): a counting global allocator watches parse + visit over frames of every kind.


use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::{DecodeOptions, Frame, LinkType};

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocs;

/// Tests that measure run one at a time (they also build frames, which allocates).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn decode_and_visit_do_not_allocate() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
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
    let before = allocs();
    let mut fields = 0usize;
    for f in &frames {
        let frame = Frame::parse(LinkType::Ethernet, f, f.len() + 10, &opts);
        frame.visit(|_, _, _| fields += 1);
    }
    let after = allocs();
    assert!(fields > frames.len() * 10);
    assert_eq!(after - before, 0, "allocations while decoding {} frames", frames.len());
}

/// One frame of each extension (WIRE.md part B) with the profile that decodes it.
fn extension_frames() -> Vec<(Vec<u8>, rocescope_codec::Profile)> {
    use rocescope_codec::build::{header_only, TcpFrameRepr};
    use rocescope_codec::ext::erd::{EethRepr, NackEntry, NackRepr};
    use rocescope_codec::ext::flor::{AckRepr, SendRepr};
    use rocescope_codec::ext::netrt::NetrtRepr;
    use rocescope_codec::ext::sdr::{CtrlRepr, DataRepr};
    use rocescope_codec::Profile;
    let params = rocescope_codec::Params::default();
    let net = NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]);
    let payload = [5u8; 256];
    let mut out = vec![];
    let dcp = FrameRepr::new(net, RoceRepr::new_dcp(0x07, 0x12, 9).with_payload(&payload)).to_vec();
    out.push((header_only(LinkType::Ethernet, &dcp, 2).unwrap(), Profile::Dcp));
    out.push((dcp, Profile::Dcp));
    for off in 0..8 {
        let d = DataRepr::new(params.sdr_split, 1, off, 0xdead_beef);
        out.push((FrameRepr::new(net, d.roce(&params, 256, 0x20, off, &payload)).to_vec(), Profile::Sdr));
    }
    let ctl = CtrlRepr::SrNack { msg_seq: 1, indices: &[1, 2, 3] }.to_vec();
    out.push((FrameRepr::new(net, RoceRepr::new(0x24, 0x21, 1).with_payload(&ctl)).to_vec(), Profile::Sdr));
    let send = SendRepr::data(1, 2, true, &payload).to_vec();
    out.push((FrameRepr::new(net, RoceRepr::new(0x04, 0x30, 1).with_payload(&send)).to_vec(), Profile::Flor));
    let ack = AckRepr { qpn: 0x30, bitmap: 0x8000_0000, least_gn: 5, delay_ns: 9, entries: &[0, 0x401] }.to_vec();
    out.push((FrameRepr::new(net, RoceRepr::new(0x64, 0x31, 1).with_payload(&ack)).to_vec(), Profile::Flor));
    let body = NetrtRepr::Request { epsn: 0x102, bitmap: 0x0b }.to_vec();
    out.push((FrameRepr::new(net, NetrtRepr::Request { epsn: 0x102, bitmap: 0x0b }.roce(0xc0, 0x40, 0xffff, &body)).to_vec(), Profile::Netrt));
    let mut eeth = EethRepr { ty: 1, last: true, msg_id: 3, s_len: 256, s_offset: 0 }.to_bytes().to_vec();
    eeth.extend_from_slice(&payload);
    out.push((FrameRepr::new(net, RoceRepr::new(0x64, 0x50, 1).with_payload(&eeth)).to_vec(), Profile::Erd));
    let entries = [NackEntry { src_qpn: 1, dst_qpn: 0x50, psn: 1 }];
    let nack = NackRepr::new(&entries).to_vec();
    out.push((TcpFrameRepr::new(net, 40000, 4792, 1, &nack[..7]).to_vec(), Profile::Erd));
    out.push((TcpFrameRepr::new(net, 40000, 4792, 8, &nack[7..]).to_vec(), Profile::Erd));
    out
}

#[test]
fn extension_decoding_does_not_allocate() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let frames = extension_frames();
    let before = allocs();
    let mut fields = 0usize;
    for (f, p) in &frames {
        let frame = Frame::parse(LinkType::Ethernet, f, f.len(), &DecodeOptions::with_profile(*p));
        // Each RoCE frame decodes under its profile (the NACK stream needs the stateful decoder).
        let want = if frame.tcp().is_some() { rocescope_codec::Profile::Std } else { *p };
        assert_eq!(frame.profile(), want);
        assert!(frame.warnings.is_empty(), "{:?}", frame.warnings);
        frame.visit(|_, _, _| fields += 1);
    }
    assert_eq!(allocs() - before, 0, "allocations while decoding {} extension frames", frames.len());
    assert!(fields > frames.len() * 10);
}

/// The stateful decoder (auto detection, SDR tracking, ERD reassembly) allocates when it meets
/// a new flow, never per packet of a flow it knows: a second pass over the same flows allocates
/// nothing.
#[test]
fn the_stateful_decoder_allocates_per_flow_not_per_packet() {
    use rocescope_codec::decoder::{Decoder, DecoderOptions};
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let frames = extension_frames();
    let mut d = Decoder::new(DecoderOptions::default());
    let mut fields = 0usize;
    for (f, _) in &frames {
        d.decode(LinkType::Ethernet, f, f.len()).visit(|_, _, _| fields += 1);
    }
    let before = allocs();
    for _ in 0..3 {
        for (f, _) in &frames {
            d.decode(LinkType::Ethernet, f, f.len()).visit(|_, _, _| fields += 1);
        }
    }
    assert_eq!(allocs() - before, 0, "allocations on known flows");
    assert!(fields > frames.len() * 40);
}

/// Native InfiniBand (link type 247): local and global packets, whole, cut by the snaplen and
/// corrupted, decode and walk without allocating.
#[test]
fn native_infiniband_decode_does_not_allocate() {
    use rocescope_codec::build::{IbFrameRepr, IbGrhRepr};
    use rocescope_codec::ib::LrhRepr;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let payload = vec![9u8; 77];
    let mut frames = Vec::new();
    for op in [0x04u8, 0x0a, 0x0b, 0x11, 0x64, 0x65] {
        for grh in [None, Some(IbGrhRepr { src_gid: [1; 16], dst_gid: [2; 16], traffic_class: 3, flow_label: 4, hop_limit: 5 })] {
            let r = RoceRepr::new(op, 0x55, 0x10).with_payload(if matches!(op, 0x11) { &[] } else { &payload });
            let f = IbFrameRepr { lrh: LrhRepr { vl: 2, sl: 1, dlid: 3, slid: 4, ..Default::default() }, grh, roce: r }.to_vec();
            for cut in [4, 20, 50, f.len() - 1] {
                frames.push(f[..cut.min(f.len())].to_vec());
            }
            let mut bad = f.clone();
            bad[10] ^= 0x40;
            frames.push(bad);
            frames.push(f);
        }
    }
    let opts = DecodeOptions::default();
    let before = allocs();
    let mut fields = 0usize;
    for f in &frames {
        let frame = Frame::parse(LinkType::Infiniband, f, f.len() + 2, &opts);
        frame.visit(|_, _, _| fields += 1);
    }
    let after = allocs();
    assert!(fields > frames.len() * 5);
    assert_eq!(after - before, 0, "allocations while decoding {} frames", frames.len());
}
