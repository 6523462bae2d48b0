//! The grants: authorization code with PKCE, client credentials, workload identity (RFC 7523),
//! enterprise-managed authorization (RFC 8693, then RFC 7523), and the refresh of tokens.

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Url;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::OAuthError;
use super::client_auth::{AuthMethod, Registration};
use super::config::{EnterpriseAuthorization, Grant};
use super::metadata::{ResourceMetadata, ServerMetadata};
use super::tokens::{FlowState, OAuthLogin};

/// RFC 7523 section 2.1.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// RFC 8693 section 2.1.
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The identity assertion authorization grant's token type (SEP-990).
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// RFC 8693 section 3.
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";

impl OAuthLogin {
    /// Obtains tokens with the configured grant and keeps them.
    pub(super) async fn authorize(&self, state: &mut FlowState, scope: Option<String>) -> Result<(), OAuthError> {
        let (Some(resource), Some(server)) = (state.resource.clone(), state.server.clone()) else {
            return Err(OAuthError::NoResourceMetadata { server: self.server_url.to_string() });
        };
        let registration = self.registration(state, &server).await?;
        let mut form = match &self.config.grant {
            Grant::AuthorizationCode(authorizer) => {
                self.authorization_code(authorizer.as_ref(), &resource, &server, &registration, scope.as_deref())
                    .await?
            }
            Grant::ClientCredentials => {
                tracing::info!(issuer = %server.issuer, "requesting a token with client credentials");
                vec![("grant_type", "client_credentials".to_owned())]
            }
            Grant::WorkloadIdentity(source) => {
                tracing::info!(issuer = %server.issuer, "requesting a token with the workload's identity");
                vec![("grant_type", JWT_BEARER.to_owned()), ("assertion", source.token().await?)]
            }
            Grant::Enterprise(enterprise) => {
                let grant = self.identity_assertion(enterprise, &resource, &server, scope.as_deref()).await?;
                tracing::info!(issuer = %server.issuer, "requesting a token with the identity assertion grant");
                vec![("grant_type", JWT_BEARER.to_owned()), ("assertion", grant)]
            }
        };
        form.push(("resource", resource.resource.clone()));
        if let (false, Some(scope)) = (matches!(self.config.grant, Grant::AuthorizationCode(_)), &scope) {
            form.push(("scope", scope.clone()));
        }
        let answer = self.token_request(state, &server, &registration, &form).await?;
        let tokens = self.tokens_from(answer, None, scope, &server, &registration)?;
        self.save(state, tokens).await;
        Ok(())
    }

