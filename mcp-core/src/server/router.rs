//! The one router of both eras: which handler answers each method.
//!
//! A request reaches it from a 2025-era session ([`super::session`]) or from the 2026-era
//! driver ([`super::era_2026`]), once the method is known to be valid in its era and offered
//! by this server (see [`offers`]). Every fact about a method lives in its row of
//! [`crate::protocol::methods`]; this file is only the `match` from a method to its handler.
//!
//! Adding a method: a variant of [`Method`] and its row in the method table, its wire types
//! in `protocol/`; then this file's `match` (which has no catch-all arm) fails to compile until
//! the method has an arm here, and one handler file in this folder that uses
//! [`super::handling`] and [`super::state`].

use std::sync::Arc;

use super::ServerInner;
use super::context_side::context;
use super::handling::{params, ready, to_raw};
use super::state::SessionState;
use serde_json::value::RawValue;

use crate::engine::{Handling, Peer, RequestScope};
use crate::handler::Meta;
use crate::middleware::{Incoming, IncomingInner};
use crate::protocol::methods::{Era, Gate, Method, MethodInfo};
use crate::protocol::view::{NO_PARAMS, ParamsView};
use crate::protocol::{CompleteParams, EmptyResult, ErrorObject, MethodName, PaginatedParams, Request};

/// Whether this server answers `method`: what its row's gate asks for is declared.
pub(crate) fn offers(server: &ServerInner, method: &MethodInfo) -> bool {
    let c = &server.capabilities;
    match method.gate {
        Gate::None => true,
        Gate::Tools => c.tools.is_some(),
        Gate::Prompts => c.prompts.is_some(),
        Gate::Resources => c.resources.is_some(),
        Gate::ResourceSubscriptions => c.resources.as_ref().is_some_and(|r| r.subscribe == Some(true)),
        Gate::Logging => c.logging.is_some(),
        Gate::Completions => c.completions.is_some(),
        Gate::Tasks => server.tasks.enabled,
        #[cfg(feature = "skills")]
        Gate::Skills | Gate::SkillsDirectory => super::skills::offers(server, method.gate == Gate::SkillsDirectory),
        #[cfg(not(feature = "skills"))]
        Gate::Skills | Gate::SkillsDirectory => false,
        Gate::Client => false,
    }
}

/// Answers a request of an initialized session, or of a 2026-era request (`state` is then
/// that request's own), through the server's middleware when it has some. `view` is its
/// parameters, when they were read already.
pub(crate) fn serve(
    server: &Arc<ServerInner>,
    state: &Arc<SessionState>,
    method: &'static MethodInfo,
    request: Request,
    view: Option<ParamsView>,
    scope: RequestScope,
) -> Handling {
    if server.middleware.is_empty() {
        return dispatch(server, state, method, request, view, scope);
    }
    // Read once, for the middleware and for the handler. Parameters that cannot be read go on
    // unread: the handler says why.
    let view = view.or_else(|| {
        let text = request.params.as_deref().map_or(NO_PARAMS, RawValue::get);
        ParamsView::read(text, Some(method)).ok()
    });
    let incoming = incoming(state, method, &request, view.as_ref(), &scope);
    let (chain, server, state) = (server.middleware.clone(), server.clone(), state.clone());
    crate::middleware::wrap(&chain, incoming, move || dispatch(&server, &state, method, request, view, scope))
}

/// What middleware sees of a request.
fn incoming(
    state: &SessionState,
    method: &'static MethodInfo,
    request: &Request,
    view: Option<&ParamsView>,
    scope: &RequestScope,
) -> Incoming {
    let text = request.params.as_deref().map_or(NO_PARAMS, RawValue::get);
    let read;
    let view = match view {
        Some(view) => view,
        None => {
            read = ParamsView::read(text, Some(method)).unwrap_or_default();
            &read
        }
    };
    let meta = ParamsView::text(text, &view.meta).filter(|m| m.starts_with('{'));
    let era = if state.rounds.is_some() { Era::Y2026 } else { Era::Y2025 };
    Incoming::new(IncomingInner {
        id: scope.id.clone(),
        method,
        era,
        target: view.target(text).map(str::to_owned),
        params: request.params.clone(),
        meta: Meta::checked(meta),
        principal: state.principal.clone(),
        auth: state.auth(scope).0,
        session: (era == Era::Y2025).then(|| state.key().0),
        #[cfg(feature = "http")]
        http: scope.http.clone(),
    })
}

