//! The sending side: manifest out, wanted chunks out, outcomes in.

use crate::frame::{Frame, Status, VERSION};
use crate::manifest::{scan, Kind, Source};
use crate::{Change, ChangeKind, CopyError, Progress, Summary, DEFAULT_CHUNK_SIZE};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender, TryRecvError};
use std::sync::Arc;
use std::thread;

/// Entries per manifest frame.
const ENTRIES_PER_FRAME: usize = 512;
/// Chunks read ahead of the network.
const READ_AHEAD: usize = 8;

/// Settings of the sending side.
#[derive(Debug, Clone)]
pub struct SendOptions {
    /// Bytes per chunk.
    pub chunk_size: u32,
    /// Make the receiver ignore partial files of earlier attempts.
    pub no_resume: bool,
    /// Follow sources that are symlinks (as scp does with its arguments); when off, such a
    /// source is sent as a link, so a server never reads through one.
    pub follow_named_links: bool,
    /// Mirror: the receiver removes, inside every directory copied, the entries the source
    /// directory does not have.
    pub delete: bool,
    /// Change nothing at the destination; the summary tells what would travel and change.
    pub dry_run: bool,
    /// Record every change at the destination in [`Summary::changes`].
    pub itemize: bool,
    /// The sources are the entries of one directory (a `haul serve` module's top): with
    /// `delete`, the destination directory itself is mirrored too.
    pub sources_are_contents: bool,
}

impl Default for SendOptions {
    fn default() -> Self {
        Self {
            chunk_size: DEFAULT_CHUNK_SIZE,
            no_resume: false,
            follow_named_links: true,
            delete: false,
            dry_run: false,
            itemize: false,
            sources_are_contents: false,
        }
    }
}

/// What the main loop waits for.
enum Event {
    /// A frame from the receiver (or the end of its stream).
    Reply(Result<Option<Frame>, crate::frame::FrameError>),
    /// Something the file reader produced.
    Piece(Piece),
}

/// The file reader's output, in order.
enum Piece {
    Chunk {
        file: u32,
        index: u32,
        hash: [u8; 32],
        data: Vec<u8>,
    },
    Resumed {
        len: u64,
    },
    /// A chunk the receiver's older file holds already.
    Matched {
        len: u64,
    },
    /// Dry run: a chunk that would be sent.
    WouldSend {
        file: u32,
        index: u32,
        len: u64,
    },
    End {
        file: u32,
        root: [u8; 32],
    },
    Failed {
        file: u32,
        reason: String,
    },
}

/// A file the receiver asked for.
struct Job {
    file: u32,
    local: PathBuf,
    size: u64,
    /// Chunks the receiver holds, and their hashes.
    have: HashMap<u32, [u8; 32]>,
    /// Chunks of the receiver's older file, and their hashes: sent only where ours differ.
    basis: HashMap<u32, [u8; 32]>,
    /// Send no data, only which chunks would travel.
    dry_run: bool,
}

/// Sends `sources` over a stream whose halves are `input` (from the receiver) and `output`.
pub fn send<R, W>(
    input: R,
    output: W,
    sources: &[PathBuf],
    options: &SendOptions,
    progress: &Arc<Progress>,
) -> Result<Summary, CopyError>
where
    R: Read + Send + 'static,
    W: Write,
{
    let manifest = scan(sources, options.follow_named_links)?;
    let entries: Vec<_> = manifest.iter().map(|s| s.entry.clone()).collect();
    let mut summary = Summary::of_manifest(&entries, progress);
    let mut out = BufWriter::with_capacity(256 << 10, output);
    Frame::Hello {
        version: VERSION,
        chunk_size: options.chunk_size,
        no_resume: options.no_resume,
        delete: options.delete,
        dry_run: options.dry_run,
        contents: options.sources_are_contents,
    }
    .write_to(&mut out)?;
    for batch in entries.chunks(ENTRIES_PER_FRAME) {
        Frame::Entries(batch.to_vec()).write_to(&mut out)?;
    }
    Frame::EntriesEnd.write_to(&mut out)?;
    out.flush()?;

    // Replies and file pieces share one queue; the reader holds a token per chunk in flight,
    // so it runs at most READ_AHEAD chunks ahead of the network.
    let (events, inbox) = channel();
    let (tokens, token_inbox) = sync_channel(READ_AHEAD);
    for _ in 0..READ_AHEAD {
        tokens.send(()).expect("room for every token");
    }
    spawn_reply_reader(input, events.clone());
    let (jobs, job_inbox) = channel::<Job>();
    let reader = spawn_file_reader(job_inbox, token_inbox, events, options.chunk_size);
    let mut state = State {
        manifest: &manifest,
        out: &mut out,
        jobs: &jobs,
        tokens: &tokens,
        summary: &mut summary,
        progress,
        options,
    };
    let result = state.run(&inbox);
    drop(jobs);
    drop(inbox);
    drop(tokens);
    let _ = reader.join();
    result.map(|()| summary)
}

