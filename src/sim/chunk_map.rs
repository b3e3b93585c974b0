//! A sorted map whose clones share structure, for the state store's big
//! tables. The entries live in sorted chunks of a few dozen behind `Rc`s:
//! cloning the map copies one pointer per chunk, and a write copies only
//! the chunk it touches, and only while another clone still shares it.
//!
//! The history keeps a clone of the whole world every few steps
//! ([`super::history`]); with the tables in these maps, those clones share
//! every chunk the steps in between left alone. Each entry of a map sits
//! behind its own `Rc` too, so a chunk copied for one write shares the
//! other entries (their keys and values) instead of copying them. A lookup
//! is two binary searches over the keys' first eight bytes ([`SortKey`]),
//! kept as numbers beside the entries (each chunk's first in a flat list,
//! each entry's in its chunk's slot) and searched as plain numbers; only
//! the keys whose first bytes match the key's are read; iteration is in
//! key order.
//! [`ChunkVec`] does the same for an append-only list; both keep their
//! items in one chunk core.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

/// A key a [`ChunkMap`] can order by a number first: its prefix, ordered
/// as the keys are (two keys whose prefixes differ compare as their
/// prefixes do), so that a lookup compares most keys without reading them
/// whole (the maps' keys are IDs whose first bytes mostly differ).
pub trait SortKey: Ord {
    /// The key's first eight bytes as a big-endian number (zero-padded).
    fn prefix(&self) -> u64;

    /// How the key compares with `other` when their prefixes are equal
    /// (what a key knows then may spare reading them whole).
    fn cmp_same_prefix(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
}

impl SortKey for str {
    fn prefix(&self) -> u64 {
        let bytes = self.as_bytes();
        match bytes.first_chunk::<8>() {
            Some(head) => u64::from_be_bytes(*head),
            // A short key, byte by byte (a copy of a length known only
            // here would call `memcpy` for every key compared).
            None => bytes
                .iter()
                .zip((0..8).rev())
                .fold(0, |prefix, (byte, place)| {
                    prefix | u64::from(*byte) << (8 * place)
                }),
        }
    }

    fn cmp_same_prefix(&self, other: &str) -> Ordering {
        // Equal prefixes: the first eight bytes agree, a key shorter than
        // eight being zero-padded, so the shorter of two keys one of which
        // is that short is the other's start (ordered by length: the
        // eight-byte IDs of a cluster compare without reading their
        // bytes), and two longer keys differ only after their eighth byte.
        let (key, other) = (self.as_bytes(), other.as_bytes());
        match (key.get(8..), other.get(8..)) {
            (Some(rest), Some(other_rest)) if !rest.is_empty() && !other_rest.is_empty() => {
                rest.cmp(other_rest)
            }
            _ => key.len().cmp(&other.len()),
        }
    }
}

impl SortKey for String {
    fn prefix(&self) -> u64 {
        self.as_str().prefix()
    }

