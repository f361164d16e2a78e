//! Network namespaces and the `ip` commands that build them; stale ones are swept up.

use crate::LabError;
use std::path::Path;
use std::process::Command;

/// Prefix of every namespace a lab creates: `haul-<pid>-<n>-client`.
const PREFIX: &str = "haul-";
const NETNS_DIR: &str = "/run/netns";

/// Runs `ip ARGS…`, turning a failure into an error that quotes the command and its complaint.
pub fn ip(args: &[&str]) -> Result<(), LabError> {
    run(
        Command::new("ip").args(args),
        &format!("ip {}", args.join(" ")),
    )
}

/// Runs a command to completion; a non-zero exit becomes an error quoting its stderr.
pub fn run(command: &mut Command, shown: &str) -> Result<(), LabError> {
    let output = command.output().map_err(|e| LabError::Command {
        command: shown.to_owned(),
        message: e.to_string(),
    })?;
    if output.status.success() {
        return Ok(());
    }
    Err(LabError::Command {
        command: shown.to_owned(),
        message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
    })
}

/// A namespace name for this process: `haul-<pid>-<n>-<role>`.
pub fn name(serial: u32, role: &str) -> String {
    format!("{PREFIX}{}-{serial}-{role}", std::process::id())
}

/// Kills every process still inside `namespace`, then deletes it. Errors are logged, not
/// returned: this runs on the way out, where there is nothing better to do.
pub fn delete(namespace: &str) {
    if let Ok(out) = Command::new("ip")
        .args(["netns", "pids", namespace])
        .output()
    {
        for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            if let Ok(pid) = pid.parse::<libc::pid_t>() {
                // SAFETY: kill(2) with a pid and a signal number.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
    if let Err(e) = ip(&["netns", "delete", namespace]) {
        tracing::warn!("{e}");
    }
}

/// Deletes namespaces left by lab processes that no longer run (killed before they could
/// clean up).
pub fn sweep_stale() {
    let Ok(entries) = std::fs::read_dir(NETNS_DIR) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            tracing::info!("deleting namespace {name} left by process {pid}");
            delete(&name);
        }
    }
}

/// Namespaces of this process that exist now (for tests and leak checks).
pub fn ours() -> Vec<String> {
    let own = format!("{PREFIX}{}-", std::process::id());
    std::fs::read_dir(NETNS_DIR)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&own))
                .collect()
        })
        .unwrap_or_default()
}
