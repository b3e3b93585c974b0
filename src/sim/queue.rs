//! The event queue: events ordered by `(tick, seq)`, where `seq` is the
//! order of insertion, so two events at the same tick run in the order they
//! were scheduled and a run never depends on anything but its input.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Logical time in milliseconds since the start of the run.
pub type Tick = u64;

/// Ticks per second (one tick is one millisecond).
pub const TICKS_PER_SEC: Tick = 1000;

/// A tick count as seconds with three decimals (`12.500`, what
/// `"{}.{:03}"` of the seconds and milliseconds writes), written digit by
/// digit into a buffer of its own: the one way the trace, the RPC details,
/// the views and the exports write a time. A caller sizes its text with
/// [`Seconds::as_str`] before copying it in, or formats it (`{}` and
/// `{:>width$}`).
pub struct Seconds {
    /// The text, right-aligned.
    digits: [u8; 24],
    /// Where it starts.
    start: usize,
}

impl Seconds {
    /// The text of `ticks`.
    pub fn of(ticks: Tick) -> Seconds {
        let mut digits = [0u8; 24];
        let point = digits.len() - 4;
        let millis = ticks % TICKS_PER_SEC;
        digits[point..].copy_from_slice(&[
            b'.',
            b'0' + (millis / 100) as u8,
            b'0' + (millis / 10 % 10) as u8,
            b'0' + (millis % 10) as u8,
        ]);
        let start = write_digits(&mut digits[..point], ticks / TICKS_PER_SEC);
        Seconds { digits, start }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // ASCII digits and a dot only.
        std::str::from_utf8(&self.digits[self.start..]).unwrap_or_default()
    }
}

/// How long the text of `ticks` ([`Seconds::of`]'s) is, in bytes.
pub fn seconds_len(ticks: Tick) -> usize {
    let mut secs = ticks / TICKS_PER_SEC;
    let mut digits = 1;
    while secs >= 10 {
        secs /= 10;
        digits += 1;
    }
    digits + ".000".len()
}

/// Appends the text of `ticks` ([`Seconds::of`]'s) to `out`: for times
/// below 1,000 s (every heartbeat's TTL, which its call's and reply's
/// details write) digit by digit, else [`Seconds::of`]'s text.
pub fn push_seconds(out: &mut String, ticks: Tick) {
    let secs = ticks / TICKS_PER_SEC;
    let millis = (ticks % TICKS_PER_SEC) as u32;
    let secs = match u32::try_from(secs) {
        Ok(secs) if secs < 1000 => secs,
        _ => {
            out.push_str(Seconds::of(ticks).as_str());
            return;
        }
    };
    let digit = |n: u32| char::from(b'0' + (n % 10) as u8);
    if secs >= 100 {
        out.push(digit(secs / 100));
    }
    if secs >= 10 {
        out.push(digit(secs / 10));
    }
    out.push(digit(secs));
    out.push('.');
    out.push(digit(millis / 100));
    out.push(digit(millis / 10));
    out.push(digit(millis));
}

/// Writes `n`'s decimal digits at the end of `buf` (which must hold them:
/// 20 bytes hold any `u64`) and returns where they start.
pub(crate) fn write_digits(buf: &mut [u8], mut n: u64) -> usize {
    let mut start = buf.len();
    loop {
        start -= 1;
        buf[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return start;
        }
    }
}

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// Events per chunk when the queue is built; a chunk splits in two when it
/// grows past twice this.
const CHUNK: usize = 16;

/// One chunk: events in reverse key order (its first event last),
/// shared between clones until written.
type Chunk<E> = Rc<Vec<((Tick, u64), E)>>;

