//! `haul copy`: scp-simple, encrypted, verified, resumable copies, with the far side started
//! over ssh and the data over haul (UDP).

mod daemon;
mod location;
mod progress;
mod report;
mod serve;

pub use serve::{run as serve, ServeCopyArgs};

use crate::bootstrap::{self, RemoteArgs};
use anyhow::{anyhow, bail, Result};
use clap::Args;
use haul_files::{CopyError, Progress, ReceiveOptions, SendOptions, Summary};
use haul_net::Stream;
use location::Location;
use report::Report;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `haul copy`'s usage lines.
pub const COPY_USAGE: &str = "haul copy [OPTIONS] SRC... [USER@]HOST:DST
       haul copy [OPTIONS] [USER@]HOST:SRC... DST
       haul copy [OPTIONS] --key-file KEY SRC... haul://HOST[:PORT]/MODULE/DST
       haul copy [OPTIONS] --key-file KEY haul://HOST[:PORT]/MODULE/SRC... DST
       haul copy [OPTIONS] --key-file KEY haul://HOST[:PORT]";

/// What `haul copy --help` adds after the options.
pub const COPY_HELP: &str = "\
Examples:
  haul copy big.iso server:/data/           one file into a remote directory
  haul copy -r photos me@server:backup/     a tree (directories are always copied recursively)
  haul copy server:/var/log/app.log .       from the remote side
  haul copy --max-rate 500M data server:    cap the rate
  haul copy --key-file my.key haul://server/data/set1 .   from module data of `haul serve` (no ssh)
  haul copy --key-file my.key haul://server               the modules that key may use

How it works: ssh (your config, keys and agent) starts `haul serve-copy` on HOST, which binds a UDP
port and prints it with a one-time key over the ssh channel. The data then goes directly over UDP,
encrypted and authenticated with that key (Noise + AES-GCM/ChaCha20-Poly1305); ssh carries nothing
else. Every file is verified with BLAKE3, written under a temporary name, synced, and renamed into
place only when complete. Files already present with the same size and mtime are skipped; a file
that changed travels as its changed chunks only (1 MiB chunks compared by hash at the same
offsets); an interrupted copy resumes where it stopped when run again. With haul://HOST, no ssh is
involved: the `haul serve` daemon there accepts clients that prove one of its keys (--key-file).

Exit status: 0 all copied; 1 error; 2 usage; 3 some entries failed (listed); 4 the remote side could
not be started or reached.";

/// `haul sync`'s usage lines.
pub const SYNC_USAGE: &str = "haul sync [OPTIONS] SRC... [USER@]HOST:DST
       haul sync [OPTIONS] [USER@]HOST:SRC... DST
       haul sync [OPTIONS] --key-file KEY SRC... haul://HOST[:PORT]/MODULE/DST
       haul sync [OPTIONS] --key-file KEY haul://HOST[:PORT]/MODULE/SRC... DST";

/// What `haul sync --help` adds after the options.
pub const SYNC_HELP: &str = "\
Examples:
  haul sync photos server:backup/           make server:backup/photos identical to photos
  haul sync server:/srv/site ./mirror       the other way
  haul sync --key-file my.key data haul://server/inbox/

