//! What a forwarded request carries from the instance it landed on to the session's owner: who
//! sent it, when, for which session, a digest of its body, and what the landing instance
//! verified (the user, the access token's details, its DPoP proof), all sealed with the
//! deployment secret. The owner serves it on that word, without checking the token (and its
//! one-time DPoP proof) again; a request that claims to be forwarded without a valid seal is
//! refused.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::http::{HeaderMap, HeaderValue};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use super::backplane::FORWARDED_HEADER;
use super::seal::{Keys, fresh, now_ms};
use crate::auth::AuthInfo;

/// The header carrying the sealed word of the instance that forwarded a request.
pub const HOP_HEADER: &str = "mcp-forwarded-seal";

/// What the landing instance vouches for.
#[derive(Serialize, Deserialize)]
struct Word {
    /// When it was sent (milliseconds since the Unix epoch).
    at: u64,
    /// The HTTP method.
    method: String,
    /// The session named.
    session: String,
    /// SHA-256 of the body, base64url.
    body: String,
    /// The user, as verified there.
    principal: Option<String>,
    /// The access token's details, as verified there.
    identity: Option<Identity>,
}

/// [`AuthInfo`] on the wire.
#[derive(Serialize, Deserialize)]
struct Identity {
    subject: String,
    client_id: Option<String>,
    scopes: Vec<String>,
    /// Seconds since the Unix epoch.
    expires_at: Option<u64>,
    claims: serde_json::Map<String, serde_json::Value>,
}

impl From<&AuthInfo> for Identity {
    fn from(info: &AuthInfo) -> Self {
        Identity {
            subject: info.subject().to_owned(),
            client_id: info.client_id().map(str::to_owned),
            scopes: info.scopes().map(str::to_owned).collect(),
            expires_at: info
                .expires_at()
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map(|d| d.as_secs()),
            claims: info.claims().clone(),
        }
    }
}

impl From<Identity> for AuthInfo {
    fn from(identity: Identity) -> Self {
        let mut info = AuthInfo::new(identity.subject).with_scopes(identity.scopes).with_claims(identity.claims);
        if let Some(client) = identity.client_id {
            info = info.with_client_id(client);
        }
        if let Some(at) = identity.expires_at {
            info = info.with_expires_at(SystemTime::UNIX_EPOCH + Duration::from_secs(at));
        }
        info
    }
}

fn digest(body: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(body))
}

/// The sealed word for a request of `session` this instance (`from`) forwards; `None` without
/// a deployment secret.
pub(crate) fn vouch(
    keys: &Keys,
    from: &str,
    method: &str,
    session: &str,
    body: &[u8],
    principal: Option<&str>,
    identity: Option<&AuthInfo>,
) -> Option<HeaderValue> {
    if !keys.enforced() {
        return None;
    }
    let word = Word {
        at: now_ms(),
        method: method.to_owned(),
        session: session.to_owned(),
        body: digest(body),
        principal: principal.map(str::to_owned),
        identity: identity.map(Identity::from),
    };
    let json = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&word).ok()?);
    let seal = keys.seal(&[from.as_bytes(), json.as_bytes()]);
    HeaderValue::from_str(&format!("{json}.{seal}")).ok()
}

/// What a forwarded request's seal vouches for.
pub(crate) struct Vouched {
    /// The user.
    pub(crate) principal: Option<String>,
    /// The access token's details.
    pub(crate) identity: Option<Arc<AuthInfo>>,
}

/// Reads the sealed word of a request that says it was forwarded (it carries
/// [`FORWARDED_HEADER`]): `Ok(None)` when the deployment has no secret (the request is then
/// authenticated as any other), `Err` with the reason when the seal is missing, forged, stale,
/// or vouches for another request.
pub(crate) fn check(
    keys: &Keys,
    headers: &HeaderMap,
    method: &str,
    session: Option<&str>,
    body: &[u8],
) -> Result<Option<Vouched>, &'static str> {
    if !keys.enforced() {
        return Ok(None);
    }
    let from = headers.get(FORWARDED_HEADER).and_then(|v| v.to_str().ok()).ok_or("no forwarding instance named")?;
    let sealed = headers.get(HOP_HEADER).and_then(|v| v.to_str().ok()).ok_or("a forwarded request without a seal")?;
    let (json, seal) = sealed.split_once('.').ok_or("a malformed seal")?;
    if !keys.verify(&[from.as_bytes(), json.as_bytes()], seal) {
        return Err("a forwarded request not sealed with the deployment secret");
    }
    let word: Word = URL_SAFE_NO_PAD
        .decode(json)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or("an unreadable seal")?;
    if !fresh(word.at) {
        return Err("a forwarded request sealed over a minute ago");
    }
    if word.method != method || session != Some(word.session.as_str()) || word.body != digest(body) {
        return Err("a seal made for another request");
    }
    Ok(Some(Vouched { principal: word.principal, identity: word.identity.map(|i| Arc::new(AuthInfo::from(i))) }))
}
