//! The server side of the simulated cluster: one leader's state machine.
//!
//! It keeps the state store (nodes, jobs, allocs, evals, deployments) and
//! the leader's timers, and handles client RPCs, heartbeat expiry, job and
//! node operations, and eval processing. It is sans-I/O: [`Server::handle`]
//! takes one [`ServerInput`] at a time and returns [`ServerEffect`]s, which
//! only the simulator (`sim/`) turns into events.
//!
//! Follows Nomad's `nomad/heartbeat.go`, `nomad/node_endpoint.go`,
//! `nomad/eval_broker.go`, `nomad/blocked_evals.go`, `nomad/plan_apply.go`,
//! `nomad/state/state_store.go` and `scheduler/generic_sched.go` /
//! `scheduler/scheduler_system.go` (see `nomad-semantics.md` §2).

pub mod broker;
pub mod deployments;
pub mod heartbeat;
pub mod jobs;
pub mod node_endpoint;
pub mod node_table;
pub mod plan;
pub mod rpc;
pub mod scheduler;

use crate::model::{Allocation, Deployment, Evaluation, Job, Node, Time};
use crate::profile::Rules;
use crate::reconciler::filters::{AllocKey, KeyFacts, id_prefix};
use crate::scenario::format::{AgentSettings, JobSpec};
use crate::sim::chunk_map::{ChunkMap, ChunkVec};
use crate::sim::net::CallId;
use crate::sim::queue::Tick;
use crate::sim::rng::Rng;
use crate::sim::trace::{
    BrokerState, EvalCreated, GroupUpdates, NodeName, SharedTexts, TraceEvent,
};
use broker::Broker;
use node_table::NodeTable;
use rpc::{Reply, Rpc};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// Unix nanoseconds of tick 0 (2026-01-01T00:00:00Z): the logical clock
/// is shown to Nomad's types as wall time from here.
pub const EPOCH_NANOS: i64 = 1_767_225_600_000_000_000;

/// The wall time of `tick`.
pub fn tick_time(tick: Tick) -> Time {
    Time::from_unix_nanos(
        EPOCH_NANOS + i64::try_from(tick).unwrap_or(i64::MAX / 2_000_000) * 1_000_000,
    )
}

/// The tick of a wall time (0 before tick 0 or for the zero time).
pub fn time_tick(time: Time) -> Tick {
    if time.is_zero() {
        return 0;
    }
    let nanos = time.unix_nanos() - EPOCH_NANOS;
    if nanos <= 0 {
        0
    } else {
        u64::try_from(nanos / 1_000_000).unwrap_or(0)
    }
}

/// The leader's configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerConfig {
    /// `min_heartbeat_ttl` in ticks.
    pub min_heartbeat_ttl: Tick,
    /// `max_heartbeats_per_second`.
    pub max_heartbeats_per_second: f64,
    /// `heartbeat_grace` in ticks.
    pub heartbeat_grace: Tick,
    /// Preemption enabled for system jobs.
    pub preempt_system: bool,
    /// Preemption enabled for service jobs.
    pub preempt_service: bool,
    /// Preemption enabled for batch jobs.
    pub preempt_batch: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            min_heartbeat_ttl: 10_000,
            max_heartbeats_per_second: 50.0,
            heartbeat_grace: 10_000,
            preempt_system: true,
            preempt_service: false,
            preempt_batch: false,
        }
    }
}

/// A node as the server stores it, with the simulator's extras.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeRecord {
    /// Nomad's node object.
    pub node: Node,
    /// CPU capacity in MHz.
    pub cpu: u64,
    /// Memory capacity in MB.
    pub memory_mb: u64,
    /// `LastMissedHeartbeatIndex` (≥ 1.5.0).
    pub last_missed_heartbeat_index: u64,
    /// `LastAllocUpdateIndex` (≥ 1.5.0).
    pub last_alloc_update_index: u64,
    /// The client agent's settings.
    pub agent: AgentSettings,
}

/// A job as the server stores it: the current job and every spec version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    /// The current job.
    pub job: Rc<Job>,
    /// Scenario spec per job version (resources, constraints, task config).
    pub specs: BTreeMap<u64, Rc<JobSpec>>,
    /// The versions that are stopped (`Stop` set): Nomad's deregister
    /// writes a stopped copy of the job as a new version.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub stopped_versions: BTreeSet<u64>,
}

impl JobRecord {
    /// The spec of `version`, else the newest.
    pub fn spec(&self, version: u64) -> Option<&Rc<JobSpec>> {
        self.specs
            .get(&version)
            .or_else(|| self.specs.values().next_back())
    }
}

