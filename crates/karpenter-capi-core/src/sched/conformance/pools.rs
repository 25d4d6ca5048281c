//! Which NodePools provision (core v1.14 `provisioner.go` `NewScheduler`): one being deleted or
//! static (`spec.replicas` set) gets no new node, in every strategy and in the controller, and
//! its pods go to the next pool or stay pending. Cases after core's provisioning `suite_test.go`
//! ("ignore NodePools that are deleting", the `StaticNodePool` context), in our own inputs.

use super::{flavor, plan, pod, snap, unschedulable};
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::Placement;
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};

/// The strategies that provision from NodePools (`least-waste` is Cluster Autoscaler's view:
/// node groups, no NodePools).
const POOLED: [crate::sched::strategy::StrategyName; 2] = [Cost, KarpenterCapi];

/// A NodePool `name` of this weight with extra `metadata` fields and extra `spec` lines.
fn pool(name: &str, weight: u32, metadata: &str, spec: &str) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {name}{metadata}}}\nspec:\n  weight: {weight}{spec}\n  template:\n    spec:\n      requirements: []\n"
    )
}

const DELETING: &str =
    ", deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: [karpenter.sh/termination]";
const STATIC: &str = "\n  replicas: 2";

/// The NodePool of each new node, sorted.
fn pools(p: &Placement) -> Vec<String> {
    let mut out: Vec<String> = p
        .new_nodes
        .iter()
        .map(|n| n.offering.node_pool.clone())
        .collect();
    out.sort();
    out
}

fn world(pools: &str) -> Snapshot {
    snap(
        &(pools.to_string()
            + &flavor("c2", 2, "0.10", "")
            + &pod("a", "app: a", "1", "", "")
            + &pod("b", "app: b", "1", "", "")),
    )
}

/// Alone, a deleting pool and a static pool each leave the pods pending; beside a lighter
/// dynamic pool, the pods go to that one although the others weigh more.
#[test]
fn deleting_and_static_pools_get_no_new_nodes() {
    for only in [
        pool("going", 10, DELETING, ""),
        pool("fixed", 10, "", STATIC),
    ] {
        let s = world(&only);
        for strategy in POOLED {
            let p = plan(&s, strategy);
            assert!(p.new_nodes.is_empty(), "{strategy:?}: {:?}", pools(&p));
            assert_eq!(unschedulable(&s, &p), ["a", "b"], "{strategy:?}");
        }
    }
    let s = world(
        &(pool("going", 30, DELETING, "")
            + &pool("fixed", 20, "", STATIC)
            + &pool("dynamic", 1, "", "")),
    );
    assert!(s.nodepools.iter().any(|p| p.deleting));
    assert!(s.nodepools.iter().any(|p| p.replicas == Some(2)));
    for strategy in POOLED {
        let p = plan(&s, strategy);
        assert!(p.unschedulable.is_empty(), "{strategy:?}");
        assert!(
            pools(&p).iter().all(|n| n == "dynamic") && !p.new_nodes.is_empty(),
            "{strategy:?}: {:?}",
            pools(&p)
        );
    }
}

/// The controller writes its NodeClaims for the dynamic pool only, and notes the pods when
/// only a deleting or static pool is left.
#[test]
fn the_controller_creates_no_claim_for_a_deleting_or_static_pool() {
    use crate::controller::{Config, action::Action, provision::provision};
    let now = jiff::Timestamp::now();
    let claim_pools = |s: &Snapshot| -> Vec<String> {
        provision(s, now, &Config::default())
            .0
            .iter()
            .filter_map(|a| match a {
                Action::CreateNodeClaim { node_pool, .. } => Some(node_pool.clone()),
                _ => None,
            })
            .collect()
    };
    let s = world(
        &(pool("going", 30, DELETING, "")
            + &pool("fixed", 20, "", STATIC)
            + &pool("dynamic", 1, "", "")),
    );
    assert_eq!(claim_pools(&s), ["dynamic"]);
    let s = world(&(pool("going", 30, DELETING, "") + &pool("fixed", 20, "", STATIC)));
    assert!(claim_pools(&s).is_empty());
    let (_, notes) = provision(&s, now, &Config::default());
    assert_eq!(notes.len(), 2, "{notes:?}");
}
