//! The `nomad-playground` command line.
//!
//! ```text
//! nomad-playground version
//! nomad-playground reconcile [--check | --explain] FIXTURE.json
//! ```
//!
//! `reconcile` runs one conformance fixture (`shared/conformance/FORMAT.md`)
//! and prints the result JSON; `--check` compares it with the fixture's
//! `expect` (exit 0 pass, 1 differ, 2 bad input); `--explain` prints why
//! each allocation went where it went.

// The simulator allocates many small, short-lived values (IDs, trace texts,
// plan entries): mimalloc runs it markedly faster than glibc's malloc (see
// the README's simulator figures). The benches use the same allocator, and
// `configure` (first thing in `main`) its settings.
#[global_allocator]
static GLOBAL: playground_alloc::Mimalloc = playground_alloc::Mimalloc;

use nomad_playground::fixture::{Fixture, FixtureInput, parse_fixture};
use nomad_playground::reconciler::node::{NodeDecision, explain_fixture};
use nomad_playground::reconciler::reasons::AllocDecision;
use nomad_playground::reconciler::rules::ReconcilerRules;
use std::process::ExitCode;

const USAGE: &str = "usage: nomad-playground <command> [args]

commands:
  version                                   print the version
  reconcile [--check | --explain] FIXTURE   run a reconciler fixture";

fn main() -> ExitCode {
    playground_alloc::configure();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--version") | Some("version") => {
            println!("nomad-playground {}", nomad_playground::VERSION);
            ExitCode::SUCCESS
        }
        Some("reconcile") => reconcile(&args[1..]),
        Some("run") => ExitCode::from(nomad_playground::scenario::cli::run(
            &args[1..],
            &|path| std::fs::read_to_string(path).map_err(|e| e.to_string()),
            &mut std::io::stdout(),
            &mut std::io::stderr(),
        )),
        Some("explore") => ExitCode::from(nomad_playground::explore::cli::run(
            &args[1..],
            &|path| std::fs::read_to_string(path).map_err(|e| e.to_string()),
            &|path, text| std::fs::write(path, text).map_err(|e| e.to_string()),
            &mut std::io::stdout(),
            &mut std::io::stderr(),
        )),
        Some("link") => ExitCode::from(nomad_playground::share::cli::link(
            &args[1..],
            &|path| std::fs::read_to_string(path).map_err(|e| e.to_string()),
            &mut std::io::stdout(),
            &mut std::io::stderr(),
        )),
        Some("unlink") => ExitCode::from(nomad_playground::share::cli::unlink(
            &args[1..],
            &mut std::io::stdout(),
            &mut std::io::stderr(),
        )),
        Some("import") => ExitCode::from(nomad_playground::import::cli::run(
            &args[1..],
            &|path| std::fs::read_to_string(path).map_err(|e| e.to_string()),
            &mut std::io::stdout(),
            &mut std::io::stderr(),
        )),
        Some("export") => ExitCode::from(nomad_playground::export::cli::run(
            &args[1..],
            &|path| std::fs::read_to_string(path).map_err(|e| e.to_string()),
            &mut std::io::stdout(),
            &mut std::io::stderr(),
        )),
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Print,
    Check,
    Explain,
}

fn reconcile(args: &[String]) -> ExitCode {
    let mut mode = Mode::Print;
    let mut file: Option<&str> = None;
    for arg in args {
        match arg.as_str() {
            "--check" if mode == Mode::Print => mode = Mode::Check,
            "--explain" if mode == Mode::Print => mode = Mode::Explain,
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            flag if flag.starts_with("--") => {
                eprintln!("nomad-playground reconcile: unknown or repeated flag {flag}\n\n{USAGE}");
                return ExitCode::from(2);
            }
            path if file.is_none() => file = Some(path),
            extra => {
                eprintln!("nomad-playground reconcile: unexpected argument {extra}\n\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(file) = file else {
        eprintln!("nomad-playground reconcile: missing FIXTURE\n\n{USAGE}");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("nomad-playground: {file}: cannot read: {e}");
            return ExitCode::from(2);
        }
    };
    let fixture = match parse_fixture(file, &text) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("nomad-playground: {e}");
            return ExitCode::from(2);
        }
    };
    match mode {
        Mode::Print => {
            let result = fixture.run();
            println!(
                "{}",
                serde_json::to_string_pretty(&result).unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        Mode::Check => {
            let result = fixture.run();
            let diffs = fixture.compare(&result);
            if diffs.is_empty() {
                println!("{}: pass", fixture.name);
                ExitCode::SUCCESS
            } else {
                for d in &diffs {
                    println!("{}: {d}", fixture.name);
                }
                ExitCode::from(1)
            }
        }
        Mode::Explain => {
            print!("{}", explain(&fixture));
            ExitCode::SUCCESS
        }
    }
}

/// The reasons table of a fixture run.
fn explain(fixture: &Fixture) -> String {
    match &fixture.input {
        FixtureInput::Cluster(input) => {
            let (_, decisions) = input.run_explained(ReconcilerRules::default());
            explain_table(&decisions)
        }
        FixtureInput::Node(input) => node_explain_table(&explain_fixture(input)),
    }
}

const EXPLAIN_HEADER: [&str; 7] = ["ALLOC", "NAME", "NODE", "CLIENT", "SET", "RULE", "DECISION"];

/// The reasons table of a node reconciler run; `-` where an entry has no
/// alloc (a placement).
fn node_explain_table(decisions: &[NodeDecision]) -> String {
    let dash = || "-".to_string();
    let rows: Vec<[String; 7]> = decisions
        .iter()
        .map(|d| {
            [
                d.alloc_id.clone().unwrap_or_else(dash),
                d.name.clone(),
                d.node_id.clone(),
                d.client_status
                    .as_ref()
                    .map_or_else(dash, |c| c.as_str().to_string()),
                d.set.map_or_else(dash, |s| s.as_str().to_string()),
                d.rule.describe().to_string(),
                d.decision.clone(),
            ]
        })
        .collect();
    table(&rows)
}

fn explain_table(decisions: &[AllocDecision]) -> String {
    let rows: Vec<[String; 7]> = decisions
        .iter()
        .map(|d| {
            [
                d.alloc_id().to_string(),
                d.name().to_string(),
                d.node_id().to_string(),
                d.client_status().as_str().to_string(),
                d.set.as_str().to_string(),
                d.rule.describe().to_string(),
                d.decision.describe(),
            ]
        })
        .collect();
    table(&rows)
}

/// Aligned columns under [`EXPLAIN_HEADER`].
fn table(rows: &[[String; 7]]) -> String {
    let header = EXPLAIN_HEADER;
    let mut widths = header.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                s.push_str(cell);
            } else {
                s.push_str(&format!("{cell:<w$}  "));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&header.map(str::to_string));
    for row in rows {
        out.push_str(&line(row));
    }
    out
}
