//! One client of `haul serve`: its request, the checks, and its half of the copy.

use super::config::{Config, Module};
use super::request::{self, ModuleInfo, Op, Reply, Request};
use super::Slot;
use haul_files::path::RelPath;
use haul_files::{Progress, SendOptions, Summary};
use haul_net::Stream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a client may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What the checks allow.
enum Plan {
    List(Vec<ModuleInfo>),
    /// The paths, and whether they are the module's top-level entries.
    Send(Vec<PathBuf>, bool),
    Receive(PathBuf),
}

/// Serves one connection and logs one line about it.
pub fn serve(mut stream: Stream, config: &Config, slot: Slot) {
    let peer = stream.peer_addr();
    let key = stream
        .peer_key()
        .and_then(|k| config.key_name(k))
        .unwrap_or("?")
        .to_string();
    let started = Instant::now();
    let outcome = if slot.is_free() {
        run(&mut stream, config, &key)
    } else {
        let error = format!(
            "the server is busy ({} sessions at once); try again later",
            config.max_connections
        );
        // Read the request first, so the client is not cut off while sending it.
        stream.set_read_timeout(Some(REQUEST_TIMEOUT));
        let _ = request::read::<Request>(&mut stream);
        refuse(&mut stream, &error);
        Err(error)
    };
    let seconds = started.elapsed().as_secs_f64();
    match outcome {
        Ok((what, summary)) => tracing::info!(
            %peer, key, what, files = summary.files, bytes = summary.bytes_sent,
            deleted = summary.deleted, seconds = format!("{seconds:.1}"), "session done"
        ),
        Err(error) => tracing::warn!(%peer, key, error, "session failed"),
    }
}

/// The session; what was done (for the log) or why it failed.
fn run(stream: &mut Stream, config: &Config, key: &str) -> Result<(String, Summary), String> {
    stream.set_read_timeout(Some(REQUEST_TIMEOUT));
    let request: Request =
        request::read(&mut *stream).map_err(|e| format!("no valid request: {e}"))?;
    stream.set_read_timeout(None);
    let what = describe(&request);
    let plan = match check(&request, config, key, stream.peer_addr().ip()) {
        Ok(plan) => plan,
        Err(error) => {
            refuse(stream, &error);
            return Err(format!("{what}: refused: {error}"));
        }
    };
    let reply = Reply {
        error: None,
        modules: match &plan {
            Plan::List(modules) => modules.clone(),
            _ => Vec::new(),
        },
    };
    request::write(&mut *stream, &reply).map_err(|e| format!("{what}: {e}"))?;
    let progress = Arc::new(Progress::default());
    let input = stream.try_clone().map_err(|e| e.to_string())?;
    let output = stream.try_clone().map_err(|e| e.to_string())?;
    let result = match plan {
        Plan::List(_) => Ok(Summary::default()),
        Plan::Send(sources, contents) => {
            let options = SendOptions {
                sources_are_contents: contents,
                no_resume: request.no_resume,
                delete: request.delete,
                dry_run: request.dry_run,
                follow_named_links: false,
                ..SendOptions::default()
            };
            haul_files::send(input, output, &sources, &options, &progress)
        }
        Plan::Receive(dest) => haul_files::receive(input, output, &dest, &progress),
    };
    match result {
        Ok(summary) => {
            let _ = stream.finish();
            Ok((what, summary))
        }
        Err(e) => Err(format!("{what}: {e}")),
    }
}

fn describe(r: &Request) -> String {
    let op = match r.op {
        Op::List => return "list".to_string(),
        Op::Download => "download",
        Op::Upload => "upload",
    };
    let mut what = format!("{op} {}/{}", r.module, r.paths.join(","));
    for (set, note) in [(r.delete, " (mirror)"), (r.dry_run, " (dry run)")] {
        if set {
            what.push_str(note);
        }
    }
    what
}

/// Tells the client why not, and waits (briefly) until it has the message.
fn refuse(stream: &mut Stream, error: &str) {
    let reply = Reply {
        error: Some(error.to_string()),
        modules: Vec::new(),
    };
    if request::write(&mut *stream, &reply).is_ok() {
        let _ = stream.finish();
    }
}

