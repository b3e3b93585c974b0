//! The deterministic cluster simulator: a single-threaded discrete-event
//! loop over one leader ([`crate::server`]), its clients ([`crate::client`])
//! and the network between them ([`net`]), with a logical clock and one
//! seeded RNG.
//!
//! Events are ordered by `(tick, seq)`. [`Sim::step`] handles one event and
//! reports whether work remains; [`Sim::run_until`] takes an explicit
//! bound. Server and client are sans-I/O state machines: they return
//! effects, and only this module puts events on the queue. The same
//! scenario and profile give the same trace, byte for byte, natively and in
//! WebAssembly.
//!
//! # UI API
//!
//! The UI drives a [`history::Session`]:
//!
//! - `Session::load(json, profile)` parses a scenario (errors carry the
//!   JSON path) and builds the cluster at step 0 (`profile` overrides the
//!   scenario's).
//! - `step()` applies the next scripted action (or, past the script's end,
//!   handles one event); `step_eval()` processes one ready eval;
//!   `back()`, `jump(n)`, `reset()` travel in time by replay from the
//!   nearest checkpoint; `apply(action)` dispatches any script
//!   [`crate::scenario::format::Action`] (an action applied in the past
//!   starts a new branch, the old one is kept in `branches()`);
//!   `set_profile(name)` replays the same actions under another profile.
//! - `snapshot()` returns a serializable [`Snapshot`]: nodes (status, link,
//!   TTL deadline), allocs (name index, statuses, job version, AllocStates,
//!   task states, previous/next), evals (trigger, status, wait_until),
//!   pending calls per client (id, RPC, held), the tick.
//! - `records()` are the per-step trace entries ([`trace::TraceEntry`],
//!   structured), and [`trace::trace_text`] prints them one line each.

pub mod check;
pub mod chunk_map;
pub mod clients;
pub mod history;
pub mod net;
pub mod queue;
pub mod rng;
pub mod trace;

use crate::client::{Client, ClientEffect, ClientInput, ClientTimer, UserAction};
use crate::model::{ClientStatus, NodeStatus};
use crate::profile::Profile;
use crate::scenario::format::{Action, Scenario};
use crate::server::rpc::{Reply, Rpc};
use crate::server::{NodeRecord, Server, ServerConfig, ServerEffect, ServerInput, time_tick};
use clients::Clients;
use net::{CallId, Network};
use queue::{EventQueue, Tick};
use rng::Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use trace::{BrokerState, NodeName, RpcName, TraceEntry, TraceEvent, short};

/// Something scheduled on the queue. Node IDs are the shared copies of
/// the server's texts ([`crate::server::Server::texts`], the same as the
/// trace's node names): an event made or dropped allocates nothing for
/// its node, and the trace entries about it take the same pointer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A call reaches the leader (ignored if it is no longer in flight or held).
    Deliver {
        /// Sender.
        node: NodeName,
        /// Call number.
        call: CallId,
    },
    /// A reply reaches the client.
    Reply {
        /// Receiver.
        node: NodeName,
        /// Call number.
        call: CallId,
        /// The RPC answered (boxed, as the reply: the queue moves its
        /// events as it inserts, so they stay small).
        rpc: Box<Rpc>,
        /// The reply.
        reply: Box<Reply>,
    },
    /// A call failed; the client learns it.
    Fail {
        /// Sender.
        node: NodeName,
        /// Call number.
        call: CallId,
        /// The RPC (boxed, as a reply's).
        rpc: Box<Rpc>,
        /// Why.
        reason: Box<str>,
    },
    /// A node's heartbeat timer on the leader.
    HeartbeatTimeout {
        /// Node.
        node: NodeName,
        /// Deadline it was set for.
        deadline: Tick,
    },
    /// An eval's `WaitUntil`.
    EvalDelay {
        /// Eval ID.
        eval: String,
    },
    /// A client timer.
    Client {
        /// Node.
        node: NodeName,
        /// Timer.
        timer: ClientTimer,
    },
    /// The scheduler worker takes the next ready eval.
    Worker,
    /// A deployment watcher's timer (batched eval, progress deadline).
    DeploymentTimer {
        /// Deployment ID.
        deployment: String,
    },
}

/// Simulator settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimSettings {
    /// Ready evals are processed by the worker by itself.
    pub auto_evals: bool,
    /// Clients run their loops by themselves.
    pub auto_clients: bool,
    /// Alloc runners stay pending this long.
    pub task_start: Tick,
    /// Bound on events per action.
    pub max_events_per_step: u64,
    /// Full checkpoint every this many steps.
    pub checkpoint_every: usize,
}

/// An action could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    /// A reference names nothing.
    #[error("{what} {reference:?} not found")]
    NotFound {
        /// What kind of thing.
        what: &'static str,
        /// The reference.
        reference: String,
    },
    /// A bound was hit.
    #[error("stopped after {events} events without reaching tick {target}")]
    Bound {
        /// Events handled.
        events: u64,
        /// Target tick.
        target: Tick,
    },
    /// A status is not a client status.
    #[error("invalid client status {0:?}")]
    BadStatus(String),
}

