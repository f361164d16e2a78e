//! `haul lab` end to end: a command's exit status passes through, the lab is torn down after a
//! failing command and after SIGTERM, haul moves data across an emulated link, and
//! `haul lab compare --quick` writes its CSV, JSON, table and plots.
//!
//! These need root (namespaces, TUN). Without it they print why and pass, unless
//! HAUL_REQUIRE_LAB=1 (CI sets it). One at a time: the machine has two cores.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Duration;

const HAUL: &str = env!("CARGO_BIN_EXE_haul");
static SERIAL: Mutex<()> = Mutex::new(());

fn root() -> bool {
    // SAFETY: geteuid(2) has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        assert!(
            std::env::var("HAUL_REQUIRE_LAB").is_err(),
            "the lab tests need root"
        );
        eprintln!("skipping: the lab needs root");
    }
    root
}

fn haul(args: &[&str]) -> Output {
    Command::new(HAUL).args(args).output().unwrap()
}

/// Lab namespaces whose owning process matches `owner`.
fn namespaces(owner: impl Fn(&str) -> bool) -> Vec<String> {
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("haul-") && owner(n.split('-').nth(1).unwrap_or("")))
                .collect()
        })
        .unwrap_or_default()
}

/// Namespaces left by haul processes that are gone.
fn leftover_namespaces() -> Vec<String> {
    namespaces(|pid| !Path::new(&format!("/proc/{pid}")).exists())
}

#[test]
fn exit_status_passes_through_and_nothing_is_left() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !root() {
        return;
    }
    let out = haul(&["lab", "link", "--rtt", "20ms", "--", "sh", "-c", "exit 3"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("emulator CPU"), "{stderr}");
    assert_eq!(leftover_namespaces(), Vec::<String>::new());
}

#[test]
fn sigterm_tears_the_lab_down() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !root() {
        return;
    }
    let mut child = Command::new(HAUL)
        .args(["lab", "link", "--", "sleep", "30"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: kill(2) on our child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let started = std::time::Instant::now();
    let status = child.wait().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        status.code(),
        Some(128 + libc::SIGTERM),
        "the command's signal is reported"
    );
    let pid = child.id().to_string();
    let ours = namespaces(|owner| owner == pid);
    assert_eq!(ours, Vec::<String>::new(), "namespaces left behind");
}

#[test]
fn haul_moves_data_across_an_emulated_link() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !root() {
        return;
    }
    let server = format!("{HAUL} perf --server --one-off --json >/dev/null 2>&1");
    let out = haul(&[
        "lab",
        "link",
        "--rate",
        "200M",
        "--rtt",
        "30ms",
        "--loss",
        "1%",
        "--server",
        &server,
        "--",
        HAUL,
        "perf",
        "--json",
        "--time",
        "3",
        "--client",
        "10.77.0.2",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bps = v["bits_per_second"].as_f64().unwrap();
    // Correctness, not speed: data crossed a lossy link and the sender had to retransmit.
    assert!(bps > 1e6, "{bps}");
    assert!(v["sender"]["retransmits"].as_u64().unwrap() > 0, "{v}");
    assert!(bps < 200e6, "faster than the link: {bps}");
}

#[test]
fn quick_compare_writes_csv_json_table_and_plots() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !root() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lab-compare");
    let _ = std::fs::remove_dir_all(&dir);
    let out = haul(&[
        "lab",
        "compare",
        "--quick",
        "--time",
        "2s",
        "--transports",
        "haul,haul-enc,cubic,bbr,udt4",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (goodput, error) = (column("goodput_mbit"), column("error"));
    let (rtt, steady_rtt) = (column("rtt_ms"), column("steady_rtt_ms"));
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 20, "{csv}");
    for row in &rows {
        let fields: Vec<&str> = row.split(',').collect();
        let udt4_missing = fields[0] == "udt4" && std::env::var("HAUL_REQUIRE_INTEROP").is_err();
        if !udt4_missing {
            assert_eq!(fields[error], "", "a run failed: {row}");
            assert!(
                fields[goodput].parse::<f64>().unwrap() > 0.5,
                "no goodput: {row}"
            );
        }
        if fields[0] == "haul" || fields[0] == "haul-enc" {
            // The receiver's 0.1 s intervals time start-up, on what it read and on what arrived.
            // When start-up happens is the machine's business (a hypervisor that steals half
            // the CPU slows the emulator and both ends alike; CI failed once so): the test asks
            // that a time, where there is one, lies within the 2 s transfer (and its last
            // interval), and that a run which delivered nearly the whole link has one.
            let efficiency: f64 = fields[column("efficiency")].parse().unwrap();
            for name in ["startup_s", "link_startup_s"] {
                match fields[column(name)] {
                    "" => assert!(efficiency < 0.95, "{name} missing: {row}"),
                    at => {
                        let at: f64 = at.parse().unwrap();
                        assert!(at > 0.0 && at <= 2.1, "{name}: {row}");
                    }
                }
            }
        }
        if fields[0] != "udt4" {
            // The sender's smoothed RTT, read in the right unit: never below the link's, and
            // within a small multiple of it (a 1-BDP queue, the emulator's own delay, start-up's
            // overshoot and a starved emulator's stalls; a unit slip would be 1000 times off).
            let link: f64 = fields[rtt].parse().unwrap();
            let steady: f64 = fields[steady_rtt].parse().unwrap();
            assert!(steady >= link * 0.95 && steady < 10.0 * link, "RTT: {row}");
        }
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 20);
    let wins = std::fs::read_to_string(dir.join("wins.md")).unwrap();
    assert!(
        wins.contains("| 100 Mbit/s |") && wins.contains("median run"),
        "{wins}"
    );
    for loss in ["0", "1"] {
        let svg =
            std::fs::read_to_string(dir.join(format!("goodput-100mbit-loss{loss}.svg"))).unwrap();
        assert!(svg.contains("<svg") && svg.contains("haul-enc") && svg.contains("bbr"));
    }
}
