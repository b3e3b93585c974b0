//! Why the reconciler did what it did to each allocation: the set it fell
//! in, the classification rule that put it there, and the decision taken.
//!
//! These are typed, not free text, so the UI and the CLI (`--explain`) can
//! answer "why was this allocation stopped?" and tests can assert on them.

use super::filters::id_prefix;
use crate::model::{Allocation, ClientStatus, Time};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The set an alloc fell in (Nomad's `allocCategory`), plus the states an
/// alloc can be in before classification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllocCategory {
    /// Left out before classification (server-terminal, old batch, job
    /// stopped, group removed, cancelled canary).
    Filtered,
    /// On a working node, nothing wrong.
    Untainted,
    /// Must move (drain or migrate transition).
    Migrate,
    /// Its node is gone or down: stop and replace.
    Lost,
    /// Its node just disconnected: mark unknown.
    Disconnecting,
    /// Came back from a disconnect: pick between it and its replacement.
    Reconnecting,
    /// Nothing to do, only counted.
    Ignore,
    /// Unknown for longer than lost_after.
    Expiring,
}

impl AllocCategory {
    /// Nomad's name for the set.
    pub fn as_str(self) -> &'static str {
        match self {
            AllocCategory::Filtered => "filtered",
            AllocCategory::Untainted => "untainted",
            AllocCategory::Migrate => "migrate",
            AllocCategory::Lost => "lost",
            AllocCategory::Disconnecting => "disconnecting",
            AllocCategory::Reconnecting => "reconnecting",
            AllocCategory::Ignore => "ignore",
            AllocCategory::Expiring => "expiring",
        }
    }
}

/// The rule that placed an alloc in its set: the steps before
/// classification, then the rows of Nomad's `classificationRules` in order
/// (first match wins; see `docs/nomad-semantics.md` §3.2 for the numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassifyRule {
    /// The job is stopped or purged: every alloc stops.
    JobStopped,
    /// The group was removed or scaled to zero.
    GroupRemoved,
    /// Server-terminal alloc dropped from the working set.
    ServerTerminal,
    /// Terminal batch alloc of an older job version.
    OldTerminalBatch,
    /// Canary of an older or failed deployment.
    UnneededCanary,
    /// 1: needs to reconnect, desired run, client failed.
    FailedReconnect,
    /// 2: server-terminal drained batch alloc (`MigrateDisablePlacement`).
    DrainedBatch,
    /// 3: terminal and server-terminal.
    TerminalServerStopped,
    /// 4: terminal canary with a migrate transition.
    TerminalMigratingCanary,
    /// 5: terminal, not reconnecting.
    Terminal,
    /// 6: unknown past its lost_after.
    Expired,
    /// 7: failed reconnect the server already stopped.
    FailedReconnectStopped,
    /// 8: node disconnected, alloc already unknown.
    DisconnectedUnknown,
    /// 9: node disconnected, alloc pending.
    DisconnectedPending,
    /// 10: node disconnected, group has no lost_after.
    DisconnectedNoLostAfter,
    /// 11: node disconnected.
    Disconnected,
    /// 12: migrate transition (drain).
    MigrateTransition,
    /// 13: node fine and the alloc needs to reconnect.
    NeedsReconnect,
    /// 13 under an older rule: unknown alloc on a fine node (≤ 1.11.1).
    UnknownOnFineNode,
    /// 14: node fine.
    NodeFine,
    /// 15: node garbage-collected.
    NodeGone,
    /// 16: node down, `replace = false`, alloc unknown.
    DownNoReplaceUnknown,
    /// 17: node down, `replace = false`, alloc running.
    DownNoReplaceRunning,
    /// 18: node down.
    NodeDown,
    /// No rule matched (e.g. a draining node that is not ready).
    Default,
}