/// An eval with the simulator's bookkeeping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalRecord {
    /// Nomad's eval.
    pub eval: Evaluation,
    /// When it was created.
    pub created_tick: Tick,
    /// `WaitUntil` as a tick.
    pub wait_until: Option<Tick>,
    /// Creation order (0-based).
    pub seq: u64,
    /// What processing it produced, once processed.
    pub outcome: Option<EvalOutcome>,
}

/// What processing an eval produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalOutcome {
    /// When.
    pub tick: Tick,
    /// `DesiredTGUpdates` of the plan. (The per-alloc reasons and the plan
    /// in words are in the eval's `EvalProcessed` trace entry only.)
    pub desired_tg_updates: GroupUpdates,
}

/// The server's state store and timers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerState {
    /// The Raft index (bumped on every write).
    pub index: u64,
    /// Nodes by ID.
    pub nodes: ChunkMap<String, NodeRecord>,
    /// Jobs by ID.
    pub jobs: BTreeMap<String, JobRecord>,
    /// Allocs by ID.
    pub allocs: ChunkMap<String, Rc<Allocation>>,
    /// Allocs by node ID, in alloc ID order (shares the `Rc`s of `allocs`;
    /// each node's list is shared between history checkpoints until written,
    /// and so are the map's chunks).
    pub allocs_by_node: ChunkMap<String, Rc<AllocIndex>>,
    /// Allocs by job ID, in alloc ID order (as `allocs_by_node`).
    pub allocs_by_job: ChunkMap<String, Rc<AllocIndex>>,
    /// Alloc IDs by name, in creation order.
    pub allocs_by_name: ChunkMap<String, Vec<String>>,
    /// Evals by ID (each shared between history checkpoints until written).
    pub evals: ChunkMap<String, Rc<EvalRecord>>,
    /// Eval IDs in creation order.
    pub eval_order: ChunkVec<String>,
    /// Deployments by ID.
    pub deployments: BTreeMap<String, Deployment>,
    /// The eval broker and blocked evals.
    pub broker: Broker,
    /// Heartbeat timer deadlines by node ID (every heartbeat writes its
    /// node's and every timer event reads it: a `ChunkMap` compares IDs by
    /// their first bytes).
    pub heartbeat_timers: ChunkMap<String, Tick>,
    /// (cpu, memory) asked for by the live (non-terminal) allocs of each
    /// node, by node slot ([`ServerState::node_slot`]).
    pub node_usage: NodeTable<(u64, u64)>,
    /// Live allocs per node and `job/group` (for job anti-affinity), by
    /// node slot. (Each node's map is shared between history checkpoints
    /// until written.)
    pub group_counts: NodeTable<Rc<BTreeMap<String, u64>>>,
    /// Counter for generated IDs.
    pub next_id: u64,
    /// Alloc writes and removals so far: equal counts mean the same allocs
    /// (the invariant checker skips unchanged states by it).
    #[serde(default)]
    pub alloc_writes: u64,
    /// The deployment watcher's state.
    #[serde(default)]
    pub deployment_watch: deployments::WatcherState,
    /// Derived from `nodes`: the tainted nodes' IDs, for the scheduler.
    #[serde(skip)]
    pub tainted_cache: TaintedCache,
    /// Derived from `nodes` and `node_usage`: the nodes' bin-packing scores,
    /// for placements (a cache: not serialized, empty in a copy).
    #[serde(skip)]
    pub placement: scheduler::PlacementIndex,
    /// Each job's last reconcile, reused while nothing it read changed (a
    /// cache: not serialized, empty in a copy).
    #[serde(skip)]
    pub reconcile_memo: scheduler::ReconcileMemo,
}

impl ServerState {
    /// The slot of node `id` in the per-node tables ([`NodeTable`]),
    /// handed out now if it has none: the one place that hands out slots
    /// (dense, in the order the server first keeps something for a node,
    /// never changed; both tables get the same one).
    pub fn node_slot(&mut self, id: &str) -> u32 {
        if let Some(slot) = self.node_usage.slot(id) {
            return slot;
        }
        let slot = u32::try_from(self.node_usage.slot_count()).expect("fewer than 2^32 nodes");
        self.node_usage.add_slot(id, slot);
        self.group_counts.add_slot(id, slot);
        slot
    }
}

/// The allocs of one node or one job ([`ServerState::allocs_by_node`],
/// [`ServerState::allocs_by_job`]), sorted by alloc ID: the alloc's own ID
/// is the key, so a list holds one pointer per alloc, and the scheduler's
/// copy of a job's allocs is a copy of the list. It reads like the map
/// from alloc ID to alloc it stands for, and serializes as one. Beside
/// the list it keeps each alloc's [`AllocKey`], which the scheduler lends
/// the reconciler with the list (derived: not serialized or compared).
#[derive(Debug, Clone, Default)]
pub struct AllocIndex {
    /// The allocs, sorted by ID, IDs unique.
    allocs: Vec<Rc<Allocation>>,
    /// Per alloc, in the same order: its key.
    keys: Vec<AllocKey>,
}

