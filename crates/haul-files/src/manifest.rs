//! What a copy moves: files, directories and symlinks with their modes and mtimes.

use crate::path::RelPath;
use std::fs::{self, Metadata};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// One item of the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Where it goes, relative to the destination.
    pub path: RelPath,
    /// What it is.
    pub kind: Kind,
    /// Permission bits (`st_mode & 0o7777`; the receiver drops set-id bits).
    pub mode: u32,
    /// Modification time: seconds and nanoseconds since the epoch.
    pub mtime: (i64, u32),
}

/// The kind of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A regular file of this many bytes.
    File {
        /// Length in bytes.
        size: u64,
    },
    /// A directory (its contents are entries of their own, after it).
    Dir,
    /// A symbolic link, copied as a link (never followed below the named sources).
    Symlink {
        /// What it points to, as stored.
        target: String,
    },
}

/// A manifest entry and where the sender reads it from.
#[derive(Debug, Clone)]
pub struct Source {
    /// The entry as sent.
    pub entry: Entry,
    /// The local file.
    pub local: PathBuf,
}

/// A source that cannot be listed.
#[derive(Debug, Error)]
pub enum ScanError {
    /// A file system call failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What happened.
        source: std::io::Error,
    },
    /// A name that cannot be sent.
    #[error("{0}: file name is not valid UTF-8 (haul sends UTF-8 names only)")]
    NotUtf8(PathBuf),
    /// A source without a last component (`/`, `..`).
    #[error("{0}: name a file or directory, not `/` or `..`")]
    NoName(PathBuf),
    /// Two sources would land on the same name.
    #[error("two sources are both named {0:?} at the destination")]
    Duplicate(String),
}

/// Lists `sources` (each lands at the destination under its own name, as with `scp -r`):
/// directories recursively in name order, parents before their contents. Symlinks named as
/// sources are followed when `follow_named_links` is set (as scp does with its arguments) and
/// copied as links otherwise; those found inside directories are always copied as links.
/// Sockets, FIFOs and devices are skipped with a warning.
pub fn scan(sources: &[PathBuf], follow_named_links: bool) -> Result<Vec<Source>, ScanError> {
    let mut out = Vec::new();
    let mut names = std::collections::HashSet::new();
    for source in sources {
        let name = top_name(source)?;
        if !names.insert(name.clone()) {
            return Err(ScanError::Duplicate(name));
        }
        let meta = if follow_named_links {
            fs::metadata(source)
        } else {
            fs::symlink_metadata(source)
        }
        .map_err(|e| io_error(source, e))?;
        let rel = RelPath::new(&name).map_err(|_| ScanError::NoName(source.clone()))?;
        walk(source, rel, meta, &mut out)?;
    }
    Ok(out)
}

fn top_name(source: &Path) -> Result<String, ScanError> {
    // `.` and `dir/.` name the directory itself.
    let resolved;
    let path = if source.file_name().is_none() || source.ends_with(".") {
        resolved = fs::canonicalize(source).map_err(|e| io_error(source, e))?;
        &resolved
    } else {
        source
    };
    let name = path
        .file_name()
        .ok_or_else(|| ScanError::NoName(source.to_path_buf()))?;
    name.to_str()
        .map(str::to_owned)
        .ok_or_else(|| ScanError::NotUtf8(source.to_path_buf()))
}

fn walk(
    local: &Path,
    rel: RelPath,
    meta: Metadata,
    out: &mut Vec<Source>,
) -> Result<(), ScanError> {
    let file_type = meta.file_type();
    let kind = if file_type.is_file() {
        Kind::File { size: meta.len() }
    } else if file_type.is_dir() {
        Kind::Dir
    } else if file_type.is_symlink() {
        let target = fs::read_link(local).map_err(|e| io_error(local, e))?;
        let target = target
            .to_str()
            .ok_or_else(|| ScanError::NotUtf8(local.to_path_buf()))?
            .to_owned();
        Kind::Symlink { target }
    } else {
        tracing::warn!(path = %local.display(), "skipping: not a file, directory or symlink");
        return Ok(());
    };
    let is_dir = kind == Kind::Dir;
    out.push(Source {
        entry: Entry {
            path: rel.clone(),
            kind,
            mode: meta.permissions().mode() & 0o7777,
            mtime: (meta.mtime(), meta.mtime_nsec() as u32),
        },
        local: local.to_path_buf(),
    });
    if is_dir {
        let mut children = fs::read_dir(local)
            .map_err(|e| io_error(local, e))?
            .map(|d| d.map(|d| d.path()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| io_error(local, e))?;
        children.sort();
        for child in children {
            let name = child
                .file_name()
                .and_then(|n| n.to_str())
                .ok_or_else(|| ScanError::NotUtf8(child.clone()))?;
            let child_rel = rel
                .child(name)
                .map_err(|_| ScanError::NotUtf8(child.clone()))?;
            let meta = fs::symlink_metadata(&child).map_err(|e| io_error(&child, e))?;
            walk(&child, child_rel, meta, out)?;
        }
    }
    Ok(())
}

fn io_error(path: &Path, source: std::io::Error) -> ScanError {
    ScanError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_symlink_is_followed_only_when_asked() {
        let dir = std::env::temp_dir().join(format!("haul-manifest-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("target")).unwrap();
        fs::write(dir.join("target/file"), b"x").unwrap();
        std::os::unix::fs::symlink("target", dir.join("link")).unwrap();
        let followed = scan(&[dir.join("link")], true).unwrap();
        assert_eq!(followed.len(), 2, "the directory and its file");
        assert_eq!(followed[0].entry.kind, Kind::Dir);
        let kept = scan(&[dir.join("link")], false).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(
            kept[0].entry.kind,
            Kind::Symlink {
                target: "target".into()
            }
        );
        fs::remove_dir_all(dir).unwrap();
    }
}
