//! The allocs of one cluster reconciler run as a table in alloc ID order,
//! and the reconciler's working sets as positions into it.
//!
//! One pass over the input reads each alloc once and keeps what the rules
//! ask of it most (its classification, terminal flags, task group) in a
//! compact record (names are read only when a name index is needed); the
//! sets of [`super::compute_group`] are then
//! sorted lists of positions, so combining them compares integers and
//! walking them reads the allocs only where a rule needs more. Positions
//! follow ID order, and a group's set holds one alloc per ID, so every walk
//! is in ID order as with [`AllocSet`].

use super::super::alloc_set::{AllocSet, name_index};
use super::super::filters::{
    AllocKey, FilterContext, KeyFacts, TaintedIndex, classify_alloc_on, id_prefix, plainly_fine,
    plainly_running, quiet,
};
use super::super::reasons::{AllocCategory, ClassifyRule};
use crate::model::{Allocation, ClientStatus, Job};
use std::cell::Cell;
use std::cmp::Ordering;
use std::rc::Rc;

/// What the rules read most of an input alloc, taken in one pass.
#[derive(Debug, Clone, Copy)]
pub(super) struct Facts {
    /// Its ID's prefix (see `id_prefix`), kept here so that the pass
    /// fills one vector.
    prefix: u128,
    /// The classification set (`classifyAllocs` on the input alloc).
    pub cat: AllocCategory,
    /// The classification rule.
    pub rule: ClassifyRule,
    /// Yes/no facts, one bit each (see the methods).
    flags: u8,
    /// The task group, as an index into [`Table::group_names`].
    group: u32,
}

impl Facts {
    const SERVER_TERMINAL: u8 = 1;
    const TERMINAL: u8 = 2;
    const UNKNOWN: u8 = 4;
    const PLAINLY_RUNNING: u8 = 8;
    const PLAIN: u8 = 16;
    const OTHER_JOB: u8 = 32;
    const QUIET: u8 = 64;

    #[inline]
    fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
    /// `ServerTerminalStatus()`.
    #[inline]
    pub fn server_terminal(&self) -> bool {
        self.has(Facts::SERVER_TERMINAL)
    }
    /// `TerminalStatus()`.
    #[inline]
    pub fn terminal(&self) -> bool {
        self.has(Facts::TERMINAL)
    }
    /// Client status `unknown`.
    #[inline]
    pub fn unknown(&self) -> bool {
        self.has(Facts::UNKNOWN)
    }
    /// Running and wanted running, no reschedule transition (never
    /// rescheduled).
    #[inline]
    pub fn plainly_running(&self) -> bool {
        self.has(Facts::PLAINLY_RUNNING)
    }
    /// Pending, running or unknown, wanted running, no reschedule
    /// transition (see [`quiet`]).
    #[inline]
    pub fn quiet(&self) -> bool {
        self.has(Facts::QUIET)
    }
    /// Untainted on a fine node ([`ClassifyRule::NodeFine`]) and plainly
    /// running: most allocs. Such an alloc is kept whatever the group's
    /// classification and reschedule steps do, so they take these allocs
    /// as a block ([`Table::odd`] lists the others).
    #[inline]
    pub fn plain(&self) -> bool {
        self.has(Facts::PLAIN)
    }
    /// Whether its embedded job is other than the job given to
    /// [`Table::build`] (not the same `Rc`).
    #[inline]
    fn other_job(&self) -> bool {
        self.has(Facts::OTHER_JOB)
    }
}

/// The run's allocs in ID order (stable: of equal IDs, input order), with
/// their [`Facts`]. A row is addressed by its position; the input is read
/// through [`Table::alloc`], not copied.
pub(super) struct Table<'a> {
    /// The input allocs.
    input: &'a [Rc<Allocation>],
    /// Per row: its position in the input; empty when the input is already
    /// in ID order (row = position).
    order: Vec<u32>,
    /// Per input alloc: what the rules read of it (in input order, so the
    /// one pass writes it in place).
    facts: Vec<Facts>,
    /// Per row: its reason record, one per distinct ID, in ID order; empty
    /// when every ID is held by one row (record = row).
    slots: Vec<u32>,
    /// The task group names, in the order first met.
    group_names: Vec<&'a str>,
    /// Whether some ID is held by more than one row.
    has_duplicates: bool,
    /// The rows of the server-terminal allocs, ascending.
    server_terminal: Vec<u32>,
    /// The rows of the allocs that are not plain (see [`Facts::plain`]),
    /// ascending: the few a group's walks look at one by one.
    odd: Vec<u32>,
    /// The rows of the allocs whose embedded job is not the given job
    /// (see [`Table::asked`]), ascending; `None` when no job was given.
    asked: Option<Vec<u32>>,
    /// The row found by the last ID lookup (lookups mostly go forward).
    hint: Cell<usize>,
}

/// Pushes input position `i` of `n` onto `v`, which lists positions
/// ascending: the first push makes room for all the positions left (one
/// allocation, where pushing one at a time would grow it several times).
#[inline]
fn push_sized(v: &mut Vec<u32>, i: usize, n: usize) {
    if v.capacity() == 0 {
        reserve_rest(v, n - i);
    }
    v.push(i as u32);
}

/// Out of line: the row loop stays small.
#[cold]
#[inline(never)]
fn reserve_rest(v: &mut Vec<u32>, rest: usize) {
    v.reserve_exact(rest);
}

/// The most ascending runs the sort merges (more are sorted).
const MAX_RUNS: usize = 4;

