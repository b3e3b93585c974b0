//! The UI facade's view models come from the simulation, not from constants.

use nomad_playground::playground::{BUILTIN_SCENARIOS, Command, Playground};

#[test]
fn eval_views_carry_the_evaluations_own_priority() {
    for scenario in BUILTIN_SCENARIOS {
        let mut playground = Playground::builtin(scenario.id).expect("built-in scenario loads");
        playground.apply(Command::RunToEnd);
        let state = &playground.session().sim().server.state;
        for eval in &playground.view().evals {
            let record = &state.evals[&eval.id];
            assert_eq!(
                i64::from(eval.priority),
                record.eval.priority,
                "{}: eval {}",
                scenario.id,
                eval.id
            );
            assert!(
                eval.priority > 0,
                "{}: eval {} has no priority",
                scenario.id,
                eval.id
            );
        }
    }
}

/// rolling-update: the jobs panel's deployment view follows the rollout, from
/// version 1's deployment with nothing healthy to every alloc healthy and the
/// deployment successful; the alloc views carry the deployment's health.
#[test]
fn the_job_view_shows_the_latest_deployment_as_it_progresses() {
    let mut playground = Playground::builtin("rolling-update").expect("lesson loads");
    let deployment = |playground: &Playground| {
        let job = &playground.view().jobs[0];
        job.deployment.clone().expect("web has a deployment")
    };
    playground.apply(Command::JumpTo(1));
    let first = deployment(&playground);
    assert_eq!(
        (first.job_version, first.status.as_str()),
        (0, "successful")
    );
    assert_eq!(first.description, "Deployment completed successfully");
    assert!(!first.active);
    // The new version: a new deployment, one alloc placed, none healthy yet.
    playground.apply(Command::JumpTo(4));
    let rolling = deployment(&playground);
    assert_ne!(rolling.id, first.id);
    assert_eq!(
        (rolling.job_version, rolling.status.as_str()),
        (1, "running")
    );
    assert!(rolling.active && !rolling.needs_promotion);
    let group = &rolling.groups[0];
    assert_eq!(
        (
            group.name.as_str(),
            group.desired,
            group.placed,
            group.healthy,
            group.unhealthy
        ),
        ("web", 4, 1, 0, 0)
    );
    assert!(group.require_progress_by.is_some());
    playground.apply(Command::RunToEnd);
    let done = deployment(&playground);
    assert_eq!(
        (done.id.as_str(), done.status.as_str()),
        (rolling.id.as_str(), "successful")
    );
    let group = &done.groups[0];
    assert_eq!((group.placed, group.healthy, group.unhealthy), (4, 4, 0));
    let healthy = playground
        .view()
        .nodes
        .iter()
        .flat_map(|node| node.allocs.iter())
        .filter(|alloc| alloc.job_version == 1 && alloc.desired_status == "run")
        .filter(|alloc| alloc.deployment_health.as_deref() == Some("healthy"))
        .count();
    assert_eq!(healthy, 4);
}

/// canary-auto-promote: the canary is marked on its alloc view, and the
/// deployment waits for promotion until the watcher promotes it.
#[test]
fn the_deployment_view_shows_canaries_and_their_promotion() {
    let mut playground = Playground::builtin("canary-auto-promote").expect("lesson loads");
    playground.apply(Command::JumpTo(4));
    let job = &playground.view().jobs[0];
    let deployment = job.deployment.as_ref().expect("a deployment");
    let group = &deployment.groups[0];
    assert_eq!((group.desired_canaries, group.placed_canaries), (1, 1));
    assert!(group.auto_promote && !group.promoted && deployment.needs_promotion);
    let canaries = playground
        .view()
        .nodes
        .iter()
        .flat_map(|node| node.allocs.iter())
        .filter(|alloc| alloc.canary)
        .count();
    assert_eq!(canaries, 1);
    playground.apply(Command::RunToEnd);
    let deployment = playground.view().jobs[0]
        .deployment
        .clone()
        .expect("a deployment");
    assert!(deployment.groups[0].promoted && !deployment.needs_promotion);
    assert_eq!(deployment.status, "successful");
}

