//! What `haul serve` offers and to whom: modules (named directories), the keys clients prove, and
//! which keys and addresses may use each module. Read from a TOML file and/or the command line.

use crate::keys::read_key_file;
use anyhow::{bail, Context, Result};
use haul_net::PresharedKey;
use ipnet::IpNet;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

/// Port `haul serve` listens on unless told otherwise.
pub const DEFAULT_PORT: u16 = 8873;

/// The daemon's settings, checked: every module a directory, every key readable and private,
/// every key a module names defined.
#[derive(Debug)]
pub struct Config {
    /// UDP address to listen on.
    pub listen: SocketAddr,
    /// Sessions served at once; more are refused with "busy".
    pub max_connections: usize,
    /// Keys by name.
    pub keys: Vec<(String, PresharedKey)>,
    /// Modules by name.
    pub modules: BTreeMap<String, Module>,
}

/// A directory offered under a name.
#[derive(Debug)]
pub struct Module {
    /// The directory (canonical).
    pub root: PathBuf,
    /// Shown in listings.
    pub comment: String,
    /// Refuse uploads.
    pub read_only: bool,
    /// Names of the keys that may use it; `None`: every key.
    pub keys: Option<BTreeSet<String>>,
    /// Client addresses that may use it; `None`: any.
    pub hosts_allow: Option<Vec<IpNet>>,
}

impl Module {
    /// Whether a client holding key `key` at address `ip` may use this module.
    pub fn admits(&self, key: &str, ip: IpAddr) -> bool {
        self.admits_key(key) && self.admits_host(ip)
    }

    /// Whether key `key` may use this module.
    pub fn admits_key(&self, key: &str) -> bool {
        self.keys.as_ref().is_none_or(|keys| keys.contains(key))
    }

    /// Whether a client at `ip` may use this module.
    pub fn admits_host(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.hosts_allow
            .as_ref()
            .is_none_or(|nets| nets.iter().any(|net| net.contains(&ip)))
    }
}

/// The configuration file's shape.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    listen: Option<String>,
    max_connections: Option<usize>,
    #[serde(default)]
    keys: BTreeMap<String, PathBuf>,
    #[serde(default)]
    module: BTreeMap<String, ModuleFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModuleFile {
    path: PathBuf,
    #[serde(default)]
    comment: String,
    #[serde(default = "read_only_default")]
    read_only: bool,
    keys: Option<Vec<String>>,
    hosts_allow: Option<Vec<String>>,
}

fn read_only_default() -> bool {
    true
}

/// Settings given on the command line, added to (and overriding) the file's.
#[derive(Debug, Default)]
pub struct Overrides {
    /// `--listen`.
    pub listen: Option<String>,
    /// `--max-connections`.
    pub max_connections: Option<usize>,
    /// `--key-file [NAME=]FILE`.
    pub key_files: Vec<String>,
    /// `--module NAME=PATH`.
    pub modules: Vec<String>,
    /// `--writable NAME`.
    pub writable: Vec<String>,
}

