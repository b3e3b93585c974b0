//! The last reconcile of each job, reused while nothing it read changed.
//!
//! A blocked eval that is unblocked again and again (a plan the applier
//! keeps refusing) reconciles a job whose allocs, job, deployment and
//! nodes are as they were for its previous eval: only the time and the
//! eval differ. The reconciler says for which times and evals its result
//! holds ([`ReconcileResult::holds_for`]); the memo keeps the result with
//! everything else the run read, compared exactly (the same `Rc`s, which
//! the memo keeps alive so that no other value can take their address, and
//! equal values), and hands it out again instead of a new run. A run that
//! drew IDs (follow-up evals, a deployment) is not kept: another run would
//! draw new ones.
//!
//! An entry also keeps the job's last attempt built from the kept result
//! when the plan applier refused it whole ([`KeptAttempt`]): the next eval
//! that reuses the result reuses the attempt too, while the applier still
//! refuses it.
//!
//! It is a cache, not state: not serialized, empty in a copy, and any two
//! compare equal; debug builds check every reuse against a new run.

use super::KeptAttempt;
use crate::model::{Allocation, Deployment, Job, Time};
use crate::reconciler::cluster::{ClusterInput, ReconcileOptions, ReconcileResult};
use crate::reconciler::filters::{KeyFacts, TaintedIndex, id_prefix};
use crate::scenario::format::JobSpec;
use crate::server::AllocIndex;
use crate::sim::trace::AllocReasons;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Per job ID, what its last kept reconcile read and decided.
#[derive(Debug, Default)]
pub struct ReconcileMemo {
    jobs: BTreeMap<String, Entry>,
    /// The last tainted-node table seen, and the first seen of the run of
    /// tables equal to it that it ends (most node writes leave the tainted
    /// nodes as they were): entries keep that first one, so that a table
    /// equal to an entry's is known by its address.
    tables: Option<(Rc<TaintedIndex>, Rc<TaintedIndex>)>,
    /// Per table an entry keeps that is not the last one seen (the first of
    /// [`ReconcileMemo::tables`]): the ID prefixes of the nodes whose
    /// entries differ between the two ([`TaintedIndex::changed_prefixes`]),
    /// found when first asked; emptied when another table comes.
    changes: Vec<(Rc<TaintedIndex>, Vec<u128>)>,
}

impl Clone for ReconcileMemo {
    /// A cache: a copy starts empty and fills on use.
    fn clone(&self) -> Self {
        ReconcileMemo::default()
    }
}

impl PartialEq for ReconcileMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// What a run read besides its time and eval, and its result.
#[derive(Debug)]
struct Entry {
    job: Option<Rc<Job>>,
    /// The stored specs of the job by version (the update function reads
    /// them for allocs of another version).
    specs: Vec<(u64, Rc<JobSpec>)>,
    /// The job's alloc list in the state that the run's allocs copied
    /// ([`crate::server::ServerState::allocs_by_job`]; kept alive, so a
    /// write to the job's allocs copies the list and gives it another
    /// address), or a list of them when the state had none.
    allocs: Rc<AllocIndex>,
    /// The first seen of the tables equal to the one it looked the allocs'
    /// nodes up in (see [`ReconcileMemo::tables`]; kept alive, so that the
    /// nodes changed since are found from it when another table comes).
    tainted: Rc<TaintedIndex>,
    /// The ID prefixes of the allocs' nodes, in the allocs' order; made
    /// when first needed (the allocs are the same whenever it is read).
    node_prefixes: Vec<u128>,
    /// The positions of the allocs with a follow-up eval: the only ones
    /// that can name an eval with an ID.
    followups: Vec<u32>,
    deployment: Option<Deployment>,
    job_is_batch: bool,
    eval_priority: i64,
    options: ReconcileOptions,
    result: Rc<ReconcileResult>,
    /// The per-alloc reasons of `result` (they read only its decisions,
    /// which a retime leaves, and the allocs, which are the entry's),
    /// once an eval made them.
    reasons: Option<AllocReasons>,
    /// The attempt built from `result` that the applier refused whole.
    attempt: Option<Rc<KeptAttempt>>,
}

