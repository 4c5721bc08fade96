//! Reading and writing capture files.

#[cfg(not(target_arch = "wasm32"))]
mod mapped;
pub mod reader;
pub mod writer;

pub use reader::{CaptureError, CaptureReader, Record};
pub use writer::CaptureWriter;

/// Opens a capture file, or standard input for `-`. A regular file is memory-mapped
/// (`capture/mapped.rs`); anything else (a pipe, a FIFO, standard input) is read with `read()`.
pub fn open(path: &str) -> Result<CaptureReader<Box<dyn std::io::Read + Send>>, CaptureError> {
    // (Standard input unlocked, so the reader may move to another thread; it reads in large
    // chunks, so the lock taken per read costs nothing.)
    let src: Box<dyn std::io::Read + Send> = if path == "-" {
        Box::new(std::io::stdin())
    } else {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) => return Err(CaptureError { offset: 0, message: format!("cannot open: {e}") }),
        };
        #[cfg(not(target_arch = "wasm32"))]
        let file = match mapped::MappedFile::new(file) {
            Ok(m) => return CaptureReader::mapped(m),
            Err(file) => file,
        };
        Box::new(file)
    };
    CaptureReader::new(src)
}
