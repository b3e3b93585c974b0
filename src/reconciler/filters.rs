//! Filters over alloc sets: classification into untainted / migrate / lost /
//! disconnecting / reconnecting / ignore / expiring, reschedule eligibility,
//! and the stop_on_client_after and lost_after delays. Follows Nomad's
//! `scheduler/reconciler/filters.go` at HEAD, with the rules that changed
//! between versions taken from [`ReconcilerRules`].

use super::alloc_set::AllocSet;
use super::reasons::{AllocCategory, ClassifyRule};
use super::rules::{
    DisconnectingReplacement, ReconcilerRules, ReconnectMarker, UnknownOnUntaintedNode,
};
use crate::model::{
    Allocation, ClientStatus, Deployment, DesiredStatus, Job, JobType, Node, NodeStatus, Time,
};
use crate::model::{Duration, ReconcileStrategy};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Reschedules due within this window of `now` happen now (Nomad's
/// `rescheduleWindowSize`, against clock drift between servers).
pub const RESCHEDULE_WINDOW: Duration = Duration::from_secs(1);

/// Follow-up evals batch allocs whose times fall within this window of the
/// batch's first (Nomad's `batchedFailedAllocWindowSize`).
pub const BATCHED_FAILED_ALLOC_WINDOW: Duration = Duration::from_secs(5);

/// The time of a run and the ID of the eval it serves: the two inputs that
/// differ between two evals of a job nothing else changed for. It notes how
/// the run reads them, so that the run can say for which other times and
/// evals its result holds ([`Validity`]): a time compared only with a
/// threshold ([`EvalClock::reached`]) narrows the window of times that give
/// the same answer; the eval's ID compared with an alloc's follow-up eval
/// ([`EvalClock::is_eval`]) holds for any eval that is none of those allocs'
/// follow-up evals, while it matches none; any other read (the time itself,
/// [`EvalClock::now`]) ties the result to this time and eval. Copying the
/// time into an update is not a read (see
/// [`ReconcileResult::retime`](super::cluster::ReconcileResult::retime)).
#[derive(Debug)]
pub struct EvalClock<'a> {
    now: Time,
    eval_id: &'a str,
    /// The times every threshold read so far answers the same for.
    window: Cell<Validity>,
    /// Whether the time was read otherwise, or the eval's ID matched.
    tied: Cell<bool>,
}

/// The times `from <= t < until` for which a run's result holds (see
/// [`EvalClock`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validity {
    /// The first time it holds.
    pub from: Time,
    /// The first time after `from` it no longer holds.
    pub until: Time,
}

impl Validity {
    /// Every time.
    pub const ALWAYS: Validity = Validity {
        from: Time::ZERO,
        until: Time(i64::MAX),
    };

    /// Whether it holds at `t`.
    pub fn contains(&self, t: Time) -> bool {
        self.from <= t && t < self.until
    }
}

impl<'a> EvalClock<'a> {
    /// The clock of a run at `now` for the eval `eval_id`.
    pub fn new(now: Time, eval_id: &'a str) -> Self {
        EvalClock {
            now,
            eval_id,
            window: Cell::new(Validity::ALWAYS),
            tied: Cell::new(false),
        }
    }

    /// The time (ties the run to it).
    pub fn now(&self) -> Time {
        self.tied.set(true);
        self.now
    }

    /// Whether the time is `t` or later (narrows the window to the times
    /// on the same side of `t`).
    pub fn reached(&self, t: Time) -> bool {
        let mut window = self.window.get();
        let reached = t <= self.now;
        if reached {
            window.from = window.from.max(t);
        } else {
            window.until = window.until.min(t);
        }
        self.window.set(window);
        reached
    }

    /// Whether `id` is not the run's eval: [`EvalClock::is_eval`]'s
    /// negation without tying the run to the eval, for a caller that asks
    /// `is_eval` where a match matters.
    pub fn is_other_eval(&self, id: &str) -> bool {
        id != self.eval_id
    }

    /// Whether `id` (an input alloc's follow-up eval) is the eval's ID (a
    /// match ties the run to this eval).
    pub fn is_eval(&self, id: &str) -> bool {
        let matched = id == self.eval_id;
        if matched {
            self.tied.set(true);
        }
        matched
    }

    /// The times the run's result holds for (with another eval too, while
    /// that eval is no input alloc's follow-up eval); `None` when the run
    /// is tied to its time and eval.
    pub fn validity(&self) -> Option<Validity> {
        (!self.tied.get()).then(|| self.window.get())
    }
}

/// What the classification and reschedule filters read besides the allocs.
#[derive(Debug, Clone, Copy)]
pub struct FilterContext<'a> {
    /// Tainted nodes; `None` value = garbage-collected node.
    pub tainted_nodes: &'a BTreeMap<String, Option<Node>>,
    /// The reconciler's clock.
    pub clock: &'a EvalClock<'a>,
    /// Version switches.
    pub rules: &'a ReconcilerRules,
}

