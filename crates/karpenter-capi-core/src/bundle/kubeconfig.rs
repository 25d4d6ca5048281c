//! The kubeconfig `init kubeconfig` mints for the controller's management ServiceAccount from a
//! short-lived TokenRequest token, the workload Secret that carries it (with the token's expiry
//! as an annotation), and reading that expiry back for `doctor`. Pure: token, CA and times in,
//! YAML and dates out.

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use jiff::Timestamp;
use serde_json::{Value, json};

use crate::model::duration::GoDuration;

use crate::error::Error;
use crate::vocab::keys::TOKEN_EXPIRES_ANNOTATION;
use crate::vocab::names;

/// The token lifetime `init kubeconfig` asks for by default: 30 days.
pub const DEFAULT_TOKEN_DURATION: &str = "720h";
/// `doctor` warns when the controller's token expires within this many seconds (7 days).
pub(crate) const EXPIRY_WARNING_SECS: i64 = 7 * 24 * 3600;

/// What a kubeconfig for a ServiceAccount token needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenKubeconfig {
    /// The API server URL, as the controller reaches it.
    pub server: String,
    /// The cluster CA bundle (PEM), base64, if any.
    pub ca_base64: Option<String>,
    /// The bearer token (plain text).
    pub token: String,
    /// Reference the token by this path (`tokenFile`, reread by the client every minute) instead
    /// of inlining it: the in-cluster kubeconfig, whose token is the Secret's other key.
    pub token_file: Option<String>,
    /// The namespace the context defaults to (the Cluster API namespace).
    pub namespace: String,
    /// The ServiceAccount's name (names the user and context).
    pub user: String,
}

/// Renders the kubeconfig YAML.
pub fn render(k: &TokenKubeconfig) -> Result<String, Error> {
    let mut cluster = json!({"server": k.server});
    if let Some(ca) = &k.ca_base64 {
        cluster["certificate-authority-data"] = json!(ca);
    }
    let value = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "management", "cluster": cluster}],
        "users": [{"name": k.user, "user": match &k.token_file {
            Some(path) => json!({"tokenFile": path}),
            None => json!({"token": k.token}),
        }}],
        "contexts": [{"name": k.user, "context": {"cluster": "management", "user": k.user, "namespace": k.namespace}}],
        "current-context": k.user,
    });
    serde_saphyr::to_string(&value).map_err(|e| Error::Io(std::io::Error::other(e.to_string())))
}

/// What the controller's management-kubeconfig Secret holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerCredential {
    /// The kubeconfig (key [`names::MANAGEMENT_KUBECONFIG_KEY`]).
    pub(crate) kubeconfig: String,
    /// The token, when the kubeconfig reads it from the file of key
    /// [`names::MANAGEMENT_TOKEN_KEY`] (so a rotated token is picked up without a restart).
    pub(crate) token: Option<String>,
    /// When the token expires, for the [`TOKEN_EXPIRES_ANNOTATION`] annotation.
    pub(crate) expires: Option<Timestamp>,
}

impl ControllerCredential {
    /// A kubeconfig given whole (`init --controller-kubeconfig`): its token's `exp`, if any.
    pub fn from_kubeconfig(text: String) -> ControllerCredential {
        ControllerCredential {
            expires: kubeconfig_expiry(&text),
            kubeconfig: text,
            token: None,
        }
    }

    /// A minted token for the controller's ServiceAccount, as the in-cluster Secret holds it: a
    /// kubeconfig reading the token from the mounted file beside it.
    pub fn minted(k: &TokenKubeconfig, expires: Timestamp) -> Result<ControllerCredential, Error> {
        let in_cluster = TokenKubeconfig {
            token_file: Some(format!(
                "{}/{}",
                names::MANAGEMENT_KUBECONFIG_DIR,
                names::MANAGEMENT_TOKEN_KEY
            )),
            ..k.clone()
        };
        Ok(ControllerCredential {
            kubeconfig: render(&in_cluster)?,
            token: Some(k.token.clone()),
            expires: Some(expires),
        })
    }
}

