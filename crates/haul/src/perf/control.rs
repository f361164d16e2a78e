//! The control channel of `haul perf`: one TCP connection carrying JSON lines.
//!
//! client → server: [`Params`]; server → client: [`Ready`]; then each side sends its
//! [`SideReport`] so that both can print the same summary.

use anyhow::{bail, Context, Result};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;

/// Protocol version of the control channel.
pub const VERSION: u32 = 1;

/// Which transport carries the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// haul over UDP.
    Haul,
    /// Kernel TCP.
    Tcp,
}

/// What the client asks for.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    /// Control protocol version.
    pub version: u32,
    /// Data transport.
    pub transport: Transport,
    /// The server sends (instead of receiving).
    pub reverse: bool,
    /// Parallel data connections.
    pub parallel: u32,
    /// Stop after this many bytes per connection (else `seconds`).
    pub bytes: Option<u64>,
    /// Test length in seconds.
    pub seconds: f64,
    /// Sender's fixed rate in bits per second (haul: fixed-rate controller; TCP: pacing cap).
    pub rate: Option<u64>,
    /// TCP congestion control.
    pub tcp_cc: Option<String>,
    /// TCP socket buffer size in bytes (None: kernel autotuning).
    pub window: Option<u64>,
    /// haul's maximum segment size, IP and UDP headers included.
    pub mss: u32,
    /// haul: move the data with the copying calls instead of the zero-copy ones.
    #[serde(default)]
    pub copy: bool,
    /// Seconds at the start left out of the summary (the test runs this much longer).
    #[serde(default)]
    pub omit: u32,
    /// Seconds between the starts of consecutive connections: connection k sends its first
    /// byte k × this after the test starts (0: all together).
    #[serde(default)]
    pub stagger: f64,
}

/// Longest test, omitted seconds included: a day, as iperf3 allows.
pub const MAX_TEST_SECONDS: f64 = 86_400.0;
/// Most parallel connections (`--parallel`).
pub const MAX_PARALLEL: u32 = 128;

impl Params {
    /// Whether the test asked for is one this side can run: a server checks what arrives from
    /// the network before it uses it, a client what its options say before it asks.
    pub fn check(&self) -> Result<(), String> {
        let total = self.seconds + f64::from(self.omit);
        if !(self.seconds > 0.0 && total <= MAX_TEST_SECONDS) {
            return Err(format!(
                "a test of --time {:?} s with --omit {} s is out of range: --time must be above 0, \
                 and --time plus --omit at most {MAX_TEST_SECONDS} s (a day)",
                self.seconds, self.omit
            ));
        }
        if !(1..=MAX_PARALLEL).contains(&self.parallel) {
            return Err(format!(
                "--parallel {} is out of range: 1 to {MAX_PARALLEL} connections are allowed",
                self.parallel
            ));
        }
        let last_start = self.stagger * f64::from(self.parallel - 1);
        if !(self.stagger >= 0.0 && last_start <= MAX_TEST_SECONDS) {
            return Err(format!(
                "--stagger {:?} s is out of range: it must be 0 or more, and the last \
                 connection must start within {MAX_TEST_SECONDS} s (a day)",
                self.stagger
            ));
        }
        if self.bytes.is_none() && self.parallel > 1 && last_start >= total {
            return Err(format!(
                "--stagger {:?} s: the last of {} connections would start at {last_start:?} s, \
                 when the test of {total:?} s is over (stagger less, or run longer)",
                self.stagger, self.parallel
            ));
        }
        Ok(())
    }
}

/// The server's answer: where to open the data connections.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ready {
    /// Port of the data listener (UDP for haul, TCP for TCP).
    pub data_port: u16,
    /// Set instead when the server refuses the test.
    pub error: Option<String>,
}

/// One side's final figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SideReport {
    /// Bytes this side sent or received after the omitted seconds.
    pub bytes: u64,
    /// Seconds from the end of the omitted seconds (the first byte) to the last byte; on the
    /// receiving side of a timed test, the test's seconds after the omitted ones.
    pub seconds: f64,
    /// CPU seconds this process used during the test, after the omitted seconds (on the
    /// receiving side of a timed test, during the seconds `seconds` counts).
    pub cpu_seconds: f64,
    /// Retransmitted packets (haul) or segments (TCP) after the omitted seconds, when this
    /// side sent.
    pub retransmits: u64,
    /// Smoothed RTT at the end, microseconds.
    pub rtt_us: u64,
    /// Bytes of each connection after the omitted seconds, in the order this side opened or
    /// accepted them (they sum to `bytes`).
    #[serde(default)]
    pub streams: Vec<u64>,
}

/// A control connection.
pub struct Control {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Control {
    /// Wraps a connected TCP stream.
    pub fn new(stream: TcpStream) -> Result<Self> {
        stream.set_nodelay(true).ok();
        let writer = stream
            .try_clone()
            .context("cloning the control connection")?;
        Ok(Self {
            reader: BufReader::new(stream),
            writer,
        })
    }

    /// Sends one message.
    pub fn send<T: Serialize>(&mut self, msg: &T) -> Result<()> {
        let mut line = serde_json::to_vec(msg)?;
        line.push(b'\n');
        self.writer
            .write_all(&line)
            .context("writing to the control connection")
    }

    /// Receives one message.
    pub fn recv<T: DeserializeOwned>(&mut self) -> Result<T> {
        let mut line = String::new();
        let n = self
            .reader
            .read_line(&mut line)
            .context("reading from the control connection")?;
        if n == 0 {
            bail!("the peer closed the control connection");
        }
        serde_json::from_str(&line).with_context(|| format!("unexpected control message {line:?}"))
    }
}
