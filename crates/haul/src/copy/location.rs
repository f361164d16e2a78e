//! `[USER@]HOST:PATH` versus a local path, as scp reads them, and `haul://HOST[:PORT]/MODULE/PATH`
//! for a `haul serve` daemon.

use crate::serve::DEFAULT_PORT;
use anyhow::{bail, Result};
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
    /// A path in a module of a `haul serve` daemon.
    Daemon(DaemonPath),
}

/// `haul://HOST[:PORT]/MODULE/PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaemonPath {
    /// The host (no brackets).
    pub host: String,
    /// The daemon's UDP port.
    pub port: u16,
    /// The module (empty: none named, to list the modules).
    pub module: String,
    /// The path in the module (empty: its top).
    pub path: String,
}

impl DaemonPath {
    /// Reads `haul://HOST[:PORT][/MODULE[/PATH]]` (`[V6ADDR]` for IPv6).
    pub fn parse(arg: &str) -> Result<Option<Self>> {
        let Some(rest) = arg.strip_prefix("haul://") else {
            return Ok(None);
        };
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
            match inner.split_once(']') {
                Some((host, "")) => (host, None),
                Some((host, port)) => match port.strip_prefix(':') {
                    Some(port) => (host, Some(port)),
                    None => bail!("{arg}: expected haul://[ADDRESS]:PORT/..."),
                },
                None => bail!("{arg}: unclosed [ in the address"),
            }
        } else {
            match authority.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            bail!("{arg}: no host (expected haul://HOST[:PORT]/MODULE/PATH)");
        }
        let port = match port {
            None => DEFAULT_PORT,
            Some(p) => match p.parse() {
                Ok(port) if port > 0 => port,
                _ => bail!("{arg}: {p:?} is not a port number"),
            },
        };
        let (module, path) = path.split_once('/').unwrap_or((path, ""));
        Ok(Some(Self {
            host: host.to_string(),
            port,
            module: module.to_string(),
            path: path.to_string(),
        }))
    }

    /// `HOST:PORT`, bracketed for IPv6, for messages and reports.
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

impl Location {
    /// Reads an argument: a daemon path if it starts with `haul://`; remote if it has a `:`
    /// before any `/` (`host:path`, `user@host:path`, `[v6addr]:path`); local otherwise, and
    /// always when it starts with `/`, `./` or `../`.
    pub fn parse(arg: &str) -> Result<Self> {
        if let Some(daemon) = DaemonPath::parse(arg)? {
            return Ok(Location::Daemon(daemon));
        }
        Ok(Self::parse_scp(arg))
    }

    fn parse_scp(arg: &str) -> Self {
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

    fn parse(arg: &str) -> Location {
        Location::parse(arg).unwrap()
    }

    #[test]
    fn reads_arguments_the_way_scp_does() {
        assert_eq!(parse("host:/data"), remote("host", "host", "/data"));
        assert_eq!(parse("me@host:x/y"), remote("me@host", "host", "x/y"));
        assert_eq!(parse("host:"), remote("host", "host", ""));
        assert_eq!(parse("[::1]:f"), remote("::1", "::1", "f"));
        assert_eq!(parse("u@[fd00::2]:f"), remote("u@fd00::2", "fd00::2", "f"));
        for local in ["file", "/abs:colon", "./a:b", "dir/a:b", "../x:y", "[nope"] {
            assert_eq!(parse(local), Location::Local(local.into()), "{local}");
        }
    }

    #[test]
    fn reads_daemon_paths() {
        let daemon = |host: &str, port, module: &str, path: &str| {
            Location::Daemon(DaemonPath {
                host: host.into(),
                port,
                module: module.into(),
                path: path.into(),
            })
        };
        assert_eq!(parse("haul://h/data/a/b"), daemon("h", 8873, "data", "a/b"));
        assert_eq!(parse("haul://h:9/data"), daemon("h", 9, "data", ""));
        assert_eq!(parse("haul://h"), daemon("h", 8873, "", ""));
        assert_eq!(parse("haul://[::1]:7/m/"), daemon("::1", 7, "m", ""));
        assert_eq!(parse("haul://[::1]/m"), daemon("::1", 8873, "m", ""));
        for bad in [
            "haul://",
            "haul://h:x/m",
            "haul://h:0/m",
            "haul://[::1/m",
            "haul://[::1]x/",
        ] {
            assert!(Location::parse(bad).is_err(), "{bad}");
        }
    }
}
