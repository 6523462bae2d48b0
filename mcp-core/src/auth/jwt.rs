//! JWT access tokens (RFC 9068), verified against the keys their issuer publishes.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};

use super::cache::TokenCache;
use super::{AuthInfo, DEFAULT_CACHE_TTL, DEFAULT_LEEWAY, TokenError, TokenVerifier, fetch};
use crate::engine::BoxFuture;

/// How soon the keys are asked for again while none could be fetched yet.
const RETRY_WITHOUT_KEYS: Duration = Duration::from_secs(2);

/// The longest token looked at; a longer one is refused unread.
pub(crate) const MAX_TOKEN: usize = 8 * 1024;

/// The signature algorithms accepted: asymmetric ones only. `none` is not an algorithm
/// `jsonwebtoken` parses, and HMAC is refused outright, so a token "signed" with the issuer's
/// public key as an HMAC secret never reaches a key.
const ASYMMETRIC: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Verifies JWT access tokens (RFC 9068) issued by one authorization server.
///
/// The issuer's keys are found through its metadata (RFC 8414
/// `/.well-known/oauth-authorization-server`, then OpenID Connect's
/// `/.well-known/openid-configuration`) unless [`jwks_uri`](Self::jwks_uri) names them, fetched
/// on the first token, and fetched again when a token names a key id not known — at most once per
/// [`refetch_interval`](Self::refetch_interval), so tokens with made-up key ids cannot make the
/// server hammer the issuer. A token is accepted when its signature verifies with an asymmetric
/// algorithm (`RS*`, `PS*`, `ES256`, `ES384`, `EdDSA`), its `iss` is the issuer, its `aud` names
/// this server's resource (RFC 8707), it has a `sub`, and `exp`/`nbf` hold within a small clock
/// skew, and its header's `typ` is `at+jwt` (RFC 9068 section 2.1: an ID token or another JWT
/// the issuer signs is not an access token; see
/// [`accept_any_token_type`](Self::accept_any_token_type) for issuers that do not set it).
/// Verified tokens are remembered for a short while (by digest), so a client's requests do
/// not each pay for a signature check.
#[derive(Clone)]
pub struct JwtVerifier {
    issuer: String,
    jwks_uri: Option<String>,
    refetch_interval: Duration,
    leeway: Duration,
    cache_ttl: Duration,
    /// Whether the header's `typ` must say the token is an access token (RFC 9068).
    require_access_token_type: bool,
    /// Shared by clones.
    inner: Arc<Inner>,
}

struct Inner {
    /// Where the keys are, once known.
    jwks_uri: RwLock<Option<String>>,
    client: reqwest::Client,
    keys: RwLock<Arc<KeySet>>,
    /// When the keys were last fetched (or the fetch was last tried).
    fetched: tokio::sync::Mutex<Option<Instant>>,
    cache: TokenCache,
}

impl Inner {
    fn new(roots: &fetch::Roots) -> Self {
        Inner {
            jwks_uri: RwLock::new(None),
            client: fetch::client(Duration::from_secs(10), roots),
            keys: RwLock::default(),
            fetched: tokio::sync::Mutex::new(None),
            cache: TokenCache::new(),
        }
    }
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier").field("issuer", &self.issuer).finish_non_exhaustive()
    }
}

/// One usable key of the issuer.
struct Key {
    key: DecodingKey,
    /// The algorithm the key declares, if it does.
    alg: Option<Algorithm>,
}

#[derive(Default)]
struct KeySet {
    by_kid: HashMap<String, Arc<Key>>,
    /// Keys without a `kid`: tried for tokens without one.
    anonymous: Vec<Arc<Key>>,
}

impl KeySet {
    /// Builds the set from a JWKS document, keeping only public signature keys (a symmetric
    /// key in a JWKS is ignored: it would let anyone who read it sign tokens).
    fn from_document(doc: &serde_json::Value) -> Self {
        let mut set = KeySet::default();
        let Some(keys) = doc.get("keys").and_then(|k| k.as_array()) else { return set };
        for raw in keys {
            let Ok(jwk) = serde_json::from_value::<Jwk>(raw.clone()) else { continue };
            if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)) {
                continue;
            }
            if matches!(jwk.common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature) {
                continue;
            }
            let alg = match jwk.common.key_algorithm.map(|a| a.to_string().parse::<Algorithm>()) {
                Some(Ok(a)) if ASYMMETRIC.contains(&a) => Some(a),
                Some(_) => continue,
                None => None,
            };
            let Ok(key) = DecodingKey::from_jwk(&jwk) else { continue };
            let key = Arc::new(Key { key, alg });
            match jwk.common.key_id {
                Some(kid) => {
                    set.by_kid.insert(kid, key);
                }
                None => set.anonymous.push(key),
            }
        }
        set
    }

    fn candidates(&self, kid: Option<&str>) -> Vec<Arc<Key>> {
        match kid {
            Some(kid) => self.by_kid.get(kid).cloned().into_iter().collect(),
            None => self.anonymous.clone(),
        }
    }
}