struct State<'a, W: Write> {
    manifest: &'a [Source],
    out: &'a mut BufWriter<W>,
    jobs: &'a Sender<Job>,
    tokens: &'a SyncSender<()>,
    summary: &'a mut Summary,
    progress: &'a Progress,
    options: &'a SendOptions,
}

fn stopped() -> CopyError {
    CopyError::Protocol("the file reader stopped".into())
}

impl<W: Write> State<'_, W> {
    fn run(&mut self, inbox: &Receiver<Event>) -> Result<(), CopyError> {
        let files_total = self.summary.files;
        let (mut wants, mut jobs, mut ends) = (0u64, 0u64, 0u64);
        let mut end_sent = false;
        loop {
            if !end_sent && wants == files_total && ends == jobs {
                Frame::End.write_to(self.out)?;
                end_sent = true;
            }
            // Flush only when there is nothing else to do: batches small files into few writes.
            let event = match inbox.try_recv() {
                Ok(event) => event,
                Err(TryRecvError::Empty) => {
                    self.out.flush()?;
                    inbox.recv().map_err(|_| stopped())?
                }
                Err(TryRecvError::Disconnected) => return Err(stopped()),
            };
            match event {
                Event::Piece(piece) => {
                    ends += self.on_piece(piece)? as u64;
                }
                Event::Reply(frame) => match frame? {
                    Some(Frame::Want {
                        file,
                        up_to_date,
                        have,
                        basis,
                    }) => {
                        wants += 1;
                        if wants > files_total {
                            return Err(CopyError::Protocol("more requests than files".into()));
                        }
                        jobs += self.on_want(file, up_to_date, have, basis)? as u64;
                    }
                    Some(Frame::Done { file, status }) => self.on_done(file, status)?,
                    Some(Frame::Deleted(path)) => {
                        if self.options.itemize {
                            self.summary.changes.push(Change {
                                kind: ChangeKind::Deleted,
                                path,
                            });
                        }
                    }
                    Some(Frame::Finished { deleted }) if end_sent => {
                        self.summary.deleted = deleted;
                        return Ok(());
                    }
                    Some(Frame::Error(message)) => return Err(CopyError::Remote(message)),
                    Some(other) => {
                        return Err(CopyError::Protocol(format!("unexpected {}", name(&other))))
                    }
                    None => {
                        return Err(CopyError::Protocol(
                            "the receiver closed the connection before finishing".into(),
                        ))
                    }
                },
            }
        }
    }

    /// Writes what the reader produced; whether it ended a file.
    fn on_piece(&mut self, piece: Piece) -> Result<bool, CopyError> {
        match piece {
            Piece::Chunk {
                file,
                index,
                hash,
                data,
            } => {
                self.summary.bytes_sent += data.len() as u64;
                Progress::add(&self.progress.bytes_done, data.len() as u64);
                Frame::Chunk {
                    file,
                    index,
                    hash,
                    data,
                }
                .write_to(self.out)?;
                // The chunk left: the reader may read another.
                let _ = self.tokens.try_send(());
                Ok(false)
            }
            Piece::Resumed { len } => {
                self.summary.bytes_resumed += len;
                Progress::add(&self.progress.bytes_done, len);
                Ok(false)
            }
            Piece::Matched { len } => {
                self.summary.bytes_matched += len;
                Progress::add(&self.progress.bytes_done, len);
                Ok(false)
            }
            Piece::WouldSend { file, index, len } => {
                self.summary.bytes_sent += len;
                Progress::add(&self.progress.bytes_done, len);
                Frame::Chunk {
                    file,
                    index,
                    hash: [0; 32],
                    data: Vec::new(),
                }
                .write_to(self.out)?;
                Ok(false)
            }
            Piece::End { file, root } => {
                Frame::FileEnd { file, root }.write_to(self.out)?;
                Ok(true)
            }
            Piece::Failed { file, reason } => {
                Frame::Abandon { file, reason }.write_to(self.out)?;
                Ok(true)
            }
        }
    }

    /// Queues a wanted file for the reader; whether a job was queued.
    fn on_want(
        &mut self,
        file: u32,
        up_to_date: bool,
        have: Vec<(u32, [u8; 32])>,
        basis: Vec<(u32, [u8; 32])>,
    ) -> Result<bool, CopyError> {
        let source = self
            .manifest
            .get(file as usize)
            .ok_or_else(|| CopyError::Protocol(format!("asked for entry {file}")))?;
        let Kind::File { size } = source.entry.kind else {
            return Err(CopyError::Protocol(format!(
                "asked for {}, not a file",
                source.entry.path
            )));
        };
        if up_to_date {
            self.summary.up_to_date += 1;
            Progress::add(&self.progress.bytes_done, size);
            return Ok(false);
        }
        let job = Job {
            file,
            local: source.local.clone(),
            size,
            have: have.into_iter().collect(),
            basis: basis.into_iter().collect(),
            dry_run: self.options.dry_run,
        };
        self.jobs.send(job).map_err(|_| stopped())?;
        Ok(true)
    }

    fn on_done(&mut self, file: u32, status: Status) -> Result<(), CopyError> {
        let path = self
            .manifest
            .get(file as usize)
            .map(|s| s.entry.path.to_string())
            .ok_or_else(|| CopyError::Protocol(format!("result for entry {file}")))?;
        Progress::add(&self.progress.files_done, 1);
        let kind = match status {
            Status::Failed(why) => {
                self.summary.failures.push((path, why));
                return Ok(());
            }
            Status::UpToDate => return Ok(()),
            Status::Written => ChangeKind::Created,
            Status::Updated => ChangeKind::Updated,
        };
        if self.options.itemize {
            self.summary.changes.push(Change { kind, path });
        }
        Ok(())
    }
}

