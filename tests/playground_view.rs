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
