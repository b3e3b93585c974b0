//! The scheduler worker: takes a ready eval from the broker, runs the
//! reconciler for its job, places what must be placed, and submits the
//! plan (Nomad's `scheduler/generic_sched.go` for service and batch jobs,
//! `scheduler/scheduler_system.go` for system and sysbatch jobs).
//!
//! Placement follows Nomad's stack in miniature: feasibility on node status
//! (`Ready()`: ready, not draining, eligible), datacenter, pool, the group's
//! node constraint and free resources; a deterministic score (Nomad's
//! bin-packing fit, job anti-affinity, and a penalty on the node a
//! rescheduled alloc ran on), ties broken by node ID; and preemption of
//! allocs at least 10 priority points lower when nothing fits.

use super::plan::Plan;
use super::{EvalOutcome, Server, ServerEffect, tick_time, time_tick};
use crate::model::{
    Allocation, ClientStatus, DesiredStatus, DesiredUpdates, EvalStatus, Evaluation, Job, JobType,
    Node, NodeStatus, RescheduleEvent, RescheduleTracker,
};
use crate::reconciler::cluster::{
    ClusterInput, ReconcileOptions, ReconcileResult, UpdateType, reconcile_indexed,
};
use crate::reconciler::filters::TaintedIndex;
use crate::reconciler::node::{NodeReconciler, NodeRules, TerminalByNodeByName};
use crate::reconciler::rules::ReconcilerRules;
use crate::scenario::format::JobSpec;
use crate::sim::queue::Tick;
use crate::sim::trace::{
    AllocReasons, AllocReasonsBuilder, BrokerState, EvalProcessed, GroupUpdates, SharedText,
    SharedTexts, TraceEvent, short,
};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

mod memo;
mod placement;

pub use memo::ReconcileMemo;
pub use placement::PlacementIndex;

/// The cluster's tainted nodes as [`super::TaintedCache`] keeps them: the
/// map every generic eval's reconciler input shares, and its lookup table
/// (built once with it instead of once per reconcile).
#[derive(Debug, Clone)]
pub struct TaintedNodes {
    map: Rc<BTreeMap<String, Option<Node>>>,
    index: Rc<TaintedIndex>,
}

/// The most attempts one eval makes. Nomad's `retryMax` has no such bound
/// (only attempts in a row without progress count); the simulator stops a
/// plan that keeps committing something forever, and says so in the trace.
const MAX_PLAN_ATTEMPTS_GUARD: usize = 100;

/// Nomad's `retryMax` count for one eval: it fails after `max` refused
/// attempts in a row that made no progress (`progressMade`), or at the
/// simulator's guard.
struct Retries {
    max: usize,
    without_progress: usize,
    /// Attempts that reused the last one's plan (unchanged state).
    repeated: usize,
}

impl Retries {
    fn new(max: usize) -> Self {
        Retries {
            max,
            without_progress: 0,
            repeated: 0,
        }
    }

    /// Whether the last attempt's plan committed anything.
    fn progress(applied: &super::plan::ApplyResult, plan: &Plan) -> bool {
        applied.written > 0 || plan.deployment.is_some() || !plan.deployment_updates.is_empty()
    }

    /// Counts a refused attempt: whether the eval has now failed (a stop
    /// at the guard is said in the plan lines).
    fn failed_after(
        &mut self,
        attempt: usize,
        progress: bool,
        plan_lines: &mut Vec<SharedText>,
    ) -> bool {
        self.without_progress = if progress {
            0
        } else {
            self.without_progress + 1
        };
        if self.without_progress < self.max && attempt < MAX_PLAN_ATTEMPTS_GUARD {
            return false;
        }
        if self.without_progress < self.max {
            plan_lines.push(SharedText::from(format!(
                "stopped after {attempt} attempts that each made progress"
            )));
        }
        true
    }

    /// The line for the attempts that reused a plan, if any: the stored
    /// copy of the world's table (`texts`), found by address for the usual
    /// counts (an eval that fails after `retryMax` attempts says one of
    /// them).
    fn finish(&self, texts: &mut SharedTexts, plan_lines: &mut Vec<SharedText>) {
        const USUAL: [&str; 5] = [
            "",
            "1 more attempts: same plan, rejected again",
            "2 more attempts: same plan, rejected again",
            "3 more attempts: same plan, rejected again",
            "4 more attempts: same plan, rejected again",
        ];
        match self.repeated {
            0 => {}
            n if n < USUAL.len() => plan_lines.push(texts.fixed(USUAL[n])),
            n => {
                const TAIL: &str = " more attempts: same plan, rejected again";
                let mut line = String::with_capacity(TAIL.len() + 3);
                super::push_decimal(&mut line, n as u64);
                line.push_str(TAIL);
                plan_lines.push(texts.text(&line));
            }
        }
    }
}

/// One scheduling attempt's output.
struct Attempt {
    plan: AttemptPlan,
    failed: Vec<String>,
    followups: Vec<Evaluation>,
    desired_tg_updates: GroupUpdates,
    reasons: AllocReasons,
    /// Whether the job's reconcile memo holds the reconcile the attempt
    /// was built from (the attempt may then be kept with it).
    memo_holds: bool,
    /// Whether the reconciler asked for placements (they draw IDs).
    places: bool,
}

/// An attempt's plan: built now, or the job's last refused attempt. (One
/// lives per attempt, on the stack: boxing the built plan would cost an
/// allocation per attempt for nothing.)
#[allow(clippy::large_enum_variant)]
enum AttemptPlan {
    Built(Plan),
    /// The kept attempt ([`KeptAttempt`]), with the applier's reasons for
    /// refusing each of its nodes now, in the plan's node order.
    Kept(Rc<KeptAttempt>, Vec<Cow<'static, str>>),
}

/// An attempt whose plan the applier refused whole, kept with the job's
/// reconcile in the memo ([`ReconcileMemo`]): an eval of the job that
/// reuses that reconcile (nothing it read changed) builds the same plan,
/// describes it in the same lines and gives the same reasons, so while
/// the applier refuses every node of the plan again, the eval reuses the
/// attempt instead of building it. Only an attempt that places nothing,
/// fails nothing, creates no eval and changes no deployment is kept: it
/// draws no IDs and reads nothing of the state but the reconcile's inputs
/// (which the memo compares), the profile switch below, and the nodes the
/// applier checks again. Its plan holds the times of the run that built
/// it: a refused plan is only checked and described, never written.
/// Debug builds check every reuse against a new attempt.
pub struct KeptAttempt {
    plan: Plan,
    /// The plan's description ([`Plan::describe`]), shared with the trace
    /// entries of the evals that reuse it.
    lines: Vec<SharedText>,
    reasons: AllocReasons,
    desired_tg_updates: GroupUpdates,
    /// The profile's `persist_reconnect_mark` the plan was built with.
    persist_reconnect_mark: bool,
}

impl std::fmt::Debug for KeptAttempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptAttempt")
            .field("lines", &self.lines)
            .finish_non_exhaustive()
    }
}

impl Attempt {
    /// The attempt's plan.
    fn plan(&self) -> &Plan {
        match &self.plan {
            AttemptPlan::Built(plan) => plan,
            AttemptPlan::Kept(kept, _) => &kept.plan,
        }
    }

    /// Reuses a kept attempt whose plan the applier refuses (`refused`).
    fn kept(kept: Rc<KeptAttempt>, refused: Vec<Cow<'static, str>>) -> Attempt {
        Attempt {
            failed: Vec::new(),
            followups: Vec::new(),
            desired_tg_updates: kept.desired_tg_updates.clone(),
            reasons: kept.reasons.clone(),
            memo_holds: true,
            places: false,
            plan: AttemptPlan::Kept(kept, refused),
        }
    }

    /// Whether the attempt is of the kind [`KeptAttempt`] keeps (built
    /// from the memo's reconcile; nothing placed, failed, followed up or
    /// changed in a deployment), whatever the applier made of it.
    fn may_be_kept(&self) -> bool {
        let plan = self.plan();
        self.memo_holds
            && !self.places
            && self.failed.is_empty()
            && self.followups.is_empty()
            && plan.deployment.is_none()
            && plan.deployment_updates.is_empty()
    }

    /// Keeps this attempt, built now and described in `lines`, if it
    /// qualifies ([`KeptAttempt`]) and the applier refused it whole
    /// (`applied`): its plan moves into the kept attempt.
    fn keep(
        &mut self,
        lines: &[SharedText],
        applied: &super::plan::ApplyResult,
        persist_reconnect_mark: bool,
    ) -> Option<Rc<KeptAttempt>> {
        if !self.may_be_kept() {
            return None;
        }
        let AttemptPlan::Built(plan) = &mut self.plan else {
            return None;
        };
        if applied.written != 0 || applied.rejected != plan.parts().count() {
            return None;
        }
        let kept = Rc::new(KeptAttempt {
            plan: std::mem::take(plan),
            lines: lines.to_vec(),
            reasons: self.reasons.clone(),
            desired_tg_updates: self.desired_tg_updates.clone(),
            persist_reconnect_mark,
        });
        self.plan = AttemptPlan::Kept(Rc::clone(&kept), Vec::new());
        Some(kept)
    }
}

/// One attempt at a system eval.
#[derive(Default)]
struct SystemAttempt {
    plan: Plan,
    reasons: AllocReasons,
    updates: DesiredUpdates,
    failed: Vec<String>,
}