impl ClassifyRule {
    /// A short human description.
    pub fn describe(self) -> &'static str {
        match self {
            ClassifyRule::JobStopped => "job stopped",
            ClassifyRule::GroupRemoved => "group removed or count 0",
            ClassifyRule::ServerTerminal => "server-terminal",
            ClassifyRule::OldTerminalBatch => "terminal batch alloc of older job",
            ClassifyRule::UnneededCanary => "canary of old/failed deployment",
            ClassifyRule::FailedReconnect => "reconnected as failed",
            ClassifyRule::DrainedBatch => "drained batch alloc",
            ClassifyRule::TerminalServerStopped => "terminal, server-stopped",
            ClassifyRule::TerminalMigratingCanary => "terminal canary, migrate",
            ClassifyRule::Terminal => "terminal",
            ClassifyRule::Expired => "unknown past lost_after",
            ClassifyRule::FailedReconnectStopped => "failed reconnect, stopped",
            ClassifyRule::DisconnectedUnknown => "node disconnected, alloc unknown",
            ClassifyRule::DisconnectedPending => "node disconnected, alloc pending",
            ClassifyRule::DisconnectedNoLostAfter => "node disconnected, no lost_after",
            ClassifyRule::Disconnected => "node disconnected",
            ClassifyRule::MigrateTransition => "migrate transition",
            ClassifyRule::NeedsReconnect => "node back, needs reconnect",
            ClassifyRule::UnknownOnFineNode => "unknown on ready node (old rule)",
            ClassifyRule::NodeFine => "node ready",
            ClassifyRule::NodeGone => "node garbage-collected",
            ClassifyRule::DownNoReplaceUnknown => "node down, replace=false, unknown",
            ClassifyRule::DownNoReplaceRunning => "node down, replace=false, running",
            ClassifyRule::NodeDown => "node down",
            ClassifyRule::Default => "no rule matched",
        }
    }
}

/// Why an alloc is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The job was stopped or purged.
    JobStopped,
    /// The group was removed or scaled to zero.
    GroupRemoved,
    /// More allocs than `count` (scale down, duplicate name, promoted canary's twin).
    NotNeeded,
    /// Its node is down or gone.
    Lost,
    /// It failed and a replacement is placed.
    Rescheduled,
    /// It reconnected as failed.
    FailedReconnect,
    /// It reconnected but is no longer wanted (job update, transition, desired stop).
    ReconnectNotNeeded,
    /// It reconnected, and the picker kept its replacement.
    ReplacementKept,
    /// It is a replacement, and the picker kept the reconnected original.
    OriginalReconnected,
    /// A canary of an older or failed deployment.
    CanaryCancelled,
    /// It is being migrated (drain).
    Migrating,
    /// A destructive update replaces it.
    Updating,
}

impl StopReason {
    /// A short human description.
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::JobStopped => "job stopped",
            StopReason::GroupRemoved => "group removed",
            StopReason::NotNeeded => "not needed (over count)",
            StopReason::Lost => "lost",
            StopReason::Rescheduled => "failed, rescheduled",
            StopReason::FailedReconnect => "reconnected as failed",
            StopReason::ReconnectNotNeeded => "reconnected, not needed",
            StopReason::ReplacementKept => "reconnected, replacement kept",
            StopReason::OriginalReconnected => "original reconnected",
            StopReason::CanaryCancelled => "canary cancelled",
            StopReason::Migrating => "migrating",
            StopReason::Updating => "destructive update",
        }
    }
}

/// What the reconciler decided for an alloc.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Decision {
    /// Left as it is (counted toward the group).
    Keep,
    /// Counted as ignored.
    Ignore,
    /// Not considered (already replaced, terminal, filtered).
    Skip,
    /// Updated in place.
    InPlaceUpdate,
    /// Replaced by a destructive update.
    DestructiveUpdate,
    /// Needs a destructive update, held back (deployment paused, failed,
    /// canarying, or over `max_parallel`).
    UpdateDeferred,
    /// Stopped.
    Stop {
        /// Why.
        reason: StopReason,
        /// Whether a replacement is placed for it in this run.
        replaced: bool,
    },
    /// Stopped as lost only after stop_on_client_after; a follow-up eval waits.
    LostLater {
        /// The follow-up eval.
        eval_id: String,
        /// When it runs.
        wait_until: Time,
    },
    /// Stopped and placed elsewhere.
    Migrate,
    /// Reconnected; a reconnect update is written.
    Reconnect,
    /// Reconnecting and kept, no update written (still unknown, or the
    /// version does not persist reconnects).
    ReconnectKept,
    /// Marked unknown; a follow-up eval will declare it lost after lost_after.
    Disconnect {
        /// Whether a replacement is placed now.
        replaced: bool,
    },
    /// Failed; a replacement is placed now.
    RescheduleNow,
    /// Failed; a follow-up eval will replace it.
    RescheduleLater {
        /// The follow-up eval.
        eval_id: String,
        /// When it runs.
        wait_until: Time,
    },
}

