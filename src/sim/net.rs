//! The network between the clients and the servers: one link per client,
//! up or down, and the calls in flight on it.
//!
//! A call is sent by a client and delivered to the leader after the link
//! latency, unless the user holds it. Held calls wait until the user
//! delivers, delays, reorders or drops them; a link going down drops every
//! call in flight on it (the client sees an RPC error).

use super::chunk_map::ChunkMap;
use super::clients;
use super::queue::Tick;
use super::trace::NodeName;
use crate::server::rpc::Rpc;
use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;

/// A call's number, unique within a run (`hb#3` in the UI is call 3).
/// Four bytes: the trace keeps one in most of its entries (a run makes
/// far fewer than four billion calls).
pub type CallId = u32;

/// One client's link to the servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Link {
    /// Whether calls get through.
    pub up: bool,
    /// Whether new calls from this client are held on send.
    pub hold: bool,
}

impl Default for Link {
    fn default() -> Self {
        Link {
            up: true,
            hold: false,
        }
    }
}

/// A call from a client to the servers that has not been delivered yet.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PendingCall {
    /// Call number.
    pub id: CallId,
    /// Sending client (node ID, shared with the trace's node name).
    pub node: NodeName,
    /// The RPC and its arguments.
    pub rpc: Rpc,
    /// When it was sent.
    pub sent_at: Tick,
    /// When it is delivered if not held.
    pub deliver_at: Tick,
    /// Whether it waits for the user.
    pub held: bool,
}

/// The calls in flight by sending node ID, each node's in the order the
/// user sees them (send order unless reordered). It reads like the
/// `BTreeMap<String, Vec<PendingCall>>` it replaces (`get`, `iter` in ID
/// order, `is_empty`: nodes with no call in flight are not in it), and
/// compares and serializes as one.
///
/// Every call sent gives its node a list that its delivery empties: a
/// node's list, once made, stays in a list sorted by ID (empty while the
/// node has no call in flight), found by a hash of the ID (the same table
/// as [`super::clients::Clients`]'), so that a call sent and delivered
/// allocates nothing, moves no other node's list and finds its node's
/// list with a hash and, mostly, one compare of IDs. A clone (a
/// checkpoint's) takes only the lists that hold calls.
#[derive(Default)]
pub struct PendingCalls {
    /// (node ID, its calls), sorted by ID, IDs unique; lists may be empty.
    nodes: Vec<(String, Vec<PendingCall>)>,
    /// The positions in `nodes` by ID ([`clients::place`]): a power of two
    /// of slots, at most half full (or none).
    table: Vec<u32>,
    /// How many lists are not empty.
    busy: usize,
    /// Positions in `nodes` by node name ([`PendingCalls::position_named`]).
    names: clients::NameCache<usize>,
}

impl PendingCalls {
    /// The calls of `nodes` (sorted by ID, IDs unique, lists not empty).
    fn of(nodes: Vec<(String, Vec<PendingCall>)>) -> Self {
        PendingCalls {
            table: clients::table_of(nodes.iter().map(|(id, _)| id.as_str())),
            busy: nodes.len(),
            nodes,
            names: clients::NameCache::default(),
        }
    }

    /// Whether no call is in flight.
    pub fn is_empty(&self) -> bool {
        self.busy == 0
    }

    /// How many nodes have calls in flight.
    pub fn len(&self) -> usize {
        self.busy
    }

    /// Where `node`'s list is.
    fn position(&self, node: &str) -> Option<usize> {
        clients::find(&self.table, node, |position| {
            self.nodes.get(position).map(|(id, _)| id.as_str())
        })
    }

    /// Where the list of the node `node` names is (the shared copy of its
    /// ID that calls and events carry): found by the copy's address when
    /// it was met before ([`clients::NameCache`]).
    fn position_named(&mut self, node: &NodeName) -> Option<usize> {
        let (table, nodes) = (&self.table, &self.nodes);
        self.names.get_or_look_up(node, |id| {
            clients::find(table, id, |at| nodes.get(at).map(|(key, _)| key.as_str()))
        })
    }