/// The whole simulated world.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sim {
    /// Current tick.
    pub tick: Tick,
    /// The one RNG.
    pub rng: Rng,
    /// Pending events.
    pub queue: EventQueue<Event>,
    /// The leader.
    pub server: Server,
    /// Clients by node ID (in ID order; found by a hash of the ID).
    pub clients: Clients,
    /// The network.
    pub net: Network,
    /// Settings.
    pub settings: SimSettings,
    /// The profile.
    pub profile: Profile,
    /// Index of the action being applied (for trace entries).
    pub step_index: usize,
    /// A worker event is on the queue.
    pub worker_scheduled: bool,
    /// Trace entries not yet taken by [`Sim::take_trace`].
    pub pending_trace: Vec<TraceEntry>,
    /// Assertions checked so far: (passed, failed).
    pub assertions: (u64, u64),
    /// Events handled so far.
    pub events_handled: u64,
    /// The last invariant check and the state it saw (not part of the world).
    #[serde(skip)]
    pub check_memo: check::CheckMemo,
    /// Spare effect lists (not part of the world).
    #[serde(skip)]
    pub buffers: EffectBuffers,
    /// The deadline the server last set for a node's heartbeat timer, by
    /// node name, from the timer effects the server returned (not part of
    /// the world): a timeout for another deadline is stale without a look
    /// at the server's timers ([`Sim::handle_event`]).
    #[serde(skip)]
    heartbeat_deadlines: clients::NameCache<Tick>,
}

/// Spare lists for the effects a client or the server returns while the
/// simulator handles an event: the simulator drains each into events and
/// keeps it for the next, so an event allocates no list of its own. Empty
/// between events (not part of the world).
#[derive(Debug, Clone, Default)]
pub struct EffectBuffers {
    client: Vec<ClientEffect>,
    server: Vec<ServerEffect>,
}

impl Sim {
    /// Builds the cluster of a (validated) scenario under `profile` at tick 0.
    pub fn new(scenario: &Scenario, profile: Profile) -> Sim {
        let settings = scenario.settings.clone().unwrap_or_default();
        let server_settings = scenario.server.clone().unwrap_or_default();
        let preemption = server_settings.preemption.clone();
        let config = ServerConfig {
            min_heartbeat_ttl: server_settings
                .min_heartbeat_ttl
                .map_or(10_000, |d| d.ticks()),
            max_heartbeats_per_second: server_settings.max_heartbeats_per_second.unwrap_or(50.0),
            heartbeat_grace: server_settings
                .heartbeat_grace
                .map_or(10_000, |d| d.ticks()),
            preempt_system: preemption.as_ref().is_none_or(|p| p.system),
            preempt_service: preemption.as_ref().is_some_and(|p| p.service),
            preempt_batch: preemption.as_ref().is_some_and(|p| p.batch),
        };
        let seed = scenario.seed.unwrap_or(1);
        let sim_settings = SimSettings {
            auto_evals: settings.auto_evals.unwrap_or(true),
            auto_clients: settings.auto_clients.unwrap_or(true),
            task_start: settings.task_start.map_or(0, |d| d.ticks()),
            max_events_per_step: settings.max_events_per_step.unwrap_or(1_000_000),
            checkpoint_every: settings.checkpoint_every.unwrap_or(50).max(1),
        };
        let mut sim = Sim {
            tick: 0,
            rng: Rng::new(seed),
            queue: EventQueue::default(),
            server: Server::new(config, profile.version, seed),
            clients: Clients::new(),
            net: Network {
                latency: settings.latency.map_or(10, |d| d.ticks()),
                ..Network::default()
            },
            settings: sim_settings,
            profile,
            step_index: 0,
            worker_scheduled: false,
            pending_trace: Vec::new(),
            assertions: (0, 0),
            events_handled: 0,
            check_memo: check::CheckMemo::default(),
            buffers: EffectBuffers::default(),
            heartbeat_deadlines: clients::NameCache::default(),
        };
        for spec in &scenario.nodes {
            let registered = spec.registered.unwrap_or(true);
            let record = NodeRecord {
                node: crate::model::Node {
                    id: spec.id.clone(),
                    name: spec.name.clone().unwrap_or_else(|| spec.id.clone()),
                    datacenter: spec.datacenter.clone().unwrap_or_else(|| "dc1".to_string()),
                    node_pool: spec
                        .node_pool
                        .clone()
                        .unwrap_or_else(|| "default".to_string()),
                    node_class: spec.class.clone().unwrap_or_default(),
                    status: NodeStatus::Ready,
                    scheduling_eligibility: crate::model::SchedulingEligibility::Eligible,
                    ..crate::model::Node::default()
                },
                cpu: spec.cpu.unwrap_or(4000),
                memory_mb: spec.memory_mb.unwrap_or(8192),
                last_missed_heartbeat_index: 0,
                last_alloc_update_index: 0,
                agent: spec.agent.clone().unwrap_or_default(),
            };
            let mut client = Client::new(
                record.clone(),
                sim.settings.auto_clients,
                sim.settings.task_start,
                sim.profile.rules.clone(),
                registered,
            );
            let mut ttl = 0;
            if registered {
                let index = sim.server.bump_index();
                let mut stored = record.clone();
                stored.node.create_index = index;
                stored.node.modify_index = index;
                sim.server.state.nodes.insert(spec.id.clone(), stored);
                sim.server.nodes_changed();
                sim.with_server(|server, now, rng, out| {
                    let name = server.texts.text(&spec.id);
                    ttl = server.reset_heartbeat_timer(now, &name, rng, out);
                });
            }
            let mut effects = client.start(0, ttl);
            sim.clients.insert(spec.id.clone(), client);
            let node = sim.server.texts.text(&spec.id);
            sim.route_client(&node, &mut effects);
        }
        for job in &scenario.jobs {
            sim.server_input(ServerInput::RegisterJob { spec: job.clone() });
        }
        sim
    }

    fn record(&mut self, mut event: TraceEvent) {
        // The repeating texts the trace has used are kept once, in the
        // server's table (`Server::texts`), which most events took theirs
        // from already.
        self.server.texts.share(&mut event);
        self.pending_trace.push(TraceEntry {
            step: self.step_index,
            tick: self.tick,
            event,
        });
    }