impl FilterContext<'_> {
    fn legacy(&self) -> bool {
        self.rules.honour_legacy_disconnect_fields
    }

    /// Whether the alloc needs to reconnect, by the version's marker.
    pub fn needs_to_reconnect(&self, alloc: &Allocation) -> bool {
        match self.rules.reconnect_marker {
            ReconnectMarker::AllocState if self.rules.pr_28445 => alloc.needs_to_reconnect(),
            ReconnectMarker::AllocState => alloc.needs_to_reconnect_with_empty(),
            ReconnectMarker::TaskEvent => alloc.last_reconnect_event().is_some(),
        }
    }

    /// The alloc's last-unknown time, by the version's rule.
    pub fn last_unknown(&self, alloc: &Allocation) -> Time {
        if self.rules.last_unknown_from_run_start {
            alloc.last_unknown()
        } else {
            alloc.last_unknown_latest()
        }
    }

    /// `Expired(now)`.
    pub fn expired(&self, alloc: &Allocation) -> bool {
        // `expiry_since` answers `None` for these before reading the states.
        if alloc.client_status != ClientStatus::Unknown || alloc.job.is_none() {
            return false;
        }
        alloc
            .expiry_since(self.last_unknown(alloc), self.legacy())
            .is_some_and(|expiry| self.clock.reached(expiry))
    }
}

/// The seven sets of [`classify_allocs`] and the rule used for each alloc.
#[derive(Debug, Clone, Default)]
pub struct Classified {
    /// Allocs on working nodes.
    pub untainted: AllocSet,
    /// Allocs to move.
    pub migrate: AllocSet,
    /// Allocs on lost nodes.
    pub lost: AllocSet,
    /// Allocs on nodes that just disconnected.
    pub disconnecting: AllocSet,
    /// Allocs whose node came back.
    pub reconnecting: AllocSet,
    /// Allocs only counted.
    pub ignore: AllocSet,
    /// Unknown allocs past lost_after.
    pub expiring: AllocSet,
    /// Per alloc ID: the set and the rule.
    pub rules: BTreeMap<String, (AllocCategory, ClassifyRule)>,
}

impl Classified {
    fn set_mut(&mut self, cat: AllocCategory) -> &mut AllocSet {
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

/// Classifies one alloc: the first matching row of Nomad's
/// `classificationRules` wins.
pub fn classify_alloc(alloc: &Allocation, cx: &FilterContext<'_>) -> (AllocCategory, ClassifyRule) {
    let tainted = cx.tainted_nodes.get(&alloc.node_id);
    classify_alloc_on(alloc, tainted.map(|n| n.as_ref().map(|n| &n.status)), cx)
}

/// A tainted node as the classification reads it: its status, or `None`
/// when it is gone (garbage-collected).
pub type TaintedNode<'a> = Option<&'a NodeStatus>;

/// The tainted nodes of a run as a lookup table: each node ID's first 16
/// bytes as one number (node IDs are UUIDs, so that almost always
/// decides), found through an open-addressing table keyed by a hash of
/// that number, and the full ID compared only on a prefix hit. It keeps
/// what the classification reads of a node (its status), so it owns its
/// data and one table can serve many runs over the same map (the
/// scheduler keeps one beside its shared tainted-node map:
/// [`reconcile_indexed`](super::cluster::reconcile_indexed)). The table is
/// only probed, never walked, so no result depends on the hash.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaintedIndex {
    /// Per node, in ID order: the ID's prefix (see [`id_prefix`]).
    prefixes: Vec<u128>,
    /// Per node, in ID order: where its ID ends in `ids`, and its status
    /// (`None`: gone).
    nodes: Vec<(u32, Option<NodeStatus>)>,
    /// The node IDs in order, one after the other.
    ids: String,
    /// Per slot: 1 + a node's position in `nodes`, or 0 when empty; at most
    /// a quarter of the slots are used (most lookups are of nodes that are
    /// not tainted, and miss at the first empty slot), and their number is
    /// a power of two.
    slots: Vec<u32>,
    /// Right shift that turns a 64-bit hash into a slot number.
    shift: u32,
}

/// A 64-bit hash of an ID prefix (multiplicative: the high bits, which pick
/// the slot, depend on every bit of the prefix).
fn prefix_hash(p: u128) -> u64 {
    ((p as u64) ^ ((p >> 64) as u64).rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl TaintedIndex {
    /// The table of `nodes`.
    pub fn new(nodes: &BTreeMap<String, Option<Node>>) -> Self {
        let prefixes: Vec<u128> = nodes.keys().map(|id| id_prefix(id)).collect();
        let (mut slots, mut shift) = (Vec::new(), 64);
        if !prefixes.is_empty() {
            let n = (prefixes.len() * 4).next_power_of_two().max(8);
            shift = 64 - n.trailing_zeros();
            slots = vec![0u32; n];
            for (i, p) in prefixes.iter().enumerate() {
                let mut h = (prefix_hash(*p) >> shift) as usize;
                while slots[h] != 0 {
                    h = (h + 1) & (n - 1);
                }
                slots[h] = i as u32 + 1;
            }
        }
        let mut ids = String::with_capacity(nodes.keys().map(String::len).sum());
        let nodes = nodes
            .iter()
            .map(|(id, node)| {
                ids.push_str(id);
                (ids.len() as u32, node.as_ref().map(|n| n.status.clone()))
            })
            .collect();
        TaintedIndex {
            prefixes,
            nodes,
            ids,
            slots,
            shift,
        }
    }

    /// The ID of the node at `i`.
    fn id(&self, i: usize) -> &str {
        let start = i.checked_sub(1).map_or(0, |j| self.nodes[j].0 as usize);
        &self.ids[start..self.nodes[i].0 as usize]
    }

    /// The entry of node `id`, if it is tainted.
    #[inline(always)]
    pub fn get(&self, id: &str) -> Option<TaintedNode<'_>> {
        self.get_keyed(|| id_prefix(id), id)
    }

    /// [`TaintedIndex::get`] with the ID's prefix ([`id_prefix`]) given by
    /// `prefix` (asked only when some node is tainted): `id` itself is read
    /// only when a tainted node has that prefix.
    #[inline(always)]
    pub fn get_keyed(&self, prefix: impl FnOnce() -> u128, id: &str) -> Option<TaintedNode<'_>> {
        if self.slots.is_empty() {
            return None;
        }
        let p = prefix();
        let mask = self.slots.len() - 1;
        let mut h = (prefix_hash(p) >> self.shift) as usize;
        loop {
            let i = self.slots[h].checked_sub(1)? as usize;
            if self.prefixes[i] == p && self.id(i) == id {
                return Some(self.nodes[i].1.as_ref());
            }
            h = (h + 1) & mask;
        }
    }

    /// The ID prefixes ([`id_prefix`]) of the nodes whose entries differ
    /// between this table and `other` (tainted in one only, or with another
    /// status), ascending, each once: a node not among them has the same
    /// entry in both. Of nodes sharing a prefix, one that differs names it.
    pub(crate) fn changed_prefixes(&self, other: &TaintedIndex) -> Vec<u128> {
        let (a, b) = (&self.prefixes, &other.prefixes);
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        // A merge of the two lists (in ID order, so by prefix).
        while i < a.len() || j < b.len() {
            match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x == y => {
                    if self.id(i) != other.id(j) || self.nodes[i].1 != other.nodes[j].1 {
                        out.push(*x);
                    }
                    i += 1;
                    j += 1;
                }
                (Some(x), y) if y.is_none_or(|y| x < y) => {
                    out.push(*x);
                    i += 1;
                }
                (_, y) => {
                    out.extend(y);
                    j += 1;
                }
            }
        }
        out.dedup();
        out
    }

