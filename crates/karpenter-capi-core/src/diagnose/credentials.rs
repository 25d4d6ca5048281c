//! The controller's credentials for the management cluster: when the token in its kubeconfig
//! Secret expires (the [`TOKEN_EXPIRES_ANNOTATION`] annotation `init kubeconfig` writes, else
//! the token's own JWT `exp`, read without verifying it), and long-lived tokens: a kubeconfig
//! whose token never expires, or a `kubernetes.io/service-account-token` Secret of the
//! autoscaler's ServiceAccount, valid until someone deletes it.

use jiff::Timestamp;
use serde_json::Value;

use super::{Area, Cause, Finding, Severity, format_secs, subject};
use crate::bundle::kubeconfig::{EXPIRY_WARNING_SECS, TokenExpiry, base64_decode, token_expiry};
use crate::model::object::{RawObject, annotation, labels_of};
use crate::model::snapshot::Snapshot;
use crate::vocab::keys::TOKEN_EXPIRES_ANNOTATION;
use crate::vocab::names;

const AREA: Area = Area::Access;
pub use crate::vocab::keys::LEGACY_TOKEN_TYPE;
use crate::vocab::keys::SERVICE_ACCOUNT_ANNOTATION;
/// `init`'s management ServiceAccount is `<cluster>` plus this.
const IDENTITY_SUFFIX: &str = "-karpenter-capi";

/// Runs the credential checks.
pub(crate) fn check(snapshot: &Snapshot, now: Timestamp, out: &mut Vec<Finding>) {
    let autoscaler_accounts: Vec<String> = super::access::identities_from_rbac(snapshot)
        .into_iter()
        .filter_map(|id| {
            id.subject
                .strip_prefix("ServiceAccount/")
                .map(str::to_string)
        })
        .collect();
    for secret in snapshot
        .objects_of("Secret")
        .filter(|o| o.group().is_empty())
    {
        if let Some(text) = kubeconfig_of(secret) {
            // The kubeconfig's own token, else the Secret's `token` (its `tokenFile`).
            let token = crate::bundle::kubeconfig::kubeconfig_token(&text)
                .or_else(|| key_of(secret, names::MANAGEMENT_TOKEN_KEY));
            out.extend(judge_kubeconfig(secret, &text, token, now));
        } else if secret.value.get("type").and_then(Value::as_str) == Some(LEGACY_TOKEN_TYPE) {
            out.extend(judge_token_secret(secret, &autoscaler_accounts));
        }
    }
}

/// The kubeconfig a Secret holds for the controller: ours by name, or any Secret of ours
/// (labelled `app.kubernetes.io/name: karpenter-capi`) with a `kubeconfig` key.
fn kubeconfig_of(secret: &RawObject) -> Option<String> {
    let ours = secret.name() == names::MANAGEMENT_KUBECONFIG_SECRET
        || labels_of(&secret.meta)
            .get("app.kubernetes.io/name")
            .is_some_and(|v| v == "karpenter-capi");
    if !ours {
        return None;
    }
    key_of(secret, names::MANAGEMENT_KUBECONFIG_KEY)
}

/// A Secret's value for `key`, from `stringData` (a file) or `data` (base64, as the API serves it).
fn key_of(secret: &RawObject, key: &str) -> Option<String> {
    if let Some(text) = secret
        .value
        .pointer(&format!("/stringData/{key}"))
        .and_then(Value::as_str)
    {
        return Some(text.to_string());
    }
    let data = secret.value.pointer(&format!("/data/{key}"))?.as_str()?;
    String::from_utf8(base64_decode(data)?).ok()
}

