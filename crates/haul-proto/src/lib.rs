//! # haul-proto
//!
//! The sans-IO protocol core of haul: the `udt4` wire dialect, the connection state machine and
//! congestion control. Nothing in this crate owns a socket, a thread or a clock: every call takes
//! `now`, bytes go in through `handle_datagram` and come out of `poll_transmit`, and
//! `poll_timeout` says when to call back. That is what lets the simulator (`haul-sim`) drive it
//! deterministically and lets `haul-net` drive it over real UDP.
//!
//! ```
//! use haul_proto::{Endpoint, EndpointConfig, ConnectionConfig};
//! use std::time::Instant;
//!
//! let now = Instant::now();
//! let config = EndpointConfig { connection: ConnectionConfig::default(), listen: false, seed: 7, accept_keys: vec![], wall_clock: None };
//! let mut endpoint = Endpoint::new(config, now);
//! let (_handle, mut conn) = endpoint.connect(now, "127.0.0.1:9000".parse().unwrap());
//! let mut buf = Vec::new();
//! let transmit = conn.poll_transmit(now, &mut buf).expect("a connection request");
//! assert_eq!(transmit.size, 64); // 16-byte header + 48-byte handshake
//! ```

#![warn(missing_docs)]

pub mod arena;
pub mod cc;
mod conn;
mod endpoint;
mod freshness;
mod ranges;
pub mod secure;
pub mod seq;
pub mod wire;

pub use conn::{
    CloseReason, Connection, ConnectionConfig, Dialect, Event, Piece, Stats, StreamError, Transmit,
};
pub use endpoint::{ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig, EndpointStats};
