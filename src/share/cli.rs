//! The `link` and `unlink` commands of the CLI.
//!
//! ```text
//! nomad-playground link SCENARIO.json [--step N] [--profile P] [--base URL]
//! nomad-playground unlink LINK
//! ```
//!
//! The functions take the file reader and the output streams from the
//! caller (`src/main.rs`), so the library does no I/O of its own.

use super::{DEFAULT_BASE, Link, decode_link, encode_link};
use crate::scenario;
use std::io::Write;

/// Reads a file by path.
pub type ReadFile<'a> = &'a dyn Fn(&str) -> Result<String, String>;

const LINK_USAGE: &str =
    "usage: nomad-playground link SCENARIO.json [--step N] [--profile P] [--base URL]";
const UNLINK_USAGE: &str = "usage: nomad-playground unlink LINK";

/// `link`: prints the link of a scenario file. Returns the exit code
/// (0 ok, 2 bad input).
pub fn link(args: &[String], read: ReadFile<'_>, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut file = None;
    let mut step = None;
    let mut profile = None;
    let mut base = DEFAULT_BASE.to_string();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                let _ = writeln!(out, "{LINK_USAGE}");
                return 0;
            }
            "--step" | "--profile" | "--base" => {
                let Some(value) = iter.next() else {
                    let _ = writeln!(
                        err,
                        "nomad-playground link: {arg} needs a value\n{LINK_USAGE}"
                    );
                    return 2;
                };
                match arg.as_str() {
                    "--step" => match value.parse::<u64>() {
                        Ok(n) => step = Some(n),
                        Err(_) => {
                            let _ = writeln!(
                                err,
                                "nomad-playground link: --step: {value:?} is not a step number"
                            );
                            return 2;
                        }
                    },
                    "--profile" => {
                        if crate::profile::profile(value).is_none() {
                            let _ = writeln!(
                                err,
                                "nomad-playground link: --profile: unknown profile {value:?} (known: {})",
                                crate::profile::profile_names().join(", ")
                            );
                            return 2;
                        }
                        profile = Some(value.clone());
                    }
                    _ => base = value.clone(),
                }
            }
            flag if flag.starts_with("--") => {
                let _ = writeln!(
                    err,
                    "nomad-playground link: unknown flag {flag}\n{LINK_USAGE}"
                );
                return 2;
            }
            path if file.is_none() => file = Some(path.to_string()),
            extra => {
                let _ = writeln!(
                    err,
                    "nomad-playground link: unexpected argument {extra}\n{LINK_USAGE}"
                );
                return 2;
            }
        }
    }
    let Some(file) = file else {
        let _ = writeln!(
            err,
            "nomad-playground link: missing SCENARIO.json\n{LINK_USAGE}"
        );
        return 2;
    };
    let text = match read(&file) {
        Ok(text) => text,
        Err(e) => {
            let _ = writeln!(err, "nomad-playground: {file}: cannot read: {e}");
            return 2;
        }
    };
    let scenario = match scenario::parse(&text) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(err, "nomad-playground: {file}: {e}");
            return 2;
        }
    };
    if let Some(n) = step
        && n > scenario.script.len() as u64
    {
        let _ = writeln!(
            err,
            "nomad-playground link: --step {n} is past the end of the script ({} actions)",
            scenario.script.len()
        );
        return 2;
    }
    let link = Link {
        scenario,
        step,
        profile,
    };
    let _ = writeln!(out, "{}", encode_link(&base, &link));
    0
}

/// `unlink`: prints the scenario JSON of a link (canonical form); the step
/// and profile, if any, go to stderr. Returns the exit code (0 ok, 2 bad
/// link).
pub fn unlink(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let text = match args {
        [flag] if flag == "-h" || flag == "--help" => {
            let _ = writeln!(out, "{UNLINK_USAGE}");
            return 0;
        }
        [text] => text,
        _ => {
            let _ = writeln!(err, "{UNLINK_USAGE}");
            return 2;
        }
    };
    match decode_link(text) {
        Ok(link) => {
            if let Some(step) = link.step {
                let _ = writeln!(err, "step: {step}");
            }
            if let Some(profile) = &link.profile {
                let _ = writeln!(err, "profile: {profile}");
            }
            let _ = write!(out, "{}", scenario::print(&link.scenario));
            0
        }
        Err(e) => {
            let _ = writeln!(err, "nomad-playground unlink: {e}");
            2
        }
    }
}
