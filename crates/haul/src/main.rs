//! The `haul` command line.

mod advise;
mod bootstrap;
mod copy;
mod demo;
mod keys;
mod lab;
mod nc;
mod perf;
mod policy;
mod rsync;
mod serve;
mod sys;
mod units;

use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::process::ExitCode;

/// Fast, reliable bulk data transfer over long fat networks (UDT4-compatible).
#[derive(Parser)]
#[command(
    name = "haul",
    version,
    about,
    long_about = None,
    after_help = "Exit status: 0 on success; 1 on any error, described in one line on stderr; \
                  2 on a command-line mistake.\nLogging: set HAUL_LOG (e.g. HAUL_LOG=debug)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Transfer a generated stream between two endpoints on loopback and verify it (BLAKE3).
    ///
    /// Runs a haul server and client in this process over real UDP on 127.0.0.1, prints a
    /// progress line each second and a summary: throughput, RTT, retransmissions, CPU time,
    /// and whether the received bytes hash the same as the sent ones.
    Demo(demo::DemoArgs),
    /// Measure a path like iperf3: haul or kernel TCP, intervals, CPU cost, both ends' view.
    ///
    /// Start `haul perf --server` on one host and `haul perf --client HOST` on the other. The
    /// client sends for 10 s (or `--bytes`) over haul; `--reverse` makes the server send;
    /// `--tcp` runs the same test over kernel TCP (`--tcp-cc bbr`, `--window` to size buffers to
    /// the bandwidth-delay product). Both ends print the same summary: bytes, time, rate,
    /// retransmissions, and each side's CPU seconds. Control runs over TCP on the same port
    /// number as the UDP data.
    Perf(perf::PerfArgs),
    /// Copy files and trees to or from another host: scp-simple, over haul (UDP), encrypted.
    ///
    /// `haul copy SRC... [USER@]HOST:DST` or `haul copy [USER@]HOST:SRC... DST`. ssh starts haul
    /// on the far side and hands it a one-time key; the data goes over haul, encrypted and
    /// authenticated, verified with BLAKE3, written under temporary names and renamed into place
    /// when complete. Running the same copy again skips what is there and resumes what is not.
    #[command(override_usage = copy::COPY_USAGE, after_help = copy::COPY_HELP)]
    Copy(copy::CopyArgs),
    /// Make the destination's copy of each source identical to it: changed chunks only, and
    /// what the source no longer has removed.
    ///
    /// `haul sync SRC... [USER@]HOST:DST`, the other way round, or with a `haul serve` daemon
    /// (haul://HOST/MODULE/PATH): `haul copy --delete`. Unchanged files are skipped, changed
    /// ones travel as the chunks that differ, and inside each directory copied, entries the
    /// source does not have are deleted.
    #[command(override_usage = copy::SYNC_USAGE, after_help = copy::SYNC_HELP)]
    Sync(copy::CopyArgs),
    /// The far side of `haul copy` (started over ssh; not for direct use).
    #[command(hide = true)]
    ServeCopy(copy::ServeCopyArgs),
    /// Run rsync with its data over haul (UDP) instead of ssh's TCP connection, like UDR.
    ///
    /// `haul rsync -av src/ [USER@]HOST:dst/` runs the real rsync, with haul as its remote
    /// shell: ssh starts haul and rsync on the far side, and rsync's conversation goes over an
    /// encrypted, authenticated haul connection. Everything rsync does (deltas, --delete,
    /// --partial, filters) works as usual; both hosts need rsync and haul.
    Rsync(rsync::RsyncArgs),
    /// rsync's remote shell for `haul rsync` (run by rsync; not for direct use).
    #[command(hide = true)]
    RsyncRsh(rsync::RshArgs),
    /// The far side of `haul rsync` (started over ssh; not for direct use).
    #[command(hide = true)]
    ServeRsync(rsync::ServeRsyncArgs),
    /// Netcat over haul: copy stdin to a connection and the connection to stdout.
    ///
    /// `haul nc -l 9000 > out` waits for one connection and writes what arrives;
    /// `tar c dir | haul nc HOST:9000` sends and, when stdin ends, delivers every byte before
    /// exiting. `--mode duplex` does both directions. With `--key-file` (both ends, made by
    /// `haul keygen`) every packet is encrypted and authenticated; without it nc speaks the
    /// unencrypted UDT4 wire protocol, so the peer may be a UDT4 application (sendfile, UDR).
    Nc(nc::NcArgs),
    /// Serve directories to `haul copy` clients that hold a key, like an rsync daemon.
    ///
    /// `haul serve --module data=/srv/data --key-file alice.key` offers /srv/data as module
    /// `data` to clients proving alice's key (`haul copy --key-file alice.key
    /// haul://HOST/data/PATH DST`); `--config FILE` gives several modules, keys, read-write
    /// modules and per-module key and address rules. No ssh is involved: the daemon listens on
    /// UDP port 8873 and every packet is encrypted and authenticated with the client's key.
    Serve(serve::ServeArgs),
    /// Make a pre-shared key file for `--key-file` (32 random bytes as hex, mode 0600).
    Keygen(keys::KeygenArgs),
    /// Emulated wide-area links (namespaces + user-space emulator) and transport comparisons.
    Lab(lab::LabArgs),
    /// The bandwidth-delay product, TCP buffer sizing, and whether haul or tuned TCP will win.
    ///
    /// `haul advise --rate 1G --rtt 100ms --loss 1%` (or `haul advise HOST --rate 1G` to time
    /// the RTT): the buffers TCP needs and whether this host's sysctls allow them, what TCP can
    /// expect on the path from the standard models against what haul delivers, and a verdict.
    Advise(advise::AdviseArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A daemon logs a line per session; the other commands speak only of trouble.
    let default_level = match cli.command {
        Command::Serve(_) => "info",
        _ => "warn",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("HAUL_LOG")
                .unwrap_or_else(|_| default_level.into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let result = match cli.command {
        Command::Copy(args) => copy::run(args),
        Command::Sync(args) => copy::sync(args),
        Command::ServeCopy(args) => copy::serve(args),
        Command::Demo(args) => demo::run(args),
        Command::Perf(args) => perf::run(args),
        Command::Rsync(args) => rsync::run(args),
        Command::RsyncRsh(args) => rsync::rsh(args),
        Command::ServeRsync(args) => rsync::serve(args),
        Command::Nc(args) => nc::run(args),
        Command::Keygen(args) => keys::keygen(args),
        Command::Serve(args) => serve::run(args),
        Command::Lab(args) => lab::run(args),
        Command::Advise(args) => advise::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("haul: {e:#}");
            ExitCode::from(1)
        }
    }
}
