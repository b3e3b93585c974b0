//! `nomad-playground explore SCENARIO.json [--profile P] [--max-orders N]
//! [--seed S] [--mode auto|exhaustive|random] [--compare P]... [--no-compare]
//! [--only INV]... [--disable INV]... [--max-delay MS] [--no-fire-loops]
//! [--max-depth N] [--horizon MS] [--window START..END] [--exact-states]
//! [--no-reduce] [--idle-states] [--json] [--out DIR]`: searches the
//! orders of a scenario's reconnect window and reports invariant violations.
//!
//! Exit 0 when no order breaks an enabled invariant, 1 when one does, 2 on
//! bad input. When a violation is found the same search runs under each
//! `--compare` profile (default `latest`) to show which version fixed it.
//! `--out DIR` writes each shortest reproduction as a scenario file. File
//! reading and writing are passed in by the caller, so this module does no
//! I/O of its own.

use super::invariant::Invariant;
use super::{ExploreConfig, ExploreResult, Explorer, SearchMode};
use std::io::Write;

const USAGE: &str =
    "usage: nomad-playground explore SCENARIO.json [--profile P] [--max-orders N] [--seed S]
        [--mode auto|exhaustive|random] [--compare PROFILE]... [--no-compare]
        [--max-delay MS] [--no-fire-loops] [--max-depth N] [--horizon MS]
        [--window START..END] [--exact-states] [--no-reduce] [--idle-states]
        [--only INVARIANT]... [--disable INVARIANT]... [--json] [--out DIR]

bounds: --max-delay  longest a call is held while time passes (default 1000)
        --max-depth  longest order, in choices (default 200)
        --horizon    longest phase before an order is given up (default 600000)
        --window     script actions searched (default: from the first
                     link_up after a link_down to the end)
        --exact-states  prune only identical states (no renaming of IDs)
        --no-reduce     no partial-order reduction (sleep sets, loop postponement)
        --idle-states   count the distinct idle states orders end in (slower)

invariants: unique-name-index, count-honoured, reconnected-version,
            no-unknown-on-ready-node, no-replacement-flap, followup-cancelled";