impl Decision {
    /// A short human description.
    pub fn describe(&self) -> String {
        match self {
            Decision::Keep => "keep".into(),
            Decision::Ignore => "ignore".into(),
            Decision::Skip => "skip".into(),
            Decision::InPlaceUpdate => "update in place".into(),
            Decision::DestructiveUpdate => "destructive update".into(),
            Decision::UpdateDeferred => "update deferred".into(),
            Decision::Stop { reason, replaced } => {
                format!(
                    "stop: {}{}",
                    reason.describe(),
                    if *replaced { " (replaced)" } else { "" }
                )
            }
            Decision::LostLater { wait_until, .. } => format!("lost, stop after {wait_until}"),
            Decision::Migrate => "migrate".into(),
            Decision::Reconnect => "reconnect".into(),
            Decision::ReconnectKept => "reconnecting, kept".into(),
            Decision::Disconnect { replaced } => {
                format!(
                    "mark unknown{}",
                    if *replaced { ", replace now" } else { "" }
                )
            }
            Decision::RescheduleNow => "reschedule now".into(),
            Decision::RescheduleLater { wait_until, .. } => format!("reschedule at {wait_until}"),
        }
    }

    fn is_stop(&self) -> bool {
        matches!(self, Decision::Stop { .. } | Decision::Migrate)
    }
}

/// The reason record of one alloc: the alloc as the reconciler classified
/// it (shared, not copied), the set, the rule and the decision.
///
/// Serialised as `{alloc_id, name, node_id, client_status, task_group, set,
/// rule, decision}`.
#[derive(Debug, Clone)]
pub struct AllocDecision {
    /// The alloc as the reconciler saw it when it classified it.
    pub alloc: Arc<Allocation>,
    /// The set it fell in.
    pub set: AllocCategory,
    /// The rule that put it there.
    pub rule: ClassifyRule,
    /// What was decided.
    pub decision: Decision,
}

impl AllocDecision {
    /// A record of `alloc`.
    pub fn new(
        alloc: Arc<Allocation>,
        set: AllocCategory,
        rule: ClassifyRule,
        decision: Decision,
    ) -> Self {
        AllocDecision {
            alloc,
            set,
            rule,
            decision,
        }
    }
    /// Alloc ID.
    pub fn alloc_id(&self) -> &str {
        &self.alloc.id
    }
    /// Alloc name.
    pub fn name(&self) -> &str {
        &self.alloc.name
    }
    /// Node ID.
    pub fn node_id(&self) -> &str {
        &self.alloc.node_id
    }
    /// Client status as the reconciler saw it.
    pub fn client_status(&self) -> &ClientStatus {
        &self.alloc.client_status
    }
    /// Task group.
    pub fn task_group(&self) -> &str {
        &self.alloc.task_group
    }
}

impl PartialEq for AllocDecision {
    /// Equal when the serialised forms are.
    fn eq(&self, other: &Self) -> bool {
        self.alloc_id() == other.alloc_id()
            && self.name() == other.name()
            && self.node_id() == other.node_id()
            && self.client_status() == other.client_status()
            && self.task_group() == other.task_group()
            && self.set == other.set
            && self.rule == other.rule
            && self.decision == other.decision
    }
}

impl Eq for AllocDecision {}

/// The serialised form of an [`AllocDecision`].
#[derive(Serialize)]
struct AllocDecisionOut<'a> {
    alloc_id: &'a str,
    name: &'a str,
    node_id: &'a str,
    client_status: &'a ClientStatus,
    task_group: &'a str,
    set: AllocCategory,
    rule: ClassifyRule,
    decision: &'a Decision,
}

/// The deserialised form of an [`AllocDecision`].
#[derive(Deserialize)]
struct AllocDecisionIn {
    alloc_id: String,
    name: String,
    node_id: String,
    client_status: ClientStatus,
    task_group: String,
    set: AllocCategory,
    rule: ClassifyRule,
    decision: Decision,
}

