//! The cluster reconciler for service and batch jobs: compares a job with
//! its allocations and decides what to place, stop, update, migrate,
//! reschedule, disconnect and reconnect. Follows Nomad's
//! `scheduler/reconciler/reconcile_cluster.go` at HEAD.
//!
//! Differences from Nomad, all for determinism: every walk over a set is in
//! alloc ID order (Nomad walks Go maps in random order), groups are visited
//! in name order, the clock is [`ClusterInput::now`] and new IDs (follow-up
//! evals, deployments) come from the caller's generator.
//!
//! ```
//! use nomad_playground::model::{Job, JobType, TaskGroup, Time};
//! use nomad_playground::reconciler::cluster::{reconcile, ClusterInput, ReconcileOptions, UpdateType};
//!
//! let job = Job {
//!     id: "web".into(),
//!     job_type: JobType::Service,
//!     task_groups: vec![TaskGroup { name: "web".into(), count: 2, ..Default::default() }],
//!     ..Default::default()
//! };
//! let input = ClusterInput::new(Some(job), Time::parse_rfc3339("2026-01-01T00:00:00Z").unwrap());
//! let mut n = 0;
//! let mut ids = || { n += 1; format!("id-{n}") };
//! let result = reconcile(&input, &ReconcileOptions::default(), &|_, _, _| UpdateType::Ignore, &mut ids);
//! assert_eq!(result.place.len(), 2);
//! ```

mod table;

use super::alloc_set::{AllocNameIndex, AllocSet, name_index};
use super::filters::{
    self, AllocKey, BATCHED_FAILED_ALLOC_WINDOW, EvalClock, FilterContext, RescheduleContext,
    TaintedIndex, Validity,
};
use super::picker::{Pick, Picker};
use super::reasons::{AllocCategory, ClassifyRule, Decision, Decisions, StopReason};
use super::rules::{ExpiredAllocs, ReconcilerRules, ReconnectReconciliation, ReplacementLookup};
use crate::model::deployment::description as dep_desc;
use crate::model::eval::{description as eval_desc, trigger};
use crate::model::{
    Allocation, ClientStatus, Deployment, DeploymentState, DeploymentStatus,
    DeploymentStatusUpdate, DesiredStatus, DesiredUpdates, EvalStatus, Evaluation, Job, JobType,
    Node, TaskGroup, Time,
};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use table::{PosSet, Table, union_list};

/// Stop descriptions (Nomad's `scheduler/structs` constants).
pub mod status {
    /// Not needed any more.
    pub const ALLOC_NOT_NEEDED: &str = "alloc not needed due to job update";
    /// The original reconnected, its replacement is not needed.
    pub const ALLOC_RECONNECTED: &str = "alloc not needed due to disconnected client reconnect";
    /// Being migrated.
    pub const ALLOC_MIGRATING: &str = "alloc is being migrated";
    /// Destructively updated.
    pub const ALLOC_UPDATING: &str = "alloc is being updated due to job update";
    /// Lost with its node.
    pub const ALLOC_LOST: &str = "alloc is lost since its node is down";
    /// Unknown while its node is disconnected.
    pub const ALLOC_UNKNOWN: &str = "alloc is unknown since its node is disconnected";
    /// Failed and rescheduled.
    pub const ALLOC_RESCHEDULED: &str = "alloc was rescheduled because it failed";
}

/// How an existing alloc compares with the job (Nomad's `AllocUpdateType`).
#[derive(Debug, Clone)]
pub enum UpdateType {
    /// No change needed.
    Ignore,
    /// Must be replaced.
    Destructive,
    /// Can be updated in place; the updated alloc.
    InPlace(Rc<Allocation>),
}

/// The alloc update function: `(existing alloc, new job, new group)`.
pub type AllocUpdateFn<'a> = dyn Fn(&Allocation, &Job, &TaskGroup) -> UpdateType + 'a;

/// A simple stand-in for the scheduler's `genericAllocUpdateFn`: same
/// `JobModifyIndex` or terminal → ignore; tasks changed → destructive;
/// otherwise in place (a copy carrying the new job).
pub fn generic_update_fn(alloc: &Allocation, job: &Job, group: &TaskGroup) -> UpdateType {
    if alloc.job_modify_index() == job.job_modify_index || alloc.terminal_status() {
        return UpdateType::Ignore;
    }
    let old_tasks = alloc.job_task_group().map(|tg| &tg.tasks);
    if old_tasks != Some(&group.tasks) {
        return UpdateType::Destructive;
    }
    let mut updated = alloc.clone();
    updated.job = Some(Rc::new(job.clone()));
    UpdateType::InPlace(Rc::new(updated))
}

/// Everything the reconciler reads (Nomad's `ReconcilerState` and `ClusterState`).
#[derive(Debug, Clone, Default)]
pub struct ClusterInput<'a> {
    /// The job; `None` = purged. Shared: the simulator hands over the
    /// stored job instead of a copy per eval.
    pub job: Option<Rc<Job>>,
    /// The job ID (needed when `job` is `None`).
    pub job_id: Cow<'a, str>,
    /// `JobIsBatch`.
    pub job_is_batch: bool,
    /// `DeploymentCurrent`.
    pub deployment: Option<Deployment>,
    /// `DeploymentPaused` (recomputed when a current deployment remains).
    pub deployment_paused: bool,
    /// `DeploymentFailed` (recomputed when a current deployment remains).
    pub deployment_failed: bool,
    /// `ExistingAllocs`, each with its embedded job. Borrowed where the
    /// caller keeps the list (the simulator lends the state's list of the
    /// job instead of a copy of its `Rc`s per run).
    pub allocs: Cow<'a, [Rc<Allocation>]>,
    /// The allocs' keys ([`AllocKey::of`] of each, in the same order) where
    /// the caller keeps them beside its list; empty: the run makes them.
    pub keys: &'a [AllocKey],
    /// The evaluation's ID.
    pub eval_id: Cow<'a, str>,
    /// The evaluation's priority.
    pub eval_priority: i64,
    /// Tainted nodes; `None` = garbage-collected. Shared: the simulator
    /// hands every eval the same map of the cluster's tainted nodes (a
    /// superset of the allocs' nodes, which is all the reconciler looks up).
    pub tainted_nodes: Rc<BTreeMap<String, Option<Node>>>,
    /// The clock.
    pub now: Time,
}

impl ClusterInput<'_> {
    /// An input for `job` at `now`, with no allocs, deployment or taint.
    pub fn new(job: Option<Job>, now: Time) -> Self {
        ClusterInput {
            job_id: job
                .as_ref()
                .map(|j| j.id.clone())
                .unwrap_or_default()
                .into(),
            job_is_batch: job.as_ref().is_some_and(|j| j.job_type == JobType::Batch),
            job: job.map(Rc::new),
            eval_priority: 50,
            now,
            ..Default::default()
        }
    }
}

/// Options of a run: version switches and the picker.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReconcileOptions {
    /// Version switches (default: HEAD).
    pub rules: ReconcilerRules,
    /// The reconnecting picker.
    pub picker: Picker,
    /// Whether the update function answers [`UpdateType::Ignore`] for every
    /// alloc whose embedded job is the run's job (the same `Rc`), as
    /// Nomad's does for an unchanged `JobModifyIndex`: then the run does
    /// not ask it about those allocs.
    pub same_job_ignored: bool,
}

/// A placement (Nomad's `AllocPlaceResult`).
#[derive(Debug, Clone, Serialize)]
pub struct PlaceResult {
    /// Alloc name.
    pub name: String,
    /// Task group.
    pub task_group: String,
    /// Whether it is a canary.
    pub canary: bool,
    /// The alloc it replaces, as the run read it. When the run also marks
    /// that alloc unknown (a disconnecting alloc replaced now), Nomad's
    /// previous alloc is the updated one: see
    /// [`PlaceResult::previous_updated`]; the update changes only its
    /// client status, alloc states, client description and follow-up eval.
    pub previous_alloc: Option<Rc<Allocation>>,
    /// Whether it reschedules a failed alloc.
    pub reschedule: bool,
    /// Whether it replaces a lost alloc.
    pub lost: bool,
    /// Whether a canary deployment should place it as a non-canary.
    pub downgrade_non_canary: bool,
    /// The lowest job version it may run.
    pub min_job_version: u64,
}

impl PlaceResult {
    /// The alloc it replaces as the run leaves it (Nomad's previous
    /// alloc): [`PlaceResult::previous_alloc`], or its disconnect update in
    /// `result` (the run this placement is from) when there is one.
    pub fn previous_updated<'r>(
        &'r self,
        result: &ReconcileResult,
    ) -> Option<std::borrow::Cow<'r, Allocation>> {
        let prev = self.previous_alloc.as_ref()?;
        Some(match result.disconnect_updates.get(&prev.id) {
            Some(update) => std::borrow::Cow::Owned(update.to_alloc()),
            None => std::borrow::Cow::Borrowed(&**prev),
        })
    }
}

/// A stop (Nomad's `AllocStopResult`).
#[derive(Debug, Clone, Serialize)]
pub struct StopResult {
    /// The alloc.
    pub alloc: Rc<Allocation>,
    /// Client status to write, if any (`lost`, `failed`).
    pub client_status: Option<ClientStatus>,
    /// Why (one of the [`status`] descriptions).
    pub status_description: &'static str,
    /// Follow-up eval to attach.
    pub followup_eval_id: String,
}

/// A destructive update: stop the alloc and place a new one of that name.
#[derive(Debug, Clone, Serialize)]
pub struct DestructiveResult {
    /// Name of the new alloc.
    pub place_name: String,
    /// Task group.
    pub task_group: String,
    /// The alloc to stop.
    pub stop_alloc: Rc<Allocation>,
    /// Stop description (one of the [`status`] descriptions).
    pub stop_status_description: &'static str,
}

/// What one run decides (Nomad's `ReconcileResults`) and why.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReconcileResult {
    /// A deployment to create (or an initializing one to persist).
    pub deployment: Option<Deployment>,
    /// Deployment status changes.
    pub deployment_updates: Vec<DeploymentStatusUpdate>,
    /// Placements.
    pub place: Vec<PlaceResult>,
    /// Destructive updates.
    pub destructive_update: Vec<DestructiveResult>,
    /// In-place updates (the updated allocs).
    pub inplace_update: Vec<Rc<Allocation>>,
    /// Stops.
    pub stop: Vec<StopResult>,
    /// Allocs updated only to attach a follow-up eval.
    pub attribute_updates: AllocSet,
    /// Allocs marked unknown.
    pub disconnect_updates: DisconnectUpdates,
    /// Allocs marked reconnected.
    pub reconnect_updates: ReconnectUpdates,
    /// Per-group counters.
    pub desired_tg_updates: BTreeMap<String, DesiredUpdates>,
    /// Follow-up evals per group.
    pub desired_followup_evals: BTreeMap<String, Vec<Evaluation>>,
    /// Why: one record per alloc, in ID order, naming its alloc by
    /// position in the input: read them with
    /// `decisions.iter(&input.allocs)`.
    #[serde(skip)]
    pub decisions: Decisions,
    /// Whether the current deployment held placements back as paused
    /// (paused, pending or initializing; Nomad's `jobState.DeploymentPaused`).
    #[serde(skip)]
    pub deployment_paused: bool,
    /// Whether the current deployment failed (`jobState.DeploymentFailed`).
    #[serde(skip)]
    pub deployment_failed: bool,
    /// For which times (and evals) the result holds ([`EvalClock`]):
    /// `None` when only for the run's own; see [`ReconcileResult::holds_for`].
    #[serde(skip)]
    pub validity: Option<Validity>,
}

