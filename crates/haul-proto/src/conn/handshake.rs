//! The handshake: a client's request (with a cookie echo when the listener asks for one), a
//! server's acceptance, rendezvous, and in the `haul` dialect the key exchange they carry.

use super::{CloseReason, Connection, ConnectionConfig, Dialect, Phase, Role, Transmit};
use crate::secure::{self, Initiator, Responder};
use crate::seq::SeqNo;
use crate::wire::{Control, ControlPacket, Handshake, PeerIp, RequestType};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Handshake packets are repeated this often.
const HANDSHAKE_INTERVAL: Duration = Duration::from_millis(250);
/// `haul` dialect: requests that carry the key exchange before the client falls back to plain
/// ones (a UDT4 listener drops a request longer than 48 bytes; a plain request draws its
/// cookie, and the cookie echo then carries the key exchange).
const REQUESTS_WITH_KEY: u32 = 4;

impl Connection {
    /// A client connection that starts the handshake with a listener at `peer_addr`.
    pub fn connect(
        now: Instant,
        local_id: u32,
        peer_addr: SocketAddr,
        isn: SeqNo,
        config: ConnectionConfig,
    ) -> Self {
        // Both directions use the client's ISN.
        let phase = Phase::Connecting { cookie: 0 };
        Self::new(
            now,
            Role::Client,
            phase,
            (local_id, 0),
            peer_addr,
            (isn, isn),
            config,
        )
    }

    /// A rendezvous connection: both sides call this towards each other.
    pub fn rendezvous(
        now: Instant,
        local_id: u32,
        peer_addr: SocketAddr,
        isn: SeqNo,
        config: ConnectionConfig,
    ) -> Self {
        let phase = Phase::Rendezvous { answering: false };
        let mut conn = Self::new(
            now,
            Role::Rendezvous,
            phase,
            (local_id, 0),
            peer_addr,
            (isn, isn),
            config,
        );
        if conn.config.dialect != Dialect::Udt4 {
            conn.set_closed(CloseReason::Unsupported);
        }
        conn
    }

    /// A server connection accepted by a listener from a validated request (`request` carries
    /// the client's ISN, id, MSS and flow window; `responder`, in the `haul` dialect, the client's
    /// verified key-exchange message). Its acceptance is queued at once.
    pub(crate) fn accept(
        now: Instant,
        local_id: u32,
        peer_addr: SocketAddr,
        request: &Handshake,
        responder: Option<Responder>,
        config: ConnectionConfig,
    ) -> Self {
        let mut conn = Self::new(
            now,
            Role::Server,
            Phase::Connected,
            (local_id, request.socket_id),
            peer_addr,
            (request.isn, request.isn),
            config,
        );
        conn.establish(now, request);
        let reply = Handshake {
            version: conn.config.dialect.version(),
            socket_type: conn.config.socket_type.to_wire(),
            isn: request.isn,
            mss: conn.mss,
            flow_window: conn.config.recv_slots(conn.payload) as u32,
            req_type: RequestType::Response,
            socket_id: local_id,
            cookie: request.cookie,
            peer_ip: PeerIp::from_ip(peer_addr.ip()),
        };
        if let Some(responder) = responder {
            conn.proved_key = Some(responder.key().clone());
            let (protection, message) = responder.reply(&reply);
            conn.protection = Some(Box::new(protection));
            conn.key_message = message;
        }
        conn.stored_reply = Some(reply);
        conn.queue_handshake(request.socket_id, reply);
        conn
    }

