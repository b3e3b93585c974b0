//! The client side of the simulated cluster: one Nomad client agent.
//!
//! It runs the heartbeat loop (`registerAndHeartbeat`), the alloc-sync loop
//! that batches `Node.UpdateAlloc` (`allocSync`), the `GetClientAllocs`
//! watch (`watchAllocations`), one alloc runner per alloc, the
//! previous-allocation watchers (`client/allocwatcher/`), and the
//! stop-on-disconnect check (`heartbeatstop.go`). Follows Nomad's
//! `client/client.go`. Sans-I/O: [`Client::handle`] takes one
//! [`ClientInput`] and returns [`ClientEffect`]s.

pub mod runner;

use crate::model::{Allocation, ClientStatus, DesiredStatus, Time};
use crate::profile::Rules;
use crate::scenario::format::AgentSettings;
use crate::server::rpc::{AllocUpdate, Reply, Rpc};
use crate::server::{NodeRecord, tick_time};
use crate::sim::queue::Tick;
use crate::sim::rng::Rng;
use crate::sim::trace::short;
use runner::{AllocRunner, PrevWatch, RunnerAlloc, WatchState};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::rc::Rc;

/// `allocSyncIntv`: how often queued alloc updates are sent.
pub const ALLOC_SYNC_INTERVAL: Tick = 200;
/// `allocSyncRetryIntv`: the wait after a failed `Node.UpdateAlloc`.
pub const ALLOC_SYNC_RETRY: Tick = 5_000;
/// `registerRetryIntv`.
pub const REGISTER_RETRY: Tick = 15_000;
/// `getAllocRetryIntv`: the wait after a failed `GetClientAllocs`.
pub const GET_ALLOC_RETRY: Tick = 30_000;
/// `getRemoteRetryIntv`: the remote previous-alloc watcher's retry.
pub const REMOTE_WATCH_RETRY: Tick = 30_000;

/// A client timer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "timer", rename_all = "snake_case")]
pub enum ClientTimer {
    /// Heartbeat (or register) now.
    Heartbeat {
        /// Generation; stale timers are ignored.
        generation: u64,
    },
    /// Send queued alloc updates.
    AllocSync {
        /// Generation.
        generation: u64,
    },
    /// Retry the alloc watch.
    Watch {
        /// Generation.
        generation: u64,
    },
    /// An alloc runner's tasks start.
    TaskStart {
        /// Alloc ID.
        alloc: String,
    },
    /// A remote previous-alloc watcher polls again.
    WatchPoll {
        /// Alloc ID of the waiting alloc.
        alloc: String,
    },
    /// Check stop_on_client_after.
    StopAfter {
        /// Generation (bumped on every successful heartbeat).
        generation: u64,
    },
    /// The deployment health watch of an alloc checks again
    /// (min_healthy_time reached or healthy_deadline passed).
    Health {
        /// Alloc ID.
        alloc: String,
    },
}

/// An input to the client.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientInput {
    /// A timer fired.
    Timer(ClientTimer),
    /// A reply arrived.
    Reply {
        /// The RPC it answers.
        rpc: Rpc,
        /// The reply.
        reply: Reply,
    },
    /// A call failed (link down, dropped).
    Failed {
        /// The RPC.
        rpc: Rpc,
        /// Why.
        reason: String,
    },
    /// The server wrote allocs of this node: the blocking watch returns.
    AllocsChanged,
    /// The script or the UI tells the client to do something.
    User(UserAction),
}

/// What the user can make a client do.
#[derive(Debug, Clone, PartialEq)]
pub enum UserAction {
    /// Send `Node.UpdateStatus` now.
    Heartbeat,
    /// Send `Node.UpdateAlloc` now; statuses given override the local ones.
    UpdateAlloc(Option<Vec<(String, ClientStatus)>>),
    /// Pull allocs now.
    GetAllocs,
    /// Send `Node.Register` now.
    Register,
    /// A task fails (`None`: every task).
    TaskFail(String, Option<String>),
    /// A task completes.
    TaskComplete(String, Option<String>),
    /// A task restarts.
    TaskRestart(String, Option<String>),
}

/// What the client asks the simulator to do.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEffect {
    /// Send a call.
    Send(Rpc),
    /// Fire a timer at `at`.
    Timer {
        /// When.
        at: Tick,
        /// Which.
        timer: ClientTimer,
    },
    /// Record this in the trace.
    Trace(String),
}