    fn cmp_same_prefix(&self, other: &Self) -> Ordering {
        self.as_str().cmp_same_prefix(other)
    }
}

impl SortKey for u64 {
    fn prefix(&self) -> u64 {
        *self
    }
}

/// How `entry`, whose prefix is `entry_prefix`, compares with `key`,
/// whose prefix is `prefix`: by the prefixes, then by the rest only when
/// they are equal.
fn order_by_prefix<Q: SortKey + ?Sized>(
    entry_prefix: u64,
    entry: &Q,
    prefix: u64,
    key: &Q,
) -> Ordering {
    entry_prefix
        .cmp(&prefix)
        .then_with(|| entry.cmp_same_prefix(key))
}

/// Where the key whose prefix is `prefix` is among `items`, sorted by
/// their keys, whose prefixes `prefix_of` gives: `Ok` with its index, or
/// `Err` with where it would go. `rest_order` tells how the key of the
/// item at an index compares with it when their prefixes are equal
/// ([`SortKey::cmp_same_prefix`]). The search runs over the prefixes as
/// plain numbers, without a branch per step; only the items whose prefix
/// equals the key's are compared further (one, for keys whose prefixes
/// differ).
fn locate<T>(
    items: &[T],
    prefix_of: impl Fn(&T) -> u64,
    prefix: u64,
    rest_order: impl Fn(usize) -> Ordering,
) -> Result<usize, usize> {
    let first_equal = items.partition_point(|item| prefix_of(item) < prefix);
    let ties = |index: usize| {
        items
            .get(index)
            .is_some_and(|item| prefix_of(item) == prefix)
    };
    if !ties(first_equal) {
        return Err(first_equal);
    }
    if ties(first_equal + 1) {
        return locate_among_ties(items, prefix_of, prefix, rest_order, first_equal);
    }
    // The only item sharing the key's prefix.
    match rest_order(first_equal) {
        Ordering::Less => Err(first_equal + 1),
        Ordering::Equal => Ok(first_equal),
        Ordering::Greater => Err(first_equal),
    }
}

/// [`locate`] where several items share the key's prefix, the first of
/// them at `first_equal`: a binary search by the rest over the items from
/// it on (those past the shared prefix compare as above the key).
fn locate_among_ties<T>(
    items: &[T],
    prefix_of: impl Fn(&T) -> u64,
    prefix: u64,
    rest_order: impl Fn(usize) -> Ordering,
    first_equal: usize,
) -> Result<usize, usize> {
    let (mut low, mut high) = (first_equal, items.len());
    while low < high {
        let mid = low + (high - low) / 2;
        let order = if prefix_of(&items[mid]) == prefix {
            rest_order(mid)
        } else {
            Ordering::Greater
        };
        match order {
            Ordering::Less => low = mid + 1,
            Ordering::Greater => high = mid,
            Ordering::Equal => return Ok(mid),
        }
    }
    Err(low)
}

/// How the text `entry` compares with `key`, whose prefix
/// ([`SortKey::prefix`]) is `key_prefix`: by prefixes first, then by the
/// rest only when they are equal (for sorted lists of IDs outside a
/// [`ChunkMap`], which compute the key's prefix once per search).
pub fn compare_text(entry: &str, key_prefix: u64, key: &str) -> Ordering {
    order_by_prefix(entry.prefix(), entry, key_prefix, key)
}

/// Entries per chunk when a map is built; a chunk splits in two when it
/// grows past twice this.
const CHUNK: usize = 32;

/// The part [`ChunkMap`] and [`ChunkVec`] share: items in order, in chunks
/// behind `Rc`s (a clone copies one pointer per chunk), and their count.
struct Chunks<T> {
    chunks: Vec<Rc<Vec<T>>>,
    len: usize,
}

/// Every chunk's items in turn.
type ChunkItems<'a, T> = std::iter::FlatMap<
    std::slice::Iter<'a, Rc<Vec<T>>>,
    std::slice::Iter<'a, T>,
    fn(&'a Rc<Vec<T>>) -> std::slice::Iter<'a, T>,
>;

impl<T> Clone for Chunks<T> {
    fn clone(&self) -> Self {
        Chunks {
            chunks: self.chunks.clone(),
            len: self.len,
        }
    }
}

impl<T> Default for Chunks<T> {
    fn default() -> Self {
        Chunks {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Chunks<T> {
    /// The items in order.
    fn items<'a>(&'a self) -> ChunkItems<'a, T> {
        fn chunk_items<T>(chunk: &Rc<Vec<T>>) -> std::slice::Iter<'_, T> {
            chunk.iter()
        }
        let chunk_items: fn(&'a Rc<Vec<T>>) -> std::slice::Iter<'a, T> = chunk_items;
        self.chunks.iter().flat_map(chunk_items)
    }

    /// `items` in chunks of `per_chunk` (the last one possibly fewer).
    fn from_items(items: impl IntoIterator<Item = T>, per_chunk: usize) -> Self {
        let mut core = Chunks::default();
        let mut chunk = Vec::with_capacity(per_chunk);
        for item in items {
            chunk.push(item);
            core.len += 1;
            if chunk.len() == per_chunk {
                let full = std::mem::replace(&mut chunk, Vec::with_capacity(per_chunk));
                core.chunks.push(Rc::new(full));
            }
        }
        if !chunk.is_empty() {
            core.chunks.push(Rc::new(chunk));
        }
        core
    }

    /// Appends `item` to the last chunk, or to a new one (made with room
    /// for `per_chunk`) when the last holds `per_chunk` already.
    fn push_last(&mut self, item: T, per_chunk: usize)
    where
        T: Clone,
    {
        match self.chunks.last_mut() {
            Some(last) if last.len() < per_chunk => Rc::make_mut(last).push(item),
            _ => {
                let mut chunk = Vec::with_capacity(per_chunk);
                chunk.push(item);
                self.chunks.push(Rc::new(chunk));
            }
        }
        self.len += 1;
    }
}

impl<T: PartialEq> PartialEq for Chunks<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.items().eq(other.items())
    }
}

/// One entry of a [`ChunkMap`] in its chunk: the entry, shared, with its
/// key's prefix beside it, so that a lookup in a chunk compares prefixes
/// without reading the entries (only the entries whose prefix equals the
/// key's).
struct Slot<K, V> {
    /// The key's [`SortKey::prefix`].
    prefix: u64,
    /// The key and the value.
    entry: Rc<(K, V)>,
}

impl<K: SortKey, V> Slot<K, V> {
    /// A slot for a new entry.
    fn new(key: K, value: V) -> Self {
        Slot {
            prefix: key.prefix(),
            entry: Rc::new((key, value)),
        }
    }
}

impl<K, V> Clone for Slot<K, V> {
    fn clone(&self) -> Self {
        Slot {
            prefix: self.prefix,
            entry: Rc::clone(&self.entry),
        }
    }
}

/// Slots are equal when their entries are (the prefixes follow the keys).
impl<K: PartialEq, V: PartialEq> PartialEq for Slot<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.entry == other.entry
    }
}