    /// The calls in flight of `node`.
    pub fn get(&self, node: &str) -> Option<&Vec<PendingCall>> {
        let calls = &self.nodes[self.position(node)?].1;
        (!calls.is_empty()).then_some(calls)
    }

    /// The calls in flight of `node`, to change (not to empty: see
    /// [`PendingCalls::take`]).
    fn get_mut(&mut self, node: &str) -> Option<&mut Vec<PendingCall>> {
        let index = self.position(node)?;
        let calls = &mut self.nodes[index].1;
        (!calls.is_empty()).then_some(calls)
    }

    /// The nodes with their calls in flight, in ID order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Vec<PendingCall>)> + Clone + '_ {
        self.nodes
            .iter()
            .filter(|(_, calls)| !calls.is_empty())
            .map(|(id, calls)| (id, calls))
    }

    /// Appends `call` to the list of `node` (made if the node never had
    /// one).
    fn push(&mut self, node: &NodeName, call: PendingCall) {
        let index = match self.position_named(node) {
            Some(index) => index,
            None => {
                // Mostly appended: the clients first send in ID order.
                // Positions after it move.
                self.names.clear();
                let node = node.as_str();
                let index = self.nodes.partition_point(|(id, _)| id.as_str() < node);
                let entry = (node.to_owned(), Vec::new());
                clients::insert_entry(&mut self.nodes, &mut self.table, index, entry);
                index
            }
        };
        let calls = &mut self.nodes[index].1;
        if calls.is_empty() {
            self.busy += 1;
        }
        calls.push(call);
    }

    /// Removes and returns the call `id` of `node` if `ready` holds for it.
    fn take(
        &mut self,
        node: &str,
        id: CallId,
        ready: impl FnOnce(&PendingCall) -> bool,
    ) -> Option<PendingCall> {
        let index = self.position(node)?;
        self.take_at(index, id, ready)
    }

    /// [`PendingCalls::take`] for the node `node` names (found by its
    /// address: [`PendingCalls::position_named`]).
    fn take_named(
        &mut self,
        node: &NodeName,
        id: CallId,
        ready: impl FnOnce(&PendingCall) -> bool,
    ) -> Option<PendingCall> {
        let index = self.position_named(node)?;
        self.take_at(index, id, ready)
    }

    /// [`PendingCalls::take`] from the list at `index`.
    fn take_at(
        &mut self,
        index: usize,
        id: CallId,
        ready: impl FnOnce(&PendingCall) -> bool,
    ) -> Option<PendingCall> {
        let calls = &mut self.nodes[index].1;
        let position = calls.iter().position(|call| call.id == id)?;
        if !ready(&calls[position]) {
            return None;
        }
        let call = calls.remove(position);
        if calls.is_empty() {
            self.busy -= 1;
        }
        Some(call)
    }

    /// Removes the calls of `node`; returns them.
    fn remove(&mut self, node: &str) -> Option<Vec<PendingCall>> {
        let index = self.position(node)?;
        let calls = std::mem::take(&mut self.nodes[index].1);
        if calls.is_empty() {
            return None;
        }
        self.busy -= 1;
        Some(calls)
    }
}

/// A clone holds the same calls (and no empty lists).
impl Clone for PendingCalls {
    fn clone(&self) -> Self {
        PendingCalls::of(
            self.iter()
                .map(|(id, calls)| (id.clone(), calls.clone()))
                .collect(),
        )
    }
}

/// Equal when they hold the same calls by the same nodes.
impl PartialEq for PendingCalls {
    fn eq(&self, other: &Self) -> bool {
        self.busy == other.busy && self.iter().eq(other.iter())
    }
}

impl fmt::Debug for PendingCalls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Written as the map by node ID it stands for (with its length, as the
/// map writes it).
impl Serialize for PendingCalls {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.busy))?;
        for (node, calls) in self.iter() {
            map.serialize_entry(node, calls)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for PendingCalls {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let nodes = BTreeMap::<String, Vec<PendingCall>>::deserialize(deserializer)?;
        Ok(PendingCalls::of(
            nodes
                .into_iter()
                .filter(|(_, calls)| !calls.is_empty())
                .collect(),
        ))
    }
}

