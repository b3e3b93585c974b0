//! UI components, one per file.

pub mod calls;
pub mod cluster;
pub mod compare;
pub mod evals;
pub mod explore;
pub mod export;
pub mod import;
pub mod inspector;
pub mod jobs;
pub mod lessons;
pub mod rows;
pub mod script;
pub mod scrubber;
pub mod sequence;
pub mod share;
pub mod topbar;
pub mod tracelog;
