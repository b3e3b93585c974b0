//! Canonical state fingerprints for explore mode's pruning: a 128-bit hash
//! (two independent multiply-rotate lanes, fed by a serde serializer that
//! hashes values without formatting text) over the parts of the world that
//! decide what happens next. Trace buffers, counters of handled events and the
//! event queue's insertion numbers are left out, so two orders that end in
//! the same world get the same fingerprint.

use crate::client::runner::AllocRunner;
use crate::model::{Allocation, Job};
use crate::scenario::format::JobSpec;
use crate::server::{EvalRecord, NodeRecord};
use crate::sim::chunk_map::ChunkMap;
use crate::sim::queue::Tick;
use crate::sim::{Event, Sim};
use serde::Serialize;
use std::collections::BTreeMap;
use std::rc::Rc;

/// A state fingerprint.
pub type Fingerprint = u128;

/// A 128-bit hasher fed whole words: two independent multiply-rotate lanes.
struct Hasher<'c> {
    a: u64,
    b: u64,
    /// Hash the state up to renaming (see [`fingerprint`]).
    canonical: bool,
    /// The next integer is a call number (canonical mode leaves it out).
    drop_int: bool,
    /// The next integer is a Raft index: canonical mode keeps only which
    /// side of `split` it is on.
    split_int: bool,
    /// The Raft index at the window's start (the invariants tell allocs
    /// placed during the reconnect from older ones by it).
    split: u64,
    /// Open maps: the lanes before the map, the sum of its entries' hashes,
    /// whether an entry is being hashed.
    maps: Vec<MapFrame>,
    /// Structs open (nesting depth), to find the `end` of a digest struct.
    structs: u32,
    /// Open digest structs (see [`DigestCache`]), innermost last.
    subs: Vec<SubFrame>,
    /// Digests of shared values computed before, if the caller keeps them.
    cache: Option<&'c mut DigestCache>,
}

/// A struct hashed on its own (a digest struct, see [`DigestCache`]).
struct SubFrame {
    /// The lanes and integer flags of the enclosing value.
    saved: (u64, u64, bool, bool),
    /// The struct's nesting depth.
    depth: u32,
    /// Its kind.
    kind: DigestKind,
    state: SubState,
}

enum SubState {
    /// No field seen yet.
    Pending,
    /// Being hashed; the digest goes into the cache's region at this
    /// address, if the value is one the cache anchors.
    Hashing(Option<usize>),
    /// Known: the fields are not hashed again.
    Known(Fingerprint),
}

struct MapFrame {
    saved: (u64, u64),
    sum: (u64, u64),
    open: bool,
}

const ID_TOKEN: u64 = 0x6964_6964_6964;

/// The structs hashed on their own, into a digest that is then fed to the
/// enclosing value as two words ("digest structs"): the allocs, the alloc
/// runners, the evals, the nodes and the jobs, which most states share
/// with their parent.
/// Every value of these types is hashed this way, whether its digest is
/// cached or not, so a fingerprint depends on the values only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DigestKind {
    Alloc,
    Runner,
    Eval,
    Node,
    Job,
    Spec,
}

impl DigestKind {
    /// The kind of a struct by its serde name.
    fn of(name: &str) -> Option<DigestKind> {
        match name {
            "Allocation" => Some(DigestKind::Alloc),
            "AllocRunner" => Some(DigestKind::Runner),
            "EvalRecord" => Some(DigestKind::Eval),
            "NodeRecord" => Some(DigestKind::Node),
            "Job" => Some(DigestKind::Job),
            "JobSpec" => Some(DigestKind::Spec),
            _ => None,
        }
    }
}