impl<'a> Table<'a> {
    /// Reads `input` once and sorts it by ID. Returns the table and, when
    /// some ID is held by more than one row, per distinct ID (reason record
    /// slot) the input position of its first alloc (else empty: a record
    /// is a row, see [`Table::into_order`]).
    /// `keys` are the allocs' keys when the caller keeps them (empty: made
    /// here); an alloc is read only where its key leaves a rule open.
    /// `nodes` is the table of `cx.tainted_nodes`. With a `job`, the table
    /// also lists the allocs that embed another job ([`Table::asked`]).
    pub fn build(
        input: &'a [Rc<Allocation>],
        keys: &[AllocKey],
        nodes: &TaintedIndex,
        cx: &FilterContext<'_>,
        job: Option<&Rc<Job>>,
    ) -> (Table<'a>, Vec<u32>) {
        let n = input.len();
        debug_assert!(keys.is_empty() || keys.len() == n, "keys for other allocs");
        // The keys lent, else each alloc's own answers (worked out only
        // where asked).
        let pass = if keys.is_empty() {
            first_pass(input, |i| &*input[i], nodes, cx, job)
        } else {
            first_pass(
                input,
                |i| {
                    debug_assert_eq!(
                        keys[i],
                        AllocKey::of(&input[i]),
                        "a lent key is not its alloc's"
                    );
                    &keys[i]
                },
                nodes,
                cx,
                job,
            )
        };
        let FirstPass {
            group_names,
            facts: facts_in,
            server_terminal_at,
            odd_at,
            asked_at,
            rising,
        } = pass;
        let (order, rising) = if rising {
            (Vec::new(), true)
        } else {
            sort_order(n, |i| facts_in[i].prefix, input)
        };
        // As rows: the input positions themselves when the input is in
        // order, else found by a walk over the rows.
        let as_rows = |at: Vec<u32>, wanted: fn(&Facts) -> bool| {
            if order.is_empty() || at.is_empty() {
                at
            } else {
                (0..n as u32)
                    .filter(|k| wanted(&facts_in[order[*k as usize] as usize]))
                    .collect()
            }
        };
        let server_terminal = as_rows(server_terminal_at, Facts::server_terminal);
        let odd = as_rows(odd_at, |f| !f.plain());
        let asked = job.map(|_| as_rows(asked_at, Facts::other_job));
        let mut table = Table {
            input,
            order,
            facts: facts_in,
            slots: Vec::new(),
            group_names,
            has_duplicates: false,
            server_terminal,
            odd,
            asked,
            hint: Cell::new(0),
        };
        // Equal IDs are neighbours; their rows share one record. IDs are
        // compared only on equal prefixes.
        let facts = &table.facts;
        let same =
            |x: usize, y: usize| facts[x].prefix == facts[y].prefix && input[x].id == input[y].id;
        let has_duplicates = if rising {
            false
        } else if table.order.is_empty() {
            (1..n).any(|k| same(k - 1, k))
        } else {
            table
                .order
                .windows(2)
                .any(|w| same(w[0] as usize, w[1] as usize))
        };
        if !has_duplicates {
            return (table, Vec::new());
        }
        let mut firsts = Vec::with_capacity(n);
        let mut slots = Vec::with_capacity(n);
        for k in 0..n {
            if k == 0 || !same(table.input_pos(k - 1), table.input_pos(k)) {
                firsts.push(table.input_pos(k) as u32);
            }
            slots.push(firsts.len() as u32 - 1);
        }
        table.has_duplicates = true;
        table.slots = slots;
        (table, firsts)
    }

    /// The number of rows.
    #[inline]
    fn len(&self) -> usize {
        self.facts.len()
    }

    /// The number of reason records (distinct IDs).
    pub fn slots(&self) -> usize {
        match self.slots.last() {
            Some(last) => *last as usize + 1,
            None => self.len(),
        }
    }

    /// The input position of each row (empty: row = input position), for
    /// the reason records once the run is done: with one row per ID they
    /// are the rows.
    pub fn into_order(self) -> Vec<u32> {
        if self.has_duplicates {
            Vec::new()
        } else {
            self.order
        }
    }

    /// The input position of the alloc at `pos`.
    #[inline]
    pub fn input_pos_of(&self, pos: u32) -> u32 {
        self.input_pos(pos as usize) as u32
    }

    /// The input position of row `k`.
    #[inline]
    fn input_pos(&self, k: usize) -> usize {
        if self.order.is_empty() {
            k
        } else {
            self.order[k] as usize
        }
    }

    /// The ID prefix of the alloc at row `k`.
    #[inline]
    fn prefix(&self, k: usize) -> u128 {
        self.facts[self.input_pos(k)].prefix
    }

    /// The positions of the table's server-terminal allocs, ascending
    /// (empty: no set needs to be filtered for them).
    #[inline]
    pub fn server_terminal(&self) -> &[u32] {
        &self.server_terminal
    }

    /// The positions of the allocs that are not plain ([`Facts::plain`]),
    /// ascending.
    #[inline]
    pub fn odd(&self) -> &[u32] {
        &self.odd
    }

    /// The positions of the allocs whose embedded job is not the job given
    /// to [`Table::build`], ascending (`None` when none was given): the
    /// only ones the update function needs to be asked about when it
    /// ignores the allocs of the run's job.
    #[inline]
    pub fn asked(&self) -> Option<&[u32]> {
        self.asked.as_deref()
    }

    /// Whether some ID is held by more than one row (else a reason record
    /// is a row).
    #[inline]
    pub fn has_duplicates(&self) -> bool {
        self.has_duplicates
    }

