//! The `export` command of the CLI:
//!
//! ```text
//! nomad-playground export (--mermaid | --trace-json | --fixture EVAL | --issue | --scenario)
//!     [--profile P] [--step N] [--base URL] SCENARIO.json
//! ```
//!
//! The scenario is played under the profile (default: its own) up to step N
//! (default: the end), then exported.

use crate::sim::history::Session;
use std::io::Write;

/// Reads a file by path.
pub type ReadFile<'a> = &'a dyn Fn(&str) -> Result<String, String>;

const USAGE: &str = "usage: nomad-playground export (--mermaid | --trace-json | --fixture EVAL | --issue | --scenario) [--profile P] [--step N] [--base URL] SCENARIO.json";

enum What {
    Mermaid,
    TraceJson,
    Fixture(String),
    Issue,
    Scenario,
}

/// Runs `export`; returns the exit code (0 ok, 2 bad input or nothing to export).
pub fn run(args: &[String], read: ReadFile<'_>, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut what = None;
    let mut file = None;
    let mut profile = None;
    let mut step = None;
    let mut base = crate::share::DEFAULT_BASE.to_string();
    let mut iter = args.iter();
    let fail = |err: &mut dyn Write, message: String| {
        let _ = writeln!(err, "nomad-playground export: {message}\n{USAGE}");
        2
    };
    while let Some(arg) = iter.next() {
        let mode = match arg.as_str() {
            "-h" | "--help" => {
                let _ = writeln!(out, "{USAGE}");
                return 0;
            }
            "--mermaid" => Some(What::Mermaid),
            "--trace-json" => Some(What::TraceJson),
            "--issue" => Some(What::Issue),
            "--scenario" => Some(What::Scenario),
            "--fixture" => match iter.next() {
                Some(eval) => Some(What::Fixture(eval.clone())),
                None => {
                    return fail(
                        err,
                        "--fixture needs an eval (ID prefix or trigger:job)".into(),
                    );
                }
            },
            "--profile" | "--step" | "--base" => {
                let Some(value) = iter.next() else {
                    return fail(err, format!("{arg} needs a value"));
                };
                match arg.as_str() {
                    "--profile" => profile = Some(value.clone()),
                    "--step" => match value.parse::<usize>() {
                        Ok(n) => step = Some(n),
                        Err(_) => return fail(err, format!("--step: {value:?} is not a number")),
                    },
                    _ => base = value.clone(),
                }
                None
            }
            flag if flag.starts_with("--") => return fail(err, format!("unknown flag {flag}")),
            path if file.is_none() => {
                file = Some(path.to_string());
                None
            }
            extra => return fail(err, format!("unexpected argument {extra}")),
        };
        if let Some(mode) = mode {
            if what.is_some() {
                return fail(
                    err,
                    "give one of --mermaid, --trace-json, --fixture, --issue, --scenario".into(),
                );
            }
            what = Some(mode);
        }
    }
    let Some(what) = what else {
        return fail(err, "say what to export".into());
    };
    let Some(file) = file else {
        return fail(err, "missing SCENARIO.json".into());
    };
    let text = match read(&file) {
        Ok(t) => t,
        Err(e) => {
            let _ = writeln!(err, "nomad-playground: {file}: cannot read: {e}");
            return 2;
        }
    };
    let mut session = match Session::load(&text, profile.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(err, "nomad-playground: {file}: {e}");
            return 2;
        }
    };
    match step {
        Some(n) => session.jump(n),
        None => session.run_to_end(),
    }
    let output = match what {
        What::Mermaid => super::mermaid::mermaid(&session.trace()),
        What::TraceJson => super::trace_json(&session.trace()),
        What::Issue => super::issue::issue_body(&session, &base),
        What::Scenario => super::scenario_json(&super::session_link(&session).scenario),
        What::Fixture(eval) => match super::fixture::eval_fixture(&session, &eval) {
            Ok(v) => serde_json::to_string_pretty(&v).unwrap_or_default() + "\n",
            Err(e) => {
                let _ = writeln!(err, "nomad-playground export: {e}");
                return 2;
            }
        },
    };
    let _ = write!(out, "{output}");
    0
}
