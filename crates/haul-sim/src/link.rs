//! One direction of a simulated link: the shared model from `haul-link`, producing bytes.

use haul_link::{Fate, Link};
use rand::rngs::SmallRng;
use std::time::{Duration, Instant};

/// Offers one datagram at `now`; returns the arrivals it produces (none, one, or two).
pub(crate) fn transmit(
    link: &mut Link,
    now: Instant,
    data: &[u8],
    rng: &mut SmallRng,
) -> Vec<(Instant, Vec<u8>)> {
    let Fate::Deliver(delivery) = link.offer(now, data.len(), rng) else {
        return Vec::new();
    };
    let mut bytes = data.to_vec();
    if let Some((byte, bit)) = delivery.corrupt {
        bytes[byte] ^= 1 << bit;
    }
    let mut out = Vec::with_capacity(2);
    if delivery.duplicate {
        out.push((delivery.at + Duration::from_micros(1), bytes.clone()));
    }
    out.push((delivery.at, bytes));
    out
}