/// A sorted map of chunks shared between clones (see the module docs).
pub struct ChunkMap<K, V> {
    /// Non-empty sorted chunks of slots of shared entries; every key of a
    /// chunk is below every key of the next one.
    core: Chunks<Slot<K, V>>,
    /// The prefix ([`SortKey::prefix`]) of each chunk's first key, in
    /// chunk order: a lookup finds its chunk in this flat list, reading a
    /// chunk's first key only where its prefix equals the key's.
    firsts: Vec<u64>,
}

/// The value of an entry taken out of a map: moved out when nothing else
/// shares the entry, else copied.
fn take_value<K, V: Clone>(entry: Rc<(K, V)>) -> V {
    Rc::try_unwrap(entry).map_or_else(|shared| shared.1.clone(), |(_, value)| value)
}

impl<K, V> Clone for ChunkMap<K, V> {
    fn clone(&self) -> Self {
        ChunkMap {
            core: self.core.clone(),
            firsts: self.firsts.clone(),
        }
    }
}

impl<K, V> Default for ChunkMap<K, V> {
    fn default() -> Self {
        ChunkMap {
            core: Chunks::default(),
            firsts: Vec::new(),
        }
    }
}

impl<K: SortKey, V> ChunkMap<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.core.len
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.core.len == 0
    }

    /// The chunk that holds `key` or would: the last one whose first key is
    /// not above it (the first chunk for a key below all).
    fn chunk_for<Q>(&self, key: &Q, prefix: u64) -> usize
    where
        K: Borrow<Q>,
        Q: SortKey + ?Sized,
    {
        // Only the chunks whose first prefix equals `prefix` have their
        // first keys read.
        let found = locate(
            &self.firsts,
            |first| *first,
            prefix,
            |chunk_idx| {
                self.core.chunks[chunk_idx][0]
                    .entry
                    .0
                    .borrow()
                    .cmp_same_prefix(key)
            },
        );
        found.unwrap_or_else(|above| above.saturating_sub(1))
    }

    /// Whether `firsts` holds each chunk's first prefix (for the tests).
    #[cfg(test)]
    fn firsts_agree(&self) -> bool {
        self.firsts == first_prefixes(&self.core)
    }

    /// The prefix of the first key of the chunk at `chunk_idx`.
    fn first_prefix(&self, chunk_idx: usize) -> u64 {
        self.core.chunks[chunk_idx][0].prefix
    }

    /// (chunk, position) of `key`, or (chunk, where it would go).
    fn search<Q>(&self, key: &Q) -> (usize, Result<usize, usize>)
    where
        K: Borrow<Q>,
        Q: SortKey + ?Sized,
    {
        let prefix = key.prefix();
        let chunk_idx = self.chunk_for(key, prefix);
        let position = self.core.chunks.get(chunk_idx).map_or(Err(0), |chunk| {
            locate(
                chunk,
                |slot| slot.prefix,
                prefix,
                |entry_idx| chunk[entry_idx].entry.0.borrow().cmp_same_prefix(key),
            )
        });
        (chunk_idx, position)
    }

    /// (chunk, position) of `key`.
    fn find<Q>(&self, key: &Q) -> Option<(usize, usize)>
    where
        K: Borrow<Q>,
        Q: SortKey + ?Sized,
    {
        let (chunk_idx, position) = self.search(key);
        position.ok().map(|entry_idx| (chunk_idx, entry_idx))
    }

    /// The value of `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: SortKey + ?Sized,
    {
        let (chunk_idx, entry_idx) = self.find(key)?;
        Some(&self.core.chunks[chunk_idx][entry_idx].entry.1)
    }

    /// The position of `key` in key order, if present.
    pub fn rank<Q>(&self, key: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
        Q: SortKey + ?Sized,
    {
        let (chunk_idx, entry_idx) = self.find(key)?;
        let before: usize = self.core.chunks[..chunk_idx].iter().map(|c| c.len()).sum();
        Some(before + entry_idx)
    }

    /// The entry at position `index` in key order.
    pub fn get_index(&self, mut index: usize) -> Option<(&K, &V)> {
        for chunk in &self.core.chunks {
            if index < chunk.len() {
                let entry = &chunk[index].entry;
                return Some((&entry.0, &entry.1));
            }
            index -= chunk.len();
        }
        None
    }

    /// Whether `key` is present.
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: SortKey + ?Sized,
    {
        self.find(key).is_some()
    }

    /// Entries in key order.
    pub fn iter(&self) -> Iter<'_, K, V> {
        self.into_iter()
    }

    /// Keys in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + Clone {
        self.iter().map(|(k, _)| k)
    }

    /// Values in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + Clone {
        self.iter().map(|(_, v)| v)
    }
}

