//! `haul lab`: emulated wide-area links to try haul on, and the transport shoot-out.

mod compare;
mod link;
mod relay;

use anyhow::Result;
use clap::{Args, Subcommand};
use std::process::ExitCode;

#[derive(Args)]
pub struct LabArgs {
    #[command(subcommand)]
    command: LabCommand,
}

#[derive(Subcommand)]
enum LabCommand {
    /// Run a command across an emulated WAN link between two network namespaces.
    ///
    /// Creates the namespaces `client` (10.77.0.1) and `server` (10.77.0.2), joined through TUN
    /// devices by haul's user-space link emulator: a bottleneck rate behind a drop-tail queue,
    /// delay, jitter, random and bursty loss, reordering and duplication, per direction. Runs
    /// --server (if given) in the server namespace, then CMD in the client namespace, and tears
    /// everything down when CMD ends, fails or is interrupted. Needs root. CMD sees
    /// HAUL_LAB_SERVER, HAUL_LAB_CLIENT and the namespace names in its environment.
    ///
    /// Example: haul lab link --rate 1G --rtt 100ms --loss 1% --server 'haul perf -s' --
    /// haul perf -c 10.77.0.2
    ///
    /// Exit status: CMD's.
    Link(link::LinkRunArgs),
    /// An interactive shell in the client (or server) namespace of an emulated link.
    ///
    /// Takes the same link options as `haul lab link`. Exit the shell to tear the lab down.
    Shell(link::ShellArgs),
    /// Compare haul, TCP CUBIC, TCP BBR and the UDT4 reference over a grid of emulated links.
    ///
    /// For every link rate × RTT × loss rate and every transport, builds a fresh lab and runs
    /// one timed transfer from client to server (haul perf; iperf3 for TCP, or haul perf --tcp
    /// without it; the UDT4 reference where g++ and Debian's libudt-dev are installed). Writes
    /// results.csv, results.json, wins.md ("which transport wins") and one SVG plot of goodput
    /// against RTT per rate and loss rate. Needs root.
    Compare(compare::CompareArgs),
    /// Relay one UDP flow through an emulated link: delay, random loss, rate.
    ///
    /// Clients send to --listen; datagrams go on to --to, answers come back. Each direction is
    /// delayed by half the RTT, loses packets at random, and is paced to --rate behind a
    /// drop-tail queue. Needs no privileges, but handles one packet at a time (a few hundred
    /// Mbit/s at most); `haul lab link` is the full emulator. Prints what it did when stopped
    /// (Ctrl-C) or after --duration.
    Relay(relay::RelayArgs),
}

pub fn run(args: LabArgs) -> Result<ExitCode> {
    match args.command {
        LabCommand::Link(a) => link::run_link(a),
        LabCommand::Shell(a) => link::run_shell(a),
        LabCommand::Compare(a) => compare::run(a),
        LabCommand::Relay(a) => relay::run(a),
    }
}
