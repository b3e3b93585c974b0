//! The trace: a structured account of everything that happened in a run,
//! one entry per thing, and its text form with one fixed-column line per
//! entry ([`trace_text`]), which is what the golden tests compare and what
//! the UI shows in its log.

use super::net::CallId;
use super::queue::Tick;
use crate::model::eval::DesiredUpdates;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One thing that happened, at a tick, seen from an actor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEntry {
    /// Script step that produced it (0-based index in the action log).
    pub step: usize,
    /// When it happened.
    pub tick: Tick,
    /// What happened.
    pub event: TraceEvent,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceEvent {
    /// A script action was applied.
    Action {
        /// The action as one line.
        text: String,
    },
    /// A client sent a call.
    CallSent {
        /// Sender.
        node: String,
        /// Call number.
        call: CallId,
        /// RPC name, e.g. `Node.UpdateStatus`.
        rpc: String,
        /// Short description of the arguments.
        detail: String,
        /// Whether the link holds it.
        held: bool,
    },
    /// A call could not be sent or was lost; the client sees an error.
    CallFailed {
        /// Sender.
        node: String,
        /// Call number.
        call: CallId,
        /// RPC name.
        rpc: String,
        /// Why.
        reason: String,
    },
    /// The user held, released, delayed, reordered or dropped a call.
    CallControl {
        /// Sender.
        node: String,
        /// Call number.
        call: CallId,
        /// What was done.
        what: String,
    },
    /// The leader handled a call.
    CallHandled {
        /// Sender.
        node: String,
        /// Call number.
        call: CallId,
        /// RPC name.
        rpc: String,
        /// Whether the server accepted it.
        accepted: bool,
        /// Outcome in words (the refusal reason when refused).
        detail: String,
    },
    /// A reply reached the client.
    Reply {
        /// Receiver.
        node: String,
        /// Call number.
        call: CallId,
        /// RPC name.
        rpc: String,
        /// Outcome in words.
        detail: String,
    },
    /// The server reset a node's heartbeat timer.
    HeartbeatReset {
        /// Node.
        node: String,
        /// The TTL told to the client, in ticks.
        ttl: Tick,
        /// When the server timer fires.
        deadline: Tick,
    },
    /// A node's heartbeat timer fired.
    HeartbeatMissed {
        /// Node.
        node: String,
        /// The status the heartbeater asks for.
        requested: String,
        /// Why (which allocs may wait).
        reason: String,
    },
    /// A node changed status.
    NodeStatus {
        /// Node.
        node: String,
        /// Old status.
        from: String,
        /// New status.
        to: String,
        /// Why.
        reason: String,
    },
    /// A node's drain or eligibility changed.
    NodeFlags {
        /// Node.
        node: String,
        /// What changed.
        detail: String,
    },
    /// A job was registered, updated or stopped.
    Job {
        /// Job ID.
        job: String,
        /// Version after the change.
        version: u64,
        /// What happened.
        detail: String,
    },
    /// An eval was created.
    EvalCreated {
        /// Eval ID.
        eval: String,
        /// Job ID.
        job: String,
        /// Trigger.
        trigger: String,
        /// Node for node-update evals.
        node: String,
        /// Delay, if any.
        wait_until: Option<Tick>,
        /// Status at creation (pending or blocked).
        status: String,
    },
    /// An eval changed state in the broker (ready, blocked, unblocked, cancelled).
    EvalState {
        /// Eval ID.
        eval: String,
        /// New state.
        state: String,
        /// Why.
        reason: String,
    },
    /// The scheduler processed an eval.
    EvalProcessed {
        /// Eval ID.
        eval: String,
        /// Job ID.
        job: String,
        /// Trigger.
        trigger: String,
        /// The reconciler's result per group.
        desired_tg_updates: GroupUpdates,
        /// Per alloc: the set the reconciler put it in and why.
        reasons: AllocReasons,
        /// The plan in words (boxed: no spare capacity, and a smaller entry).
        plan: Box<[String]>,
        /// Status after processing.
        status: String,
    },
    /// The plan applier rejected a node's part of a plan.
    PlanRejected {
        /// Node.
        node: String,
        /// Why.
        reason: String,
    },
    /// An allocation changed on the server.
    AllocChanged {
        /// Alloc ID.
        alloc: String,
        /// Alloc name.
        name: String,
        /// Node.
        node: String,
        /// What changed.
        detail: String,
    },
    /// Something happened on a client (alloc runner, watcher, loops).
    Client {
        /// Node.
        node: String,
        /// What happened.
        detail: String,
    },
    /// A link went up or down, or its hold flag changed.
    Link {
        /// Node.
        node: String,
        /// What changed.
        detail: String,
    },
    /// An assertion was checked.
    Assertion {
        /// Whether it held.
        ok: bool,
        /// What was checked, and the actual value when it failed.
        detail: String,
    },
    /// An invariant checker found a violation.
    Violation {
        /// What is wrong.
        detail: String,
    },
    /// The leader handled an operator's call (a script's deployment action).
    Operator {
        /// RPC name, e.g. `Deployment.Promote`.
        rpc: String,
        /// Whether the server accepted it.
        accepted: bool,
        /// Outcome in words (Nomad's error text when refused).
        detail: String,
    },
}

/// The `DesiredTGUpdates` of one eval: per group, its counters, sorted by
/// group name. A plan has one entry per group (usually one), so a sorted
/// list holds it in a few dozen bytes where a `BTreeMap` node took over a
/// kilobyte (the history keeps one per processed eval). It serializes,
/// prints and iterates as the `BTreeMap<String, DesiredUpdates>` it stands for.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct GroupUpdates {
    /// (group, counters), sorted by group, groups unique; `None` when there
    /// are none. Behind a thin pointer so that `EvalProcessed` stays below
    /// the largest trace event (the size of every trace entry).
    #[allow(clippy::box_collection)]
    groups: Option<Box<Vec<(String, DesiredUpdates)>>>,
}