    /// A handshake from the peer; `key_message` is what followed it (`haul` dialect).
    pub(super) fn on_handshake(&mut self, now: Instant, h: &Handshake, key_message: &[u8]) {
        match (self.role, self.phase, h.req_type) {
            (_, Phase::Closed(_), _) => {}
            (Role::Client, Phase::Connecting { cookie }, RequestType::Request) => {
                // The listener's cookie reply: answer with the cookie at once.
                if cookie != h.cookie {
                    self.start_key_exchange(h.cookie);
                }
                self.phase = Phase::Connecting { cookie: h.cookie };
                self.next_handshake = now;
            }
            (Role::Client, Phase::Connecting { .. }, RequestType::Response) => {
                if h.isn != self.local_isn {
                    self.stats.packets_invalid += 1;
                    return;
                }
                // An acceptance without a cookie answers the key exchange sent with the request.
                let initiator = if h.cookie == 0 {
                    self.request_initiator.take()
                } else {
                    self.initiator.take()
                };
                if let Some(initiator) = initiator {
                    match initiator.finish(h, key_message) {
                        Ok(protection) => self.protection = Some(Box::new(protection)),
                        Err(e) => {
                            tracing::debug!(id = self.local_id, error = %e, "key exchange failed");
                            self.set_closed(CloseReason::AuthFailed);
                            return;
                        }
                    }
                } else if self.config.dialect != Dialect::Udt4 {
                    // An acceptance of a key exchange we did not send: not an answer to us.
                    self.stats.packets_invalid += 1;
                    return;
                }
                self.peer_id = h.socket_id;
                self.establish(now, h);
            }
            (Role::Client, Phase::Connecting { .. }, RequestType::Rejected) => {
                self.set_closed(CloseReason::Rejected);
            }
            (Role::Client, Phase::Connecting { .. }, RequestType::Other(secure::REJECT_AUTH)) => {
                self.set_closed(CloseReason::AuthFailed);
            }
            (Role::Server, Phase::Connected, RequestType::Response | RequestType::Request) => {
                // The client did not get our acceptance: send the stored one again.
                if let Some(reply) = self.stored_reply {
                    self.queue_handshake(self.peer_id, reply);
                }
            }
            (Role::Rendezvous, _, RequestType::Request) => {
                let reply = Handshake {
                    req_type: RequestType::Rejected,
                    ..self.handshake_template(0)
                };
                self.queue_control(h.socket_id, Control::Handshake(reply));
            }
            (Role::Rendezvous, Phase::Rendezvous { .. }, RequestType::Rendezvous) => {
                self.learn_rendezvous_peer(h);
                self.phase = Phase::Rendezvous { answering: true };
                self.next_handshake = now;
            }
            (
                Role::Rendezvous,
                Phase::Rendezvous { answering },
                RequestType::Response | RequestType::RendezvousFinal,
            ) => {
                self.learn_rendezvous_peer(h);
                if h.req_type == RequestType::Response && !answering {
                    // The peer answered before we did: answer once so it completes too.
                    let reply = Handshake {
                        req_type: RequestType::Response,
                        ..self.handshake_template(self.peer_id)
                    };
                    self.queue_control(self.peer_id, Control::Handshake(reply));
                }
                self.establish(now, h);
            }
            (
                Role::Rendezvous,
                Phase::Connected,
                RequestType::Rendezvous | RequestType::Response,
            ) => {
                let reply = Handshake {
                    req_type: RequestType::RendezvousFinal,
                    ..self.handshake_template(self.peer_id)
                };
                self.queue_control(self.peer_id, Control::Handshake(reply));
            }
            _ => {}
        }
    }

    fn learn_rendezvous_peer(&mut self, h: &Handshake) {
        if self.peer_id == 0 {
            self.peer_id = h.socket_id;
            self.peer_isn = h.isn;
            // Each rendezvous direction keeps its own ISN: the receive side starts at the peer's.
            self.recv.restart(h.isn.start());
            self.rcv_max = h.isn.start();
            self.rcv_last_ack = h.isn.start();
            self.rcv_last_ack2 = h.isn.start();
        }
    }

