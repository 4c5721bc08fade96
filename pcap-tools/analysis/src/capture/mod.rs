//! Reading and writing capture files.

pub mod reader;
pub mod writer;

pub use reader::{CaptureError, CaptureReader, Record};
pub use writer::CaptureWriter;

/// Opens a capture file, or standard input for `-`.
pub fn open(path: &str) -> Result<CaptureReader<Box<dyn std::io::Read + Send>>, CaptureError> {
    // (Standard input unlocked, so the reader may move to another thread; it reads in large
    // chunks, so the lock taken per read costs nothing.)
    let src: Box<dyn std::io::Read + Send> = if path == "-" {
        Box::new(std::io::stdin())
    } else {
        match std::fs::File::open(path) {
            Ok(f) => Box::new(f),
            Err(e) => return Err(CaptureError { offset: 0, message: format!("cannot open: {e}") }),
        }
    };
    CaptureReader::new(src)
}
