//! The receiving side: manifest in, requests out, chunks written, verified, synced and renamed.

use crate::basis;
use crate::frame::{Frame, FrameError, Status, VERSION};
use crate::journal::{Identity, Journal};
use crate::manifest::{Entry, Kind};
use crate::mirror::{self, Expected};
use crate::path::RelPath;
use crate::{Change, ChangeKind, CopyError, Progress, Summary};
use std::collections::{HashMap, HashSet};
use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

/// Verified data of a large file is made durable and journaled every this many bytes.
const JOURNAL_EVERY: u64 = 32 << 20;
/// Files at least this large are synced on their own; smaller ones in batches.
const SYNC_ALONE: u64 = 8 << 20;
/// A batch of small files is synced (one `syncfs`) and renamed at this many files or bytes.
const BATCH_FILES: usize = 1024;
const BATCH_BYTES: u64 = 64 << 20;
/// Frames buffered between the connection and the file system (chunks are 1 MiB by default).
const READ_AHEAD_FRAMES: usize = 64;
/// Most entries in a manifest.
const MAX_ENTRIES: usize = 50_000_000;

/// Receives a copy into `dest` over a stream whose halves are `input` (from the sender) and
/// `output`. `dest` is an existing directory (entries land inside it under their own names), or
/// a new name for the single top-level entry, as with `cp` and `scp`.
pub fn receive<R: Read + Send + 'static, W: Write>(
    input: R,
    output: W,
    dest: &Path,
    progress: &Progress,
) -> Result<Summary, CopyError> {
    receive_with(input, output, dest, &ReceiveOptions::default(), progress)
}

/// Settings of the receiving side (what to do is the sender's to say: resume, mirror, dry run).
#[derive(Debug, Clone, Default)]
pub struct ReceiveOptions {
    /// Record every change at the destination in [`Summary::changes`].
    pub itemize: bool,
}

/// [`receive`], with options.
pub fn receive_with<R: Read + Send + 'static, W: Write>(
    input: R,
    output: W,
    dest: &Path,
    options: &ReceiveOptions,
    progress: &Progress,
) -> Result<Summary, CopyError> {
    let mut out = BufWriter::with_capacity(64 << 10, output);
    let result = receive_inner(input, &mut out, dest, options, progress);
    if let Err(e) = &result {
        // Tell the sender why, if the connection still works.
        if !matches!(e, CopyError::Frame(_) | CopyError::Remote(_)) {
            let _ = Frame::Error(e.to_string()).write_to(&mut out);
            let _ = out.flush();
        }
    }
    result
}

fn receive_inner<R: Read + Send + 'static, W: Write>(
    mut input: R,
    out: &mut BufWriter<W>,
    dest: &Path,
    options: &ReceiveOptions,
    progress: &Progress,
) -> Result<Summary, CopyError> {
    let (chunk_size, no_resume, delete, dry_run, contents) = match Frame::read_from(&mut input)? {
        Some(Frame::Hello {
            version: VERSION,
            chunk_size,
            no_resume,
            delete,
            dry_run,
            contents,
        }) if (4096..=(8 << 20)).contains(&chunk_size) => {
            (chunk_size, no_resume, delete, dry_run, contents)
        }
        Some(Frame::Hello { version, .. }) if version != VERSION => {
            return Err(CopyError::Protocol(format!(
                "the sender speaks copy protocol {version}, this haul speaks {VERSION}: install \
                 the same haul version on both hosts"
            )))
        }
        Some(Frame::Error(message)) => return Err(CopyError::Remote(message)),
        _ => return Err(CopyError::Protocol("expected a hello".into())),
    };
    let mut entries = Vec::new();
    loop {
        match Frame::read_from(&mut input)? {
            Some(Frame::Entries(batch)) if entries.len() + batch.len() <= MAX_ENTRIES => {
                entries.extend(batch)
            }
            Some(Frame::EntriesEnd) => break,
            Some(Frame::Error(message)) => return Err(CopyError::Remote(message)),
            _ => return Err(CopyError::Protocol("expected the manifest".into())),
        }
    }
    let mut rx = Receiver::new(out, dest, entries, chunk_size, no_resume, progress)?;
    rx.delete = delete;
    rx.mirror_root = delete && contents;
    rx.dry_run = dry_run;
    rx.itemize = options.itemize;
    let result = rx.plan().and_then(|()| rx.receive_data(&read_ahead(input)));
    if result.is_err() {
        rx.abandon();
    }
    result.map(|()| rx.summary)
}