/// The workload-cluster Secret holding the controller's management credential, as YAML (the
/// same object `templates/workload/secret.yaml.j2` renders).
pub fn secret(controller_namespace: &str, c: &ControllerCredential) -> Result<String, Error> {
    let mut metadata = json!({
        "name": names::MANAGEMENT_KUBECONFIG_SECRET,
        "namespace": controller_namespace,
        "labels": {"app.kubernetes.io/name": "karpenter-capi"},
    });
    if let Some(t) = c.expires {
        metadata["annotations"] = json!({TOKEN_EXPIRES_ANNOTATION: t.to_string()});
    }
    let mut data = json!({names::MANAGEMENT_KUBECONFIG_KEY: c.kubeconfig});
    if let Some(token) = &c.token {
        data[names::MANAGEMENT_TOKEN_KEY] = json!(token);
    }
    let value = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": metadata,
        "stringData": data,
    });
    serde_saphyr::to_string(&value).map_err(|e| Error::Io(std::io::Error::other(e.to_string())))
}

/// When a bearer token stops working, as far as the token itself says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenExpiry {
    /// A JWT with an `exp` claim.
    At(Timestamp),
    /// A JWT without `exp` (a legacy ServiceAccount token Secret's): valid until revoked.
    Never,
    /// Not a JWT (a static or opaque token): its lifetime is unknown here.
    Unknown,
}

/// Reads a JWT's `exp` claim, without verifying the signature (only the expiry is wanted, and
/// the API server is what verifies the token).
pub fn token_expiry(token: &str) -> TokenExpiry {
    let mut parts = token.trim().split('.');
    let (Some(_header), Some(payload), Some(_sig), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return TokenExpiry::Unknown;
    };
    let Some(claims) =
        base64_decode(payload).and_then(|b| serde_json::from_slice::<Value>(&b).ok())
    else {
        return TokenExpiry::Unknown;
    };
    if !claims.is_object() {
        return TokenExpiry::Unknown;
    }
    // `exp` is NumericDate: seconds, possibly fractional; out of range saturates.
    match claims.get("exp").and_then(Value::as_f64) {
        Some(exp) => {
            let secs = exp.floor().clamp(
                Timestamp::MIN.as_second() as f64,
                Timestamp::MAX.as_second() as f64,
            );
            TokenExpiry::At(Timestamp::from_second(secs as i64).unwrap_or(Timestamp::MAX))
        }
        None => TokenExpiry::Never,
    }
}

/// The bearer token of a kubeconfig's current context (else its only user); None when the
/// text is not a kubeconfig or the user authenticates otherwise (certificates, exec plugins).
pub fn kubeconfig_token(text: &str) -> Option<String> {
    let config: Value = serde_saphyr::from_str(text).ok()?;
    let users = config.get("users")?.as_array()?;
    let current_user = config
        .get("current-context")
        .and_then(Value::as_str)
        .and_then(|ctx| {
            config
                .get("contexts")?
                .as_array()?
                .iter()
                .find(|c| c.get("name").and_then(Value::as_str) == Some(ctx))?
                .pointer("/context/user")?
                .as_str()
        });
    let user = match current_user {
        Some(name) => users
            .iter()
            .find(|u| u.get("name").and_then(Value::as_str) == Some(name))?,
        None if users.len() == 1 => &users[0],
        None => return None,
    };
    user.pointer("/user/token")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The expiry to record for a kubeconfig given as text (`init --controller-kubeconfig`): its
/// token's `exp`, if any.
pub fn kubeconfig_expiry(text: &str) -> Option<Timestamp> {
    match token_expiry(&kubeconfig_token(text)?) {
        TokenExpiry::At(t) => Some(t),
        TokenExpiry::Never | TokenExpiry::Unknown => None,
    }
}

/// A CA bundle in PEM from DER certificates (kube's `Config::root_cert`), base64 as a
/// kubeconfig's `certificate-authority-data` holds it.
pub fn pem_base64(ders: &[Vec<u8>]) -> Option<String> {
    if ders.is_empty() {
        return None;
    }
    let mut pem = String::new();
    for der in ders {
        pem.push_str("-----BEGIN CERTIFICATE-----\n");
        let body = base64(der);
        for line in body.as_bytes().chunks(64) {
            pem.push_str(&String::from_utf8_lossy(line));
            pem.push('\n');
        }
        pem.push_str("-----END CERTIFICATE-----\n");
    }
    Some(base64(pem.as_bytes()))
}

/// Decoding accepts padded and unpadded text and ignores stray low bits, as tokens and Secret
/// data come in every form.
const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(true);
const STANDARD_ANY: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, LENIENT);
const URL_SAFE_ANY: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, LENIENT);

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes base64 in either alphabet (standard, or URL-safe as JWTs use), padded or not,
/// ignoring whitespace; None on any other character or an impossible length.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let clean: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    STANDARD_ANY
        .decode(&clean)
        .or_else(|_| URL_SAFE_ANY.decode(&clean))
        .ok()
}