/// A priority queue of events keyed by `(tick, seq)`. The events live in
/// sorted chunks of a few dozen behind `Rc`s, each chunk a list in reverse
/// order: the history's checkpoints share every chunk the steps in between
/// left alone (a delayed eval's timer, say, waits for minutes), so a
/// checkpoint costs only the part of the queue that changed, while a push
/// or a pop moves the event in and out of its chunk without an allocation
/// of its own (the next event leaves the end of the first chunk, and an
/// event due before all others goes on that end).
/// Each chunk's first tick is kept beside it in a flat list too, so that a
/// push finds its chunk by a binary search over that list alone, without
/// reading the chunks. A push places its event by tick alone: its `seq` is
/// above every other, so it goes after every event of its tick.
#[derive(Clone)]
pub struct EventQueue<E> {
    /// Non-empty chunks; every key of a chunk is below every key of the
    /// next one.
    chunks: Vec<Chunk<E>>,
    /// The first tick of each chunk, in the same order (`firsts[i]` is the
    /// tick of `chunks[i]`'s last entry).
    firsts: Vec<Tick>,
    /// Events waiting.
    len: usize,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            chunks: Vec::new(),
            firsts: Vec::new(),
            len: 0,
            next_seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// The tick of the next event, if any.
    pub fn peek_tick(&self) -> Option<Tick> {
        self.firsts.first().copied()
    }

    /// How many events wait.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no event waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The waiting events in order.
    pub fn iter(&self) -> impl Iterator<Item = (Tick, &E)> {
        self.entries().map(|((tick, _), event)| (*tick, event))
    }

    /// Whether `firsts` holds each chunk's first key (for the tests).
    #[cfg(test)]
    fn firsts_agree(&self) -> bool {
        self.chunks.len() == self.firsts.len()
            && self
                .chunks
                .iter()
                .zip(&self.firsts)
                .all(|(chunk, first)| chunk.last().is_some_and(|((tick, _), _)| tick == first))
    }

    /// The waiting events with their keys, in order.
    fn entries(&self) -> impl Iterator<Item = &((Tick, u64), E)> {
        self.chunks.iter().flat_map(|chunk| chunk.iter().rev())
    }
}

impl<E: Clone> EventQueue<E> {
    /// Schedules `event` at `tick`, after every event already scheduled there.
    pub fn push(&mut self, tick: Tick, event: E) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert((tick, seq), event);
        seq
    }

    /// Puts an event with a key above every key of the same tick in place:
    /// after every event of its tick, so it is placed by its tick alone
    /// (one compare of numbers a step, not of pairs).
    fn insert(&mut self, key: (Tick, u64), event: E) {
        let tick = key.0;
        self.len += 1;
        // The last chunk whose first tick is not above `tick` (the first
        // chunk for a tick below all). About half the events are due before
        // the second chunk starts (a call's delivery, its reply): those
        // take the first chunk without a search.
        let chunk_idx = match self.firsts.get(1) {
            Some(second) if *second <= tick => {
                self.firsts.partition_point(|first| *first <= tick) - 1
            }
            _ => 0,
        };
        let Some(chunk) = self.chunks.get_mut(chunk_idx) else {
            self.chunks.push(Rc::new(vec![(key, event)]));
            self.firsts.push(tick);
            return;
        };
        let chunk = Rc::make_mut(chunk);
        if tick < self.firsts[chunk_idx] {
            // Before every event of the chunk (of the queue, mostly).
            chunk.push((key, event));
            self.firsts[chunk_idx] = tick;
        } else {
            // The chunk runs from its last key down: the event goes after
            // the events of later ticks.
            let position = chunk.partition_point(|((other, _), _)| *other > tick);
            chunk.insert(position, (key, event));
        }
        if chunk.len() > 2 * CHUNK {
            // The lower half, at the end, stays; the upper half, which
            // keeps its last key, becomes the next chunk.
            let lower = chunk.split_off(chunk.len() / 2);
            let upper = std::mem::replace(chunk, lower);
            let upper_first = upper.last().map_or(tick, |((first, _), _)| *first);
            self.chunks.insert(chunk_idx + 1, Rc::new(upper));
            self.firsts.insert(chunk_idx + 1, upper_first);
        }
    }

    /// Removes and returns the next event.
    pub fn pop(&mut self) -> Option<(Tick, E)> {
        let first = self.chunks.first_mut()?;
        let chunk = Rc::make_mut(first);
        let ((tick, _), event) = chunk.pop()?;
        match chunk.last() {
            Some(((next, _), _)) => self.firsts[0] = *next,
            None => {
                self.chunks.remove(0);
                self.firsts.remove(0);
            }
        }
        self.len -= 1;
        Some((tick, event))
    }

    /// Drops every event for which `keep` is false (copies only the
    /// chunks that lose events).
    pub fn retain(&mut self, mut keep: impl FnMut(&E) -> bool) {
        let mut len = 0;
        for chunk in &mut self.chunks {
            // `keep` is asked once per event, in order (from the chunk's
            // end); the verdicts are read back from its start.
            let mut kept: Vec<bool> = chunk.iter().rev().map(|(_, event)| keep(event)).collect();
            if kept.contains(&false) {
                Rc::make_mut(chunk).retain(|_| kept.pop().unwrap_or(true));
            }
            len += chunk.len();
        }
        self.chunks.retain(|chunk| !chunk.is_empty());
        self.firsts = first_ticks(&self.chunks);
        self.len = len;
    }

    /// A queue of `entries` (sorted by key, keys unique) that numbers the
    /// next event `next_seq`.
    fn from_sorted(entries: Vec<((Tick, u64), E)>, next_seq: u64) -> Self {
        let len = entries.len();
        let mut chunks: Vec<Chunk<E>> = Vec::with_capacity(len.div_ceil(CHUNK));
        let mut entries = entries.into_iter().peekable();
        while entries.peek().is_some() {
            let mut chunk: Vec<_> = entries.by_ref().take(CHUNK).collect();
            chunk.reverse();
            chunks.push(Rc::new(chunk));
        }
        EventQueue {
            firsts: first_ticks(&chunks),
            chunks,
            len,
            next_seq,
        }
    }
}