impl ReconcileResult {
    /// Whether a run of an input equal to this run's but for its time
    /// `now` and its eval `eval_id` gives this result (once
    /// [`ReconcileResult::retime`]d to `now`); `allocs` are the input's
    /// (or, for an eval with an ID, those of them with a follow-up eval).
    pub fn holds_for<'a>(
        &self,
        allocs: impl IntoIterator<Item = &'a Rc<Allocation>>,
        now: Time,
        eval_id: &str,
    ) -> bool {
        self.validity.is_some_and(|v| v.contains(now))
            && allocs.into_iter().all(|a| a.followup_eval_id != eval_id)
    }

    /// Whether every update's time is `now` (then [`ReconcileResult::retime`]
    /// to `now` changes nothing).
    pub fn timed_at(&self, now: Time) -> bool {
        self.reconnect_updates.iter().all(|u| u.at == now)
            && self.disconnect_updates.iter().all(|u| u.at == now)
    }

    /// Sets the time of every update to `now`: the copies of the run's
    /// time, which are all the result holds of it (see
    /// [`ReconcileResult::holds_for`]).
    pub fn retime(&mut self, now: Time) {
        for u in &mut self.reconnect_updates.0 {
            u.at = now;
        }
        for u in &mut self.disconnect_updates.0 {
            u.at = now;
        }
    }
}

/// An update of an alloc the reconciler read, built only when asked for
/// ([`DeferredUpdate::to_alloc`]): a run keeps the alloc as read and what
/// the update changes, so it copies no alloc (the scheduler's plan too
/// keeps it so until the plan applier commits the alloc's node).
pub trait DeferredUpdate {
    /// The alloc before the update.
    fn alloc(&self) -> &Rc<Allocation>;
    /// The updated alloc.
    fn to_alloc(&self) -> Allocation;
}

/// An alloc that a disconnect marks unknown (an entry of
/// [`ReconcileResult::disconnect_updates`]): the alloc as the reconciler
/// read it and what the update changes.
#[derive(Debug, Clone, PartialEq)]
pub struct DisconnectUpdate {
    /// The alloc before the update.
    pub alloc: Rc<Allocation>,
    /// The follow-up eval the update attaches.
    pub followup_eval_id: Rc<str>,
    /// When it became unknown (the run's clock).
    pub at: Time,
}

impl DisconnectUpdate {
    /// The alloc's ID.
    pub fn id(&self) -> &str {
        &self.alloc.id
    }

    /// The updated alloc: client status `unknown`, with an `unknown` alloc
    /// state at [`DisconnectUpdate::at`], the unknown description and the
    /// follow-up eval.
    pub fn to_alloc(&self) -> Allocation {
        let mut copy = (*self.alloc).clone();
        copy.client_status = ClientStatus::Unknown;
        copy.append_client_status_state("unknown", self.at);
        copy.client_description = status::ALLOC_UNKNOWN.to_string();
        copy.followup_eval_id = String::from(&*self.followup_eval_id);
        copy
    }
}

impl DeferredUpdate for DisconnectUpdate {
    fn alloc(&self) -> &Rc<Allocation> {
        &self.alloc
    }

    fn to_alloc(&self) -> Allocation {
        DisconnectUpdate::to_alloc(self)
    }
}

/// An alloc that reconnects (an entry of
/// [`ReconcileResult::reconnect_updates`]): the alloc as the reconciler
/// read it; the update appends its client status to its alloc states at
/// the run's clock and changes nothing else.
#[derive(Debug, Clone, PartialEq)]
pub struct ReconnectUpdate {
    /// The alloc before the update.
    pub alloc: Rc<Allocation>,
    /// When it reconnected (the run's clock).
    pub at: Time,
}

impl ReconnectUpdate {
    /// The updated alloc: its client status appended to its alloc states
    /// at [`ReconnectUpdate::at`].
    pub fn to_alloc(&self) -> Allocation {
        let mut copy = (*self.alloc).clone();
        copy.append_client_status_state(self.alloc.client_status.as_str(), self.at);
        copy
    }
}

impl DeferredUpdate for ReconnectUpdate {
    fn alloc(&self) -> &Rc<Allocation> {
        &self.alloc
    }

    fn to_alloc(&self) -> Allocation {
        ReconnectUpdate::to_alloc(self)
    }
}

/// The updates of one kind of a run, in alloc ID order, one per alloc.
/// Serialised as the updated allocs.
#[derive(Debug, Clone)]
pub struct Updates<U>(Vec<U>);

/// The disconnect updates of a run.
pub type DisconnectUpdates = Updates<DisconnectUpdate>;

/// The reconnect updates of a run.
pub type ReconnectUpdates = Updates<ReconnectUpdate>;

impl<U> Default for Updates<U> {
    fn default() -> Self {
        Updates(Vec::new())
    }
}

impl<U: DeferredUpdate> Updates<U> {
    /// Number of updates.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The updates in alloc ID order.
    pub fn iter(&self) -> impl Iterator<Item = &U> {
        self.0.iter()
    }
    /// The alloc IDs in order.
    pub fn ids(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|u| &u.alloc().id)
    }
    fn position(&self, id: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|u| u.alloc().id.as_str().cmp(id))
    }
    /// The update of alloc `id`.
    pub fn get(&self, id: &str) -> Option<&U> {
        self.position(id).ok().map(|i| &self.0[i])
    }
    /// Whether alloc `id` has an update.
    pub fn contains(&self, id: &str) -> bool {
        self.position(id).is_ok()
    }
    /// The slot of alloc `id`; `hint` is where to look first (callers ask
    /// in mostly ascending ID order) and is left at the slot found.
    fn find_hinted(&self, id: &str, hint: &mut usize) -> Option<usize> {
        let near = [*hint, *hint + 1]
            .into_iter()
            .find(|i| self.0.get(*i).is_some_and(|u| u.alloc().id == id));
        let i = match near {
            Some(i) => i,
            None => self.position(id).ok()?,
        };
        *hint = i;
        Some(i)
    }
    /// The update of alloc `id`, to change (see [`Updates::find_hinted`]).
    fn get_mut_hinted(&mut self, id: &str, hint: &mut usize) -> Option<&mut U> {
        let i = self.find_hinted(id, hint)?;
        Some(&mut self.0[i])
    }
    /// Adds `other`'s updates (in alloc ID order); on equal alloc IDs
    /// `other`'s win.
    fn union_with(&mut self, other: Vec<U>) {
        if self.0.is_empty() {
            self.0 = other;
            return;
        }
        if self.0.last().is_none_or(|last| {
            other
                .first()
                .is_none_or(|first| last.alloc().id < first.alloc().id)
        }) {
            self.0.extend(other);
            return;
        }
        self.0.extend(other);
        // Stable: of equal IDs the later (`other`'s) comes last and stays.
        crate::cold_sort::sort_by(&mut self.0, |x, y| x.alloc().id.cmp(&y.alloc().id));
        self.0.reverse();
        self.0
            .dedup_by(|later, earlier| later.alloc().id == earlier.alloc().id);
        self.0.reverse();
    }
}

impl<U: DeferredUpdate> serde::Serialize for Updates<U> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(DeferredUpdate::to_alloc))
    }
}

impl serde::Serialize for AllocSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// Runs the cluster reconciler (Nomad's `AllocReconciler.Compute`).
///
/// `update_fn` compares each alloc with the job; `next_id` makes IDs for
/// follow-up evals and a created deployment.
pub fn reconcile(
    input: &ClusterInput,
    options: &ReconcileOptions,
    update_fn: &AllocUpdateFn<'_>,
    next_id: &mut dyn FnMut() -> String,
) -> ReconcileResult {
    let tainted = TaintedIndex::new(&input.tainted_nodes);
    reconcile_indexed(input, &tainted, options, update_fn, next_id)
}

/// [`reconcile`] with the lookup table of `input.tainted_nodes` built
/// beforehand: a caller that hands many runs one shared map (the
/// scheduler) builds its table once. `tainted` must be the table of that
/// very map (debug builds check).
pub fn reconcile_indexed(
    input: &ClusterInput,
    tainted: &TaintedIndex,
    options: &ReconcileOptions,
    update_fn: &AllocUpdateFn<'_>,
    next_id: &mut dyn FnMut() -> String,
) -> ReconcileResult {
    debug_assert!(
        tainted.indexes(&input.tainted_nodes),
        "the tainted-node table is not the input's"
    );
    let clock = EvalClock::new(input.now, &input.eval_id);
    let cx = FilterContext {
        tainted_nodes: &input.tainted_nodes,
        clock: &clock,
        rules: &options.rules,
    };
    // One pass over the allocs; the rest of the run works on the table.
    let same_job = input.job.as_ref().filter(|_| options.same_job_ignored);
    let (table, firsts) = Table::build(&input.allocs, input.keys, tainted, &cx, same_job);
    // With one row per ID, the plain allocs' records are written here, all
    // at once (see `Reconciler::compute_group`).
    let explain = if table.has_duplicates() {
        Decisions::new(table.slots(), firsts)
    } else {
        debug_assert!(firsts.is_empty());
        Decisions::kept(
            table.slots(),
            AllocCategory::Untainted,
            ClassifyRule::NodeFine,
            table.odd(),
        )
    };
    let mut r = Reconciler {
        input,
        clock: &clock,
        table: &table,
        rules: options.rules,
        picker: options.picker,
        update_fn,
        next_id,
        deployment_current: None,
        deployment_old: None,
        deployment_paused: input.deployment_paused,
        deployment_failed: input.deployment_failed,
        created_deployment: false,
        persist_initializing: false,
        result: ReconcileResult::default(),
        explain,
    };
    r.compute();
    let mut result = r.result;
    let mut decisions = r.explain;
    result.deployment_paused = r.deployment_paused;
    result.deployment_failed = r.deployment_failed;
    result.validity = clock.validity();
    // With one row per ID the records follow the table's rows: their
    // input positions are the table's order.
    decisions.set_positions(table.into_order());
    result.decisions = decisions;
    result
}