/// A shared value the cache keeps alive (so that no other value can take
/// its address while its digest is cached).
#[derive(Debug, Clone)]
enum Anchor {
    Alloc(Rc<Allocation>),
    Eval(Rc<EvalRecord>),
    Runners(Rc<BTreeMap<String, AllocRunner>>),
    Node(Rc<NodeRecord>),
    Job(Rc<Job>),
    Spec(Rc<JobSpec>),
    /// A copy of the server's node table: its entries are shared with the
    /// world's (each a separate `Rc`), and stay alive and unwritten while
    /// the copy holds them.
    Nodes(#[allow(dead_code)] ChunkMap<String, NodeRecord>),
}

impl Anchor {
    /// Whether nothing but the cache holds it (a node table: unknown, so
    /// yes; it is cheap to take again).
    fn unused(&self) -> bool {
        match self {
            Anchor::Alloc(a) => Rc::strong_count(a) == 1,
            Anchor::Eval(e) => Rc::strong_count(e) == 1,
            Anchor::Runners(r) => Rc::strong_count(r) == 1,
            Anchor::Node(n) => Rc::strong_count(n) == 1,
            Anchor::Job(j) => Rc::strong_count(j) == 1,
            Anchor::Spec(s) => Rc::strong_count(s) == 1,
            Anchor::Nodes(_) => true,
        }
    }
}

/// Where a digest struct lies in memory, and its digest once computed.
#[derive(Debug, Clone)]
struct Region {
    end: usize,
    kind: DigestKind,
    /// The key of the anchor that keeps it alive.
    anchor: usize,
    digest: Option<Fingerprint>,
}

/// Digests of the allocs, alloc runners and evals of the worlds
/// fingerprinted so far, by where they lie in memory: most states share
/// them with their parent (`Rc`s), so each is hashed once while it lives.
///
/// Sound because the cache holds a clone of every `Rc` whose value it
/// records (an alloc, an eval, a client's map of runners), so the memory
/// of a recorded value is neither freed nor written (an `Rc` shared with
/// the cache is copied before it is written) while it is recorded: a
/// struct whose first field lies inside a recorded value's memory is that
/// value, and its digest is the one recorded. The hasher finds a digest
/// struct by the address of its first field, which it only compares with
/// recorded addresses. A value no world holds any more (only the cache
/// does) is dropped together with its record. The digests depend on the
/// hashing mode (canonical, the window's index), which the cache keeps;
/// another mode empties it. Values the cache does not record (an alloc in
/// a reply not yet delivered, say) are hashed the same way, only not kept.
#[derive(Debug, Clone, Default)]
pub struct DigestCache {
    mode: Option<(bool, u64)>,
    /// The values kept alive: an `Rc` by the address of its value, a
    /// node table by a number of its own (odd, so never an address).
    anchors: BTreeMap<usize, Anchor>,
    regions: BTreeMap<usize, Region>,
    /// Node tables taken so far (numbers them).
    tables: usize,
    /// Anchors past which unused ones are dropped.
    limit: usize,
}

impl DigestCache {
    /// An empty cache.
    pub fn new() -> DigestCache {
        DigestCache::default()
    }

    /// Records the shared values of `sim`, hashed in `mode`.
    fn register(&mut self, sim: &Sim, mode: (bool, u64)) {
        if self.mode != Some(mode) {
            self.anchors.clear();
            self.regions.clear();
            self.mode = Some(mode);
        }
        let state = &sim.server.state;
        for alloc in state.allocs.values() {
            self.alloc(alloc);
        }
        for eval in state.evals.values() {
            self.arc(eval, DigestKind::Eval, Anchor::Eval);
        }
        for record in state.jobs.values() {
            self.arc(&record.job, DigestKind::Job, Anchor::Job);
            for spec in record.specs.values() {
                self.arc(spec, DigestKind::Spec, Anchor::Spec);
            }
        }
        if state.nodes.values().any(|node| {
            self.lookup(DigestKind::Node, std::ptr::from_ref(node) as usize)
                .is_none()
        }) {
            self.tables += 1;
            let key = 2 * self.tables + 1;
            let table = state.nodes.clone();
            for node in table.values() {
                let at = std::ptr::from_ref(node) as usize;
                if self.lookup(DigestKind::Node, at).is_none() {
                    self.region(at, std::mem::size_of::<NodeRecord>(), DigestKind::Node, key);
                }
            }
            self.anchors.insert(key, Anchor::Nodes(table));
        }
        for client in sim.clients.values() {
            self.arc(&client.record, DigestKind::Node, Anchor::Node);
            let start = Rc::as_ptr(&client.runners) as usize;
            if let std::collections::btree_map::Entry::Vacant(slot) = self.anchors.entry(start) {
                slot.insert(Anchor::Runners(client.runners.clone()));
                for runner in client.runners.values() {
                    let at = std::ptr::from_ref(runner) as usize;
                    self.region(
                        at,
                        std::mem::size_of::<AllocRunner>(),
                        DigestKind::Runner,
                        start,
                    );
                }
            }
            for runner in client.runners.values() {
                // A runner's alloc is hashed with the runner; its job is
                // shared with the server's allocs.
                if let Some(job) = &runner.alloc.job {
                    self.arc(job, DigestKind::Job, Anchor::Job);
                }
            }
        }
        if self.anchors.len() > self.limit {
            self.prune();
        }
    }

