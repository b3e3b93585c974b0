//! The scheduler reconciler: Nomad's `scheduler/reconciler` package.
//!
//! - [`cluster`]: service and batch jobs (`reconcile_cluster.go`); entry
//!   point [`cluster::reconcile`].
//! - [`alloc_set`], [`filters`], [`picker`]: `allocs.go`, `filters.go`,
//!   `reconnecting_picker.go`.
//! - [`rules`]: the version switches ([`rules::ReconcilerRules`]).
//! - [`reasons`]: why each alloc went where it went.
//! - `node`: system and sysbatch jobs (`reconcile_node.go`).

pub mod alloc_set;
pub mod cluster;
pub mod filters;
pub mod node;
pub mod picker;
pub mod reasons;
pub mod rules;
