//! Which problem a malformed packet is reported as (WIRE.md A.1-A.4): a frame too short for
//! its link header versus one cut by the capture, an IPv4 IHL below 5, a CNP with too few or
//! too many reserved bytes, and a frame with more problems than it keeps.

use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::field::FieldId;
use rocescope_codec::{DecodeOptions, Frame, Layer, LinkType, Value, Warning, Warnings};

fn std_opts() -> DecodeOptions {
    DecodeOptions { verify: true, ..Default::default() }
}

fn warnings(f: &Frame<'_>) -> Vec<Warning> {
    let mut out = Vec::new();
    f.visit(|id, v, _| {
        if let (FieldId::Warning, Value::Warning(w)) = (id, v) {
            out.push(w);
        }
    });
    out
}

#[test]
fn a_frame_shorter_than_its_link_header_is_malformed_unless_the_capture_cut_it() {
    let bytes = [0u8; 10];
    // Ten bytes on the wire: the frame itself is too short.
    let f = Frame::parse(LinkType::Ethernet, &bytes, 10, &std_opts());
    assert_eq!(warnings(&f), vec![Warning::LengthTooShort { layer: Layer::Link, claimed: 10, minimum: 14 }]);
    assert!(!f.truncated());
    // Sixty on the wire, ten captured: cut by the snaplen.
    let f = Frame::parse(LinkType::Ethernet, &bytes, 60, &std_opts());
    assert_eq!(warnings(&f), vec![Warning::Truncated { layer: Layer::Link, need: 14, have: 10 }]);
    assert!(f.truncated());
    // A zero-length record.
    let f = Frame::parse(LinkType::Ethernet, &[], 0, &std_opts());
    assert_eq!(warnings(&f), vec![Warning::LengthTooShort { layer: Layer::Link, claimed: 0, minimum: 14 }]);
}

#[test]
fn an_ipv4_ihl_below_5_is_reported_as_the_header_length() {
    let net = NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]);
    let mut frame = FrameRepr::new(net, RoceRepr::new(0x04, 0x12, 1).with_payload(&[1, 2, 3, 4])).to_vec();
    frame[14] = 0x44; // IHL 4: a 16-byte header
    let f = Frame::parse(LinkType::Ethernet, &frame, frame.len(), &std_opts());
    assert_eq!(warnings(&f), vec![Warning::LengthTooShort { layer: Layer::Ipv4, claimed: 16, minimum: 20 }]);
    assert!(f.roce().is_none());
}

#[test]
fn a_cnp_has_exactly_16_reserved_bytes() {
    let net = NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]);
    let cnp = |reserved: usize| FrameRepr::new(net, RoceRepr::new(0x81, 0x12, 0).with_payload(&vec![0; reserved])).to_vec();
    let at = |frame: &[u8]| warnings(&Frame::parse(LinkType::Ethernet, frame, frame.len(), &std_opts()));
    assert_eq!(at(&cnp(16)), vec![]);
    assert_eq!(at(&cnp(12)), vec![Warning::LengthTooShort { layer: Layer::Cnp, claimed: 12, minimum: 16 }]);
    // Too long is bytes a CNP does not carry, not a length "below the minimum".
    assert_eq!(at(&cnp(20)), vec![Warning::UnexpectedPayload { len: 4 }]);
}

#[test]
fn problems_beyond_what_a_frame_keeps_are_counted_in_a_last_warning() {
    let net = NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]);
    let frame = FrameRepr::new(net, RoceRepr::new(0x04, 0x12, 1).with_payload(&[1, 2, 3, 4])).to_vec();
    let mut f = Frame::parse(LinkType::Ethernet, &frame, frame.len(), &std_opts());
    assert_eq!(warnings(&f), vec![]);
    for v in 0..Warnings::CAPACITY as u8 + 3 {
        f.warnings.push(Warning::TVer(v + 1));
    }
    let seen = warnings(&f);
    assert_eq!(seen.len(), Warnings::CAPACITY + 1);
    assert_eq!(seen[Warnings::CAPACITY - 1], Warning::TVer(Warnings::CAPACITY as u8));
    assert_eq!(seen[Warnings::CAPACITY], Warning::NotKept(3));
    assert_eq!(seen[Warnings::CAPACITY].to_string(), "3 more problems not listed");
    assert_eq!(f.warnings.len(), Warnings::CAPACITY + 3);
}

#[test]
fn warning_texts_hold_no_commas() {
    // `fields` output joins a packet's warnings with commas (INTERFACES.md), so a text with a
    // comma of its own would read as two warnings.
    let samples = [
        Warning::IcrcMismatch { wire: 0x2121216f, computed: 0xd74f2700 },
        Warning::Ipv4Checksum { wire: 0x1234, computed: 0x4321 },
        Warning::IpUdpLengthMismatch { ip_payload: 28, udp: 32 },
        Warning::LengthBeyondFrame { layer: Layer::Ipv4, claimed: 100, available: 60 },
        Warning::NotKept(2),
    ];
    for w in samples {
        assert!(!w.to_string().contains(','), "{w}");
    }
    for n in rocescope_codec::warning::Note::ALL {
        assert!(!n.text().contains(','), "{}", n.text());
    }
    for u in rocescope_codec::warning::Unsupported::ALL {
        assert!(!u.text().contains(','), "{}", u.text());
    }
}

#[test]
fn a_header_the_snaplen_cuts_is_named() {
    use rocescope_codec::ib::RethRepr;
    let net = NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]);
    let mut w = RoceRepr::new(0x0a, 0x12, 5).with_payload(&[7; 200]); // WRITE Only: BTH · RETH
    w.reth = Some(RethRepr { va: 0x1000, r_key: 0x55, dma_len: 200 });
    let frame = FrameRepr::new(net, w).to_vec();
    // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 = 54: keep 10 of the RETH's 16 bytes.
    let f = Frame::parse(LinkType::Ethernet, &frame[..64], frame.len(), &std_opts());
    assert_eq!(warnings(&f), vec![Warning::Truncated { layer: Layer::Reth, need: 16, have: 10 }]);
    assert!(f.truncated());
    let mut reth_fields = 0;
    f.visit(|id, _, _| reth_fields += id.name().starts_with("rocescope.reth.") as u32);
    assert_eq!(reth_fields, 0);
    // Cut inside the payload: the headers are whole, nothing is named.
    let f = Frame::parse(LinkType::Ethernet, &frame[..100], frame.len(), &std_opts());
    assert_eq!(warnings(&f), vec![]);
    assert!(f.truncated());
}

#[test]
fn a_length_beyond_the_frame_names_its_field() {
    let net = NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]);
    let mut f = FrameRepr::new(net, RoceRepr::new(0x04, 0x12, 1).with_payload(&[1, 2, 3, 4])).to_vec();
    let total = u16::from_be_bytes([f[16], f[17]]);
    f[16..18].copy_from_slice(&(total + 100).to_be_bytes());
    let fr = Frame::parse(LinkType::Ethernet, &f, f.len(), &DecodeOptions { verify: false, ..Default::default() });
    let w = warnings(&fr);
    assert_eq!(w[0], Warning::LengthBeyondFrame { layer: Layer::Ipv4, claimed: total as u32 + 100, available: total as u32 });
    assert_eq!(w[0].to_string(), format!("IPv4 total length {} exceeds the {} bytes in the frame", total + 100, total));
}
