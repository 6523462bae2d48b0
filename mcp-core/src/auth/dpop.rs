//! DPoP (RFC 9449) on the resource server: checking the proof that comes with a DPoP-bound
//! access token, refusing replayed proofs, and server nonces. The proof's key and signature are
//! read and verified (by aws-lc-rs) in `proof`; its claims are checked here.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use jsonwebtoken::Algorithm;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use super::{AuthInfo, proof, unix_now};
use crate::engine::BoxFuture;

/// The proof algorithms accepted by default (advertised in the challenge's `algs`).
const DEFAULT_ALGORITHMS: &[Algorithm] = &[Algorithm::ES256, Algorithm::ES384, Algorithm::RS256, Algorithm::PS256];

/// The bytes of HMAC a nonce keeps.
const NONCE_BYTES: usize = 18;

/// The largest proof looked at.
const MAX_PROOF: usize = 8 * 1024;

/// Remembers the `jti` of each accepted proof while its `iat` is acceptable, so that a proof
/// is used once: [`MemoryReplayCache`] for one process, a shared store (such as
/// `typed_mcp_redis::RedisReplayCache`) when several instances serve the same clients.
pub trait ReplayCache: Send + Sync + 'static {
    /// Records `key` for `ttl`; `Ok(true)` if it was not already recorded, `Ok(false)` for a
    /// replay. An error refuses the request as unverifiable now (`503`).
    ///
    /// The key is `<client>:<jti>`, where `<client>` (without a `:`) is the SHA-256
    /// thumbprint of the proof's public key (RFC 7638): a cache may bound what each client
    /// keeps by it, so that one client cannot fill the cache for all.
    fn first_use<'a>(&'a self, key: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, String>>;
}

/// A [`ReplayCache`] in memory, bounded in total and per client (proof key): a client whose
/// share is full of live proofs has its new proofs refused (`503`) until its old ones expire,
/// while every other client goes on. When the whole cache is full, expired entries go; if that
/// is not enough, new proofs are refused until room is free. Never is a proof accepted twice.
///
/// A client's share is a tenth of the capacity by default (10,000 of 100,000 proofs: with the
/// default `max_age` of 60 seconds, a proof is kept about two minutes, so a client may send
/// some 80 requests a second); [`per_client`](Self::per_client) changes it.
pub struct MemoryReplayCache {
    entries: Mutex<Entries>,
    capacity: usize,
    per_client: usize,
}

/// The proofs remembered, by client (the digest of its key's thumbprint), then by digest of
/// the whole key.
#[derive(Default)]
struct Entries {
    clients: HashMap<[u8; 32], HashMap<[u8; 32], Instant>>,
    total: usize,
}

impl Entries {
    /// Forgets every expired proof.
    fn sweep(&mut self, now: Instant) {
        self.clients.retain(|_, proofs| {
            proofs.retain(|_, until| *until > now);
            !proofs.is_empty()
        });
        self.total = self.clients.values().map(HashMap::len).sum();
    }
}

impl fmt::Debug for MemoryReplayCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let len = self.entries.lock().map(|e| e.total).unwrap_or(0);
        f.debug_struct("MemoryReplayCache")
            .field("entries", &len)
            .field("capacity", &self.capacity)
            .field("per_client", &self.per_client)
            .finish()
    }
}

impl Default for MemoryReplayCache {
    fn default() -> Self {
        Self::with_capacity(100_000)
    }
}