/// One chroot_env entry as the client will build it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChrootEntry {
    /// Host path.
    pub source: String,
    /// Path in the chroot.
    pub dest: String,
    /// It would embed the alloc dir (the source is the alloc dir or above it).
    pub embeds_alloc_dir: bool,
    /// The alloc dir is skipped when embedding (#2522).
    pub alloc_dir_skipped: bool,
}

/// One client agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Client {
    /// The node it registers (never changed: shared between history
    /// checkpoints).
    pub record: Rc<NodeRecord>,
    /// Runs its loops by itself.
    pub auto: bool,
    /// How long alloc runners stay pending.
    pub task_start: Tick,
    /// The profile's switches.
    pub rules: Rules,
    /// Registered with the servers.
    pub registered: bool,
    /// The TTL of the last successful heartbeat.
    pub ttl: Tick,
    /// When the last heartbeat succeeded.
    pub last_heartbeat_ok: Option<Tick>,
    /// When the next heartbeat (or retry) is due, if scheduled.
    pub next_heartbeat: Option<Tick>,
    /// Alloc runners by alloc ID (shared between history checkpoints
    /// until written).
    pub runners: Rc<BTreeMap<String, AllocRunner>>,
    /// Updates waiting for `Node.UpdateAlloc`, by alloc ID.
    pub pending_updates: BTreeMap<String, AllocUpdate>,
    /// A `Node.UpdateAlloc` is in flight.
    pub update_in_flight: bool,
    /// A `GetClientAllocs` is in flight.
    pub watch_in_flight: bool,
    /// The watch is parked at the server (blocking query).
    pub watch_parked: bool,
    /// Timer generations: heartbeat, alloc sync, watch, stop-after.
    pub generations: [u64; 4],
    /// The chroot the client builds for tasks (never changed: shared
    /// between history checkpoints).
    pub chroot: Rc<Vec<ChrootEntry>>,
}

/// What [`Client::kick_waiters`] changes in one runner.
struct WaiterChange {
    /// The runner's alloc ID.
    id: String,
    /// Per watch, whether it ends (empty when none does).
    ending: Vec<bool>,
    /// Whether the runner's start gets scheduled.
    ready: bool,
    /// The deployment health deadline its start arms.
    deadline: Option<Time>,
}

impl Client {
    /// A client for `record`. `registered` = already registered and ready.
    pub fn new(
        record: NodeRecord,
        auto: bool,
        task_start: Tick,
        rules: Rules,
        registered: bool,
    ) -> Client {
        let chroot = Rc::new(chroot_entries(&record.agent, rules.chroot_skip_alloc_dir));
        Client {
            record: Rc::new(record),
            auto,
            task_start,
            rules,
            registered,
            ttl: 0,
            last_heartbeat_ok: if registered { Some(0) } else { None },
            next_heartbeat: None,
            runners: Rc::new(BTreeMap::new()),
            pending_updates: BTreeMap::new(),
            update_in_flight: false,
            watch_in_flight: false,
            watch_parked: false,
            generations: [0; 4],
            chroot,
        }
    }

    /// The node ID.
    pub fn id(&self) -> &str {
        &self.record.node.id
    }

    /// What the client does at tick 0: notes the chroot and starts its loops.
    pub fn start(&mut self, now: Tick, ttl: Tick) -> Vec<ClientEffect> {
        let mut out = Vec::new();
        for entry in self.chroot.iter() {
            if entry.embeds_alloc_dir {
                out.push(ClientEffect::Trace(format!(
                    "chroot_env {} -> {} contains alloc_dir {}: {}",
                    entry.source,
                    entry.dest,
                    alloc_dir(&self.record.agent),
                    if entry.alloc_dir_skipped {
                        "alloc dir skipped (#2522)"
                    } else {
                        "alloc dir embedded into itself"
                    }
                )));
            }
        }
        if !self.auto {
            return out;
        }
        if self.registered {
            self.ttl = ttl;
            self.schedule_heartbeat(now + ttl, &mut out);
            self.send_watch(&mut out);
        } else {
            self.schedule_heartbeat(now, &mut out);
        }
        out
    }

    /// Handles one input; appends its effects to `out`.
    pub fn handle(
        &mut self,
        now: Tick,
        input: ClientInput,
        rng: &mut Rng,
        out: &mut Vec<ClientEffect>,
    ) {
        match input {
            ClientInput::Timer(timer) => self.on_timer(now, timer, rng, out),
            ClientInput::Reply { rpc, reply } => self.on_reply(now, rpc, reply, rng, out),
            ClientInput::Failed { rpc, reason } => {
                self.on_failure(now, rpc, &reason, false, rng, out)
            }
            ClientInput::AllocsChanged => {
                if self.auto && self.watch_parked && !self.watch_in_flight {
                    self.send_watch(out);
                }
            }
            ClientInput::User(action) => self.on_user(now, action, out),
        }
    }