/// What processing an eval produced: the outcome the eval record keeps,
/// and the reasons and plan lines only its trace entry keeps.
struct Processed {
    outcome: EvalOutcome,
    reasons: AllocReasons,
    plan: Vec<SharedText>,
}

/// A placement to make, read from the reconciler's result: (name, group,
/// previous alloc, reschedule, lost, canary).
type Placement<'a> = (
    &'a str,
    &'a str,
    Option<&'a Rc<Allocation>>,
    bool,
    bool,
    bool,
);

/// Changes to node usage while a plan is being built, on top of the
/// state's `node_usage` and `group_counts` (keyed by node slot, as they
/// are: [`super::ServerState::node_slot`]).
#[derive(Default)]
struct Usage {
    /// node slot → (cpu, mem) delta.
    used: BTreeMap<u32, (i64, i64)>,
    /// node slot → job/group → alloc delta (nested, so lookups borrow).
    collisions: BTreeMap<u32, BTreeMap<String, i64>>,
    /// Slots of the nodes whose deltas changed, in order (a node may
    /// repeat): the scores kept in [`placement::PlanScores`] catch up from
    /// it.
    touched: Vec<u32>,
}

impl Usage {
    /// Adds (`sign` 1) or takes away (-1) one alloc's share (`need`, of
    /// group `key`) of the node in `slot`.
    fn shift(&mut self, slot: u32, (cpu, mem): (u64, u64), key: String, sign: i64) {
        self.touched.push(slot);
        let entry = self.used.entry(slot).or_default();
        entry.0 += sign * cpu as i64;
        entry.1 += sign * mem as i64;
        let groups = self.collisions.entry(slot).or_default();
        *groups.entry(key).or_default() += sign;
    }
}

/// The node a placement picked: its ID and name (for the new alloc), its
/// slot when the pick knew it, its normalized score and the allocs it
/// preempts.
struct Chosen {
    node: String,
    name: String,
    slot: Option<u32>,
    score: f64,
    preempt: Vec<String>,
}

impl Chosen {
    /// The node stored under `id`, with no preemption.
    fn of(id: &str, slot: Option<u32>, record: &super::NodeRecord, score: f64) -> Chosen {
        Chosen {
            node: id.to_string(),
            name: record.node.name.clone(),
            slot,
            score,
            preempt: Vec::new(),
        }
    }
}

/// A node's fit for one alloc of a group, as `select_node` computes it.
#[derive(Clone, Copy, PartialEq)]
enum Fit {
    /// Not ready, or outside the job's datacenters, pool or node list.
    Infeasible,
    /// Feasible, but its free resources are too few.
    Full,
    /// Fits, with this score (normalized, in millionths).
    Score(i64),
}

impl Fit {
    /// The score, when the node fits.
    fn score(self) -> Option<i64> {
        match self {
            Fit::Score(score) => Some(score),
            Fit::Infeasible | Fit::Full => None,
        }
    }
}

/// The reconciler switches of a profile.
pub fn reconciler_rules(
    rules: &crate::profile::Rules,
    version: crate::profile::Version,
) -> ReconcilerRules {
    use crate::reconciler::rules::{
        DisconnectingReplacement, ExpiredAllocs, ReconnectMarker, ReconnectReconciliation,
        UnknownOnUntaintedNode,
    };
    let v = version;
    ReconcilerRules {
        // #27053 dropped the "unknown and should run → untainted" rule in
        // 1.11.2 (and 2.0.0), so such allocs reconnect from then on.
        unknown_on_untainted_node: if v.at_least(1, 11, 2) {
            UnknownOnUntaintedNode::Reconnecting
        } else if v.at_least(1, 7, 0) {
            UnknownOnUntaintedNode::Untainted
        } else {
            UnknownOnUntaintedNode::Ignore
        },
        reconnect_marker: if v.at_least(1, 4, 3) {
            ReconnectMarker::AllocState
        } else {
            ReconnectMarker::TaskEvent
        },
        emit_reconnect_updates: rules.persist_reconnect_mark,
        disconnecting_replacement: if v.at_least(1, 11, 2) {
            DisconnectingReplacement::ReschedulePolicy
        } else if v.at_least(1, 8, 0) {
            DisconnectingReplacement::ImmediateWithBlock
        } else if v.at_least(1, 7, 0) {
            DisconnectingReplacement::ReschedulePolicy
        } else {
            DisconnectingReplacement::Immediate
        },
        honour_legacy_disconnect_fields: !v.at_least(1, 10, 0),
        expired_allocs: if v.at_least(1, 11, 2) {
            ExpiredAllocs::AlwaysLost
        } else {
            ExpiredAllocs::KeptWhenNoReplace
        },
        last_unknown_from_run_start: rules.last_unknown_earliest,
        pr_28445: v == crate::profile::Version::LATEST,
        reconnect_reconciliation: if reconnect_reconciled_first(v) {
            ReconnectReconciliation::First
        } else {
            ReconnectReconciliation::InComputeStop
        },
        replacement_lookup: replacement_lookup(v),
    }
}

/// How `version`'s reconnecting picker finds replacements: #16609 matched
/// same-name newer allocs; #18701 (1.7.0, backported to 1.6.3, 1.5.10 and
/// 1.4.14) the `NextAllocation`; #24165 (1.9.1) the whole chain.
fn replacement_lookup(
    version: crate::profile::Version,
) -> crate::reconciler::rules::ReplacementLookup {
    use crate::reconciler::rules::ReplacementLookup;
    let v = version;
    let next_allocation = v.at_least(1, 7, 0)
        || (v.0 == 1 && v.1 == 6 && v.2 >= 3)
        || (v.0 == 1 && v.1 == 5 && v.2 >= 10)
        || (v.0 == 1 && v.1 == 4 && v.2 >= 14);
    if v.at_least(1, 9, 1) {
        ReplacementLookup::NextAllocationChain
    } else if next_allocation {
        ReplacementLookup::NextAllocation
    } else {
        ReplacementLookup::SameNameNewer
    }
}

/// Nomad's bin-packing score of a node for a group, or `None` when the
/// group's `need` does not fit, with `need` added to what the node runs
/// (`base`) and what the plan adds (`delta`): the first term of a node's
/// placement score ([`combined_score`]). The placement index keeps it per
/// node, so that a node it walks to is scored without computing it again
/// (two `powf`s).
fn binpack(
    record: &super::NodeRecord,
    base: (u64, u64),
    delta: (i64, i64),
    need: (u64, u64),
) -> Option<f64> {
    let used_cpu = (base.0 as i64 + delta.0).max(0) as u64;
    let used_mem = (base.1 as i64 + delta.1).max(0) as u64;
    if used_cpu + need.0 > record.cpu || used_mem + need.1 > record.memory_mb {
        return None;
    }
    let free_cpu = 1.0 - (used_cpu + need.0) as f64 / record.cpu.max(1) as f64;
    let free_mem = 1.0 - (used_mem + need.1) as f64 / record.memory_mb.max(1) as f64;
    let total = 10f64.powf(free_cpu) + 10f64.powf(free_mem);
    Some(((20.0 - total) / 18.0).clamp(0.0, 1.0))
}

/// A node's placement score from its [`binpack`] score: averaged with the
/// job anti-affinity (`collisions` same-group allocs on the node out of
/// `count`) and the reschedule penalty when they apply, summed in this
/// order.
fn combined_score(binpack: f64, collisions: u64, count: u64, penalty: bool) -> f64 {
    let mut sum = binpack;
    let mut scores = 1.0;
    if collisions > 0 {
        sum += -((collisions + 1) as f64) / count as f64;
        scores += 1.0;
    }
    if penalty {
        sum += -1.0;
        scores += 1.0;
    }
    sum / scores
}

/// Whether `version` has #16609 (reconnecting allocs reconciled first):
/// 1.5.4 and later, and the backports 1.4.9 and 1.3.14.
fn reconnect_reconciled_first(version: crate::profile::Version) -> bool {
    let v = version;
    v.at_least(1, 5, 4) || (v.0 == 1 && v.1 == 4 && v.2 >= 9) || (v.0 == 1 && v.1 == 3 && v.2 >= 14)
}

/// The node reconciler switches of a profile.
pub fn node_rules(version: crate::profile::Version) -> NodeRules {
    let v = version;
    if v == crate::profile::Version::LATEST {
        NodeRules::HEAD
    } else if v.at_least(1, 11, 3) {
        // 1.11.3 shipped #27605; its node reconciler equals 2.0.0's.
        NodeRules::V2_0_0
    } else if v.at_least(1, 11, 2) {
        NodeRules::V1_11_2
    } else if v.at_least(1, 11, 0) {
        NodeRules::V1_11_0
    } else if v.at_least(1, 10, 0) {
        NodeRules::V1_10_0
    } else if v.at_least(1, 4, 3) {
        NodeRules::V1_4_3
    } else {
        NodeRules::V1_4_2
    }
}

