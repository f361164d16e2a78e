//! The file engine over a local socket pair: trees arrive identical (content, modes, mtimes,
//! symlinks, empty files and directories), interrupted copies resume without re-sending verified
//! chunks and never leave a partial file under a final name, and a hostile sender cannot write
//! outside the destination.

use haul_files::frame::{Frame, VERSION};
use haul_files::manifest::{Entry, Kind};
use haul_files::path::RelPath;
use haul_files::{
    receive, receive_with, send, Change, ChangeKind, CopyError, Progress, ReceiveOptions,
    SendOptions, Summary,
};
use rand::{RngCore, SeedableRng};
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, SystemTime};

const CHUNK: u32 = 64 << 10;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("haul-files-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_file(path: &Path, len: usize, seed: u64, mode: u32, mtime_secs: u64) {
    let mut data = vec![0u8; len];
    rand::rngs::SmallRng::seed_from_u64(seed).fill_bytes(&mut data);
    fs::write(path, &data).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    let f = fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::new(mtime_secs, 123_456_789))
        .unwrap();
}

/// A tree with every kind of entry and the chunk-boundary sizes.
fn make_tree(root: &Path) {
    fs::create_dir_all(root.join("sub/deeper")).unwrap();
    fs::create_dir_all(root.join("empty-dir")).unwrap();
    let c = CHUNK as usize;
    for (i, len) in [0, 1, c - 1, c, c + 1, 5 * c + c / 2]
        .into_iter()
        .enumerate()
    {
        write_file(
            &root.join(format!("f{i}")),
            len,
            i as u64,
            0o640,
            1_600_000_000 + i as u64,
        );
    }
    write_file(
        &root.join("sub/deeper/x.bin"),
        3 * c,
        99,
        0o755,
        1_500_000_000,
    );
    std::os::unix::fs::symlink("../f1", root.join("sub/link-up")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/abs", root.join("dangling")).unwrap();
    fs::set_permissions(root.join("sub"), fs::Permissions::from_mode(0o750)).unwrap();
}

/// Every entry under `a` and `b`: kind, content, mode, mtime and link target agree.
fn assert_same_tree(a: &Path, b: &Path) {
    let mut names_a: Vec<_> = fs::read_dir(a)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let mut names_b: Vec<_> = fs::read_dir(b)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names_a.sort();
    names_b.sort();
    assert_eq!(names_a, names_b, "{} vs {}", a.display(), b.display());
    for name in names_a {
        let (pa, pb) = (a.join(&name), b.join(&name));
        let (ma, mb) = (
            fs::symlink_metadata(&pa).unwrap(),
            fs::symlink_metadata(&pb).unwrap(),
        );
        assert_eq!(ma.file_type(), mb.file_type(), "{}", pb.display());
        assert_eq!(
            (ma.mtime(), ma.mtime_nsec()),
            (mb.mtime(), mb.mtime_nsec()),
            "{}",
            pb.display()
        );
        if ma.is_symlink() {
            assert_eq!(fs::read_link(&pa).unwrap(), fs::read_link(&pb).unwrap());
            continue;
        }
        assert_eq!(ma.mode() & 0o7777, mb.mode() & 0o7777, "{}", pb.display());
        if ma.is_dir() {
            assert_same_tree(&pa, &pb);
        } else {
            assert!(
                fs::read(&pa).unwrap() == fs::read(&pb).unwrap(),
                "{}",
                pb.display()
            );
        }
    }
}

/// A writer that fails after `limit` bytes, as a connection that drops.
struct Cut<W> {
    inner: W,
    limit: u64,
}

impl<W: Write> Write for Cut<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.limit == 0 {
            return Err(io::Error::new(io::ErrorKind::ConnectionReset, "cut"));
        }
        let n = buf.len().min(self.limit as usize);
        let n = self.inner.write(&buf[..n])?;
        self.limit -= n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Copies `sources` into `dest`, the sender's writes cut after `cut` bytes if given.
fn copy(
    sources: &[PathBuf],
    dest: &Path,
    cut: Option<u64>,
) -> (Result<Summary, CopyError>, Result<Summary, CopyError>) {
    copy_with(sources, dest, cut, SendOptions::default())
}

/// [`copy`] with these options (the chunk size is the tests'); the receiver itemizes when the
/// sender does.
fn copy_with(
    sources: &[PathBuf],
    dest: &Path,
    cut: Option<u64>,
    options: SendOptions,
) -> (Result<Summary, CopyError>, Result<Summary, CopyError>) {
    let (a, b) = UnixStream::pair().unwrap();
    let dest = dest.to_path_buf();
    let itemize = options.itemize;
    let receiver = thread::spawn(move || {
        let r = b.try_clone().unwrap();
        let options = ReceiveOptions { itemize };
        let result = receive_with(r, &b, &dest, &options, &Progress::default());
        let _ = b.shutdown(std::net::Shutdown::Both);
        result
    });
    let options = SendOptions {
        chunk_size: CHUNK,
        ..options
    };
    let input = a.try_clone().unwrap();
    let output = Cut {
        inner: a.try_clone().unwrap(),
        limit: cut.unwrap_or(u64::MAX),
    };
    let sent = send(
        input,
        output,
        sources,
        &options,
        &Arc::new(Progress::default()),
    );
    let _ = a.shutdown(std::net::Shutdown::Both);
    (sent, receiver.join().unwrap())
}

#[test]
fn a_tree_arrives_identical_into_a_directory_and_under_a_new_name() {
    let dir = scratch("tree");
    make_tree(&dir.join("src"));
    fs::create_dir(dir.join("into")).unwrap();
    let (sent, received) = copy(&[dir.join("src")], &dir.join("into"), None);
    let (sent, received) = (sent.unwrap(), received.unwrap());
    assert_eq!(sent.failures, vec![]);
    assert_eq!((sent.files, sent.dirs, sent.symlinks), (7, 4, 2));
    assert_eq!(sent.bytes_sent, sent.bytes);
    assert_eq!(
        (received.bytes, received.bytes_sent),
        (sent.bytes, sent.bytes)
    );
    assert_same_tree(&dir.join("src"), &dir.join("into/src"));
    // `cp -r src renamed`: a destination that does not exist names the single source.
    copy(&[dir.join("src")], &dir.join("renamed"), None)
        .1
        .unwrap();
    assert_same_tree(&dir.join("src"), &dir.join("renamed"));
    // Nothing temporary is left behind.
    let leftovers = walk(&dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".haul-"));
    assert_eq!(leftovers.count(), 0);
    // A second run finds everything up to date and sends no data.
    let (again, _) = copy(&[dir.join("src")], &dir.join("into"), None);
    let again = again.unwrap();
    assert_eq!((again.bytes_sent, again.up_to_date), (0, 7));
    fs::remove_dir_all(dir).unwrap();
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if fs::symlink_metadata(&p).unwrap().is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

#[test]
fn an_interrupted_copy_resumes_without_resending_verified_chunks() {
    let dir = scratch("resume");
    let src = dir.join("big.bin");
    let size = 40 * CHUNK as usize;
    write_file(&src, size, 7, 0o644, 1_650_000_000);
    let dest = dir.join("out");
    fs::create_dir(&dest).unwrap();
    // Cut the connection after about 70 % of the data.
    let (sent, received) = copy(
        std::slice::from_ref(&src),
        &dest,
        Some(size as u64 * 7 / 10),
    );
    assert!(sent.is_err() && received.is_err());
    assert!(
        !dest.join("big.bin").exists(),
        "a partial file under the final name"
    );
    assert!(dest.join(".big.bin.haul-part").exists());
    let (sent, received) = copy(std::slice::from_ref(&src), &dest, None);
    let (sent, received) = (sent.unwrap(), received.unwrap());
    assert!(fs::read(&src).unwrap() == fs::read(dest.join("big.bin")).unwrap());
    assert!(sent.bytes_resumed >= size as u64 / 2, "{sent:?}");
    assert_eq!(sent.bytes_resumed + sent.bytes_sent, size as u64);
    assert_eq!(received.bytes_resumed, sent.bytes_resumed);
    assert!(
        !dest.join(".big.bin.haul-part").exists() && !dest.join(".big.bin.haul-journal").exists()
    );
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_changed_source_is_not_resumed_from_stale_chunks() {
    let dir = scratch("stale");
    let src = dir.join("f");
    write_file(&src, 20 * CHUNK as usize, 1, 0o644, 1_000);
    let dest = dir.join("out");
    fs::create_dir(&dest).unwrap();
    assert!(
        copy(std::slice::from_ref(&src), &dest, Some(15 * CHUNK as u64))
            .1
            .is_err()
    );
    write_file(&src, 20 * CHUNK as usize, 2, 0o644, 2_000);
    let (sent, _) = copy(std::slice::from_ref(&src), &dest, None);
    assert_eq!(sent.unwrap().bytes_resumed, 0);
    assert!(fs::read(&src).unwrap() == fs::read(dest.join("f")).unwrap());
    fs::remove_dir_all(dir).unwrap();
}

/// Plays a hostile sender: a symlink out of the destination, then a file through it.
#[test]
fn a_hostile_sender_cannot_write_through_a_symlink_or_outside() {
    let dir = scratch("hostile");
    let outside = dir.join("outside");
    fs::create_dir(&outside).unwrap();
    let dest = dir.join("dest");
    fs::create_dir(&dest).unwrap();
    let (a, b) = UnixStream::pair().unwrap();
    let d = dest.clone();
    let receiver =
        thread::spawn(move || receive(b.try_clone().unwrap(), &b, &d, &Progress::default()));
    let entry = |path: &str, kind| Entry {
        path: RelPath::new(path).unwrap(),
        kind,
        mode: 0o6755,
        mtime: (0, 0),
    };
    let target = outside.to_string_lossy().into_owned();
    let mut w = &a;
    plain_hello().write_to(&mut w).unwrap();
    Frame::Entries(vec![
        entry("t", Kind::Dir),
        entry("t/escape", Kind::Symlink { target }),
        entry("t/escape/pwned", Kind::File { size: 4 }),
        entry("t/setuid", Kind::File { size: 4 }),
    ])
    .write_to(&mut w)
    .unwrap();
    Frame::EntriesEnd.write_to(&mut w).unwrap();
    let data = b"evil".to_vec();
    let hash = *blake3::hash(&data).as_bytes();
    // The receiver refused entry 2 (answered "up to date" so nothing is expected); sending its
    // data anyway is a protocol violation that ends the copy.
    for file in [3u32, 2] {
        Frame::Chunk {
            file,
            index: 0,
            hash,
            data: data.clone(),
        }
        .write_to(&mut w)
        .unwrap();
        let root = *blake3::hash(&hash).as_bytes();
        Frame::FileEnd { file, root }.write_to(&mut w).unwrap();
    }
    let result = receiver.join().unwrap();
    assert!(matches!(result, Err(CopyError::Protocol(_))), "{result:?}");
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        0,
        "wrote outside the destination"
    );
    // The legitimate file was written without its set-id bits.
    let mode = fs::metadata(dest.join("t/setuid")).unwrap().mode() & 0o7777;
    assert_eq!(mode, 0o755);
    fs::remove_dir_all(dir).unwrap();
}

/// The hello of a plain copy, for tests that play the sender by hand.
fn plain_hello() -> Frame {
    Frame::Hello {
        version: VERSION,
        chunk_size: CHUNK,
        no_resume: false,
        delete: false,
        dry_run: false,
        contents: false,
    }
}

fn mirror() -> SendOptions {
    SendOptions {
        delete: true,
        ..SendOptions::default()
    }
}

fn set_mtime(path: &Path, secs: u64) {
    let f = fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

#[test]
fn a_changed_file_sends_only_the_chunks_that_differ() {
    let dir = scratch("delta");
    let c = CHUNK as usize;
    let src = dir.join("big.bin");
    write_file(&src, 8 * c, 5, 0o644, 1_600_000_000);
    let into = dir.join("into");
    fs::create_dir(&into).unwrap();
    copy(std::slice::from_ref(&src), &into, None).1.unwrap();

    // One byte changed in chunk 3 and half a chunk appended: two chunks travel, seven match.
    let mut data = fs::read(&src).unwrap();
    data[3 * c + 17] ^= 0xff;
    data.extend(std::iter::repeat_n(7u8, c / 2));
    fs::write(&src, &data).unwrap();
    set_mtime(&src, 1_700_000_000);
    let (sent, received) = copy(std::slice::from_ref(&src), &into, None);
    let (sent, received) = (sent.unwrap(), received.unwrap());
    assert_eq!(sent.failures, vec![]);
    assert_eq!(
        (sent.bytes_sent, sent.bytes_matched),
        ((c + c / 2) as u64, 7 * c as u64)
    );
    assert_eq!(
        (received.bytes_sent, received.bytes_matched),
        (sent.bytes_sent, sent.bytes_matched)
    );
    assert_same_tree(&dir.join("into"), &{
        let only = dir.join("only");
        fs::create_dir_all(&only).unwrap();
        fs::copy(&src, only.join("big.bin")).unwrap();
        fs::set_permissions(only.join("big.bin"), fs::Permissions::from_mode(0o644)).unwrap();
        set_mtime(&only.join("big.bin"), 1_700_000_000);
        only
    });

    // Truncated inside a chunk: nothing travels, the older file holds every byte.
    data.truncate(5 * c + c / 3);
    fs::write(&src, &data).unwrap();
    set_mtime(&src, 1_700_000_100);
    let (sent, _) = copy(std::slice::from_ref(&src), &into, None);
    let sent = sent.unwrap();
    assert_eq!(
        (sent.bytes_sent, sent.bytes_matched),
        (0, data.len() as u64)
    );
    assert_eq!(fs::read(into.join("big.bin")).unwrap(), data);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn mirroring_removes_what_the_source_no_longer_has_and_nothing_else() {
    let dir = scratch("mirror");
    let src = dir.join("src");
    make_tree(&src);
    let into = dir.join("into");
    fs::create_dir(&into).unwrap();
    fs::write(into.join("unrelated"), b"not part of the copy").unwrap();
    copy_with(std::slice::from_ref(&src), &into, None, mirror())
        .1
        .unwrap();

    // Without mirroring an extra file stays; with it, it goes.
    fs::write(into.join("src/extra"), b"x").unwrap();
    copy(std::slice::from_ref(&src), &into, None).1.unwrap();
    assert!(into.join("src/extra").exists());

    fs::remove_file(src.join("f2")).unwrap();
    fs::remove_dir_all(src.join("sub/deeper")).unwrap();
    write_file(&src.join("new"), 10, 1, 0o600, 1_650_000_000);
    let (sent, received) = copy_with(std::slice::from_ref(&src), &into, None, mirror());
    let (sent, received) = (sent.unwrap(), received.unwrap());
    assert_eq!(received.failures, vec![]);
    assert_eq!(
        (sent.deleted, received.deleted),
        (3, 3),
        "extra, f2 and sub/deeper"
    );
    assert_same_tree(&src, &into.join("src"));
    assert!(
        into.join("unrelated").exists(),
        "outside the copied directories"
    );
    fs::remove_dir_all(dir).unwrap();
}

/// Every entry below `root`: path, kind, mode, mtime, content or link target.
fn snapshot(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for item in fs::read_dir(&dir).unwrap() {
            let path = item.unwrap().path();
            let m = fs::symlink_metadata(&path).unwrap();
            let what = if m.is_symlink() {
                format!("link {:?}", fs::read_link(&path).unwrap())
            } else if m.is_dir() {
                stack.push(path.clone());
                "dir".to_string()
            } else {
                blake3::hash(&fs::read(&path).unwrap()).to_hex().to_string()
            };
            let stamp = format!("{what} {:o} {} {}", m.mode(), m.mtime(), m.mtime_nsec());
            out.push((path, stamp));
        }
    }
    out.sort();
    out
}

#[test]
fn a_dry_run_changes_nothing_and_tells_what_a_real_run_does() {
    let dir = scratch("dry");
    let c = CHUNK as usize;
    let src = dir.join("src");
    make_tree(&src);
    let into = dir.join("into");
    fs::create_dir(&into).unwrap();
    copy(std::slice::from_ref(&src), &into, None).1.unwrap();

    // Changes of every kind: an edited chunk, a new file in a new directory, deletions.
    let big = src.join("f5");
    let mut data = fs::read(&big).unwrap();
    data[c + 1] ^= 1;
    fs::write(&big, &data).unwrap();
    set_mtime(&big, 1_700_000_000);
    fs::create_dir(src.join("fresh")).unwrap();
    write_file(&src.join("fresh/new"), 2 * c, 3, 0o644, 1_650_000_000);
    fs::remove_file(src.join("f1")).unwrap();
    fs::remove_dir_all(src.join("sub/deeper")).unwrap();

    let before = snapshot(&into);
    let options = |dry_run| SendOptions {
        delete: true,
        dry_run,
        itemize: true,
        ..SendOptions::default()
    };
    let (dry_sent, dry_received) =
        copy_with(std::slice::from_ref(&src), &into, None, options(true));
    let (dry_sent, dry_received) = (dry_sent.unwrap(), dry_received.unwrap());
    assert_eq!(snapshot(&into), before, "a dry run changed the destination");

    let (sent, received) = copy_with(std::slice::from_ref(&src), &into, None, options(false));
    let (sent, received) = (sent.unwrap(), received.unwrap());
    assert_same_tree(&src, &into.join("src"));
    for (dry, real) in [(&dry_sent, &sent), (&dry_received, &received)] {
        assert_eq!(dry.failures, vec![]);
        assert_eq!(
            (dry.bytes_sent, dry.bytes_matched, dry.deleted),
            (real.bytes_sent, real.bytes_matched, real.deleted)
        );
        let mut dry_changes = dry.changes.clone();
        let mut changes = real.changes.clone();
        dry_changes.sort_by(|a, b| a.path.cmp(&b.path));
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        assert_eq!(dry_changes, changes);
    }
    assert_eq!(
        (sent.bytes_sent, sent.bytes_matched),
        ((c + 2 * c) as u64, (4 * c + c / 2) as u64)
    );
    let kinds = |kind| {
        let mut paths: Vec<String> = sent
            .changes
            .iter()
            .filter(|ch: &&Change| ch.kind == kind)
            .map(|ch| ch.path.clone())
            .collect();
        paths.sort();
        paths
    };
    assert_eq!(kinds(ChangeKind::Created), ["src/fresh", "src/fresh/new"]);
    assert!(kinds(ChangeKind::Updated).contains(&"src/f5".to_string()));
    assert_eq!(kinds(ChangeKind::Deleted), ["src/f1", "src/sub/deeper"]);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_older_file_that_changes_during_the_copy_is_not_trusted() {
    let dir = scratch("basis-changed");
    let dest = dir.join("dest");
    fs::create_dir(&dest).unwrap();
    let c = CHUNK as usize;
    write_file(&dest.join("f"), 3 * c, 1, 0o644, 1_600_000_000);
    let (a, b) = UnixStream::pair().unwrap();
    let d = dest.clone();
    let receiver =
        thread::spawn(move || receive(b.try_clone().unwrap(), &b, &d, &Progress::default()));
    let (mut w, mut r) = (&a, &a);
    plain_hello().write_to(&mut w).unwrap();
    let entry = Entry {
        path: RelPath::new("f").unwrap(),
        kind: Kind::File { size: 3 * c as u64 },
        mode: 0o644,
        mtime: (1_700_000_000, 0),
    };
    Frame::Entries(vec![entry]).write_to(&mut w).unwrap();
    Frame::EntriesEnd.write_to(&mut w).unwrap();
    let basis = loop {
        match Frame::read_from(&mut r).unwrap() {
            Some(Frame::Want { basis, .. }) => break basis,
            Some(_) => continue,
            None => panic!("no request"),
        }
    };
    assert_eq!(basis.len(), 3, "every chunk of the older file is offered");
    // The older file changes after it was hashed; a sender that finds every chunk the same
    // sends none of them.
    let f = fs::OpenOptions::new()
        .write(true)
        .open(dest.join("f"))
        .unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, b"changed", c as u64 + 5).unwrap();
    let changed = fs::read(dest.join("f")).unwrap();
    let mut root = blake3::Hasher::new();
    for (_, hash) in &basis {
        root.update(hash);
    }
    let root = *root.finalize().as_bytes();
    Frame::FileEnd { file: 0, root }.write_to(&mut w).unwrap();
    Frame::End.write_to(&mut w).unwrap();
    let summary = receiver.join().unwrap().unwrap();
    assert_eq!(summary.failures.len(), 1, "{summary:?}");
    assert!(
        summary.failures[0].1.contains("changed during the copy"),
        "{summary:?}"
    );
    assert_eq!(fs::read(dest.join("f")).unwrap(), changed, "left as it was");
    assert!(!dest.join(".f.haul-part").exists());
    fs::remove_dir_all(dir).unwrap();
}
