//! Per-connection settings.

use crate::cc::{CongestionControlFactory, ModelRateFactory};
use crate::secure::{self, PresharedKey};
use crate::wire::SocketType;
use std::sync::Arc;
use std::time::Duration;

/// IP + UDP header bytes the MSS includes.
pub const IP_UDP_OVERHEAD: u32 = 28;
/// Smallest MSS accepted from a peer.
pub const MIN_MSS: u32 = 76;

/// Which wire dialect a connection speaks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Dialect {
    /// The UDT4 reference library's format, byte for byte: no encryption, no authentication.
    /// Only for talking to UDT4 peers.
    #[default]
    Udt4,
    /// haul's own: a Noise key exchange keyed by this pre-shared key, then every packet
    /// encrypted and authenticated (see [`crate::secure`]).
    Haul(PresharedKey),
}

impl Dialect {
    /// The handshake version field.
    pub fn version(&self) -> u32 {
        match self {
            Dialect::Udt4 => crate::wire::Handshake::VERSION,
            Dialect::Haul(_) => secure::VERSION,
        }
    }

    /// Bytes of protection each packet carries.
    pub fn overhead(&self) -> usize {
        match self {
            Dialect::Udt4 => 0,
            Dialect::Haul(_) => secure::OVERHEAD,
        }
    }
}

/// Settings for one connection.
#[derive(Debug, Clone)]
pub struct ConnectionConfig {
    /// Wire dialect; both ends must agree (a mismatch is rejected in the handshake).
    pub dialect: Dialect,
    /// Stream or message (datagram) mode; both ends must agree.
    pub socket_type: SocketType,
    /// Maximum segment size in bytes, IP and UDP headers included (default 1500).
    pub mss: u32,
    /// Receive buffer in packets; also the flow window offered to the peer (default 262 144:
    /// five bandwidth-delay products of 1 Gbit/s × 600 ms, because a hole whose
    /// retransmission is lost too holds everything behind it for three round trips or more).
    /// Memory is taken only as packets wait in it.
    pub recv_buffer_packets: u32,
    /// Receive buffer cap in bytes: with a large MSS the buffer holds fewer packets.
    pub recv_buffer_bytes: usize,
    /// Send buffer in bytes: the most data in flight and awaiting acknowledgement (default
    /// 384 MiB, as the receive buffer; memory is taken only as data waits in it).
    pub send_buffer_bytes: usize,
    /// Most written bytes held before their first transmission (default 1 MiB): a write past
    /// it blocks until the pacer catches up. Data sent soon after it was written is still in
    /// the CPU cache when it is copied into a datagram; with a backlog the size of the send
    /// buffer that copy cost the sender of a loopback test a third of its time.
    pub max_unsent_bytes: usize,
    /// The same allowance for bytes the application lends ([`crate::Connection::write_bytes`],
    /// default 4 MiB): the connection keeps no copy of them to go cold, and a writer that
    /// queues more per wake-up is woken less often (on loopback each wake-up of a writer
    /// blocked on the other core cost the waking I/O thread about 15 µs). 4 MiB is one full
    /// `sendmmsg` of the driver: 64 GSO messages of 64 KiB.
    pub max_unsent_lent_bytes: usize,
    /// A peer silent for this long is declared gone (default 10 s).
    pub idle_timeout: Duration,
    /// A client gives up connecting after this long (default 3 s, as the reference).
    pub connect_timeout: Duration,
    /// A rendezvous gives up after this long (default 30 s, as the reference).
    pub rendezvous_timeout: Duration,
    /// Send a keep-alive when nothing was sent for this long.
    pub keepalive_interval: Duration,
    /// Report losses more than once (the reference never does): each gap again with the next
    /// one, and what is still missing after an RTO again on a timer.
    pub repeat_loss_reports: bool,
    /// Largest number of equal-size packets one transmit may carry (UDP GSO); 1 disables batching.
    pub max_segments: usize,
    /// Largest size of one transmit in bytes (one GSO send is one UDP datagram: 65 507 bytes).
    pub max_batch_bytes: usize,
    /// Builds the congestion controller (default: the model-based controller, fair policy;
    /// `Udt4DaimdFactory` reproduces the reference library).
    pub congestion: Arc<dyn CongestionControlFactory>,
    /// Whether the connection shares its least RTT with the endpoint's other connections to the
    /// same host address (default yes). A connection that starts while the others keep a queue
    /// then takes the path's RTT for its base, not the queue's, and leaves start-up before it
    /// overflows the buffer: four flows a second apart at 300 ms resent 0.03 of their packets
    /// instead of 0.16 (docs/CONGESTION.md). Off, each connection measures alone, as
    /// connections from different hosts do. One local socket and one host address are taken
    /// for one path: where routes to a host differ in length, turn it off.
    pub share_path_rtt: bool,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        Self {
            dialect: Dialect::Udt4,
            socket_type: SocketType::Stream,
            mss: 1500,
            recv_buffer_packets: 262_144,
            recv_buffer_bytes: 384 << 20,
            send_buffer_bytes: 384 << 20,
            max_unsent_bytes: 1 << 20,
            max_unsent_lent_bytes: 4 << 20,
            idle_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(3),
            rendezvous_timeout: Duration::from_secs(30),
            keepalive_interval: Duration::from_secs(1),
            repeat_loss_reports: true,
            max_segments: 64,
            max_batch_bytes: 65_507,
            congestion: Arc::new(ModelRateFactory::default()),
            share_path_rtt: true,
        }
    }
}

impl ConnectionConfig {
    /// Receive buffer slots for a given payload size: the packet limit, or fewer if the byte
    /// cap says so (at least 32).
    pub fn recv_slots(&self, payload: usize) -> usize {
        (self.recv_buffer_packets as usize)
            .min(self.recv_buffer_bytes / payload.max(1))
            .max(32)
    }

    /// Payload bytes per data packet for a given MSS: MSS − 28 (IP/UDP) − 16 (header) − the
    /// dialect's protection.
    pub fn payload_for(&self, mss: u32) -> usize {
        (mss as usize)
            .saturating_sub(
                IP_UDP_OVERHEAD as usize + crate::wire::HEADER_LEN + self.dialect.overhead(),
            )
            .max(1)
    }
}
