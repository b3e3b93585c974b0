//! The playground facade: the one object the UI talks to. It owns a
//! simulation [`Session`], applies the user's commands to it and builds the
//! view model of the current step. The UI never reaches past it, so
//! everything it shows is computed here, natively testable.

use crate::model::{Allocation, Deployment};
use crate::scenario::format::Action;
use crate::server::{AllocIndex, EvalRecord, time_tick};
use crate::sim::Sim;
use crate::sim::history::{ScriptEdit, Session, SessionError, StepRecord};
use crate::sim::trace::{TraceEntry, TraceEvent, push_call, push_seconds, short};
use crate::view::{
    AllocView, CallView, DecisionView, DeploymentGroupView, DeploymentView, EvalView, JobView,
    NodeView, PlaygroundView, SeqEventView,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::rc::Rc;

/// A built-in scenario: its file name (without `.json`) and its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinScenario {
    /// File name without `.json`, e.g. `issue-12680`.
    pub id: &'static str,
    /// The scenario JSON.
    pub json: &'static str,
}

macro_rules! builtin {
    ($($id:literal),* $(,)?) => {
        &[$(BuiltinScenario { id: $id, json: include_str!(concat!("../scenarios/", $id, ".json")) }),*]
    };
}

/// The scenarios in `scenarios/`, in the order the lessons page lists them.
pub const BUILTIN_SCENARIOS: &[BuiltinScenario] = builtin!(
    "disconnect-reconnect-best-score",
    "disconnect-reconnect-keep-original",
    "disconnect-reconnect-keep-replacement",
    "disconnect-reconnect-longest-running",
    "lost-after-expiry",
    "issue-12680",
    "issue-14925",
    "pr-15068-heartbeat-order",
    "pr-15808-register-race",
    "issue-10200-preempt-watcher",
    "rolling-update",
    "rolling-update-auto-revert",
    "canary-auto-promote",
    "canary-manual-promote",
    "rolling-update-operator",
);

/// Looks a built-in scenario up by ID.
pub fn builtin(id: &str) -> Option<&'static BuiltinScenario> {
    BUILTIN_SCENARIOS.iter().find(|s| s.id == id)
}

/// How many trace lines the view carries at least (the newest); the whole
/// trace is [`Playground::trace_text`]. As for [`SEQUENCE_WINDOW`], the
/// window's first line moves in steps of as many lines, so it carries up to
/// twice as many less one: while its first line stays, the UI's chunks of
/// lines stay (at 200 nodes a step adds 20 to 50 lines, and a window moved
/// at every step rewrote every chunk of the trace log).
pub const TRACE_WINDOW: usize = 400;

/// How many sequence-diagram events the view carries at least (the newest).
/// The window's first event moves in steps of as many events, so it carries
/// up to twice as many less one: while its first event stays, so does every
/// row of the diagram (at 200 nodes a step adds more events than the diagram
/// shows rows, and a window moved at every step changed every drawn row).
pub const SEQUENCE_WINDOW: usize = 150;

/// A command from the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Command {
    /// Apply the next action of the script, or handle one event past its end.
    Step,
    /// Process one ready evaluation.
    StepEval,
    /// Go back one step.
    Back,
    /// Go to step N.
    JumpTo(usize),
    /// Back to the start.
    Reset,
    /// Run the rest of the script.
    RunToEnd,
    /// Cut a client's link to the servers.
    CutLink(String),
    /// Restore a client's link to the servers.
    RestoreLink(String),
    /// Switch the Nomad version profile.
    SetProfile(String),
    /// Apply any script action at the current step (in the past, this forks a branch).
    Act(Action),
    /// Edit the action log (an edit before the current step forks a branch).
    EditScript(ScriptEdit),
    /// Make branch N the current log (the current one takes its place).
    SwitchBranch(usize),
}

/// The playground: a session and the view of its current step.
#[derive(Debug, Clone)]
pub struct Playground {
    session: Session,
    view: PlaygroundView,
    /// Alloc views of earlier steps, reused while their alloc is unchanged.
    cache: ViewCache,
    /// The last command's error, shown to the user.
    error: Option<String>,
    /// Counts the changes of the action log and its branches (see
    /// [`Playground::log_revision`]).
    log_revision: u64,
}

impl PartialEq for Playground {
    fn eq(&self, other: &Self) -> bool {
        self.view == other.view && self.error == other.error
    }
}

impl Default for Playground {
    fn default() -> Self {
        Self::builtin(BUILTIN_SCENARIOS[0].id).expect("built-in scenarios are valid")
    }
}

impl Playground {
    /// Loads a scenario from JSON; `profile` overrides the scenario's own.
    pub fn load(json: &str, profile: Option<&str>) -> Result<Self, SessionError> {
        Ok(Self::from_session(Session::load(json, profile)?))
    }

    /// Opens a parsed scenario (a share link's three parts) under `profile`
    /// (default: the scenario's own) at step `step`, building the view once.
    pub fn open(
        scenario: crate::scenario::format::Scenario,
        profile: Option<&str>,
        step: usize,
    ) -> Result<Self, SessionError> {
        let mut session = Session::new(scenario, profile)?;
        session.jump(step);
        Ok(Self::from_session(session))
    }

    /// Loads a built-in scenario by ID.
    pub fn builtin(id: &str) -> Result<Self, SessionError> {
        let scenario = builtin(id).ok_or_else(|| SessionError::UnknownProfile(id.to_string()))?;
        Self::load(scenario.json, None)
    }

