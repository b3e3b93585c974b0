//! Explore mode's partial-order reduction: the independence relation the
//! sleep sets use, and the rule that fires a client loop early only right
//! before something that involves its node (loop postponement). The
//! soundness argument is in docs/explore.md ("Why the reduction is
//! sound"); in short:
//!
//! - Two moves are independent only when neither lets time pass, at most
//!   one of them draws from the shared RNG, they involve different clients
//!   and at most one of them touches the server, unless both only read it.
//!   Every server write (a heartbeat, an alloc update, an eval processed,
//!   a timer on the leader) is dependent on every other one: they share
//!   the eval broker (which ready eval the worker takes next), the job's
//!   evals and allocs, and the Raft index.
//! - A loop fired early only sends a held call: it changes its own client
//!   and that client's calls in flight, nothing the server or the
//!   invariants read, and nothing any other move reads except the time the
//!   call was sent (which bounds how long time may pass while it is held,
//!   `max_delay`). So firing it later, right before the next move that
//!   involves its node, reaches the same world with the call sent later,
//!   from which every order of the earlier firing is still possible.

use super::{Choice, ClientLoop};
use crate::client::ClientTimer;
use crate::server::rpc::{Reply, Rpc};
use crate::sim::queue::Tick;
use crate::sim::{Event, Sim};

/// How a move uses the server's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerUse {
    /// Not at all.
    None,
    /// Reads it (allocs of a node, one alloc), writes nothing.
    Read,
    /// Writes it (a node's status, allocs, evals, the eval broker).
    Write,
}

/// What a move reads and writes, as far as the independence relation
/// needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Footprint {
    /// The client whose state or calls in flight it reads or writes.
    pub client: Option<String>,
    /// Its use of the server's state.
    pub server: ServerUse,
    /// It draws from the shared RNG (timer jitter, retries).
    pub rng: bool,
    /// It touches everything: time passes, an eval is processed (a plan
    /// may wake any client), or the move ran further events after itself.
    pub global: bool,
}

impl Footprint {
    const GLOBAL: Footprint = Footprint {
        client: None,
        server: ServerUse::Write,
        rng: true,
        global: true,
    };

    fn client(node: &str, server: ServerUse, rng: bool) -> Footprint {
        Footprint {
            client: Some(node.to_string()),
            server,
            rng,
            global: false,
        }
    }

    /// The same move, known to have run further events after itself
    /// (`extended`): then it is treated as touching everything.
    pub fn extended(self, extended: bool) -> Footprint {
        if extended { Footprint::GLOBAL } else { self }
    }
}

/// How a call uses the server when it is delivered.
fn call_use(rpc: &Rpc) -> (ServerUse, bool) {
    match rpc {
        // A heartbeat or registration resets the node's TTL timer, with
        // jitter drawn from the RNG, and may create evals.
        Rpc::Register { .. } | Rpc::UpdateStatus => (ServerUse::Write, true),
        Rpc::UpdateAlloc { .. } => (ServerUse::Write, true),
        Rpc::GetClientAllocs | Rpc::GetAlloc { .. } => (ServerUse::Read, false),
    }
}

/// The footprint of `choice` in `sim` (before it is taken).
pub fn footprint(sim: &Sim, choice: &Choice) -> Footprint {
    match choice {
        Choice::FireLoop { node, .. } => Footprint::client(node, ServerUse::None, false),
        Choice::Deliver { node, call, .. } => match sim.net.get(node, *call) {
            Some(pending) => {
                let (server, rng) = call_use(&pending.rpc);
                Footprint::client(node, server, rng)
            }
            None => Footprint::GLOBAL,
        },
        Choice::ProcessEval { .. } => Footprint::GLOBAL,
        Choice::Step => {
            let Some((tick, event)) = sim.queue.iter().next() else {
                return Footprint::GLOBAL;
            };
            if tick > sim.tick {
                // Time passes: every move taken after it happens later.
                return Footprint::GLOBAL;
            }
            event_footprint(sim, event)
        }
    }
}

fn event_footprint(sim: &Sim, event: &Event) -> Footprint {
    match event {
        Event::Reply { node, reply, .. } => {
            // An error reply (or one lost to a link that went down) makes
            // the client retry after a jittered wait; others never draw.
            let rng = matches!(**reply, Reply::Error { .. }) || !sim.net.link(node).up;
            Footprint::client(node, ServerUse::None, rng)
        }
        Event::Fail { node, .. } => Footprint::client(node, ServerUse::None, true),
        Event::Client { node, timer } => {
            let rng = matches!(timer, ClientTimer::StopAfter { .. });
            Footprint::client(node, ServerUse::None, rng)
        }
        Event::Deliver { node, call } => match sim.net.get(node, *call) {
            Some(pending) if !pending.held => {
                let (server, rng) = call_use(&pending.rpc);
                Footprint::client(node, server, rng)
            }
            // Held or gone: handling it changes nothing.
            _ => Footprint {
                client: None,
                server: ServerUse::None,
                rng: false,
                global: false,
            },
        },
        Event::HeartbeatTimeout { .. }
        | Event::EvalDelay { .. }
        | Event::Worker
        | Event::DeploymentTimer { .. } => Footprint::GLOBAL,
    }
}

/// Whether two moves commute: taken in either order from one state they
/// reach the same world (up to the renaming canonical fingerprints ignore:
/// generated IDs, call numbers, and the order of two clients' events due
/// at the same tick).
pub fn independent(a: &Footprint, b: &Footprint) -> bool {
    if a.global || b.global || (a.rng && b.rng) {
        return false;
    }
    if a.client.is_some() && a.client == b.client {
        return false;
    }
    match (a.server, b.server) {
        (ServerUse::Write, ServerUse::None) | (ServerUse::None, ServerUse::Write) => true,
        (ServerUse::Write, _) | (_, ServerUse::Write) => false,
        _ => true,
    }
}

/// A client loop fired early by the move into a state: the node, the loop
/// and the node's next natural heartbeat then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fired {
    /// Node.
    pub node: String,
    /// Loop.
    pub client_loop: ClientLoop,
    /// The client's `next_heartbeat` when it fired.
    pub next_heartbeat: Option<Tick>,
}

/// Whether the move from `before` (just after a loop of `fired.node` was
/// fired) to `after` involves that node: it is a move of that node, or it
/// changed the node's client or calls in flight, or time reached the
/// node's natural heartbeat (which ends the heartbeat loop's early window),
/// or the phase changed. A move that does not could have been taken
/// before the loop fired, from where the loop could still fire next.
pub fn involves(fired: &Fired, choice: &Choice, before: &Sim, after: &Sim) -> bool {
    match choice {
        Choice::FireLoop { .. } => return true,
        Choice::Deliver { node, .. } if *node == fired.node => return true,
        _ => {}
    }
    let node = fired.node.as_str();
    before.clients.get(node) != after.clients.get(node)
        || before.net.pending.get(node) != after.net.pending.get(node)
        || before.net.link(node) != after.net.link(node)
        || (fired.client_loop == ClientLoop::Heartbeat
            && fired.next_heartbeat.is_some_and(|t| after.tick >= t))
}
