//! # haul-sim
//!
//! A deterministic network for testing sans-IO protocol code: a virtual clock (nothing sleeps),
//! per-direction links with rate, propagation delay, jitter, a drop-tail queue, random and bursty
//! (Gilbert–Elliott) loss, reordering, duplication and corruption, any number of nodes, receivers
//! that see arrivals in groups (interrupt coalescing, GRO), and injected garbage. Everything
//! random comes from one seed, so a failing run replays exactly.
//!
//! The simulator knows nothing about haul: anything implementing [`Node`] can be plugged in.

mod link;

pub use haul_link::{GilbertElliott, LinkConfig, LinkStats};

use haul_link::Link;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// A datagram (or GSO batch) a node wants to send; its bytes are in the buffer it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outgoing {
    /// Where it goes.
    pub destination: SocketAddr,
    /// With a batch: the size of each datagram (the last may be shorter).
    pub segment_size: Option<usize>,
}

/// A participant in the simulation, driven the way a real UDP driver would drive it.
pub trait Node {
    /// A datagram arrived.
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]);
    /// The next datagram to send, written into `buf`; `None` when there is nothing now.
    fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Outgoing>;
    /// When the node next wants `handle_timeout`.
    fn poll_timeout(&self) -> Option<Instant>;
    /// Timers due at `now`.
    fn handle_timeout(&mut self, now: Instant);
}

/// Makes the bytes of one injected datagram.
pub type Generator = Box<dyn FnMut(&mut SmallRng) -> Vec<u8>>;

/// A source of unsolicited datagrams (garbage, floods, forged packets).
pub struct Injector {
    /// Address the datagrams claim to come from.
    pub from: SocketAddr,
    /// Node that receives them.
    pub to: SocketAddr,
    /// Time between two datagrams.
    pub interval: Duration,
    /// How many to send in all.
    pub count: u64,
    /// Makes each datagram.
    pub generator: Generator,
}

struct InjectorState {
    injector: Injector,
    next: Instant,
    sent: u64,
}

struct Delivery {
    at: Instant,
    order: u64,
    from: SocketAddr,
    to: SocketAddr,
    data: Vec<u8>,
}

impl PartialEq for Delivery {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.order) == (other.at, other.order)
    }
}
impl Eq for Delivery {}
impl PartialOrd for Delivery {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Delivery {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.order).cmp(&(other.at, other.order))
    }
}

/// Nodes, links between them, and the virtual clock.
pub struct Simulation<N: Node> {
    now: Instant,
    start: Instant,
    nodes: Vec<(SocketAddr, N)>,
    links: HashMap<(SocketAddr, SocketAddr), Link>,
    default_link: LinkConfig,
    queue: BinaryHeap<Reverse<Delivery>>,
    order: u64,
    rng: SmallRng,
    injectors: Vec<InjectorState>,
    /// Receivers that see arrivals once per tick (see [`Simulation::set_coalescing`]).
    coalescing: HashMap<SocketAddr, Duration>,
    buf: Vec<u8>,
    steps: u64,
}

impl<N: Node> Simulation<N> {
    /// An empty simulation; every random choice derives from `seed`.
    pub fn new(seed: u64) -> Self {
        let start = Instant::now();
        Self {
            now: start,
            start,
            nodes: Vec::new(),
            links: HashMap::new(),
            default_link: LinkConfig::default(),
            queue: BinaryHeap::new(),
            order: 0,
            rng: SmallRng::seed_from_u64(seed),
            injectors: Vec::new(),
            coalescing: HashMap::new(),
            buf: Vec::with_capacity(1 << 17),
            steps: 0,
        }
    }

    /// The virtual time now.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Virtual time elapsed since the start.
    pub fn elapsed(&self) -> Duration {
        self.now - self.start
    }

    /// Events processed so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Adds a node reachable at `addr`; returns its index.
    pub fn add_node(&mut self, addr: SocketAddr, node: N) -> usize {
        self.nodes.push((addr, node));
        self.nodes.len() - 1
    }