/// Adds an attempt's plan `lines` to an eval's: as they are for the first
/// attempt (shared, not copied), after "attempt N: " for a later one (the
/// stored copy of the world's table, `texts`: such a line repeats).
fn push_attempt_lines(
    texts: &mut SharedTexts,
    plan_lines: &mut Vec<SharedText>,
    attempt: usize,
    lines: impl IntoIterator<Item = SharedText>,
) {
    if attempt == 1 {
        plan_lines.extend(lines);
        return;
    }
    // Each line is written into one buffer, then copied once.
    let mut prefixed = String::new();
    for line in lines {
        prefixed.clear();
        prefixed.push_str("attempt ");
        super::push_decimal(&mut prefixed, attempt as u64);
        prefixed.push_str(": ");
        prefixed.push_str(&line);
        plan_lines.push(texts.text(&prefixed));
    }
}

/// The line for the groups an eval failed to place.
fn failed_line(failed: &[String]) -> SharedText {
    const HEAD: &str = "failed to place: ";
    // The exact length: the text moves into its shared copy as it is.
    let len = failed.iter().map(|name| name.len() + 2).sum::<usize>();
    let mut line = String::with_capacity(HEAD.len() + len.saturating_sub(2));
    line.push_str(HEAD);
    for (i, name) in failed.iter().enumerate() {
        if i > 0 {
            line.push_str(", ");
        }
        line.push_str(name);
    }
    SharedText::from(line)
}

/// A run's per-alloc reasons for the trace: the allocs it changed (the
/// allocs left alone are not listed: the history keeps every eval's
/// reasons, and at cluster size most allocs are simply kept). Each reason
/// is packed as it is made; its "<set> -> <decision>" text is written into
/// one buffer (many evals list the same few decisions).
fn alloc_reasons(
    texts: &mut SharedTexts,
    result: &ReconcileResult,
    allocs: &[Rc<Allocation>],
) -> AllocReasons {
    let mut reasons = AllocReasonsBuilder::default();
    // Room for the usual text at once (it grew part by part); written
    // again only when the set or decision differs from the last reason's
    // (a run decides the same for many allocs in a row).
    let mut set_text = String::with_capacity(96);
    let mut last: Option<(crate::reconciler::reasons::AllocCategory, _)> = None;
    for d in result.decisions.iter_changes(allocs) {
        let new = last
            .as_ref()
            .is_none_or(|(set, decision)| *set != d.set || *decision != d.decision);
        if new {
            set_text.clear();
            set_text.push_str(d.set.as_str());
            set_text.push_str(" -> ");
            d.decision.describe_to(&mut set_text);
        }
        reasons.push(texts, d.alloc_id(), d.name(), &set_text, d.rule.describe());
        if new {
            last = Some((d.set, d.decision));
        }
    }
    reasons.finish()
}

/// A new ID from a seed and a counter (the server's ID scheme, usable while
/// the server is borrowed).
fn make_id(seed: u64, counter: u64) -> String {
    super::id_from(seed, counter)
}

impl Server {
    /// Processes one ready eval.
    pub(super) fn process_eval(
        &mut self,
        now: Tick,
        wanted: Option<String>,
        out: &mut Vec<ServerEffect>,
    ) {
        let Some(id) = self.state.broker.dequeue(wanted.as_deref()) else {
            out.push(ServerEffect::Trace(TraceEvent::EvalState {
                eval: wanted.unwrap_or_default().into(),
                state: BrokerState::NotReady,
                reason: "no such ready eval".into(),
            }));
            return;
        };
        // The stored record, shared while the eval is scheduled instead of
        // copied; let go before the record is written below, so that the
        // write does not copy it either.
        let Some(record) = self.state.evals.get(&id).map(Rc::clone) else {
            return;
        };
        let eval = &record.eval;
        let job = self.state.jobs.get(&eval.job_id).map(|r| Rc::clone(&r.job));
        let system = job
            .as_ref()
            .map(|j| matches!(j.job_type, JobType::System | JobType::SysBatch))
            .unwrap_or_else(|| eval.eval_type == "system" || eval.eval_type == "sysbatch");
        let handled = !(system
            && matches!(
                eval.triggered_by.as_str(),
                "max-disconnect-timeout" | "alloc-reschedule"
            ));
        let (
            status,
            Processed {
                outcome,
                reasons,
                plan,
            },
        ) = if !handled {
            (
                EvalStatus::Complete,
                Processed {
                    outcome: EvalOutcome {
                        tick: now,
                        desired_tg_updates: GroupUpdates::new(),
                    },
                    reasons: AllocReasons::new(),
                    plan: vec![SharedText::from(format!(
                        "trigger {} not handled by the system scheduler",
                        eval.triggered_by
                    ))],
                },
            )
        } else if system {
            self.schedule_system(now, eval, job.as_deref(), out)
        } else {
            self.schedule_generic(now, eval, job.as_ref(), out)
        };
        // The trace's copies of the job and trigger (and status below)
        // come from the world's table, as the other eval events' do.
        let job_id = self.texts.text(&eval.job_id);
        let trigger = self.texts.text(&eval.triggered_by);
        drop(record);
        let index = self.bump_index();
        let still_blocked = status == EvalStatus::Blocked;
        if let Some(record) = self.state.evals.get_mut(&id) {
            let record = Rc::make_mut(record);
            record.eval.status = status.clone();
            record.eval.modify_index = index;
            record.eval.modify_time = tick_time(now);
            record.outcome = Some(outcome.clone());
        }
        out.push(ServerEffect::Trace(TraceEvent::EvalProcessed(Box::new(
            EvalProcessed {
                eval: id.as_str().into(),
                job: job_id.clone(),
                trigger,
                desired_tg_updates: outcome.desired_tg_updates.clone(),
                reasons,
                plan: plan.into(),
                status: self.texts.text(status.as_str()),
            },
        ))));
        let (next, cancelled) = self
            .state
            .broker
            .ack(&job_id, &id, self.rules.cancel_stale_evals);
        if still_blocked && let Some(old) = self.state.broker.block(&job_id, &id) {
            self.cancel_eval(now, &old, "a newer blocked eval exists for the job", out);
        }
        for stale in cancelled {
            self.cancel_eval(
                now,
                &stale,
                "canceled after more recent eval was processed",
                out,
            );
        }
        if next.is_some() || self.state.broker.has_ready() {
            out.push(ServerEffect::EvalReady);
        }
    }

    /// The nodes that are down, disconnected or draining, or gone (`None`),
    /// of the whole cluster: a superset of Nomad's `taintedNodes` (the
    /// tainted nodes of a job's allocs), which the cluster reconciler only
    /// looks up by an alloc's node, so it decides the same; with its lookup
    /// table.
    ///
    /// Kept in [`super::TaintedCache`] and shared by every eval (a write to
    /// one node updates it: [`Server::tainted_node_written`]). Nodes are never removed and allocs are placed
    /// only on stored nodes, so no alloc's node is gone (debug builds check
    /// it, and that the cache and its table are current).
    fn cluster_tainted_nodes(&mut self, allocs: &[Rc<Allocation>]) -> TaintedNodes {
        debug_assert!(
            allocs
                .iter()
                .all(|a| self.state.nodes.contains_key(&a.node_id)),
            "an alloc's node is not stored"
        );
        match &self.state.tainted_cache.0 {
            Some(cluster) => {
                debug_assert!(
                    *cluster.map == self.cluster_tainted(),
                    "stale tainted-node cache"
                );
                debug_assert!(
                    cluster.index.indexes(&cluster.map),
                    "the cached tainted-node table is not its map's"
                );
                cluster.clone()
            }
            None => {
                let map = self.cluster_tainted();
                let cluster = TaintedNodes {
                    index: Rc::new(TaintedIndex::new(&map)),
                    map: Rc::new(map),
                };
                self.state.tainted_cache = super::TaintedCache(Some(cluster.clone()));
                cluster
            }
        }
    }

    /// Nomad's `taintedNodes`: the nodes of `allocs` that are down,
    /// disconnected or draining, or gone (`None`) (the node reconciler of
    /// system jobs also asks which nodes are tainted, so it gets exactly
    /// these).
    fn tainted_nodes(&mut self, allocs: &[Rc<Allocation>]) -> BTreeMap<String, Option<Node>> {
        let cluster = self.cluster_tainted_nodes(allocs).map;
        if cluster.is_empty() {
            return BTreeMap::new();
        }
        crate::cold_sort::map_from(
            allocs
                .iter()
                .filter_map(|alloc| cluster.get_key_value(&alloc.node_id))
                .map(|(id, node)| (id.clone(), node.clone())),
        )
    }

    /// The nodes that are down, disconnected or draining (what
    /// [`super::TaintedCache`] holds).
    fn cluster_tainted(&self) -> BTreeMap<String, Option<Node>> {
        let tainted = self
            .state
            .nodes
            .iter()
            .filter(|(_, record)| tainted(record))
            .map(|(id, record)| (id.clone(), Some(record.node.clone())));
        crate::cold_sort::map_from(tainted)
    }