    /// The underlying session.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The last command's error, if it failed.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Applies one command and rebuilds the view.
    pub fn apply(&mut self, command: Command) {
        self.error = None;
        // Moving through the history keeps the entries before the cursor; anything else
        // may rewrite them.
        if !matches!(
            command,
            Command::Step
                | Command::StepEval
                | Command::Back
                | Command::JumpTo(_)
                | Command::Reset
                | Command::RunToEnd
        ) {
            self.cache.forget_trace();
        }
        // Only moving through the history leaves the log as it was, and a step
        // within it (past its end, a step is recorded as an action).
        let (actions, branches) = (self.session.actions().len(), self.session.branches().len());
        let navigates = matches!(
            command,
            Command::Step | Command::Back | Command::JumpTo(_) | Command::Reset | Command::RunToEnd
        );
        match command {
            Command::Step => {
                self.session.step();
            }
            Command::StepEval => {
                self.session.step_eval();
            }
            Command::Back => self.session.back(),
            Command::JumpTo(step) => self.session.jump(step),
            Command::Reset => self.session.reset(),
            Command::RunToEnd => self.session.run_to_end(),
            Command::CutLink(node) => self.session.apply(Action::LinkDown { node }),
            Command::RestoreLink(node) => self.session.apply(Action::LinkUp { node }),
            Command::SetProfile(profile) => {
                if let Err(err) = self.session.set_profile(&profile) {
                    self.error = Some(err.to_string());
                }
            }
            Command::Act(action) => self.session.apply(action),
            Command::EditScript(edit) => {
                if let Err(err) = self.session.edit_script(edit) {
                    self.error = Some(err.to_string());
                }
            }
            Command::SwitchBranch(index) => {
                if let Err(err) = self.session.switch_branch(index) {
                    self.error = Some(err.to_string());
                }
            }
        }
        if !navigates
            || actions != self.session.actions().len()
            || branches != self.session.branches().len()
        {
            self.log_revision += 1;
        }
        self.refresh();
    }

    /// A number that changes whenever the action log or its branches may
    /// have changed (an edit, a branch switch, an action applied, a step
    /// past the log's end), and stays while the user only moves through the
    /// history: the script editor rebuilds its lines only when it changes.
    /// It counts within this playground: another one may have the same.
    pub fn log_revision(&self) -> u64 {
        self.log_revision
    }

    /// The view of the current step.
    pub fn view(&self) -> &PlaygroundView {
        &self.view
    }

    /// The trace up to the current step, as text (the same bytes natively and in wasm).
    pub fn trace_text(&self) -> String {
        crate::sim::trace::trace_text(&self.session.trace())
    }

    /// The same scenario and action log under another profile, at the same
    /// step (the B side of compare mode).
    pub fn with_profile(&self, profile: &str) -> Result<Playground, SessionError> {
        let mut scenario = self.session.scenario().clone();
        scenario.script = self.session.actions().to_vec();
        Self::open(scenario, Some(profile), self.session.cursor())
    }

    /// Replays `leader`'s action log up to its step (compare mode: B follows A).
    pub fn follow(&mut self, leader: &Playground) {
        self.error = crate::compare::follow_session(&leader.session, &mut self.session)
            .err()
            .map(|err| err.to_string());
        self.cache.forget_trace();
        self.log_revision += 1;
        self.refresh();
    }

    /// What differs between this run (A) and `other` (B) at the current step.
    pub fn compare(&self, other: &Playground) -> crate::compare::ViewDiff {
        let mut diff = crate::compare::diff_views(&self.view, &other.view);
        diff.first_difference =
            crate::compare::first_trace_difference(&self.session, &other.session);
        diff
    }

    /// The script editor's view of the action log and branches.
    pub fn script(&self) -> crate::script_view::ScriptView {
        crate::script_view::script_view(&self.session)
    }

    /// One sentence saying what the current step did (for a live region).
    pub fn narration(&self) -> String {
        crate::script_view::narrate(&self.session)
    }

    /// A playground over `session`, with its view built once.
    fn from_session(session: Session) -> Self {
        let mut playground = Playground {
            session,
            view: PlaygroundView::default(),
            cache: ViewCache::default(),
            error: None,
            log_revision: 0,
        };
        playground.refresh();
        playground
    }

    fn refresh(&mut self) {
        self.view = build_view_cached(&self.session, &mut self.cache);
    }
}

fn time_label(tick: u64) -> String {
    let mut label = String::with_capacity(12);
    label.push_str("t=");
    push_seconds(&mut label, tick, 0);
    label.push('s');
    label
}

fn opt(id: &str) -> Option<String> {
    (!id.is_empty()).then(|| id.to_string())
}

/// A node's alloc views in ID order, each with the stored alloc it was built from.
type NodeAllocViews = Vec<(Rc<Allocation>, Rc<AllocView>)>;

/// What the last build made of one node: its alloc views, and its view
/// (reused while nothing it shows changed).
#[derive(Debug, Clone, Default)]
struct CachedNode {
    /// The store's list of the node's allocs the views were built from.
    store: Option<Rc<AllocIndex>>,
    allocs: NodeAllocViews,
    view: Option<Rc<NodeView>>,
}

/// Alloc views built at the last step, by node, in ID order, each with the
/// stored alloc it was built from: an alloc the state store has not
/// rewritten since (the same `Rc`) keeps its view, so a step builds views
/// only for the allocs it changed, and the UI sees the unchanged ones as
/// the same `Rc` (its equality checks stop at the pointer).
#[derive(Debug, Clone, Default)]
pub struct ViewCache {
    /// By node ID, in ID order (as the simulation's clients).
    nodes: Vec<(String, CachedNode)>,
    /// Whether the last build found allocs appear or disappear (which
    /// changes the nodes the eval views name).
    allocs_moved: bool,
    /// Eval views by eval ID, with the stored record they were built from
    /// (a processed or changed eval is a new record): an unchanged eval
    /// keeps its view's `Rc`, which the UI's comparisons stop at.
    evals: BTreeMap<String, (Rc<EvalRecord>, Rc<EvalView>)>,
    /// The trace lines of the last build, with the position of the first in
    /// the whole trace: a line depends only on its entry, and stepping or
    /// moving back leaves the entries before the cursor as they were.
    trace: (usize, Vec<Rc<str>>),
    /// The same for the sequence diagram's events (position among the
    /// events the diagram draws).
    sequence: (usize, Vec<Rc<SeqEventView>>),
    /// The sequence diagram's lanes of the last build that needed them.
    lanes: Option<LaneMap>,
    /// What the view needs of each step's record before the current one,
    /// so that a step reads only its own entries and the windows' (the
    /// trace grows with every step).
    records: Vec<RecordSummary>,
}