/// The first tick of each chunk (its last entry's).
fn first_ticks<E>(chunks: &[Chunk<E>]) -> Vec<Tick> {
    chunks
        .iter()
        .filter_map(|chunk| chunk.last())
        .map(|((tick, _), _)| *tick)
        .collect()
}

/// Written as the map of events by key it stands for.
impl<E: std::fmt::Debug> std::fmt::Debug for EventQueue<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        /// The events as a map.
        struct Events<'a, E>(&'a EventQueue<E>);
        impl<E: std::fmt::Debug> std::fmt::Debug for Events<'_, E> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_map()
                    .entries(self.0.entries().map(|(key, event)| (key, event)))
                    .finish()
            }
        }
        f.debug_struct("EventQueue")
            .field("events", &Events(self))
            .field("next_seq", &self.next_seq)
            .finish()
    }
}

/// Two queues are equal when they hold the same events under the same keys
/// and number the next one alike, however their chunks split.
impl<E: PartialEq> PartialEq for EventQueue<E> {
    fn eq(&self, other: &Self) -> bool {
        self.next_seq == other.next_seq
            && self.len == other.len
            && self.entries().eq(other.entries())
    }
}

/// The queue as it has always been written: `{"events": [[[tick, seq],
/// event], ...], "next_seq": n}`, the events in key order.
impl<E: Serialize> Serialize for EventQueue<E> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        /// The events as a list of `[key, event]` pairs.
        struct Events<'a, E>(&'a EventQueue<E>);
        impl<E: Serialize> Serialize for Events<'_, E> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.entries().map(|(key, event)| (key, event)))
            }
        }
        let mut state = serializer.serialize_struct("EventQueue", 2)?;
        state.serialize_field("events", &Events(self))?;
        state.serialize_field("next_seq", &self.next_seq)?;
        state.end()
    }
}

