//! Node requirements of NodePools and pods as core's scheduling suite checks them (the
//! `Custom Constraints` and `Well Known Labels` contexts, in our own inputs): which flavor a pod
//! gets, or that it stays pending, for `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`,
//! `Gte`, `Lte` on zones, custom keys, Karpenter's restricted domain and the hostname; plus
//! NodePools that offer nothing (contradictory requirements, not Ready).

use super::{flavor, plan, pod, snap, unschedulable};
use crate::model::snapshot::Snapshot;
use crate::sched::strategy::StrategyName::{Cost, KarpenterCapi};
use crate::vocab::keys::ZONE;

/// A NodePool `default` with these requirement flow maps and template labels.
fn pool(requirements: &[&str], labels: &str) -> String {
    format!(
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: default}}\nspec:\n  template:\n    metadata: {{labels: {{{labels}}}}}\n    spec:\n      requirements: [{}]\n",
        requirements.join(", ")
    )
}

/// Three 2-core flavors, one per zone, z1 cheapest.
fn zonal() -> String {
    flavor("c2-z1", 2, "0.04", &format!("{ZONE}=z1"))
        + &flavor("c2-z2", 2, "0.05", &format!("{ZONE}=z2"))
        + &flavor("c2-z3", 2, "0.06", &format!("{ZONE}=z3"))
}

/// A pod `p` whose node affinity requires these match expressions.
fn requiring(expressions: &str) -> String {
    pod(
        "p",
        "app: p",
        "1",
        "",
        &format!(
            "\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{expressions}]}}]}}}}}}"
        ),
    )
}

/// A pod `p` with this node selector body.
fn selecting(selector: &str) -> String {
    pod(
        "p",
        "app: p",
        "1",
        "",
        &format!("\n  nodeSelector: {{{selector}}}"),
    )
}

/// The instance types of the new nodes (sorted) under `cost` and `karpenter-capi`, which must
/// agree; empty when the pod stays pending, which must then be listed as unschedulable.
fn bought(s: &Snapshot) -> Vec<String> {
    let mut answers = Vec::new();
    for strategy in [Cost, KarpenterCapi] {
        let p = plan(s, strategy);
        let mut types: Vec<String> = p
            .new_nodes
            .iter()
            .map(|n| n.offering.flavor.instance_type.clone())
            .collect();
        types.sort();
        let pending = unschedulable(s, &p);
        assert_eq!(
            types.is_empty(),
            !pending.is_empty(),
            "{strategy:?}: {types:?} {pending:?}"
        );
        answers.push(types);
    }
    assert_eq!(answers[0], answers[1], "cost and karpenter-capi disagree");
    answers.remove(0)
}

#[test]
fn zone_requirements_of_pools_and_pods() {
    let z = |r: &str| format!("{{key: {ZONE}, {r}}}");
    // (what, pool requirements, pod, the flavors bought)
    let cases: Vec<(&str, Vec<String>, String, Vec<&str>)> = vec![
        (
            "pool In [z2]",
            vec![z("operator: In, values: [z2]")],
            pod("p", "app: p", "1", "", ""),
            vec!["c2-z2"],
        ),
        (
            "pool In [z1, z2], pod selects z2",
            vec![z("operator: In, values: [z1, z2]")],
            selecting(&format!("{ZONE}: z2")),
            vec!["c2-z2"],
        ),
        (
            "pool In [z1], pod selects z2",
            vec![z("operator: In, values: [z1]")],
            selecting(&format!("{ZONE}: z2")),
            vec![],
        ),
        (
            "pod requires In [z3]",
            vec![],
            requiring(&z("operator: In, values: [z3]")),
            vec!["c2-z3"],
        ),
        (
            "pod requires NotIn [z1, z2]",
            vec![],
            requiring(&z("operator: NotIn, values: [z1, z2]")),
            vec!["c2-z3"],
        ),
        (
            "pod requires NotIn every zone",
            vec![],
            requiring(&z("operator: NotIn, values: [z1, z2, z3]")),
            vec![],
        ),
        (
            "pod requires In [nowhere] and Exists",
            vec![],
            requiring(&format!(
                "{}, {}",
                z("operator: In, values: [nowhere]"),
                z("operator: Exists")
            )),
            vec![],
        ),
        (
            "pool In [nowhere]",
            vec![z("operator: In, values: [nowhere]")],
            pod("p", "app: p", "1", "", ""),
            vec![],
        ),
        (
            "pod selects a hostname",
            vec![],
            selecting("kubernetes.io/hostname: red-node"),
            vec![],
        ),
        (
            "pod requires hostname In [test]",
            vec![],
            requiring("{key: kubernetes.io/hostname, operator: In, values: [test]}"),
            vec![],
        ),
        (
            "pod requires Exists on an absent key",
            vec![],
            requiring("{key: example.com/absent, operator: Exists}"),
            vec![],
        ),
        (
            "pod requires DoesNotExist on an absent key",
            vec![],
            requiring("{key: example.com/absent, operator: DoesNotExist}"),
            vec!["c2-z1"],
        ),
        (
            "zone and instance type selected together",
            vec![],
            selecting(&format!(
                "{ZONE}: z2, node.kubernetes.io/instance-type: c2-z2"
            )),
            vec!["c2-z2"],
        ),
        (
            "zone and another zone's instance type",
            vec![],
            selecting(&format!(
                "{ZONE}: z2, node.kubernetes.io/instance-type: c2-z3"
            )),
            vec![],
        ),
    ];
    for (what, reqs, p, want) in cases {
        let reqs: Vec<&str> = reqs.iter().map(String::as_str).collect();
        let s = snap(&(pool(&reqs, "") + &zonal() + &p));
        assert_eq!(bought(&s), want, "{what}");
    }
}