    /// Brings the cached tainted nodes ([`super::TaintedCache`]), if any,
    /// up to date after a write to node `id` alone: its entry is written or
    /// removed (the other nodes' copies are kept, not taken again from the
    /// store), and the lookup table built again unless the tainted nodes
    /// and their statuses are as they were.
    pub(super) fn tainted_node_written(&mut self, id: &str) {
        let Some(cluster) = &mut self.state.tainted_cache.0 else {
            return;
        };
        let node = self.state.nodes.get(id).filter(|record| tainted(record));
        match (node, cluster.map.get(id)) {
            // Neither tainted before nor now: the map and table stand.
            (None, None) => return,
            // Tainted before and now, and as it was: likewise.
            (Some(record), Some(Some(kept))) if *kept == record.node => return,
            _ => {}
        }
        let map = Rc::make_mut(&mut cluster.map);
        match node {
            Some(record) => match map.get_mut(id) {
                Some(entry) => {
                    let status = entry.as_ref().map(|node| &node.status);
                    let same_status = status == Some(&record.node.status);
                    *entry = Some(record.node.clone());
                    if same_status {
                        // The same nodes with the same statuses: the
                        // table (IDs and statuses) stands, and keeps its
                        // address (the reconcile memo knows it by that).
                        return;
                    }
                }
                None => {
                    map.insert(id.to_string(), Some(record.node.clone()));
                }
            },
            None => {
                map.remove(id);
            }
        }
        cluster.index = Rc::new(TaintedIndex::new(map));
    }

    /// Service and batch jobs.
    fn schedule_generic(
        &mut self,
        now: Tick,
        eval: &Evaluation,
        job: Option<&Rc<Job>>,
        out: &mut Vec<ServerEffect>,
    ) -> (EvalStatus, Processed) {
        let batch = job.is_some_and(|j| j.job_type == JobType::Batch);
        // Nomad's `retryMax`: the eval fails after `max_attempts` attempts
        // in a row that made no progress; an attempt whose plan committed
        // anything starts the count again (`progressMade`).
        let mut retries = Retries::new(if batch { 2 } else { 5 });
        let mut plan_lines = Vec::new();
        let mut last: Option<Attempt> = None;
        let mut status = EvalStatus::Complete;
        // An attempt that committed nothing leaves the state as it was, so
        // the next attempt would compute the same plan: reuse it.
        let mut reuse = false;
        let mut last_applied: Option<super::plan::ApplyResult> = None;
        for attempt in 1..=MAX_PLAN_ATTEMPTS_GUARD {
            // The attempt stays in `last` (it is large: moving it in and out
            // each attempt cost more than reusing it).
            let reused = reuse && last.is_some();
            let result = match &mut last {
                Some(previous) if reused => {
                    retries.repeated += 1;
                    previous
                }
                _ => {
                    let result = self.compute_generic(now, eval, job);
                    if eval.wait_until.is_zero() && !result.plan().is_noop() {
                        self.create_followups(now, eval, &result.followups, out);
                    }
                    match &result.plan {
                        // The first attempt's lines are the eval's first:
                        // taken as they are, not copied.
                        AttemptPlan::Built(plan) if attempt == 1 && plan_lines.is_empty() => {
                            plan_lines = plan.describe(self);
                        }
                        AttemptPlan::Built(plan) => {
                            let lines = plan.describe(self);
                            push_attempt_lines(&mut self.texts, &mut plan_lines, attempt, lines);
                        }
                        AttemptPlan::Kept(kept, _) => {
                            push_attempt_lines(
                                &mut self.texts,
                                &mut plan_lines,
                                attempt,
                                kept.lines.iter().cloned(),
                            );
                        }
                    }
                    last.insert(result)
                }
            };
            let applied = match last_applied.take() {
                // The same plan against the same state: the applier would
                // reject the same nodes again and write nothing, so only its
                // index is taken again (and the rejections, summarised below,
                // are not traced twice).
                Some(previous) if reused => {
                    self.bump_index();
                    previous
                }
                _ => match &mut result.plan {
                    AttemptPlan::Built(plan) => self.apply_plan(now, &eval.id, plan, out),
                    AttemptPlan::Kept(kept, refused) => {
                        self.apply_refused(&kept.plan, refused, out)
                    }
                },
            };
            // An attempt-1 plan refused whole is kept for the job's next
            // eval (the lines so far are its description).
            if attempt == 1
                && let Some(kept) =
                    result.keep(&plan_lines, &applied, self.rules.persist_reconnect_mark)
            {
                self.state.reconcile_memo.keep_attempt(&eval.job_id, kept);
            }
            let done = applied.rejected == 0;
            let progress = Retries::progress(&applied, result.plan());
            reuse = !progress && result.followups.is_empty();
            last_applied = Some(applied);
            if done {
                break;
            }
            if retries.failed_after(attempt, progress, &mut plan_lines) {
                status = EvalStatus::Failed;
                if let Some(job) = job {
                    let blocked = self.new_blocked_eval(now, eval, job, "max-plan-attempts");
                    self.insert_eval(now, blocked, None, out);
                }
                break;
            }
        }
        retries.finish(&mut self.texts, &mut plan_lines);
        let attempt = last.unwrap_or(Attempt {
            plan: AttemptPlan::Built(Plan::default()),
            failed: Vec::new(),
            followups: Vec::new(),
            desired_tg_updates: GroupUpdates::new(),
            reasons: AllocReasons::new(),
            memo_holds: false,
            places: false,
        });
        let wait_passed = eval.wait_until.is_zero() || time_tick(eval.wait_until) < now;
        if !attempt.failed.is_empty()
            && status != EvalStatus::Failed
            && (attempt.followups.is_empty() || wait_passed)
        {
            plan_lines.push(failed_line(&attempt.failed));
            if eval.status == EvalStatus::Blocked {
                status = EvalStatus::Blocked;
            } else if let Some(job) = job {
                let blocked = self.new_blocked_eval(now, eval, job, "queued-allocs");
                self.insert_eval(now, blocked, None, out);
            }
        }
        (
            status,
            Processed {
                outcome: EvalOutcome {
                    tick: now,
                    desired_tg_updates: attempt.desired_tg_updates,
                },
                reasons: attempt.reasons,
                plan: plan_lines,
            },
        )
    }

    /// Stores the reconciler's follow-up evals (each attempt does, as Nomad).
    fn create_followups(
        &mut self,
        now: Tick,
        eval: &Evaluation,
        followups: &[Evaluation],
        out: &mut Vec<ServerEffect>,
    ) {
        for followup in followups {
            let mut followup = followup.clone();
            followup.previous_eval = eval.id.clone();
            let index = self.bump_index();
            followup.create_index = index;
            followup.modify_index = index;
            followup.create_time = tick_time(now);
            followup.modify_time = tick_time(now);
            if !self.rules_at_least_1_11() && followup.triggered_by == "alloc-reschedule" {
                followup.triggered_by = "alloc-failure".to_string();
            }
            let wait = (!followup.wait_until.is_zero()).then(|| time_tick(followup.wait_until));
            self.insert_eval(now, followup, wait, out);
        }
    }

    fn rules_at_least_1_11(&self) -> bool {
        // The alloc-reschedule trigger exists since 1.11.0; LastUnknown
        // semantics changed at 1.11.2, the nearest switch we keep.
        self.rules.last_unknown_earliest
    }

    fn new_blocked_eval(
        &mut self,
        now: Tick,
        eval: &Evaluation,
        job: &Job,
        trigger: &str,
    ) -> Evaluation {
        let mut blocked = self.pending_eval(now, job, trigger);
        blocked.priority = eval.priority;
        // Into the pending eval's own buffers (no new allocation for a type
        // no longer than the job's).
        blocked.eval_type.clone_from(&eval.eval_type);
        blocked.status = EvalStatus::Blocked;
        blocked.status_description = "created to place remaining allocations".to_string();
        blocked.previous_eval.clone_from(&eval.id);
        blocked
    }

