//! Flavor specifications for `init`: the `--flavor NAME:key=value,...` notation, the `--flavors`
//! YAML list, and their validation into exact numbers. Pure: text in, values or errors out.
//!
//! # Errors
//! Every error names where the flavor came from (`--flavor c3-4:...` or `FILE: flavor 2`) and the
//! field that is wrong, so the message alone says what to fix.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::error::Error;
use crate::model::flavor::Price;
use crate::model::quantity;
use crate::model::taints::Taint;

/// The default pod capacity of a node (the kubelet's default `--max-pods`).
pub(crate) const DEFAULT_MAX_PODS: i64 = 110;
/// The default maximum size of a member MachineDeployment when `max=` is not given.
pub(crate) const DEFAULT_MAX: i64 = 10;
/// The default GPU resource when `gpu=` gives a bare count.
pub(crate) const DEFAULT_GPU_TYPE: &str = "nvidia.com/gpu";
/// Every key a flavor accepts, in the order the help text lists them.
pub(crate) const KEYS: &[&str] = &[
    "cpu",
    "memory",
    "price",
    "arch",
    "zone",
    "gpu",
    "max",
    "maxPods",
    "taints",
    "disk",
    "type",
    "capacityType",
];

/// A validated flavor: what one node of a member MachineDeployment offers and costs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FlavorSpec {
    /// The flavor's name (DNS-1123), used in object names.
    pub name: String,
    /// The provider's instance type (`type=`, default: the name).
    pub(crate) instance_type: String,
    /// CPU as written (a valid quantity), e.g. `"4"`.
    pub(crate) cpu: String,
    /// CPU in millicores.
    pub cpu_millis: i64,
    /// Memory as written, e.g. `"8Gi"`.
    pub(crate) memory: String,
    /// Memory in bytes.
    pub memory_bytes: i64,
    /// Price per hour as written, e.g. `"0.10"`.
    pub(crate) price: String,
    /// Price per hour, exact.
    #[serde(skip)]
    pub price_exact: Price,
    /// CPU architecture (`kubernetes.io/arch`), default `amd64`.
    pub arch: String,
    /// Zone (`topology.kubernetes.io/zone`), if known.
    pub(crate) zone: Option<String>,
    /// GPU count and resource name.
    pub(crate) gpu: Option<Gpu>,
    /// Maximum replicas of the member MachineDeployment.
    pub max: i64,
    /// Pod capacity of a node.
    pub max_pods: i64,
    /// Taints the flavor's nodes register with.
    pub(crate) taints: Vec<String>,
    /// Ephemeral disk as written, if given.
    pub(crate) disk: Option<String>,
    /// `karpenter.sh/capacity-type`: on-demand, spot or reserved.
    pub(crate) capacity_type: String,
}

/// GPUs of a flavor.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Gpu {
    /// How many.
    pub(crate) count: i64,
    /// The extended resource name, e.g. `nvidia.com/gpu`.
    pub(crate) resource: String,
}

/// Parses one `--flavor` value: `NAME:cpu=4,memory=8Gi,price=0.10[,key=value...]`. Several
/// taints are separated by `;` because `,` separates the fields.
pub fn parse_flag(text: &str) -> Result<FlavorSpec, Error> {
    let origin = format!("--flavor {text}");
    let bad = |field: &str, problem: String| flavor_error(&origin, field, problem);
    let (name, fields) = text.split_once(':').ok_or_else(|| {
        bad(
            "",
            "expected NAME:cpu=N,memory=Q,price=P (e.g. c3-8:cpu=4,memory=8G,price=0.10)"
                .to_string(),
        )
    })?;
    let mut pairs = Vec::new();
    for field in fields.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        let (key, value) = field.split_once('=').ok_or_else(|| {
            bad(
                field,
                format!("{field:?} is not key=value (keys: {})", KEYS.join(", ")),
            )
        })?;
        pairs.push((key.trim().to_string(), value.trim().to_string()));
    }
    build(&origin, name.trim(), pairs)
}

