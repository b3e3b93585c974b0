//! Sets of allocations keyed by ID, and the alloc name index; after Nomad's
//! `scheduler/reconciler/allocs.go`.
//!
//! Nomad's `allocSet` is a Go map, so its iteration order is random; ours is
//! a vector kept sorted by alloc ID, so every walk is in ID order and the
//! reconciler's output never depends on a hash. Being sorted, two sets
//! combine (difference, union, update) in one merge pass, and cloning a set
//! only copies pointers and bumps reference counts.

use crate::model::{Allocation, ClientStatus};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// A set of allocations keyed by ID (Nomad's `allocSet`).
///
/// Two sets are equal when they hold the same IDs.
#[derive(Debug, Clone, Default)]
pub struct AllocSet(Vec<Rc<Allocation>>);

impl PartialEq for AllocSet {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.ids().eq(other.ids())
    }
}

impl AllocSet {
    /// An empty set.
    pub fn new() -> Self {
        AllocSet(Vec::new())
    }
    fn position(&self, id: &str) -> Result<usize, usize> {
        if id.is_empty() {
            // The empty ID sorts first (an alloc's empty `NextAllocation`
            // is looked up often): only the first slot can hold it.
            return match self.0.first() {
                Some(a) if a.id.is_empty() => Ok(0),
                _ => Err(0),
            };
        }
        self.0.binary_search_by(|a| a.id.as_str().cmp(id))
    }
    /// Adds or replaces an alloc.
    pub fn insert(&mut self, alloc: Rc<Allocation>) {
        // Sets are mostly built in ID order: appending is the common case.
        if self.0.last().is_none_or(|last| last.id < alloc.id) {
            self.0.push(alloc);
            return;
        }
        match self.position(&alloc.id) {
            Ok(i) => self.0[i] = alloc,
            Err(i) => self.0.insert(i, alloc),
        }
    }
    /// Appends an alloc whose ID is greater than every ID in the set (the
    /// caller walks another set in order).
    pub(crate) fn push_ordered(&mut self, alloc: Rc<Allocation>) {
        debug_assert!(self.0.last().is_none_or(|last| last.id < alloc.id));
        self.0.push(alloc);
    }
    /// An empty set with room for `n` allocs.
    pub(crate) fn with_capacity(n: usize) -> Self {
        AllocSet(Vec::with_capacity(n))
    }
    /// Removes the alloc with this ID.
    pub fn remove(&mut self, id: &str) -> Option<Rc<Allocation>> {
        self.position(id).ok().map(|i| self.0.remove(i))
    }
    /// The alloc with this ID.
    pub fn get(&self, id: &str) -> Option<&Rc<Allocation>> {
        self.position(id).ok().map(|i| &self.0[i])
    }
    /// Whether the set holds this ID.
    pub fn contains(&self, id: &str) -> bool {
        self.position(id).is_ok()
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
    pub fn iter(&self) -> impl Iterator<Item = &Rc<Allocation>> {
        self.0.iter()
    }
    /// The IDs in order.
    pub fn ids(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|a| &a.id)
    }
    /// The allocs not in any of `others` (`difference`).
    pub fn difference(&self, others: &[&AllocSet]) -> AllocSet {
        let others: Vec<&AllocSet> = others.iter().copied().filter(|o| !o.is_empty()).collect();
        if others.is_empty() {
            return self.clone();
        }
        // One cursor per other set, advanced in step with this set.
        let mut cursors = vec![0usize; others.len()];
        let mut out = Vec::with_capacity(self.0.len());
        for a in &self.0 {
            let mut found = false;
            for (o, c) in others.iter().zip(cursors.iter_mut()) {
                while *c < o.0.len() && id_cmp(&o.0[*c], a).is_lt() {
                    *c += 1;
                }
                if *c < o.0.len() && id_cmp(&o.0[*c], a).is_eq() {
                    found = true;
                }
            }
            if !found {
                out.push(Rc::clone(a));
            }
        }
        AllocSet(out)
    }
    /// This set plus `others`; later sets win on equal IDs (`union`).
    pub fn union(&self, others: &[&AllocSet]) -> AllocSet {
        let mut out = self.clone();
        for other in others {
            out = merge(&out.0, &other.0, true);
        }
        out
    }
    /// The allocs of this set whose IDs are in `keys` (`fromKeys`).
    pub fn from_keys<'a>(&self, keys: impl IntoIterator<Item = &'a String>) -> AllocSet {
        let mut out = AllocSet::new();
        for k in keys {
            if let Some(a) = self.get(k) {
                out.insert(Rc::clone(a));
            }
        }
        out
    }
    /// This set with the allocs of `other` replacing those of equal ID
    /// (`update`); allocs only in `other` are not added.
    pub fn update(&self, other: &AllocSet) -> AllocSet {
        merge(&self.0, &other.0, false)
    }
    /// The allocs sorted by name index (`nameOrder`); ties stay in ID order.
    pub fn name_order(&self) -> Vec<Rc<Allocation>> {
        let mut v: Vec<(u32, &Rc<Allocation>)> =
            self.0.iter().map(|a| (name_index(a), a)).collect();
        // Stable: equal indexes keep ID order.
        v.sort_by_key(|(i, _)| *i);
        v.into_iter().map(|(_, a)| Rc::clone(a)).collect()
    }
    /// The set of names (`nameSet`).
    pub fn name_set(&self) -> BTreeSet<String> {
        self.iter().map(|a| a.name.clone()).collect()
    }
    /// The allocs matching `keep`.
    pub fn filter(&self, keep: impl Fn(&Allocation) -> bool) -> AllocSet {
        AllocSet(self.0.iter().filter(|a| keep(a)).cloned().collect())
    }
    /// Splits the set into the allocs matching `pred` and the others.
    pub fn partition(&self, pred: impl Fn(&Allocation) -> bool) -> (AllocSet, AllocSet) {
        let (yes, no) = self.0.iter().cloned().partition(|a| pred(a));
        (AllocSet(yes), AllocSet(no))
    }
    /// Removes the allocs whose IDs are in `other`, in place.
    pub fn remove_all(&mut self, other: &AllocSet) {
        if other.is_empty() || self.is_empty() {
            return;
        }
        if few(other, self) {
            // Find `other`'s allocs by search, then drop those slots in
            // one pass that does not read the allocs.
            let gone: Vec<usize> = self
                .slots_of(other)
                .into_iter()
                .filter_map(Result::ok)
                .collect();
            let (mut k, mut i) = (0, 0);
            self.0.retain(|_| {
                let drop = gone.get(k) == Some(&i);
                k += usize::from(drop);
                i += 1;
                !drop
            });
            return;
        }
        let mut c = 0;
        self.0.retain(|a| {
            while c < other.0.len() && id_cmp(&other.0[c], a).is_lt() {
                c += 1;
            }
            !(c < other.0.len() && id_cmp(&other.0[c], a).is_eq())
        });
    }
    /// Adds the allocs of `other`, replacing those of equal ID, in place.
    pub fn union_with(&mut self, other: &AllocSet) {
        if other.is_empty() {
            return;
        }
        if few(other, self) {
            // Find where `other`'s allocs go by search, then splice them
            // in, moving this set's allocs without reading them.
            let slots = self.slots_of(other);
            let mut mine = std::mem::take(&mut self.0).into_iter();
            let mut out = Vec::with_capacity(mine.len() + other.0.len());
            let mut next = 0;
            for (slot, b) in slots.into_iter().zip(&other.0) {
                let (at, replaced) = match slot {
                    Ok(i) => (i, true),
                    Err(i) => (i, false),
                };
                out.extend(mine.by_ref().take(at - next));
                next = at;
                if replaced {
                    mine.next();
                    next += 1;
                }
                out.push(Rc::clone(b));
            }
            out.extend(mine);
            self.0 = out;
            return;
        }
        let mine = std::mem::take(&mut self.0);
        let mut out = Vec::with_capacity(mine.len() + other.0.len());
        let mut theirs = other.0.iter().peekable();
        for a in mine {
            while let Some(b) = theirs.next_if(|b| id_cmp(b, &a).is_lt()) {
                out.push(Rc::clone(b));
            }
            match theirs.next_if(|b| id_cmp(b, &a).is_eq()) {
                Some(b) => out.push(Rc::clone(b)),
                None => out.push(a),
            }
        }
        out.extend(theirs.cloned());
        self.0 = out;
    }
    /// Splits the set into the allocs matching `pred` and the others,
    /// without copying it.
    pub fn into_partition(self, pred: impl Fn(&Allocation) -> bool) -> (AllocSet, AllocSet) {
        let (yes, no) = self.0.into_iter().partition(|a| pred(a));
        (AllocSet(yes), AllocSet(no))
    }
    /// Keeps only the allocs matching `keep`, in place.
    pub fn retain(&mut self, mut keep: impl FnMut(&Allocation) -> bool) {
        self.0.retain(|a| keep(a));
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
        self.partition(|a| a.deployment_id == id)
    }
}

