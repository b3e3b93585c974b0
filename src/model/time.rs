//! Time and durations as Nomad's HTTP API encodes them.
//!
//! [`Time`] is an instant in Unix nanoseconds. The API writes most times as
//! RFC 3339 strings (Go's `time.Time` JSON form) but a few as plain integers
//! of Unix nanoseconds (`CreateTime`, `ModifyTime`, `RescheduleTime`); the
//! [`unix_nanos`] module is the serde adapter for the second form. Go's zero
//! time (`0001-01-01T00:00:00Z`) lies outside the range of an `i64` of
//! nanoseconds, so it is the sentinel [`Time::ZERO`].
//!
//! [`Duration`] is a signed count of nanoseconds, Go's `time.Duration`.
//!
//! The RFC 3339 parser and formatter are written here by hand: the core
//! takes no date crate.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Nanoseconds in one second.
const NANOS_PER_SEC: i64 = 1_000_000_000;

/// A signed span of time in nanoseconds (Go's `time.Duration`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub i64);

impl Duration {
    /// The zero duration.
    pub const ZERO: Duration = Duration(0);

    /// A duration of `n` nanoseconds.
    pub const fn from_nanos(n: i64) -> Self {
        Duration(n)
    }
    /// A duration of `n` seconds.
    pub const fn from_secs(n: i64) -> Self {
        Duration(n.saturating_mul(NANOS_PER_SEC))
    }
    /// A duration of `n` minutes.
    pub const fn from_mins(n: i64) -> Self {
        Duration::from_secs(n.saturating_mul(60))
    }
    /// A duration of `n` hours.
    pub const fn from_hours(n: i64) -> Self {
        Duration::from_mins(n.saturating_mul(60))
    }
    /// The duration in nanoseconds.
    pub const fn as_nanos(self) -> i64 {
        self.0
    }
    /// Whether the duration is zero.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl std::ops::Add for Duration {
    type Output = Duration;
    fn add(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_add(rhs.0))
    }
}

impl std::ops::Sub for Duration {
    type Output = Duration;
    fn sub(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_sub(rhs.0))
    }
}

impl std::ops::Mul<i64> for Duration {
    type Output = Duration;
    fn mul(self, rhs: i64) -> Duration {
        Duration(self.0.saturating_mul(rhs))
    }
}

impl fmt::Display for Duration {
    /// Go's `Duration.String` style for whole units: `1h0m0s`, `30s`, `1.5s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut n = self.0;
        if n == 0 {
            return f.write_str("0s");
        }
        if n < 0 {
            f.write_str("-")?;
            n = n.saturating_neg();
        }
        if n < NANOS_PER_SEC {
            return write!(f, "{n}ns");
        }
        let secs = n / NANOS_PER_SEC;
        let frac = n % NANOS_PER_SEC;
        let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
        if h > 0 {
            write!(f, "{h}h{m}m")?;
        } else if m > 0 {
            write!(f, "{m}m")?;
        }
        if frac == 0 {
            write!(f, "{s}s")
        } else {
            let digits = format!("{frac:09}");
            write!(f, "{s}.{}s", digits.trim_end_matches('0'))
        }
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(self.0)
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        i64::deserialize(d).map(Duration)
    }
}

/// An instant in Unix nanoseconds, or Go's zero time ([`Time::ZERO`]).
///
/// `Default` is Go's zero time, the value of an absent RFC 3339 field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub i64);

impl Default for Time {
    fn default() -> Self {
        Time::ZERO
    }
}

/// Why a text is not an RFC 3339 time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    /// The text does not have the shape `YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]`.
    #[error("not an RFC 3339 time: {0:?}")]
    Syntax(String),
    /// A field is out of its range (month 13, hour 25, ...).
    #[error("RFC 3339 time has a field out of range: {0:?}")]
    Range(String),
    /// The instant cannot be held in Unix nanoseconds (before 1677 or after 2262).
    #[error("time {0:?} is outside the range of Unix nanoseconds")]
    Overflow(String),
}

impl Time {
    /// Go's zero time, `0001-01-01T00:00:00Z` (`time.Time{}`).
    pub const ZERO: Time = Time(i64::MIN);
    /// The Unix epoch, `1970-01-01T00:00:00Z`.
    pub const UNIX_EPOCH: Time = Time(0);

    /// The instant `n` nanoseconds after the Unix epoch.
    pub const fn from_unix_nanos(n: i64) -> Self {
        Time(n)
    }
    /// The Unix epoch (a serde default for integer times).
    pub const fn unix_epoch() -> Self {
        Time::UNIX_EPOCH
    }
    /// Nanoseconds since the Unix epoch ([`Time::ZERO`] gives `i64::MIN`).
    pub const fn unix_nanos(self) -> i64 {
        self.0
    }
    /// Go's `Time.IsZero`.
    pub const fn is_zero(self) -> bool {
        self.0 == i64::MIN
    }
    /// Go's `Time.UnixNano` for the API's integer encoding: the zero time is
    /// written as Go writes it, a large negative number clamped to `i64::MIN`.
    pub const fn to_unix_nanos(self) -> i64 {
        self.0
    }
    /// This instant plus `d` (saturating; the zero time stays far in the past).
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
    /// This instant minus `d`.
    pub fn sub_duration(self, d: Duration) -> Time {
        Time(self.0.saturating_sub(d.0))
    }
    /// The span from `earlier` to `self`.
    pub fn since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// Go's `Time.Before`.
    pub fn before(self, other: Time) -> bool {
        self.0 < other.0
    }
    /// Go's `Time.After`.
    pub fn after(self, other: Time) -> bool {
        self.0 > other.0
    }

