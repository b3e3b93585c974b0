//! The scheduler reconciler: Nomad's scheduler/reconciler package.
