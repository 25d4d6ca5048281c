//! All integration tests in one binary: one link instead of thirty (the debug binaries are large and
//! CI disk and two cores are not); each module below was once its own `tests/*.rs` file.

// The whole crate is test code (`cargo test` builds it, nothing else does): clippy.toml's
// allow-unwrap/expect/print-in-tests then cover its helpers as they cover `#[test]` functions.
#![cfg(test)]

// Helpers shared by the test modules.
mod common;
mod shared;
mod support;

mod claim_nodes;
mod conformance_doc;
mod consolidation_min_values;
mod controller_candidates;
mod controller_consolidated;
mod controller_disruption;
mod controller_disruption_conformance;
mod controller_lifecycle;
mod controller_plan;
mod controller_pools;
mod controller_termination;
mod conventions_cli;
mod doctor_cli;
mod doctor_fixtures;
mod doctor_init_bundle;
mod doctor_live;
mod doctor_live_access;
mod doctor_liveness;
mod explain_cli;
mod generated;
mod help;
mod init_bundle;
mod init_cli;
mod init_clone;
mod init_kustomize;
mod init_live;
mod init_rejects;
mod init_schema;
mod init_topology;
mod kubectl;
mod large_input;
mod layering;
mod node_metrics;
mod packaging;
mod provisioning_deleting_nodes;
mod rbac_authz;
mod safety;
mod same_plan;
mod scale_down_cadence;
mod sched_properties;
mod shell_apply;
mod shell_cli;
mod shell_conditions;
mod shell_continuous;
mod shell_controller;
mod shell_list;
mod shell_run;
mod shell_watch_health;
mod shells;
mod simulate_bad_input;
mod simulate_scenarios;
mod status_cli;
mod termination_drained;
mod termination_metrics;
mod uninstall_live;
