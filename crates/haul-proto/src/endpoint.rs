//! An endpoint: one UDP port, many connections, routed by destination socket id.
//!
//! A listener keeps **no state** for a client until the client echoes a valid SYN cookie: the
//! cookie is a keyed hash of the client's address and the current minute, so a flood of requests
//! costs one reply each and nothing more. In the `haul` dialect a client may skip the cookie's
//! round trip: its request carries a key-exchange message that only a holder of the key can
//! write, stamped with the client's clock, and the listener accepts it if it is fresh and new
//! ([`crate::freshness`]); otherwise it answers with a cookie as before.

use crate::cc::PathRtt;
use crate::conn::{Connection, ConnectionConfig, Dialect, Transmit};
use crate::freshness::Freshness;
use crate::secure::{self, HandshakeError, PresharedKey, Responder};
use crate::seq::SeqNo;
use crate::wire::{self, Control, ControlPacket, Handshake, Packet, RequestType};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// Identifies a connection of an endpoint: its local socket id.
pub type ConnectionHandle = u32;

/// Largest socket id; ids start at a random value below it and count down.
const MAX_SOCKET_ID: u32 = 1 << 30;
/// At most one warning this often while requests that skip the cookie exceed the budget.
const BUDGET_WARNING_INTERVAL: Duration = Duration::from_secs(10);

/// Settings for an endpoint.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// Settings for each connection the endpoint creates.
    pub connection: ConnectionConfig,
    /// Whether to accept incoming connections.
    pub listen: bool,
    /// Seed for ISNs, socket ids and the cookie key (the driver draws it from the OS).
    pub seed: u64,
    /// `haul` dialect, listening: keys a client may prove besides the dialect's own, tried in
    /// turn (a key exchange's first message costs a hash and a small decryption per key). An
    /// accepted connection tells which one it proved ([`Connection::peer_key`]), so a server
    /// can give each client its own key and its own rights.
    pub accept_keys: Vec<PresharedKey>,
    /// The time since the Unix epoch at the `now` given to [`Endpoint::new`]
    /// (`SystemTime::now()` for a real endpoint). With it, `haul`-dialect clients send their key
    /// exchange with the request and connect in one round trip, and listeners accept such
    /// requests when their clocks agree within a minute; without it, every connection takes the
    /// cookie's extra round trip.
    pub wall_clock: Option<Duration>,
}

/// What shows that a request may be accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Proof {
    /// It echoed the cookie we sent to its address.
    Cookie,
    /// Its key exchange is stamped with a clock close to ours and was not seen before.
    Freshness,
}

/// What to do with a datagram the endpoint looked at.
#[derive(Debug)]
pub enum DatagramEvent {
    /// Hand the datagram to this existing connection.
    Connection(ConnectionHandle),
    /// A listener accepted a new connection (its acceptance is already queued in it).
    NewConnection(ConnectionHandle, Box<Connection>),
    /// Send this stateless reply (written into the caller's buffer).
    Response(Transmit),
}

/// Counters of what the endpoint saw.
#[derive(Debug, Clone, Copy, Default)]
pub struct EndpointStats {
    /// Datagrams that could not be routed to anything.
    pub unroutable: u64,
    /// Cookie replies sent to connection requests.
    pub cookies_sent: u64,
    /// Requests whose echoed cookie was wrong or stale.
    pub cookies_rejected: u64,
    /// `haul` dialect: requests whose key exchange was valid but not fresh (the clocks more than
    /// a minute apart, or a copy of one already accepted), answered with a cookie instead.
    pub stale_key_exchanges: u64,
    /// `haul` dialect: requests that skipped the cookie while the listener's budget of keys tried
    /// per second was spent, answered with a cookie unchecked.
    pub key_trials_over_budget: u64,
    /// Requests rejected for a version (dialect) or socket-type mismatch.
    pub rejected: u64,
    /// `haul` dialect: requests whose key exchange failed (wrong key, altered message).
    pub auth_failed: u64,
    /// Connections accepted.
    pub accepted: u64,
    /// Of those, accepted from a request that skipped the cookie (one round trip).
    pub accepted_without_cookie: u64,
}