    /// One attempt: reconcile and build the plan.
    fn compute_generic(&mut self, now: Tick, eval: &Evaluation, job: Option<&Rc<Job>>) -> Attempt {
        let now_time = tick_time(now);
        // The job's alloc list, shared: copied only for a new run.
        let list = self.state.allocs_by_job.get(&eval.job_id).cloned();
        let allocs = list.as_deref().map_or(&[][..], super::AllocIndex::as_slice);
        let keys = list.as_deref().map_or(&[][..], super::AllocIndex::keys);
        let tainted = self.cluster_tainted_nodes(allocs);
        // The update function below ignores the allocs of the job itself.
        let options = ReconcileOptions {
            rules: reconciler_rules(&self.rules, self.version),
            same_job_ignored: true,
            ..ReconcileOptions::default()
        };
        let current = self
            .state
            .deployments
            .values()
            .filter(|d| d.job_id == eval.job_id)
            .max_by_key(|d| d.create_index);
        let job_is_batch = job.is_some_and(|j| j.job_type == JobType::Batch);
        // The job's last run when nothing it read changed (a blocked eval
        // unblocked again), else a new run, kept if it drew no IDs.
        let reads = memo::Reads {
            tainted: &tainted.index,
            options: &options,
            specs: self.state.jobs.get(&eval.job_id).map(|r| &r.specs),
            allocs: list.as_ref(),
        };
        let hit = self.state.reconcile_memo.get(
            &memo::Probe {
                job,
                job_id: &eval.job_id,
                job_is_batch,
                deployment: current,
                deployment_paused: false,
                deployment_failed: false,
                allocs,
                eval_id: &eval.id,
                eval_priority: eval.priority,
                now: now_time,
            },
            &reads,
        );
        // The job's last attempt, built from this reconcile, while the
        // applier refuses all of its plan (see `KeptAttempt`).
        let kept_attempt = hit
            .as_ref()
            .and_then(|hit| hit.attempt.clone())
            .filter(|kept| kept.persist_reconnect_mark == self.rules.persist_reconnect_mark)
            .and_then(|kept| {
                let refused = self.refuses_whole(&kept.plan)?;
                Some((kept, refused))
            });
        #[cfg(not(debug_assertions))]
        if let Some((kept, refused)) = kept_attempt {
            return Attempt::kept(kept, refused);
        }
        let deployment = current.cloned();
        let mut plan = Plan::default();

        // updateNonTerminalAllocsToLost: server-stopped allocs still running
        // on a down or collected node are lost. (The alloc's own fields are
        // checked, through its key, before its node is looked up: few
        // allocs need the lookup.)
        for (alloc, key) in allocs.iter().zip(keys) {
            let down = || match tainted.map.get(&alloc.node_id) {
                Some(None) => true,
                Some(Some(node)) => node.status == NodeStatus::Down,
                None => false,
            };
            if key.stopped_but_live() && down() {
                plan.stop(
                    alloc,
                    "alloc is lost since its node is down",
                    Some(ClientStatus::Lost),
                    "",
                );
            }
        }

        // The reconciler's input, built only for a run (a kept reconcile
        // needs none); it borrows the job's alloc list and the eval's IDs.
        let input = || ClusterInput {
            job: job.cloned(),
            job_id: Cow::Borrowed(&eval.job_id),
            job_is_batch,
            deployment: deployment.clone(),
            deployment_paused: false,
            deployment_failed: false,
            allocs: Cow::Borrowed(allocs),
            keys,
            eval_id: Cow::Borrowed(&eval.id),
            eval_priority: eval.priority,
            tainted_nodes: Rc::clone(&tainted.map),
            now: now_time,
        };
        let seed = self.id_seed;
        let mut counter = self.state.next_id;
        let jobs = &self.state.jobs;
        let update_fn =
            |alloc: &Allocation, job: &Job, group: &crate::model::TaskGroup| -> UpdateType {
                if alloc.job_modify_index() == job.job_modify_index || alloc.terminal_status() {
                    return UpdateType::Ignore;
                }
                changed_job_update(jobs, alloc, job, group)
            };
        let memo = &mut self.state.reconcile_memo;
        let mut kept_reasons = None;
        let (result, memo_holds) = match hit {
            Some(mut hit) => {
                kept_reasons = hit.reasons.take();
                let kept = hit.result();
                #[cfg(debug_assertions)]
                {
                    let mut drawn = 0;
                    let mut no_id = || {
                        drawn += 1;
                        String::new()
                    };
                    let fresh = reconcile_indexed(
                        &input(),
                        &tainted.index,
                        &options,
                        &update_fn,
                        &mut no_id,
                    );
                    assert_eq!(drawn, 0, "a kept reconcile draws IDs");
                    assert_eq!(
                        format!("{fresh:?}"),
                        format!("{kept:?}"),
                        "a kept reconcile differs from a new run"
                    );
                }
                (kept, true)
            }
            None => {
                let mut next_id = || {
                    let id = make_id(seed, counter);
                    counter += 1;
                    id
                };
                let input = input();
                let result = Rc::new(reconcile_indexed(
                    &input,
                    &tainted.index,
                    &options,
                    &update_fn,
                    &mut next_id,
                ));
                let held = counter == self.state.next_id
                    && memo.put(&memo::Probe::of(&input), &reads, &result);
                (result, held)
            }
        };
        self.state.next_id = counter;

        // A kept run's reasons come with it (debug builds check them).
        let reasons = match kept_reasons {
            Some(kept) => {
                debug_assert!(
                    kept == alloc_reasons(&mut self.texts, &result, allocs),
                    "a kept run's reasons differ"
                );
                kept
            }
            None => {
                let reasons = alloc_reasons(&mut self.texts, &result, allocs);
                if memo_holds {
                    memo.keep_reasons(&eval.job_id, &reasons);
                }
                reasons
            }
        };
        let (failed, deployment_id) = self.build_generic_plan(
            now,
            eval,
            job.map(|j| &**j),
            &result,
            deployment.as_ref(),
            &mut plan,
        );
        let _ = deployment_id;
        let followups = result
            .desired_followup_evals
            .values()
            .flatten()
            .cloned()
            .collect();
        let attempt = Attempt {
            plan: AttemptPlan::Built(plan),
            failed,
            followups,
            desired_tg_updates: result
                .desired_tg_updates
                .iter()
                .map(|(group, updates)| (group.clone(), *updates))
                .collect(),
            reasons,
            memo_holds,
            places: !result.place.is_empty() || !result.destructive_update.is_empty(),
        };
        #[cfg(debug_assertions)]
        if let Some((kept, refused)) = kept_attempt {
            self.check_kept_attempt(&attempt, &kept, &refused);
            return Attempt::kept(kept, refused);
        }
        attempt
    }