impl PartialEq for AllocIndex {
    fn eq(&self, other: &Self) -> bool {
        self.allocs == other.allocs
    }
}

impl AllocIndex {
    /// How many allocs.
    pub fn len(&self) -> usize {
        self.allocs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.allocs.is_empty()
    }

    /// The alloc with ID `id`.
    pub fn get(&self, id: &str) -> Option<&Rc<Allocation>> {
        self.position(id).ok().map(|index| &self.allocs[index])
    }

    /// The allocs in ID order.
    pub fn values(&self) -> std::slice::Iter<'_, Rc<Allocation>> {
        self.allocs.iter()
    }

    /// The allocs in ID order, as a slice.
    pub fn as_slice(&self) -> &[Rc<Allocation>] {
        &self.allocs
    }

    /// The index of `allocs`, sorted by ID, IDs unique.
    pub(crate) fn of_sorted(allocs: Vec<Rc<Allocation>>) -> Self {
        debug_assert!(allocs.windows(2).all(|w| w[0].id < w[1].id));
        let keys = allocs.iter().map(|a| AllocKey::of(a)).collect();
        AllocIndex { allocs, keys }
    }

    /// The allocs' keys, in the order of [`AllocIndex::as_slice`].
    pub fn keys(&self) -> &[AllocKey] {
        &self.keys
    }

    /// Where `id` is, or would go.
    fn position(&self, id: &str) -> Result<usize, usize> {
        self.position_keyed(id_prefix(id), id)
    }

    /// Where `id`, whose prefix ([`id_prefix`]) is `prefix`, is or would
    /// go: a search over the keys' ID prefixes, which order as the IDs do
    /// up to ties (read from the keys, one array, not from the allocs);
    /// only the allocs whose prefix ties with it have their IDs read.
    fn position_keyed(&self, prefix: u128, id: &str) -> Result<usize, usize> {
        let mut at = self.keys.partition_point(|key| key.id_prefix() < prefix);
        while self
            .keys
            .get(at)
            .is_some_and(|key| key.id_prefix() == prefix)
        {
            match self.allocs[at].id.as_str().cmp(id) {
                Ordering::Less => at += 1,
                Ordering::Equal => return Ok(at),
                Ordering::Greater => break,
            }
        }
        Err(at)
    }

    /// Writes `alloc` (insert or replace).
    fn put(&mut self, alloc: &Rc<Allocation>) {
        let key = AllocKey::of(alloc);
        match self.position_keyed(key.id_prefix(), &alloc.id) {
            Ok(index) => {
                self.allocs[index] = Rc::clone(alloc);
                self.keys[index] = key;
            }
            Err(index) => {
                self.allocs.insert(index, Rc::clone(alloc));
                self.keys.insert(index, key);
            }
        }
    }

    /// Removes the alloc with ID `id`.
    fn remove(&mut self, id: &str) -> Option<Rc<Allocation>> {
        let index = self.position(id).ok()?;
        self.keys.remove(index);
        Some(self.allocs.remove(index))
    }
}

impl Serialize for AllocIndex {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.allocs.iter().map(|alloc| (&alloc.id, alloc)))
    }
}

impl<'de> Deserialize<'de> for AllocIndex {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, Rc<Allocation>>::deserialize(deserializer)?;
        let mut index = AllocIndex::default();
        for alloc in map.values() {
            index.put(alloc);
        }
        Ok(index)
    }
}

/// The nodes that are down, disconnected or draining, with their lookup
/// table ([`scheduler::TaintedNodes`]): a cache derived
/// from [`ServerState::nodes`], shared by every eval's reconciler input
/// (the reconciler looks up only the nodes of the job's allocs, so the
/// whole cluster's tainted nodes serve every job). A write to one node
/// updates that node's entry ([`Server::node_written`]); other node writes
/// empty it ([`Server::nodes_changed`]) and the next eval fills it again.
/// It is not state: it is not serialized and any two compare equal.
#[derive(Debug, Clone, Default)]
pub struct TaintedCache(pub(crate) Option<scheduler::TaintedNodes>);

impl PartialEq for TaintedCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// One leader.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Server {
    /// Configuration.
    pub config: ServerConfig,
    /// The profile's switches.
    pub rules: Rules,
    /// The Nomad version the profile reproduces.
    pub version: crate::profile::Version,
    /// The seed IDs are derived from.
    pub id_seed: u64,
    /// State.
    pub state: ServerState,
    /// The repeating texts of the trace (node names, fixed reasons), each
    /// once: the server's and the simulator's events take theirs from here
    /// (not state: not serialized, any two compare equal, empty in a
    /// deserialized server).
    #[serde(skip)]
    pub texts: SharedTexts,
}

