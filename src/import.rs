//! Importers: real Nomad state and jobspecs, turned into a scenario.
//!
//! Inputs are texts with a name (a file name, or `pasted`). JSON inputs are
//! Nomad API objects, recognised by their shape: a job (`GET /v1/job/:id`,
//! or `nomad job inspect`, which wraps it in `{"Job": …}`), allocations
//! (`/v1/allocation/:id`, `/v1/node/:id/allocations`), nodes, evaluations,
//! list stubs, and the newline-delimited files of a `nomad operator debug`
//! bundle. Anything else is read as an HCL jobspec ([`hcl`], [`jobspec`]).
//!
//! Diagnostics name the input and the field (`job.json: Job.TaskGroups[0].Count`).
//! What a scenario (format v1) cannot hold — allocations and evaluations as
//! initial state, constraints other than node IDs, networks, … — becomes a
//! [`Diagnostic`] warning, and the allocations are summarised in a `note`
//! action at the start of the script.

pub mod api_json;
pub mod cli;
pub mod hcl;
pub mod jobspec;

use crate::scenario::format::{Action, FORMAT_VERSION, JobSpec, NodeSpec, Scenario};
use crate::scenario::{self, ScenarioError};
use std::collections::BTreeMap;

/// A warning about an input: what was dropped or guessed, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Input name.
    pub input: String,
    /// Field path in the input (`Job.TaskGroups[0].Count`, `job.group[web]`),
    /// or empty for the whole input.
    pub path: String,
    /// What happened.
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.input.is_empty() && self.path.is_empty() {
            write!(f, "{}", self.message)
        } else if self.input.is_empty() {
            write!(f, "{}: {}", self.path, self.message)
        } else if self.path.is_empty() {
            write!(f, "{}: {}", self.input, self.message)
        } else {
            write!(f, "{}: {}: {}", self.input, self.path, self.message)
        }
    }
}

