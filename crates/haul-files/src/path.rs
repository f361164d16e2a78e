//! Relative paths that cannot leave the destination.

use std::fmt;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A path relative to the copy's root: `/`-separated, non-empty components, none of them `.`,
/// `..` or containing NUL. It can be joined under a root without ever pointing outside it.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(String);

/// A path that could escape the destination (or is not a path at all).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unsafe path {0:?}: paths must be relative, without `.` or `..` components")]
pub struct UnsafePath(pub String);

impl RelPath {
    /// Validates `text`.
    pub fn new(text: &str) -> Result<Self, UnsafePath> {
        let ok = !text.is_empty()
            && !text.contains('\0')
            && text
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..");
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(UnsafePath(text.to_owned()))
        }
    }

    /// The path as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its components.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }

    /// This path with `name` appended (`name` must itself be one safe component).
    pub fn child(&self, name: &str) -> Result<Self, UnsafePath> {
        Self::new(&format!("{}/{}", self.0, name))
    }

    /// The path with its first component replaced (copying `dir` to a new name `dst`).
    pub fn with_first(&self, first: &str) -> Result<Self, UnsafePath> {
        match self.0.split_once('/') {
            Some((_, rest)) => Self::new(&format!("{first}/{rest}")),
            None => Self::new(first),
        }
    }

    /// `root` joined with this path.
    pub fn under(&self, root: &Path) -> PathBuf {
        let mut p = root.to_path_buf();
        p.extend(self.components());
        p
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_that_stay_inside_are_accepted() {
        for good in ["a", "a/b", "..a/b..", "a/.hidden", "x y/z"] {
            assert!(RelPath::new(good).is_ok(), "{good}");
        }
        for bad in [
            "", "/", "/a", "a/", "a//b", ".", "..", "a/..", "../a", "a/./b", "a\0b",
        ] {
            assert!(RelPath::new(bad).is_err(), "{bad:?}");
        }
        let p = RelPath::new("src/lib/x.rs").unwrap();
        assert_eq!(p.with_first("dst").unwrap().as_str(), "dst/lib/x.rs");
        assert_eq!(p.under(Path::new("/r")), PathBuf::from("/r/src/lib/x.rs"));
        assert!(p.child("..").is_err());
    }
}