    /// Debug builds: a kept attempt reused gives what the new `attempt`
    /// gives (the applier's refusals, the plan's description, the reasons
    /// and updates), and the new one would be kept too.
    #[cfg(debug_assertions)]
    fn check_kept_attempt(
        &self,
        attempt: &Attempt,
        kept: &KeptAttempt,
        refused: &[Cow<'static, str>],
    ) {
        let plan = attempt.plan();
        assert!(
            attempt.may_be_kept(),
            "a kept attempt is reused where a new one would not be kept"
        );
        assert_eq!(
            self.refuses_whole(plan).as_deref(),
            Some(refused),
            "a kept plan is refused otherwise than a new one"
        );
        assert_eq!(
            plan.describe(self),
            kept.lines,
            "a kept plan reads otherwise"
        );
        assert_eq!(
            attempt.reasons, kept.reasons,
            "a kept attempt's reasons differ"
        );
        assert!(
            attempt.desired_tg_updates == kept.desired_tg_updates,
            "a kept attempt's updates differ"
        );
    }

    fn build_generic_plan(
        &mut self,
        now: Tick,
        eval: &Evaluation,
        job: Option<&Job>,
        result: &ReconcileResult,
        current: Option<&crate::model::Deployment>,
        plan: &mut Plan,
    ) -> (Vec<String>, String) {
        let now_time = tick_time(now);
        if let Some(deployment) = &result.deployment {
            plan.deployment = Some(deployment.clone());
        }
        plan.deployment_updates = result.deployment_updates.clone();
        for stop in &result.stop {
            plan.stop(
                &stop.alloc,
                stop.status_description,
                stop.client_status.clone(),
                &stop.followup_eval_id,
            );
        }
        for update in result.disconnect_updates.iter() {
            plan.write(update.to_alloc());
        }
        if self.rules.persist_reconnect_mark {
            for update in result.reconnect_updates.iter() {
                plan.write_reconnect(update.clone());
            }
        }
        // An in-place update joins the latest deployment (a new one resets
        // the alloc's health), as `computeJobAllocs` does.
        let latest_deployment = result
            .deployment
            .as_ref()
            .or(current)
            .map_or(String::new(), |d| d.id.clone());
        for alloc in &result.inplace_update {
            if alloc.deployment_id != latest_deployment {
                let mut alloc = (**alloc).clone();
                alloc.deployment_id = latest_deployment.clone();
                alloc.deployment_status = None;
                plan.write(alloc);
            } else {
                plan.write_shared(Rc::clone(alloc));
            }
        }
        for alloc in result.attribute_updates.iter() {
            if result.disconnect_updates.contains(&alloc.id) {
                continue;
            }
            plan.write_shared(Rc::clone(alloc));
        }
        let Some(job) = job else {
            return (Vec::new(), String::new());
        };
        let deployment_id = result
            .deployment
            .as_ref()
            .or(current.filter(|d| d.active() && d.job_version == job.version))
            .map_or(String::new(), |d| d.id.clone());
        // The job's spec and the plan's usage deltas serve placements only
        // (most plans place nothing).
        let places = !result.destructive_update.is_empty() || !result.place.is_empty();
        let spec = if places {
            self.state
                .jobs
                .get(&job.id)
                .and_then(|r| r.spec(job.version).cloned())
        } else {
            None
        };
        let mut usage = Usage::default();
        if places {
            self.seed_usage(plan, &mut usage);
        }
        let mut failed = Vec::new();
        // Taken when the first alloc is placed (most plans place none).
        let mut job_arc: Option<Rc<Job>> = None;
        // Destructive updates: stop the old alloc, place its successor.
        let mut placements: Vec<Placement<'_>> = Vec::new();
        for update in &result.destructive_update {
            plan.stop(&update.stop_alloc, update.stop_status_description, None, "");
            self.unuse(&update.stop_alloc, &mut usage);
            placements.push((
                &update.place_name,
                &update.task_group,
                Some(&update.stop_alloc),
                false,
                false,
                false,
            ));
        }
        for place in &result.place {
            placements.push((
                &place.name,
                &place.task_group,
                place.previous_alloc.as_ref(),
                place.reschedule,
                place.lost,
                place.canary,
            ));
        }
        let mut plan_scores = placement::PlanScores::default();
        for (name, group, previous, reschedule, _lost, canary) in placements {
            let Some((spec, group_spec)) = spec
                .as_deref()
                .and_then(|spec| Some((spec, spec.groups.iter().find(|g| g.name == group)?)))
            else {
                failed.push(name.to_string());
                continue;
            };
            let penalty_node = if reschedule {
                previous.map(|p| p.node_id.as_str())
            } else {
                None
            };
            let group_key = super::group_key(&job.id, group);
            match self.select_node_indexed(
                job,
                spec,
                group_spec,
                &group_key,
                penalty_node,
                &usage,
                plan,
                &mut plan_scores,
            ) {
                Some(Chosen {
                    node,
                    name: node_name,
                    slot,
                    score,
                    preempt,
                }) => {
                    let job_arc = job_arc.get_or_insert_with(|| self.shared_job(job));
                    let mut alloc = Allocation {
                        id: self.new_id(),
                        namespace: job.namespace.clone(),
                        eval_id: eval.id.clone(),
                        name: name.to_string(),
                        node_id: node,
                        node_name,
                        job_id: job.id.clone(),
                        job: Some(Rc::clone(job_arc)),
                        task_group: group.to_string(),
                        desired_status: DesiredStatus::Run,
                        client_status: ClientStatus::Pending,
                        deployment_id: deployment_id.clone(),
                        node_score: Some(score),
                        preempted_allocations: preempt,
                        ..Allocation::default()
                    };
                    if canary {
                        alloc.deployment_status = Some(crate::model::AllocDeploymentStatus {
                            canary: true,
                            ..Default::default()
                        });
                    }
                    if let Some(previous) = previous {
                        alloc.previous_allocation = previous.id.clone();
                        if reschedule {
                            let mut tracker =
                                previous
                                    .reschedule_tracker
                                    .clone()
                                    .unwrap_or(RescheduleTracker {
                                        events: Some(Vec::new()),
                                        last_reschedule: String::new(),
                                    });
                            let mut events = tracker.events.clone().unwrap_or_default();
                            events.push(RescheduleEvent {
                                reschedule_time: now_time,
                                prev_alloc_id: previous.id.clone(),
                                prev_node_id: previous.node_id.clone(),
                                delay: previous.next_delay(),
                            });
                            tracker.events = Some(events);
                            tracker.last_reschedule =
                                crate::model::LAST_RESCHEDULE_SUCCESS.to_string();
                            alloc.reschedule_tracker = Some(tracker);
                        }
                    }
                    for victim in &alloc.preempted_allocations {
                        plan.node_preemptions
                            .entry(alloc.node_id.clone())
                            .or_default()
                            .push((victim.clone(), alloc.id.clone()));
                        if let Some(victim) = self.state.allocs.get(victim).cloned() {
                            self.unuse(&victim, &mut usage);
                        }
                    }
                    // The alloc asks for its group's need (what
                    // `alloc_resources` reads from the same spec).
                    let need = group_need(group_spec);
                    debug_assert_eq!(need, self.alloc_resources(&alloc));
                    let slot = slot.unwrap_or_else(|| self.state.node_slot(&alloc.node_id));
                    debug_assert_eq!(self.state.node_usage.slot(&alloc.node_id), Some(slot));
                    usage.shift(slot, need, group_key, 1);
                    plan.write(alloc);
                }
                None => failed.push(name.to_string()),
            }
        }
        (failed, deployment_id)
    }

    /// The stored job's `Rc` when `job` is that very job (the allocs a
    /// plan places then share it), else a copy.
    fn shared_job(&self, job: &Job) -> Rc<Job> {
        match self.state.jobs.get(&job.id) {
            Some(record) if std::ptr::eq(Rc::as_ptr(&record.job), job) => Rc::clone(&record.job),
            _ => Rc::new(job.clone()),
        }
    }

    /// Usage deltas of the plan's stops.
    fn seed_usage(&mut self, plan: &Plan, usage: &mut Usage) {
        for stop in plan.node_update.values().flatten() {
            if let Some(alloc) = self.state.allocs.get(&stop.alloc_id).cloned() {
                self.unuse(&alloc, usage);
            }
        }
    }

    /// Adds (`sign` 1) or takes away (-1) an alloc's share of its node (in
    /// `slot`, looked up when not given) in the plan's deltas.
    fn shift(&mut self, alloc: &Allocation, slot: Option<u32>, usage: &mut Usage, sign: i64) {
        let need = self.alloc_resources(alloc);
        let slot = slot.unwrap_or_else(|| self.state.node_slot(&alloc.node_id));
        debug_assert_eq!(self.state.node_usage.slot(&alloc.node_id), Some(slot));
        let key = super::group_key(&alloc.job_id, &alloc.task_group);
        usage.shift(slot, need, key, sign);
    }

    /// Adds a placed alloc to the plan's deltas (its node in `slot`, if
    /// the pick knew it).
    fn use_alloc(&mut self, alloc: &Allocation, slot: Option<u32>, usage: &mut Usage) {
        self.shift(alloc, slot, usage, 1);
    }

    fn unuse(&mut self, alloc: &Allocation, usage: &mut Usage) {
        if alloc.terminal_status() {
            return;
        }
        self.shift(alloc, None, usage, -1);
    }

    /// (cpu, mem) used on `node` including the plan so far.
    fn used(&self, node: &str, usage: &Usage) -> (u64, u64) {
        let load = self.node_load(self.state.node_usage.slot(node), usage);
        let (cpu, mem) = load.base.unwrap_or((0, 0));
        let (dc, dm) = load.delta.unwrap_or((0, 0));
        (
            (cpu as i64 + dc).max(0) as u64,
            (mem as i64 + dm).max(0) as u64,
        )
    }

    /// The [`NodeLoad`] of the node in `slot` (none without a slot: the
    /// server has kept nothing for the node).
    fn node_load<'a>(&'a self, slot: Option<u32>, usage: &'a Usage) -> NodeLoad<'a> {
        let Some(slot) = slot else {
            return NodeLoad::default();
        };
        NodeLoad {
            base: self.state.node_usage.get(slot).copied(),
            delta: usage.used.get(&slot).copied(),
            base_groups: self.state.group_counts.get(slot).map(|groups| &**groups),
            delta_groups: usage.collisions.get(&slot),
        }
    }

    /// A node's fit for one alloc of `group` ([`group_fit`], with the
    /// node's load read by its slot).
    #[allow(clippy::too_many_arguments)]
    fn node_fit(
        &self,
        job: &Job,
        group_spec: &crate::scenario::format::GroupSpec,
        group_key: &str,
        slot: Option<u32>,
        record: &super::NodeRecord,
        usage: &Usage,
        penalty: bool,
    ) -> Fit {
        let load = self.node_load(slot, usage);
        group_fit(job, group_spec, group_key, record, load, penalty)
    }

    /// Every node's fit (in node ID order) for one alloc of a group without
    /// the reschedule penalty: [`group_fit`] of each node, with the slot
    /// table (in node ID order too) walked alongside the node table instead
    /// of looked up per node.
    fn all_fits(
        &self,
        job: &Job,
        group_spec: &crate::scenario::format::GroupSpec,
        group_key: &str,
        usage: &Usage,
    ) -> Vec<Fit> {
        let mut slots = self.state.node_usage.slots().peekable();
        let mut fits = Vec::with_capacity(self.state.nodes.len());
        for (id, record) in &self.state.nodes {
            let slot = advance_to(&mut slots, id).copied();
            fits.push(self.node_fit(job, group_spec, group_key, slot, record, usage, false));
        }
        fits
    }

    /// `select_node` for the placements of a plan, through the
    /// [`PlacementIndex`]: a few nodes are scored instead of every node.
    /// Picks the same node: the best score, ties to the lowest node ID
    /// (debug builds check it against scoring every node); preemption (no
    /// node fits) falls back to `select_node`.
    #[allow(clippy::too_many_arguments)]
    fn select_node_indexed(
        &mut self,
        job: &Job,
        spec: &JobSpec,
        group_spec: &crate::scenario::format::GroupSpec,
        group_key: &str,
        penalty_node: Option<&str>,
        usage: &Usage,
        plan: &Plan,
        plan_scores: &mut placement::PlanScores,
    ) -> Option<Chosen> {
        self.sync_placement_index(group_need(group_spec));
        let best =
            self.best_indexed_node(job, group_spec, group_key, penalty_node, usage, plan_scores);
        debug_assert_eq!(
            best,
            self.best_node_by_scan(job, group_spec, group_key, penalty_node, usage),
            "the placement index disagrees with scoring every node"
        );
        match best {
            Some((score, rank)) => {
                let (id, record) = self.state.nodes.get_index(rank)?;
                let slot = self.state.placement.slot(rank);
                Some(Chosen::of(id, slot, record, score as f64 / 1e6))
            }
            None => self.select_node(job, spec, &group_spec.name, None, penalty_node, usage, plan),
        }
    }

    /// The best node for one alloc by scoring every node: (score in
    /// millionths, node rank), ties to the lowest rank (the reference the
    /// placement index is checked against).
    fn best_node_by_scan(
        &self,
        job: &Job,
        group_spec: &crate::scenario::format::GroupSpec,
        group_key: &str,
        penalty_node: Option<&str>,
        usage: &Usage,
    ) -> Option<(i64, usize)> {
        let nodes = &self.state.nodes;
        let mut fits = self.all_fits(job, group_spec, group_key, usage);
        if let Some(id) = penalty_node
            && let Some(rank) = nodes.rank(id)
        {
            let slot = self.state.node_usage.slot(id);
            fits[rank] = self.node_fit(job, group_spec, group_key, slot, &nodes[id], usage, true);
        }
        let mut best: Option<(i64, usize)> = None;
        for (rank, fit) in fits.into_iter().enumerate() {
            placement::consider(&mut best, fit, rank);
        }
        best
    }

    /// Picks a node for one alloc of `group` (with the allocs it preempts,
    /// if it must). `only` restricts to one node (system jobs).
    #[allow(clippy::too_many_arguments)]
    fn select_node(
        &self,
        job: &Job,
        spec: &JobSpec,
        group: &str,
        only: Option<&str>,
        penalty_node: Option<&str>,
        usage: &Usage,
        plan: &Plan,
    ) -> Option<Chosen> {
        let group_spec = spec.groups.iter().find(|g| g.name == group)?;
        let (need_cpu, need_mem) = group_need(group_spec);
        let mut best: Option<(f64, &String, Option<u32>, &super::NodeRecord)> = None;
        let mut feasible_full: Vec<&String> = Vec::new();
        let group_key = super::group_key(&job.id, group);
        // The slot table is in node ID order like the node table: walk it
        // alongside instead of looking each node up.
        let mut slots = self.state.node_usage.slots().peekable();
        for (id, record) in &self.state.nodes {
            let slot = advance_to(&mut slots, id).copied();
            if only.is_some_and(|only| only != id) {
                continue;
            }
            let score = match self.node_fit(
                job,
                group_spec,
                &group_key,
                slot,
                record,
                usage,
                penalty_node == Some(id.as_str()),
            ) {
                Fit::Infeasible => continue,
                Fit::Full => {
                    feasible_full.push(id);
                    continue;
                }
                // Rounded so that the choice never depends on the last bits.
                Fit::Score(micros) => micros as f64 / 1e6,
            };
            if best.as_ref().is_none_or(|(b, _, _, _)| score > *b) {
                best = Some((score, id, slot, record));
            }
        }
        if let Some((score, id, slot, record)) = best {
            return Some(Chosen::of(id, slot, record, score));
        }
        let preemption = match job.job_type {
            JobType::System | JobType::SysBatch => self.config.preempt_system,
            JobType::Batch => self.config.preempt_batch,
            _ => self.config.preempt_service,
        };
        if !preemption {
            return None;
        }
        let planned: BTreeSet<String> = plan
            .node_preemptions
            .values()
            .flatten()
            .map(|(id, _)| id.clone())
            .collect();
        let mut choice: Option<(usize, &String, Vec<String>)> = None;
        for id in feasible_full {
            let record = &self.state.nodes[id];
            let (used_cpu, used_mem) = self.used(id, usage);
            let mut candidates: Vec<Rc<Allocation>> = self
                .node_allocs(id)
                .into_iter()
                .filter(|a| !a.terminal_status() && !planned.contains(&a.id))
                .filter(|a| {
                    a.job
                        .as_ref()
                        .is_some_and(|j| j.priority + 10 <= job.priority)
                })
                .collect();
            crate::cold_sort::sort_by(&mut candidates, |a, b| {
                let pa = a.job.as_ref().map_or(0, |j| j.priority);
                let pb = b.job.as_ref().map_or(0, |j| j.priority);
                pa.cmp(&pb).then_with(|| a.id.cmp(&b.id))
            });
            let (mut cpu, mut mem) = (used_cpu, used_mem);
            let mut victims = Vec::new();
            for victim in candidates {
                if cpu + need_cpu <= record.cpu && mem + need_mem <= record.memory_mb {
                    break;
                }
                let (c, m) = self.alloc_resources(&victim);
                cpu = cpu.saturating_sub(c);
                mem = mem.saturating_sub(m);
                victims.push(victim.id.clone());
            }
            if cpu + need_cpu <= record.cpu
                && mem + need_mem <= record.memory_mb
                && choice.as_ref().is_none_or(|(n, _, _)| victims.len() < *n)
            {
                choice = Some((victims.len(), id, victims));
            }
        }
        choice.map(|(_, id, victims)| Chosen {
            preempt: victims,
            ..Chosen::of(id, None, &self.state.nodes[id], 0.0)
        })
    }

    /// System and sysbatch jobs: the node reconciler, then placements on
    /// the nodes it names. A plan the applier partly refuses is computed
    /// again from the new state, as for service jobs (`retryMax`: 5 attempts
    /// in a row without progress); a failed system eval leaves no blocked
    /// eval (`scheduler_system.go`).
    fn schedule_system(
        &mut self,
        now: Tick,
        eval: &Evaluation,
        job: Option<&Job>,
        out: &mut Vec<ServerEffect>,
    ) -> (EvalStatus, Processed) {
        let stub;
        let job = match job {
            Some(job) => job,
            None => {
                stub = Job {
                    id: eval.job_id.clone(),
                    job_type: JobType::System,
                    stop: true,
                    ..Job::default()
                };
                &stub
            }
        };
        let mut plan_lines = Vec::new();
        let mut status = EvalStatus::Complete;
        let mut retries = Retries::new(5);
        // An attempt that committed nothing leaves the state as it was, so
        // the next attempt would compute the same plan and be refused again.
        let mut last: Option<SystemAttempt> = None;
        for attempt in 1..=MAX_PLAN_ATTEMPTS_GUARD {
            let (done, progress) = if last.is_some() && retries.without_progress > 0 {
                retries.repeated += 1;
                self.bump_index();
                (false, false)
            } else {
                let mut current = self.compute_system(now, eval, job);
                let lines = current.plan.describe(self);
                push_attempt_lines(&mut self.texts, &mut plan_lines, attempt, lines);
                let applied = self.apply_plan(now, &eval.id, &mut current.plan, out);
                let progress = Retries::progress(&applied, &current.plan);
                last = Some(current);
                (applied.rejected == 0, progress)
            };
            if done {
                break;
            }
            if retries.failed_after(attempt, progress, &mut plan_lines) {
                status = EvalStatus::Failed;
                break;
            }
        }
        retries.finish(&mut self.texts, &mut plan_lines);
        let SystemAttempt {
            reasons,
            updates,
            failed,
            ..
        } = last.unwrap_or_default();
        if !failed.is_empty() && status != EvalStatus::Failed {
            plan_lines.push(failed_line(&failed));
            if eval.status == EvalStatus::Blocked {
                status = EvalStatus::Blocked;
            } else {
                let blocked = self.new_blocked_eval(now, eval, job, "queued-allocs");
                self.insert_eval(now, blocked, None, out);
            }
        }
        let desired = job
            .task_groups
            .iter()
            .map(|group| (group.name.clone(), updates))
            .collect();
        (
            status,
            Processed {
                outcome: EvalOutcome {
                    tick: now,
                    desired_tg_updates: desired,
                },
                reasons,
                plan: plan_lines,
            },
        )
    }

    /// One attempt at a system eval: the node reconciler's answer and the
    /// plan it leads to.
    fn compute_system(&mut self, now: Tick, eval: &Evaluation, job: &Job) -> SystemAttempt {
        let now_time = tick_time(now);
        let allocs = self.job_allocs(&eval.job_id);
        let tainted = self.tainted_nodes(&allocs);
        let spec = self
            .state
            .jobs
            .get(&job.id)
            .and_then(|r| r.spec(job.version).cloned());
        let mut ready_nodes = Vec::new();
        let mut not_ready = BTreeSet::new();
        for (id, record) in &self.state.nodes {
            let node = &record.node;
            let in_dc = job
                .datacenters
                .iter()
                .any(|dc| dc == "*" || *dc == node.datacenter);
            if !in_dc {
                continue;
            }
            if node.ready() {
                ready_nodes.push(node.clone());
            } else {
                not_ready.insert(id.clone());
            }
        }
        let live: Vec<Allocation> = allocs
            .iter()
            .filter(|a| !a.terminal_status())
            .map(|a| (**a).clone())
            .collect();
        let terminal = TerminalByNodeByName::from_allocs(
            allocs.iter().filter(|a| a.terminal_status()).map(|a| &**a),
        );
        let deployment = self
            .state
            .deployments
            .values()
            .filter(|d| d.job_id == eval.job_id)
            .max_by_key(|d| d.create_index)
            .cloned();
        let reconciler = NodeReconciler {
            job,
            ready_nodes: &ready_nodes,
            not_ready_nodes: &not_ready,
            tainted_nodes: &tainted,
            live_allocs: &live,
            terminal_allocs: &terminal,
            deployment: deployment.as_ref(),
            now: now_time,
            rules: node_rules(self.version),
        };
        let seed = self.id_seed;
        let mut counter = self.state.next_id;
        let mut next_id = || {
            let id = make_id(seed, counter);
            counter += 1;
            id
        };
        let result = reconciler.compute(&mut next_id);
        self.state.next_id = counter;

        let mut plan = Plan::default();
        let mut reasons = AllocReasonsBuilder::default();
        let mut updates = DesiredUpdates::default();
        let diff = result.flatten();
        for tuple in diff
            .iter()
            .filter(|t| t.set() != crate::reconciler::node::NodeSet::Ignore)
        {
            reasons.push(
                &mut self.texts,
                tuple.alloc_id().unwrap_or(""),
                &tuple.name,
                &format!("{} on {}", tuple.set().as_str(), tuple.node_id),
                tuple.rule.describe(),
            );
        }
        for tuple in &diff.stop {
            if let Some(alloc) = &tuple.alloc {
                plan.stop(alloc, "alloc not needed", None, "");
                updates.stop += 1;
            }
        }
        for tuple in &diff.lost {
            if let Some(alloc) = &tuple.alloc {
                plan.stop(
                    alloc,
                    "alloc is lost since its node is down",
                    Some(ClientStatus::Lost),
                    "",
                );
                updates.stop += 1;
            }
        }
        for tuple in &diff.migrate {
            if let Some(alloc) = &tuple.alloc {
                plan.stop(alloc, "alloc is being migrated", None, "");
                updates.migrate += 1;
            }
        }
        for tuple in &diff.disconnecting {
            if let Some(alloc) = &tuple.alloc {
                plan.write(alloc.clone());
                updates.disconnect += 1;
            }
        }
        for tuple in &diff.reconnecting {
            if let Some(alloc) = &tuple.alloc
                && self.rules.persist_reconnect_mark
            {
                plan.write(alloc.clone());
                updates.reconnect += 1;
            }
        }
        updates.ignore += diff.ignore.len() as u64;
        let mut usage = Usage::default();
        self.seed_usage(&plan, &mut usage);
        let job_arc = self.shared_job(job);
        let mut to_place: Vec<(String, String, String, Option<String>)> = Vec::new();
        for tuple in &diff.update {
            let Some(alloc) = &tuple.alloc else { continue };
            let destructive = spec.as_deref().is_some_and(|spec| {
                self.state
                    .jobs
                    .get(&job.id)
                    .and_then(|r| r.specs.get(&alloc.job_version()))
                    .and_then(|old| old.groups.iter().find(|g| g.name == alloc.task_group))
                    .zip(spec.groups.iter().find(|g| g.name == alloc.task_group))
                    .is_some_and(|(old, new)| super::jobs::tasks_differ(old, new))
            });
            if destructive {
                plan.stop(alloc, "alloc is being updated due to job update", None, "");
                self.unuse(alloc, &mut usage);
                to_place.push((
                    tuple.name.clone(),
                    alloc.task_group.clone(),
                    tuple.node_id.clone(),
                    Some(alloc.id.clone()),
                ));
                updates.destructive_update += 1;
            } else {
                let mut updated = alloc.clone();
                updated.job = Some(Rc::clone(&job_arc));
                plan.write(updated);
                updates.in_place_update += 1;
            }
        }
        for tuple in &diff.place {
            to_place.push((
                tuple.name.clone(),
                tuple.task_group.clone().unwrap_or_default(),
                tuple.node_id.clone(),
                tuple.alloc.as_ref().map(|a| a.id.clone()),
            ));
        }
        let mut failed = Vec::new();
        for (name, group, node, previous) in to_place {
            let Some(spec) = spec.as_deref() else {
                continue;
            };
            match self.select_node(job, spec, &group, Some(&node), None, &usage, &plan) {
                Some(Chosen {
                    node,
                    name: node_name,
                    slot,
                    score,
                    preempt,
                }) => {
                    let id = self.new_id();
                    let alloc = Allocation {
                        id: id.clone(),
                        namespace: job.namespace.clone(),
                        eval_id: eval.id.clone(),
                        name: name.clone(),
                        node_id: node.clone(),
                        node_name,
                        job_id: job.id.clone(),
                        job: Some(Rc::clone(&job_arc)),
                        task_group: group.clone(),
                        desired_status: DesiredStatus::Run,
                        client_status: ClientStatus::Pending,
                        node_score: Some(score),
                        preempted_allocations: preempt.clone(),
                        previous_allocation: previous.unwrap_or_default(),
                        ..Allocation::default()
                    };
                    for victim in &preempt {
                        plan.node_preemptions
                            .entry(node.clone())
                            .or_default()
                            .push((victim.clone(), id.clone()));
                        if let Some(victim) = self.state.allocs.get(victim).cloned() {
                            self.unuse(&victim, &mut usage);
                        }
                        updates.preemptions += 1;
                    }
                    self.use_alloc(&alloc, slot, &mut usage);
                    plan.write(alloc);
                    updates.place += 1;
                }
                None => failed.push(format!("{name} on {node}")),
            }
        }
        SystemAttempt {
            plan,
            reasons: reasons.finish(),
            updates,
            failed,
        }
    }
}

/// Walks a map iterator (sorted by node ID) up to `node`: its value for
/// `node`, if it has one. Called with increasing `node`s, it visits every
/// entry once.
fn advance_to<'a, V: 'a>(
    entries: &mut std::iter::Peekable<impl Iterator<Item = (&'a String, &'a V)>>,
    node: &str,
) -> Option<&'a V> {
    // One comparison per entry passed or found.
    while let Some((key, value)) = entries.peek() {
        match key.as_str().cmp(node) {
            std::cmp::Ordering::Less => {
                entries.next();
            }
            std::cmp::Ordering::Equal => return Some(*value),
            std::cmp::Ordering::Greater => return None,
        }
    }
    None
}