/// Every link and every call in flight.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Network {
    /// Links by node ID (read for every call and reply).
    pub links: ChunkMap<String, Link>,
    /// Calls in flight per node ID, in the order the user sees them
    /// (send order unless reordered).
    pub pending: PendingCalls,
    /// One-way latency in ticks.
    pub latency: Tick,
    /// The next call number.
    pub next_call: CallId,
    /// The links read by node name ([`Network::link_named`]; not part of
    /// the world, cleared by [`Network::link_mut`]).
    #[serde(skip)]
    pub(super) link_names: clients::NameCache<Link>,
}

impl Network {
    /// The link of `node` (up, not holding, if never touched).
    pub fn link(&self, node: &str) -> Link {
        self.links.get(node).cloned().unwrap_or_default()
    }

    /// [`Network::link`] of the node `node` names (the shared copy of its
    /// ID that events carry): found by the copy's address when it was read
    /// before ([`clients::NameCache`]).
    pub fn link_named(&mut self, node: &NodeName) -> Link {
        let links = &self.links;
        self.link_names
            .get_or_look_up(node, |id| Some(links.get(id).copied().unwrap_or_default()))
            .unwrap_or_default()
    }

    /// Mutable link of `node`, created on first use (what
    /// [`Network::link_named`] read is forgotten).
    pub fn link_mut(&mut self, node: &str) -> &mut Link {
        self.link_names.clear();
        if !self.links.contains_key(node) {
            self.links.insert(node.to_string(), Link::default());
        }
        self.links.get_mut(node).expect("inserted above")
    }

    /// Queues a call on the link of `node`, held if `held` (the link's
    /// hold flag, which the caller read); returns its id.
    pub fn send(&mut self, now: Tick, node: &NodeName, held: bool, rpc: Rpc) -> CallId {
        let id = self.next_call;
        self.next_call += 1;
        let call = PendingCall {
            id,
            node: node.clone(),
            rpc,
            sent_at: now,
            deliver_at: now + self.latency,
            held,
        };
        self.pending.push(node, call);
        id
    }

    /// Removes and returns a call in flight.
    pub fn take(&mut self, node: &str, id: CallId) -> Option<PendingCall> {
        self.take_if(node, id, |_| true)
    }

    /// Removes and returns a call in flight if `ready` holds for it (one
    /// lookup of the node's list).
    pub fn take_if(
        &mut self,
        node: &str,
        id: CallId,
        ready: impl FnOnce(&PendingCall) -> bool,
    ) -> Option<PendingCall> {
        self.pending.take(node, id, ready)
    }

    /// [`Network::take_if`] for the node `node` names (the shared copy of
    /// its ID that events carry).
    pub fn take_if_named(
        &mut self,
        node: &NodeName,
        id: CallId,
        ready: impl FnOnce(&PendingCall) -> bool,
    ) -> Option<PendingCall> {
        self.pending.take_named(node, id, ready)
    }

    /// A call in flight.
    pub fn get(&self, node: &str, id: CallId) -> Option<&PendingCall> {
        self.pending.get(node)?.iter().find(|call| call.id == id)
    }

    /// A call in flight, mutable.
    pub fn get_mut(&mut self, node: &str, id: CallId) -> Option<&mut PendingCall> {
        self.pending
            .get_mut(node)?
            .iter_mut()
            .find(|call| call.id == id)
    }

    /// Removes every call in flight of `node` (the link went down).
    pub fn drain_node(&mut self, node: &str) -> Vec<PendingCall> {
        self.pending.remove(node).unwrap_or_default()
    }

