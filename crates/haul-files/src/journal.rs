//! The resume journal: which chunks of a partial file are on disk and verified.
//!
//! Next to `.NAME.haul-part` lives `.NAME.haul-journal`: a 32-byte header naming the source
//! version (size, mtime, chunk size), then one 36-byte record (chunk number, BLAKE3) per chunk.
//! Records are appended only after the chunk's data was written *and* `fdatasync`ed, so a crash
//! at any point leaves a journal that under-states, never over-states, what is there. A torn last
//! record is ignored.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;

const MAGIC: &[u8; 8] = b"HAULJNL1";
const HEADER_LEN: usize = 32;
const RECORD_LEN: usize = 36;

/// The source version a partial file belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// File size.
    pub size: u64,
    /// Source mtime (seconds, nanoseconds).
    pub mtime: (i64, u32),
    /// Chunk size of the copy.
    pub chunk_size: u32,
}

impl Identity {
    fn header(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[..8].copy_from_slice(MAGIC);
        h[8..16].copy_from_slice(&self.size.to_be_bytes());
        h[16..24].copy_from_slice(&self.mtime.0.to_be_bytes());
        h[24..28].copy_from_slice(&self.mtime.1.to_be_bytes());
        h[28..32].copy_from_slice(&self.chunk_size.to_be_bytes());
        h
    }
}

/// An open journal, appended to as chunks become durable.
#[derive(Debug)]
pub struct Journal {
    file: File,
}

impl Journal {
    /// Starts a new journal (replacing any old one).
    pub fn create(path: &Path, id: Identity) -> io::Result<Self> {
        let mut file = File::create(path)?;
        file.write_all(&id.header())?;
        Ok(Self { file })
    }

    /// Reopens a journal to append to it.
    pub fn reopen(path: &Path) -> io::Result<Self> {
        Ok(Self {
            file: OpenOptions::new().append(true).open(path)?,
        })
    }

    /// Reads the verified chunks recorded for `id`; `None` if there is no journal or it belongs
    /// to another version of the source.
    pub fn load(path: &Path, id: Identity) -> Option<Vec<(u32, [u8; 32])>> {
        let mut bytes = Vec::new();
        File::open(path).ok()?.read_to_end(&mut bytes).ok()?;
        if bytes.len() < HEADER_LEN || bytes[..HEADER_LEN] != id.header() {
            return None;
        }
        let chunks = id.size.div_ceil(id.chunk_size.max(1) as u64);
        let records = bytes[HEADER_LEN..]
            .chunks_exact(RECORD_LEN)
            .map(|r| {
                let index = u32::from_be_bytes(r[..4].try_into().unwrap());
                (index, r[4..].try_into().unwrap())
            })
            .filter(|(index, _)| (*index as u64) < chunks)
            .collect();
        Some(records)
    }

    /// Appends records of chunks whose data is already durable.
    pub fn record(&mut self, chunks: &[(u32, [u8; 32])]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(chunks.len() * RECORD_LEN);
        for (index, hash) in chunks {
            buf.extend_from_slice(&index.to_be_bytes());
            buf.extend_from_slice(hash);
        }
        self.file.write_all(&buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_reopening_and_another_version_reads_nothing() {
        let dir = std::env::temp_dir().join(format!("haul-journal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("j");
        let id = Identity {
            size: 10 << 20,
            mtime: (5, 6),
            chunk_size: 1 << 20,
        };
        Journal::create(&path, id)
            .unwrap()
            .record(&[(0, [1; 32])])
            .unwrap();
        Journal::reopen(&path)
            .unwrap()
            .record(&[(3, [2; 32]), (99, [3; 32])])
            .unwrap();
        // A torn record at the end is ignored; chunk 99 does not exist in a 10-chunk file.
        OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(&[7; 5])
            .unwrap();
        assert_eq!(
            Journal::load(&path, id),
            Some(vec![(0, [1; 32]), (3, [2; 32])])
        );
        let other = Identity {
            mtime: (5, 7),
            ..id
        };
        assert_eq!(Journal::load(&path, other), None);
        assert_eq!(Journal::load(&dir.join("missing"), id), None);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
