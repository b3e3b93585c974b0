//! The simulator's clients by node ID ([`Clients`]): a list in ID order
//! with a hash table over it, so that an event finds its node's client
//! with a hash and, mostly, one compare of IDs (a sorted map compares ~15
//! IDs for 500 nodes, and every client event asks once).

use super::chunk_map::{SortKey, compare_text};
use super::trace::{NodeName, SharedText};
use crate::client::Client;
use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

/// The clients by node ID. Reads like the `BTreeMap<String, Client>` it
/// replaces (`get`, `get_mut`, iteration in ID order) and serializes as
/// one. The scenario's nodes are all added when the world is built, so the
/// table is built then and shared, unchanged, by every checkpoint's copy.
#[derive(Clone, Default)]
pub struct Clients {
    /// The clients with their node IDs, in ID order, IDs unique.
    entries: Vec<(String, Client)>,
    /// Open addressing by [`id_hash`]: a power of two of slots, at most
    /// half full, each empty ([`EMPTY`]) or a position in `entries`.
    table: Rc<Vec<u32>>,
    /// Positions in `entries` by node name ([`Clients::get_mut_named`]).
    names: NameCache<usize>,
}

/// An empty slot of [`Clients::table`].
const EMPTY: u32 = u32::MAX;

/// What was found for a node by its name's shared copy (a position in a
/// list by ID, a link): the simulator's events carry the server's shared
/// copies of the node IDs ([`NodeName`]), so a lookup by the copy's
/// address and one compare of pointers spares hashing and comparing the
/// ID (every event looks its node up a few times: its client, its link,
/// its calls in flight). Direct-mapped: a name evicts another whose
/// address falls in its slot, and a name met for the first time (or
/// evicted) is looked up by its ID and put in. A slot keeps a copy of its
/// name, so that no other text can take that address while it is there.
///
/// Not part of the world: whoever changes what it holds (moves the
/// positions, writes a link) clears it; a clone (a checkpoint's) starts
/// empty, and any two compare equal.
pub(crate) struct NameCache<V> {
    /// [`NAME_CACHE_SLOTS`] slots, or none before the first [`NameCache::put`].
    slots: Vec<Option<(NodeName, V)>>,
}

/// Slots of a [`NameCache`]: twice a large cluster's nodes.
const NAME_CACHE_SLOTS: usize = 1024;

impl<V: Copy> NameCache<V> {
    /// The slot of `node`: its text's address, without the low bits that
    /// the allocator's alignment leaves equal.
    fn slot(node: &NodeName) -> usize {
        (node.as_str().as_ptr() as usize >> 3) & (NAME_CACHE_SLOTS - 1)
    }

    /// What was put for this very copy of the name, if it is still there.
    pub(crate) fn get(&self, node: &NodeName) -> Option<V> {
        match self.slots.get(Self::slot(node)) {
            Some(Some((name, value))) if SharedText::ptr_eq(name, node) => Some(*value),
            _ => None,
        }
    }

    /// Keeps `value` for `node` (evicting the name in its slot).
    pub(crate) fn put(&mut self, node: &NodeName, value: V) {
        if self.slots.is_empty() {
            self.slots.resize_with(NAME_CACHE_SLOTS, || None);
        }
        self.slots[Self::slot(node)] = Some((node.clone(), value));
    }

    /// What was put for `node`, else what `look_up` finds by its ID (then
    /// kept for it). Debug builds check a hit against `look_up`.
    pub(crate) fn get_or_look_up(
        &mut self,
        node: &NodeName,
        look_up: impl Fn(&str) -> Option<V>,
    ) -> Option<V>
    where
        V: PartialEq + fmt::Debug,
    {
        if let Some(value) = self.get(node) {
            debug_assert_eq!(Some(value), look_up(node.as_str()));
            return Some(value);
        }
        let value = look_up(node.as_str())?;
        self.put(node, value);
        Some(value)
    }

    /// Forgets everything (what it held changed).
    pub(crate) fn clear(&mut self) {
        self.slots = Vec::new();
    }
}

impl<V> Default for NameCache<V> {
    fn default() -> Self {
        NameCache { slots: Vec::new() }
    }
}

/// A copy starts empty (a checkpoint does not carry it).
impl<V> Clone for NameCache<V> {
    fn clone(&self) -> Self {
        NameCache::default()
    }
}

/// Not part of what holds it: any two are equal.
impl<V> PartialEq for NameCache<V> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<V> fmt::Debug for NameCache<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NameCache")
    }
}