/// The counts and violation lines of one step's record.
#[derive(Debug, Clone, Default)]
struct RecordSummary {
    /// How many trace entries it holds.
    entries: usize,
    /// How many of them the sequence diagram draws.
    drawing: usize,
    /// Its assertion and invariant failures, as the view lists them.
    violations: Vec<String>,
}

impl RecordSummary {
    fn of(record: &StepRecord) -> Self {
        RecordSummary {
            entries: record.entries.len(),
            drawing: record
                .entries
                .iter()
                .filter(|entry| draws_seq_event(&entry.event))
                .count(),
            violations: record
                .entries
                .iter()
                .filter_map(|entry| match &entry.event {
                    TraceEvent::Violation { detail } => {
                        Some(format!("step {}: {detail}", entry.step))
                    }
                    TraceEvent::Assertion { ok: false, detail } => {
                        Some(format!("step {}: assertion failed: {detail}", entry.step))
                    }
                    _ => None,
                })
                .collect(),
        }
    }
}

impl ViewCache {
    /// Forgets the trace lines and sequence events of earlier builds: call it
    /// after anything that may rewrite the history before the cursor (a
    /// script edit, a branch switch, another profile, an action applied in
    /// the past). Moving through the history (step, back, jump) needs no call.
    pub fn forget_trace(&mut self) {
        self.trace = (0, Vec::new());
        self.sequence = (0, Vec::new());
        self.records.clear();
    }
}

/// Builds the whole view of a session's current step.
pub fn build_view(session: &Session) -> PlaygroundView {
    build_view_cached(session, &mut ViewCache::default())
}

/// [`build_view`], reusing (and updating) the alloc views of `cache`.
pub fn build_view_cached(session: &Session, cache: &mut ViewCache) -> PlaygroundView {
    let sim = session.sim();
    // The trace grows with every step, so nothing here may walk, copy or format all of it:
    // the records before the current one are summed up once (the cache keeps their
    // summaries), and only the newest records, those the windows below show, are read.
    let records = session.records();
    cache.records.truncate(records.len());
    for (index, record) in records.iter().enumerate() {
        // The current record is read again: stepping one eval adds to it.
        let last = index + 1 == records.len();
        match cache.records.get_mut(index) {
            Some(summary) if !last && summary.entries == record.entries.len() => {}
            Some(summary) => *summary = RecordSummary::of(record),
            None => cache.records.push(RecordSummary::of(record)),
        }
    }
    let total: usize = cache.records.iter().map(|s| s.entries).sum();
    let drawn: usize = cache.records.iter().map(|s| s.drawing).sum();
    let sequence_hidden = window_start(drawn, SEQUENCE_WINDOW);
    let trace_from = window_start(total, TRACE_WINDOW);
    let violations: Vec<String> = cache
        .records
        .iter()
        .flat_map(|s| s.violations.iter().cloned())
        .collect();
    // The newest records that hold the windows' items the caches lack (at a
    // step, those of the step's own record).
    let trace_needed = first_missing(&cache.trace, trace_from).min(total);
    let sequence_needed = first_missing(&cache.sequence, sequence_hidden).min(drawn);
    let mut first = records.len();
    let (mut tail_entries, mut tail_drawing) = (0, 0);
    while first > 0
        && (tail_entries < total - trace_needed || tail_drawing < drawn - sequence_needed)
    {
        first -= 1;
        tail_entries += cache.records[first].entries;
        tail_drawing += cache.records[first].drawing;
    }
    let tail: Vec<&TraceEntry> = records[first..]
        .iter()
        .flat_map(|record| record.entries.iter())
        .collect();
    let tail_from = total - tail.len();
    let scenario = session.scenario();
    let mut profiles: Vec<String> = crate::profile::profile_names()
        .into_iter()
        .map(str::to_string)
        .collect();
    if !profiles.contains(&sim.profile.name) {
        profiles.push(sim.profile.name.clone());
    }
    // The entries of the tail the sequence diagram draws, by their position in the tail.
    let drawing: Vec<usize> = (0..tail.len())
        .filter(|&index| draws_seq_event(&tail[index].event))
        .collect();
    let drawing_from = drawn - drawing.len();
    // The lanes are looked up only for the events new in the window, in the
    // lanes of the last build while the clients are the same.
    let kept_lanes = std::cell::Cell::new(cache.lanes.take());
    let lanes = std::cell::OnceCell::new();
    let lane = |node: &str| {
        let lanes = lanes.get_or_init(|| LaneMap::of(sim, kept_lanes.take()));
        lanes.lane(node).to_string()
    };
    let (nodes, node_ttls) = node_views(sim, cache);
    let mut line = String::new();
    let sequence = reuse_window(&mut cache.sequence, sequence_hidden, drawn, |index| {
        Rc::new(seq_event(tail[drawing[index - drawing_from]], &lane).unwrap_or_default())
    });
    cache.lanes = lanes.into_inner().or_else(|| kept_lanes.into_inner());
    PlaygroundView {
        scenario: scenario.name.clone(),
        profile: sim.profile.name.clone(),
        profiles,
        time: time_label(sim.tick),
        step: session.cursor(),
        steps_total: session.actions().len(),
        can_step: session.cursor() < session.actions().len() || sim.queue.peek_tick().is_some(),
        nodes,
        node_ttls,
        jobs: job_views(session),
        evals: eval_views(sim, records, cache),
        calls: call_views(sim),
        sequence_hidden,
        sequence,
        trace: reuse_window(&mut cache.trace, trace_from, total, |index| {
            // One buffer for all the new lines: each is then copied once, into its `Rc`.
            line.clear();
            tail[index - tail_from].write_line(&mut line);
            Rc::from(line.as_str())
        }),
        trace_hidden: trace_from,
        violations,
        notes: notes(session),
    }
}

