//! View models: plain data the UI renders. The UI makes no decision of its
//! own; everything it shows is computed here.

use serde::{Deserialize, Serialize};

/// One allocation as a chip in the cluster view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocView {
    /// Allocation ID.
    pub id: String,
    /// Allocation name, `<job>.<group>[<index>]`.
    pub name: String,
    /// Name index, the number in brackets.
    pub name_index: u32,
    /// Client status (`pending`, `running`, `complete`, `failed`, `lost`, `unknown`).
    pub client_status: String,
    /// Desired status (`run`, `stop`, `evict`).
    pub desired_status: String,
    /// Job version the allocation runs.
    pub job_version: u64,
}

/// One client node in the cluster view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeView {
    /// Node ID.
    pub id: String,
    /// Node name shown to the user.
    pub name: String,
    /// Node status (`ready`, `down`, `disconnected`, `initializing`).
    pub status: String,
    /// Whether the client's link to the servers is up.
    pub link_up: bool,
    /// Allocations on the node, in ID order.
    pub allocs: Vec<AllocView>,
}

/// The whole cluster as the UI draws it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterView {
    /// Client nodes, in ID order.
    pub nodes: Vec<NodeView>,
}

/// A small example cluster: three ready nodes running one service job
/// `web` with three allocations.
pub fn demo_cluster() -> ClusterView {
    let nodes = ["client-a", "client-b", "client-c"]
        .iter()
        .enumerate()
        .map(|(index, name)| NodeView {
            id: format!("node-{index}"),
            name: (*name).to_string(),
            status: "ready".to_string(),
            link_up: true,
            allocs: vec![AllocView {
                id: format!("alloc-{index}"),
                name: format!("web.web[{index}]"),
                name_index: index as u32,
                client_status: "running".to_string(),
                desired_status: "run".to_string(),
                job_version: 0,
            }],
        })
        .collect();
    ClusterView { nodes }
}