impl GroupUpdates {
    /// No groups.
    pub fn new() -> Self {
        Self::default()
    }

    /// The (group, counters) list.
    fn groups(&self) -> &[(String, DesiredUpdates)] {
        self.groups.as_deref().map_or(&[], Vec::as_slice)
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.groups().len()
    }

    /// Whether there are no groups.
    pub fn is_empty(&self) -> bool {
        self.groups().is_empty()
    }

    /// The counters of `group`.
    pub fn get(&self, group: &str) -> Option<&DesiredUpdates> {
        let groups = self.groups();
        groups
            .binary_search_by(|(name, _)| name.as_str().cmp(group))
            .ok()
            .map(|index| &groups[index].1)
    }

    /// (group, counters) in group order.
    pub fn iter(&self) -> GroupUpdatesIter<'_> {
        self.groups().iter().map(group_pair)
    }

    /// The same counters as a `BTreeMap`.
    pub fn to_map(&self) -> BTreeMap<String, DesiredUpdates> {
        self.groups().iter().cloned().collect()
    }
}

/// A group's entry as a pair of references.
fn group_pair(entry: &(String, DesiredUpdates)) -> (&String, &DesiredUpdates) {
    (&entry.0, &entry.1)
}

/// The iterator of [`GroupUpdates`].
pub type GroupUpdatesIter<'a> = std::iter::Map<
    std::slice::Iter<'a, (String, DesiredUpdates)>,
    fn(&'a (String, DesiredUpdates)) -> (&'a String, &'a DesiredUpdates),
>;

impl<'a> IntoIterator for &'a GroupUpdates {
    type Item = (&'a String, &'a DesiredUpdates);
    type IntoIter = GroupUpdatesIter<'a>;

    fn into_iter(self) -> GroupUpdatesIter<'a> {
        self.iter()
    }
}

impl FromIterator<(String, DesiredUpdates)> for GroupUpdates {
    fn from_iter<I: IntoIterator<Item = (String, DesiredUpdates)>>(groups: I) -> Self {
        // Sorted, the last value of a repeated group winning, as a BTreeMap.
        let map: BTreeMap<String, DesiredUpdates> = groups.into_iter().collect();
        map.into()
    }
}