    /// Parses an RFC 3339 time (`2026-01-01T12:00:00Z`,
    /// `2026-01-01T12:00:00.5+02:00`). Go's zero time parses to [`Time::ZERO`].
    pub fn parse_rfc3339(text: &str) -> Result<Time, TimeError> {
        let syntax = || TimeError::Syntax(text.to_string());
        let b = text.as_bytes();
        if b.len() < 20 {
            return Err(syntax());
        }
        let num = |range: std::ops::Range<usize>| -> Result<i64, TimeError> {
            let part = &b[range];
            if part.iter().all(u8::is_ascii_digit) {
                Ok(part
                    .iter()
                    .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
            } else {
                Err(syntax())
            }
        };
        if b[4] != b'-'
            || b[7] != b'-'
            || !matches!(b[10], b'T' | b't' | b' ')
            || b[13] != b':'
            || b[16] != b':'
        {
            return Err(syntax());
        }
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
        let mut i = 19;
        let mut frac: i64 = 0;
        if b[i] == b'.' {
            i += 1;
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let digits = &b[start..i];
            if digits.is_empty() {
                return Err(syntax());
            }
            for k in 0..9 {
                frac = frac * 10 + digits.get(k).map_or(0, |d| i64::from(d - b'0'));
            }
        }
        let offset_secs = match b.get(i) {
            Some(b'Z' | b'z') if i + 1 == b.len() => 0,
            Some(sign @ (b'+' | b'-')) if i + 6 == b.len() && b[i + 3] == b':' => {
                let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
                if oh > 23 || om > 59 {
                    return Err(TimeError::Range(text.to_string()));
                }
                let off = oh * 3600 + om * 60;
                if *sign == b'-' { -off } else { off }
            }
            _ => return Err(syntax()),
        };
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month)
            || hour > 23
            || min > 59
            || sec > 60
        {
            return Err(TimeError::Range(text.to_string()));
        }
        let days = days_from_civil(year, month, day);
        let secs = days * 86_400 + hour * 3600 + min * 60 + sec - offset_secs;
        if (year, month, day, hour, min, sec, frac, offset_secs) == (1, 1, 1, 0, 0, 0, 0, 0) {
            return Ok(Time::ZERO);
        }
        secs.checked_mul(NANOS_PER_SEC)
            .and_then(|n| n.checked_add(frac))
            .map(Time)
            .ok_or_else(|| TimeError::Overflow(text.to_string()))
    }

    /// Formats as RFC 3339 in UTC with the fraction trimmed, as Go's
    /// `time.RFC3339Nano` does: `2026-01-01T12:00:00Z`, `...:00.5Z`.
    pub fn to_rfc3339(self) -> String {
        if self.is_zero() {
            return "0001-01-01T00:00:00Z".to_string();
        }
        let secs = self.0.div_euclid(NANOS_PER_SEC);
        let frac = self.0.rem_euclid(NANOS_PER_SEC);
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        if !(0..=9999).contains(&y) {
            return Self::to_rfc3339_slow(y, m, d, rem, frac);
        }
        // Every time of an `i64` of nanoseconds falls in years 1677..2262:
        // the fields go into a fixed layout, with no formatting machinery
        // (the reconciler writes times into some of its reasons).
        let mut out = *b"0000-00-00T00:00:00.000000000Z";
        let fields = [
            (y, 0, 4),
            (m, 5, 2),
            (d, 8, 2),
            (rem / 3600, 11, 2),
            ((rem / 60) % 60, 14, 2),
            (rem % 60, 17, 2),
            (frac, 20, 9),
        ];
        for (mut value, at, width) in fields {
            for digit in out[at..at + width].iter_mut().rev() {
                *digit = b'0' + (value % 10) as u8;
                value /= 10;
            }
        }
        // The fraction, trimmed of its trailing zeros, and its dot go when
        // it is zero.
        let end = if frac == 0 {
            19
        } else {
            20 + out[20..29]
                .iter()
                .rposition(|digit| *digit != b'0')
                .map_or(0, |last| last + 1)
        };
        let mut text = String::with_capacity(end + 1);
        // ASCII digits and separators only.
        text.push_str(std::str::from_utf8(&out[..end]).unwrap_or_default());
        text.push('Z');
        text
    }