fn alloc_view(alloc: &Allocation) -> AllocView {
    AllocView {
        id: alloc.id.clone(),
        short_id: short(&alloc.id).to_string(),
        name: alloc.name.clone(),
        name_index: alloc.name_index(),
        node_id: alloc.node_id.clone(),
        client_status: alloc.client_status.as_str().to_string(),
        desired_status: alloc.desired_status.as_str().to_string(),
        job_version: alloc.job_version(),
        alloc_states: alloc
            .alloc_states
            .iter()
            .map(|state| (state.value.clone(), time_label(time_tick(state.time))))
            .collect(),
        previous: opt(&alloc.previous_allocation),
        next: opt(&alloc.next_allocation),
        followup_eval: opt(&alloc.followup_eval_id),
        tasks: alloc
            .task_states
            .iter()
            .map(|(task, state)| (task.clone(), state.state.clone(), 0))
            .collect(),
        deployment_health: alloc
            .deployment_status
            .as_ref()
            .and_then(|d| d.healthy)
            .map(|healthy| if healthy { "healthy" } else { "unhealthy" }.to_string()),
        canary: alloc.is_canary(),
    }
}

fn job_views(session: &Session) -> Vec<JobView> {
    let state = &session.sim().server.state;
    // Each job's latest deployment (the highest create index), in one pass.
    let mut latest: BTreeMap<&str, &Deployment> = BTreeMap::new();
    for deployment in state.deployments.values() {
        let entry = latest
            .entry(deployment.job_id.as_str())
            .or_insert(deployment);
        if deployment.create_index > entry.create_index {
            *entry = deployment;
        }
    }
    state
        .jobs
        .values()
        .map(|record| {
            let job = &record.job;
            JobView {
                id: job.id.clone(),
                job_type: job.job_type.to_string(),
                version: job.version,
                stopped: job.stop,
                revert_to: record
                    .specs
                    .range(..job.version)
                    .rev()
                    .map(|(version, _)| *version)
                    .find(|version| !record.stopped_versions.contains(version)),
                groups: job
                    .task_groups
                    .iter()
                    .map(|group| (group.name.clone(), u64::from(group.count)))
                    .collect(),
                deployment: latest.get(job.id.as_str()).map(|d| deployment_view(d)),
            }
        })
        .collect()
}

fn deployment_view(deployment: &Deployment) -> DeploymentView {
    let groups: Vec<DeploymentGroupView> = deployment
        .task_groups
        .iter()
        .map(|(name, group)| DeploymentGroupView {
            name: name.clone(),
            desired: group.desired_total,
            placed: group.placed_allocs,
            healthy: group.healthy_allocs,
            unhealthy: group.unhealthy_allocs,
            desired_canaries: group.desired_canaries,
            placed_canaries: u32::try_from(group.placed_canaries.len()).unwrap_or(u32::MAX),
            promoted: group.promoted,
            auto_promote: group.auto_promote,
            auto_revert: group.auto_revert,
            progress_deadline: group.progress_deadline.to_string(),
            require_progress_by: (!group.require_progress_by.is_zero())
                .then(|| time_label(time_tick(group.require_progress_by))),
        })
        .collect();
    let active = deployment.status.is_active();
    DeploymentView {
        id: deployment.id.clone(),
        short_id: short(&deployment.id).to_string(),
        job_version: deployment.job_version,
        status: deployment.status.as_str().to_string(),
        description: deployment.status_description.clone(),
        active,
        needs_promotion: active && groups.iter().any(|g| g.desired_canaries > 0 && !g.promoted),
        groups,
    }
}

/// The entries of a map sorted by key, read alongside keys visited in
/// increasing order: each look-up skips the entries before its key, so
/// looking up every key of another sorted map walks each map once instead
/// of searching it per key.
struct SortedWalk<I: Iterator> {
    entries: std::iter::Peekable<I>,
}

impl<K: AsRef<str>, V, I: Iterator<Item = (K, V)>> SortedWalk<I> {
    fn new(entries: impl IntoIterator<IntoIter = I>) -> Self {
        SortedWalk {
            entries: entries.into_iter().peekable(),
        }
    }

    /// The entry of `key`, if the map has it; `key` must not be lower than
    /// the keys asked for before.
    fn take(&mut self, key: &str) -> Option<(K, V)> {
        while self.entries.next_if(|(k, _)| k.as_ref() < key).is_some() {}
        self.entries.next_if(|(k, _)| k.as_ref() == key)
    }

    /// The value of `key` (see [`SortedWalk::take`]).
    fn get(&mut self, key: &str) -> Option<V> {
        self.take(key).map(|(_, value)| value)
    }
}