    /// Takes the trace entries recorded since the last call.
    pub fn take_trace(&mut self) -> Vec<TraceEntry> {
        std::mem::take(&mut self.pending_trace)
    }

    /// Takes the trace entries recorded since the last call in a list of
    /// their exact size (for a history that keeps every step's), and keeps
    /// the list they were recorded in, empty, for the next step's: a step
    /// of tens of thousands of entries then grows it only once in a
    /// session, not at every big step again.
    pub fn drain_trace(&mut self) -> Vec<TraceEntry> {
        let mut entries = Vec::with_capacity(self.pending_trace.len());
        entries.append(&mut self.pending_trace);
        entries
    }

    fn server_input(&mut self, input: ServerInput) {
        self.with_server(|server, now, rng, out| server.handle(now, input, rng, out));
    }

    /// Lends the server, with the clock, the RNG and the spare effect list
    /// ([`EffectBuffers`]), to `call`, then routes the effects it left in
    /// the list (and keeps the list, empty, for the next event).
    fn with_server(
        &mut self,
        call: impl FnOnce(&mut Server, Tick, &mut Rng, &mut Vec<ServerEffect>),
    ) {
        let mut effects = std::mem::take(&mut self.buffers.server);
        call(&mut self.server, self.tick, &mut self.rng, &mut effects);
        self.route_server(&mut effects);
        self.buffers.server = effects;
    }

    /// Turns the server's effects into events and trace entries (leaves
    /// `effects` empty).
    fn route_server(&mut self, effects: &mut Vec<ServerEffect>) {
        for effect in effects.drain(..) {
            match effect {
                ServerEffect::Trace(event) => self.record(event),
                ServerEffect::Reply {
                    node,
                    call,
                    rpc,
                    reply,
                } => {
                    let at = self.tick + self.net.latency;
                    self.queue.push(
                        at,
                        Event::Reply {
                            node,
                            call,
                            rpc: Box::new(rpc),
                            reply: Box::new(reply),
                        },
                    );
                }
                ServerEffect::HeartbeatTimer { node, at } => {
                    self.heartbeat_deadlines.put(&node, at);
                    self.queue
                        .push(at, Event::HeartbeatTimeout { node, deadline: at });
                }
                ServerEffect::EvalTimer { eval, at } => {
                    self.queue.push(at, Event::EvalDelay { eval });
                }
                ServerEffect::DeploymentTimer { deployment, at } => {
                    self.queue.push(at, Event::DeploymentTimer { deployment });
                }
                ServerEffect::EvalReady => {
                    if self.settings.auto_evals && !self.worker_scheduled {
                        self.worker_scheduled = true;
                        self.queue.push(self.tick, Event::Worker);
                    }
                }
                ServerEffect::AllocsChanged { node } => {
                    if self.clients.contains_key(&node) {
                        // The shared copy first: the link is then read by it.
                        let node = self.server.texts.text(&node);
                        if self.net.link_named(&node).up {
                            self.client_input(&node, ClientInput::AllocsChanged);
                        }
                    }
                }
            }
        }
    }

    /// Hands `input` to the client of `node` (a node name the server's
    /// texts shared) and routes what it returns.
    fn client_input(&mut self, node: &NodeName, input: ClientInput) {
        let Some(client) = self.clients.get_mut_named(node) else {
            return;
        };
        let mut effects = std::mem::take(&mut self.buffers.client);
        client.handle(self.tick, input, &mut self.rng, &mut effects);
        self.route_client(node, &mut effects);
        self.buffers.client = effects;
    }

    /// [`Sim::client_input`] for a node named by the script.
    fn client_input_named(&mut self, node: &str, input: ClientInput) {
        let node = self.server.texts.text(node);
        self.client_input(&node, input);
    }

    /// Turns the effects of the client of `node` into events, calls and
    /// trace entries (leaves `effects` empty).
    fn route_client(&mut self, node: &NodeName, effects: &mut Vec<ClientEffect>) {
        for effect in effects.drain(..) {
            match effect {
                ClientEffect::Trace(detail) => self.record(TraceEvent::Client {
                    node: node.clone(),
                    detail: detail.into(),
                }),
                ClientEffect::Timer { at, timer } => {
                    self.queue.push(
                        at,
                        Event::Client {
                            node: node.clone(),
                            timer,
                        },
                    );
                }
                ClientEffect::Send(rpc) => self.send(node, rpc),
            }
        }
    }

    fn send(&mut self, node: &NodeName, rpc: Rpc) {
        let name = RpcName::of(&rpc);
        let link = self.net.link_named(node);
        if !link.up {
            // The call fails at once; the trace shows only the failure.
            let call = self.net.next_call;
            self.net.next_call += 1;
            self.queue.push(
                self.tick,
                Event::Fail {
                    node: node.clone(),
                    call,
                    rpc: Box::new(rpc),
                    reason: "link down".into(),
                },
            );
            return;
        }
        // The trace's words for the call: only a call sent shows them (a
        // fixed text, most calls' (a heartbeat's), is the shared copy).
        let detail = match rpc.fixed_detail() {
            Some(fixed) => self.server.texts.fixed(fixed),
            None => rpc.detail().into(),
        };
        let held = link.hold;
        let call = self.net.send(self.tick, node, held, rpc);
        self.record(TraceEvent::CallSent {
            node: node.clone(),
            call,
            rpc: name,
            detail,
            held,
        });
        if !held {
            let at = self.tick + self.net.latency;
            self.queue.push(
                at,
                Event::Deliver {
                    node: node.clone(),
                    call,
                },
            );
        }
    }