/// An input to the server.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerInput {
    /// A node's heartbeat timer fired (ignored unless `deadline` is current).
    HeartbeatTimeout {
        /// Node.
        node: String,
        /// The deadline the timer was set for.
        deadline: Tick,
    },
    /// An eval's `WaitUntil` was reached.
    EvalDelayElapsed {
        /// Eval ID.
        eval: String,
    },
    /// The worker processes one ready eval (`None`: the broker's next).
    ProcessEval {
        /// Eval ID.
        eval: Option<String>,
    },
    /// Register a job (new or new version).
    RegisterJob {
        /// The spec.
        spec: JobSpec,
    },
    /// Stop a job.
    StopJob {
        /// Job ID.
        job: String,
    },
    /// The operator's `Job.Revert`.
    RevertJob {
        /// Job ID.
        job: String,
        /// The version to register again.
        version: u64,
        /// `EnforcePriorVersion`.
        enforce_prior_version: Option<u64>,
    },
    /// Drain a node or cancel the drain.
    Drain {
        /// Node.
        node: String,
        /// Drain or cancel.
        enable: bool,
    },
    /// Garbage-collect finished allocs.
    Gc,
    /// Set a node's eligibility.
    Eligibility {
        /// Node.
        node: String,
        /// Eligible.
        eligible: bool,
    },
    /// A deployment watcher's timer fired (batched eval, progress deadline).
    DeploymentTimer {
        /// Deployment ID.
        deployment: String,
    },
    /// An operator's call on a deployment (promote, pause, fail, ...).
    DeploymentCall {
        /// Deployment ID.
        deployment: String,
        /// The call.
        call: deployments::operator::DeploymentCall,
    },
}

/// What the server asks the simulator to do.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerEffect {
    /// Send a reply to a call.
    Reply {
        /// Receiver (the shared copy of its ID in [`Server::texts`]).
        node: NodeName,
        /// Call number.
        call: CallId,
        /// The RPC it answers.
        rpc: Rpc,
        /// The reply.
        reply: Reply,
    },
    /// Fire `HeartbeatTimeout` at `at`.
    HeartbeatTimer {
        /// Node (the shared copy of its ID in [`Server::texts`]).
        node: NodeName,
        /// Deadline.
        at: Tick,
    },
    /// Fire `EvalDelayElapsed` at `at`.
    EvalTimer {
        /// Eval ID.
        eval: String,
        /// When.
        at: Tick,
    },
    /// Some eval is ready for the worker.
    EvalReady,
    /// Allocs of this node changed (wakes its blocking `GetClientAllocs`).
    AllocsChanged {
        /// Node.
        node: String,
    },
    /// Record this in the trace.
    Trace(TraceEvent),
    /// Fire `DeploymentTimer` at `at`.
    DeploymentTimer {
        /// Deployment ID.
        deployment: String,
        /// When.
        at: Tick,
    },
}

impl Server {
    /// An empty server.
    pub fn new(config: ServerConfig, version: crate::profile::Version, id_seed: u64) -> Server {
        Server {
            config,
            rules: Rules::for_version(version),
            version,
            id_seed,
            state: ServerState {
                index: 1,
                nodes: ChunkMap::new(),
                jobs: BTreeMap::new(),
                allocs: ChunkMap::new(),
                allocs_by_node: ChunkMap::new(),
                allocs_by_job: ChunkMap::new(),
                allocs_by_name: ChunkMap::new(),
                evals: ChunkMap::new(),
                eval_order: ChunkVec::new(),
                deployments: BTreeMap::new(),
                broker: Broker::default(),
                heartbeat_timers: ChunkMap::new(),
                node_usage: NodeTable::default(),
                group_counts: NodeTable::default(),
                next_id: 0,
                alloc_writes: 0,
                deployment_watch: deployments::WatcherState::default(),
                tainted_cache: TaintedCache::default(),
                placement: scheduler::PlacementIndex::default(),
                reconcile_memo: scheduler::ReconcileMemo::default(),
            },
            texts: SharedTexts::default(),
        }
    }

