//! The destination's older version of a file as a basis: its chunks, hashed at the offsets of
//! the new version's, are offered to the sender, which sends only the chunks whose hash differs;
//! the receiver copies the others from the older file. In-place edits, appends and truncations
//! cost only the chunks they touch; an insertion shifts everything after it, which is sent again.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
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

/// BLAKE3 hashes of the chunks of `old` that can stand for chunks of a `new_size`-byte file
/// (the same offset and the same length), skipping those `present` already holds. A file that
/// cannot be read offers what was hashed before the failure.
pub(crate) fn hash_chunks(
    old: &Path,
    new_size: u64,
    chunk_size: u32,
    present: &[Option<[u8; 32]>],
) -> Vec<(u32, [u8; 32])> {
    let mut offered = Vec::new();
    let Ok(file) = open(old) else {
        return offered;
    };
    let Ok(old_size) = file.metadata().map(|m| m.len()) else {
        return offered;
    };
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
    offered
}
