//! A regular capture file read through a memory-mapped window that slides forward, so records
//! are parsed where the kernel's page cache holds them: no `read()` copy into a buffer and no
//! moving of a partial record to the buffer's start (together a fifth of `rocescope flows`'
//! time on a cached capture). The window is replaced as reading moves on, so the memory mapped
//! at once is bounded by [`WINDOW`] (or the largest record), not by the file's size.
//! Pipes and standard input are read with `read()` by [`CaptureReader`](super::CaptureReader).

use std::fs::File;
use std::io;

use memmap2::{Advice, Mmap, MmapOptions};

/// Bytes mapped at once (more only for a larger record).
const WINDOW: usize = 8 << 20;

/// A regular file and the window of it currently mapped.
pub struct MappedFile {
    file: File,
    /// The file's length when it was opened: what is read.
    len: u64,
    /// File offset of the window's first byte.
    at: u64,
    /// The window (`None` before the first and past the last byte).
    map: Option<Mmap>,
}

impl MappedFile {
    /// `file` to be read by mapping, or `Err` (giving it back) when it is not a regular file
    /// (a pipe, a terminal, a character device: read those with `read()`).
    pub fn new(file: File) -> Result<MappedFile, File> {
        match file.metadata() {
            Ok(m) if m.is_file() => Ok(MappedFile { file, len: m.len(), at: 0, map: None }),
            _ => Err(file),
        }
    }

    /// The file's length, as it was when opened.
    pub fn len(&self) -> u64 {
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

    /// Maps the window that starts at file offset `from` and holds at least `need` bytes (fewer
    /// only at the end of the file). The previous window is unmapped first: nothing may still
    /// borrow it (the reader lends records only until its next call).
    pub fn slide(&mut self, from: u64, need: usize) -> io::Result<()> {
        self.map = None;
        self.at = from.min(self.len);
        let len = (self.len - self.at).min(need.max(WINDOW) as u64) as usize;
        if len == 0 {
            return Ok(());
        }
        // SAFETY: the mapping is read-only and private to this reader, and lives no longer than
        // `self` (the slices lent from it end at the next call). What is not under our control
        // is the file itself: another process writing it while we read changes the bytes under
        // the parser (it reads them through bounds-checked slices, so the records read are
        // garbage but nothing else happens in practice), and one truncating it below the
        // window makes the next access to the lost pages raise SIGBUS, which ends the process.
        // A capture being written while analysed should be piped in (`-`), which is read with
        // `read()`.
        let map = unsafe { MmapOptions::new().offset(self.at).len(len).populate().map(&self.file)? };
        // (Advice only: reading goes on whether or not the kernel takes it.)
        let _ = map.advise(Advice::Sequential);
        self.map = Some(map);
        Ok(())
    }
}