    /// Handles one input; appends its effects to `out`.
    pub fn handle(
        &mut self,
        now: Tick,
        input: ServerInput,
        rng: &mut Rng,
        out: &mut Vec<ServerEffect>,
    ) {
        match input {
            ServerInput::HeartbeatTimeout { node, deadline } => {
                self.heartbeat_timeout(now, &node, deadline, rng, out)
            }
            ServerInput::EvalDelayElapsed { eval } => {
                self.state.broker.delay_elapsed(&eval);
                self.enqueue_ready(&eval, out);
            }
            ServerInput::ProcessEval { eval } => self.process_eval(now, eval, out),
            ServerInput::RegisterJob { spec } => self.register_job(now, spec, out),
            ServerInput::StopJob { job } => self.stop_job(now, &job, out),
            ServerInput::RevertJob {
                job,
                version,
                enforce_prior_version,
            } => self.revert_job_call(now, &job, version, enforce_prior_version, out),
            ServerInput::Drain { node, enable } => self.drain_node(now, &node, enable, out),
            ServerInput::Gc => self.gc(out),
            ServerInput::Eligibility { node, eligible } => {
                self.set_eligibility(now, &node, eligible, out)
            }
            ServerInput::DeploymentTimer { deployment } => {
                self.deployment_timer(now, &deployment, out)
            }
            ServerInput::DeploymentCall { deployment, call } => {
                self.deployment_call(now, &deployment, call, out)
            }
        }
    }

    /// A node's heartbeat timer fired ([`ServerInput::HeartbeatTimeout`],
    /// with the node's ID borrowed: the simulator's timer event keeps it);
    /// ignored unless `deadline` is the node's current one.
    pub fn heartbeat_timeout(
        &mut self,
        now: Tick,
        node: &str,
        deadline: Tick,
        rng: &mut Rng,
        out: &mut Vec<ServerEffect>,
    ) {
        if self.state.heartbeat_timers.get(node) == Some(&deadline) {
            self.invalidate_heartbeat(now, node, rng, out);
        }
    }

    /// To call after any write to `state.nodes`: the cached tainted
    /// nodes and placement scores are recomputed on next use.
    pub fn nodes_changed(&mut self) {
        self.state.tainted_cache = TaintedCache::default();
        self.state.placement = scheduler::PlacementIndex::default();
    }

    /// To call after a write to the stored node `id` (and to no other
    /// node): the cached tainted nodes take its new version (instead of
    /// being built again from every node), the placement scores are
    /// recomputed on next use.
    pub(crate) fn node_written(&mut self, id: &str) {
        self.state.placement = scheduler::PlacementIndex::default();
        self.tainted_node_written(id);
    }

    /// A new Raft index.
    pub fn bump_index(&mut self) -> u64 {
        self.state.index += 1;
        self.state.index
    }

    /// A new UUID-shaped ID, derived from the seed and a counter.
    pub fn new_id(&mut self) -> String {
        let counter = self.state.next_id;
        self.state.next_id += 1;
        id_from(self.id_seed, counter)
    }
}

/// The key of a job's group in [`ServerState::group_counts`].
pub fn group_key(job: &str, group: &str) -> String {
    let mut key = String::with_capacity(job.len() + 1 + group.len());
    key.push_str(job);
    key.push('/');
    key.push_str(group);
    key
}

/// Writes `alloc` into an index by node or job (`index`, under `key`),
/// copying the key only for a new entry.
fn index_alloc(index: &mut ChunkMap<String, Rc<AllocIndex>>, key: &str, alloc: &Rc<Allocation>) {
    // One lookup of the key when its list exists (it usually does).
    let Some(allocs) = index.get_mut(key) else {
        let mut allocs = AllocIndex::default();
        allocs.put(alloc);
        index.insert(key.to_string(), Rc::new(allocs));
        return;
    };
    Rc::make_mut(allocs).put(alloc);
}

/// Whether two versions of an alloc take the same share of the same node
/// ([`Server::account`]): both terminal (no share), or both live on the
/// same node with the same job version and group (the same resources).
fn same_share(old: &Allocation, new: &Allocation) -> bool {
    match (old.terminal_status(), new.terminal_status()) {
        (true, true) => true,
        (false, false) => {
            old.node_id == new.node_id
                && old.job_id == new.job_id
                && old.task_group == new.task_group
                && old.job_version() == new.job_version()
        }
        _ => false,
    }
}

/// The UUID-shaped ID number `counter` of a run seeded with `seed`.
pub fn id_from(seed: u64, counter: u64) -> String {
    {
        let mut x = seed ^ counter.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
        // "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}" of these, written digit by
        // digit (every field fits its width).
        let mut id = String::with_capacity(36);
        push_hex(&mut id, x >> 32, 8);
        id.push('-');
        push_hex(&mut id, (x >> 16) & 0xffff, 4);
        id.push_str("-4");
        push_hex(&mut id, x & 0xfff, 3);
        id.push_str("-8");
        push_hex(&mut id, (counter >> 48) & 0xfff, 3);
        id.push('-');
        push_hex(&mut id, counter & 0xffff_ffff_ffff, 12);
        id
    }
}

