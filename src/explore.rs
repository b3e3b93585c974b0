//! Explore mode: searches the orders in which a reconnect's calls, the
//! client's loops and the eval broker's choices can happen, and checks the
//! [`invariant`]s after every step of every order (FoundationDB-style
//! simulation testing, for Nomad's disconnected-client protocol).
//!
//! # Model
//!
//! The script runs normally up to the *window* (by default: from the first
//! `link_up` of a node that went down to the end of the script). From the
//! window's start the calls of every node whose link comes back in the
//! window are held, and the explorer decides, step by step, what happens
//! next ([`Choice`]):
//!
//! - deliver any call of a reconnecting node that is in flight (the network
//!   may reorder them freely, but holds none longer than
//!   [`ExploreConfig::max_delay`] while time passes);
//! - process any ready eval (the broker's choice);
//! - fire a reconnecting client's heartbeat, alloc-watch or alloc-sync loop
//!   now rather than at its timer, while another of its calls is in flight
//!   (each at most once per phase);
//! - let the next timed event happen (`step`).
//!
//! The window's own time actions (`advance`, `step`, `deliver`, ...) and
//! assertions are replaced by the search; its other actions (`link_up`,
//! `update_job`, ...) are applied in order, in groups of consecutive
//! actions, each group once the cluster is idle again. An order ends when
//! the last phase is idle, when an invariant breaks, or at the bounds.
//!
//! Each choice is a script [`Action`], so an order is a script: the
//! shortest violating order of each invariant comes back as a complete
//! scenario that replays through [`crate::sim::history::Session`].
//!
//! The search is exhaustive (depth-first, pruning states whose canonical
//! [`fingerprint`] was already seen at the same or a smaller depth, with
//! the sound partial-order reduction of [`reduction`]) when
//! the space fits the budget; otherwise it continues by seeded random
//! sampling and reports Knuth's estimate of the space's size.
//!
//! # UI API (incremental)
//!
//! ```text
//! let mut explorer = Explorer::new(&scenario, ExploreConfig::default())?;
//! while !explorer.run_batch(200).done { /* show progress */ }
//! let result: ExploreResult = explorer.result(); // serde-serializable
//! ```

pub mod cli;
pub mod diagnose;
pub mod fingerprint;
pub mod invariant;
mod read;
pub mod reduction;

use crate::profile::Profile;
use crate::scenario::format::{Action, Scenario};
use crate::sim::history::{Session, SessionError};
use crate::sim::net::CallId;
use crate::sim::queue::Tick;
use crate::sim::rng::Rng;
use crate::sim::{Event, Sim};
use fingerprint::{DigestCache, Fingerprint};
use invariant::{CheckContext, Invariant, Violation};
use reduction::{Fired, Footprint};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// How the space is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// Exhaustive with half the budget; if the space is larger, seeded
    /// random sampling with the rest.
    #[default]
    Auto,
    /// Depth-first only, up to the whole budget.
    Exhaustive,
    /// Seeded random sampling only.
    Random,
}

/// The explored part of the script: actions `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Index of the first action of the window.
    pub start: usize,
    /// Index one past its last action.
    pub end: usize,
}

/// Search settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExploreConfig {
    /// Profile (default: the scenario's, else `latest`).
    pub profile: Option<String>,
    /// Orders to try at most (complete orders plus pruned prefixes).
    pub max_orders: u64,
    /// Seed of the sampling RNG.
    pub seed: u64,
    /// Search strategy.
    pub mode: SearchMode,
    /// The window (default: from the first `link_up` after a `link_down`
    /// to the end of the script).
    pub window: Option<Window>,
    /// Invariants checked (default: all).
    pub invariants: Vec<Invariant>,
    /// Longest order, in choices.
    pub max_depth: u32,
    /// Longest time a call may stay held while time passes, in ticks.
    pub max_delay: Tick,
    /// Longest phase, in ticks, before the order is given up as unsettled.
    pub horizon: Tick,
    /// Whether the client's loops may fire early.
    pub fire_loops: bool,
    /// Prune only states that are identical (sound), not also those equal
    /// up to the renaming of generated IDs, call numbers and Raft indexes
    /// (a heuristic: see [`fingerprint::fingerprint`]); slower.
    pub exact_states: bool,
    /// Partial-order reduction: once the orders that start with a move
    /// were searched, the orders that make an independent move first and
    /// that move next are not searched again (sleep sets over
    /// [`reduction::independent`], which orders every server write, RNG
    /// draw and passing of time against every other); and right after a
    /// loop fired early only moves that involve its node are searched
    /// (loop postponement). See [`reduction`].
    pub reduce_orders: bool,
    /// Count the distinct idle states complete orders end in
    /// ([`ExploreResult::idle_states`], [`Explorer::idle_fingerprints`]):
    /// one fingerprint per complete order, about a fifth more work.
    pub count_idle: bool,
}

impl Default for ExploreConfig {
    fn default() -> Self {
        ExploreConfig {
            profile: None,
            max_orders: 20_000,
            seed: 1,
            mode: SearchMode::Auto,
            window: None,
            invariants: Invariant::ALL.to_vec(),
            max_depth: 200,
            max_delay: 1_000,
            horizon: 600_000,
            fire_loops: true,
            exact_states: false,
            reduce_orders: true,
            count_idle: false,
        }
    }
}

/// Explore mode cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExploreError {
    /// The scenario is invalid or the profile unknown.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// No default window.
    #[error(
        "no window to explore: the script has no link_up after a link_down (give a window explicitly)"
    )]
    NoWindow,
    /// The window does not fit the script.
    #[error("window {start}..{end} does not fit the script of {len} actions")]
    BadWindow {
        /// Start.
        start: usize,
        /// End.
        end: usize,
        /// Script length.
        len: usize,
    },
}

/// A client loop the explorer may fire early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientLoop {
    /// `registerAndHeartbeat`: send `Node.UpdateStatus`.
    Heartbeat,
    /// `watchAllocations`: send `Node.GetClientAllocs`.
    Watch,
    /// `allocSync`: send the queued `Node.UpdateAlloc`.
    AllocSync,
}