    /// Delivers a call in flight to the leader now.
    fn deliver(&mut self, node: &str, call: CallId) -> bool {
        let Some(pending) = self.net.take(node, call) else {
            return false;
        };
        self.hand_over(&pending.node, call, pending.rpc);
        true
    }

    /// The leader handles a call taken off the network (from `node`, the
    /// server's shared copy of its ID).
    fn hand_over(&mut self, node: &NodeName, call: CallId, rpc: Rpc) {
        self.with_server(|server, now, rng, out| {
            server.handle_call(now, node, call, rpc, rng, out)
        });
    }

    /// Handles one event. Returns whether events remain.
    pub fn step(&mut self) -> bool {
        let Some((tick, event)) = self.queue.pop() else {
            return false;
        };
        self.tick = self.tick.max(tick);
        self.events_handled += 1;
        self.handle_event(event);
        !self.queue.is_empty()
    }

    fn handle_event(&mut self, event: Event) {
        match event {
            Event::Deliver { node, call } => {
                let now = self.tick;
                let ready = self.net.take_if_named(&node, call, |pending| {
                    !pending.held && pending.deliver_at <= now
                });
                if let Some(pending) = ready {
                    self.hand_over(&node, call, pending.rpc);
                }
            }
            Event::Reply {
                node,
                call,
                rpc,
                reply,
            } => {
                if self.net.link_named(&node).up {
                    self.record(TraceEvent::Reply {
                        node: node.clone(),
                        call,
                        rpc: RpcName::of(&rpc),
                        detail: reply.detail(),
                    });
                    self.client_input(
                        &node,
                        ClientInput::Reply {
                            rpc: *rpc,
                            reply: *reply,
                        },
                    );
                } else {
                    self.record(TraceEvent::CallFailed {
                        node: node.clone(),
                        call,
                        rpc: RpcName::of(&rpc),
                        reason: "reply lost: link down".into(),
                    });
                    self.client_input(
                        &node,
                        ClientInput::Failed {
                            rpc: *rpc,
                            reason: "link down".to_string(),
                        },
                    );
                }
            }
            Event::Fail {
                node,
                call,
                rpc,
                reason,
            } => {
                self.record(TraceEvent::CallFailed {
                    node: node.clone(),
                    call,
                    rpc: RpcName::of(&rpc),
                    reason: reason.as_ref().into(),
                });
                self.client_input(
                    &node,
                    ClientInput::Failed {
                        rpc: *rpc,
                        reason: reason.into_string(),
                    },
                );
            }
            Event::HeartbeatTimeout { node, deadline } => {
                // Most timers are stale (the node heartbeated since, which
                // set a later deadline): those are dropped here, without
                // lending the server the effect list for nothing. Every
                // deadline the server sets comes through `route_server`, so
                // a timer whose deadline is not the last one set for its
                // node is stale (the server's timer is that one or none);
                // the server's timers are read only when the last one is
                // unknown here (a copy of the world starts knowing none).
                let last_set = self.heartbeat_deadlines.get(&node);
                let live = match last_set {
                    Some(last) if last != deadline => false,
                    _ => self.server.state.heartbeat_timers.get(node.as_str()) == Some(&deadline),
                };
                debug_assert!(
                    live || self.server.state.heartbeat_timers.get(node.as_str())
                        != Some(&deadline)
                );
                if live {
                    self.with_server(|server, now, rng, out| {
                        server.heartbeat_timeout(now, &node, deadline, rng, out)
                    });
                }
            }
            Event::EvalDelay { eval } => {
                let waiting = self.server.state.broker.delayed.contains_key(&eval);
                if waiting {
                    self.record(TraceEvent::EvalState {
                        eval: eval.as_str().into(),
                        state: BrokerState::Ready,
                        reason: "wait_until reached".into(),
                    });
                    self.server_input(ServerInput::EvalDelayElapsed { eval });
                }
            }
            Event::Client { node, timer } => {
                self.client_input(&node, ClientInput::Timer(timer));
            }
            Event::Worker => {
                self.worker_scheduled = false;
                if self.server.state.broker.has_ready() {
                    self.server_input(ServerInput::ProcessEval { eval: None });
                }
            }
            Event::DeploymentTimer { deployment } => {
                self.server_input(ServerInput::DeploymentTimer { deployment });
            }
        }
    }

    /// Handles every event up to `target` (then sets the clock to it), or
    /// stops after `max_events`.
    pub fn run_until(&mut self, target: Tick, max_events: u64) -> Result<u64, ActionError> {
        let mut handled = 0;
        while let Some(tick) = self.queue.peek_tick() {
            if tick > target {
                break;
            }
            if handled >= max_events {
                return Err(ActionError::Bound {
                    events: handled,
                    target,
                });
            }
            self.step();
            handled += 1;
        }
        self.tick = self.tick.max(target);
        Ok(handled)
    }

    /// Processes ready evals and same-tick events until nothing is ready.
    pub fn run_until_idle(&mut self, max_events: u64) -> Result<u64, ActionError> {
        let mut handled = 0;
        loop {
            if handled >= max_events {
                return Err(ActionError::Bound {
                    events: handled,
                    target: self.tick,
                });
            }
            if self.queue.peek_tick().is_some_and(|tick| tick <= self.tick) {
                self.step();
            } else if self.server.state.broker.has_ready() {
                self.server_input(ServerInput::ProcessEval { eval: None });
            } else {
                return Ok(handled);
            }
            handled += 1;
        }
    }