/// Why an import fails.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    /// Nothing to import.
    #[error("nothing to import: give a Nomad API JSON file or an HCL jobspec")]
    Empty,
    /// Not valid JSON.
    #[error("{input}: line {line}, column {column}: invalid JSON: {message}")]
    Json {
        /// Input name.
        input: String,
        /// Line.
        line: usize,
        /// Column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// Not valid HCL.
    #[error("{input}: line {line}, column {column}: {message}")]
    Hcl {
        /// Input name.
        input: String,
        /// Line.
        line: usize,
        /// Column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A field with a wrong value.
    #[error("{input}: {path}: {message}")]
    Field {
        /// Input name.
        input: String,
        /// Field path.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Valid JSON that is no Nomad object this importer knows.
    #[error("{input}: {message}")]
    Unrecognized {
        /// Input name.
        input: String,
        /// What was found.
        message: String,
    },
    /// The inputs import, but the scenario they make is invalid.
    #[error("the imported scenario is invalid: {0}")]
    Scenario(#[from] ScenarioError),
}

/// The result of an import.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The scenario.
    pub scenario: Scenario,
    /// What could not be carried over.
    pub warnings: Vec<Diagnostic>,
}

/// What the inputs contributed, before it becomes a scenario.
#[derive(Debug, Default)]
pub struct Collected {
    /// Nodes by ID.
    pub nodes: BTreeMap<String, NodeSpec>,
    /// Jobs by ID (the newest version seen wins).
    pub jobs: BTreeMap<String, (u64, JobSpec)>,
    /// Actions to apply at the start (eligibility, drains).
    pub setup: Vec<Action>,
    /// One line per allocation seen (for the note).
    pub allocs: Vec<String>,
    /// Node IDs allocations refer to.
    pub alloc_nodes: Vec<String>,
    /// Warnings.
    pub warnings: Vec<Diagnostic>,
}

impl Collected {
    /// Records a warning.
    pub fn warn(&mut self, source: &str, path: &str, message: impl Into<String>) {
        self.warnings.push(Diagnostic {
            input: source.to_string(),
            path: path.to_string(),
            message: message.into(),
        });
    }

    /// Adds a job, keeping the highest version.
    pub fn add_job(&mut self, version: u64, job: JobSpec) {
        match self.jobs.get(&job.id) {
            Some((old, _)) if *old > version => {}
            _ => {
                self.jobs.insert(job.id.clone(), (version, job));
            }
        }
    }
}

/// Imports one input.
pub fn import_text(name: &str, text: &str) -> Result<Imported, ImportError> {
    import(&[(name, text)])
}

/// Imports several inputs into one scenario.
pub fn import(inputs: &[(&str, &str)]) -> Result<Imported, ImportError> {
    let mut collected = Collected::default();
    let mut any = false;
    for (name, text) in inputs {
        let trimmed = text.trim_start_matches('\u{feff}').trim();
        if trimmed.is_empty() {
            collected.warn(name, "", "empty input (skipped)");
            continue;
        }
        any = true;
        if trimmed.starts_with('{') || trimmed.starts_with('[') {
            api_json::import_json(name, trimmed, &mut collected)?;
        } else {
            jobspec::import_hcl(name, trimmed, &mut collected)?;
        }
    }
    if !any {
        return Err(ImportError::Empty);
    }
    finish(collected, inputs)
}

fn finish(mut c: Collected, inputs: &[(&str, &str)]) -> Result<Imported, ImportError> {
    // Nodes the allocations ran on but that were not given: add them, so the
    // picture is complete.
    for node in std::mem::take(&mut c.alloc_nodes) {
        if !node.is_empty() && !c.nodes.contains_key(&node) {
            c.warn(
                "",
                "",
                format!("node {node} is known only from allocations: added with default resources"),
            );
            c.nodes.insert(node.clone(), default_node(&node));
        }
    }
    if c.nodes.is_empty() {
        c.warn(
            "",
            "",
            "no nodes in the input: added three default nodes (node-a, node-b, node-c)",
        );
        for id in ["node-a", "node-b", "node-c"] {
            c.nodes.insert(id.to_string(), default_node(id));
        }
    }
    // Node constraints must name nodes of the scenario.
    let known: Vec<String> = c.nodes.keys().cloned().collect();
    let mut dropped = Vec::new();
    for (_, job) in c.jobs.values_mut() {
        for group in &mut job.groups {
            if let Some(nodes) = &mut group.nodes {
                let before = nodes.len();
                nodes.retain(|n| known.contains(n));
                if nodes.len() != before {
                    dropped.push(format!("{}.{}", job.id, group.name));
                }
                if nodes.is_empty() {
                    group.nodes = None;
                }
            }
        }
    }
    for group in dropped {
        c.warn(
            "",
            &group,
            "the node constraint names nodes not in the input: those were dropped",
        );
    }
    let mut script = std::mem::take(&mut c.setup);
    if !c.allocs.is_empty() {
        c.warn(
            "",
            "",
            format!(
                "{} allocation(s) seen: scenario format v1 has no initial allocations, so the \
                 scenario starts empty and the scheduler places them again; they are listed in \
                 the first note",
                c.allocs.len()
            ),
        );
        script.insert(
            0,
            Action::Note {
                text: format!("imported allocations:\n{}", c.allocs.join("\n")),
            },
        );
    }
    let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
    let scenario = Scenario {
        version: FORMAT_VERSION,
        name: "imported".to_string(),
        description: Some(format!("Imported from {}.", names.join(", "))),
        source: None,
        profile: None,
        profiles: None,
        seed: None,
        settings: None,
        server: None,
        nodes: c.nodes.into_values().collect(),
        jobs: c.jobs.into_values().map(|(_, j)| j).collect(),
        script,
    };
    // Round-trip through the text form, as a file would be.
    let scenario = scenario::parse(&scenario::print(&scenario))?;
    Ok(Imported {
        scenario,
        warnings: c.warnings,
    })
}

/// The node IDs a constraint pins a group to, for the one kind of constraint
/// the scenario format can express (`${node.unique.id}` equal to, or in, a
/// list); `None` for any other constraint. Shared by the API JSON and HCL
/// importers.
pub(crate) fn node_id_constraint(target: &str, operand: &str, value: &str) -> Option<Vec<String>> {
    match (target, operand) {
        ("${node.unique.id}", "=" | "==" | "is") => Some(vec![value.to_string()]),
        ("${node.unique.id}", "set_contains_any" | "set_contains") => Some(
            value
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
        ),
        _ => None,
    }
}

/// Several node constraints on one group all hold: keep the nodes they share.
pub(crate) fn intersect_nodes(nodes: Option<Vec<String>>, ids: Vec<String>) -> Vec<String> {
    match nodes {
        None => ids,
        Some(prev) => prev.into_iter().filter(|n| ids.contains(n)).collect(),
    }
}

/// A node with default resources.
pub fn default_node(id: &str) -> NodeSpec {
    NodeSpec {
        id: id.to_string(),
        name: None,
        datacenter: None,
        node_pool: None,
        class: None,
        cpu: None,
        memory_mb: None,
        registered: None,
        agent: None,
    }
}
