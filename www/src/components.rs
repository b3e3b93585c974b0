//! UI components, one per file.

pub mod cluster;
