//! Profiles: named sets of rule switches that reproduce Nomad versions.
//!
//! One profile per version boundary of the change log in
//! `nomad-semantics.md` §5.2 (plus 1.2.6, before the preemption watcher fix,
//! and `latest`, HEAD). A profile's [`Rules`] reach the server, the client
//! and, through [`Rules::reconciler`], the cluster reconciler. Every switch
//! names the Nomad PR or issue that introduced it; `docs/profiles.md` lists
//! them all.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// A Nomad version as three numbers; `latest` is HEAD, newer than any tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Version(pub u32, pub u32, pub u32);

impl Version {
    /// HEAD (`aa026cc99c`, after 2.0.5 and #28445).
    pub const LATEST: Version = Version(u32::MAX, 0, 0);

    /// Reads `1.4.3`, `v1.4.3` or `latest`.
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim();
        if text == "latest" || text == "head" || text == "HEAD" {
            return Some(Version::LATEST);
        }
        let text = text.strip_prefix('v').unwrap_or(text);
        let mut parts = text.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next().unwrap_or("0").parse().ok()?;
        let patch = parts.next().unwrap_or("0").parse().ok()?;
        if parts.next().is_some() {
            return None;
        }
        Some(Version(major, minor, patch))
    }

    /// Whether this version is at least `major.minor.patch`.
    pub fn at_least(self, major: u32, minor: u32, patch: u32) -> bool {
        self.cmp(&Version(major, minor, patch)) != Ordering::Less
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Version::LATEST {
            f.write_str("latest")
        } else {
            write!(f, "{}.{}.{}", self.0, self.1, self.2)
        }
    }
}

/// Where a group's disconnect settings come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DisconnectConfig {
    /// 1.3–1.7: `max_client_disconnect` and `stop_after_client_disconnect` only.
    Legacy,
    /// 1.8–1.9 (#19886): the `disconnect` block, legacy fields win when set.
    BlockLegacyWins,
    /// ≥ 1.10.0 (#25284): the block only; legacy fields are ignored.
    BlockOnly,
}

/// How `Node.UpdateAlloc` gates on the node's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpdateAllocGate {
    /// ≤ 1.4.2: no gate.
    None,
    /// 1.4.3–1.4.4 (#15068): the node must be `ready`.
    RequireReady,
    /// ≥ 1.5.0 (#15808): the node must not be `down` or `disconnected`.
    RejectUnresponsive,
}

/// Every switch of a profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    /// #15808 (1.5.0): a returning node goes disconnected → initializing, and
    /// initializing → ready only once its allocs were synced.
    pub initializing_gate: bool,
    /// #15808 (1.5.0): `Node.Register` keeps the stored status of a known node.
    pub register_keeps_status: bool,
    /// #15808 (1.5.0): `LastMissedHeartbeatIndex` / `LastAllocUpdateIndex` are kept.
    pub index_gating: bool,
    /// #15068 / #15808: the `Node.UpdateAlloc` gate.
    pub update_alloc_gate: UpdateAllocGate,
    /// #15068 (1.4.3): the plan persists the reconnect AllocState.
    pub persist_reconnect_mark: bool,
    /// #15068 (1.4.3): the client does not reconnect server-terminal allocs.
    pub client_skip_reconnect_for_stopped: bool,
    /// 1.8.0 (#19886): the plan applier accepts lost/unknown updates on down nodes.
    pub plan_down_accepts_lost: bool,
    /// #25923 (1.10.2): a reconnecting update cancels the alloc's follow-up eval.
    pub cancel_followup_on_reconnect: bool,
    /// #27423 (2.0.0): node-update evals skip terminal service/batch and all sysbatch allocs.
    pub node_evals_skip_terminal: bool,
    /// 1.6.0 (node pools): system-job node evals match the node pool too.
    pub system_evals_match_pool: bool,
    /// #14621 (1.4.0): acking an eval cancels the job's older queued evals.
    pub cancel_stale_evals: bool,
    /// Where the disconnect settings come from (#19886 1.8.0, #25284 1.10.0).
    pub disconnect_config: DisconnectConfig,
    /// #27053 (1.11.2 / 2.0.0): `LastUnknown` is the start of the last run of unknown states.
    pub last_unknown_earliest: bool,
    /// #12779 (1.3.0, 1.2.7): the remote previous-alloc watcher watches the
    /// alloc it was given rather than `PreviousAllocation` (#10200).
    pub preempt_watcher_fixed: bool,
    /// #2522 (0.5.6): a chroot_env entry that would embed the alloc dir is skipped.
    pub chroot_skip_alloc_dir: bool,
    /// #12333 (1.3.0): disconnected clients exist at all (max_client_disconnect).
    pub disconnected_clients: bool,
    /// #27804 (2.0.0): a paused deployment does not fail on its progress
    /// deadline, and pausing or resuming restarts `RequireProgressBy`.
    #[serde(default)]
    pub pause_resets_progress: bool,
}

