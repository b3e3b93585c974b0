//! One shared sort for code that is not hot (code size).
//!
//! Every `slice::sort_by` / `sort_by_key` call with its own element type or
//! comparator compiles its own copy of the standard library's driftsort
//! (~4 KB of wasm each), and so does every `collect` into a `BTreeMap` or
//! `BTreeSet` (it sorts its input first). On cold paths (views, operator
//! calls, assertions, link encoding, preemption) and on small inputs where
//! the simulator's instruction count shows no cost (the tainted nodes, a
//! plan node's taken allocs, a job's queued evals) [`sort_by`] sorts
//! through one non-generic stable merge sort of indices instead, and
//! [`map_from`] / [`set_from`] build a map or set by inserting. The results
//! are the same: a stable sort by a total order has one possible output,
//! and inserting keeps the last value of a repeated key, as `collect` does.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Sorts `items` stably by `compare`, like `<[T]>::sort_by`.
pub fn sort_by<T>(items: &mut [T], compare: impl Fn(&T, &T) -> Ordering) {
    if items.len() < 2 {
        return;
    }
    let order = sorted_order(items.len(), &|a, b| compare(&items[a], &items[b]));
    permute(items, order);
}

/// Sorts `items` stably by a key, like `<[T]>::sort_by_key`.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// `iter.collect::<BTreeMap<_, _>>()` without a sort.
pub fn map_from<K: Ord, V>(iter: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    for (key, value) in iter {
        map.insert(key, value);
    }
    map
}

/// `iter.collect::<BTreeSet<_>>()` without a sort.
pub fn set_from<T: Ord>(iter: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    for item in iter {
        set.insert(item);
    }
    set
}

/// The positions `0..len` in stably sorted order by `compare` (a bottom-up
/// merge sort; not generic, so every caller shares it).
fn sorted_order(len: usize, compare: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    let mut scratch = vec![0; len];
    let mut width = 1;
    while width < len {
        let mut start = 0;
        while start < len {
            let mid = (start + width).min(len);
            let end = (start + 2 * width).min(len);
            let (mut i, mut j) = (start, mid);
            for slot in &mut scratch[start..end] {
                // Take from the right run only when strictly smaller: stable.
                if j < end && (i >= mid || compare(order[j], order[i]) == Ordering::Less) {
                    *slot = order[j];
                    j += 1;
                } else {
                    *slot = order[i];
                    i += 1;
                }
            }
            start = end;
        }
        std::mem::swap(&mut order, &mut scratch);
        width *= 2;
    }
    order
}

/// Rearranges `items` so that position `k` holds the item that was at
/// `order[k]` (following the permutation's cycles with swaps).
fn permute<T>(items: &mut [T], mut order: Vec<usize>) {
    for start in 0..items.len() {
        let mut k = start;
        loop {
            let from = order[k];
            if from == usize::MAX {
                break;
            }
            order[k] = usize::MAX;
            if from == start {
                break;
            }
            items.swap(k, from);
            k = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_the_standard_stable_sort() {
        // Keys with many ties, so stability shows; every length up to 70.
        let mut seed = 7_u64;
        for len in 0..70 {
            let items: Vec<(u8, usize)> = (0..len)
                .map(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((seed >> 60) as u8, i)
                })
                .collect();
            let mut want = items.clone();
            want.sort_by_key(|a| a.0);
            let mut got = items.clone();
            sort_by(&mut got, |a, b| a.0.cmp(&b.0));
            assert_eq!(got, want, "len {len}");
            let mut got = items;
            sort_by_key(&mut got, |a| std::cmp::Reverse(a.0));
            want.sort_by_key(|a| std::cmp::Reverse(a.0));
            assert_eq!(got, want, "len {len}, reversed");
        }
    }

    #[test]
    fn maps_and_sets_keep_what_collect_keeps() {
        let pairs = [("b", 1), ("a", 2), ("b", 3), ("c", 4), ("a", 5)];
        let want: BTreeMap<&str, i32> = pairs.iter().copied().collect();
        assert_eq!(map_from(pairs.iter().copied()), want);
        let want: BTreeSet<&str> = pairs.iter().map(|p| p.0).collect();
        assert_eq!(set_from(pairs.iter().map(|p| p.0)), want);
    }
}
