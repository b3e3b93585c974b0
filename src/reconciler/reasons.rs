//! Why the reconciler did what it did to each allocation: the set it fell
//! in, the classification rule that put it there, and the decision taken.
//!
//! These are typed, not free text, so the UI and the CLI (`--explain`) can
//! answer "why was this allocation stopped?" and tests can assert on them.

use crate::model::{Allocation, ClientStatus, Time};
use serde::{Deserialize, Serialize};
use std::rc::Rc;

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
        let mut text = String::new();
        self.describe_to(&mut text);
        text
    }

    /// [`Decision::describe`], appended to `out`.
    pub fn describe_to(&self, out: &mut String) {
        let text = match self {
            Decision::Keep => "keep",
            Decision::Ignore => "ignore",
            Decision::Skip => "skip",
            Decision::InPlaceUpdate => "update in place",
            Decision::DestructiveUpdate => "destructive update",
            Decision::UpdateDeferred => "update deferred",
            Decision::Stop { reason, replaced } => {
                out.push_str("stop: ");
                out.push_str(reason.describe());
                if *replaced { " (replaced)" } else { "" }
            }
            Decision::LostLater { wait_until, .. } => {
                out.push_str("lost, stop after ");
                out.push_str(&wait_until.to_rfc3339());
                ""
            }
            Decision::Migrate => "migrate",
            Decision::Reconnect => "reconnect",
            Decision::ReconnectKept => "reconnecting, kept",
            Decision::Disconnect { replaced } => {
                out.push_str("mark unknown");
                if *replaced { ", replace now" } else { "" }
            }
            Decision::RescheduleNow => "reschedule now",
            Decision::RescheduleLater { wait_until, .. } => {
                out.push_str("reschedule at ");
                out.push_str(&wait_until.to_rfc3339());
                ""
            }
        };
        out.push_str(text);
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
    pub alloc: Rc<Allocation>,
    /// The set it fell in.
    pub set: AllocCategory,
    /// The rule that put it there.
    pub rule: ClassifyRule,
    /// What was decided.
    pub decision: Decision,
}

/// The accessors [`AllocDecision`] and [`DecisionRef`] share: the fields of
/// their `alloc` a reader of the decisions asks for.
macro_rules! alloc_accessors {
    () => {
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
    };
}

impl AllocDecision {
    /// A record of `alloc`.
    pub fn new(
        alloc: Rc<Allocation>,
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
    alloc_accessors!();
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
            Rc::new(alloc),
            r.set,
            r.rule,
            r.decision,
        ))
    }
}

/// A [`Decision`] as [`Explain`] keeps it during a run: the decisions
/// without data inline, the others as an index into `Explain::full`.
#[derive(Debug, Clone, Copy)]
enum Compact {
    Keep,
    Ignore,
    Skip,
    InPlaceUpdate,
    DestructiveUpdate,
    UpdateDeferred,
    Stop { reason: StopReason, replaced: bool },
    Migrate,
    Reconnect,
    ReconnectKept,
    Disconnect { replaced: bool },
    RescheduleNow,
    Full(u32),
}

impl Compact {
    #[inline]
    fn is_stop(self) -> bool {
        matches!(self, Compact::Stop { .. } | Compact::Migrate)
    }
}

/// The set, rule and decision of one alloc during a run.
#[derive(Debug, Clone, Copy)]
struct Record {
    set: AllocCategory,
    rule: ClassifyRule,
    /// Whether it was classified (else it stays out of the result).
    live: bool,
    decision: Compact,
}

impl Record {
    /// The record of an alloc not classified (yet).
    const HIDDEN: Record = Record {
        set: AllocCategory::Filtered,
        rule: ClassifyRule::Default,
        live: false,
        decision: Compact::Skip,
    };
}

/// The reason records of a run (the result's
/// [`decisions`](crate::reconciler::cluster::ReconcileResult::decisions)):
/// one per alloc ID, in ID order, addressed during the run by its slot
/// (the record's index, which the caller keeps per alloc). A record names
/// its alloc by position in the run's input allocs
/// ([`ClusterInput::allocs`](crate::reconciler::cluster::ClusterInput::allocs)),
/// not by a shared pointer, so a run writes no reference count per alloc
/// and the result drops without touching the allocs: read the records
/// with [`Decisions::iter`] (or [`Decisions::to_vec`]) against that input.
#[derive(Debug, Clone, Default)]
pub struct Decisions {
    /// Per slot: the input position of the alloc as classified; empty when
    /// the slot is the input position.
    pos: Vec<u32>,
    /// Per slot: its record.
    records: Vec<Record>,
    /// The decisions with data (eval IDs), referred to by [`Compact::Full`].
    full: Vec<Decision>,
}

