//! Scenario links: a scenario, the step the user is on and the profile,
//! packed into a URL fragment that opens without any server.
//!
//! The fragment is `v1.` followed by base64url (unpadded) of a raw deflate
//! stream, compressed against a frozen preset dictionary, of a compact
//! binary form of the scenario JSON (see [`value`]). `docs/link-format.md`
//! describes the bytes. Every released link version keeps decoding: a new
//! version gets a new prefix and a new arm in [`decode_fragment`], and old
//! payloads are migrated to the current scenario format.
//!
//! Decoding is bounded: the link text, the decompressed size
//! ([`MAX_DECODED`]) and the nesting depth are capped, and every failure is
//! a [`LinkError`] (no panic), so a broken link leaves the caller's work
//! untouched.

pub mod base64url;
pub mod cli;
pub mod deflate;
pub mod value;

use crate::scenario::format::Scenario;
use crate::scenario::{self, ScenarioError};

/// The link version [`encode_fragment`] writes.
pub const LINK_VERSION: u32 = 1;

/// Cap on the decompressed payload (1 MiB).
pub const MAX_DECODED: usize = 1 << 20;

/// Cap on the fragment text (well above any 1 MiB payload's link).
pub const MAX_FRAGMENT: usize = 2 << 20;

/// The base URL the CLI uses when none is given.
pub const DEFAULT_BASE: &str = "http://127.0.0.1:8080/";

/// The version 1 preset dictionary (frozen: changing it breaks v1 links).
/// Frequent words and word pairs of Nomad's scheduling vocabulary, most
/// frequent last, so common words are cheapest to refer to.
const DICT_V1: &[u8] = include_bytes!("share/dict-v1.txt");

const FLAG_STEP: u8 = 1;
const FLAG_PROFILE: u8 = 2;

/// What a link carries.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// The scenario.
    pub scenario: Scenario,
    /// The step the user is on (the number of script actions applied), if any.
    pub step: Option<u64>,
    /// The profile chosen, if it differs from the scenario's default.
    pub profile: Option<String>,
}

impl Link {
    /// A link to the start of a scenario under its default profile.
    pub fn new(scenario: Scenario) -> Link {
        Link {
            scenario,
            step: None,
            profile: None,
        }
    }
}

