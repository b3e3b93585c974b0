//! Per-node tables by slot number ([`NodeTable`]): the server's usage and
//! alloc-count tables, which the scheduler reads for every node it scores.
//!
//! Each node the server keeps anything for has a dense slot number,
//! assigned the first time ([`crate::server::ServerState::node_slot`], the
//! one place that assigns them), never changed or reused. A table keeps
//! its values in a list by slot, so that a reader that already has a
//! node's slot (the placement index keeps the slot of every node rank)
//! reads its entry without comparing IDs; a reader with an ID finds the
//! slot with one lookup. A table reads like the map from node ID to value
//! it stands for: it serializes, compares and prints as one (the slots are
//! bookkeeping, not state).

use crate::sim::chunk_map::{self, ChunkMap};
use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;

/// Node ID → slot, in ID order (slots are handed out in order: a node's
/// slot is the count of nodes slotted before it).
pub type NodeSlots = ChunkMap<String, u32>;

/// Values by node slot, with the ID → slot table (a copy of the one the
/// server keeps: [`crate::server::ServerState::node_slot`] writes both).
#[derive(Clone)]
pub struct NodeTable<V> {
    /// Node ID → slot.
    slots: NodeSlots,
    /// By slot: the node's value, if the table has one.
    values: Vec<Option<V>>,
}

impl<V> Default for NodeTable<V> {
    fn default() -> Self {
        NodeTable {
            slots: NodeSlots::new(),
            values: Vec::new(),
        }
    }
}

impl<V> NodeTable<V> {
    /// The slot of node `id`, if it has one.
    pub fn slot(&self, id: &str) -> Option<u32> {
        self.slots.get(id).copied()
    }

    /// The node IDs with their slots, in ID order.
    pub fn slots(&self) -> chunk_map::Iter<'_, String, u32> {
        self.slots.iter()
    }

    /// How many slots are handed out.
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// The value of the node in `slot`.
    pub fn get(&self, slot: u32) -> Option<&V> {
        self.values.get(slot as usize).and_then(Option::as_ref)
    }

    /// The value of node `id`.
    pub fn get_by_id(&self, id: &str) -> Option<&V> {
        self.get(self.slot(id)?)
    }

    /// The entries that have a value, in node ID order.
    pub fn entries(&self) -> impl Iterator<Item = (&String, &V)> + '_ {
        self.slots
            .iter()
            .filter_map(|(id, slot)| Some((id, self.get(*slot)?)))
    }

    /// Takes `id` into the table's copy of the slots ([`crate::server::ServerState::node_slot`]
    /// hands out the slot and gives every table the same one).
    pub(super) fn add_slot(&mut self, id: &str, slot: u32) {
        self.slots.insert(id.to_string(), slot);
    }
}

impl<V: Default> NodeTable<V> {
    /// The value of the node in `slot`, made with the default first if it
    /// has none.
    pub fn entry(&mut self, slot: u32) -> &mut V {
        let at = slot as usize;
        if self.values.len() <= at {
            self.values.resize_with(at + 1, || None);
        }
        self.values[at].get_or_insert_with(V::default)
    }
}

impl<V: PartialEq> PartialEq for NodeTable<V> {
    /// As maps from node ID to value (whatever slots they use).
    fn eq(&self, other: &Self) -> bool {
        self.entries().eq(other.entries())
    }
}

impl<V: fmt::Debug> fmt::Debug for NodeTable<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.entries()).finish()
    }
}

impl<V: Serialize> Serialize for NodeTable<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.entries())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for NodeTable<V> {
    /// From the map: the nodes are slotted in ID order (the server's
    /// tables are written together, so they name the same nodes and get
    /// the same slots).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, V>::deserialize(deserializer)?;
        let mut table = NodeTable::default();
        for (slot, (id, value)) in (0u32..).zip(map) {
            table.slots.insert(id, slot);
            table.values.push(Some(value));
        }
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::NodeTable;
    use std::collections::BTreeMap;

    #[test]
    fn reads_and_serializes_like_a_map_in_id_order() {
        let mut table: NodeTable<(u64, u64)> = NodeTable::default();
        let mut map = BTreeMap::new();
        // Slotted out of ID order; one slotted node without a value.
        for (slot, id) in (0u32..).zip(["node-3", "node-1", "node-2", "node-0"]) {
            table.add_slot(id, slot);
        }
        for (id, value) in [("node-3", (3, 30)), ("node-1", (1, 10)), ("node-0", (0, 5))] {
            let slot = table.slot(id).expect("slotted");
            *table.entry(slot) = value;
            map.insert(id.to_string(), value);
        }
        table.entry(table.slot("node-0").expect("slotted")).1 += 1;
        map.entry("node-0".to_string()).or_default().1 += 1;
        assert_eq!(table.get_by_id("node-2"), None);
        assert_eq!(table.get_by_id("node-9"), None);
        assert_eq!(table.get_by_id("node-0"), Some(&(0, 6)));
        let entries: Vec<_> = table.entries().map(|(k, v)| (k.clone(), *v)).collect();
        let expected: Vec<_> = map.iter().map(|(k, v)| (k.clone(), *v)).collect();
        assert_eq!(entries, expected);
        let json = serde_json::to_string(&table).expect("serialize");
        assert_eq!(json, serde_json::to_string(&map).expect("serialize"));
        // Read back: other slots (ID order), the same map, equal tables.
        let back: NodeTable<(u64, u64)> = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back.slot("node-0"), Some(0));
        assert_eq!(back, table);
        assert_eq!(serde_json::to_string(&back).expect("serialize"), json);
        assert_eq!(format!("{back:?}"), format!("{map:?}"));
        let mut other = back.clone();
        *other.entry(0) = (9, 9);
        assert_ne!(other, table);
    }
}
