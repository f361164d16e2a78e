//! `haul serve-copy`: the far side of `haul copy`, started over ssh. It listens on a UDP port,
//! announces the port and a one-time key on stdout, accepts exactly one connection that proves
//! it holds the key, runs its half of the copy, and exits.

use crate::bootstrap;
use crate::policy::PolicyArgs;
use anyhow::{bail, Result};
use clap::Args;
use haul_files::{Progress, SendOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args)]
pub struct ServeCopyArgs {
    /// Receive into this directory (or new name).
    #[arg(long, conflicts_with = "send", value_name = "DST")]
    receive: Option<PathBuf>,
    /// Send these paths.
    #[arg(long, num_args = 1.., value_name = "SRC")]
    send: Vec<PathBuf>,
    /// UDP ports to listen on (LOW-HIGH); default: any free port.
    #[arg(long, value_name = "LOW-HIGH")]
    port_range: Option<String>,
    /// Ignore partial files from earlier attempts.
    #[arg(long)]
    no_resume: bool,
    /// Mirror (with --send): the receiver removes what the sources do not have.
    #[arg(long, requires = "send")]
    delete: bool,
    /// With --send: tell the receiver what would travel; it changes nothing.
    #[arg(long, requires = "send")]
    dry_run: bool,
    #[command(flatten)]
    policy: PolicyArgs,
}

/// Runs the far side.
pub fn run(args: ServeCopyArgs) -> Result<ExitCode> {
    if args.receive.is_none() && args.send.is_empty() {
        bail!("serve-copy needs --receive DST or --send SRC...");
    }
    let stream = bootstrap::accept_one(args.port_range.as_deref(), args.policy.factory()?)?;
    let progress = Arc::new(Progress::default());
    let input = stream.try_clone()?;
    let output = stream.try_clone()?;
    let result = match args.receive {
        Some(dest) => haul_files::receive(input, output, &dest, &progress),
        None => {
            let options = SendOptions {
                no_resume: args.no_resume,
                delete: args.delete,
                dry_run: args.dry_run,
                ..SendOptions::default()
            };
            haul_files::send(input, output, &args.send, &options, &progress)
        }
    };
    let mut stream = stream;
    match result {
        Ok(_) => {
            let _ = stream.finish();
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => bail!("{e}"),
    }
}
