//! Mirroring (`SendOptions::delete`): after a copy, each directory it copied loses the entries
//! the source directory does not have. Nothing outside those directories is touched, and links
//! are removed, never followed.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};

/// What each copied directory should hold: directory → the names of its entries.
#[derive(Debug, Default)]
pub(crate) struct Expected(HashMap<PathBuf, HashSet<OsString>>);

impl Expected {
    /// Records that `target` belongs where it is.
    pub(crate) fn insert(&mut self, target: &Path) {
        if let (Some(parent), Some(name)) = (target.parent(), target.file_name()) {
            self.0
                .entry(parent.to_path_buf())
                .or_default()
                .insert(name.to_owned());
        }
    }

    /// Whether `name` in `dir` is kept: expected, or the temporary or journal file of an
    /// expected entry (kept so that an interrupted file can resume).
    fn keeps(&self, dir: &Path, name: &OsStr) -> bool {
        let Some(names) = self.0.get(dir) else {
            return true;
        };
        if names.contains(name) {
            return true;
        }
        let text = name.to_string_lossy();
        let own = |suffix: &str| {
            text.strip_prefix('.')
                .and_then(|t| t.strip_suffix(suffix))
                .is_some_and(|base| names.contains(OsStr::new(base)))
        };
        own(".haul-part") || own(".haul-journal")
    }
}

/// Removes from each of `dirs` what `expected` does not list (or, `dry`, only finds it); what
/// went, and each failure (path, reason).
pub(crate) fn delete_extraneous(
    dirs: &[PathBuf],
    expected: &Expected,
    dry: bool,
) -> (Vec<PathBuf>, Vec<(String, String)>) {
    let mut deleted = Vec::new();
    let mut failures = Vec::new();
    for dir in dirs {
        let listing = match fs::read_dir(dir) {
            Ok(listing) => listing,
            Err(e) => {
                failures.push((dir.display().to_string(), format!("cannot list: {e}")));
                continue;
            }
        };
        for item in listing.flatten() {
            let name = item.file_name();
            if expected.keeps(dir, &name) {
                continue;
            }
            let path = item.path();
            if dry {
                deleted.push(path);
                continue;
            }
            let removed = match fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => fs::remove_dir_all(&path),
                Ok(_) => fs::remove_file(&path),
                Err(e) => Err(e),
            };
            match removed {
                Ok(()) => {
                    tracing::debug!(path = %path.display(), "deleted: not in the source");
                    deleted.push(path);
                }
                Err(e) => {
                    failures.push((path.display().to_string(), format!("cannot delete: {e}")))
                }
            }
        }
    }
    (deleted, failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expected_entry_keeps_its_temporary_files_and_nothing_else_is_kept() {
        let mut expected = Expected::default();
        expected.insert(Path::new("/d/a"));
        let keeps = |name: &str| expected.keeps(Path::new("/d"), OsStr::new(name));
        assert!(keeps("a") && keeps(".a.haul-part") && keeps(".a.haul-journal"));
        assert!(!keeps("b") && !keeps(".b.haul-part") && !keeps(".a.haul-other"));
        // A directory the copy did not make is never touched.
        assert!(expected.keeps(Path::new("/elsewhere"), OsStr::new("b")));
    }
}