impl Config {
    /// Reads `file` (if any), applies `overrides`, and checks the result.
    pub fn load(file: Option<&Path>, overrides: Overrides) -> Result<Self> {
        let mut parsed = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                toml::from_str::<File>(&text).with_context(|| format!("{}", path.display()))?
            }
            None => File::default(),
        };
        let base = file.and_then(Path::parent).unwrap_or(Path::new("."));
        for spec in &overrides.key_files {
            let (name, path) = match spec.split_once('=') {
                Some((name, path)) => (name.to_string(), PathBuf::from(path)),
                None => {
                    let path = PathBuf::from(spec);
                    let name = path
                        .file_stem()
                        .and_then(|s| s.to_str())
                        .map(str::to_owned)
                        .with_context(|| format!("--key-file {spec}: name it as NAME=FILE"))?;
                    (name, path)
                }
            };
            parsed.keys.insert(name, path);
        }
        for spec in &overrides.modules {
            let Some((name, path)) = spec.split_once('=') else {
                bail!("--module {spec}: expected NAME=PATH, e.g. --module data=/srv/data");
            };
            parsed.module.insert(
                name.to_string(),
                ModuleFile {
                    path: path.into(),
                    comment: String::new(),
                    read_only: true,
                    keys: None,
                    hosts_allow: None,
                },
            );
        }
        for name in &overrides.writable {
            match parsed.module.get_mut(name) {
                Some(module) => module.read_only = false,
                None => bail!("--writable {name}: no module of that name"),
            }
        }
        let listen = overrides
            .listen
            .or(parsed.listen)
            .unwrap_or_else(|| format!("0.0.0.0:{DEFAULT_PORT}"));
        let listen = parse_listen(&listen)?;
        let max_connections = overrides
            .max_connections
            .or(parsed.max_connections)
            .unwrap_or(16);
        if max_connections == 0 {
            bail!("max_connections must be at least 1");
        }
        let keys = load_keys(&parsed.keys, base)?;
        let modules = parsed
            .module
            .into_iter()
            .map(|(name, m)| {
                let module = check_module(&name, m, base, &keys)?;
                Ok((name, module))
            })
            .collect::<Result<BTreeMap<_, _>>>()?;
        if modules.is_empty() {
            bail!("no modules to serve: give --module NAME=PATH or [module.NAME] in --config");
        }
        Ok(Self {
            listen,
            max_connections,
            keys,
            modules,
        })
    }

    /// The name of `key`, if it is one of ours.
    pub fn key_name(&self, key: &PresharedKey) -> Option<&str> {
        self.keys
            .iter()
            .find(|(_, k)| k == key)
            .map(|(name, _)| name.as_str())
    }
}

fn parse_listen(text: &str) -> Result<SocketAddr> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, DEFAULT_PORT));
    }
    bail!("listen address {text:?}: expected IP:PORT, e.g. 0.0.0.0:{DEFAULT_PORT} or [::]:{DEFAULT_PORT}")
}

fn load_keys(
    files: &BTreeMap<String, PathBuf>,
    base: &Path,
) -> Result<Vec<(String, PresharedKey)>> {
    if files.is_empty() {
        bail!(
            "no keys: clients must prove a key (make one with `haul keygen FILE`, then give \
             --key-file FILE or list it under [keys] in --config)"
        );
    }
    let mut keys: Vec<(String, PresharedKey)> = Vec::new();
    for (name, path) in files {
        check_name("key", name)?;
        let key = read_key_file(&base.join(path)).with_context(|| format!("key {name:?}"))?;
        if let Some((other, _)) = keys.iter().find(|(_, k)| *k == key) {
            bail!("keys {other:?} and {name:?} are the same key: give each client its own");
        }
        keys.push((name.clone(), key));
    }
    Ok(keys)
}

