//! The nodes' bin-packing scores kept between evals, so that a placement
//! looks at a few nodes instead of scoring every node of the cluster.
//!
//! This is the simulator's own bookkeeping, not a port: it picks exactly
//! the node that scoring every node would pick (the best score, ties to the
//! lowest node ID; see `select_node` in `scheduler.rs`). A node's score for
//! one alloc is its bin-packing score, lowered (never raised) by the job
//! anti-affinity and the reschedule penalty, so the bin-packing score alone
//! is an upper bound: the nodes are walked in that order and the walk stops
//! once no node left can beat the best found. The bound is per need (CPU,
//! memory) and holds for the state's usage; the nodes the plan being built
//! changed are scored as the plan changes them ([`PlanScores`]), and the
//! penalised node with its penalty.
//!
//! The index lives in [`crate::server::ServerState`] as a cache: it is not
//! serialized, any two compare equal, a clone starts empty (history
//! checkpoints do not carry it), a node write drops it
//! ([`crate::server::Server::nodes_changed`],
//! [`crate::server::Server::node_written`]) and an alloc write marks its
//! node for rescoring. It keeps each node rank's slot in the per-node
//! tables ([`crate::server::ServerState::node_slot`]) and each slot's rank,
//! so that a node it walks to is scored without an ID lookup.

use super::{Fit, NodeLoad, Usage, binpack, combined_score, scored_fit};
use crate::model::Job;
use crate::scenario::format::GroupSpec;
use crate::server::Server;
use std::cmp::Reverse;
use std::collections::BTreeSet;

/// The bin-packing scores of the nodes per need, and the nodes whose usage
/// changed since they were computed. (Its tables are vectors, not maps: a
/// cluster has few distinct needs, and vectors add less code to the wasm
/// bundle than new map types.)
#[derive(Debug, Default)]
pub struct PlacementIndex {
    /// Slots of the nodes whose usage changed since the scores were
    /// computed (tracked only while some need is indexed).
    dirty: BTreeSet<u32>,
    /// Per need (CPU MHz, memory MB), in the order first asked for.
    needs: Vec<((u64, u64), NeedIndex)>,
    /// Per node rank: the node's slot (every node has one while the index
    /// is built).
    slots: Vec<u32>,
    /// Per slot: its node's rank ([`NO_RANK`] for a slot of no stored node).
    ranks: Vec<u32>,
}

/// The rank of a slot whose ID names no stored node.
const NO_RANK: u32 = u32::MAX;

/// The nodes' scores for one need.
#[derive(Debug)]
struct NeedIndex {
    /// Per node (in ID order): its bin-packing score in millionths when it
    /// is ready and the need fits its free resources, with the score
    /// itself (what a node walked to is scored from: [`super::scored_fit`]).
    scores: Vec<Option<(i64, f64)>>,
    /// The scored nodes, best first, ties by node order.
    order: Order,
}

/// Nodes by score, best first, ties by node order: `(Reverse(score), rank)`
/// kept sorted, each rank at most once.
#[derive(Debug, Default)]
struct Order(Vec<(Reverse<i64>, usize)>);

impl Order {
    /// Adds a node's score (nothing if it is there).
    fn insert(&mut self, entry: (Reverse<i64>, usize)) {
        if let Err(at) = self.0.binary_search(&entry) {
            self.0.insert(at, entry);
        }
    }

    /// Moves the node at `rank` from its score `old` to `new` (either
    /// absent: only a removal or an insertion), shifting only the entries
    /// between the two places: a node rescored after a placement mostly
    /// keeps its place or moves a few, where a removal and an insertion
    /// would each shift the whole tail.
    fn rescore(&mut self, rank: usize, old: Option<i64>, new: Option<i64>) {
        if old == new {
            return;
        }
        let from = old.and_then(|old| self.0.binary_search(&(Reverse(old), rank)).ok());
        match (from, new.map(|new| (Reverse(new), rank))) {
            (Some(from), Some(entry)) => match self.0.binary_search(&entry) {
                // Where it goes among the entries as they are, the old one
                // still in: past it, or at or before it.
                // (One move of the entries between, where a rotation
                // costs the app module half a kilobyte of code.)
                Err(to) if to > from => {
                    self.0.copy_within(from + 1..to, from);
                    self.0[to - 1] = entry;
                }
                Err(to) => {
                    self.0.copy_within(to..from, to + 1);
                    self.0[to] = entry;
                }
                // Already there: only the old one goes.
                Ok(_) => {
                    self.0.remove(from);
                }
            },
            (Some(from), None) => {
                self.0.remove(from);
            }
            (None, Some(entry)) => self.insert(entry),
            (None, None) => {}
        }
    }