    fn alloc(&mut self, alloc: &Rc<Allocation>) {
        if self.arc(alloc, DigestKind::Alloc, Anchor::Alloc)
            && let Some(job) = &alloc.job
        {
            self.arc(job, DigestKind::Job, Anchor::Job);
        }
    }

    /// Records the value of `arc`; whether it was new.
    fn arc<T>(&mut self, arc: &Rc<T>, kind: DigestKind, anchor: fn(Rc<T>) -> Anchor) -> bool {
        let start = Rc::as_ptr(arc) as usize;
        if self.anchors.contains_key(&start) {
            return false;
        }
        self.anchors.insert(start, anchor(arc.clone()));
        self.region(start, std::mem::size_of::<T>(), kind, start);
        true
    }

    fn region(&mut self, start: usize, size: usize, kind: DigestKind, anchor: usize) {
        self.regions.insert(
            start,
            Region {
                end: start + size.max(1),
                kind,
                anchor,
                digest: None,
            },
        );
    }

    /// Drops the values only the cache still holds (and the node tables),
    /// with their records.
    fn prune(&mut self) {
        // Maps of runners first: they may hold the last other clone of an
        // alloc, and allocs before jobs.
        for pass in 0..3 {
            self.anchors.retain(|_, anchor| {
                let this_pass = match anchor {
                    Anchor::Runners(_) | Anchor::Nodes(_) => 0,
                    Anchor::Alloc(_) | Anchor::Eval(_) | Anchor::Node(_) => 1,
                    Anchor::Job(_) | Anchor::Spec(_) => 2,
                };
                this_pass != pass || !anchor.unused()
            });
        }
        let anchors = &self.anchors;
        self.regions
            .retain(|_, region| anchors.contains_key(&region.anchor));
        self.limit = (2 * self.anchors.len()).max(4_096);
    }

    /// The recorded value of `kind` whose memory holds `address`: its
    /// start and its digest if known.
    fn lookup(&self, kind: DigestKind, address: usize) -> Option<(usize, Option<Fingerprint>)> {
        let (start, region) = self.regions.range(..=address).next_back()?;
        (address < region.end && region.kind == kind).then_some((*start, region.digest))
    }

    fn store(&mut self, start: usize, digest: Fingerprint) {
        if let Some(region) = self.regions.get_mut(&start) {
            region.digest = Some(digest);
        }
    }
}

/// Whether `s` is shaped like the server's generated IDs
/// (`8-4-4-4-12` hex digits).
pub(super) fn looks_like_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                *c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// Whether a field holds a counter or a Raft index: values that depend on
/// how many things happened before, not on what the world is.
pub(super) fn counter_field(key: &str) -> bool {
    // The last byte first: most fields are not counters.
    match key.as_bytes().last() {
        Some(b'x') => key.ends_with("index"),
        Some(b'd' | b'l' | b'q') => {
            matches!(key, "next_id" | "next_call" | "next_seq" | "call" | "id")
        }
        _ => false,
    }
}

/// Whether a field is an index the server derives from its allocs
/// (`ServerState::allocs_by_node`, `allocs_by_job`): equal allocs mean
/// equal indexes, so fingerprints leave them out (see [`fingerprint`]).
fn derived_field(key: &str) -> bool {
    matches!(key, "allocs_by_node" | "allocs_by_job")
}

/// A field name as one word: its address. Field names are static strings
/// fixed by the types' `Serialize` impls, so a field hashed by one impl
/// always has one address, and two different names never share one:
/// hashing the address instead of the text keeps the shapes apart at a
/// fraction of the cost. (Were a name ever at two addresses, equal worlds
/// would only get unequal fingerprints, a missed prune, never a wrong one;
/// the addresses differ between builds, which changes the fingerprints'
/// values, never which states have equal ones.)
fn name_word(key: &'static str) -> u64 {
    key.as_ptr() as usize as u64
}

const K1: u64 = 0x9e37_79b9_7f4a_7c15;
const K2: u64 = 0xc2b2_ae3d_27d4_eb4f;

impl<'c> Hasher<'c> {
    const A0: u64 = 0x243f_6a88_85a3_08d3;
    const B0: u64 = 0x1319_8a2e_0370_7344;

