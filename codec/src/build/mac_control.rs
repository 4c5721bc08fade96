//! PAUSE and PFC frames (IEEE 802.3 annex 31B, 802.1Qbb) around a [`MacControlRepr`].

use crate::mac_control::{self, MacControlRepr};

/// Appends an Ethernet PAUSE or PFC frame (destination 01-80-C2-00-00-01), padded to 60 bytes.
pub fn mac_control_frame(src: [u8; 6], repr: &MacControlRepr, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&[0x01, 0x80, 0xc2, 0, 0, 1]);
    out.extend_from_slice(&src);
    out.extend_from_slice(&mac_control::ETHERTYPE.to_be_bytes());
    let o = out.len();
    out.resize(o + repr.len(), 0);
    repr.emit(&mut out[o..]);
    if out.len() - start < 60 {
        out.resize(start + 60, 0);
    }
    out.len() - start
}