    /// Resolves an alloc reference: an ID, an ID prefix of 8+ characters,
    /// or a name with an optional creation ordinal (`web.web[0]`,
    /// `web.web[0]#1`, `web.web[0]#last`).
    pub fn resolve_alloc(&self, reference: &str) -> Option<String> {
        let state = &self.server.state;
        if state.allocs.contains_key(reference) {
            return Some(reference.to_string());
        }
        let (name, ordinal) = match reference.rsplit_once('#') {
            Some((name, ordinal)) => (name, Some(ordinal)),
            None => (reference, None),
        };
        if let Some(ids) = state.allocs_by_name.get(name) {
            return match ordinal {
                None => ids.first().cloned(),
                Some("last") => ids.last().cloned(),
                Some(n) => n.parse::<usize>().ok().and_then(|n| ids.get(n).cloned()),
            };
        }
        if reference.len() >= 8 {
            let mut matches = state.allocs.keys().filter(|id| id.starts_with(reference));
            if let (Some(id), None) = (matches.next(), matches.next()) {
                return Some(id.clone());
            }
        }
        None
    }

    /// Resolves an eval reference: an ID or ID prefix, or `trigger`,
    /// `trigger:job`, with an optional ordinal among matching evals in
    /// creation order (`#0` default, `#last`).
    pub fn resolve_evals(&self, reference: &str) -> Vec<String> {
        let state = &self.server.state;
        if state.evals.contains_key(reference) {
            return vec![reference.to_string()];
        }
        let (filter, ordinal) = match reference.rsplit_once('#') {
            Some((filter, ordinal)) => (filter, Some(ordinal)),
            None => (reference, None),
        };
        let (trigger, job) = match filter.split_once(':') {
            Some((trigger, job)) => (trigger, Some(job)),
            None => (filter, None),
        };
        let matching: Vec<String> = state
            .eval_order
            .iter()
            .filter(|id| {
                let eval = &state.evals[*id].eval;
                eval.triggered_by == trigger && job.is_none_or(|job| eval.job_id == job)
            })
            .cloned()
            .collect();
        if matching.is_empty() {
            if reference.len() >= 8 {
                return state
                    .eval_order
                    .iter()
                    .filter(|id| id.starts_with(reference))
                    .cloned()
                    .collect();
            }
            return Vec::new();
        }
        match ordinal {
            None => matching,
            Some("last") => matching.last().cloned().into_iter().collect(),
            Some(n) => n
                .parse::<usize>()
                .ok()
                .and_then(|n| matching.get(n).cloned())
                .into_iter()
                .collect(),
        }
    }

    /// Resolves a call reference (`#3`, `3`, or an RPC name: the first such
    /// call in the client's list).
    pub fn resolve_call(&self, node: &str, reference: &str) -> Option<CallId> {
        let calls = self.net.pending.get(node)?;
        let number = reference.trim_start_matches('#');
        if let Ok(id) = number.parse::<CallId>() {
            return calls.iter().find(|c| c.id == id).map(|c| c.id);
        }
        calls
            .iter()
            .find(|c| c.rpc.matches(reference))
            .map(|c| c.id)
    }

    fn alloc_client(&self, alloc: &str) -> Option<String> {
        self.server
            .state
            .allocs
            .get(alloc)
            .map(|a| a.node_id.clone())
    }

    fn need_node(&self, node: &str) -> Result<(), ActionError> {
        if self.clients.contains_key(node) {
            Ok(())
        } else {
            Err(ActionError::NotFound {
                what: "node",
                reference: node.to_string(),
            })
        }
    }

    fn need_call(&self, node: &str, call: &str) -> Result<CallId, ActionError> {
        self.resolve_call(node, call).ok_or(ActionError::NotFound {
            what: "call",
            reference: format!("{node} {call}"),
        })
    }

