//! # haul-files
//!
//! haul's file engine, independent of the transport: it copies files, directories and symlinks
//! over any reliable byte stream (a haul connection, a pipe, TCP).
//!
//! * The sender lists the sources ([`manifest`]) and streams the manifest; the receiver answers
//!   every regular file at once with what it needs (nothing if the destination already has the
//!   same size and mtime; the chunks missing from a partial file otherwise), so many small files
//!   cost no round trip each.
//! * Files travel in chunks, each hashed with BLAKE3 as it is read and checked as it arrives;
//!   the whole-file digest is BLAKE3 over the chunk hashes, so resuming re-reads nothing a partial
//!   file already holds: the receiver sends the journaled hashes of those chunks (recorded for the
//!   same source size and mtime) and the sender folds them into the digest.
//! * Data lands in `.NAME.haul-part`, is `fdatasync`ed (small files in batches, with `syncfs`),
//!   and is renamed over `NAME` only once its digest matches: a failed or interrupted copy never
//!   leaves a partial file under the destination name. Chunks of large files are recorded in a
//!   [`journal`] once durable, so an interrupted copy resumes without re-sending them.
//! * A file that changed at the source is not sent whole: the receiver offers the hashes of its
//!   older version's chunks (at the same offsets), the sender sends only the chunks that differ,
//!   and the receiver copies the others from the older file before checking the digest.
//! * Mirroring ([`SendOptions::delete`]): the receiver removes, inside each directory the copy
//!   made or updated, what the source does not have.
//! * Every path from the peer is a [`path::RelPath`] (no `..`, nothing absolute), and the
//!   receiver refuses to write through a symlink below the destination.

#![warn(missing_docs)]

mod basis;
pub mod frame;
pub mod journal;
pub mod manifest;
mod mirror;
pub mod path;
mod recv;
mod send;

pub use recv::{receive, receive_with, ReceiveOptions};
pub use send::{send, SendOptions};

use std::sync::atomic::{AtomicU64, Ordering};
use thiserror::Error;

/// Default chunk size: 1 MiB (resume granularity and hashing unit).
pub const DEFAULT_CHUNK_SIZE: u32 = 1 << 20;

/// Live counters for a progress display, updated by either side while it works.
#[derive(Debug, Default)]
pub struct Progress {
    /// Bytes of regular files in the manifest.
    pub bytes_total: AtomicU64,
    /// Bytes transferred or found already present.
    pub bytes_done: AtomicU64,
    /// Entries in the manifest.
    pub files_total: AtomicU64,
    /// Entries settled.
    pub files_done: AtomicU64,
}

impl Progress {
    fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// What a copy did, as seen by one side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Regular files in the manifest.
    pub files: u64,
    /// Directories in the manifest.
    pub dirs: u64,
    /// Symlinks in the manifest.
    pub symlinks: u64,
    /// Bytes of regular files in the manifest.
    pub bytes: u64,
    /// File data sent over the connection.
    pub bytes_sent: u64,
    /// File data not sent because a partial file already held it, verified.
    pub bytes_resumed: u64,
    /// File data not sent because the destination's older version of the file held the same
    /// bytes at the same offset (compared by BLAKE3 chunk hashes).
    pub bytes_matched: u64,
    /// Entries removed from the destination because the source no longer has them (mirroring).
    pub deleted: u64,
    /// Files already up to date at the destination.
    pub up_to_date: u64,
    /// Entries that could not be copied: path and reason.
    pub failures: Vec<(String, String)>,
    /// What changed at the destination (or, dry, would change), when asked to itemize.
    pub changes: Vec<Change>,
}

/// A change at the destination, for an itemized list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What happened.
    pub kind: ChangeKind,
    /// The entry's path below the destination.
    pub path: String,
}

/// What happened to an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Written where nothing was.
    Created,
    /// Written over an older version.
    Updated,
    /// Removed: the source does not have it.
    Deleted,
}

impl Summary {
    /// The manifest's counts (files, directories, symlinks, bytes), also set as `progress`'s
    /// totals.
    fn of_manifest(entries: &[manifest::Entry], progress: &Progress) -> Self {
        let mut summary = Summary::default();
        for e in entries {
            match e.kind {
                manifest::Kind::File { size } => {
                    summary.files += 1;
                    summary.bytes += size;
                }
                manifest::Kind::Dir => summary.dirs += 1,
                manifest::Kind::Symlink { .. } => summary.symlinks += 1,
            }
        }
        progress.bytes_total.store(summary.bytes, Ordering::Relaxed);
        progress
            .files_total
            .store(entries.len() as u64, Ordering::Relaxed);
        summary
    }
}

/// Why a copy stopped.
#[derive(Debug, Error)]
pub enum CopyError {
    /// Listing the sources failed.
    #[error(transparent)]
    Scan(#[from] manifest::ScanError),
    /// The connection failed or the peer sent something malformed.
    #[error("connection: {0}")]
    Frame(#[from] frame::FrameError),
    /// The peer reported a fatal problem.
    #[error("the other side: {0}")]
    Remote(String),
    /// The peer broke the protocol.
    #[error("protocol violation by the peer: {0}")]
    Protocol(String),
    /// The destination cannot be used.
    #[error("{0}")]
    Destination(String),
}

impl From<std::io::Error> for CopyError {
    fn from(e: std::io::Error) -> Self {
        CopyError::Frame(frame::FrameError::Io(e))
    }
}