/// A kept reconcile handed out again: its result (to set to the new time:
/// [`Hit::result`]), and the attempt built from it, if kept.
pub struct Hit {
    kept: Rc<ReconcileResult>,
    now: Time,
    /// The result's per-alloc reasons, if kept.
    pub reasons: Option<AllocReasons>,
    pub attempt: Option<Rc<KeptAttempt>>,
}

impl Hit {
    /// The kept result set to the new time (a copy only when that changes
    /// it).
    pub fn result(self) -> Rc<ReconcileResult> {
        if self.kept.timed_at(self.now) {
            return self.kept;
        }
        let mut result = Rc::unwrap_or_clone(self.kept);
        result.retime(self.now);
        Rc::new(result)
    }
}

/// What a reconcile reads of its [`ClusterInput`] but the tainted nodes
/// (which [`Reads`] gives as their table), borrowed: an eval that reuses a
/// kept attempt builds no input.
pub struct Probe<'a> {
    pub job: Option<&'a Rc<Job>>,
    pub job_id: &'a str,
    pub job_is_batch: bool,
    pub deployment: Option<&'a Deployment>,
    pub deployment_paused: bool,
    pub deployment_failed: bool,
    pub allocs: &'a [Rc<Allocation>],
    pub eval_id: &'a str,
    pub eval_priority: i64,
    pub now: Time,
}

impl<'a> Probe<'a> {
    /// The probe of `input`.
    pub fn of(input: &'a ClusterInput) -> Self {
        Probe {
            job: input.job.as_ref(),
            job_id: &input.job_id,
            job_is_batch: input.job_is_batch,
            deployment: input.deployment.as_ref(),
            deployment_paused: input.deployment_paused,
            deployment_failed: input.deployment_failed,
            allocs: &input.allocs,
            eval_id: &input.eval_id,
            eval_priority: input.eval_priority,
            now: input.now,
        }
    }
}

/// What a reconcile reads besides its [`ClusterInput`]: the tainted-node
/// table of the input's map, the options, and the job's stored specs (read
/// by the update function); with the state's list the input's allocs copy.
pub struct Reads<'a> {
    pub tainted: &'a Rc<TaintedIndex>,
    pub options: &'a ReconcileOptions,
    pub specs: Option<&'a BTreeMap<u64, Rc<JobSpec>>>,
    /// The job's alloc list in the state, of which the input's allocs are
    /// a copy (`None` when the state has none).
    pub allocs: Option<&'a Rc<AllocIndex>>,
}

impl Reads<'_> {
    fn specs(&self) -> Vec<(u64, Rc<JobSpec>)> {
        self.specs
            .into_iter()
            .flatten()
            .map(|(version, spec)| (*version, Rc::clone(spec)))
            .collect()
    }
}

fn same_arc<T>(a: Option<&Rc<T>>, b: Option<&Rc<T>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Rc::ptr_eq(a, b),
        _ => false,
    }
}

