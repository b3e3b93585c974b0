//! The scenario format, version 1: the serde types of a scenario file.
//! `docs/scenario-format.md` describes every field.
//!
//! Optional fields are `Option`s that are left out when absent, so a file
//! parses into exactly what it says and prints back unchanged.

use super::duration::Dur;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// A whole scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Format version; must be 1.
    pub version: u32,
    /// Short name.
    pub name: String,
    /// What the scenario shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Nomad issue or PR it reproduces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Default profile (`latest` if absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Profiles the golden tests run it under (default: just `profile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profiles: Option<Vec<String>>,
    /// RNG seed (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Simulator settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
    /// Server settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerSettings>,
    /// Client nodes.
    pub nodes: Vec<NodeSpec>,
    /// Jobs registered at tick 0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<JobSpec>,
    /// The ordered script.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub script: Vec<Action>,
}

/// Simulator settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The scheduler worker processes ready evals by itself (default true);
    /// when false, evals run only on `process_eval` / `run_until_idle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_evals: Option<bool>,
    /// Clients run their heartbeat, alloc-sync and watch loops by themselves
    /// (default true); when false they call only when the script says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_clients: Option<bool>,
    /// One-way network latency (default 10ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Dur>,
    /// How long an alloc runner stays pending before its tasks run (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_start: Option<Dur>,
    /// Full checkpoint every this many steps (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_every: Option<usize>,
    /// Stop an `advance` after this many events (default 1,000,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_events_per_step: Option<u64>,
}

/// Server settings (Nomad's server config).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    /// `min_heartbeat_ttl` (default 10s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_heartbeat_ttl: Option<Dur>,
    /// `max_heartbeats_per_second` (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_heartbeats_per_second: Option<f64>,
    /// `heartbeat_grace` (default 10s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_grace: Option<Dur>,
    /// Preemption per scheduler (default: system only, as Nomad).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption: Option<PreemptionSettings>,
}

/// Nomad's `preemption_config`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreemptionSettings {
    /// System scheduler.
    #[serde(default)]
    pub system: bool,
    /// Service scheduler.
    #[serde(default)]
    pub service: bool,
    /// Batch scheduler.
    #[serde(default)]
    pub batch: bool,
}

/// A client node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Node ID.
    pub id: String,
    /// Display name (default: the ID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Datacenter (default `dc1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datacenter: Option<String>,
    /// Node pool (default `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_pool: Option<String>,
    /// Node class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// CPU in MHz (default 4000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u64>,
    /// Memory in MB (default 8192).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// Registered and ready at tick 0 (default true); when false the client
    /// starts by calling `Node.Register`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registered: Option<bool>,
    /// The client agent's settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentSettings>,
}

/// A client agent's settings that the simulator models.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSettings {
    /// `data_dir` (default `/opt/nomad/data`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
    /// `alloc_dir` (default `<data_dir>/alloc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alloc_dir: Option<String>,
    /// `chroot_env`: host path → path in the task chroot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chroot_env: Option<BTreeMap<String, String>>,
}

/// A job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// Job ID.
    pub id: String,
    /// `service` (default), `batch`, `system` or `sysbatch`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub job_type: Option<String>,
    /// Priority (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    /// Datacenters (default `["dc1"]`; `*` matches all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datacenters: Option<Vec<String>>,
    /// Node pool (default `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_pool: Option<String>,
    /// Task groups.
    pub groups: Vec<GroupSpec>,
}

/// A task group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// Group name.
    pub name: String,
    /// Count (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// CPU per alloc in MHz (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u64>,
    /// Memory per alloc in MB (default 128).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// Constraint: only these node IDs are feasible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<String>>,
    /// Legacy `max_client_disconnect`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_client_disconnect: Option<Dur>,
    /// Legacy `stop_after_client_disconnect`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_after_client_disconnect: Option<Dur>,
    /// Legacy `prevent_reschedule_on_lost`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prevent_reschedule_on_lost: Option<bool>,
    /// The `disconnect` block (≥ 1.8.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disconnect: Option<DisconnectSpec>,
    /// The `reschedule` block (default: Nomad's for the job type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reschedule: Option<RescheduleSpec>,
    /// The `update` block (absent: no deployments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<UpdateSpec>,
    /// The `ephemeral_disk` block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_disk: Option<DiskSpec>,
    /// Tasks (default: one task named after the group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Vec<TaskSpec>>,
}

/// The `disconnect` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DisconnectSpec {
    /// `lost_after`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_after: Option<Dur>,
    /// `replace` (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace: Option<bool>,
    /// `reconcile`: best_score, keep_original, keep_replacement, longest_running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconcile: Option<String>,
    /// `stop_on_client_after`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_on_client_after: Option<Dur>,
}

/// The `reschedule` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RescheduleSpec {
    /// `attempts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<i64>,
    /// `interval`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Dur>,
    /// `delay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    /// `delay_function`: constant, exponential, fibonacci.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_function: Option<String>,
    /// `max_delay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_delay: Option<Dur>,
    /// `unlimited`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlimited: Option<bool>,
}

