//! # haul-lab
//!
//! Emulated wide-area links on one machine, for measuring transports the way the classic
//! dummynet/netem experiments did — on kernels without netem. A [`Lab`] creates two network
//! namespaces, `client` and `server`, each with a TUN device, and an [`Emulator`] moves the IP
//! packets between them through the `haul-link` model (rate and drop-tail queue, delay, jitter,
//! random and bursty loss, reordering, duplication), each direction with its own settings.
//! TCP TSO and UDP GSO super-packets pass whole unless the link must cut them, so the emulator
//! carries gigabits per second on a small machine.
//!
//! Everything a lab creates is removed when it is dropped — on success, error or panic — and
//! labs left by killed processes are swept up by the next one.

pub mod compare;
pub mod emulator;
pub mod netns;
pub mod packet;
pub mod plot;
pub mod tun;

pub use emulator::{Emulator, EmulatorReport};
pub use haul_link::{bdp_bytes, GilbertElliott, LinkConfig};

use std::ffi::OsStr;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use thiserror::Error;
use tun::Tun;

/// The client's address inside the lab.
pub const CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
/// The server's address inside the lab.
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);
/// The client's IPv6 address inside the lab.
pub const CLIENT_ADDR6: Ipv6Addr = Ipv6Addr::new(0xfd77, 0, 0, 0, 0, 0, 0, 1);
/// The server's IPv6 address inside the lab.
pub const SERVER_ADDR6: Ipv6Addr = Ipv6Addr::new(0xfd77, 0, 0, 0, 0, 0, 0, 2);

/// TCP buffer limits set in both namespaces (min, default, max): large enough for a 10 Gbit/s ×
/// 200 ms path, so TCP is limited by the path, not by its buffers.
const TCP_MEM: &str = "4096 131072 268435456";

/// Why a lab could not be set up.
#[derive(Debug, Error)]
pub enum LabError {
    /// Namespaces and TUN devices need root.
    #[error("haul lab needs root to create network namespaces and TUN devices (run it with sudo)")]
    NotRoot,
    /// A command failed.
    #[error("`{command}` failed: {message}")]
    Command {
        /// The command line.
        command: String,
        /// What it said.
        message: String,
    },
    /// The TUN device could not be set up.
    #[error("TUN device: {0}")]
    Tun(String),
}

/// The two ends of a lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The `client` namespace (10.77.0.1).
    Client,
    /// The `server` namespace (10.77.0.2).
    Server,
}

/// The link between the namespaces, per direction.
#[derive(Debug, Clone, PartialEq)]
pub struct LabConfig {
    /// Client → server.
    pub forward: LinkConfig,
    /// Server → client.
    pub reverse: LinkConfig,
    /// MTU of both devices.
    pub mtu: u32,
    /// Seed of the loss and jitter processes.
    pub seed: u64,
}

impl LabConfig {
    /// The same link both ways.
    pub fn symmetric(link: LinkConfig) -> Self {
        Self {
            forward: link.clone(),
            reverse: link,
            mtu: 1500,
            seed: 1,
        }
    }
}

/// Two namespaces joined by an emulated link. Dropping it tears everything down.
pub struct Lab {
    namespaces: Vec<String>,
    emulator: Option<Emulator>,
}