impl Entry {
    /// Whether `input` and `reads` are what this entry's run read, but for
    /// the time and eval; `table` is the first seen of the tables equal to
    /// the reads' (the entry keeps it when the allocs' nodes are as they
    /// were in its own).
    /// `changes` are the memo's [`ReconcileMemo::changes`].
    fn matches(
        &mut self,
        input: &Probe<'_>,
        reads: &Reads<'_>,
        table: &Rc<TaintedIndex>,
        changes: &mut Vec<(Rc<TaintedIndex>, Vec<u128>)>,
    ) -> bool {
        debug_assert!(
            reads.allocs.is_none_or(|list| holds(list, input.allocs)),
            "the input's allocs are not a copy of the job's list"
        );
        // The same list (by address: see `Entry::allocs`), or one holding
        // the same allocs (then kept, to be known by its address).
        // Asked after the cheap checks.
        let mut same_allocs = || match reads.allocs {
            Some(list) if Rc::ptr_eq(&self.allocs, list) => true,
            _ => {
                let same = holds(&self.allocs, input.allocs);
                if same && let Some(list) = reads.allocs {
                    self.allocs = Rc::clone(list);
                }
                same
            }
        };
        let same_specs = || {
            let specs = reads.specs.into_iter().flatten();
            self.specs.len() == specs.clone().count()
                && self
                    .specs
                    .iter()
                    .zip(specs)
                    .all(|((va, a), (vb, b))| va == vb && Rc::ptr_eq(a, b))
        };
        // An equal table answers the same; with another one, the nodes
        // whose entries differ (whether tainted, and the status) must
        // hold none of the allocs (looked for by ID prefix: a node that
        // only shares a prefix with one of them counts too).
        let mut same_nodes = || {
            if Rc::ptr_eq(&self.tainted, table) {
                return true;
            }
            let i = match changes
                .iter()
                .position(|(t, _)| Rc::ptr_eq(t, &self.tainted))
            {
                Some(i) => i,
                None => {
                    let changed = self.tainted.changed_prefixes(table);
                    changes.push((Rc::clone(&self.tainted), changed));
                    changes.len() - 1
                }
            };
            let changed = &changes[i].1;
            if !changed.is_empty() && self.node_prefixes.len() != input.allocs.len() {
                // From the keys of the state's list when there is one (its
                // allocs are the input's).
                self.node_prefixes = match reads.allocs {
                    Some(list) => list.keys().iter().map(|k| k.node_prefix()).collect(),
                    None => input.allocs.iter().map(|a| id_prefix(&a.node_id)).collect(),
                };
            }
            let same = changed.iter().all(|c| !self.node_prefixes.contains(c));
            if same {
                self.tainted = Rc::clone(table);
            }
            same
        };
        same_arc(self.job.as_ref(), input.job)
            && self.job_is_batch == input.job_is_batch
            && self.eval_priority == input.eval_priority
            && self.options.rules == reads.options.rules
            && self.options.picker == reads.options.picker
            && self.options.same_job_ignored == reads.options.same_job_ignored
            && self.deployment.as_ref() == input.deployment
            && !input.deployment_paused
            && !input.deployment_failed
            && same_allocs()
            && same_specs()
            && same_nodes()
    }
}

/// Whether `list` holds `allocs`, the same `Rc`s in the same order.
fn holds(list: &AllocIndex, allocs: &[Rc<Allocation>]) -> bool {
    list.len() == allocs.len() && list.values().zip(allocs).all(|(a, b)| Rc::ptr_eq(a, b))
}

impl ReconcileMemo {
    /// The kept result of the job's last run, to set to `input`'s time,
    /// when it is the result of a run of `input` (see the module's doc).
    pub fn get(&mut self, input: &Probe<'_>, reads: &Reads<'_>) -> Option<Hit> {
        let table = self.table(reads.tainted);
        let entry = self.jobs.get_mut(input.job_id)?;
        // The entry's allocs with a follow-up eval, looked up in the
        // input's: they are the ones when the input's allocs are the
        // entry's (else `matches` fails).
        let holds = if input.eval_id.is_empty() {
            entry
                .result
                .holds_for(input.allocs, input.now, input.eval_id)
        } else {
            let followups = entry.followups.iter();
            let named = followups.filter_map(|i| input.allocs.get(*i as usize));
            entry.result.holds_for(named, input.now, input.eval_id)
        };
        if !holds || !entry.matches(input, reads, &table, &mut self.changes) {
            return None;
        }
        debug_assert!(
            entry
                .result
                .holds_for(input.allocs, input.now, input.eval_id)
        );
        Some(Hit {
            kept: Rc::clone(&entry.result),
            now: input.now,
            reasons: entry.reasons.clone(),
            attempt: entry.attempt.clone(),
        })
    }