/// Appends `n` in decimal, as `Display` writes it (without the formatter:
/// the scheduler's and the applier's trace lines are written per eval and
/// per alloc).
pub(crate) fn push_decimal(out: &mut String, n: u64) {
    if n >= 10 {
        push_decimal(out, n / 10);
    }
    out.push(char::from(b'0' + (n % 10) as u8));
}

/// Appends the low `digits` hex digits of `value` (lowercase, zero-padded).
fn push_hex(out: &mut String, value: u64, digits: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for i in (0..digits).rev() {
        out.push(char::from(HEX[((value >> (4 * i)) & 0xf) as usize]));
    }
}

impl Server {
    /// Adds (`sign` 1) or removes (-1) a live alloc's share of its node.
    fn account(&mut self, alloc: &Allocation, sign: i64) {
        if alloc.terminal_status() {
            return;
        }
        let (cpu, mem) = self.alloc_resources(alloc);
        // One lookup of the node's slot serves both tables and the index.
        let state = &mut self.state;
        let slot = state.node_slot(&alloc.node_id);
        state.placement.usage_changed(slot);
        let usage = state.node_usage.entry(slot);
        if sign > 0 {
            usage.0 += cpu;
            usage.1 += mem;
        } else {
            usage.0 = usage.0.saturating_sub(cpu);
            usage.1 = usage.1.saturating_sub(mem);
        }
        let groups = state.group_counts.entry(slot);
        let key = group_key(&alloc.job_id, &alloc.task_group);
        let count = Rc::make_mut(groups).entry(key).or_default();
        *count = if sign > 0 {
            *count + 1
        } else {
            count.saturating_sub(1)
        };
    }

    /// Writes an alloc (insert or replace), keeping the indexes.
    pub fn put_alloc(&mut self, alloc: Allocation) {
        self.state.alloc_writes += 1;
        let alloc = Rc::new(alloc);
        // One lookup of the ID: the write returns the version it replaces
        // (a stored alloc's entry takes the new version, its ID is copied
        // only for a new alloc's key or where a history checkpoint shares
        // the entry).
        let old = self
            .state
            .allocs
            .put(&alloc.id, Rc::clone(&alloc), || alloc.id.clone());
        match &old {
            // Most writes keep the alloc's share of its node (a client
            // status, a mark, an index): taking it away and adding it back
            // would leave the tables as they are.
            Some(old) if same_share(old, &alloc) => {}
            _ => {
                if let Some(old) = &old {
                    self.account(old, -1);
                }
                self.account(&alloc, 1);
            }
        }
        if old.is_none() {
            // A replacement takes a name already listed: its name is
            // copied only for a new one.
            match self.state.allocs_by_name.get_mut(&alloc.name) {
                Some(ids) => ids.push(alloc.id.clone()),
                None => {
                    self.state
                        .allocs_by_name
                        .insert(alloc.name.clone(), vec![alloc.id.clone()]);
                }
            }
        }
        index_alloc(&mut self.state.allocs_by_node, &alloc.node_id, &alloc);
        index_alloc(&mut self.state.allocs_by_job, &alloc.job_id, &alloc);
    }

    /// Removes finished allocs from the state store.
    pub fn gc(&mut self, out: &mut Vec<ServerEffect>) {
        let doomed: Vec<Rc<Allocation>> = self
            .state
            .allocs
            .values()
            .filter(|a| {
                a.client_terminal_status()
                    && (a.server_terminal_status()
                        || a.job
                            .as_ref()
                            .is_some_and(|j| j.job_type == crate::model::JobType::Batch))
            })
            .cloned()
            .collect();
        let mut nodes = BTreeSet::new();
        for alloc in doomed {
            self.state.alloc_writes += 1;
            self.account(&alloc, -1);
            self.state.allocs.remove(&alloc.id);
            if let Some(allocs) = self.state.allocs_by_node.get_mut(&alloc.node_id) {
                Rc::make_mut(allocs).remove(&alloc.id);
            }
            if let Some(allocs) = self.state.allocs_by_job.get_mut(&alloc.job_id) {
                Rc::make_mut(allocs).remove(&alloc.id);
            }
            out.push(ServerEffect::Trace(TraceEvent::alloc_changed(
                &mut self.texts,
                &alloc,
                "garbage-collected",
            )));
            nodes.insert(alloc.node_id.clone());
        }
        for node in nodes {
            out.push(ServerEffect::AllocsChanged { node });
        }
    }

    /// The allocs on a node.
    pub fn node_allocs(&self, node: &str) -> Vec<Rc<Allocation>> {
        self.state
            .allocs_by_node
            .get(node)
            .map(|allocs| allocs.values().cloned().collect())
            .unwrap_or_default()
    }