struct Reconciler<'a, 'b> {
    input: &'a ClusterInput<'a>,
    /// The input's time and eval ID: every read other than a copy of the
    /// time into an update goes through it (see [`EvalClock`]).
    clock: &'a EvalClock<'a>,
    /// The input allocs in ID order, with what the rules read of them.
    table: &'a Table<'a>,
    rules: ReconcilerRules,
    picker: Picker,
    update_fn: &'a AllocUpdateFn<'b>,
    next_id: &'a mut dyn FnMut() -> String,
    deployment_current: Option<Deployment>,
    deployment_old: Option<Deployment>,
    deployment_paused: bool,
    deployment_failed: bool,
    created_deployment: bool,
    persist_initializing: bool,
    result: ReconcileResult,
    /// Reason records, one per alloc ID (the table's slots).
    explain: Decisions,
}

/// Alloc (table position) → follow-up eval ID: each eval ID once, and per
/// alloc (sorted by position, one entry per position) the index of its eval.
#[derive(Default)]
struct FollowupIds {
    evals: Vec<Rc<str>>,
    allocs: Vec<(u32, usize)>,
    /// The entry found last: callers mostly ask in ID order, so the entry
    /// after it is tried before a search.
    hint: std::cell::Cell<usize>,
}

impl FollowupIds {
    fn new(evals: &[Evaluation], mut allocs: Vec<(u32, usize)>) -> Self {
        sort_keep_last(&mut allocs);
        FollowupIds {
            evals: evals.iter().map(|e| Rc::from(e.id.as_str())).collect(),
            allocs,
            hint: std::cell::Cell::new(0),
        }
    }

    fn get(&self, pos: u32) -> Option<&str> {
        self.get_shared(pos).map(|e| &**e)
    }

    /// [`FollowupIds::get`], as the shared eval ID.
    fn get_shared(&self, pos: u32) -> Option<&Rc<str>> {
        let h = self.hint.get();
        let near = [h, h + 1]
            .into_iter()
            .find(|i| self.allocs.get(*i).is_some_and(|(p, _)| *p == pos));
        let i = match near {
            Some(i) => i,
            None => self.allocs.binary_search_by_key(&pos, |(p, _)| *p).ok()?,
        };
        self.hint.set(i);
        Some(&self.evals[self.allocs[i].1])
    }

    /// Adds `other`'s entries; on equal positions `other` wins.
    fn extend(&mut self, other: FollowupIds) {
        let offset = self.evals.len();
        self.evals.extend(other.evals);
        self.allocs
            .extend(other.allocs.into_iter().map(|(p, i)| (p, i + offset)));
        sort_keep_last(&mut self.allocs);
    }
}

/// Sorts by position (stable) and keeps the last entry of equal positions.
fn sort_keep_last(v: &mut Vec<(u32, usize)>) {
    if v.is_sorted_by(|x, y| x.0 < y.0) {
        return;
    }
    v.sort_by_key(|x| x.0);
    v.reverse();
    v.dedup_by(|later, earlier| later.0 == earlier.0);
    v.reverse();
}

/// An alloc (table position) to reschedule, or stop as lost, at a later
/// time (Nomad's `delayedRescheduleInfo`).
#[derive(Debug, Clone, Copy)]
struct Later {
    pos: u32,
    time: Time,
}

impl Later {
    /// The sort key of both follow-up batchings (one function, so their
    /// `sort_by_key` calls share one copy of the sort).
    fn time(&self) -> Time {
        self.time
    }
}

/// The result of [`Reconciler::split_plain`] and
/// [`Reconciler::split_disconnecting`].
#[derive(Default)]
struct Split {
    /// Allocs that stay (not rescheduled now).
    untainted: PosSet,
    /// Allocs to reschedule now.
    now: PosSet,
    /// Allocs to reschedule later (also in `untainted`).
    later: Vec<Later>,
}

/// Where `filterByRescheduleable` puts an alloc.
enum Outcome {
    /// Untainted (kept).
    Untainted,
    /// Rescheduled now.
    Now,
    /// Rescheduled at this time (and untainted until then).
    Later(Time),
    /// In no part.
    Dropped,
}

/// [`Outcome`] of one alloc (`filterByRescheduleable`'s loop body).
fn split_outcome(
    alloc: &Allocation,
    is_disconnecting: bool,
    cx: &RescheduleContext<'_>,
) -> Outcome {
    if is_disconnecting && alloc.client_status == ClientStatus::Unknown {
        return Outcome::Dropped;
    }
    if !alloc.next_allocation.is_empty() && alloc.terminal_status() {
        return Outcome::Dropped;
    }
    let (is_untainted, ignore) = filters::should_filter(alloc, cx.is_batch);
    if is_untainted && !is_disconnecting {
        return Outcome::Untainted;
    }
    if ignore {
        return Outcome::Dropped;
    }
    match filters::update_by_reschedulable(alloc, is_disconnecting, cx) {
        (true, _, _) => Outcome::Now,
        (false, true, time) => Outcome::Later(time),
        _ => Outcome::Untainted,
    }
}

/// The classification sets of a group (`classifyAllocs`).
#[derive(Default)]
struct Classes {
    untainted: PosSet,
    migrate: PosSet,
    lost: PosSet,
    disconnecting: PosSet,
    reconnecting: PosSet,
    ignore: PosSet,
    expiring: PosSet,
}

impl Classes {
    fn set_mut(&mut self, cat: AllocCategory) -> &mut PosSet {
        match cat {
            AllocCategory::Untainted | AllocCategory::Filtered => &mut self.untainted,
            AllocCategory::Migrate => &mut self.migrate,
            AllocCategory::Lost => &mut self.lost,
            AllocCategory::Disconnecting => &mut self.disconnecting,
            AllocCategory::Reconnecting => &mut self.reconnecting,
            AllocCategory::Ignore => &mut self.ignore,
            AllocCategory::Expiring => &mut self.expiring,
        }
    }
}

/// The per-group working sets.
struct GroupSets {
    untainted: PosSet,
    migrate: PosSet,
    lost: PosSet,
    disconnecting: PosSet,
    reschedule_now: PosSet,
    reschedule_later: Vec<Later>,
    /// Reconnecting allocs kept apart until the over-count stop (≤ 1.5.3,
    /// [`ReconnectReconciliation::InComputeStop`]); empty otherwise.
    reconnecting: PosSet,
}

/// A group's name index (`allocNameIndex`) seeded with the names of the
/// allocs at some table positions, made when first asked: most runs place
/// no fresh name and stop nothing over the count, and then never read the
/// allocs' names.
struct LazyNameIndex<'x> {
    job: &'x str,
    group: &'x str,
    count: u32,
    /// The positions of the allocs whose names seed it.
    seed: Vec<u32>,
    index: Option<AllocNameIndex>,
}

impl LazyNameIndex<'_> {
    /// The index (made on the first call).
    fn get(&mut self, t: &Table<'_>) -> &mut AllocNameIndex {
        let (job, group, count, seed) = (self.job, self.group, self.count, &self.seed);
        self.index.get_or_insert_with(|| {
            let names = seed.iter().map(|p| name_index(t.alloc(*p)));
            AllocNameIndex::from_indexes(job, group, count, names)
        })
    }
}

/// Whether an entry's alloc has client status `unknown`: from the table's
/// facts, or from the set's own copy.
fn is_unknown(t: &Table<'_>, pos: u32, own: Option<&Rc<Allocation>>) -> bool {
    own.map_or(t.facts(pos).unknown(), |a| {
        a.client_status == ClientStatus::Unknown
    })
}