/// The `update` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateSpec {
    /// `max_parallel` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parallel: Option<u32>,
    /// `canary`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<u32>,
    /// `auto_revert`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_revert: Option<bool>,
    /// `auto_promote`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_promote: Option<bool>,
    /// `min_healthy_time` (default 10s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_healthy_time: Option<Dur>,
    /// `healthy_deadline` (default 5m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healthy_deadline: Option<Dur>,
    /// `progress_deadline` (default 10m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline: Option<Dur>,
    /// `health_check`: `task_states` (default), `checks` (modelled as
    /// `task_states`: the simulator has no service checks) or `manual` (the
    /// client sets no health; `set_alloc_health` does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check: Option<String>,
}

/// The `ephemeral_disk` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    /// `sticky`.
    #[serde(default)]
    pub sticky: bool,
    /// `migrate`.
    #[serde(default)]
    pub migrate: bool,
    /// `size` in MB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_mb: Option<i64>,
}

/// A task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Task name.
    pub name: String,
    /// Leader task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader: Option<bool>,
    /// Driver config; a change is a destructive update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<serde_json::Value>,
    /// `kill_timeout` (default 5s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kill_timeout: Option<Dur>,
}

/// One step of the script. `Deserialize` is written by hand in
/// [`super::action_de`] (it keeps the browser bundle small).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Register a job, or a new version of it (full spec).
    RegisterJob {
        /// The spec.
        job: JobSpec,
    },
    /// Change a registered job: count and/or task config of one group.
    UpdateJob {
        /// Job ID.
        job: String,
        /// Group (default: the first).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        group: Option<String>,
        /// New count.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u32>,
        /// New config for every task of the group (destructive).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        config: Option<serde_json::Value>,
    },
    /// Stop (deregister) a job.
    StopJob {
        /// Job ID.
        job: String,
    },
    /// The operator reverts a job to an earlier version (`Job.Revert`,
    /// `nomad job revert`): that version's spec is registered as a new,
    /// not yet stable, version.
    RevertJob {
        /// Job ID.
        job: String,
        /// The version whose spec is registered again.
        version: u64,
        /// Refuse the revert unless the job is at this version
        /// (`-check-index`'s version form, `EnforcePriorVersion`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        enforce_prior_version: Option<u64>,
    },
    /// Start or cancel draining a node.
    DrainNode {
        /// Node ID.
        node: String,
        /// Drain (true) or cancel (false; default true).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        enable: Option<bool>,
    },
    /// Set a node's scheduling eligibility.
    SetEligibility {
        /// Node ID.
        node: String,
        /// Eligible or not.
        eligible: bool,
    },
    /// The client sends `Node.UpdateStatus` now.
    Heartbeat {
        /// Node ID.
        node: String,
    },
    /// The client sends `Node.UpdateAlloc` now with its queued updates, or
    /// with the statuses given (which also become its local statuses).
    UpdateAlloc {
        /// Node ID.
        node: String,
        /// Reported statuses, by alloc reference.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        allocs: Option<Vec<ReportedStatus>>,
    },
    /// The client pulls its allocs now (`Node.GetClientAllocs`).
    GetAllocs {
        /// Node ID.
        node: String,
    },
    /// The client sends `Node.Register` now.
    Register {
        /// Node ID.
        node: String,
    },
    /// A task of an alloc fails.
    TaskFail {
        /// Alloc reference.
        alloc: String,
        /// Task (default: all tasks).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<String>,
    },
    /// A task of an alloc finishes successfully.
    TaskComplete {
        /// Alloc reference.
        alloc: String,
        /// Task (default: all tasks).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<String>,
    },
    /// A task of an alloc restarts locally (the alloc stays running).
    TaskRestart {
        /// Alloc reference.
        alloc: String,
        /// Task (default: all tasks).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<String>,
    },
    /// A client's link goes down.
    LinkDown {
        /// Node ID.
        node: String,
    },
    /// A client's link comes back.
    LinkUp {
        /// Node ID.
        node: String,
    },
    /// Hold calls of a client: one call, or (without `call`) every call it
    /// sends from now on, until `release`.
    Hold {
        /// Node ID.
        node: String,
        /// Call reference (number or RPC name); absent = the whole link.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call: Option<String>,
    },
    /// Stop holding: deliver every held call of the client in list order
    /// and let new calls through.
    Release {
        /// Node ID.
        node: String,
    },
    /// Deliver one held or in-flight call now.
    Deliver {
        /// Node ID.
        node: String,
        /// Call reference: `#3`, `3`, or an RPC name (the first such call).
        call: String,
    },
    /// Move a call to a position in its client's list (0 = first).
    Reorder {
        /// Node ID.
        node: String,
        /// Call reference.
        call: String,
        /// New position.
        position: usize,
    },
    /// Drop a call; the client sees an error.
    Drop {
        /// Node ID.
        node: String,
        /// Call reference.
        call: String,
    },
    /// Delay a call by a duration (it is no longer held).
    Delay {
        /// Node ID.
        node: String,
        /// Call reference.
        call: String,
        /// How much later.
        by: Dur,
    },
    /// Advance time, handling every event up to the new time.
    Advance {
        /// How far.
        by: Dur,
    },
    /// Handle the next event only.
    Step {},
    /// Process one ready eval (the named one, or the broker's next).
    ProcessEval {
        /// Eval reference (ID prefix, or `trigger:job`), optional.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        eval: Option<String>,
    },
    /// Process ready evals and same-tick events until nothing is ready.
    RunUntilIdle {},
    /// Check the state.
    Assert {
        /// Profiles the checks apply to (`1.4.3`, `<1.5.0`, `>=1.5.0`, `latest`);
        /// absent = every profile.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        profiles: Option<Vec<String>>,
        /// What this assertion shows.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        /// The checks.
        checks: Vec<Check>,
    },
    /// The server garbage-collects finished allocs (client-terminal, and
    /// server-terminal or of a batch job), as Nomad's core GC does.
    Gc {},
    /// The operator promotes the canaries of a deployment
    /// (`Deployment.Promote`, `nomad deployment promote`).
    PromoteDeployment {
        /// Deployment reference: `job` (its latest deployment) or `job#n`.
        deployment: String,
        /// Groups to promote (absent: all, `-group` not given).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        groups: Option<Vec<String>>,
    },
    /// The operator pauses a deployment (`Deployment.Pause`).
    PauseDeployment {
        /// Deployment reference.
        deployment: String,
    },
    /// The operator resumes a deployment (`Deployment.Pause` with `Pause`
    /// false, `nomad deployment resume`).
    ResumeDeployment {
        /// Deployment reference.
        deployment: String,
    },
    /// The operator fails a deployment (`Deployment.Fail`); with
    /// `auto_revert` the job rolls back to its latest stable version.
    FailDeployment {
        /// Deployment reference.
        deployment: String,
    },
    /// The operator unblocks a deployment (`Deployment.Unblock`; a no-op
    /// outside multiregion deployments).
    UnblockDeployment {
        /// Deployment reference.
        deployment: String,
    },
    /// The operator sets the deployment health of allocs
    /// (`Deployment.SetAllocHealth`, as with `health_check = "manual"`).
    SetAllocHealth {
        /// Deployment reference (absent: the latest deployment of the first
        /// alloc's job).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deployment: Option<String>,
        /// Alloc references to mark healthy.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        healthy: Option<Vec<String>>,
        /// Alloc references to mark unhealthy.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unhealthy: Option<Vec<String>>,
    },
    /// A comment shown in the trace.
    Note {
        /// Text.
        text: String,
    },
}