/// What `request` may do, for a client holding key `key` at `ip`.
fn check(
    request: &Request,
    config: &Config,
    key: &str,
    ip: std::net::IpAddr,
) -> Result<Plan, String> {
    if request.version != request::VERSION {
        return Err(format!(
            "request version {} is not supported (this server speaks {}): use the same haul \
             release on both ends",
            request.version,
            request::VERSION
        ));
    }
    if request.op == Op::List {
        let modules = config
            .modules
            .iter()
            .filter(|(_, m)| m.admits(key, ip))
            .map(|(name, m)| ModuleInfo {
                name: name.clone(),
                comment: m.comment.clone(),
                read_only: m.read_only,
            })
            .collect();
        return Ok(Plan::List(modules));
    }
    let name = &request.module;
    let module = config
        .modules
        .get(name)
        .ok_or_else(|| format!("no module named {name:?} (`haul copy haul://HOST/` lists them)"))?;
    if !module.admits_key(key) {
        return Err(format!("module {name:?}: key {key:?} may not use it"));
    }
    if !module.admits_host(ip) {
        return Err(format!("module {name:?}: not open to {ip}"));
    }
    match request.op {
        Op::Download => {
            // The module's top means its contents (then the destination mirrors the module).
            let whole = request.paths.iter().all(|p| p.trim_matches('/').is_empty());
            if whole {
                return Ok(Plan::Send(top_entries(&module.root)?, true));
            }
            let mut sources = Vec::new();
            for path in &request.paths {
                match resolve(module, path)? {
                    Some(top) if std::fs::symlink_metadata(&top).is_err() => {
                        return Err(format!("{path}: no such file or directory in {name:?}"))
                    }
                    Some(top) => sources.push(top),
                    None => {
                        return Err(format!(
                            "{path}: the module's top cannot be asked for with other paths"
                        ))
                    }
                }
            }
            Ok(Plan::Send(sources, false))
        }
        Op::Upload => {
            if module.read_only {
                return Err(format!("module {name:?} is read-only"));
            }
            let [path] = request.paths.as_slice() else {
                return Err("an upload names exactly one destination".to_string());
            };
            let dest = resolve(module, path)?.unwrap_or_else(|| module.root.clone());
            if std::fs::symlink_metadata(&dest).is_ok_and(|m| m.is_symlink()) {
                return Err(format!(
                    "{path}: a symlink; uploads do not write through links"
                ));
            }
            Ok(Plan::Receive(dest))
        }
        Op::List => unreachable!("answered above"),
    }
}

/// `path` under the module's root (`None`: the root itself). Refuses `..`, `.` and absolute
/// paths, and any symlink on the way (the last component may be one: it is sent as a link).
fn resolve(module: &Module, path: &str) -> Result<Option<PathBuf>, String> {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        return Ok(None);
    }
    if path.starts_with('/') {
        return Err(format!("{path}: paths are relative to the module"));
    }
    let rel = RelPath::new(trimmed).map_err(|e| e.to_string())?;
    let mut local = module.root.clone();
    let components: Vec<&str> = rel.components().collect();
    for (i, component) in components.iter().enumerate() {
        local.push(component);
        let last = i + 1 == components.len();
        match std::fs::symlink_metadata(&local) {
            Ok(meta) if meta.is_symlink() && !last => {
                return Err(format!(
                    "{path}: {component} is a symlink; haul serve does not follow links"
                ))
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if !last {
                    return Err(format!("{path}: no such directory in the module"));
                }
            }
            Err(e) => return Err(format!("{path}: {e}")),
        }
    }
    Ok(Some(local))
}

/// The module's top-level entries: downloading the module means its contents.
fn top_entries(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut entries = std::fs::read_dir(root)
        .and_then(|dir| {
            dir.map(|e| e.map(|e| e.path()))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| format!("cannot list the module: {e}"))?;
    entries.sort();
    Ok(entries)
}