    /// The first seen of the tables equal to `table`, seen last.
    fn table(&mut self, table: &Rc<TaintedIndex>) -> Rc<TaintedIndex> {
        let first = match &self.tables {
            Some((last, first)) if Rc::ptr_eq(last, table) => return Rc::clone(first),
            Some((_, first)) if **first == **table => Rc::clone(first),
            _ => {
                self.changes.clear();
                Rc::clone(table)
            }
        };
        self.tables = Some((Rc::clone(table), Rc::clone(&first)));
        first
    }

    /// Keeps `result`, a run of `input` that drew no IDs, if it holds for
    /// another time or eval (then says so); else forgets the job's last run.
    pub fn put(
        &mut self,
        input: &Probe<'_>,
        reads: &Reads<'_>,
        result: &Rc<ReconcileResult>,
    ) -> bool {
        if result.validity.is_none() || input.deployment_paused || input.deployment_failed {
            self.jobs.remove(input.job_id);
            return false;
        }
        let entry = Entry {
            job: input.job.cloned(),
            specs: reads.specs(),
            allocs: match reads.allocs {
                Some(list) => Rc::clone(list),
                None => Rc::new(AllocIndex::of_sorted(input.allocs.to_vec())),
            },
            tainted: self.table(reads.tainted),
            node_prefixes: Vec::new(),
            followups: (0..)
                .zip(input.allocs)
                .filter(|(_, a)| !a.followup_eval_id.is_empty())
                .map(|(i, _)| i)
                .collect(),
            deployment: input.deployment.cloned(),
            job_is_batch: input.job_is_batch,
            eval_priority: input.eval_priority,
            options: *reads.options,
            result: Rc::clone(result),
            reasons: None,
            attempt: None,
        };
        self.jobs.insert(input.job_id.to_string(), entry);
        true
    }

    /// Keeps `reasons` with job `job_id`'s entry: the caller made them from
    /// the entry's result (the one [`ReconcileMemo::get`] or
    /// [`ReconcileMemo::put`] last handled for the job), for the evals
    /// that reuse it.
    pub fn keep_reasons(&mut self, job_id: &str, reasons: &AllocReasons) {
        if let Some(entry) = self.jobs.get_mut(job_id) {
            entry.reasons = Some(reasons.clone());
        }
    }