fn name(frame: &Frame) -> &'static str {
    match frame {
        Frame::Hello { .. } => "hello",
        Frame::Entries(_) => "manifest",
        Frame::EntriesEnd => "manifest end",
        Frame::Want { .. } => "request",
        Frame::Chunk { .. } => "chunk",
        Frame::FileEnd { .. } => "file end",
        Frame::Abandon { .. } => "abandon",
        Frame::Done { .. } => "result",
        Frame::End => "end",
        Frame::Finished { .. } => "finished",
        Frame::Deleted(_) => "deletion",
        Frame::Error(_) => "error",
    }
}

fn spawn_reply_reader<R: Read + Send + 'static>(mut input: R, events: Sender<Event>) {
    thread::Builder::new()
        .name("haul-send-replies".into())
        .spawn(move || loop {
            let frame = Frame::read_from(&mut input);
            let last = !matches!(frame, Ok(Some(_)));
            if events.send(Event::Reply(frame)).is_err() || last {
                return;
            }
        })
        .expect("spawning a thread");
}

fn spawn_file_reader(
    jobs: Receiver<Job>,
    tokens: Receiver<()>,
    events: Sender<Event>,
    chunk_size: u32,
) -> thread::JoinHandle<()> {
    thread::Builder::new()
        .name("haul-send-files".into())
        .spawn(move || {
            for job in jobs {
                let file = job.file;
                let piece = match read_file(&job, chunk_size, &tokens, &events) {
                    Ok(root) => Piece::End { file, root },
                    Err(reason) => Piece::Failed { file, reason },
                };
                if events.send(Event::Piece(piece)).is_err() {
                    return;
                }
            }
        })
        .expect("spawning a thread")
}

/// Reads and hashes every chunk of a file, sending those the receiver lacks; the file digest.
fn read_file(
    job: &Job,
    chunk_size: u32,
    tokens: &Receiver<()>,
    events: &Sender<Event>,
) -> Result<[u8; 32], String> {
    let file = File::open(&job.local).map_err(|e| format!("{}: {e}", job.local.display()))?;
    let mut root = blake3::Hasher::new();
    let chunk = chunk_size as u64;
    let count = job.size.div_ceil(chunk);
    for index in 0..count {
        let offset = index * chunk;
        let len = chunk.min(job.size - offset) as usize;
        let index = index as u32;
        if let Some(hash) = job.have.get(&index) {
            // Verified at the receiver when it was written, for this same size and mtime.
            root.update(hash);
            events
                .send(Event::Piece(Piece::Resumed { len: len as u64 }))
                .map_err(|_| "stopped".to_string())?;
            continue;
        }
        let basis = job.basis.get(&index);
        if job.dry_run && basis.is_none() {
            // Would be sent whatever it holds: no need to read it.
            let piece = Piece::WouldSend {
                file: job.file,
                index,
                len: len as u64,
            };
            events
                .send(Event::Piece(piece))
                .map_err(|_| "stopped".to_string())?;
            continue;
        }
        if basis.is_none() {
            // A chunk that will be sent: wait for room ahead of the network before reading.
            tokens.recv().map_err(|_| "stopped".to_string())?;
        }
        let mut data = vec![0u8; len];
        file.read_exact_at(&mut data, offset).map_err(|e| {
            format!(
                "{}: {e} (did it change during the copy?)",
                job.local.display()
            )
        })?;
        let hash = *blake3::hash(&data).as_bytes();
        root.update(&hash);
        if let Some(theirs) = basis {
            let piece = if *theirs == hash {
                Some(Piece::Matched { len: len as u64 })
            } else if job.dry_run {
                Some(Piece::WouldSend {
                    file: job.file,
                    index,
                    len: len as u64,
                })
            } else {
                None
            };
            if let Some(piece) = piece {
                events
                    .send(Event::Piece(piece))
                    .map_err(|_| "stopped".to_string())?;
                continue;
            }
            tokens.recv().map_err(|_| "stopped".to_string())?;
        }
        let piece = Piece::Chunk {
            file: job.file,
            index,
            hash,
            data,
        };
        events
            .send(Event::Piece(piece))
            .map_err(|_| "stopped".to_string())?;
    }
    Ok(*root.finalize().as_bytes())
}