/// Whether a stored node is tainted for the reconciler: down,
/// disconnected or draining.
fn tainted(record: &super::NodeRecord) -> bool {
    matches!(
        record.node.status,
        NodeStatus::Down | NodeStatus::Disconnected
    ) || record.node.draining()
}

/// A node's usage and alloc counts by group, as stored (`base`) and as the
/// plan changed them so far (`delta`); `None` where a table has no entry.
#[derive(Default)]
struct NodeLoad<'a> {
    base: Option<(u64, u64)>,
    delta: Option<(i64, i64)>,
    base_groups: Option<&'a BTreeMap<String, u64>>,
    delta_groups: Option<&'a BTreeMap<String, i64>>,
}

/// The CPU (MHz) and memory (MB) one alloc of the group asks for (Nomad's
/// task defaults when the spec gives none).
pub(super) fn group_need(group_spec: &crate::scenario::format::GroupSpec) -> (u64, u64) {
    (
        group_spec.cpu.unwrap_or(100),
        group_spec.memory_mb.unwrap_or(128),
    )
}

/// One node's fit for one alloc of a group, given its [`NodeLoad`] however
/// the caller found it.
fn group_fit(
    job: &Job,
    group_spec: &crate::scenario::format::GroupSpec,
    group_key: &str,
    record: &super::NodeRecord,
    load: NodeLoad<'_>,
    penalty: bool,
) -> Fit {
    if !node_feasible_for(job, group_spec, &record.node) {
        return Fit::Infeasible;
    }
    let need = group_need(group_spec);
    match binpack(
        record,
        load.base.unwrap_or((0, 0)),
        load.delta.unwrap_or((0, 0)),
        need,
    ) {
        None => Fit::Full,
        Some(binpack) => scored_fit(group_spec, group_key, binpack, &load, penalty),
    }
}