    /// The entries, best first.
    fn iter(&self) -> std::slice::Iter<'_, (Reverse<i64>, usize)> {
        self.0.iter()
    }
}

impl Clone for PlacementIndex {
    /// A cache: a copy starts empty and fills on use.
    fn clone(&self) -> Self {
        PlacementIndex::default()
    }
}

impl PartialEq for PlacementIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl PlacementIndex {
    /// Notes that the usage of the node in `slot` changed.
    pub fn usage_changed(&mut self, slot: u32) {
        if !self.needs.is_empty() {
            self.dirty.insert(slot);
        }
    }

    /// The slot of the node at `rank` (built by
    /// [`Server::sync_placement_index`]).
    pub(super) fn slot(&self, rank: usize) -> Option<u32> {
        self.slots.get(rank).copied()
    }

    /// The rank of the node in `slot`, if it is a stored node.
    fn rank(&self, slot: u32) -> Option<usize> {
        self.ranks
            .get(slot as usize)
            .filter(|rank| **rank != NO_RANK)
            .map(|rank| *rank as usize)
    }
}

impl Server {
    /// A node's bin-packing score for `need` with the state's usage, in
    /// millionths and as computed (`None`: not ready, or the need does not
    /// fit).
    fn binpack_score(
        &self,
        slot: u32,
        record: &crate::server::NodeRecord,
        need: (u64, u64),
    ) -> Option<(i64, f64)> {
        if !record.node.ready() {
            return None;
        }
        let base = self.state.node_usage.get(slot).copied().unwrap_or((0, 0));
        let binpack = binpack(record, base, (0, 0), need)?;
        // Its placement score alone, rounded as `group_fit` rounds.
        let score = combined_score(binpack, 0, 1, false);
        Some(((score * 1e6).round() as i64, binpack))
    }

    /// Brings the index of `need` up to date: builds it, or rescores the
    /// nodes whose usage changed (in every indexed need).
    pub(super) fn sync_placement_index(&mut self, need: (u64, u64)) {
        // Most placements find it current (a plan's allocs are written
        // after all its placements): nothing to take out and put back.
        let current = &self.state.placement;
        if current.dirty.is_empty()
            && current.slots.len() == self.state.nodes.len()
            && current.needs.iter().any(|(indexed, _)| *indexed == need)
        {
            return;
        }
        let mut index = std::mem::take(&mut self.state.placement);
        if index.slots.len() != self.state.nodes.len() {
            self.slot_nodes(&mut index);
        }
        // The stored nodes among them, with their ranks.
        let dirty: Vec<(u32, usize)> = std::mem::take(&mut index.dirty)
            .into_iter()
            .filter_map(|slot| Some((slot, index.rank(slot)?)))
            .collect();
        for (need, scores) in index.needs.iter_mut() {
            for &(slot, rank) in &dirty {
                let Some((_, record)) = self.state.nodes.get_index(rank) else {
                    continue;
                };
                let score = self.binpack_score(slot, record, *need);
                let old = std::mem::replace(&mut scores.scores[rank], score);
                let (old, new) = (old.map(|(old, _)| old), score.map(|(new, _)| new));
                scores.order.rescore(rank, old, new);
            }
        }
        if !index.needs.iter().any(|(indexed, _)| *indexed == need) {
            let scores: Vec<Option<(i64, f64)>> = self
                .state
                .nodes
                .values()
                .zip(&index.slots)
                .map(|(record, slot)| self.binpack_score(*slot, record, need))
                .collect();
            // Each rank once, so sorting gives the set's order.
            let mut order: Vec<(Reverse<i64>, usize)> = scores
                .iter()
                .enumerate()
                .filter_map(|(rank, score)| score.map(|(score, _)| (Reverse(score), rank)))
                .collect();
            order.sort_unstable();
            index.needs.push((
                need,
                NeedIndex {
                    scores,
                    order: Order(order),
                },
            ));
        }
        self.state.placement = index;
    }