impl Serialize for AllocDecision {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        AllocDecisionOut {
            alloc_id: self.alloc_id(),
            name: self.name(),
            node_id: self.node_id(),
            client_status: self.client_status(),
            task_group: self.task_group(),
            set: self.set,
            rule: self.rule,
            decision: &self.decision,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for AllocDecision {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = AllocDecisionIn::deserialize(d)?;
        let alloc = Allocation {
            id: r.alloc_id,
            name: r.name,
            node_id: r.node_id,
            client_status: r.client_status,
            task_group: r.task_group,
            ..Default::default()
        };
        Ok(AllocDecision::new(
            Arc::new(alloc),
            r.set,
            r.rule,
            r.decision,
        ))
    }
}

/// Whether two strings are the same string in memory (callers mostly pass
/// the ID of the very alloc the record holds), which makes them equal
/// without comparing bytes.
fn same_ptr(a: &str, b: &str) -> bool {
    std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len()
}

/// Collects [`AllocDecision`]s during a run, keyed by alloc ID.
///
/// Records live in a vector sorted by alloc ID. The reconciler walks its
/// sets in ID order, so each lookup first tries the record after the last
/// one touched before falling back to a binary search. Records share the
/// allocs; nothing is copied per alloc.
#[derive(Debug, Clone, Default)]
pub struct Explain {
    /// Sorted by alloc ID; slots made by [`Explain::prepare`] stay hidden
    /// until classified.
    records: Vec<AllocDecision>,
    /// Per record: whether it was classified.
    live: Vec<bool>,
    /// Per record: the first 16 bytes of the alloc ID as a number, compared
    /// before the full ID when searching.
    prefixes: Vec<u128>,
    /// The record touched last.
    hint: usize,
}

impl Explain {
    /// Reserves a slot for each alloc, so that later calls find their record
    /// without inserting. Allocs already sorted by ID (the usual case) are
    /// taken in one pass.
    pub fn prepare<'a>(&mut self, allocs: impl IntoIterator<Item = &'a Arc<Allocation>>) {
        let allocs = allocs.into_iter();
        self.records.reserve(allocs.size_hint().0);
        self.live.reserve(allocs.size_hint().0);
        for alloc in allocs {
            let p = id_prefix(&alloc.id);
            let after_last = match (self.records.last(), self.prefixes.last()) {
                (Some(last), Some(lp)) => {
                    *lp < p || (*lp == p && last.alloc.id.as_str() < alloc.id.as_str())
                }
                _ => true,
            };
            let at = if after_last {
                self.records.len()
            } else {
                match self.position(&alloc.id) {
                    Ok(_) => continue,
                    Err(i) => i,
                }
            };
            let r = AllocDecision::new(
                Arc::clone(alloc),
                AllocCategory::Filtered,
                ClassifyRule::Default,
                Decision::Skip,
            );
            if at == self.records.len() {
                self.records.push(r);
                self.live.push(false);
                self.prefixes.push(p);
            } else {
                self.records.insert(at, r);
                self.live.insert(at, false);
                self.prefixes.insert(at, p);
            }
        }
    }

    /// [`Explain::prepare`] for allocs already sorted by (ID prefix, ID),
    /// given with their ID prefixes (see `id_prefix`); of equal IDs the
    /// first gets the slot, as with `prepare`.
    pub fn prepare_sorted(&mut self, sorted: &[(u128, &Arc<Allocation>)]) {
        if !self.records.is_empty() {
            self.prepare(sorted.iter().map(|(_, a)| *a));
            return;
        }
        self.records.reserve(sorted.len());
        self.live.reserve(sorted.len());
        self.prefixes.reserve(sorted.len());
        for (k, (p, alloc)) in sorted.iter().enumerate() {
            if k > 0 && sorted[k - 1].0 == *p && sorted[k - 1].1.id == alloc.id {
                continue;
            }
            self.records.push(AllocDecision::new(
                Arc::clone(alloc),
                AllocCategory::Filtered,
                ClassifyRule::Default,
                Decision::Skip,
            ));
            self.live.push(false);
            self.prefixes.push(*p);
        }
    }

