//! Reading and writing capture files.

pub mod annotate;
pub mod compressed;
#[cfg(not(target_arch = "wasm32"))]
mod mapped;
pub mod reader;
pub mod writer;

pub use reader::{CaptureError, CaptureReader, Comments, InterfaceName, Record, SectionInfo};
pub use writer::CaptureWriter;

/// A memory-mapped capture's window handed to another thread, to be faulted in ahead of the
/// reader and unmapped there ([`CaptureReader::send_windows_to`]).
#[cfg(not(target_arch = "wasm32"))]
pub use mapped::Window;
/// (The browser maps nothing: no window is ever sent.)
#[cfg(target_arch = "wasm32")]
pub enum Window {}

/// Opens a capture file, or standard input for `-`. A regular file is memory-mapped
/// (`capture/mapped.rs`); anything else (a pipe, a FIFO, standard input) is read with `read()`;
/// a gzip or Zstandard compressed one is decompressed as it is read (`capture/compressed.rs`).
pub fn open(path: &str) -> Result<CaptureReader<Box<dyn std::io::Read + Send>>, CaptureError> {
    use std::io::Seek;
    let unreadable = |e: std::io::Error| CaptureError {
        offset: CaptureError::NOT_LOCATED,
        message: format!("cannot read: {}", reader::io_text(&e)),
    };
    // (Standard input unlocked, so the reader may move to another thread; it reads in large
    // chunks, so the lock taken per read costs nothing.)
    if path == "-" {
        return CaptureReader::new(compressed::sniffed(std::io::stdin()).map_err(unreadable)?);
    }
    let mut file = std::fs::File::open(path).map_err(CaptureError::cannot_open)?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        // A FIFO or a device: read once, as standard input is.
        return CaptureReader::new(compressed::sniffed(file).map_err(unreadable)?);
    }
    let mut head = [0u8; 4];
    let n = compressed::read_head(&mut file, &mut head).map_err(unreadable)?;
    file.rewind().map_err(unreadable)?;
    if let Some(kind) = compressed::Compression::sniff(&head[..n]) {
        return CaptureReader::new(compressed::decompress(kind, std::io::BufReader::with_capacity(1 << 20, file)));
    }
    #[cfg(not(target_arch = "wasm32"))]
    let file = match mapped::MappedFile::new(file) {
        Ok(m) => return CaptureReader::mapped(m),
        Err(file) => file,
    };
    CaptureReader::new(Box::new(file))
}