What it does: `haul copy --delete`. Each source lands under its own name in DST, as with haul copy;
files with the same size and mtime are skipped, changed files travel as their changed chunks only
(1 MiB chunks compared by BLAKE3 at the same offsets: edits in place, appends and truncations are
cheap; an insertion re-sends what follows it - use `haul rsync` for such files), and every
directory copied loses what the source directory no longer has. Nothing outside the copied
directories is touched; symlinks are removed, never followed. Like `rclone sync`, or
`rsync -a --delete SRC DST/`. A whole daemon module (haul://HOST/MODULE) lands as its contents,
so DST itself becomes a mirror of the module: try --dry-run first.

Exit status: 0 in sync; 1 error; 2 usage; 3 some entries failed (listed); 4 the remote side could
not be started or reached.";

/// Exit status when some entries could not be copied (the others were).
pub const EXIT_PARTIAL: u8 = 3;
/// Exit status when the far side could not be started or reached.
pub const EXIT_CONNECT: u8 = 4;

#[derive(Args)]
pub struct CopyArgs {
    /// Sources, then the destination. Exactly one side is remote: [USER@]HOST:PATH (over ssh)
    /// or haul://HOST[:PORT]/MODULE/PATH (a `haul serve` daemon); one haul://HOST alone lists
    /// the daemon's modules.
    #[arg(required = true, num_args = 1.., value_name = "PATH")]
    paths: Vec<String>,
    /// The key to prove to a `haul serve` daemon (made by `haul keygen`; haul:// paths only).
    #[arg(long, value_name = "FILE", env = "HAUL_KEY_FILE")]
    key_file: Option<PathBuf>,
    /// Accepted for scp compatibility: directories are always copied recursively.
    #[arg(short = 'r', long)]
    recursive: bool,
    #[command(flatten)]
    remote: RemoteArgs,
    /// Ignore partial files from earlier attempts and send everything again.
    #[arg(long)]
    no_resume: bool,
    /// Resume interrupted copies (the default; kept for scripts that ask for it).
    #[arg(long, conflicts_with = "no_resume")]
    resume: bool,
    /// Print one JSON summary instead of the progress bar and text summary.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Mirror: inside each directory copied, remove what the source directory does not have
    /// (what `haul sync` does).
    #[arg(long)]
    delete: bool,
    /// Change nothing: list what would be created, updated and deleted, and how much would
    /// travel (changed files are still compared chunk by chunk).
    #[arg(long, short = 'n')]
    dry_run: bool,
    /// List every entry created, updated or deleted at the destination.
    #[arg(long, short = 'i')]
    itemize: bool,
}

/// Runs `haul sync`: `haul copy --delete`.
pub fn sync(args: CopyArgs) -> Result<ExitCode> {
    run(CopyArgs {
        delete: true,
        ..args
    })
}

/// Runs `haul copy`.
pub fn run(args: CopyArgs) -> Result<ExitCode> {
    let _ = args.recursive;
    let locations = args
        .paths
        .iter()
        .map(|p| Location::parse(p))
        .collect::<Result<Vec<_>>>()?;
    if locations.iter().any(|l| matches!(l, Location::Daemon(_))) {
        return daemon::run(&args, &locations);
    }
    let [sources @ .., dest] = locations.as_slice() else {
        unreachable!("clap requires a path")
    };
    if sources.is_empty() {
        bail!("name the sources and then the destination (or one haul://HOST to list its modules)");
    }
    let mut remote_args = args.remote.far_side("serve-copy");
    let remotes: Vec<(&String, &String, &String)> = sources
        .iter()
        .filter_map(|s| match s {
            Location::Remote {
                ssh_target,
                host,
                path,
            } => Some((ssh_target, host, path)),
            _ => None,
        })
        .collect();
    let locals = local_paths(sources);
    let (target, host, local) = match &dest {
        Location::Remote {
            ssh_target,
            host,
            path,
        } if remotes.is_empty() => {
            remote_args.extend(["--receive".to_string(), remote_path(path)]);
            (ssh_target.clone(), host.clone(), Side::Send(locals))
        }
        Location::Local(dst) if locals.is_empty() => {
            let (ssh_target, host, _) = remotes[0];
            if remotes.iter().any(|(t, ..)| *t != ssh_target) {
                bail!("all remote sources must be on the same host");
            }
            remote_args.extend(args.remote.policy.to_args());
            remote_args.push("--send".to_string());
            remote_args.extend(remotes.iter().map(|(.., p)| remote_path(p)));
            (ssh_target.clone(), host.clone(), Side::Receive(dst.clone()))
        }
        Location::Local(_) if remotes.is_empty() => {
            bail!("one side must be remote ([USER@]HOST:PATH); for a local copy use cp")
        }
        _ => bail!(
            "one side must be local and the other remote (no copies between two remote hosts, \
             nor from local and remote sources at once)"
        ),
    };
    if args.no_resume {
        remote_args.push("--no-resume".to_string());
    }
    for (set, flag) in [(args.delete, "--delete"), (args.dry_run, "--dry-run")] {
        if set {
            remote_args.push(flag.to_string());
        }
    }
    let congestion = args.remote.policy.factory()?;

    let remote_command = bootstrap::remote_command(&remote_args);
    let (session, stream) = match bootstrap::connect(
        &args.remote.ssh_cmd,
        &target,
        &host,
        &remote_command,
        congestion,
    ) {
        Ok(connected) => connected,
        Err(e) => {
            eprintln!("haul: {e:#}");
            return Ok(ExitCode::from(EXIT_CONNECT));
        }
    };
    copy_over(&args, stream, Some(session), target, local)
}

/// The local paths among `locations`.
fn local_paths(locations: &[Location]) -> Vec<PathBuf> {
    locations
        .iter()
        .filter_map(|s| match s {
            Location::Local(p) => Some(p.clone()),
            _ => None,
        })
        .collect()
}

/// Runs this side of the copy over a connected `stream`, then reports; `session` is the ssh
/// session that started the far side, if one did.
fn copy_over(
    args: &CopyArgs,
    stream: Stream,
    session: Option<bootstrap::Session>,
    target: String,
    local: Side,
) -> Result<ExitCode> {
    let progress = Arc::new(Progress::default());
    let bar = (!args.json && !args.quiet).then(|| progress::Bar::start(Arc::clone(&progress)));
    let started = Instant::now();
    let direction = match &local {
        Side::Send(_) => "upload",
        Side::Receive(_) => "download",
    };
    let options = SendOptions {
        no_resume: args.no_resume,
        delete: args.delete,
        dry_run: args.dry_run,
        itemize: args.itemize || args.dry_run,
        ..SendOptions::default()
    };
    let result = transfer(stream.try_clone()?, local, &options, &progress);
    let seconds = started.elapsed().as_secs_f64();
    if let Some(bar) = bar {
        bar.finish();
    }
    let stats = stream.stats();
    let mut stream = stream;
    let summary = match result {
        Ok(summary) => {
            let _ = stream.finish();
            summary
        }
        Err(e) => {
            // Dropping the session ends ssh and the far side.
            return Err(anyhow!(e).context(format!("copy with {target} failed")));
        }
    };
    if let Some(Err(e)) = session.map(|s| s.finish(Duration::from_secs(30))) {
        tracing::warn!("{e:#}");
    }
    let report = Report::new(direction, target, &summary, seconds, &stats, args.dry_run);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        report.print(args.itemize);
    }
    Ok(if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_PARTIAL)
    })
}

/// Which half of the copy runs here.
enum Side {
    Send(Vec<PathBuf>),
    Receive(PathBuf),
}

/// Runs this side of the copy over `stream`.
fn transfer(
    stream: Stream,
    side: Side,
    options: &SendOptions,
    progress: &Arc<Progress>,
) -> Result<Summary, CopyError> {
    let input = stream.try_clone()?;
    match side {
        Side::Send(paths) => haul_files::send(input, stream, &paths, options, progress),
        Side::Receive(dest) => {
            let receive = ReceiveOptions {
                itemize: options.itemize,
            };
            haul_files::receive_with(input, stream, &dest, &receive, progress)
        }
    }
}

/// A remote path as the far side should see it: empty means the home directory.
fn remote_path(path: &str) -> String {
    if path.is_empty() {
        ".".to_string()
    } else {
        path.to_string()
    }
}