impl Decisions {
    /// A hidden record for each of `slots` alloc IDs; `pos` holds each
    /// slot's input position (empty: not known yet, see
    /// [`Decisions::set_positions`]).
    pub(crate) fn new(slots: usize, pos: Vec<u32>) -> Self {
        debug_assert!(pos.is_empty() || pos.len() == slots);
        Decisions {
            pos,
            records: vec![Record::HIDDEN; slots],
            full: Vec::new(),
        }
    }

    /// A record for each of `slots` alloc IDs, one per input position:
    /// classified in `set` by `rule` and kept, but for the slots `hidden`
    /// (ascending), which are hidden as in [`Decisions::new`]. A run whose
    /// most allocs are classified and kept alike starts from these and
    /// records only the others.
    pub(crate) fn kept(
        slots: usize,
        set: AllocCategory,
        rule: ClassifyRule,
        hidden: &[u32],
    ) -> Self {
        let mut d = Decisions::new(0, Vec::new());
        d.records = vec![
            Record {
                set,
                rule,
                live: true,
                decision: Compact::Keep,
            };
            slots
        ];
        for slot in hidden {
            d.records[*slot as usize] = Record::HIDDEN;
        }
        d
    }

    /// Sets each slot's input position when [`Decisions::new`] had none
    /// (empty: the slot is the input position).
    pub(crate) fn set_positions(&mut self, pos: Vec<u32>) {
        if self.pos.is_empty() {
            debug_assert!(pos.is_empty() || pos.len() == self.records.len());
            self.pos = pos;
        }
    }

    #[inline(always)]
    fn keep(&mut self, d: Decision) -> Compact {
        match d {
            Decision::Keep => Compact::Keep,
            Decision::Ignore => Compact::Ignore,
            Decision::Skip => Compact::Skip,
            Decision::InPlaceUpdate => Compact::InPlaceUpdate,
            Decision::DestructiveUpdate => Compact::DestructiveUpdate,
            Decision::UpdateDeferred => Compact::UpdateDeferred,
            Decision::Stop { reason, replaced } => Compact::Stop { reason, replaced },
            Decision::Migrate => Compact::Migrate,
            Decision::Reconnect => Compact::Reconnect,
            Decision::ReconnectKept => Compact::ReconnectKept,
            Decision::Disconnect { replaced } => Compact::Disconnect { replaced },
            Decision::RescheduleNow => Compact::RescheduleNow,
            d @ (Decision::LostLater { .. } | Decision::RescheduleLater { .. }) => {
                self.keep_full(d)
            }
        }
    }

    #[cold]
    fn keep_full(&mut self, d: Decision) -> Compact {
        self.full.push(d);
        Compact::Full(self.full.len() as u32 - 1)
    }

    fn expand(&self, k: Compact) -> Decision {
        match k {
            Compact::Full(i) => self.full[i as usize].clone(),
            k => expand_plain(k),
        }
    }

    /// Records (or re-records) the set and rule of the alloc of `slot`,
    /// which is the input alloc at `input_pos` (of allocs sharing an ID,
    /// the one classified last is the record's).
    #[inline(always)]
    pub(crate) fn classify(
        &mut self,
        slot: usize,
        input_pos: u32,
        set: AllocCategory,
        rule: ClassifyRule,
        default: Decision,
    ) {
        if let Some(p) = self.pos.get_mut(slot) {
            *p = input_pos;
        }
        let decision = self.keep(default);
        self.records[slot] = Record {
            set,
            rule,
            live: true,
            decision,
        };
    }

    /// Records a decision. A stop is final: later non-stop decisions do not
    /// replace it.
    #[inline(always)]
    pub(crate) fn decide(&mut self, slot: usize, decision: Decision) {
        let r = self.records[slot];
        if r.live && (decision.is_stop() || !r.decision.is_stop()) {
            self.records[slot].decision = self.keep(decision);
        }
    }