    fn position(&self, id: &str) -> Result<usize, usize> {
        let p = id_prefix(id);
        let (mut lo, mut hi) = (0, self.records.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let ord = self.prefixes[mid]
                .cmp(&p)
                .then_with(|| self.records[mid].alloc.id.as_str().cmp(id));
            match ord {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// The slot of `id`: the hinted record or the next one, else a search.
    fn find(&mut self, id: &str) -> Result<usize, usize> {
        // Walks go forward: try the next record, then the same one; first
        // by address (the caller passes the record's own ID), then by value.
        let near = [self.hint + 1, self.hint];
        for i in near {
            if self
                .records
                .get(i)
                .is_some_and(|r| same_ptr(&r.alloc.id, id))
            {
                self.hint = i;
                return Ok(i);
            }
        }
        for i in near {
            if self.records.get(i).is_some_and(|r| r.alloc.id == id) {
                self.hint = i;
                return Ok(i);
            }
        }
        let found = self.position(id);
        if let Ok(i) = found {
            self.hint = i;
        }
        found
    }

    /// The slot of `alloc`: the hinted record or the next one when it holds
    /// this very alloc (compared by pointer, without reading the alloc),
    /// else [`Explain::find`] by ID.
    fn find_alloc(&mut self, alloc: &Arc<Allocation>) -> Result<usize, usize> {
        for i in [self.hint + 1, self.hint] {
            if self
                .records
                .get(i)
                .is_some_and(|r| Arc::ptr_eq(&r.alloc, alloc))
            {
                self.hint = i;
                return Ok(i);
            }
        }
        self.find(&alloc.id)
    }

    /// Records (or re-records) the set and rule of an alloc.
    pub fn classify(
        &mut self,
        alloc: &Arc<Allocation>,
        set: AllocCategory,
        rule: ClassifyRule,
        default: Decision,
    ) {
        match self.find_alloc(alloc) {
            Ok(i) => {
                let r = &mut self.records[i];
                if !Arc::ptr_eq(&r.alloc, alloc) {
                    r.alloc = Arc::clone(alloc);
                }
                r.set = set;
                r.rule = rule;
                r.decision = default;
                self.live[i] = true;
            }
            Err(i) => {
                self.records
                    .insert(i, AllocDecision::new(Arc::clone(alloc), set, rule, default));
                self.live.insert(i, true);
                self.prefixes.insert(i, id_prefix(&alloc.id));
                self.hint = i;
            }
        }
    }

    /// The live record of an alloc, for changing it.
    fn live_mut(&mut self, alloc_id: &str) -> Option<&mut AllocDecision> {
        match self.find(alloc_id) {
            Ok(i) if self.live[i] => Some(&mut self.records[i]),
            _ => None,
        }
    }

    /// Records a decision. A stop is final: later non-stop decisions do not
    /// replace it.
    pub fn decide(&mut self, alloc_id: &str, decision: Decision) {
        if let Some(r) = self.live_mut(alloc_id)
            && (decision.is_stop() || !r.decision.is_stop())
        {
            r.decision = decision;
        }
    }

    /// [`Explain::decide`] for an alloc the caller holds: its record is
    /// found by pointer when the walk is in ID order.
    pub fn decide_alloc(&mut self, alloc: &Arc<Allocation>, decision: Decision) {
        if let Ok(i) = self.find_alloc(alloc)
            && self.live[i]
        {
            let r = &mut self.records[i];
            if decision.is_stop() || !r.decision.is_stop() {
                r.decision = decision;
            }
        }
    }

    /// Marks a stopped alloc as replaced by a placement of this run.
    pub fn mark_replaced(&mut self, alloc_id: &str) {
        if let Some(r) = self.live_mut(alloc_id) {
            match &mut r.decision {
                Decision::Stop { replaced, .. } | Decision::Disconnect { replaced } => {
                    *replaced = true
                }
                _ => {}
            }
        }
    }

    /// The current decision of an alloc.
    pub fn get(&self, alloc_id: &str) -> Option<&AllocDecision> {
        match self.position(alloc_id) {
            Ok(i) if self.live[i] => Some(&self.records[i]),
            _ => None,
        }
    }

    /// All records in alloc ID order.
    pub fn into_vec(self) -> Vec<AllocDecision> {
        if self.live.iter().all(|l| *l) {
            return self.records;
        }
        self.records
            .into_iter()
            .zip(self.live)
            .filter_map(|(r, live)| live.then_some(r))
            .collect()
    }
}