/// The routing table and listener of one UDP socket.
#[derive(Debug)]
pub struct Endpoint {
    config: EndpointConfig,
    epoch: Instant,
    rng: SmallRng,
    cookie_key: [u8; 32],
    /// The wall clock and the key exchanges accepted without a cookie, if the clock is known.
    freshness: Option<Freshness>,
    next_id: u32,
    /// local id → peer address. Looked up for every packet; the keys are ids this endpoint
    /// chose, so a fast non-keyed hash is safe.
    routes: FxHashMap<u32, SocketAddr>,
    /// (peer address, peer id) → local id, for accepted connections.
    accepted: HashMap<(SocketAddr, u32), u32>,
    /// peer address → local id, for rendezvous connections.
    rendezvous: HashMap<SocketAddr, u32>,
    stats: EndpointStats,
    /// When the last warning that the key-trial budget was spent went out.
    budget_warned: Option<Instant>,
    /// host → the least RTT its connections share (see [`ConnectionConfig::share_path_rtt`]).
    /// An entry whose connections are all gone is dropped when the next new host comes.
    paths: HashMap<IpAddr, Weak<PathRtt>>,
}

impl Endpoint {
    /// A new endpoint; `now` starts its cookie clock.
    pub fn new(config: EndpointConfig, now: Instant) -> Self {
        let mut rng = SmallRng::seed_from_u64(config.seed);
        let mut cookie_key = [0u8; 32];
        rng.fill(&mut cookie_key);
        let next_id = rng.gen_range(1..MAX_SOCKET_ID);
        let freshness = config.wall_clock.map(|unix| Freshness::new(now, unix));
        Self {
            config,
            epoch: now,
            rng,
            cookie_key,
            freshness,
            next_id,
            routes: FxHashMap::default(),
            accepted: HashMap::new(),
            rendezvous: HashMap::new(),
            stats: EndpointStats::default(),
            budget_warned: None,
            paths: HashMap::new(),
        }
    }

    /// Whether incoming connections are accepted.
    pub fn set_listening(&mut self, listen: bool) {
        self.config.listen = listen;
    }

    /// Sets the wall clock: the time since the Unix epoch at `now`. A long-lived endpoint calls
    /// it now and then, as its monotonic clock and the wall clock drift apart.
    pub fn set_wall_clock(&mut self, now: Instant, since_epoch: Duration) {
        match &mut self.freshness {
            Some(freshness) => freshness.set_clock(now, since_epoch),
            None => self.freshness = Some(Freshness::new(now, since_epoch)),
        }
    }

    /// Counters.
    pub fn stats(&self) -> EndpointStats {
        self.stats
    }

    /// Number of live connections.
    pub fn connection_count(&self) -> usize {
        self.routes.len()
    }

    fn allocate_id(&mut self) -> u32 {
        loop {
            let id = self.next_id;
            self.next_id = if id <= 1 { MAX_SOCKET_ID - 1 } else { id - 1 };
            if !self.routes.contains_key(&id) {
                return id;
            }
        }
    }

    /// Hands `conn` the least RTT of the connections to its host, if its config shares it.
    fn share_path_rtt(&mut self, conn: &mut Connection) {
        if !conn.shares_path_rtt() {
            return;
        }
        let host = conn.peer_addr().ip();
        let path = match self.paths.get(&host).and_then(Weak::upgrade) {
            Some(path) => path,
            None => {
                self.paths.retain(|_, path| path.strong_count() > 0);
                let path = Arc::new(PathRtt::default());
                self.paths.insert(host, Arc::downgrade(&path));
                path
            }
        };
        conn.share_path_rtt(path);
    }

    fn random_isn(&mut self) -> SeqNo {
        SeqNo::masked(self.rng.gen())
    }

    /// Starts a client connection to a listener.
    pub fn connect(&mut self, now: Instant, peer: SocketAddr) -> (ConnectionHandle, Connection) {
        let config = self.config.connection.clone();
        self.connect_with(now, peer, config)
    }

    /// Starts a client connection with a configuration of its own instead of the endpoint's
    /// (another congestion controller or policy, say).
    pub fn connect_with(
        &mut self,
        now: Instant,
        peer: SocketAddr,
        config: ConnectionConfig,
    ) -> (ConnectionHandle, Connection) {
        let isn = self.random_isn();
        self.start_client(now, peer, isn, config)
    }

