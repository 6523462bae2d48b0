//! `resources/read`, `resources/subscribe` and `resources/unsubscribe`, registering resources
//! on the builder, and announcing updates to subscribers.

use std::collections::HashMap;
use std::sync::Arc;

use super::context_side::context;
use super::handling::{params, to_raw};
use super::state::SessionState;
use super::{Server, ServerBuilder, ServerInner};
use crate::engine::{HandlerResult, Handling, RequestScope};
use crate::protocol::{EmptyResult, ErrorObject, Request, ResourceUriParams};
use crate::resource::{ResourceCall, ResourceDef};

impl ServerBuilder {
    /// Registers a resource or a resource template. A URI (or template) registered twice, or an
    /// invalid template, makes [`build`](Self::build) fail.
    pub fn resource(mut self, resource: ResourceDef) -> Self {
        self.surface.resources.push(resource);
        self
    }

    /// Registers several resources and templates, e.g. `resources![readme, user_profile]`.
    pub fn resources(mut self, resources: impl IntoIterator<Item = ResourceDef>) -> Self {
        self.surface.resources.extend(resources);
        self
    }

    /// Accepts `resources/subscribe` (declaring `resources.subscribe`): the application then
    /// announces changes with [`Server::notify_resource_updated`], which reaches the sessions
    /// subscribed to that URI.
    pub fn resource_subscriptions(mut self) -> Self {
        self.surface.subscriptions = true;
        self
    }
}

/// The most resources one session may subscribe to at once.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 10_000;

/// The definition serving `uri` and the template variables it matched: a static resource by
/// exact URI first, else the first template (in registration order) that matches.
pub(crate) fn resolve(server: &ServerInner, uri: &str) -> Option<(ResourceDef, HashMap<String, String>)> {
    if let Some(entry) = server.surface.resources.get(uri) {
        return Some((entry.def, HashMap::new()));
    }
    let templates = server.surface.templates.snapshot();
    templates.items.iter().find_map(|t| t.parsed.matches(uri).map(|vars| (t.def.clone(), vars)))
}

/// Answers `resources/read`; an unknown URI is -32002 with `data.uri`.
pub(crate) fn read(
    server: &Arc<ServerInner>,
    session: &Arc<SessionState>,
    request: Request,
    scope: RequestScope,
) -> Handling {
    let p: ResourceUriParams = match params(&request) {
        Ok(p) => p,
        Err(e) => return Handling::Ready(Err(e)),
    };
    let Some((def, variables)) = resolve(server, &p.uri) else {
        return Handling::Ready(Err(ErrorObject::resource_not_found(&p.uri)));
    };
    let ctx = context(server, session, &request, scope);
    let fut = def.read(ResourceCall { ctx, uri: p.uri, variables });
    Handling::future(async move { to_raw(&fut.await?) })
}

/// Answers `resources/subscribe` (`on`) and `resources/unsubscribe`. Subscribing to a URI no
/// resource or template serves is -32002.
pub(crate) fn subscribe(server: &ServerInner, session: &SessionState, request: &Request, on: bool) -> HandlerResult {
    let p: ResourceUriParams = params(request)?;
    let mut subscriptions = session.settings.subscriptions.lock().map_err(|_| ErrorObject::internal("poisoned"))?;
    if on {
        if resolve(server, &p.uri).is_none() {
            return Err(ErrorObject::resource_not_found(&p.uri));
        }
        if subscriptions.len() >= MAX_SUBSCRIPTIONS && !subscriptions.contains(&p.uri) {
            return Err(ErrorObject::invalid_params(format!(
                "a session may subscribe to at most {MAX_SUBSCRIPTIONS} resources; unsubscribe from some first"
            )));
        }
        subscriptions.insert(p.uri);
    } else {
        subscriptions.remove(&p.uri);
    }
    to_raw(&EmptyResult {})
}

impl Server {
    /// Sends `notifications/resources/updated` for `uri` to every session subscribed to it
    /// (`resources/subscribe`), and to every 2026-era subscription (`subscriptions/listen`) that
    /// names it; returns how many sessions and subscriptions it reached.
    ///
    /// In a shared deployment (an HTTP endpoint with a backplane that has a message bus), the
    /// other instances tell theirs too; the count is of this instance's.
    pub async fn notify_resource_updated(&self, uri: &str) -> usize {
        #[cfg(feature = "http")]
        if let Some(deployment) = self.inner.deployment.get() {
            deployment.resource_updated(uri);
        }
        self.notify_resource_updated_here(uri).await
    }

    /// Tells this instance's sessions and subscriptions that `uri` was updated.
    pub(crate) async fn notify_resource_updated_here(&self, uri: &str) -> usize {
        let params = ResourceUriParams { uri: uri.to_owned() };
        let surface = &self.inner.surface;
        let method = "notifications/resources/updated";
        let (sessions, listeners) = tokio::join!(
            surface.sessions.broadcast(method, &params, |s| {
                s.settings.subscriptions.lock().is_ok_and(|subs| subs.contains(uri))
            }),
            surface.listeners.broadcast(method, &params, |f| {
                f.resource_subscriptions.as_ref().is_some_and(|uris| uris.iter().any(|u| u == uri))
            })
        );
        sessions + listeners
    }
}