impl From<BTreeMap<String, DesiredUpdates>> for GroupUpdates {
    fn from(map: BTreeMap<String, DesiredUpdates>) -> Self {
        let groups: Vec<(String, DesiredUpdates)> = map.into_iter().collect();
        GroupUpdates {
            groups: (!groups.is_empty()).then(|| Box::new(groups)),
        }
    }
}

impl std::ops::Index<&str> for GroupUpdates {
    type Output = DesiredUpdates;

    fn index(&self, group: &str) -> &DesiredUpdates {
        self.get(group).expect("no such group")
    }
}

impl std::fmt::Debug for GroupUpdates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for GroupUpdates {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for GroupUpdates {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(BTreeMap::<String, DesiredUpdates>::deserialize(deserializer)?.into())
    }
}

/// One alloc's set in a reconciler run, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocReason {
    /// Alloc ID.
    pub alloc: String,
    /// Alloc name.
    pub name: String,
    /// Set or decision (untainted, lost, disconnecting, stop, ...).
    pub set: String,
    /// Why, in words.
    pub reason: String,
}

/// One of [`AllocReasons`], borrowed from the packed texts: it prints,
/// compares and serializes as the [`AllocReason`] it stands for, without
/// rebuilding four `String`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename = "AllocReason")]
pub struct AllocReasonRef<'a> {
    /// Alloc ID.
    pub alloc: &'a str,
    /// Alloc name.
    pub name: &'a str,
    /// Set or decision.
    pub set: &'a str,
    /// Why, in words.
    pub reason: &'a str,
}

impl AllocReasonRef<'_> {
    /// The owned reason.
    pub fn to_owned(self) -> AllocReason {
        AllocReason {
            alloc: self.alloc.to_string(),
            name: self.name.to_string(),
            set: self.set.to_string(),
            reason: self.reason.to_string(),
        }
    }
}

/// The reasons of one processed eval ([`AllocReason`]s), packed: their
/// texts in one buffer (a set or reason text that repeats within the eval
/// is stored once), behind one pointer that is null when there are none.
/// The history keeps one per processed eval, a reason per alloc the
/// reconciler did not simply keep, where four `String`s each took about
/// four times the room. It serializes, prints and compares as the
/// `Vec<AllocReason>` it stands for; [`AllocReasons::iter`] yields
/// borrowed [`AllocReasonRef`]s.
#[derive(Clone, Default)]
pub struct AllocReasons {
    packed: Option<Box<PackedReasons>>,
}

/// The texts and spans of [`AllocReasons`].
#[derive(Clone)]
struct PackedReasons {
    /// Every distinct text, one after another.
    text: Box<str>,
    /// Per reason: (start, end) in `text` of its alloc, name, set and reason.
    spans: Box<[[(u32, u32); 4]]>,
}

/// Set and reason texts already in the buffer that a new one may reuse:
/// how many of the latest distinct ones are looked at.
const REUSE_WINDOW: usize = 16;

impl AllocReasons {
    /// No reasons.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of reasons.
    pub fn len(&self) -> usize {
        self.packed.as_ref().map_or(0, |packed| packed.spans.len())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The reason at `index`, borrowed.
    pub fn get(&self, index: usize) -> Option<AllocReasonRef<'_>> {
        let packed = self.packed.as_ref()?;
        let spans = packed.spans.get(index)?;
        let field = |(start, end): (u32, u32)| &packed.text[start as usize..end as usize];
        Some(AllocReasonRef {
            alloc: field(spans[0]),
            name: field(spans[1]),
            set: field(spans[2]),
            reason: field(spans[3]),
        })
    }

    /// The reasons in order, borrowed.
    pub fn iter(&self) -> AllocReasonsIter<'_> {
        AllocReasonsIter {
            reasons: self,
            next: 0,
        }
    }

    /// The same reasons as a list.
    pub fn to_vec(&self) -> Vec<AllocReason> {
        self.iter().map(AllocReasonRef::to_owned).collect()
    }
}