#[test]
fn a_pool_requirement_on_a_custom_key_against_pod_operators() {
    let v = |r: &str| format!("{{key: example.com/team, {r}}}");
    let pool_text = pool(&[&v("operator: In, values: [red]")], "");
    // (pod requirement, placed)
    let cases = [
        ("operator: In, values: [red]", true),
        ("operator: NotIn, values: [red]", false),
        ("operator: Exists", true),
        ("operator: DoesNotExist", false),
        ("operator: In, values: [blue]", false),
        ("operator: NotIn, values: [blue]", true),
    ];
    for (req, placed) in cases {
        let s = snap(&(pool_text.clone() + &zonal() + &requiring(&v(req))));
        let want: Vec<&str> = if placed { vec!["c2-z1"] } else { vec![] };
        assert_eq!(bought(&s), want, "{req}");
        if placed {
            let p = plan(&s, Cost);
            assert_eq!(
                p.new_nodes[0]
                    .offering
                    .labels
                    .get("example.com/team")
                    .map(String::as_str),
                Some("red"),
                "{req}"
            );
        }
    }
}

#[test]
fn pool_requirements_on_integer_labels() {
    let key = "example.com/generation";
    let catalog = flavor("g04", 2, "0.04", &format!("{key}=4"))
        + &flavor("g08", 2, "0.05", &format!("{key}=8"))
        + &flavor("g16", 2, "0.06", &format!("{key}=16"));
    let cases = [
        ("Gt, values: ['8']", vec!["g16"]),
        ("Lt, values: ['8']", vec!["g04"]),
        ("Gte, values: ['16']", vec!["g16"]),
        ("Lte, values: ['8']", vec!["g04"]),
        ("Gte, values: ['8']", vec!["g08"]),
        ("Lte, values: ['2']", vec![]),
    ];
    for (op, want) in cases {
        let req = format!("{{key: {key}, operator: {op}}}");
        let s = snap(&(pool(&[&req], "") + &catalog + &pod("p", "app: p", "1", "", "")));
        assert_eq!(bought(&s), want, "{op}");
    }
}

