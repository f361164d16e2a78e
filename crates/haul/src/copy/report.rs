//! What `haul copy` and `haul sync` say at the end: a summary line, notes, the itemized changes,
//! failures; or all of it as JSON.

use haul_files::{ChangeKind, Summary};
use haul_net::Stats;
use serde::Serialize;

/// The outcome of a copy, as `--json` prints it.
#[derive(Serialize)]
pub struct Report {
    direction: &'static str,
    remote: String,
    dry_run: bool,
    files: u64,
    dirs: u64,
    symlinks: u64,
    bytes: u64,
    bytes_sent: u64,
    bytes_resumed: u64,
    bytes_matched: u64,
    up_to_date: u64,
    deleted: u64,
    seconds: f64,
    throughput_bps: f64,
    changes: Vec<Change>,
    pub failures: Vec<Failure>,
    retransmitted_packets: u64,
    rtt_ms: f64,
}

/// One entry that could not be copied.
#[derive(Serialize)]
pub struct Failure {
    path: String,
    error: String,
}

/// One change at the destination.
#[derive(Serialize)]
struct Change {
    change: &'static str,
    path: String,
}

fn change_name(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Created => "created",
        ChangeKind::Updated => "updated",
        ChangeKind::Deleted => "deleted",
    }
}

impl Report {
    /// The report of a copy `direction` ("upload" or "download") with `remote`.
    pub fn new(
        direction: &'static str,
        remote: String,
        summary: &Summary,
        seconds: f64,
        stats: &Stats,
        dry_run: bool,
    ) -> Self {
        Self {
            direction,
            remote,
            dry_run,
            files: summary.files,
            dirs: summary.dirs,
            symlinks: summary.symlinks,
            bytes: summary.bytes,
            bytes_sent: summary.bytes_sent,
            bytes_resumed: summary.bytes_resumed,
            bytes_matched: summary.bytes_matched,
            up_to_date: summary.up_to_date,
            deleted: summary.deleted,
            seconds,
            throughput_bps: if dry_run {
                0.0
            } else {
                summary.bytes_sent as f64 * 8.0 / seconds.max(1e-9)
            },
            changes: summary
                .changes
                .iter()
                .map(|c| Change {
                    change: change_name(c.kind),
                    path: c.path.clone(),
                })
                .collect(),
            failures: summary
                .failures
                .iter()
                .map(|(path, error)| Failure {
                    path: path.clone(),
                    error: error.clone(),
                })
                .collect(),
            retransmitted_packets: stats.packets_retransmitted,
            rtt_ms: stats.rtt.as_secs_f64() * 1e3,
        }
    }

    /// Prints the report for a person: the changes (if `itemize` or dry), a summary line and
    /// notes on stdout, failures on stderr.
    pub fn print(&self, itemize: bool) {
        if itemize || self.dry_run {
            for c in &self.changes {
                println!("{:8} {}", c.change, c.path);
            }
        }
        let (verb, bytes) = match (self.direction, self.dry_run) {
            ("upload", false) => ("sent to", "sent"),
            (_, false) => ("received from", "received"),
            ("upload", true) => ("compared with", "would send"),
            (_, true) => ("compared with", "would receive"),
        };
        let time = if self.dry_run {
            String::from("(dry run: nothing changed)")
        } else {
            format!(
                "in {:.1} s ({})",
                self.seconds,
                crate::units::rate(self.throughput_bps)
            )
        };
        println!(
            "{} files, {} directories, {} symlinks {verb} {}: {bytes} {} {time}",
            self.files,
            self.dirs,
            self.symlinks,
            self.remote,
            crate::units::bytes(self.bytes_sent),
        );
        let mut notes = Vec::new();
        if self.up_to_date > 0 {
            notes.push(format!("{} files already up to date", self.up_to_date));
        }
        if self.bytes_matched > 0 {
            notes.push(format!(
                "{} of changed files already there",
                crate::units::bytes(self.bytes_matched)
            ));
        }
        if self.bytes_resumed > 0 {
            notes.push(format!(
                "{} resumed from partial files",
                crate::units::bytes(self.bytes_resumed)
            ));
        }
        if self.deleted > 0 {
            let verb = if self.dry_run { "to delete" } else { "deleted" };
            notes.push(format!("{} entries {verb}", self.deleted));
        }
        if !notes.is_empty() {
            println!("  {}", notes.join("; "));
        }
        for f in &self.failures {
            eprintln!("haul: {}: {}", f.path, f.error);
        }
    }
}
