//! The `nomad-playground` command line.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--version") | Some("version") => {
            println!("nomad-playground {}", nomad_playground::VERSION);
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: nomad-playground <command> [args]\n\ncommands:\n  version");
            ExitCode::from(2)
        }
    }
}
