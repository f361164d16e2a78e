//! The Noise NNpsk0 exchange carried by the client's request or cookie echo, and by the
//! acceptance.

use super::{Cipher, HandshakeError, PresharedKey, Protection};
use crate::wire::Handshake;

const PATTERN: &str = "Noise_NNpsk0_25519_ChaChaPoly_BLAKE2s";
/// Binds the exchange to this protocol and framing.
const PROLOGUE: &[u8] = b"haul/1 udt4-framed";
/// Noise payload: the sender's 48-byte handshake and its cipher byte.
const HELLO_LEN: usize = Handshake::LEN + 1;
/// A request's Noise payload adds the client's clock: milliseconds since the Unix epoch.
const TIMED_HELLO_LEN: usize = HELLO_LEN + 8;
/// Length of the ephemeral public key that opens the first message, in the clear.
const EPHEMERAL_LEN: usize = 32;
/// Room for a Noise message: ephemeral key, payload, tag.
const MESSAGE_ROOM: usize = EPHEMERAL_LEN + TIMED_HELLO_LEN + 16;

fn state(key: &PresharedKey, initiator: bool) -> snow::HandshakeState {
    let params = PATTERN.parse().expect("a valid Noise pattern name");
    let builder = snow::Builder::new(params)
        .psk(0, key.bytes())
        .and_then(|b| b.prologue(PROLOGUE))
        .expect("psk slot 0 exists in NNpsk0; the prologue is set once");
    if initiator {
        builder.build_initiator()
    } else {
        builder.build_responder()
    }
    .expect("the builder has every key NNpsk0 needs")
}

/// Writes a Noise payload into `out`: the handshake, the cipher byte, and the clock if given.
fn encode_hello<'o>(
    h: &Handshake,
    cipher: Cipher,
    sent_at_ms: Option<u64>,
    out: &'o mut [u8; TIMED_HELLO_LEN],
) -> &'o [u8] {
    h.write(&mut out[..Handshake::LEN]);
    out[Handshake::LEN] = cipher.to_wire();
    match sent_at_ms {
        Some(ms) => {
            out[HELLO_LEN..].copy_from_slice(&ms.to_be_bytes());
            &out[..]
        }
        None => &out[..HELLO_LEN],
    }
}

/// A decrypted Noise payload.
struct Hello {
    handshake: Handshake,
    cipher: Cipher,
    sent_at_ms: Option<u64>,
}

fn decode_hello(bytes: &[u8]) -> Option<Hello> {
    let sent_at_ms = match bytes.len() {
        HELLO_LEN => None,
        TIMED_HELLO_LEN => Some(u64::from_be_bytes(bytes[HELLO_LEN..].try_into().ok()?)),
        _ => return None,
    };
    Some(Hello {
        handshake: Handshake::parse(&bytes[..Handshake::LEN]).ok()?,
        cipher: Cipher::from_wire(bytes[Handshake::LEN])?,
        sent_at_ms,
    })
}

/// Whether the authenticated copy of a handshake says what the clear one says (the peer-IP field
/// is left out: a NAT between the ends changes it legitimately).
fn same_fields(sealed: &Handshake, clear: &Handshake) -> bool {
    Handshake {
        peer_ip: clear.peer_ip,
        ..*sealed
    } == *clear
}

/// The client's half of the exchange, from the request or cookie echo until the acceptance.
pub struct Initiator {
    state: Box<snow::HandshakeState>,
    message: Vec<u8>,
}

impl std::fmt::Debug for Initiator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Initiator")
    }
}

impl Initiator {
    /// Writes the first message, carrying `echo` (the cookie echo it will travel in).
    pub fn start(key: &PresharedKey, echo: &Handshake) -> Self {
        Self::write_first(key, echo, None)
    }

    /// Writes the first message for a request that skips the cookie: it carries `request` and
    /// the client's clock (`sent_at_ms`, milliseconds since the Unix epoch), by which the
    /// listener tells a fresh request from a replayed one.
    pub fn start_timed(key: &PresharedKey, request: &Handshake, sent_at_ms: u64) -> Self {
        Self::write_first(key, request, Some(sent_at_ms))
    }