impl<K: SortKey + Clone, V: Clone> ChunkMap<K, V> {
    /// The value of `key`, to change (copies its chunk if a clone shares it).
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: SortKey + ?Sized,
    {
        let (chunk_idx, entry_idx) = self.find(key)?;
        let chunk = Rc::make_mut(&mut self.core.chunks[chunk_idx]);
        Some(&mut Rc::make_mut(&mut chunk[entry_idx].entry).1)
    }

    /// Inserts or replaces; returns the old value.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if self.core.chunks.is_empty() {
            let slot = Slot::new(key, value);
            self.firsts.push(slot.prefix);
            self.core.chunks.push(Rc::new(vec![slot]));
            self.core.len = 1;
            return None;
        }
        let (chunk_idx, position) = self.search(&key);
        match position {
            Ok(entry_idx) => {
                let chunk = Rc::make_mut(&mut self.core.chunks[chunk_idx]);
                let old = std::mem::replace(&mut chunk[entry_idx].entry, Rc::new((key, value)));
                Some(take_value(old))
            }
            Err(entry_idx) => {
                self.insert_at(chunk_idx, entry_idx, key, value);
                None
            }
        }
    }

    /// Inserts or replaces the value of `key`, with one lookup; returns
    /// the old value. A stored entry takes the new value in place when no
    /// clone of the map shares it (its key is copied otherwise); `make_key`
    /// makes the key of a new entry only.
    pub fn put<Q>(&mut self, key: &Q, value: V, make_key: impl FnOnce() -> K) -> Option<V>
    where
        K: Borrow<Q>,
        Q: SortKey + ?Sized,
    {
        if self.core.chunks.is_empty() {
            return self.insert(make_key(), value);
        }
        let (chunk_idx, position) = self.search(key);
        match position {
            Ok(entry_idx) => {
                let chunk = Rc::make_mut(&mut self.core.chunks[chunk_idx]);
                let entry = &mut chunk[entry_idx].entry;
                Some(match Rc::get_mut(entry) {
                    Some((_, stored)) => std::mem::replace(stored, value),
                    None => {
                        let key = entry.0.clone();
                        take_value(std::mem::replace(entry, Rc::new((key, value))))
                    }
                })
            }
            Err(entry_idx) => {
                self.insert_at(chunk_idx, entry_idx, make_key(), value);
                None
            }
        }
    }

    /// Inserts a new entry at `entry_idx` of the chunk at `chunk_idx`
    /// (where [`ChunkMap::search`] placed its key), splitting the chunk
    /// when it grows past twice [`CHUNK`].
    fn insert_at(&mut self, chunk_idx: usize, entry_idx: usize, key: K, value: V) {
        let chunk = Rc::make_mut(&mut self.core.chunks[chunk_idx]);
        chunk.insert(entry_idx, Slot::new(key, value));
        self.core.len += 1;
        let split = chunk.len() > 2 * CHUNK;
        if split {
            let upper = chunk.split_off(chunk.len() / 2);
            self.core.chunks.insert(chunk_idx + 1, Rc::new(upper));
            self.firsts
                .insert(chunk_idx + 1, self.first_prefix(chunk_idx + 1));
        }
        if entry_idx == 0 {
            self.firsts[chunk_idx] = self.first_prefix(chunk_idx);
        }
    }

    /// The value of `key`, inserted by `make` first if absent.
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        if !self.contains_key(&key) {
            self.insert(key.clone(), make());
        }
        let (chunk_idx, entry_idx) = self.find(&key).expect("the key was just inserted");
        let chunk = Rc::make_mut(&mut self.core.chunks[chunk_idx]);
        &mut Rc::make_mut(&mut chunk[entry_idx].entry).1
    }

    /// Removes the first entry; returns it.
    pub fn pop_first(&mut self) -> Option<(K, V)> {
        let first = self.core.chunks.first_mut()?;
        let chunk = Rc::make_mut(first);
        let entry = chunk.remove(0).entry;
        self.removed_first(0);
        self.core.len -= 1;
        Some(Rc::try_unwrap(entry).unwrap_or_else(|shared| (*shared).clone()))
    }

    /// Keeps only the entries for which `keep` holds (copies only the
    /// chunks that lose entries).
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &V) -> bool) {
        let mut len = 0;
        for chunk in &mut self.core.chunks {
            // `keep` is asked once per entry, in key order.
            let kept: Vec<bool> = chunk
                .iter()
                .map(|slot| keep(&slot.entry.0, &slot.entry.1))
                .collect();
            if kept.contains(&false) {
                let mut verdicts = kept.into_iter();
                Rc::make_mut(chunk).retain(|_| verdicts.next().unwrap_or(true));
            }
            len += chunk.len();
        }
        self.core.chunks.retain(|chunk| !chunk.is_empty());
        self.core.len = len;
        self.firsts = first_prefixes(&self.core);
    }

    /// Removes `key`; returns its value.
    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: SortKey + ?Sized,
    {
        let (chunk_idx, entry_idx) = self.find(key)?;
        let chunk = Rc::make_mut(&mut self.core.chunks[chunk_idx]);
        let value = take_value(chunk.remove(entry_idx).entry);
        if entry_idx == 0 {
            self.removed_first(chunk_idx);
        }
        self.core.len -= 1;
        Some(value)
    }

    /// Mends the chunk at `chunk_idx` after its first entry was removed:
    /// drops it if it is empty, else notes its new first prefix.
    fn removed_first(&mut self, chunk_idx: usize) {
        if self.core.chunks[chunk_idx].is_empty() {
            self.core.chunks.remove(chunk_idx);
            self.firsts.remove(chunk_idx);
        } else {
            self.firsts[chunk_idx] = self.first_prefix(chunk_idx);
        }
    }
}

