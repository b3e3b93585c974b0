//! A size probe, not part of the product. The app module (`www`) is the
//! core plus the UI; this module is the core alone, reached the way the
//! app reaches it on its first screen and at every step (open a lesson,
//! a pasted scenario or a link; apply any command; build the view, the
//! script view and the narration; compare under a second profile; write
//! the share link and the trace text), with no UI framework and no
//! components. `cargo xtask floor` builds it exactly as `dist` builds the
//! app and prints its gzipped size: what the core costs the first module
//! whatever the UI is. Every input comes from the caller, so nothing can
//! be folded away at compile time.

use nomad_playground::playground::{Command, Playground};
use nomad_playground::{export, script_view, share};
use std::hint::black_box;
use wasm_bindgen::prelude::wasm_bindgen;

/// Opens a playground from `input` (`kind` 0: scenario JSON, 1: a lesson's
/// ID, otherwise a share link at step `arg`), applies the command `arg`
/// selects (its text argument is `input` again), builds what a step shows
/// and returns the length of the texts it made.
#[wasm_bindgen]
pub fn run(input: &str, kind: u32, arg: u32) -> usize {
    let opened = match kind {
        0 => Playground::load(input, None),
        1 => Playground::builtin(input),
        _ => match share::decode_link(input) {
            Ok(link) => Playground::open(link.scenario, link.profile.as_deref(), arg as usize),
            Err(err) => return err.to_string().len(),
        },
    };
    let mut playground = match opened {
        Ok(playground) => playground,
        Err(err) => return err.to_string().len(),
    };
    let command = match arg % 11 {
        0 => Command::Step,
        1 => Command::StepEval,
        2 => Command::Back,
        3 => Command::JumpTo(arg as usize),
        4 => Command::Reset,
        5 => Command::RunToEnd,
        6 => Command::CutLink(input.to_string()),
        7 => Command::RestoreLink(input.to_string()),
        8 => Command::SetProfile(input.to_string()),
        9 => match script_view::parse_action(input) {
            Ok(action) => Command::Act(action),
            Err(err) => return err.len(),
        },
        _ => Command::SwitchBranch(arg as usize),
    };
    playground.apply(command);
    black_box(playground.view());
    black_box(playground.script());
    if let Ok(other) = playground.with_profile(input) {
        black_box(playground.compare(&other));
    }
    let link = share::encode_fragment(&export::session_link(playground.session()));
    playground.narration().len()
        + playground.trace_text().len()
        + link.len()
        + playground.error().map_or(0, str::len)
}