/// The node views, and each node's heartbeat TTL (apart: it changes at every step).
fn node_views(sim: &Sim, cache: &mut ViewCache) -> (Vec<Rc<NodeView>>, Vec<Option<u64>>) {
    let state = &sim.server.state;
    // The clients, the cache and the store's maps are all in node ID order: one walk over each.
    let mut cached_nodes = SortedWalk::new(std::mem::take(&mut cache.nodes));
    let mut records = SortedWalk::new(&state.nodes);
    let mut stores = SortedWalk::new(&state.allocs_by_node);
    let mut timers = SortedWalk::new(&state.heartbeat_timers);
    let mut links = SortedWalk::new(&sim.net.links);
    let mut fresh = Vec::with_capacity(sim.clients.len());
    let mut moved = false;
    let mut ttls = Vec::with_capacity(sim.clients.len());
    let mut nodes = Vec::with_capacity(sim.clients.len());
    for (id, client) in &sim.clients {
        let record = records.get(id);
        let link_up = links.get(id).is_none_or(|link| link.up);
        let (key, cached_node) = cached_nodes
            .take(id)
            .unwrap_or_else(|| (id.clone(), CachedNode::default()));
        let CachedNode {
            store: cached_store,
            allocs: cached,
            view: cached_view,
        } = cached_node;
        // The store's per-node index holds the same allocs as the alloc table, in ID order,
        // and so does the node's cached list: walk both together.
        let store = stores.get(id);
        // Most steps change no alloc of most nodes: the same list (the store copies a
        // node's list to write it, and the cache holds it), or else the same `Rc`s in
        // the same order.
        let same = match (store, &cached_store) {
            (Some(store), Some(built_from)) if Rc::ptr_eq(store, built_from) => true,
            _ => {
                store.map_or(0, |a| a.len()) == cached.len()
                    && store
                        .into_iter()
                        .flat_map(|a| a.values())
                        .zip(&cached)
                        .all(|(alloc, (built_from, _))| Rc::ptr_eq(alloc, built_from))
            }
        };
        let built = if same {
            cached
        } else {
            let mut next = 0;
            let mut built = Vec::new();
            for alloc in store.into_iter().flat_map(|a| a.values()) {
                let skipped = cached[next..]
                    .iter()
                    .take_while(|(c, _)| c.id < alloc.id)
                    .count();
                moved |= skipped > 0;
                next += skipped;
                let view = match cached.get(next) {
                    Some((built_from, view)) if built_from.id == alloc.id => {
                        next += 1;
                        if Rc::ptr_eq(built_from, alloc) {
                            Rc::clone(view)
                        } else {
                            Rc::new(alloc_view(alloc))
                        }
                    }
                    _ => {
                        moved = true;
                        Rc::new(alloc_view(alloc))
                    }
                };
                built.push((Rc::clone(alloc), view));
            }
            moved |= next < cached.len();
            built
        };
        ttls.push(
            timers
                .get(id)
                .map(|deadline| deadline.saturating_sub(sim.tick)),
        );
        let status = record.map_or("unregistered", |r| r.node.status.as_str());
        let eligible = record.is_some_and(|r| {
            r.node.scheduling_eligibility == crate::model::SchedulingEligibility::Eligible
        });
        let draining = record.is_some_and(|r| r.node.draining());
        let name = &client.record.node.name;
        // The last view, when nothing it shows changed (its alloc views are the same `Rc`s).
        let unchanged = |view: &NodeView| {
            view.name == *name
                && view.status == status
                && view.link_up == link_up
                && view.eligible == eligible
                && view.draining == draining
                && view.allocs.len() == built.len()
                && view
                    .allocs
                    .iter()
                    .zip(&built)
                    .all(|(a, (_, b))| Rc::ptr_eq(a, b))
        };
        let view = match cached_view {
            Some(view) if unchanged(&view) => view,
            _ => Rc::new(NodeView {
                id: id.clone(),
                name: name.clone(),
                status: status.to_string(),
                link_up,
                eligible,
                draining,
                allocs: built.iter().map(|(_, view)| Rc::clone(view)).collect(),
            }),
        };
        nodes.push(Rc::clone(&view));
        fresh.push((
            key,
            CachedNode {
                store: store.cloned(),
                allocs: built,
                view: Some(view),
            },
        ));
    }
    // Allocs gone from the store (garbage-collected) leave the cache.
    moved |= cached_nodes
        .entries
        .any(|(_, node)| !node.allocs.is_empty());
    cache.nodes = fresh;
    cache.allocs_moved = moved;
    (nodes, ttls)
}

fn eval_views(sim: &Sim, records: &[StepRecord], cache: &mut ViewCache) -> Vec<Rc<EvalView>> {
    let state = &sim.server.state;
    let mut fresh = BTreeMap::new();
    let mut views = Vec::with_capacity(state.eval_order.len());
    let mut missed = Vec::new();
    for record in state.eval_order.iter().filter_map(|id| state.evals.get(id)) {
        match cache.evals.remove_entry(&record.eval.id) {
            Some((id, (built_from, mut view))) if Rc::ptr_eq(&built_from, record) => {
                // The decisions name the node of each alloc, which is gone
                // once the alloc is garbage-collected (or back after a step back).
                let node_of = |d: &DecisionView| state.allocs.get(&d.alloc_id).map(|a| &a.node_id);
                let stale = |d: &DecisionView| {
                    node_of(d).map_or(!d.node_id.is_empty(), |node| *node != d.node_id)
                };
                if cache.allocs_moved && view.decisions.iter().any(stale) {
                    // A new view (the last one may still be shown).
                    for decision in Rc::make_mut(&mut Rc::make_mut(&mut view).decisions) {
                        decision.node_id = node_of(decision).cloned().unwrap_or_default();
                    }
                }
                views.push(Some(Rc::clone(&view)));
                fresh.insert(id, (built_from, view));
            }
            _ => {
                missed.push((views.len(), record));
                views.push(None);
            }
        }
    }
    if !missed.is_empty() {
        // Only here is the whole trace read: an eval was processed or changed.
        let entries: Vec<&TraceEntry> = records
            .iter()
            .flat_map(|record| record.entries.iter())
            .collect();
        let built = build_eval_views(sim, &entries, missed.iter().map(|(_, record)| *record));
        for ((position, record), view) in missed.iter().zip(built) {
            let view = Rc::new(view);
            fresh.insert(
                record.eval.id.clone(),
                (Rc::clone(record), Rc::clone(&view)),
            );
            views[*position] = Some(view);
        }
    }
    cache.evals = fresh;
    views.into_iter().flatten().collect()
}

