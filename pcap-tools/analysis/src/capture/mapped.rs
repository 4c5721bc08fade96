//! A regular capture file read through a memory-mapped window that slides forward, so records
//! are parsed where the kernel's page cache holds them: no `read()` copy into a buffer and no
//! moving of a partial record to the buffer's start (together a fifth of `rocescope flows`'
//! time on a cached capture). The window is replaced as reading moves on, so the memory mapped
//! at once is bounded by one window (two when windows are sent to another thread, below; or the
//! largest record), not by the file's size.
//!
//! The reading thread maps each window itself, unpopulated: its pages are mapped as the parser
//! first touches them, the kernel's fault-around mapping 16 pages a fault (cheaper than
//! `MAP_POPULATE`, which walks the pages one by one), and `MADV_SEQUENTIAL` has a capture that
//! is not in the page cache read ahead of the parser. A helper thread that mapped (populated)
//! the next window and unmapped the last one took the kernel's work off the reading thread, but
//! on a two-core machine it was a third busy thread beside `flows`' two: without it, `flows` on
//! `/tmp/bench/1m.pcapng` takes about the same CPU time and, in interleaved runs, less wall time
//! (median 1-13 % less in 9 of 11 sets; more only in the two taken under the heaviest load).
//! Each window may also be handed to another thread ([`MappedFile::send_windows_to`]), as a
//! [`Window`]: when mapped, to be faulted in ahead of the reading thread
//! ([`Window::fault_in_ahead`]), and when left behind, to be unmapped there; each window's
//! following one is then mapped as soon as it is, so that thread may fault it in before the
//! reader gets there (else the reader faulted in the start of every window itself). `flows`
//! has whichever of its two threads would otherwise wait do both (`analyze/run.rs`): a window
//! is held for faulting in only weakly, so that it is unmapped where the handle of the window
//! left is dropped.
//!
//! Pipes and standard input are read with `read()` by [`CaptureReader`](super::CaptureReader).

use std::fs::File;
use std::io;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Weak};

use memmap2::{Advice, Mmap, MmapOptions};

/// Bytes a window reaches (a longer record gets a window of its own).
const WINDOW: usize = (8 << 20) + (256 << 10);

/// Bytes one fault maps: Linux's fault-around maps the 16 pages (`fault_around_bytes`, 64 KiB
/// by default) of the aligned block of the address space that holds the faulting address, those
/// of them in the page cache. [`Window::fault_in_ahead`] touches one byte per block. (Where
/// the kernel maps less a fault, the reading thread faults in the rest itself, as without.)
const FAULT_BLOCK: usize = 64 << 10;

/// How far past the reading thread's last reported record [`Window::fault_in_ahead`] starts:
/// the thread is then at most a batch of `analyze::run` (about 256 KB of a capture) further on,
/// touching its pages itself; faulting them in from the other thread at the same time would
/// only have the two threads wait on each other.
const AHEAD: u64 = 512 << 10;

/// How far back from the end of the current window the following one starts, when windows are
/// sent ([`MappedFile::send_windows_to`]) and it is mapped ahead: the reader moves to the next
/// window at the first record that runs past the current one, so the following window serves
/// unless that record is longer than this.
const OVERLAP: usize = 256 << 10;

/// Maps `len` bytes of `file` from offset `at`, to be read from front to back.
fn map(file: &File, at: u64, len: usize) -> io::Result<Mmap> {
    // SAFETY: the mapping is read-only and private to this reader and the thread its windows
    // are sent to, if any ([`Window`], which reads it through bounds-checked slices as the
    // reader does), and lives as long as either holds it (the slices the reader lends from it
    // end at its next call; a `Window`'s are its own). What is not under our
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
    /// The window (`None` before the first and past the last byte), shared with the thread
    /// windows are sent to, if any.
    map: Option<Arc<Mmap>>,
    /// Where windows go when mapped and when left behind ([`Self::send_windows_to`]); none:
    /// a window left behind is unmapped here.
    windows: Option<Sender<Window>>,
    /// The window after this one, mapped ahead (its file offset, its mapping) when windows are
    /// sent, so that their receiver may fault it in before the reader gets there.
    following: Option<(u64, Arc<Mmap>)>,
}

