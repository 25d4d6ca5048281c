//! Core's `nodeclaim/consistency`: a registered Node that came up with much less of a resource
//! than its claim's flavor promised is reported, with the claim's `ConsistentStateFound`
//! condition False and a `FailedConsistencyCheck` Warning Event on the claim; a Node that
//! matches sets the condition True.

use std::collections::BTreeSet;

use crate::controller::action::Action;
use crate::model::nodeclaim::NodeClaimRecord;
use crate::model::quantity::{format_bytes, format_millis};
use crate::model::resources::Resources;
use crate::model::snapshot::{MachineIndex, Snapshot};
use crate::vocab::names::CONSISTENT_STATE_FOUND;

/// The share of the promised amount below which a Node is inconsistent, in tenths of a percent
/// (core `consistency/nodeshape.go` NodeShape: less than 90%).
const MIN_PER_MILLE: i128 = 900;

/// One resource judged: its name, the claim's request, the promised and found amounts, and
/// how an amount of it is written.
type Row = (String, i64, i64, i64, fn(i64) -> String);

/// The promised and found amounts of each resource the claim requests, as text, with the
/// Node's amount in tenths of a percent of the promised one.
fn shortfalls(requests: &Resources, promised: &Resources, found: &Resources) -> Vec<String> {
    let cpu = |r: &Resources| r.cpu_millis;
    let memory = |r: &Resources| r.memory_bytes;
    let storage = |r: &Resources| r.ephemeral_storage_bytes;
    let pods = |r: &Resources| r.pods;
    let mut rows: Vec<Row> = vec![
        (
            "cpu".into(),
            cpu(requests),
            cpu(promised),
            cpu(found),
            format_millis,
        ),
        (
            "memory".into(),
            memory(requests),
            memory(promised),
            memory(found),
            format_bytes,
        ),
        (
            "ephemeral-storage".into(),
            storage(requests),
            storage(promised),
            storage(found),
            format_bytes,
        ),
        (
            "pods".into(),
            pods(requests),
            pods(promised),
            pods(found),
            |v| v.to_string(),
        ),
    ];
    for (name, requested) in &requests.extended {
        rows.push((
            name.clone(),
            *requested,
            promised.extended.get(name).copied().unwrap_or(0),
            found.extended.get(name).copied().unwrap_or(0),
            |v| v.to_string(),
        ));
    }
    rows.into_iter()
        // Only what the claim asked for and the flavor promised is judged, as core's check.
        .filter(|(_, requested, promised, _, _)| *requested != 0 && *promised != 0)
        .filter_map(|(name, _, promised, found, text)| {
            let per_mille = i128::from(found) * 1000 / i128::from(promised);
            // One decimal of the percentage, rounded half up.
            let tenths = (i128::from(found) * 2000 / i128::from(promised) + 1) / 2;
            (per_mille < MIN_PER_MILLE).then(|| {
                format!(
                    "expected {} of resource {name}, but found {} ({}.{}% of expected)",
                    text(promised),
                    text(found),
                    tenths / 10,
                    tenths % 10
                )
            })
        })
        .collect()
}

/// The issues of one claim's Node, or None when the claim is not checked: deleting or not
/// Initialized claims (core's NodeShape skips them), a claim without exactly one Node (core
/// ignores a missing or duplicated Node), a claim whose MachineDeployment's flavor is unknown.
/// `index`: the pass's Machine index, whose Nodes by providerID spare a scan of every Node per
/// claim.
pub(crate) fn issues(
    snapshot: &Snapshot,
    index: &MachineIndex<'_>,
    claim: &NodeClaimRecord,
) -> Option<Vec<String>> {
    if claim.deleting || !claim.condition_true("Initialized") {
        return None;
    }
    let pid = claim.provider_id.as_deref()?;
    let nodes = index.nodes_for(pid);
    let [node] = nodes.as_slice() else {
        return None;
    };
    let md = snapshot.claim_machine_deployment(claim)?;
    let (namespace, name) = md.split_once('/')?;
    let flavor = snapshot
        .machine_deployments
        .iter()
        .find(|m| m.object.namespace() == namespace && m.object.name() == name)
        .and_then(|m| m.flavor.as_ref().ok())?;
    Some(shortfalls(
        &claim.requests,
        &flavor.capacity,
        &node.capacity,
    ))
}

/// Mirrors core's consistency controller (`nodeclaim/consistency/controller.go`
/// checkConsistency): `ConsistentStateFound` True on a checked claim without issues (when it
/// is not True already), False with `ConsistencyCheckFailed` and one `FailedConsistencyCheck`
/// Warning Event per issue when there are any. Written only when the condition changes (core
/// re-scans every 10 minutes and its recorder de-duplicates; a stateless pass records the Event
/// once, when the claim turns inconsistent, or its issues change). `skip`: claims deleted this
/// pass.
pub(crate) fn consistency(snapshot: &Snapshot, skip: &BTreeSet<String>) -> Vec<Action> {
    let mut out = Vec::new();
    let index = MachineIndex::new(snapshot);
    for claim in snapshot
        .nodeclaims
        .iter()
        .filter(|c| !skip.contains(&c.name))
    {
        let Some(issues) = issues(snapshot, &index, claim) else {
            continue;
        };
        let current = crate::model::condition::find(&claim.conditions, CONSISTENT_STATE_FOUND);
        let unchanged = match current {
            Some(c) if issues.is_empty() => c.is_true(),
            Some(c) => c.status == "False" && c.message == issues.join("; "),
            None => false,
        };
        if unchanged {
            continue;
        }
        out.push(Action::SetConsistentState {
            target: format!("NodeClaim/{}", claim.name),
            node_claim: claim.name.clone(),
            issues,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(cpu: i64, memory_gi: i64, pods: i64) -> Resources {
        Resources {
            cpu_millis: cpu * 1000,
            memory_bytes: memory_gi << 30,
            pods,
            ..Resources::default()
        }
    }

    /// Core `consistency/suite_test.go` (N-CONSIST-003): the claim asked for 8 CPU, 64Gi and 5
    /// pods of a flavor promising 16, 128Gi and 10; a Node with 64Gi is reported in core's words.
    #[test]
    fn a_node_with_half_the_memory_is_one_issue() {
        assert_eq!(
            shortfalls(&r(8, 64, 5), &r(16, 128, 10), &r(16, 64, 10)),
            vec!["expected 128Gi of resource memory, but found 64Gi (50.0% of expected)"]
        );
        assert_eq!(
            shortfalls(&r(8, 64, 5), &r(16, 128, 10), &r(16, 128, 10)),
            Vec::<String>::new()
        );
    }

    /// The line is 90% exactly: 90% passes, just below fails; a resource the claim did not
    /// request is not judged.
    #[test]
    fn ninety_percent_is_enough_and_unrequested_resources_are_not_judged() {
        let promised = Resources {
            cpu_millis: 10_000,
            ..r(0, 10, 110)
        };
        let found = Resources {
            cpu_millis: 9_000,
            ..r(0, 8, 110)
        };
        let requests = Resources {
            cpu_millis: 500,
            ..Resources::default()
        };
        assert_eq!(
            shortfalls(&requests, &promised, &found),
            Vec::<String>::new()
        );
        let found = Resources {
            cpu_millis: 8_999,
            ..found
        };
        assert_eq!(
            shortfalls(&requests, &promised, &found),
            vec!["expected 10 of resource cpu, but found 8999m (90.0% of expected)"]
        );
    }
}
