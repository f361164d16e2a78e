//! `haul copy` with a `haul serve` daemon (`haul://HOST[:PORT]/MODULE/PATH`): no ssh; the client
//! proves a key from `--key-file` and asks for a module and paths.

use super::location::{DaemonPath, Location};
use super::{copy_over, local_paths, CopyArgs, Side, EXIT_CONNECT};
use crate::keys::read_key_file;
use crate::serve::request::{self, Op, Reply, Request};
use anyhow::{anyhow, bail, Context, Result};
use haul_net::{CloseReason, CongestionControlFactory, NetError, PresharedKey, Stream};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// Runs `haul copy` when an argument is a daemon path: upload, download, or (one `haul://HOST`
/// alone) list the modules the key may use.
pub fn run(args: &CopyArgs, locations: &[Location]) -> Result<ExitCode> {
    let [sources @ .., dest] = locations else {
        unreachable!("clap requires a path")
    };
    if sources.is_empty() {
        let Location::Daemon(d) = dest else {
            unreachable!("a daemon path is among the arguments")
        };
        if !d.module.is_empty() {
            bail!(
                "haul://{}/{}: name a destination too",
                d.authority(),
                d.module
            );
        }
        let mut stream = match open(args, d)? {
            Ok(stream) => stream,
            Err(code) => return Ok(code),
        };
        let reply = ask(&mut stream, d, &new_request(args, Op::List, "", Vec::new()))?;
        print_modules(&reply, d, args.json)?;
        let _ = stream.finish();
        return Ok(ExitCode::SUCCESS);
    }
    let (d, request, side) = plan(args, sources, dest)?;
    if d.module.is_empty() {
        let authority = d.authority();
        bail!("haul://{authority}: name a module (haul://HOST/MODULE/PATH); `haul copy haul://{authority}` lists them");
    }
    let mut stream = match open(args, d)? {
        Ok(stream) => stream,
        Err(code) => return Ok(code),
    };
    ask(&mut stream, d, &request)?;
    let target = format!("haul://{}/{}", d.authority(), d.module);
    copy_over(args, stream, None, target, side)
}

/// The daemon, what to ask it, and this side's half: an upload when the destination is a daemon
/// path, a download when every source is one (in one module).
fn plan<'a>(
    args: &CopyArgs,
    sources: &'a [Location],
    dest: &'a Location,
) -> Result<(&'a DaemonPath, Request, Side)> {
    match dest {
        Location::Daemon(d) => {
            if sources.iter().any(|s| !matches!(s, Location::Local(_))) {
                bail!(
                    "uploading to haul://{}: every source must be local",
                    d.authority()
                );
            }
            let request = new_request(args, Op::Upload, &d.module, vec![d.path.clone()]);
            Ok((d, request, Side::Send(local_paths(sources))))
        }
        Location::Local(dst) => {
            let daemons: Option<Vec<&DaemonPath>> = sources
                .iter()
                .map(|s| match s {
                    Location::Daemon(d) => Some(d),
                    _ => None,
                })
                .collect();
            let same = |a: &DaemonPath, b: &DaemonPath| {
                (&a.host, a.port, &a.module) == (&b.host, b.port, &b.module)
            };
            let Some(daemons) = daemons.filter(|all| all.iter().all(|d| same(d, all[0]))) else {
                bail!(
                    "downloading from a haul serve daemon: every source must be in the same module"
                );
            };
            let paths = daemons.iter().map(|d| d.path.clone()).collect();
            let request = new_request(args, Op::Download, &daemons[0].module, paths);
            Ok((daemons[0], request, Side::Receive(dst.clone())))
        }
        Location::Remote { .. } => {
            bail!("one side must be local (no copies between two remote hosts)")
        }
    }
}

fn new_request(args: &CopyArgs, op: Op, module: &str, paths: Vec<String>) -> Request {
    Request {
        version: request::VERSION,
        op,
        module: module.to_string(),
        paths,
        no_resume: args.no_resume,
        delete: args.delete,
        dry_run: args.dry_run,
    }
}

