//! A regular capture file read through a memory-mapped window that slides forward, so records
//! are parsed where the kernel's page cache holds them: no `read()` copy into a buffer and no
//! moving of a partial record to the buffer's start (together a fifth of `rocescope flows`'
//! time on a cached capture). The window is replaced as reading moves on, so the memory mapped
//! at once is bounded by one window (or the largest record), not by the file's size.
//!
//! The reading thread maps each window itself, unpopulated: its pages are mapped as the parser
//! first touches them, the kernel's fault-around mapping 16 pages a fault (cheaper than
//! `MAP_POPULATE`, which walks the pages one by one), and `MADV_SEQUENTIAL` has a capture that
//! is not in the page cache read ahead of the parser. A helper thread that mapped (populated)
//! the next window and unmapped the last one took the kernel's work off the reading thread, but
//! on a two-core machine it was a third busy thread beside `flows`' two: without it, `flows` on
//! `/tmp/bench/1m.pcapng` takes about the same CPU time and, in interleaved runs, less wall time
//! (median 1-13 % less in 9 of 11 sets; more only in the two taken under the heaviest load).
//! The windows left behind may be handed to another thread to unmap ([`MappedFile::retire_to`]):
//! `flows` has its analysing thread, the less busy one, tear them down between batches.
//!
//! Pipes and standard input are read with `read()` by [`CaptureReader`](super::CaptureReader).

use std::fs::File;
use std::io;
use std::sync::mpsc::Sender;

use memmap2::{Advice, Mmap, MmapOptions};

/// Bytes a window reaches (a longer record gets a window of its own).
const WINDOW: usize = (8 << 20) + (256 << 10);

/// Maps `len` bytes of `file` from offset `at`, to be read from front to back.
fn map(file: &File, at: u64, len: usize) -> io::Result<Mmap> {
    // SAFETY: the mapping is read-only and private to this reader, and lives no longer than
    // the reader (the slices lent from it end at the reader's next call). What is not under our
    // control is the file itself: another process writing it while we read changes the bytes
    // under the parser (it reads them through bounds-checked slices, so the records read are
    // garbage but nothing else happens in practice), and one truncating it below the window
    // makes the next access to the lost pages raise SIGBUS, which ends the process. A capture
    // being written while analysed should be piped in (`-`), which is read with `read()`.
    let m = unsafe { MmapOptions::new().offset(at).len(len).map(file) }?;
    // (Only advice: a kernel that ignores it reads the file all the same.)
    let _ = m.advise(Advice::Sequential);
    Ok(m)
}

/// A regular file and the window of it currently mapped.
pub struct MappedFile {
    file: File,
    /// The file's length when it was opened: what is read.
    len: u64,
    /// File offset of the window's first byte.
    at: u64,
    /// The window (`None` before the first and past the last byte).
    map: Option<Mmap>,
    /// Where windows left behind go to be unmapped ([`Self::retire_to`]); dropped here if none.
    retire: Option<Sender<Retired>>,
}

/// A window left behind, handed to another thread to be unmapped (its type erased).
pub type Retired = Box<dyn Send>;

impl MappedFile {
    /// `file` to be read by mapping, or `Err` (giving it back) when it is not a regular file
    /// (a pipe, a terminal, a character device: read those with `read()`).
    pub fn new(file: File) -> Result<MappedFile, File> {
        match file.metadata() {
            Ok(m) if m.is_file() => Ok(MappedFile { file, len: m.len(), at: 0, map: None, retire: None }),
            _ => Err(file),
        }
    }

    /// Has the windows left behind sent to `to`, whose receiver drops them: unmapping a window
    /// (its page tables torn down) then costs the receiving thread, not the reading one. (In
    /// `analyze_threaded` the analysing thread, which waits for the reading one, takes them.)
    pub fn retire_to(&mut self, to: Sender<Retired>) {
        self.retire = Some(to);
    }

    /// The file's length, as it was when opened.
    pub fn file_len(&self) -> u64 {
        self.len
    }

    /// The mapped bytes, from file offset [`at`](Self::at).
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    /// File offset of [`bytes`](Self::bytes)' first byte.
    pub fn at(&self) -> u64 {
        self.at
    }

    /// Makes the window hold file offset `from` and at least `need` bytes after it (fewer only
    /// at the end of the file); `from` is then at `bytes()[from - at()]`. The previous window is
    /// let go first: nothing may still borrow it (the reader lends records only until its next
    /// call).
    pub fn slide(&mut self, from: u64, need: usize) -> io::Result<()> {
        if let (Some(old), Some(to)) = (self.map.take(), &self.retire) {
            // (Should the receiver be gone, the window comes back in the error and is dropped.)
            drop(to.send(Box::new(old)));
        }
        let from = from.min(self.len);
        self.at = from;
        let len = (self.len - from).min(need.max(WINDOW) as u64) as usize;
        if len > 0 {
            self.map = Some(map(&self.file, from, len)?);
        }
        Ok(())
    }
}