    /// Starts a client connection with a chosen initial sequence number (to reproduce a run, or
    /// to test the 31-bit wrap). Prefer [`Endpoint::connect`], whose ISN is random.
    pub fn connect_with_isn(
        &mut self,
        now: Instant,
        peer: SocketAddr,
        isn: SeqNo,
    ) -> (ConnectionHandle, Connection) {
        let config = self.config.connection.clone();
        self.start_client(now, peer, isn, config)
    }

    fn start_client(
        &mut self,
        now: Instant,
        peer: SocketAddr,
        isn: SeqNo,
        config: ConnectionConfig,
    ) -> (ConnectionHandle, Connection) {
        let id = self.allocate_id();
        self.routes.insert(id, peer);
        let mut conn = Connection::connect(now, id, peer, isn, config);
        self.share_path_rtt(&mut conn);
        if let Some(freshness) = &self.freshness {
            conn.send_key_exchange_with_request(freshness.unix_ms(now));
        }
        (id, conn)
    }

    /// Starts a rendezvous connection with a peer doing the same.
    pub fn rendezvous(&mut self, now: Instant, peer: SocketAddr) -> (ConnectionHandle, Connection) {
        let id = self.allocate_id();
        let isn = self.random_isn();
        self.routes.insert(id, peer);
        self.rendezvous.insert(peer, id);
        let mut conn = Connection::rendezvous(now, id, peer, isn, self.config.connection.clone());
        self.share_path_rtt(&mut conn);
        (id, conn)
    }

    /// Removes a finished connection from the routing tables.
    pub fn forget(&mut self, handle: ConnectionHandle) {
        if let Some(peer) = self.routes.remove(&handle) {
            self.accepted.retain(|_, id| *id != handle);
            if self.rendezvous.get(&peer) == Some(&handle) {
                self.rendezvous.remove(&peer);
            }
        }
    }

    /// Decides what a datagram from `from` is for. A stateless reply is written into `buf`.
    pub fn handle(
        &mut self,
        now: Instant,
        from: SocketAddr,
        bytes: &[u8],
        buf: &mut Vec<u8>,
    ) -> Option<DatagramEvent> {
        let Some(dest) = wire::destination_id(bytes) else {
            self.stats.unroutable += 1;
            return None;
        };
        if dest != 0 {
            if self.routes.get(&dest) == Some(&from) {
                return Some(DatagramEvent::Connection(dest));
            }
            self.stats.unroutable += 1;
            return None;
        }
        // Destination 0: only handshakes, to a rendezvous socket or to the listener. In the `haul`
        // dialect a key-exchange message may follow the handshake.
        let (packet, key_message) = match self.config.connection.dialect {
            Dialect::Udt4 => (bytes, &[][..]),
            Dialect::Haul(_) => wire::split_handshake(bytes),
        };
        let handshake = match wire::is_control(packet).then(|| Packet::parse(packet)) {
            Some(Ok(Packet::Control(ControlPacket {
                body: Control::Handshake(h),
                ..
            }))) => h,
            _ => {
                self.stats.unroutable += 1;
                return None;
            }
        };
        if let Some(&id) = self.rendezvous.get(&from) {
            return Some(DatagramEvent::Connection(id));
        }
        if !self.config.listen {
            self.stats.unroutable += 1;
            return None;
        }
        match handshake.req_type {
            RequestType::Request if !key_message.is_empty() && self.freshness.is_some() => {
                self.on_keyed_request(now, from, &handshake, key_message, buf)
            }
            RequestType::Request => Some(self.cookie_reply(now, from, &handshake, buf)),
            RequestType::Response => self.on_cookie_echo(now, from, &handshake, key_message, buf),
            _ => {
                self.stats.unroutable += 1;
                None
            }
        }
    }

