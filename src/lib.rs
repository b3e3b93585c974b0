//! nomad-playground core: a pure, deterministic re-implementation of Nomad's
//! scheduler reconciler and of the client/server protocol around
//! disconnected clients.
//!
//! The core does no I/O and reads no clock: time and identifiers come in from
//! the caller, so the same input gives the same output natively and in
//! WebAssembly. See `ARCHITECTURE.md` for the map.

pub mod fixture;
pub mod model;
pub mod playground;
pub mod reconciler;
pub mod view;

pub mod cold_sort;
pub mod compare;
pub mod script_view;

pub mod client;
pub mod explore;
pub mod profile;
pub mod scenario;
pub mod server;
pub mod sim;

pub mod export;
pub mod import;
pub mod share;

/// The version of the core, shown by the UI and the CLI.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
