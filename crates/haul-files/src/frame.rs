//! The copy protocol's messages and their framing: `[type: u8][length: u32 BE][body]`.
//!
//! Everything read here comes from the peer and is untrusted: every length is checked against
//! what remains, strings must be UTF-8, and a frame is never larger than [`MAX_FRAME`].

use crate::manifest::{Entry, Kind};
use crate::path::RelPath;
use std::io::{self, Read, Write};
use thiserror::Error;

/// Version spoken in [`Frame::Hello`] (3: older destination files as a basis, deletion, dry
/// runs).
pub const VERSION: u32 = 3;
/// Largest frame body accepted (a chunk and its header fit well inside).
pub const MAX_FRAME: usize = 16 << 20;

/// One message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// Sender → receiver, first: protocol version and chunk size.
    Hello {
        /// Protocol version.
        version: u32,
        /// Bytes per chunk (the last of a file may be shorter).
        chunk_size: u32,
        /// Ignore partial files from earlier attempts.
        no_resume: bool,
        /// Mirror: remove what the destination's copied directories hold beyond the manifest.
        delete: bool,
        /// Change nothing: chunks travel without their data, and the receiver only tells what
        /// it would do.
        dry_run: bool,
        /// The sources are the entries of one directory: mirroring covers the destination
        /// directory itself.
        contents: bool,
    },
    /// Sender → receiver: the next manifest entries (index = position in the whole manifest).
    Entries(Vec<Entry>),
    /// Sender → receiver: the manifest is complete.
    EntriesEnd,
    /// Receiver → sender, once per regular file: what it needs.
    Want {
        /// Manifest index of the file.
        file: u32,
        /// Already complete at the destination (same size and mtime): send nothing.
        up_to_date: bool,
        /// Chunks already verified in a partial file from an earlier attempt, with their hashes
        /// (the sender takes them for the file digest instead of reading those chunks again).
        have: Vec<(u32, [u8; 32])>,
        /// Chunks of the older file at the destination, at the same offsets, with their hashes:
        /// the sender sends a chunk only if its own hash differs, and the receiver copies the
        /// others from the older file.
        basis: Vec<(u32, [u8; 32])>,
    },
    /// Sender → receiver: one chunk of a file.
    Chunk {
        /// Manifest index.
        file: u32,
        /// Chunk number.
        index: u32,
        /// BLAKE3 of the data, computed as it was read.
        hash: [u8; 32],
        /// The bytes.
        data: Vec<u8>,
    },
    /// Sender → receiver: every wanted chunk of a file was sent.
    FileEnd {
        /// Manifest index.
        file: u32,
        /// BLAKE3 over the chunk hashes in order: the whole-file digest.
        root: [u8; 32],
    },
    /// Sender → receiver: a wanted file could not be read; the receiver drops what it has.
    Abandon {
        /// Manifest index.
        file: u32,
        /// Why, for the user.
        reason: String,
    },
    /// Receiver → sender: what became of an entry.
    Done {
        /// Manifest index.
        file: u32,
        /// Outcome.
        status: Status,
    },
    /// Sender → receiver: nothing more will come.
    End,
    /// Receiver → sender: an entry removed (or, dry, to be removed) because the source does
    /// not have it; its path below the destination.
    Deleted(String),
    /// Receiver → sender: every entry is settled; the copy is over.
    Finished {
        /// Entries removed from the destination because the source no longer has them.
        deleted: u64,
    },
    /// Either way: a fatal problem, described for the user.
    Error(String),
}

/// What became of one entry at the receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Written, verified, synced and renamed into place (created: nothing was there).
    Written,
    /// Written like [`Status::Written`], replacing an older version.
    Updated,
    /// Already there (same size and mtime).
    UpToDate,
    /// Not written; the reason.
    Failed(String),
}