    /// Keeps `attempt` with job `job_id`'s entry: the caller built it from
    /// the entry's result (the one [`ReconcileMemo::get`] or
    /// [`ReconcileMemo::put`] last handled for the job).
    pub fn keep_attempt(&mut self, job_id: &str, attempt: Rc<KeptAttempt>) {
        if let Some(entry) = self.jobs.get_mut(job_id) {
            entry.attempt = Some(attempt);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{KeptAttempt, Probe, Reads, ReconcileMemo};
    use crate::model::{
        Allocation, ClientStatus, DesiredStatus, DisconnectStrategy, Duration, Job, JobType, Node,
        NodeStatus, TaskGroup, Time,
    };
    use crate::reconciler::cluster::{
        ClusterInput, ReconcileOptions, ReconcileResult, generic_update_fn, reconcile_indexed,
    };
    use crate::reconciler::filters::TaintedIndex;
    use crate::server::plan::Plan;
    use crate::sim::trace::{AllocReasons, GroupUpdates};
    use std::collections::BTreeMap;
    use std::rc::Rc;

    /// What a test's runs read besides their input: `table` and `options`,
    /// no specs, no alloc list in the state.
    fn reads_of<'a>(table: &'a Rc<TaintedIndex>, options: &'a ReconcileOptions) -> Reads<'a> {
        Reads {
            tainted: table,
            options,
            specs: None,
            allocs: None,
        }
    }

    fn t0() -> Time {
        Time::parse_rfc3339("2026-01-01T00:00:00Z").unwrap()
    }

    /// A job of two allocs: one running, one unknown since `t0` (lost
    /// after 5 min) on a disconnected node.
    fn input(now: Time, eval: &str) -> ClusterInput<'static> {
        let job = Job {
            id: "web".into(),
            job_type: JobType::Service,
            task_groups: vec![TaskGroup {
                name: "web".into(),
                count: 2,
                disconnect: Some(DisconnectStrategy {
                    lost_after: Duration::from_mins(5),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        let job = Rc::new(job);
        let alloc = |i: u32, node: &str| Allocation {
            id: format!("a{i}"),
            name: format!("web.web[{i}]"),
            job_id: "web".into(),
            task_group: "web".into(),
            node_id: node.into(),
            job: Some(Rc::clone(&job)),
            desired_status: DesiredStatus::Run,
            client_status: ClientStatus::Running,
            ..Default::default()
        };
        let mut unknown = alloc(1, "n1");
        unknown.client_status = ClientStatus::Unknown;
        unknown.append_client_status_state("unknown", t0());
        unknown.followup_eval_id = "e-follow".into();
        let mut tainted = BTreeMap::new();
        tainted.insert(
            "n1".to_string(),
            Some(Node {
                id: "n1".into(),
                status: NodeStatus::Disconnected,
                ..Default::default()
            }),
        );
        let running = alloc(0, "n0");
        let mut input = ClusterInput::new(None, now);
        input.job = Some(job);
        input.job_id = "web".into();
        input.eval_id = eval.to_string().into();
        input.allocs = vec![Rc::new(running), Rc::new(unknown)].into();
        input.tainted_nodes = Rc::new(tainted);
        input
    }

    fn run(input: &ClusterInput) -> ReconcileResult {
        let table = TaintedIndex::new(&input.tainted_nodes);
        let mut no_id = || panic!("no run here draws IDs");
        reconcile_indexed(
            input,
            &table,
            &ReconcileOptions::default(),
            &generic_update_fn,
            &mut no_id,
        )
    }

    /// The run holds until the unknown alloc expires, for any eval but the
    /// alloc's follow-up eval, and then gives another result.
    #[test]
    fn a_run_holds_until_an_alloc_expires() {
        let minute = Duration::from_mins(1);
        let first = run(&input(t0().add(minute), "e1"));
        let validity = first
            .validity
            .expect("the run reads the time only by thresholds");
        assert_eq!(validity.until, t0().add(Duration::from_mins(5)));
        let allocs = input(t0(), "e1").allocs.into_owned();
        assert!(first.holds_for(&allocs, t0().add(Duration::from_mins(4)), "e2"));
        assert!(!first.holds_for(&allocs, t0().add(Duration::from_mins(5)), "e2"));
        assert!(!first.holds_for(&allocs, t0().add(minute), "e-follow"));
        let later = t0().add(Duration::from_mins(4));
        let mut kept = first.clone();
        kept.retime(later);
        assert_eq!(
            format!("{kept:?}"),
            format!("{:?}", run(&input(later, "e2")))
        );
        let expired = t0().add(Duration::from_mins(6));
        assert_ne!(
            format!("{kept:?}"),
            format!("{:?}", run(&input(expired, "e2"))),
            "the alloc expires: another result"
        );
    }

    /// The memo hands a kept run out only for the same allocs, job and
    /// node statuses (an equal table will do), within the run's validity.
    #[test]
    fn the_memo_hands_out_only_what_a_new_run_gives() {
        let options = ReconcileOptions::default();
        let first = input(t0().add(Duration::from_mins(1)), "e1");
        let table = Rc::new(TaintedIndex::new(&first.tainted_nodes));
        let reads = |table| reads_of(table, &options);
        let mut memo = ReconcileMemo::default();
        assert!(memo.get(&Probe::of(&first), &reads(&table)).is_none());
        assert!(memo.put(&Probe::of(&first), &reads(&table), &Rc::new(run(&first))));

        let mut again = input(t0().add(Duration::from_mins(2)), "e2");
        again.allocs.clone_from(&first.allocs);
        again.job.clone_from(&first.job);
        // An equal table seen later serves as well.
        let equal = Rc::new(TaintedIndex::new(&again.tainted_nodes));
        let kept = memo
            .get(&Probe::of(&again), &reads(&equal))
            .expect("nothing changed")
            .result();
        assert_eq!(format!("{kept:?}"), format!("{:?}", run(&again)));

        // An alloc written again (a new `Rc`, even if equal) is a change.
        let mut written = again.clone();
        written.allocs.to_mut()[0] = Rc::new((*written.allocs[0]).clone());
        assert!(memo.get(&Probe::of(&written), &reads(&equal)).is_none());

        // So is the unknown alloc's node coming back.
        let mut back = again.clone();
        back.tainted_nodes = Rc::new(BTreeMap::new());
        let back_table = Rc::new(TaintedIndex::new(&back.tainted_nodes));
        assert!(memo.get(&Probe::of(&back), &reads(&back_table)).is_none());

        // And the time passing the alloc's expiry.
        let mut expired = again.clone();
        expired.now = t0().add(Duration::from_mins(5));
        assert!(memo.get(&Probe::of(&expired), &reads(&equal)).is_none());

        // And a run read as a batch job's (the reconciler's batch rules).
        let mut batch = again.clone();
        batch.job_is_batch = true;
        assert!(memo.get(&Probe::of(&batch), &reads(&equal)).is_none());

        // A copy starts empty.
        assert!(
            memo.clone()
                .get(&Probe::of(&again), &reads(&equal))
                .is_none()
        );
    }
    /// An attempt kept with a run is handed out with it, and only with it:
    /// a new run of the job starts without one.
    #[test]
    fn a_kept_attempt_goes_with_its_run() {
        let options = ReconcileOptions::default();
        let first = input(t0().add(Duration::from_mins(1)), "e1");
        let table = Rc::new(TaintedIndex::new(&first.tainted_nodes));
        let reads = |table| reads_of(table, &options);
        let mut memo = ReconcileMemo::default();
        let attempt = Rc::new(KeptAttempt {
            plan: Plan::default(),
            lines: vec!["node-1: update web.web[1](a1)".into()],
            reasons: AllocReasons::new(),
            desired_tg_updates: GroupUpdates::new(),
            persist_reconnect_mark: true,
        });
        // No entry for the job: nothing to keep it with.
        memo.keep_attempt("web", Rc::clone(&attempt));
        assert!(memo.put(&Probe::of(&first), &reads(&table), &Rc::new(run(&first))));
        let hit = memo
            .get(&Probe::of(&first), &reads(&table))
            .expect("the same run");
        assert!(hit.attempt.is_none(), "a new run starts without an attempt");

        memo.keep_attempt("web", Rc::clone(&attempt));
        let mut again = input(t0().add(Duration::from_mins(2)), "e2");
        again.allocs.clone_from(&first.allocs);
        again.job.clone_from(&first.job);
        let hit = memo
            .get(&Probe::of(&again), &reads(&table))
            .expect("nothing changed");
        assert!(hit.attempt.is_some_and(|kept| Rc::ptr_eq(&kept, &attempt)));

        // A changed alloc: no run, so no attempt; the new run replaces both.
        let mut written = again.clone();
        written.allocs.to_mut()[0] = Rc::new((*written.allocs[0]).clone());
        assert!(memo.get(&Probe::of(&written), &reads(&table)).is_none());
        assert!(memo.put(
            &Probe::of(&written),
            &reads(&table),
            &Rc::new(run(&written))
        ));
        let hit = memo
            .get(&Probe::of(&written), &reads(&table))
            .expect("the new run");
        assert!(hit.attempt.is_none());
    }
}