/// The views of some evals, from the state and the last processing of each
/// in the trace.
fn build_eval_views<'a>(
    sim: &Sim,
    entries: &[&TraceEntry],
    records: impl Iterator<Item = &'a Rc<EvalRecord>>,
) -> Vec<EvalView> {
    let state = &sim.server.state;
    // The last processing of each eval, found in one pass over the trace.
    let mut processed_by_eval = BTreeMap::new();
    for entry in entries {
        if let TraceEvent::EvalProcessed(processed) = &entry.event {
            processed_by_eval.insert(
                &*processed.eval,
                (
                    &processed.desired_tg_updates,
                    &processed.reasons,
                    &processed.plan,
                ),
            );
        }
    }
    records
        .map(|record| {
            let eval = &record.eval;
            let processed = processed_by_eval.get(eval.id.as_str()).copied();
            let (desired_tg_updates, decisions) = match processed {
                Some((updates, reasons, plan)) => (
                    updates
                        .iter()
                        .map(|(group, u)| {
                            let counters = [
                                ("Ignore", u.ignore),
                                ("Place", u.place),
                                ("Migrate", u.migrate),
                                ("Stop", u.stop),
                                ("InPlaceUpdate", u.in_place_update),
                                ("DestructiveUpdate", u.destructive_update),
                                ("Canary", u.canary),
                                ("Preemptions", u.preemptions),
                                ("Disconnect", u.disconnect),
                                ("Reconnect", u.reconnect),
                                ("RescheduleNow", u.reschedule_now),
                                ("RescheduleLater", u.reschedule_later),
                            ];
                            (
                                group.clone(),
                                counters
                                    .iter()
                                    .map(|(name, value)| ((*name).to_string(), *value))
                                    .collect(),
                            )
                        })
                        .collect(),
                    reasons
                        .iter()
                        .map(|reason| {
                            let alloc_short = short(reason.alloc);
                            let effect: Vec<&str> = plan
                                .iter()
                                .filter(|item| {
                                    !alloc_short.is_empty() && item.contains(alloc_short)
                                })
                                .map(|item| &**item)
                                .collect();
                            DecisionView {
                                alloc_id: reason.alloc.to_string(),
                                alloc_name: reason.name.to_string(),
                                node_id: state
                                    .allocs
                                    .get(reason.alloc)
                                    .map(|a| a.node_id.clone())
                                    .unwrap_or_default(),
                                set: reason.set.to_string(),
                                why: reason.reason.to_string(),
                                effect: if effect.is_empty() {
                                    "none".to_string()
                                } else {
                                    effect.join("; ")
                                },
                            }
                        })
                        .collect::<Vec<_>>()
                        .into(),
                ),
                None => (Vec::new(), Rc::default()),
            };
            EvalView {
                id: eval.id.clone(),
                short_id: short(&eval.id).to_string(),
                job_id: eval.job_id.clone(),
                node_id: opt(&eval.node_id),
                triggered_by: eval.triggered_by.clone(),
                status: eval.status.as_str().to_string(),
                priority: u32::try_from(eval.priority).unwrap_or(0),
                wait_until: record.wait_until.map(time_label),
                desired_tg_updates,
                decisions,
            }
        })
        .collect()
}

fn call_views(sim: &Sim) -> Vec<CallView> {
    sim.net
        .pending
        .iter()
        .flat_map(|(node, calls)| {
            calls.iter().map(move |call| {
                let code = call.rpc.code();
                CallView {
                    id: format!("{}#{}", code.to_ascii_lowercase(), call.id),
                    call: call.id.to_string(),
                    node_id: node.clone(),
                    code: code.to_string(),
                    rpc: call.rpc.name().to_string(),
                    detail: format!("sent {}", time_label(call.sent_at)),
                    fate: if call.held { "held" } else { "in-flight" }.to_string(),
                }
            })
        })
        .collect()
}

/// The sequence diagram's lane of each node reference: the first node in ID
/// order whose ID or name it is; with the clients' IDs and names it was
/// built from.
#[derive(Debug, Clone, Default, PartialEq)]
struct LaneMap {
    /// `(ID, name)` of each client, in ID order.
    clients: Vec<(String, String)>,
    /// The lane (a node ID) of each node ID and name.
    lanes: BTreeMap<String, String>,
}

impl LaneMap {
    /// The lanes of `sim`'s clients: `kept` while it was built from the
    /// same IDs and names (a step seldom changes them; building the map at
    /// every step was a third of a step's view build at 200 nodes, 270,000
    /// of 830,000 instructions).
    fn of(sim: &Sim, kept: Option<LaneMap>) -> LaneMap {
        let same =
            |map: &LaneMap| {
                map.clients.len() == sim.clients.len()
                    && map.clients.iter().zip(&sim.clients).all(
                        |((id, name), (client_id, client))| {
                            id == client_id && *name == client.record.node.name
                        },
                    )
            };
        if let Some(map) = kept.filter(same) {
            return map;
        }
        let clients: Vec<(String, String)> = sim
            .clients
            .iter()
            .map(|(id, client)| (id.clone(), client.record.node.name.clone()))
            .collect();
        let mut lanes = BTreeMap::new();
        for (id, name) in &clients {
            for reference in [id, name] {
                if !lanes.contains_key(reference) {
                    lanes.insert(reference.clone(), id.clone());
                }
            }
        }
        LaneMap { clients, lanes }
    }

    /// The lane of a node reference (itself when no node has that ID or name).
    fn lane<'a>(&'a self, node: &'a str) -> &'a str {
        self.lanes.get(node).map_or(node, String::as_str)
    }
}

/// Where a window over the newest items of a list `len` long starts: it
/// holds at least the newest `window` items (all of them when there are
/// fewer) and its start moves in whole windows, so it holds fewer than
/// twice as many and stays put while the list grows by less than a window.
fn window_start(len: usize, window: usize) -> usize {
    len.saturating_sub(window) / window * window
}

/// The first position from `from` on that [`reuse_window`] would make rather
/// than copy from `cache` (the positions after it are not in the cache either).
fn first_missing<T>((first, known): &(usize, Vec<T>), from: usize) -> usize {
    if from < *first {
        from
    } else {
        from.max(first + known.len())
    }
}