/// Why a frame could not be read.
#[derive(Debug, Error)]
pub enum FrameError {
    /// The transport failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The bytes do not make a valid frame.
    #[error("malformed message from the peer: {0}")]
    Malformed(&'static str),
}

const HELLO: u8 = 1;
const ENTRIES: u8 = 2;
const ENTRIES_END: u8 = 3;
const WANT: u8 = 4;
const CHUNK: u8 = 5;
const FILE_END: u8 = 6;
const DONE: u8 = 7;
const END: u8 = 8;
const FINISHED: u8 = 9;
const ERROR: u8 = 10;
const ABANDON: u8 = 11;
const DELETED: u8 = 12;

const KIND_FILE: u8 = 0;
const KIND_DIR: u8 = 1;
const KIND_SYMLINK: u8 = 2;

impl Frame {
    /// Writes the frame (header and body) to `out`.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        let mut body = Vec::new();
        let kind = self.encode_body(&mut body);
        // Chunks: header and data go out without copying the data into `body`.
        let extra = match self {
            Frame::Chunk { data, .. } => data.as_slice(),
            _ => &[],
        };
        let len = u32::try_from(body.len() + extra.len())
            .map_err(|_| io::Error::other("frame too large"))?;
        let mut header = [0u8; 5];
        header[0] = kind;
        header[1..].copy_from_slice(&len.to_be_bytes());
        out.write_all(&header)?;
        out.write_all(&body)?;
        out.write_all(extra)
    }

    fn encode_body(&self, b: &mut Vec<u8>) -> u8 {
        match self {
            Frame::Hello {
                version,
                chunk_size,
                no_resume,
                delete,
                dry_run,
                contents,
            } => {
                put_u32(b, *version);
                put_u32(b, *chunk_size);
                for flag in [no_resume, delete, dry_run, contents] {
                    b.push(*flag as u8);
                }
                HELLO
            }
            Frame::Entries(entries) => {
                put_u32(b, entries.len() as u32);
                for e in entries {
                    encode_entry(b, e);
                }
                ENTRIES
            }
            Frame::EntriesEnd => ENTRIES_END,
            Frame::Want {
                file,
                up_to_date,
                have,
                basis,
            } => {
                put_u32(b, *file);
                b.push(*up_to_date as u8);
                for list in [have, basis] {
                    put_u32(b, list.len() as u32);
                    for (index, hash) in list {
                        put_u32(b, *index);
                        b.extend_from_slice(hash);
                    }
                }
                WANT
            }
            Frame::Chunk {
                file, index, hash, ..
            } => {
                put_u32(b, *file);
                put_u32(b, *index);
                b.extend_from_slice(hash);
                CHUNK
            }
            Frame::FileEnd { file, root } => {
                put_u32(b, *file);
                b.extend_from_slice(root);
                FILE_END
            }
            Frame::Abandon { file, reason } => {
                put_u32(b, *file);
                put_str(b, reason);
                ABANDON
            }
            Frame::Done { file, status } => {
                put_u32(b, *file);
                match status {
                    Status::Written => b.push(0),
                    Status::UpToDate => b.push(1),
                    Status::Updated => b.push(3),
                    Status::Failed(why) => {
                        b.push(2);
                        put_str(b, why);
                    }
                }
                DONE
            }
            Frame::End => END,
            Frame::Deleted(path) => {
                put_str(b, path);
                DELETED
            }
            Frame::Finished { deleted } => {
                b.extend_from_slice(&deleted.to_be_bytes());
                FINISHED
            }
            Frame::Error(message) => {
                put_str(b, message);
                ERROR
            }
        }
    }

    /// Reads one frame; `Ok(None)` at a clean end of stream between frames.
    pub fn read_from(input: &mut impl Read) -> Result<Option<Frame>, FrameError> {
        let mut header = [0u8; 5];
        match input.read(&mut header[..1])? {
            0 => return Ok(None),
            _ => input.read_exact(&mut header[1..])?,
        }
        let len = u32::from_be_bytes(header[1..].try_into().unwrap()) as usize;
        if len > MAX_FRAME {
            return Err(FrameError::Malformed("frame longer than 16 MiB"));
        }
        let mut body = vec![0u8; len];
        input.read_exact(&mut body)?;
        Self::decode(header[0], body).map(Some)
    }

