//! The eval broker and the blocked-eval set (Nomad's `nomad/eval_broker.go`
//! and `nomad/blocked_evals.go`), reduced to what one worker needs:
//! ready evals in priority order with at most one per job ready or in
//! flight, the others queued per job; delayed evals waiting for their
//! `WaitUntil`; blocked evals, one per job, waiting for capacity.

use crate::sim::chunk_map::ChunkMap;
use crate::sim::queue::Tick;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

/// A ready eval's place in the queue: higher priority first, then older.
type ReadyKey = (Reverse<i64>, u64, String);

/// The broker's queues.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Broker {
    /// Ready evals.
    pub ready: BTreeSet<ReadyKey>,
    /// The eval of each job that is ready or in flight.
    pub job_active: BTreeMap<String, String>,
    /// Evals queued behind the active one, per job: (seq, priority, id).
    pub queued: BTreeMap<String, Vec<(u64, i64, String)>>,
    /// Delayed evals and when they become ready (many wait for long: the
    /// history's checkpoints share the chunks left alone in between).
    pub delayed: ChunkMap<String, Tick>,
    /// The blocked eval of each job.
    pub blocked: BTreeMap<String, String>,
}

impl Broker {
    /// Puts an eval in the ready set, or behind its job's active eval.
    pub fn enqueue(&mut self, job: &str, id: &str, priority: i64, seq: u64) {
        // One lookup of the job's active eval (it mostly has none).
        match self.job_active.entry(job.to_string()) {
            Entry::Occupied(active) if active.get() != id => {
                let queue = self.queued.entry(job.to_string()).or_default();
                if !queue.iter().any(|(_, _, queued)| queued == id) {
                    queue.push((seq, priority, id.to_string()));
                }
                return;
            }
            Entry::Occupied(_) => {}
            Entry::Vacant(slot) => {
                slot.insert(id.to_string());
            }
        }
        self.ready.insert((Reverse(priority), seq, id.to_string()));
    }

    /// Whether some eval is ready.
    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Takes the next ready eval, or the named one if it is ready.
    pub fn dequeue(&mut self, wanted: Option<&str>) -> Option<String> {
        let Some(id) = wanted else {
            return self.ready.pop_first().map(|(_, _, id)| id);
        };
        let key = self
            .ready
            .iter()
            .find(|(_, _, ready)| ready == id)
            .cloned()?;
        self.ready.remove(&key);
        Some(key.2)
    }

    /// The worker finished `id` of `job`: the next queued eval of the job
    /// becomes ready. With `cancel_stale` (#14621) the newest queued eval
    /// goes ahead and the older ones are returned to be cancelled.
    pub fn ack(
        &mut self,
        job: &str,
        id: &str,
        cancel_stale: bool,
    ) -> (Option<String>, Vec<String>) {
        let Some(mut queue) = self.queued.remove(job).filter(|queue| !queue.is_empty()) else {
            // One lookup when `id` is the job's active eval (it mostly is).
            if let Some(active) = self.job_active.remove(job)
                && active != id
            {
                self.job_active.insert(job.to_string(), active);
            }
            return (None, Vec::new());
        };
        crate::cold_sort::sort_by(&mut queue, Ord::cmp);
        let (next, cancelled) = if cancel_stale {
            let next = queue.pop();
            (next, queue.into_iter().map(|(_, _, id)| id).collect())
        } else {
            let next = queue.remove(0);
            if !queue.is_empty() {
                self.queued.insert(job.to_string(), queue);
            }
            (Some(next), Vec::new())
        };
        let next = next.map(|(seq, priority, next_id)| {
            // The next eval takes the job's active mark, whoever held it.
            match self.job_active.get_mut(job) {
                Some(active) => active.clone_from(&next_id),
                None => {
                    self.job_active.insert(job.to_string(), next_id.clone());
                }
            }
            self.ready.insert((Reverse(priority), seq, next_id.clone()));
            next_id
        });
        (next, cancelled)
    }

