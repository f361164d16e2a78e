//! `haul serve-rsync`: the far side of `haul rsync`, started over ssh. It announces a UDP port
//! and a one-time key, accepts exactly one connection that holds the key, runs the command the
//! local rsync asked for (`rsync --server …`) and relays its standard input and output over
//! that connection; it exits with the command's status, which ssh hands back to rsync.

use super::frames::{receive_frames, send_frames};
use crate::bootstrap;
use crate::policy::PolicyArgs;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::process::{Command, ExitCode, Stdio};

#[derive(Args)]
pub struct ServeRsyncArgs {
    /// UDP ports to listen on (LOW-HIGH); default: any free port.
    #[arg(long, value_name = "LOW-HIGH")]
    port_range: Option<String>,
    #[command(flatten)]
    policy: PolicyArgs,
    /// The command the local rsync runs here (`rsync --server …`), after `--`.
    #[arg(required = true, last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// Runs the far side.
pub fn run(args: ServeRsyncArgs) -> Result<ExitCode> {
    let stream = bootstrap::accept_one(args.port_range.as_deref(), args.policy.factory()?)?;
    let (program, rest) = args.command.split_first().expect("clap requires a command");
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| {
            format!(
                "the remote host cannot run {program:?} (is rsync installed there? \
                 rsync's --rsync-path names another)"
            )
        })?;
    let child_in = child.stdin.take().expect("piped");
    let child_out = child.stdout.take().expect("piped");
    let mut from_peer = stream.try_clone()?;
    // Ends when the local rsync ends its input; dropping `child_in` then closes the command's.
    std::thread::spawn(move || receive_frames(&mut from_peer, child_in));
    let mut to_peer = stream.try_clone()?;
    if let Err(e) = send_frames(child_out, &mut to_peer) {
        let _ = child.kill();
        let _ = child.wait();
        bail!("relaying {program}'s output: {e}");
    }
    let status = child.wait()?;
    // Everything the command wrote is framed: deliver it before the status goes back over ssh.
    let mut stream = stream;
    stream
        .finish()
        .context("delivering the last of the output")?;
    match status.code() {
        Some(code) => Ok(ExitCode::from(code.clamp(0, 255) as u8)),
        None => bail!("{program} was killed by a signal"),
    }
}
