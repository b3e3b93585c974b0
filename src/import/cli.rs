//! The `import` command of the CLI: `nomad-playground import FILE...`
//! prints the scenario JSON the files make; warnings go to stderr.

use std::io::Write;

/// Reads a file by path.
pub type ReadFile<'a> = &'a dyn Fn(&str) -> Result<String, String>;

const USAGE: &str =
    "usage: nomad-playground import FILE...   (Nomad API JSON, debug bundle JSON or HCL jobspecs)";

/// Runs `import`; returns the exit code (0 ok, 2 bad input).
pub fn run(args: &[String], read: ReadFile<'_>, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        let _ = writeln!(out, "{USAGE}");
        return 0;
    }
    if let Some(flag) = args.iter().find(|a| a.starts_with("--")) {
        let _ = writeln!(err, "nomad-playground import: unknown flag {flag}\n{USAGE}");
        return 2;
    }
    if args.is_empty() {
        let _ = writeln!(err, "nomad-playground import: missing FILE\n{USAGE}");
        return 2;
    }
    let mut texts = Vec::new();
    for path in args {
        match read(path) {
            Ok(text) => texts.push((path.as_str(), text)),
            Err(e) => {
                let _ = writeln!(err, "nomad-playground: {path}: cannot read: {e}");
                return 2;
            }
        }
    }
    let inputs: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (*p, t.as_str())).collect();
    match super::import(&inputs) {
        Ok(imported) => {
            for w in &imported.warnings {
                let _ = writeln!(err, "warning: {w}");
            }
            let _ = write!(out, "{}", crate::scenario::print(&imported.scenario));
            0
        }
        Err(e) => {
            let _ = writeln!(err, "nomad-playground import: {e}");
            2
        }
    }
}
