//! `haul serve` and `haul copy haul://…` on loopback: modules listed per key and address, trees
//! both ways byte-exact, and every refusal clear: a read-only module, a key or address a module
//! does not admit, an unknown key, `..`, symlinks out of a module, a busy server.

mod common;

use common::*;
use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A `haul serve` on a free loopback port; killed on drop.
struct Daemon {
    child: Child,
    port: u16,
}

impl Daemon {
    fn start(config: &Path, extra: &[&str]) -> Self {
        let mut child = Command::new(HAUL)
            .args(["serve", "--config"])
            .arg(config)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "haul serve: listening on 127.0.0.1:PORT (UDP); modules: ..."
        let port = line
            .split("127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Self { child, port }
    }

    fn url(&self, rest: &str) -> String {
        format!("haul://127.0.0.1:{}/{rest}", self.port)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("haul-serve-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// `haul copy --key-file KEY ARGS…`.
fn copy(key: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(HAUL);
    cmd.args(["copy", "-q", "--key-file"]).arg(key).args(args);
    cmd
}

/// Runs a command that must fail with `code` and a message containing `expected`.
fn refused(mut cmd: Command, code: i32, expected: &str) {
    let out: Output = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{cmd:?}: {stderr}");
    assert!(stderr.contains(expected), "{cmd:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
}

/// Keys for alice, bob and eve (whom the server does not know), a data module with files, a
/// subdirectory, an inner link and a link out of the module, an empty inbox.
fn setup(dir: &Path, extra_config: &str) -> PathBuf {
    for name in ["alice", "bob", "eve"] {
        run_ok({
            let mut c = Command::new(HAUL);
            c.arg("keygen").arg(dir.join(format!("{name}.key")));
            c
        });
    }
    let data = dir.join("data");
    fs::create_dir_all(data.join("sub/deeper")).unwrap();
    write_file(&data.join("big.bin"), 3 << 20, 7);
    fs::write(data.join("sub/small"), b"small").unwrap();
    fs::write(data.join("sub/deeper/x"), b"").unwrap();
    fs::set_permissions(data.join("sub/small"), fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink("sub/small", data.join("inner-link")).unwrap();
    std::os::unix::fs::symlink("/etc", data.join("outside")).unwrap();
    set_mtime(&data.join("big.bin"), 1_600_000_000);
    fs::create_dir_all(dir.join("inbox")).unwrap();
    fs::create_dir_all(dir.join("lan")).unwrap();
    let config = dir.join("serve.toml");
    fs::write(
        &config,
        format!(
            r#"listen = "127.0.0.1:0"
{extra_config}
[keys]
alice = "alice.key"
bob = "bob.key"

[module.data]
path = "data"
comment = "test data"

[module.inbox]
path = "inbox"
read_only = false
keys = ["bob"]

[module.lan]
path = "lan"
hosts_allow = ["10.0.0.0/8"]
"#
        ),
    )
    .unwrap();
    config
}

fn listing(key: &Path, daemon: &Daemon) -> Vec<(String, bool)> {
    let out = run_ok(copy(key, &["--json", &daemon.url("")]));
    let report = json(&out);
    report["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_string(),
                m["read_only"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn modules_go_both_ways_to_the_keys_and_addresses_they_admit() {
    let dir = scratch("ways");
    let config = setup(&dir, "");
    let daemon = Daemon::start(&config, &[]);
    let (alice, bob, eve) = (
        dir.join("alice.key"),
        dir.join("bob.key"),
        dir.join("eve.key"),
    );

    // Each key sees the modules it may use from this address (never `lan`: 10.0.0.0/8 only).
    assert_eq!(listing(&alice, &daemon), vec![("data".to_string(), true)]);
    assert_eq!(
        listing(&bob, &daemon),
        vec![("data".to_string(), true), ("inbox".to_string(), false)]
    );

    // The whole module: its contents, identical (links inside copied as links, not followed).
    let down = dir.join("down");
    fs::create_dir(&down).unwrap();
    let out = run_ok(copy(
        &alice,
        &["--json", &daemon.url("data"), down.to_str().unwrap()],
    ));
    let report = json(&out);
    assert_eq!(report["direction"], "download");
    assert_eq!(report["bytes_sent"].as_u64(), Some((3 << 20) + 5));
    assert_same_tree(&dir.join("data"), &down);

    // One file, into a new name; then up into the inbox and back, unchanged.
    run_ok(copy(
        &alice,
        &[
            &daemon.url("data/sub/small"),
            dir.join("one").to_str().unwrap(),
        ],
    ));
    assert_eq!(fs::read(dir.join("one")).unwrap(), b"small");
    run_ok(copy(
        &bob,
        &[down.join("sub").to_str().unwrap(), &daemon.url("inbox/")],
    ));
    assert_same_tree(&dir.join("data/sub"), &dir.join("inbox/sub"));
    let again = run_ok(copy(
        &bob,
        &[
            "--json",
            down.join("sub").to_str().unwrap(),
            &daemon.url("inbox"),
        ],
    ));
    assert_eq!(
        json(&again)["up_to_date"].as_u64(),
        Some(2),
        "nothing re-sent"
    );

    // Refusals: one line each, the reason named, nothing written.
    let into = |m: &str| daemon.url(m);
    let small = down.join("sub/small");
    let small = small.to_str().unwrap();
    let here = dir.join("nowhere");
    let here = here.to_str().unwrap();
    refused(copy(&alice, &[small, &into("data/")]), 1, "read-only");
    refused(
        copy(&alice, &[small, &into("inbox/")]),
        1,
        "key \"alice\" may not",
    );
    refused(
        copy(&alice, &[&into("lan/x"), here]),
        1,
        "not open to 127.0.0.1",
    );
    refused(
        copy(&alice, &[&into("nope/x"), here]),
        1,
        "no module named \"nope\"",
    );
    refused(
        copy(&alice, &[&into("data/../serve.toml"), here]),
        1,
        "unsafe path",
    );
    refused(
        copy(&alice, &[&into("data/outside/passwd"), here]),
        1,
        "symlink",
    );
    refused(
        copy(&alice, &[&into("data/missing"), here]),
        1,
        "no such file",
    );
    refused(
        copy(&bob, &[small, &into("inbox/../data")]),
        1,
        "unsafe path",
    );
    refused(
        copy(&eve, &[&into("data/big.bin"), here]),
        4,
        "does not accept the key",
    );
    refused(
        {
            let mut c = Command::new(HAUL);
            c.args(["copy", &into("data/big.bin"), here])
                .env_remove("HAUL_KEY_FILE");
            c
        },
        1,
        "--key-file",
    );
    assert!(!Path::new(here).exists());
    assert!(!dir.join("data/small").exists());
    assert_eq!(fs::read_dir(dir.join("inbox")).unwrap().count(), 1);

    // The link out of the module, asked for by name, arrives as a link: nothing read through it.
    run_ok(copy(
        &alice,
        &[&into("data/outside"), dir.join("got").to_str().unwrap()],
    ));
    assert_eq!(fs::read_link(dir.join("got")).unwrap(), Path::new("/etc"));
    drop(daemon);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_full_server_refuses_more_sessions_as_busy_and_serves_again_after() {
    let dir = scratch("busy");
    let config = setup(&dir, "max_connections = 1");
    let daemon = Daemon::start(&config, &[]);
    let bob = dir.join("bob.key");
    // An upload paced at 16 Mbit/s holds the one place for about two seconds.
    write_file(&dir.join("slow.bin"), 4 << 20, 3);
    let mut slow = copy(
        &bob,
        &[
            "--rate",
            "16M",
            dir.join("slow.bin").to_str().unwrap(),
            &daemon.url("inbox/"),
        ],
    );
    let mut slow = slow.spawn().unwrap();
    // Wait until the upload has begun (its partial file exists), then knock.
    let started = Instant::now();
    while fs::read_dir(dir.join("inbox")).unwrap().count() == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the upload never began"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    refused(copy(&bob, &[&daemon.url("")]), 1, "busy");
    assert!(slow.wait().unwrap().success());
    assert!(same_content(
        &dir.join("slow.bin"),
        &dir.join("inbox/slow.bin")
    ));
    assert_eq!(listing(&bob, &daemon).len(), 2, "served again");
    drop(daemon);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn sync_mirrors_into_a_writable_module_and_back() {
    let dir = scratch("sync");
    let config = setup(&dir, "");
    let daemon = Daemon::start(&config, &[]);
    let bob = dir.join("bob.key");
    let sync = |args: &[&str]| {
        let mut cmd = Command::new(HAUL);
        cmd.args(["sync", "-q", "--json", "--key-file"])
            .arg(&bob)
            .args(args);
        json(&run_ok(cmd))
    };
    let local = dir.join("data");
    sync(&[local.to_str().unwrap(), &daemon.url("inbox")]);
    assert_same_tree(&local, &dir.join("inbox/data"));
    fs::remove_file(local.join("sub/small")).unwrap();
    let report = sync(&[local.to_str().unwrap(), &daemon.url("inbox")]);
    assert_eq!(report["deleted"], 1, "{report}");
    assert_same_tree(&local, &dir.join("inbox/data"));

    // Back down, into a copy with an extra file.
    let down = dir.join("down");
    fs::create_dir(&down).unwrap();
    sync(&[&daemon.url("inbox/data"), down.to_str().unwrap()]);
    fs::write(down.join("data/extra"), b"x").unwrap();
    let report = sync(&[&daemon.url("inbox/data"), down.to_str().unwrap()]);
    assert_eq!(report["deleted"], 1, "{report}");
    assert_same_tree(&local, &down.join("data"));

    // The whole module into a directory: that directory mirrors the module.
    let whole = dir.join("whole");
    fs::create_dir(&whole).unwrap();
    fs::write(whole.join("stray"), b"x").unwrap();
    let report = sync(&[&daemon.url("inbox"), whole.to_str().unwrap()]);
    assert_eq!(report["deleted"], 1, "{report}");
    assert_same_tree(&dir.join("inbox"), &whole);
    drop(daemon);
    fs::remove_dir_all(dir).unwrap();
}
