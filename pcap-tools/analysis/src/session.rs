//! The one read → decode loop. Every front end that walks a capture (`rocescope decode` and
//! `check`, the browser page) runs it: records come from [`CaptureReader`] in file order, each
//! is decoded by the codec's stateful [`Decoder`] (per-flow `auto` detection, `--map`, the SDR
//! tracker and ERD NACK reassembly live there), and the caller sees the record and its decoding.
//! Memory is the reader's buffer plus the decoder's per-flow state: nothing grows with the
//! capture.

use std::io::Read;
use std::ops::ControlFlow;

use rocescope_codec::decoder::{Decoded, Decoder};
use rocescope_codec::LinkType;

use crate::capture::{CaptureError, CaptureReader, Record};

/// A capture being read and decoded.
pub struct Session<R: Read> {
    reader: CaptureReader<R>,
    decoder: Decoder,
}

impl<R: Read> Session<R> {
    pub fn new(reader: CaptureReader<R>, decoder: Decoder) -> Self {
        Session { reader, decoder }
    }

    /// Calls `f` with every record and its decoding, in file order, until the capture ends, `f`
    /// breaks, or the file turns out unusable (the error names the byte offset; the records
    /// before it were seen). A record of a link type rocescope does not decode is passed with an
    /// empty, undecoded frame: listed, not decoded.
    pub fn run(&mut self, mut f: impl FnMut(&Record<'_>, &Decoded<'_, '_>) -> ControlFlow<()>) -> Result<(), CaptureError> {
        loop {
            // (The record is used where the reader returned it, by reference: moved out of the
            // `Result`, it was copied in wide pieces over the narrower writes that had just
            // filled it in, a store-forwarding stall per frame.)
            let next = self.reader.next_record();
            let rec = match &next {
                Ok(Some(rec)) => rec,
                Ok(None) => return Ok(()),
                Err(e) => return Err(e.clone()),
            };
            // (Decoded where it stays: a decoding is about 500 bytes, not to be copied per frame.)
            let link = crate::link_type(rec.linktype);
            let mut decoded = Decoded::new(link.unwrap_or(LinkType::RawIp), if link.is_some() { rec.data } else { &[] });
            if link.is_some() {
                self.decoder.decode_into(&mut decoded, rec.orig_len as usize);
            }
            if f(rec, &decoded).is_break() {
                return Ok(());
            }
        }
    }

    /// The decoder, for its detection statistics once the run is over.
    pub fn decoder(&self) -> &Decoder {
        &self.decoder
    }
}