/// The Cluster API namespace and Cluster a management kubeconfig is for (its context's namespace,
/// its user `<cluster>-karpenter-capi`), for the rotation command.
fn kubeconfig_target(text: &str) -> (String, String) {
    let config: Value = serde_saphyr::from_str(text).unwrap_or(Value::Null);
    let context = config
        .get("contexts")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get("context"));
    let field = |k: &str| {
        context
            .and_then(|c| c.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let namespace = field("namespace").unwrap_or_else(|| "CAPI_NAMESPACE".to_string());
    let cluster = field("user")
        .and_then(|u| u.strip_suffix(IDENTITY_SUFFIX).map(str::to_string))
        .unwrap_or_else(|| "CLUSTER".to_string());
    (namespace, cluster)
}

fn judge_kubeconfig(
    secret: &RawObject,
    text: &str,
    token: Option<String>,
    now: Timestamp,
) -> Option<Finding> {
    let subj = subject("Secret", secret.namespace(), secret.name());
    let (capi_ns, cluster) = kubeconfig_target(text);
    let rotate = format!(
        "rotate it: `kubectl karpenter-capi init kubeconfig -n {capi_ns} --cluster-name {cluster} --secret --controller-namespace {} | kubectl apply -f -` (the controller picks the new token up within about two minutes)",
        secret.namespace()
    );
    let annotated = annotation(&secret.meta, TOKEN_EXPIRES_ANNOTATION)
        .and_then(|t| t.parse::<Timestamp>().ok());
    // The annotation is what `init kubeconfig` was told; the token's own exp is the truth when
    // both exist and differ (someone edited one of them), so it wins.
    let expiry = match (token.as_deref().map(token_expiry), annotated) {
        (Some(TokenExpiry::At(t)), _) => TokenExpiry::At(t),
        (Some(TokenExpiry::Never), _) => TokenExpiry::Never,
        (_, Some(t)) => TokenExpiry::At(t),
        (Some(TokenExpiry::Unknown), None) => TokenExpiry::Unknown,
        // Certificates or an exec plugin: nothing this check can judge.
        (None, None) => return None,
    };
    let finding = |cause, severity, message: String, remedy: String| {
        Some(Finding::new(
            AREA,
            cause,
            severity,
            subj.clone(),
            message,
            remedy,
        ))
    };
    match expiry {
        TokenExpiry::At(t) if t <= now => finding(
            Cause::ManagementTokenExpired,
            Severity::Error,
            format!(
                "the controller's management token expired at {t} ({} ago): every call to the management cluster is refused (401)",
                format_secs(now.as_second().saturating_sub(t.as_second()))
            ),
            rotate,
        ),
        TokenExpiry::At(t) if t.as_second().saturating_sub(now.as_second()) <= EXPIRY_WARNING_SECS => {
            finding(
                Cause::ManagementTokenExpiring,
                Severity::Warning,
                format!(
                    "the controller's management token expires at {t}, in {}",
                    format_secs(t.as_second().saturating_sub(now.as_second()))
                ),
                rotate,
            )
        }
        TokenExpiry::At(t) => finding(
            Cause::ManagementTokenOk,
            Severity::Ok,
            format!(
                "the controller's management token expires at {t}, in {}",
                format_secs(t.as_second().saturating_sub(now.as_second()))
            ),
            String::new(),
        ),
        TokenExpiry::Never => finding(
            Cause::LongLivedToken,
            Severity::Warning,
            "the controller's management kubeconfig holds a token without expiry (a legacy ServiceAccount token Secret's): it stays valid until that Secret is deleted".to_string(),
            format!("replace it with a short-lived token, then delete the token Secret; {rotate}"),
        ),
        TokenExpiry::Unknown => finding(
            Cause::LongLivedToken,
            Severity::Warning,
            format!(
                "the controller's management kubeconfig holds a token that is not a JWT and has no {TOKEN_EXPIRES_ANNOTATION} annotation: its lifetime is unknown"
            ),
            format!("use a short-lived ServiceAccount token; {rotate}"),
        ),
    }
}

/// A legacy token Secret of the autoscaler's management ServiceAccount: an autoscaler identity
/// of the RBAC objects, `init`'s `<cluster>-karpenter-capi`, or labelled as ours.
fn judge_token_secret(secret: &RawObject, autoscaler_accounts: &[String]) -> Option<Finding> {
    let account = annotation(&secret.meta, SERVICE_ACCOUNT_ANNOTATION)?;
    let ns = secret.namespace();
    let ours = autoscaler_accounts.contains(&format!("{ns}/{account}"))
        || account.ends_with(IDENTITY_SUFFIX)
        || labels_of(&secret.meta)
            .get("app.kubernetes.io/name")
            .is_some_and(|v| v == "karpenter-capi");
    if !ours {
        return None;
    }
    Some(Finding::new(
        AREA,
        Cause::LongLivedToken,
        Severity::Warning,
        subject("Secret", ns, secret.name()),
        format!(
            "a long-lived token Secret of ServiceAccount {ns}/{account}: its token never expires, and whoever can read Secrets in {ns} can act as the autoscaler"
        ),
        format!(
            "give the controller a short-lived token (`kubectl karpenter-capi init kubeconfig -n {ns} --cluster-name {} --secret | kubectl apply -f -`), then `kubectl delete secret -n {ns} {}`",
            account.strip_suffix(IDENTITY_SUFFIX).unwrap_or("CLUSTER"),
            secret.name()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn jwt(claims: &Value) -> String {
        let url = |b: &[u8]| {
            crate::bundle::kubeconfig::base64(b)
                .trim_end_matches('=')
                .replace('+', "-")
                .replace('/', "_")
        };
        format!(
            "{}.{}.c2ln",
            url(br#"{"alg":"RS256"}"#),
            url(claims.to_string().as_bytes())
        )
    }

    fn kubeconfig(token: &str) -> String {
        crate::bundle::kubeconfig::render(&crate::bundle::kubeconfig::TokenKubeconfig {
            server: "https://mgmt:6443".into(),
            ca_base64: None,
            token: token.into(),
            token_file: None,
            namespace: "capi-ovh".into(),
            user: "capi-ovh-karpenter-capi".into(),
        })
        .unwrap()
    }

    fn secret(value: Value) -> RawObject {
        RawObject::from_value(value, "test").unwrap()
    }

    fn kubeconfig_secret(token: &str, annotation: Option<&str>, as_data: bool) -> RawObject {
        let text = kubeconfig(token);
        let mut v = json!({
            "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": "karpenter-capi-management-kubeconfig", "namespace": "karpenter-capi"},
        });
        if as_data {
            v["data"] = json!({"kubeconfig": crate::bundle::kubeconfig::base64(text.as_bytes())});
        } else {
            v["stringData"] = json!({"kubeconfig": text});
        }
        if let Some(a) = annotation {
            v["metadata"]["annotations"] = json!({TOKEN_EXPIRES_ANNOTATION: a});
        }
        secret(v)
    }

    fn run(objects: Vec<RawObject>, now: &str) -> Vec<(Cause, Severity, String, String)> {
        let snapshot = Snapshot {
            objects,
            ..Snapshot::default()
        };
        let mut out = Vec::new();
        check(&snapshot, now.parse().unwrap(), &mut out);
        out.into_iter()
            .map(|f| (f.cause, f.severity, f.subject, f.message))
            .collect()
    }

    const ROTATE: &str = "rotate it: `kubectl karpenter-capi init kubeconfig -n capi-ovh --cluster-name capi-ovh --secret --controller-namespace karpenter-capi | kubectl apply -f -` (the controller picks the new token up within about two minutes)";

    #[test]
    fn warns_within_seven_days_of_expiry_and_errs_after() {
        // exp 2026-12-30T10:00:00Z.
        let token = jwt(&json!({"exp": 1_798_624_800}));
        let s = || vec![kubeconfig_secret(&token, None, true)];
        let subj = "Secret/karpenter-capi/karpenter-capi-management-kubeconfig".to_string();
        assert_eq!(
            run(s(), "2026-11-30T10:00:00Z"),
            vec![(
                Cause::ManagementTokenOk,
                Severity::Ok,
                subj.clone(),
                "the controller's management token expires at 2026-12-30T10:00:00Z, in 720h"
                    .to_string()
            )]
        );
        assert_eq!(
            run(s(), "2026-12-23T10:00:00Z"),
            vec![(
                Cause::ManagementTokenExpiring,
                Severity::Warning,
                subj.clone(),
                "the controller's management token expires at 2026-12-30T10:00:00Z, in 168h"
                    .to_string()
            )]
        );
        assert_eq!(
            run(s(), "2026-12-23T09:59:59Z")[0].0,
            Cause::ManagementTokenOk
        );
        assert_eq!(
            run(s(), "2026-12-30T11:30:00Z"),
            vec![(
                Cause::ManagementTokenExpired,
                Severity::Error,
                subj,
                "the controller's management token expired at 2026-12-30T10:00:00Z (1h30m ago): every call to the management cluster is refused (401)".to_string()
            )]
        );
        let snapshot = Snapshot {
            objects: s(),
            ..Snapshot::default()
        };
        let mut out = Vec::new();
        check(&snapshot, "2026-12-29T10:00:00Z".parse().unwrap(), &mut out);
        assert_eq!(out[0].remedy, ROTATE);
    }

    #[test]
    fn a_minted_secret_is_judged_by_its_token_key() {
        // As `init kubeconfig --secret` writes it: the kubeconfig's tokenFile is the `token` key.
        let k = crate::bundle::kubeconfig::TokenKubeconfig {
            server: "https://mgmt:6443".into(),
            ca_base64: None,
            token: jwt(&json!({"exp": 1_798_624_800})),
            token_file: None,
            namespace: "capi-ovh".into(),
            user: "capi-ovh-karpenter-capi".into(),
        };
        // The annotation says otherwise: the token's own exp wins.
        let c = crate::bundle::kubeconfig::ControllerCredential::minted(
            &k,
            "2027-01-01T00:00:00Z".parse().unwrap(),
        )
        .unwrap();
        let text = crate::bundle::kubeconfig::secret("karpenter-capi", &c).unwrap();
        let found = run(
            vec![secret(serde_saphyr::from_str(&text).unwrap())],
            "2026-12-29T10:00:00Z",
        );
        assert_eq!(
            found,
            vec![(
                Cause::ManagementTokenExpiring,
                Severity::Warning,
                "Secret/karpenter-capi/karpenter-capi-management-kubeconfig".to_string(),
                "the controller's management token expires at 2026-12-30T10:00:00Z, in 24h"
                    .to_string()
            )]
        );
    }

    #[test]
    fn the_annotation_is_read_when_the_token_says_nothing() {
        let found = run(
            vec![kubeconfig_secret(
                "opaque-token",
                Some("2026-12-01T10:00:00Z"),
                false,
            )],
            "2026-11-30T10:00:00Z",
        );
        assert_eq!(found[0].0, Cause::ManagementTokenExpiring);
        assert_eq!(
            found[0].3,
            "the controller's management token expires at 2026-12-01T10:00:00Z, in 24h"
        );
    }

    #[test]
    fn flags_long_lived_tokens() {
        let never = jwt(&json!({"iss": "kubernetes/serviceaccount"}));
        let found = run(
            vec![
                kubeconfig_secret(&never, None, false),
                secret(json!({
                    "apiVersion": "v1", "kind": "Secret", "type": LEGACY_TOKEN_TYPE,
                    "metadata": {"name": "capi-ovh-karpenter-capi-token", "namespace": "capi-ovh",
                        "annotations": {SERVICE_ACCOUNT_ANNOTATION: "capi-ovh-karpenter-capi"}},
                })),
                // Someone else's token Secret is not ours to judge.
                secret(json!({
                    "apiVersion": "v1", "kind": "Secret", "type": LEGACY_TOKEN_TYPE,
                    "metadata": {"name": "ci-token", "namespace": "capi-ovh",
                        "annotations": {SERVICE_ACCOUNT_ANNOTATION: "ci"}},
                })),
                kubeconfig_secret("static", None, false),
            ],
            "2026-11-30T10:00:00Z",
        );
        assert_eq!(
            found,
            vec![
                (
                    Cause::LongLivedToken,
                    Severity::Warning,
                    "Secret/karpenter-capi/karpenter-capi-management-kubeconfig".to_string(),
                    "the controller's management kubeconfig holds a token without expiry (a legacy ServiceAccount token Secret's): it stays valid until that Secret is deleted".to_string()
                ),
                (
                    Cause::LongLivedToken,
                    Severity::Warning,
                    "Secret/capi-ovh/capi-ovh-karpenter-capi-token".to_string(),
                    "a long-lived token Secret of ServiceAccount capi-ovh/capi-ovh-karpenter-capi: its token never expires, and whoever can read Secrets in capi-ovh can act as the autoscaler".to_string()
                ),
                (
                    Cause::LongLivedToken,
                    Severity::Warning,
                    "Secret/karpenter-capi/karpenter-capi-management-kubeconfig".to_string(),
                    "the controller's management kubeconfig holds a token that is not a JWT and has no karpenter-capi.sh/token-expires annotation: its lifetime is unknown".to_string()
                ),
            ]
        );
    }
}