impl AllocSet {
    /// Where each alloc of `other` is in this set, in `other`'s order:
    /// `Ok(i)` when slot `i` holds its ID, `Err(i)` when it would go before
    /// slot `i`. Each search gallops from the previous one's slot, so a
    /// few allocs spread over a large set cost a few comparisons each.
    fn slots_of(&self, other: &AllocSet) -> Vec<Result<usize, usize>> {
        let mut from = 0;
        other
            .0
            .iter()
            .map(|b| {
                let slot = gallop(&self.0, from, b);
                from = match slot {
                    Ok(i) => i + 1,
                    Err(i) => i,
                };
                slot
            })
            .collect()
    }
}

/// Whether `small` is small enough next to `large` that searching `large`
/// for each of its allocs ([`AllocSet::slots_of`]) beats a merge walk.
fn few(small: &AllocSet, large: &AllocSet) -> bool {
    small.len().saturating_mul(8) <= large.len()
}

/// The slot of `b`'s ID in `s[from..]` (as `binary_search` answers, offset
/// by `from`), when `s[..from]` sorts before it: probes `from`, `from + 1`,
/// `from + 3`, … until one sorts at or after `b`, then searches between.
fn gallop(s: &[Rc<Allocation>], from: usize, b: &Rc<Allocation>) -> Result<usize, usize> {
    let (mut lo, mut hi, mut step) = (from, from, 1);
    while hi < s.len() && id_cmp(&s[hi], b).is_lt() {
        lo = hi + 1;
        hi = lo + step;
        step *= 2;
    }
    let end = hi.saturating_add(1).min(s.len());
    match s[lo..end].binary_search_by(|a| id_cmp(a, b)) {
        Ok(i) => Ok(lo + i),
        Err(i) => Err(lo + i),
    }
}

