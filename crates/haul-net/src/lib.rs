//! # haul-net
//!
//! The UDP driver around [`haul_proto`]: one socket per [`Endpoint`], many connections on it, an
//! I/O thread that moves batches of packets (UDP GSO/GRO where the kernel has them) and runs the
//! protocol's timers, and blocking [`Stream`]s that implement [`std::io::Read`] and
//! [`std::io::Write`].
//!
//! ```no_run
//! use haul_net::{Endpoint, NetConfig};
//! use std::io::{Read, Write};
//!
//! let server = Endpoint::bind("127.0.0.1:9000".parse()?, NetConfig::listener())?;
//! let client = Endpoint::bind("127.0.0.1:0".parse()?, NetConfig::default())?;
//! let mut out = client.connect(server.local_addr())?;
//! out.write_all(b"hello")?;
//! out.finish()?; // delivers everything, then closes
//! let mut incoming = server.accept()?;
//! let mut text = String::new();
//! incoming.read_to_string(&mut text)?;
//! assert_eq!(text, "hello");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod driver;
mod socket;
mod stream;

pub use driver::{Endpoint, NetConfig, NetError};
pub use haul_proto::cc::{FixedRateFactory, Udt4DaimdFactory};
pub use haul_proto::{CloseReason, ConnectionConfig, Stats};
pub use socket::Offloads;
pub use stream::{Monitor, Stream};