/// The shortest token the API server issues (`expirationSeconds` must be at least 10 minutes).
pub(crate) const MIN_TOKEN_SECS: u64 = 600;

/// A token lifetime in seconds for `flag`, at least the API server's minimum.
pub fn token_seconds(d: GoDuration, flag: &str) -> Result<i64, Error> {
    if d.as_secs() < MIN_TOKEN_SECS {
        return Err(Error::usage(format!(
            "{flag} {d}: a ServiceAccount token lives at least 10m (the API server's minimum)"
        )));
    }
    Ok(d.as_secs_i64())
}

/// A note when the API server granted a shorter token than asked for (its
/// `--service-account-max-token-expiration` caps it); a minute of slack for the round trip.
pub fn capped_note(now: Timestamp, expires: Timestamp, asked: GoDuration) -> Option<String> {
    let wanted = now.as_second().saturating_add(asked.as_secs_i64());
    (expires.as_second() + 60 < wanted).then(|| {
        format!(
            "the API server issued the token until {expires}, shorter than the {asked} asked for (its --service-account-max-token-expiration); rotate before then"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JWT-shaped token with these claims (unsigned: only the payload is read).
    pub(crate) fn jwt(claims: &Value) -> String {
        let url = |b: &[u8]| {
            base64(b)
                .trim_end_matches('=')
                .replace('+', "-")
                .replace('/', "_")
        };
        format!(
            "{}.{}.c2ln",
            url(br#"{"alg":"RS256","kid":"k"}"#),
            url(claims.to_string().as_bytes())
        )
    }

    #[test]
    fn reads_the_expiry_of_a_jwt_without_verifying_it() {
        let exp = json!({"iss": "https://kubernetes.default.svc", "exp": 1_796_032_800, "sub": "system:serviceaccount:capi-ovh:x"});
        assert_eq!(
            token_expiry(&jwt(&exp)),
            TokenExpiry::At("2026-11-30T10:00:00Z".parse().unwrap())
        );
        // A legacy token Secret's JWT has no exp.
        assert_eq!(
            token_expiry(&jwt(&json!({"iss": "kubernetes/serviceaccount"}))),
            TokenExpiry::Never
        );
        assert_eq!(token_expiry("static-token"), TokenExpiry::Unknown);
        assert_eq!(token_expiry("a.!!!.c"), TokenExpiry::Unknown);
        assert_eq!(token_expiry(&jwt(&json!([1, 2]))), TokenExpiry::Unknown);
        // Year 300000: saturates instead of failing.
        assert_eq!(
            token_expiry(&jwt(&json!({"exp": 9.0e15}))),
            TokenExpiry::At("9999-12-30T22:00:00Z".parse().unwrap())
        );
        let kubeconfig = render(&TokenKubeconfig {
            server: "https://m".into(),
            ca_base64: None,
            token: jwt(&exp),
            token_file: None,
            namespace: "n".into(),
            user: "u".into(),
        })
        .unwrap();
        assert_eq!(
            kubeconfig_expiry(&kubeconfig),
            Some("2026-11-30T10:00:00Z".parse().unwrap())
        );
        assert_eq!(kubeconfig_expiry("not: [a kubeconfig"), None);
    }

    #[test]
    fn base64_round_trips_in_both_alphabets() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        for text in [&b""[..], b"f", b"fo", b"foo", b"\xfb\xff\xfe", b"foobar!"] {
            let enc = base64(text);
            assert_eq!(base64_decode(&enc).as_deref(), Some(text));
            let url = enc
                .trim_end_matches('=')
                .replace('+', "-")
                .replace('/', "_");
            assert_eq!(base64_decode(&url).as_deref(), Some(text));
        }
        assert_eq!(base64_decode("Z"), None);
        assert_eq!(base64_decode("Zm9v*"), None);
    }

    #[test]
    fn pem_bundle_from_der() {
        assert_eq!(pem_base64(&[]), None);
        let der = vec![0x30u8; 30];
        let pem = base64_decode(&pem_base64(std::slice::from_ref(&der)).unwrap()).unwrap();
        let pem = String::from_utf8(pem).unwrap();
        assert_eq!(
            pem,
            format!(
                "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
                base64(&der)
            )
        );
        // Long certificates wrap at 64 characters, as PEM parsers expect.
        let pem = base64_decode(&pem_base64(&[vec![0u8; 60]]).unwrap()).unwrap();
        let lines: Vec<usize> = String::from_utf8(pem)
            .unwrap()
            .lines()
            .map(str::len)
            .collect();
        assert_eq!(lines, vec![27, 64, 16, 25]);
    }
}
