//! Token introspection (RFC 7662): the authorization server says whether a token is active.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::cache::TokenCache;
use super::jwt::MAX_TOKEN;
use super::{AuthInfo, DEFAULT_CACHE_TTL, DEFAULT_LEEWAY, TokenError, TokenVerifier, fetch};
use crate::engine::BoxFuture;

/// Verifies opaque (or any) access tokens by asking the authorization server's introspection
/// endpoint (RFC 7662). A token is accepted when the answer says `active: true`, names a
/// subject, is not expired, comes from the expected issuer (when one is set and the answer
/// names one), has this server's resource among its `aud` (required unless
/// [`require_audience`](Self::require_audience) is turned off: some servers leave `aud` out),
/// and, when the answer has a `token_type`, is an access token (`Bearer`, `DPoP`, or the RFC
/// 8693 access token type; an active refresh token is refused, and a `DPoP` one must name its
/// key in `cnf.jkt`).
/// Answers are remembered for a short while (default 30 s, never past the token's expiry), so
/// that a client's requests do not each cost a round trip; a revoked token may thus still be
/// accepted for that long.
#[derive(Clone)]
pub struct IntrospectionVerifier {
    endpoint: String,
    credentials: Option<(String, String)>,
    issuer: Option<String>,
    require_audience: bool,
    cache_ttl: Duration,
    client: reqwest::Client,
    cache: Arc<TokenCache>,
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier").field("endpoint", &self.endpoint).finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// Asks `endpoint` (the authorization server's `introspection_endpoint`).
    pub fn new(endpoint: impl Into<String>) -> Self {
        IntrospectionVerifier {
            endpoint: endpoint.into(),
            credentials: None,
            issuer: None,
            require_audience: true,
            cache_ttl: DEFAULT_CACHE_TTL,
            client: fetch::client(Duration::from_secs(10), &None),
            cache: Arc::new(TokenCache::new()),
        }
    }

    /// The resource server's own client credentials, sent with HTTP Basic authentication.
    pub fn client_credentials(mut self, client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        self.credentials = Some((client_id.into(), client_secret.into()));
        self
    }

    /// Trusts `roots` for the requests to the introspection endpoint, besides the platform's
    /// certificate store: for an authorization server whose certificate comes from a private CA
    /// (feature `rustls`).
    #[cfg(feature = "rustls")]
    pub fn root_certificates(mut self, roots: crate::tls::RootCertificates) -> Self {
        self.client = fetch::client(Duration::from_secs(10), &Some(roots));
        self
    }

    /// The issuer whose tokens are accepted (checked when the answer has `iss`).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Whether the answer must name this server's resource in `aud` (default true).
    pub fn require_audience(mut self, require: bool) -> Self {
        self.require_audience = require;
        self
    }