    /// A deployment action: resolves the deployment and allocs, and sends
    /// the operator's call to the server.
    fn deployment_action(&mut self, action: &Action) -> Result<(), ActionError> {
        use crate::server::deployments::operator::DeploymentCall;
        let not_found = |what: &'static str, reference: &str| ActionError::NotFound {
            what,
            reference: reference.to_string(),
        };
        let (reference, call) = match action {
            Action::PromoteDeployment { deployment, groups } => (
                deployment.clone(),
                DeploymentCall::Promote {
                    groups: groups.clone(),
                },
            ),
            Action::PauseDeployment { deployment } => {
                (deployment.clone(), DeploymentCall::Pause { pause: true })
            }
            Action::ResumeDeployment { deployment } => {
                (deployment.clone(), DeploymentCall::Pause { pause: false })
            }
            Action::FailDeployment { deployment } => (deployment.clone(), DeploymentCall::Fail),
            Action::UnblockDeployment { deployment } => {
                (deployment.clone(), DeploymentCall::Unblock)
            }
            Action::SetAllocHealth {
                deployment,
                healthy,
                unhealthy,
            } => {
                let resolve = |list: &Option<Vec<String>>| -> Result<Vec<String>, ActionError> {
                    list.iter()
                        .flatten()
                        .map(|r| self.resolve_alloc(r).ok_or_else(|| not_found("alloc", r)))
                        .collect()
                };
                let healthy = resolve(healthy)?;
                let unhealthy = resolve(unhealthy)?;
                // Default: the latest deployment of the first alloc's job.
                let reference = match deployment {
                    Some(reference) => reference.clone(),
                    None => healthy
                        .iter()
                        .chain(&unhealthy)
                        .next()
                        .and_then(|id| self.server.state.allocs.get(id))
                        .map(|a| a.job_id.clone())
                        .unwrap_or_default(),
                };
                (
                    reference,
                    DeploymentCall::SetAllocHealth { healthy, unhealthy },
                )
            }
            _ => return Ok(()),
        };
        let deployment = self
            .server
            .resolve_deployment(&reference)
            .ok_or_else(|| not_found("deployment", &reference))?;
        self.server_input(ServerInput::DeploymentCall { deployment, call });
        Ok(())
    }

    /// Applies one script action.
    pub fn apply(&mut self, action: &Action) -> Result<(), ActionError> {
        if !matches!(action, Action::Step {} | Action::Assert { .. }) {
            self.record(TraceEvent::Action {
                text: crate::scenario::action_text(action).into(),
            });
        }
        let bound = self.settings.max_events_per_step;
        match action {
            Action::RegisterJob { job } => {
                self.server_input(ServerInput::RegisterJob { spec: job.clone() })
            }
            Action::UpdateJob {
                job,
                group,
                count,
                config,
            } => {
                let Some(record) = self.server.state.jobs.get(job) else {
                    return Err(ActionError::NotFound {
                        what: "job",
                        reference: job.clone(),
                    });
                };
                let Some(spec) = record.specs.values().next_back() else {
                    return Err(ActionError::NotFound {
                        what: "job",
                        reference: job.clone(),
                    });
                };
                let mut spec = (**spec).clone();
                let index = match group {
                    Some(name) => spec.groups.iter().position(|g| &g.name == name),
                    None => (!spec.groups.is_empty()).then_some(0),
                };
                let Some(index) = index else {
                    return Err(ActionError::NotFound {
                        what: "group",
                        reference: group.clone().unwrap_or_default(),
                    });
                };
                let target = &mut spec.groups[index];
                if let Some(count) = count {
                    target.count = Some(*count);
                }
                if let Some(config) = config {
                    let mut tasks = crate::server::jobs::group_tasks(target);
                    for task in &mut tasks {
                        task.config = Some(config.clone());
                    }
                    target.tasks = Some(tasks);
                }
                self.server_input(ServerInput::RegisterJob { spec });
            }
            Action::StopJob { job } => self.server_input(ServerInput::StopJob { job: job.clone() }),
            Action::RevertJob {
                job,
                version,
                enforce_prior_version,
            } => self.server_input(ServerInput::RevertJob {
                job: job.clone(),
                version: *version,
                enforce_prior_version: *enforce_prior_version,
            }),
            Action::DrainNode { node, enable } => {
                self.need_node(node)?;
                self.server_input(ServerInput::Drain {
                    node: node.clone(),
                    enable: enable.unwrap_or(true),
                })
            }
            Action::SetEligibility { node, eligible } => {
                self.need_node(node)?;
                self.server_input(ServerInput::Eligibility {
                    node: node.clone(),
                    eligible: *eligible,
                })
            }
            Action::Heartbeat { node } => {
                self.need_node(node)?;
                self.client_input_named(node, ClientInput::User(UserAction::Heartbeat));
            }
            Action::Register { node } => {
                self.need_node(node)?;
                self.client_input_named(node, ClientInput::User(UserAction::Register));
            }
            Action::GetAllocs { node } => {
                self.need_node(node)?;
                self.client_input_named(node, ClientInput::User(UserAction::GetAllocs));
            }
            Action::UpdateAlloc { node, allocs } => {
                self.need_node(node)?;
                let statuses = match allocs {
                    None => None,
                    Some(list) => {
                        let mut statuses = Vec::new();
                        for item in list {
                            let id =
                                self.resolve_alloc(&item.alloc)
                                    .ok_or(ActionError::NotFound {
                                        what: "alloc",
                                        reference: item.alloc.clone(),
                                    })?;
                            let status = ClientStatus::parse(&item.status);
                            if matches!(status, ClientStatus::Other(_)) {
                                return Err(ActionError::BadStatus(item.status.clone()));
                            }
                            statuses.push((id, status));
                        }
                        Some(statuses)
                    }
                };
                self.client_input_named(node, ClientInput::User(UserAction::UpdateAlloc(statuses)));
            }
            Action::TaskFail { alloc, task }
            | Action::TaskComplete { alloc, task }
            | Action::TaskRestart { alloc, task } => {
                let id = self.resolve_alloc(alloc).ok_or(ActionError::NotFound {
                    what: "alloc",
                    reference: alloc.clone(),
                })?;
                let node = self.alloc_client(&id).unwrap_or_default();
                let user = match action {
                    Action::TaskFail { .. } => UserAction::TaskFail(id, task.clone()),
                    Action::TaskComplete { .. } => UserAction::TaskComplete(id, task.clone()),
                    _ => UserAction::TaskRestart(id, task.clone()),
                };
                self.client_input_named(&node, ClientInput::User(user));
            }
            Action::LinkDown { node } => {
                self.need_node(node)?;
                self.net.link_mut(node).up = false;
                self.record(TraceEvent::Link {
                    node: node.as_str().into(),
                    detail: "down".into(),
                });
                for call in self.net.drain_node(node) {
                    self.queue.push(
                        self.tick,
                        Event::Fail {
                            node: self.server.texts.text(node),
                            call: call.id,
                            rpc: Box::new(call.rpc),
                            reason: "link down".into(),
                        },
                    );
                }
                if let Some(client) = self.clients.get_mut(node) {
                    client.watch_parked = false;
                }
            }
            Action::LinkUp { node } => {
                self.need_node(node)?;
                self.net.link_mut(node).up = true;
                self.record(TraceEvent::Link {
                    node: node.as_str().into(),
                    detail: "up".into(),
                });
            }
            Action::Hold { node, call } => {
                self.need_node(node)?;
                match call {
                    None => {
                        self.net.link_mut(node).hold = true;
                        self.record(TraceEvent::Link {
                            node: node.as_str().into(),
                            detail: "holding calls".into(),
                        });
                    }
                    Some(call) => {
                        let id = self.need_call(node, call)?;
                        if let Some(pending) = self.net.get_mut(node, id) {
                            pending.held = true;
                        }
                        self.record(TraceEvent::CallControl {
                            node: node.as_str().into(),
                            call: id,
                            what: "held".into(),
                        });
                    }
                }
            }
            Action::Release { node } => {
                self.need_node(node)?;
                self.net.link_mut(node).hold = false;
                self.record(TraceEvent::Link {
                    node: node.as_str().into(),
                    detail: "released".into(),
                });
                let held: Vec<CallId> = self
                    .net
                    .pending
                    .get(node)
                    .map(|calls| calls.iter().filter(|c| c.held).map(|c| c.id).collect())
                    .unwrap_or_default();
                for call in held {
                    self.record(TraceEvent::CallControl {
                        node: node.as_str().into(),
                        call,
                        what: "delivered".into(),
                    });
                    self.deliver(node, call);
                }
            }
            Action::Deliver { node, call } => {
                self.need_node(node)?;
                let id = self.need_call(node, call)?;
                self.record(TraceEvent::CallControl {
                    node: node.as_str().into(),
                    call: id,
                    what: "delivered".into(),
                });
                self.deliver(node, id);
            }
            Action::Reorder {
                node,
                call,
                position,
            } => {
                self.need_node(node)?;
                let id = self.need_call(node, call)?;
                self.net.reorder(node, id, *position);
                self.record(TraceEvent::CallControl {
                    node: node.as_str().into(),
                    call: id,
                    what: format!("moved to position {position}").into(),
                });
            }
            Action::Drop { node, call } => {
                self.need_node(node)?;
                let id = self.need_call(node, call)?;
                if let Some(pending) = self.net.take(node, id) {
                    self.record(TraceEvent::CallControl {
                        node: node.as_str().into(),
                        call: id,
                        what: "dropped".into(),
                    });
                    self.queue.push(
                        self.tick,
                        Event::Fail {
                            node: self.server.texts.text(node),
                            call: id,
                            rpc: Box::new(pending.rpc),
                            reason: "dropped".into(),
                        },
                    );
                }
            }
            Action::Delay { node, call, by } => {
                self.need_node(node)?;
                let id = self.need_call(node, call)?;
                let at = self.tick + by.ticks();
                if let Some(pending) = self.net.get_mut(node, id) {
                    pending.held = false;
                    pending.deliver_at = at;
                }
                self.queue.push(
                    at,
                    Event::Deliver {
                        node: self.server.texts.text(node),
                        call: id,
                    },
                );
                self.record(TraceEvent::CallControl {
                    node: node.as_str().into(),
                    call: id,
                    what: format!("delayed by {by}").into(),
                });
            }
            Action::Advance { by } => {
                let target = self.tick + by.ticks();
                self.run_until(target, bound)?;
            }
            Action::Step {} => {
                self.step();
            }
            Action::ProcessEval { eval } => {
                let id = match eval {
                    None => None,
                    Some(reference) => {
                        let ready = self.server.state.broker.ready_ids();
                        let found = self
                            .resolve_evals(reference)
                            .into_iter()
                            .find(|id| ready.contains(id));
                        Some(found.ok_or(ActionError::NotFound {
                            what: "ready eval",
                            reference: reference.clone(),
                        })?)
                    }
                };
                self.server_input(ServerInput::ProcessEval { eval: id });
            }
            Action::RunUntilIdle {} => {
                self.run_until_idle(bound)?;
            }
            Action::Assert {
                profiles,
                note,
                checks,
            } => {
                let applies = profiles.as_ref().is_none_or(|filters| {
                    filters
                        .iter()
                        .any(|f| crate::profile::profile_matches(&self.profile.name, f))
                });
                if applies {
                    if let Some(note) = note {
                        self.record(TraceEvent::Action {
                            text: format!("assert: {note}").into(),
                        });
                    }
                    for check in checks {
                        let (ok, detail) = crate::scenario::assert::evaluate(self, check);
                        if ok {
                            self.assertions.0 += 1;
                        } else {
                            self.assertions.1 += 1;
                        }
                        self.record(TraceEvent::Assertion {
                            ok,
                            detail: detail.into(),
                        });
                    }
                }
            }
            Action::PromoteDeployment { .. }
            | Action::PauseDeployment { .. }
            | Action::ResumeDeployment { .. }
            | Action::FailDeployment { .. }
            | Action::UnblockDeployment { .. }
            | Action::SetAllocHealth { .. } => self.deployment_action(action)?,
            Action::Gc {} => self.server_input(ServerInput::Gc),
            Action::Note { text } => {
                let _ = text;
            }
        }
        Ok(())
    }

    /// The state as the UI renders it.
    pub fn snapshot(&self) -> Snapshot {
        let state = &self.server.state;
        let nodes = self
            .clients
            .iter()
            .map(|(id, client)| {
                let record = state.nodes.get(id);
                let link = self.net.link(id);
                NodeSnapshot {
                    id: id.clone(),
                    name: client.record.node.name.clone(),
                    status: record.map_or("unregistered".to_string(), |r| {
                        r.node.status.as_str().to_string()
                    }),
                    eligible: record.is_some_and(|r| {
                        r.node.scheduling_eligibility
                            == crate::model::SchedulingEligibility::Eligible
                    }),
                    draining: record.is_some_and(|r| r.node.draining()),
                    link_up: link.up,
                    holding: link.hold,
                    ttl_deadline: state.heartbeat_timers.get(id).copied(),
                    next_heartbeat: client.next_heartbeat,
                    last_heartbeat_ok: client.last_heartbeat_ok,
                    client_allocs: client
                        .runners
                        .iter()
                        .map(|(id, runner)| (id.clone(), runner.client_status.as_str().to_string()))
                        .collect(),
                    pending_updates: client.pending_updates.keys().cloned().collect(),
                }
            })
            .collect();
        let allocs = state
            .allocs
            .values()
            .map(|alloc| AllocSnapshot {
                id: alloc.id.clone(),
                name: alloc.name.clone(),
                name_index: alloc.name_index(),
                job: alloc.job_id.clone(),
                group: alloc.task_group.clone(),
                node: alloc.node_id.clone(),
                client_status: alloc.client_status.as_str().to_string(),
                desired_status: alloc.desired_status.as_str().to_string(),
                job_version: alloc.job_version(),
                alloc_states: alloc
                    .alloc_states
                    .iter()
                    .map(|s| (s.value.clone(), time_tick(s.time)))
                    .collect(),
                task_states: alloc
                    .task_states
                    .iter()
                    .map(|(name, s)| (name.clone(), s.state.clone()))
                    .collect(),
                previous: alloc.previous_allocation.clone(),
                next: alloc.next_allocation.clone(),
                followup_eval: alloc.followup_eval_id.clone(),
                create_index: alloc.create_index,
                alloc_modify_index: alloc.alloc_modify_index,
            })
            .collect();
        let evals = state
            .eval_order
            .iter()
            .map(|id| {
                let record = &state.evals[id];
                EvalSnapshot {
                    id: id.clone(),
                    trigger: record.eval.triggered_by.clone(),
                    status: record.eval.status.as_str().to_string(),
                    wait_until: record.wait_until,
                    job: record.eval.job_id.clone(),
                    node: record.eval.node_id.clone(),
                    created_tick: record.created_tick,
                    ready: state.broker.ready.iter().any(|(_, _, r)| r == id),
                    processed_tick: record.outcome.as_ref().map(|o| o.tick),
                }
            })
            .collect();
        let calls = self
            .net
            .pending
            .iter()
            .map(|(node, calls)| {
                (
                    node.clone(),
                    calls
                        .iter()
                        .map(|c| CallSnapshot {
                            id: c.id,
                            code: c.rpc.code().to_string(),
                            rpc: c.rpc.name().to_string(),
                            held: c.held,
                            sent_at: c.sent_at,
                            deliver_at: c.deliver_at,
                        })
                        .collect(),
                )
            })
            .collect();
        Snapshot {
            tick: self.tick,
            profile: self.profile.name.clone(),
            nodes,
            allocs,
            evals,
            calls,
            next_event: self.queue.peek_tick(),
        }
    }
}

