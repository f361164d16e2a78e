//! `haul copy` and `haul rsync` through a real sshd on loopback: trees both ways, a large file
//! both ways, resume after either side is killed, rsync's deltas and exit status, and clear
//! failures. Needs root, Debian's openssh-server and rsync; skipped otherwise unless
//! HAUL_REQUIRE_SSH=1 (CI sets it).

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod common;

use common::*;
const SSHD: &str = "/usr/sbin/sshd";

/// One test at a time: they move gigabytes and the machine has two cores.
static SERIAL: Mutex<()> = Mutex::new(());

/// A private sshd on a loopback port, with its own host key and one authorized client key.
struct Sshd {
    child: Child,
    dir: PathBuf,
    ssh_cmd: String,
}

impl Sshd {
    fn start() -> Option<Sshd> {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        if !root || !Path::new(SSHD).exists() {
            assert!(
                std::env::var_os("HAUL_REQUIRE_SSH").is_none(),
                "HAUL_REQUIRE_SSH is set but this is not root or {SSHD} is missing"
            );
            eprintln!("skipped: needs root and {SSHD} (apt-get install openssh-server)");
            return None;
        }
        let dir = scratch("sshd");
        for key in ["host_key", "client_key"] {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(dir.join(key))
                .status()
                .unwrap();
            assert!(status.success());
        }
        fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
        fs::create_dir_all("/run/sshd").unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let d = dir.display();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\n\
             AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
             StrictModes no\nPidFile {d}/sshd.pid\nLogLevel FATAL\n"
        );
        fs::write(dir.join("sshd_config"), config).unwrap();
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "sshd did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        let ssh_cmd = format!(
            "ssh -p {port} -i {d}/client_key -o StrictHostKeyChecking=no \
             -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
        );
        Some(Sshd {
            child,
            dir,
            ssh_cmd,
        })
    }

    /// `haul copy` with this sshd, the remote haul being this build.
    fn copy(&self, args: &[&str]) -> Command {
        self.haul("copy", args)
    }

    /// `haul SUBCOMMAND` (copy or sync) with this sshd, the remote haul being this build.
    fn haul(&self, subcommand: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(HAUL);
        cmd.args([
            subcommand,
            "--quiet",
            "--ssh-cmd",
            &self.ssh_cmd,
            "--remote-haul",
            HAUL,
        ]);
        cmd.args(args);
        cmd
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("haul-copy-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// 10 000 small files in 100 directories, empty files and directories, symlinks, odd modes.
fn make_tree(root: &Path) {
    for d in 0..100 {
        let dir = root.join(format!("d{d:02}"));
        fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let path = dir.join(format!("f{f:02}"));
            fs::write(&path, format!("{d}/{f}").repeat(d * 7 + f)).unwrap();
            set_mtime(&path, 1_600_000_000 + (d * 100 + f) as u64);
        }
    }
    fs::create_dir_all(root.join("empty-dir")).unwrap();
    fs::write(root.join("empty-file"), b"").unwrap();
    fs::set_permissions(root.join("empty-file"), fs::Permissions::from_mode(0o600)).unwrap();
    fs::set_permissions(root.join("d00/f01"), fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("d00/f00", root.join("link")).unwrap();
    std::os::unix::fs::symlink("/does/not/exist", root.join("dangling")).unwrap();
    // Links and directories in the past too: rsync leaves a time alone when it matches to the
    // second, so one made in the same second as the copy would differ in nanoseconds only.
    for link in ["link", "dangling"] {
        set_link_mtime(&root.join(link), 1_500_000_000);
    }
    for d in 0..100 {
        set_mtime(&root.join(format!("d{d:02}")), 1_400_000_000 + d);
    }
    set_mtime(&root.join("empty-dir"), 1_300_000_000);
    set_mtime(&root.join("d07"), 1_234_567_890);
}

#[test]
fn trees_and_a_large_file_both_ways() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(sshd) = Sshd::start() else { return };
    let dir = scratch("both-ways");
    let tree = dir.join("tree");
    make_tree(&tree);
    let big = dir.join("big.bin");
    write_file(&big, 1 << 30, 42);
    let (up, down) = (dir.join("up"), dir.join("down"));
    fs::create_dir_all(&up).unwrap();
    fs::create_dir_all(&down).unwrap();

    let remote = |p: &Path| format!("127.0.0.1:{}", p.display());
    let out = run_ok(sshd.copy(&[
        "--json",
        tree.to_str().unwrap(),
        big.to_str().unwrap(),
        &remote(&up),
    ]));
    let report = json(&out);
    assert_eq!(report["files"], 10_002, "{report}");
    assert_eq!(report["failures"].as_array().unwrap().len(), 0);
    assert_eq!(assert_same_tree(&tree, &up.join("tree")), 10_104);
    assert!(same_content(&big, &up.join("big.bin")));

    let out = run_ok(sshd.copy(&[
        "--json",
        &remote(&up.join("tree")),
        &remote(&up.join("big.bin")),
        down.to_str().unwrap(),
    ]));
    assert_eq!(json(&out)["direction"], "download");
    assert_eq!(assert_same_tree(&tree, &down.join("tree")), 10_104);
    assert!(same_content(&big, &down.join("big.bin")));

    // Again: everything is up to date, nothing is sent.
    let out = run_ok(sshd.copy(&["--json", tree.to_str().unwrap(), &remote(&up)]));
    let report = json(&out);
    assert_eq!(
        (report["bytes_sent"].as_u64(), report["up_to_date"].as_u64()),
        (Some(0), Some(10_001))
    );
    fs::remove_dir_all(dir).unwrap();
}

/// Verified bytes recorded in a partial file's journal (32-byte header, 36-byte records, 1 MiB
/// chunks).
fn journaled_bytes(journal: &Path) -> u64 {
    fs::metadata(journal).map_or(0, |m| m.len().saturating_sub(32) / 36 * (1 << 20))
}

/// Starts an upload of `src` capped at 400 Mbit/s, kills `victim` once a quarter of it is
/// journaled, then copies again; checks what the second run re-sent.
fn kill_and_resume(sshd: &Sshd, dir: &Path, victim: &str) {
    let src = dir.join("big.bin");
    let size: u64 = 768 << 20;
    write_file(&src, size, 7);
    let dest = dir.join("dest");
    fs::create_dir_all(&dest).unwrap();
    let target = format!("127.0.0.1:{}", dest.display());
    let journal = dest.join(".big.bin.haul-journal");
    let mut first = sshd.copy(&["--max-rate", "400M", src.to_str().unwrap(), &target]);
    // Own process group: killing "local" takes ssh with it, as a closed terminal would.
    first
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut first = first.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while journaled_bytes(&journal) < size / 4 {
        assert!(Instant::now() < deadline, "the copy made no progress");
        assert!(
            first.try_wait().unwrap().is_none(),
            "the copy ended before it was killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    match victim {
        // SAFETY: signalling the process group we created.
        "local" => unsafe { libc::kill(-(first.id() as i32), libc::SIGKILL) },
        _ => {
            // The far side only (not the ssh client, whose command line names it too).
            let status = Command::new("pkill")
                .args(["-KILL", "-f", &far_side_pattern()])
                .status()
                .unwrap();
            assert!(status.success(), "no remote haul to kill");
            0
        }
    };
    let status = first.wait().unwrap();
    assert!(!status.success(), "the killed copy reported success");
    // Let a surviving far side notice and stop writing before the retry.
    let deadline = Instant::now() + Duration::from_secs(30);
    while Command::new("pgrep")
        .args(["-f", &far_side_pattern()])
        .status()
        .unwrap()
        .success()
    {
        assert!(Instant::now() < deadline, "the far side did not stop");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        !dest.join("big.bin").exists(),
        "a partial file appeared under the final name"
    );
    let verified = journaled_bytes(&journal);
    assert!(verified >= size / 4, "{verified}");

    // `--resume` is the default; named here as a user would after an interruption.
    let out = run_ok(sshd.copy(&["--json", "--resume", src.to_str().unwrap(), &target]));
    let report = json(&out);
    let sent = report["bytes_sent"].as_u64().unwrap();
    let resumed = report["bytes_resumed"].as_u64().unwrap();
    assert!(
        same_content(&src, &dest.join("big.bin")),
        "the resumed file differs"
    );
    assert!(
        resumed >= verified,
        "resumed {resumed} of {verified} verified"
    );
    let resent_verified = sent.saturating_sub(size - verified);
    assert!(
        resent_verified * 10 < verified,
        "re-sent {resent_verified} of {verified} verified bytes ({report})"
    );
    assert!(!journal.exists() && !dest.join(".big.bin.haul-part").exists());
}

/// Matches the far side's command line and nothing else.
fn far_side_pattern() -> String {
    format!("^{HAUL} serve-copy")
}

#[test]
fn killing_the_local_side_then_copying_again_resumes() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(sshd) = Sshd::start() else { return };
    let dir = scratch("kill-local");
    kill_and_resume(&sshd, &dir, "local");
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn killing_the_remote_side_then_copying_again_resumes() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(sshd) = Sshd::start() else { return };
    let dir = scratch("kill-remote");
    kill_and_resume(&sshd, &dir, "remote");
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_remote_without_haul_and_a_local_only_copy_fail_clearly() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(sshd) = Sshd::start() else { return };
    let dir = scratch("errors");
    fs::write(dir.join("f"), b"x").unwrap();
    let mut cmd = Command::new(HAUL);
    cmd.args([
        "copy",
        "--ssh-cmd",
        &sshd.ssh_cmd,
        "--remote-haul",
        "/nonexistent/haul",
    ]);
    cmd.arg(dir.join("f"))
        .arg(format!("127.0.0.1:{}", dir.display()));
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("haul is not installed there"), "{stderr}");

    let out = Command::new(HAUL)
        .args(["copy", "a", "b"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("one side must be remote"));
    fs::remove_dir_all(dir).unwrap();
}

/// `haul rsync` with this sshd: `args` go to rsync after haul's own options.
fn haul_rsync(sshd: &Sshd, args: &[&str]) -> Command {
    let mut cmd = Command::new(HAUL);
    cmd.args(["rsync", "--ssh-cmd", &sshd.ssh_cmd, "--remote-haul", HAUL]);
    cmd.args(args);
    cmd
}

/// rsync's `--stats` line `label: N bytes`.
fn stat(out: &Output, label: &str) -> u64 {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label:?} in {text}"));
    line.trim()
        .trim_end_matches(" bytes")
        .replace(',', "")
        .parse()
        .unwrap()
}

