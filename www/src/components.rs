//! UI components, one per file.

pub mod calls;
pub mod cluster;
pub mod evals;
pub mod inspector;
pub mod jobs;
pub mod lessons;
pub mod scrubber;
pub mod sequence;
pub mod topbar;
pub mod tracelog;
