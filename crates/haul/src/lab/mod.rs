//! `haul lab`: tools to try haul on emulated wide-area paths.

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
    /// Relay one UDP flow through an emulated link: delay, random loss, rate.
    ///
    /// Clients send to --listen; datagrams go on to --to, answers come back. Each direction is
    /// delayed by half the RTT, loses packets at random, and is paced to --rate behind a
    /// drop-tail queue. A user-space stand-in for netem when the kernel has none, good for one
    /// flow at up to a few hundred Mbit/s; it prints what it did when stopped (Ctrl-C) or after
    /// --duration.
    Relay(relay::RelayArgs),
}

pub fn run(args: LabArgs) -> Result<ExitCode> {
    match args.command {
        LabCommand::Relay(a) => relay::run(a),
    }
}
