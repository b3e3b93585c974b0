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

#![no_std]

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

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

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