    /// Marks a stopped alloc as replaced by a placement of this run.
    #[inline]
    pub(crate) fn mark_replaced(&mut self, slot: usize) {
        let r = &mut self.records[slot];
        if r.live {
            match &mut r.decision {
                Compact::Stop { replaced, .. } | Compact::Disconnect { replaced } => {
                    *replaced = true
                }
                _ => {}
            }
        }
    }

    /// The current decision of the alloc of `slot`.
    pub(crate) fn decision(&self, slot: usize) -> Option<Decision> {
        let r = self.records[slot];
        r.live.then(|| self.expand(r.decision))
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.records.iter().filter(|r| r.live).count()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        !self.records.iter().any(|r| r.live)
    }

    /// The records in alloc ID order, each with its alloc resolved in
    /// `allocs`, which must be the run's input allocs
    /// ([`ClusterInput::allocs`](crate::reconciler::cluster::ClusterInput::allocs)).
    ///
    /// # Panics
    /// When `allocs` is shorter than that input.
    pub fn iter<'a>(
        &'a self,
        allocs: &'a [Rc<Allocation>],
    ) -> impl Iterator<Item = DecisionRef<'a>> + 'a {
        self.iter_where(allocs, |_| true)
    }

    /// [`Decisions::iter`] without the records whose decision leaves the
    /// alloc as it is (keep, skip, ignore): most of a run's records, which
    /// this skips without resolving them.
    pub fn iter_changes<'a>(
        &'a self,
        allocs: &'a [Rc<Allocation>],
    ) -> impl Iterator<Item = DecisionRef<'a>> + 'a {
        self.iter_where(allocs, |d| {
            !matches!(d, Compact::Keep | Compact::Skip | Compact::Ignore)
        })
    }

    /// The live records whose compact decision passes `wanted`, resolved.
    fn iter_where<'a>(
        &'a self,
        allocs: &'a [Rc<Allocation>],
        wanted: fn(Compact) -> bool,
    ) -> impl Iterator<Item = DecisionRef<'a>> + 'a {
        self.records
            .iter()
            .enumerate()
            .filter(move |(_, r)| r.live && wanted(r.decision))
            .map(move |(slot, r)| {
                let at = self.pos.get(slot).map_or(slot, |p| *p as usize);
                DecisionRef {
                    alloc: &allocs[at],
                    set: r.set,
                    rule: r.rule,
                    decision: self.expand(r.decision),
                }
            })
    }

    /// The records as owned [`AllocDecision`]s (see [`Decisions::iter`]).
    pub fn to_vec(&self, allocs: &[Rc<Allocation>]) -> Vec<AllocDecision> {
        self.iter(allocs).map(DecisionRef::into_owned).collect()
    }
}

/// One reason record of a run, its alloc resolved in the run's input (see
/// [`Decisions::iter`]).
#[derive(Debug, Clone)]
pub struct DecisionRef<'a> {
    /// The alloc as the reconciler saw it when it classified it.
    pub alloc: &'a Rc<Allocation>,
    /// The set it fell in.
    pub set: AllocCategory,
    /// The rule that put it there.
    pub rule: ClassifyRule,
    /// What was decided.
    pub decision: Decision,
}

impl DecisionRef<'_> {
    alloc_accessors!();
    /// The record as an owned [`AllocDecision`] (sharing the alloc).
    pub fn into_owned(self) -> AllocDecision {
        AllocDecision::new(Rc::clone(self.alloc), self.set, self.rule, self.decision)
    }
}

/// The [`Decision`] of a [`Compact`] that carries no data (`Full` reads as skip).
fn expand_plain(k: Compact) -> Decision {
    match k {
        Compact::Keep => Decision::Keep,
        Compact::Ignore => Decision::Ignore,
        Compact::Skip | Compact::Full(_) => Decision::Skip,
        Compact::InPlaceUpdate => Decision::InPlaceUpdate,
        Compact::DestructiveUpdate => Decision::DestructiveUpdate,
        Compact::UpdateDeferred => Decision::UpdateDeferred,
        Compact::Stop { reason, replaced } => Decision::Stop { reason, replaced },
        Compact::Migrate => Decision::Migrate,
        Compact::Reconnect => Decision::Reconnect,
        Compact::ReconnectKept => Decision::ReconnectKept,
        Compact::Disconnect { replaced } => Decision::Disconnect { replaced },
        Compact::RescheduleNow => Decision::RescheduleNow,
    }
}