/// One decision at one point of an order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "choice", rename_all = "snake_case")]
pub enum Choice {
    /// Let the next timed event happen.
    Step,
    /// Deliver a call in flight now.
    Deliver {
        /// Sender.
        node: String,
        /// Call number.
        call: CallId,
        /// RPC name.
        rpc: String,
    },
    /// Process this ready eval now.
    ProcessEval {
        /// Eval ID.
        eval: String,
    },
    /// Fire a client loop now.
    FireLoop {
        /// Node.
        node: String,
        /// Loop.
        client_loop: ClientLoop,
    },
}

impl Choice {
    /// The script action that makes this choice.
    pub fn action(&self) -> Action {
        match self {
            Choice::Step => Action::Step {},
            Choice::Deliver { node, call, .. } => Action::Deliver {
                node: node.clone(),
                call: format!("#{call}"),
            },
            Choice::ProcessEval { eval } => Action::ProcessEval {
                eval: Some(eval.clone()),
            },
            Choice::FireLoop { node, client_loop } => match client_loop {
                ClientLoop::Heartbeat => Action::Heartbeat { node: node.clone() },
                ClientLoop::Watch => Action::GetAllocs { node: node.clone() },
                ClientLoop::AllocSync => Action::UpdateAlloc {
                    node: node.clone(),
                    allocs: None,
                },
            },
        }
    }
}

/// Where the search is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Depth-first search.
    Exhaustive,
    /// Random sampling.
    Sampling,
    /// Finished.
    Done,
}

/// Progress after a batch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    /// Stage.
    pub stage: Stage,
    /// Finished.
    pub done: bool,
    /// Orders tried so far (complete plus pruned).
    pub orders: u64,
    /// The budget.
    pub max_orders: u64,
    /// Share of the budget used, 0..=1 (1 when done).
    pub fraction: f64,
    /// States simulated so far.
    pub states: u64,
    /// Orders that broke an invariant so far.
    pub violating_orders: u64,
    /// The size of the space in orders as far as known: exact once the
    /// depth-first search finished, Knuth's estimate while sampling, else 0.
    pub space_estimate: f64,
}

/// The shortest violating order found for one invariant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reproduction {
    /// Which invariant.
    pub invariant: Invariant,
    /// Every violation in the final state.
    pub violations: Vec<Violation>,
    /// Choices in the order.
    pub length: u32,
    /// The order after the window's start, as one-line script actions
    /// (the choices and the window's own actions between phases).
    pub order: Vec<String>,
    /// A scenario that plays exactly this order, under the profile searched.
    #[serde(serialize_with = "crate::scenario::json::serialize_through_tree")]
    pub scenario: Scenario,
    /// The final state was idle (the idle invariants were checked).
    pub at_idle: bool,
    /// The check context (to re-check a replay).
    pub context: CheckContext,
    /// A share link (`crate::share`) opening the scenario at its last step
    /// under the profile searched, with the CLI's default base URL.
    pub link: Option<String>,
}

impl Reproduction {
    /// Plays the reproduction scenario through a [`Session`] and checks
    /// the invariants on its final state.
    pub fn replay(&self) -> Result<Vec<Violation>, SessionError> {
        let mut session = Session::new(self.scenario.clone(), None)?;
        session.run_to_end();
        Ok(invariant::check(
            session.sim(),
            &self.context,
            &Invariant::ALL,
            self.at_idle,
        ))
    }
}

/// One invariant's line in the result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InvariantReport {
    /// The invariant.
    pub invariant: Invariant,
    /// Its name.
    pub name: String,
    /// What it means.
    pub explanation: String,
    /// Checked in this search.
    pub enabled: bool,
    /// Orders that broke it.
    pub violating_orders: u64,
    /// The shortest such order.
    pub shortest: Option<Reproduction>,
    /// The distinct violations found (their details, which name allocs
    /// and nodes, not generated IDs), sorted; at most
    /// [`MAX_DETAILS`] of them.
    pub details: Vec<String>,
}

/// How many distinct violation details an [`InvariantReport`] keeps.
pub const MAX_DETAILS: usize = 64;

/// The outcome of a search. Its `Deserialize` (and [`Progress`]'s) is
/// written by hand (`explore/read.rs`, for code size); there the counts
/// added after the format's start (`postponed_orders`, `subsumed_orders`,
/// `idle_states`) and a report's `details` read as zero or empty when
/// missing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExploreResult {
    /// Scenario name.
    pub scenario: String,
    /// Profile searched.
    pub profile: String,
    /// Sampling seed.
    pub seed: u64,
    /// The window.
    pub window: Window,
    /// Nodes whose calls were reordered.
    pub reconnecting_nodes: Vec<String>,
    /// The whole space was searched.
    pub exhaustive: bool,
    /// Orders tried: complete orders plus pruned prefixes.
    pub orders: u64,
    /// Orders simulated to their end.
    pub complete_orders: u64,
    /// Prefixes cut because they reached a state already explored or
    /// were left out by the partial-order reduction.
    pub pruned_orders: u64,
    /// Of those, prefixes left out by loop postponement (a move that does
    /// not involve the node of a loop fired just before it).
    pub postponed_orders: u64,
    /// Of those, prefixes that reached a world searched already with fewer
    /// loops fired early (subsumption).
    pub subsumed_orders: u64,
    /// Orders that hit a bound (depth, horizon, or nothing left to do)
    /// before the cluster was idle.
    pub unsettled_orders: u64,
    /// Orders that broke at least one invariant.
    pub violating_orders: u64,
    /// States simulated.
    pub states: u64,
    /// Distinct state fingerprints.
    pub distinct_states: u64,
    /// Distinct fingerprints of the idle states orders ended in (the
    /// worlds of complete orders, after the script's last actions); 0
    /// unless [`ExploreConfig::count_idle`].
    pub idle_states: u64,
    /// Share of simulated states that had been seen before.
    pub dedup_ratio: f64,
    /// Size of the space in orders: exact when exhaustive, else Knuth's
    /// estimate from the random walks (0 when unknown).
    pub space_size: f64,
    /// Per invariant.
    pub invariants: Vec<InvariantReport>,
}

impl ExploreResult {
    /// Names of the invariants some order broke.
    pub fn violated(&self) -> Vec<&str> {
        self.invariants
            .iter()
            .filter(|r| r.violating_orders > 0)
            .map(|r| r.name.as_str())
            .collect()
    }
}

/// The loops a path fired early in its phase.
type FiredSet = BTreeSet<(String, ClientLoop)>;