    /// The allocs of a job.
    pub fn job_allocs(&self, job: &str) -> Vec<Rc<Allocation>> {
        self.state
            .allocs_by_job
            .get(job)
            .map(|allocs| allocs.values().cloned().collect())
            .unwrap_or_default()
    }

    /// The group's lost_after under this profile (0 = not set).
    pub fn lost_after(&self, job: &Job, group: &str) -> crate::model::Duration {
        use crate::profile::DisconnectConfig;
        let Some(tg) = job.lookup_task_group(group) else {
            return crate::model::Duration::ZERO;
        };
        match self.rules.disconnect_config {
            DisconnectConfig::Legacy => tg.max_client_disconnect.unwrap_or_default(),
            DisconnectConfig::BlockLegacyWins => tg.lost_after(true),
            DisconnectConfig::BlockOnly => tg.lost_after(false),
        }
    }

    /// Whether legacy disconnect fields are honoured under this profile.
    pub fn honour_legacy(&self) -> bool {
        !matches!(
            self.rules.disconnect_config,
            crate::profile::DisconnectConfig::BlockOnly
        )
    }

    /// Creates an eval, stores it and hands it to the broker (or its delay
    /// heap, or the blocked set).
    #[allow(clippy::too_many_arguments)]
    pub fn create_eval(
        &mut self,
        now: Tick,
        job: &Job,
        trigger: &str,
        node: &str,
        wait_until: Option<Tick>,
        previous: &str,
        out: &mut Vec<ServerEffect>,
    ) -> String {
        let eval = Evaluation {
            node_id: node.to_string(),
            wait_until: wait_until.map_or(Time::ZERO, tick_time),
            previous_eval: previous.to_string(),
            ..self.pending_eval(now, job, trigger)
        };
        let id = eval.id.clone();
        self.insert_eval(now, eval, wait_until, out);
        id
    }

    /// A new pending eval for `job`, with a fresh ID and index, in the job's
    /// namespace and at its priority: callers fill in what their trigger adds
    /// (the node, the deployment, a wait or a previous eval).
    pub fn pending_eval(&mut self, now: Tick, job: &Job, trigger: &str) -> Evaluation {
        let id = self.new_id();
        let index = self.bump_index();
        Evaluation {
            id,
            namespace: job.namespace.clone(),
            priority: job.priority,
            eval_type: job.job_type.as_str().to_string(),
            triggered_by: trigger.to_string(),
            job_id: job.id.clone(),
            status: crate::model::EvalStatus::Pending,
            create_index: index,
            modify_index: index,
            create_time: tick_time(now),
            modify_time: tick_time(now),
            ..Evaluation::default()
        }
    }

    /// Stores an eval and hands it to the broker.
    pub fn insert_eval(
        &mut self,
        now: Tick,
        eval: Evaluation,
        wait_until: Option<Tick>,
        out: &mut Vec<ServerEffect>,
    ) {
        let seq = self.state.eval_order.len() as u64;
        out.push(ServerEffect::Trace(TraceEvent::EvalCreated(Box::new(
            EvalCreated {
                eval: eval.id.as_str().into(),
                job: self.texts.text(&eval.job_id),
                trigger: self.texts.text(&eval.triggered_by),
                node: self.texts.text(&eval.node_id),
                wait_until,
                status: self.texts.text(eval.status.as_str()),
            },
        ))));
        // The stored record, read below through a second handle (its ID
        // and job are not copied for the broker).
        let record = Rc::new(EvalRecord {
            eval,
            created_tick: now,
            wait_until,
            seq,
            outcome: None,
        });
        let kept = Rc::clone(&record);
        let eval = &kept.eval;
        self.state.evals.insert(eval.id.clone(), record);
        self.state.eval_order.push(eval.id.clone());
        let (id, job) = (eval.id.as_str(), eval.job_id.as_str());
        if eval.status == crate::model::EvalStatus::Blocked {
            if let Some(old) = self.state.broker.block(job, id) {
                self.cancel_eval(now, &old, "a newer blocked eval exists for the job", out);
            }
            return;
        }
        match wait_until {
            Some(at) if at > now => {
                self.state.broker.delay(id, at);
                out.push(ServerEffect::EvalTimer {
                    eval: id.to_string(),
                    at,
                });
            }
            // The eval is at hand: no need to look it up again.
            _ => self.enqueue_eval(job, id, eval.priority, seq, out),
        }
    }

    /// Enqueues an eval in the broker; reports whether one is ready.
    pub fn enqueue_ready(&mut self, id: &str, out: &mut Vec<ServerEffect>) {
        // The stored record lends its job to the broker (no copy).
        let state = &mut self.state;
        let Some(record) = state.evals.get(id) else {
            return;
        };
        let (job, priority, seq) = (&record.eval.job_id, record.eval.priority, record.seq);
        state.broker.enqueue(job, id, priority, seq);
        if state.broker.has_ready() {
            out.push(ServerEffect::EvalReady);
        }
    }