    fn schedule_heartbeat(&mut self, at: Tick, out: &mut Vec<ClientEffect>) {
        self.generations[0] += 1;
        self.next_heartbeat = Some(at);
        out.push(ClientEffect::Timer {
            at,
            timer: ClientTimer::Heartbeat {
                generation: self.generations[0],
            },
        });
    }

    fn schedule_sync(&mut self, at: Tick, out: &mut Vec<ClientEffect>) {
        self.generations[1] += 1;
        out.push(ClientEffect::Timer {
            at,
            timer: ClientTimer::AllocSync {
                generation: self.generations[1],
            },
        });
    }

    fn send_heartbeat(&mut self, out: &mut Vec<ClientEffect>) {
        if self.registered {
            out.push(ClientEffect::Send(Rpc::UpdateStatus));
        } else {
            let mut record = (*self.record).clone();
            record.node.status = crate::model::NodeStatus::Initializing;
            out.push(ClientEffect::Send(Rpc::Register {
                node: Box::new(record),
            }));
        }
    }

    fn send_watch(&mut self, out: &mut Vec<ClientEffect>) {
        self.watch_in_flight = true;
        self.watch_parked = false;
        out.push(ClientEffect::Send(Rpc::GetClientAllocs));
    }

    fn send_updates(&mut self, out: &mut Vec<ClientEffect>) {
        if self.pending_updates.is_empty() {
            return;
        }
        let updates: Vec<AllocUpdate> = std::mem::take(&mut self.pending_updates)
            .into_values()
            .collect();
        self.update_in_flight = true;
        out.push(ClientEffect::Send(Rpc::UpdateAlloc { updates }));
    }

    /// Queues the runner's current state for the next `Node.UpdateAlloc`.
    fn queue_update(&mut self, now: Tick, alloc: &str, out: &mut Vec<ClientEffect>) {
        let Some(runner) = self.runners.get(alloc) else {
            return;
        };
        let was_empty = self.pending_updates.is_empty();
        self.pending_updates
            .insert(alloc.to_string(), runner.update());
        if self.auto && was_empty && !self.update_in_flight {
            // The next allocSync tick.
            let at = (now / ALLOC_SYNC_INTERVAL + 1) * ALLOC_SYNC_INTERVAL;
            self.schedule_sync(at, out);
        }
    }

    fn on_timer(
        &mut self,
        now: Tick,
        timer: ClientTimer,
        rng: &mut Rng,
        out: &mut Vec<ClientEffect>,
    ) {
        match timer {
            ClientTimer::Heartbeat { generation } => {
                if generation == self.generations[0] {
                    self.next_heartbeat = None;
                    self.send_heartbeat(out);
                }
            }
            ClientTimer::AllocSync { generation } => {
                if generation == self.generations[1] && !self.update_in_flight {
                    self.send_updates(out);
                }
            }
            ClientTimer::Watch { generation } => {
                if generation == self.generations[2] && !self.watch_in_flight {
                    self.send_watch(out);
                }
            }
            ClientTimer::TaskStart { alloc } => self.try_start(now, &alloc, out),
            ClientTimer::WatchPoll { alloc } => {
                if let Some(runner) = self.runners.get(&alloc)
                    && let Some(watch) = runner
                        .watches
                        .iter()
                        .find(|w| w.state == WatchState::Remote)
                {
                    out.push(ClientEffect::Send(Rpc::GetAlloc {
                        alloc_id: watch.query_id.clone(),
                    }));
                }
            }
            ClientTimer::StopAfter { generation } => {
                if generation == self.generations[3] {
                    self.check_stop_after(now, rng, out);
                }
            }
            ClientTimer::Health { alloc } => {
                if self.check_health(now, &alloc, out) {
                    self.queue_update(now, &alloc, out);
                }
            }
        }
    }