/// A window of a mapped capture handed to another thread ([`MappedFile::send_windows_to`]):
/// when the reader has just mapped it, to be faulted in ahead of the reader
/// ([`fault_in_ahead`](Self::fault_in_ahead)), a weak hold that does not keep it mapped; when
/// the reader has left it, to be unmapped where this handle is dropped (the reader holds it no
/// more).
pub struct Window {
    map: Hold,
    /// File offset of the window's first byte.
    at: u64,
    /// The window's length in bytes.
    len: usize,
    /// Offset in the window from which it may still have pages to fault in (its length: none).
    next: usize,
}

/// How a [`Window`] holds its mapping.
enum Hold {
    /// A window just mapped, held weakly: faulting it in ahead never keeps it mapped, so it is
    /// unmapped by whichever thread drops the window once left (below), not by one that happens
    /// to still hold it for faulting in.
    Ahead(Weak<Mmap>),
    /// A window the reader has left: unmapped when this is dropped (unless faulting in still
    /// reads it at that moment; then there). (Held, never read.)
    Left(#[allow(dead_code)] Arc<Mmap>),
}

impl Window {
    /// Whether the window may still have pages to fault in ahead of the reader (false for a
    /// window the reader has left).
    pub fn ahead(&self) -> bool {
        matches!(self.map, Hold::Ahead(_)) && self.next < self.len
    }

    /// Another handle on the same window, from the same point, for another thread to fault it
    /// in ahead too (a window left has nothing to fault in: the copy has none either, and holds
    /// nothing).
    pub fn share(&self) -> Window {
        let (map, next) = match &self.map {
            Hold::Ahead(w) => (Weak::clone(w), self.next),
            Hold::Left(_) => (Weak::new(), self.len),
        };
        Window { map: Hold::Ahead(map), at: self.at, len: self.len, next }
    }

    /// A window just mapped, to be faulted in from `next` on.
    fn ahead_of(map: &Arc<Mmap>, at: u64, next: usize) -> Window {
        Window { map: Hold::Ahead(Arc::downgrade(map)), at, len: map.len(), next }
    }

    /// A window the reader has left, to be unmapped where it is dropped.
    fn left(map: Arc<Mmap>, at: u64) -> Window {
        let len = map.len();
        Window { map: Hold::Left(map), at, len, next: len }
    }

    /// Faults in the next block of the window's pages (one fault: [`FAULT_BLOCK`]) past the
    /// reader's position, `reader_at` (the file offset of a record it has read), so the reader
    /// finds them mapped; `false` when none is left. A thread that would otherwise wait for the
    /// reader calls it: the page faults, a sixth of `flows`' reading thread, move to it.
    pub fn fault_in_ahead(&mut self, reader_at: u64) -> bool {
        if !self.ahead() {
            return false;
        }
        // (Gone: the reader has left it and it is unmapped already.)
        let Hold::Ahead(weak) = &self.map else { return false };
        let Some(map) = weak.upgrade() else {
            self.next = self.len;
            return false;
        };
        let bytes: &[u8] = &map;
        let from = reader_at.saturating_add(AHEAD).saturating_sub(self.at);
        let i = self.next.max(usize::try_from(from).unwrap_or(usize::MAX));
        let Some(&byte) = bytes.get(i) else {
            self.next = bytes.len();
            return false;
        };
        // (Read, not written: a read fault maps the page cache's pages themselves. The byte is
        // kept from being optimised away; reading it is safe, whatever the file then holds.)
        std::hint::black_box(byte);
        let addr = bytes.as_ptr() as usize + i;
        self.next = i + (FAULT_BLOCK - addr % FAULT_BLOCK);
        true
    }
}

impl MappedFile {
    /// `file` to be read by mapping, or `Err` (giving it back) when it is not a regular file
    /// (a pipe, a terminal, a character device: read those with `read()`).
    pub fn new(file: File) -> Result<MappedFile, File> {
        match file.metadata() {
            Ok(m) if m.is_file() => {
                Ok(MappedFile { file, len: m.len(), at: 0, map: None, windows: None, following: None })
            }
            _ => Err(file),
        }
    }

