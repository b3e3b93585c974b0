//! The global allocator of the command line (`src/main.rs`) and of the
//! benches (`benches/support/allocator.rs`): mimalloc.
//!
//! The `mimalloc` crate's allocator asks mimalloc for every block through
//! its aligned entry points (`mi_malloc_aligned`). Mimalloc 3's aligned
//! fast path only serves a block when the free list of its size class
//! holds one; when that list runs dry it falls back to over-allocating in
//! the next larger size class (for any size that is not a power of two),
//! and the dry list is not refilled by the aligned path at all, so every
//! later block of that size class takes the slow path too. The simulator
//! makes millions of small blocks (IDs, texts, plan entries), and about
//! one in fifteen went that way.
//!
//! Every mimalloc block is aligned to at least 8 bytes (block sizes are
//! multiples of the word), so a layout aligned to 8 or less needs no more
//! than the plain entry points (`mi_malloc`, `mi_zalloc`, `mi_realloc`),
//! which refill a size class's free list like any `malloc`; only larger
//! alignments go through the aligned ones. The build is mimalloc 2 (see
//! `Cargo.toml` for the measurement).
//!
//! [`configure`] (called first thing by the command line's and the benches'
//! `main`) keeps freed memory a second before mimalloc returns it to the
//! system, instead of mimalloc's 10 ms: a simulator run frees and reuses
//! tens of megabytes as it goes, and returned pages come back as fresh
//! page faults the kernel zeroes again.

#![no_std]

extern crate std;

use core::alloc::{GlobalAlloc, Layout};
use core::ffi::c_void;
use libmimalloc_sys as mi;

/// The word alignment every mimalloc block has.
const PLAIN_ALIGN: usize = 8;

/// Mimalloc as the global allocator (see the crate's documentation).
pub struct Mimalloc;

// SAFETY: each method hands mimalloc's results through unchanged: blocks
// of at least the layout's size (or null on failure), aligned as the
// layout asks (plainly for alignments up to the word, which every block
// has; by the aligned entry points above that), and freed or resized only
// by mimalloc, which finds a block's size class from its address.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: plain FFI calls; any size is valid for them.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_malloc(layout.size()).cast()
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_zalloc(layout.size()).cast()
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator (the caller's contract).
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout` (the
        // caller's contract); the new block keeps the layout's alignment
        // the same way `alloc` gives it.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

/// Mimalloc 2's `mi_option_purge_delay` (its `mi_option_t` enum: after
/// `mi_option_eager_commit_delay`, 14, and before `mi_option_use_numa_nodes`,
/// 16, both named by `libmimalloc-sys`, which names no constant for it).
const OPTION_PURGE_DELAY: mi::mi_option_t = 15;

/// How long freed memory stays with the process before mimalloc purges it
/// (returns it to the system), in milliseconds.
///
/// Measured on the simulator bench (`SIM_WALL=10`, 10 lost and 10 reconnect
/// runs in one process, 2026-12-03): with mimalloc's default of 10 ms the
/// process took 22,500-29,400 minor page faults and 0.14-0.27 s of system
/// time; with 1 s, ~300 faults and 0.02-0.03 s, at the same peak memory
/// (75 MB). A lone `SIM_ONCE` run: 262 -> 210 faults (mostly huge pages).
/// Memory still goes back to the system a second after a burst of work,
/// not never (`-1`): the same figures as 1 s here.
pub const PURGE_DELAY_MS: core::ffi::c_long = 1000;

/// Sets mimalloc's options for this workload: the purge delay
/// ([`PURGE_DELAY_MS`]) unless the environment sets it
/// (`MIMALLOC_PURGE_DELAY`, which mimalloc reads itself, e.g. `=10` for its
/// default to compare).
pub fn configure() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: a plain FFI call with an option mimalloc knows (it also
        // ignores one out of range).
        unsafe { mi::mi_option_set(OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    }
}

/// The purge delay mimalloc uses now, in milliseconds.
pub fn purge_delay_ms() -> core::ffi::c_long {
    // SAFETY: as in `configure`.
    unsafe { mi::mi_option_get(OPTION_PURGE_DELAY) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;
    use std::vec::Vec;

    /// The option numbered as this crate says is the purge delay: mimalloc's
    /// documented default (10 ms) before `configure`, 1 s after (unless the
    /// environment sets it, as mimalloc's own name for it).
    #[test]
    fn configure_sets_the_purge_delay() {
        match std::env::var("MIMALLOC_PURGE_DELAY") {
            Ok(set) => {
                configure();
                assert_eq!(purge_delay_ms().to_string(), set.trim());
            }
            Err(_) => {
                assert_eq!(purge_delay_ms(), 10, "not mimalloc 2's purge delay");
                configure();
                assert_eq!(purge_delay_ms(), PURGE_DELAY_MS);
            }
        }
    }

    /// Blocks of every alignment up to a page are aligned as asked, keep
    /// their bytes across a resize, and come back zeroed when asked.
    #[test]
    fn blocks_are_aligned_and_resized() {
        let a = Mimalloc;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 7, 8, 24, 40, 100, 1000, 5000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero size; the block is used within its
                // size and freed once by this allocator.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                    p.write_bytes(0xab, size);
                    let q = a.realloc(p, layout, size * 3);
                    assert_eq!(q as usize % align, 0);
                    assert!((0..size).all(|i| *q.add(i) == 0xab));
                    a.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                    let z = a.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0);
                    assert!((0..size).all(|i| *z.add(i) == 0));
                    a.dealloc(z, layout);
                }
            }
        }
    }

    /// Many blocks of one size class (more than one page holds, every other
    /// one freed each round so the class's free list runs dry and is
    /// refilled): each is word-aligned, none overlaps another, and each
    /// keeps what was written into it.
    #[test]
    fn a_size_class_refills() {
        let a = Mimalloc;
        let layout = Layout::from_size_align(40, 8).unwrap();
        let mut live: Vec<(usize, u8)> = Vec::new();
        for round in 0..4u8 {
            for i in 0..5_000usize {
                // SAFETY: a non-zero size, written within it.
                let p = unsafe { a.alloc(layout) };
                assert!(!p.is_null());
                assert_eq!(p as usize % 8, 0);
                let tag = round.wrapping_mul(31).wrapping_add(i as u8);
                // SAFETY: as above.
                unsafe { p.write_bytes(tag, 40) };
                live.push((p as usize, tag));
            }
            let mut keep = Vec::new();
            for (k, (p, tag)) in live.drain(..).enumerate() {
                // SAFETY: each block is live and was written whole.
                let intact = unsafe { (0..40).all(|j| *(p as *const u8).add(j) == tag) };
                assert!(intact, "a block was overwritten");
                if k % 2 == 0 {
                    // SAFETY: freed once, with its own layout.
                    unsafe { a.dealloc(p as *mut u8, layout) };
                } else {
                    keep.push((p, tag));
                }
            }
            live = keep;
        }
        live.sort_unstable();
        assert!(
            live.windows(2).all(|w| w[1].0 - w[0].0 >= 40),
            "blocks overlap"
        );
        for (p, _) in live {
            // SAFETY: freed once, with its own layout.
            unsafe { a.dealloc(p as *mut u8, layout) };
        }
    }
}