/// A fixed hash of a node ID, eight bytes at a time, mixed at the end so
/// that its low bits, which pick a slot, depend on every byte (IDs such as
/// `node-123` differ only in their last bytes). The table's layout depends
/// on nothing but the IDs.
fn id_hash(id: &str) -> usize {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut hash = id.len() as u64;
    let mut words = id.as_bytes().chunks_exact(8);
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
        hash = (hash.rotate_left(23) ^ word).wrapping_mul(K);
    }
    for (place, byte) in words.remainder().iter().enumerate() {
        hash ^= u64::from(*byte) << (8 * place);
    }
    // splitmix64's finaliser.
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash = (hash ^ (hash >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (hash ^ (hash >> 31)) as usize
}

/// Puts `position` in the first free slot for `id` in `table` (a power of
/// two of slots, with one free).
pub(super) fn place(table: &mut [u32], id: &str, position: usize) {
    let mask = table.len() - 1;
    let mut slot = id_hash(id) & mask;
    while table[slot] != EMPTY {
        slot = (slot + 1) & mask;
    }
    table[slot] = u32::try_from(position).expect("fewer than 2^32 nodes");
}

/// A table of the positions of `ids` (each placed by [`place`]), with room
/// for as many again: a power of two of slots, at most a quarter full.
pub(super) fn table_of<'a>(ids: impl ExactSizeIterator<Item = &'a str>) -> Vec<u32> {
    let mut table = vec![EMPTY; (ids.len() * 4).next_power_of_two()];
    for (position, id) in ids.enumerate() {
        place(&mut table, id, position);
    }
    table
}

/// The position of `id` through `table` (filled by [`place`]; empty when
/// nothing is placed), where `id_at` gives the ID at a position. IDs are
/// compared by their first eight bytes as a number first, then by the rest
/// ([`compare_text`]: eight-byte IDs such as `node-123` by length, without
/// a call to compare bytes).
pub(super) fn find<'a>(
    table: &[u32],
    id: &str,
    id_at: impl Fn(usize) -> Option<&'a str>,
) -> Option<usize> {
    let mask = table.len().checked_sub(1)?;
    let prefix = id.prefix();
    let mut slot = id_hash(id) & mask;
    loop {
        let position = *table.get(slot)?;
        if position == EMPTY {
            return None;
        }
        let position = position as usize;
        if id_at(position).is_some_and(|key| compare_text(key, prefix, id).is_eq()) {
            return Some(position);
        }
        slot = (slot + 1) & mask;
    }
}

/// Puts `entry` at `position` in `entries` (sorted by ID, IDs unique, its
/// ID not among them) and its position in `table` ([`place`]'s): an entry
/// appended while the table has room takes only its own slot; otherwise
/// (the positions after it moved, or the table is half full) the table is
/// built again, with room for as many again.
pub(super) fn insert_entry<T>(
    entries: &mut Vec<(String, T)>,
    table: &mut Vec<u32>,
    position: usize,
    entry: (String, T),
) {
    entries.insert(position, entry);
    if position + 1 == entries.len() && entries.len() * 2 <= table.len() {
        place(table, &entries[position].0, position);
    } else {
        *table = table_of(entries.iter().map(|(id, _)| id.as_str()));
    }
}

/// One entry as a pair of references.
type EntryRef<'a> = fn(&'a (String, Client)) -> (&'a String, &'a Client);

/// The clients in node ID order, with their IDs.
pub type Iter<'a> = std::iter::Map<std::slice::Iter<'a, (String, Client)>, EntryRef<'a>>;

impl Clients {
    /// No clients.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many clients.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The position in `entries` of the client of `id`.
    fn position(&self, id: &str) -> Option<usize> {
        find(&self.table, id, |position| {
            self.entries.get(position).map(|(key, _)| key.as_str())
        })
    }

    /// The client of node `id`.
    pub fn get(&self, id: &str) -> Option<&Client> {
        self.position(id).map(|position| &self.entries[position].1)
    }

    /// The client of node `id`, to change.
    pub fn get_mut(&mut self, id: &str) -> Option<&mut Client> {
        let position = self.position(id)?;
        Some(&mut self.entries[position].1)
    }

    /// The client of the node `node` names (the shared copy of its ID that
    /// events carry), to change: found by the copy's address when it was
    /// met before ([`NameCache`]).
    pub fn get_mut_named(&mut self, node: &NodeName) -> Option<&mut Client> {
        let (table, entries) = (&self.table, &self.entries);
        let position = self.names.get_or_look_up(node, |id| {
            find(table, id, |at| entries.get(at).map(|(key, _)| key.as_str()))
        })?;
        Some(&mut self.entries[position].1)
    }

    /// Whether node `id` has a client.
    pub fn contains_key(&self, id: &str) -> bool {
        self.position(id).is_some()
    }