/// Parses a `--flavors` file: a YAML list of mappings with `name` and the same keys as `--flavor`
/// (`taints` may also be a list).
pub fn parse_file(path: &str, text: &str) -> Result<Vec<FlavorSpec>, Error> {
    let input = |problem: String| Error::Input {
        path: path.to_string(),
        problem,
    };
    let value: Value =
        serde_saphyr::from_str(text).map_err(|e| input(format!("not valid YAML: {e}")))?;
    let items =
        match value {
            Value::Array(items) => items,
            Value::Null => Vec::new(),
            _ => return Err(input(
                "expected a YAML list of flavors (- name: c3-8, cpu: 4, memory: 8G, price: 0.10)"
                    .to_string(),
            )),
        };
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let origin = format!("{path}: flavor {}", i + 1);
        let Value::Object(map) = item else {
            return Err(flavor_error(
                &origin,
                "",
                "expected a mapping with name, cpu, memory and price".to_string(),
            ));
        };
        let mut name = None;
        let mut pairs = Vec::new();
        for (key, value) in map {
            let text = match (key.as_str(), &value) {
                ("taints", Value::Array(list)) => {
                    let parts: Result<Vec<String>, Error> = list
                        .iter()
                        .map(|t| {
                            scalar(&t.clone()).ok_or_else(|| {
                                flavor_error(&origin, "taints", "expected strings".to_string())
                            })
                        })
                        .collect();
                    parts?.join(";")
                }
                _ => scalar(&value).ok_or_else(|| {
                    flavor_error(&origin, &key, "expected a string or a number".to_string())
                })?,
            };
            if key == "name" {
                name = Some(text);
            } else {
                pairs.push((key, text));
            }
        }
        let name = name.ok_or_else(|| flavor_error(&origin, "name", "missing".to_string()))?;
        let origin = format!("{origin} ({name})");
        out.push(build(&origin, &name, pairs)?);
    }
    Ok(out)
}

/// Checks a whole catalog: at least one flavor, no duplicate names or instance types.
pub(crate) fn validate_catalog(flavors: &[FlavorSpec]) -> Result<(), Error> {
    if flavors.is_empty() {
        return Err(Error::usage(
            "no flavor given: pass --flavor NAME:cpu=N,memory=Q,price=P (repeatable) or --flavors FILE",
        ));
    }
    let mut names = BTreeSet::new();
    let mut types = BTreeSet::new();
    for f in flavors {
        if !names.insert(f.name.as_str()) {
            return Err(Error::usage(format!(
                "duplicate flavor name {:?}: each --flavor/--flavors entry needs its own name",
                f.name
            )));
        }
        if !types.insert(f.instance_type.as_str()) {
            return Err(Error::usage(format!(
                "flavor {:?}: instance type {:?} is already offered by another flavor",
                f.name, f.instance_type
            )));
        }
    }
    Ok(())
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn flavor_error(origin: &str, field: &str, problem: String) -> Error {
    let problem = if field.is_empty() {
        problem
    } else {
        format!("{field}: {problem}")
    };
    Error::Input {
        path: origin.to_string(),
        problem,
    }
}

fn build(origin: &str, name: &str, pairs: Vec<(String, String)>) -> Result<FlavorSpec, Error> {
    let bad = |field: &str, problem: String| flavor_error(origin, field, problem);
    check_dns_subdomain(name).map_err(|p| bad("name", p))?;
    let mut seen = BTreeSet::new();
    let mut get = std::collections::BTreeMap::new();
    for (key, value) in pairs {
        if !KEYS.contains(&key.as_str()) {
            return Err(bad(
                &key,
                format!("unknown key (valid: {})", KEYS.join(", ")),
            ));
        }
        if !seen.insert(key.clone()) {
            return Err(bad(&key, "given twice".to_string()));
        }
        get.insert(key, value);
    }
    let required = |key: &str| -> Result<String, Error> {
        get.get(key)
            .filter(|v| !v.is_empty())
            .cloned()
            .ok_or_else(|| {
                bad(
                    key,
                    "missing (cpu, memory and price are required)".to_string(),
                )
            })
    };
    let cpu = required("cpu")?;
    let cpu_millis = quantity::parse_millis(&cpu).map_err(|e| bad("cpu", e.to_string()))?;
    if cpu_millis <= 0 {
        return Err(bad("cpu", "must be greater than zero".to_string()));
    }
    let memory = required("memory")?;
    let memory_bytes = quantity::parse_units(&memory).map_err(|e| bad("memory", e.to_string()))?;
    if memory_bytes <= 0 {
        return Err(bad("memory", "must be greater than zero".to_string()));
    }
    let price = required("price")?;
    let price_exact = Price::parse(&price).map_err(|e| bad("price", e))?;
    let integer = |key: &str, default: i64, min: i64| -> Result<i64, Error> {
        match get.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse::<i64>()
                .ok()
                .filter(|n| *n >= min)
                .ok_or_else(|| bad(key, format!("{v:?} is not an integer >= {min}"))),
        }
    };
    let max = integer("max", DEFAULT_MAX, 1)?;
    let max_pods = integer("maxPods", DEFAULT_MAX_PODS, 1)?;
    let arch = get
        .get("arch")
        .cloned()
        .unwrap_or_else(|| "amd64".to_string());
    check_label_value(&arch).map_err(|p| bad("arch", p))?;
    let zone = get.get("zone").cloned();
    if let Some(z) = &zone {
        check_label_value(z).map_err(|p| bad("zone", p))?;
    }
    let instance_type = get.get("type").cloned().unwrap_or_else(|| name.to_string());
    check_label_value(&instance_type).map_err(|p| bad("type", p))?;
    let capacity_type = get
        .get("capacityType")
        .cloned()
        .unwrap_or_else(|| "on-demand".to_string());
    if !["on-demand", "spot", "reserved"].contains(&capacity_type.as_str()) {
        return Err(bad(
            "capacityType",
            format!("{capacity_type:?} is not one of on-demand, spot, reserved"),
        ));
    }
    let gpu = match get.get("gpu") {
        None => None,
        Some(v) => {
            let (resource, count) = v.rsplit_once(':').unwrap_or((DEFAULT_GPU_TYPE, v));
            let count = count
                .parse::<i64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    bad(
                        "gpu",
                        format!("{v:?}: expected COUNT or RESOURCE:COUNT, e.g. 1 or amd.com/gpu:2"),
                    )
                })?;
            if resource.is_empty() || !resource.contains('/') {
                return Err(bad(
                    "gpu",
                    format!("{v:?}: the resource name needs a domain, e.g. nvidia.com/gpu"),
                ));
            }
            Some(Gpu {
                count,
                resource: resource.to_string(),
            })
        }
    };
    let disk = match get.get("disk") {
        None => None,
        Some(v) => {
            quantity::parse_units(v).map_err(|e| bad("disk", e.to_string()))?;
            Some(v.clone())
        }
    };
    let mut taints = Vec::new();
    for t in get
        .get("taints")
        .map(String::as_str)
        .unwrap_or("")
        .split(';')
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        taints.push(Taint::parse(t).map_err(|e| bad("taints", e))?.to_string());
    }
    Ok(FlavorSpec {
        name: name.to_string(),
        instance_type,
        cpu,
        cpu_millis,
        memory,
        memory_bytes,
        price,
        price_exact,
        arch,
        zone,
        gpu,
        max,
        max_pods,
        taints,
        disk,
        capacity_type,
    })
}