    fn new(canonical: bool, split: u64, cache: Option<&'c mut DigestCache>) -> Hasher<'c> {
        Hasher {
            a: Hasher::A0,
            b: Hasher::B0,
            canonical,
            drop_int: false,
            split_int: false,
            split,
            maps: Vec::new(),
            structs: 0,
            subs: Vec::new(),
            cache,
        }
    }

    /// Whether the fields of the innermost struct are skipped (its digest
    /// is known).
    fn skipping(&self) -> bool {
        self.subs
            .last()
            .is_some_and(|sub| sub.depth == self.structs && matches!(sub.state, SubState::Known(_)))
    }

    /// Before a field of the innermost struct: if it is a digest struct
    /// whose first field this is, looks its digest up by the field's
    /// address (which lies inside the struct).
    fn first_field(&mut self, address: usize) {
        let Some(sub) = self.subs.last_mut() else {
            return;
        };
        if sub.depth != self.structs || !matches!(sub.state, SubState::Pending) {
            return;
        }
        sub.state = match self
            .cache
            .as_deref()
            .and_then(|c| c.lookup(sub.kind, address))
        {
            Some((_, Some(digest))) => SubState::Known(digest),
            Some((start, None)) => SubState::Hashing(Some(start)),
            None => SubState::Hashing(None),
        };
    }

    /// At the end of a struct: if it is a digest struct, its digest
    /// (computed or known) is fed to the enclosing value.
    fn end_struct(&mut self) {
        let depth = self.structs;
        self.structs = self.structs.saturating_sub(1);
        if self.subs.last().is_none_or(|sub| sub.depth != depth) {
            self.word(0x656e64);
            return;
        }
        let Some(sub) = self.subs.pop() else {
            return;
        };
        let digest = match sub.state {
            SubState::Known(digest) => digest,
            SubState::Pending | SubState::Hashing(None) => {
                self.word(0x656e64);
                self.finish()
            }
            SubState::Hashing(Some(start)) => {
                self.word(0x656e64);
                let digest = self.finish();
                if let Some(cache) = self.cache.as_deref_mut() {
                    cache.store(start, digest);
                }
                digest
            }
        };
        (self.a, self.b, self.drop_int, self.split_int) = sub.saved;
        self.word((digest >> 64) as u64);
        self.word(digest as u64);
    }

    fn end_entry(&mut self) {
        if let Some(frame) = self.maps.last_mut()
            && frame.open
        {
            let a = (self.a ^ (self.b >> 31)).wrapping_mul(K2);
            let b = (self.b ^ (self.a >> 29)).wrapping_mul(K1);
            frame.sum = (frame.sum.0.wrapping_add(a), frame.sum.1.wrapping_add(b));
            frame.open = false;
        }
    }

    #[inline]
    fn word(&mut self, w: u64) {
        self.a = (self.a ^ w).wrapping_mul(K1).rotate_left(29);
        self.b = (self.b.rotate_left(17) ^ w).wrapping_mul(K2);
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.word(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            self.word(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(w));
        }
    }

    fn finish(&self) -> Fingerprint {
        let a = (self.a ^ (self.b >> 31)).wrapping_mul(K2);
        let b = (self.b ^ (self.a >> 29)).wrapping_mul(K1);
        (u128::from(a) << 64) | u128::from(b)
    }
}

/// Never produced: hashing plain data cannot fail.
#[derive(Debug)]
struct NoError;

impl std::fmt::Display for NoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("fingerprint error")
    }
}

impl std::error::Error for NoError {}

impl serde::ser::Error for NoError {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        NoError
    }
}

/// Serializer methods for narrow numbers: each widens its value losslessly
/// and hashes it as the wide type, so `3u8` and `3u64` hash alike.
macro_rules! widen {
    ($($method:ident($narrow:ty) => $wide_method:ident($wide:ty)),* $(,)?) => {
        $(fn $method(self, v: $narrow) -> Result<(), NoError> {
            self.$wide_method(<$wide>::from(v))
        })*
    };
}