/// The iterator of [`AllocReasons`]: borrowed reasons, in order.
#[derive(Clone)]
pub struct AllocReasonsIter<'a> {
    reasons: &'a AllocReasons,
    next: usize,
}

impl<'a> Iterator for AllocReasonsIter<'a> {
    type Item = AllocReasonRef<'a>;

    fn next(&mut self) -> Option<AllocReasonRef<'a>> {
        let reason = self.reasons.get(self.next)?;
        self.next += 1;
        Some(reason)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.reasons.len().saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for AllocReasonsIter<'_> {}

impl<'a> IntoIterator for &'a AllocReasons {
    type Item = AllocReasonRef<'a>;
    type IntoIter = AllocReasonsIter<'a>;

    fn into_iter(self) -> AllocReasonsIter<'a> {
        self.iter()
    }
}

impl<'a> FromIterator<&'a AllocReason> for AllocReasons {
    fn from_iter<I: IntoIterator<Item = &'a AllocReason>>(reasons: I) -> Self {
        let mut text = String::new();
        let mut spans = Vec::new();
        // Distinct set and reason texts so far, latest last.
        let mut shared: Vec<(u32, u32)> = Vec::new();
        let mut push = |text: &mut String, part: &str, reuse: bool| -> (u32, u32) {
            if reuse
                && let Some(span) = shared
                    .iter()
                    .rev()
                    .take(REUSE_WINDOW)
                    .find(|(start, end)| &text[*start as usize..*end as usize] == part)
            {
                return *span;
            }
            let start = text.len();
            text.push_str(part);
            // A step's texts stay far below 4 GiB.
            let span = (
                u32::try_from(start).unwrap_or(u32::MAX),
                u32::try_from(text.len()).unwrap_or(u32::MAX),
            );
            if reuse {
                shared.push(span);
            }
            span
        };
        for reason in reasons {
            spans.push([
                push(&mut text, &reason.alloc, false),
                push(&mut text, &reason.name, false),
                push(&mut text, &reason.set, true),
                push(&mut text, &reason.reason, true),
            ]);
        }
        if spans.is_empty() {
            return AllocReasons::default();
        }
        AllocReasons {
            packed: Some(Box::new(PackedReasons {
                text: text.into_boxed_str(),
                spans: spans.into_boxed_slice(),
            })),
        }
    }
}

impl FromIterator<AllocReason> for AllocReasons {
    fn from_iter<I: IntoIterator<Item = AllocReason>>(reasons: I) -> Self {
        let reasons: Vec<AllocReason> = reasons.into_iter().collect();
        reasons.iter().collect()
    }
}

impl From<Vec<AllocReason>> for AllocReasons {
    fn from(reasons: Vec<AllocReason>) -> Self {
        reasons.iter().collect()
    }
}

impl PartialEq for AllocReasons {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for AllocReasons {}

impl std::fmt::Debug for AllocReasons {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.to_vec()).finish()
    }
}

impl Serialize for AllocReasons {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for AllocReasons {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Vec::<AllocReason>::deserialize(deserializer)?.into())
    }
}

/// The first 8 characters of an ID, as Nomad's UI shows them.
pub fn short(id: &str) -> &str {
    let end = id
        .char_indices()
        .nth(8)
        .map_or(id.len(), |(index, _)| index);
    &id[..end]
}

fn fmt_tick(tick: Tick) -> String {
    format!("{}.{:03}", tick / 1000, tick % 1000)
}

impl TraceEntry {
    /// The entry as one fixed-column line: tick, actor, kind, detail.
    pub fn line(&self) -> String {
        let (actor, kind, detail) = self.event.columns();
        format!(
            "{:>4} {:>10} {:<14} {:<18} {}",
            self.step,
            fmt_tick(self.tick),
            actor,
            kind,
            detail
        )
        .trim_end()
        .to_string()
    }
}

