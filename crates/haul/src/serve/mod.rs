//! `haul serve`: a daemon offering directories ("modules") to clients that prove a pre-shared
//! key, like an rsync daemon: `haul copy` reaches it as `haul://HOST[:PORT]/MODULE/PATH`.
//!
//! Every connection is authenticated by the `haul` dialect's key exchange against the daemon's
//! keys ([`haul_net::NetConfig::accept_keys`]), so the daemon knows which key a client holds before
//! it reads a byte from it. The client then sends one [`request::Request`]; the daemon checks it
//! against the module's keys, addresses and read-only flag and the path against the module's
//! root (no `..`, no absolute path, no symlink on the way), answers with one [`request::Reply`],
//! and runs its half of the file engine.

mod config;
pub mod request;
mod session;

use crate::policy::PolicyArgs;
use anyhow::{Context, Result};
use clap::Args;
use config::{Config, Overrides};
use haul_net::{ConnectionConfig, Dialect, Listener, NetConfig};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub use config::DEFAULT_PORT;

#[derive(Args)]
#[command(after_help = "\
Examples:
  haul keygen alice.key                                  a key for each client (give them a copy)
  haul serve --module data=/srv/data --key-file alice.key
  haul copy --key-file alice.key haul://server/data/set1 .     (on the client)

A configuration file (--config) for several modules, keys and rules:
  listen = \"0.0.0.0:8873\"
  max_connections = 16
  [keys]                        # name = key file made by `haul keygen` (mode 0600)
  alice = \"/etc/haul/alice.key\"
  backup = \"/etc/haul/backup.key\"
  [module.data]
  path = \"/srv/data\"
  comment = \"public data sets\"
  read_only = true              # the default: clients may only download
  [module.inbox]
  path = \"/srv/inbox\"
  read_only = false
  keys = [\"backup\"]             # default: every key
  hosts_allow = [\"10.0.0.0/8\", \"192.0.2.7\"]   # default: any address

Security: every packet is encrypted and authenticated with the client's key (Noise + AES-GCM or
ChaCha20-Poly1305); a client without one of the keys gets no further than the handshake, and the
daemon keeps no state for it. Paths are confined to the module: `..`, absolute paths and symlinks
on the way are refused. Files a client uploads are written as the user running haul serve.
Log lines (one per session) go to stderr; HAUL_LOG=debug shows more.")]
pub struct ServeArgs {
    /// Configuration file (TOML): listen address, keys, modules and their rules.
    #[arg(long, short = 'c', value_name = "FILE")]
    config: Option<PathBuf>,
    /// UDP address to listen on [default: 0.0.0.0:8873].
    #[arg(long, value_name = "IP:PORT")]
    listen: Option<String>,
    /// Serve directory PATH as module NAME (read-only unless --writable NAME); repeatable.
    #[arg(long = "module", value_name = "NAME=PATH")]
    modules: Vec<String>,
    /// Let clients upload into module NAME; repeatable.
    #[arg(long, value_name = "NAME")]
    writable: Vec<String>,
    /// A key clients may prove, made by `haul keygen` (NAME defaults to the file name without
    /// its extension); repeatable.
    #[arg(long = "key-file", value_name = "[NAME=]FILE")]
    key_files: Vec<String>,
    /// Sessions served at once; more are refused as busy [default: 16].
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Check the configuration, print what would be served, and exit.
    #[arg(long)]
    check: bool,
    /// How this side sends (downloads).
    #[command(flatten)]
    policy: PolicyArgs,
}

/// Runs `haul serve` until it is killed.
pub fn run(args: ServeArgs) -> Result<ExitCode> {
    let config = Config::load(
        args.config.as_deref(),
        Overrides {
            listen: args.listen,
            max_connections: args.max_connections,
            key_files: args.key_files,
            modules: args.modules,
            writable: args.writable,
        },
    )?;
    if args.check {
        print_config(&config);
        return Ok(ExitCode::SUCCESS);
    }
    let mut keys = config.keys.iter().map(|(_, key)| key.clone());
    let first = keys.next().expect("the configuration has a key");
    let net = NetConfig {
        connection: ConnectionConfig {
            dialect: Dialect::Haul(first),
            congestion: args.policy.factory()?,
            ..ConnectionConfig::default()
        },
        accept_keys: keys.collect(),
        ..NetConfig::listener()
    };
    let listener = Listener::bind_with(config.listen, net)
        .with_context(|| format!("cannot listen on UDP {}", config.listen))?;
    let modules: Vec<&str> = config.modules.keys().map(String::as_str).collect();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "haul serve: listening on {} (UDP); modules: {}",
        listener.local_addr(),
        modules.join(", ")
    )?;
    out.flush()?;
    drop(out);
    let config = Arc::new(config);
    let active = Arc::new(AtomicUsize::new(0));
    loop {
        let stream = listener.accept().context("accepting a connection")?;
        let slot = Slot::take(&active, config.max_connections);
        let config = Arc::clone(&config);
        std::thread::spawn(move || session::serve(stream, &config, slot));
    }
}

/// One of the `max_connections` places; `None` when all are taken. Given back on drop.
pub struct Slot(Option<Arc<AtomicUsize>>);

impl Slot {
    fn take(active: &Arc<AtomicUsize>, max: usize) -> Self {
        let taken = active
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .is_ok();
        Self(taken.then(|| Arc::clone(active)))
    }

    /// Whether a place was free.
    pub fn is_free(&self) -> bool {
        self.0.is_some()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(active) = &self.0 {
            active.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

fn print_config(config: &Config) {
    println!("listen: {} (UDP)", config.listen);
    println!("max connections: {}", config.max_connections);
    let names: Vec<&str> = config.keys.iter().map(|(n, _)| n.as_str()).collect();
    println!("keys: {}", names.join(", "));
    for (name, m) in &config.modules {
        let keys = m.keys.as_ref().map_or("every key".to_string(), |k| {
            k.iter().cloned().collect::<Vec<_>>().join(", ")
        });
        let hosts = m
            .hosts_allow
            .as_ref()
            .map_or("any address".to_string(), |h| {
                h.iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            });
        let access = if m.read_only {
            "read-only"
        } else {
            "read-write"
        };
        println!(
            "module {name}: {} ({access}; {keys}; {hosts}){}",
            m.root.display(),
            if m.comment.is_empty() {
                String::new()
            } else {
                format!(" - {}", m.comment)
            }
        );
    }
}