/// What the command line asked for.
#[derive(Debug, Clone, PartialEq)]
struct Options {
    path: String,
    config: ExploreConfig,
    compare: Option<Vec<String>>,
    json: bool,
    out: Option<String>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut path = None;
    let mut config = ExploreConfig::default();
    let mut compare: Option<Vec<String>> = None;
    let mut json = false;
    let mut out = None;
    let mut only: Vec<Invariant> = Vec::new();
    let mut disabled: Vec<Invariant> = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let mut value = |flag: &str| {
            iter.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--profile" => config.profile = Some(value("--profile")?),
            "--max-orders" => {
                let v = value("--max-orders")?;
                config.max_orders = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or(format!("--max-orders: not a positive number: {v}"))?;
            }
            "--seed" => {
                let v = value("--seed")?;
                config.seed = v
                    .parse()
                    .map_err(|_| format!("--seed: not a number: {v}"))?;
            }
            "--mode" => {
                config.mode = match value("--mode")?.as_str() {
                    "auto" => SearchMode::Auto,
                    "exhaustive" => SearchMode::Exhaustive,
                    "random" => SearchMode::Random,
                    other => return Err(format!("--mode: unknown mode {other}")),
                }
            }
            "--compare" => {
                let p = value("--compare")?;
                if crate::profile::profile(&p).is_none() {
                    return Err(format!("--compare: unknown profile {p:?}"));
                }
                compare.get_or_insert_with(Vec::new).push(p);
            }
            "--no-compare" => compare = Some(Vec::new()),
            "--only" | "--disable" => {
                let v = value(arg)?;
                let invariant =
                    Invariant::parse(&v).ok_or(format!("{arg}: unknown invariant {v}"))?;
                if arg == "--only" {
                    only.push(invariant);
                } else {
                    disabled.push(invariant);
                }
            }
            "--max-delay" => {
                let v = value("--max-delay")?;
                config.max_delay = v
                    .parse()
                    .map_err(|_| format!("--max-delay: not a number of milliseconds: {v}"))?;
            }
            "--no-fire-loops" => config.fire_loops = false,
            "--max-depth" => {
                let v = value("--max-depth")?;
                config.max_depth = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or(format!("--max-depth: not a positive number: {v}"))?;
            }
            "--horizon" => {
                let v = value("--horizon")?;
                config.horizon = v
                    .parse()
                    .map_err(|_| format!("--horizon: not a number of milliseconds: {v}"))?;
            }
            "--window" => {
                let v = value("--window")?;
                let parsed = v
                    .split_once("..")
                    .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
                let (start, end) =
                    parsed.ok_or(format!("--window: expected START..END, got {v}"))?;
                config.window = Some(super::Window { start, end });
            }
            "--exact-states" => config.exact_states = true,
            "--no-reduce" => config.reduce_orders = false,
            "--idle-states" => config.count_idle = true,
            "--json" => json = true,
            "--out" => out = Some(value("--out")?),
            "-h" | "--help" => return Err(String::new()),
            other if other.starts_with("--") => return Err(format!("unknown option {other}")),
            other if path.is_none() => path = Some(other.to_string()),
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    if !only.is_empty() {
        config.invariants = only;
    }
    config.invariants.retain(|i| !disabled.contains(i));
    let path = path.ok_or("missing SCENARIO.json")?;
    Ok(Options {
        path,
        config,
        compare,
        json,
        out,
    })
}

/// Runs the command. `read` reads a file, `write(path, text)` writes one.
pub fn run(
    args: &[String],
    read: &dyn Fn(&str) -> Result<String, String>,
    write: &dyn Fn(&str, &str) -> Result<(), String>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let options = match parse_args(args) {
        Ok(o) => o,
        Err(message) if message.is_empty() => {
            let _ = writeln!(stdout, "{USAGE}");
            return 0;
        }
        Err(message) => {
            let _ = writeln!(stderr, "nomad-playground explore: {message}\n\n{USAGE}");
            return 2;
        }
    };
    let text = match read(&options.path) {
        Ok(t) => t,
        Err(e) => {
            let _ = writeln!(
                stderr,
                "nomad-playground: {}: cannot read: {e}",
                options.path
            );
            return 2;
        }
    };
    let scenario = match crate::scenario::parse(&text) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(stderr, "nomad-playground: {}: {e}", options.path);
            return 2;
        }
    };
    let result = match Explorer::new(&scenario, options.config.clone()) {
        Ok(mut explorer) => explorer.run(),
        Err(e) => {
            let _ = writeln!(stderr, "nomad-playground: {}: {e}", options.path);
            return 2;
        }
    };
    let found = result.violating_orders > 0;
    let compare_profiles = options.compare.clone().unwrap_or_else(|| {
        if found && result.profile != "latest" {
            vec!["latest".to_string()]
        } else {
            Vec::new()
        }
    });
    let mut compared: Vec<ExploreResult> = Vec::new();
    if found || options.compare.is_some() {
        for profile in &compare_profiles {
            let config = ExploreConfig {
                profile: Some(profile.clone()),
                ..options.config.clone()
            };
            match Explorer::new(&scenario, config) {
                Ok(mut explorer) => compared.push(explorer.run()),
                Err(e) => {
                    let _ = writeln!(stderr, "nomad-playground: under {profile}: {e}");
                    return 2;
                }
            }
        }
    }
    if let Some(dir) = &options.out {
        for report in &result.invariants {
            if let Some(repro) = &report.shortest {
                let file = format!("{}/{}.json", dir.trim_end_matches('/'), repro.scenario.name);
                if let Err(e) = write(&file, &crate::scenario::print(&repro.scenario)) {
                    let _ = writeln!(stderr, "nomad-playground: {file}: cannot write: {e}");
                    return 2;
                }
                let _ = writeln!(stderr, "wrote {file}");
            }
        }
    }
    if options.json {
        let value = serde_json::json!({ "result": result, "compared": compared });
        let _ = writeln!(
            stdout,
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else {
        let _ = write!(stdout, "{}", text_report(&result, &compared));
    }
    u8::from(found)
}

/// The human-readable report.
pub fn text_report(result: &ExploreResult, compared: &[ExploreResult]) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "explore {} under {} (window: actions {}..{}, reconnecting: {})\n",
        result.scenario,
        result.profile,
        result.window.start,
        result.window.end,
        if result.reconnecting_nodes.is_empty() {
            "none".to_string()
        } else {
            result.reconnecting_nodes.join(", ")
        }
    ));
    out.push_str(&summary_line(result));
    out.push('\n');
    out.push_str(&format!(
        "{:<26} {:>8}  {}\n",
        "INVARIANT", "ORDERS", "SHORTEST"
    ));
    for report in &result.invariants {
        let shortest = match (&report.shortest, report.enabled) {
            (_, false) => "off".to_string(),
            (Some(r), true) => format!("{} choices", r.length),
            (None, true) => "-".to_string(),
        };
        out.push_str(&format!(
            "{:<26} {:>8}  {shortest}\n",
            report.name, report.violating_orders
        ));
    }
    for report in &result.invariants {
        let Some(repro) = &report.shortest else {
            continue;
        };
        out.push_str(&format!(
            "\nviolation {}: {}\n  what it means: {}\n",
            report.name,
            repro
                .violations
                .iter()
                .filter(|v| v.invariant == report.invariant)
                .map(|v| v.detail.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            report.explanation
        ));
        out.push_str("  shortest order after the window's start:\n");
        for (i, step) in repro.order.iter().enumerate() {
            out.push_str(&format!("    {:>3}. {step}\n", i + 1));
        }
        match &repro.link {
            Some(link) => out.push_str(&format!("  link: {link}\n")),
            None => out.push_str(&format!(
                "  reproduction: scenario {} (--json prints it, --out DIR writes it)\n",
                repro.scenario.name
            )),
        }
    }
    for other in compared {
        out.push_str(&format!("\nunder {}: ", other.profile));
        let violated = other.violated();
        if violated.is_empty() {
            out.push_str("no violation; ");
        } else {
            out.push_str(&format!("violates {}; ", violated.join(", ")));
        }
        out.push_str(&summary_line(other));
    }
    out
}

