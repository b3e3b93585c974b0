//! Heartbeat TTLs and their expiry (Nomad's `nomad/heartbeat.go`).
//!
//! The TTL told to a client is `max(min_heartbeat_ttl, timers /
//! max_heartbeats_per_second)` plus a random stagger below that; the
//! server's timer fires `heartbeat_grace` later. When it fires, the node is
//! asked to become `disconnected` if some alloc on it may still wait for it
//! (a lost_after is set, it should run, and it has not expired), else `down`.

use super::{Server, ServerEffect, tick_time};
use crate::model::{DesiredStatus, NodeStatus};
use crate::sim::queue::Tick;
use crate::sim::rng::Rng;
use crate::sim::trace::{HeartbeatMissed, NodeName, TraceEvent};

impl Server {
    /// Resets a node's timer (`name` is the shared copy of its ID in
    /// [`Server::texts`], which the timer event takes); returns the TTL to
    /// tell the client.
    pub fn reset_heartbeat_timer(
        &mut self,
        now: Tick,
        name: &NodeName,
        rng: &mut Rng,
        out: &mut Vec<ServerEffect>,
    ) -> Tick {
        let node = name.as_str();
        let timers = self.state.heartbeat_timers.len() as f64;
        let rate = self.config.max_heartbeats_per_second;
        let mut ttl = self.config.min_heartbeat_ttl;
        if rate > 0.0 {
            let scaled = (timers / rate * 1000.0) as Tick;
            ttl = ttl.max(scaled);
        }
        ttl += rng.stagger(ttl);
        let deadline = now + ttl + self.config.heartbeat_grace;
        // The node's entry usually exists: copy its ID only for a new one.
        match self.state.heartbeat_timers.get_mut(node) {
            Some(stored) => *stored = deadline,
            None => {
                self.state
                    .heartbeat_timers
                    .insert(node.to_string(), deadline);
            }
        }
        out.push(ServerEffect::HeartbeatTimer {
            node: name.clone(),
            at: deadline,
        });
        ttl
    }

    /// The heartbeat timer of `node` fired.
    pub fn invalidate_heartbeat(
        &mut self,
        now: Tick,
        node: &str,
        rng: &mut Rng,
        out: &mut Vec<ServerEffect>,
    ) {
        self.state.heartbeat_timers.remove(node);
        let (requested, reason) = self.disconnect_state(now, node);
        let name = self.texts.text(node);
        out.push(ServerEffect::Trace(TraceEvent::HeartbeatMissed(Box::new(
            HeartbeatMissed {
                node: name.clone(),
                requested: self.texts.text(requested.as_str()),
                reason: reason.into(),
            },
        ))));
        if self.state.nodes.contains_key(node) {
            let _ =
                self.update_node_status(now, &name, requested, "node heartbeat missed", rng, out);
        }
    }

    /// `disconnectState`: the status a node whose heartbeat expired gets.
    pub fn disconnect_state(&self, now: Tick, node: &str) -> (NodeStatus, String) {
        let Some(record) = self.state.nodes.get(node) else {
            return (NodeStatus::Down, "node not found".to_string());
        };
        match record.node.status {
            NodeStatus::Down => return (NodeStatus::Down, "node is down".to_string()),
            NodeStatus::Initializing => {
                return (NodeStatus::Down, "node is initializing".to_string());
            }
            _ => {}
        }
        if !self.rules.disconnected_clients {
            return (
                NodeStatus::Down,
                "no disconnected clients in this version".to_string(),
            );
        }
        let now_time = tick_time(now);
        let mut can_disconnect = false;
        // Read in place (the names are borrowed for the reason).
        let allocs = self.state.allocs_by_node.get(node);
        let allocs = allocs.map_or(&[][..], |allocs| allocs.as_slice());
        let mut pending_reconnect: Vec<&str> = Vec::with_capacity(allocs.len());
        for alloc in allocs {
            let Some(job) = alloc.job.as_ref() else {
                continue;
            };
            let lost_after = self.lost_after(job, &alloc.task_group);
            if lost_after.is_zero() {
                continue;
            }
            can_disconnect = true;
            // Only an alloc that should run may wait; whether it expired is
            // asked only of an unknown one (its states are read only then).
            // A non-zero lost_after came from the alloc's group in its job:
            // the group is there, no second lookup.
            if alloc.desired_status != DesiredStatus::Run {
                continue;
            }
            let expired = alloc.client_status == crate::model::ClientStatus::Unknown && {
                let last_unknown = if self.rules.last_unknown_earliest {
                    alloc.last_unknown()
                } else {
                    alloc.last_unknown_latest()
                };
                !last_unknown.is_zero() && last_unknown.add(lost_after) <= now_time
            };
            if !expired {
                pending_reconnect.push(&alloc.name);
            }
        }
        if can_disconnect && !pending_reconnect.is_empty() {
            // Written into one buffer of the text's length.
            let names: usize = pending_reconnect.iter().map(|name| name.len() + 2).sum();
            let mut reason = String::with_capacity("may reconnect: ".len() + names - 2);
            reason.push_str("may reconnect: ");
            for (index, name) in pending_reconnect.iter().enumerate() {
                if index > 0 {
                    reason.push_str(", ");
                }
                reason.push_str(name);
            }
            (NodeStatus::Disconnected, reason)
        } else if can_disconnect {
            (NodeStatus::Down, "no alloc may wait any more".to_string())
        } else {
            (NodeStatus::Down, "no alloc sets lost_after".to_string())
        }
    }
}