    /// How long an answer is remembered (default 30 s; zero turns the cache off).
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = ttl;
        self
    }

    async fn check(&self, token: &str, resource: &str) -> Result<AuthInfo, TokenError> {
        if token.len() > MAX_TOKEN {
            return Err(TokenError::Invalid("the token is too long".into()));
        }
        let key = TokenCache::key(token, resource);
        if let Some(info) = self.cache.get(&key) {
            return Ok(info);
        }
        let body: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
        let mut request = self
            .client
            .post(&self.endpoint)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(body);
        if let Some((id, secret)) = &self.credentials {
            request = request.basic_auth(id, Some(secret));
        }
        let answer: serde_json::Map<String, serde_json::Value> = fetch::json(request)
            .await?
            .ok_or_else(|| TokenError::Unavailable(format!("{} answered 404", self.endpoint)))?;
        let info = self.judge(answer, resource)?;
        if !self.cache_ttl.is_zero() {
            let mut until = Instant::now() + self.cache_ttl;
            if let Some(left) = info.expires_at().and_then(|e| e.duration_since(SystemTime::now()).ok()) {
                until = until.min(Instant::now() + left);
            }
            self.cache.put(key, info.clone(), until);
        }
        Ok(info)
    }

    /// The identity an introspection answer grants, or why it grants none.
    fn judge(
        &self,
        answer: serde_json::Map<String, serde_json::Value>,
        resource: &str,
    ) -> Result<AuthInfo, TokenError> {
        let invalid = |why: &str| TokenError::Invalid(why.to_owned());
        if answer.get("active") != Some(&serde_json::Value::Bool(true)) {
            return Err(invalid("the token is not active"));
        }
        if let Some(kind) = answer.get("token_type") {
            match kind.as_str() {
                Some(kind) if is_access_token_type(kind) => {}
                _ => return Err(invalid("the introspected token is not an access token")),
            }
            let bound = answer.get("cnf").and_then(|c| c.get("jkt")).is_some();
            if kind.as_str().is_some_and(|k| k.eq_ignore_ascii_case("dpop")) && !bound {
                return Err(invalid("the introspected DPoP token names no key (`cnf.jkt`)"));
            }
        }
        let now = super::unix_now();
        let leeway = DEFAULT_LEEWAY.as_secs();
        let exp = answer.get("exp").and_then(|v| v.as_u64());
        if exp.is_some_and(|exp| exp + leeway <= now) {
            return Err(invalid("the token has expired"));
        }
        if answer.get("nbf").and_then(|v| v.as_u64()).is_some_and(|nbf| nbf > now + leeway) {
            return Err(invalid("the token is not valid yet"));
        }
        if let (Some(expected), Some(iss)) = (&self.issuer, answer.get("iss").and_then(|v| v.as_str()))
            && expected.trim_end_matches('/') != iss.trim_end_matches('/')
        {
            return Err(invalid("the token is from another issuer"));
        }
        let audience_ok = match answer.get("aud") {
            Some(serde_json::Value::String(a)) => a == resource,
            Some(serde_json::Value::Array(list)) => list.iter().any(|a| a.as_str() == Some(resource)),
            _ => !self.require_audience,
        };
        if !audience_ok {
            return Err(invalid("the token is not for this resource"));
        }
        let subject = answer
            .get("sub")
            .and_then(|s| s.as_str())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| invalid("no subject"))?
            .to_owned();
        let mut info = AuthInfo::new(subject).with_scopes(super::scopes_of(&answer));
        if let Some(client) = answer.get("client_id").and_then(|c| c.as_str()) {
            info = info.with_client_id(client);
        }
        if let Some(exp) = exp {
            info = info.with_expires_at(super::from_unix(exp));
        }
        Ok(info.with_claims(answer))
    }
}

/// Whether an introspection answer's `token_type` names an access token: the type the token
/// endpoint gave it (`Bearer`, `DPoP`, RFC 7662 section 2.2 and RFC 9449 section 5), or the
/// access token's token type identifier (RFC 8693 section 3). A refresh token, an ID token or
/// any other kind an authorization server reports is not one.
fn is_access_token_type(kind: &str) -> bool {
    ["bearer", "dpop", "access_token", "urn:ietf:params:oauth:token-type:access_token"]
        .iter()
        .any(|t| kind.eq_ignore_ascii_case(t))
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> BoxFuture<'a, Result<AuthInfo, TokenError>> {
        Box::pin(self.check(token, resource))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn judge(v: &IntrospectionVerifier, answer: serde_json::Value) -> Result<AuthInfo, TokenError> {
        v.judge(answer.as_object().unwrap().clone(), "https://mcp.example/mcp")
    }

    #[test]
    fn answers_are_judged() {
        let v = IntrospectionVerifier::new("http://unused").issuer("https://as.example");
        let now = super::super::unix_now();
        let good = json!({"active": true, "sub": "alice", "aud": ["https://mcp.example/mcp"], "scope": "notes:read",
                          "exp": now + 60, "iss": "https://as.example", "client_id": "app"});
        let info = judge(&v, good.clone()).unwrap();
        assert_eq!(info.subject(), "alice");
        assert!(info.has_scope("notes:read"));
        assert_eq!(info.client_id(), Some("app"));
        let mut bad = good.clone();
        bad["active"] = json!(false);
        assert!(judge(&v, bad).is_err());
        let mut bad = good.clone();
        bad["aud"] = json!("https://other.example/mcp");
        assert!(judge(&v, bad).is_err());
        let mut bad = good.clone();
        bad["exp"] = json!(now - 120);
        assert!(judge(&v, bad).is_err());
        let mut bad = good.clone();
        bad["iss"] = json!("https://evil.example");
        assert!(judge(&v, bad).is_err());
        let mut no_aud = good.clone();
        no_aud.as_object_mut().unwrap().remove("aud");
        assert!(judge(&v, no_aud.clone()).is_err());
        assert!(judge(&v.clone().require_audience(false), no_aud).is_ok());
        assert!(judge(&v, json!({"active": true})).is_err());
    }
}