impl TraceEvent {
    /// (actor, kind, detail) columns of the text form.
    pub fn columns(&self) -> (String, &'static str, String) {
        match self {
            TraceEvent::Action { text } => ("user".into(), "action", text.clone()),
            TraceEvent::CallSent {
                node,
                call,
                rpc,
                detail,
                held,
            } => (
                node.clone(),
                "call-sent",
                format!(
                    "#{call} {rpc}{}{}",
                    spaced(detail),
                    if *held { " [held]" } else { "" }
                ),
            ),
            TraceEvent::CallFailed {
                node,
                call,
                rpc,
                reason,
            } => (
                node.clone(),
                "call-failed",
                format!("#{call} {rpc}: {reason}"),
            ),
            TraceEvent::CallControl { node, call, what } => (
                "net".into(),
                "call-control",
                format!("{node} #{call} {what}"),
            ),
            TraceEvent::CallHandled {
                node,
                call,
                rpc,
                accepted,
                detail,
            } => (
                "server".into(),
                call_outcome(*accepted),
                format!("#{call} {rpc} from {node}{}", colon(detail)),
            ),
            TraceEvent::Reply {
                node,
                call,
                rpc,
                detail,
            } => (
                node.clone(),
                "reply",
                format!("#{call} {rpc}{}", colon(detail)),
            ),
            TraceEvent::HeartbeatReset {
                node,
                ttl,
                deadline,
            } => (
                "server".into(),
                "ttl-reset",
                format!(
                    "{node} ttl={} expires@{}",
                    fmt_tick(*ttl),
                    fmt_tick(*deadline)
                ),
            ),
            TraceEvent::HeartbeatMissed {
                node,
                requested,
                reason,
            } => (
                "server".into(),
                "heartbeat-missed",
                format!("{node} -> {requested} ({reason})"),
            ),
            TraceEvent::NodeStatus {
                node,
                from,
                to,
                reason,
            } => (
                "server".into(),
                "node-status",
                format!("{node} {from} -> {to}{}", paren(reason)),
            ),
            TraceEvent::NodeFlags { node, detail } => {
                ("server".into(), "node-flags", format!("{node} {detail}"))
            }
            TraceEvent::Job {
                job,
                version,
                detail,
            } => ("server".into(), "job", format!("{job} v{version} {detail}")),
            TraceEvent::EvalCreated {
                eval,
                job,
                trigger,
                node,
                wait_until,
                status,
            } => {
                let mut text = format!("{} {trigger} job={job}", short(eval));
                if !node.is_empty() {
                    let _ = write!(text, " node={node}");
                }
                if let Some(wait) = wait_until {
                    let _ = write!(text, " wait_until={}", fmt_tick(*wait));
                }
                if status != "pending" {
                    let _ = write!(text, " [{status}]");
                }
                ("broker".into(), "eval-created", text)
            }
            TraceEvent::EvalState {
                eval,
                state,
                reason,
            } => (
                "broker".into(),
                "eval-state",
                format!("{} {state}{}", short(eval), paren(reason)),
            ),
            TraceEvent::EvalProcessed {
                eval,
                job,
                trigger,
                desired_tg_updates,
                reasons,
                plan,
                status,
            } => {
                let mut text = format!("{} {trigger} job={job} -> {status}", short(eval));
                for (group, updates) in desired_tg_updates {
                    let _ = write!(text, " {group}{{{}}}", fmt_updates(updates));
                }
                for reason in reasons {
                    let _ = write!(
                        text,
                        " | {}({}) {}",
                        reason.name,
                        short(reason.alloc),
                        reason.set
                    );
                }
                for item in plan.iter() {
                    let _ = write!(text, " | plan: {item}");
                }
                ("sched".into(), "eval-processed", text)
            }
            TraceEvent::PlanRejected { node, reason } => (
                "server".into(),
                "plan-rejected",
                format!("{node}: {reason}"),
            ),
            TraceEvent::AllocChanged {
                alloc,
                name,
                node,
                detail,
            } => (
                "server".into(),
                "alloc",
                format!("{name} {} on {node}: {detail}", short(alloc)),
            ),
            TraceEvent::Client { node, detail } => (node.clone(), "client", detail.clone()),
            TraceEvent::Link { node, detail } => ("net".into(), "link", format!("{node} {detail}")),
            TraceEvent::Assertion { ok, detail } => (
                "check".into(),
                if *ok { "assert-ok" } else { "assert-FAILED" },
                detail.clone(),
            ),
            TraceEvent::Violation { detail } => ("check".into(), "INVARIANT", detail.clone()),
            TraceEvent::Operator {
                rpc,
                accepted,
                detail,
            } => (
                "server".into(),
                call_outcome(*accepted),
                format!("{rpc} from operator{}", colon(detail)),
            ),
        }
    }
}