impl Reconciler<'_, '_> {
    fn reschedule_cx(&self) -> RescheduleContext<'_> {
        RescheduleContext {
            is_batch: self.input.job_is_batch,
            clock: self.clock,
            deployment: self.deployment_current.as_ref(),
            rules: &self.rules,
        }
    }

    /// Records the set and rule of the table's alloc at `pos` (the
    /// record's alloc; the sets classified hold no copies of their own).
    #[inline(always)]
    fn classify(&mut self, pos: u32, set: AllocCategory, rule: ClassifyRule, default: Decision) {
        let t = self.table;
        self.explain
            .classify(t.slot(pos), t.input_pos_of(pos), set, rule, default);
    }

    /// Stops the alloc at table position `pos` (`alloc` is the set's
    /// version of it) and records why.
    #[allow(clippy::too_many_arguments)]
    fn stop(
        &mut self,
        stops: &mut Vec<StopResult>,
        pos: u32,
        alloc: &Rc<Allocation>,
        client_status: Option<ClientStatus>,
        desc: &'static str,
        reason: StopReason,
    ) {
        let slot = self.table.slot(pos);
        self.stop_slot(stops, Some(slot), alloc, client_status, desc, reason);
    }

    /// [`Reconciler::stop`] for an alloc known by its reason record (if any).
    fn stop_slot(
        &mut self,
        stops: &mut Vec<StopResult>,
        slot: Option<usize>,
        alloc: &Rc<Allocation>,
        client_status: Option<ClientStatus>,
        desc: &'static str,
        reason: StopReason,
    ) {
        stops.push(StopResult {
            alloc: Rc::clone(alloc),
            client_status,
            status_description: desc,
            followup_eval_id: String::new(),
        });
        if let Some(slot) = slot {
            self.explain.decide(
                slot,
                Decision::Stop {
                    reason,
                    replaced: false,
                },
            );
        }
    }

    fn compute(&mut self) {
        let input = self.input;
        let t = self.table;
        // The alloc matrix: group -> allocs (later duplicates replace earlier).
        // Ascending by group name, each once (as a map's keys).
        let mut matrix: Vec<(&str, PosSet)> = t.matrix();
        if let Some(job) = &input.job {
            for tg in &job.task_groups {
                let name = tg.name.as_str();
                if let Err(i) = matrix.binary_search_by(|(g, _)| (*g).cmp(name)) {
                    matrix.insert(i, (name, PosSet::default()));
                }
            }
        }

        self.cancel_unneeded_deployments();

        let stopped = input.job.as_ref().is_none_or(|job| job.stopped());
        if stopped {
            for (group, set) in &matrix {
                for p in set.positions() {
                    if t.facts(p).terminal() {
                        self.classify(
                            p,
                            AllocCategory::Filtered,
                            ClassifyRule::JobStopped,
                            Decision::Skip,
                        );
                    }
                }
                let set = set.filter_pos(|p| !t.facts(p).terminal());
                let n = self.filter_and_stop_all(
                    &set,
                    ClassifyRule::JobStopped,
                    StopReason::JobStopped,
                );
                self.result.desired_tg_updates.insert(
                    group.to_string(),
                    DesiredUpdates {
                        stop: n,
                        ..Default::default()
                    },
                );
            }
            return;
        }

        if let Some(d) = &self.deployment_current {
            self.deployment_paused = matches!(
                d.status,
                DeploymentStatus::Paused
                    | DeploymentStatus::Pending
                    | DeploymentStatus::Initializing
            );
            self.deployment_failed = d.status == DeploymentStatus::Failed;
        }

        let mut complete = true;
        for (group, set) in matrix {
            complete &= self.compute_group(group, set);
        }
        self.set_deployment_status_and_updates(complete);
    }

    /// `cancelUnneededServiceDeployments`.
    fn cancel_unneeded_deployments(&mut self) {
        let d = self.input.deployment.clone();
        let job = self.input.job.as_ref().filter(|j| !j.stopped());
        let Some(job) = job else {
            if let Some(d) = &d
                && d.active()
            {
                self.result.deployment_updates.push(DeploymentStatusUpdate {
                    deployment_id: d.id.clone(),
                    status: DeploymentStatus::Cancelled,
                    status_description: dep_desc::STOPPED_JOB.to_string(),
                });
            }
            self.deployment_old = d;
            return;
        };
        let Some(d) = d else { return };
        if d.job_create_index != job.create_index || d.job_version != job.version {
            if d.active() {
                self.result.deployment_updates.push(DeploymentStatusUpdate {
                    deployment_id: d.id.clone(),
                    status: DeploymentStatus::Cancelled,
                    status_description: dep_desc::NEWER_JOB.to_string(),
                });
            }
            self.deployment_old = Some(d);
            return;
        }
        if d.status == DeploymentStatus::Successful {
            self.deployment_old = Some(d);
            return;
        }
        self.deployment_current = Some(d);
    }

    /// `setDeploymentStatusAndUpdates`, and the created deployment's final form.
    fn set_deployment_status_and_updates(&mut self, complete: bool) {
        if let Some(d) = &self.deployment_current {
            if complete {
                self.result.deployment_updates.push(DeploymentStatusUpdate {
                    deployment_id: d.id.clone(),
                    status: DeploymentStatus::Successful,
                    status_description: dep_desc::SUCCESSFUL.to_string(),
                });
            }
            if d.status == DeploymentStatus::Initializing {
                self.result.deployment_updates.push(DeploymentStatusUpdate {
                    deployment_id: d.id.clone(),
                    status: DeploymentStatus::Pending,
                    status_description: dep_desc::PENDING_FOR_PEER.to_string(),
                });
            }
        }
        if self.persist_initializing && !self.created_deployment {
            self.result.deployment = self.deployment_current.clone();
        }
        if self.created_deployment
            && let Some(mut d) = self.deployment_current.clone()
        {
            if d.requires_promotion() {
                d.status_description = if d.has_auto_promote() {
                    dep_desc::RUNNING_AUTO_PROMOTION
                } else {
                    dep_desc::RUNNING_NEEDS_PROMOTION
                }
                .to_string();
            }
            self.result.deployment = Some(d);
        }
    }

    /// `filterAndStopAll`: classify and stop everything; returns the set size.
    fn filter_and_stop_all(&mut self, set: &PosSet, rule: ClassifyRule, reason: StopReason) -> u64 {
        use AllocCategory as C;
        let t = self.table;
        for p in set.positions() {
            self.classify(p, t.facts(p).cat, rule, Decision::Skip);
        }
        let mut stops = Vec::new();
        let not_needed = status::ALLOC_NOT_NEEDED;
        // The classification sets in Nomad's order; of the ignored and
        // expiring allocs only the unknown ones.
        let plan: [(&[C], Option<ClientStatus>, &str, bool); 7] = [
            (&[C::Untainted, C::Filtered], None, not_needed, false),
            (&[C::Migrate], None, not_needed, false),
            (
                &[C::Lost],
                Some(ClientStatus::Lost),
                status::ALLOC_LOST,
                false,
            ),
            (&[C::Disconnecting], None, not_needed, false),
            (&[C::Reconnecting], None, not_needed, false),
            (&[C::Ignore], None, not_needed, true),
            (&[C::Expiring], None, not_needed, true),
        ];
        for (cats, cs, desc, only_unknown) in plan {
            for (p, a) in set.iter(t) {
                let f = t.facts(p);
                if !cats.contains(&f.cat) || (only_unknown && !f.unknown()) {
                    continue;
                }
                let reason = if cs.is_some() {
                    StopReason::Lost
                } else {
                    reason
                };
                self.stop(&mut stops, p, a, cs.clone(), desc, reason);
            }
        }
        self.result.stop.extend(stops);
        set.len() as u64
    }

    /// `initializeDeploymentState`.
    fn initialize_deployment_state(&self, group: &str, tg: &TaskGroup) -> (DeploymentState, bool) {
        if let Some(s) = self
            .deployment_current
            .as_ref()
            .and_then(|d| d.task_groups.get(group))
        {
            return (s.clone(), true);
        }
        let mut s = DeploymentState::default();
        if let Some(u) = tg.update_strategy() {
            s.auto_revert = u.auto_revert;
            s.auto_promote = u.auto_promote;
            s.progress_deadline = u.progress_deadline;
        }
        (s, false)
    }

    /// `computeGroup`: returns whether the group's deployment is complete.
    fn compute_group(&mut self, group: &str, all: PosSet) -> bool {
        let input = self.input;
        let t = self.table;
        let job = input
            .job
            .as_ref()
            .expect("compute_group runs only with a job");
        let mut du = DesiredUpdates::default();
        let mut stops: Vec<StopResult> = Vec::new();
        let mut place_out: Vec<PlaceResult> = Vec::new();
        // Per entry of `place_out`: the table position of the alloc it
        // replaces, where known (else it is looked up by ID).
        let mut place_pos: Vec<Option<u32>> = Vec::new();

        // `filterServerTerminalAllocs`: the table lists its server-terminal
        // allocs, so only they are looked at (`all` holds the table's
        // allocs, no copies of its own).
        let mut all = all;
        let dropped = all.remove_where(t.server_terminal(), |p| {
            !filters::kept_unless_server_terminal(t.alloc(p))
        });
        for p in dropped.positions() {
            self.classify(
                p,
                AllocCategory::Filtered,
                ClassifyRule::ServerTerminal,
                Decision::Skip,
            );
        }

        let tg = job.lookup_task_group(group).filter(|tg| tg.count > 0);
        let Some(tg) = tg else {
            du.stop = self.filter_and_stop_all(
                &all,
                ClassifyRule::GroupRemoved,
                StopReason::GroupRemoved,
            );
            self.result.desired_tg_updates.insert(group.to_string(), du);
            return true;
        };
        let count = tg.count as usize;
        let (mut dstate, existing_deployment) = self.initialize_deployment_state(group, tg);

        // Batch: terminal allocs of an older job are only counted.
        if input.job_is_batch {
            let old = all.filter(t, |p, a| {
                t.facts(p).terminal()
                    && (a.job_version() < job.version || a.job_create_index() < job.create_index)
            });
            for p in old.positions() {
                self.classify(
                    p,
                    AllocCategory::Filtered,
                    ClassifyRule::OldTerminalBatch,
                    Decision::Ignore,
                );
            }
            du.ignore += old.len() as u64;
            all.remove_all(&old);
        }

        let canaries = self.cancel_unneeded_canaries(&mut all, &mut du, &mut stops);

        // `classifyAllocs`, as the table classified each alloc. The plain
        // allocs (most) are untainted and kept: they stay in the untainted
        // set as a block, and with one row per ID their records were
        // written when the run started; the others are taken one by one.
        // `all` holds the table's allocs (no set's own copies).
        debug_assert!(all.iter_own().all(|(_, own)| own.is_none()));
        if t.has_duplicates() {
            for p in all.positions().filter(|p| t.facts(*p).plain()) {
                self.classify(
                    p,
                    AllocCategory::Untainted,
                    ClassifyRule::NodeFine,
                    Decision::Keep,
                );
            }
        }
        let mut c = Classes::default();
        // The untainted allocs that are not plain (ascending).
        let mut untainted_odd: Vec<u32> = Vec::with_capacity(t.odd().len());
        let mut untainted = all.clone();
        untainted.remove_where(t.odd(), |p| {
            let f = t.facts(p);
            let default = match f.cat {
                AllocCategory::Untainted if f.plainly_running() => Decision::Keep,
                AllocCategory::Ignore => Decision::Ignore,
                AllocCategory::Untainted | AllocCategory::Migrate => Decision::Skip,
                _ => Decision::Keep,
            };
            self.classify(p, f.cat, f.rule, default);
            if matches!(f.cat, AllocCategory::Untainted | AllocCategory::Filtered) {
                untainted_odd.push(p);
                return false;
            }
            c.set_mut(f.cat).push(p);
            true
        });
        c.untainted = untainted;
        du.ignore += c.ignore.len() as u64;

        // The plain allocs stay untainted; the others are split one by one.
        let split = self.split_plain(std::mem::take(&mut c.untainted), &untainted_odd);
        let msplit = self.split_plain(c.migrate.clone(), c.migrate.as_slice());
        let mut reschedule_now = split.now;
        reschedule_now.union_with(&msplit.now);
        let mut sets = GroupSets {
            untainted: split.untainted,
            migrate: c.migrate,
            lost: c.lost,
            disconnecting: c.disconnecting,
            reschedule_now,
            reschedule_later: split.later.into_iter().chain(msplit.later).collect(),
            reconnecting: PosSet::new(),
        };
        // The plain allocs were decided (keep) as they were classified.
        for p in sets.untainted.held(&untainted_odd) {
            self.explain.decide(t.slot(p), Decision::Keep);
        }
        for p in sets.migrate.positions() {
            self.explain.decide(t.slot(p), Decision::Migrate);
        }
        for p in sets.reschedule_now.positions() {
            self.explain.decide(t.slot(p), Decision::RescheduleNow);
        }

        if !c.reconnecting.is_empty() {
            match self.rules.reconnect_reconciliation {
                ReconnectReconciliation::First => self.compute_reconnecting(
                    &mut sets,
                    &c.reconnecting,
                    &all,
                    tg,
                    &mut du,
                    &mut stops,
                ),
                ReconnectReconciliation::InComputeStop => {
                    sets.reconnecting = c.reconnecting.clone();
                }
            }
        }

        if !c.expiring.is_empty() {
            let legacy = self.rules.honour_legacy_disconnect_fields;
            let (keep, lose) = match self.rules.expired_allocs {
                ExpiredAllocs::AlwaysLost => (PosSet::new(), c.expiring.clone()),
                ExpiredAllocs::KeptWhenNoReplace => (
                    c.expiring
                        .filter(t, |_, a| !a.replace_on_disconnect(legacy)),
                    c.expiring.filter(t, |_, a| a.replace_on_disconnect(legacy)),
                ),
            };
            sets.lost.union_with(&lose);
            sets.untainted.union_with(&keep);
        }

        let mut timeout_later_evals = FollowupIds::default();
        if !sets.disconnecting.is_empty() {
            timeout_later_evals = self.compute_disconnecting(&mut sets, tg, &mut du);
        }

        let mut lost_later_evals = FollowupIds::default();
        let mut lost_later: Vec<Later> = Vec::new();
        if !sets.lost.is_empty() {
            // `delayByStopAfter`: lost allocs whose group sets
            // stop_on_client_after and whose wait has not passed.
            let (now, legacy) = (self.clock.now(), self.rules.honour_legacy_disconnect_fields);
            lost_later = sets
                .lost
                .iter(t)
                .filter(|(_, a)| a.should_client_stop(legacy))
                .filter_map(|(pos, a)| {
                    let time = a.wait_client_stop(now, legacy);
                    time.after(now).then_some(Later { pos, time })
                })
                .collect();
            let (ids, evals) = self.create_later_evals(&mut lost_later, trigger::ALLOC_FAILURE);
            for d in &lost_later {
                let eval_id = ids.get(d.pos).unwrap_or("").to_string();
                self.explain.decide(
                    t.slot(d.pos),
                    Decision::LostLater {
                        eval_id,
                        wait_until: d.time,
                    },
                );
            }
            lost_later_evals = ids;
            self.result
                .desired_followup_evals
                .entry(tg.name.clone())
                .or_default()
                .extend(evals);
        }
        lost_later_evals.extend(timeout_later_evals);

        if !sets.reschedule_later.is_empty() {
            self.create_reschedule_later_evals(&mut sets, &all, &tg.name, &mut du);
        }

        // The name index of the union of these sets (an alloc counts once),
        // made when first asked.
        let seed = union_list(&[
            &sets.untainted,
            &sets.migrate,
            &sets.reschedule_now,
            &sets.lost,
        ]);
        let mut name_index = LazyNameIndex {
            job: &input.job_id,
            group,
            count: tg.count,
            seed,
            index: None,
        };

        let is_canarying = dstate.desired_canaries != 0 && !dstate.promoted;
        self.compute_stop(
            tg,
            &mut name_index,
            &mut sets,
            &canaries,
            is_canarying,
            &lost_later_evals,
            &mut du,
            &mut stops,
        );
        if !sets.reconnecting.is_empty() {
            self.keep_reconnecting_pre_16609(&sets.reconnecting, &mut du);
        }

        let (inplace, destructive) = self.compute_updates(&sets.untainted, tg, &mut du);
        if !existing_deployment {
            dstate.desired_total += (destructive.len() + inplace.len()) as u32;
        }

        if is_canarying {
            sets.untainted.remove_all(&canaries);
        }
        let requires_canaries = tg.update.as_ref().is_some_and(|u| {
            !destructive.is_empty() && canaries.len() < u.canary as usize && !dstate.promoted
        });
        if requires_canaries {
            let canary = tg.update.as_ref().map_or(0, |u| u.canary);
            dstate.desired_canaries = canary;
            if existing_deployment
                && let Some(s) = self
                    .deployment_current
                    .as_mut()
                    .and_then(|d| d.task_groups.get_mut(group))
            {
                s.desired_canaries = canary;
            }
            if !self.deployment_paused && !self.deployment_failed {
                du.canary += (canary as usize - canaries.len()) as u64;
                let names = name_index.get(t).next_canaries(
                    du.canary as usize,
                    &canaries.to_alloc_set(t),
                    &destructive.to_alloc_set(t),
                );
                for name in names {
                    place_out.push(PlaceResult {
                        name,
                        task_group: tg.name.clone(),
                        canary: true,
                        previous_alloc: None,
                        reschedule: false,
                        lost: false,
                        downgrade_non_canary: false,
                        min_job_version: 0,
                    });
                }
            }
        }

        let is_canarying = dstate.desired_canaries != 0 && !dstate.promoted;
        let under = self.compute_under_provisioned_by(
            tg,
            &sets.untainted,
            &destructive,
            &sets.migrate,
            is_canarying,
        );

        let mut place = Vec::new();
        let mut place_prev = Vec::new();
        if lost_later.is_empty() {
            place =
                compute_placements(t, tg, &mut name_index, &sets, is_canarying, &mut place_prev);
            if !existing_deployment {
                dstate.desired_total += place.len() as u32;
            }
        }

        let ready = !self.deployment_paused && !self.deployment_failed && !is_canarying;
        let (under, placements) =
            self.place_allocs(ready, &mut du, place, &sets, under, &mut stops);
        // Placements held back are a selection: their positions are not
        // kept (and looked up by ID below).
        place_pos.resize(place_out.len(), None);
        if ready {
            debug_assert_eq!(place_prev.len(), placements.len());
            place_pos.extend(place_prev);
        } else {
            place_pos.resize(place_out.len() + placements.len(), None);
        }
        append(&mut place_out, placements);

        if ready {
            let n = destructive.len().min(under.max(0) as usize);
            du.destructive_update += n as u64;
            du.ignore += (destructive.len() - n) as u64;
            for (i, (p, a)) in destructive.name_order(t).into_iter().enumerate() {
                if i < n {
                    self.result.destructive_update.push(DestructiveResult {
                        place_name: a.name.clone(),
                        task_group: tg.name.clone(),
                        stop_alloc: Rc::clone(a),
                        stop_status_description: status::ALLOC_UPDATING,
                    });
                    self.explain.decide(t.slot(p), Decision::DestructiveUpdate);
                } else {
                    self.explain.decide(t.slot(p), Decision::UpdateDeferred);
                }
            }
        } else {
            du.ignore += destructive.len() as u64;
            for p in destructive.positions() {
                self.explain.decide(t.slot(p), Decision::UpdateDeferred);
            }
        }

        // computeMigrations
        du.migrate += sets.migrate.len() as u64;
        for (p, a) in sets.migrate.name_order(t) {
            stops.push(StopResult {
                alloc: Rc::clone(a),
                client_status: None,
                status_description: status::ALLOC_MIGRATING,
                followup_eval_id: String::new(),
            });
            self.explain.decide(t.slot(p), Decision::Migrate);
            if a.is_batch_job()
                && (a.desired_transition.should_reschedule()
                    || a.desired_transition.should_disable_migration_placement())
            {
                continue;
            }
            place_out.push(PlaceResult {
                name: a.name.clone(),
                task_group: tg.name.clone(),
                canary: a.is_canary(),
                previous_alloc: Some(Rc::clone(a)),
                reschedule: false,
                lost: false,
                downgrade_non_canary: is_canarying && !a.is_canary(),
                min_job_version: a.job_version(),
            });
            place_pos.push(Some(p));
        }

        self.create_deployment(
            group,
            tg,
            existing_deployment,
            dstate,
            &all,
            &destructive,
            du.in_place_update,
        );
        if self
            .deployment_current
            .as_ref()
            .is_some_and(|d| d.status == DeploymentStatus::Initializing)
        {
            // Sent in full so the plan applier persists its state; taken at
            // the end of the run, after every group has updated it.
            self.persist_initializing = true;
        }

        if place_out.len() > count {
            place_out.truncate(count);
            du.place = count as u64;
        }

        let complete = self.is_deployment_complete(
            group,
            destructive.len()
                + inplace.len()
                + place_out.len()
                + sets.migrate.len()
                + sets.reschedule_now.len()
                + sets.reschedule_later.len(),
            requires_canaries,
        );

        debug_assert!(place_pos.len() >= place_out.len());
        for (p, pos) in place_out.iter().zip(place_pos) {
            let Some(prev) = &p.previous_alloc else {
                continue;
            };
            let slot = match pos {
                Some(pos) => Some(t.slot(pos)),
                None => t.slot_of(&prev.id),
            };
            if let Some(slot) = slot {
                self.explain.mark_replaced(slot);
            }
        }
        append(&mut self.result.stop, stops);
        append(&mut self.result.place, place_out);
        self.result.desired_tg_updates.insert(group.to_string(), du);
        complete
    }

    /// `filterByRescheduleable` of a set that is not disconnecting and
    /// holds the table's allocs (no copies of its own), all of them plainly
    /// running but for
    /// `odd` (ascending positions, each in `set`): those stay untainted (what `should_filter` and `update_by_reschedulable`
    /// answer for them) as a block, and `odd` are split one by one (most
    /// of them quiet, see [`filters::quiet`], and so untainted too).
    /// Takes the set: its allocs that stay are the untainted part.
    fn split_plain(&self, mut set: PosSet, odd: &[u32]) -> Split {
        let t = self.table;
        let cx = self.reschedule_cx();
        let (mut now, mut later) = (PosSet::new(), Vec::new());
        // `odd` ascends, so the parts are in ID order.
        set.remove_where(odd, |pos| {
            // A quiet alloc stays, but an unknown one whose follow-up
            // eval is the run's (then the rules below tie the result to
            // the eval).
            let f = t.facts(pos);
            if f.quiet() && (!f.unknown() || cx.clock.is_other_eval(&t.alloc(pos).followup_eval_id))
            {
                debug_assert!(matches!(
                    split_outcome(t.alloc(pos), false, &cx),
                    Outcome::Untainted
                ));
                return false;
            }
            match split_outcome(t.alloc(pos), false, &cx) {
                Outcome::Untainted => false,
                Outcome::Later(time) => {
                    later.push(Later { pos, time });
                    false
                }
                Outcome::Now => {
                    now.push(pos);
                    true
                }
                Outcome::Dropped => true,
            }
        });
        Split {
            untainted: set,
            now,
            later,
        }
    }

    /// `filterByRescheduleable` of the disconnecting allocs: splits them
    /// into untainted, reschedule-now and reschedule-later, as
    /// [`filters::split_rescheduleable`] does for an [`AllocSet`].
    fn split_disconnecting(&self, set: &PosSet) -> Split {
        let t = self.table;
        let cx = self.reschedule_cx();
        let mut out = Split::default();
        // `set` is in ID order, so the parts are too.
        for (pos, own) in set.iter_own() {
            match split_outcome(own.unwrap_or(t.alloc(pos)), true, &cx) {
                Outcome::Untainted => out.untainted.push_with(pos, own.cloned()),
                Outcome::Now => out.now.push_with(pos, own.cloned()),
                Outcome::Later(time) => {
                    out.later.push(Later { pos, time });
                    out.untainted.push_with(pos, own.cloned());
                }
                Outcome::Dropped => {}
            }
        }
        out
    }

    /// `cancelUnneededCanaries`: stops canaries of old or failed deployments,
    /// and migrating or lost current canaries; returns the current canaries.
    fn cancel_unneeded_canaries(
        &mut self,
        all: &mut PosSet,
        du: &mut DesiredUpdates,
        stops: &mut Vec<StopResult>,
    ) -> PosSet {
        let t = self.table;
        let mut stop_ids: Vec<String> = Vec::new();
        if let Some(old) = &self.deployment_old {
            for s in old.task_groups.values().filter(|s| !s.promoted) {
                stop_ids.extend(s.placed_canaries.iter().cloned());
            }
        }
        if let Some(cur) = &self.deployment_current
            && cur.status == DeploymentStatus::Failed
        {
            for s in cur.task_groups.values().filter(|s| !s.promoted) {
                stop_ids.extend(s.placed_canaries.iter().cloned());
            }
        }
        let stop_set = all.with_ids(t, &stop_ids);
        for (p, a) in stop_set.iter(t) {
            self.classify(
                p,
                AllocCategory::Filtered,
                ClassifyRule::UnneededCanary,
                Decision::Skip,
            );
            self.stop(
                stops,
                p,
                a,
                None,
                status::ALLOC_NOT_NEEDED,
                StopReason::CanaryCancelled,
            );
        }
        du.stop += stop_set.len() as u64;
        all.remove_all(&stop_set);

        let Some(cur) = &self.deployment_current else {
            return PosSet::new();
        };
        let ids: Vec<String> = cur
            .task_groups
            .values()
            .flat_map(|s| s.placed_canaries.iter().cloned())
            .collect();
        let canaries = all.with_ids(t, &ids);
        let migrate = canaries.filter_pos(|p| t.facts(p).cat == AllocCategory::Migrate);
        let lost = canaries.filter_pos(|p| t.facts(p).cat == AllocCategory::Lost);
        for (p, a) in migrate.iter(t) {
            let f = t.facts(p);
            self.classify(p, f.cat, f.rule, Decision::Skip);
            self.stop(
                stops,
                p,
                a,
                None,
                status::ALLOC_MIGRATING,
                StopReason::Migrating,
            );
        }
        for (p, a) in lost.iter(t) {
            let f = t.facts(p);
            self.classify(p, f.cat, f.rule, Decision::Skip);
            self.stop(
                stops,
                p,
                a,
                Some(ClientStatus::Lost),
                status::ALLOC_LOST,
                StopReason::Lost,
            );
        }
        all.remove_all(&migrate);
        all.remove_all(&lost);
        canaries.filter_pos(|p| {
            matches!(
                t.facts(p).cat,
                AllocCategory::Untainted | AllocCategory::Filtered
            )
        })
    }

    /// `computeReconnecting` and `reconcileReconnecting`.
    fn compute_reconnecting(
        &mut self,
        sets: &mut GroupSets,
        reconnecting: &PosSet,
        all: &PosSet,
        tg: &TaskGroup,
        du: &mut DesiredUpdates,
        stops: &mut Vec<StopResult>,
    ) {
        let t = self.table;
        let job = self.input.job.as_ref().expect("job");
        let strategy = tg.reconcile_strategy();
        let mut stop = PosSet::new();
        for (rp, r) in reconnecting.iter(t) {
            if !r.server_terminal_status() && r.client_status == ClientStatus::Failed {
                stop.insert(rp);
                self.stop(
                    stops,
                    rp,
                    r,
                    Some(ClientStatus::Failed),
                    status::ALLOC_RESCHEDULED,
                    StopReason::FailedReconnect,
                );
                continue;
            }
            if reconnect_not_wanted(r, job) {
                stop.insert(rp);
                self.stop(
                    stops,
                    rp,
                    r,
                    None,
                    status::ALLOC_NOT_NEEDED,
                    StopReason::ReconnectNotNeeded,
                );
                continue;
            }
            // The replacements, found as the profile's Nomad found them
            // (`all` holds one alloc per ID, so positions tell IDs apart).
            let mut chain: Vec<(u32, &Rc<Allocation>)> = Vec::new();
            match self.rules.replacement_lookup {
                ReplacementLookup::NextAllocationChain => {
                    let mut next = r.next_allocation.as_str();
                    while let Some((q, a)) = all.get_by_id(t, next) {
                        if chain.iter().any(|(c, _)| *c == q) || q == rp {
                            break;
                        }
                        chain.push((q, a));
                        next = &a.next_allocation;
                    }
                }
                ReplacementLookup::NextAllocation => {
                    chain.extend(
                        all.get_by_id(t, &r.next_allocation)
                            .filter(|(q, _)| *q != rp),
                    );
                }
                ReplacementLookup::SameNameNewer => {
                    chain.extend(all.iter(t).filter(|(q, a)| {
                        *q != rp && a.name == r.name && a.create_index > r.create_index
                    }));
                }
            }
            for (q, replacement) in chain.iter().filter(|(_, a)| !a.server_terminal_status()) {
                match self
                    .picker
                    .pick(&strategy, r, replacement, self.clock.now())
                {
                    Pick::Replacement => {
                        if !stop.contains(rp) {
                            stop.insert(rp);
                            self.stop(
                                stops,
                                rp,
                                r,
                                None,
                                status::ALLOC_NOT_NEEDED,
                                StopReason::ReplacementKept,
                            );
                        }
                    }
                    Pick::Original => {
                        if !stop.contains(*q) {
                            stop.insert(*q);
                            self.stop(
                                stops,
                                *q,
                                replacement,
                                None,
                                status::ALLOC_RECONNECTED,
                                StopReason::OriginalReconnected,
                            );
                        }
                    }
                }
            }
        }
        let reconnect = reconnecting.difference(&stop);

        du.stop += stop.len() as u64;
        sets.untainted.remove_all(&stop);
        sets.migrate.remove_all(&stop);
        sets.lost.remove_all(&stop);
        sets.disconnecting.remove_all(&stop);

        if !reconnect.is_empty() {
            let (updates, _) = self.reconnect_updates(&reconnect);
            du.reconnect = updates.len() as u64;
            self.result.reconnect_updates.union_with(updates);
            sets.untainted.union_with(&reconnect);
        }
    }

    /// The over-count step for reconnecting allocs before #16609 (Nomad
    /// ≤ 1.5.3, `computeStopByReconnecting`): each reconnecting alloc that
    /// is no longer wanted stops; the others are weighed against the
    /// untainted allocs with the same name. The untainted one is kept only
    /// if it belongs to a newer job or its node scored strictly higher;
    /// an alloc without a score is not compared. Every stop counts toward
    /// `remove`. Nomad keeps comparing an original it already stopped with
    /// further same-name allocs (stopping it twice); here an original that
    /// lost stops once and is not compared again.
    fn compute_stop_by_reconnecting(
        &mut self,
        untainted: &mut PosSet,
        reconnecting: &mut PosSet,
        remove: &mut i64,
        stop: &mut Vec<u32>,
        stops: &mut Vec<StopResult>,
    ) {
        let t = self.table;
        let job = self.input.job.as_ref().expect("job");
        let originals: Vec<(u32, Rc<Allocation>)> = reconnecting
            .iter(t)
            .map(|(p, a)| (p, Rc::clone(a)))
            .collect();
        for (rp, r) in &originals {
            let rp = *rp;
            if reconnect_not_wanted(r, job) {
                self.stop(
                    stops,
                    rp,
                    r,
                    None,
                    status::ALLOC_NOT_NEEDED,
                    StopReason::ReconnectNotNeeded,
                );
                stop.push(rp);
                reconnecting.remove(rp);
                *remove -= 1;
                if *remove == 0 {
                    return;
                }
                continue;
            }
            let twins: Vec<(u32, Rc<Allocation>)> = untainted
                .iter(t)
                .filter(|(_, u)| u.name == r.name)
                .map(|(p, u)| (p, Rc::clone(u)))
                .collect();
            for (up, u) in &twins {
                let (Some(u_score), Some(r_score)) = (u.node_score, r.node_score) else {
                    continue;
                };
                let replacement_wins = u.job_version() > r.job_version()
                    || u.job_create_index() > r.job_create_index()
                    || u_score > r_score;
                if replacement_wins {
                    self.stop(
                        stops,
                        rp,
                        r,
                        None,
                        status::ALLOC_NOT_NEEDED,
                        StopReason::ReplacementKept,
                    );
                    stop.push(rp);
                    reconnecting.remove(rp);
                } else {
                    self.stop(
                        stops,
                        *up,
                        u,
                        None,
                        status::ALLOC_RECONNECTED,
                        StopReason::OriginalReconnected,
                    );
                    stop.push(*up);
                    untainted.remove(*up);
                }
                *remove -= 1;
                if *remove == 0 || replacement_wins {
                    break;
                }
            }
            if *remove == 0 {
                return;
            }
        }
    }

    /// `computeReconnecting` before #16609: the reconnecting allocs the stop
    /// step kept are reconnected where they run the current job; Nomad
    /// counted them as ignored. The update is written to the plan only
    /// from 1.4.3 (#15068).
    fn keep_reconnecting_pre_16609(&mut self, kept: &PosSet, du: &mut DesiredUpdates) {
        let (updates, current_not_updated) = self.reconnect_updates(kept);
        du.ignore += current_not_updated + updates.len() as u64;
        self.result.reconnect_updates.union_with(updates);
    }

    /// The reconnect update of each alloc of `allocs` that still runs the
    /// current job and has no migrate/reschedule transition: its client
    /// status appended to AllocStates (only where the rules write
    /// reconnect updates to the plan; the updated alloc is built only when
    /// asked for, see [`ReconnectUpdate`]). Records each alloc's decision
    /// and returns the updates (in alloc ID order) and how many current
    /// allocs got none because the rules write no updates.
    fn reconnect_updates(&mut self, allocs: &PosSet) -> (Vec<ReconnectUpdate>, u64) {
        let t = self.table;
        let job = self.input.job.as_ref().expect("job");
        let mut updates = Vec::new();
        let mut current_not_updated = 0;
        for (p, a) in allocs.iter(t) {
            let skip = reconnect_not_wanted(a, job) || a.client_status != ClientStatus::Running;
            if skip || !self.rules.emit_reconnect_updates {
                self.explain.decide(t.slot(p), Decision::ReconnectKept);
                current_not_updated += u64::from(!skip);
                continue;
            }
            updates.push(ReconnectUpdate {
                alloc: Rc::clone(a),
                at: self.input.now,
            });
            self.explain.decide(t.slot(p), Decision::Reconnect);
        }
        (updates, current_not_updated)
    }

    /// `computeDisconnecting`: returns alloc → timeout eval ID.
    fn compute_disconnecting(
        &mut self,
        sets: &mut GroupSets,
        tg: &TaskGroup,
        du: &mut DesiredUpdates,
    ) -> FollowupIds {
        let input = self.input;
        let t = self.table;
        let split = self.split_disconnecting(&sets.disconnecting);
        sets.reschedule_now.union_with(&split.now);
        sets.untainted.union_with(&split.untainted);
        sets.reschedule_later.extend(split.later);

        let (ids, evals) = self.create_timeout_later_evals(&sets.disconnecting);
        self.result
            .desired_followup_evals
            .entry(tg.name.clone())
            .or_default()
            .extend(evals);

        let mut updates = Vec::with_capacity(sets.disconnecting.len());
        // The allocs replaced now stay in `reschedule_now` as read: what the
        // update changes (client status, states, description, follow-up
        // eval) is read there by nothing but the placement's
        // `previous_alloc` (see `PlaceResult::previous_updated`).
        let mut in_now = 0;
        for (p, a) in sets.disconnecting.iter(t) {
            let update = DisconnectUpdate {
                alloc: Rc::clone(a),
                followup_eval_id: ids.get_shared(p).map_or_else(|| Rc::from(""), Rc::clone),
                at: input.now,
            };
            let replaced = split.now.contains_hinted(p, &mut in_now);
            updates.push(update);
            self.explain
                .decide(t.slot(p), Decision::Disconnect { replaced });
        }
        du.disconnect = updates.len() as u64;
        self.result.disconnect_updates.union_with(updates);
        du.reschedule_now = sets.reschedule_now.len() as u64;
        du.reschedule_later = sets.reschedule_later.len() as u64;
        ids
    }

    fn new_eval(&mut self, trigger: &str, desc: &str, wait_until: Time) -> Evaluation {
        let job = self.input.job.as_ref().expect("job");
        Evaluation {
            id: (self.next_id)(),
            namespace: job.namespace.clone(),
            priority: self.input.eval_priority,
            eval_type: job.job_type.to_string(),
            triggered_by: trigger.to_string(),
            job_id: job.id.clone(),
            job_modify_index: job.modify_index,
            status: EvalStatus::Pending,
            status_description: desc.to_string(),
            wait_until,
            ..Default::default()
        }
    }

    /// `createLaterEvals`: batches `later` (sorted here) into follow-up evals
    /// 5 s wide; returns alloc → eval ID and the evals.
    fn create_later_evals(
        &mut self,
        later: &mut [Later],
        trigger_first: &str,
    ) -> (FollowupIds, Vec<Evaluation>) {
        let mut ids = Vec::with_capacity(later.len());
        let mut evals: Vec<Evaluation> = Vec::new();
        if later.is_empty() {
            return (FollowupIds::default(), evals);
        }
        later.sort_by_key(Later::time);
        let mut batch_start = later[0].time;
        evals.push(self.new_eval(trigger_first, eval_desc::RESCHEDULING_FOLLOWUP, batch_start));
        for d in later.iter() {
            if d.time.since(batch_start) >= BATCHED_FAILED_ALLOC_WINDOW {
                batch_start = d.time;
                let e = self.new_eval(trigger::ALLOC_FAILURE, "", batch_start);
                evals.push(e);
            }
            ids.push((d.pos, evals.len() - 1));
        }
        (FollowupIds::new(&evals, ids), evals)
    }

    /// `createTimeoutLaterEvals`: one eval per 5 s batch of lost_after
    /// timeouts (`delayByLostAfter`).
    fn create_timeout_later_evals(
        &mut self,
        disconnecting: &PosSet,
    ) -> (FollowupIds, Vec<Evaluation>) {
        let t = self.table;
        let mut evals: Vec<Evaluation> = Vec::new();
        let (now, legacy) = (self.clock.now(), self.rules.honour_legacy_disconnect_fields);
        let mut delays: Vec<Later> = disconnecting
            .iter(t)
            .map(|(pos, a)| Later {
                pos,
                time: a.disconnect_timeout(now, legacy),
            })
            .collect();
        if delays.is_empty() {
            return (FollowupIds::default(), evals);
        }
        let mut ids = Vec::with_capacity(delays.len());
        delays.sort_by_key(Later::time);
        let mut batch_start = delays[0].time;
        let desc = eval_desc::DISCONNECT_TIMEOUT_FOLLOWUP;
        evals.push(self.new_eval(trigger::MAX_DISCONNECT_TIMEOUT, desc, batch_start));
        for d in &delays {
            if d.time.since(batch_start) >= BATCHED_FAILED_ALLOC_WINDOW {
                batch_start = d.time;
                let e = self.new_eval(trigger::MAX_DISCONNECT_TIMEOUT, desc, batch_start);
                evals.push(e);
            }
            ids.push((d.pos, evals.len() - 1));
        }
        (FollowupIds::new(&evals, ids), evals)
    }

    /// `createRescheduleLaterEvals`: follow-up evals for reschedule-later
    /// allocs, and the updates that attach them.
    fn create_reschedule_later_evals(
        &mut self,
        sets: &mut GroupSets,
        all: &PosSet,
        group: &str,
        du: &mut DesiredUpdates,
    ) {
        let t = self.table;
        let mut later = std::mem::take(&mut sets.reschedule_later);
        let (ids, evals) = self.create_later_evals(&mut later, trigger::ALLOC_RESCHEDULE);
        let mut attribute_updates = AllocSet::new();
        // `later` is mostly in ID order (sorted by time, stably): hinted
        // lookups find the next alloc without a search.
        let (mut in_disconnect, mut in_all) = (0, 0);
        for d in &later {
            let shared = ids.get_shared(d.pos);
            let eval_id = shared.map_or_else(String::new, |e| String::from(&**e));
            // The set's entry gets the eval attached: a disconnect update
            // shares the eval's ID; an alloc is replaced by a copy.
            let id = t.alloc(d.pos).id.as_str();
            if let Some(u) = self
                .result
                .disconnect_updates
                .get_mut_hinted(id, &mut in_disconnect)
            {
                u.followup_eval_id = shared.map_or_else(|| Rc::from(""), Rc::clone);
            } else if let Some(m) = sets.migrate.own_mut(t, d.pos) {
                m.followup_eval_id.clone_from(&eval_id);
            } else if all.contains_hinted(d.pos, &mut in_all) {
                let mut copy = (**t.alloc(d.pos)).clone();
                copy.followup_eval_id.clone_from(&eval_id);
                attribute_updates.insert(Rc::new(copy));
            }
            self.explain.decide(
                t.slot(d.pos),
                Decision::RescheduleLater {
                    eval_id,
                    wait_until: d.time,
                },
            );
        }
        self.result.attribute_updates.union_with(&attribute_updates);
        self.result
            .desired_followup_evals
            .entry(group.to_string())
            .or_default()
            .extend(evals);
        du.reschedule_later = later.len() as u64;
        sets.reschedule_later = later;
    }

    /// `computeStop`: stops lost allocs and allocs over the count.
    #[allow(clippy::too_many_arguments)]
    fn compute_stop(
        &mut self,
        tg: &TaskGroup,
        name_index: &mut LazyNameIndex<'_>,
        sets: &mut GroupSets,
        canaries: &PosSet,
        is_canarying: bool,
        followups: &FollowupIds,
        du: &mut DesiredUpdates,
        stops: &mut Vec<StopResult>,
    ) {
        let t = self.table;
        for (p, a) in sets.lost.iter(t) {
            let followup = followups.get(p).unwrap_or("").to_string();
            stops.push(StopResult {
                alloc: Rc::clone(a),
                client_status: Some(ClientStatus::Lost),
                status_description: status::ALLOC_LOST,
                followup_eval_id: followup,
            });
            let slot = t.slot(p);
            if !matches!(
                self.explain.decision(slot),
                Some(Decision::LostLater { .. })
            ) {
                self.explain.decide(
                    slot,
                    Decision::Stop {
                        reason: StopReason::Lost,
                        replaced: false,
                    },
                );
            }
        }
        let mut stop: Vec<u32> = sets.lost.positions().collect();
        if !sets.reconnecting.is_empty() {
            // ≤ 1.5.3: reconnects as failed are stopped with the lost allocs.
            let failed = sets.reconnecting.filter(t, |_, a| {
                !a.server_terminal_status() && a.client_status == ClientStatus::Failed
            });
            for (p, a) in failed.iter(t) {
                self.stop(
                    stops,
                    p,
                    a,
                    Some(ClientStatus::Failed),
                    status::ALLOC_RESCHEDULED,
                    StopReason::FailedReconnect,
                );
                stop.push(p);
            }
            sets.reconnecting.remove_all(&failed);
        }
        self.compute_stop_over_count(
            tg,
            name_index,
            sets,
            canaries,
            is_canarying,
            &mut stop,
            stops,
        );
        let stop = PosSet::from_positions(stop);
        du.stop += stop.len() as u64;
        sets.untainted.remove_all(&stop);
    }

    /// Stops allocs over the count: first twins of promoted canaries, then
    /// migrating allocs with the highest names, then untainted allocs with
    /// the highest names, then any untainted alloc. Stopped allocs are
    /// appended to `stop`.
    #[allow(clippy::too_many_arguments)]
    fn compute_stop_over_count(
        &mut self,
        tg: &TaskGroup,
        name_index: &mut LazyNameIndex<'_>,
        sets: &mut GroupSets,
        canaries: &PosSet,
        is_canarying: bool,
        stop: &mut Vec<u32>,
        stops: &mut Vec<StopResult>,
    ) {
        let t = self.table;
        let counted = |p: u32| !is_canarying || !canaries.contains(p);
        // `known` counts some of the untainted allocs: when all of them
        // would not exceed the count, nothing is over it.
        if sets.untainted.len() + sets.migrate.len() + sets.reconnecting.len() <= tg.count as usize
        {
            return;
        }
        let known = sets
            .untainted
            .iter_own()
            .filter(|(p, own)| counted(*p) && !is_unknown(t, *p, *own))
            .count();
        let mut remove = known as i64 + sets.migrate.len() as i64 + sets.reconnecting.len() as i64
            - tg.count as i64;
        if remove <= 0 {
            return;
        }
        let mut working = sets
            .untainted
            .filter(t, |p, a| counted(p) && !a.server_terminal_status());

        let stop_one = |this: &mut Self,
                        stop: &mut Vec<u32>,
                        stops: &mut Vec<StopResult>,
                        p: u32,
                        a: &Rc<Allocation>,
                        remove: &mut i64| {
            stop.push(p);
            this.stop(
                stops,
                p,
                a,
                None,
                status::ALLOC_NOT_NEEDED,
                StopReason::NotNeeded,
            );
            *remove -= 1;
        };

        if !is_canarying && !canaries.is_empty() {
            let names: BTreeSet<&str> =
                crate::cold_sort::set_from(canaries.iter(t).map(|(_, a)| a.name.as_str()));
            let mut stopped = PosSet::new();
            for (p, a) in working.iter(t) {
                if !canaries.contains(p) && names.contains(a.name.as_str()) {
                    stop_one(self, stop, stops, p, a, &mut remove);
                    stopped.push(p);
                    if remove == 0 {
                        return;
                    }
                }
            }
            working.remove_all(&stopped);
        }

        if !sets.migrate.is_empty() {
            let mut migrating = AllocNameIndex::from_indexes(
                &self.input.job_id,
                &tg.name,
                tg.count,
                sets.migrate.name_indexes(t),
            );
            let names = migrating.highest(remove as usize);
            let mut stopped = PosSet::new();
            for (p, a) in sets.migrate.iter(t) {
                if !names.contains(&a.name) {
                    continue;
                }
                stop_one(self, stop, stops, p, a, &mut remove);
                stopped.push(p);
                name_index.get(t).unset_index(a.name_index());
                if remove == 0 {
                    break;
                }
            }
            sets.migrate.remove_all(&stopped);
            if remove == 0 {
                return;
            }
        }

        if !sets.reconnecting.is_empty() {
            self.compute_stop_by_reconnecting(
                &mut working,
                &mut sets.reconnecting,
                &mut remove,
                stop,
                stops,
            );
            if remove == 0 {
                return;
            }
        }

        let names = name_index.get(t).highest(remove as usize);
        let mut stopped = PosSet::new();
        for (p, a) in working.iter(t) {
            if names.contains(&a.name) {
                stop_one(self, stop, stops, p, a, &mut remove);
                stopped.push(p);
                if remove == 0 {
                    return;
                }
            }
        }
        working.remove_all(&stopped);

        for (p, a) in working.iter(t) {
            stop_one(self, stop, stops, p, a, &mut remove);
            if remove == 0 {
                return;
            }
        }
    }

    /// `computeUpdates`: splits untainted into ignore, in-place, destructive.
    fn compute_updates(
        &mut self,
        untainted: &PosSet,
        tg: &TaskGroup,
        du: &mut DesiredUpdates,
    ) -> (AllocSet, PosSet) {
        let t = self.table;
        let job = self.input.job.as_ref().expect("job");
        let mut inplace = AllocSet::new();
        let mut destructive = PosSet::new();
        let mut ignore = 0u64;
        let mut ask = |this: &mut Self, pos: u32, own: Option<&Rc<Allocation>>| {
            let a = own.unwrap_or(t.alloc(pos));
            match (this.update_fn)(a, job, tg) {
                UpdateType::Ignore => ignore += 1,
                UpdateType::Destructive => destructive.push_with(pos, own.cloned()),
                UpdateType::InPlace(updated) => {
                    this.explain.decide(t.slot(pos), Decision::InPlaceUpdate);
                    inplace.insert(updated);
                }
            }
        };
        match t.asked() {
            // The allocs that run the run's job are ignored unasked.
            Some(asked) if untainted.own_copies().is_empty() => {
                let mut n = 0;
                for pos in untainted.held(asked) {
                    ask(self, pos, None);
                    n += 1;
                }
                ignore += (untainted.len() - n) as u64;
            }
            _ => {
                for (pos, own) in untainted.iter_own() {
                    ask(self, pos, own);
                }
            }
        }
        self.result.inplace_update.extend(inplace.iter().cloned());
        du.ignore += ignore;
        du.in_place_update += inplace.len() as u64;
        (inplace, destructive)
    }

    /// `computeUnderProvisionedBy`: how many non-canary allocs may be placed.
    fn compute_under_provisioned_by(
        &self,
        tg: &TaskGroup,
        untainted: &PosSet,
        destructive: &PosSet,
        migrate: &PosSet,
        is_canarying: bool,
    ) -> i64 {
        let Some(update) = tg.update_strategy() else {
            return tg.count as i64;
        };
        if destructive.len() + migrate.len() == 0 {
            return tg.count as i64;
        }
        let Some(d) = &self.deployment_current else {
            return update.max_parallel as i64;
        };
        if self.deployment_paused || self.deployment_failed || is_canarying {
            return 0;
        }
        let mut under = update.max_parallel as i64;
        // `filterByDeployment`: the allocs of the current deployment.
        for (_, a) in untainted.iter(self.table) {
            if a.deployment_id != d.id {
                continue;
            }
            if a.is_unhealthy() {
                return 0;
            }
            if !a.is_healthy() {
                under -= 1;
            }
        }
        under.max(0)
    }

    /// `placeAllocs`: which placements proceed, and the failed allocs they stop.
    fn place_allocs(
        &mut self,
        ready: bool,
        du: &mut DesiredUpdates,
        place: Vec<PlaceResult>,
        sets: &GroupSets,
        under: i64,
        stops: &mut Vec<StopResult>,
    ) -> (i64, Vec<PlaceResult>) {
        let t = self.table;
        let disconnect_updates = &self.result.disconnect_updates;
        // When every disconnect update is this group's, they are the
        // updates of `sets.disconnecting` (one per alloc, and a group holds
        // one alloc per ID): positions tell which allocs have one. Else
        // look the IDs up. Asked in ID order: hinted lookups mostly find
        // the next entry.
        let by_pos = disconnect_updates.len() == sets.disconnecting.len();
        let mut in_disconnect = 0;
        let failed = sets.reschedule_now.filter(t, |p, a| {
            let disconnected = if by_pos {
                sets.disconnecting.contains_hinted(p, &mut in_disconnect)
            } else {
                disconnect_updates
                    .find_hinted(&a.id, &mut in_disconnect)
                    .is_some()
            };
            !disconnected && !sets.migrate.contains(p) && a.client_status != ClientStatus::Unknown
        });
        if ready {
            du.place += place.len() as u64;
            for (p, a) in failed.iter(t) {
                self.stop(
                    stops,
                    p,
                    a,
                    None,
                    status::ALLOC_RESCHEDULED,
                    StopReason::Rescheduled,
                );
            }
            du.stop += failed.len() as u64;
            let under = under - (place.len() as i64).min(under);
            return (under, place);
        }

        let mut out = Vec::new();
        if !sets.lost.is_empty() {
            let allowed = sets.lost.len().min(place.len());
            du.place += allowed as u64;
            out.extend(place[..allowed].iter().cloned());
        }
        if sets.reschedule_now.is_empty() || place.is_empty() {
            return (under, out);
        }
        let current_id = self.deployment_current.as_ref().map(|d| d.id.clone());
        let disconnected: Vec<bool> = place
            .iter()
            .map(|p| {
                p.previous_alloc
                    .as_ref()
                    .is_some_and(|prev| self.result.disconnect_updates.contains(&prev.id))
            })
            .collect();
        for (p, disconnected) in place.iter().zip(disconnected) {
            let prev = p.previous_alloc.as_ref();
            let part_of_failed = self.deployment_failed
                && prev.is_some_and(|prev| Some(&prev.deployment_id) == current_id.as_ref());
            if !part_of_failed && p.reschedule {
                out.push(p.clone());
                du.place += 1;
                let Some(prev) = prev else { continue };
                if disconnected {
                    continue;
                }
                self.stop_slot(
                    stops,
                    t.slot_of(&prev.id),
                    prev,
                    None,
                    status::ALLOC_RESCHEDULED,
                    StopReason::Rescheduled,
                );
                du.stop += 1;
            }
        }
        (under, out)
    }

    /// `createDeployment`: creates the deployment or attaches the group's state.
    #[allow(clippy::too_many_arguments)]
    fn create_deployment(
        &mut self,
        group: &str,
        tg: &TaskGroup,
        existing: bool,
        dstate: DeploymentState,
        all: &PosSet,
        destructive: &PosSet,
        inplace: u64,
    ) {
        let job = self.input.job.as_ref().expect("job");
        if existing || tg.update_strategy().is_none() || dstate.desired_total == 0 {
            return;
        }
        let updating_spec = !destructive.is_empty() || inplace != 0;
        let had_running = all.iter(self.table).any(|(_, a)| {
            a.job_version() == job.version && a.job_create_index() == job.create_index
        });
        if had_running && !updating_spec {
            return;
        }
        if self.deployment_current.is_none() {
            self.deployment_current = Some(Deployment {
                id: (self.next_id)(),
                namespace: job.namespace.clone(),
                job_id: job.id.clone(),
                job_version: job.version,
                job_modify_index: job.modify_index,
                job_spec_modify_index: job.job_modify_index,
                job_create_index: job.create_index,
                is_multiregion: false,
                status: DeploymentStatus::Running,
                status_description: dep_desc::RUNNING.to_string(),
                eval_priority: self.input.eval_priority,
                create_time: self.clock.now(),
                ..Default::default()
            });
            self.created_deployment = true;
        }
        if let Some(d) = self.deployment_current.as_mut() {
            d.task_groups.insert(group.to_string(), dstate);
        }
    }

    /// `isDeploymentComplete`; `pending` is the sum of the group's open work.
    fn is_deployment_complete(&self, group: &str, pending: usize, requires_canaries: bool) -> bool {
        if pending != 0 || requires_canaries {
            return false;
        }
        let Some(d) = &self.deployment_current else {
            return false;
        };
        if let Some(s) = d.task_groups.get(group)
            && (s.healthy_allocs < s.desired_total.max(s.desired_canaries)
                || (s.desired_canaries > 0 && !s.promoted))
        {
            return false;
        }
        true
    }
}

