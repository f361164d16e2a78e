//! # haul-net
//!
//! The UDP driver around [`haul_proto`]: one socket per [`Endpoint`], many connections on it, an
//! I/O thread that moves batches of packets (UDP GSO/GRO where the kernel has them) and runs the
//! protocol's timers, and blocking [`Stream`]s that implement [`std::io::Read`] and
//! [`std::io::Write`].
//!
//! A stream, with the blocking socket-like API:
//!
//! ```
//! use haul_net::{Listener, Stream};
//! use std::io::{Read, Write};
//!
//! let listener = Listener::bind("127.0.0.1:0".parse()?)?;
//! let mut out = Stream::connect(listener.local_addr())?;
//! out.write_all(b"hello over haul")?;
//! out.finish()?; // waits until the peer has every byte, then closes
//! let mut incoming = listener.accept()?;
//! let mut text = String::new();
//! incoming.read_to_string(&mut text)?;
//! assert_eq!(text, "hello over haul");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Without a copy in user space: [`Stream::write_bytes`] lends the send buffer memory the
//! application owns, and [`Stream::read_chunk`] hands out the memory the datagrams were
//! received into (the kernel's copy is then the only one, as with kernel TCP):
//!
//! ```
//! use haul_net::{Bytes, Listener, Stream};
//!
//! let listener = Listener::bind("127.0.0.1:0".parse()?)?;
//! let mut out = Stream::connect(listener.local_addr())?;
//! let block = Bytes::from(vec![7u8; 1 << 20]);
//! out.write_bytes(block.clone())?; // kept, not copied, until the peer acknowledges it
//! out.finish()?;
//! let mut incoming = listener.accept()?;
//! let mut total = 0;
//! loop {
//!     let chunk = incoming.read_chunk(usize::MAX)?; // empty at the end of the stream
//!     if chunk.is_empty() {
//!         break;
//!     }
//!     assert!(chunk.iter().all(|&b| b == 7));
//!     total += chunk.len();
//! }
//! assert_eq!(total, block.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Messages keep their boundaries when the endpoints use the datagram socket type:
//!
//! ```
//! use haul_net::{ConnectionConfig, Endpoint, NetConfig, SocketType};
//!
//! let config = |listen| NetConfig {
//!     listen,
//!     connection: ConnectionConfig { socket_type: SocketType::Datagram, ..Default::default() },
//!     ..NetConfig::default()
//! };
//! let server = Endpoint::bind("127.0.0.1:0".parse()?, config(true))?;
//! let client = Endpoint::bind("127.0.0.1:0".parse()?, config(false))?;
//! let mut out = client.connect(server.local_addr())?;
//! out.send_msg(b"first", None, true)?;
//! out.send_msg(b"second", None, true)?;
//! let mut incoming = server.accept()?;
//! let mut buf = [0u8; 64];
//! let n = incoming.recv_msg(&mut buf)?;
//! assert_eq!(&buf[..n], b"first");
//! let n = incoming.recv_msg(&mut buf)?;
//! assert_eq!(&buf[..n], b"second");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod driver;
mod recv_pool;
mod socket;
mod stream;
mod turn;
mod wake;

pub use bytes::Bytes;
pub use driver::{Endpoint, Listener, NetConfig, NetError};
pub use haul_proto::cc::{
    CongestionControlFactory, FixedRateFactory, ModelRateFactory, Policy, Udt4DaimdFactory,
};
pub use haul_proto::secure::PresharedKey;
pub use haul_proto::wire::SocketType;
pub use haul_proto::{CloseReason, ConnectionConfig, Dialect, Stats};
pub use socket::Offloads;
pub use stream::{Monitor, Stream};