/// Pods selecting different architectures, operating systems or zones get separate nodes of
/// the matching flavor; `Exists` and `DoesNotExist` on a label only some flavors carry pick
/// accordingly.
#[test]
fn pods_selecting_different_well_known_values_get_matching_nodes() {
    let catalog = flavor(
        "amd",
        2,
        "0.04",
        "kubernetes.io/arch=amd64,kubernetes.io/os=linux",
    ) + &flavor(
        "arm",
        2,
        "0.05",
        "kubernetes.io/arch=arm64,kubernetes.io/os=windows,example.com/ssd=yes",
    );
    let two = |a: &str, b: &str| {
        let s = snap(
            &(pool(&[], "")
                + &catalog
                + &pod(
                    "pa",
                    "app: a",
                    "1",
                    "",
                    &format!("\n  nodeSelector: {{{a}}}"),
                )
                + &pod(
                    "pb",
                    "app: b",
                    "1",
                    "",
                    &format!("\n  nodeSelector: {{{b}}}"),
                )),
        );
        bought(&s)
    };
    assert_eq!(
        two("kubernetes.io/arch: amd64", "kubernetes.io/arch: arm64"),
        ["amd", "arm"]
    );
    assert_eq!(
        two("kubernetes.io/os: linux", "kubernetes.io/os: windows"),
        ["amd", "arm"]
    );
    let s =
        snap(&(pool(&[], "") + &catalog + &requiring("{key: example.com/ssd, operator: Exists}")));
    assert_eq!(bought(&s), ["arm"]);
    let s = snap(
        &(pool(&[], "") + &catalog + &requiring("{key: example.com/ssd, operator: DoesNotExist}")),
    );
    assert_eq!(bought(&s), ["amd"]);
    // A custom label and an instance type no single flavor has together.
    let s = snap(
        &(pool(&[], "")
            + &catalog
            + &selecting("example.com/ssd: 'yes', node.kubernetes.io/instance-type: amd")),
    );
    assert_eq!(bought(&s), Vec::<String>::new());
    let s = snap(
        &(pool(&[], "")
            + &zonal()
            + &pod(
                "pa",
                "app: a",
                "1",
                "",
                &format!("\n  nodeSelector: {{{ZONE}: z1}}"),
            )
            + &pod(
                "pb",
                "app: b",
                "1",
                "",
                &format!("\n  nodeSelector: {{{ZONE}: z2}}"),
            )),
    );
    assert_eq!(bought(&s), ["c2-z1", "c2-z2"]);
}

/// A flavor label in Karpenter's restricted domain never reaches the NodeClaim, hence never the
/// Node: a pod requiring it must stay pending rather than get a node it can never run on.
#[test]
fn a_restricted_label_is_never_offered() {
    let catalog = flavor("c2", 2, "0.04", "karpenter.sh/test=x");
    for p in [
        requiring("{key: karpenter.sh/test, operator: Exists}"),
        selecting("karpenter.sh/test: x"),
    ] {
        let s = snap(&(pool(&[], "") + &catalog + &p));
        assert_eq!(bought(&s), Vec::<String>::new());
    }
    // The flavor itself is still offered to pods that do not ask for the label.
    let s = snap(&(pool(&[], "") + &catalog + &pod("p", "app: p", "1", "", "")));
    assert_eq!(bought(&s), ["c2"]);
}

/// Pool requirements that contradict each other on a key the flavor lacks leave no flavor;
/// on a key it has, its value decides as before.
#[test]
fn contradictory_pool_requirements_offer_nothing() {
    let reqs = [
        "{key: kubernetes.io/arch, operator: In, values: [amd64]}",
        "{key: kubernetes.io/arch, operator: In, values: [arm64]}",
    ];
    let s =
        snap(&(pool(&reqs, "") + &flavor("c2", 2, "0.04", "") + &pod("p", "app: p", "1", "", "")));
    assert_eq!(bought(&s), Vec::<String>::new());
    let reqs = [
        "{key: example.com/gen, operator: Gt, values: ['2']}",
        "{key: example.com/gen, operator: Lt, values: ['3']}",
    ];
    let s =
        snap(&(pool(&reqs, "") + &flavor("c2", 2, "0.04", "") + &pod("p", "app: p", "1", "", "")));
    assert_eq!(bought(&s), Vec::<String>::new());
    // Compatible ones on a key the flavor lacks: offered, as before.
    let reqs = [
        "{key: example.com/gen, operator: Gt, values: ['2']}",
        "{key: example.com/gen, operator: Lt, values: ['5']}",
    ];
    let s =
        snap(&(pool(&reqs, "") + &flavor("c2", 2, "0.04", "") + &pod("p", "app: p", "1", "", "")));
    assert_eq!(bought(&s), ["c2"]);
}

/// A NodePool reported not Ready provisions nothing; the next pool does.
#[test]
fn a_pool_that_is_not_ready_provisions_nothing() {
    let not_ready = "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: broken}\nspec:\n  weight: 50\n  template:\n    spec:\n      requirements: []\nstatus:\n  conditions: [{type: Ready, status: 'False', reason: NodeClassNotFound}]\n";
    let s = snap(
        &(not_ready.to_string() + &flavor("c2", 2, "0.04", "") + &pod("p", "app: p", "1", "", "")),
    );
    assert_eq!(bought(&s), Vec::<String>::new());
    let s = snap(
        &(not_ready.to_string()
            + &pool(&[], "")
            + &flavor("c2", 2, "0.04", "")
            + &pod("p", "app: p", "1", "", "")),
    );
    assert_eq!(bought(&s), ["c2"]);
    assert_eq!(plan(&s, Cost).new_nodes[0].offering.node_pool, "default");
}