    /// A request that carries its key exchange (`haul` dialect, the wall clock known): a repeat
    /// of one accepted goes to its connection; others are checked while the budget of keys
    /// tried allows, and draw a cookie past it.
    fn on_keyed_request(
        &mut self,
        now: Instant,
        from: SocketAddr,
        h: &Handshake,
        key_message: &[u8],
        buf: &mut Vec<u8>,
    ) -> Option<DatagramEvent> {
        if let Some(&id) = self.accepted.get(&(from, h.socket_id)) {
            return Some(DatagramEvent::Connection(id));
        }
        let keys = 1 + self.config.accept_keys.len();
        let allowed = self
            .freshness
            .as_mut()
            .is_some_and(|freshness| freshness.may_try(now, keys));
        if !allowed {
            self.stats.key_trials_over_budget += 1;
            let quiet = self
                .budget_warned
                .is_some_and(|at| now.saturating_duration_since(at) < BUDGET_WARNING_INTERVAL);
            if !quiet {
                self.budget_warned = Some(now);
                tracing::warn!(
                    %from,
                    over_budget = self.stats.key_trials_over_budget,
                    "too many requests to check without a cookie (a flood of forged ones?): \
                     answering them with cookies, clients connect in two round trips meanwhile"
                );
            }
            return Some(self.cookie_reply(now, from, h, buf));
        }
        self.admit(now, from, h, key_message, Proof::Freshness, buf)
    }

    fn cookie_reply(
        &mut self,
        now: Instant,
        from: SocketAddr,
        request: &Handshake,
        buf: &mut Vec<u8>,
    ) -> DatagramEvent {
        let reply = Handshake {
            cookie: self.cookie(from, self.minute(now)),
            ..*request
        };
        self.stats.cookies_sent += 1;
        self.reply(from, request.socket_id, reply, buf)
    }

    fn on_cookie_echo(
        &mut self,
        now: Instant,
        from: SocketAddr,
        h: &Handshake,
        key_message: &[u8],
        buf: &mut Vec<u8>,
    ) -> Option<DatagramEvent> {
        let minute = self.minute(now);
        let valid = h.cookie == self.cookie(from, minute)
            || (minute > 0 && h.cookie == self.cookie(from, minute - 1));
        if !valid {
            self.stats.cookies_rejected += 1;
            return None;
        }
        self.admit(now, from, h, key_message, Proof::Cookie, buf)
    }

    /// A request with a valid cookie, or one that skipped it: routed to its connection if
    /// accepted before, refused on a version or key mismatch, answered with a cookie if it
    /// skipped the cookie but is not fresh, and otherwise accepted.
    fn admit(
        &mut self,
        now: Instant,
        from: SocketAddr,
        h: &Handshake,
        key_message: &[u8],
        proof: Proof,
        buf: &mut Vec<u8>,
    ) -> Option<DatagramEvent> {
        if let Some(&id) = self.accepted.get(&(from, h.socket_id)) {
            return Some(DatagramEvent::Connection(id));
        }
        let ours = &self.config.connection;
        if h.version != ours.dialect.version() || h.socket_type != ours.socket_type.to_wire() {
            self.stats.rejected += 1;
            let reject = Handshake {
                req_type: RequestType::Rejected,
                ..*h
            };
            return Some(self.reply(from, h.socket_id, reject, buf));
        }
        let responder = match &ours.dialect {
            Dialect::Udt4 => None,
            Dialect::Haul(key) => match Self::read_key_exchange(
                std::iter::once(key).chain(&self.config.accept_keys),
                h,
                key_message,
            ) {
                Ok(responder) => Some(responder),
                Err(e) => {
                    // Stateless, like the cookie: the client learns why and gives up.
                    tracing::debug!(%from, error = %e, "key exchange refused");
                    self.stats.auth_failed += 1;
                    let reject = Handshake {
                        req_type: RequestType::Other(secure::REJECT_AUTH),
                        ..*h
                    };
                    return Some(self.reply(from, h.socket_id, reject, buf));
                }
            },
        };
        if proof == Proof::Freshness {
            let fresh = match (&mut self.freshness, &responder) {
                (Some(freshness), Some(r)) => r
                    .sent_at_ms()
                    .is_some_and(|sent| freshness.admit(now, sent, r.ephemeral())),
                _ => false,
            };
            if !fresh {
                self.stats.stale_key_exchanges += 1;
                let ours = self.freshness.as_ref().map(|f| f.unix_ms(now));
                let theirs = responder.as_ref().and_then(|r| r.sent_at_ms());
                if let (Some(ours), Some(theirs)) = (ours, theirs) {
                    // Clocks far apart cost every connection a round trip: say so.
                    let ahead_s = (theirs as f64 - ours as f64) / 1e3;
                    tracing::debug!(%from, client_clock_ahead_s = ahead_s,
                        "a request's key exchange is a copy or its clock is off: cookie instead");
                }
                return Some(self.cookie_reply(now, from, h, buf));
            }
            self.stats.accepted_without_cookie += 1;
        }
        let id = self.allocate_id();
        self.routes.insert(id, from);
        self.accepted.insert((from, h.socket_id), id);
        self.stats.accepted += 1;
        let mut conn =
            Connection::accept(now, id, from, h, responder, self.config.connection.clone());
        self.share_path_rtt(&mut conn);
        Some(DatagramEvent::NewConnection(id, Box::new(conn)))
    }