/// Frames read off the connection ahead of the file system.
type FrameInbox = mpsc::Receiver<Result<Option<Frame>, FrameError>>;

/// Reads frames on a thread of their own, up to [`READ_AHEAD_FRAMES`] ahead: while this side
/// syncs a batch to disk the connection keeps draining, so the sender's rate does not collapse
/// with every `fdatasync`. The thread ends at the end of the stream or when the copy is dropped.
fn read_ahead<R: Read + Send + 'static>(mut input: R) -> FrameInbox {
    let (tx, rx) = mpsc::sync_channel(READ_AHEAD_FRAMES);
    std::thread::Builder::new()
        .name("haul-recv-frames".into())
        .spawn(move || loop {
            let frame = Frame::read_from(&mut input);
            let last = !matches!(frame, Ok(Some(_)));
            if tx.send(frame).is_err() || last {
                return;
            }
        })
        .expect("spawning a thread");
    rx
}

/// A regular file being received.
struct Incoming {
    part: Option<File>,
    part_path: PathBuf,
    final_path: PathBuf,
    journal_path: PathBuf,
    journal: Option<Journal>,
    identity: Identity,
    /// Hash of every chunk present and verified (from the journal or just received).
    hashes: Vec<Option<[u8; 32]>>,
    /// Chunks the older file at the destination offered, by index (empty: none).
    basis: Vec<Option<[u8; 32]>>,
    /// The older file's version when its chunks were hashed.
    basis_version: Option<basis::Version>,
    /// Verified chunks written but not yet synced and journaled.
    unjournaled: Vec<(u32, [u8; 32])>,
    unjournaled_bytes: u64,
    /// Why the file cannot succeed (a bad chunk), reported at its end.
    failed: Option<String>,
    /// An older version is in place (the outcome is an update, not a creation).
    replaces: bool,
    /// The partial file was reopened from an earlier attempt.
    resumed: bool,
}

/// What planning an entry gives: a request to the sender, or the entry's outcome already.
enum Planned {
    Want(Frame),
    Settled(Status),
}

/// A verified file waiting for its batch to be synced and renamed.
struct Ready {
    file: u32,
    replaces: bool,
    part_path: PathBuf,
    final_path: PathBuf,
    journal_path: Option<PathBuf>,
}

struct Receiver<'a, W: Write> {
    out: &'a mut BufWriter<W>,
    root: PathBuf,
    /// The name the single top-level entry takes instead of its own (`cp a b`).
    rename_top: Option<String>,
    entries: Vec<Entry>,
    chunk_size: u32,
    no_resume: bool,
    progress: &'a Progress,
    incoming: HashMap<u32, Incoming>,
    /// Directories checked to be real directories (not symlinks) under the root.
    safe_dirs: HashSet<PathBuf>,
    ready: Vec<Ready>,
    ready_bytes: u64,
    /// Directories created or reused, for their mode and mtime at the end.
    dirs: Vec<(PathBuf, u32, (i64, u32))>,
    /// Mirror: remove from the copied directories what the manifest does not have.
    delete: bool,
    /// Where every entry belongs, for `delete`.
    expected: Expected,
    /// Mirror the destination directory itself (the sources are a directory's contents).
    mirror_root: bool,
    /// Change nothing; tell what would change.
    dry_run: bool,
    /// Record the changes in the summary.
    itemize: bool,
    summary: Summary,
}

