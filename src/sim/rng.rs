//! The simulator's one source of randomness: a seeded PCG32 generator
//! (O'Neill's PCG-XSH-RR 64/32), written here so the core needs no crate.
//!
//! Everything random in a run (heartbeat TTL stagger, client retry jitter,
//! identifiers) is drawn from one `Rng` in a fixed order, so the same seed
//! gives the same run natively and in WebAssembly.

use serde::{Deserialize, Serialize};

/// PCG multiplier (the 64-bit LCG constant used by the reference PCG).
const MULTIPLIER: u64 = 6_364_136_223_846_793_005;

/// A small, fast, seeded pseudo-random generator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rng {
    state: u64,
    increment: u64,
}

impl Rng {
    /// A generator for `seed`; the stream is fixed by the seed alone.
    pub fn new(seed: u64) -> Self {
        let mut rng = Rng {
            state: 0,
            increment: (seed.rotate_left(17) ^ 0xda3e_39cb_94b9_5bdb) | 1,
        };
        rng.next_u32();
        rng.state = rng.state.wrapping_add(seed);
        rng.next_u32();
        rng
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(MULTIPLIER).wrapping_add(self.increment);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        (u64::from(self.next_u32()) << 32) | u64::from(self.next_u32())
    }

    /// A uniform value in `[0, bound)`; 0 when `bound` is 0 (Nomad's
    /// `RandomStagger` returns 0 for a non-positive interval too).
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            return 0;
        }
        // Rejection sampling keeps the draw unbiased.
        let zone = u64::MAX - (u64::MAX % bound);
        loop {
            let value = self.next_u64();
            if value < zone {
                return value % bound;
            }
        }
    }

    /// Nomad's `helper.RandomStagger`: a uniform duration in `[0, interval)`.
    pub fn stagger(&mut self, interval_ticks: u64) -> u64 {
        self.below(interval_ticks)
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn same_seed_same_stream() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        let xs: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        let mut c = Rng::new(43);
        let zs: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_ne!(xs, zs);
    }

    #[test]
    fn below_stays_in_range() {
        let mut rng = Rng::new(7);
        for bound in [1_u64, 2, 3, 10, 1000] {
            for _ in 0..100 {
                assert!(rng.below(bound) < bound);
            }
        }
        assert_eq!(rng.below(0), 0);
    }
}
