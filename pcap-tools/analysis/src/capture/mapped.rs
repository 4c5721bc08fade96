//! A regular capture file read through a memory-mapped window that slides forward, so records
//! are parsed where the kernel's page cache holds them: no `read()` copy into a buffer and no
//! moving of a partial record to the buffer's start (together a fifth of `rocescope flows`'
//! time on a cached capture). The window is replaced as reading moves on, so the memory mapped
//! at once is bounded by a few windows (or the largest record), not by the file's size.
//!
//! Setting up a window's page tables (`MAP_POPULATE`) and tearing down the last one cost about
//! as much as copying the bytes would: a helper thread does both, mapping the next window while
//! the reader parses the current one, and unmapping the windows left behind. The reading thread
//! (the busier one of `flows`' two) then only parses.
//!
//! Pipes and standard input are read with `read()` by [`CaptureReader`](super::CaptureReader).

use std::fs::File;
use std::io;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use memmap2::{Mmap, MmapOptions};

/// Bytes a window advances by.
const WINDOW: usize = 8 << 20;
/// Bytes a window reaches into the next one, so a record that starts near its end is still whole
/// in it (a longer record gets a window of its own).
const OVERLAP: usize = 256 << 10;

/// What the helper thread is asked to do.
enum Job {
    /// Map (and populate) `len` bytes from file offset `at`.
    Map { at: u64, len: usize },
    /// Unmap a window the reader is done with.
    Unmap(Mmap),
}

/// The helper thread's side: jobs in, windows out.
struct Helper {
    jobs: Sender<Job>,
    windows: Receiver<io::Result<Mmap>>,
}

impl Helper {
    /// Starts the helper over `file`; `None` if no thread can be started (the reader then does
    /// the mapping itself).
    fn start(file: Arc<File>) -> Option<Helper> {
        let (jobs, job_rx) = channel::<Job>();
        let (win_tx, windows) = channel();
        std::thread::Builder::new()
            .name("capture-map".into())
            .spawn(move || {
                // Ends when the reader drops its side.
                for job in job_rx {
                    match job {
                        Job::Map { at, len } => {
                            if win_tx.send(map(&file, at, len)).is_err() {
                                return;
                            }
                        }
                        Job::Unmap(m) => drop(m),
                    }
                }
            })
            .ok()?;
        Some(Helper { jobs, windows })
    }
}

/// Maps `len` bytes of `file` from offset `at`, populated.
fn map(file: &File, at: u64, len: usize) -> io::Result<Mmap> {
    // SAFETY: the mapping is read-only and private to this reader, and lives no longer than
    // the reader (the slices lent from it end at the reader's next call). What is not under our
    // control is the file itself: another process writing it while we read changes the bytes
    // under the parser (it reads them through bounds-checked slices, so the records read are
    // garbage but nothing else happens in practice), and one truncating it below the window
    // makes the next access to the lost pages raise SIGBUS, which ends the process. A capture
    // being written while analysed should be piped in (`-`), which is read with `read()`.
    unsafe { MmapOptions::new().offset(at).len(len).populate().map(file) }
}

/// A regular file and the window of it currently mapped.
pub struct MappedFile {
    file: Arc<File>,
    /// The file's length when it was opened: what is read.
    len: u64,
    /// File offset of the window's first byte.
    at: u64,
    /// The window (`None` before the first and past the last byte).
    map: Option<Mmap>,
    /// The helper thread, once the file turns out larger than one window.
    helper: Option<Helper>,
    /// The window the helper is mapping ahead: its offset and length.
    ahead: Option<(u64, usize)>,
}

impl MappedFile {
    /// `file` to be read by mapping, or `Err` (giving it back) when it is not a regular file
    /// (a pipe, a terminal, a character device: read those with `read()`).
    pub fn new(file: File) -> Result<MappedFile, File> {
        match file.metadata() {
            Ok(m) if m.is_file() => Ok(MappedFile { file: Arc::new(file), len: m.len(), at: 0, map: None, helper: None, ahead: None }),
            _ => Err(file),
        }
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
        if let Some(old) = self.map.take() {
            match &self.helper {
                // (Should the helper be gone, the window comes back in the error and is dropped.)
                Some(h) => drop(h.jobs.send(Job::Unmap(old))),
                None => drop(old),
            }
        }
        let from = from.min(self.len);
        let fits = |at: u64, len: usize| at <= from && (from + need as u64 <= at + len as u64 || at + len as u64 == self.len);
        // The window mapped ahead, when it holds what is asked for.
        if let Some((at, len)) = self.ahead.take() {
            let ready = self.helper.as_ref().and_then(|h| h.windows.recv().ok());
            match ready {
                Some(Ok(m)) if fits(at, len) => {
                    self.map = Some(m);
                    self.at = at;
                }
                // Not what is needed (a long record), or it failed: mapped here instead.
                Some(Ok(m)) => drop(m),
                Some(Err(_)) | None => {}
            }
        }
        if self.map.is_none() {
            self.at = from;
            let len = (self.len - from).min(need.max(WINDOW + OVERLAP) as u64) as usize;
            if len == 0 {
                return Ok(());
            }
            self.map = Some(map(&self.file, from, len)?);
        }
        // Ask for the next window while this one is read.
        let next = self.at + WINDOW as u64;
        if next < self.len && self.at + (self.bytes().len() as u64) < self.len {
            if self.helper.is_none() {
                self.helper = Helper::start(self.file.clone());
            }
            if let Some(h) = &self.helper {
                let len = (self.len - next).min((WINDOW + OVERLAP) as u64) as usize;
                if h.jobs.send(Job::Map { at: next, len }).is_ok() {
                    self.ahead = Some((next, len));
                }
            }
        }
        Ok(())
    }
}
