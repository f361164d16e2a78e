//! Helpers shared by the `haul` command tests: running commands, writing files and comparing
//! trees.

#![allow(dead_code)] // each test file uses its own subset

use std::fs;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

pub const HAUL: &str = env!("CARGO_BIN_EXE_haul");

pub fn run_ok(mut cmd: Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{:?} failed: {}\n{}",
        cmd,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("a JSON summary")
}

/// A pseudo-random file (xorshift: fast enough for a gigabyte).
pub fn write_file(path: &Path, len: u64, seed: u64) {
    let mut state = seed | 1;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, fs::File::create(path).unwrap());
    let mut left = len;
    let mut block = vec![0u8; 1 << 16];
    while left > 0 {
        for word in block.chunks_exact_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            word.copy_from_slice(&state.to_le_bytes());
        }
        let n = left.min(block.len() as u64) as usize;
        std::io::Write::write_all(&mut w, &block[..n]).unwrap();
        left -= n as u64;
    }
}

pub fn set_mtime(path: &Path, secs: u64) {
    // Read-only is enough for the owner (and works on directories).
    let f = fs::File::open(path).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::new(secs, 987_654_321))
        .unwrap();
}

pub fn set_link_mtime(path: &Path, secs: i64) {
    let path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let time = libc::timespec {
        tv_sec: secs,
        tv_nsec: 123_456_789,
    };
    // SAFETY: a valid C string and two timespecs that outlive the call.
    let rc = unsafe {
        libc::utimensat(
            libc::AT_FDCWD,
            path.as_ptr(),
            [time, time].as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
}

/// Kind, content, mode, mtime and link targets agree everywhere below `a` and `b`.
pub fn assert_same_tree(a: &Path, b: &Path) -> usize {
    let mut names: Vec<_> = fs::read_dir(a)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let mut other: Vec<_> = fs::read_dir(b)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    other.sort();
    assert_eq!(names, other, "{}", b.display());
    let mut count = 0;
    for name in names {
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
        count += 1;
        if ma.is_symlink() {
            assert_eq!(fs::read_link(&pa).unwrap(), fs::read_link(&pb).unwrap());
        } else if ma.is_dir() {
            assert_eq!(ma.mode(), mb.mode(), "{}", pb.display());
            count += assert_same_tree(&pa, &pb);
        } else {
            assert_eq!(ma.mode(), mb.mode(), "{}", pb.display());
            assert!(same_content(&pa, &pb), "{} differs", pb.display());
        }
    }
    count
}

pub fn same_content(a: &Path, b: &Path) -> bool {
    let hash = |p: &Path| {
        let mut h = blake3::Hasher::new();
        let mut f = fs::File::open(p).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = f.read(&mut buf).unwrap();
            if n == 0 {
                return h.finalize();
            }
            h.update(&buf[..n]);
        }
    };
    hash(a) == hash(b)
}