impl MemoryReplayCache {
    /// A cache of at most `capacity` proofs at once, a tenth of them (at least one) per client.
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        MemoryReplayCache { entries: Mutex::default(), capacity, per_client: (capacity / 10).max(1) }
    }

    /// How many live proofs one client (one proof key) may have in the cache at once (at
    /// least one, at most the capacity).
    pub fn per_client(mut self, proofs: usize) -> Self {
        self.per_client = proofs.clamp(1, self.capacity);
        self
    }

    fn record(&self, key: &str, ttl: Duration) -> Result<bool, String> {
        let (client, _) = key.split_once(':').unwrap_or(("", key));
        let client: [u8; 32] = Sha256::digest(client.as_bytes()).into();
        let digest: [u8; 32] = Sha256::digest(key.as_bytes()).into();
        let now = Instant::now();
        let mut entries = self.entries.lock().map_err(|e| e.to_string())?;
        let entries = &mut *entries;
        if let Some(proofs) = entries.clients.get_mut(&client) {
            if proofs.get(&digest).is_some_and(|until| *until > now) {
                return Ok(false);
            }
            if proofs.len() >= self.per_client {
                let before = proofs.len();
                proofs.retain(|_, until| *until > now);
                entries.total -= before - proofs.len();
                if proofs.len() >= self.per_client {
                    return Err("this client's share of the DPoP replay cache is full".to_owned());
                }
            }
        }
        if entries.total >= self.capacity {
            entries.sweep(now);
            if entries.total >= self.capacity {
                return Err("the DPoP replay cache is full".to_owned());
            }
        }
        let proofs = entries.clients.entry(client).or_default();
        if proofs.insert(digest, now + ttl).is_none() {
            entries.total += 1;
        }
        Ok(true)
    }
}

impl ReplayCache for MemoryReplayCache {
    fn first_use<'a>(&'a self, key: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, String>> {
        let result = self.record(key, ttl);
        Box::pin(async move { result })
    }
}

/// How a protected server treats DPoP (RFC 9449): given to
/// [`Authorization::dpop`](super::Authorization::dpop).
///
/// A request with `Authorization: DPoP <token>` must carry one `DPoP` proof: a JWT of type
/// `dpop+jwt`, signed (with an accepted asymmetric algorithm) by the public key in its header
/// (which must hold no private part), whose `htm` and `htu` are the request's method and URL,
/// whose `iat` is recent, whose `ath` is the token's hash, whose `jti` was not seen before,
/// and whose key's thumbprint is the token's `cnf.jkt`. With [`nonces`](Self::nonces), the
/// proof must also carry a nonce the server issued (a `401 use_dpop_nonce` hands one out).
///
/// ```
/// # #[cfg(feature = "auth")] {
/// use typed_mcp::auth::{Authorization, Dpop, JwtVerifier};
///
/// let auth = Authorization::new(JwtVerifier::new("https://auth.example.com"))
///     .dpop(Dpop::new().require(true).nonces(None));
/// # let _ = auth;
/// # }
/// ```
#[derive(Clone)]
pub struct Dpop {
    pub(crate) algorithms: Vec<Algorithm>,
    pub(crate) max_age: Duration,
    pub(crate) require: bool,
    pub(crate) replay: Arc<dyn ReplayCache>,
    pub(crate) nonce_key: Option<Arc<[u8; 32]>>,
}

impl fmt::Debug for Dpop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dpop")
            .field("algorithms", &self.algorithms)
            .field("max_age", &self.max_age)
            .field("require", &self.require)
            .field("nonces", &self.nonce_key.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for Dpop {
    fn default() -> Self {
        Self::new()
    }
}

/// Why a DPoP request was refused: the challenge's `error`, and the reason for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DpopRefusal {
    /// `invalid_dpop_proof`.
    Proof(String),
    /// `invalid_token`: the token is not bound to the proof's key (or is bound and was sent
    /// as a bearer token).
    Binding(String),
    /// `use_dpop_nonce`, with a fresh nonce.
    Nonce(String),
    /// The replay cache could not be asked: `503`.
    Unavailable(String),
}

impl Dpop {
    /// DPoP accepted (ES256, ES384, RS256 and PS256 proofs, `iat` within 60 seconds, replays
    /// refused in memory); bearer tokens still accepted; no nonces.
    pub fn new() -> Self {
        Dpop {
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            max_age: Duration::from_secs(60),
            require: false,
            replay: Arc::new(MemoryReplayCache::default()),
            nonce_key: None,
        }
    }

    /// Whether every token must be DPoP-bound (`true`), or bearer tokens are still accepted
    /// (`false`, the default; a DPoP-bound token is never accepted as a bearer token).
    pub fn require(mut self, require: bool) -> Self {
        self.require = require;
        self
    }