    fn on_reply(
        &mut self,
        now: Tick,
        rpc: Rpc,
        reply: Reply,
        rng: &mut Rng,
        out: &mut Vec<ClientEffect>,
    ) {
        if let Reply::Error {
            message,
            node_not_found,
        } = &reply
        {
            self.on_failure(now, rpc, message, *node_not_found, rng, out);
            return;
        }
        match (rpc, reply) {
            (Rpc::Register { .. } | Rpc::UpdateStatus, Reply::Heartbeat { ttl }) => {
                let first = !self.registered;
                self.registered = true;
                self.ttl = ttl;
                self.last_heartbeat_ok = Some(now);
                self.generations[3] += 1;
                if self.auto {
                    self.schedule_heartbeat(now + ttl, out);
                    if first || (!self.watch_in_flight && !self.watch_parked) {
                        self.send_watch(out);
                    }
                }
            }
            (Rpc::UpdateAlloc { .. }, Reply::Ack) => {
                self.update_in_flight = false;
                if self.auto && !self.pending_updates.is_empty() {
                    let at = (now / ALLOC_SYNC_INTERVAL + 1) * ALLOC_SYNC_INTERVAL;
                    self.schedule_sync(at, out);
                }
            }
            (Rpc::GetClientAllocs, Reply::Allocs { allocs }) => {
                self.watch_in_flight = false;
                self.watch_parked = true;
                self.run_allocs(now, allocs, out);
            }
            (Rpc::GetAlloc { .. }, Reply::Alloc { alloc }) => self.on_remote_watch(now, alloc, out),
            _ => {}
        }
    }

    fn on_failure(
        &mut self,
        now: Tick,
        rpc: Rpc,
        reason: &str,
        node_not_found: bool,
        rng: &mut Rng,
        out: &mut Vec<ClientEffect>,
    ) {
        match rpc {
            Rpc::Register { .. } | Rpc::UpdateStatus => {
                if node_not_found {
                    self.registered = false;
                }
                if self.auto {
                    let wait = self.heartbeat_retry(now, rng);
                    self.schedule_heartbeat(now + wait, out);
                }
                self.arm_stop_after(now, out);
            }
            Rpc::UpdateAlloc { updates } => {
                self.update_in_flight = false;
                // Keep the updates, unless newer ones were queued meanwhile.
                for update in updates {
                    self.pending_updates
                        .entry(update.id.clone())
                        .or_insert(update);
                }
                if self.auto {
                    let wait = ALLOC_SYNC_RETRY + rng.stagger(ALLOC_SYNC_RETRY);
                    self.schedule_sync(now + wait, out);
                }
                out.push(ClientEffect::Trace(format!(
                    "alloc updates kept for retry: {reason}"
                )));
            }
            Rpc::GetClientAllocs => {
                self.watch_in_flight = false;
                self.watch_parked = false;
                if self.auto {
                    self.generations[2] += 1;
                    let wait = GET_ALLOC_RETRY + rng.stagger(GET_ALLOC_RETRY);
                    out.push(ClientEffect::Timer {
                        at: now + wait,
                        timer: ClientTimer::Watch {
                            generation: self.generations[2],
                        },
                    });
                }
            }
            Rpc::GetAlloc { alloc_id } => {
                // The remote watcher retries forever; its context is never cancelled.
                let waiting: Vec<String> = self
                    .runners
                    .iter()
                    .filter(|(_, runner)| {
                        runner
                            .watches
                            .iter()
                            .any(|w| w.state == WatchState::Remote && w.query_id == alloc_id)
                    })
                    .map(|(id, _)| id.clone())
                    .collect();
                for alloc in waiting {
                    out.push(ClientEffect::Trace(format!(
                        "{} previous-alloc watcher: {reason}; retrying",
                        short(&alloc)
                    )));
                    let wait = REMOTE_WATCH_RETRY + rng.stagger(REMOTE_WATCH_RETRY);
                    out.push(ClientEffect::Timer {
                        at: now + wait,
                        timer: ClientTimer::WatchPoll { alloc },
                    });
                }
            }
        }
    }

    /// Nomad's `getHeartbeatRetryIntv`.
    fn heartbeat_retry(&self, now: Tick, rng: &mut Rng) -> Tick {
        let Some(last) = self.last_heartbeat_ok.filter(|_| self.registered) else {
            return REGISTER_RETRY + rng.stagger(REGISTER_RETRY);
        };
        let deadline = last + self.ttl;
        let mut left = deadline as i64 - now as i64;
        if left < -30_000 {
            left = -left;
        } else if left < 0 {
            return 1000 + rng.stagger(1000);
        }
        let stagger = rng.stagger(left as u64);
        if stagger < 1000 {
            1000 + rng.stagger(1000)
        } else if stagger > 30_000 {
            25_000 + rng.stagger(5000)
        } else {
            stagger
        }
    }