#[test]
fn rsync_over_haul_syncs_both_ways_sends_deltas_and_passes_errors_on() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(sshd) = Sshd::start() else { return };
    if !Path::new("/usr/bin/rsync").exists() {
        assert!(
            std::env::var_os("HAUL_REQUIRE_SSH").is_none(),
            "HAUL_REQUIRE_SSH is set but rsync is missing"
        );
        eprintln!("skipped: needs rsync");
        return;
    }
    let dir = scratch("rsync");
    let src = dir.join("src");
    make_tree(&src);
    write_file(&src.join("big"), 8 << 20, 3);
    let dst = dir.join("dst with space");
    let remote = |p: &Path| format!("127.0.0.1:{}/", p.display());
    let local = |p: &Path| format!("{}/", p.display());

    run_ok(haul_rsync(&sshd, &["-a", &local(&src), &remote(&dst)]));
    assert_eq!(assert_same_tree(&src, &dst), 10_105);

    // One byte changed in the big file: rsync's delta algorithm sends little more than a block.
    let mut f = fs::OpenOptions::new()
        .write(true)
        .open(src.join("big"))
        .unwrap();
    std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(4 << 20)).unwrap();
    std::io::Write::write_all(&mut f, b"!").unwrap();
    drop(f);
    let out = run_ok(haul_rsync(
        &sshd,
        &["-a", "--stats", &local(&src), &remote(&dst)],
    ));
    assert!(stat(&out, "Literal data:") < 64 << 10, "{out:?}");
    assert!(stat(&out, "Matched data:") > 7 << 20, "{out:?}");
    assert!(same_content(&src.join("big"), &dst.join("big")));

    let down = dir.join("down");
    run_ok(haul_rsync(&sshd, &["-a", &remote(&dst), &local(&down)]));
    assert_eq!(assert_same_tree(&src, &down), 10_105);

    // rsync's own exit status comes back: 23, some files could not be transferred.
    let out = haul_rsync(&sshd, &["-a", &remote(&dir.join("missing")), &local(&down)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(23), "{out:?}");
    // A remote side that cannot start: ssh's status, as rsync expects from its remote shell.
    let out = Command::new(HAUL)
        .args([
            "rsync",
            "--ssh-cmd",
            &sshd.ssh_cmd,
            "--remote-haul",
            "/nonexistent/haul",
        ])
        .args(["-a", &local(&src), &remote(&dst)])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("haul is not installed there"), "{stderr}");
    // No rsync on the far side: the far side says so, through ssh.
    let out = haul_rsync(
        &sshd,
        &[
            "--rsync-path=/nonexistent/rsync",
            "-a",
            &local(&src),
            &remote(&dir.join("never")),
        ],
    )
    .output()
    .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the remote host cannot run"), "{stderr}");
    // rsync's -e would bypass haul: refused with the way out.
    let out = Command::new(HAUL)
        .args(["rsync", "-e", "ssh", "a", "b:c"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--ssh-cmd"));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn sync_mirrors_both_ways_and_sends_only_changed_chunks() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(sshd) = Sshd::start() else { return };
    let dir = scratch("sync");
    let src = dir.join("src");
    fs::create_dir_all(src.join("sub")).unwrap();
    write_file(&src.join("big.bin"), 4 << 20, 11);
    for name in ["a", "b", "sub/c"] {
        fs::write(src.join(name), name).unwrap();
    }
    let (up, down) = (dir.join("up"), dir.join("down"));
    fs::create_dir_all(&up).unwrap();
    fs::create_dir_all(&down).unwrap();
    let remote = |p: &Path| format!("127.0.0.1:{}", p.display());
    let sync = |from: &str, to: &str| json(&run_ok(sshd.haul("sync", &["--json", from, to])));
    let sync_dry =
        |from: &str, to: &str| json(&run_ok(sshd.haul("sync", &["-n", "--json", from, to])));
    let src_arg = src.to_str().unwrap();
    sync(src_arg, &remote(&up));
    assert_same_tree(&src, &up.join("src"));

    // One byte changed in the middle of big.bin, a file and a directory gone, one file new.
    let mut data = fs::read(src.join("big.bin")).unwrap();
    data[(2 << 20) + 5] ^= 1;
    fs::write(src.join("big.bin"), &data).unwrap();
    fs::remove_file(src.join("a")).unwrap();
    fs::remove_dir_all(src.join("sub")).unwrap();
    fs::write(src.join("d"), "d").unwrap();

    // A dry run says what the real one will do, and does none of it.
    let out = run_ok(sshd.haul("sync", &["--dry-run", src_arg, &remote(&up)]));
    let listed = String::from_utf8_lossy(&out.stdout);
    for line in [
        "updated  src/big.bin",
        "deleted  src/a",
        "deleted  src/sub",
        "created  src/d",
    ] {
        assert!(listed.contains(line), "{line:?} missing from:\n{listed}");
    }
    assert!(listed.contains("would send 1.0 MiB"), "{listed}");
    assert!(up.join("src/a").exists() && !up.join("src/d").exists());

    let report = sync(src_arg, &remote(&up));
    assert_eq!(report["deleted"], 2, "{report}");
    assert_eq!(report["bytes_matched"], 3 << 20, "{report}");
    assert_eq!(
        report["bytes_sent"],
        (1 << 20) + 1,
        "one chunk and d: {report}"
    );
    assert_same_tree(&src, &up.join("src"));

    // Down again into a copy that has something extra.
    sync(&remote(&up.join("src")), down.to_str().unwrap());
    fs::write(down.join("src/extra"), "x").unwrap();
    let dry = sync_dry(&remote(&up.join("src")), down.to_str().unwrap());
    assert_eq!(dry["changes"][0]["path"], "src/extra", "{dry}");
    assert_eq!(
        (dry["deleted"].as_u64(), dry["dry_run"].as_bool()),
        (Some(1), Some(true))
    );
    assert!(down.join("src/extra").exists());
    let report = sync(&remote(&up.join("src")), down.to_str().unwrap());
    assert_eq!(
        (report["deleted"].as_u64(), report["bytes_sent"].as_u64()),
        (Some(1), Some(0))
    );
    assert_same_tree(&src, &down.join("src"));
    fs::remove_dir_all(dir).unwrap();
}