/// Pods selecting each well-known label of an offered flavor are placed: zone, instance type,
/// architecture, OS, and the capacity type the provider's single offering has (on-demand).
#[test]
fn pods_selecting_an_offered_flavors_well_known_labels_are_placed() {
    let catalog = flavor(
        "c2",
        2,
        "0.04",
        &format!("{ZONE}=z1,kubernetes.io/arch=amd64,kubernetes.io/os=linux"),
    );
    for selector in [
        format!("{ZONE}: z1"),
        "node.kubernetes.io/instance-type: c2".to_string(),
        "kubernetes.io/arch: amd64".to_string(),
        "kubernetes.io/os: linux".to_string(),
        "karpenter.sh/capacity-type: on-demand".to_string(),
    ] {
        let s = snap(&(pool(&[], "") + &catalog + &selecting(&selector)));
        assert_eq!(bought(&s), ["c2"], "{selector}");
    }
}

/// A pool requirement with one value on a `kubernetes.io` key (or a subdomain) becomes a label
/// of its NodeClaims, hence of their Nodes.
#[test]
fn a_single_valued_pool_requirement_on_a_kubernetes_io_key_labels_the_claim() {
    for key in [
        "kubernetes.io/team",
        "sub.kubernetes.io/team",
        "k8s.io/team",
    ] {
        let req = format!("{{key: {key}, operator: In, values: [red]}}");
        let s = snap(
            &(pool(&[&req], "") + &flavor("c2", 2, "0.04", "") + &pod("p", "app: p", "1", "", "")),
        );
        let p = plan(&s, Cost);
        assert_eq!(p.new_nodes.len(), 1, "{key}");
        let o = &p.new_nodes[0].offering;
        let labels = crate::controller::provision::claim_labels(&s.nodepools[o.pool_index], o);
        assert_eq!(labels.get(key).map(String::as_str), Some("red"), "{key}");
    }
}

/// A pool requiring spot offers nothing from flavors that do not say spot: the provider's
/// single offering is on-demand.
#[test]
fn a_pool_requiring_spot_offers_no_on_demand_flavor() {
    let req = "{key: karpenter.sh/capacity-type, operator: In, values: [spot]}";
    let s =
        snap(&(pool(&[req], "") + &flavor("c2", 2, "0.04", "") + &pod("p", "app: p", "1", "", "")));
    assert_eq!(bought(&s), Vec::<String>::new());
    let s = snap(
        &(pool(&[req], "")
            + &flavor("c2", 2, "0.04", "")
            + &flavor("s2", 2, "0.02", "karpenter.sh/capacity-type=spot")
            + &pod("p", "app: p", "1", "", "")),
    );
    assert_eq!(bought(&s), ["s2"]);
}

/// Pods go to the heaviest NodePool that can hold them, unless they select another by name or
/// by its template label.
#[test]
fn pods_go_to_the_heaviest_pool_unless_they_select_one() {
    let weighted = |name: &str, weight: u32, label: &str| {
        format!(
            "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {name}}}\nspec:\n  weight: {weight}\n  template:\n    metadata: {{labels: {{team: {label}}}}}\n    spec:\n      requirements: []\n"
        )
    };
    let pools =
        weighted("light", 1, "a") + &weighted("heavy", 50, "b") + &weighted("middle", 10, "c");
    let pool_of = |p: &str| {
        let s = snap(&(pools.clone() + &flavor("c2", 2, "0.04", "") + p));
        let mut out = Vec::new();
        for strategy in [Cost, KarpenterCapi] {
            let placed = plan(&s, strategy);
            assert_eq!(placed.new_nodes.len(), 1, "{strategy:?}");
            out.push(placed.new_nodes[0].offering.node_pool.clone());
        }
        assert_eq!(out[0], out[1], "cost and karpenter-capi disagree");
        out.remove(0)
    };
    assert_eq!(pool_of(&pod("p", "app: p", "1", "", "")), "heavy");
    assert_eq!(pool_of(&selecting("karpenter.sh/nodepool: light")), "light");
    assert_eq!(pool_of(&selecting("team: c")), "middle");
}

