//! Progress on standard error for long work: shown only when standard error is a terminal
//! and the work is large, so pipes and logs never receive it.

use indicatif::{HumanBytes, ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// Work on fewer bytes than this shows no progress.
pub const THRESHOLD: u64 = 256 << 20;

fn shown(total: u64) -> bool {
    total >= THRESHOLD && std::io::stderr().is_terminal()
}

/// A bar for `total` bytes of `what` (`"writing out.npy"`); hidden for small work or when
/// standard error is not a terminal.
pub fn bytes(what: &str, total: u64) -> ProgressBar {
    if !shown(total) {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template(
        "{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta} left)",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    ProgressBar::new(total)
        .with_style(style)
        .with_message(what.to_string())
}

/// A spinner for work on `total` bytes that reports no steps of its own (a gather from a
/// mapped file); hidden for small work or when standard error is not a terminal.
pub fn spinner(what: &str, total: u64) -> ProgressBar {
    if !shown(total) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner().with_message(format!("{what} ({})", HumanBytes(total)));
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}