    /// `haul` dialect, client: sends the first key-exchange message with the request itself,
    /// stamped with the wall clock (`unix_ms`, milliseconds since the Unix epoch), so that a
    /// listener can accept it without a cookie: connected in one round trip instead of two.
    pub(crate) fn send_key_exchange_with_request(&mut self, unix_ms: u64) {
        if let (Dialect::Haul(key), Phase::Connecting { cookie: 0 }) =
            (&self.config.dialect, self.phase)
        {
            let request = self.handshake_template(0);
            self.request_initiator = Some(Box::new(Initiator::start_timed(key, &request, unix_ms)));
        }
    }

    /// `haul` dialect, client: the first key-exchange message, bound to the cookie echo that
    /// will carry it.
    fn start_key_exchange(&mut self, cookie: u32) {
        if let Dialect::Haul(key) = &self.config.dialect {
            let echo = Handshake {
                req_type: RequestType::Response,
                ..self.handshake_template(cookie)
            };
            let initiator = Initiator::start(key, &echo);
            self.key_message = initiator.message().to_vec();
            self.initiator = Some(Box::new(initiator));
        }
    }

    /// The handshake this side sends, with request type to be filled in.
    fn handshake_template(&self, cookie: u32) -> Handshake {
        Handshake {
            version: self.config.dialect.version(),
            socket_type: self.config.socket_type.to_wire(),
            isn: self.local_isn,
            mss: self.config.mss,
            flow_window: self.config.recv_slots(self.payload) as u32,
            req_type: RequestType::Request,
            socket_id: self.local_id,
            cookie,
            peer_ip: PeerIp::from_ip(self.peer_addr.ip()),
        }
    }

    /// The next handshake of a connecting client or rendezvous socket (due: `next_handshake`).
    pub(super) fn handshake_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Transmit {
        match self.phase {
            Phase::Connecting { cookie } => {
                let (req_type, key_message) = if cookie != 0 {
                    // The cookie echo carries the first key-exchange message (`haul` dialect).
                    (RequestType::Response, &self.key_message[..])
                } else {
                    self.requests_sent += 1;
                    let message = match &self.request_initiator {
                        Some(i) if self.requests_sent <= REQUESTS_WITH_KEY => i.message(),
                        _ => &[],
                    };
                    (RequestType::Request, message)
                };
                let h = Handshake {
                    req_type,
                    ..self.handshake_template(cookie)
                };
                let transmit = Self::write_handshake(self.peer_addr, 0, h, key_message, buf);
                self.next_handshake = now + HANDSHAKE_INTERVAL;
                transmit
            }
            _ => {
                let (dest, req_type) = match self.phase {
                    Phase::Rendezvous { answering: true } => (self.peer_id, RequestType::Response),
                    _ => (0, RequestType::Rendezvous),
                };
                let h = Handshake {
                    req_type,
                    ..self.handshake_template(0)
                };
                self.next_handshake = now + HANDSHAKE_INTERVAL;
                Self::write_handshake(self.peer_addr, dest, h, &[], buf)
            }
        }
    }

    /// Queues a handshake followed by our key-exchange message (empty in the `udt4` dialect).
    fn queue_handshake(&mut self, dest: u32, h: Handshake) {
        self.queue_control(dest, Control::Handshake(h));
        self.control.extend_last(&self.key_message);
    }

    /// Writes a handshake to `to`, followed by `key_message` (`haul` dialect; may be empty).
    fn write_handshake(
        to: SocketAddr,
        dest: u32,
        h: Handshake,
        key_message: &[u8],
        buf: &mut Vec<u8>,
    ) -> Transmit {
        let packet = ControlPacket::new(dest, Control::Handshake(h));
        let start = buf.len();
        buf.resize(start + packet.encoded_len(), 0);
        let size = packet.encode(&mut buf[start..]).unwrap_or(0);
        buf.truncate(start + size);
        buf.extend_from_slice(key_message);
        Transmit {
            destination: to,
            size: buf.len() - start,
            segment_size: None,
        }
    }
}