/// One entry as a pair of references.
type EntryRef<'a, K, V> = fn(&'a Slot<K, V>) -> (&'a K, &'a V);
/// Every chunk's entries in turn, as pairs of references.
type AllEntries<'a, K, V> = std::iter::Map<ChunkItems<'a, Slot<K, V>>, EntryRef<'a, K, V>>;

/// The entries of a [`ChunkMap`] in key order.
pub struct Iter<'a, K, V> {
    inner: AllEntries<'a, K, V>,
}

impl<K, V> Clone for Iter<'_, K, V> {
    fn clone(&self) -> Self {
        Iter {
            inner: self.inner.clone(),
        }
    }
}

impl<'a, K, V> Iterator for Iter<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next()
    }
}

impl<K, V> DoubleEndedIterator for Iter<'_, K, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back()
    }
}

impl<'a, K, V> IntoIterator for &'a ChunkMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;

    fn into_iter(self) -> Iter<'a, K, V> {
        fn pair<K, V>(slot: &Slot<K, V>) -> (&K, &V) {
            (&slot.entry.0, &slot.entry.1)
        }
        Iter {
            inner: self.core.items().map(pair as EntryRef<'a, K, V>),
        }
    }
}

/// The prefix of each chunk's first key.
fn first_prefixes<K, V>(core: &Chunks<Slot<K, V>>) -> Vec<u64> {
    core.chunks.iter().map(|chunk| chunk[0].prefix).collect()
}

impl<K: SortKey, V> FromIterator<(K, V)> for ChunkMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Self {
        // Sorted and deduplicated (the last value wins) as a BTreeMap would.
        let sorted: BTreeMap<K, V> = entries.into_iter().collect();
        let slots = sorted.into_iter().map(|(key, value)| Slot::new(key, value));
        let core = Chunks::from_items(slots, CHUNK);
        ChunkMap {
            firsts: first_prefixes(&core),
            core,
        }
    }
}

impl<K, Q, V> std::ops::Index<&Q> for ChunkMap<K, V>
where
    K: SortKey + Borrow<Q>,
    Q: SortKey + ?Sized,
{
    type Output = V;

    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

impl<K: PartialEq, V: PartialEq> PartialEq for ChunkMap<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.core == other.core
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for ChunkMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self).finish()
    }
}

impl<K: Serialize, V: Serialize> Serialize for ChunkMap<K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self)
    }
}

impl<'de, K: SortKey + Deserialize<'de>, V: Deserialize<'de>> Deserialize<'de> for ChunkMap<K, V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let entries = BTreeMap::<K, V>::deserialize(deserializer)?;
        Ok(entries.into_iter().collect())
    }
}

/// An append-only list whose clones share structure like [`ChunkMap`]'s:
/// full chunks are shared between clones, and a push copies at most the
/// last, partly filled chunk.
pub struct ChunkVec<T> {
    /// Chunks of `2 * CHUNK` items, the last one possibly partly filled.
    core: Chunks<T>,
}

/// The iterator of a [`ChunkVec`].
pub type ChunkVecIter<'a, T> = ChunkItems<'a, T>;

impl<T> Clone for ChunkVec<T> {
    fn clone(&self) -> Self {
        ChunkVec {
            core: self.core.clone(),
        }
    }
}

impl<T> Default for ChunkVec<T> {
    fn default() -> Self {
        ChunkVec {
            core: Chunks::default(),
        }
    }
}