/// The items `from..to` of a window over a list that only grows or shrinks
/// at its end: those the cached window (`(position of its first, items)`)
/// holds are copied from it, the others made by `make(position)`; the cache
/// then holds the new window.
fn reuse_window<T: Clone>(
    cache: &mut (usize, Vec<T>),
    from: usize,
    to: usize,
    mut make: impl FnMut(usize) -> T,
) -> Vec<T> {
    let (first, known) = &*cache;
    let window: Vec<T> = (from..to)
        .map(
            |index| match index.checked_sub(*first).and_then(|k| known.get(k)) {
                Some(item) => item.clone(),
                None => make(index),
            },
        )
        .collect();
    *cache = (from, window.clone());
    window
}

/// Whether a trace event draws a sequence-diagram event (cheaper than [`seq_event`]).
fn draws_seq_event(event: &TraceEvent) -> bool {
    matches!(
        event,
        TraceEvent::CallSent { .. }
            | TraceEvent::CallHandled { .. }
            | TraceEvent::CallFailed { .. }
            | TraceEvent::NodeStatus { .. }
            | TraceEvent::HeartbeatMissed { .. }
            | TraceEvent::EvalCreated { .. }
            | TraceEvent::EvalProcessed { .. }
            | TraceEvent::Link { .. }
            | TraceEvent::Operator { .. }
    )
}

/// The sequence-diagram event of one trace entry, if it draws one; `lane`
/// maps a node reference to its lane.
fn seq_event(entry: &TraceEntry, lane: &dyn Fn(&str) -> String) -> Option<SeqEventView> {
    let leader = || "leader".to_string();
    // The label is written piece by piece (a step draws tens of events).
    let mut label = String::new();
    let (from, to, kind) = match &entry.event {
        TraceEvent::CallSent {
            node, call, rpc, ..
        } => {
            push_call(&mut label, *call, rpc);
            (lane(node), leader(), "call")
        }
        TraceEvent::CallHandled {
            node,
            call,
            rpc,
            accepted,
            detail,
        } => {
            label.push_str(if *accepted { "✓ " } else { "✕ " });
            push_call(&mut label, *call, rpc);
            if !*accepted {
                label.push_str(": ");
                detail.push_to(&mut label);
            }
            let kind = if *accepted { "reply-ok" } else { "reply-err" };
            (leader(), lane(node), kind)
        }
        TraceEvent::CallFailed {
            node, call, rpc, ..
        } => {
            label.push_str("✕ ");
            push_call(&mut label, *call, rpc);
            label.push_str(" failed");
            (lane(node), lane(node), "note")
        }
        TraceEvent::NodeStatus(change) => {
            label.extend([&*lane(&change.node), " ", &change.from, " → ", &change.to]);
            (leader(), leader(), "status")
        }
        TraceEvent::HeartbeatMissed(missed) => {
            label.extend(["TTL expired: ", &*lane(&missed.node)]);
            (leader(), leader(), "status")
        }
        TraceEvent::EvalCreated(created) => {
            label.extend(["◆ ", short(&created.eval), " ", &created.trigger]);
            (leader(), "broker".to_string(), "eval")
        }
        TraceEvent::EvalProcessed(processed) => {
            label.extend([
                "reconcile ",
                short(&processed.eval),
                " ",
                &processed.trigger,
                " → ",
                &processed.status,
            ]);
            ("broker".to_string(), "broker".to_string(), "eval")
        }
        TraceEvent::Link { node, detail } => {
            label.extend(["link ", detail]);
            (lane(node), lane(node), "note")
        }
        TraceEvent::Operator {
            rpc,
            accepted,
            detail,
        } => {
            if *accepted {
                label.extend(["✓ operator ", rpc]);
            } else {
                label.extend(["✕ operator ", rpc, ": ", detail]);
            }
            (
                leader(),
                leader(),
                if *accepted { "status" } else { "note" },
            )
        }
        _ => return None,
    };
    Some(SeqEventView {
        step: entry.step,
        time: time_label(entry.tick),
        from,
        to,
        label,
        kind: kind.to_string(),
    })
}