/// Appends `more` to `v` (taking `more` whole when `v` is empty).
fn append<T>(v: &mut Vec<T>, more: Vec<T>) {
    if v.is_empty() {
        *v = more;
    } else {
        v.extend(more);
    }
}

/// Whether a reconnecting alloc is no longer wanted, whatever its
/// replacements: the server wants it stopped, it has a migrate or
/// (forced) reschedule transition, or it runs an older job (older version
/// or an earlier incarnation of the job ID). Both the reconnect step
/// (≥ 1.5.4) and the over-count step before #16609 stop such an alloc.
fn reconnect_not_wanted(alloc: &Allocation, job: &Job) -> bool {
    let t = &alloc.desired_transition;
    alloc.desired_status != DesiredStatus::Run
        || t.should_migrate()
        || t.should_reschedule()
        || t.should_force_reschedule()
        || alloc.job_version() < job.version
        || alloc.job_create_index() < job.create_index
}

/// `computePlacements`: reschedules, replacements of lost allocs up to the
/// count, then fresh names up to the count; `prev` gets, per placement, the
/// table position of the alloc it replaces.
fn compute_placements(
    t: &Table<'_>,
    tg: &TaskGroup,
    name_index: &mut LazyNameIndex<'_>,
    sets: &GroupSets,
    is_canarying: bool,
    prev: &mut Vec<Option<u32>>,
) -> Vec<PlaceResult> {
    let replacing = sets.reschedule_now.len() + sets.lost.len();
    let mut place = Vec::with_capacity(replacing);
    prev.reserve(replacing);
    for (p, a) in sets.reschedule_now.iter(t) {
        prev.push(Some(p));
        place.push(PlaceResult {
            name: a.name.clone(),
            task_group: tg.name.clone(),
            canary: a.is_canary(),
            previous_alloc: Some(Rc::clone(a)),
            reschedule: true,
            lost: false,
            downgrade_non_canary: is_canarying && !a.is_canary(),
            min_job_version: a.job_version(),
        });
    }
    let count = tg.count as usize;
    // Before #16609 the reconnecting allocs kept apart count as existing.
    let mut existing = sets.untainted.len()
        + sets.migrate.len()
        + sets.reschedule_now.len()
        + sets.reconnecting.len();
    for (p, a) in sets.lost.iter(t) {
        if existing >= count {
            break;
        }
        existing += 1;
        prev.push(Some(p));
        place.push(PlaceResult {
            name: a.name.clone(),
            task_group: tg.name.clone(),
            canary: a.is_canary(),
            previous_alloc: Some(Rc::clone(a)),
            reschedule: false,
            lost: true,
            downgrade_non_canary: is_canarying && !a.is_canary(),
            min_job_version: a.job_version(),
        });
    }
    if existing < count {
        for name in name_index.get(t).next(count - existing) {
            prev.push(None);
            place.push(PlaceResult {
                name,
                task_group: tg.name.clone(),
                canary: false,
                previous_alloc: None,
                reschedule: false,
                lost: false,
                downgrade_non_canary: is_canarying,
                min_job_version: 0,
            });
        }
    }
    place
}