    /// Whether this is the table of `nodes` (for debug checks of a table
    /// kept between runs).
    pub fn indexes(&self, nodes: &BTreeMap<String, Option<Node>>) -> bool {
        self.nodes.len() == nodes.len()
            && nodes.iter().enumerate().all(|(i, (id, node))| {
                self.id(i) == id
                    && self.prefixes[i] == id_prefix(id)
                    && self.nodes[i].1.as_ref() == node.as_ref().map(|n| &n.status)
                    && self.get(id) == Some(node.as_ref().map(|n| &n.status))
            })
    }
}

/// The first 16 bytes of `s` as a big-endian number (zero-padded), which
/// orders like the strings themselves up to ties.
pub(crate) fn id_prefix(s: &str) -> u128 {
    let b = s.as_bytes();
    let n = b.len();
    if let Some(head) = b.first_chunk::<16>() {
        return u128::from_be_bytes(*head);
    }
    // Shorter IDs: two overlapping fixed-size reads (a copy of variable
    // length would call memcpy); the overlap holds the same bytes.
    if n >= 8 {
        let head = u64::from_be_bytes(*b.first_chunk::<8>().expect("8 bytes"));
        let tail = u64::from_be_bytes(*b[n - 8..].first_chunk::<8>().expect("8 bytes"));
        // Bytes 8..n are the tail's last n - 8 bytes: move them to the top
        // of the low half (none when n is 8).
        let low = tail.checked_shl(8 * (16 - n) as u32).unwrap_or(0);
        return (u128::from(head) << 64) | u128::from(low);
    }
    if n >= 4 {
        let head = u32::from_be_bytes(*b.first_chunk::<4>().expect("4 bytes"));
        let tail = u32::from_be_bytes(*b[n - 4..].first_chunk::<4>().expect("4 bytes"));
        // Bytes 4..n: the tail's last n - 4 bytes, placed after the head.
        let low = tail.checked_shl(8 * (8 - n) as u32).unwrap_or(0);
        return (u128::from(head) << 96) | (u128::from(low) << 64);
    }
    let mut v = 0u128;
    for (i, x) in b.iter().enumerate() {
        v |= u128::from(*x) << (8 * (15 - i));
    }
    v
}

/// Whether [`classify_alloc_on`] is sure to answer untainted by
/// [`ClassifyRule::NodeFine`], read from the alloc's key: a plainly running
/// alloc without a migrate transition on a node that is not tainted, which
/// has no alloc states to mark it as reconnecting (under the task event
/// marker this answers false: that marker reads the task states).
#[inline]
pub(crate) fn plainly_fine(
    key: &impl KeyFacts,
    tainted: Option<TaintedNode<'_>>,
    cx: &FilterContext<'_>,
) -> bool {
    tainted.is_none() && key.plain() && cx.rules.reconnect_marker != ReconnectMarker::TaskEvent
}