/// A serde serializer that feeds the hasher the data's values and shape
/// (tags, lengths, variant numbers) without formatting any text: field
/// names are fixed by the types, so only their values are hashed.
impl serde::Serializer for &mut Hasher<'_> {
    type Ok = ();
    type Error = NoError;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    /// Not human-readable: [`crate::model::Time`] hashes as its integer,
    /// without formatting RFC 3339 text.
    fn is_human_readable(&self) -> bool {
        false
    }

    widen! {
        serialize_i8(i8) => serialize_i64(i64),
        serialize_i16(i16) => serialize_i64(i64),
        serialize_i32(i32) => serialize_i64(i64),
        serialize_u8(u8) => serialize_u64(u64),
        serialize_u16(u16) => serialize_u64(u64),
        serialize_u32(u32) => serialize_u64(u64),
        serialize_f32(f32) => serialize_f64(f64),
    }
    fn serialize_bool(self, v: bool) -> Result<(), NoError> {
        self.word(u64::from(v));
        Ok(())
    }
    fn serialize_i64(self, v: i64) -> Result<(), NoError> {
        self.word(v as u64);
        Ok(())
    }
    fn serialize_u64(self, v: u64) -> Result<(), NoError> {
        if std::mem::take(&mut self.drop_int) {
            let side = std::mem::take(&mut self.split_int) && v > self.split;
            self.word(ID_TOKEN ^ u64::from(side));
        } else {
            self.word(v);
        }
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result<(), NoError> {
        self.word(v.to_bits());
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), NoError> {
        self.word(u64::from(v));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), NoError> {
        if self.canonical && looks_like_id(v) {
            self.word(ID_TOKEN);
        } else {
            self.bytes(v.as_bytes());
        }
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), NoError> {
        self.bytes(v);
        Ok(())
    }
    fn serialize_none(self) -> Result<(), NoError> {
        self.word(0x6e6f6e65);
        Ok(())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), NoError> {
        self.word(0x736f6d65);
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), NoError> {
        self.word(0x756e6974);
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), NoError> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
    ) -> Result<(), NoError> {
        self.word(u64::from(index));
        Ok(())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), NoError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        value: &T,
    ) -> Result<(), NoError> {
        self.word(u64::from(index));
        value.serialize(self)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Self, NoError> {
        self.word(len.map_or(u64::MAX, |n| n as u64));
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, NoError> {
        Ok(self)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, NoError> {
        Ok(self)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, NoError> {
        self.word(u64::from(index));
        Ok(self)
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Self, NoError> {
        self.word(len.map_or(u64::MAX, |n| n as u64));
        if self.canonical {
            self.maps.push(MapFrame {
                saved: (self.a, self.b),
                sum: (0, 0),
                open: false,
            });
        }
        Ok(self)
    }
    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Self, NoError> {
        self.structs += 1;
        if let Some(kind) = DigestKind::of(name) {
            self.subs.push(SubFrame {
                saved: (self.a, self.b, self.drop_int, self.split_int),
                depth: self.structs,
                kind,
                state: SubState::Pending,
            });
            (self.a, self.b, self.drop_int, self.split_int) =
                (Hasher::A0, Hasher::B0, false, false);
        }
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, NoError> {
        self.structs += 1;
        self.word(u64::from(index));
        Ok(self)
    }
}

macro_rules! compound {
    ($($trait:ident :: $method:ident),*) => {$(
        impl serde::ser::$trait for &mut Hasher<'_> {
            type Ok = ();
            type Error = NoError;
            fn $method<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), NoError> {
                value.serialize(&mut **self)
            }
            fn end(self) -> Result<(), NoError> {
                self.word(0x656e64);
                Ok(())
            }
        }
    )*};
}

compound!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// In canonical mode a map is hashed as the multiset of its entries: its
/// order follows its keys, and keys that are generated IDs say nothing.
impl serde::ser::SerializeMap for &mut Hasher<'_> {
    type Ok = ();
    type Error = NoError;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), NoError> {
        if self.canonical {
            self.end_entry();
            if let Some(frame) = self.maps.last_mut() {
                frame.open = true;
            }
            self.a = Hasher::A0;
            self.b = Hasher::B0;
        }
        key.serialize(&mut **self)
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), NoError> {
        value.serialize(&mut **self)
    }
    fn end(self) -> Result<(), NoError> {
        if self.canonical {
            self.end_entry();
            if let Some(frame) = self.maps.pop() {
                (self.a, self.b) = frame.saved;
                self.word(frame.sum.0);
                self.word(frame.sum.1);
            }
        }
        self.word(0x656e64);
        Ok(())
    }
}

macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl serde::ser::$trait for &mut Hasher<'_> {
            type Ok = ();
            type Error = NoError;
            fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), NoError> {
                // The field's address finds a digest struct's known digest
                // (it is only compared with the addresses of values the
                // cache keeps alive, never read through).
                self.first_field(std::ptr::from_ref(value).cast::<u8>() as usize);
                if self.skipping() {
                    return Ok(());
                }
                // Fields left out (`skip_serializing_if`) change the shape:
                // the name keeps two shapes apart.
                self.word(name_word(key));
                if derived_field(key) {
                    self.word(0x0064_6572_6976_6564);
                    return Ok(());
                }
                if self.canonical && counter_field(key) {
                    // An ID-like number inside the value is hashed as a
                    // token, a plain counter is left out.
                    self.drop_int = true;
                    self.split_int = key.ends_with("index");
                    let result = value.serialize(&mut **self);
                    self.drop_int = false;
                    self.split_int = false;
                    return result;
                }
                value.serialize(&mut **self)
            }
            fn skip_field(&mut self, key: &'static str) -> Result<(), NoError> {
                if self.skipping() {
                    return Ok(());
                }
                self.word(name_word(key));
                self.word(0x736b6970);
                Ok(())
            }
            fn end(self) -> Result<(), NoError> {
                self.end_struct();
                Ok(())
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);