impl JwtVerifier {
    /// Trusts tokens from `issuer` (its issuer identifier, e.g. `https://auth.example.com`).
    pub fn new(issuer: impl Into<String>) -> Self {
        JwtVerifier {
            issuer: issuer.into(),
            jwks_uri: None,
            refetch_interval: Duration::from_secs(60),
            leeway: DEFAULT_LEEWAY,
            cache_ttl: DEFAULT_CACHE_TTL,
            require_access_token_type: true,
            inner: Arc::new(Inner::new(&None)),
        }
    }

    /// Trusts `roots` for the fetches of the issuer's metadata and keys, besides the platform's
    /// certificate store: for an issuer whose certificate comes from a private CA (feature
    /// `rustls`).
    #[cfg(feature = "rustls")]
    pub fn root_certificates(mut self, roots: crate::tls::RootCertificates) -> Self {
        self.inner = Arc::new(Inner::new(&Some(roots)));
        self
    }

    /// Where the issuer's keys are, instead of finding out from its metadata.
    pub fn jwks_uri(mut self, uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(uri.into());
        self
    }

    /// The shortest time between two fetches of the keys (default one minute).
    pub fn refetch_interval(mut self, interval: Duration) -> Self {
        self.refetch_interval = interval;
        self
    }

    /// The clock skew allowed on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// How long a verified token is remembered, never past its expiry (default 30 s; zero turns
    /// the cache off).
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = ttl;
        self
    }

    /// Accepts tokens whatever their header's `typ` (by default it must be `at+jwt` or
    /// `application/at+jwt`, RFC 9068 section 2.1): for an issuer that does not mark its
    /// access tokens. Its other JWTs signed with the same keys (ID tokens, say) are then told
    /// apart only by their `aud`, so prefer an issuer that sets `typ`.
    pub fn accept_any_token_type(mut self) -> Self {
        self.require_access_token_type = false;
        self
    }

    /// The issuer this verifier trusts.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Fetches the keys unless they were fetched less than the refetch interval ago. Fails
    /// only when no key is known at all afterwards.
    async fn refresh(&self) -> Result<(), TokenError> {
        let inner = &self.inner;
        let mut fetched = inner.fetched.lock().await;
        // With no key at all (the issuer was unreachable so far), ask again sooner.
        let interval =
            if self.has_keys() { self.refetch_interval } else { self.refetch_interval.min(RETRY_WITHOUT_KEYS) };
        if fetched.is_some_and(|at| at.elapsed() < interval) {
            return if self.has_keys() {
                Ok(())
            } else {
                Err(TokenError::Unavailable(format!("the keys of `{}` could not be fetched", self.issuer)))
            };
        }
        *fetched = Some(Instant::now());
        let result = self.fetch_keys().await;
        match result {
            Ok(set) => {
                tracing::debug!(issuer = %self.issuer, keys = set.by_kid.len() + set.anonymous.len(), "fetched the issuer's keys");
                *inner.keys.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(set);
                Ok(())
            }
            Err(e) => {
                tracing::warn!(issuer = %self.issuer, error = %e, "could not fetch the issuer's keys");
                if self.has_keys() { Ok(()) } else { Err(e) }
            }
        }
    }

    async fn fetch_keys(&self) -> Result<KeySet, TokenError> {
        let inner = &self.inner;
        let known = self.jwks_uri.clone().or_else(|| inner.jwks_uri.read().ok().and_then(|u| u.clone()));
        let uri = match known {
            Some(u) => u,
            None => {
                let metadata = fetch::issuer_metadata(&inner.client, &self.issuer).await?;
                let uri = metadata.jwks_uri.ok_or_else(|| {
                    TokenError::Unavailable(format!("the metadata of `{}` has no jwks_uri", self.issuer))
                })?;
                if let Ok(mut slot) = inner.jwks_uri.write() {
                    *slot = Some(uri.clone());
                }
                uri
            }
        };
        let doc: serde_json::Value = fetch::json(inner.client.get(&uri).header("accept", "application/json"))
            .await?
            .ok_or_else(|| TokenError::Unavailable(format!("{uri} answered 404")))?;
        Ok(KeySet::from_document(&doc))
    }

    fn has_keys(&self) -> bool {
        self.inner.keys.read().map(|k| !k.by_kid.is_empty() || !k.anonymous.is_empty()).unwrap_or(false)
    }

    fn keys(&self) -> Arc<KeySet> {
        self.inner.keys.read().map(|k| k.clone()).unwrap_or_default()
    }

    async fn check(&self, token: &str, resource: &str) -> Result<AuthInfo, TokenError> {
        let invalid = |why: &str| TokenError::Invalid(why.to_owned());
        if token.len() > MAX_TOKEN {
            return Err(invalid("the token is too long"));
        }
        let key = TokenCache::key(token, resource);
        if let Some(info) = self.inner.cache.get(&key) {
            return Ok(info);
        }
        let header = jsonwebtoken::decode_header(token).map_err(|e| TokenError::Invalid(format!("bad header: {e}")))?;
        if !ASYMMETRIC.contains(&header.alg) {
            return Err(TokenError::Invalid(format!("the algorithm {:?} is not accepted", header.alg)));
        }
        if self.require_access_token_type && !is_access_token_type(header.typ.as_deref()) {
            return Err(invalid("the token's `typ` is not `at+jwt`: it is not an access token (RFC 9068)"));
        }
        let mut candidates = self.keys().candidates(header.kid.as_deref());
        if candidates.is_empty() {
            self.refresh().await?;
            candidates = self.keys().candidates(header.kid.as_deref());
        }
        candidates.retain(|k| k.alg.is_none_or(|a| a == header.alg));
        if candidates.is_empty() {
            return Err(invalid("no key of the issuer matches the token"));
        }
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let mut last = None;
        for candidate in candidates {
            match jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(token, &candidate.key, &validation)
            {
                Ok(data) => {
                    let info = identity(data.claims)?;
                    self.remember(key, &info);
                    return Ok(info);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(TokenError::Invalid(last.map_or_else(|| "no key".to_owned(), |e| e.to_string())))
    }

    fn remember(&self, key: [u8; 32], info: &AuthInfo) {
        if self.cache_ttl.is_zero() {
            return;
        }
        let mut until = Instant::now() + self.cache_ttl;
        if let Some(left) = info.expires_at().and_then(|e| e.duration_since(std::time::SystemTime::now()).ok()) {
            until = until.min(Instant::now() + left);
        }
        self.inner.cache.put(key, info.clone(), until);
    }
}

/// Whether a JWT header's `typ` names an access token (RFC 9068 section 2.1): `at+jwt`, or
/// its media type `application/at+jwt`, compared without regard to case (RFC 7515 section 4.1.9).
fn is_access_token_type(typ: Option<&str>) -> bool {
    typ.is_some_and(|t| t.eq_ignore_ascii_case("at+jwt") || t.eq_ignore_ascii_case("application/at+jwt"))
}

/// The identity in a verified token's claims.
fn identity(claims: serde_json::Map<String, serde_json::Value>) -> Result<AuthInfo, TokenError> {
    let subject = claims
        .get("sub")
        .and_then(|s| s.as_str())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| TokenError::Invalid("no subject".into()))?
        .to_owned();
    let mut info = AuthInfo::new(subject).with_scopes(super::scopes_of(&claims));
    if let Some(client) = claims.get("client_id").or_else(|| claims.get("azp")).and_then(|c| c.as_str()) {
        info = info.with_client_id(client);
    }
    if let Some(exp) = claims.get("exp").and_then(|e| e.as_u64()) {
        info = info.with_expires_at(super::from_unix(exp));
    }
    Ok(info.with_claims(claims))
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> BoxFuture<'a, Result<AuthInfo, TokenError>> {
        Box::pin(self.check(token, resource))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn symmetric_and_encryption_keys_are_ignored() {
        let doc = json!({"keys": [
            {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
            {"kty": "EC", "crv": "P-256", "use": "enc", "kid": "enc",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "EC", "crv": "P-256", "alg": "HS256", "kid": "lying",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "EC", "crv": "P-256", "kid": "good",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "unknown"}
        ]});
        let set = KeySet::from_document(&doc);
        assert_eq!(set.by_kid.keys().collect::<Vec<_>>(), ["good"]);
        assert!(set.anonymous.is_empty());
    }

    #[test]
    fn only_access_token_types_pass() {
        for typ in ["at+jwt", "AT+JWT", "application/at+jwt", "Application/AT+jwt"] {
            assert!(is_access_token_type(Some(typ)), "{typ}");
        }
        for typ in
            [None, Some("JWT"), Some("jwt"), Some("at+jwt "), Some("application/jwt"), Some("dpop+jwt"), Some("")]
        {
            assert!(!is_access_token_type(typ), "{typ:?}");
        }
    }

    #[test]
    fn identity_needs_a_subject() {
        let claims = json!({"sub": "alice", "scope": "a b", "azp": "app", "exp": 10});
        let info = identity(claims.as_object().unwrap().clone()).unwrap();
        assert_eq!(info.subject(), "alice");
        assert_eq!(info.client_id(), Some("app"));
        assert_eq!(info.scopes().collect::<Vec<_>>(), ["a", "b"]);
        assert!(identity(json!({"sub": ""}).as_object().unwrap().clone()).is_err());
    }
}
