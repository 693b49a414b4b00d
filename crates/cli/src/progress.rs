//! Progress on stderr: an indicatif bar when stderr is a terminal, otherwise plain lines (one per
//! change of the count, at most one a second, and a heartbeat every 30 s) that read well in CI
//! logs and pipes.
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress {
    label: &'static str,
    bar: Option<ProgressBar>,
    last_line: Option<(Instant, u64, u64)>,
}

impl Progress {
    pub fn new(label: &'static str, total: u64) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total);
            let style = ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("#>-");
            bar.set_style(style);
            bar.set_prefix(label);
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress { label, bar, last_line: None }
    }

    pub fn update(&mut self, done: u64, total: u64, message: &str) {
        if let Some(bar) = &self.bar {
            bar.set_length(total);
            bar.set_position(done);
            bar.set_message(message.to_string());
            return;
        }
        let due = match self.last_line {
            None => true,
            Some((at, d, t)) => {
                let changed = (d, t) != (done, total);
                (changed && (done == total || at.elapsed() >= Duration::from_secs(1)))
                    || at.elapsed() >= Duration::from_secs(30)
            }
        };
        if due {
            eprintln!("edgerag: {} {done}/{total} {message}", self.label);
            self.last_line = Some((Instant::now(), done, total));
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish();
        }
    }
}