/// What the reconciler's first pass asks of an alloc's key: read from a
/// lent [`AllocKey`], or worked out from the alloc itself, each answer only
/// when asked, where no key was lent.
pub(crate) trait KeyFacts {
    /// The prefix of the alloc's ID.
    fn id_prefix(&self) -> u128;
    /// The prefix of the alloc's node ID.
    fn node_prefix(&self) -> u128;
    /// The task group name as (length, prefix): names of up to 16 bytes
    /// are equal when these are.
    fn group(&self) -> (u32, u128);
    /// Whether the alloc embeds `job` itself (the same `Rc`).
    fn embeds(&self, job: &Rc<Job>) -> bool;
    /// Plainly running ([`plainly_running`]), no migrate transition, no
    /// alloc states: [`plainly_fine`] on a node that is not tainted.
    fn plain(&self) -> bool;
}

impl KeyFacts for Allocation {
    #[inline]
    fn id_prefix(&self) -> u128 {
        id_prefix(&self.id)
    }
    #[inline]
    fn node_prefix(&self) -> u128 {
        id_prefix(&self.node_id)
    }
    #[inline]
    fn group(&self) -> (u32, u128) {
        let len = u32::try_from(self.task_group.len()).unwrap_or(u32::MAX);
        (len, id_prefix(&self.task_group))
    }
    #[inline]
    fn embeds(&self, job: &Rc<Job>) -> bool {
        self.job.as_ref().is_some_and(|own| Rc::ptr_eq(own, job))
    }
    #[inline]
    fn plain(&self) -> bool {
        plainly_running(self)
            && !self.desired_transition.should_migrate()
            && self.alloc_states.is_empty()
    }
}

impl KeyFacts for AllocKey {
    #[inline]
    fn id_prefix(&self) -> u128 {
        self.id
    }
    #[inline]
    fn node_prefix(&self) -> u128 {
        self.node
    }
    #[inline]
    fn group(&self) -> (u32, u128) {
        (self.group_len, self.group)
    }
    #[inline]
    fn embeds(&self, job: &Rc<Job>) -> bool {
        self.job == Rc::as_ptr(job).addr()
    }
    #[inline]
    fn plain(&self) -> bool {
        self.has(AllocKey::PLAIN)
    }
}

/// What the cluster reconciler's first pass reads of an alloc, in one
/// record of 64 bytes: the prefixes ([`id_prefix`]) of its ID, node ID and
/// task group, its group name's length, its embedded job's address and a
/// few status facts. A caller that keeps a list of allocs can keep their
/// keys beside it (the simulator's per-job alloc lists do) and lend both
/// ([`ClusterInput::keys`](super::cluster::ClusterInput::keys)): the pass
/// then reads an alloc itself only where its key does not settle a rule,
/// instead of reading every alloc and three of its strings, each a cache
/// miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocKey {
    id: u128,
    node: u128,
    group: u128,
    /// The address of the embedded job (0: none), only compared: while the
    /// key sits beside its alloc, the alloc keeps that job alive.
    job: usize,
    group_len: u32,
    flags: u8,
}

impl AllocKey {
    /// See [`KeyFacts::plain`].
    const PLAIN: u8 = 1;
    /// Stopped by the server while the client reports it running or
    /// pending (see [`AllocKey::stopped_but_live`]).
    const STOPPED_BUT_LIVE: u8 = 2;

    /// The key of `alloc`.
    pub fn of(alloc: &Allocation) -> AllocKey {
        let (group_len, group) = alloc.group();
        let stopped_but_live = alloc.server_terminal_status()
            && matches!(
                alloc.client_status,
                ClientStatus::Running | ClientStatus::Pending
            );
        let flag = |yes: bool, flag: u8| if yes { flag } else { 0 };
        AllocKey {
            id: alloc.id_prefix(),
            node: alloc.node_prefix(),
            group,
            job: alloc.job.as_ref().map_or(0, |job| Rc::as_ptr(job).addr()),
            group_len,
            flags: flag(alloc.plain(), AllocKey::PLAIN)
                | flag(stopped_but_live, AllocKey::STOPPED_BUT_LIVE),
        }
    }

    #[inline]
    fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// Server-terminal while the client reports it running or pending
    /// (what `updateNonTerminalAllocsToLost` asks before the node).
    #[inline]
    pub fn stopped_but_live(&self) -> bool {
        self.has(AllocKey::STOPPED_BUT_LIVE)
    }
}