#[derive(Serialize)]
struct View<'a, X: Serialize> {
    tick: Tick,
    rng: Option<&'a crate::sim::rng::Rng>,
    queue: Vec<(Tick, &'a Event)>,
    server: &'a crate::server::Server,
    clients: &'a crate::sim::clients::Clients,
    net: &'a crate::sim::net::Network,
    worker_scheduled: bool,
    extra: &'a X,
}

/// Whether handling `event` now would change nothing (a stale timer, a
/// call that is held or gone, an idle worker). Such events are left out of
/// fingerprints: two worlds that differ only by them behave the same.
pub fn noop(sim: &Sim, event: &Event) -> bool {
    use crate::client::ClientTimer;
    match event {
        Event::Deliver { node, call } => sim.net.get(node, *call).is_none_or(|p| p.held),
        Event::HeartbeatTimeout { node, deadline } => {
            sim.server.state.heartbeat_timers.get(node.as_str()) != Some(deadline)
        }
        Event::EvalDelay { eval } => !sim.server.state.broker.delayed.contains_key(eval),
        Event::Client { node, timer } => {
            let Some(client) = sim.clients.get(node.as_str()) else {
                return true;
            };
            match timer {
                ClientTimer::Heartbeat { generation } => *generation != client.generations[0],
                ClientTimer::AllocSync { generation } => {
                    *generation != client.generations[1] || client.update_in_flight
                }
                ClientTimer::Watch { generation } => {
                    *generation != client.generations[2] || client.watch_in_flight
                }
                ClientTimer::StopAfter { generation } => *generation != client.generations[3],
                ClientTimer::TaskStart { .. }
                | ClientTimer::WatchPoll { .. }
                | ClientTimer::Health { .. } => false,
            }
        }
        Event::Worker => !sim.server.state.broker.has_ready(),
        Event::DeploymentTimer { deployment } => {
            let watch = &sim.server.state.deployment_watch;
            !watch.batches.contains_key(deployment) && !watch.deadlines.contains_key(deployment)
        }
        Event::Reply { .. } | Event::Fail { .. } => false,
    }
}