/// A status a client reports for one alloc.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportedStatus {
    /// Alloc reference.
    pub alloc: String,
    /// Client status.
    pub status: String,
}

/// One check of an assertion. Exactly one subject (`alloc`, `node`, `eval`,
/// `count`, `job`, `deployment`) and the expected values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// Subject: an alloc reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alloc: Option<String>,
    /// Subject: a node ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Subject: an eval reference (`trigger:job`, `trigger:job#n`, ID prefix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval: Option<String>,
    /// Subject: count allocs matching a filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<CountFilter>,
    /// Subject: a job ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// Expected: whether the subject exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
    /// Expected alloc client status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_status: Option<String>,
    /// Expected alloc desired status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_status: Option<String>,
    /// Expected job version (alloc or job).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_version: Option<u64>,
    /// Expected alloc node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_node: Option<String>,
    /// Expected last AllocState value of the alloc (`""` = none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_alloc_state: Option<String>,
    /// Expected node status, or eval status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Expected eval DesiredTGUpdates: group → counter → value (the counters given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_tg_updates: Option<BTreeMap<String, BTreeMap<String, u64>>>,
    /// Expected count (with `count`), or number of matching evals (with
    /// `eval`), or number of the job's deployments (with `deployment`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<u64>,
    /// Subject: a job's deployment (`job`: the latest, `job#n`: the n-th
    /// created, from 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<String>,
    /// Expected deployment status description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_description: Option<String>,
    /// Expected deployment `PlacedAllocs` (summed over its groups).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placed_allocs: Option<u64>,
    /// Expected deployment `HealthyAllocs` (summed over its groups).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healthy_allocs: Option<u64>,
    /// Expected deployment `UnhealthyAllocs` (summed over its groups).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unhealthy_allocs: Option<u64>,
    /// Expected alloc deployment health (`DeploymentStatus.Healthy`; absent
    /// health fails both values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healthy: Option<bool>,
    /// Expected: the job's current version is marked stable (with `job`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable: Option<bool>,
}

/// Which allocs a count check counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountFilter {
    /// Job ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// Alloc name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Node ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Client status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_status: Option<String>,
    /// Desired status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_status: Option<String>,
    /// Job version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_version: Option<u64>,
}