    /// The authorization code flow with PKCE: the token request's form.
    async fn authorization_code(
        &self,
        authorizer: &dyn super::Authorizer,
        resource: &ResourceMetadata,
        server: &ServerMetadata,
        registration: &Registration,
        scope: Option<&str>,
    ) -> Result<Vec<(&'static str, String)>, OAuthError> {
        if !server.pkce_s256 {
            return Err(OAuthError::PkceNotSupported { issuer: server.issuer.clone() });
        }
        let Some(endpoint) = &server.authorization_endpoint else {
            return Err(OAuthError::MalformedMetadata {
                url: server.issuer.clone(),
                reason: "no `authorization_endpoint`".into(),
            });
        };
        let redirect_uri = authorizer.redirect_uri();
        let verifier = random_token()?;
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let expected_state = random_token()?;
        let mut url = self.policy.check(endpoint)?;
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &registration.client_id)
                .append_pair("redirect_uri", &redirect_uri)
                .append_pair("code_challenge", &challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &expected_state)
                .append_pair("resource", &resource.resource);
            if let Some(scope) = scope {
                query.append_pair("scope", scope);
            }
        }
        tracing::info!(issuer = %server.issuer, scope = scope.unwrap_or(""), "authorization required");
        let redirect = authorizer.authorize(url.to_string()).await?;
        let code = check_redirect(&redirect, &expected_state, server)?;
        Ok(vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
        ])
    }

    /// Enterprise-managed authorization, first step: exchanges the person's identity provider
    /// token for an identity assertion authorization grant for `server` (RFC 8693).
    async fn identity_assertion(
        &self,
        enterprise: &EnterpriseAuthorization,
        resource: &ResourceMetadata,
        server: &ServerMetadata,
        scope: Option<&str>,
    ) -> Result<String, OAuthError> {
        let subject = enterprise.id_token.token().await?;
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE.to_owned()),
            ("requested_token_type", ID_JAG.to_owned()),
            ("audience", server.issuer.clone()),
            ("resource", resource.resource.clone()),
            ("subject_token", subject),
            ("subject_token_type", ID_TOKEN_TYPE.to_owned()),
        ];
        if let Some(scope) = scope {
            form.push(("scope", scope.to_owned()));
        }
        let idp = Registration {
            client_id: enterprise.idp_client_id.clone(),
            client_secret: enterprise.idp_client_secret.clone(),
            method: if enterprise.idp_client_secret.is_some() { AuthMethod::Basic } else { AuthMethod::None },
            key: None,
        };
        tracing::info!(idp = %enterprise.idp_token_endpoint, "exchanging the identity token for an authorization grant");
        let mut no_nonce = None;
        let idp_url = super::policy::check_configured(&enterprise.idp_token_endpoint)?;
        let answer = self.post_token(idp_url, &enterprise.idp_token_endpoint, &idp, &form, None, &mut no_nonce).await?;
        match answer.get("issued_token_type").and_then(Value::as_str) {
            Some(ID_JAG) => {}
            other => {
                return Err(OAuthError::MalformedTokenResponse(format!(
                    "the identity provider issued {} instead of an identity assertion grant",
                    other.unwrap_or("no issued_token_type")
                )));
            }
        }
        answer
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| OAuthError::MalformedTokenResponse("no access_token in the token exchange answer".into()))
    }

    /// Exchanges the refresh token for new tokens.
    pub(super) async fn refresh(&self, state: &mut FlowState) -> Result<(), OAuthError> {
        let Some(tokens) = state.tokens.clone() else { return Err(OAuthError::Unauthorized { status: 401 }) };
        let Some(refresh_token) = tokens.refresh_token.clone() else {
            return Err(OAuthError::Unauthorized { status: 401 });
        };
        // Tokens from the store, obtained from another server than the one expected now, are
        // not refreshed there (the refresh request carries the client's secret).
        self.config.check_issuer()?;
        if let Some(expected) = self.config.expected_issuer().filter(|e| *e != tokens.issuer) {
            return Err(OAuthError::UnexpectedIssuer { expected: expected.to_owned(), offered: vec![tokens.issuer] });
        }
        let server = match &state.server {
            Some(s) if s.issuer == tokens.issuer => s.clone(),
            _ => {
                let server = self.discover_server(&tokens.issuer).await?;
                state.server = Some(server.clone());
                server
            }
        };
        let resource = state.resource.as_ref().map_or_else(|| self.server_url.to_string(), |r| r.resource.clone());
        let registration = Registration {
            client_id: tokens.client_id.clone(),
            client_secret: tokens.client_secret.clone(),
            method: AuthMethod::for_client(
                tokens.client_secret.is_some(),
                server.token_endpoint_auth_methods.as_deref(),
            ),
            key: None,
        };
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.clone()),
            ("resource", resource),
        ];
        let answer = match self.token_request(state, &server, &registration, &form).await {
            Ok(answer) => answer,
            Err(e) => {
                // The refresh token is spent or revoked: forget it.
                if let Some(t) = state.tokens.as_mut() {
                    t.refresh_token = None;
                }
                return Err(e);
            }
        };
        let refreshed = self.tokens_from(answer, Some(refresh_token), tokens.scope.clone(), &server, &registration)?;
        tracing::debug!("refreshed the access token");
        self.save(state, refreshed).await;
        Ok(())
    }
}