    /// The alloc at `pos`.
    #[inline]
    pub fn alloc(&self, pos: u32) -> &'a Rc<Allocation> {
        &self.input[self.input_pos(pos as usize)]
    }

    /// The facts of the alloc at `pos`.
    #[inline]
    pub fn facts(&self, pos: u32) -> &Facts {
        &self.facts[self.input_pos(pos as usize)]
    }

    /// The reason record of the alloc at `pos`.
    #[inline]
    pub fn slot(&self, pos: u32) -> usize {
        if self.slots.is_empty() {
            pos as usize
        } else {
            self.slots[pos as usize] as usize
        }
    }

    /// The allocs per task group name (`allocMatrix`), ascending by name
    /// (each name once: a sorted list, not a map, as most jobs have one
    /// group); of allocs with equal IDs in one group the later one stays.
    pub fn matrix(&self) -> Vec<(&'a str, PosSet)> {
        if self.group_names.len() == 1 && !self.has_duplicates {
            let all = PosSet {
                pos: (0..self.len() as u32).collect(),
                own: Vec::new(),
            };
            return vec![(self.group_names[0], all)];
        }
        let mut sizes = vec![0usize; self.group_names.len()];
        for f in &self.facts {
            sizes[f.group as usize] += 1;
        }
        let mut sets: Vec<PosSet> = sizes.into_iter().map(PosSet::with_capacity).collect();
        let n = self.len();
        for k in 0..n {
            let (slot, group) = (self.slot(k as u32), self.facts(k as u32).group);
            let replaced = self.has_duplicates
                && (k + 1..n)
                    .take_while(|j| self.slot(*j as u32) == slot)
                    .any(|j| self.facts(j as u32).group == group);
            if !replaced {
                sets[group as usize].push(k as u32);
            }
        }
        let mut matrix: Vec<(&'a str, PosSet)> =
            self.group_names.iter().copied().zip(sets).collect();
        matrix.sort_unstable_by(|a, b| a.0.cmp(b.0));
        matrix
    }

    /// The rows holding ID `id` (empty when none).
    pub fn rows_of(&self, id: &str) -> std::ops::Range<usize> {
        let n = self.len();
        let p = id_prefix(id);
        let is = |k: usize| self.prefix(k) == p && self.alloc(k as u32).id == id;
        let h = self.hint.get();
        let start = [h, h + 1].into_iter().find(|k| *k < n && is(*k));
        let start = start.or_else(|| {
            // The first row whose (prefix, ID) is not below (p, id).
            let (mut lo, mut hi) = (0, n);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                let below = match self.prefix(mid).cmp(&p) {
                    Ordering::Less => true,
                    Ordering::Greater => false,
                    Ordering::Equal => self.alloc(mid as u32).id.as_str() < id,
                };
                if below {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            (lo < n && is(lo)).then_some(lo)
        });
        let Some(mut start) = start else {
            return 0..0;
        };
        // Equal IDs share a slot: back up to the first of them.
        let mut end = start + 1;
        if self.has_duplicates {
            let slot = |k: usize| self.slots[k];
            while start > 0 && slot(start - 1) == slot(start) {
                start -= 1;
            }
            end = start + 1;
            while end < n && slot(end) == slot(start) {
                end += 1;
            }
        }
        self.hint.set(end - 1);
        start..end
    }

    /// The reason record of ID `id`.
    pub fn slot_of(&self, id: &str) -> Option<usize> {
        let rows = self.rows_of(id);
        (!rows.is_empty()).then(|| self.slot(rows.start as u32))
    }
}

/// What [`Table::build`]'s one pass over the allocs gathers (positions are
/// input positions).
struct FirstPass<'a> {
    /// The task group names, in the order first met.
    group_names: Vec<&'a str>,
    /// Per input alloc, its facts.
    facts: Vec<Facts>,
    /// The server-terminal allocs, ascending.
    server_terminal_at: Vec<u32>,
    /// The allocs that are not plain, ascending.
    odd_at: Vec<u32>,
    /// The allocs that embed another job than the given one, ascending.
    asked_at: Vec<u32>,
    /// Whether the ID prefixes rise strictly.
    rising: bool,
}