fn summary_line(result: &ExploreResult) -> String {
    format!(
        "{} {} orders ({} complete, {} pruned: {} postponed, {} subsumed; {} unsettled), {} states ({} distinct, {:.1}% deduplicated{}), {}\n",
        if result.exhaustive {
            "searched exhaustively:"
        } else {
            "sampled:"
        },
        result.orders,
        result.complete_orders,
        result.pruned_orders,
        result.postponed_orders,
        result.subsumed_orders,
        result.unsettled_orders,
        result.states,
        result.distinct_states,
        result.dedup_ratio * 100.0,
        if result.idle_states > 0 {
            format!(", {} idle end states", result.idle_states)
        } else {
            String::new()
        },
        space_text(result),
    )
}

/// The space's size: exact after an exhaustive search, Knuth's estimate
/// after sampling, and only a lower bound when a depth-first search stopped
/// at its budget before any random walk was made.
fn space_text(result: &ExploreResult) -> String {
    if result.exhaustive {
        format!("space {} orders", format_size(result.space_size))
    } else if result.space_size > 0.0 {
        format!("space ~{} orders", format_size(result.space_size))
    } else {
        format!(
            "space more than {} orders (not estimated: no random walk was made; --mode auto samples)",
            result.orders
        )
    }
}

fn format_size(n: f64) -> String {
    if n < 1e9 {
        format!("{n:.0}")
    } else {
        format!("{n:.2e}")
    }
}

#[cfg(test)]
mod tests {
    use super::parse_args;
    use crate::explore::invariant::Invariant;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_flags() {
        let o = parse_args(&args(&[
            "s.json",
            "--profile",
            "1.4.2",
            "--max-orders",
            "50",
            "--seed",
            "7",
            "--disable",
            "count-honoured",
        ]))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.path, "s.json");
        assert_eq!(o.config.profile.as_deref(), Some("1.4.2"));
        assert_eq!(o.config.max_orders, 50);
        assert_eq!(o.config.seed, 7);
        assert!(!o.config.invariants.contains(&Invariant::CountHonoured));
        assert_eq!(o.config.invariants.len(), Invariant::ALL.len() - 1);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(parse_args(&args(&["s.json", "--max-orders", "x"])).is_err());
        assert!(parse_args(&args(&["s.json", "--only", "nope"])).is_err());
        assert!(parse_args(&args(&["--seed", "1"])).is_err());
        assert!(parse_args(&args(&["s.json", "--window", "3"])).is_err());
        assert!(parse_args(&args(&["s.json", "--max-depth", "0"])).is_err());
    }

    #[test]
    fn parses_search_bounds() {
        let o = parse_args(&args(&[
            "s.json",
            "--window",
            "3..9",
            "--max-depth",
            "40",
            "--horizon",
            "60000",
            "--max-delay",
            "0",
            "--exact-states",
            "--no-reduce",
            "--no-fire-loops",
            "--idle-states",
        ]))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            o.config.window,
            Some(crate::explore::Window { start: 3, end: 9 })
        );
        assert_eq!(o.config.max_depth, 40);
        assert_eq!(o.config.horizon, 60_000);
        assert_eq!(o.config.max_delay, 0);
        assert!(o.config.exact_states);
        assert!(!o.config.reduce_orders);
        assert!(!o.config.fire_loops);
        assert!(o.config.count_idle);
    }
}
