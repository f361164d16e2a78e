//! The progress bar: bytes, rate, ETA and files, redrawn from the engine's counters.

use haul_files::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A bar on stderr (drawn only when stderr is a terminal).
pub struct Bar {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl Bar {
    /// Starts redrawing from `progress` five times a second.
    pub fn start(progress: Arc<Progress>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{wide_bar} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta} {msg}",
                )
                .expect("a valid template"),
            );
            while !flag.load(Ordering::Relaxed) {
                update(&bar, &progress);
                std::thread::sleep(Duration::from_millis(200));
            }
            update(&bar, &progress);
            bar.finish_and_clear();
        });
        Self { stop, thread }
    }

    /// Stops and removes the bar.
    pub fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

fn update(bar: &ProgressBar, p: &Progress) {
    bar.set_length(p.bytes_total.load(Ordering::Relaxed));
    bar.set_position(p.bytes_done.load(Ordering::Relaxed));
    bar.set_message(format!(
        "{}/{} files",
        p.files_done.load(Ordering::Relaxed),
        p.files_total.load(Ordering::Relaxed)
    ));
}
