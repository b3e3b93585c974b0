//! nomad-playground core: a pure, deterministic re-implementation of Nomad's
//! scheduler reconciler and of the client/server protocol around disconnected clients.

pub mod model;
pub mod reconciler;
pub mod view;

/// The version of the core, shown by the UI and the CLI.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