    /// The node at `index`.
    pub fn node(&self, index: usize) -> &N {
        &self.nodes[index].1
    }

    /// The node at `index`, mutably.
    pub fn node_mut(&mut self, index: usize) -> &mut N {
        &mut self.nodes[index].1
    }

    /// The link used between nodes that have no link of their own.
    pub fn set_default_link(&mut self, config: LinkConfig) {
        self.default_link = config;
    }

    /// Sets the one-way link `from → to`.
    pub fn set_link(&mut self, from: SocketAddr, to: SocketAddr, config: LinkConfig) {
        self.links.insert((from, to), Link::new(config, self.now));
    }

    /// Sets both directions between `a` and `b` to the same settings.
    pub fn set_path(&mut self, a: SocketAddr, b: SocketAddr, config: LinkConfig) {
        self.set_link(a, b, config.clone());
        self.set_link(b, a, config);
    }

    /// Node `to` sees what arrives for it once per `tick` of the virtual clock, all of it at
    /// the tick — as a receiver behind interrupt coalescing or GRO does. Zero turns it off.
    pub fn set_coalescing(&mut self, to: SocketAddr, tick: Duration) {
        if tick.is_zero() {
            self.coalescing.remove(&to);
        } else {
            self.coalescing.insert(to, tick);
        }
    }

    /// Counters of the link `from → to`, if it was set.
    pub fn link_stats(&self, from: SocketAddr, to: SocketAddr) -> Option<LinkStats> {
        self.links.get(&(from, to)).map(|l| l.stats())
    }

    /// How long a packet sent now on the link `from → to` would wait in its queue, if the link
    /// was set.
    pub fn queue_delay(&self, from: SocketAddr, to: SocketAddr) -> Option<Duration> {
        let now = self.now();
        self.links.get(&(from, to)).map(|l| l.queue_delay(now))
    }

    /// Adds a source of unsolicited datagrams, starting now.
    pub fn inject(&mut self, injector: Injector) {
        self.injectors.push(InjectorState {
            next: self.now,
            sent: 0,
            injector,
        });
    }

    /// Collects every datagram the nodes want to send now and puts it on its link.
    fn collect_transmits(&mut self) {
        for i in 0..self.nodes.len() {
            loop {
                let from = self.nodes[i].0;
                let Some(out) = self.nodes[i].1.poll_transmit(self.now, &mut self.buf) else {
                    break;
                };
                let segment = out.segment_size.unwrap_or(self.buf.len()).max(1);
                let data = std::mem::take(&mut self.buf);
                for chunk in data.chunks(segment) {
                    self.send(from, out.destination, chunk);
                }
                self.buf = data;
            }
        }
    }

    fn send(&mut self, from: SocketAddr, to: SocketAddr, data: &[u8]) {
        let now = self.now;
        let link = self
            .links
            .entry((from, to))
            .or_insert_with(|| Link::new(self.default_link.clone(), now));
        let tick = self.coalescing.get(&to).map(Duration::as_nanos);
        for (at, bytes) in link::transmit(link, now, data, &mut self.rng) {
            let at = match tick {
                Some(tick) => {
                    let since = (at - self.start).as_nanos();
                    let ticked = since.div_ceil(tick) * tick;
                    self.start + Duration::from_nanos(ticked.min(u64::MAX as u128) as u64)
                }
                None => at,
            };
            self.order += 1;
            self.queue.push(Reverse(Delivery {
                at,
                order: self.order,
                from,
                to,
                data: bytes,
            }));
        }
    }

    fn next_event(&self) -> Option<Instant> {
        let deliveries = self.queue.peek().map(|d| d.0.at);
        let timers = self
            .nodes
            .iter()
            .filter_map(|(_, n)| n.poll_timeout())
            .min();
        let injections = self
            .injectors
            .iter()
            .filter(|i| i.sent < i.injector.count)
            .map(|i| i.next)
            .min();
        [deliveries, timers, injections].into_iter().flatten().min()
    }