/// [`group_fit`] of a feasible node the group fits, from its [`binpack`]
/// score.
fn scored_fit(
    group_spec: &crate::scenario::format::GroupSpec,
    group_key: &str,
    binpack: f64,
    load: &NodeLoad<'_>,
    penalty: bool,
) -> Fit {
    let count = u64::from(group_spec.count.unwrap_or(1)).max(1);
    let base_count = load
        .base_groups
        .and_then(|groups| groups.get(group_key))
        .copied()
        .unwrap_or(0);
    let delta_count = load
        .delta_groups
        .and_then(|groups| groups.get(group_key))
        .copied()
        .unwrap_or(0);
    let collisions = (base_count as i64 + delta_count).max(0) as u64;
    let score = combined_score(binpack, collisions, count, penalty);
    // The same rounding as `select_node`, kept as an integer: the score is
    // this over 1e6, exactly.
    Fit::Score((score * 1e6).round() as i64)
}

/// Whether a node may run the group at all (ignoring resources): ready,
/// in one of the job's datacenters and its pool, allowed by the group's
/// node list.
fn node_feasible_for(job: &Job, group: &crate::scenario::format::GroupSpec, node: &Node) -> bool {
    if !node.ready() {
        return false;
    }
    let in_dc = job
        .datacenters
        .iter()
        .any(|dc| dc == "*" || *dc == node.datacenter);
    let in_pool =
        job.node_pool.is_empty() || job.node_pool == "all" || job.node_pool == node.node_pool;
    let allowed = group
        .nodes
        .as_ref()
        .is_none_or(|nodes| nodes.contains(&node.id));
    in_dc && in_pool && allowed
}

/// The scheduler's alloc update function for an alloc whose job changed
/// (the common answer, ignore, is taken by the caller, so that the call for
/// most allocs does not set up this body's frame): destructive when the
/// group's tasks differ between the alloc's job version and `job`'s, else
/// in place (a copy carrying the new job).
#[inline(never)]
fn changed_job_update(
    jobs: &BTreeMap<String, super::JobRecord>,
    alloc: &Allocation,
    job: &Job,
    group: &crate::model::TaskGroup,
) -> UpdateType {
    let record = jobs.get(&job.id);
    // The group's spec in one stored version of the job.
    let group_spec = |version: u64| {
        record
            .and_then(|r| r.specs.get(&version))
            .and_then(|spec| spec.groups.iter().find(|g| g.name == group.name))
    };
    let (old, new) = (group_spec(alloc.job_version()), group_spec(job.version));
    let destructive = match (old, new) {
        (Some(old), Some(new)) => super::jobs::tasks_differ(old, new),
        _ => alloc.job_task_group().map(|tg| &tg.tasks) != Some(&group.tasks),
    };
    if destructive {
        return UpdateType::Destructive;
    }
    let mut updated = alloc.clone();
    updated.job = Some(Rc::new(job.clone()));
    UpdateType::InPlace(Rc::new(updated))
}

#[allow(dead_code)]
fn short_id(id: &str) -> &str {
    short(id)
}
