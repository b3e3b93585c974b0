//! Nomad agent versions as the node reconciler compares them.
//!
//! Follows the parts of `github.com/hashicorp/go-version` that
//! `scheduler/reconciler/reconcile_node.go` (`compatNodeTooOldForDeployment`)
//! relies on: a node's `nomad.version` attribute such as `1.8.20+ent` or
//! `1.11.0-beta.1` is parsed into numeric segments, an optional pre-release
//! and optional build metadata, and compared with a minimum version.
//! Build metadata never matters, and a pre-release sorts before its release.

use std::cmp::Ordering;

/// A parsed agent version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentVersion {
    /// The numeric segments, at least three (missing ones are zero).
    pub segments: Vec<u64>,
    /// The pre-release label (`beta.1` in `1.11.0-beta.1`), empty for a release.
    pub prerelease: String,
}

impl AgentVersion {
    /// Parses a version the way go-version's `NewVersion` does; `None` when
    /// the text is not a version (Nomad then treats the node as recent enough).
    pub fn parse(text: &str) -> Option<AgentVersion> {
        let rest = text.strip_prefix('v').unwrap_or(text);
        let numeric_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (numeric, mut tail) = rest.split_at(numeric_len);
        // The numeric part is digits separated by single dots; a trailing dot
        // belongs to nothing and makes the text invalid.
        let mut segments = Vec::new();
        for part in numeric.split('.') {
            if part.is_empty() {
                return None;
            }
            segments.push(part.parse::<u64>().ok()?);
        }
        while segments.len() < 3 {
            segments.push(0);
        }

        let mut prerelease = String::new();
        if !tail.is_empty() && !tail.starts_with('+') {
            let label = tail.strip_prefix('-').unwrap_or(tail);
            let end = label.find('+').unwrap_or(label.len());
            let (pre, after) = label.split_at(end);
            let starts_with_digit = pre.starts_with(|c: char| c.is_ascii_digit());
            // Without a hyphen the label must start with a letter (`1.2beta`).
            if !tail.starts_with('-') && starts_with_digit {
                return None;
            }
            if !valid_dotted_identifiers(pre) {
                return None;
            }
            prerelease = pre.to_string();
            tail = after;
        }
        if let Some(metadata) = tail.strip_prefix('+') {
            if !valid_dotted_identifiers(metadata) {
                return None;
            }
        } else if !tail.is_empty() {
            return None;
        }
        Some(AgentVersion {
            segments,
            prerelease,
        })
    }

    /// Orders two versions: segment by segment (missing ones count as zero),
    /// then a release after any of its pre-releases.
    pub fn compare(&self, other: &AgentVersion) -> Ordering {
        let len = self.segments.len().max(other.segments.len());
        for index in 0..len {
            let left = self.segments.get(index).copied().unwrap_or(0);
            let right = other.segments.get(index).copied().unwrap_or(0);
            match left.cmp(&right) {
                Ordering::Equal => {}
                unequal => return unequal,
            }
        }
        match (self.prerelease.is_empty(), other.prerelease.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => compare_prereleases(&self.prerelease, &other.prerelease),
        }
    }

    /// Whether this version sorts strictly before `other`.
    pub fn less_than(&self, other: &AgentVersion) -> bool {
        self.compare(other) == Ordering::Less
    }
}

/// Whether `text` is one or more non-empty identifiers of `[0-9A-Za-z-~]`
/// joined by dots.
fn valid_dotted_identifiers(text: &str) -> bool {
    !text.is_empty()
        && text.split('.').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '~')
        })
}

/// Semver's pre-release precedence: dot-separated parts compared in turn,
/// numeric parts as numbers and below textual ones, a shorter list first.
fn compare_prereleases(left: &str, right: &str) -> Ordering {
    let mut left_parts = left.split('.');
    let mut right_parts = right.split('.');
    loop {
        match (left_parts.next(), right_parts.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(l), Some(r)) => {
                let ordering = match (l.parse::<u64>(), r.parse::<u64>()) {
                    (Ok(a), Ok(b)) => a.cmp(&b),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => l.cmp(r),
                };
                if ordering != Ordering::Equal {
                    return ordering;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AgentVersion;

    fn older_than_1_11(text: &str) -> Option<bool> {
        let min = AgentVersion::parse("1.11.0").expect("valid minimum");
        AgentVersion::parse(text).map(|v| v.less_than(&min))
    }

    #[test]
    fn parses_and_compares_like_go_version() {
        assert_eq!(older_than_1_11("1.8.20+ent"), Some(true));
        assert_eq!(older_than_1_11("1.10.5"), Some(true));
        assert_eq!(older_than_1_11("1.11.0"), Some(false));
        assert_eq!(older_than_1_11("1.11"), Some(false));
        assert_eq!(older_than_1_11("v1.11.0+ent"), Some(false));
        assert_eq!(older_than_1_11("1.11.0-beta.1"), Some(true));
        assert_eq!(older_than_1_11("1.11.0beta1"), Some(true));
        assert_eq!(older_than_1_11("2.0.5"), Some(false));
        assert_eq!(older_than_1_11("1.10.5.9"), Some(true));
        assert_eq!(older_than_1_11(""), None);
        assert_eq!(older_than_1_11("1..2"), None);
        assert_eq!(older_than_1_11("1.2.3+"), None);
        assert_eq!(older_than_1_11("nightly"), None);
        assert_eq!(older_than_1_11("1.2.3 "), None);
    }
}
