//! Where the analysers put what they will report but no longer work on — retransmissions,
//! losses and capture gaps behind the flows' windows, and finished messages — so that memory is
//! bounded by live flows and messages, not by the capture's length (issue 10, "Streaming").
//!
//! Records are appended to per-stream buffers (a stream per flow and kind); a full buffer goes
//! to the store as a chunk and its place is remembered, so a stream is read back whole at the
//! end in the order it was written. The store is a temporary file (`Spill::temp_file`, created
//! in the system's temporary directory and unlinked at once where the system allows it, as the
//! simulator's truth spill does) or, where there is no file system (the browser), memory
//! (`Spill::memory`: the same records, compactly).

use std::io::{self, Read, Seek, SeekFrom, Write};

/// Bytes a stream buffers before they go to the store.
const CHUNK: usize = 2048;

enum Store {
    Memory(Vec<u8>),
    File { file: std::fs::File, len: u64 },
}

/// The spill of one analysis.
pub struct Spill {
    store: Store,
    bufs: Vec<Vec<u8>>,
    chunks: Vec<Vec<(u64, u32)>>,
}

impl std::fmt::Debug for Spill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spill").field("streams", &self.bufs.len()).finish()
    }
}

impl Spill {
    /// A spill kept in memory.
    pub fn memory() -> Spill {
        Spill { store: Store::Memory(Vec::new()), bufs: Vec::new(), chunks: Vec::new() }
    }

    /// A spill in an unnamed temporary file ([`unnamed_temp_file`]).
    pub fn temp_file() -> io::Result<Spill> {
        let file = unnamed_temp_file("analysis")?;
        Ok(Spill { store: Store::File { file, len: 0 }, bufs: Vec::new(), chunks: Vec::new() })
    }

    /// A new stream's id.
    pub fn stream(&mut self) -> usize {
        self.bufs.push(Vec::new());
        self.chunks.push(Vec::new());
        self.bufs.len() - 1
    }

    /// Appends one record to a stream.
    pub fn push(&mut self, stream: usize, rec: &[u8]) -> io::Result<()> {
        self.bufs[stream].extend_from_slice(rec);
        if self.bufs[stream].len() >= CHUNK {
            self.flush(stream)?;
        }
        Ok(())
    }

    fn flush(&mut self, stream: usize) -> io::Result<()> {
        let buf = std::mem::take(&mut self.bufs[stream]);
        if buf.is_empty() {
            return Ok(());
        }
        let at = match &mut self.store {
            Store::Memory(v) => {
                let at = v.len() as u64;
                v.extend_from_slice(&buf);
                at
            }
            Store::File { file, len } => {
                let at = *len;
                file.seek(SeekFrom::Start(at))?;
                file.write_all(&buf)?;
                *len += buf.len() as u64;
                at
            }
        };
        self.chunks[stream].push((at, buf.len() as u32));
        let mut buf = buf;
        buf.clear();
        self.bufs[stream] = buf;
        Ok(())
    }

    /// How many chunks stream `stream` has in the store.
    pub fn chunk_count(&self, stream: usize) -> usize {
        self.chunks[stream].len()
    }

    /// Chunk `k` of stream `stream` (whole records: a chunk ends where a record does), into
    /// `buf`.
    pub fn read_chunk(&mut self, stream: usize, k: usize, buf: &mut Vec<u8>) -> io::Result<()> {
        let (at, len) = self.chunks[stream][k];
        buf.clear();
        buf.resize(len as usize, 0);
        match &mut self.store {
            Store::Memory(v) => buf.copy_from_slice(&v[at as usize..at as usize + len as usize]),
            Store::File { file, .. } => {
                file.seek(SeekFrom::Start(at))?;
                file.read_exact(buf)?;
            }
        }
        Ok(())
    }

    /// What stream `stream` has not yet sent to the store.
    pub fn unflushed(&self, stream: usize) -> &[u8] {
        &self.bufs[stream]
    }

    /// Every byte written to a stream, in order (the stream is then empty).
    pub fn take(&mut self, stream: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        for &(at, len) in &std::mem::take(&mut self.chunks[stream]) {
            let start = out.len();
            out.resize(start + len as usize, 0);
            match &mut self.store {
                Store::Memory(v) => out[start..].copy_from_slice(&v[at as usize..at as usize + len as usize]),
                Store::File { file, .. } => {
                    file.seek(SeekFrom::Start(at))?;
                    file.read_exact(&mut out[start..])?;
                }
            }
        }
        out.extend_from_slice(&std::mem::take(&mut self.bufs[stream]));
        Ok(out)
    }
}

/// A new temporary file, read and written, in the system's temporary directory
/// (`rocescope-WHAT-PID-N`), unlinked at once: it lives as long as the handle (on systems that
/// allow it; on others it is removed when the handle is dropped).
pub fn unnamed_temp_file(what: &str) -> io::Result<std::fs::File> {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("rocescope-{what}-{}-{n}", std::process::id()));
    let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
    let _ = std::fs::remove_file(&path);
    Ok(file)
}

/// Little-endian record writing and reading.
pub(crate) struct Rec(pub Vec<u8>);

impl Rec {
    pub fn new() -> Rec {
        Rec(Vec::with_capacity(96))
    }
    pub fn u8(mut self, v: u8) -> Rec {
        self.0.push(v);
        self
    }
    pub fn u32(mut self, v: u32) -> Rec {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(mut self, v: u64) -> Rec {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn opt(self, v: Option<u64>) -> Rec {
        self.u64(v.unwrap_or(u64::MAX))
    }
}

/// Reads records back.
pub(crate) struct Cursor<'a> {
    pub b: &'a [u8],
}

impl Cursor<'_> {
    pub fn done(&self) -> bool {
        self.b.is_empty()
    }
    pub fn u8(&mut self) -> u8 {
        let v = self.b.first().copied().unwrap_or(0);
        self.b = self.b.get(1..).unwrap_or(&[]);
        v
    }
    pub fn u32(&mut self) -> u32 {
        let mut a = [0u8; 4];
        let n = self.b.len().min(4);
        a[..n].copy_from_slice(&self.b[..n]);
        self.b = &self.b[n..];
        u32::from_le_bytes(a)
    }
    pub fn u64(&mut self) -> u64 {
        let mut a = [0u8; 8];
        let n = self.b.len().min(8);
        a[..n].copy_from_slice(&self.b[..n]);
        self.b = &self.b[n..];
        u64::from_le_bytes(a)
    }
    pub fn opt(&mut self) -> Option<u64> {
        Some(self.u64()).filter(|&v| v != u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_come_back_in_order_from_memory_and_file() {
        for mut s in [Spill::memory(), Spill::temp_file().expect("temp file")] {
            let a = s.stream();
            let b = s.stream();
            for i in 0..2000u32 {
                s.push(a, &Rec::new().u32(i).u64(i as u64 * 3).0).unwrap();
                if i % 3 == 0 {
                    s.push(b, &Rec::new().u8(i as u8).0).unwrap();
                }
            }
            let ra = s.take(a).unwrap();
            let mut c = Cursor { b: &ra };
            for i in 0..2000u32 {
                assert_eq!((c.u32(), c.u64()), (i, i as u64 * 3));
            }
            assert!(c.done());
            let rb = s.take(b).unwrap();
            assert_eq!(rb.len(), 667);
            assert_eq!(rb[1], 3);
        }
    }
}