/// The state as the UI renders it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Current tick.
    pub tick: Tick,
    /// Profile name.
    pub profile: String,
    /// Nodes in ID order.
    pub nodes: Vec<NodeSnapshot>,
    /// Allocs in ID order.
    pub allocs: Vec<AllocSnapshot>,
    /// Evals in creation order.
    pub evals: Vec<EvalSnapshot>,
    /// Calls in flight per node, in list order.
    pub calls: BTreeMap<String, Vec<CallSnapshot>>,
    /// Tick of the next queued event.
    pub next_event: Option<Tick>,
}

/// A node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeSnapshot {
    /// ID.
    pub id: String,
    /// Name.
    pub name: String,
    /// Server-side status.
    pub status: String,
    /// Eligible for placements.
    pub eligible: bool,
    /// Draining.
    pub draining: bool,
    /// The client's link is up.
    pub link_up: bool,
    /// New calls are held.
    pub holding: bool,
    /// When the server's heartbeat timer fires.
    pub ttl_deadline: Option<Tick>,
    /// When the client heartbeats next.
    pub next_heartbeat: Option<Tick>,
    /// The client's last successful heartbeat.
    pub last_heartbeat_ok: Option<Tick>,
    /// The client's own view: alloc ID → local status.
    pub client_allocs: BTreeMap<String, String>,
    /// Alloc IDs with updates queued on the client.
    pub pending_updates: Vec<String>,
}