/// [`Table::build`]'s pass over `input`, reading each alloc's key through
/// `key_of` (a lent [`AllocKey`], or the alloc itself).
#[inline]
fn first_pass<'a, 'k, K: KeyFacts + 'k>(
    input: &'a [Rc<Allocation>],
    key_of: impl Fn(usize) -> &'k K,
    nodes: &TaintedIndex,
    cx: &FilterContext<'_>,
    job: Option<&Rc<Job>>,
) -> FirstPass<'a> {
    let n = input.len();
    let mut group_names: Vec<&'a str> = Vec::new();
    let mut facts_in: Vec<Facts> = Vec::with_capacity(n);
    let mut group = usize::MAX;
    // The current group's name as (length, prefix): names of up to 16
    // bytes are equal when these are (no call to compare them).
    let mut group_key = (u32::MAX, 0u128);
    // Input positions of the server-terminal and of the odd allocs,
    // ascending.
    let mut server_terminal_at: Vec<u32> = Vec::new();
    let mut odd_at: Vec<u32> = Vec::new();
    let mut asked_at: Vec<u32> = Vec::new();
    // Whether the ID prefixes rise strictly (then the input is in ID
    // order, one alloc per ID), and the last prefix.
    let (mut rising, mut last_prefix) = (true, 0u128);
    // The one pass over the allocs: each key is read here, and its
    // alloc only where the key leaves a rule open; after this, allocs
    // are read only where a rule needs more than their facts.
    for (i, a) in input.iter().enumerate() {
        let key = key_of(i);
        let prefix = key.id_prefix();
        rising &= facts_in.is_empty() | (last_prefix < prefix);
        last_prefix = prefix;
        let same_group = if key.group().0 <= 16 {
            group_key == key.group()
        } else {
            group_names.get(group) == Some(&a.task_group.as_str())
        };
        if !same_group {
            let tg = a.task_group.as_str();
            group = match group_names.iter().position(|g| *g == tg) {
                Some(g) => g,
                None => {
                    group_names.push(tg);
                    group_names.len() - 1
                }
            };
            group_key = key.group();
        }
        let other_job = job.is_some_and(|job| !key.embeds(job));
        debug_assert_eq!(
            other_job,
            job.is_some_and(|job| !a.job.as_ref().is_some_and(|own| Rc::ptr_eq(own, job)))
        );
        if other_job {
            push_sized(&mut asked_at, facts_in.len(), n);
        }
        let other_job = if other_job { Facts::OTHER_JOB } else { 0 };
        let node = nodes.get_keyed(|| key.node_prefix(), &a.node_id);
        let facts = if plainly_fine(key, node, cx) {
            // The common alloc, without the rules' walk.
            debug_assert_eq!(
                classify_alloc_on(a, node, cx),
                (AllocCategory::Untainted, ClassifyRule::NodeFine)
            );
            Facts {
                prefix,
                cat: AllocCategory::Untainted,
                rule: ClassifyRule::NodeFine,
                flags: Facts::PLAINLY_RUNNING | Facts::QUIET | Facts::PLAIN | other_job,
                group: group as u32,
            }
        } else {
            let (cat, rule) = classify_alloc_on(a, node, cx);
            let server_terminal = a.server_terminal_status();
            if server_terminal {
                push_sized(&mut server_terminal_at, facts_in.len(), n);
            }
            let plainly_running = plainly_running(a);
            let plain = plainly_running && rule == ClassifyRule::NodeFine;
            if !plain {
                push_sized(&mut odd_at, facts_in.len(), n);
            }
            let flag = |yes: bool, flag: u8| if yes { flag } else { 0 };
            Facts {
                prefix,
                cat,
                rule,
                flags: flag(server_terminal, Facts::SERVER_TERMINAL)
                    | flag(a.terminal_status(), Facts::TERMINAL)
                    | flag(a.client_status == ClientStatus::Unknown, Facts::UNKNOWN)
                    | flag(plainly_running, Facts::PLAINLY_RUNNING)
                    | flag(plainly_running || quiet(a), Facts::QUIET)
                    | flag(plain, Facts::PLAIN)
                    | other_job,
                group: group as u32,
            }
        };
        facts_in.push(facts);
    }
    FirstPass {
        group_names,
        facts: facts_in,
        server_terminal_at,
        odd_at,
        asked_at,
        rising,
    }
}

/// The input positions in ID order (stable: equal IDs in input order) of
/// `n` allocs, given each alloc's ID prefix; empty when the input is already in that
/// order (which is only checked). Input that interleaves a few ascending
/// runs (say originals and their replacements, each created in ID order)
/// is dealt onto at most [`MAX_RUNS`] runs, which are then merged;
/// anything else is sorted. Also says whether the input's prefixes rise
/// strictly (then it is in order and no two allocs share an ID).
fn sort_order(
    n: usize,
    prefix: impl Fn(usize) -> u128,
    input: &[Rc<Allocation>],
) -> (Vec<u32>, bool) {
    // A total order: (prefix, ID, position); IDs are read only on equal
    // prefixes.
    let lt = |x: usize, y: usize| {
        let (px, py) = (prefix(x), prefix(y));
        if px != py {
            return px < py;
        }
        match input[x].id.cmp(&input[y].id) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => x < y,
        }
    };
    // The sorted head of the input starts the first run. Strictly rising
    // prefixes decide almost every pair without calling `lt`.
    let (mut head, mut rising) = (1, true);
    while head < n {
        if prefix(head - 1) >= prefix(head) {
            if !lt(head - 1, head) {
                break;
            }
            rising = false;
        }
        head += 1;
    }
    let head = head.min(n);
    if head == n {
        return (Vec::new(), rising);
    }
    let mut first = Vec::with_capacity(n);
    first.extend(0..head as u32);
    let mut runs: Vec<Vec<u32>> = vec![first];
    // Per run: the prefix and position of its last alloc (prefixes decide
    // almost every comparison without reading the runs or the IDs).
    let mut lasts = [(0u128, 0usize); MAX_RUNS];
    lasts[0] = (prefix(head - 1), head - 1);
    // Deal each further alloc onto the first run whose last alloc sorts
    // before it.
    for (i, p) in (head..n).map(|i| (i, prefix(i))) {
        let run = lasts[..runs.len()]
            .iter()
            .position(|&(lp, l)| lp < p || (lp == p && lt(l, i)));
        match run {
            Some(r) => {
                runs[r].push(i as u32);
                lasts[r] = (p, i);
            }
            None if runs.len() < MAX_RUNS => {
                let mut r = Vec::with_capacity(n - i);
                r.push(i as u32);
                lasts[runs.len()] = (p, i);
                runs.push(r);
            }
            None => {
                let mut keyed: Vec<(u128, u32)> =
                    (0..n as u32).map(|i| (prefix(i as usize), i)).collect();
                // The order is total, so an unstable sort is stable here.
                keyed.sort_unstable_by(|x, y| {
                    x.0.cmp(&y.0)
                        .then_with(|| input[x.1 as usize].id.cmp(&input[y.1 as usize].id))
                        .then(x.1.cmp(&y.1))
                });
                return (keyed.into_iter().map(|(_, i)| i).collect(), false);
            }
        }
    }
    let mut runs = runs.into_iter();
    let mut order = runs.next().unwrap_or_default();
    for run in runs {
        order = merge_runs(&order, &run, &lt);
    }
    (order, false)
}