/// `cost` buys the cheapest flavor meeting the pool's and the pod's arch, OS and zone
/// requirements (core's instance selection picks the cheapest compatible offering); with none,
/// the pod stays pending.
#[test]
fn cost_buys_the_cheapest_flavor_meeting_arch_os_and_zone() {
    let l = |arch: &str, os: &str, zone: &str| {
        format!("kubernetes.io/arch={arch},kubernetes.io/os={os},{ZONE}={zone}")
    };
    let catalog = flavor("amd-lin-z1", 2, "0.05", &l("amd64", "linux", "z1"))
        + &flavor("amd-lin-z2", 2, "0.04", &l("amd64", "linux", "z2"))
        + &flavor("arm-lin-z1", 2, "0.03", &l("arm64", "linux", "z1"))
        + &flavor("amd-win-z1", 2, "0.07", &l("amd64", "windows", "z1"))
        + &flavor("arm-win-z2", 2, "0.06", &l("arm64", "windows", "z2"))
        + &flavor("amd-win-z2", 2, "0.08", &l("amd64", "windows", "z2"));
    let req = |k: &str, v: &str| format!("{{key: {k}, operator: In, values: [{v}]}}");
    // (what, pool requirements, pod selector, the flavor bought or none)
    let cases: Vec<(&str, Vec<String>, &str, Option<&str>)> = vec![
        ("cheapest of all", vec![], "", Some("arm-lin-z1")),
        (
            "pod amd64",
            vec![],
            "kubernetes.io/arch: amd64",
            Some("amd-lin-z2"),
        ),
        (
            "pod arm64",
            vec![],
            "kubernetes.io/arch: arm64",
            Some("arm-lin-z1"),
        ),
        (
            "pool amd64",
            vec![req("kubernetes.io/arch", "amd64")],
            "",
            Some("amd-lin-z2"),
        ),
        (
            "pool arm64",
            vec![req("kubernetes.io/arch", "arm64")],
            "",
            Some("arm-lin-z1"),
        ),
        (
            "pool windows",
            vec![req("kubernetes.io/os", "windows")],
            "",
            Some("arm-win-z2"),
        ),
        (
            "pod windows",
            vec![],
            "kubernetes.io/os: windows",
            Some("arm-win-z2"),
        ),
        (
            "pod linux",
            vec![],
            "kubernetes.io/os: linux",
            Some("arm-lin-z1"),
        ),
        (
            "pool zone z2",
            vec![req(ZONE, "z2")],
            "",
            Some("amd-lin-z2"),
        ),
        (
            "pod zone z2",
            vec![],
            "topology.kubernetes.io/zone: z2",
            Some("amd-lin-z2"),
        ),
        (
            "pool on-demand in z1",
            vec![
                req("karpenter.sh/capacity-type", "on-demand"),
                req(ZONE, "z1"),
            ],
            "",
            Some("arm-lin-z1"),
        ),
        (
            "pool z1, amd64, windows",
            vec![
                req(ZONE, "z1"),
                req("kubernetes.io/arch", "amd64"),
                req("kubernetes.io/os", "windows"),
            ],
            "",
            Some("amd-win-z1"),
        ),
        (
            "pod arm64 in a zone with none",
            vec![],
            "kubernetes.io/arch: arm64, kubernetes.io/os: linux, topology.kubernetes.io/zone: z2",
            None,
        ),
        (
            "pool arm64, pod zone z2 linux",
            vec![req("kubernetes.io/arch", "arm64")],
            "topology.kubernetes.io/zone: z2, kubernetes.io/os: linux",
            None,
        ),
        // In z2 the cheapest flavor is amd64: an arm64 pod or pool must pass it over.
        (
            "pod arm64 in z2",
            vec![],
            "kubernetes.io/arch: arm64, topology.kubernetes.io/zone: z2",
            Some("arm-win-z2"),
        ),
        (
            "pool arm64, pod in z2",
            vec![req("kubernetes.io/arch", "arm64")],
            "topology.kubernetes.io/zone: z2",
            Some("arm-win-z2"),
        ),
        (
            "pod arch no flavor has",
            vec![],
            "kubernetes.io/arch: s390x",
            None,
        ),
    ];
    for (what, reqs, selector, want) in cases {
        let reqs: Vec<&str> = reqs.iter().map(String::as_str).collect();
        let p = if selector.is_empty() {
            pod("p", "app: p", "1", "", "")
        } else {
            selecting(selector)
        };
        let s = snap(&(pool(&reqs, "") + &catalog + &p));
        let placed = plan(&s, Cost);
        let got = placed
            .new_nodes
            .first()
            .map(|n| n.offering.flavor.instance_type.as_str());
        assert_eq!(got, want, "{what}");
        assert_eq!(placed.unschedulable.is_empty(), want.is_some(), "{what}");
    }
    // Where a windows flavor is the cheapest, a linux pod or pool passes it over.
    let catalog = flavor("win", 2, "0.01", &l("amd64", "windows", "z1"))
        + &flavor("lin", 2, "0.05", &l("amd64", "linux", "z1"));
    let linux = req("kubernetes.io/os", "linux");
    for (what, reqs, p) in [
        ("pod linux", vec![], selecting("kubernetes.io/os: linux")),
        (
            "pool linux",
            vec![linux.as_str()],
            pod("p", "app: p", "1", "", ""),
        ),
    ] {
        let s = snap(&(pool(&reqs, "") + &catalog + &p));
        let placed = plan(&s, Cost);
        let got: Vec<&str> = placed
            .new_nodes
            .iter()
            .map(|n| n.offering.flavor.instance_type.as_str())
            .collect();
        assert_eq!(got, ["lin"], "{what}");
    }
}