impl Lab {
    /// Builds the namespaces and devices and starts the emulator.
    pub fn start(config: &LabConfig) -> Result<Self, LabError> {
        // SAFETY: geteuid(2) has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(LabError::NotRoot);
        }
        netns::sweep_stale();
        static SERIAL: AtomicU32 = AtomicU32::new(0);
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        let mut lab = Lab {
            namespaces: Vec::new(),
            emulator: None,
        };
        let client = lab.add_end(
            serial,
            "client",
            CLIENT_ADDR,
            SERVER_ADDR,
            CLIENT_ADDR6,
            SERVER_ADDR6,
            config.mtu,
        )?;
        let server = lab.add_end(
            serial,
            "server",
            SERVER_ADDR,
            CLIENT_ADDR,
            SERVER_ADDR6,
            CLIENT_ADDR6,
            config.mtu,
        )?;
        lab.emulator = Some(Emulator::start(
            client,
            server,
            config.forward.clone(),
            config.reverse.clone(),
            config.seed,
        ));
        Ok(lab)
    }

    /// Creates one namespace with its TUN device, addresses and TCP buffer limits.
    #[allow(clippy::too_many_arguments)]
    fn add_end(
        &mut self,
        serial: u32,
        role: &str,
        local: Ipv4Addr,
        peer: Ipv4Addr,
        local6: Ipv6Addr,
        peer6: Ipv6Addr,
        mtu: u32,
    ) -> Result<Tun, LabError> {
        let ns = netns::name(serial, role);
        netns::ip(&["netns", "add", &ns])?;
        self.namespaces.push(ns.clone());
        let device = format!("hl{}{}{}", std::process::id(), &role[..1], serial % 1000);
        let tun = Tun::create(&device)?;
        netns::ip(&["link", "set", "dev", &device, "netns", &ns])?;
        let mtu = mtu.to_string();
        let (local, peer, local6, peer6) = (
            local.to_string(),
            peer.to_string(),
            local6.to_string(),
            peer6.to_string(),
        );
        netns::ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        netns::ip(&[
            "-n", &ns, "addr", "add", &local, "peer", &peer, "dev", &device,
        ])?;
        netns::ip(&[
            "-n", &ns, "-6", "addr", "add", &local6, "peer", &peer6, "dev", &device, "nodad",
        ])?;
        netns::ip(&[
            "-n",
            &ns,
            "link",
            "set",
            "dev",
            &device,
            "mtu",
            &mtu,
            "txqueuelen",
            "10000",
            "up",
        ])?;
        netns::run(
            Command::new("ip")
                .args(["netns", "exec", &ns, "sysctl", "-q", "-w"])
                .args([
                    format!("net.ipv4.tcp_rmem={TCP_MEM}"),
                    format!("net.ipv4.tcp_wmem={TCP_MEM}"),
                    "net.ipv4.tcp_no_metrics_save=1".to_owned(),
                ]),
            &format!("sysctl in {ns}"),
        )?;
        Ok(tun)
    }

    /// The namespace of one side.
    pub fn namespace(&self, side: Side) -> &str {
        let index = match side {
            Side::Client => 0,
            Side::Server => 1,
        };
        self.namespaces.get(index).map_or("", String::as_str)
    }

    /// Variables that tell commands run in the lab where they are.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "HAUL_LAB_CLIENT_NS",
                self.namespace(Side::Client).to_owned(),
            ),
            (
                "HAUL_LAB_SERVER_NS",
                self.namespace(Side::Server).to_owned(),
            ),
            ("HAUL_LAB_CLIENT", CLIENT_ADDR.to_string()),
            ("HAUL_LAB_SERVER", SERVER_ADDR.to_string()),
            ("HAUL_LAB_CLIENT6", CLIENT_ADDR6.to_string()),
            ("HAUL_LAB_SERVER6", SERVER_ADDR6.to_string()),
        ]
    }

    /// A command that runs `program` inside one side's namespace, with [`Lab::env`] set.
    pub fn command(&self, side: Side, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", self.namespace(side)])
            .arg(program)
            .envs(self.env());
        command
    }

    /// Runs `f` on a thread that has entered one side's namespace (sockets it opens live there).
    pub fn run_in<T: Send>(&self, side: Side, f: impl FnOnce() -> T + Send) -> Result<T, LabError> {
        let path = format!("/run/netns/{}", self.namespace(side));
        let fail = |e: std::io::Error| LabError::Command {
            command: format!("setns {path}"),
            message: e.to_string(),
        };
        let file = std::fs::File::open(&path).map_err(fail)?;
        std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    use std::os::fd::AsRawFd;
                    // SAFETY: setns(2) on an open namespace file; it changes only this thread.
                    if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                        return Err(fail(std::io::Error::last_os_error()));
                    }
                    Ok(f())
                })
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// Tears the lab down and reports what the emulator did.
    pub fn stop(mut self) -> EmulatorReport {
        self.teardown()
    }

    fn teardown(&mut self) -> EmulatorReport {
        let report = self.emulator.take().map(Emulator::stop).unwrap_or_default();
        for ns in self.namespaces.drain(..) {
            netns::delete(&ns);
        }
        report
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.teardown();
    }
}