    /// Gives every stored node a slot (the nodes added since slots were
    /// last handed out get theirs now, in ID order) and fills the index's
    /// tables from node rank to slot and back.
    fn slot_nodes(&mut self, index: &mut PlacementIndex) {
        let state = &mut self.state;
        let mut slots = Vec::with_capacity(state.nodes.len());
        let mut unslotted = Vec::new();
        {
            // Both tables are in node ID order: one walk matches them.
            let mut slotted = state.node_usage.slots().peekable();
            for (rank, id) in state.nodes.keys().enumerate() {
                match super::advance_to(&mut slotted, id) {
                    Some(slot) => slots.push(*slot),
                    None => {
                        slots.push(NO_RANK);
                        unslotted.push((rank, id.clone()));
                    }
                }
            }
        }
        for (rank, id) in unslotted {
            slots[rank] = state.node_slot(&id);
        }
        let mut ranks = vec![NO_RANK; state.node_usage.slot_count()];
        for (rank, slot) in slots.iter().enumerate() {
            ranks[*slot as usize] = rank as u32;
        }
        index.slots = slots;
        index.ranks = ranks;
    }

    /// The best node for one alloc of a group: (score in millionths, node
    /// rank), as scoring every node would find it (see the module doc);
    /// `None` when no node fits. Call [`Server::sync_placement_index`] for
    /// the group's need first; `plan` keeps the fits of the nodes the plan
    /// changed between the placements of one plan.
    pub(super) fn best_indexed_node(
        &self,
        job: &Job,
        group_spec: &GroupSpec,
        group_key: &str,
        penalty_node: Option<&str>,
        usage: &Usage,
        plan: &mut PlanScores,
    ) -> Option<(i64, usize)> {
        let nodes = &self.state.nodes;
        let need = super::group_need(group_spec);
        let placement = &self.state.placement;
        let index = placement
            .needs
            .iter()
            .find_map(|(indexed, index)| (*indexed == need).then_some(index))?;
        // The nodes the plan changed, rescored as the plan changes them.
        let changed = plan.group(group_key);
        for &slot in &usage.touched[changed.synced..] {
            let Some(rank) = placement.rank(slot) else {
                continue;
            };
            let Some((_, record)) = nodes.get_index(rank) else {
                continue;
            };
            let fit = self.node_fit(job, group_spec, group_key, Some(slot), record, usage, false);
            let old = changed.insert_fit(rank, fit).and_then(Fit::score);
            changed.order.rescore(rank, old, fit.score());
        }
        changed.synced = usage.touched.len();
        let mut best: Option<(i64, usize)> = None;
        // The penalised node, scored with its penalty.
        let penalty_rank = penalty_node.and_then(|id| nodes.rank(id));
        if let (Some(id), Some(rank)) = (penalty_node, penalty_rank) {
            let slot = placement.slot(rank);
            consider(
                &mut best,
                self.node_fit(job, group_spec, group_key, slot, &nodes[id], usage, true),
                rank,
            );
        }
        // The best of the nodes the plan changed.
        if let Some(&(Reverse(score), rank)) = changed
            .order
            .iter()
            .find(|(_, rank)| Some(*rank) != penalty_rank)
        {
            consider(&mut best, Fit::Score(score), rank);
        }
        // The others by their bin-packing score, an upper bound of their
        // score (equal bounds in node order): none after the first that
        // cannot beat the best can.
        for &(Reverse(bound), rank) in index.order.iter() {
            if best.is_some_and(|(b, r)| bound < b || (bound == b && rank > r)) {
                break;
            }
            if Some(rank) == penalty_rank || changed.has_fit(rank) {
                continue;
            }
            let Some((_, record)) = nodes.get_index(rank) else {
                continue;
            };
            // The plan left the node as the index scored it: its fit is
            // its kept bin-packing score with the job anti-affinity.
            let fit = match index.scores.get(rank).copied().flatten() {
                Some((_, binpack)) if super::node_feasible_for(job, group_spec, &record.node) => {
                    let slot = placement.slot(rank);
                    let load = NodeLoad {
                        base_groups: slot
                            .and_then(|slot| self.state.group_counts.get(slot))
                            .map(|groups| &**groups),
                        ..NodeLoad::default()
                    };
                    scored_fit(group_spec, group_key, binpack, &load, false)
                }
                Some(_) => Fit::Infeasible,
                None => self.node_fit(
                    job,
                    group_spec,
                    group_key,
                    placement.slot(rank),
                    record,
                    usage,
                    false,
                ),
            };
            debug_assert!(
                fit == self.node_fit(
                    job,
                    group_spec,
                    group_key,
                    placement.slot(rank),
                    record,
                    usage,
                    false,
                ),
                "a node's kept bin-packing score is stale"
            );
            consider(&mut best, fit, rank);
        }
        best
    }
}