fn check_module(
    name: &str,
    m: ModuleFile,
    base: &Path,
    keys: &[(String, PresharedKey)],
) -> Result<Module> {
    check_name("module", name)?;
    let path = base.join(&m.path);
    let root = std::fs::canonicalize(&path)
        .with_context(|| format!("module {name:?}: {}", path.display()))?;
    if !root.is_dir() {
        bail!("module {name:?}: {} is not a directory", path.display());
    }
    if let Some(names) = &m.keys {
        for key in names {
            if !keys.iter().any(|(k, _)| k == key) {
                bail!("module {name:?}: no key named {key:?} (define it under [keys])");
            }
        }
    }
    let hosts_allow = m
        .hosts_allow
        .map(|hosts| {
            hosts
                .iter()
                .map(|h| parse_net(h).with_context(|| format!("module {name:?}: hosts_allow")))
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    Ok(Module {
        root,
        comment: m.comment,
        read_only: m.read_only,
        keys: m.keys.map(|k| k.into_iter().collect()),
        hosts_allow,
    })
}

/// An address (`192.0.2.7`, `::1`) or a network (`10.0.0.0/8`).
fn parse_net(text: &str) -> Result<IpNet> {
    if let Ok(net) = text.parse::<IpNet>() {
        return Ok(net.trunc());
    }
    match text.parse::<IpAddr>() {
        Ok(ip) => Ok(IpNet::from(ip)),
        Err(_) => bail!("{text:?}: expected an address or ADDRESS/PREFIX, e.g. 10.0.0.0/8"),
    }
}

fn check_name(what: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if !ok {
        bail!("{what} name {name:?}: use letters, digits, '-', '_' and '.' only");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("haul-serve-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        for (key, byte) in [("alice", "a"), ("bob", "b")] {
            let file = dir.join(format!("{key}.key"));
            std::fs::write(&file, byte.repeat(64)).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        dir
    }

    fn write_config(dir: &Path, text: &str) -> PathBuf {
        let file = dir.join("serve.toml");
        std::fs::write(&file, text).unwrap();
        file
    }

    #[test]
    fn a_file_with_modules_keys_and_hosts_reads_and_decides_access() {
        let dir = scratch("ok");
        let file = write_config(
            &dir,
            r#"
            listen = "127.0.0.1:9999"
            [keys]
            alice = "alice.key"
            bob = "bob.key"
            [module.data]
            path = "data"
            comment = "sets"
            read_only = false
            keys = ["alice"]
            hosts_allow = ["10.0.0.0/8", "::1"]
            "#,
        );
        let config = Config::load(Some(&file), Overrides::default()).unwrap();
        assert_eq!(config.listen, "127.0.0.1:9999".parse().unwrap());
        let data = &config.modules["data"];
        assert!(!data.read_only);
        assert!(data.admits("alice", "10.1.2.3".parse().unwrap()));
        assert!(data.admits("alice", "::ffff:10.1.2.3".parse().unwrap()));
        assert!(data.admits("alice", "::1".parse().unwrap()));
        assert!(!data.admits("bob", "10.1.2.3".parse().unwrap()));
        assert!(!data.admits("alice", "192.0.2.1".parse().unwrap()));
        let bob = PresharedKey::from_hex(&"b".repeat(64)).unwrap();
        assert_eq!(config.key_name(&bob), Some("bob"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn mistakes_are_refused_with_what_to_fix() {
        let dir = scratch("bad");
        let cases = [
            ("[module.data]\npath = \"data\"\n", "no keys"),
            ("[keys]\nalice = \"alice.key\"\n", "no modules"),
            (
                "[keys]\nalice = \"alice.key\"\n[module.data]\npath = \"nope\"\n",
                "module \"data\"",
            ),
            (
                "[keys]\nalice = \"alice.key\"\n[module.data]\npath = \"data\"\nkeys = [\"eve\"]\n",
                "no key named \"eve\"",
            ),
            (
                "[keys]\nalice = \"alice.key\"\n[module.data]\npath = \"data\"\nhosts_allow = [\"x\"]\n",
                "hosts_allow",
            ),
            (
                "[keys]\na = \"alice.key\"\nb = \"alice.key\"\n[module.data]\npath = \"data\"\n",
                "the same key",
            ),
            ("[module.data]\npath = \"data\"\nbogus = 1\n", "bogus"),
        ];
        for (text, expected) in cases {
            let file = write_config(&dir, text);
            let e = format!(
                "{:#}",
                Config::load(Some(&file), Overrides::default()).unwrap_err()
            );
            assert!(e.contains(expected), "{text}: {e}");
        }
        let e = Config::load(
            None,
            Overrides {
                modules: vec!["data".into()],
                ..Overrides::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("NAME=PATH"), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_command_line_alone_makes_a_config() {
        let dir = scratch("cli");
        let config = Config::load(
            None,
            Overrides {
                key_files: vec![dir.join("alice.key").display().to_string()],
                modules: vec![format!("data={}", dir.join("data").display())],
                writable: vec!["data".into()],
                ..Overrides::default()
            },
        )
        .unwrap();
        assert_eq!(config.keys[0].0, "alice");
        assert!(!config.modules["data"].read_only);
        assert_eq!(config.listen.port(), DEFAULT_PORT);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