impl<T> ChunkVec<T> {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.core.len
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.core.len == 0
    }

    /// Items in order.
    pub fn iter(&self) -> ChunkVecIter<'_, T> {
        self.core.items()
    }

    /// The item at `index`.
    pub fn get(&self, index: usize) -> Option<&T> {
        self.core
            .chunks
            .get(index / (2 * CHUNK))
            .and_then(|chunk| chunk.get(index % (2 * CHUNK)))
    }
}

impl<T: Clone> ChunkVec<T> {
    /// Appends an item.
    pub fn push(&mut self, item: T) {
        self.core.push_last(item, 2 * CHUNK);
    }
}

impl<'a, T> IntoIterator for &'a ChunkVec<T> {
    type Item = &'a T;
    type IntoIter = ChunkVecIter<'a, T>;

    fn into_iter(self) -> ChunkVecIter<'a, T> {
        self.iter()
    }
}

impl<T: Clone> FromIterator<T> for ChunkVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        ChunkVec {
            core: Chunks::from_items(iter, 2 * CHUNK),
        }
    }
}

impl<T: PartialEq> PartialEq for ChunkVec<T> {
    fn eq(&self, other: &Self) -> bool {
        self.core == other.core
    }
}

impl<T: fmt::Debug> fmt::Debug for ChunkVec<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Serialize> Serialize for ChunkVec<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // As a `Vec` serializes: the length first, then the items.
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.core.len))?;
        for item in self.iter() {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

impl<'de, T: Clone + Deserialize<'de>> Deserialize<'de> for ChunkVec<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let items = Vec::<T>::deserialize(deserializer)?;
        Ok(items.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::{ChunkMap, ChunkVec, SortKey, locate, order_by_prefix};
    use std::cmp::Ordering;
    use std::collections::BTreeMap;

    /// How `entry` compares with `key`, whose prefix is `prefix`, as a
    /// lookup orders them ([`order_by_prefix`] with `entry`'s prefix).
    fn key_order<Q: SortKey + ?Sized>(entry: &Q, prefix: u64, key: &Q) -> Ordering {
        order_by_prefix(entry.prefix(), entry, prefix, key)
    }

    /// Keys ordered by prefix first order exactly as they order whole:
    /// short keys, keys equal in their first eight bytes, zero bytes,
    /// non-ASCII bytes.
    #[test]
    fn prefix_order_is_the_key_order() {
        let keys = [
            "",
            "\0",
            "a",
            "a\0",
            "ab",
            "node-1",
            "node-10",
            "node-100",
            "node-2",
            "node-001",
            "node-0010",
            "node-0010\0",
            "node-00100",
            "node-001a",
            "\u{ff}",
            "\u{e9}t\u{e9}",
            "zzzzzzzz",
            "zzzzzzzza",
            "zzzzzzz",
            "zzzzzzz\0",
            "zzzzzzz\0\0",
            "node-123",
            "node-124",
            "node-1234",
            "node-123\0",
            "aaaaaaaa\u{100}",
        ];
        for a in keys {
            for b in keys {
                assert_eq!(key_order(a, b.prefix(), b), a.cmp(b), "{a:?} {b:?}");
                let (a, b) = (a.to_string(), b.to_string());
                assert_eq!(key_order(&a, b.prefix(), &b), a.cmp(&b), "{a:?} {b:?}");
            }
        }
    }

    /// The list keeps its items in order through pushes, and a clone taken
    /// midway keeps its own items.
    #[test]
    fn chunk_vec_pushes_in_order_and_clones_stay_apart() {
        let mut list = ChunkVec::new();
        let mut model = Vec::new();
        let mut snapshot = None;
        for item in 0..500u32 {
            list.push(item);
            model.push(item);
            if item == 200 {
                snapshot = Some((list.clone(), model.clone()));
            }
        }
        assert_eq!(list.len(), model.len());
        assert!(list.iter().eq(model.iter()));
        for (index, item) in model.iter().enumerate() {
            assert_eq!(list.get(index), Some(item));
        }
        assert_eq!(list.get(model.len()), None);
        let (old, old_model) = snapshot.expect("snapshot");
        assert!(old.iter().eq(old_model.iter()));
        assert_eq!(old.len(), 201);
        let json = serde_json::to_string(&list).expect("serialize");
        let back: ChunkVec<u32> = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, list);
    }

    /// A write to a clone copies the chunk it touches but shares that
    /// chunk's other entries, keys and values, with the original.
    #[test]
    fn a_write_shares_the_untouched_entries_of_its_chunk() {
        let map: ChunkMap<String, String> = (0..100)
            .map(|n| (format!("key-{n:03}"), format!("value-{n}")))
            .collect();
        let mut copy = map.clone();
        *copy.get_mut("key-005").expect("present") = "changed".into();
        assert_eq!(
            copy.insert("key-006".into(), "new".into()),
            Some("value-6".into())
        );
        assert_eq!(copy.remove("key-007"), Some("value-7".to_string()));
        assert_eq!(map.get("key-005").map(String::as_str), Some("value-5"));
        assert_eq!(map.get("key-006").map(String::as_str), Some("value-6"));
        assert_eq!(map.get("key-007").map(String::as_str), Some("value-7"));
        assert_eq!(copy.get("key-005").map(String::as_str), Some("changed"));
        let shared = |key: &str| {
            let (mine, theirs) = (map.get(key).expect("map"), copy.get(key).expect("copy"));
            std::ptr::eq(mine, theirs)
        };
        assert!(shared("key-004") && shared("key-008"));
        assert!(!shared("key-005") && !shared("key-006"));
        let (key_a, _) = map.get_index(4).expect("entry");
        let (key_b, _) = copy.get_index(4).expect("entry");
        assert!(std::ptr::eq(key_a, key_b));
    }

    /// `put` replaces a stored value in place when no clone shares its
    /// entry, copies the entry (key and all) when one does, and makes a
    /// key only for a new entry.
    #[test]
    fn put_replaces_in_place_or_copies_a_shared_entry() {
        let mut map: ChunkMap<String, u32> = (0..100).map(|n| (format!("key-{n:03}"), n)).collect();
        let before = map.clone();
        let mut made = 0;
        let mut make = |key: &str| {
            made += 1;
            key.to_string()
        };
        assert_eq!(map.put("key-005", 500, || make("key-005")), Some(5));
        assert_eq!(map.put("key-005", 501, || make("key-005")), Some(500));
        assert_eq!(map.put("key-100", 1_000, || make("key-100")), None);
        assert_eq!(made, 1);
        assert_eq!(map.get("key-005"), Some(&501));
        assert_eq!(map.get("key-100"), Some(&1_000));
        assert_eq!(map.len(), 101);
        assert_eq!(before.get("key-005"), Some(&5));
        assert_eq!(before.get("key-100"), None);
        let mut empty = ChunkMap::new();
        assert_eq!(empty.put("a", 1, || "a".to_string()), None);
        assert_eq!(empty.get("a"), Some(&1));
        assert!(map.firsts_agree() && empty.firsts_agree());
    }

    /// The map agrees with a BTreeMap through inserts, replacements and
    /// removals in a scrambled order, and a clone taken midway keeps its
    /// own contents.
    #[test]
    fn agrees_with_btree_map_and_clones_stay_apart() {
        let mut map = ChunkMap::new();
        let mut model = BTreeMap::new();
        let mut snapshot = None;
        for step in 0..2_000u64 {
            let key = (step * 7_919) % 1_009;
            if step % 5 == 4 {
                assert_eq!(map.remove(&key), model.remove(&key));
            } else {
                assert_eq!(map.insert(key, step), model.insert(key, step));
            }
            if step == 1_000 {
                snapshot = Some((map.clone(), model.clone()));
            }
        }
        assert_eq!(map.len(), model.len());
        assert!(map.iter().eq(model.iter()));
        assert!(map.iter().rev().eq(model.iter().rev()));
        for key in 0..1_100u64 {
            assert_eq!(map.get(&key), model.get(&key));
            assert_eq!(
                map.rank(&key),
                model.contains_key(&key).then(|| model.range(..key).count())
            );
        }
        for (index, entry) in model.iter().enumerate() {
            assert_eq!(map.get_index(index), Some(entry));
        }
        assert_eq!(map.get_index(model.len()), None);
        *map.get_or_insert_with(5_000, || 1) += 1;
        assert_eq!(map.get(&5_000), Some(&2));
        let (old_map, old_model) = snapshot.expect("taken at step 1000");
        assert!(old_map.iter().eq(old_model.iter()));
        let rebuilt: ChunkMap<u64, u64> = old_model.into_iter().collect();
        assert_eq!(rebuilt, old_map);
    }

    /// `pop_first` and `retain` agree with a `BTreeMap`'s, and a clone
    /// taken before them keeps every entry.
    #[test]
    fn pop_first_and_retain_agree_with_btree_map() {
        let mut map: ChunkMap<u64, u64> = (0..500u64).map(|k| (k * 3 % 499, k)).collect();
        let mut model: BTreeMap<u64, u64> = (0..500u64).map(|k| (k * 3 % 499, k)).collect();
        let before = map.clone();
        for _ in 0..40 {
            assert_eq!(map.pop_first(), model.pop_first());
        }
        let mut asked = Vec::new();
        map.retain(|key, value| {
            asked.push(*key);
            (key + value) % 3 != 0
        });
        model.retain(|key, value| (*key + *value) % 3 != 0);
        assert_eq!(asked, model_keys_before_retain(&before, 40));
        assert_eq!(map.len(), model.len());
        assert!(map.iter().eq(model.iter()));
        while let Some(entry) = model.pop_first() {
            assert_eq!(map.pop_first(), Some(entry));
        }
        assert_eq!(map.pop_first(), None);
        assert!(map.is_empty());
        assert_eq!(before.len(), 499);
    }

    /// String keys whose first eight bytes are the same for many keys (or
    /// for all): the map agrees with a `BTreeMap` through inserts,
    /// replacements, removals, `pop_first` and `retain`, finding its
    /// chunks by the whole keys where their prefixes are equal.
    #[test]
    fn keys_sharing_their_prefix_agree_with_btree_map() {
        for shape in ["node-{}", "same-prefix/{}", "{}"] {
            let key_of = |n: u64| shape.replace("{}", &format!("{n:04}"));
            let mut map = ChunkMap::new();
            let mut model = BTreeMap::new();
            for step in 0..3_000u64 {
                let key = key_of((step * 7_919) % 1_201);
                if step % 4 == 3 {
                    assert_eq!(map.remove(key.as_str()), model.remove(&key), "{key}");
                } else {
                    assert_eq!(map.insert(key.clone(), step), model.insert(key, step));
                }
                if step % 97 == 0 {
                    assert_eq!(map.pop_first(), model.pop_first());
                }
                assert!(map.firsts_agree(), "{shape} step {step}");
            }
            assert!(map.iter().eq(model.iter()));
            for n in 0..1_300 {
                let key = key_of(n);
                assert_eq!(map.get(key.as_str()), model.get(&key), "{key}");
            }
            map.retain(|_, value| value % 3 != 0);
            model.retain(|_, value| *value % 3 != 0);
            assert!(map.firsts_agree());
            assert!(map.iter().eq(model.iter()));
            let rebuilt: ChunkMap<String, u64> = model.clone().into_iter().collect();
            assert!(rebuilt.firsts_agree());
            assert_eq!(rebuilt, map);
        }
    }

    /// `locate` agrees with a binary search by the whole key over items
    /// sorted by (prefix, rest): runs of equal prefixes of every length up
    /// to four (and none), at the start, in the middle and at the end, for
    /// keys present and absent.
    #[test]
    fn locate_agrees_with_a_search_by_the_whole_key() {
        let mut all = Vec::new();
        for prefix in 0..12u64 {
            for rest in 0..prefix % 5 {
                all.push((prefix * 2, rest * 2));
            }
        }
        for len in 0..=all.len() {
            let items = &all[..len];
            for prefix in 0..26u64 {
                for rest in 0..10u64 {
                    let found = locate(
                        items,
                        |item| item.0,
                        prefix,
                        |index| items[index].1.cmp(&rest),
                    );
                    let whole = items.binary_search(&(prefix, rest));
                    assert_eq!(found, whole, "{len} items, key ({prefix}, {rest})");
                }
            }
        }
    }

    /// Keys whose prefixes are unique around a long run of keys sharing
    /// one prefix, the run crossing chunk boundaries (a chunk's first key
    /// shares its prefix with the previous chunk's last): every key is
    /// found at its rank, and keys absent between them are not.
    #[test]
    fn a_run_of_equal_prefixes_across_chunks_is_searched_whole() {
        let key_of = |group: &str, n: u64| format!("{group}{n:03}");
        let groups = ["a", "m-shared-", "z"];
        let model: BTreeMap<String, u64> = groups
            .iter()
            .flat_map(|group| (0..300u64).step_by(2).map(move |n| (group, n)))
            .map(|(group, n)| (key_of(group, n), n))
            .collect();
        let mut map: ChunkMap<String, u64> = model.clone().into_iter().collect();
        let mut model = model;
        for n in (1..300u64).step_by(14) {
            let key = key_of("m-shared-", n);
            assert_eq!(map.insert(key.clone(), n), model.insert(key, n));
        }
        assert!(map.firsts_agree());
        let chunks = &map.core.chunks;
        let boundary_in_run = chunks.windows(2).any(|pair| {
            let last = pair[0].last().expect("non-empty chunk");
            last.prefix == pair[1][0].prefix
        });
        assert!(boundary_in_run, "the run must cross a chunk boundary");
        for group in groups {
            for n in 0..301u64 {
                let key = key_of(group, n);
                assert_eq!(map.get(key.as_str()), model.get(&key), "{key}");
                let rank = model
                    .contains_key(&key)
                    .then(|| model.range(..key.clone()).count());
                assert_eq!(map.rank(key.as_str()), rank, "{key}");
            }
        }
        assert!(map.iter().eq(model.iter()));
    }

    /// The keys of `map` after its first `skip`, in order.
    fn model_keys_before_retain(map: &ChunkMap<u64, u64>, skip: usize) -> Vec<u64> {
        map.keys().skip(skip).copied().collect()
    }
}
