//! Sets of allocations keyed by ID, and the alloc name index; after Nomad's
//! `scheduler/reconciler/allocs.go`.
//!
//! Nomad's `allocSet` is a Go map, so its iteration order is random; ours is
//! a `BTreeSet` ordered by alloc ID, so every walk is in ID order and the
//! reconciler's output never depends on a hash.

use crate::model::{Allocation, ClientStatus, alloc_name};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// An alloc ordered and looked up by its ID; cloning it only bumps a
/// reference count (no string copies when sets are cloned or combined).
#[derive(Debug, Clone)]
struct ById(Arc<Allocation>);

impl PartialEq for ById {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}
impl Eq for ById {}
impl PartialOrd for ById {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ById {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.id.cmp(&other.0.id)
    }
}
impl std::borrow::Borrow<str> for ById {
    fn borrow(&self) -> &str {
        &self.0.id
    }
}

/// A set of allocations keyed by ID (Nomad's `allocSet`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AllocSet(BTreeSet<ById>);

impl AllocSet {
    /// An empty set.
    pub fn new() -> Self {
        AllocSet(BTreeSet::new())
    }
    /// Adds or replaces an alloc.
    pub fn insert(&mut self, alloc: Arc<Allocation>) {
        self.0.replace(ById(alloc));
    }
    /// Removes the alloc with this ID.
    pub fn remove(&mut self, id: &str) -> Option<Arc<Allocation>> {
        self.0.take(id).map(|b| b.0)
    }
    /// The alloc with this ID.
    pub fn get(&self, id: &str) -> Option<&Arc<Allocation>> {
        self.0.get(id).map(|b| &b.0)
    }
    /// Whether the set holds this ID.
    pub fn contains(&self, id: &str) -> bool {
        self.0.contains(id)
    }
    /// Number of allocs.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The allocs in ID order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Allocation>> {
        self.0.iter().map(|b| &b.0)
    }
    /// The IDs in order.
    pub fn ids(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|b| &b.0.id)
    }
    /// The allocs not in any of `others` (`difference`).
    pub fn difference(&self, others: &[&AllocSet]) -> AllocSet {
        AllocSet(
            self.0
                .iter()
                .filter(|b| !others.iter().any(|o| o.0.contains(*b)))
                .cloned()
                .collect(),
        )
    }
    /// This set plus `others`; later sets win on equal IDs (`union`).
    pub fn union(&self, others: &[&AllocSet]) -> AllocSet {
        let mut out = self.clone();
        for other in others {
            for b in &other.0 {
                out.0.replace(b.clone());
            }
        }
        out
    }
    /// The allocs of this set whose IDs are in `keys` (`fromKeys`).
    pub fn from_keys<'a>(&self, keys: impl IntoIterator<Item = &'a String>) -> AllocSet {
        let mut out = AllocSet::new();
        for k in keys {
            if let Some(b) = self.0.get(k.as_str()) {
                out.0.replace(b.clone());
            }
        }
        out
    }
    /// This set with the allocs of `other` replacing those of equal ID
    /// (`update`); allocs only in `other` are not added.
    pub fn update(&self, other: &AllocSet) -> AllocSet {
        let mut out = self.clone();
        for b in &other.0 {
            if out.0.contains(b) {
                out.0.replace(b.clone());
            }
        }
        out
    }
    /// The allocs sorted by name index (`nameOrder`); ties stay in ID order.
    pub fn name_order(&self) -> Vec<Arc<Allocation>> {
        let mut v: Vec<_> = self.iter().cloned().collect();
        v.sort_by_key(|a| a.name_index());
        v
    }
    /// The set of names (`nameSet`).
    pub fn name_set(&self) -> BTreeSet<String> {
        self.iter().map(|a| a.name.clone()).collect()
    }
    /// The allocs matching `keep`.
    pub fn filter(&self, keep: impl Fn(&Allocation) -> bool) -> AllocSet {
        AllocSet(self.0.iter().filter(|b| keep(&b.0)).cloned().collect())
    }
    /// The allocs with this client status (`filterByClientStatus`).
    pub fn filter_by_client_status(&self, status: &ClientStatus) -> AllocSet {
        self.filter(|a| a.client_status == *status)
    }
    /// The allocs without this client status (`filterOutByClientStatus`).
    pub fn filter_out_by_client_status(&self, status: &ClientStatus) -> AllocSet {
        self.filter(|a| a.client_status != *status)
    }
    /// The allocs that are not server-terminal (`filterByServerTerminal`).
    pub fn filter_by_server_terminal(&self) -> AllocSet {
        self.filter(|a| !a.server_terminal_status())
    }
    /// The allocs that are not terminal (`filterByTerminal`).
    pub fn filter_by_terminal(&self) -> AllocSet {
        self.filter(|a| !a.terminal_status())
    }
    /// The allocs of deployment `id`, and the others (`filterByDeployment`).
    pub fn filter_by_deployment(&self, id: &str) -> (AllocSet, AllocSet) {
        (
            self.filter(|a| a.deployment_id == id),
            self.filter(|a| a.deployment_id != id),
        )
    }
}