    /// How far a proof's `iat` may be from the server's clock (default 60 seconds).
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// Where accepted proofs are remembered (default a [`MemoryReplayCache`]): give every
    /// instance of a deployment the same shared cache.
    pub fn replay_cache(mut self, cache: impl ReplayCache) -> Self {
        self.replay = Arc::new(cache);
        self
    }

    /// Requires proofs to carry a server nonce (RFC 9449 section 9). Nonces are derived from
    /// `secret` and the time, so instances given the same secret accept each other's; `None`
    /// uses a random secret of this process.
    pub fn nonces(mut self, secret: Option<[u8; 32]>) -> Self {
        let secret = secret.unwrap_or_else(|| {
            let mut bytes = [0u8; 32];
            rand::fill(&mut bytes[..]);
            bytes
        });
        self.nonce_key = Some(Arc::new(secret));
        self
    }

    /// The `algs` of the challenge.
    pub(crate) fn algs(&self) -> String {
        self.algorithms.iter().map(|a| format!("{a:?}")).collect::<Vec<_>>().join(" ")
    }

    /// The number of the current window of `max_age`: a nonce is stamped with the window it
    /// was handed out in.
    fn window(&self) -> u64 {
        unix_now() / self.max_age.as_secs().max(1)
    }

    /// A nonce for now.
    pub(crate) fn fresh_nonce(&self) -> Option<String> {
        let key = self.nonce_key.as_ref()?;
        Some(nonce_for(key, self.window()))
    }

    fn nonce_ok(&self, nonce: Option<&str>) -> bool {
        let Some(key) = &self.nonce_key else { return true };
        let Some(nonce) = nonce else { return false };
        let stamp = self.window();
        // The current window, or the one before (a nonce handed out just before it turned).
        let Ok(nonce) = URL_SAFE_NO_PAD.decode(nonce) else { return false };
        [stamp, stamp.saturating_sub(1)].iter().any(|s| nonce_matches(key, *s, &nonce))
    }

    /// Checks the `proof` of a request `method url` carrying `token`, then that `info` (the
    /// verified token's identity) is bound to the proof's key. Returns nothing on success.
    pub(crate) async fn check(
        &self,
        proof: &str,
        method: &str,
        url: &str,
        token: &str,
        info: &AuthInfo,
    ) -> Result<(), DpopRefusal> {
        let proof_error = |why: &str| DpopRefusal::Proof(why.to_owned());
        if proof.len() > MAX_PROOF {
            return Err(proof_error("the proof is too long"));
        }
        let verified = proof::verify(proof, &self.algorithms).map_err(proof_error)?;
        let claims: Claims<'_> =
            proof::object(&verified.claims).ok_or_else(|| proof_error("the claims are not JSON of DPoP claims"))?;
        let jti = claims.jti;
        if jti.is_empty() || jti.len() > 256 {
            return Err(proof_error("no jti"));
        }
        if claims.htm != method {
            return Err(proof_error("htm is not the request's method"));
        }
        if !same_target(&claims.htu, url) {
            return Err(DpopRefusal::Proof(format!("htu {} is not the request's URL {url}", claims.htu)));
        }
        let iat = claims.iat.ok_or_else(|| proof_error("no iat"))?;
        if unix_now().abs_diff(iat) > self.max_age.as_secs() {
            return Err(proof_error("iat is outside the accepted window"));
        }
        let mut ath = [0u8; 43];
        // 32 bytes are always 43 characters of base64url without padding.
        let _ = URL_SAFE_NO_PAD.encode_slice(Sha256::digest(token.as_bytes()), &mut ath);
        if claims.ath.as_bytes() != ath {
            return Err(proof_error("ath is not the hash of the access token"));
        }
        // A `nonce` that is not a string counts as none (and is ignored without nonces).
        let nonce = claims.nonce.and_then(|n| serde_json::from_str::<Cow<'_, str>>(n.get()).ok());
        if !self.nonce_ok(nonce.as_deref()) {
            return Err(DpopRefusal::Nonce(self.fresh_nonce().unwrap_or_default()));
        }
        let thumbprint = verified.thumbprint.as_str();
        if jkt(info).and_then(Value::as_str) != Some(thumbprint) {
            return Err(DpopRefusal::Binding("the token is not bound to the proof's key (cnf.jkt)".into()));
        }
        let ttl = self.max_age * 2 + Duration::from_secs(1);
        match self.replay.first_use(&format!("{thumbprint}:{jti}"), ttl).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(proof_error("the proof was already used (jti)")),
            Err(e) => Err(DpopRefusal::Unavailable(e)),
        }
    }
}