/// The lessons narrate with their assertions' notes: each applies once its
/// step is reached, and only under the profiles it names.
#[test]
fn lesson_narration_adds_the_notes_of_the_assertions_reached() {
    let mut playground = Playground::builtin("rolling-update").expect("lesson loads");
    let before = playground.view().notes.len();
    playground.apply(Command::JumpTo(2));
    let notes = &playground.view().notes;
    assert_eq!(notes.len(), before + 1);
    assert_eq!(
        notes.last().map(String::as_str),
        Some("the first deployment completes once every alloc is healthy")
    );
}

/// canary-manual-promote: the operator's calls reach the sequence diagram
/// (on the leader's lane, refused with Nomad's reason, then accepted) and
/// the step narration.
#[test]
fn operator_calls_show_in_the_sequence_and_the_narration() {
    let mut playground = Playground::builtin("canary-manual-promote").expect("lesson loads");
    let total = playground.session().actions().len();
    let mut narrated = Vec::new();
    for step in 1..=total {
        playground.apply(Command::JumpTo(step));
        let text = playground.narration();
        if text.contains("operator → leader Deployment.Promote") {
            narrated.push(text);
        }
    }
    assert_eq!(narrated.len(), 2, "one refused and one accepted promotion");
    assert!(narrated[0].contains("refused") && narrated[1].contains("accepted"));
    let labels: Vec<&str> = playground
        .view()
        .sequence
        .iter()
        .filter(|e| e.label.contains("operator Deployment.Promote"))
        .map(|e| {
            assert_eq!((e.from.as_str(), e.to.as_str()), ("leader", "leader"));
            e.label.as_str()
        })
        .collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(labels[0].starts_with('✕') && labels[0].contains("healthy allocations"));
    assert!(labels[1].starts_with('✓'));
}

/// The view a playground keeps up to date (reusing alloc views, eval views,
/// trace lines and sequence events of earlier steps) is the view built from
/// scratch, after every kind of command: steps, moves back and forth, edits
/// in the past, branch switches, another profile, actions applied mid-way.
#[test]
fn the_cached_view_equals_a_view_built_from_scratch_after_every_command() {
    use nomad_playground::playground::build_view;
    use nomad_playground::scenario::format::Action;
    use nomad_playground::sim::history::ScriptEdit;
    for id in ["pr-15068-heartbeat-order", "canary-manual-promote"] {
        let mut playground = Playground::builtin(id).expect("lesson loads");
        let total = playground.session().actions().len();
        let node = playground.view().nodes[0].id.clone();
        let commands = [
            Command::Step,
            Command::Step,
            Command::StepEval,
            Command::JumpTo(total.min(6)),
            Command::Back,
            Command::Back,
            Command::Step,
            Command::EditScript(ScriptEdit::Remove { index: 0 }),
            Command::JumpTo(total.min(5)),
            Command::SwitchBranch(0),
            Command::RunToEnd,
            Command::JumpTo(2),
            Command::CutLink(node.clone()),
            Command::Step,
            Command::RestoreLink(node),
            Command::Act(Action::Note {
                text: "a note".into(),
            }),
            Command::SetProfile("1.4.2".into()),
            Command::Reset,
            Command::RunToEnd,
            Command::Step,
        ];
        for (at, command) in commands.into_iter().enumerate() {
            let label = format!("{id}: command {at} {command:?}");
            playground.apply(command);
            let fresh = build_view(playground.session());
            assert_eq!(playground.view().trace, fresh.trace, "{label}");
            assert_eq!(playground.view().sequence, fresh.sequence, "{label}");
            assert_eq!(playground.view(), &fresh, "{label}");
        }
    }
}