    fn write_first(key: &PresharedKey, carrier: &Handshake, sent_at_ms: Option<u64>) -> Self {
        let mut state = Box::new(state(key, true));
        let mut message = vec![0u8; MESSAGE_ROOM];
        let mut hello = [0u8; TIMED_HELLO_LEN];
        let payload = encode_hello(carrier, Cipher::preferred(), sent_at_ms, &mut hello);
        let len = state
            .write_message(payload, &mut message)
            .expect("the first message fits its buffer");
        message.truncate(len);
        Self { state, message }
    }

    /// The first message (sent again with every repeated request or cookie echo).
    pub fn message(&self) -> &[u8] {
        &self.message
    }

    /// Reads the server's message from its acceptance `reply`; gives the connection's keys.
    pub fn finish(
        mut self,
        reply: &Handshake,
        message: &[u8],
    ) -> Result<Protection, HandshakeError> {
        let mut payload = [0u8; MESSAGE_ROOM];
        let len = self
            .state
            .read_message(message, &mut payload)
            .map_err(|_| HandshakeError::Authentication)?;
        let hello = decode_hello(&payload[..len]).ok_or(HandshakeError::Mismatch)?;
        if !same_fields(&hello.handshake, reply) || hello.sent_at_ms.is_some() {
            return Err(HandshakeError::Mismatch);
        }
        let (to_server, to_client) = self.state.dangerously_get_raw_split();
        Ok(Protection::new(hello.cipher, &to_server, &to_client))
    }
}

/// The server's half: a client's first message, verified, waiting for the acceptance.
pub struct Responder {
    state: Box<snow::HandshakeState>,
    client_cipher: Cipher,
    key: PresharedKey,
    sent_at_ms: Option<u64>,
    ephemeral: [u8; EPHEMERAL_LEN],
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder")
    }
}

impl Responder {
    /// Verifies the first message that came with `carrier`, the client's cookie echo or
    /// request.
    pub fn read(
        key: &PresharedKey,
        carrier: &Handshake,
        message: &[u8],
    ) -> Result<Self, HandshakeError> {
        let mut state = Box::new(state(key, false));
        let mut payload = [0u8; MESSAGE_ROOM];
        let len = state
            .read_message(message, &mut payload)
            .map_err(|_| HandshakeError::Authentication)?;
        let hello = decode_hello(&payload[..len]).ok_or(HandshakeError::Mismatch)?;
        if !same_fields(&hello.handshake, carrier) {
            return Err(HandshakeError::Mismatch);
        }
        // A message that decrypted holds it; checked anyway, as everything from the network.
        let ephemeral = message
            .get(..EPHEMERAL_LEN)
            .and_then(|e| e.try_into().ok())
            .ok_or(HandshakeError::Authentication)?;
        Ok(Self {
            state,
            client_cipher: hello.cipher,
            key: key.clone(),
            sent_at_ms: hello.sent_at_ms,
            ephemeral,
        })
    }

    /// The client's clock when it wrote a request's message (milliseconds since the Unix
    /// epoch); `None` for a cookie echo's.
    pub fn sent_at_ms(&self) -> Option<u64> {
        self.sent_at_ms
    }

    /// The client's ephemeral public key: unique to one attempt, so a listener that has seen it
    /// before is looking at a replay.
    pub fn ephemeral(&self) -> &[u8; EPHEMERAL_LEN] {
        &self.ephemeral
    }

    /// The pre-shared key the client proved it holds.
    pub fn key(&self) -> &PresharedKey {
        &self.key
    }

