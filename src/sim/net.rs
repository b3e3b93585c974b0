//! The network between the clients and the servers: one link per client,
//! up or down, and the calls in flight on it.
//!
//! A call is sent by a client and delivered to the leader after the link
//! latency, unless the user holds it. Held calls wait until the user
//! delivers, delays, reorders or drops them; a link going down drops every
//! call in flight on it (the client sees an RPC error).

use super::chunk_map::ChunkMap;
use super::queue::Tick;
use super::trace::NodeName;
use crate::server::rpc::Rpc;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A call's number, unique within a run (`hb#3` in the UI is call 3).
/// Four bytes: the trace keeps one in most of its entries (a run makes
/// far fewer than four billion calls).
pub type CallId = u32;

/// One client's link to the servers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// Every link and every call in flight.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Network {
    /// Links by node ID (read for every call and reply).
    pub links: ChunkMap<String, Link>,
    /// Calls in flight per node ID, in the order the user sees them
    /// (send order unless reordered).
    pub pending: BTreeMap<String, Vec<PendingCall>>,
    /// One-way latency in ticks.
    pub latency: Tick,
    /// The next call number.
    pub next_call: CallId,
}

impl Network {
    /// The link of `node` (up, not holding, if never touched).
    pub fn link(&self, node: &str) -> Link {
        self.links.get(node).cloned().unwrap_or_default()
    }

    /// Mutable link of `node`, created on first use.
    pub fn link_mut(&mut self, node: &str) -> &mut Link {
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
        // The node's list usually exists only while a call is in flight:
        // look it up by the borrowed ID, and copy the ID for a new one.
        match self.pending.get_mut(node.as_str()) {
            Some(calls) => calls.push(call),
            None => {
                self.pending.insert(node.as_str().to_owned(), vec![call]);
            }
        }
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
        let calls = self.pending.get_mut(node)?;
        let position = calls.iter().position(|call| call.id == id)?;
        if !ready(&calls[position]) {
            return None;
        }
        let call = calls.remove(position);
        if calls.is_empty() {
            self.pending.remove(node);
        }
        Some(call)
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
