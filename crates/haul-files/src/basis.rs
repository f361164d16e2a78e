//! The destination's older version of a file as a basis: its chunks, hashed at the offsets of
//! the new version's, are offered to the sender, which sends only the chunks whose hash differs;
//! the receiver copies the others from the older file. In-place edits, appends and truncations
//! cost only the chunks they touch; an insertion shifts everything after it, which is sent again.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Most basis chunks offered for one file (their hashes must fit in one request frame).
const MAX_BASIS_CHUNKS: usize = 400_000;

/// Opens the older file without following a symlink.
pub(crate) fn open(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// What identifies one state of a file: if none of it changed, neither did the content (a
/// write changes the mtime and ctime, as finely as the file system keeps them: two writes
/// within one clock tick of it, the hashing between them, would go unseen).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Version {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Version {
    /// The version `meta` describes.
    pub(crate) fn of(meta: &Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// BLAKE3 hashes of the chunks of `old` that can stand for chunks of a `new_size`-byte file
/// (the same offset and the same length), skipping those `present` already holds, and the
/// version of `old` they were taken from. A file that cannot be read offers what was hashed
/// before the failure.
pub(crate) fn hash_chunks(
    old: &Path,
    new_size: u64,
    chunk_size: u32,
    present: &[Option<[u8; 32]>],
) -> (Vec<(u32, [u8; 32])>, Option<Version>) {
    let mut offered = Vec::new();
    let Ok(file) = open(old) else {
        return (offered, None);
    };
    let Ok(version) = file.metadata().map(|m| Version::of(&m)) else {
        return (offered, None);
    };
    let old_size = version.size;
    let chunk = chunk_size as u64;
    let mut buf = vec![0u8; chunk_size as usize];
    for (index, held) in present.iter().enumerate() {
        let offset = index as u64 * chunk;
        let len = chunk.min(new_size.saturating_sub(offset));
        if offset + len > old_size || offered.len() == MAX_BASIS_CHUNKS {
            break;
        }
        if held.is_some() {
            continue;
        }
        let data = &mut buf[..len as usize];
        if let Err(e) = file.read_exact_at(data, offset) {
            tracing::debug!(path = %old.display(), "older version unreadable: {e}");
            break;
        }
        offered.push((index as u32, *blake3::hash(data).as_bytes()));
    }
    (offered, Some(version))
}

/// Copies `len` bytes at `offset` from `from` to the same offset of `to` inside the kernel
/// (`copy_file_range`: no trip through user space; a reflink where the file system has them).
pub(crate) fn copy_range(from: &File, to: &File, offset: u64, len: u64) -> io::Result<()> {
    let mut done = 0u64;
    while done < len {
        let mut off_in = (offset + done) as libc::loff_t;
        let mut off_out = off_in;
        let want = (len - done).min(1 << 30) as usize;
        // SAFETY: two open descriptors and offsets that live across the call.
        let n = unsafe {
            libc::copy_file_range(
                from.as_raw_fd(),
                &mut off_in,
                to.as_raw_fd(),
                &mut off_out,
                want,
                0,
            )
        };
        match n {
            n if n > 0 => done += n as u64,
            0 => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
            _ => return Err(io::Error::last_os_error()),
        }
    }
    Ok(())
}
