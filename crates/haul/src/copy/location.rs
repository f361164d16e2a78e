//! `[USER@]HOST:PATH` versus a local path, as scp reads them.

use std::path::PathBuf;

/// One side of a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A path on this machine.
    Local(PathBuf),
    /// A path on another machine, reached with ssh.
    Remote {
        /// What ssh gets: `host`, `user@host` or an ssh config alias.
        ssh_target: String,
        /// The host alone (no user, no brackets), for reaching it over UDP.
        host: String,
        /// The path there (empty: the remote home directory).
        path: String,
    },
}

impl Location {
    /// Reads an argument: remote if it has a `:` before any `/` (`host:path`,
    /// `user@host:path`, `[v6addr]:path`); local otherwise, and always when it starts with `/`,
    /// `./` or `../`.
    pub fn parse(arg: &str) -> Self {
        let local = || Location::Local(PathBuf::from(arg));
        if arg.starts_with('/') || arg.starts_with("./") || arg.starts_with("../") {
            return local();
        }
        let (user, rest) = match arg.split_once('@') {
            Some((user, rest)) if !user.contains('/') && !user.contains(':') => (Some(user), rest),
            _ => (None, arg),
        };
        let (host, path) = if let Some(inner) = rest.strip_prefix('[') {
            match inner.split_once("]:") {
                Some((host, path)) => (host, path),
                None => return local(),
            }
        } else {
            match rest.split_once(':') {
                Some((host, path)) if !host.contains('/') && !host.is_empty() => (host, path),
                _ => return local(),
            }
        };
        let ssh_target = match user {
            Some(user) => format!("{user}@{host}"),
            None => host.to_owned(),
        };
        Location::Remote {
            ssh_target,
            host: host.to_owned(),
            path: path.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(ssh_target: &str, host: &str, path: &str) -> Location {
        Location::Remote {
            ssh_target: ssh_target.into(),
            host: host.into(),
            path: path.into(),
        }
    }

    #[test]
    fn reads_arguments_the_way_scp_does() {
        assert_eq!(
            Location::parse("host:/data"),
            remote("host", "host", "/data")
        );
        assert_eq!(
            Location::parse("me@host:x/y"),
            remote("me@host", "host", "x/y")
        );
        assert_eq!(Location::parse("host:"), remote("host", "host", ""));
        assert_eq!(Location::parse("[::1]:f"), remote("::1", "::1", "f"));
        assert_eq!(
            Location::parse("u@[fd00::2]:f"),
            remote("u@fd00::2", "fd00::2", "f")
        );
        for local in ["file", "/abs:colon", "./a:b", "dir/a:b", "../x:y", "[nope"] {
            assert_eq!(
                Location::parse(local),
                Location::Local(local.into()),
                "{local}"
            );
        }
    }
}