/// The trace kind of a handled call: a client's or the operator's.
fn call_outcome(accepted: bool) -> &'static str {
    if accepted {
        "call-accepted"
    } else {
        "call-refused"
    }
}

/// Non-zero counters of a group's `DesiredTGUpdates`, e.g. `place=1 stop=1`.
pub fn fmt_updates(updates: &DesiredUpdates) -> String {
    let pairs = [
        ("ignore", updates.ignore),
        ("place", updates.place),
        ("migrate", updates.migrate),
        ("stop", updates.stop),
        ("inplace", updates.in_place_update),
        ("destructive", updates.destructive_update),
        ("canary", updates.canary),
        ("preempt", updates.preemptions),
        ("disconnect", updates.disconnect),
        ("reconnect", updates.reconnect),
        ("resched_now", updates.reschedule_now),
        ("resched_later", updates.reschedule_later),
    ];
    let parts: Vec<String> = pairs
        .iter()
        .filter(|(_, count)| *count > 0)
        .map(|(name, count)| format!("{name}={count}"))
        .collect();
    parts.join(" ")
}

fn spaced(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(" {text}")
    }
}

fn colon(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(": {text}")
    }
}

fn paren(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(" ({text})")
    }
}

/// The text trace: one fixed-column line per entry, each ending in `\n`.
///
/// Columns: step, tick in seconds, actor, kind, detail. This is the form the
/// golden tests snapshot and the UI's log shows; it depends on nothing but
/// the entries, so native and WebAssembly builds print the same bytes.
pub fn trace_text(entries: &[TraceEntry]) -> String {
    let mut text = String::new();
    for entry in entries {
        text.push_str(&entry.line());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::{AllocReason, AllocReasons, TraceEntry};

    fn reason(alloc: &str, name: &str, set: &str, why: &str) -> AllocReason {
        AllocReason {
            alloc: alloc.into(),
            name: name.into(),
            set: set.into(),
            reason: why.into(),
        }
    }

    /// Packed reasons give back what went in, in order, and serialize,
    /// print and compare as the list they stand for.
    #[test]
    fn packed_reasons_read_back_as_the_list() {
        let list = vec![
            reason("a1-uuid", "web.web[0]", "lost -> stop", "node down"),
            reason("a2-uuid", "web.web[1]", "lost -> stop", "node down"),
            reason("", "", "", ""),
            reason("a3-uuid", "web.web[2]", "untainted -> migrate", "node down"),
        ];
        let packed = AllocReasons::from(list.clone());
        assert_eq!(packed.len(), 4);
        assert_eq!(packed.to_vec(), list);
        assert_eq!(packed.get(3).map(|r| r.to_owned()), Some(list[3].clone()));
        assert_eq!(packed.get(4), None);
        assert_eq!(format!("{packed:?}"), format!("{list:?}"));
        let json = serde_json::to_string(&packed).expect("serialize");
        assert_eq!(json, serde_json::to_string(&list).expect("serialize"));
        let back: AllocReasons = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, packed);
        assert_ne!(back, AllocReasons::from(list[..3].to_vec()));
        let empty = AllocReasons::new();
        assert!(empty.is_empty());
        assert_eq!(serde_json::to_string(&empty).expect("serialize"), "[]");
        assert_eq!(AllocReasons::from(Vec::new()), empty);
    }

    /// The history keeps every entry: the common entry stays small (on
    /// 64-bit targets; WebAssembly's are smaller still).
    #[test]
    fn a_trace_entry_takes_at_most_152_bytes() {
        let size = std::mem::size_of::<TraceEntry>();
        assert!(size <= 152, "{size} bytes");
    }
}