/// The `match` from a method to its handler.
fn dispatch(
    server: &Arc<ServerInner>,
    state: &Arc<SessionState>,
    method: &'static MethodInfo,
    request: Request,
    view: Option<ParamsView>,
    scope: RequestScope,
) -> Handling {
    let s = &server.surface;
    let page = |request: &Request, list: &dyn Fn(Option<&str>) -> crate::engine::HandlerResult| {
        if let Some(filtered) = super::scopes::filtered_list(server, state, &scope, method.id) {
            return ready(filtered);
        }
        ready(params(request).and_then(|p: PaginatedParams| list(p.cursor.as_deref())))
    };
    match method.id {
        Method::ToolsCall => {
            super::tools::call(server, state, method, request, view, scope).unwrap_or_else(|e| ready(Err(e)))
        }
        Method::ToolsList => super::tools::list(server, state, &scope, &request),
        Method::Ping => ready(to_raw(&EmptyResult {})),
        Method::PromptsList => page(&request, &|c| s.prompts.page(c)),
        Method::PromptsGet => super::prompts::get(server, state, request, scope),
        Method::ResourcesList => page(&request, &|c| s.resources.page(c)),
        Method::ResourcesTemplatesList => page(&request, &|c| s.templates.page(c)),
        Method::ResourcesRead => super::resources::read(server, state, request, scope),
        Method::ResourcesSubscribe => ready(super::resources::subscribe(server, state, &request, true)),
        Method::ResourcesUnsubscribe => ready(super::resources::subscribe(server, state, &request, false)),
        Method::LoggingSetLevel => ready(super::logging::set_level(state, &request)),
        Method::CompletionComplete => {
            let p: CompleteParams = match params(&request) {
                Ok(p) => p,
                Err(e) => return ready(Err(e)),
            };
            match super::completion::complete(server, || context(server, state, &request, scope), p) {
                Ok(fut) => Handling::future(async move { to_raw(&fut.await?) }),
                Err(e) => ready(Err(e)),
            }
        }
        Method::ServerDiscover => ready(super::discover::discover(server)),
        Method::SubscriptionsListen => {
            let (server, state) = (server.clone(), state.clone());
            Handling::future(async move { super::listen::listen(&server, &state, &request, scope).await })
        }
        Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
            let (server, state) = (server.clone(), state.clone());
            Handling::future(async move { super::tasks::handle(&server, &state, &request).await })
        }
        #[cfg(feature = "skills")]
        Method::SkillsList | Method::SkillsGet | Method::ResourcesDirectoryRead => {
            ready(super::skills::answer(server, method.id, &request))
        }
        #[cfg(not(feature = "skills"))]
        Method::SkillsList | Method::SkillsGet | Method::ResourcesDirectoryRead => {
            ready(Err(ErrorObject::method_not_found(method.name)))
        }
        // `initialize` is the session's own (see `super::session`); the rest are sent by servers,
        // or are notifications.
        Method::Initialize
        | Method::ElicitationCreate
        | Method::SamplingCreateMessage
        | Method::RootsList
        | Method::Initialized
        | Method::Cancelled
        | Method::Progress
        | Method::Message
        | Method::RootsListChanged
        | Method::ToolsListChanged
        | Method::PromptsListChanged
        | Method::ResourcesListChanged
        | Method::ResourcesUpdated
        | Method::ElicitationComplete
        | Method::SubscriptionsAcknowledged
        | Method::Tasks => ready(Err(ErrorObject::method_not_found(method.name))),
    }
}

/// Handles a client notification of a 2025-era session.
pub(crate) fn on_notification(
    server: &Arc<ServerInner>,
    session: &Arc<SessionState>,
    method: &MethodName,
    peer: &Peer,
) {
    match method.id() {
        Some(Method::Initialized) => server.surface.sessions.register(peer.unrelated(), session.clone()),
        Some(Method::RootsListChanged) => super::sampling::roots_changed(server, session, peer),
        _ => tracing::debug!(method = method.as_str(), "ignored notification"),
    }
}