/// [`classify_alloc`] with the alloc's entry in the tainted nodes already
/// looked up.
pub(crate) fn classify_alloc_on(
    alloc: &Allocation,
    tainted: Option<TaintedNode<'_>>,
    cx: &FilterContext<'_>,
) -> (AllocCategory, ClassifyRule) {
    use AllocCategory as C;
    use ClassifyRule as R;
    let should_reconnect = matches!(
        alloc.client_status,
        ClientStatus::Unknown | ClientStatus::Running | ClientStatus::Failed
    ) && cx.needs_to_reconnect(alloc);
    let node_is_tainted = tainted.is_some();
    let node_status: Option<&NodeStatus> = tainted.flatten();
    let disconnected = node_status == Some(&NodeStatus::Disconnected);
    let server_terminal = alloc.server_terminal_status();
    let terminal = alloc.terminal_status();
    let transition = &alloc.desired_transition;

    if should_reconnect
        && alloc.desired_status == DesiredStatus::Run
        && alloc.client_status == ClientStatus::Failed
    {
        return (C::Reconnecting, R::FailedReconnect);
    }
    if server_terminal && !should_reconnect && transition.should_disable_migration_placement() {
        return (C::Untainted, R::DrainedBatch);
    }
    if terminal && !should_reconnect && server_terminal {
        return (C::Ignore, R::TerminalServerStopped);
    }
    if terminal && !should_reconnect && alloc.is_canary() && transition.should_migrate() {
        return (C::Migrate, R::TerminalMigratingCanary);
    }
    if terminal && !should_reconnect {
        return (C::Untainted, R::Terminal);
    }
    if cx.expired(alloc) {
        return (C::Expiring, R::Expired);
    }
    if should_reconnect
        && alloc.client_status == ClientStatus::Failed
        && alloc.desired_status == DesiredStatus::Stop
    {
        return (C::Ignore, R::FailedReconnectStopped);
    }
    // ≤ 1.6: unknown allocs that should run are ignored further down,
    // wherever they sit (so a disconnected node's unknown alloc falls through).
    let unknown_ignored = cx.rules.unknown_on_untainted_node == UnknownOnUntaintedNode::Ignore
        && alloc.client_status == ClientStatus::Unknown;
    if disconnected && !unknown_ignored {
        if alloc.client_status == ClientStatus::Unknown {
            return (C::Untainted, R::DisconnectedUnknown);
        }
        if alloc.client_status == ClientStatus::Pending {
            return (C::Lost, R::DisconnectedPending);
        }
        let now = cx.clock.now();
        if alloc.disconnect_timeout(now, cx.legacy()) == now {
            return (C::Lost, R::DisconnectedNoLostAfter);
        }
        return (C::Disconnecting, R::Disconnected);
    }
    if transition.should_migrate() {
        return (C::Migrate, R::MigrateTransition);
    }
    let node_fine = !node_is_tainted || node_status == Some(&NodeStatus::Ready);
    // Only a tainted node that is `ready` (draining) lets an old version
    // see an unknown alloc as reconnecting before this rule.
    let tainted_ready = node_is_tainted && node_status == Some(&NodeStatus::Ready);
    if unknown_ignored
        && alloc.desired_status == DesiredStatus::Run
        && !(tainted_ready && should_reconnect)
    {
        let rule = if disconnected {
            R::DisconnectedUnknown
        } else if node_fine {
            R::UnknownOnFineNode
        } else if node_is_tainted && node_status.is_none() {
            R::NodeGone
        } else if node_status == Some(&NodeStatus::Down) {
            R::NodeDown
        } else {
            R::Default
        };
        return (C::Ignore, rule);
    }
    if node_fine && should_reconnect {
        if alloc.client_status == ClientStatus::Unknown {
            match cx.rules.unknown_on_untainted_node {
                UnknownOnUntaintedNode::Reconnecting | UnknownOnUntaintedNode::Ignore => {}
                UnknownOnUntaintedNode::Untainted => return (C::Untainted, R::UnknownOnFineNode),
            }
        }
        return (C::Reconnecting, R::NeedsReconnect);
    }
    if node_fine {
        return (C::Untainted, R::NodeFine);
    }
    if node_is_tainted && node_status.is_none() {
        return (C::Lost, R::NodeGone);
    }
    // `Node::terminal_status`.
    let down = node_status == Some(&NodeStatus::Down);
    let replace = alloc.replace_on_disconnect(cx.legacy());
    if down && !replace && alloc.client_status == ClientStatus::Unknown {
        return (C::Untainted, R::DownNoReplaceUnknown);
    }
    if down && !replace && alloc.client_status == ClientStatus::Running {
        return (C::Disconnecting, R::DownNoReplaceRunning);
    }
    if down {
        return (C::Lost, R::NodeDown);
    }
    (C::Untainted, R::Default)
}

/// Splits a set into the seven classification sets (`classifyAllocs`).
pub fn classify_allocs(set: &AllocSet, cx: &FilterContext<'_>) -> Classified {
    let (mut out, rules) = classify_each(set, cx);
    out.rules = set.ids().cloned().zip(rules).collect();
    out
}

/// [`classify_allocs`] without the per-ID map: the sets, and the set and
/// rule of each alloc in the order of `set`.
pub fn classify_each(
    set: &AllocSet,
    cx: &FilterContext<'_>,
) -> (Classified, Vec<(AllocCategory, ClassifyRule)>) {
    let mut out = Classified {
        untainted: AllocSet::with_capacity(set.len()),
        ..Default::default()
    };
    let mut rules = Vec::with_capacity(set.len());
    let nodes = TaintedIndex::new(cx.tainted_nodes);
    for alloc in set.iter() {
        let (cat, rule) = classify_alloc_on(alloc, nodes.get(&alloc.node_id), cx);
        // `set` is in ID order, so each of the seven sets is too.
        out.set_mut(cat).push_ordered(Rc::clone(alloc));
        rules.push((cat, rule));
    }
    (out, rules)
}