    /// The first key the client's key-exchange message proves, or why none did.
    fn read_key_exchange<'k>(
        keys: impl Iterator<Item = &'k PresharedKey>,
        h: &Handshake,
        message: &[u8],
    ) -> Result<Responder, HandshakeError> {
        let mut last = HandshakeError::Authentication;
        for key in keys {
            match Responder::read(key, h, message) {
                Ok(responder) => return Ok(responder),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn reply(&self, to: SocketAddr, dest: u32, h: Handshake, buf: &mut Vec<u8>) -> DatagramEvent {
        let packet = ControlPacket::new(dest, Control::Handshake(h));
        buf.clear();
        buf.resize(packet.encoded_len(), 0);
        let size = packet.encode(buf).unwrap_or(0);
        DatagramEvent::Response(Transmit {
            destination: to,
            size,
            segment_size: None,
        })
    }

    fn minute(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.epoch).as_secs() / 60
    }

    /// The SYN cookie for a client address in a given minute.
    fn cookie(&self, from: SocketAddr, minute: u64) -> u32 {
        let mut hasher = blake3::Hasher::new_keyed(&self.cookie_key);
        match from.ip() {
            std::net::IpAddr::V4(ip) => hasher.update(&ip.octets()),
            std::net::IpAddr::V6(ip) => hasher.update(&ip.octets()),
        };
        hasher.update(&from.port().to_be_bytes());
        hasher.update(&minute.to_be_bytes());
        let hash = hasher.finalize();
        let b = hash.as_bytes();
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(share_path_rtt: bool) -> Endpoint {
        let config = EndpointConfig {
            connection: ConnectionConfig {
                share_path_rtt,
                ..ConnectionConfig::default()
            },
            listen: false,
            seed: 1,
            accept_keys: Vec::new(),
            wall_clock: None,
        };
        Endpoint::new(config, Instant::now())
    }

    #[test]
    fn connections_to_one_host_share_its_path_rtt() {
        let mut ep = endpoint(true);
        let now = Instant::now();
        let addr = |s: &str| s.parse::<SocketAddr>().unwrap();
        let (_, a) = ep.connect(now, addr("10.0.0.2:9000"));
        let (_, b) = ep.connect(now, addr("10.0.0.2:9001"));
        let (_, c) = ep.rendezvous(now, addr("10.0.0.3:9000"));
        let shared = |conn: &Connection| conn.shared_path_rtt().cloned().unwrap();
        assert!(Arc::ptr_eq(&shared(&a), &shared(&b)), "one host, two ports");
        assert!(!Arc::ptr_eq(&shared(&a), &shared(&c)), "another host");
        // An entry whose connections are gone is dropped when a new host comes.
        drop((a, b));
        let (_, d) = ep.connect(now, addr("10.0.0.4:9000"));
        assert!(!ep.paths.contains_key(&addr("10.0.0.2:9000").ip()));
        assert_eq!(ep.paths.len(), 2, "{:?}", (c, d));
    }

    #[test]
    fn connections_that_measure_alone_share_nothing() {
        let mut ep = endpoint(false);
        let (_, conn) = ep.connect(Instant::now(), "10.0.0.2:9000".parse().unwrap());
        assert!(conn.shared_path_rtt().is_none());
        assert!(ep.paths.is_empty());
    }
}