/// The claims of a proof that are checked. A string claim missing reads as empty (and is then
/// refused as wrong); one of another type refuses the proof.
#[derive(Deserialize)]
struct Claims<'a> {
    #[serde(borrow, default)]
    jti: Cow<'a, str>,
    #[serde(borrow, default)]
    htm: Cow<'a, str>,
    #[serde(borrow, default)]
    htu: Cow<'a, str>,
    #[serde(default)]
    iat: Option<u64>,
    #[serde(borrow, default)]
    ath: Cow<'a, str>,
    #[serde(borrow, default)]
    nonce: Option<&'a RawValue>,
}

/// The token's `cnf.jkt`: the thumbprint of the key it is bound to.
fn jkt(info: &AuthInfo) -> Option<&Value> {
    info.claims().get("cnf").and_then(|c| c.get("jkt"))
}

fn nonce_mac(key: &[u8; 32], stamp: u64) -> Option<Hmac<Sha256>> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).ok()?;
    mac.update(&stamp.to_be_bytes());
    Some(mac)
}

/// The nonce of the time window `stamp`: a truncated HMAC of it.
fn nonce_for(key: &[u8; 32], stamp: u64) -> String {
    nonce_mac(key, stamp)
        .map(|mac| URL_SAFE_NO_PAD.encode(&mac.finalize().into_bytes()[..NONCE_BYTES]))
        .unwrap_or_default()
}

/// Whether `nonce` is the nonce of the window `stamp` (compared in constant time).
fn nonce_matches(key: &[u8; 32], stamp: u64, nonce: &[u8]) -> bool {
    nonce.len() == NONCE_BYTES && nonce_mac(key, stamp).is_some_and(|mac| mac.verify_truncated_left(nonce).is_ok())
}

