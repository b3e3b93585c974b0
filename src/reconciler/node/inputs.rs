//! How the system and sysbatch schedulers gather the node reconciler's
//! input from cluster state (Nomad's `scheduler/util.go`:
//! `readyNodesInDCsAndPool`, `taintedNodes`, and
//! `structs.SplitTerminalAllocs`), so the simulator and the tests build it
//! the way Nomad does.

use super::{TerminalByNodeByName, split_terminal_allocs};
use crate::model::{Allocation, Job, Node, NodeStatus};
use std::collections::{BTreeMap, BTreeSet};

/// The node pool that stands for every pool (`structs.NodePoolAll`).
pub const NODE_POOL_ALL: &str = "all";

/// Nomad's datacenter glob (`ryanuber/go-glob`): `*` matches any run of
/// characters, everything else matches itself.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == text;
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// The ready nodes in the job's datacenters and pool, and every node of the
/// pool that is not ready, whatever its datacenter
/// (`readyNodesInDCsAndPool`). Input order is kept.
pub fn ready_nodes_in_dcs_and_pool(
    nodes: &[Node],
    datacenters: &[String],
    pool: &str,
) -> (Vec<Node>, BTreeSet<String>) {
    let mut ready = Vec::new();
    let mut not_ready = BTreeSet::new();
    let any_pool = pool.is_empty() || pool == NODE_POOL_ALL;
    for node in nodes.iter().filter(|n| any_pool || n.node_pool == pool) {
        if !node.ready() {
            not_ready.insert(node.id.clone());
            continue;
        }
        if datacenters
            .iter()
            .any(|dc| glob_match(dc, &node.datacenter))
        {
            ready.push(node.clone());
        }
    }
    (ready, not_ready)
}

/// The tainted nodes among those holding `allocs` (`taintedNodes`): a node
/// that no longer exists (`None`), is down, is draining, or is disconnected.
pub fn tainted_nodes(nodes: &[Node], allocs: &[Allocation]) -> BTreeMap<String, Option<Node>> {
    let by_id: BTreeMap<&str, &Node> =
        crate::cold_sort::map_from(nodes.iter().map(|n| (n.id.as_str(), n)));
    let mut tainted = BTreeMap::new();
    for alloc in allocs {
        if tainted.contains_key(&alloc.node_id) {
            continue;
        }
        match by_id.get(alloc.node_id.as_str()) {
            None => {
                tainted.insert(alloc.node_id.clone(), None);
            }
            Some(node) => {
                let down = node.status == NodeStatus::Down;
                let disconnected = node.status == NodeStatus::Disconnected;
                if down || node.draining() || disconnected {
                    tainted.insert(alloc.node_id.clone(), Some((*node).clone()));
                }
            }
        }
    }
    tainted
}

/// Everything the system scheduler hands the node reconciler, built from
/// the cluster's nodes and the job's allocs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeSchedulerView {
    /// Ready nodes in the job's datacenters and pool.
    pub ready_nodes: Vec<Node>,
    /// Nodes of the pool that are not ready.
    pub not_ready_nodes: BTreeSet<String>,
    /// Tainted nodes holding the job's allocs.
    pub tainted_nodes: BTreeMap<String, Option<Node>>,
    /// The job's non-terminal allocs.
    pub live_allocs: Vec<Allocation>,
    /// The latest terminal alloc per node and name.
    pub terminal_allocs: TerminalByNodeByName,
}

impl NodeSchedulerView {
    /// Builds the view of `job` over every known node and the job's allocs
    /// (terminal or not), as `SystemScheduler.computeJobAllocs` does.
    pub fn build(job: &Job, nodes: &[Node], job_allocs: &[Allocation]) -> Self {
        let (ready_nodes, not_ready_nodes) =
            ready_nodes_in_dcs_and_pool(nodes, &job.datacenters, &job.node_pool);
        let tainted_nodes = tainted_nodes(nodes, job_allocs);
        let (live_allocs, terminal_allocs) = split_terminal_allocs(job_allocs);
        NodeSchedulerView {
            ready_nodes,
            not_ready_nodes,
            tainted_nodes,
            live_allocs,
            terminal_allocs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn datacenter_globs() {
        assert!(glob_match("dc1", "dc1"));
        assert!(!glob_match("dc1", "dc2"));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("dc*", "dc2"));
        assert!(glob_match("*-east", "us-east"));
        assert!(glob_match("us-*-1", "us-east-1"));
        assert!(!glob_match("us-*-1", "us-east-2"));
        assert!(!glob_match("ab*ba", "aba"));
    }
}
