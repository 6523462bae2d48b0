//! The token endpoint: requests authenticated as the client (a secret, or `private_key_jwt`),
//! with a DPoP proof and the server's nonce when tokens are bound, and their answers read as
//! tokens.

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use reqwest::{StatusCode, Url};
use serde_json::Value;

use super::client_auth::{AuthMethod, Registration};
use super::fetch::{REQUEST_TIMEOUT, http_error, read_limited};
use super::metadata::ServerMetadata;
use super::tokens::{DPOP, FlowState, OAuthLogin, dpop_nonce};
use super::{OAuthError, SigningKey, StoredTokens};

/// RFC 7521 section 4.2 (`private_key_jwt`).
const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

impl OAuthLogin {
    /// POSTs to `server`'s token endpoint with the client's authentication (and a DPoP proof
    /// when tokens are bound).
    pub(super) async fn token_request(
        &self,
        state: &mut FlowState,
        server: &ServerMetadata,
        registration: &Registration,
        form: &[(&'static str, String)],
    ) -> Result<Value, OAuthError> {
        let key = self.dpop_key()?;
        let url = self.policy.check(&server.token_endpoint)?;
        self.post_token(url, &server.issuer, registration, form, key, &mut state.as_nonce).await
    }

    /// POSTs `form` to the token endpoint at `url` (checked against the policy by the caller)
    /// authenticated as `registration` (a client assertion names `audience`), with a DPoP proof
    /// signed by `dpop` carrying the server's `nonce`, retried once with a new nonce when the
    /// server asks (`use_dpop_nonce`). A redirect is refused, never followed.
    pub(super) async fn post_token(
        &self,
        url: Url,
        audience: &str,
        registration: &Registration,
        form: &[(&'static str, String)],
        dpop: Option<&SigningKey>,
        nonce: &mut Option<String>,
    ) -> Result<Value, OAuthError> {
        let endpoint = url.as_str();
        let mut retried = false;
        loop {
            let mut form = form.to_vec();
            let mut request = self
                .http
                .post(url.clone())
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(ACCEPT, "application/json")
                .timeout(REQUEST_TIMEOUT);
            match (registration.method, &registration.client_secret, &registration.key) {
                (AuthMethod::PrivateKeyJwt, _, Some(key)) => {
                    form.push(("client_id", registration.client_id.clone()));
                    form.push(("client_assertion_type", CLIENT_ASSERTION_TYPE.to_owned()));
                    form.push(("client_assertion", key.client_assertion(&registration.client_id, audience)?));
                }
                (AuthMethod::Basic, Some(secret), _) => {
                    // RFC 6749 section 2.3.1: each part form-encoded, then Basic.
                    let id: String = form_urlencoded::byte_serialize(registration.client_id.as_bytes()).collect();
                    let secret: String = form_urlencoded::byte_serialize(secret.as_bytes()).collect();
                    request =
                        request.header(AUTHORIZATION, format!("Basic {}", STANDARD.encode(format!("{id}:{secret}"))));
                }
                (AuthMethod::Post, Some(secret), _) => {
                    form.push(("client_id", registration.client_id.clone()));
                    form.push(("client_secret", secret.clone()));
                }
                _ if registration.client_id.is_empty() => {}
                _ => form.push(("client_id", registration.client_id.clone())),
            }
            if let Some(key) = dpop {
                request = request.header(DPOP, key.dpop_proof("POST", &url, nonce.as_deref(), None)?);
            }
            let body = form_urlencoded::Serializer::new(String::new()).extend_pairs(form.iter()).finish();
            let response = request.body(body).send().await.map_err(|e| http_error(endpoint, &e))?;
            let status = response.status();
            if status.is_redirection() || *response.url() != url {
                return Err(OAuthError::Redirected { url: endpoint.to_owned(), status: status.as_u16() });
            }
            let new_nonce = dpop_nonce(response.headers()).map(str::to_owned);
            let body = read_limited(endpoint, response).await?;
            let document: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let error = document.get("error").and_then(Value::as_str);
            if dpop.is_some()
                && let Some(new_nonce) = new_nonce
            {
                let fresh = nonce.as_deref() != Some(new_nonce.as_str());
                *nonce = Some(new_nonce);
                if status == StatusCode::BAD_REQUEST && error == Some("use_dpop_nonce") && fresh && !retried {
                    tracing::debug!("the authorization server asks for a DPoP nonce; retrying with it");
                    retried = true;
                    continue;
                }
            }
            if status != StatusCode::OK {
                return Err(OAuthError::TokenEndpoint {
                    status: status.as_u16(),
                    error: error.unwrap_or("refused").to_owned(),
                    description: document.get("error_description").and_then(Value::as_str).map(str::to_owned),
                });
            }
            if !document.is_object() {
                return Err(OAuthError::MalformedTokenResponse("not a JSON object".into()));
            }
            return Ok(document);
        }
    }

    /// The tokens of a token response (`DPoP` ones only when the client asked for them).
    pub(super) fn tokens_from(
        &self,
        answer: Value,
        previous_refresh: Option<String>,
        requested_scope: Option<String>,
        server: &ServerMetadata,
        registration: &Registration,
    ) -> Result<StoredTokens, OAuthError> {
        tokens_from(answer, previous_refresh, requested_scope, server, registration, self.dpop.is_some())
    }
}

/// The tokens of a token response.
fn tokens_from(
    answer: Value,
    previous_refresh: Option<String>,
    requested_scope: Option<String>,
    server: &ServerMetadata,
    registration: &Registration,
    dpop: bool,
) -> Result<StoredTokens, OAuthError> {
    let Some(access_token) = answer.get("access_token").and_then(Value::as_str).filter(|t| !t.is_empty()) else {
        return Err(OAuthError::MalformedTokenResponse("no access_token".into()));
    };
    if access_token.len() > 16 * 1024 || reqwest::header::HeaderValue::from_str(access_token).is_err() {
        return Err(OAuthError::MalformedTokenResponse("the access token cannot be sent in a header".into()));
    }
    let dpop_bound = match answer.get("token_type").and_then(Value::as_str) {
        Some(t) if t.eq_ignore_ascii_case("bearer") => false,
        Some(t) if dpop && t.eq_ignore_ascii_case("dpop") => true,
        Some(t) => return Err(OAuthError::MalformedTokenResponse(format!("token type `{t}` is not Bearer"))),
        None => return Err(OAuthError::MalformedTokenResponse("no token_type".into())),
    };
    let expires_at = answer
        .get("expires_in")
        .and_then(Value::as_u64)
        .and_then(|s| SystemTime::now().checked_add(Duration::from_secs(s.min(10 * 365 * 24 * 3600))));
    let scope = requested_scope.or_else(|| answer.get("scope").and_then(Value::as_str).map(str::to_owned));
    Ok(StoredTokens {
        access_token: access_token.to_owned(),
        refresh_token: answer.get("refresh_token").and_then(Value::as_str).map(str::to_owned).or(previous_refresh),
        expires_at,
        scope,
        issuer: server.issuer.clone(),
        client_id: registration.client_id.clone(),
        client_secret: registration.client_secret.clone(),
        dpop_bound,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::oauth::metadata::test_server as server;

    #[test]
    fn token_responses_are_checked() {
        let s = server(false);
        let r = Registration { client_id: "c".into(), client_secret: None, method: AuthMethod::None, key: None };
        let ok = tokens_from(
            serde_json::json!({"access_token": "t", "token_type": "bearer", "expires_in": 60}),
            None,
            None,
            &s,
            &r,
            false,
        )
        .unwrap();
        assert_eq!(ok.access_token, "t");
        assert!(ok.expires_at.is_some());
        assert!(tokens_from(serde_json::json!({"token_type": "Bearer"}), None, None, &s, &r, false).is_err());
        assert!(
            tokens_from(serde_json::json!({"access_token": "t", "token_type": "DPoP"}), None, None, &s, &r, false)
                .is_err()
        );
        assert!(
            tokens_from(serde_json::json!({"access_token": "t\n", "token_type": "Bearer"}), None, None, &s, &r, false)
                .is_err()
        );
    }
}
