//! The data model: Nomad's jobs, nodes, allocations, evaluations and deployments.