impl<'a, W: Write> Receiver<'a, W> {
    fn new(
        out: &'a mut BufWriter<W>,
        dest: &Path,
        entries: Vec<Entry>,
        chunk_size: u32,
        no_resume: bool,
        progress: &'a Progress,
    ) -> Result<Self, CopyError> {
        let tops = entries
            .iter()
            .filter(|e| e.path.components().count() == 1)
            .count();
        let (root, rename_top) = if dest.is_dir() {
            (dest.to_path_buf(), None)
        } else if tops == 1 {
            let name = dest.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
                CopyError::Destination(format!("{}: not a usable name", dest.display()))
            })?;
            let parent = match dest.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            if !parent.is_dir() {
                return Err(CopyError::Destination(format!(
                    "{}: no such directory (create it first)",
                    parent.display()
                )));
            }
            (parent, Some(name.to_owned()))
        } else {
            return Err(CopyError::Destination(format!(
                "{}: not a directory (copying several sources needs an existing directory)",
                dest.display()
            )));
        };
        let summary = Summary::of_manifest(&entries, progress);
        let safe_dirs = HashSet::from([root.clone()]);
        Ok(Self {
            out,
            root,
            rename_top,
            entries,
            chunk_size,
            no_resume,
            progress,
            incoming: HashMap::new(),
            safe_dirs,
            ready: Vec::new(),
            ready_bytes: 0,
            dirs: Vec::new(),
            delete: false,
            expected: Expected::default(),
            mirror_root: false,
            dry_run: false,
            itemize: false,
            summary,
        })
    }

    /// Where an entry lands.
    fn target(&self, path: &RelPath) -> Result<PathBuf, String> {
        let path = match &self.rename_top {
            Some(name) => path.with_first(name).map_err(|e| e.to_string())?,
            None => path.clone(),
        };
        Ok(path.under(&self.root))
    }

    /// Makes sure every directory between the root and `target` is a real directory (never a
    /// symlink, which could lead outside the destination).
    fn check_parents(&mut self, target: &Path) -> Result<(), String> {
        let parent = target.parent().ok_or("no parent directory")?;
        if self.safe_dirs.contains(parent) {
            return Ok(());
        }
        let relative = parent
            .strip_prefix(&self.root)
            .map_err(|_| "outside the destination")?;
        let mut dir = self.root.clone();
        for component in relative.components() {
            dir.push(component);
            if self.safe_dirs.contains(&dir) {
                continue;
            }
            match fs::symlink_metadata(&dir) {
                Ok(m) if m.file_type().is_dir() => {}
                Ok(_) => {
                    return Err(format!(
                        "{} is not a directory (a symlink or file there is never followed)",
                        dir.display()
                    ))
                }
                Err(e) => return Err(format!("{}: {e}", dir.display())),
            }
            self.safe_dirs.insert(dir.clone());
        }
        Ok(())
    }

    /// Creates directories and symlinks and tells the sender what each file needs.
    fn plan(&mut self) -> Result<(), CopyError> {
        for index in 0..self.entries.len() {
            let entry = self.entries[index].clone();
            let file = index as u32;
            let outcome = match self.target(&entry.path) {
                Err(why) => Err(why),
                Ok(target) => {
                    if self.delete {
                        self.expected.insert(&target);
                    }
                    match &entry.kind {
                        Kind::Dir => self.make_dir(&target, &entry).map(Planned::Settled),
                        Kind::Symlink { target: link } => self
                            .make_symlink(&target, link, &entry)
                            .map(Planned::Settled),
                        Kind::File { size } => self
                            .plan_file(file, &target, *size, &entry)
                            .map(Planned::Want),
                    }
                }
            };
            match outcome {
                Ok(Planned::Want(want)) => want.write_to(self.out)?,
                Ok(Planned::Settled(status)) => self.done(file, status)?,
                Err(why) => {
                    if matches!(entry.kind, Kind::File { .. }) {
                        // The sender waits for an answer about every file.
                        Frame::Want {
                            file,
                            up_to_date: true,
                            have: Vec::new(),
                            basis: Vec::new(),
                        }
                        .write_to(self.out)?;
                    }
                    self.done(file, Status::Failed(why))?;
                }
            }
        }
        self.out.flush()?;
        Ok(())
    }

    /// Creates (or, dry, only checks) a directory: [`Status::Written`] if it was created,
    /// [`Status::UpToDate`] if it was there.
    fn make_dir(&mut self, target: &Path, entry: &Entry) -> Result<Status, String> {
        self.check_parents(target)?;
        let status = match fs::symlink_metadata(target) {
            Ok(m) if m.file_type().is_dir() => Status::UpToDate,
            Ok(_) => {
                return Err(format!(
                    "{}: exists and is not a directory",
                    target.display()
                ))
            }
            Err(_) if self.dry_run => Status::Written,
            Err(_) => {
                fs::create_dir(target).map_err(|e| format!("{}: {e}", target.display()))?;
                Status::Written
            }
        };
        // Dry, a directory that would be created is as good as one for what goes inside it.
        self.safe_dirs.insert(target.to_path_buf());
        if !(self.dry_run && status == Status::Written) {
            self.dirs
                .push((target.to_path_buf(), entry.mode, entry.mtime));
        }
        Ok(status)
    }

    /// Creates (or, dry, only checks) a symlink, replacing whatever non-directory is there.
    fn make_symlink(&mut self, target: &Path, link: &str, entry: &Entry) -> Result<Status, String> {
        self.check_parents(target)?;
        let status = match fs::symlink_metadata(target) {
            Ok(m)
                if m.is_symlink() && fs::read_link(target).is_ok_and(|t| t == Path::new(link)) =>
            {
                Status::UpToDate
            }
            Ok(_) => Status::Updated,
            Err(_) => Status::Written,
        };
        if self.dry_run {
            return Ok(status);
        }
        let temp = part_name(target, "part");
        let _ = fs::remove_file(&temp);
        std::os::unix::fs::symlink(link, &temp).map_err(|e| format!("{}: {e}", temp.display()))?;
        set_symlink_mtime(&temp, entry.mtime);
        fs::rename(&temp, target).map_err(|e| format!("{}: {e}", target.display()))?;
        Ok(status)
    }

    fn plan_file(
        &mut self,
        file: u32,
        target: &Path,
        size: u64,
        entry: &Entry,
    ) -> Result<Frame, String> {
        self.check_parents(target)?;
        let existing = fs::symlink_metadata(target);
        let replaces = existing.is_ok();
        if let Ok(m) = existing {
            if m.is_dir() {
                return Err(format!("{}: exists and is a directory", target.display()));
            }
            if m.is_file() && m.len() == size && mtime_of(&m) == entry.mtime {
                self.summary.up_to_date += 1;
                Progress::add(&self.progress.bytes_done, size);
                self.done(file, Status::UpToDate)
                    .map_err(|e| e.to_string())?;
                return Ok(Frame::Want {
                    file,
                    up_to_date: true,
                    have: Vec::new(),
                    basis: Vec::new(),
                });
            }
        }
        let identity = Identity {
            size,
            mtime: entry.mtime,
            chunk_size: self.chunk_size,
        };
        let chunks = size.div_ceil(self.chunk_size as u64) as usize;
        let part_path = part_name(target, "part");
        let journal_path = part_name(target, "journal");
        let mut hashes = vec![None; chunks];
        let mut have = Vec::new();
        // Only files of more than one chunk get a journal: skip the look for the others.
        let resumable = chunks > 1 && !self.no_resume;
        if resumable && fs::symlink_metadata(&part_path).is_ok_and(|m| m.is_file()) {
            for (index, hash) in Journal::load(&journal_path, identity).unwrap_or_default() {
                if hashes[index as usize].replace(hash).is_none() {
                    have.push((index, hash));
                }
            }
        }
        let resumed: u64 = have
            .iter()
            .map(|&(i, _)| chunk_len(size, self.chunk_size, i))
            .sum();
        self.summary.bytes_resumed += resumed;
        Progress::add(&self.progress.bytes_done, resumed);
        // An older version in place: offer its chunks, so that only changed ones travel.
        let (basis, basis_version) = if fs::symlink_metadata(target).is_ok_and(|m| m.is_file()) {
            basis::hash_chunks(target, size, self.chunk_size, &hashes)
        } else {
            (Vec::new(), None)
        };
        let mut offered = vec![None; if basis.is_empty() { 0 } else { chunks }];
        for &(index, hash) in &basis {
            offered[index as usize] = Some(hash);
        }
        self.incoming.insert(
            file,
            Incoming {
                part: None,
                part_path,
                final_path: target.to_path_buf(),
                journal_path,
                journal: None,
                identity,
                hashes,
                basis: offered,
                basis_version,
                unjournaled: Vec::new(),
                unjournaled_bytes: 0,
                failed: None,
                resumed: false,
                replaces,
            },
        );
        Ok(Frame::Want {
            file,
            up_to_date: false,
            have,
            basis,
        })
    }

    fn done(&mut self, file: u32, status: Status) -> Result<(), CopyError> {
        let path = || self.entries[file as usize].path.to_string();
        let change = match &status {
            Status::Failed(why) => {
                let path = path();
                tracing::warn!(%path, "{why}");
                self.summary.failures.push((path, why.clone()));
                None
            }
            Status::UpToDate => None,
            Status::Written => Some(ChangeKind::Created),
            Status::Updated => Some(ChangeKind::Updated),
        };
        if let Some(kind) = change.filter(|_| self.itemize) {
            let path = path();
            self.summary.changes.push(Change { kind, path });
        }
        Progress::add(&self.progress.files_done, 1);
        Frame::Done { file, status }.write_to(self.out)?;
        Ok(())
    }

    fn receive_data(&mut self, frames: &FrameInbox) -> Result<(), CopyError> {
        loop {
            let frame = frames
                .recv()
                .map_err(|_| CopyError::Protocol("the frame reader stopped".into()))?;
            match frame? {
                Some(Frame::Chunk {
                    file,
                    index,
                    hash,
                    data,
                }) => self.on_chunk(file, index, hash, &data)?,
                Some(Frame::FileEnd { file, root }) => self.on_file_end(file, Ok(root))?,
                Some(Frame::Abandon { file, reason }) => self.on_file_end(file, Err(reason))?,
                Some(Frame::End) => break,
                Some(Frame::Error(message)) => return Err(CopyError::Remote(message)),
                Some(_) => return Err(CopyError::Protocol("unexpected message".into())),
                None => {
                    return Err(CopyError::Protocol(
                        "the sender closed the connection before the end".into(),
                    ))
                }
            }
            if self.incoming.is_empty() && !self.ready.is_empty() {
                self.flush_ready()?;
            }
        }
        self.flush_ready()?;
        if !self.incoming.is_empty() {
            return Err(CopyError::Protocol(
                "the sender ended before every file".into(),
            ));
        }
        if self.delete {
            self.delete_extraneous()?;
        }
        if !self.dry_run {
            self.finish_dirs();
        }
        Frame::Finished {
            deleted: self.summary.deleted,
        }
        .write_to(self.out)?;
        self.out.flush()?;
        Ok(())
    }

    fn on_chunk(
        &mut self,
        file: u32,
        index: u32,
        hash: [u8; 32],
        data: &[u8],
    ) -> Result<(), CopyError> {
        let chunk_size = self.chunk_size;
        let incoming = self.incoming.get_mut(&file).ok_or_else(|| {
            CopyError::Protocol(format!("data for entry {file}, which was not asked for"))
        })?;
        let size = incoming.identity.size;
        if index as usize >= incoming.hashes.len() {
            return Err(CopyError::Protocol(format!(
                "chunk {index} of entry {file} is beyond its end"
            )));
        }
        let len = chunk_len(size, chunk_size, index);
        if self.dry_run && data.is_empty() {
            // Only which chunk would travel.
            self.summary.bytes_sent += len;
            incoming.hashes[index as usize] = Some(hash);
            return Ok(());
        }
        if self.dry_run || data.len() as u64 != len {
            return Err(CopyError::Protocol(format!(
                "chunk {index} of entry {file} has the wrong size"
            )));
        }
        Progress::add(&self.progress.bytes_done, data.len() as u64);
        self.summary.bytes_sent += data.len() as u64;
        if incoming.failed.is_some() {
            return Ok(());
        }
        if *blake3::hash(data).as_bytes() != hash {
            incoming.failed = Some(format!("chunk {index} arrived altered (BLAKE3 mismatch)"));
            return Ok(());
        }
        if let Err(e) = incoming.write(index, hash, data, chunk_size) {
            incoming.failed = Some(format!("{}: {e}", incoming.part_path.display()));
        }
        Ok(())
    }

    fn on_file_end(&mut self, file: u32, root: Result<[u8; 32], String>) -> Result<(), CopyError> {
        let mut incoming = self.incoming.remove(&file).ok_or_else(|| {
            CopyError::Protocol(format!("end of entry {file}, which was not asked for"))
        })?;
        let status = if incoming.replaces {
            Status::Updated
        } else {
            Status::Written
        };
        if self.dry_run {
            let matched = incoming.basis_bytes_missing(self.chunk_size);
            self.summary.bytes_matched += matched;
            let status = root.map_or_else(Status::Failed, |_| status);
            return self.done(file, status);
        }
        let matched = incoming.fill_from_basis(self.chunk_size);
        self.summary.bytes_matched += matched;
        Progress::add(&self.progress.bytes_done, matched);
        let entry = &self.entries[file as usize];
        let outcome = root.and_then(|root| incoming.verify(root)).and_then(|()| {
            incoming
                .seal(entry.mode, entry.mtime)
                .map_err(|e| format!("{}: {e}", incoming.part_path.display()))
        });
        if let Err(why) = outcome {
            incoming.discard();
            return self.done(file, Status::Failed(why));
        }
        let size = incoming.identity.size;
        let part = incoming.part.take();
        let ready = Ready {
            file,
            replaces: incoming.replaces,
            part_path: incoming.part_path,
            final_path: incoming.final_path,
            journal_path: incoming.journal.is_some().then_some(incoming.journal_path),
        };
        if size >= SYNC_ALONE {
            if let Some(part) = part {
                part.sync_data()?;
            }
            let result = ready.rename();
            sync_parent(&ready.final_path);
            return self.done(ready.file, result);
        }
        self.ready.push(ready);
        self.ready_bytes += size;
        if self.ready.len() >= BATCH_FILES || self.ready_bytes >= BATCH_BYTES {
            self.flush_ready()?;
        }
        Ok(())
    }

    /// Syncs the batch of small files (one `syncfs`), renames them into place, reports them.
    fn flush_ready(&mut self) -> Result<(), CopyError> {
        if self.ready.is_empty() {
            return Ok(());
        }
        syncfs(&self.root)?;
        let mut parents = HashSet::new();
        for ready in std::mem::take(&mut self.ready) {
            let result = ready.rename();
            if let Some(parent) = ready.final_path.parent() {
                parents.insert(parent.to_path_buf());
            }
            self.done(ready.file, result)?;
        }
        for parent in parents {
            sync_dir(&parent);
        }
        self.ready_bytes = 0;
        Ok(())
    }

    /// Mirroring: removes (dry: lists) what the copied directories hold beyond the manifest,
    /// telling the sender each path.
    fn delete_extraneous(&mut self) -> Result<(), CopyError> {
        let mut dirs: Vec<PathBuf> = self.dirs.iter().map(|(path, ..)| path.clone()).collect();
        // Never the parent of a single entry copied under a new name.
        if self.mirror_root && self.rename_top.is_none() {
            dirs.push(self.root.clone());
        }
        let (deleted, failures) = mirror::delete_extraneous(&dirs, &self.expected, self.dry_run);
        self.summary.deleted = deleted.len() as u64;
        self.summary.failures.extend(failures);
        for path in deleted {
            let shown = path.strip_prefix(&self.root).unwrap_or(&path);
            let shown = shown.to_string_lossy().into_owned();
            Frame::Deleted(shown.clone()).write_to(self.out)?;
            if self.itemize {
                self.summary.changes.push(Change {
                    kind: ChangeKind::Deleted,
                    path: shown,
                });
            }
        }
        Ok(())
    }

    /// Directory modes and mtimes, deepest first (writing inside a directory changes its mtime).
    fn finish_dirs(&mut self) {
        self.dirs
            .sort_by_key(|(path, ..)| std::cmp::Reverse(path.components().count()));
        for (path, mode, mtime) in &self.dirs {
            let _ = fs::set_permissions(path, fs::Permissions::from_mode(safe_mode(*mode)));
            if let Ok(dir) = File::open(path) {
                let _ = dir.set_modified(system_time(*mtime));
            }
        }
    }

    /// The copy failed: keep what a retry can resume, remove what it cannot.
    fn abandon(&mut self) {
        if self.dry_run {
            return;
        }
        for (_, mut incoming) in self.incoming.drain() {
            if incoming.journal.is_some() {
                let _ = incoming.make_durable();
            } else {
                incoming.discard();
            }
        }
        for ready in self.ready.drain(..) {
            let _ = fs::remove_file(&ready.part_path);
        }
    }
}