/// An allocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocSnapshot {
    /// ID.
    pub id: String,
    /// Name.
    pub name: String,
    /// Name index.
    pub name_index: u32,
    /// Job.
    pub job: String,
    /// Group.
    pub group: String,
    /// Node.
    pub node: String,
    /// Client status (server view).
    pub client_status: String,
    /// Desired status.
    pub desired_status: String,
    /// Job version.
    pub job_version: u64,
    /// AllocStates: (value, tick).
    pub alloc_states: Vec<(String, Tick)>,
    /// Task states: task → state.
    pub task_states: BTreeMap<String, String>,
    /// Previous alloc.
    pub previous: String,
    /// Next alloc.
    pub next: String,
    /// Follow-up eval.
    pub followup_eval: String,
    /// Create index.
    pub create_index: u64,
    /// Alloc modify index.
    pub alloc_modify_index: u64,
}

/// An eval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalSnapshot {
    /// ID.
    pub id: String,
    /// Trigger.
    pub trigger: String,
    /// Status.
    pub status: String,
    /// WaitUntil.
    pub wait_until: Option<Tick>,
    /// Job.
    pub job: String,
    /// Node.
    pub node: String,
    /// Created at.
    pub created_tick: Tick,
    /// In the broker's ready queue.
    pub ready: bool,
    /// Processed at.
    pub processed_tick: Option<Tick>,
}

/// A call in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallSnapshot {
    /// Call number.
    pub id: CallId,
    /// Short code (HB, UPD, GET, REG, WATCH).
    pub code: String,
    /// RPC name.
    pub rpc: String,
    /// Held.
    pub held: bool,
    /// Sent at.
    pub sent_at: Tick,
    /// Delivered at (if not held).
    pub deliver_at: Tick,
}

#[allow(dead_code)]
fn unused(id: &str) -> &str {
    short(id)
}