/// Whether the proof's `htu` names the request's URL (RFC 9449 section 4.3: scheme, host,
/// port and path compared after normalization; query and fragment ignored).
fn same_target(htu: &str, url: &str) -> bool {
    let (Ok(htu), Ok(url)) = (reqwest::Url::parse(htu), reqwest::Url::parse(url)) else { return false };
    htu.scheme() == url.scheme()
        && htu.host_str().map(str::to_ascii_lowercase) == url.host_str().map(str::to_ascii_lowercase)
        && htu.port_or_known_default() == url.port_or_known_default()
        && htu.path() == url.path()
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::jwk::ThumbprintHash;
    use serde_json::json;

    use super::super::proof::tests::{P256_A, P256_B, SIGNERS, header, public_jwk, signed};
    use super::*;

    const URL: &str = "https://a.test/mcp";
    const TOKEN: &str = "the-access-token";

    /// The identity of a token bound to the key `jwk`.
    fn bound_to(jwk: &Value) -> AuthInfo {
        let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(jwk.clone()).unwrap();
        let claims = json!({"cnf": {"jkt": jwk.thumbprint(ThumbprintHash::SHA256)}});
        AuthInfo::new("alice").with_claims(claims.as_object().unwrap().clone())
    }

    /// Good claims for a POST of `TOKEN` to `URL`, with `jti`.
    fn claims(jti: &str) -> Value {
        json!({"jti": jti, "htm": "POST", "htu": URL, "iat": unix_now(),
            "ath": URL_SAFE_NO_PAD.encode(Sha256::digest(TOKEN))})
    }

    #[tokio::test]
    async fn a_proof_of_each_algorithm_passes_once_and_only_for_its_key() {
        let dpop = Dpop::new();
        for (pem, alg) in SIGNERS {
            let jwk = public_jwk(pem, alg);
            let info = bound_to(&jwk);
            let mut body = claims(&format!("{alg:?}-1"));
            // A nonce that is not a string counts as none, which is fine without nonces.
            body["nonce"] = json!(5);
            let proof = signed(&header(&format!("{alg:?}"), jwk.clone()), &body, pem, alg);
            assert_eq!(dpop.check(&proof, "POST", URL, TOKEN, &info).await, Ok(()), "{alg:?}");
            assert_eq!(
                dpop.check(&proof, "POST", URL, TOKEN, &info).await,
                Err(DpopRefusal::Proof("the proof was already used (jti)".into())),
                "{alg:?}"
            );
            // A fresh proof of this key with a token bound to another key.
            let fresh = signed(&header(&format!("{alg:?}"), jwk), &claims(&format!("{alg:?}-2")), pem, alg);
            let other = if pem == P256_A { P256_B } else { P256_A };
            let elsewhere = bound_to(&public_jwk(other, Algorithm::ES256));
            assert!(
                matches!(dpop.check(&fresh, "POST", URL, TOKEN, &elsewhere).await, Err(DpopRefusal::Binding(_))),
                "{alg:?}"
            );
        }
    }

    #[tokio::test]
    async fn wrong_claims_are_refused() {
        let jwk = public_jwk(P256_A, Algorithm::ES256);
        let info = bound_to(&jwk);
        let proof_of = |claims: &Value| signed(&header("ES256", jwk.clone()), claims, P256_A, Algorithm::ES256);
        let with = |name: &str, value: Value| {
            let mut c = claims(&format!("with-{name}"));
            c[name] = value;
            c
        };
        let without = |name: &str| {
            let mut c = claims(&format!("without-{name}"));
            c.as_object_mut().unwrap().remove(name);
            c
        };
        let cases = [
            ("claims as an array", json!(["j", "POST", URL]), "the claims are not JSON of DPoP claims"),
            ("iat not an integer", with("iat", json!(1.5)), "the claims are not JSON of DPoP claims"),
            ("htm not a string", with("htm", json!(1)), "the claims are not JSON of DPoP claims"),
            ("no jti", without("jti"), "no jti"),
            ("an empty jti", with("jti", json!("")), "no jti"),
            ("a jti too long", with("jti", json!("j".repeat(257))), "no jti"),
            ("htm GET on a POST", with("htm", json!("GET")), "htm is not the request's method"),
            ("no iat", without("iat"), "no iat"),
            ("a stale iat", with("iat", json!(unix_now() - 600)), "iat is outside the accepted window"),
            ("no ath", without("ath"), "ath is not the hash of the access token"),
            (
                "ath of another token",
                with("ath", json!(URL_SAFE_NO_PAD.encode(Sha256::digest("x")))),
                "ath is not the hash of the access token",
            ),
        ];
        let dpop = Dpop::new();
        for (name, claims, reason) in cases {
            assert_eq!(
                dpop.check(&proof_of(&claims), "POST", URL, TOKEN, &info).await,
                Err(DpopRefusal::Proof(reason.into())),
                "{name}"
            );
        }
        let htu = dpop.check(&proof_of(&with("htu", json!("https://b.test/mcp"))), "POST", URL, TOKEN, &info).await;
        assert!(matches!(htu, Err(DpopRefusal::Proof(r)) if r.starts_with("htu ")), "htu of another server");
        // Claims that are not base64url JSON, under a good signature.
        let (header64, _) = proof_of(&claims("x")).split_once('.').map(|(h, r)| (h.to_owned(), r.to_owned())).unwrap();
        let input = format!("{header64}.{}", URL_SAFE_NO_PAD.encode("{\"jti\""));
        let key = jsonwebtoken::EncodingKey::from_ec_pem(P256_A.as_bytes()).unwrap();
        let signature = jsonwebtoken::crypto::sign(input.as_bytes(), &key, Algorithm::ES256).unwrap();
        assert_eq!(
            dpop.check(&format!("{input}.{signature}"), "POST", URL, TOKEN, &info).await,
            Err(DpopRefusal::Proof("the claims are not JSON of DPoP claims".into()))
        );
        // With nonces, a nonce that is not a string is no nonce.
        let nonces = Dpop::new().nonces(Some([1; 32]));
        let refused = nonces.check(&proof_of(&with("nonce", json!(5))), "POST", URL, TOKEN, &info).await;
        assert_eq!(refused, Err(DpopRefusal::Nonce(nonces.fresh_nonce().unwrap())));
        let mut good = claims("with-a-nonce");
        good["nonce"] = json!(nonces.fresh_nonce().unwrap());
        assert_eq!(nonces.check(&proof_of(&good), "POST", URL, TOKEN, &info).await, Ok(()));
    }

    #[tokio::test]
    async fn the_replay_cache_is_bounded_and_never_accepts_twice() {
        let cache = MemoryReplayCache::with_capacity(2).per_client(2);
        let ttl = Duration::from_secs(60);
        assert_eq!(cache.first_use("k:a", ttl).await, Ok(true));
        assert_eq!(cache.first_use("k:a", ttl).await, Ok(false));
        assert_eq!(cache.first_use("j:b", ttl).await, Ok(true));
        // Full of live entries: a new proof is refused rather than an old one forgotten.
        assert!(cache.first_use("i:c", ttl).await.is_err());
        assert_eq!(cache.first_use("k:a", ttl).await, Ok(false));
        let expiring = MemoryReplayCache::with_capacity(1);
        assert_eq!(expiring.first_use("k:x", Duration::ZERO).await, Ok(true));
        assert_eq!(expiring.first_use("k:y", ttl).await, Ok(true));
    }

    #[tokio::test]
    async fn one_client_filling_its_share_locks_out_no_other() {
        let cache = MemoryReplayCache::with_capacity(100);
        let ttl = Duration::from_secs(60);
        let mut accepted = 0;
        for i in 0..1000 {
            if cache.first_use(&format!("mallory:{i}"), ttl).await == Ok(true) {
                accepted += 1;
            }
        }
        assert_eq!(accepted, 10, "a tenth of the capacity per client by default");
        for client in 0..9 {
            for jti in 0..10 {
                assert_eq!(cache.first_use(&format!("client{client}:{jti}"), ttl).await, Ok(true), "{client} {jti}");
            }
        }
        // Every share taken: the cache is full, and still no proof is accepted twice.
        assert!(cache.first_use("late:0", ttl).await.is_err());
        assert_eq!(cache.first_use("client3:4", ttl).await, Ok(false));
        // Expired proofs make room again, for their own client and for others.
        let short = MemoryReplayCache::with_capacity(10).per_client(5);
        for jti in 0..5 {
            assert_eq!(short.first_use(&format!("m:{jti}"), Duration::ZERO).await, Ok(true));
        }
        assert_eq!(short.first_use("m:5", ttl).await, Ok(true));
        assert_eq!(short.first_use("a:0", ttl).await, Ok(true));
        assert!(format!("{short:?}").contains("entries: 2"), "{short:?}");
    }

    #[test]
    fn nonces_are_accepted_by_instances_sharing_the_secret_only() {
        let a = Dpop::new().nonces(Some([7; 32]));
        let b = Dpop::new().nonces(Some([7; 32]));
        let other = Dpop::new().nonces(Some([8; 32]));
        let nonce = a.fresh_nonce().unwrap();
        assert!(b.nonce_ok(Some(&nonce)));
        assert!(!other.nonce_ok(Some(&nonce)));
        assert!(!a.nonce_ok(None));
        assert!(!a.nonce_ok(Some("garbage!")));
        assert!(Dpop::new().nonce_ok(None));
    }

    #[test]
    fn htu_is_compared_without_query_and_with_default_ports() {
        assert!(same_target("https://a.test/mcp", "https://A.test:443/mcp"));
        assert!(same_target("https://a.test/mcp?x=1", "https://a.test/mcp"));
        assert!(!same_target("https://a.test/mcp", "http://a.test/mcp"));
        assert!(!same_target("https://a.test/mcp/", "https://a.test/mcp"));
        assert!(!same_target("not a url", "https://a.test/mcp"));
    }
}