/// Why a link does not open.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LinkError {
    /// No scenario data in the text.
    #[error("the link holds no scenario (expected a fragment like #v1.…)")]
    Empty,
    /// A version prefix this build does not know.
    #[error(
        "the link has format {found:?}, which this build does not know (it reads v1); a newer playground made it"
    )]
    UnknownVersion {
        /// The prefix found.
        found: String,
    },
    /// Longer than any real link.
    #[error("the link is too long ({0} characters)")]
    TooLong(usize),
    /// Not base64url: cut or mangled while copying.
    #[error("the link is damaged: {0}")]
    Base64(#[from] base64url::Base64Error),
    /// The compressed data is damaged or too large.
    #[error("the link is damaged: {0}")]
    Inflate(#[from] deflate::InflateError),
    /// The payload is not a valid binary scenario.
    #[error("the link is damaged: {0}")]
    Value(#[from] value::ValueError),
    /// The header (step, profile) is wrong.
    #[error("the link is damaged: {0}")]
    Header(String),
    /// The data decodes but is not a valid scenario.
    #[error("the link's scenario is invalid: {0}")]
    Scenario(#[from] ScenarioError),
}

/// The fragment (without `#`) of a link: `v1.` and the payload.
pub fn encode_fragment(link: &Link) -> String {
    let mut enc = value::Encoder::default();
    let flags = if link.step.is_some() { FLAG_STEP } else { 0 }
        | if link.profile.is_some() {
            FLAG_PROFILE
        } else {
            0
        };
    enc.out.push(flags);
    if let Some(step) = link.step {
        value::put_varint(&mut enc.out, step);
    }
    if let Some(profile) = &link.profile {
        enc.string(profile);
    }
    let json = scenario::json::to_value(&link.scenario).unwrap_or(serde_json::Value::Null);
    enc.value(&json);
    let packed = deflate::deflate(DICT_V1, &enc.out);
    format!("v{LINK_VERSION}.{}", base64url::encode(&packed))
}

/// A full link: `base`, `#` and the fragment.
pub fn encode_link(base: &str, link: &Link) -> String {
    let base = base.split('#').next().unwrap_or(base);
    format!("{base}#{}", encode_fragment(link))
}

/// Opens a link: a full URL, `#fragment` or the bare fragment.
pub fn decode_link(text: &str) -> Result<Link, LinkError> {
    let text = text.trim();
    let fragment = match text.split_once('#') {
        Some((_, fragment)) => fragment,
        None => text,
    };
    decode_fragment(fragment)
}

/// Opens a fragment (without `#`).
pub fn decode_fragment(fragment: &str) -> Result<Link, LinkError> {
    let fragment = fragment.trim();
    if fragment.len() > MAX_FRAGMENT {
        return Err(LinkError::TooLong(fragment.len()));
    }
    if fragment.is_empty() {
        return Err(LinkError::Empty);
    }
    let Some((version, payload)) = fragment.split_once('.') else {
        return Err(LinkError::UnknownVersion {
            found: fragment.chars().take(8).collect(),
        });
    };
    match version {
        "v1" => decode_v1(payload),
        other => Err(LinkError::UnknownVersion {
            found: other.chars().take(16).collect(),
        }),
    }
}

fn decode_v1(payload: &str) -> Result<Link, LinkError> {
    let packed = base64url::decode(payload)?;
    let bytes = deflate::inflate(DICT_V1, &packed, MAX_DECODED)?;
    let mut dec = value::Decoder::new(&bytes);
    let flags = dec.value_header_byte()?;
    if flags & !(FLAG_STEP | FLAG_PROFILE) != 0 {
        return Err(LinkError::Header(format!("unknown flags {flags:#x}")));
    }
    let step = if flags & FLAG_STEP != 0 {
        Some(dec.varint()?)
    } else {
        None
    };
    let profile = if flags & FLAG_PROFILE != 0 {
        match dec.value(0)? {
            serde_json::Value::String(s) => Some(s),
            _ => return Err(LinkError::Header("the profile is not text".into())),
        }
    } else {
        None
    };
    let json = dec.value(0)?;
    if dec.remaining() > 0 {
        return Err(value::ValueError::Trailing(dec.remaining()).into());
    }
    let json = migrate_scenario(json);
    let text = serde_json::to_string(&json).map_err(|e| LinkError::Header(e.to_string()))?;
    let scenario = scenario::parse(&text)?;
    if let Some(name) = &profile
        && crate::profile::profile(name).is_none()
    {
        return Err(LinkError::Header(format!("unknown profile {name:?}")));
    }
    Ok(Link {
        scenario,
        step,
        profile,
    })
}

/// Brings scenario JSON of an older scenario format version up to the
/// current one. Version 1 is the only version so far: nothing to do. When
/// version 2 comes, this is where a v1 document is rewritten, so links made
/// today keep opening.
fn migrate_scenario(json: serde_json::Value) -> serde_json::Value {
    json
}

impl value::Decoder<'_> {
    /// The header's flag byte.
    fn value_header_byte(&mut self) -> Result<u8, value::ValueError> {
        let n = self.varint()?;
        u8::try_from(n).map_err(|_| value::ValueError::Overflow(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Scenario {
        scenario::parse(r#"{"version":1,"name":"t","nodes":[{"id":"node-a"}]}"#).unwrap()
    }

    #[test]
    fn round_trips_with_header() {
        let link = Link {
            scenario: tiny(),
            step: Some(7),
            profile: Some("1.4.2".into()),
        };
        let text = encode_link("http://x/#old", &link);
        assert!(text.starts_with("http://x/#v1."));
        assert_eq!(decode_link(&text), Ok(link));
    }

    #[test]
    fn bad_links_are_errors() {
        assert_eq!(decode_link("http://x/#"), Err(LinkError::Empty));
        assert!(matches!(
            decode_link("#v9.AAAA"),
            Err(LinkError::UnknownVersion { .. })
        ));
        assert!(matches!(decode_link("#v1.!!"), Err(LinkError::Base64(_))));
        assert!(matches!(
            decode_link("#v1.AAAA"),
            Err(LinkError::Inflate(_))
        ));
    }
}