impl<'de, E: Clone + Deserialize<'de>> Deserialize<'de> for EventQueue<E> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// The written form.
        #[derive(Deserialize)]
        #[serde(bound(deserialize = "E: Deserialize<'de>"))]
        struct Written<E> {
            events: Vec<((Tick, u64), E)>,
            next_seq: u64,
        }
        let written = Written::<E>::deserialize(deserializer)?;
        // Sorted and deduplicated (the last event of a key wins), as the
        // map the queue was read into before.
        let events: BTreeMap<(Tick, u64), E> = written.events.into_iter().collect();
        Ok(EventQueue::from_sorted(
            events.into_iter().collect(),
            written.next_seq,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::{EventQueue, Seconds, push_seconds, seconds_len};

    /// [`push_seconds`] and [`seconds_len`] agree with [`Seconds::of`],
    /// below 1,000 s (the table's pieces) and above.
    #[test]
    fn pushed_seconds_agree_with_seconds_of() {
        let ticks =
            (0..1_200_000)
                .step_by(7)
                .chain([999_999, 1_000_000, 1_000_001, 123_456_789, u64::MAX]);
        for ticks in ticks {
            let mut text = String::from("ttl=");
            push_seconds(&mut text, ticks);
            let expected = Seconds::of(ticks);
            assert_eq!(text, format!("ttl={expected}"), "{ticks}");
            assert_eq!(seconds_len(ticks), expected.as_str().len(), "{ticks}");
        }
    }

    #[test]
    fn seconds_are_written_as_the_format_writes_them() {
        for ticks in [
            0,
            7,
            42,
            999,
            1000,
            1001,
            10_050,
            59_999,
            123_456_789,
            u64::MAX,
        ] {
            let expected = format!("{}.{:03}", ticks / 1000, ticks % 1000);
            assert_eq!(Seconds::of(ticks).as_str(), expected, "{ticks}");
            assert_eq!(
                format!("{:>12}s", Seconds::of(ticks)),
                format!("{expected:>12}s")
            );
        }
    }

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

    /// Pushes at scattered ticks and pops in between agree with a sorted
    /// map's order, through chunk splits and emptied chunks; queues that
    /// hold the same events compare equal however their chunks split, and
    /// a queue reads back from its JSON equal.
    #[test]
    fn agrees_with_a_sorted_map_through_splits() {
        let mut queue = EventQueue::default();
        let mut model = std::collections::BTreeMap::new();
        for step in 0..3_000u64 {
            let tick = (step * 7_919) % 613;
            // One push a step: the step is the push's sequence number.
            assert_eq!(queue.push(tick, step), step);
            model.insert((tick, step), step);
            if step % 3 == 2 {
                let ((tick, _), event) = model.pop_first().expect("model");
                assert_eq!(queue.pop(), Some((tick, event)));
            }
            assert_eq!(queue.len(), model.len());
            assert_eq!(
                queue.peek_tick(),
                model.keys().next().map(|(tick, _)| *tick)
            );
            assert!(queue.firsts_agree());
        }
        let events: Vec<(u64, u64)> = queue.iter().map(|(tick, event)| (tick, *event)).collect();
        let expected: Vec<(u64, u64)> = model.iter().map(|((tick, _), e)| (*tick, *e)).collect();
        assert_eq!(events, expected);
        let json = serde_json::to_string(&queue).expect("serialize");
        let back: EventQueue<u64> = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, queue);
        assert_eq!(serde_json::to_string(&back).expect("serialize"), json);
        while let Some((tick, event)) = queue.pop() {
            let ((expected_tick, _), expected_event) = model.pop_first().expect("model");
            assert_eq!((tick, event), (expected_tick, expected_event));
        }
        assert!(queue.is_empty() && model.is_empty());
    }

    /// The queue writes the JSON it wrote when it was a map's pairs.
    #[test]
    fn writes_its_pairs_and_next_seq() {
        let mut queue = EventQueue::default();
        queue.push(5, "b");
        queue.push(1, "a");
        let json = serde_json::to_string(&queue).expect("serialize");
        assert_eq!(json, r#"{"events":[[[1,1],"a"],[[5,0],"b"]],"next_seq":2}"#);
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
        assert!(queue.firsts_agree());
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
        assert!(checkpoint.firsts_agree());
        let json = serde_json::to_string(&checkpoint).expect("serialize");
        let back: EventQueue<u64> = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, checkpoint);
    }
}