    fn decode(kind: u8, body: Vec<u8>) -> Result<Frame, FrameError> {
        let mut c = Cursor { b: &body, at: 0 };
        let frame = match kind {
            HELLO => {
                let (version, chunk_size) = (c.u32()?, c.u32()?);
                if version != VERSION {
                    // Another version's hello may be shaped differently: keep what names it.
                    return Ok(Frame::Hello {
                        version,
                        chunk_size,
                        no_resume: false,
                        delete: false,
                        dry_run: false,
                        contents: false,
                    });
                }
                Frame::Hello {
                    version,
                    chunk_size,
                    no_resume: c.flag()?,
                    delete: c.flag()?,
                    dry_run: c.flag()?,
                    contents: c.flag()?,
                }
            }
            ENTRIES => {
                let n = c.u32()? as usize;
                // Each entry takes at least 20 bytes: refuse counts the body cannot hold.
                if n > c.remaining() / 20 {
                    return Err(FrameError::Malformed("entry count beyond the frame"));
                }
                let mut entries = Vec::with_capacity(n);
                for _ in 0..n {
                    entries.push(decode_entry(&mut c)?);
                }
                Frame::Entries(entries)
            }
            ENTRIES_END => Frame::EntriesEnd,
            WANT => {
                let file = c.u32()?;
                let up_to_date = c.flag()?;
                let have = c.chunk_hashes()?;
                let basis = c.chunk_hashes()?;
                Frame::Want {
                    file,
                    up_to_date,
                    have,
                    basis,
                }
            }
            CHUNK => {
                let file = c.u32()?;
                let index = c.u32()?;
                let hash = c.hash()?;
                let start = c.at;
                let mut data = body;
                data.drain(..start);
                return Ok(Frame::Chunk {
                    file,
                    index,
                    hash,
                    data,
                });
            }
            FILE_END => Frame::FileEnd {
                file: c.u32()?,
                root: c.hash()?,
            },
            DONE => {
                let file = c.u32()?;
                let status = match c.u8()? {
                    0 => Status::Written,
                    1 => Status::UpToDate,
                    3 => Status::Updated,
                    2 => Status::Failed(c.string()?),
                    _ => return Err(FrameError::Malformed("unknown status")),
                };
                Frame::Done { file, status }
            }
            ABANDON => Frame::Abandon {
                file: c.u32()?,
                reason: c.string()?,
            },
            END => Frame::End,
            FINISHED => Frame::Finished { deleted: c.u64()? },
            DELETED => Frame::Deleted(c.string()?),
            ERROR => Frame::Error(c.string()?),
            _ => return Err(FrameError::Malformed("unknown message type")),
        };
        if c.remaining() != 0 {
            return Err(FrameError::Malformed("trailing bytes in a message"));
        }
        Ok(frame)
    }
}

fn encode_entry(b: &mut Vec<u8>, e: &Entry) {
    put_str(b, e.path.as_str());
    put_u32(b, e.mode);
    b.extend_from_slice(&e.mtime.0.to_be_bytes());
    put_u32(b, e.mtime.1);
    match &e.kind {
        Kind::File { size } => {
            b.push(KIND_FILE);
            b.extend_from_slice(&size.to_be_bytes());
        }
        Kind::Dir => b.push(KIND_DIR),
        Kind::Symlink { target } => {
            b.push(KIND_SYMLINK);
            put_str(b, target);
        }
    }
}

fn decode_entry(c: &mut Cursor<'_>) -> Result<Entry, FrameError> {
    let path = RelPath::new(&c.string()?).map_err(|_| FrameError::Malformed("unsafe path"))?;
    let mode = c.u32()?;
    let secs = i64::from_be_bytes(c.take(8)?.try_into().unwrap());
    let nanos = c.u32()?;
    if nanos >= 1_000_000_000 {
        return Err(FrameError::Malformed("mtime nanoseconds out of range"));
    }
    let kind = match c.u8()? {
        KIND_FILE => Kind::File { size: c.u64()? },
        KIND_DIR => Kind::Dir,
        KIND_SYMLINK => Kind::Symlink {
            target: c.string()?,
        },
        _ => return Err(FrameError::Malformed("unknown entry kind")),
    };
    Ok(Entry {
        path,
        kind,
        mode,
        mtime: (secs, nanos),
    })
}

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_be_bytes());
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    let bytes = &s.as_bytes()[..s.len().min(u16::MAX as usize)];
    b.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
    b.extend_from_slice(bytes);
}