/// A DNS-1123 label: 1–63 lowercase alphanumerics or `-`, starting and ending alphanumeric.
pub fn check_dns_label(text: &str) -> Result<(), String> {
    let ok_chars = text
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let ends = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if text.is_empty()
        || text.len() > 63
        || !ok_chars
        || !ends(text.bytes().next())
        || !ends(text.bytes().last())
    {
        return Err(format!(
            "{text:?} is not a DNS-1123 label (1-63 lowercase letters, digits or '-', starting and ending with a letter or digit)"
        ));
    }
    Ok(())
}

/// A DNS-1123 subdomain: dot-separated DNS-1123 labels, at most 253 characters.
pub(crate) fn check_dns_subdomain(text: &str) -> Result<(), String> {
    if text.is_empty() || text.len() > 253 || text.split('.').any(|l| check_dns_label(l).is_err()) {
        return Err(format!(
            "{text:?} is not a DNS-1123 name (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)"
        ));
    }
    Ok(())
}

/// A label value: at most 63 characters of alphanumerics, `-`, `_`, `.`, starting and ending
/// alphanumeric (or empty).
pub(crate) fn check_label_value(text: &str) -> Result<(), String> {
    match crate::model::pool_validation::label_value_problem(text) {
        None => Ok(()),
        Some(_) => Err(format!(
            "{text:?} is not a valid label value (at most 63 letters, digits, '-', '_' or '.')"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_full_flag() {
        let f = parse_flag(
            "g4-16:cpu=4,memory=16Gi,price=0.90,arch=arm64,zone=gra9,gpu=2,max=3,maxPods=58,taints=gpu=true:NoSchedule;x:NoExecute,disk=100Gi,capacityType=spot",
        )
        .unwrap();
        assert_eq!(f.name, "g4-16");
        assert_eq!(f.instance_type, "g4-16");
        assert_eq!((f.cpu_millis, f.memory_bytes), (4000, 16 << 30));
        assert_eq!(f.price_exact, Price(900_000_000));
        assert_eq!(f.arch, "arm64");
        assert_eq!(f.zone.as_deref(), Some("gra9"));
        assert_eq!(
            f.gpu,
            Some(Gpu {
                count: 2,
                resource: "nvidia.com/gpu".to_string()
            })
        );
        assert_eq!((f.max, f.max_pods), (3, 58));
        assert_eq!(
            f.taints,
            vec!["gpu=true:NoSchedule".to_string(), "x:NoExecute".to_string()]
        );
        assert_eq!(f.disk.as_deref(), Some("100Gi"));
        assert_eq!(f.capacity_type, "spot");
    }

    #[test]
    fn defaults() {
        let f = parse_flag("c3-4:cpu=2,memory=4G,price=0.05").unwrap();
        assert_eq!(
            (f.arch.as_str(), f.max, f.max_pods, f.capacity_type.as_str()),
            ("amd64", 10, 110, "on-demand")
        );
        assert_eq!((f.zone, f.gpu, f.disk), (None, None, None));
    }

    #[test]
    fn rejects_bad_specs_with_the_field() {
        let cases = [
            (
                "c3-4",
                "--flavor c3-4: expected NAME:cpu=N,memory=Q,price=P (e.g. c3-8:cpu=4,memory=8G,price=0.10)",
            ),
            (
                "c3-4:cpu=2,memory=4G",
                "--flavor c3-4:cpu=2,memory=4G: price: missing (cpu, memory and price are required)",
            ),
            (
                "c3-4:cpu=2x,memory=4G,price=1",
                "--flavor c3-4:cpu=2x,memory=4G,price=1: cpu: invalid quantity \"2x\"",
            ),
            (
                "C3_4:cpu=2,memory=4G,price=1",
                "--flavor C3_4:cpu=2,memory=4G,price=1: name: \"C3_4\" is not a DNS-1123 name",
            ),
            (
                "a:cpu=2,memory=4G,price=1,color=red",
                "--flavor a:cpu=2,memory=4G,price=1,color=red: color: unknown key",
            ),
            (
                "a:cpu=2,memory=4G,price=-1",
                "--flavor a:cpu=2,memory=4G,price=-1: price: invalid price \"-1\"",
            ),
            (
                "a:cpu=2,memory=4G,price=1,taints=x",
                "--flavor a:cpu=2,memory=4G,price=1,taints=x: taints: taint \"x\" has no effect",
            ),
            (
                "a:cpu=2,memory=4G,price=1,max=0",
                "--flavor a:cpu=2,memory=4G,price=1,max=0: max: \"0\" is not an integer >= 1",
            ),
            (
                "a:cpu=0,memory=4G,price=1",
                "--flavor a:cpu=0,memory=4G,price=1: cpu: must be greater than zero",
            ),
            (
                "a:cpu=1,cpu=2,memory=4G,price=1",
                "--flavor a:cpu=1,cpu=2,memory=4G,price=1: cpu: given twice",
            ),
        ];
        for (spec, want) in cases {
            let got = parse_flag(spec).unwrap_err().to_string();
            assert!(got.starts_with(want), "{spec}: {got}");
        }
    }

    #[test]
    fn parses_a_file_with_numbers_and_taint_lists() {
        let text = "- name: c3-4\n  cpu: 2\n  memory: 4G\n  price: 0.05\n- name: c3-8\n  cpu: '4'\n  memory: 8G\n  price: 0.10\n  taints: [a=b:NoSchedule, c:NoExecute]\n";
        let flavors = parse_file("f.yaml", text).unwrap();
        assert_eq!(flavors.len(), 2);
        assert_eq!(flavors[0].cpu, "2");
        assert_eq!(flavors[0].price_exact, Price(50_000_000));
        assert_eq!(flavors[1].price_exact, Price(100_000_000));
        assert_eq!(
            flavors[1].taints,
            vec!["a=b:NoSchedule".to_string(), "c:NoExecute".to_string()]
        );
        let err = parse_file("f.yaml", "- cpu: 2\n").unwrap_err().to_string();
        assert_eq!(err, "f.yaml: flavor 1: name: missing");
        let err = parse_file("f.yaml", "- name: x\n  cpu: 2\n  memory: 4G\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "f.yaml: flavor 1 (x): price: missing (cpu, memory and price are required)"
        );
        let err = parse_file("f.yaml", "name: x\n").unwrap_err().to_string();
        assert!(
            err.starts_with("f.yaml: expected a YAML list of flavors"),
            "{err}"
        );
    }

    #[test]
    fn catalog_rejects_duplicates_and_emptiness() {
        let a = parse_flag("a:cpu=1,memory=1G,price=1").unwrap();
        let err = validate_catalog(&[a.clone(), a.clone()])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "duplicate flavor name \"a\": each --flavor/--flavors entry needs its own name"
        );
        assert!(
            validate_catalog(&[])
                .unwrap_err()
                .to_string()
                .starts_with("no flavor given")
        );
        let b = parse_flag("b:cpu=1,memory=1G,price=1,type=a").unwrap();
        assert!(
            validate_catalog(&[a, b])
                .unwrap_err()
                .to_string()
                .contains("instance type \"a\"")
        );
    }

    #[test]
    fn dns_names() {
        assert!(check_dns_label("capi-ovh").is_ok());
        assert!(check_dns_label("-a").is_err());
        assert!(check_dns_label("a_b").is_err());
        assert!(check_dns_label(&"a".repeat(64)).is_err());
        assert!(check_dns_subdomain("m5.large").is_ok());
        assert!(check_dns_subdomain("m5..large").is_err());
        assert!(check_label_value("Standard_D2s_v3").is_ok());
        assert!(check_label_value("a b").is_err());
    }
}
