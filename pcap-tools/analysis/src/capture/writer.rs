//! pcapng writer: one interface per tap, nanosecond timestamps (`if_tsresol` = 9).

use std::borrow::Cow;
use std::io::Write;
use std::time::Duration;

use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;

/// Writes Ethernet frames to a pcapng file.
pub struct CaptureWriter<W: Write> {
    inner: PcapNgWriter<W>,
    interfaces: u32,
    little_endian: bool,
    /// The block being written (reused).
    block: Vec<u8>,
}

impl<W: Write> CaptureWriter<W> {
    /// Starts a file with one Ethernet interface per name in `interfaces`.
    pub fn new(out: W, interfaces: &[&str]) -> std::io::Result<Self> {
        let mut inner = PcapNgWriter::new(out).map_err(to_io)?;
        for name in interfaces {
            let idb = InterfaceDescriptionBlock {
                linktype: DataLink::ETHERNET,
                snaplen: 0,
                options: vec![
                    InterfaceDescriptionOption::IfName(Cow::Owned(name.to_string())),
                    InterfaceDescriptionOption::IfTsResol(9),
                ],
            };
            inner.write_pcapng_block(idb).map_err(to_io)?;
        }
        let little_endian = inner.section().endianness == pcap_file::Endianness::Little;
        Ok(CaptureWriter { inner, interfaces: interfaces.len() as u32, little_endian, block: Vec::new() })
    }

    /// Appends a frame captured on `interface` at `ts_ns` (nanoseconds since the epoch).
    pub fn write(&mut self, interface: u32, ts_ns: u64, frame: &[u8]) -> std::io::Result<()> {
        self.write_truncated(interface, ts_ns, frame, frame.len())
    }

    /// Appends the first `caplen` bytes of a frame (a snaplen-cut capture).
    pub fn write_truncated(&mut self, interface: u32, ts_ns: u64, frame: &[u8], caplen: usize) -> std::io::Result<()> {
        self.write_block(interface, ts_ns, frame, caplen, None)
    }

    /// Appends a frame with a packet comment (`opt_comment`, shown by Wireshark as
    /// `frame.comment`).
    pub fn write_with_comment(&mut self, interface: u32, ts_ns: u64, frame: &[u8], comment: &str) -> std::io::Result<()> {
        self.write_block(interface, ts_ns, frame, frame.len(), Some(comment))
    }

    fn write_block(&mut self, interface: u32, ts_ns: u64, frame: &[u8], caplen: usize, comment: Option<&str>) -> std::io::Result<()> {
        let data = &frame[..caplen.min(frame.len())];
        if comment.is_none() {
            return self.write_plain_block(interface, ts_ns, frame.len() as u32, data);
        }
        let epb = EnhancedPacketBlock {
            interface_id: interface,
            // pcap-file stores the raw timestamp units in a Duration's nanoseconds.
            timestamp: Duration::from_nanos(ts_ns),
            original_len: frame.len() as u32,
            data: Cow::Borrowed(data),
            options: comment.map(|c| EnhancedPacketOption::Comment(Cow::Borrowed(c))).into_iter().collect(),
        };
        self.inner.write_pcapng_block(epb).map_err(to_io)?;
        Ok(())
    }

    /// An Enhanced Packet Block without options, written directly (the simulator writes
    /// millions): the same bytes pcap-file writes (pcapng §4.3: type 6, length, interface,
    /// timestamp high and low, captured and original lengths, data padded to 32 bits, length).
    fn write_plain_block(&mut self, interface: u32, ts_ns: u64, original_len: u32, data: &[u8]) -> std::io::Result<()> {
        if interface >= self.interfaces {
            return Err(to_io(pcap_file::PcapError::InvalidInterfaceId(interface)));
        }
        let pad = (4 - data.len() % 4) % 4;
        let block_len = (32 + data.len() + pad) as u32;
        let words = [6, block_len, interface, (ts_ns >> 32) as u32, ts_ns as u32, data.len() as u32, original_len];
        let le = self.little_endian;
        let word = |w: u32| if le { w.to_le_bytes() } else { w.to_be_bytes() };
        let b = &mut self.block;
        b.clear();
        for w in words {
            b.extend_from_slice(&word(w));
        }
        b.extend_from_slice(data);
        b.extend_from_slice(&[0u8; 3][..pad]);
        b.extend_from_slice(&word(block_len));
        self.inner.get_mut().write_all(b)
    }

    pub fn into_inner(self) -> W {
        self.inner.into_inner()
    }
}

/// Keeps an I/O error's kind (a closed pipe stays `BrokenPipe`).
fn to_io(e: pcap_file::PcapError) -> std::io::Error {
    match e {
        pcap_file::PcapError::IoError(e) => e,
        e => std::io::Error::other(format!("{e:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct writer and pcap-file's write the same bytes.
    #[test]
    fn plain_blocks_are_the_bytes_pcap_file_writes() {
        let frames: [&[u8]; 4] = [&[1, 2, 3], &[7; 60], &[9; 61], &[]];
        let mut ours = CaptureWriter::new(Vec::new(), &["a", "b"]).unwrap();
        let mut theirs = CaptureWriter::new(Vec::new(), &["a", "b"]).unwrap();
        for (i, f) in frames.iter().enumerate() {
            let ts = 1_700_000_000_123_456_789 + i as u64 * 4_294_967_297;
            ours.write_truncated(i as u32 % 2, ts, f, f.len().saturating_sub(i % 2)).unwrap();
            let epb = EnhancedPacketBlock {
                interface_id: i as u32 % 2,
                timestamp: Duration::from_nanos(ts),
                original_len: f.len() as u32,
                data: Cow::Borrowed(&f[..f.len().saturating_sub(i % 2)]),
                options: vec![],
            };
            theirs.inner.write_pcapng_block(epb).unwrap();
        }
        assert_eq!(ours.into_inner(), theirs.into_inner());
        let mut w = CaptureWriter::new(Vec::new(), &["a"]).unwrap();
        assert!(w.write(1, 0, &[1]).is_err(), "an interface that was not described");
    }
}
