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
        Ok(CaptureWriter { inner })
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
        let epb = EnhancedPacketBlock {
            interface_id: interface,
            // pcap-file stores the raw timestamp units in a Duration's nanoseconds.
            timestamp: Duration::from_nanos(ts_ns),
            original_len: frame.len() as u32,
            data: Cow::Borrowed(&frame[..caplen.min(frame.len())]),
            options: comment.map(|c| EnhancedPacketOption::Comment(Cow::Borrowed(c))).into_iter().collect(),
        };
        self.inner.write_pcapng_block(epb).map_err(to_io)?;
        Ok(())
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
