//! The event queue: events ordered by `(tick, seq)`, where `seq` is the
//! order of insertion, so two events at the same tick run in the order they
//! were scheduled and a run never depends on anything but its input.

use super::chunk_map::ChunkMap;
use serde::{Deserialize, Serialize};

/// Logical time in milliseconds since the start of the run.
pub type Tick = u64;

/// Ticks per second (one tick is one millisecond).
pub const TICKS_PER_SEC: Tick = 1000;

/// A priority queue of events keyed by `(tick, seq)`. The events live in
/// a [`ChunkMap`]: the history's checkpoints share every chunk the steps in
/// between left alone (a delayed eval's timer, say, waits for minutes), so
/// a checkpoint costs only the part of the queue that changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventQueue<E> {
    #[serde(with = "as_pairs")]
    #[serde(bound(serialize = "E: Serialize", deserialize = "E: Deserialize<'de>"))]
    events: ChunkMap<(Tick, u64), E>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            events: ChunkMap::new(),
            next_seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// The tick of the next event, if any.
    pub fn peek_tick(&self) -> Option<Tick> {
        self.events.keys().next().map(|(tick, _)| *tick)
    }

    /// How many events wait.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether no event waits.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The waiting events in order.
    pub fn iter(&self) -> impl Iterator<Item = (Tick, &E)> {
        self.events.iter().map(|((tick, _), event)| (*tick, event))
    }
}

impl<E: Clone> EventQueue<E> {
    /// Schedules `event` at `tick`, after every event already scheduled there.
    pub fn push(&mut self, tick: Tick, event: E) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.events.insert((tick, seq), event);
        seq
    }

    /// Removes and returns the next event.
    pub fn pop(&mut self) -> Option<(Tick, E)> {
        self.events
            .pop_first()
            .map(|((tick, _), event)| (tick, event))
    }

    /// Drops every event for which `keep` is false.
    pub fn retain(&mut self, mut keep: impl FnMut(&E) -> bool) {
        self.events.retain(|_, event| keep(event));
    }
}

/// Serializes the queue's map as a list of `[[tick, seq], event]` pairs
/// (JSON object keys must be strings).
mod as_pairs {
    use super::Tick;
    use crate::sim::chunk_map::ChunkMap;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<E: Serialize, S: Serializer>(
        map: &ChunkMap<(Tick, u64), E>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(map.iter())
    }

    pub fn deserialize<'de, E: Deserialize<'de>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<ChunkMap<(Tick, u64), E>, D::Error> {
        let pairs: Vec<((Tick, u64), E)> = Vec::deserialize(d)?;
        Ok(pairs.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::EventQueue;

    #[test]
    fn orders_by_tick_then_insertion() {
        let mut queue = EventQueue::default();
        queue.push(5, "b");
        queue.push(1, "a");
        queue.push(5, "c");
        assert_eq!(queue.pop(), Some((1, "a")));
        assert_eq!(queue.pop(), Some((5, "b")));
        assert_eq!(queue.pop(), Some((5, "c")));
        assert_eq!(queue.pop(), None);
    }

    /// A clone (a history checkpoint) keeps its events while the queue
    /// pops, pushes and drops events; both keep their order.
    #[test]
    fn a_clone_keeps_its_events_while_the_queue_moves_on() {
        let mut queue = EventQueue::default();
        for i in 0..200u64 {
            queue.push(i % 7, i);
        }
        let checkpoint = queue.clone();
        assert_eq!(queue.pop(), Some((0, 0)));
        queue.retain(|event| event % 2 == 0);
        queue.push(3, 1000);
        assert_eq!(checkpoint.len(), 200);
        assert_eq!(queue.len(), 100);
        let ticks: Vec<u64> = checkpoint.iter().map(|(tick, _)| tick).collect();
        assert!(ticks.windows(2).all(|pair| pair[0] <= pair[1]));
        let mut last = (0, 0);
        let mut popped = 0;
        while let Some((tick, event)) = queue.pop() {
            assert!(event % 2 == 0);
            assert!(tick >= last.0);
            last = (tick, event);
            popped += 1;
        }
        assert_eq!(popped, 100);
        let json = serde_json::to_string(&checkpoint).expect("serialize");
        let back: EventQueue<u64> = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, checkpoint);
    }
}