/// The fingerprint of `sim` together with `extra` (the explorer's own
/// per-path state, e.g. the phase). `window_index` is the Raft index at the
/// window's start.
///
/// # What is left out, and why
///
/// Always (sound: the future does not read them): trace buffers, counters
/// of handled events, the event queue's insertion numbers, and events that
/// would change nothing when handled ([`noop`]). Also the server's indexes
/// of its allocs by node and by job (`allocs_by_node`, `allocs_by_job`):
/// `Server::put_alloc` and `Server::gc` are the only writers of `allocs`
/// and write both indexes with the same alloc (an alloc never changes node
/// or job), so each index holds exactly the allocs of `allocs` grouped by
/// node or job, plus at most empty groups, and its readers
/// (`node_allocs`, `job_allocs`, the invariant checker) see no difference
/// between an empty group and a missing one: worlds with equal allocs
/// read equal indexes (`tests/explore_reduction.rs` checks the indexes
/// along searched orders).
///
/// With `canonical` (the default search), also the RNG's position, the
/// names of generated IDs, call numbers and counters, and of each Raft
/// index only which side of `window_index` it is on (the invariants read
/// exactly that: an alloc placed during the reconnect or before it).
/// Orders that handle calls of different nodes in another order reach such
/// twins (each server write takes the next index and the next ID, and the
/// next draw of the one RNG stream). Their futures are the same up to the
/// renaming and the jitter of later timers only where nothing compares two
/// IDs or two indexes written in the window (the order of a `BTreeMap`
/// keyed by ID, the broker's tie-breaks, a blocking query's index); that
/// holds for the reconnect scenarios searched here but is not proved in
/// general, so canonical pruning is a reduction heuristic: `exact_states`
/// prunes only identical worlds, which is sound.
pub fn fingerprint<X: Serialize>(
    sim: &Sim,
    extra: &X,
    canonical: bool,
    window_index: u64,
) -> Fingerprint {
    fingerprint_with(sim, extra, canonical, window_index, None)
}

/// [`fingerprint`], reusing the digests of the allocs, alloc runners and
/// evals `cache` recorded for earlier worlds (the same value either way).
pub fn fingerprint_cached<X: Serialize>(
    sim: &Sim,
    extra: &X,
    canonical: bool,
    window_index: u64,
    cache: &mut DigestCache,
) -> Fingerprint {
    cache.register(sim, (canonical, window_index));
    fingerprint_with(sim, extra, canonical, window_index, Some(cache))
}

fn fingerprint_with<X: Serialize>(
    sim: &Sim,
    extra: &X,
    canonical: bool,
    window_index: u64,
    cache: Option<&mut DigestCache>,
) -> Fingerprint {
    let view = View {
        tick: sim.tick,
        rng: (!canonical).then_some(&sim.rng),
        queue: sim.queue.iter().filter(|(_, e)| !noop(sim, e)).collect(),
        server: &sim.server,
        clients: &sim.clients,
        net: &sim.net,
        worker_scheduled: sim.worker_scheduled,
        extra,
    };
    let mut hasher = Hasher::new(canonical, window_index, cache);
    // Hashing plain data cannot fail; if it ever did, the partial hash is
    // still a valid (weaker) key.
    let _ = view.serialize(&mut hasher);
    hasher.finish()
}

/// `fp` extended by `extra`: the fingerprint of a state whose world has
/// fingerprint `fp`, together with per-path data (`extra`) hashed on its
/// own (so the world's hash can be kept and compared apart).
pub fn extend<X: Serialize>(fp: Fingerprint, extra: &X, canonical: bool) -> Fingerprint {
    let mut hasher = Hasher::new(canonical, 0, None);
    hasher.word((fp >> 64) as u64);
    hasher.word(fp as u64);
    let _ = extra.serialize(&mut hasher);
    hasher.finish()
}

/// The parts of the world a fingerprint hashes, as JSON (RNG included,
/// derived alloc indexes left out): for diagnostics that show what two
/// states with different fingerprints differ in ([`super::diagnose`]).
pub fn world_json(sim: &Sim) -> serde_json::Value {
    let view = View {
        tick: sim.tick,
        rng: Some(&sim.rng),
        queue: sim.queue.iter().filter(|(_, e)| !noop(sim, e)).collect(),
        server: &sim.server,
        clients: &sim.clients,
        net: &sim.net,
        worker_scheduled: sim.worker_scheduled,
        extra: &(),
    };
    let mut value = serde_json::to_value(&view).unwrap_or(serde_json::Value::Null);
    if let Some(state) = value
        .pointer_mut("/server/state")
        .and_then(|s| s.as_object_mut())
    {
        state.remove("allocs_by_node");
        state.remove("allocs_by_job");
    }
    value
}