/// The fits of the nodes a plan changed, per group, while it is built.
#[derive(Default)]
pub(super) struct PlanScores {
    /// Per group key, in the order first placed (a plan has few groups).
    groups: Vec<(String, ChangedFits)>,
}

impl PlanScores {
    /// The fits of `group_key`'s group (empty at first).
    fn group(&mut self, group_key: &str) -> &mut ChangedFits {
        let at = match self.groups.iter().position(|(key, _)| key == group_key) {
            Some(at) => at,
            None => {
                self.groups
                    .push((group_key.to_string(), ChangedFits::default()));
                self.groups.len() - 1
            }
        };
        &mut self.groups[at].1
    }
}

/// One group's fits on the nodes the plan changed.
#[derive(Default)]
struct ChangedFits {
    /// How much of [`Usage::touched`] they include.
    synced: usize,
    /// Per node rank, sorted by rank, each rank once.
    fits: Vec<(usize, Fit)>,
    /// One bit per node rank: whether `fits` holds it (the walk over the
    /// index asks this of every node it passes, and bin-packing puts the
    /// nodes a plan changed first).
    held: Vec<u64>,
    /// The nodes that fit, best first, ties by node order.
    order: Order,
}

impl ChangedFits {
    /// Sets a node's fit; returns the one it replaces.
    fn insert_fit(&mut self, rank: usize, fit: Fit) -> Option<Fit> {
        let word = rank / 64;
        if self.held.len() <= word {
            self.held.resize(word + 1, 0);
        }
        self.held[word] |= 1 << (rank % 64);
        match self.fits.binary_search_by_key(&rank, |(r, _)| *r) {
            Ok(at) => Some(std::mem::replace(&mut self.fits[at].1, fit)),
            Err(at) => {
                self.fits.insert(at, (rank, fit));
                None
            }
        }
    }

    /// Whether a node's fit is kept.
    fn has_fit(&self, rank: usize) -> bool {
        let held = self
            .held
            .get(rank / 64)
            .is_some_and(|word| (word >> (rank % 64)) & 1 == 1);
        debug_assert_eq!(
            held,
            self.fits.binary_search_by_key(&rank, |(r, _)| *r).is_ok()
        );
        held
    }
}

/// Keeps the better of `best` and a node's fit: the higher score, ties to
/// the lower node rank.
pub(super) fn consider(best: &mut Option<(i64, usize)>, fit: Fit, rank: usize) {
    if let Fit::Score(score) = fit
        && best.is_none_or(|(b, r)| score > b || (score == b && rank < r))
    {
        *best = Some((score, rank));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type Entry = (Reverse<i64>, usize);

    /// What [`Order::rescore`] must leave: the old entry taken out, then
    /// the new one put in.
    fn by_removal(mut order: Vec<Entry>, old: Option<Entry>, new: Option<Entry>) -> Vec<Entry> {
        if let Some(at) = old.and_then(|old| order.binary_search(&old).ok()) {
            order.remove(at);
        }
        if let Some(new) = new
            && let Err(at) = order.binary_search(&new)
        {
            order.insert(at, new);
        }
        order
    }

    proptest! {
        /// A node rescored up, down, in or out of the order (few scores,
        /// so ties are ordered by rank) ends where a removal and an
        /// insertion would put it.
        #[test]
        fn rescore_moves_an_entry_as_removal_and_insertion(
            scores in proptest::collection::vec(proptest::option::of(-4i64..4), 1..40),
            pick in any::<proptest::sample::Index>(),
            new_score in proptest::option::of(-4i64..4),
        ) {
            let mut order = Order::default();
            for (rank, score) in scores.iter().enumerate() {
                if let Some(score) = score {
                    order.insert((Reverse(*score), rank));
                }
            }
            let rank = pick.index(scores.len());
            let old = scores[rank].map(|score| (Reverse(score), rank));
            let new = new_score.map(|score| (Reverse(score), rank));
            let expected = by_removal(order.0.clone(), old, new);
            order.rescore(rank, scores[rank], new_score);
            prop_assert_eq!(order.0, expected);
        }
    }
}
