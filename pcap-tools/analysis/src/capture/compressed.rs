//! Compressed captures, as tshark reads them: gzip (`.pcapng.gz`, several members one after the
//! other included) and Zstandard (`.zst`, several frames included), recognised by their magic
//! numbers rather than the file name, so a compressed pipe (`zcat`-less `rocescope decode - <
//! f.gz`) works as well. Decompression streams: memory stays the decoders' windows.
//!
//! Crates: flate2 (with its pure-Rust backend) and ruzstd (a pure-Rust Zstandard decoder): no C
//! toolchain needed, and both build for wasm32.

use std::io::{self, BufRead, BufReader, Read};

/// What the first bytes of a capture say it is compressed with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Zstd,
}

impl Compression {
    /// From the first bytes of a file (at least 4 to tell; fewer: not compressed).
    pub fn sniff(head: &[u8]) -> Option<Compression> {
        match head {
            [0x1f, 0x8b, ..] => Some(Compression::Gzip),
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Compression::Zstd),
            _ => None,
        }
    }
}

/// A reader of the decompressed bytes.
pub fn decompress<R: BufRead + Send + 'static>(kind: Compression, src: R) -> Box<dyn Read + Send> {
    match kind {
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(src)),
        Compression::Zstd => Box::new(ZstdFrames { src: Some(src), frame: None }),
    }
}

/// Looks at the first bytes of `src` and wraps it in a decompressor when it is compressed (the
/// bytes looked at are given back in front of the rest).
pub fn sniffed<R: Read + Send + 'static>(mut src: R) -> io::Result<Box<dyn Read + Send>> {
    let mut head = [0u8; 4];
    let n = read_head(&mut src, &mut head)?;
    let whole = io::Cursor::new(head[..n].to_vec()).chain(src);
    Ok(match Compression::sniff(&head[..n]) {
        Some(kind) => decompress(kind, BufReader::with_capacity(1 << 20, whole)),
        None => Box::new(whole),
    })
}

/// Up to `head.len()` bytes from the start of `src`: fewer only at its end (a pipe may deliver
/// fewer per read).
pub(super) fn read_head(src: &mut impl Read, head: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < head.len() {
        match src.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Zstandard frames one after another (as `zstd` writes for concatenated input or large files
/// in multi-threaded mode): ruzstd's decoder reads one frame; a new one is started on the rest.
struct ZstdFrames<R: BufRead> {
    src: Option<R>,
    frame: Option<ruzstd::decoding::StreamingDecoder<R, ruzstd::decoding::FrameDecoder>>,
}

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if let Some(frame) = self.frame.as_mut() {
                let n = frame.read(buf)?;
                if n > 0 || buf.is_empty() {
                    return Ok(n);
                }
                // This frame is done: the next one, if any.
                self.src = self.frame.take().map(|f| f.into_inner());
            }
            let Some(mut src) = self.src.take() else { return Ok(0) };
            if src.fill_buf()?.is_empty() {
                return Ok(0);
            }
            let frame = ruzstd::decoding::StreamingDecoder::new(src)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("zstd: {e}")))?;
            self.frame = Some(frame);
        }
    }
}