impl FromIterator<Arc<Allocation>> for AllocSet {
    fn from_iter<T: IntoIterator<Item = Arc<Allocation>>>(iter: T) -> Self {
        let mut s = AllocSet::new();
        for a in iter {
            s.insert(a);
        }
        s
    }
}

/// Tracks which name indexes of a group are taken (Nomad's `AllocNameIndex`),
/// so placements get free names and scale-downs stop the highest ones.
#[derive(Debug, Clone)]
pub struct AllocNameIndex {
    job: String,
    group: String,
    count: u32,
    /// Taken indexes (Nomad's bitmap).
    taken: BTreeSet<u32>,
    /// Indexes taken more than once, and how many extra times.
    duplicates: BTreeMap<u32, u32>,
}

impl AllocNameIndex {
    /// An index seeded with the names of `allocs` (`newAllocNameIndex`).
    pub fn new(job: &str, group: &str, count: u32, allocs: &AllocSet) -> Self {
        let (taken, duplicates) = taken_indexes(allocs);
        AllocNameIndex {
            job: job.to_string(),
            group: group.to_string(),
            count,
            taken,
            duplicates,
        }
    }

    fn name(&self, idx: u32) -> String {
        alloc_name(&self.job, &self.group, idx)
    }

    /// Takes the `n` highest taken indexes off the index and returns their
    /// names (`Highest`).
    pub fn highest(&mut self, n: usize) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        while out.len() < n {
            let Some(idx) = self.taken.pop_last() else {
                break;
            };
            out.insert(self.name(idx));
        }
        out
    }

    /// Whether `idx` is taken more than once (`IsDuplicate`).
    pub fn is_duplicate(&self, idx: u32) -> bool {
        self.duplicates.get(&idx).is_some_and(|n| *n > 0)
    }

    /// Frees one use of `idx` (`UnsetIndex`).
    pub fn unset_index(&mut self, idx: u32) {
        if let Some(n) = self.duplicates.get_mut(&idx) {
            *n -= 1;
            if *n == 0 {
                self.duplicates.remove(&idx);
            }
        } else {
            self.taken.remove(&idx);
        }
    }

    /// Free indexes below `count`, ascending.
    fn free_below_count(&self) -> Vec<u32> {
        (0..self.count)
            .filter(|i| !self.taken.contains(i))
            .collect()
    }

    /// Names for `n` canaries (`NextCanaries`): first the names of
    /// destructive updates, then free names, then names past `count`; never
    /// the name of an existing canary.
    pub fn next_canaries(
        &mut self,
        n: usize,
        existing: &AllocSet,
        destructive: &AllocSet,
    ) -> Vec<String> {
        let mut next = Vec::with_capacity(n);
        if n == 0 {
            return next;
        }
        let existing_names = existing.name_set();
        let (dtaken, _) = taken_indexes(destructive);
        for idx in dtaken.into_iter().filter(|i| *i < self.count) {
            let name = self.name(idx);
            if !existing_names.contains(&name) {
                next.push(name);
                self.taken.insert(idx);
                if next.len() == n {
                    return next;
                }
            }
        }
        for idx in self.free_below_count() {
            let name = self.name(idx);
            if !existing_names.contains(&name) {
                next.push(name);
                self.taken.insert(idx);
                if next.len() == n {
                    return next;
                }
            }
        }
        let remainder = (n - next.len()) as u32;
        for i in self.count..self.count + remainder {
            next.push(self.name(i));
        }
        next
    }

    /// Names for `n` new allocs (`Next`): free indexes below `count`, then
    /// (as Nomad does) indexes from 0 again.
    pub fn next(&mut self, n: usize) -> Vec<String> {
        let mut next = Vec::with_capacity(n);
        if n == 0 {
            return next;
        }
        for idx in self.free_below_count() {
            next.push(self.name(idx));
            self.taken.insert(idx);
            if next.len() == n {
                return next;
            }
        }
        let remainder = (n - next.len()) as u32;
        for i in 0..remainder {
            next.push(self.name(i));
            self.taken.insert(i);
        }
        next
    }
}

/// The taken indexes of a set and the duplicate counts (`bitmapFrom`).
fn taken_indexes(allocs: &AllocSet) -> (BTreeSet<u32>, BTreeMap<u32, u32>) {
    let mut taken = BTreeSet::new();
    let mut duplicates = BTreeMap::new();
    for a in allocs.iter() {
        let idx = a.name_index();
        if !taken.insert(idx) {
            *duplicates.entry(idx).or_insert(0) += 1;
        }
    }
    (taken, duplicates)
}