    /// Schedules the stop_on_client_after check at the earliest deadline.
    fn arm_stop_after(&mut self, now: Tick, out: &mut Vec<ClientEffect>) {
        let last = self.last_heartbeat_ok.unwrap_or(0);
        let earliest = self
            .runners
            .values()
            .filter(|runner| !runner.client_status.is_terminal())
            .filter_map(|runner| self.stop_after(&runner.alloc))
            .min();
        if let Some(stop_after) = earliest {
            let at = (last + stop_after + 1).max(now);
            self.generations[3] += 1;
            out.push(ClientEffect::Timer {
                at,
                timer: ClientTimer::StopAfter {
                    generation: self.generations[3],
                },
            });
        }
    }

    fn stop_after(&self, alloc: &RunnerAlloc) -> Option<Tick> {
        let tg = alloc.job_task_group()?;
        let stop = match self.rules.disconnect_config {
            crate::profile::DisconnectConfig::Legacy => tg.stop_after_client_disconnect,
            crate::profile::DisconnectConfig::BlockLegacyWins => tg.stop_on_client_after(true),
            crate::profile::DisconnectConfig::BlockOnly => tg.stop_on_client_after(false),
        }?;
        let ms = stop.as_nanos() / 1_000_000;
        if ms <= 0 { None } else { Some(ms as Tick) }
    }

