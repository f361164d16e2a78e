//! The Noise NNpsk0 exchange carried by the cookie echo and the acceptance.

use super::{Cipher, HandshakeError, PresharedKey, Protection};
use crate::wire::Handshake;

const PATTERN: &str = "Noise_NNpsk0_25519_ChaChaPoly_BLAKE2s";
/// Binds the exchange to this protocol and framing.
const PROLOGUE: &[u8] = b"haul/1 udt4-framed";
/// Noise payload: the sender's 48-byte handshake and its cipher byte.
const HELLO_LEN: usize = Handshake::LEN + 1;
/// Room for a Noise message: ephemeral key, payload, tag.
const MESSAGE_ROOM: usize = 32 + HELLO_LEN + 16;

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

fn encode_hello(h: &Handshake, cipher: Cipher) -> [u8; HELLO_LEN] {
    let mut out = [0u8; HELLO_LEN];
    h.write(&mut out[..Handshake::LEN]);
    out[Handshake::LEN] = cipher.to_wire();
    out
}

fn decode_hello(bytes: &[u8]) -> Option<(Handshake, Cipher)> {
    if bytes.len() != HELLO_LEN {
        return None;
    }
    let h = Handshake::parse(&bytes[..Handshake::LEN]).ok()?;
    Some((h, Cipher::from_wire(bytes[Handshake::LEN])?))
}

/// Whether the authenticated copy of a handshake says what the clear one says (the peer-IP field
/// is left out: a NAT between the ends changes it legitimately).
fn same_fields(sealed: &Handshake, clear: &Handshake) -> bool {
    Handshake {
        peer_ip: clear.peer_ip,
        ..*sealed
    } == *clear
}

/// The client's half of the exchange, from the cookie echo until the acceptance.
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
        let mut state = Box::new(state(key, true));
        let mut message = vec![0u8; MESSAGE_ROOM];
        let len = state
            .write_message(&encode_hello(echo, Cipher::preferred()), &mut message)
            .expect("the first message fits its buffer");
        message.truncate(len);
        Self { state, message }
    }

    /// The first message (sent again with every repeated cookie echo).
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
        let (sealed, cipher) = decode_hello(&payload[..len]).ok_or(HandshakeError::Mismatch)?;
        if !same_fields(&sealed, reply) {
            return Err(HandshakeError::Mismatch);
        }
        let (to_server, to_client) = self.state.dangerously_get_raw_split();
        Ok(Protection::new(cipher, &to_server, &to_client))
    }
}

/// The server's half: a client's first message, verified, waiting for the acceptance.
pub struct Responder {
    state: Box<snow::HandshakeState>,
    client_cipher: Cipher,
    key: PresharedKey,
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder")
    }
}

impl Responder {
    /// Verifies the first message that came with the cookie echo `echo`.
    pub fn read(
        key: &PresharedKey,
        echo: &Handshake,
        message: &[u8],
    ) -> Result<Self, HandshakeError> {
        let mut state = Box::new(state(key, false));
        let mut payload = [0u8; MESSAGE_ROOM];
        let len = state
            .read_message(message, &mut payload)
            .map_err(|_| HandshakeError::Authentication)?;
        let (sealed, client_cipher) =
            decode_hello(&payload[..len]).ok_or(HandshakeError::Mismatch)?;
        if !same_fields(&sealed, echo) {
            return Err(HandshakeError::Mismatch);
        }
        Ok(Self {
            state,
            client_cipher,
            key: key.clone(),
        })
    }

    /// The pre-shared key the client proved it holds.
    pub fn key(&self) -> &PresharedKey {
        &self.key
    }

    /// Writes the second message, carrying `acceptance`; gives the keys and the message.
    pub fn reply(mut self, acceptance: &Handshake) -> (Protection, Vec<u8>) {
        let cipher = Cipher::negotiate(self.client_cipher, Cipher::preferred());
        let mut message = vec![0u8; MESSAGE_ROOM];
        let len = self
            .state
            .write_message(&encode_hello(acceptance, cipher), &mut message)
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