/// Merges two ascending runs of positions (`lt` is a total order): each
/// position of the shorter run is placed by a galloping search in the
/// longer one, and the stretches between are copied whole, so a short run
/// merged into a long one costs a few comparisons per short-run entry.
fn merge_runs(a: &[u32], b: &[u32], lt: &impl Fn(usize, usize) -> bool) -> Vec<u32> {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut i = 0;
    for &y in short {
        let k = gallop(long, i, |x| lt(x as usize, y as usize));
        out.extend_from_slice(&long[i..k]);
        out.push(y);
        i = k;
    }
    out.extend_from_slice(&long[i..]);
    out
}

/// The first index `k >= from` of `v` whose entry is not `below`, where
/// `v[from..]` holds the entries below first: steps of doubling length,
/// then a binary search in the last step, so a nearby answer costs a few
/// comparisons.
fn gallop(v: &[u32], from: usize, below: impl Fn(u32) -> bool) -> usize {
    let (mut lo, mut hi, mut step) = (from, from, 1);
    while hi < v.len() && below(v[hi]) {
        lo = hi + 1;
        hi = lo + step;
        step *= 2;
    }
    let hi = hi.min(v.len());
    lo + v[lo..hi].partition_point(|x| below(*x))
}

/// The union of two ascending lists of distinct positions. A short list
/// is placed into a long one by galloping, copying the stretches between.
fn union_sorted(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    if short.len().saturating_mul(8) <= long.len() {
        let mut i = 0;
        for &y in short {
            let k = gallop(long, i, |x| x < y);
            out.extend_from_slice(&long[i..k]);
            out.push(y);
            i = k + usize::from(long.get(k) == Some(&y));
        }
        out.extend_from_slice(&long[i..]);
        return out;
    }
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// A set of one group's allocs as sorted table positions (so in ID order,
/// one alloc per ID), the counterpart of [`AllocSet`] inside a run. A set
/// may hold its own changed copy of an alloc (same ID) in place of the
/// table's.
#[derive(Debug, Clone, Default)]
pub(super) struct PosSet {
    /// The positions, ascending.
    pos: Vec<u32>,
    /// The set's own copies, by ascending position (each one in `pos`).
    own: Vec<(u32, Rc<Allocation>)>,
}

impl PosSet {
    /// An empty set.
    pub fn new() -> Self {
        PosSet::default()
    }
    /// An empty set with room for `n` allocs.
    pub fn with_capacity(n: usize) -> Self {
        PosSet {
            pos: Vec::with_capacity(n),
            own: Vec::new(),
        }
    }
    /// The table's allocs at these positions (in any order, repeats once).
    pub fn from_positions(mut pos: Vec<u32>) -> Self {
        pos.sort_unstable();
        pos.dedup();
        PosSet {
            pos,
            own: Vec::new(),
        }
    }
    /// Number of allocs.
    #[inline]
    pub fn len(&self) -> usize {
        self.pos.len()
    }
    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }
    /// Appends the table's alloc at `pos`, which sorts after every entry.
    #[inline(always)]
    pub fn push(&mut self, pos: u32) {
        debug_assert!(self.pos.last().is_none_or(|p| *p < pos));
        self.pos.push(pos);
    }
    /// Appends the alloc at `pos` (the given copy, else the table's),
    /// which sorts after every entry.
    #[inline(always)]
    pub fn push_with(&mut self, pos: u32, own: Option<Rc<Allocation>>) {
        self.push(pos);
        if let Some(a) = own {
            self.own.push((pos, a));
        }
    }
    /// The positions, ascending.
    #[inline]
    pub fn as_slice(&self) -> &[u32] {
        &self.pos
    }
    /// The set's own copies, by ascending position.
    #[inline]
    pub fn own_copies(&self) -> &[(u32, Rc<Allocation>)] {
        &self.own
    }
    /// Those of `rows` (ascending positions) the set holds, in order (each
    /// found by a galloping search on from the last).
    pub fn held<'s>(&'s self, rows: &'s [u32]) -> impl Iterator<Item = u32> + 's {
        let mut at = 0;
        rows.iter().copied().filter(move |&r| {
            at = gallop(&self.pos, at, |x| x < r);
            self.pos.get(at) == Some(&r)
        })
    }
    /// The positions in order.
    #[inline]
    pub fn positions(&self) -> impl Iterator<Item = u32> + '_ {
        self.pos.iter().copied()
    }
    /// The positions, each with the set's own copy if it has one.
    #[inline]
    pub fn iter_own(&self) -> impl Iterator<Item = (u32, Option<&Rc<Allocation>>)> + '_ {
        let mut own = self.own.iter();
        let mut next = own.next();
        self.pos.iter().map(move |&p| match next {
            Some((q, a)) if *q == p => {
                next = own.next();
                (p, Some(a))
            }
            _ => (p, None),
        })
    }
    /// The positions and allocs (the set's own copy where it has one).
    #[inline]
    pub fn iter<'s, 'a: 's>(
        &'s self,
        t: &'s Table<'a>,
    ) -> impl Iterator<Item = (u32, &'s Rc<Allocation>)> + 's {
        self.iter_own()
            .map(move |(p, own)| (p, own.unwrap_or(t.alloc(p))))
    }
    #[inline]
    fn find(&self, pos: u32) -> Result<usize, usize> {
        self.pos.binary_search(&pos)
    }
    fn own_of(&self, pos: u32) -> Option<&Rc<Allocation>> {
        if self.own.is_empty() {
            return None;
        }
        let i = self.own.binary_search_by_key(&pos, |(p, _)| *p).ok()?;
        Some(&self.own[i].1)
    }
    /// Whether the set holds the alloc at `pos`.
    #[inline]
    pub fn contains(&self, pos: u32) -> bool {
        self.find(pos).is_ok()
    }
    /// [`PosSet::contains`] for callers that ask in ascending order: tries
    /// the slot at `hint` and the next first, and leaves `hint` there.
    #[inline]
    pub fn contains_hinted(&self, pos: u32, hint: &mut usize) -> bool {
        for i in [*hint, *hint + 1] {
            if self.pos.get(i) == Some(&pos) {
                *hint = i;
                return true;
            }
        }
        match self.find(pos) {
            Ok(i) => {
                *hint = i;
                true
            }
            Err(_) => false,
        }
    }
    /// The alloc of this set with ID `id`.
    pub fn get_by_id<'s, 'a: 's>(
        &'s self,
        t: &'s Table<'a>,
        id: &str,
    ) -> Option<(u32, &'s Rc<Allocation>)> {
        if id.is_empty() && (t.len() == 0 || !t.alloc(0).id.is_empty()) {
            return None;
        }
        let rows = t.rows_of(id);
        rows.into_iter().find_map(|k| {
            let p = k as u32;
            self.contains(p)
                .then(|| (p, self.own_of(p).unwrap_or(t.alloc(p))))
        })
    }
    /// Adds the table's alloc at `pos` (in place of a copy).
    pub fn insert(&mut self, pos: u32) {
        if let Err(i) = self.find(pos) {
            self.pos.insert(i, pos);
        }
        self.own.retain(|(p, _)| *p != pos);
    }
    /// Removes the alloc at `pos`.
    pub fn remove(&mut self, pos: u32) {
        if let Ok(i) = self.find(pos) {
            self.pos.remove(i);
            self.own.retain(|(p, _)| *p != pos);
        }
    }
    /// The set's own copy of the alloc at `pos`, to change (made from the
    /// table's alloc on first use); `None` when the set lacks it.
    pub fn own_mut(&mut self, t: &Table<'_>, pos: u32) -> Option<&mut Allocation> {
        if !self.contains(pos) {
            return None;
        }
        let i = match self.own.binary_search_by_key(&pos, |(p, _)| *p) {
            Ok(i) => i,
            Err(i) => {
                self.own.insert(i, (pos, Rc::clone(t.alloc(pos))));
                i
            }
        };
        Some(Rc::make_mut(&mut self.own[i].1))
    }
    /// Removes the allocs whose positions are in `other`.
    pub fn remove_all(&mut self, other: &PosSet) {
        if other.is_empty() || self.is_empty() {
            return;
        }
        let theirs = &other.pos;
        if theirs.len().saturating_mul(8) <= self.pos.len() {
            // A few: find them by search, then drop those slots.
            let mut gone: Vec<usize> = theirs.iter().filter_map(|p| self.find(*p).ok()).collect();
            gone.sort_unstable();
            // Copy the stretches between them.
            let mut kept = Vec::with_capacity(self.pos.len() - gone.len());
            let mut start = 0;
            for g in gone {
                kept.extend_from_slice(&self.pos[start..g]);
                start = g + 1;
            }
            kept.extend_from_slice(&self.pos[start..]);
            self.pos = kept;
        } else {
            let mut c = 0;
            self.pos.retain(|p| {
                while c < theirs.len() && theirs[c] < *p {
                    c += 1;
                }
                !(c < theirs.len() && theirs[c] == *p)
            });
        }
        if !self.own.is_empty() {
            self.own.retain(|(p, _)| !other.contains(*p));
        }
    }
    /// Adds `other`'s allocs; on equal positions `other`'s alloc wins.
    pub fn union_with(&mut self, other: &PosSet) {
        if other.is_empty() {
            return;
        }
        self.pos = union_sorted(&self.pos, &other.pos);
        self.take_copies_of(other);
    }
    /// After `other`'s positions joined this set: `other`'s versions of
    /// them replace this set's.
    fn take_copies_of(&mut self, other: &PosSet) {
        if self.own.is_empty() && other.own.is_empty() {
            return;
        }
        let mine = std::mem::take(&mut self.own);
        self.own = mine
            .into_iter()
            .filter(|(p, _)| !other.contains(*p))
            .chain(other.own.iter().cloned())
            .collect();
        self.own.sort_by_key(|(p, _)| *p);
    }
    /// The allocs not in `other`.
    pub fn difference(&self, other: &PosSet) -> PosSet {
        let mut out = self.clone();
        out.remove_all(other);
        out
    }
    /// The allocs matching `keep` (given position and alloc).
    pub fn filter(&self, t: &Table<'_>, mut keep: impl FnMut(u32, &Allocation) -> bool) -> PosSet {
        let mut out = PosSet::new();
        for (p, own) in self.iter_own() {
            if keep(p, own.unwrap_or(t.alloc(p))) {
                out.push_with(p, own.cloned());
            }
        }
        out
    }
    /// The allocs whose positions match `keep`, without reading allocs.
    pub fn filter_pos(&self, mut keep: impl FnMut(u32) -> bool) -> PosSet {
        if self.own.is_empty() {
            return PosSet {
                pos: self.pos.iter().copied().filter(|p| keep(*p)).collect(),
                own: Vec::new(),
            };
        }
        let mut out = PosSet::new();
        for (p, own) in self.iter_own() {
            if keep(p) {
                out.push_with(p, own.cloned());
            }
        }
        out
    }
    /// For a set without copies of its own: removes those of the
    /// `candidates` (ascending positions) that it holds and `drop` accepts,
    /// and returns them (each candidate is found by a galloping search, and
    /// the stretches between the removed ones are moved down in place: no
    /// new list for the kept ones).
    pub fn remove_where(
        &mut self,
        candidates: &[u32],
        mut drop: impl FnMut(u32) -> bool,
    ) -> PosSet {
        debug_assert!(self.own.is_empty(), "remove_where on a set with copies");
        let mut gone = Vec::new();
        // `copied`: how much of `pos` is decided; `kept`: how many of those
        // stay (the first `kept` slots hold them, all below `copied`, so the
        // searches from `at` on read untouched slots); `at`: where the last
        // search ended.
        let (mut copied, mut kept, mut at) = (0, 0, 0);
        for (k, &c) in candidates.iter().enumerate() {
            at = gallop(&self.pos, at, |x| x < c);
            if self.pos.get(at) != Some(&c) || !drop(c) {
                continue;
            }
            if gone.is_empty() {
                // At most the candidates left: one allocation.
                gone.reserve(candidates.len() - k);
            }
            self.pos.copy_within(copied..at, kept);
            kept += at - copied;
            gone.push(c);
            copied = at + 1;
        }
        if !gone.is_empty() {
            let end = self.pos.len();
            self.pos.copy_within(copied..end, kept);
            self.pos.truncate(kept + end - copied);
        }
        PosSet {
            pos: gone,
            own: Vec::new(),
        }
    }
    /// The allocs of this set whose IDs are in `keys` (`fromKeys`).
    pub fn with_ids(&self, t: &Table<'_>, keys: &[String]) -> PosSet {
        if keys.is_empty() {
            return PosSet::new();
        }
        let mut wanted: Vec<u32> = keys
            .iter()
            .filter_map(|k| self.get_by_id(t, k).map(|(p, _)| p))
            .collect();
        wanted.sort_unstable();
        self.filter_pos(|p| wanted.binary_search(&p).is_ok())
    }
    /// The name index of each alloc (of the set's own copy where it has one).
    pub fn name_indexes<'s>(&'s self, t: &'s Table<'_>) -> impl Iterator<Item = u32> + 's {
        self.iter_own().map(|(p, own)| match own {
            Some(a) => name_index(a),
            None => name_index(t.alloc(p)),
        })
    }
    /// The allocs in name-index order (stable: ties in ID order), as
    /// `nameOrder`.
    pub fn name_order<'s, 'a: 's>(&'s self, t: &'s Table<'a>) -> Vec<(u32, &'s Rc<Allocation>)> {
        let mut v: Vec<(u32, u32, &Rc<Allocation>)> = self
            .name_indexes(t)
            .zip(self.iter(t))
            .map(|(i, (p, a))| (i, p, a))
            .collect();
        // Stable: equal indexes keep ID order.
        v.sort_by_key(|(i, _, _)| *i);
        v.into_iter().map(|(_, p, a)| (p, a)).collect()
    }
    /// The set as an [`AllocSet`] (shared allocs, for the few steps
    /// written over allocs).
    pub fn to_alloc_set(&self, t: &Table<'_>) -> AllocSet {
        self.iter(t).map(|(_, a)| Rc::clone(a)).collect()
    }
}