    /// Has every window sent to `to` when mapped (the current one at once) and again when left
    /// behind ([`Window`]): the receiving thread may fault the pages in ahead of the reader, and
    /// dropping the windows left behind, it unmaps them (their page tables torn down), work the
    /// reading thread then does not do. Each window's following one is then mapped (and sent)
    /// as soon as it is, so the receiver may fault it in before the reader gets there. (In
    /// `analyze_threaded` the analysing thread, which waits for the reading one, takes them.)
    pub fn send_windows_to(&mut self, to: Sender<Window>) {
        if let Some(map) = &self.map {
            // (Should the receiver be gone, the window comes back in the error and is dropped.)
            drop(to.send(Window::ahead_of(map, self.at, 0)));
        }
        self.windows = Some(to);
        // (Only a head start: a failure to map it here maps it when it is needed.)
        let _ = self.map_following();
    }

    /// Maps the window following the current one ahead, starting [`OVERLAP`] bytes before the
    /// current one's end, and sends it (when windows are sent and the file goes on).
    fn map_following(&mut self) -> io::Result<()> {
        let (Some(to), Some(current)) = (&self.windows, &self.map) else { return Ok(()) };
        let end = self.at + current.len() as u64;
        if end >= self.len {
            return Ok(());
        }
        let at = end - OVERLAP.min(current.len()) as u64;
        let m = Arc::new(map(&self.file, at, (self.len - at).min(WINDOW as u64) as usize)?);
        // (The reader starts in it near the overlap's end: its pages before are not faulted in.)
        let next = OVERLAP.saturating_sub(FAULT_BLOCK);
        drop(to.send(Window::ahead_of(&m, at, next)));
        self.following = Some((at, m));
        Ok(())
    }

    /// The file's length, as it was when opened.
    pub fn file_len(&self) -> u64 {
        self.len
    }

    /// The mapped bytes, from file offset [`at`](Self::at).
    ///
    /// (Read twice a record. Written as a `match` and always inlined: `as_deref().map_or(..)`
    /// over the `Arc` cost `decode` 1.2 % more instructions than the window held by value had,
    /// this 0.35 %: the load through the `Arc`.)
    #[inline(always)]
    pub fn bytes(&self) -> &[u8] {
        match &self.map {
            Some(m) => m,
            None => &[],
        }
    }

    /// File offset of [`bytes`](Self::bytes)' first byte.
    pub fn at(&self) -> u64 {
        self.at
    }

    /// Makes the window hold file offset `from` and at least `need` bytes after it (fewer only
    /// at the end of the file); `from` is then at `bytes()[from - at()]`: the following window
    /// mapped ahead when it holds them, else a new one from `from`. The previous window is let
    /// go first: nothing may still borrow it (the reader lends records only until its next
    /// call).
    pub fn slide(&mut self, from: u64, need: usize) -> io::Result<()> {
        let left = self.map.take();
        self.leave(left, self.at);
        let from = from.min(self.len);
        // The window mapped ahead, when it holds what is needed (all of it, or the file's end).
        if let Some((at, m)) = self.following.take() {
            let end = at + m.len() as u64;
            if at <= from && (from.saturating_add(need as u64) <= end || end == self.len) {
                self.at = at;
                self.map = Some(m);
                // (Only a head start: a failure to map it here maps it when it is needed.)
                let _ = self.map_following();
                return Ok(());
            }
            self.leave(Some(m), at);
        }
        self.at = from;
        let len = (self.len - from).min(need.max(WINDOW) as u64) as usize;
        if len > 0 {
            let m = Arc::new(map(&self.file, from, len)?);
            if let Some(to) = &self.windows {
                drop(to.send(Window::ahead_of(&m, from, 0)));
            }
            self.map = Some(m);
            let _ = self.map_following();
        }
        Ok(())
    }