/// The narration of a guided scenario: its description, then every `note`
/// action up to the current step, and the note of every assertion that
/// applies to the run's profile (the lessons narrate with their checks, so
/// narration adds no step to the trace).
fn notes(session: &Session) -> Vec<String> {
    let profile = &session.sim().profile.name;
    let mut notes: Vec<String> = session.scenario().description.iter().cloned().collect();
    notes.extend(
        session.actions()[..session.cursor()]
            .iter()
            .filter_map(|action| match action {
                Action::Note { text } => Some(text.clone()),
                Action::Assert {
                    profiles,
                    note: Some(note),
                    ..
                } if profiles.as_ref().is_none_or(|filters| {
                    filters
                        .iter()
                        .any(|filter| crate::profile::profile_matches(profile, filter))
                }) =>
                {
                    Some(note.clone())
                }
                _ => None,
            }),
    );
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cluster big enough that the trace and the sequence diagram keep
    /// only their newest lines (the render benchmark's shape, smaller).
    fn big_scenario(nodes: usize, per_group: usize, steps: usize) -> String {
        let nodes: Vec<String> = (0..nodes)
            .map(|i| format!(r#"{{"id": "node-{i:03}"}}"#))
            .collect();
        let groups: Vec<String> = (0..3)
            .map(|g| format!(r#"{{"name": "g{g}", "count": {per_group}}}"#))
            .collect();
        let mut script = vec![r#"{"action": "advance", "by": "5s"}"#.to_string()];
        script.extend((0..steps).map(|_| r#"{"action": "advance", "by": "1s"}"#.to_string()));
        format!(
            r#"{{"version": 1, "name": "big", "nodes": [{}], "jobs": [{{"id": "bench", "groups": [{}]}}], "script": [{}]}}"#,
            nodes.join(", "),
            groups.join(", "),
            script.join(", ")
        )
    }

    /// The log revision changes whenever the log or its branches change,
    /// and stays while the user only moves through the history.
    #[test]
    fn the_log_revision_changes_exactly_when_the_log_may_have_changed() {
        let mut playground = Playground::builtin("pr-15068-heartbeat-order").expect("built in");
        let log = |p: &Playground| {
            (
                p.session().actions().to_vec(),
                p.session().branches().to_vec(),
            )
        };
        let len = playground.session().actions().len();
        let moves = [
            Command::Step,
            Command::Step,
            Command::Back,
            Command::JumpTo(3),
            Command::Reset,
            Command::RunToEnd,
            Command::JumpTo(2),
        ];
        for command in moves {
            let (before, revision) = (log(&playground), playground.log_revision());
            playground.apply(command.clone());
            assert_eq!(log(&playground), before, "{command:?}");
            assert_eq!(playground.log_revision(), revision, "{command:?}");
        }
        let edits = [
            Command::EditScript(ScriptEdit::Move { from: 4, to: 5 }),
            Command::EditScript(ScriptEdit::Remove { index: 0 }),
            Command::SwitchBranch(0),
            Command::CutLink("node-a".to_string()),
            Command::StepEval,
            Command::RunToEnd,
            // Past the log's end a step is recorded as an action.
            Command::Step,
        ];
        for command in edits {
            let (before, revision) = (log(&playground), playground.log_revision());
            playground.apply(command.clone());
            if log(&playground) != before {
                assert!(playground.log_revision() > revision, "{command:?}");
            }
        }
        assert_ne!(playground.session().actions().len(), len);
        assert!(playground.log_revision() >= 5);
    }

    /// The sequence window's first event moves in steps of
    /// [`SEQUENCE_WINDOW`] events, and the window holds at least that many
    /// (the newest) and fewer than twice as many: while its first event
    /// stays, the events it held stay where they were, the same `Rc`s. The
    /// trace window's first line likewise, in steps of [`TRACE_WINDOW`].
    #[test]
    fn the_sequence_and_trace_windows_move_their_first_item_in_whole_windows() {
        /// Checks one window against the same window a step before and
        /// counts whether its first item moved (`.0`) or stayed (`.1`).
        fn check<T: ?Sized>(
            counts: &mut (usize, usize),
            window: usize,
            (before_hidden, before): (usize, &[Rc<T>]),
            (hidden, now): (usize, &[Rc<T>]),
        ) {
            assert_eq!(hidden % window, 0);
            assert!(now.len() >= window.min(hidden + now.len()));
            assert!(now.len() < 2 * window);
            if hidden == before_hidden {
                counts.1 += 1;
                assert!(before.len() <= now.len());
                assert!(before.iter().zip(now).all(|(a, b)| Rc::ptr_eq(a, b)));
            } else {
                counts.0 += 1;
            }
        }
        let mut playground =
            Playground::load(&big_scenario(100, 16, 40), None).expect("scenario loads");
        let (mut sequence, mut trace) = ((0, 0), (0, 0));
        for _ in 0..40 {
            let before = playground.view().clone();
            playground.apply(Command::Step);
            let view = playground.view();
            check(
                &mut sequence,
                SEQUENCE_WINDOW,
                (before.sequence_hidden, &before.sequence),
                (view.sequence_hidden, &view.sequence),
            );
            check(
                &mut trace,
                TRACE_WINDOW,
                (before.trace_hidden, &before.trace),
                (view.trace_hidden, &view.trace),
            );
        }
        for (name, (moves, stays)) in [("sequence", sequence), ("trace", trace)] {
            assert!(
                moves > 0 && stays > moves,
                "{name}: {moves} moves, {stays} stays"
            );
        }
    }

    /// The lanes of the last build are kept while the clients' IDs and
    /// names are the same, and built again when they differ.
    #[test]
    fn the_lane_map_is_kept_while_the_clients_are_the_same() {
        let playground = Playground::load(&big_scenario(3, 1, 1), None).expect("scenario loads");
        let sim = playground.session().sim();
        let fresh = LaneMap::of(sim, None);
        assert_eq!(fresh.clients.len(), 3);
        assert_eq!(fresh.lane("node-001"), "node-001");
        assert_eq!(fresh.lane("no-such-node"), "no-such-node");
        // A kept map is handed back as it is (marked here so that it shows).
        let mut kept = fresh.clone();
        kept.lanes.insert("marker".into(), "node-000".into());
        assert_eq!(LaneMap::of(sim, Some(kept.clone())), kept);
        // One of other clients is not.
        let mut other = kept.clone();
        other.clients[1].1 = "renamed".into();
        assert_eq!(LaneMap::of(sim, Some(other)), fresh);
        other = kept;
        other.clients.pop();
        assert_eq!(LaneMap::of(sim, Some(other)), fresh);
    }

    /// Past the windows, the view built from the summaries of earlier
    /// records and the newest records only is the view built from scratch,
    /// and unchanged nodes and evals keep their view's `Rc` from one step
    /// to the next.
    #[test]
    fn the_cached_view_past_the_windows_equals_a_view_built_from_scratch() {
        let mut playground =
            Playground::load(&big_scenario(160, 16, 40), None).expect("scenario loads");
        let (mut reused, mut evals_reused) = (0, 0);
        for command in (0..30)
            .map(|_| Command::Step)
            .chain([Command::Back, Command::Back, Command::JumpTo(12)])
            .chain((0..6).map(|_| Command::Step))
        {
            let before = playground.view().nodes.clone();
            let evals_before = playground.view().evals.clone();
            playground.apply(command.clone());
            let fresh = build_view(playground.session());
            assert_eq!(playground.view(), &fresh, "{command:?}");
            let view = playground.view();
            assert_eq!(view.node_ttls.len(), view.nodes.len());
            reused += before
                .iter()
                .zip(&view.nodes)
                .filter(|(a, b)| Rc::ptr_eq(a, b))
                .count();
            evals_reused += evals_before
                .iter()
                .filter(|a| view.evals.iter().any(|b| Rc::ptr_eq(a, b)))
                .count();
        }
        let view = playground.view();
        assert!(view.trace_hidden > 0, "the trace window is full");
        assert!(view.sequence_hidden > 0, "the sequence window is full");
        assert!(reused > 0, "unchanged nodes keep their view");
        assert!(evals_reused > 0, "unchanged evals keep their view");
    }
}
