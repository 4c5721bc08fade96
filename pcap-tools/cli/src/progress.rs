//! Progress bars (indicatif) for long runs, on standard error, only on a terminal.

use std::io::{self, IsTerminal};

/// A progress bar over an input file's bytes, for `decode` and `check`: only when standard
/// error is a terminal and standard output is not (so the bar never mixes with the output), and
/// only for a regular file of known size.
pub struct FileBar(Option<indicatif::ProgressBar>, std::cell::Cell<u64>);

impl FileBar {
    pub fn for_file(path: &str) -> FileBar {
        let len = std::fs::metadata(path).ok().filter(|m| m.is_file()).map(|m| m.len());
        let show = path != "-" && io::stderr().is_terminal() && !io::stdout().is_terminal();
        let bar = len.filter(|_| show).map(|len| {
            let bar = indicatif::ProgressBar::new(len);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{prefix}{bar:30} {bytes}/{total_bytes} · {msg} frames · {elapsed}",
                )
                .expect("valid template"),
            );
            bar
        });
        FileBar(bar, std::cell::Cell::new(0))
    }

    /// Frame `frame` starts at byte `offset` of the file. (The bar moves every 4,096 frames:
    /// callers tick every frame, or once per batch with its last frame.)
    #[inline]
    pub fn tick(&self, frame: u64, offset: u64) {
        if let Some(bar) = &self.0 {
            if frame >= self.1.get() + 4096 || frame < self.1.get() {
                self.1.set(frame);
                bar.set_position(offset);
                bar.set_message(frame.to_string());
            }
        }
    }

    /// The bar from the start again, for another pass over the file, labelled `label`.
    pub fn restart(&self, label: &str) {
        if let Some(bar) = &self.0 {
            self.1.set(0);
            bar.reset();
            bar.set_prefix(format!("{label} "));
        }
    }
}

impl Drop for FileBar {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

/// `synth`'s bar: messages completed out of posted, with simulated time; only when standard
/// error is a terminal.
pub struct Synth {
    bar: Option<indicatif::ProgressBar>,
    show: Option<Box<dyn FnMut(&rocescope_sim::sim::Progress)>>,
}

impl Synth {
    pub fn new() -> Synth {
        if !io::stderr().is_terminal() {
            return Synth { bar: None, show: None };
        }
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("synth {bar:30} {pos}/{len} messages · {msg} · {elapsed}")
                .expect("valid template"),
        );
        let b = bar.clone();
        let show = move |p: &rocescope_sim::sim::Progress| {
            b.set_length(p.messages);
            b.set_position(p.completed);
            b.set_message(format!("{:.1} µs simulated, {} events", p.now as f64 / 1e3, p.events));
        };
        Synth { bar: Some(bar), show: Some(Box::new(show)) }
    }

    /// The callback the simulator calls, `None` when there is no bar.
    pub fn callback(&mut self) -> Option<&mut dyn FnMut(&rocescope_sim::sim::Progress)> {
        self.show.as_deref_mut().map(|f| f as &mut dyn FnMut(&rocescope_sim::sim::Progress))
    }
}

impl Drop for Synth {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
