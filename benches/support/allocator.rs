//! The allocator the benches run with: the command line's (`src/main.rs`),
//! so that a bench measures what `nomad-playground run` (or `reconcile`,
//! `explore`, `link`) does. `benches/history_memory.rs` counts the bytes the
//! history holds with its own counting allocator instead.

#[global_allocator]
static GLOBAL: playground_alloc::Mimalloc = playground_alloc::Mimalloc;

/// What each bench's `main` does first, as the command line's does: the
/// allocator's settings (`playground_alloc::configure`).
pub fn configure() {
    playground_alloc::configure();
}