/// Drops server-terminal allocs, except batch allocs not marked for
/// reschedule (`filterServerTerminalAllocs`). Returns kept and dropped.
pub fn filter_server_terminal_allocs(set: &AllocSet) -> (AllocSet, AllocSet) {
    set.partition(kept_unless_server_terminal)
}

/// [`filter_server_terminal_allocs`] on a set that is no longer needed.
pub fn split_server_terminal_allocs(set: AllocSet) -> (AllocSet, AllocSet) {
    set.into_partition(kept_unless_server_terminal)
}

pub(crate) fn kept_unless_server_terminal(a: &Allocation) -> bool {
    !a.server_terminal_status()
        || (a.job.as_ref().is_some_and(|j| j.job_type == JobType::Batch)
            && !a.desired_transition.should_reschedule())
}

/// An alloc that may be rescheduled (or stopped as lost) at a later time
/// (Nomad's `delayedRescheduleInfo`).
#[derive(Debug, Clone)]
pub struct DelayedReschedule {
    /// The alloc.
    pub alloc: Rc<Allocation>,
    /// When.
    pub reschedule_time: Time,
}

/// The result of [`filter_by_rescheduleable`].
#[derive(Debug, Clone, Default)]
pub struct RescheduleSplit {
    /// Allocs that stay (not rescheduled now).
    pub untainted: AllocSet,
    /// Allocs to reschedule now.
    pub now: AllocSet,
    /// Allocs to reschedule later (also in `untainted`).
    pub later: Vec<DelayedReschedule>,
}

/// What [`filter_by_rescheduleable`] needs besides the set.
#[derive(Debug, Clone, Copy)]
pub struct RescheduleContext<'a> {
    /// `ReconcilerState.JobIsBatch`.
    pub is_batch: bool,
    /// The reconciler's clock and the eval being processed.
    pub clock: &'a EvalClock<'a>,
    /// The current deployment.
    pub deployment: Option<&'a Deployment>,
    /// Version switches.
    pub rules: &'a ReconcilerRules,
}

/// Splits a set into untainted, reschedule-now and reschedule-later
/// (`filterByRescheduleable`).
pub fn filter_by_rescheduleable(
    set: &AllocSet,
    is_disconnecting: bool,
    cx: &RescheduleContext<'_>,
) -> RescheduleSplit {
    split_rescheduleable(set.clone(), is_disconnecting, cx)
}

/// [`filter_by_rescheduleable`] over a set that is no longer needed, so it
/// is split without copying it.
pub fn split_rescheduleable(
    set: AllocSet,
    is_disconnecting: bool,
    cx: &RescheduleContext<'_>,
) -> RescheduleSplit {
    let mut out = RescheduleSplit {
        untainted: AllocSet::with_capacity(set.len()),
        ..Default::default()
    };
    // `set` is in ID order, so the parts are too.
    for alloc in set {
        if !is_disconnecting && plainly_running(&alloc) {
            // What `should_filter` and `update_by_reschedulable` answer for
            // it: untainted, nothing to reschedule.
            out.untainted.push_ordered(alloc);
            continue;
        }
        if is_disconnecting && alloc.client_status == ClientStatus::Unknown {
            continue;
        }
        if !alloc.next_allocation.is_empty() && alloc.terminal_status() {
            continue;
        }
        let (is_untainted, ignore) = should_filter(&alloc, cx.is_batch);
        if is_untainted && !is_disconnecting {
            out.untainted.push_ordered(alloc);
            continue;
        }
        if ignore {
            continue;
        }
        let (now, later, time) = update_by_reschedulable(&alloc, is_disconnecting, cx);
        if now {
            out.now.push_ordered(alloc);
            continue;
        }
        if later {
            out.later.push(DelayedReschedule {
                alloc: Rc::clone(&alloc),
                reschedule_time: time,
            });
        }
        out.untainted.push_ordered(alloc);
    }
    out
}

/// A running alloc the server wants running, with no reschedule
/// transition: never rescheduled, whatever the job type or deployment.
pub(crate) fn plainly_running(alloc: &Allocation) -> bool {
    alloc.client_status == ClientStatus::Running
        && alloc.desired_status == DesiredStatus::Run
        && !alloc.desired_transition.should_reschedule()
        && !alloc.desired_transition.should_force_reschedule()
}

/// A pending, running or unknown alloc the server wants running, with no
/// reschedule transition: outside a disconnect, never rescheduled or
/// dropped, but when unknown with the run's eval as its follow-up eval
/// (see `update_by_reschedulable`).
pub(crate) fn quiet(alloc: &Allocation) -> bool {
    matches!(
        alloc.client_status,
        ClientStatus::Pending | ClientStatus::Running | ClientStatus::Unknown
    ) && alloc.desired_status == DesiredStatus::Run
        && !alloc.desired_transition.should_reschedule()
        && !alloc.desired_transition.should_force_reschedule()
}