impl Rules {
    /// The switches of Nomad `version`.
    pub fn for_version(version: Version) -> Rules {
        let v = version;
        let update_alloc_gate = if v.at_least(1, 5, 0) {
            UpdateAllocGate::RejectUnresponsive
        } else if v.at_least(1, 4, 3) {
            UpdateAllocGate::RequireReady
        } else {
            UpdateAllocGate::None
        };
        let disconnect_config = if v.at_least(1, 10, 0) {
            DisconnectConfig::BlockOnly
        } else if v.at_least(1, 8, 0) {
            DisconnectConfig::BlockLegacyWins
        } else {
            DisconnectConfig::Legacy
        };
        Rules {
            initializing_gate: v.at_least(1, 5, 0),
            register_keeps_status: v.at_least(1, 5, 0),
            index_gating: v.at_least(1, 5, 0),
            update_alloc_gate,
            persist_reconnect_mark: v.at_least(1, 4, 3),
            client_skip_reconnect_for_stopped: v.at_least(1, 4, 3),
            plan_down_accepts_lost: v.at_least(1, 8, 0),
            cancel_followup_on_reconnect: v.at_least(1, 10, 2),
            node_evals_skip_terminal: v.at_least(2, 0, 0),
            system_evals_match_pool: v.at_least(1, 6, 0),
            cancel_stale_evals: v.at_least(1, 4, 0),
            disconnect_config,
            last_unknown_earliest: v.at_least(1, 11, 2),
            preempt_watcher_fixed: v.at_least(1, 3, 0) || (v.0 == 1 && v.1 == 2 && v.2 >= 7),
            chroot_skip_alloc_dir: v.at_least(0, 5, 6),
            disconnected_clients: v.at_least(1, 3, 0),
            pause_resets_progress: v.at_least(2, 0, 0),
        }
    }
}

/// A named profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// Name, e.g. `1.4.3` or `latest`.
    pub name: String,
    /// The Nomad version it reproduces.
    pub version: Version,
    /// One line: what changed at this boundary.
    pub summary: String,
    /// The switches.
    pub rules: Rules,
}

/// Built-in profiles, oldest first: (name, summary).
pub const PROFILES: &[(&str, &str)] = &[
    (
        "1.2.6",
        "before #12779: the remote preemption watcher watches PreviousAllocation (#10200)",
    ),
    ("1.3.0", "#12333 two-phase reconnect; #12779 watcher fix"),
    (
        "1.4.2",
        "#14621 stale eval cancel; reconnect marker is a sticky task event",
    ),
    (
        "1.4.3",
        "#15068 AllocState reconnect marker; UpdateAlloc requires ready",
    ),
    (
        "1.5.0",
        "#15808 initializing gate, index gating, Register keeps status",
    ),
    (
        "1.5.4",
        "#16609 reconnect reconciliation first; same-name replacements",
    ),
    ("1.6.0", "node pools: system-job evals match the pool"),
    (
        "1.7.0",
        "#18701 disconnecting allocs follow the reschedule policy",
    ),
    (
        "1.8.0",
        "#19886/#20029 disconnect block, reconcile strategies; plan accepts lost on down",
    ),
    (
        "1.9.1",
        "#24165 NextAllocation chain; failed replacements considered",
    ),
    ("1.10.0", "#25284 legacy disconnect fields ignored"),
    (
        "1.10.2",
        "#25923 follow-up cancelled on reconnect; #25946 stop_on_client_after timing",
    ),
    (
        "1.11.0",
        "reconciler package, new DesiredTGUpdates counters, alloc-reschedule trigger",
    ),
    (
        "1.11.2",
        "#27053 replace=true follows reschedule policy; LastUnknown semantics; unknown allocs reconnect",
    ),
    (
        "2.0.0",
        "#27423 node evals skip terminal allocs; #27265 version gate removed",
    ),
    ("2.0.3", "#27584 rule-table refactor"),
    (
        "latest",
        "HEAD aa026cc99c: #28445 ForceReschedule for client-terminal only",
    ),
];