/// The positions of the union of `sets`, each once, in any order (a copy
/// of the one non-empty set when there is one).
pub(super) fn union_list(sets: &[&PosSet]) -> Vec<u32> {
    let mut nonempty = sets.iter().filter(|s| !s.is_empty());
    match (nonempty.next(), nonempty.next()) {
        (None, _) => return Vec::new(),
        (Some(only), None) => return only.pos.clone(),
        _ => {}
    }
    let mut out = Vec::with_capacity(sets.iter().map(|s| s.len()).sum());
    // Per earlier set: where the last search left off (positions ascend,
    // so each search gallops on from there).
    let mut cursors = vec![0usize; sets.len()];
    for (k, s) in sets.iter().enumerate() {
        let earlier = &sets[..k];
        if earlier.iter().all(|o| o.is_empty()) {
            out.extend_from_slice(&s.pos);
            continue;
        }
        cursors[..k].fill(0);
        for &p in &s.pos {
            let mut seen = false;
            for (o, c) in earlier.iter().zip(cursors.iter_mut()) {
                *c = gallop(&o.pos, *c, |x| x < p);
                seen |= o.pos.get(*c) == Some(&p);
            }
            if !seen {
                out.push(p);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Allocs with these IDs; `create_index` records the input position.
    fn allocs(ids: &[String]) -> Vec<Rc<Allocation>> {
        ids.iter()
            .enumerate()
            .map(|(i, id)| {
                Rc::new(Allocation {
                    id: id.clone(),
                    create_index: i as u64,
                    ..Default::default()
                })
            })
            .collect()
    }

    /// `sort_order` orders like a stable sort by ID (of equal IDs the
    /// earlier input first), whether the input is sorted, a few
    /// interleaved runs (merged), or many runs (sorted).
    #[test]
    fn sort_order_is_a_stable_sort_by_id() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let mut cases = vec![
            s(&["a0", "a1", "a2"]),
            s(&["b0", "a0", "b1", "a1", "b2", "a2"]),
            s(&["a1", "a2", "a1", "a3", "a2", "a1"]),
            s(&["e", "d", "c", "b", "a"]),
            s(&[
                "0123456789abcdef-2",
                "0123456789abcdef-1",
                "0123456789abcdef",
            ]),
            s(&["", "x", "", "a"]),
        ];
        // A short sorted head, then a longer run that sorts before it (the
        // merge places the shorter run into the longer).
        let mut v = s(&["m0", "m1", "m2"]);
        v.extend((0..100).map(|i| format!("a{i:03}")));
        v.push("m1".into());
        cases.push(v);
        // Originals and replacements interleaved, as in the benchmark.
        let mut v = Vec::new();
        for i in 0..300 {
            if (100..150).contains(&i) {
                v.push(format!("repl-{i:05}"));
            }
            v.push(format!("alloc-{i:05}"));
        }
        cases.push(v);
        // Pseudo-random IDs with repeats.
        let mut x: u64 = 7;
        cases.push(
            (0..200)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    format!("id-{}", (x >> 33) % 40)
                })
                .collect(),
        );
        for ids in cases {
            let input = allocs(&ids);
            let prefixes: Vec<u128> = input.iter().map(|a| id_prefix(&a.id)).collect();
            let (mut order, rising) = sort_order(input.len(), |i| prefixes[i], &input);
            assert!(!rising || (order.is_empty() && prefixes.is_sorted_by(|a, b| a < b)));
            if order.is_empty() {
                order = (0..input.len() as u32).collect();
            }
            let got: Vec<(String, u64)> = order
                .iter()
                .map(|i| {
                    let a = &input[*i as usize];
                    (a.id.clone(), a.create_index)
                })
                .collect();
            let mut want: Vec<(String, u64)> = input
                .iter()
                .map(|a| (a.id.clone(), a.create_index))
                .collect();
            want.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(got, want, "{ids:?}");
        }
    }

    /// Sorted position lists for the set tests: empty, one, short, long
    /// and interleaved, sparse.
    fn position_lists() -> Vec<Vec<u32>> {
        vec![
            vec![],
            vec![5],
            vec![0, 3, 7],
            (0..100).map(|x| x * 2).collect(),
            (0..50).map(|x| x * 3 + 1).collect(),
            vec![1, 2, 3, 198, 199, 250],
        ]
    }

    /// `union_sorted` is the sorted union, whether one list is much
    /// shorter (galloping) or not, and `remove_all` the difference.
    #[test]
    fn union_and_removal_of_positions() {
        let lists = position_lists();
        for a in &lists {
            for b in &lists {
                let mut want: Vec<u32> = a.iter().chain(b).copied().collect();
                want.sort_unstable();
                want.dedup();
                assert_eq!(union_sorted(a, b), want, "{a:?} {b:?}");
                let mut set = PosSet::from_positions(a.clone());
                set.remove_all(&PosSet::from_positions(b.clone()));
                let rest: Vec<u32> = a.iter().copied().filter(|x| !b.contains(x)).collect();
                assert_eq!(set.positions().collect::<Vec<_>>(), rest, "{a:?} - {b:?}");
            }
        }
    }

    /// `remove_where` removes exactly the candidates the set holds and
    /// `drop` accepts, and returns them.
    #[test]
    fn remove_where_removes_accepted_candidates() {
        let lists = position_lists();
        for a in &lists {
            for b in &lists {
                let drop = |p: u32| p % 3 != 2;
                let mut set = PosSet::from_positions(a.clone());
                let gone = set.remove_where(b, drop);
                let want_gone: Vec<u32> = a
                    .iter()
                    .copied()
                    .filter(|p| b.contains(p) && drop(*p))
                    .collect();
                let want_kept: Vec<u32> = a
                    .iter()
                    .copied()
                    .filter(|p| !want_gone.contains(p))
                    .collect();
                assert_eq!(
                    gone.positions().collect::<Vec<_>>(),
                    want_gone,
                    "{a:?} {b:?}"
                );
                assert_eq!(
                    set.positions().collect::<Vec<_>>(),
                    want_kept,
                    "{a:?} {b:?}"
                );
            }
        }
    }

    /// `union_list` lists each position of the union once, whichever
    /// sets are empty, short or long.
    #[test]
    fn union_list_lists_each_position_once() {
        let lists = position_lists();
        for a in &lists {
            for b in &lists {
                for c in &lists {
                    let sets = [a, b, c].map(|l| PosSet::from_positions(l.clone()));
                    let mut got = union_list(&[&sets[0], &sets[1], &sets[2]]);
                    got.sort_unstable();
                    let mut want: Vec<u32> = a.iter().chain(b).chain(c).copied().collect();
                    want.sort_unstable();
                    want.dedup();
                    assert_eq!(got, want, "{a:?} {b:?} {c:?}");
                }
            }
        }
    }

    /// Lookups by ID find every row of an ID, in any order of asking.
    #[test]
    fn rows_of_finds_each_id() {
        let ids: Vec<String> = [
            "b",
            "a",
            "c",
            "a",
            "",
            "0123456789abcdef-1",
            "0123456789abcdef",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let input = allocs(&ids);
        let rules = crate::reconciler::rules::ReconcilerRules::default();
        let nodes = BTreeMap::new();
        let cx = FilterContext {
            tainted_nodes: &nodes,
            clock: &crate::reconciler::filters::EvalClock::new(crate::model::Time::ZERO, ""),
            rules: &rules,
        };
        // Keys made by the pass, and lent.
        let lent: Vec<AllocKey> = input.iter().map(|a| AllocKey::of(a)).collect();
        for keys in [&[][..], &lent] {
            let (t, firsts) = Table::build(&input, keys, &TaintedIndex::new(&nodes), &cx, None);
            assert_eq!(firsts.len(), 6, "one record per distinct ID");
            assert_eq!(t.slots(), 6);
            for id in ids.iter().rev().chain(ids.iter()) {
                let rows = t.rows_of(id);
                let want = ids.iter().filter(|x| *x == id).count();
                assert_eq!(rows.len(), want, "{id}");
                assert!(rows.clone().all(|k| t.alloc(k as u32).id == *id), "{id}");
            }
            assert!(t.rows_of("zz").is_empty());
            assert!(t.rows_of("0").is_empty());
        }
    }
}
