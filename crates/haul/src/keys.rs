//! Pre-shared keys in files: `haul keygen FILE` makes one, `--key-file FILE` uses it. A key file
//! holds 64 hexadecimal digits (32 random bytes) and, like an ssh private key, must be readable by
//! its owner only.

use anyhow::{bail, Context, Result};
use clap::Args;
use haul_net::PresharedKey;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
#[command(after_help = "\
Example: make a key, copy it to the other host over a secure channel, and use it on both ends:
  haul keygen ~/.haul/key && scp ~/.haul/key host:.haul/key
  host$ haul nc -l 9000 --key-file ~/.haul/key > backup.tar
  haul nc host:9000 --key-file ~/.haul/key < backup.tar")]
pub struct KeygenArgs {
    /// Where to write the key (created with mode 0600).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Replace FILE if it exists.
    #[arg(long)]
    force: bool,
}

/// Runs `haul keygen`.
pub fn keygen(args: KeygenArgs) -> Result<ExitCode> {
    let mut bytes = [0u8; 32];
    getrandom::getrandom(&mut bytes).context("reading the system's random source")?;
    let key = PresharedKey::from_bytes(bytes);
    let mut options = OpenOptions::new();
    options.write(true).mode(0o600);
    if args.force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let path = &args.file;
    let mut file = options.open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => {
            anyhow::anyhow!("{}: exists already (--force replaces it)", path.display())
        }
        _ => anyhow::Error::new(e).context(format!("cannot create {}", path.display())),
    })?;
    // A file that existed keeps its mode through `mode()`: make sure of 0600.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    writeln!(file, "{}", key.to_hex()).with_context(|| format!("writing {}", path.display()))?;
    file.sync_all()?;
    Ok(ExitCode::SUCCESS)
}

/// Reads a key file, refusing one that others may read.
pub fn read_key_file(path: &Path) -> Result<PresharedKey> {
    let shown = path.display();
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read key file {shown}"))?;
    if meta.permissions().mode() & 0o077 != 0 {
        bail!("{shown}: others may read this key file; make it private with: chmod 600 {shown}");
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read key file {shown}"))?;
    PresharedKey::from_hex(&text).map_err(|_| {
        anyhow::anyhow!(
            "{shown}: not a haul key (64 hexadecimal digits; make one with haul keygen)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("haul-keys-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_generated_key_reads_back_and_is_private() {
        let dir = scratch("gen");
        let file = dir.join("key");
        let args = || KeygenArgs {
            file: file.clone(),
            force: false,
        };
        keygen(args()).unwrap();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let key = read_key_file(&file).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), key.to_hex());
        // Not overwritten by accident; replaced on request with a different key.
        assert!(keygen(args()).is_err());
        keygen(KeygenArgs {
            force: true,
            ..args()
        })
        .unwrap();
        assert_ne!(read_key_file(&file).unwrap().to_hex(), key.to_hex());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_readable_or_malformed_key_file_is_refused_with_the_fix() {
        let dir = scratch("bad");
        let file = dir.join("key");
        std::fs::write(&file, "ab".repeat(32)).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = read_key_file(&file).unwrap_err().to_string();
        assert!(e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(read_key_file(&file).is_ok());
        std::fs::write(&file, "not a key").unwrap();
        let e = read_key_file(&file).unwrap_err().to_string();
        assert!(e.contains("haul keygen"), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