    /// Parks an eval until `at`.
    pub fn delay(&mut self, id: &str, at: Tick) {
        self.delayed.insert(id.to_string(), at);
    }

    /// A delayed eval's time came.
    pub fn delay_elapsed(&mut self, id: &str) {
        self.delayed.remove(id);
    }

    /// Blocks an eval for its job; returns the job's previous blocked eval,
    /// which the caller cancels.
    pub fn block(&mut self, job: &str, id: &str) -> Option<String> {
        self.blocked
            .insert(job.to_string(), id.to_string())
            .filter(|old| old != id)
    }

    /// Takes every blocked eval, in job order.
    pub fn take_blocked(&mut self) -> Vec<String> {
        std::mem::take(&mut self.blocked).into_values().collect()
    }

    /// Removes eval `id` of `job` from every queue (`priority` and `seq`
    /// are the ones it is queued with: an eval's own, which never change).
    pub fn forget(&mut self, job: &str, id: &str, priority: i64, seq: u64) {
        self.ready.remove(&(Reverse(priority), seq, id.to_string()));
        self.delayed.remove(id);
        if self.blocked.get(job).is_some_and(|blocked| blocked == id) {
            self.blocked.remove(job);
        }
        if let Some(queue) = self.queued.get_mut(job) {
            queue.retain(|(_, _, queued)| queued != id);
            if queue.is_empty() {
                self.queued.remove(job);
            }
        }
        if self.job_active.get(job).is_some_and(|active| active == id) {
            self.job_active.remove(job);
        }
    }

    /// Ready eval IDs in queue order.
    pub fn ready_ids(&self) -> Vec<String> {
        self.ready.iter().map(|(_, _, id)| id.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Broker;

    #[test]
    fn one_eval_per_job_and_priority_order() {
        let mut broker = Broker::default();
        broker.enqueue("a", "a1", 50, 0);
        broker.enqueue("a", "a2", 50, 1);
        broker.enqueue("b", "b1", 70, 2);
        assert_eq!(broker.ready_ids(), vec!["b1".to_string(), "a1".to_string()]);
        assert_eq!(broker.dequeue(None).as_deref(), Some("b1"));
        assert_eq!(broker.dequeue(None).as_deref(), Some("a1"));
        broker.enqueue("a", "a3", 50, 3);
        let (next, cancelled) = broker.ack("a", "a1", true);
        assert_eq!(next.as_deref(), Some("a3"));
        assert_eq!(cancelled, vec!["a2".to_string()]);
    }

    /// `forget` finds an eval under the job, priority and seq it was
    /// queued with, wherever it waits: ready, queued behind its job's
    /// active eval, delayed or blocked; the job's other evals stay.
    #[test]
    fn forget_removes_an_eval_from_every_queue() {
        let mut broker = Broker::default();
        broker.enqueue("a", "a1", 50, 0);
        broker.enqueue("a", "a2", 60, 1);
        broker.enqueue("b", "b1", 70, 2);
        broker.delay("c1", 100);
        assert_eq!(broker.block("d", "d1"), None);
        // Queued behind the job's active eval.
        broker.forget("a", "a2", 60, 1);
        assert!(!broker.queued.contains_key("a"));
        assert_eq!(broker.ready_ids(), vec!["b1".to_string(), "a1".to_string()]);
        // Ready and the job's active eval.
        broker.forget("a", "a1", 50, 0);
        assert_eq!(broker.ready_ids(), vec!["b1".to_string()]);
        assert!(!broker.job_active.contains_key("a"));
        // Delayed and blocked.
        broker.forget("c", "c1", 50, 3);
        broker.forget("d", "d1", 50, 4);
        assert!(broker.delayed.is_empty());
        assert!(broker.blocked.is_empty());
        // A forgotten job's next eval is ready at once.
        broker.enqueue("a", "a3", 50, 5);
        assert_eq!(broker.ready_ids(), vec!["b1".to_string(), "a3".to_string()]);
        assert_eq!(broker.job_active.get("b").map(String::as_str), Some("b1"));
    }
}
