//! Making a request's [`Context`], and the server's side of every context it makes
//! ([`ServerSide`]): each method a call into the module that holds the logic.

use std::any::TypeId;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use serde_json::value::RawValue;

use super::state::SessionState;
use super::{ServerInner, client_requests, elicit, logging, sampling, session_context, url};
use crate::auth::AuthInfo;
use crate::elicit::{ElicitError, Elicitation, FormSchema};
use crate::engine::{BoxFuture, PeerError, RequestScope};
use crate::handler::context::{ClientRequestError, CompleteError, Completed, SessionKey, UrlElicitRequest};
use crate::handler::{Context, Meta, ServerSide};
use crate::protocol::view::ClientState;
use crate::protocol::{
    CreateMessageParams, CreateMessageResult, ElicitRequestParams, ElicitResult, JsonObject, LoggingLevel,
    ProgressToken, Request, RequestMeta, Root,
};

/// The request context for `request`, with its `_meta` and the progress token there, if any.
pub(crate) fn context(
    server: &Arc<ServerInner>,
    session: &Arc<SessionState>,
    request: &Request,
    scope: RequestScope,
) -> Context {
    #[derive(serde::Deserialize)]
    struct MetaOnly<'a> {
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<&'a RawValue>,
    }
    let meta = request
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str::<MetaOnly<'_>>(p.get()).ok())
        .and_then(|m| m.meta)
        .filter(|m| m.get().starts_with('{'));
    let token = meta.and_then(|m| serde_json::from_str::<RequestMeta>(m.get()).ok()).and_then(|m| m.progress_token);
    let meta = Meta::checked(meta.map(RawValue::get));
    for_request(scope, token, meta, session.clone(), server.clone())
}

/// A context for a request of `session` on `server`.
pub(crate) fn for_request(
    scope: RequestScope,
    progress_token: Option<ProgressToken>,
    meta: Meta,
    session: Arc<SessionState>,
    server: Arc<ServerInner>,
) -> Context {
    Context::new(scope, progress_token, meta, session, server, &Side)
}

/// The server's side of every context it makes.
struct Side;

impl ServerSide for Side {
    fn session_key(&self, ctx: &Context) -> SessionKey {
        session_context::session_of(ctx).key()
    }

    fn principal<'c>(&self, ctx: &'c Context) -> Option<&'c str> {
        session_context::session_of(ctx).principal.as_deref()
    }

    fn auth(&self, ctx: &Context) -> Option<Arc<AuthInfo>> {
        #[cfg(feature = "http")]
        let http = ctx.http();
        #[cfg(not(feature = "http"))]
        let http = None;
        session_context::session_of(ctx).auth_over(http).0
    }

    fn client<'c>(&self, ctx: &'c Context) -> Option<&'c ClientState> {
        session_context::session_of(ctx).client()
    }

    fn state(&self, ctx: &Context, type_id: TypeId) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        session_context::server_of(ctx).state.get(&type_id).cloned()
    }

    fn supports_url_mode(&self, ctx: &Context) -> bool {
        elicit::supports_url_mode(ctx)
    }

    fn send_form<'a>(
        &self,
        ctx: &'a Context,
        message: &'a str,
        schema: &'a FormSchema,
        timeout: Option<Duration>,
        key: Option<&'a str>,
        before_task: bool,
    ) -> BoxFuture<'a, Result<Elicitation<JsonObject>, ElicitError>> {
        Box::pin(elicit::send_form(ctx, message, schema, timeout, key, before_task))
    }

    fn elicit_raw<'a>(
        &self,
        ctx: &'a Context,
        params: ElicitRequestParams,
        timeout: Option<Duration>,
    ) -> BoxFuture<'a, Result<ElicitResult, ElicitError>> {
        Box::pin(elicit::elicit_raw(ctx, params, timeout, None))
    }

    fn new_url_elicitation_id(&self, ctx: &Context) -> String {
        url::new_url_elicitation_id(ctx)
    }

    fn elicit_url<'a>(&self, request: UrlElicitRequest<'a>) -> BoxFuture<'a, Result<Elicitation<String>, ElicitError>> {
        Box::pin(url::elicit(request))
    }

    fn complete_url_elicitation<'a>(
        &self,
        ctx: &'a Context,
        elicitation_id: &'a str,
    ) -> BoxFuture<'a, Result<Completed, CompleteError>> {
        Box::pin(url::complete(ctx, elicitation_id))
    }

    fn sample<'a>(
        &self,
        ctx: &'a Context,
        params: CreateMessageParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ClientRequestError>> {
        Box::pin(sampling::sample(ctx, params))
    }

    fn roots<'a>(&self, ctx: &'a Context) -> BoxFuture<'a, Result<Vec<Root>, ClientRequestError>> {
        Box::pin(sampling::roots(ctx))
    }

    fn logs(&self, ctx: &Context, level: LoggingLevel) -> bool {
        logging::logs(ctx, level)
    }

    fn log<'a>(
        &self,
        ctx: &'a Context,
        level: LoggingLevel,
        logger: Option<&'a str>,
        data: Result<Value, serde_json::Error>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(logging::log(ctx, level, logger, data))
    }

    fn wants_progress(&self, ctx: &Context) -> bool {
        session_context::wants_progress(ctx)
    }

    fn progress<'a>(
        &self,
        ctx: &'a Context,
        value: f64,
        total: Option<f64>,
        message: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), PeerError>> {
        Box::pin(session_context::progress(ctx, value, total, message))
    }

    fn is_multi_round_trip(&self, ctx: &Context) -> bool {
        client_requests::is_multi_round_trip(ctx)
    }

    fn round_trip_id<'c>(&self, ctx: &'c Context) -> Option<&'c str> {
        client_requests::round_trip_id(ctx)
    }
}