/// Checks the redirect (RFC 6749 section 4.1.2, RFC 9207) and returns its code.
fn check_redirect(redirect: &str, expected_state: &str, server: &ServerMetadata) -> Result<String, OAuthError> {
    let url = Url::parse(redirect.trim())
        .map_err(|e| OAuthError::InvalidUrl { url: redirect.to_owned(), reason: e.to_string() })?;
    let mut params: HashMap<String, String> = HashMap::new();
    for (name, value) in url.query_pairs() {
        if params.insert(name.clone().into_owned(), value.into_owned()).is_some() {
            return Err(OAuthError::InvalidUrl {
                url: redirect.to_owned(),
                reason: format!("the parameter `{name}` appears more than once"),
            });
        }
    }
    if params.get("state").map(String::as_str) != Some(expected_state) {
        return Err(OAuthError::StateMismatch);
    }
    match params.get("iss") {
        // Simple string comparison: no normalization (RFC 9207 section 2.4).
        Some(iss) if *iss != server.issuer => {
            return Err(OAuthError::IssuerMismatch { expected: server.issuer.clone(), found: iss.clone() });
        }
        None if server.iss_parameter_supported => return Err(OAuthError::MissingIssuer),
        _ => {}
    }
    if let Some(error) = params.get("error") {
        return Err(OAuthError::AuthorizationDenied {
            error: error.clone(),
            description: params.get("error_description").cloned(),
        });
    }
    params.remove("code").filter(|c| !c.is_empty()).ok_or(OAuthError::MissingCode)
}

/// 32 random bytes, base64url: a PKCE verifier (43 characters) or a `state`.
fn random_token() -> Result<String, OAuthError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| OAuthError::Callback(format!("no randomness available: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::oauth::metadata::test_server as server;

    #[test]
    fn redirect_checks_state_and_issuer() {
        let s = server(true);
        assert_eq!(check_redirect("http://cb/?code=c&state=s&iss=http%3A%2F%2Fas.test", "s", &s), Ok("c".into()));
        assert_eq!(
            check_redirect("http://cb/?code=c&state=x&iss=http%3A%2F%2Fas.test", "s", &s),
            Err(OAuthError::StateMismatch)
        );
        assert_eq!(
            check_redirect("http://cb/?code=c&iss=http%3A%2F%2Fas.test", "s", &s),
            Err(OAuthError::StateMismatch)
        );
        assert_eq!(check_redirect("http://cb/?code=c&state=s", "s", &s), Err(OAuthError::MissingIssuer));
        assert!(matches!(
            check_redirect("http://cb/?code=c&state=s&iss=http%3A%2F%2Fas.test%2F", "s", &s),
            Err(OAuthError::IssuerMismatch { .. })
        ));
        // Not advertised: absent is fine, a wrong one is still refused.
        let quiet = server(false);
        assert_eq!(check_redirect("http://cb/?code=c&state=s", "s", &quiet), Ok("c".into()));
        assert!(matches!(
            check_redirect("http://cb/?code=c&state=s&iss=https%3A%2F%2Fevil.example.com", "s", &quiet),
            Err(OAuthError::IssuerMismatch { .. })
        ));
        assert_eq!(check_redirect("http://cb/?state=s", "s", &quiet), Err(OAuthError::MissingCode));
        assert!(matches!(
            check_redirect("http://cb/?state=s&error=access_denied", "s", &quiet),
            Err(OAuthError::AuthorizationDenied { .. })
        ));
        assert!(matches!(check_redirect("not a url", "s", &quiet), Err(OAuthError::InvalidUrl { .. })));
        assert!(matches!(
            check_redirect("http://cb/?code=a&code=b&state=s", "s", &quiet),
            Err(OAuthError::InvalidUrl { .. })
        ));
    }

    #[test]
    fn pkce_verifier_is_43_url_safe_characters() {
        let v = random_token().unwrap();
        assert_eq!(v.len(), 43);
        assert!(v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert_ne!(v, random_token().unwrap());
    }
}