impl Incoming {
    fn write(
        &mut self,
        index: u32,
        hash: [u8; 32],
        data: &[u8],
        chunk_size: u32,
    ) -> io::Result<()> {
        if self.part.is_none() {
            self.open()?;
        }
        let part = self.part.as_ref().expect("opened above");
        part.write_all_at(data, index as u64 * chunk_size as u64)?;
        self.hashes[index as usize] = Some(hash);
        if self.journal.is_some() {
            self.unjournaled.push((index, hash));
            self.unjournaled_bytes += data.len() as u64;
            if self.unjournaled_bytes >= JOURNAL_EVERY {
                self.make_durable()?;
            }
        }
        Ok(())
    }

    /// Opens the partial file: the existing one if chunks are being resumed, a new one otherwise
    /// (never through a symlink). Files of more than one chunk get a journal.
    fn open(&mut self) -> io::Result<()> {
        let resuming = self.hashes.iter().any(Option::is_some);
        self.resumed = resuming;
        let mut options = OpenOptions::new();
        options.write(true).custom_flags(libc::O_NOFOLLOW);
        if resuming {
            self.part = Some(options.open(&self.part_path)?);
            self.journal = Some(Journal::reopen(&self.journal_path)?);
        } else {
            options.create_new(true).mode(0o600);
            let part = match options.open(&self.part_path) {
                // Left by an earlier attempt that cannot be resumed: start over.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    fs::remove_file(&self.part_path)?;
                    options.open(&self.part_path)?
                }
                other => other?,
            };
            self.part = Some(part);
            if self.hashes.len() > 1 {
                self.journal = Some(Journal::create(&self.journal_path, self.identity)?);
            }
        }
        Ok(())
    }

    /// Syncs the data written so far and journals its chunks.
    fn make_durable(&mut self) -> io::Result<()> {
        if let (Some(part), Some(journal)) = (self.part.as_ref(), self.journal.as_mut()) {
            part.sync_data()?;
            journal.record(&self.unjournaled)?;
            self.unjournaled.clear();
            self.unjournaled_bytes = 0;
        }
        Ok(())
    }

    /// Copies the chunks `missing` from `old` (unchanged since they were hashed) inside the
    /// kernel, runs of adjacent chunks at once; the bytes copied. They are not journaled: an
    /// interrupted copy finds them in the older file again.
    fn copy_unchanged(
        &mut self,
        old: &File,
        missing: &[(u32, [u8; 32])],
        chunk_size: u32,
    ) -> io::Result<u64> {
        if self.part.is_none() {
            self.open()?;
        }
        let part = self.part.as_ref().expect("opened above");
        let size = self.identity.size;
        let mut copied = 0;
        let mut run: Option<(u32, u32)> = None;
        let flush = |run: (u32, u32)| -> io::Result<u64> {
            let offset = run.0 as u64 * chunk_size as u64;
            let end = (run.1 as u64 * chunk_size as u64).min(size);
            basis::copy_range(old, part, offset, end - offset)?;
            Ok(end - offset)
        };
        for &(index, _) in missing {
            run = match run {
                Some((start, end)) if end == index => Some((start, index + 1)),
                Some(done) => {
                    copied += flush(done)?;
                    Some((index, index + 1))
                }
                None => Some((index, index + 1)),
            };
        }
        if let Some(last) = run {
            copied += flush(last)?;
        }
        for &(index, hash) in missing {
            self.hashes[index as usize] = Some(hash);
        }
        Ok(copied)
    }

    /// Dry run: the bytes the older file would give (offered chunks the sender would not send).
    fn basis_bytes_missing(&self, chunk_size: u32) -> u64 {
        self.basis
            .iter()
            .enumerate()
            .filter(|&(index, hash)| hash.is_some() && self.hashes[index].is_none())
            .map(|(index, _)| chunk_len(self.identity.size, chunk_size, index as u32))
            .sum()
    }

    /// Copies from the older file every chunk the sender did not send because it matched;
    /// the bytes copied. A chunk that no longer matches (the older file changed meanwhile) is
    /// left missing, and the file fails its check.
    fn fill_from_basis(&mut self, chunk_size: u32) -> u64 {
        let missing: Vec<(u32, [u8; 32])> = self
            .basis
            .iter()
            .enumerate()
            .filter(|&(index, _)| self.hashes[index].is_none())
            .filter_map(|(index, hash)| Some((index as u32, (*hash)?)))
            .collect();
        if missing.is_empty() || self.failed.is_some() {
            return 0;
        }
        let old = match basis::open(&self.final_path) {
            Ok(old) => old,
            Err(e) => {
                self.failed = Some(format!("{}: {e}", self.final_path.display()));
                return 0;
            }
        };
        let size = self.identity.size;
        let unchanged = old
            .metadata()
            .is_ok_and(|m| Some(basis::Version::of(&m)) == self.basis_version);
        if unchanged {
            match self.copy_unchanged(&old, &missing, chunk_size) {
                Ok(copied) => return copied,
                Err(e) => {
                    self.failed = Some(format!("{}: {e}", self.part_path.display()));
                    return 0;
                }
            }
        }
        let mut data = vec![0u8; chunk_size as usize];
        let mut copied = 0;
        for (index, hash) in missing {
            let len = chunk_len(size, chunk_size, index) as usize;
            let data = &mut data[..len];
            let offset = index as u64 * chunk_size as u64;
            if old.read_exact_at(data, offset).is_err() || *blake3::hash(data).as_bytes() != hash {
                self.failed = Some(format!(
                    "{} changed during the copy (its chunk {index} no longer matches)",
                    self.final_path.display()
                ));
                return copied;
            }
            if let Err(e) = self.write(index, hash, data, chunk_size) {
                self.failed = Some(format!("{}: {e}", self.part_path.display()));
                return copied;
            }
            copied += len as u64;
        }
        copied
    }

    /// Checks every chunk is present and the digest matches the sender's.
    fn verify(&self, root: [u8; 32]) -> Result<(), String> {
        if let Some(why) = &self.failed {
            return Err(why.clone());
        }
        let mut hasher = blake3::Hasher::new();
        for (index, hash) in self.hashes.iter().enumerate() {
            hasher.update(
                hash.as_ref()
                    .ok_or(format!("chunk {index} never arrived"))?,
            );
        }
        if *hasher.finalize().as_bytes() != root {
            return Err(
                "whole-file BLAKE3 digest mismatch (was the source changed while copying?)".into(),
            );
        }
        Ok(())
    }

    /// Gives the verified partial file its final length, mode and mtime.
    fn seal(&mut self, mode: u32, mtime: (i64, u32)) -> io::Result<()> {
        if self.part.is_none() {
            // Empty, or every chunk resumed: open what is there (or create the empty file).
            self.open()?;
        }
        let part = self.part.as_ref().expect("opened above");
        if self.resumed {
            // A partial file from an earlier attempt may be longer than this version.
            part.set_len(self.identity.size)?;
        }
        part.set_permissions(fs::Permissions::from_mode(safe_mode(mode)))?;
        part.set_modified(system_time(mtime))?;
        Ok(())
    }

    fn discard(&mut self) {
        self.part = None;
        let _ = fs::remove_file(&self.part_path);
        let _ = fs::remove_file(&self.journal_path);
    }
}