/// Whether an alloc counts as untainted, or is ignored, before any
/// reschedule logic (`shouldFilter`).
pub fn should_filter(alloc: &Allocation, is_batch: bool) -> (bool, bool) {
    if is_batch {
        if alloc
            .desired_transition
            .should_disable_migration_placement()
        {
            return (true, false);
        }
        if alloc.desired_transition.should_reschedule() {
            return (false, false);
        }
        match alloc.desired_status {
            DesiredStatus::Stop => {
                if alloc.ran_successfully() {
                    return (true, false);
                }
                if alloc.last_reschedule_failed() {
                    return (false, false);
                }
                return (false, true);
            }
            DesiredStatus::Evict => return (false, true),
            _ => {}
        }
        if alloc.client_status == ClientStatus::Failed {
            return (false, false);
        }
        return (true, false);
    }
    if alloc.desired_status.is_terminal() {
        return (false, !alloc.last_reschedule_failed());
    }
    if matches!(
        alloc.client_status,
        ClientStatus::Complete | ClientStatus::Lost
    ) {
        return (false, true);
    }
    (false, false)
}

/// Whether a failed (or disconnecting) alloc reschedules now, later, or not
/// at all, and when (`updateByReschedulable`).
pub fn update_by_reschedulable(
    alloc: &Allocation,
    is_disconnecting: bool,
    cx: &RescheduleContext<'_>,
) -> (bool, bool, Time) {
    let legacy = cx.rules.honour_legacy_disconnect_fields;
    if let Some(d) = cx.deployment
        && alloc.deployment_id == d.id
        && d.active()
        && !alloc.desired_transition.should_reschedule()
    {
        return (false, false, Time::ZERO);
    }
    let mut now = false;
    if alloc.desired_transition.should_force_reschedule()
        && (alloc.client_terminal_status() || !cx.rules.pr_28445)
    {
        now = true;
    }
    if is_disconnecting && !alloc.replace_on_disconnect(legacy) {
        return (now, false, Time::ZERO);
    }
    let immediate = || match cx.rules.disconnecting_replacement {
        DisconnectingReplacement::Immediate => true,
        DisconnectingReplacement::ImmediateWithBlock => alloc
            .job_task_group()
            .and_then(|tg| tg.disconnect.as_ref())
            .is_some_and(|d| d.replace.is_some()),
        DisconnectingReplacement::ReschedulePolicy => false,
    };
    if is_disconnecting && immediate() {
        return (true, false, cx.clock.now());
    }
    let (time, eligible) = if is_disconnecting {
        alloc.next_reschedule_time_by_time(cx.clock.now())
    } else if alloc.client_status == ClientStatus::Unknown
        && cx.clock.is_eval(&alloc.followup_eval_id)
    {
        let last = if cx.rules.last_unknown_from_run_start {
            alloc.last_unknown()
        } else {
            alloc.last_unknown_latest()
        };
        alloc.next_reschedule_time_by_time(last)
    } else if !matches!(
        alloc.client_status,
        ClientStatus::Failed | ClientStatus::Lost
    ) && !alloc.desired_transition.should_reschedule()
    {
        // What `next_reschedule_time` answers for an alloc that neither
        // failed nor is a batch alloc marked to reschedule, without
        // looking up its events and policy.
        (Time::ZERO, false)
    } else {
        alloc.next_reschedule_time()
    };
    if eligible
        && (cx.clock.is_eval(&alloc.followup_eval_id)
            || time.since(cx.clock.now()) <= RESCHEDULE_WINDOW)
    {
        return (true, false, time);
    }
    let later = eligible && alloc.followup_eval_id.is_empty();
    (now, later, time)
}

/// Lost allocs whose group sets stop_on_client_after and whose wait has not
/// passed (`delayByStopAfter`).
pub fn delay_by_stop_after(
    set: &AllocSet,
    now: Time,
    rules: &ReconcilerRules,
) -> Vec<DelayedReschedule> {
    let legacy = rules.honour_legacy_disconnect_fields;
    set.iter()
        .filter(|a| a.should_client_stop(legacy))
        .filter_map(|a| {
            let t = a.wait_client_stop(now, legacy);
            t.after(now).then(|| DelayedReschedule {
                alloc: Rc::clone(a),
                reschedule_time: t,
            })
        })
        .collect()
}

/// The lost_after timeout of every alloc (`delayByLostAfter`).
pub fn delay_by_lost_after(
    set: &AllocSet,
    now: Time,
    rules: &ReconcilerRules,
) -> Vec<DelayedReschedule> {
    set.iter()
        .map(|a| DelayedReschedule {
            alloc: Rc::clone(a),
            reschedule_time: a.disconnect_timeout(now, rules.honour_legacy_disconnect_fields),
        })
        .collect()
}

/// The group's reconcile strategy (`DisconnectStrategy.ReconcileStrategy`);
/// an unknown value reads as `best_score`.
pub fn reconcile_strategy(alloc: &Allocation) -> ReconcileStrategy {
    match alloc.job_task_group().map(|tg| tg.reconcile_strategy()) {
        Some(
            s @ (ReconcileStrategy::BestScore
            | ReconcileStrategy::KeepOriginal
            | ReconcileStrategy::KeepReplacement
            | ReconcileStrategy::LongestRunning),
        ) => s,
        _ => ReconcileStrategy::BestScore,
    }
}

