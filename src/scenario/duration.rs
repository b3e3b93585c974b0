//! Durations in scenario files: `"500ms"`, `"10s"`, `"2m"`, `"1h"`,
//! `"1m30s"` or a plain integer of milliseconds (one tick is one
//! millisecond). They print back in the shortest unit form, so a file
//! written in that form round-trips byte for byte.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A duration in ticks (milliseconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

impl Dur {
    /// Milliseconds.
    pub const fn ms(n: u64) -> Dur {
        Dur(n)
    }
    /// Seconds.
    pub const fn secs(n: u64) -> Dur {
        Dur(n * 1000)
    }
    /// Minutes.
    pub const fn mins(n: u64) -> Dur {
        Dur(n * 60_000)
    }
    /// The duration in ticks.
    pub const fn ticks(self) -> u64 {
        self.0
    }
    /// The duration as Nomad's nanoseconds.
    pub fn nanos(self) -> crate::model::Duration {
        crate::model::Duration::from_nanos(
            i64::try_from(self.0).unwrap_or(i64::MAX / 1_000_000) * 1_000_000,
        )
    }

    /// Parses the text form.
    pub fn parse(text: &str) -> Option<Dur> {
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        if let Ok(ms) = text.parse::<u64>() {
            return Some(Dur(ms));
        }
        let mut total: u64 = 0;
        let mut rest = text;
        while !rest.is_empty() {
            let digits = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            if digits == 0 {
                return None;
            }
            let number: u64 = rest[..digits].parse().ok()?;
            rest = &rest[digits..];
            let unit_len = rest
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(rest.len());
            let unit = &rest[..unit_len];
            rest = &rest[unit_len..];
            let factor = match unit {
                "ms" => 1,
                "s" => 1000,
                "m" => 60_000,
                "h" => 3_600_000,
                "d" => 86_400_000,
                _ => return None,
            };
            total = total.checked_add(number.checked_mul(factor)?)?;
        }
        Some(Dur(total))
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut ms = self.0;
        if ms == 0 {
            return f.write_str("0s");
        }
        for (unit, size) in [("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)] {
            if ms >= size {
                write!(f, "{}{unit}", ms / size)?;
                ms %= size;
            }
        }
        Ok(())
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a duration such as \"10s\", \"2m\", \"1h30m\" or an integer of milliseconds",
                )
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Dur, E> {
                Ok(Dur(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Dur, E> {
                u64::try_from(v)
                    .map(Dur)
                    .map_err(|_| E::custom("a duration must not be negative"))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Dur, E> {
                Dur::parse(v).ok_or_else(|| E::custom(format!("invalid duration {v:?}")))
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::Dur;

    #[test]
    fn parses_and_prints() {
        assert_eq!(Dur::parse("1m30s"), Some(Dur(90_000)));
        assert_eq!(Dur::parse("250"), Some(Dur(250)));
        assert_eq!(Dur::parse("10x"), None);
        assert_eq!(Dur(90_000).to_string(), "1m30s");
        assert_eq!(Dur(3_600_500).to_string(), "1h500ms");
        assert_eq!(
            Dur::parse(&Dur(3_723_004).to_string()),
            Some(Dur(3_723_004))
        );
    }
}
