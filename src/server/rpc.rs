//! The client → server RPCs the simulator models and their replies
//! (Nomad's `Node.Register`, `Node.UpdateStatus`, `Node.UpdateAlloc`,
//! `Node.GetClientAllocs` with `Alloc.GetAllocs`, and `Alloc.GetAlloc`).

use crate::model::alloc::{Allocation, TaskStates};
use crate::sim::trace::CallDetail;
use serde::{Deserialize, Serialize};
use std::rc::Rc;

/// What a client reports about one alloc (the client-owned fields Nomad's
/// `allocSync` sends).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocUpdate {
    /// Alloc ID.
    pub id: String,
    /// Reported client status.
    pub client_status: String,
    /// Reported client description.
    pub client_description: String,
    /// Task states.
    pub task_states: TaskStates,
    /// Deployment health the client set (`DeploymentStatus`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_status: Option<crate::model::AllocDeploymentStatus>,
}

/// A call's arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rpc")]
pub enum Rpc {
    /// `Node.Register` with the client's node.
    Register {
        /// The node as the client describes it.
        node: Box<super::NodeRecord>,
    },
    /// `Node.UpdateStatus` (a client always asks for `ready`).
    UpdateStatus,
    /// `Node.UpdateAlloc` with a batch of updates.
    UpdateAlloc {
        /// The batch.
        updates: Vec<AllocUpdate>,
    },
    /// `Node.GetClientAllocs` followed by `Alloc.GetAllocs` of what changed.
    GetClientAllocs,
    /// `Alloc.GetAlloc` (the remote previous-alloc watcher polls it).
    GetAlloc {
        /// The watched alloc ID (empty in the #10200 bug).
        alloc_id: String,
    },
}

impl Rpc {
    /// Nomad's name for the RPC.
    pub fn name(&self) -> &'static str {
        match self {
            Rpc::Register { .. } => "Node.Register",
            Rpc::UpdateStatus => "Node.UpdateStatus",
            Rpc::UpdateAlloc { .. } => "Node.UpdateAlloc",
            Rpc::GetClientAllocs => "Node.GetClientAllocs",
            Rpc::GetAlloc { .. } => "Alloc.GetAlloc",
        }
    }

    /// The short code the UI shows on a call chip.
    pub fn code(&self) -> &'static str {
        match self {
            Rpc::Register { .. } => "REG",
            Rpc::UpdateStatus => "HB",
            Rpc::UpdateAlloc { .. } => "UPD",
            Rpc::GetClientAllocs => "GET",
            Rpc::GetAlloc { .. } => "WATCH",
        }
    }

    /// Whether a call reference such as `UpdateAlloc`, `upd` or
    /// `Node.UpdateAlloc` names this RPC.
    pub fn matches(&self, text: &str) -> bool {
        let lower = text.to_ascii_lowercase();
        let name = self.name().to_ascii_lowercase();
        lower == name
            || name.ends_with(&format!(".{lower}"))
            || lower == self.code().to_ascii_lowercase()
            || (lower == "heartbeat" && matches!(self, Rpc::UpdateStatus))
            || (lower == "getallocs" && matches!(self, Rpc::GetClientAllocs))
    }

    /// The description of the arguments when it is one of a few fixed
    /// texts (a heartbeat's, most calls': the trace keeps one shared copy
    /// of it), or `None` when [`Rpc::detail`] writes it from the arguments.
    pub fn fixed_detail(&self) -> Option<&'static str> {
        match self {
            Rpc::UpdateStatus => Some("status=ready"),
            Rpc::Register { .. } | Rpc::GetClientAllocs => Some(""),
            Rpc::UpdateAlloc { .. } | Rpc::GetAlloc { .. } => None,
        }
    }

    /// A short description of the arguments for the trace.
    pub fn detail(&self) -> String {
        if let Some(fixed) = self.fixed_detail() {
            return fixed.to_string();
        }
        match self {
            Rpc::UpdateAlloc { updates } => {
                // "<short id>=<status><health>" per update, comma-separated,
                // written into one buffer.
                let mut detail = String::with_capacity(updates.len() * 20);
                for update in updates {
                    let health = match update.deployment_status.as_ref().and_then(|d| d.healthy) {
                        Some(true) => "(healthy)",
                        Some(false) => "(unhealthy)",
                        None => "",
                    };
                    if !detail.is_empty() {
                        detail.push(',');
                    }
                    detail.push_str(crate::sim::trace::short(&update.id));
                    detail.push('=');
                    detail.push_str(update.client_status.as_str());
                    detail.push_str(health);
                }
                detail
            }
            Rpc::GetAlloc { alloc_id } => format!("id={alloc_id:?}"),
            Rpc::UpdateStatus | Rpc::Register { .. } | Rpc::GetClientAllocs => String::new(),
        }
    }
}

/// A reply (or the error the server returned).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply")]
pub enum Reply {
    /// Register or UpdateStatus accepted; the client heartbeats again after `ttl`.
    Heartbeat {
        /// Heartbeat TTL in ticks.
        ttl: u64,
    },
    /// UpdateAlloc accepted.
    Ack,
    /// The allocs on the node, full objects.
    Allocs {
        /// Server allocs for the node.
        allocs: Vec<Rc<Allocation>>,
    },
    /// One alloc, or none.
    Alloc {
        /// The alloc if it exists.
        alloc: Option<Rc<Allocation>>,
    },
    /// The RPC failed with this error.
    Error {
        /// Error text.
        message: String,
        /// Nomad's "node not found": the client registers again.
        node_not_found: bool,
    },
}

impl Reply {
    /// A short description for the trace (a heartbeat's TTL as the number,
    /// written out when read).
    pub fn detail(&self) -> CallDetail {
        match self {
            Reply::Heartbeat { ttl } => CallDetail::ttl(*ttl),
            Reply::Ack => "ok".into(),
            Reply::Allocs { allocs } => allocs_text(allocs.len()).into(),
            Reply::Alloc { alloc } => alloc_text(alloc.as_deref()).into(),
            Reply::Error { message, .. } => format!("error: {message}").into(),
        }
    }
}

/// `<n> allocs`, written without the formatting machinery (the text of a
/// `GetClientAllocs` handled and of its reply).
pub fn allocs_text(count: usize) -> String {
    let mut text = String::with_capacity(16);
    crate::sim::trace::push_number(&mut text, count as u64, 0);
    text.push_str(" allocs");
    text
}

/// `<short id> <desired>/<client>` of a watched alloc, or `not found` (the
/// text of an `Alloc.GetAlloc` handled and of its reply).
pub fn alloc_text(alloc: Option<&Allocation>) -> String {
    match alloc {
        Some(alloc) => [
            crate::sim::trace::short(&alloc.id),
            " ",
            alloc.desired_status.as_str(),
            "/",
            alloc.client_status.as_str(),
        ]
        .concat(),
        None => "not found".to_string(),
    }
}