#[cfg(test)]
mod id_prefix_tests {
    use super::id_prefix;

    /// An alloc's key answers as the alloc does, and fills one cache line
    /// on a 64-bit target (what its doc promises the table pass).
    #[test]
    fn alloc_key_answers_as_its_alloc() {
        use super::{AllocKey, KeyFacts};
        use crate::model::{Allocation, ClientStatus, DesiredStatus, Job};
        use std::rc::Rc;
        #[cfg(target_pointer_width = "64")]
        assert_eq!(std::mem::size_of::<AllocKey>(), 64);
        let job = Rc::new(Job::default());
        let other = Rc::new(Job::default());
        for (client, desired, states, group) in [
            (ClientStatus::Running, DesiredStatus::Run, false, "web"),
            (
                ClientStatus::Running,
                DesiredStatus::Stop,
                false,
                "a-group-name-longer-than-16",
            ),
            (ClientStatus::Pending, DesiredStatus::Evict, true, ""),
            (ClientStatus::Unknown, DesiredStatus::Run, true, "web"),
        ] {
            let mut alloc = Allocation {
                id: "9f1c2a4e-8d7b-4c2e-9a1f-3b5d7e9f1a2c".to_string(),
                node_id: "node-007".to_string(),
                task_group: group.to_string(),
                client_status: client.clone(),
                desired_status: desired.clone(),
                job: Some(Rc::clone(&job)),
                ..Allocation::default()
            };
            if states {
                alloc.alloc_states.push(crate::model::AllocState::default());
            }
            let key = AllocKey::of(&alloc);
            assert_eq!(key.id_prefix(), alloc.id_prefix());
            assert_eq!(key.node_prefix(), alloc.node_prefix());
            assert_eq!(key.group(), alloc.group());
            assert_eq!(key.plain(), alloc.plain());
            assert!(key.embeds(&job) && alloc.embeds(&job));
            assert!(!key.embeds(&other) && !alloc.embeds(&other));
            assert_eq!(
                key.stopped_but_live(),
                alloc.server_terminal_status()
                    && matches!(client, ClientStatus::Running | ClientStatus::Pending)
            );
        }
    }

    /// The prefix is the first 16 bytes, zero-padded, big-endian, so it
    /// orders like the strings up to ties.
    #[test]
    fn id_prefix_pads_and_orders() {
        let padded = |s: &str| {
            let mut buf = [0u8; 16];
            let n = s.len().min(16);
            buf[..n].copy_from_slice(&s.as_bytes()[..n]);
            u128::from_be_bytes(buf)
        };
        let ids = [
            "",
            "a",
            "abc",
            "abcd",
            "abcde",
            "abcdefg",
            "abcdefgh",
            "node-0001",
            "0123456789abcde",
            "0123456789abcdef",
            "0123456789abcdefX",
            "9f1c2a4e-8d7b-4c2e-9a1f-3b5d7e9f1a2c",
        ];
        for id in ids {
            assert_eq!(id_prefix(id), padded(id), "{id}");
        }
        for a in ids {
            for b in ids {
                if id_prefix(a) != id_prefix(b) {
                    assert_eq!(id_prefix(a).cmp(&id_prefix(b)), a.cmp(b), "{a} {b}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `changed_prefixes` names every node whose entry differs (added,
    /// removed, gone, another status), also among IDs that share a
    /// prefix, and nothing for equal tables.
    #[test]
    fn changed_prefixes_name_every_changed_node() {
        let long = |i: u32| format!("0123456789abcdef-{i}");
        let node = |status: NodeStatus| {
            Some(Node {
                status,
                ..Default::default()
            })
        };
        let tables: Vec<BTreeMap<String, Option<Node>>> = vec![
            BTreeMap::new(),
            BTreeMap::from([("a".to_string(), node(NodeStatus::Down))]),
            BTreeMap::from([("a".to_string(), None)]),
            BTreeMap::from([
                ("a".to_string(), node(NodeStatus::Disconnected)),
                ("b".to_string(), node(NodeStatus::Down)),
            ]),
            BTreeMap::from([
                (long(1), node(NodeStatus::Down)),
                (long(2), node(NodeStatus::Down)),
            ]),
            BTreeMap::from([
                (long(1), node(NodeStatus::Down)),
                (long(2), node(NodeStatus::Disconnected)),
                ("b".to_string(), node(NodeStatus::Down)),
            ]),
            BTreeMap::from([(long(2), node(NodeStatus::Down))]),
        ];
        for x in &tables {
            for y in &tables {
                let (a, b) = (TaintedIndex::new(x), TaintedIndex::new(y));
                let changed = a.changed_prefixes(&b);
                assert!(changed.is_sorted_by(|p, q| p < q), "{x:?} {y:?}");
                if x == y {
                    assert!(changed.is_empty());
                }
                for id in x.keys().chain(y.keys()) {
                    if a.get(id) != b.get(id) {
                        assert!(changed.contains(&id_prefix(id)), "{id}: {x:?} {y:?}");
                    }
                }
            }
        }
    }
}