    /// Adds (or replaces) the client of node `id`; returns the one replaced.
    pub fn insert(&mut self, id: String, client: Client) -> Option<Client> {
        match self
            .entries
            .binary_search_by(|(key, _)| key.as_str().cmp(&id))
        {
            Ok(position) => Some(std::mem::replace(&mut self.entries[position].1, client)),
            Err(position) => {
                // The scenario lists its nodes in ID order: they are
                // appended (the nodes are added once, when the world is
                // built). Positions after it move.
                self.names.clear();
                insert_entry(
                    &mut self.entries,
                    Rc::make_mut(&mut self.table),
                    position,
                    (id, client),
                );
                None
            }
        }
    }

    /// The table over `entries`.
    /// (With room for as many again, so that appending rebuilds it only
    /// when the count doubles.)
    fn build_table(&mut self) {
        self.table = Rc::new(table_of(self.entries.iter().map(|(id, _)| id.as_str())));
    }

    /// The clients with their node IDs, in ID order.
    pub fn iter(&self) -> Iter<'_> {
        self.into_iter()
    }

    /// The node IDs in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + Clone {
        self.entries.iter().map(|(id, _)| id)
    }

    /// The clients in node ID order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Client> + Clone {
        self.entries.iter().map(|(_, client)| client)
    }

    /// The clients in node ID order, to change.
    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Client> {
        self.entries.iter_mut().map(|(_, client)| client)
    }
}

impl<'a> IntoIterator for &'a Clients {
    type Item = (&'a String, &'a Client);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        fn pair((id, client): &(String, Client)) -> (&String, &Client) {
            (id, client)
        }
        self.entries.iter().map(pair as EntryRef<'a>)
    }
}

impl FromIterator<(String, Client)> for Clients {
    fn from_iter<I: IntoIterator<Item = (String, Client)>>(entries: I) -> Self {
        // Sorted and deduplicated (the last client wins) as a map would.
        let sorted: BTreeMap<String, Client> = entries.into_iter().collect();
        let mut clients = Clients {
            entries: sorted.into_iter().collect(),
            table: Rc::default(),
            names: NameCache::default(),
        };
        clients.build_table();
        clients
    }
}

/// Two are equal when they hold the same clients under the same IDs.
impl PartialEq for Clients {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl fmt::Debug for Clients {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self).finish()
    }
}

/// Written as the map by node ID it stands for.
impl Serialize for Clients {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self)
    }
}

impl<'de> Deserialize<'de> for Clients {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let entries = BTreeMap::<String, Client>::deserialize(deserializer)?;
        Ok(entries.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::Clients;
    use crate::client::Client;
    use crate::profile::{Rules, Version};
    use crate::server::NodeRecord;
    use std::collections::BTreeMap;

    fn client(id: &str) -> Client {
        let record = NodeRecord {
            node: crate::model::Node {
                id: id.to_string(),
                ..crate::model::Node::default()
            },
            cpu: 1000,
            memory_mb: 1024,
            last_missed_heartbeat_index: 0,
            last_alloc_update_index: 0,
            agent: Default::default(),
        };
        Client::new(record, true, 0, Rules::for_version(Version::LATEST), true)
    }

    /// Added in a scrambled order (and one replaced), the clients read,
    /// iterate and serialize as a `BTreeMap` of them does, and IDs not
    /// added (one sharing a prefix, an empty one) find nothing.
    #[test]
    fn agrees_with_btree_map() {
        let mut clients = Clients::new();
        let mut model = BTreeMap::new();
        for n in 0..300u32 {
            let id = format!("node-{:03}", (n * 7) % 300);
            clients.insert(id.clone(), client(&id));
            model.insert(id.clone(), client(&id));
        }
        let mut changed = client("node-042");
        changed.ttl = 7;
        assert!(clients.insert("node-042".into(), changed.clone()).is_some());
        model.insert("node-042".into(), changed);
        assert_eq!(clients.len(), model.len());
        assert!(clients.iter().eq(model.iter()));
        assert!(clients.keys().eq(model.keys()));
        for id in model.keys() {
            assert_eq!(clients.get(id), model.get(id));
        }
        assert_eq!(clients.get("node-042").map(|c| c.ttl), Some(7));
        for absent in ["node-300", "node-04", "node-0420", ""] {
            assert!(!clients.contains_key(absent));
            assert!(clients.get(absent).is_none());
        }
        if let Some(client) = clients.get_mut("node-100") {
            client.ttl = 9;
        }
        assert_eq!(clients.get("node-100").map(|c| c.ttl), Some(9));
        let json = serde_json::to_string(&clients).expect("serialize");
        let mut model_json = model.clone();
        if let Some(client) = model_json.get_mut("node-100") {
            client.ttl = 9;
        }
        assert_eq!(json, serde_json::to_string(&model_json).expect("model"));
        let back: Clients = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, clients);
        assert_eq!(back.get("node-100").map(|c| c.ttl), Some(9));
        assert!(Clients::new().get("node-000").is_none());
    }
}