    /// Moves a call to `position` in its client's list.
    pub fn reorder(&mut self, node: &str, id: CallId, position: usize) -> bool {
        let Some(calls) = self.pending.get_mut(node) else {
            return false;
        };
        let Some(from) = calls.iter().position(|call| call.id == id) else {
            return false;
        };
        let call = calls.remove(from);
        let to = position.min(calls.len());
        calls.insert(to, call);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::{Network, PendingCall};
    use crate::server::rpc::Rpc;
    use std::collections::BTreeMap;

    /// Calls sent, delivered, held and dropped read, compare and serialize
    /// as a `BTreeMap` of the calls in flight by node does, through lists
    /// emptied and used again, and a clone holds the same calls.
    #[test]
    fn pending_calls_agree_with_btree_map() {
        let mut net = Network::default();
        let mut model: BTreeMap<String, Vec<PendingCall>> = BTreeMap::new();
        let nodes = ["node-2", "node-10", "node-1", "node-0010", "node-0010x", ""];
        for round in 0..40u32 {
            let node = nodes[(round as usize * 7) % nodes.len()];
            let rpc = if round % 3 == 0 {
                Rpc::UpdateStatus
            } else {
                Rpc::GetClientAllocs
            };
            let name = node.into();
            let id = net.send(u64::from(round), &name, round % 5 == 0, rpc.clone());
            let sent = net.get(node, id).cloned().expect("sent");
            assert_eq!((sent.id, &sent.rpc), (id, &rpc));
            model.entry(node.to_string()).or_default().push(sent);
            if round % 2 == 1 {
                // Deliver the oldest call of another node, emptying lists.
                let other = nodes[(round as usize * 3) % nodes.len()];
                let first = model
                    .get(other)
                    .and_then(|calls| calls.first())
                    .map(|c| c.id);
                if let Some(first) = first {
                    let taken = net.take(other, first).expect("in flight");
                    let calls = model.get_mut(other).expect("listed");
                    assert_eq!(calls.remove(0), taken);
                    if calls.is_empty() {
                        model.remove(other);
                    }
                }
                assert!(net.take(other, 9_999).is_none());
            }
            if round == 30 {
                assert_eq!(
                    net.drain_node("node-1"),
                    model.remove("node-1").unwrap_or_default()
                );
            }
            assert_eq!(net.pending.is_empty(), model.is_empty());
            assert_eq!(net.pending.len(), model.len());
            assert!(net.pending.iter().eq(model.iter()));
            for node in nodes {
                assert_eq!(net.pending.get(node), model.get(node));
            }
            let json = serde_json::to_string(&net.pending).expect("serialize");
            assert_eq!(json, serde_json::to_string(&model).expect("model"));
            let copy = net.pending.clone();
            assert_eq!(copy, net.pending);
            assert_eq!(serde_json::to_string(&copy).expect("copy"), json);
            let back: super::PendingCalls = serde_json::from_str(&json).expect("deserialize");
            assert_eq!(back, net.pending);
        }
        assert!(net.pending.get("node-3").is_none());
    }

    /// Hundreds of nodes (the table grows and probes past other IDs) send
    /// in a scrambled order: each finds its own list, the lists iterate
    /// in ID order, and a delivered call leaves its node's list out.
    #[test]
    fn pending_calls_of_many_nodes_iterate_in_id_order() {
        let mut net = Network::default();
        let ids: Vec<String> = (0..300u32)
            .map(|n| format!("node-{:03}", (n * 7) % 300))
            .collect();
        for id in &ids {
            net.send(0, &id.as_str().into(), false, Rpc::UpdateStatus);
        }
        assert_eq!(net.pending.len(), 300);
        for (id, calls) in net.pending.iter() {
            assert_eq!(calls.len(), 1);
            assert_eq!(calls[0].node.as_str(), id.as_str());
        }
        let listed: Vec<&String> = net.pending.iter().map(|(id, _)| id).collect();
        let mut sorted: Vec<&String> = ids.iter().collect();
        sorted.sort();
        assert_eq!(listed, sorted);
        let first = net.pending.get("node-042").map(|calls| calls[0].id);
        assert!(net.take("node-042", first.expect("sent")).is_some());
        assert!(net.pending.get("node-042").is_none());
        assert!(net.pending.get("node-300").is_none());
        assert_eq!(net.pending.iter().count(), 299);
    }
}