#[cfg(test)]
mod tests {
    //! Ported from Nomad's `scheduler/reconciler/allocs_test.go`.
    use super::*;

    fn set(names: &[(&str, &str)]) -> AllocSet {
        names
            .iter()
            .map(|(id, name)| {
                Arc::new(Allocation {
                    id: id.to_string(),
                    name: name.to_string(),
                    job_id: "example".into(),
                    task_group: "cache".into(),
                    ..Default::default()
                })
            })
            .collect()
    }

    fn three() -> AllocSet {
        set(&[
            ("6b25", "example.cache[0]"),
            ("e247", "example.cache[1]"),
            ("d784", "example.cache[2]"),
        ])
    }

    fn names(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// `Test_allocNameIndex_Highest`.
    #[test]
    fn name_index_highest() {
        let mut idx = AllocNameIndex::new("example", "cache", 3, &three());
        assert_eq!(idx.highest(1), names(&["example.cache[2]"]), "select 1");
        let mut idx = AllocNameIndex::new("example", "cache", 3, &three());
        assert_eq!(
            idx.highest(3),
            names(&["example.cache[0]", "example.cache[1]", "example.cache[2]"]),
            "select all"
        );
        let mut idx = AllocNameIndex::new("example", "cache", 3, &three());
        assert_eq!(
            idx.highest(13),
            names(&["example.cache[0]", "example.cache[1]", "example.cache[2]"]),
            "select too many"
        );
    }

    /// `Test_allocNameIndex_NextCanaries` ("single canary").
    #[test]
    fn name_index_next_canaries() {
        let mut idx = AllocNameIndex::new("example", "cache", 3, &three());
        let got = idx.next_canaries(1, &AllocSet::new(), &three());
        assert_eq!(got, vec!["example.cache[0]".to_string()]);
    }

    /// `Test_allocNameIndex_Next`.
    #[test]
    fn name_index_next() {
        let mut idx = AllocNameIndex::new("example", "cache", 3, &AllocSet::new());
        assert_eq!(
            idx.next(3),
            vec!["example.cache[0]", "example.cache[1]", "example.cache[2]"],
            "empty bitmap"
        );
        let mut idx = AllocNameIndex::new("example", "cache", 3, &three());
        let got: BTreeSet<String> = idx.next(3).into_iter().collect();
        assert_eq!(
            got,
            names(&["example.cache[0]", "example.cache[1]", "example.cache[2]"]),
            "full bitmap"
        );
    }

    /// `Test_allocNameIndex_Duplicates`.
    #[test]
    fn name_index_duplicates() {
        let input = set(&[
            ("6b25", "example.cache[0]"),
            ("e247", "example.cache[1]"),
            ("d784", "example.cache[2]"),
            ("76a6", "example.cache[0]"),
        ]);
        let mut idx = AllocNameIndex::new("example", "cache", 4, &input);
        assert_eq!(idx.duplicates.len(), 1);
        assert!(idx.is_duplicate(0));
        // Unsetting removes the duplicate entry but keeps the index taken.
        idx.unset_index(0);
        assert!(idx.duplicates.is_empty());
        assert!(idx.taken.contains(&0));
        assert_eq!(idx.next(1), vec!["example.cache[3]".to_string()]);
    }

    /// `TestBitmapFrom`: a name past the count is still taken.
    #[test]
    fn taken_indexes_beyond_count() {
        let input = set(&[("8", "foo.bar[8]")]);
        let (taken, dups) = taken_indexes(&input);
        assert!(taken.contains(&8));
        assert!(dups.is_empty());
    }

    #[test]
    fn set_algebra() {
        let a = three();
        let b = set(&[("e247", "other[1]"), ("zzzz", "example.cache[9]")]);
        assert_eq!(
            a.difference(&[&b]).ids().cloned().collect::<Vec<_>>(),
            vec!["6b25", "d784"]
        );
        let u = a.union(&[&b]);
        assert_eq!(u.len(), 4);
        assert_eq!(
            u.get("e247").map(|x| x.name.as_str()),
            Some("other[1]"),
            "later set wins"
        );
        let up = a.update(&b);
        assert_eq!(up.len(), 3, "update adds nothing new");
        assert_eq!(up.get("e247").map(|x| x.name.as_str()), Some("other[1]"));
        let order: Vec<String> = a.name_order().iter().map(|x| x.name.clone()).collect();
        assert_eq!(
            order,
            vec!["example.cache[0]", "example.cache[1]", "example.cache[2]"]
        );
    }
}