    /// Enqueues eval `id` of `job` in the broker; reports whether one is
    /// ready.
    fn enqueue_eval(
        &mut self,
        job: &str,
        id: &str,
        priority: i64,
        seq: u64,
        out: &mut Vec<ServerEffect>,
    ) {
        self.state.broker.enqueue(job, id, priority, seq);
        if self.state.broker.has_ready() {
            out.push(ServerEffect::EvalReady);
        }
    }

    /// Marks an eval cancelled.
    pub fn cancel_eval(&mut self, now: Tick, id: &str, reason: &str, out: &mut Vec<ServerEffect>) {
        let index = self.bump_index();
        // The broker holds stored evals only, each under its own job,
        // priority and seq.
        if let Some(record) = self.state.evals.get_mut(id) {
            let record = Rc::make_mut(record);
            record.eval.status = crate::model::EvalStatus::Canceled;
            record.eval.status_description = reason.to_string();
            record.eval.modify_index = index;
            record.eval.modify_time = tick_time(now);
            let (job, priority) = (&record.eval.job_id, record.eval.priority);
            self.state.broker.forget(job, id, priority, record.seq);
        }
        out.push(ServerEffect::Trace(TraceEvent::EvalState {
            eval: id.into(),
            state: BrokerState::Canceled,
            reason: self.texts.text(reason),
        }));
    }

    /// Re-enqueues every blocked eval (capacity may have appeared).
    pub fn unblock_all(&mut self, reason: &str, out: &mut Vec<ServerEffect>) {
        let blocked = self.state.broker.take_blocked();
        if blocked.is_empty() {
            return;
        }
        // One shared copy of the reason for every eval.
        let reason = self.texts.text(reason);
        for id in blocked {
            out.push(ServerEffect::Trace(TraceEvent::EvalState {
                eval: id.as_str().into(),
                state: BrokerState::Unblocked,
                reason: reason.clone(),
            }));
            self.enqueue_ready(&id, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::id_from;

    /// The keys follow the allocs through inserts, replacements and
    /// removals, and a deserialized index has them too; equality looks at
    /// the allocs only (a key holds its job's address).
    #[test]
    fn alloc_index_keys_follow_their_allocs() {
        use super::{AllocIndex, AllocKey, Allocation, Rc};
        let alloc = |id: &str, node: &str, status: crate::model::ClientStatus| {
            Rc::new(Allocation {
                id: id.to_string(),
                node_id: node.to_string(),
                task_group: "web".to_string(),
                client_status: status,
                ..Allocation::default()
            })
        };
        let running = crate::model::ClientStatus::Running;
        let mut index = AllocIndex::default();
        for (id, node) in [("c", "n1"), ("a", "n2"), ("b", "n1")] {
            index.put(&alloc(id, node, running.clone()));
        }
        index.put(&alloc("a", "n3", crate::model::ClientStatus::Failed));
        index.remove("b");
        let want = |index: &AllocIndex| -> Vec<AllocKey> {
            index.values().map(|a| AllocKey::of(a)).collect()
        };
        assert_eq!(index.len(), 2);
        assert_eq!(index.keys(), want(&index));
        assert_ne!(index.keys()[0], AllocKey::of(&alloc("a", "n2", running)));
        let json = serde_json::to_string(&index).expect("serializes");
        let back: AllocIndex = serde_json::from_str(&json).expect("deserializes");
        assert_eq!(back.keys(), want(&back));
        assert_eq!(back, index);
    }

    #[test]
    fn push_decimal_writes_what_display_writes() {
        for n in [
            0,
            1,
            9,
            10,
            11,
            99,
            100,
            101,
            1_000,
            65_535,
            1_234_567,
            u64::MAX,
        ] {
            let mut out = String::from("x");
            super::push_decimal(&mut out, n);
            assert_eq!(out, format!("x{n}"));
        }
    }

    #[test]
    fn id_from_matches_its_format() {
        for (seed, counter) in [
            (0, 0),
            (42, 1),
            (7, 123_456),
            (u64::MAX, u64::MAX),
            (1, 1 << 50),
        ] {
            let mut x = seed ^ counter.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            x ^= x >> 31;
            let expected = format!(
                "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
                (x >> 32) as u32,
                (x >> 16) & 0xffff,
                x & 0xfff,
                (counter >> 48) & 0xfff,
                counter & 0xffff_ffff_ffff
            );
            assert_eq!(id_from(seed, counter), expected);
        }
    }
}