impl Ready {
    fn rename(&self) -> Status {
        match fs::rename(&self.part_path, &self.final_path) {
            Ok(()) => {
                if let Some(journal) = &self.journal_path {
                    let _ = fs::remove_file(journal);
                }
                if self.replaces {
                    Status::Updated
                } else {
                    Status::Written
                }
            }
            Err(e) => Status::Failed(format!("{}: {e}", self.final_path.display())),
        }
    }
}

fn chunk_len(size: u64, chunk_size: u32, index: u32) -> u64 {
    let start = index as u64 * chunk_size as u64;
    (chunk_size as u64).min(size.saturating_sub(start))
}

/// `.NAME.haul-SUFFIX` beside `target`.
fn part_name(target: &Path, suffix: &str) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.haul-{suffix}"))
}

/// Permission bits a receiver applies: never set-user-id or set-group-id from the network.
fn safe_mode(mode: u32) -> u32 {
    mode & 0o1777
}

fn mtime_of(m: &fs::Metadata) -> (i64, u32) {
    use std::os::unix::fs::MetadataExt;
    (m.mtime(), m.mtime_nsec() as u32)
}

fn system_time((secs, nanos): (i64, u32)) -> SystemTime {
    if secs >= 0 {
        SystemTime::UNIX_EPOCH + Duration::new(secs as u64, nanos)
    } else {
        SystemTime::UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs())
            + Duration::from_nanos(nanos as u64)
    }
}

fn set_symlink_mtime(path: &Path, (secs, nanos): (i64, u32)) {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return;
    };
    let t = libc::timespec {
        tv_sec: secs as libc::time_t,
        tv_nsec: nanos as libc::c_long,
    };
    let times = [t, t];
    // SAFETY: a valid C string and two timespecs, live for the call.
    unsafe {
        libc::utimensat(
            libc::AT_FDCWD,
            c.as_ptr(),
            times.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
}

/// Flushes the file system holding `dir` (one call for a whole batch of small files).
fn syncfs(dir: &Path) -> io::Result<()> {
    let d = File::open(dir)?;
    use std::os::fd::AsRawFd;
    // SAFETY: a valid open descriptor.
    if unsafe { libc::syncfs(d.as_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes renames in `dir` durable.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

fn sync_parent(path: &Path) {
    if let Some(parent) = path.parent() {
        sync_dir(parent);
    }
}