/// The max-size annotation bounds a MachineDeployment's replicas, as the provider's
/// `isBelowMaxSize` and `machineDeploymentToInstanceType` do (K-CP-040..048): no annotation, no
/// bound; below the max the cheap flavor is bought, at or above it (or at a max of 0) the next
/// one; a missing `spec.replicas` counts as 0 here, as upstream; room is counted per node (two
/// pods that repel each other on the hostname get one node of each flavor under a max of 2 at
/// 1 replica). Both strategies agree ([`bought`]).
#[test]
fn a_machine_deployment_at_its_max_size_is_not_offered() {
    let price = "    capacity.cluster-autoscaler.kubernetes.io/price: '0.01'\n";
    let sized = |max: Option<&str>, replicas: Option<i64>| {
        let mut f = flavor("c1", 1, "0.01", "");
        if let Some(m) = max {
            f = f.replace(
                price,
                &format!(
                    "{price}    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: '{m}'\n"
                ),
            );
        }
        match replicas {
            Some(r) => f.replace("replicas: 0", &format!("replicas: {r}")),
            None => f.replace("replicas: 0, ", ""),
        }
    };
    let cases: [(Option<&str>, Option<i64>, &[&str]); 6] = [
        (None, Some(5), &["c1"]),
        (Some("10"), Some(3), &["c1"]),
        (Some("10"), Some(10), &["c2"]),
        (Some("10"), Some(12), &["c2"]),
        (Some("10"), None, &["c1"]),
        (Some("0"), Some(0), &["c2"]),
    ];
    for (max, replicas, want) in cases {
        let s = snap(
            &(pool(&[], "")
                + &sized(max, replicas)
                + &flavor("c2", 2, "0.04", "")
                + &pod("p", "app: p", "500m", "", "")),
        );
        assert_eq!(bought(&s), want, "max {max:?}, replicas {replicas:?}");
    }
    let apart = "\n  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: p}}, topologyKey: kubernetes.io/hostname}]}}";
    let s = snap(
        &(pool(&[], "")
            + &sized(Some("2"), Some(1))
            + &flavor("c2", 2, "0.04", "")
            + &pod("p1", "app: p", "500m", "", apart)
            + &pod("p2", "app: p", "500m", "", apart)),
    );
    assert_eq!(bought(&s), ["c1", "c2"]);
}

/// Only member MachineDeployments (the membership label, with an empty value) are offered, as
/// the provider's `GetInstanceTypes` lists only members (K-CP-014): the cheaper c1 is bought as
/// a member, and passed over without the label or with another value.
#[test]
fn only_member_machine_deployments_are_offered() {
    let member = "labels: {node.cluster.x-k8s.io/karpenter-member: ''}";
    for (labels, want) in [
        (member, "c1"),
        ("labels: {}", "c2"),
        (
            "labels: {node.cluster.x-k8s.io/karpenter-member: 'true'}",
            "c2",
        ),
    ] {
        let cheap = flavor("c1", 1, "0.01", "").replace(member, labels);
        let s = snap(
            &(pool(&[], "")
                + &flavor("c2", 2, "0.04", "")
                + &cheap
                + &pod("p", "app: p", "500m", "", "")),
        );
        assert_eq!(bought(&s), [want], "{labels}");
    }
}