/// One point of an order.
#[derive(Debug, Clone)]
struct PathState {
    sim: Sim,
    phase: usize,
    fired: FiredSet,
    depth: u32,
    phase_start: Tick,
    /// Actions applied on the way into this state from its parent.
    applied: Vec<Action>,
}

/// A state's fingerprints: of its world and phase, and of those with the
/// loops fired early (the key of [`Explorer::seen`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Keys {
    world: Fingerprint,
    full: Fingerprint,
}

impl PathState {
    fn keys(&self, exact: bool, window_index: u64, digests: &mut DigestCache) -> Keys {
        let world =
            fingerprint::fingerprint_cached(&self.sim, &self.phase, !exact, window_index, digests);
        let full = fingerprint::extend(world, &self.fired, !exact);
        Keys { world, full }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Leaf {
    Complete,
    Unsettled,
    Violation(Vec<Violation>),
}

#[derive(Debug, Clone)]
struct Frame {
    state: PathState,
    choices: Vec<Choice>,
    next: usize,
    leaves: f64,
    fp: Fingerprint,
    /// Choices whose orders were searched from an ancestor (sleep set),
    /// with their footprints.
    sleep: Vec<(Choice, Footprint)>,
    /// The choices searched from here so far, with their footprints (the
    /// sleep sets of later siblings).
    explored: Vec<(Choice, Footprint)>,
    /// The loop fired by the move into this state, if it was one: only
    /// moves that involve its node are searched from here (loop
    /// postponement, see [`reduction`]).
    fired: Option<Fired>,
}

#[derive(Debug, Clone)]
struct Seen {
    depth: u32,
    leaves: f64,
    /// The sleep set it was searched with (as [`SleepKey`]s): a later
    /// visit is pruned if it would search no more, else it searches only
    /// the choices that were asleep then and are awake now.
    sleep: Vec<SleepKey>,
}

/// A choice not searched from a state (asleep, or left to loop
/// postponement), named the same way in every state with one fingerprint:
/// a call by its node, its RPC and its place among the node's calls in
/// flight (call numbers are renamed away by canonical fingerprints), a
/// loop by its node and name, an eval by its place among the ready evals.
#[derive(Debug, Clone, PartialEq, Eq)]
enum SleepKey {
    Step,
    Eval(usize),
    Call {
        node: String,
        rpc: String,
        slot: usize,
    },
    Loop {
        node: String,
        client_loop: ClientLoop,
    },
}

fn sleep_key(sim: &Sim, choice: &Choice) -> Option<SleepKey> {
    match choice {
        Choice::Deliver { node, call, rpc } => Some(SleepKey::Call {
            node: node.clone(),
            rpc: rpc.clone(),
            slot: sim
                .net
                .pending
                .get(node)
                .and_then(|calls| calls.iter().position(|c| c.id == *call))?,
        }),
        Choice::FireLoop { node, client_loop } => Some(SleepKey::Loop {
            node: node.clone(),
            client_loop: *client_loop,
        }),
        Choice::Step => Some(SleepKey::Step),
        Choice::ProcessEval { eval } => sim
            .server
            .state
            .broker
            .ready_ids()
            .iter()
            .position(|id| id == eval)
            .map(SleepKey::Eval),
    }
}

/// A search in progress.
#[derive(Debug, Clone)]
pub struct Explorer {
    scenario: Scenario,
    config: ExploreConfig,
    profile: Profile,
    window: Window,
    reconnecting: Vec<String>,
    root_actions: Vec<Action>,
    groups: Vec<Vec<Action>>,
    post: Vec<Action>,
    context: CheckContext,
    root: PathState,
    root_leaf: Option<Leaf>,
    stack: Vec<Frame>,
    /// Digests of the shared parts of the worlds fingerprinted so far.
    digests: DigestCache,
    /// The states searched, by [`Keys::full`].
    seen: BTreeMap<Fingerprint, Seen>,
    /// The states searched, by [`Keys::world`]: their loops fired early
    /// and [`Keys::full`] (for subsumption, see [`Explorer::subsumed`]).
    worlds: BTreeMap<Fingerprint, Vec<(FiredSet, Fingerprint)>>,
    stage: Stage,
    rng: Rng,
    exhaustive: bool,
    space_size: f64,
    knuth_sum: f64,
    walks: u64,
    complete: u64,
    pruned: u64,
    unsettled: u64,
    violating: u64,
    states: u64,
    duplicates: u64,
    postponed: u64,
    subsumed: u64,
    exhaustive_budget: u64,
    reports: BTreeMap<Invariant, (u64, Option<Reproduction>)>,
    details: BTreeMap<Invariant, BTreeSet<String>>,
    /// World fingerprints of the idle states complete orders ended in.
    idle: BTreeSet<Fingerprint>,
}

/// Whether an action is one the search replaces (time and network control,
/// checks).
fn replaced_by_search(action: &Action) -> bool {
    matches!(
        action,
        Action::Advance { .. }
            | Action::Step {}
            | Action::RunUntilIdle {}
            | Action::ProcessEval { .. }
            | Action::Deliver { .. }
            | Action::Release { .. }
            | Action::Hold { .. }
            | Action::Reorder { .. }
            | Action::Delay { .. }
            | Action::Drop { .. }
            | Action::Assert { .. }
            | Action::Note { .. }
    )
}

/// The default window: from the first `link_up` of a node whose link went
/// down earlier, to the end of the script.
pub fn default_window(scenario: &Scenario) -> Option<Window> {
    let mut down = BTreeSet::new();
    for (index, action) in scenario.script.iter().enumerate() {
        match action {
            Action::LinkDown { node } => {
                down.insert(node.as_str());
            }
            Action::LinkUp { node } if down.contains(node.as_str()) => {
                return Some(Window {
                    start: index,
                    end: scenario.script.len(),
                });
            }
            _ => {}
        }
    }
    None
}

/// Whether the cluster is idle: nothing to schedule, no call or reply in
/// flight, and every node with a working link is ready.
pub fn idle(sim: &Sim) -> bool {
    crate::sim::check::settled(sim)
        && !sim
            .queue
            .iter()
            .any(|(_, e)| matches!(e, Event::Reply { .. } | Event::Fail { .. }))
        && sim.clients.keys().all(|node| {
            !sim.net.link(node).up
                || sim
                    .server
                    .state
                    .nodes
                    .get(node)
                    .is_some_and(|r| r.node.status == crate::model::NodeStatus::Ready)
        })
}

impl Explorer {
    /// Parses a scenario and prepares a search.
    pub fn from_json(json: &str, config: ExploreConfig) -> Result<Explorer, ExploreError> {
        let scenario = crate::scenario::parse(json).map_err(SessionError::from)?;
        Explorer::new(&scenario, config)
    }

    /// Prepares a search over `scenario`: plays the script up to the window.
    pub fn new(scenario: &Scenario, config: ExploreConfig) -> Result<Explorer, ExploreError> {
        let name = config
            .profile
            .clone()
            .or_else(|| scenario.profile.clone())
            .unwrap_or_else(|| "latest".to_string());
        let profile = crate::profile::profile(&name)
            .ok_or_else(|| SessionError::UnknownProfile(name.clone()))?;
        let len = scenario.script.len();
        let window = match config.window {
            Some(w) => w,
            None => default_window(scenario).ok_or(ExploreError::NoWindow)?,
        };
        if window.start > window.end || window.end > len {
            return Err(ExploreError::BadWindow {
                start: window.start,
                end: window.end,
                len,
            });
        }
        let in_window = &scenario.script[window.start..window.end];
        let mut reconnecting: Vec<String> = Vec::new();
        for action in in_window {
            if let Action::LinkUp { node } = action
                && !reconnecting.contains(node)
            {
                reconnecting.push(node.clone());
            }
        }
        let mut groups: Vec<Vec<Action>> = Vec::new();
        let mut current: Vec<Action> = Vec::new();
        for action in in_window {
            if replaced_by_search(action) {
                if !current.is_empty() {
                    groups.push(std::mem::take(&mut current));
                }
            } else {
                current.push(action.clone());
            }
        }
        if !current.is_empty() {
            groups.push(current);
        }
        if groups.is_empty() {
            groups.push(Vec::new());
        }
        let post = scenario.script[window.end..].to_vec();

        let mut sim = Sim::new(scenario, profile.clone());
        let mut root_actions: Vec<Action> = scenario.script[..window.start].to_vec();
        for action in &root_actions {
            // A failing action is skipped, as a session does.
            let _ = sim.apply(action);
        }
        for node in &reconnecting {
            let mut holds = vec![Action::Hold {
                node: node.clone(),
                call: None,
            }];
            for call in sim.net.pending.get(node).into_iter().flatten() {
                holds.push(Action::Hold {
                    node: node.clone(),
                    call: Some(format!("#{}", call.id)),
                });
            }
            for hold in holds {
                let _ = sim.apply(&hold);
                root_actions.push(hold);
            }
        }
        let context = CheckContext {
            window_index: sim.server.state.index,
        };
        sim.take_trace();
        let mut root = PathState {
            phase_start: sim.tick,
            sim,
            phase: 0,
            fired: BTreeSet::new(),
            depth: 0,
            applied: Vec::new(),
        };
        for action in &groups[0] {
            let _ = root.sim.apply(action);
            root_actions.push(action.clone());
        }
        root.sim.take_trace();
        let mut explorer = Explorer {
            scenario: scenario.clone(),
            profile,
            window,
            reconnecting,
            root_actions,
            groups,
            post,
            context,
            root: root.clone(),
            root_leaf: None,
            stack: Vec::new(),
            digests: DigestCache::new(),
            seen: BTreeMap::new(),
            worlds: BTreeMap::new(),
            stage: Stage::Exhaustive,
            rng: Rng::new(config.seed),
            exhaustive: false,
            space_size: 0.0,
            knuth_sum: 0.0,
            walks: 0,
            complete: 0,
            pruned: 0,
            unsettled: 0,
            violating: 0,
            states: 0,
            duplicates: 0,
            postponed: 0,
            subsumed: 0,
            exhaustive_budget: match config.mode {
                SearchMode::Auto => (config.max_orders / 2).max(1),
                SearchMode::Exhaustive => config.max_orders,
                SearchMode::Random => 0,
            },
            reports: BTreeMap::new(),
            details: BTreeMap::new(),
            idle: BTreeSet::new(),
            config,
        };
        let (leaf, choices) = explorer.forced(&mut root);
        explorer.root_actions.append(&mut root.applied);
        explorer.root = root.clone();
        if let Some(leaf) = leaf {
            explorer.states = 1;
            explorer.record_leaf(&[], &root, &leaf);
            explorer.root_leaf = Some(leaf);
            explorer.exhaustive = true;
            explorer.space_size = 1.0;
            explorer.stage = Stage::Done;
        } else {
            let fp = root
                .keys(
                    explorer.config.exact_states,
                    explorer.context.window_index,
                    &mut explorer.digests,
                )
                .full;
            explorer.seen.insert(
                fp,
                Seen {
                    depth: 0,
                    leaves: 0.0,
                    sleep: Vec::new(),
                },
            );
            explorer.states = 1;
            explorer.stack.push(Frame {
                state: root,
                choices,
                next: 0,
                leaves: 0.0,
                fp,
                sleep: Vec::new(),
                explored: Vec::new(),
                fired: None,
            });
            if explorer.config.mode == SearchMode::Random {
                explorer.stage = Stage::Sampling;
            }
        }
        Ok(explorer)
    }

    /// The profile searched.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The window.
    pub fn window(&self) -> Window {
        self.window
    }

    /// Where the depth-first search is: per frame of its stack, root
    /// first, the choices taken from it so far (the one being searched
    /// included) and its choices. A gauge of how far a long search has
    /// come (the share of the root's choices done, then of the next
    /// level's, ...), not an estimate of its size.
    pub fn search_position(&self) -> Vec<(usize, usize)> {
        self.stack
            .iter()
            .map(|f| (f.next, f.choices.len()))
            .collect()
    }

    /// The world fingerprints of the idle states the complete orders so
    /// far ended in (a reduced search must reach the same set as the full
    /// one).
    pub fn idle_fingerprints(&self) -> &BTreeSet<Fingerprint> {
        &self.idle
    }

    /// Finished.
    pub fn is_done(&self) -> bool {
        self.stage == Stage::Done
    }

    fn orders(&self) -> u64 {
        self.complete + self.pruned
    }

    /// Runs until `max_orders` more orders were tried or the search ends.
    pub fn run_batch(&mut self, max_orders: u64) -> Progress {
        let target = self.orders().saturating_add(max_orders.max(1));
        while self.stage != Stage::Done && self.orders() < target {
            match self.stage {
                Stage::Exhaustive => {
                    if self.orders() >= self.exhaustive_budget {
                        self.end_exhaustive(false);
                    } else {
                        self.dfs_step();
                    }
                }
                Stage::Sampling => {
                    if self.orders() >= self.config.max_orders {
                        self.stage = Stage::Done;
                    } else {
                        self.walk();
                    }
                }
                Stage::Done => {}
            }
        }
        if self.stage != Stage::Done && self.orders() >= self.config.max_orders {
            if self.stage == Stage::Exhaustive {
                self.end_exhaustive(false);
            }
            self.stage = Stage::Done;
        }
        self.progress()
    }

    /// Runs the search to its end.
    pub fn run(&mut self) -> ExploreResult {
        while !self.is_done() {
            self.run_batch(1_000);
        }
        self.result()
    }

    /// Progress so far.
    pub fn progress(&self) -> Progress {
        let done = self.stage == Stage::Done;
        Progress {
            stage: self.stage,
            done,
            orders: self.orders(),
            max_orders: self.config.max_orders,
            fraction: if done {
                1.0
            } else {
                (self.orders() as f64 / self.config.max_orders.max(1) as f64).min(1.0)
            },
            states: self.states,
            violating_orders: self.violating,
            space_estimate: self.space_estimate(),
        }
    }

    fn end_exhaustive(&mut self, complete: bool) {
        self.stack.clear();
        if complete {
            self.exhaustive = true;
            self.stage = Stage::Done;
        } else if self.config.mode == SearchMode::Auto {
            self.stage = Stage::Sampling;
        } else {
            self.stage = Stage::Done;
        }
    }

    /// One move of the depth-first search.
    fn dfs_step(&mut self) {
        let Some(top) = self.stack.last_mut() else {
            self.end_exhaustive(true);
            return;
        };
        if top.next >= top.choices.len() {
            let Some(frame) = self.stack.pop() else {
                return;
            };
            if let Some(seen) = self.seen.get_mut(&frame.fp) {
                seen.leaves = frame.leaves;
            }
            match self.stack.last_mut() {
                Some(parent) => parent.leaves += frame.leaves,
                None => {
                    self.space_size = frame.leaves;
                    self.end_exhaustive(true);
                }
            }
            return;
        }
        let choice = top.choices[top.next].clone();
        top.next += 1;
        let last = self.stack.len() - 1;
        let parent = &self.stack[last];
        let reduce = self.config.reduce_orders;
        let taken = reduction::footprint(&parent.state.sim, &choice);
        let (child, leaf, choices) = self.transition(&parent.state, &choice);
        self.states += 1;
        if reduce
            && let Some(fired) = &parent.fired
            && child.phase == parent.state.phase
            && !reduction::involves(fired, &choice, &parent.state.sim, &child.sim)
        {
            // Loop postponement: this move does not involve the node whose
            // loop was just fired, so the orders through it are those
            // that take it first and fire the loop after (searched from
            // the parent's parent). A later visit of this state by another
            // path searches it (it is recorded like a sleeping choice).
            if let Some(key) = sleep_key(&parent.state.sim, &choice)
                && let Some(seen) = self.seen.get_mut(&parent.fp)
                && !seen.sleep.contains(&key)
            {
                seen.sleep.push(key);
            }
            self.pruned += 1;
            self.postponed += 1;
            return;
        }
        // A move that ran further events after itself (forced steps, a
        // new phase) is treated as touching everything.
        let extended = child.applied.len() > 1 || child.phase != parent.state.phase;
        let taken = taken.extended(extended);
        let sleep: Vec<(Choice, Footprint)> = if reduce {
            parent
                .sleep
                .iter()
                .chain(&parent.explored)
                .filter(|(s, fp)| sleeps_through(s, fp, &choice, &taken))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        let fired = match &choice {
            Choice::FireLoop { node, client_loop } => Some(Fired {
                node: node.clone(),
                client_loop: *client_loop,
                next_heartbeat: parent
                    .state
                    .sim
                    .clients
                    .get(node)
                    .and_then(|c| c.next_heartbeat),
            }),
            _ => None,
        };
        self.stack[last].explored.push((choice.clone(), taken));
        if let Some(leaf) = leaf {
            self.stack_leaf(&child, &leaf);
            return;
        }
        let keys = child.keys(
            self.config.exact_states,
            self.context.window_index,
            &mut self.digests,
        );
        let fp = keys.full;
        let sleep_keys: Vec<SleepKey> = sleep
            .iter()
            .filter_map(|(c, _)| sleep_key(&child.sim, c))
            .collect();
        // A state searched before at this depth or less: the orders from
        // it were searched then, except those starting with a choice that
        // was asleep then (Godefroid's sleep sets with state caching).
        let mut revisit: Option<(Vec<SleepKey>, f64)> = None;
        if let Some(seen) = self.seen.get(&fp)
            && seen.depth <= child.depth
        {
            let woken: Vec<&SleepKey> = seen
                .sleep
                .iter()
                .filter(|k| !sleep_keys.contains(k))
                .collect();
            if woken.is_empty() || !self.config.reduce_orders {
                self.pruned += 1;
                self.duplicates += 1;
                let leaves = seen.leaves;
                if let Some(parent) = self.stack.last_mut() {
                    parent.leaves += leaves;
                }
                return;
            }
            revisit = Some((woken.into_iter().cloned().collect(), seen.leaves));
        }
        if revisit.is_none()
            && self.config.reduce_orders
            && let Some(leaves) = self.subsumed(keys.world, &child, &choices, &sleep)
        {
            self.pruned += 1;
            self.duplicates += 1;
            self.subsumed += 1;
            if let Some(parent) = self.stack.last_mut() {
                parent.leaves += leaves;
            }
            return;
        }
        let asleep = |c: &Choice| sleep.iter().any(|(s, _)| s == c);
        let all_asleep = !choices.is_empty() && choices.iter().all(asleep);
        if all_asleep {
            // Every move from here starts orders searched already.
            self.pruned += 1;
            return;
        }
        let mut choices: Vec<Choice> = choices.into_iter().filter(|c| !asleep(c)).collect();
        let mut leaves = 0.0;
        if let Some((woken, old_leaves)) = &revisit {
            self.duplicates += 1;
            choices.retain(|c| sleep_key(&child.sim, c).is_some_and(|k| woken.contains(&k)));
            leaves = *old_leaves;
            if let Some(seen) = self.seen.get_mut(&fp) {
                seen.sleep.retain(|k| sleep_keys.contains(k));
            }
            if choices.is_empty() {
                self.pruned += 1;
                if let Some(parent) = self.stack.last_mut() {
                    parent.leaves += leaves;
                }
                return;
            }
        } else {
            let known = self.seen.contains_key(&fp);
            if known {
                self.duplicates += 1;
            }
            self.seen.insert(
                fp,
                Seen {
                    depth: child.depth,
                    leaves: 0.0,
                    sleep: sleep_keys,
                },
            );
            if !known {
                self.worlds
                    .entry(keys.world)
                    .or_default()
                    .push((child.fired.clone(), fp));
            }
        }
        if choices.is_empty() {
            // Nothing can happen any more: the order ends unsettled.
            if let Some(seen) = self.seen.get_mut(&fp) {
                seen.leaves = 1.0;
            }
            self.stack_leaf(&child, &Leaf::Unsettled);
            return;
        }
        self.stack.push(Frame {
            state: child,
            choices,
            next: 0,
            leaves,
            fp,
            sleep,
            explored: Vec::new(),
            fired,
        });
    }

    /// Subsumption: whether a state with the same world (and phase) but
    /// fewer loops fired early, at the same or a smaller depth, was searched
    /// already (it is no longer on the stack) and would have searched
    /// every choice `child` offers that is not asleep here (none of them
    /// was asleep there). Every order from `child` is then an order from
    /// that state (the same choices reach the same worlds; a loop fired
    /// here is one fired there or one that may still fire there), so it
    /// was searched from there. Returns that state's leaves.
    fn subsumed(
        &self,
        world: Fingerprint,
        child: &PathState,
        choices: &[Choice],
        sleep: &[(Choice, Footprint)],
    ) -> Option<f64> {
        let entries = self.worlds.get(&world)?;
        entries.iter().find_map(|(fired, full)| {
            if fired.len() >= child.fired.len() || !fired.is_subset(&child.fired) {
                return None;
            }
            let seen = self.seen.get(full)?;
            if seen.depth > child.depth || self.stack.iter().any(|f| f.fp == *full) {
                return None;
            }
            let woken = choices.iter().any(|c| {
                !sleep.iter().any(|(s, _)| s == c)
                    && sleep_key(&child.sim, c).is_some_and(|k| seen.sleep.contains(&k))
            });
            (!woken).then_some(seen.leaves)
        })
    }

    /// Records a leaf reached below the top of the depth-first stack.
    fn stack_leaf(&mut self, child: &PathState, leaf: &Leaf) {
        let path = if self.needs_path(leaf, child.depth) {
            let mut actions: Vec<Action> = self
                .stack
                .iter()
                .skip(1)
                .flat_map(|f| f.state.applied.iter().cloned())
                .collect();
            actions.extend(child.applied.iter().cloned());
            actions
        } else {
            Vec::new()
        };
        self.record_leaf(&path, child, leaf);
        if let Some(parent) = self.stack.last_mut() {
            parent.leaves += 1.0;
        }
    }

    /// Whether a leaf at `depth` gives some invariant a shorter reproduction.
    fn needs_path(&self, leaf: &Leaf, depth: u32) -> bool {
        let Leaf::Violation(violations) = leaf else {
            return false;
        };
        violations.iter().any(|v| {
            self.reports
                .get(&v.invariant)
                .and_then(|(_, r)| r.as_ref())
                .is_none_or(|r| depth < r.length)
        })
    }

    /// One seeded random walk from the root.
    fn walk(&mut self) {
        let mut path: Vec<Action> = Vec::new();
        let mut state = self.root.clone();
        let mut product = 1.0_f64;
        let mut choices = self.choices(&state);
        loop {
            if choices.is_empty() {
                self.record_leaf(&path, &state, &Leaf::Unsettled);
                break;
            }
            product *= choices.len() as f64;
            let pick = self.rng.below(choices.len() as u64) as usize;
            let (child, leaf, next) = self.transition(&state, &choices[pick]);
            self.states += 1;
            let fp = child
                .keys(
                    self.config.exact_states,
                    self.context.window_index,
                    &mut self.digests,
                )
                .full;
            match self.seen.entry(fp) {
                std::collections::btree_map::Entry::Occupied(_) => self.duplicates += 1,
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(Seen {
                        depth: child.depth,
                        leaves: 0.0,
                        sleep: Vec::new(),
                    });
                }
            }
            path.extend(child.applied.iter().cloned());
            if let Some(leaf) = leaf {
                self.record_leaf(&path, &child, &leaf);
                break;
            }
            state = child;
            choices = next;
        }
        self.walks += 1;
        self.knuth_sum += product;
    }

    /// Counts a finished order; `path` holds the actions applied after the
    /// root (needed only when it is a shorter violation).
    fn record_leaf(&mut self, path: &[Action], last: &PathState, leaf: &Leaf) {
        self.complete += 1;
        match leaf {
            Leaf::Complete if self.config.count_idle => {
                let world = last
                    .keys(
                        self.config.exact_states,
                        self.context.window_index,
                        &mut self.digests,
                    )
                    .world;
                self.idle.insert(world);
            }
            Leaf::Complete => {}
            Leaf::Unsettled => self.unsettled += 1,
            Leaf::Violation(violations) => {
                self.violating += 1;
                for v in violations {
                    let details = self.details.entry(v.invariant).or_default();
                    if details.len() < MAX_DETAILS {
                        details.insert(v.detail.clone());
                    }
                }
                let broken: BTreeSet<Invariant> = violations.iter().map(|v| v.invariant).collect();
                for invariant in broken {
                    let entry = self.reports.entry(invariant).or_insert((0, None));
                    entry.0 += 1;
                    let shorter = entry.1.as_ref().is_none_or(|r| last.depth < r.length);
                    if shorter {
                        let repro = self.reproduction(invariant, path, last, violations);
                        if let Some(entry) = self.reports.get_mut(&invariant) {
                            entry.1 = Some(repro);
                        }
                    }
                }
            }
        }
    }

    fn reproduction(
        &self,
        invariant: Invariant,
        path: &[Action],
        last: &PathState,
        violations: &[Violation],
    ) -> Reproduction {
        let mut script = self.root_actions.clone();
        script.extend(path.iter().cloned());
        let mut order: Vec<String> = Vec::new();
        let mut steps = 0;
        for action in path {
            if matches!(action, Action::Step {}) {
                steps += 1;
                continue;
            }
            if steps > 0 {
                order.push(step_text(steps));
                steps = 0;
            }
            order.push(crate::scenario::action_text(action));
        }
        if steps > 0 {
            order.push(step_text(steps));
        }
        let detail = violations
            .iter()
            .filter(|v| v.invariant == invariant)
            .map(|v| v.detail.clone())
            .collect::<Vec<_>>()
            .join("; ");
        script.push(Action::Note {
            text: format!("explore: {} broken: {detail}", invariant.name()),
        });
        let mut scenario = self.scenario.clone();
        scenario.name = format!("{}-explore-{}", self.scenario.name, invariant.name());
        scenario.description = Some(format!(
            "Found by explore mode under profile {}: {} ({}). Order: {}.",
            self.profile.name,
            invariant.name(),
            invariant.explanation(),
            if order.is_empty() {
                "the script as written".to_string()
            } else {
                order.join(", ")
            }
        ));
        scenario.profile = Some(self.profile.name.clone());
        scenario.profiles = None;
        scenario.script = script;
        let link = crate::share::encode_link(
            crate::share::DEFAULT_BASE,
            &crate::share::Link {
                step: Some(scenario.script.len() as u64),
                profile: Some(self.profile.name.clone()),
                scenario: scenario.clone(),
            },
        );
        Reproduction {
            invariant,
            violations: violations.to_vec(),
            length: last.depth,
            order,
            scenario,
            at_idle: idle(&last.sim),
            context: self.context,
            link: Some(link),
        }
    }

    /// Applies one choice to a copy of `parent`; returns the new state, the
    /// leaf it ends in if any, else the choices it offers.
    fn transition(
        &self,
        parent: &PathState,
        choice: &Choice,
    ) -> (PathState, Option<Leaf>, Vec<Choice>) {
        let mut state = parent.clone();
        let action = choice.action();
        if let Choice::FireLoop { node, client_loop } = choice {
            state.fired.insert((node.clone(), *client_loop));
        }
        state.depth += 1;
        let _ = state.sim.apply(&action);
        state.sim.take_trace();
        state.applied = vec![action];
        let (leaf, choices) = self.forced(&mut state);
        (state, leaf, choices)
    }

    /// Settles `state` and, while the next timed event is the only thing
    /// that can happen, lets it happen without making it a choice point
    /// (no copy of the world, no fingerprint). Returns the leaf the order
    /// ends in, else the choices.
    fn forced(&self, state: &mut PathState) -> (Option<Leaf>, Vec<Choice>) {
        // Bounds a run of same-tick events that never settles.
        const MAX_FORCED: u32 = 100_000;
        let mut forced = 0;
        loop {
            if let Some(leaf) = self.settle(state) {
                return (Some(leaf), Vec::new());
            }
            let choices = self.choices(state);
            if choices != [Choice::Step] {
                return (None, choices);
            }
            forced += 1;
            if forced > MAX_FORCED {
                return (Some(Leaf::Unsettled), Vec::new());
            }
            let _ = state.sim.apply(&Action::Step {});
            state.sim.take_trace();
            state.applied.push(Action::Step {});
        }
    }

    /// Checks the invariants; at idle, moves to the next phase (or ends the
    /// order); at the bounds, gives the order up.
    fn settle(&self, state: &mut PathState) -> Option<Leaf> {
        loop {
            let is_idle = idle(&state.sim);
            if !is_idle && self.skip_independent(state) {
                continue;
            }
            let violations =
                invariant::check(&state.sim, &self.context, &self.config.invariants, is_idle);
            if !violations.is_empty() {
                return Some(Leaf::Violation(violations));
            }
            if !is_idle {
                if state.depth >= self.config.max_depth
                    || state.sim.tick > state.phase_start.saturating_add(self.config.horizon)
                {
                    return Some(Leaf::Unsettled);
                }
                return None;
            }
            if state.phase + 1 < self.groups.len() {
                state.phase += 1;
                state.fired.clear();
                state.phase_start = state.sim.tick;
                for action in &self.groups[state.phase] {
                    let _ = state.sim.apply(action);
                    state.applied.push(action.clone());
                }
                state.sim.take_trace();
                continue;
            }
            if state.phase + 1 == self.groups.len() && !self.post.is_empty() {
                state.phase += 1;
                for action in &self.post {
                    let _ = state.sim.apply(action);
                    state.applied.push(action.clone());
                }
                state.sim.take_trace();
                let violations = invariant::check(
                    &state.sim,
                    &self.context,
                    &self.config.invariants,
                    idle(&state.sim),
                );
                if !violations.is_empty() {
                    return Some(Leaf::Violation(violations));
                }
            }
            return Some(Leaf::Complete);
        }
    }

    /// The oldest send time of a reconnecting node's call in flight.
    fn oldest_held(&self, sim: &Sim) -> Option<Tick> {
        self.reconnecting
            .iter()
            .flat_map(|node| sim.net.pending.get(node).into_iter().flatten())
            .map(|call| call.sent_at)
            .min()
    }

    /// Whether time may pass up to `next` without holding a call longer
    /// than the delay bound.
    fn may_pass(&self, sim: &Sim, next: Tick) -> bool {
        self.oldest_held(sim)
            .is_none_or(|sent| next <= sent.saturating_add(self.config.max_delay))
    }

    /// Handles the next event without making it a choice point when it
    /// cannot interact with the reconnect: a no-op (stale timer, held or
    /// gone call, empty worker) or the heartbeat traffic of a node that is
    /// not reconnecting. Returns whether it handled one.
    fn skip_independent(&self, state: &mut PathState) -> bool {
        let sim = &state.sim;
        let Some((tick, event)) = sim.queue.iter().next() else {
            return false;
        };
        if tick > state.phase_start.saturating_add(self.config.horizon)
            || !self.may_pass(sim, tick)
            || !self.independent(sim, event)
        {
            return false;
        }
        let _ = state.sim.apply(&Action::Step {});
        state.sim.take_trace();
        state.applied.push(Action::Step {});
        true
    }

    fn independent(&self, sim: &Sim, event: &Event) -> bool {
        use crate::client::ClientTimer;
        use crate::server::rpc::Rpc;
        if fingerprint::noop(sim, event) {
            return true;
        }
        let other = |node: &str| !self.reconnecting.iter().any(|r| r == node);
        match event {
            Event::Deliver { node, call } => sim
                .net
                .get(node, *call)
                .is_some_and(|p| other(node) && matches!(p.rpc, Rpc::UpdateStatus)),
            Event::Reply { node, rpc, .. } => other(node) && matches!(**rpc, Rpc::UpdateStatus),
            Event::Client {
                node,
                timer: ClientTimer::Heartbeat { .. },
            } => other(node),
            _ => false,
        }
    }

    /// The choices available in `state`, the natural next event first.
    fn choices(&self, state: &PathState) -> Vec<Choice> {
        let sim = &state.sim;
        let mut choices = Vec::new();
        let mut oldest_held: Option<Tick> = None;
        let mut delivers = Vec::new();
        for node in &self.reconnecting {
            for call in sim.net.pending.get(node).into_iter().flatten() {
                oldest_held = Some(oldest_held.map_or(call.sent_at, |t| t.min(call.sent_at)));
                delivers.push(Choice::Deliver {
                    node: node.clone(),
                    call: call.id,
                    rpc: call.rpc.name().to_string(),
                });
            }
        }
        if let Some(next) = sim.queue.peek_tick()
            && oldest_held.is_none_or(|sent| next <= sent.saturating_add(self.config.max_delay))
        {
            choices.push(Choice::Step);
        }
        choices.extend(delivers);
        // The worker takes the broker's head by itself (a `step`); the
        // broker's other choices are the other ready evals.
        let skip_head = usize::from(sim.worker_scheduled);
        for eval in sim
            .server
            .state
            .broker
            .ready_ids()
            .into_iter()
            .skip(skip_head)
        {
            choices.push(Choice::ProcessEval { eval });
        }
        if self.config.fire_loops {
            for node in &self.reconnecting {
                if !sim.net.link(node).up {
                    continue;
                }
                let Some(client) = sim.clients.get(node) else {
                    continue;
                };
                let in_flight = |name: &str| {
                    sim.net
                        .pending
                        .get(node)
                        .is_some_and(|calls| calls.iter().any(|c| c.rpc.name() == name))
                };
                // A loop firing early matters only as a race with a call
                // of the same node that is still in flight.
                if sim
                    .net
                    .pending
                    .get(node)
                    .is_none_or(|calls| calls.is_empty())
                {
                    continue;
                }
                let fired = |l: ClientLoop| state.fired.contains(&(node.clone(), l));
                if !fired(ClientLoop::Heartbeat)
                    && client.next_heartbeat.is_some_and(|t| t > sim.tick)
                    && !in_flight("Node.UpdateStatus")
                    && !in_flight("Node.Register")
                {
                    choices.push(Choice::FireLoop {
                        node: node.clone(),
                        client_loop: ClientLoop::Heartbeat,
                    });
                }
                if !fired(ClientLoop::Watch)
                    && client.registered
                    && !client.watch_in_flight
                    && !client.watch_parked
                {
                    choices.push(Choice::FireLoop {
                        node: node.clone(),
                        client_loop: ClientLoop::Watch,
                    });
                }
                if !fired(ClientLoop::AllocSync)
                    && !client.pending_updates.is_empty()
                    && !client.update_in_flight
                {
                    choices.push(Choice::FireLoop {
                        node: node.clone(),
                        client_loop: ClientLoop::AllocSync,
                    });
                }
            }
        }
        choices
    }

    fn space_estimate(&self) -> f64 {
        if self.exhaustive {
            self.space_size
        } else if self.walks > 0 {
            self.knuth_sum / self.walks as f64
        } else {
            0.0
        }
    }

    /// The result so far (final once [`Explorer::is_done`]).
    pub fn result(&self) -> ExploreResult {
        let space_size = self.space_estimate();
        ExploreResult {
            scenario: self.scenario.name.clone(),
            profile: self.profile.name.clone(),
            seed: self.config.seed,
            window: self.window,
            reconnecting_nodes: self.reconnecting.clone(),
            exhaustive: self.exhaustive,
            orders: self.orders(),
            complete_orders: self.complete,
            pruned_orders: self.pruned,
            postponed_orders: self.postponed,
            subsumed_orders: self.subsumed,
            unsettled_orders: self.unsettled,
            violating_orders: self.violating,
            states: self.states,
            distinct_states: self.seen.len() as u64,
            idle_states: self.idle.len() as u64,
            dedup_ratio: if self.states == 0 {
                0.0
            } else {
                self.duplicates as f64 / self.states as f64
            },
            space_size,
            invariants: Invariant::ALL
                .iter()
                .map(|&invariant| {
                    let (count, shortest) =
                        self.reports.get(&invariant).cloned().unwrap_or((0, None));
                    InvariantReport {
                        invariant,
                        name: invariant.name().to_string(),
                        explanation: invariant.explanation().to_string(),
                        enabled: self.config.invariants.contains(&invariant),
                        violating_orders: count,
                        shortest,
                        details: self
                            .details
                            .get(&invariant)
                            .map(|d| d.iter().cloned().collect())
                            .unwrap_or_default(),
                    }
                })
                .collect(),
        }
    }
}

/// Whether `sleeping` (a choice whose orders were searched, with its
/// footprint) stays asleep after `taken`: the two are independent moves
/// ([`reduction::independent`]: no time passes, they involve different
/// clients, at most one draws from the RNG, and not both touch the server
/// unless both only read it; every two server writes share the eval
/// broker), so taking `sleeping` after `taken` only reorders an order
/// searched already. A loop fired early never sleeps through anything but
/// another loop (loop postponement moves loops later; sleeping would move
/// them earlier), and `step` and eval choices never sleep.
fn sleeps_through(
    sleeping: &Choice,
    sleeping_fp: &Footprint,
    taken: &Choice,
    taken_fp: &Footprint,
) -> bool {
    match sleeping {
        Choice::Step | Choice::ProcessEval { .. } => false,
        Choice::FireLoop { .. } if !matches!(taken, Choice::FireLoop { .. }) => false,
        _ => reduction::independent(sleeping_fp, taken_fp),
    }
}

fn step_text(n: usize) -> String {
    if n == 1 {
        "step".to_string()
    } else {
        format!("step x{n}")
    }
}

/// Runs a whole search.
pub fn explore(scenario: &Scenario, config: ExploreConfig) -> Result<ExploreResult, ExploreError> {
    Ok(Explorer::new(scenario, config)?.run())
}