/// The profile called `name` (a built-in name, or any version number, which
/// takes the rules of that version).
pub fn profile(name: &str) -> Option<Profile> {
    let version = Version::parse(name)?;
    let summary = PROFILES
        .iter()
        .find(|(known, _)| Version::parse(known) == Some(version))
        .map_or_else(String::new, |(_, summary)| (*summary).to_string());
    Some(Profile {
        name: version.to_string(),
        version,
        summary,
        rules: Rules::for_version(version),
    })
}

/// The names of the built-in profiles, oldest first.
pub fn profile_names() -> Vec<&'static str> {
    PROFILES.iter().map(|(name, _)| *name).collect()
}

/// Whether profile `name` matches `filter`: an exact name (`1.4.3`,
/// `latest`) or a comparison (`<1.5.0`, `>=1.5.0`, `<=1.4.2`, `>1.4.2`).
pub fn profile_matches(name: &str, filter: &str) -> bool {
    let Some(version) = Version::parse(name) else {
        return false;
    };
    let filter = filter.trim();
    let (op, rest) = if let Some(rest) = filter.strip_prefix(">=") {
        (">=", rest)
    } else if let Some(rest) = filter.strip_prefix("<=") {
        ("<=", rest)
    } else if let Some(rest) = filter.strip_prefix('>') {
        (">", rest)
    } else if let Some(rest) = filter.strip_prefix('<') {
        ("<", rest)
    } else {
        ("=", filter)
    };
    let Some(bound) = Version::parse(rest) else {
        return false;
    };
    match op {
        ">=" => version >= bound,
        "<=" => version <= bound,
        ">" => version > bound,
        "<" => version < bound,
        _ => version == bound,
    }
}

/// Whether `filter` is a valid profile filter.
pub fn valid_filter(filter: &str) -> bool {
    let rest = filter
        .trim()
        .trim_start_matches(">=")
        .trim_start_matches("<=")
        .trim_start_matches('>')
        .trim_start_matches('<');
    Version::parse(rest).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_compare_versions() {
        assert!(profile_matches("1.4.2", "<1.5.0"));
        assert!(!profile_matches("1.5.0", "<1.5.0"));
        assert!(profile_matches("latest", ">=1.5.0"));
        assert!(profile_matches("1.4.3", "1.4.3"));
        assert!(!profile_matches("1.4.3", "latest"));
    }

    #[test]
    fn every_builtin_profile_parses() {
        for name in profile_names() {
            let profile = profile(name).expect("built-in profile");
            assert_eq!(profile.name, name);
        }
        assert!(profile("nonsense").is_none());
    }

    #[test]
    fn gates_follow_versions() {
        assert_eq!(
            Rules::for_version(Version(1, 4, 2)).update_alloc_gate,
            UpdateAllocGate::None
        );
        assert_eq!(
            Rules::for_version(Version(1, 4, 3)).update_alloc_gate,
            UpdateAllocGate::RequireReady
        );
        assert!(Rules::for_version(Version::LATEST).initializing_gate);
        assert!(!Rules::for_version(Version(1, 2, 6)).preempt_watcher_fixed);
    }
}
