//! The cluster the simulator benches share: 500 nodes, 5,000 allocs (50
//! service jobs of 100, bin-packed 20 to a node), and the scripts of a
//! 10-minute partition of 20% of the nodes (every fifth: 1,000 allocs) and
//! its healing, in a few steps or spread over 1,000 steps.

// Each bench uses a part of this module.
#![allow(dead_code)]

use nomad_playground::scenario::duration::Dur;
use nomad_playground::scenario::format::{
    Action, DisconnectSpec, GroupSpec, JobSpec, NodeSpec, Scenario, Settings,
};

pub const NODES: usize = 500;
pub const JOBS: usize = 50;
pub const COUNT: u32 = 100;
/// Every fifth node is partitioned (20%, half of them running allocs).
pub const PARTITIONED: usize = NODES / 5;

pub fn partitioned(k: usize) -> String {
    node_id(k * 5)
}

pub fn node_id(i: usize) -> String {
    format!("node-{i:03}")
}

pub fn cluster(script: Vec<Action>, checkpoint_every: usize, lost_after: Dur) -> Scenario {
    Scenario {
        version: 1,
        name: "bench".to_string(),
        description: None,
        source: None,
        profile: Some("latest".to_string()),
        profiles: None,
        seed: Some(42),
        settings: Some(Settings {
            checkpoint_every: Some(checkpoint_every),
            ..Settings::default()
        }),
        server: None,
        nodes: (0..NODES)
            .map(|i| NodeSpec {
                id: node_id(i),
                name: None,
                datacenter: None,
                node_pool: None,
                class: None,
                // Room for 20 allocs: bin packing fills 250 nodes, the rest
                // take the replacements.
                cpu: Some(2000),
                memory_mb: Some(4096),
                registered: None,
                agent: None,
            })
            .collect(),
        jobs: (0..JOBS)
            .map(|j| JobSpec {
                id: format!("job-{j:02}"),
                job_type: None,
                priority: None,
                datacenters: None,
                node_pool: None,
                groups: vec![GroupSpec {
                    name: "app".to_string(),
                    count: Some(COUNT),
                    cpu: Some(100),
                    memory_mb: Some(128),
                    nodes: None,
                    max_client_disconnect: None,
                    stop_after_client_disconnect: None,
                    prevent_reschedule_on_lost: None,
                    disconnect: Some(DisconnectSpec {
                        lost_after: Some(lost_after),
                        ..DisconnectSpec::default()
                    }),
                    reschedule: None,
                    update: None,
                    ephemeral_disk: None,
                    tasks: None,
                }],
            })
            .collect(),
        script,
    }
}

/// Start, cut 20% of the links for ten minutes, heal, settle.
pub fn partition_script() -> Vec<Action> {
    let mut script = vec![Action::Advance { by: Dur::secs(30) }];
    script.extend((0..PARTITIONED).map(|i| Action::LinkDown {
        node: partitioned(i),
    }));
    script.push(Action::Advance { by: Dur::mins(10) });
    script.extend((0..PARTITIONED).map(|i| Action::LinkUp {
        node: partitioned(i),
    }));
    script.push(Action::Advance { by: Dur::mins(3) });
    script
}

/// The same story spread over 1,000 steps.
pub fn thousand_steps() -> Vec<Action> {
    let mut script = vec![Action::Advance { by: Dur::secs(30) }];
    script.extend((0..PARTITIONED).map(|i| Action::LinkDown {
        node: partitioned(i),
    }));
    let filler = 1000 - script.len() - PARTITIONED - 100;
    script.extend((0..filler).map(|_| Action::Advance {
        by: Dur::ms(600_000 / filler as u64),
    }));
    script.extend((0..PARTITIONED).map(|i| Action::LinkUp {
        node: partitioned(i),
    }));
    script.extend((0..100).map(|_| Action::Advance { by: Dur::secs(2) }));
    script
}

/// lost_after longer than the partition: the allocs reconnect.
pub const RECONNECT: Dur = Dur::mins(15);
/// lost_after shorter than the partition: the allocs are lost, the nodes go down.
pub const LOST: Dur = Dur::mins(5);
