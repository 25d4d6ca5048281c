//! Bounded fuzzing of every text parser the core runs on input it does not control (proptest,
//! in CI): quantities, durations, cron schedules, requirements, taints, label lists, and the
//! loader (YAML and JSON text of arbitrary objects of the kinds it reads) through the snapshot,
//! strict and tolerant, and a plan over the tolerant snapshot. The property is "no panic":
//! every input is either read or refused with an error value.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::load::{Source, build_snapshot, build_snapshot_tolerant, parse_source};
use super::{cron, duration, labels, quantity, taints};

/// Text with the characters the parsers care about over-represented.
fn texty() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9.eE+\\-kKmMgGtTpPnuiI ]{0,24}",
        "[0-9*/,\\- ]{0,30}",
        "[0-9hmsuµn.]{0,20}",
        "[a-z0-9./=:,\\-_ ]{0,40}",
        any::<String>(),
    ]
}

/// An arbitrary JSON value, nested a few levels.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        texty().prop_map(Value::String),
        Just(json!("9999-12-31T23:59:59Z")),
        Just(json!("9Ei")),
        Just(json!("-1")),
        Just(json!("1e50")),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("spec".to_string()),
                    Just("status".to_string()),
                    Just("containers".to_string()),
                    Just("resources".to_string()),
                    Just("requests".to_string()),
                    Just("limits".to_string()),
                    Just("template".to_string()),
                    Just("replicas".to_string()),
                    Just("requirements".to_string()),
                    Just("taints".to_string()),
                    Just("conditions".to_string()),
                    Just("cpu".to_string()),
                    Just("memory".to_string()),
                    "[a-zA-Z]{1,8}",
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// An object of a kind the loader reads, with arbitrary metadata, spec and status.
fn object() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec![
            ("v1", "Pod"),
            ("v1", "Node"),
            ("apps/v1", "DaemonSet"),
            ("apps/v1", "Deployment"),
            ("batch/v1", "Job"),
            ("karpenter.sh/v1", "NodePool"),
            ("karpenter.sh/v1", "NodeClaim"),
            ("karpenter.cluster.x-k8s.io/v1alpha1", "ClusterAPINodeClass"),
            ("cluster.x-k8s.io/v1beta2", "MachineDeployment"),
            ("cluster.x-k8s.io/v1beta1", "Machine"),
            ("v1", "PersistentVolumeClaim"),
            ("v1", "ConfigMap"),
        ]),
        "[a-z][a-z0-9-]{0,10}",
        json_value(),
        json_value(),
        json_value(),
    )
        .prop_map(|((api_version, kind), name, labels, spec, status)| {
            json!({
                "apiVersion": api_version, "kind": kind,
                "metadata": {"name": name, "namespace": "default", "labels": labels},
                "spec": spec, "status": status,
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn text_parsers_never_panic(text in texty(), millis in any::<bool>()) {
        let _ = quantity::parse_millis(&text);
        let _ = quantity::parse_units(&text);
        let _ = quantity::read_millis(&text);
        let _ = quantity::read_units(&text);
        let _ = quantity::read_limit(&text, millis);
        let _ = text.parse::<duration::GoDuration>();
        let _ = text.parse::<duration::NillableDuration>();
        if let Ok(c) = cron::Cron::parse(&text) {
            let now = jiff::Timestamp::MAX;
            let _ = c.active(now, i64::MAX);
            let _ = c.active(jiff::Timestamp::MIN, 3600);
        }
        let _ = taints::Taint::parse(&text);
        let _ = taints::Taint::parse_list(&text);
        let _ = labels::parse_label_list(&text);
    }

    #[test]
    fn requirements_never_panic(op in "[A-Za-z]{0,14}", values in prop::collection::vec(texty(), 0..4), value in proptest::option::of(texty())) {
        let op = labels::Operator::parse(&op).unwrap_or(labels::Operator::Gt);
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let r = labels::Requirement::new("k", op, &refs);
        let _ = r.matches_value(value.as_deref());
    }

    #[test]
    fn the_loader_and_a_plan_never_panic(objects in prop::collection::vec(object(), 1..8), as_yaml in any::<bool>()) {
        let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
        let text = if as_yaml {
            serde_saphyr::to_string(&list).unwrap_or_default()
        } else {
            list.to_string()
        };
        let source = Source { name: "fuzz".to_string(), text };
        if let Ok(parsed) = parse_source(&source) {
            let _ = build_snapshot(parsed.clone());
            let snapshot = build_snapshot_tolerant(parsed);
            prop_assert!(snapshot.is_ok(), "the tolerant build never fails");
            if let Ok(snapshot) = snapshot {
                let now: jiff::Timestamp = "2026-11-30T10:00:00Z".parse().unwrap();
                let _ = crate::controller::plan(&snapshot, now, &crate::controller::Config::default());
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics_the_loader(text in any::<String>()) {
        let _ = parse_source(&Source { name: "fuzz".to_string(), text });
    }
}
