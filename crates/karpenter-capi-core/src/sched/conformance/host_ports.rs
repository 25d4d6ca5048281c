//! Rule 4: two pods never share a node when a container host port has the same protocol and
//! port and equal host IPs, or one host IP unspecified (core `hostportusage.go`); otherwise the
//! port does not keep them apart. Every strategy, the upstream one included.

use super::{ALL, flavor, nodes, plan, pod, port, snap, unschedulable};

/// c2 is the cheapest home for two 900m pods; c4 holds four.
fn catalog() -> String {
    flavor("c2", 2, "0.05", "") + &flavor("c4", 4, "0.08", "") + &flavor("c8", 8, "0.14", "")
}

fn two(a: &str, b: &str) -> String {
    catalog()
        + &pod("p1", "app: a", "900m", &format!(", ports: [{a}]"), "")
        + &pod("p2", "app: b", "900m", &format!(", ports: [{b}]"), "")
}

fn pair(instance: &str) -> Vec<(String, Vec<String>)> {
    vec![(instance.into(), vec!["p1".into(), "p2".into()])]
}

fn apart(instance: &str) -> Vec<(String, Vec<String>)> {
    vec![
        (instance.into(), vec!["p1".into()]),
        (instance.into(), vec!["p2".into()]),
    ]
}

#[test]
fn ports_that_do_not_clash_share_a_node_in_every_strategy() {
    let cases = [
        (
            "different host IPs",
            port(80, None, Some("10.0.0.1")),
            port(80, None, Some("10.0.0.2")),
        ),
        (
            "TCP and UDP",
            port(80, None, None),
            port(80, Some("UDP"), None),
        ),
        (
            "different ports",
            port(80, None, None),
            port(81, None, None),
        ),
        (
            "different IPv6 hosts",
            port(53, Some("UDP"), Some("fd00::1")),
            port(53, Some("UDP"), Some("fd00::2")),
        ),
    ];
    for (what, a, b) in cases {
        let s = snap(&two(&a, &b));
        for strategy in ALL {
            let p = plan(&s, strategy);
            assert_eq!(nodes(&s, &p), pair("c2"), "{what}, {strategy:?}");
        }
    }
}

#[test]
fn ports_that_clash_never_share_a_node_in_every_strategy() {
    let cases = [
        (
            "both unspecified",
            port(80, None, None),
            port(80, Some("TCP"), None),
        ),
        (
            "one unspecified",
            port(80, None, None),
            port(80, None, Some("10.0.0.1")),
        ),
        (
            "0.0.0.0 and a host IP",
            port(80, None, Some("0.0.0.0")),
            port(80, None, Some("10.0.0.7")),
        ),
        (
            "equal host IPs",
            port(8443, None, Some("10.0.0.1")),
            port(8443, None, Some("10.0.0.1")),
        ),
        (
            ":: and an IPv6 host",
            port(53, Some("UDP"), Some("::")),
            port(53, Some("UDP"), Some("fd00::1")),
        ),
    ];
    for (what, a, b) in cases {
        let s = snap(&two(&a, &b));
        for strategy in ALL {
            let p = plan(&s, strategy);
            assert_eq!(nodes(&s, &p), apart("c2"), "{what}, {strategy:?}");
            assert!(unschedulable(&s, &p).is_empty(), "{what}, {strategy:?}");
        }
    }
}

/// 16 pods, eight binding port 80 on 10.0.0.1 and eight on 10.0.0.2: at most one of each per
/// node, so eight c2 nodes each with one pod of each address (the optimizer's batch size).
#[test]
fn a_batch_pairs_pods_of_different_host_ips() {
    let mut text = catalog();
    for i in 0..8 {
        for (group, ip) in [("a", "10.0.0.1"), ("b", "10.0.0.2")] {
            text += &pod(
                &format!("{group}-{i}"),
                &format!("app: {group}"),
                "900m",
                &format!(", ports: [{}]", port(80, None, Some(ip))),
                "",
            );
        }
    }
    let s = snap(&text);
    for strategy in ALL {
        let p = plan(&s, strategy);
        let got = nodes(&s, &p);
        assert_eq!(got.len(), 8, "{strategy:?}: {got:?}");
        for (instance, pods) in &got {
            assert_eq!(instance, "c2", "{strategy:?}: {got:?}");
            assert_eq!(pods.len(), 2, "{strategy:?}: {got:?}");
            assert!(
                pods[0].starts_with("a-") && pods[1].starts_with("b-"),
                "{strategy:?}: {got:?}"
            );
        }
    }
}

/// A pod bound to an existing node holds 10.0.0.1:80 there: a pending pod on 10.0.0.2 joins
/// it, one on every address does not.
#[test]
fn a_bound_pods_host_port_counts_on_its_node() {
    let node = "---\napiVersion: v1\nkind: Node\nmetadata: {name: w1, labels: {kubernetes.io/hostname: w1}}\nstatus: {allocatable: {cpu: '4', memory: 16Gi, pods: '110'}, capacity: {cpu: '4', memory: 16Gi, pods: '110'}}\n";
    let bound = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: resident, namespace: default}\nspec:\n  nodeName: w1\n  containers: [{name: c, resources: {requests: {cpu: 100m}}, ports: [{containerPort: 80, hostPort: 80, hostIP: 10.0.0.1}]}]\nstatus: {phase: Running}\n";
    let text = catalog()
        + node
        + bound
        + &pod(
            "other-ip",
            "app: a",
            "900m",
            &format!(", ports: [{}]", port(80, None, Some("10.0.0.2"))),
            "",
        )
        + &pod(
            "any-ip",
            "app: b",
            "900m",
            &format!(", ports: [{}]", port(80, None, None)),
            "",
        );
    let s = snap(&text);
    for strategy in ALL {
        let p = plan(&s, strategy);
        let on: Vec<(String, String)> = p
            .on_existing
            .iter()
            .map(|(i, n)| (s.pods[*i].demand.name.clone(), n.clone()))
            .collect();
        assert_eq!(
            on,
            vec![("other-ip".to_string(), "w1".to_string())],
            "{strategy:?}"
        );
        assert_eq!(
            nodes(&s, &p),
            vec![("c2".to_string(), vec!["any-ip".to_string()])],
            "{strategy:?}"
        );
    }
}
