//! Canonical state fingerprints for explore mode's pruning: a 128-bit hash
//! (two independent FNV-1a streams) over the parts of the world that decide
//! what happens next. Trace buffers, counters of handled events and the
//! event queue's insertion numbers are left out, so two orders that end in
//! the same world get the same fingerprint.

use crate::sim::queue::Tick;
use crate::sim::{Event, Sim};
use serde::Serialize;

/// A state fingerprint.
pub type Fingerprint = u128;

/// An `io::Write` sink that hashes what is written to it.
struct Hasher {
    a: u64,
    b: u64,
}

const PRIME: u64 = 0x0000_0100_0000_01b3;

impl Hasher {
    fn new() -> Hasher {
        Hasher {
            a: 0xcbf2_9ce4_8422_2325,
            b: 0x6c62_272e_07bb_0142,
        }
    }

    fn finish(&self) -> Fingerprint {
        (u128::from(self.a) << 64) | u128::from(self.b)
    }
}

impl std::io::Write for Hasher {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &byte in buf {
            self.a = (self.a ^ u64::from(byte)).wrapping_mul(PRIME);
            self.b = (self.b ^ u64::from(byte.rotate_left(3))).wrapping_mul(PRIME);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[derive(Serialize)]
struct View<'a, X: Serialize> {
    tick: Tick,
    rng: &'a crate::sim::rng::Rng,
    queue: Vec<(Tick, &'a Event)>,
    server: &'a crate::server::Server,
    clients: &'a std::collections::BTreeMap<String, crate::client::Client>,
    net: &'a crate::sim::net::Network,
    worker_scheduled: bool,
    extra: &'a X,
}

/// Whether handling `event` now would change nothing (a stale timer, a
/// call that is held or gone, an idle worker). Such events are left out of
/// fingerprints: two worlds that differ only by them behave the same.
pub fn noop(sim: &Sim, event: &Event) -> bool {
    use crate::client::ClientTimer;
    match event {
        Event::Deliver { node, call } => sim.net.get(node, *call).is_none_or(|p| p.held),
        Event::HeartbeatTimeout { node, deadline } => {
            sim.server.state.heartbeat_timers.get(node) != Some(deadline)
        }
        Event::EvalDelay { eval } => !sim.server.state.broker.delayed.contains_key(eval),
        Event::Client { node, timer } => {
            let Some(client) = sim.clients.get(node) else {
                return true;
            };
            match timer {
                ClientTimer::Heartbeat { generation } => *generation != client.generations[0],
                ClientTimer::AllocSync { generation } => {
                    *generation != client.generations[1] || client.update_in_flight
                }
                ClientTimer::Watch { generation } => {
                    *generation != client.generations[2] || client.watch_in_flight
                }
                ClientTimer::StopAfter { generation } => *generation != client.generations[3],
                ClientTimer::TaskStart { .. } | ClientTimer::WatchPoll { .. } => false,
            }
        }
        Event::Worker => !sim.server.state.broker.has_ready(),
        Event::Reply { .. } | Event::Fail { .. } => false,
    }
}

/// The fingerprint of `sim` together with `extra` (the explorer's own
/// per-path state, e.g. the phase).
pub fn fingerprint<X: Serialize>(sim: &Sim, extra: &X) -> Fingerprint {
    let view = View {
        tick: sim.tick,
        rng: &sim.rng,
        queue: sim.queue.iter().filter(|(_, e)| !noop(sim, e)).collect(),
        server: &sim.server,
        clients: &sim.clients,
        net: &sim.net,
        worker_scheduled: sim.worker_scheduled,
        extra,
    };
    let mut hasher = Hasher::new();
    // Serializing plain data into a sink that cannot fail does not fail;
    // if it ever did, the partial hash is still a valid (weaker) key.
    let _ = serde_json::to_writer(&mut hasher, &view);
    hasher.finish()
}