/// Compares two allocs by ID; the same alloc is equal without comparing.
fn id_cmp(a: &Rc<Allocation>, b: &Rc<Allocation>) -> Ordering {
    if Rc::ptr_eq(a, b) {
        Ordering::Equal
    } else {
        a.id.cmp(&b.id)
    }
}

/// Merges two ID-sorted runs; on equal IDs `b`'s alloc wins. With `add`
/// false, allocs only in `b` are left out.
fn merge(a: &[Rc<Allocation>], b: &[Rc<Allocation>], add: bool) -> AllocSet {
    if b.is_empty() {
        return AllocSet(a.to_vec());
    }
    if a.is_empty() && add {
        return AllocSet(b.to_vec());
    }
    let mut out = Vec::with_capacity(a.len() + if add { b.len() } else { 0 });
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match id_cmp(&a[i], &b[j]) {
            Ordering::Less => {
                out.push(Rc::clone(&a[i]));
                i += 1;
            }
            Ordering::Greater => {
                if add {
                    out.push(Rc::clone(&b[j]));
                }
                j += 1;
            }
            Ordering::Equal => {
                out.push(Rc::clone(&b[j]));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend(a[i..].iter().cloned());
    if add {
        out.extend(b[j..].iter().cloned());
    }
    AllocSet(out)
}

impl IntoIterator for AllocSet {
    type Item = Rc<Allocation>;
    type IntoIter = std::vec::IntoIter<Rc<Allocation>>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl FromIterator<Rc<Allocation>> for AllocSet {
    /// Collects allocs in any order; on equal IDs the later alloc wins.
    fn from_iter<T: IntoIterator<Item = Rc<Allocation>>>(iter: T) -> Self {
        let mut v: Vec<Rc<Allocation>> = iter.into_iter().collect();
        if !v.is_sorted_by(|a, b| a.id < b.id) {
            // Stable, so equal IDs keep their order and the last one stays.
            v.sort_by(|a, b| a.id.cmp(&b.id));
            v.reverse();
            v.dedup_by(|later, earlier| later.id == earlier.id);
            v.reverse();
        }
        AllocSet(v)
    }
}

/// Tracks which name indexes of a group are taken (Nomad's `AllocNameIndex`),
/// so placements get free names and scale-downs stop the highest ones.
#[derive(Debug, Clone)]
pub struct AllocNameIndex {
    /// The names' common start, `<job>.<group>[`.
    prefix: String,
    count: u32,
    /// Taken indexes (Nomad's bitmap).
    taken: Taken,
    /// Indexes taken more than once, and how many extra times.
    duplicates: BTreeMap<u32, u32>,
}

impl AllocNameIndex {
    /// An index seeded with the names of `allocs` (`newAllocNameIndex`).
    pub fn new(job: &str, group: &str, count: u32, allocs: &AllocSet) -> Self {
        Self::from_indexes(job, group, count, allocs.iter().map(|a| name_index(a)))
    }

    /// An index seeded with these name indexes (one per alloc).
    pub(crate) fn from_indexes(
        job: &str,
        group: &str,
        count: u32,
        indexes: impl IntoIterator<Item = u32>,
    ) -> Self {
        // `alloc_name`'s format, up to the index.
        let mut prefix = String::with_capacity(job.len() + group.len() + 2);
        prefix.push_str(job);
        prefix.push('.');
        prefix.push_str(group);
        prefix.push('[');
        let mut index = AllocNameIndex {
            prefix,
            count,
            taken: Taken::with_capacity(count),
            duplicates: BTreeMap::new(),
        };
        for idx in indexes {
            index.take(idx);
        }
        index
    }

    /// Seeds one more alloc's name index (a repeat counts as a duplicate).
    #[inline]
    pub(crate) fn take(&mut self, idx: u32) {
        if !self.taken.insert(idx) {
            *self.duplicates.entry(idx).or_insert(0) += 1;
        }
    }

    /// The name with index `idx` ([`crate::model::alloc_name`]), written from the
    /// common start without formatting.
    fn name(&self, idx: u32) -> String {
        let mut digits = [0u8; 10];
        let (mut at, mut rest) = (digits.len(), idx);
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        let mut name = String::with_capacity(self.prefix.len() + digits.len() - at + 1);
        name.push_str(&self.prefix);
        name.extend(digits[at..].iter().map(|d| char::from(*d)));
        name.push(']');
        debug_assert_eq!(name, format!("{}{idx}]", self.prefix));
        name
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

    /// The first free index in `from..count`.
    fn next_free(&self, from: u32) -> Option<u32> {
        (from..self.count).find(|i| !self.taken.contains(i))
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
        for idx in dtaken.iter().filter(|i| *i < self.count) {
            let name = self.name(idx);
            if !existing_names.contains(&name) {
                next.push(name);
                self.taken.insert(idx);
                if next.len() == n {
                    return next;
                }
            }
        }
        let mut from = 0;
        while let Some(idx) = self.next_free(from) {
            from = idx + 1;
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
        for i in self.count..self.count.saturating_add(remainder) {
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
        let mut from = 0;
        while let Some(idx) = self.next_free(from) {
            from = idx + 1;
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

/// [`Allocation::name_index`], with a fast path for the usual name that
/// ends in `[<1 to 9 digits>]` (read from the end, no search for `[`).
pub(crate) fn name_index(a: &Allocation) -> u32 {
    if let [head @ .., b']'] = a.name.as_bytes() {
        let (mut n, mut scale, mut digits) = (0u32, 1u32, 0);
        for &c in head.iter().rev() {
            match c {
                b'0'..=b'9' if digits < 9 => {
                    n += u32::from(c - b'0') * scale;
                    scale = scale.wrapping_mul(10);
                    digits += 1;
                }
                b'[' if digits > 0 => return n,
                _ => break,
            }
        }
    }
    a.name_index()
}

/// Taken name indexes: a bitmap up to a bound, a sorted set above it (so a
/// huge index in a name cannot make a huge bitmap).
#[derive(Debug, Clone, Default)]
struct Taken {
    bits: Vec<u64>,
    high: BTreeSet<u32>,
}

/// The largest bitmap [`Taken`] makes, in bits.
const TAKEN_BITMAP_MAX: u32 = 1 << 20;

impl Taken {
    fn with_capacity(count: u32) -> Self {
        let bits = count.clamp(64, TAKEN_BITMAP_MAX).div_ceil(64) as usize;
        Taken {
            bits: vec![0; bits],
            high: BTreeSet::new(),
        }
    }
    fn limit(&self) -> u32 {
        (self.bits.len() * 64) as u32
    }
    /// Adds `i`; false when it was already there.
    fn insert(&mut self, i: u32) -> bool {
        if i >= self.limit() {
            return self.high.insert(i);
        }
        let (w, b) = ((i / 64) as usize, 1u64 << (i % 64));
        let fresh = self.bits[w] & b == 0;
        self.bits[w] |= b;
        fresh
    }
    fn remove(&mut self, i: &u32) {
        if *i >= self.limit() {
            self.high.remove(i);
        } else {
            self.bits[(*i / 64) as usize] &= !(1u64 << (*i % 64));
        }
    }
    fn contains(&self, i: &u32) -> bool {
        if *i >= self.limit() {
            self.high.contains(i)
        } else {
            self.bits[(*i / 64) as usize] & (1u64 << (*i % 64)) != 0
        }
    }
    fn pop_last(&mut self) -> Option<u32> {
        if let Some(i) = self.high.pop_last() {
            return Some(i);
        }
        let w = self.bits.iter().rposition(|w| *w != 0)?;
        let b = 63 - self.bits[w].leading_zeros();
        self.bits[w] &= !(1u64 << b);
        Some(w as u32 * 64 + b)
    }
    /// The indexes in ascending order.
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let low = self.bits.iter().enumerate().flat_map(|(w, bits)| {
            (0..64u32)
                .filter(move |b| bits & (1u64 << b) != 0)
                .map(move |b| w as u32 * 64 + b)
        });
        low.chain(self.high.iter().copied())
    }
}

/// The taken indexes of a set and the duplicate counts (`bitmapFrom`).
fn taken_indexes(allocs: &AllocSet) -> (Taken, BTreeMap<u32, u32>) {
    let mut taken = Taken::with_capacity(allocs.len() as u32);
    let mut duplicates = BTreeMap::new();
    for a in allocs.iter() {
        let idx = name_index(a);
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
                Rc::new(Allocation {
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

    /// Names are written as the model formats them, at any index width.
    #[test]
    fn name_index_names_match_the_model() {
        let idx = AllocNameIndex::new("web", "api.v2", 0, &AllocSet::new());
        for i in [0, 7, 10, 99, 100, 12345, u32::MAX] {
            assert_eq!(idx.name(i), crate::model::alloc_name("web", "api.v2", i));
        }
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

    /// The fast name-index parse agrees with the model's on usual and odd names.
    #[test]
    fn name_index_fast_path_matches_model() {
        for name in [
            "web.web[0]",
            "a[123456789]",
            "a[1234567890]",
            "a[4294967295]",
            "a[99999999999]",
            "a[007]",
            "a[]",
            "a]",
            "[5]",
            "x[1]y[2]",
            "x[2]]",
            "a[12a]",
            "a[ 1]",
            "a[-1]",
            "",
            "noindex",
            "é[3]",
        ] {
            let a = Allocation {
                name: name.into(),
                ..Default::default()
            };
            assert_eq!(
                name_index(&a),
                crate::model::alloc_name_index(name),
                "{name}"
            );
        }
    }

    /// `TestBitmapFrom`: a name past the count is still taken.
    #[test]
    fn taken_indexes_beyond_count() {
        let input = set(&[("8", "foo.bar[8]")]);
        let (taken, dups) = taken_indexes(&input);
        assert!(taken.contains(&8));
        assert!(dups.is_empty());
    }

    /// `remove_all` and `union_with` agree with a map-based reference,
    /// both when `other` is small next to the set (slots found by search)
    /// and when it is not (merge walk).
    #[test]
    fn set_updates_match_reference() {
        let mut x: u64 = 11;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let mut make = |n: usize, space: u64, tag: &str| -> AllocSet {
            (0..n)
                .map(|_| {
                    let i = next(space);
                    Rc::new(Allocation {
                        id: format!("{:0w$}", i, w = (i % 3) as usize + 1),
                        name: format!("example.cache[{}]", i % 50),
                        node_id: tag.to_string(),
                        ..Default::default()
                    })
                })
                .collect()
        };
        let reference = |s: &AllocSet| -> Vec<(String, String)> {
            s.iter()
                .map(|a| (a.id.clone(), a.node_id.clone()))
                .collect()
        };
        for (n, m, space) in [
            (200, 3, 400),
            (200, 25, 300),
            (200, 60, 250),
            (50, 50, 80),
            (10, 0, 20),
            (0, 5, 20),
            (300, 1, 5),
        ] {
            let big = make(n, space, "big");
            let small = make(m, space, "small");
            let mut removed = big.clone();
            removed.remove_all(&small);
            let mut want = BTreeMap::new();
            for a in big.iter() {
                want.insert(a.id.clone(), a.node_id.clone());
            }
            for a in small.iter() {
                want.remove(&a.id);
            }
            let want: Vec<_> = want.into_iter().collect();
            assert_eq!(reference(&removed), want, "remove_all {n} {m}");

            let mut joined = big.clone();
            joined.union_with(&small);
            let mut want = BTreeMap::new();
            for a in big.iter().chain(small.iter()) {
                want.insert(a.id.clone(), a.node_id.clone());
            }
            let want: Vec<_> = want.into_iter().collect();
            assert_eq!(reference(&joined), want, "union_with {n} {m}");
            assert_eq!(reference(&big.union(&[&small])), want, "union {n} {m}");
        }
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
