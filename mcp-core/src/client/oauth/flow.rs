//! When the flow runs: the access token to send (refreshed once it expired), a 401 (refresh,
//! or authorize anew), a 403 `insufficient_scope` (step up to more scopes).

use std::time::{Duration, SystemTime};

use super::OAuthError;
use super::challenge::{self, BearerChallenge};
use super::config::Grant;
use super::metadata::{ResourceMetadata, ServerMetadata, origin};
use super::tokens::{Current, FlowState, OAuthLogin};

/// How long before its expiry a token is refreshed instead of sent.
const EXPIRY_MARGIN: Duration = Duration::from_secs(10);

impl OAuthLogin {
    /// The access token to send now, loading it from the store the first time and refreshing
    /// it when it has expired.
    pub(crate) async fn bearer(&self) -> Option<String> {
        let now = SystemTime::now();
        let current = self.current.read().ok().and_then(|c| c.clone());
        match current {
            Some(Current { token, expires_at: None, .. }) => return Some(token),
            Some(Current { token, expires_at: Some(expiry), .. }) if expiry > now + EXPIRY_MARGIN => {
                return Some(token);
            }
            _ => {}
        }
        let mut state = self.state.lock().await;
        self.load(&mut state).await;
        let expired = state
            .tokens
            .as_ref()
            .is_some_and(|t| t.refresh_token.is_some() && t.expires_at.is_some_and(|e| e <= now + EXPIRY_MARGIN));
        if expired && let Err(e) = self.refresh(&mut state).await {
            tracing::debug!(error = %e, "refreshing an expired access token failed");
        }
        self.current.read().ok().and_then(|c| c.as_ref().map(|c| c.token.clone()))
    }

    /// The request sent with `used` was answered 401 with `header` as `WWW-Authenticate`:
    /// refreshes or authorizes so that it can be retried.
    pub(crate) async fn unauthorized(&self, used: Option<&str>, header: Option<&str>) -> Result<(), OAuthError> {
        let mut state = self.state.lock().await;
        self.load(&mut state).await;
        if self.replaced_since(used) {
            return Ok(());
        }
        let challenge = header.and_then(challenge::parse).unwrap_or_default();
        let resource = self.discover_resource_or_legacy(challenge.resource_metadata.as_deref()).await?;
        let issuer = self.issuer_of(&resource, &state)?;
        let server = match &state.server {
            Some(s) if s.issuer == issuer => s.clone(),
            _ => self.discover_server_or_legacy(&issuer, resource.legacy).await?,
        };
        state.resource = Some(resource.clone());
        state.server = Some(server.clone());
        let same_server = state.tokens.as_ref().is_some_and(|t| t.issuer == server.issuer);
        if !same_server && state.tokens.is_some() {
            tracing::info!(issuer = %server.issuer, "the protected resource moved to another authorization server");
            state.tokens = None;
            self.set_current(None);
        }
        if used.is_some() && state.tokens.as_ref().is_some_and(|t| t.refresh_token.is_some()) {
            match self.refresh(&mut state).await {
                Ok(()) => return Ok(()),
                Err(e) => tracing::debug!(error = %e, "refreshing the refused token failed; authorizing anew"),
            }
        }
        let scope = self.initial_scope(&challenge, &resource, &server);
        self.authorize(&mut state, scope).await
    }

    /// The request sent with `used` was answered 403 `insufficient_scope`: authorizes again
    /// with the scopes held and those the challenge asks for. Fails when that would ask for
    /// nothing new.
    pub(crate) async fn insufficient_scope(&self, used: Option<&str>, header: &str) -> Result<(), OAuthError> {
        let mut state = self.state.lock().await;
        self.load(&mut state).await;
        if self.replaced_since(used) {
            return Ok(());
        }
        let challenge = challenge::parse(header).unwrap_or_default();
        let Some(wanted) = challenge.scope.clone().filter(|s| !s.trim().is_empty()) else {
            return Err(OAuthError::InsufficientScope { scope: String::new() });
        };
        let held = state.tokens.as_ref().and_then(|t| t.scope.clone()).unwrap_or_default();
        let union = union_scopes(&held, &wanted);
        if scope_set(&union) == scope_set(&held) {
            return Err(OAuthError::InsufficientScope { scope: wanted });
        }
        if state.resource.is_none() || state.server.is_none() {
            let resource = self.discover_resource_or_legacy(challenge.resource_metadata.as_deref()).await?;
            let server = self.discover_server_or_legacy(&self.issuer_of(&resource, &state)?, resource.legacy).await?;
            state.resource = Some(resource);
            state.server = Some(server);
        }
        tracing::info!(scope = %union, "stepping up authorization for more scopes");
        self.authorize(&mut state, Some(union)).await
    }

    /// The authorization server to use among those the resource names: the expected issuer
    /// and no other when there is one, else one the client registered with dynamically, else
    /// the first. A grant that sends credentials never gets here without an expected issuer
    /// unless the application trusts any.
    fn issuer_of(&self, resource: &ResourceMetadata, state: &FlowState) -> Result<String, OAuthError> {
        self.config.check_issuer()?;
        let servers = &resource.authorization_servers;
        if let Some(expected) = self.config.expected_issuer() {
            let offered =
                servers.iter().any(|s| s == expected) || (servers.is_empty() && origin(&self.server_url) == expected);
            if !offered {
                return Err(OAuthError::UnexpectedIssuer { expected: expected.to_owned(), offered: servers.clone() });
            }
            return Ok(expected.to_owned());
        }
        if let Some(issuer) = servers.iter().find(|s| state.registrations.contains_key(*s)) {
            return Ok(issuer.clone());
        }
        Ok(servers.first().cloned().unwrap_or_else(|| origin(&self.server_url)))
    }

    /// Scopes for a first authorization: the challenge's, else the resource's
    /// `scopes_supported`, else none; with `offline_access` when the server offers it.
    fn initial_scope(
        &self,
        challenge: &BearerChallenge,
        resource: &ResourceMetadata,
        server: &ServerMetadata,
    ) -> Option<String> {
        if let Some(scope) = &self.config.scope {
            return Some(scope.clone());
        }
        let base = challenge
            .scope
            .clone()
            .filter(|s| !s.trim().is_empty())
            .or_else(|| resource.scopes_supported.as_ref().filter(|s| !s.is_empty()).map(|s| s.join(" ")));
        let offline = self.config.offline_access
            && matches!(self.config.grant, Grant::AuthorizationCode(_))
            && server.scopes_supported.as_ref().is_some_and(|s| s.iter().any(|x| x == "offline_access"));
        match (base, offline) {
            (Some(base), true) => Some(union_scopes(&base, "offline_access")),
            (None, true) => Some("offline_access".into()),
            (base, false) => base,
        }
    }
}

/// The union of two space-separated scope lists, in order, without duplicates.
fn union_scopes(first: &str, second: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for scope in first.split_whitespace().chain(second.split_whitespace()) {
        if !out.contains(&scope) {
            out.push(scope);
        }
    }
    out.join(" ")
}

fn scope_set(scopes: &str) -> std::collections::BTreeSet<&str> {
    scopes.split_whitespace().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_unite_in_order() {
        assert_eq!(union_scopes("a b", "b c"), "a b c");
        assert_eq!(union_scopes("", "x"), "x");
    }
}