/// Reads fields from a body, refusing to run past its end.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn remaining(&self) -> usize {
        self.b.len() - self.at
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], FrameError> {
        if self.remaining() < n {
            return Err(FrameError::Malformed("message shorter than its fields"));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, FrameError> {
        Ok(self.take(1)?[0])
    }

    fn flag(&mut self) -> Result<bool, FrameError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(FrameError::Malformed("flag neither 0 nor 1")),
        }
    }

    fn u32(&mut self) -> Result<u32, FrameError> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }

    fn u64(&mut self) -> Result<u64, FrameError> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().unwrap()))
    }

    fn hash(&mut self) -> Result<[u8; 32], FrameError> {
        Ok(self.take(32)?.try_into().unwrap())
    }

    /// A count, then that many (chunk index, hash) pairs.
    fn chunk_hashes(&mut self) -> Result<Vec<(u32, [u8; 32])>, FrameError> {
        let n = self.u32()? as usize;
        if n > self.remaining() / 36 {
            return Err(FrameError::Malformed("chunk count beyond the frame"));
        }
        (0..n).map(|_| Ok((self.u32()?, self.hash()?))).collect()
    }

    fn string(&mut self) -> Result<String, FrameError> {
        let len = u16::from_be_bytes(self.take(2)?.try_into().unwrap()) as usize;
        String::from_utf8(self.take(len)?.to_vec())
            .map_err(|_| FrameError::Malformed("text that is not UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, RngCore, SeedableRng};

    fn samples() -> Vec<Frame> {
        let entry = |p: &str, kind| Entry {
            path: RelPath::new(p).unwrap(),
            kind,
            mode: 0o644,
            mtime: (1_700_000_000, 5),
        };
        vec![
            Frame::Hello {
                version: VERSION,
                chunk_size: 1 << 20,
                no_resume: false,
                delete: true,
                dry_run: true,
                contents: false,
            },
            Frame::Entries(vec![
                entry("d", Kind::Dir),
                entry("d/f", Kind::File { size: 12345 }),
                entry(
                    "d/l",
                    Kind::Symlink {
                        target: "../x".into(),
                    },
                ),
            ]),
            Frame::EntriesEnd,
            Frame::Want {
                file: 1,
                up_to_date: false,
                have: vec![(0, [1; 32]), (2, [2; 32]), (3, [3; 32])],
                basis: vec![(1, [4; 32])],
            },
            Frame::Chunk {
                file: 1,
                index: 2,
                hash: [9; 32],
                data: vec![1, 2, 3],
            },
            Frame::FileEnd {
                file: 1,
                root: [4; 32],
            },
            Frame::Abandon {
                file: 1,
                reason: "source shrank".into(),
            },
            Frame::Done {
                file: 1,
                status: Status::Failed("disk full".into()),
            },
            Frame::Done {
                file: 2,
                status: Status::UpToDate,
            },
            Frame::Done {
                file: 3,
                status: Status::Updated,
            },
            Frame::End,
            Frame::Deleted("gone/file".into()),
            Frame::Finished { deleted: 3 },
            Frame::Error("nope".into()),
        ]
    }

    #[test]
    fn every_frame_round_trips() {
        let mut wire = Vec::new();
        for f in samples() {
            f.write_to(&mut wire).unwrap();
        }
        let mut input = &wire[..];
        for f in samples() {
            assert_eq!(Frame::read_from(&mut input).unwrap(), Some(f));
        }
        assert!(Frame::read_from(&mut input).unwrap().is_none());
    }

    #[test]
    fn garbage_and_truncation_are_errors_not_panics() {
        let mut wire = Vec::new();
        for f in samples() {
            f.write_to(&mut wire).unwrap();
        }
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        for _ in 0..20_000 {
            let mut bytes = wire.clone();
            match rng.gen_range(0..3) {
                0 => bytes.truncate(rng.gen_range(0..wire.len())),
                1 => {
                    let i = rng.gen_range(0..bytes.len());
                    bytes[i] = rng.gen();
                }
                _ => {
                    bytes.resize(rng.gen_range(0..64), 0);
                    rng.fill_bytes(&mut bytes);
                }
            }
            let mut input = &bytes[..];
            while let Ok(Some(_)) = Frame::read_from(&mut input) {}
        }
    }

    #[test]
    fn unsafe_paths_in_a_manifest_are_refused() {
        for bad in ["../etc/passwd", "/etc/passwd", "a/../../b", "", "a//b", "."] {
            let mut body = Vec::new();
            put_u32(&mut body, 1);
            put_str(&mut body, bad);
            body.extend_from_slice(&[0; 16]);
            body.push(KIND_DIR);
            assert!(Frame::decode(ENTRIES, body).is_err(), "{bad:?}");
        }
    }
}