    /// Writes the second message, carrying `acceptance`; gives the keys and the message.
    pub fn reply(mut self, acceptance: &Handshake) -> (Protection, Vec<u8>) {
        let cipher = Cipher::negotiate(self.client_cipher, Cipher::preferred());
        let mut message = vec![0u8; MESSAGE_ROOM];
        let mut hello = [0u8; TIMED_HELLO_LEN];
        let len = self
            .state
            .write_message(
                encode_hello(acceptance, cipher, None, &mut hello),
                &mut message,
            )
            .expect("the second message fits its buffer");
        message.truncate(len);
        let (to_server, to_client) = self.state.dangerously_get_raw_split();
        (Protection::new(cipher, &to_client, &to_server), message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seq::SeqNo;
    use crate::wire::{PeerIp, RequestType};

    fn hello(req_type: RequestType, socket_id: u32) -> Handshake {
        Handshake {
            version: super::super::VERSION,
            socket_type: 1,
            isn: SeqNo::masked(12345),
            mss: 1500,
            flow_window: 8192,
            req_type,
            socket_id,
            cookie: 99,
            peer_ip: PeerIp::default(),
        }
    }

    #[test]
    fn both_ends_agree_on_keys_with_the_same_psk() {
        let key = PresharedKey::from_bytes([7; 32]);
        let echo = hello(RequestType::Response, 11);
        let client = Initiator::start(&key, &echo);
        let server = Responder::read(&key, &echo, client.message()).unwrap();
        let accept = hello(RequestType::Response, 22);
        let (mut server_keys, reply) = server.reply(&accept);
        let mut client_keys = client.finish(&accept, &reply).unwrap();
        assert_eq!(client_keys.cipher(), server_keys.cipher());
        let mut wire = vec![0u8; 16];
        wire.extend_from_slice(b"data");
        client_keys.seal(&mut wire, 0);
        let mut out = bytes::BytesMut::new();
        assert_eq!(&server_keys.open(&wire, &mut out).unwrap()[16..], b"data");
    }

    #[test]
    fn a_request_message_carries_the_clock_and_a_fresh_ephemeral_key() {
        let key = PresharedKey::from_bytes([7; 32]);
        let request = hello(RequestType::Request, 11);
        let sent = 1_800_000_000_123;
        let (a, b) = (
            Initiator::start_timed(&key, &request, sent),
            Initiator::start_timed(&key, &request, sent),
        );
        let read_a = Responder::read(&key, &request, a.message()).unwrap();
        let read_b = Responder::read(&key, &request, b.message()).unwrap();
        assert_eq!(read_a.sent_at_ms(), Some(sent));
        assert_eq!(read_a.ephemeral()[..], a.message()[..32]);
        assert_ne!(read_a.ephemeral(), read_b.ephemeral());
        let echo = hello(RequestType::Response, 11);
        let echoed = Initiator::start(&key, &echo);
        let read_echo = Responder::read(&key, &echo, echoed.message()).unwrap();
        assert_eq!(read_echo.sent_at_ms(), None);
        // A request's message does not pass for a cookie echo's, nor the other way round.
        let mismatch = Err(HandshakeError::Mismatch);
        assert_eq!(
            Responder::read(&key, &echo, a.message()).map(|_| ()),
            mismatch
        );
        assert_eq!(
            Responder::read(&key, &request, echoed.message()).map(|_| ()),
            mismatch
        );
    }

    #[test]
    fn a_wrong_psk_or_altered_fields_fail() {
        let echo = hello(RequestType::Response, 11);
        let client = Initiator::start(&PresharedKey::from_bytes([1; 32]), &echo);
        let wrong = PresharedKey::from_bytes([2; 32]);
        assert_eq!(
            Responder::read(&wrong, &echo, client.message()).unwrap_err(),
            HandshakeError::Authentication
        );
        let right = PresharedKey::from_bytes([1; 32]);
        let altered = Handshake { mss: 9000, ..echo };
        assert_eq!(
            Responder::read(&right, &altered, client.message()).unwrap_err(),
            HandshakeError::Mismatch
        );
        let mut flipped = client.message().to_vec();
        flipped[40] ^= 1;
        assert!(Responder::read(&right, &echo, &flipped).is_err());
        assert!(Responder::read(&right, &echo, &[]).is_err());
    }
}