    /// Advances to the next event and processes everything due then.
    /// Returns `false` when nothing is left to happen.
    pub fn step(&mut self) -> bool {
        self.collect_transmits();
        let Some(at) = self.next_event() else {
            return false;
        };
        self.now = self.now.max(at);
        self.steps += 1;
        while self.queue.peek().is_some_and(|d| d.0.at <= self.now) {
            let Some(Reverse(d)) = self.queue.pop() else {
                break;
            };
            if let Some((_, node)) = self.nodes.iter_mut().find(|(a, _)| *a == d.to) {
                node.handle_datagram(self.now, d.from, &d.data);
            }
        }
        for i in 0..self.injectors.len() {
            let state = &mut self.injectors[i];
            while state.sent < state.injector.count && state.next <= self.now {
                let data = (state.injector.generator)(&mut self.rng);
                state.sent += 1;
                state.next += state.injector.interval;
                let (from, to) = (state.injector.from, state.injector.to);
                if let Some((_, node)) = self.nodes.iter_mut().find(|(a, _)| *a == to) {
                    node.handle_datagram(self.now, from, &data);
                }
            }
        }
        let now = self.now;
        for (_, node) in self.nodes.iter_mut() {
            if node.poll_timeout().is_some_and(|t| t <= now) {
                node.handle_timeout(now);
            }
        }
        true
    }

    /// Steps until `done` holds (returns `true`), or until `limit` of virtual time has passed or
    /// nothing is left to happen (returns `false`).
    pub fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&mut Self) -> bool) -> bool {
        let deadline = self.now + limit;
        loop {
            if done(self) {
                return true;
            }
            if self.now > deadline || !self.step() {
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `count` datagrams of 1 000 bytes in one batch to `to`, and records arrivals.
    #[derive(Default)]
    struct Probe {
        to: Option<SocketAddr>,
        count: usize,
        arrivals: Vec<Instant>,
    }

    impl Node for Probe {
        fn handle_datagram(&mut self, now: Instant, _from: SocketAddr, _data: &[u8]) {
            self.arrivals.push(now);
        }
        fn poll_transmit(&mut self, _now: Instant, buf: &mut Vec<u8>) -> Option<Outgoing> {
            let to = self.to.take()?;
            buf.clear();
            buf.resize(self.count * 1_000, 0);
            Some(Outgoing {
                destination: to,
                segment_size: Some(1_000),
            })
        }
        fn poll_timeout(&self) -> Option<Instant> {
            None
        }
        fn handle_timeout(&mut self, _now: Instant) {}
    }

    fn arrivals(tick: Duration) -> Vec<Duration> {
        let (a, b): (SocketAddr, SocketAddr) =
            ("10.0.0.1:1".parse().unwrap(), "10.0.0.2:2".parse().unwrap());
        let mut sim = Simulation::new(1);
        let start = sim.now();
        sim.add_node(
            a,
            Probe {
                to: Some(b),
                count: 10,
                ..Probe::default()
            },
        );
        let receiver = sim.add_node(b, Probe::default());
        // 80 Mbit/s: one 1 000-byte datagram every 100 µs.
        sim.set_link(a, b, LinkConfig::wan(80_000_000, Duration::from_millis(2)));
        sim.set_coalescing(b, tick);
        sim.run_until(Duration::from_secs(1), |_| false);
        let times = &sim.node(receiver).arrivals;
        times.iter().map(|t| *t - start).collect()
    }

    #[test]
    fn a_coalescing_receiver_sees_arrivals_at_its_ticks() {
        let spaced = arrivals(Duration::ZERO);
        assert_eq!(spaced.len(), 10);
        assert!(spaced
            .windows(2)
            .all(|w| w[1] - w[0] == Duration::from_micros(100)));
        let ticked = arrivals(Duration::from_micros(250));
        assert_eq!(ticked.len(), 10);
        assert!(
            ticked.iter().all(|t| t.as_micros() % 250 == 0),
            "{ticked:?}"
        );
        for (at, tick) in spaced.iter().zip(&ticked) {
            assert!(tick >= at && *tick - *at < Duration::from_micros(250));
        }
    }
}