    fn check_stop_after(&mut self, now: Tick, _rng: &mut Rng, out: &mut Vec<ClientEffect>) {
        let last = self.last_heartbeat_ok.unwrap_or(0);
        let due: Vec<String> = self
            .runners
            .iter()
            .filter(|(_, runner)| !runner.client_status.is_terminal())
            .filter(|(_, runner)| {
                self.stop_after(&runner.alloc)
                    .is_some_and(|stop| now > last + stop)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for alloc in due {
            if let Some(runner) = Rc::make_mut(&mut self.runners).get_mut(&alloc) {
                runner.finish(
                    tick_time(now),
                    ClientStatus::Complete,
                    None,
                    "stopped after client disconnect",
                );
                out.push(ClientEffect::Trace(runner_line(
                    &runner.alloc.name,
                    &alloc,
                    &["stopped: no heartbeat for stop_on_client_after"],
                )));
            }
            self.queue_update(now, &alloc, out);
        }
        self.arm_stop_after(now, out);
    }

    fn on_user(&mut self, now: Tick, action: UserAction, out: &mut Vec<ClientEffect>) {
        match action {
            UserAction::Heartbeat | UserAction::Register => {
                if matches!(action, UserAction::Register) {
                    self.registered = false;
                }
                self.send_heartbeat(out);
            }
            UserAction::GetAllocs => self.send_watch(out),
            UserAction::UpdateAlloc(statuses) => {
                if let Some(statuses) = statuses {
                    for (alloc, status) in statuses {
                        let mut healthy_at = None;
                        if let Some(runner) = Rc::make_mut(&mut self.runners).get_mut(&alloc) {
                            let started = status == ClientStatus::Running
                                && runner.client_status != ClientStatus::Running;
                            runner.set_status(tick_time(now), status);
                            if started {
                                healthy_at = runner.health_tasks_started(tick_time(now));
                            }
                        }
                        self.health_timers(&alloc, healthy_at.into_iter().collect(), out);
                        self.check_health(now, &alloc, out);
                        self.queue_update(now, &alloc, out);
                    }
                }
                self.send_updates(out);
            }
            UserAction::TaskFail(alloc, task) => {
                if let Some(runner) = Rc::make_mut(&mut self.runners).get_mut(&alloc) {
                    runner.task_done(tick_time(now), task.as_deref(), true);
                    out.push(ClientEffect::Trace(runner_line(
                        &runner.alloc.name,
                        &alloc,
                        &["task failed -> ", runner.client_status.as_str()],
                    )));
                }
                self.check_health(now, &alloc, out);
                self.queue_update(now, &alloc, out);
                self.kick_waiters(now, out);
            }
            UserAction::TaskComplete(alloc, task) => {
                if let Some(runner) = Rc::make_mut(&mut self.runners).get_mut(&alloc) {
                    runner.task_done(tick_time(now), task.as_deref(), false);
                    out.push(ClientEffect::Trace(runner_line(
                        &runner.alloc.name,
                        &alloc,
                        &["task completed -> ", runner.client_status.as_str()],
                    )));
                }
                self.check_health(now, &alloc, out);
                self.queue_update(now, &alloc, out);
                self.kick_waiters(now, out);
            }
            UserAction::TaskRestart(alloc, task) => {
                if let Some(runner) = Rc::make_mut(&mut self.runners).get_mut(&alloc) {
                    runner.restart(tick_time(now), task.as_deref());
                    out.push(ClientEffect::Trace(runner_line(
                        &runner.alloc.name,
                        &alloc,
                        &["task restarted"],
                    )));
                    let at = runner.health_tasks_started(tick_time(now));
                    self.health_timers(&alloc, at.into_iter().collect(), out);
                }
                self.queue_update(now, &alloc, out);
            }
        }
    }

    /// `runAllocs`: add, update and remove alloc runners from a pull.
    fn run_allocs(&mut self, now: Tick, allocs: Vec<Rc<Allocation>>, out: &mut Vec<ClientEffect>) {
        let now_time = tick_time(now);
        let mut listed: Vec<&str> = allocs.iter().map(|alloc| alloc.id.as_str()).collect();
        // Sorted already when the server's node index listed them.
        listed.sort_unstable();
        // Runners the server no longer lists are garbage-collected.
        let gone: Vec<String> = self
            .runners
            .keys()
            .filter(|id| listed.binary_search(&id.as_str()).is_err())
            .cloned()
            .collect();
        for id in gone {
            if let Some(runner) = Rc::make_mut(&mut self.runners).remove(&id) {
                out.push(ClientEffect::Trace(runner_line(
                    &runner.alloc.name,
                    &id,
                    &["runner removed (no longer on the server)"],
                )));
            }
        }
        for alloc in allocs {
            match self.runners.get(&alloc.id) {
                None => {
                    if alloc.terminal_status() {
                        continue;
                    }
                    self.add_runner(now, alloc, out);
                }
                Some(runner) => {
                    if alloc.alloc_modify_index <= runner.alloc.alloc_modify_index {
                        // Same or stale version: keep the newest one.
                        continue;
                    }
                    let reconnect = alloc.client_status == ClientStatus::Unknown
                        && !(self.rules.client_skip_reconnect_for_stopped
                            && alloc.server_terminal_status());
                    let id = alloc.id.clone();
                    if reconnect {
                        if let Some(runner) = Rc::make_mut(&mut self.runners).get_mut(&id) {
                            runner.reconnect(now_time, alloc);
                            out.push(ClientEffect::Trace(runner_line(
                                &runner.alloc.name,
                                &id,
                                &["reconnect: reports ", runner.client_status.as_str()],
                            )));
                        }
                        self.queue_update(now, &id, out);
                        continue;
                    }
                    let stop = alloc.desired_status != DesiredStatus::Run;
                    let mut changed = false;
                    let mut health_times = Vec::new();
                    if let Some(runner) = Rc::make_mut(&mut self.runners).get_mut(&id) {
                        let previous_deployment = runner.alloc.deployment_id.clone();
                        runner.alloc = RunnerAlloc::of(&alloc);
                        if !stop {
                            health_times =
                                runner.health_deployment_changed(now_time, &previous_deployment);
                        }
                        if stop && !runner.client_status.is_terminal() {
                            runner.finish(
                                now_time,
                                ClientStatus::Complete,
                                None,
                                "alloc stopped by the server",
                            );
                            out.push(ClientEffect::Trace(runner_line(
                                &runner.alloc.name,
                                &id,
                                &["stopped by the server -> complete"],
                            )));
                            changed = true;
                        }
                    }
                    self.health_timers(&id, health_times, out);
                    if changed {
                        self.queue_update(now, &id, out);
                        self.kick_waiters(now, out);
                    }
                }
            }
        }
    }

    fn add_runner(&mut self, now: Tick, alloc: Rc<Allocation>, out: &mut Vec<ClientEffect>) {
        let id = alloc.id.clone();
        let mut watches = Vec::new();
        let mut watched: Vec<String> = Vec::new();
        if !alloc.previous_allocation.is_empty() {
            watched.push(alloc.previous_allocation.clone());
        }
        watched.extend(alloc.preempted_allocations.iter().cloned());
        for watched_id in watched {
            let local = self.runners.contains_key(&watched_id);
            // #10200: the remote watcher for a preempted alloc asked for the
            // alloc's PreviousAllocation instead of the alloc it watches.
            let is_preempted = alloc.preempted_allocations.contains(&watched_id);
            let query_id = if is_preempted && !self.rules.preempt_watcher_fixed {
                alloc.previous_allocation.clone()
            } else {
                watched_id.clone()
            };
            watches.push(PrevWatch {
                watched: watched_id,
                query_id,
                state: if local {
                    WatchState::Local
                } else {
                    WatchState::Remote
                },
            });
        }
        let runner = AllocRunner::new(&alloc, watches);
        let remote: Vec<PrevWatch> = runner
            .watches
            .iter()
            .filter(|w| w.state == WatchState::Remote)
            .cloned()
            .collect();
        let waiting = if runner.watches.is_empty() {
            String::new()
        } else {
            format!(
                ", waiting for {}",
                runner
                    .watches
                    .iter()
                    .map(|w| format!(
                        "{} ({})",
                        short(&w.watched),
                        if w.state == WatchState::Local {
                            "local"
                        } else {
                            "remote"
                        }
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        out.push(ClientEffect::Trace(runner_line(
            &alloc.name,
            &id,
            &["runner added", &waiting],
        )));
        Rc::make_mut(&mut self.runners).insert(id.clone(), runner);
        for watch in remote {
            out.push(ClientEffect::Send(Rpc::GetAlloc {
                alloc_id: watch.query_id,
            }));
        }
        if self.task_start > 0 {
            self.queue_update(now, &id, out);
        }
        self.kick_waiters(now, out);
    }

    /// Starts runners whose watches are all done and whose start time came.
    fn kick_waiters(&mut self, now: Tick, out: &mut Vec<ClientEffect>) {
        // One read-only pass finds the runners that change: a local watch
        // of a terminal alloc ends (only a local watch asks whether the
        // alloc it watches is terminal, by looking it up), and a pending
        // runner whose watches are all done gets its start scheduled.
        // Write only if something changes: the runners may be shared with a
        // history checkpoint.
        let runners = &self.runners;
        let local_done = |w: &PrevWatch| {
            w.state == WatchState::Local
                && runners
                    .get(&w.watched)
                    .is_some_and(|watched| watched.client_status.is_terminal())
        };
        let mut changed: Vec<WaiterChange> = Vec::new();
        for (id, runner) in runners.iter() {
            let ending: Vec<bool> = if runner.watches.iter().any(local_done) {
                runner.watches.iter().map(local_done).collect()
            } else {
                Vec::new()
            };
            let ready = runner.client_status == ClientStatus::Pending
                && !runner.start_scheduled
                && runner
                    .watches
                    .iter()
                    .all(|w| w.state == WatchState::Done || local_done(w));
            if !ending.is_empty() || ready {
                changed.push(WaiterChange {
                    id: id.clone(),
                    ending,
                    ready,
                    deadline: None,
                });
            }
        }
        if changed.is_empty() {
            return;
        }
        // The runners' statuses do not change below: what the pass found
        // holds while the changes are written, in the runners' order.
        let runners = Rc::make_mut(&mut self.runners);
        for change in &mut changed {
            let Some(runner) = runners.get_mut(change.id.as_str()) else {
                change.ready = false;
                continue;
            };
            for (watch, ends) in runner
                .watches
                .iter_mut()
                .zip(std::mem::take(&mut change.ending))
            {
                if ends {
                    watch.state = WatchState::Done;
                }
            }
            if change.ready {
                runner.start_scheduled = true;
                change.deadline = runner.arm_health(tick_time(now));
            }
        }
        for change in changed.iter().filter(|change| change.ready) {
            self.health_timers(&change.id, change.deadline.iter().copied().collect(), out);
        }
        for WaiterChange { id, .. } in changed.into_iter().filter(|change| change.ready) {
            if self.task_start == 0 {
                self.try_start(now, &id, out);
            } else {
                out.push(ClientEffect::Timer {
                    at: now + self.task_start,
                    timer: ClientTimer::TaskStart { alloc: id },
                });
            }
        }
    }

    fn try_start(&mut self, now: Tick, alloc: &str, out: &mut Vec<ClientEffect>) {
        let Some(runner) = Rc::make_mut(&mut self.runners).get_mut(alloc) else {
            return;
        };
        if runner.client_status != ClientStatus::Pending
            || runner.alloc.desired_status != DesiredStatus::Run
        {
            return;
        }
        runner.start(tick_time(now));
        out.push(ClientEffect::Trace(runner_line(
            &runner.alloc.name,
            alloc,
            &["running"],
        )));
        let healthy_at = runner.health_tasks_started(tick_time(now));
        self.health_timers(alloc, healthy_at.into_iter().collect(), out);
        self.queue_update(now, alloc, out);
    }

    /// Schedules the deployment health watch's checks of an alloc.
    fn health_timers(&mut self, alloc: &str, times: Vec<Time>, out: &mut Vec<ClientEffect>) {
        for at in times {
            out.push(ClientEffect::Timer {
                at: crate::server::time_tick(at),
                timer: ClientTimer::Health {
                    alloc: alloc.to_string(),
                },
            });
        }
    }

    /// Runs the deployment health watch of an alloc; reports whether it set
    /// the alloc's health (the caller queues the update).
    fn check_health(&mut self, now: Tick, alloc: &str, out: &mut Vec<ClientEffect>) -> bool {
        // Write only if a watch runs: the runners may be shared with a
        // history checkpoint.
        if self
            .runners
            .get(alloc)
            .is_none_or(|runner| runner.health_watch.is_none())
        {
            return false;
        }
        let Some(runner) = Rc::make_mut(&mut self.runners).get_mut(alloc) else {
            return false;
        };
        let Some(healthy) = runner.check_health(tick_time(now)) else {
            return false;
        };
        out.push(ClientEffect::Trace(runner_line(
            &runner.alloc.name,
            alloc,
            &[
                "deployment health: ",
                if healthy { "healthy" } else { "unhealthy" },
            ],
        )));
        true
    }

    fn on_remote_watch(
        &mut self,
        now: Tick,
        alloc: Option<Rc<Allocation>>,
        out: &mut Vec<ClientEffect>,
    ) {
        let (done, watched_id) = match &alloc {
            None => (true, None),
            Some(alloc) => (
                alloc.client_terminal_status() || alloc.client_status == ClientStatus::Unknown,
                Some(alloc.id.clone()),
            ),
        };
        let mut retry = Vec::new();
        let watching = |w: &PrevWatch| {
            w.state == WatchState::Remote && watched_id.as_deref().is_none_or(|id| id == w.query_id)
        };
        if done {
            // Write only if a watch finishes: the runners may be shared
            // with a history checkpoint.
            let finishes = self
                .runners
                .values()
                .any(|runner| runner.watches.iter().any(watching));
            if finishes {
                for runner in Rc::make_mut(&mut self.runners).values_mut() {
                    for watch in &mut runner.watches {
                        if watching(watch) {
                            watch.state = WatchState::Done;
                        }
                    }
                }
            }
        } else {
            for (id, runner) in self.runners.iter() {
                for watch in &runner.watches {
                    if watching(watch) {
                        retry.push(id.clone());
                    }
                }
            }
        }
        for alloc in retry {
            // A blocking query in Nomad; here: poll again after a while.
            out.push(ClientEffect::Timer {
                at: now + REMOTE_WATCH_RETRY,
                timer: ClientTimer::WatchPoll { alloc },
            });
        }
        self.kick_waiters(now, out);
    }

    /// The time of the last successful heartbeat as Nomad time.
    pub fn last_ok_time(&self) -> Time {
        self.last_heartbeat_ok.map_or(Time::ZERO, tick_time)
    }
}

/// A trace line about one alloc runner: the alloc's name, its short ID,
/// then `words` joined, written into a string of exactly the line's length
/// (the trace keeps it as it is) without the formatting machinery (a run
/// writes several such lines per alloc).
fn runner_line(name: &str, alloc: &str, words: &[&str]) -> String {
    let alloc = short(alloc);
    let len = name.len() + alloc.len() + 2 + words.iter().map(|word| word.len()).sum::<usize>();
    let mut line = String::with_capacity(len);
    line.push_str(name);
    line.push(' ');
    line.push_str(alloc);
    line.push(' ');
    for word in words {
        line.push_str(word);
    }
    line
}

/// The client's alloc dir.
pub fn alloc_dir(agent: &AgentSettings) -> String {
    agent.alloc_dir.clone().unwrap_or_else(|| {
        format!(
            "{}/alloc",
            agent
                .data_dir
                .clone()
                .unwrap_or_else(|| "/opt/nomad/data".to_string())
                .trim_end_matches('/')
        )
    })
}

/// The chroot entries and whether each would embed the alloc dir.
pub fn chroot_entries(agent: &AgentSettings, skip_alloc_dir: bool) -> Vec<ChrootEntry> {
    let alloc = alloc_dir(agent);
    agent
        .chroot_env
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|(source, dest)| {
            let trimmed = source.trim_end_matches('/');
            let embeds =
                trimmed.is_empty() || alloc == trimmed || alloc.starts_with(&format!("{trimmed}/"));
            ChrootEntry {
                source,
                dest,
                embeds_alloc_dir: embeds,
                alloc_dir_skipped: embeds && skip_alloc_dir,
            }
        })
        .collect()
}