    /// Lets go of a window the reader is done with: sent to be unmapped by the receiver of
    /// windows, if any (with nothing left to fault in), else unmapped here.
    fn leave(&self, window: Option<Arc<Mmap>>, at: u64) {
        if let (Some(old), Some(to)) = (window, &self.windows) {
            // (Should the receiver be gone, the window comes back in the error and is dropped.)
            drop(to.send(Window::left(old, at)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `len` bytes (byte `i` is `i % 251`), opened for mapping.
    fn file(len: usize) -> MappedFile {
        let path = std::env::temp_dir().join(format!("rocescope-mapped-test-{}-{len}", std::process::id()));
        std::fs::write(&path, (0..len).map(|i| (i % 251) as u8).collect::<Vec<u8>>()).unwrap();
        let file = File::open(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let Ok(m) = MappedFile::new(file) else { panic!("a regular file") };
        m
    }

    /// The current window goes out at once and the following one, mapped ahead, with it; the
    /// reader moves into the following one, and the one it left goes out again (with nothing
    /// to fault in); a window faults in from past the reader to its end, one block a call.
    #[test]
    fn windows_are_sent_when_mapped_and_when_left_and_fault_in_to_their_end() {
        let len = WINDOW + (300 << 10);
        let mut m = file(len);
        m.slide(0, 1).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        m.send_windows_to(tx);
        let mut first = rx.try_recv().unwrap();
        assert!(first.ahead());
        assert_eq!(first.at, 0);
        // Past the reader (at 0) by `AHEAD`, then block by block (the first block may be cut
        // where the mapping's start is not aligned to one).
        let mut steps = 0;
        while first.fault_in_ahead(0) {
            steps += 1;
        }
        let blocks = (WINDOW - AHEAD as usize).div_ceil(FAULT_BLOCK);
        assert!((blocks..=blocks + 1).contains(&steps), "{steps} steps for {blocks} blocks");
        assert!(!first.ahead());
        let mut following = rx.try_recv().unwrap();
        assert_eq!(following.at, (WINDOW - OVERLAP) as u64);
        assert!(following.fault_in_ahead(0));
        assert!(rx.try_recv().is_err());
        // The record at the first window's end is in the following one: no new mapping.
        m.slide(WINDOW as u64 - 10, 20).unwrap();
        assert_eq!(m.at(), (WINDOW - OVERLAP) as u64);
        let left = rx.try_recv().unwrap();
        assert!(!left.ahead());
        assert!(rx.try_recv().is_err());
        // A reader already past the window: nothing to fault in.
        assert!(!following.fault_in_ahead(len as u64));
        drop((first, left, following));
        // The reader's window is its own to read still, to the file's end.
        assert_eq!(m.bytes().len(), len - (WINDOW - OVERLAP));
        assert_eq!(m.bytes()[OVERLAP - 10], ((WINDOW - 10) % 251) as u8);
    }

    /// A record longer than the following window holds, or starting before it, gets a window of
    /// its own; the one mapped ahead is let go.
    #[test]
    fn a_record_the_following_window_does_not_hold_is_mapped_apart() {
        let len = 2 * WINDOW + (300 << 10);
        let mut m = file(len);
        m.slide(0, 1).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        m.send_windows_to(tx);
        let (_first, following) = (rx.try_recv().unwrap(), rx.try_recv().unwrap());
        assert_eq!(following.at, (WINDOW - OVERLAP) as u64);
        drop(following);
        let from = (WINDOW - 100) as u64;
        m.slide(from, WINDOW + 1000).unwrap();
        assert_eq!(m.at(), from);
        assert_eq!(m.bytes().len(), WINDOW + 1000);
        assert_eq!(m.bytes()[0], (from % 251) as u8);
        // The first window and the one mapped ahead, both left; the new one and its following.
        let sent: Vec<Window> = rx.try_iter().collect();
        assert_eq!(sent.iter().filter(|w| !w.ahead()).count(), 2);
        assert_eq!(
            sent.iter().filter(|w| w.ahead()).map(|w| w.at).collect::<Vec<_>>(),
            vec![from, from + (WINDOW + 1000 - OVERLAP) as u64]
        );
        // Slid back before the window mapped ahead: mapped apart too.
        m.slide(from + 10, 10).unwrap();
        assert_eq!(m.at(), from + 10);
    }
}