/// Connects with the key `--key-file` names; a failure to connect is printed and becomes the
/// exit status [`EXIT_CONNECT`], a missing or unreadable key is an error.
fn open(args: &CopyArgs, d: &DaemonPath) -> Result<Result<Stream, ExitCode>> {
    let (key, key_file) = key(d, args.key_file.as_deref())?;
    let congestion = args.remote.policy.factory()?;
    Ok(connect(d, key, key_file, congestion).map_err(|e| {
        eprintln!("haul: {e:#}");
        ExitCode::from(EXIT_CONNECT)
    }))
}

/// The key in `key_file` (`--key-file` or `HAUL_KEY_FILE`), which a daemon path needs.
fn key<'a>(daemon: &DaemonPath, key_file: Option<&'a Path>) -> Result<(PresharedKey, &'a Path)> {
    match key_file {
        Some(file) => Ok((read_key_file(file)?, file)),
        None => bail!(
            "haul://{} needs a key: pass --key-file FILE (or set HAUL_KEY_FILE) with a key the \
             server lists",
            daemon.authority()
        ),
    }
}

/// Connects to the daemon at `daemon` with `key`, read from `key_file`.
fn connect(
    daemon: &DaemonPath,
    key: PresharedKey,
    key_file: &Path,
    congestion: Arc<dyn CongestionControlFactory>,
) -> Result<Stream> {
    let authority = daemon.authority();
    let peer: SocketAddr = (daemon.host.as_str(), daemon.port)
        .to_socket_addrs()
        .with_context(|| format!("{}: cannot resolve the host name", daemon.host))?
        .next()
        .ok_or_else(|| anyhow!("{}: the host name has no address", daemon.host))?;
    crate::bootstrap::dial(peer, key, congestion)?.map_err(|e| match e {
        NetError::Connect {
            reason: CloseReason::ConnectTimeout,
            ..
        } => anyhow!(
            "haul://{authority}: no answer over UDP from {peer} (is `haul serve` running there, \
             and UDP port {} open?)",
            daemon.port
        ),
        NetError::Connect {
            reason: CloseReason::AuthFailed,
            ..
        } => anyhow!(
            "haul://{authority}: the server does not accept the key in {} (ask its \
             administrator to add it, or pass the right --key-file)",
            key_file.display()
        ),
        other => anyhow!("haul://{authority}: {other}"),
    })
}

/// Sends `request` and reads the answer; a refusal is an error carrying the server's reason.
fn ask(stream: &mut Stream, daemon: &DaemonPath, request: &Request) -> Result<Reply> {
    let authority = daemon.authority();
    // A server that refuses at once (busy) may close before the request is through: its answer
    // is still there to read.
    let sent = request::write(&mut *stream, request);
    let reply: Reply = match request::read(&mut *stream) {
        Ok(reply) => reply,
        Err(e) => {
            sent.with_context(|| format!("haul://{authority}: sending the request"))?;
            return Err(e).with_context(|| format!("haul://{authority}: reading the answer"));
        }
    };
    if let Some(error) = &reply.error {
        bail!("haul://{authority}: {error}");
    }
    Ok(reply)
}

/// Prints the modules a daemon offers this key.
fn print_modules(reply: &Reply, daemon: &DaemonPath, json: bool) -> Result<()> {
    if json {
        let listing = serde_json::json!({ "modules": reply.modules });
        println!("{}", serde_json::to_string_pretty(&listing)?);
        return Ok(());
    }
    if reply.modules.is_empty() {
        println!("haul://{}: no modules for this key", daemon.authority());
    }
    let width = reply
        .modules
        .iter()
        .map(|m| m.name.len())
        .max()
        .unwrap_or(0);
    for m in &reply.modules {
        let access = if m.read_only {
            "read-only"
        } else {
            "read-write"
        };
        println!("{:width$}  {access:10}  {}", m.name, m.comment);
    }
    Ok(())
}