    /// [`Time::to_rfc3339`] of a date outside years 0..=9999 (which no
    /// `Time` reaches), through the formatting machinery.
    #[cold]
    fn to_rfc3339_slow(y: i64, m: i64, d: i64, rem: i64, frac: i64) -> String {
        let mut out = format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            rem / 3600,
            (rem / 60) % 60,
            rem % 60
        );
        if frac != 0 {
            let digits = format!("{frac:09}");
            out.push('.');
            out.push_str(digits.trim_end_matches('0'));
        }
        out.push('Z');
        out
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl std::str::FromStr for Time {
    type Err = TimeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Time::parse_rfc3339(s)
    }
}

impl Serialize for Time {
    /// An RFC 3339 string for human-readable formats (JSON); an integer of
    /// Unix nanoseconds (Go's zero time as `i64::MIN`) for the others, such
    /// as explore mode's state fingerprints, which need no text.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.serialize_str(&self.to_rfc3339())
        } else {
            s.serialize_i64(self.0)
        }
    }
}

impl<'de> Deserialize<'de> for Time {
    /// An RFC 3339 string; `null` is Go's zero time. (Formats that are not
    /// human-readable read the integer [`Time`]'s `Serialize` writes.)
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if !d.is_human_readable() {
            return i64::deserialize(d).map(Time);
        }
        match Option::<String>::deserialize(d)? {
            None => Ok(Time::ZERO),
            Some(text) => Time::parse_rfc3339(&text).map_err(serde::de::Error::custom),
        }
    }
}

/// Serde adapter for times the API writes as integers of Unix nanoseconds
/// (`CreateTime`, `ModifyTime`, `RescheduleTime`). `null` reads as the epoch.
pub mod unix_nanos {
    use super::Time;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the time as an integer of Unix nanoseconds.
    pub fn serialize<S: Serializer>(t: &Time, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(t.to_unix_nanos())
    }

    /// Reads an integer of Unix nanoseconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        Ok(Time(Option::<i64>::deserialize(d)?.unwrap_or(0)))
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips() {
        for text in [
            "1970-01-01T00:00:00Z",
            "2026-01-01T12:00:00Z",
            "2024-02-29T23:59:59.123456789Z",
            "1969-12-31T23:59:59.5Z",
        ] {
            let t = Time::parse_rfc3339(text).unwrap();
            assert_eq!(t.to_rfc3339(), text);
        }
        assert_eq!(
            Time::parse_rfc3339("1970-01-01T00:00:01Z").unwrap(),
            Time(NANOS_PER_SEC)
        );
    }

    /// The fixed-layout formatter writes what the formatting machinery
    /// wrote, whole seconds, fractions and times before 1970 alike.
    #[test]
    fn rfc3339_fast_path_matches_format() {
        let mut n: i64 = 7;
        for _ in 0..2000 {
            n = n
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            for t in [
                n,
                n - n % NANOS_PER_SEC,
                n - n % 1_000_000,
                0,
                -1,
                i64::MAX,
                i64::MIN + 1,
            ] {
                let secs = t.div_euclid(NANOS_PER_SEC);
                let frac = t.rem_euclid(NANOS_PER_SEC);
                let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
                let slow = Time::to_rfc3339_slow(y, m, d, secs.rem_euclid(86_400), frac);
                assert_eq!(Time(t).to_rfc3339(), slow, "{t}");
            }
        }
    }

    #[test]
    fn rfc3339_offsets_and_zero() {
        let a = Time::parse_rfc3339("2026-01-01T14:00:00+02:00").unwrap();
        let b = Time::parse_rfc3339("2026-01-01T12:00:00Z").unwrap();
        assert_eq!(a, b);
        assert_eq!(
            Time::parse_rfc3339("0001-01-01T00:00:00Z").unwrap(),
            Time::ZERO
        );
        assert!(Time::parse_rfc3339("2026-13-01T00:00:00Z").is_err());
        assert!(Time::parse_rfc3339("2026-01-01 12:00").is_err());
        assert!(Time::parse_rfc3339("0500-01-01T00:00:00Z").is_err());
    }

    /// JSON (human-readable) keeps the RFC 3339 text, `null` reading as
    /// Go's zero time; only formats that are not human-readable (explore
    /// mode's fingerprints) get the integer.
    #[test]
    fn json_keeps_rfc3339_text_and_round_trips() {
        for text in ["2026-01-01T12:00:00Z", "0001-01-01T00:00:00Z"] {
            let t = Time::parse_rfc3339(text).unwrap();
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(serde_json::from_str::<Time>(&json).unwrap(), t);
        }
        assert_eq!(serde_json::from_str::<Time>("null").unwrap(), Time::ZERO);
        let value = serde_json::to_value(Time(1_500_000_000)).unwrap();
        assert_eq!(value, serde_json::json!("1970-01-01T00:00:01.5Z"));
        assert_eq!(
            serde_json::from_value::<Time>(value).unwrap(),
            Time(1_500_000_000)
        );
    }

    #[test]
    fn duration_display() {
        assert_eq!(Duration::from_hours(1).to_string(), "1h0m0s");
        assert_eq!(Duration::from_secs(30).to_string(), "30s");
        assert_eq!(Duration(1_500_000_000).to_string(), "1.5s");
    }
}
