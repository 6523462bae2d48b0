//! Making a request's [`Context`], and the server's side of every context it makes: a
//! [`RequestSide`], the server and the session as their own types, each method a call into the
//! module that holds the logic.

use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;

use super::state::{RequestSide, SessionState};
use super::{ServerInner, elicit, logging, sampling, url};
use crate::auth::AuthInfo;
use crate::elicit::{ElicitError, Elicitation, FormSchema};
use crate::engine::{BoxFuture, PeerError, RequestScope};
use crate::handler::context::{ClientRequestError, CompleteError, Completed, SessionKey, UrlElicitRequest};
use crate::handler::{Context, Meta, ServerSide};
use crate::multi_round::Rounds;
use crate::protocol::view::ClientState;
use crate::protocol::{
    CreateMessageParams, CreateMessageResult, ElicitRequestParams, ElicitResult, JsonObject, LoggingLevel,
    ProgressToken, Request, RequestMeta, Root,
};
use crate::state_map::StateMap;

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
    Context::new(scope, progress_token, meta, Arc::new(RequestSide { server, session }))
}

impl ServerSide for RequestSide {
    fn session_key(&self) -> SessionKey {
        self.session.key()
    }

    fn principal(&self) -> Option<&str> {
        self.session.principal.as_deref()
    }

    fn auth(&self, ctx: &Context) -> Option<Arc<AuthInfo>> {
        #[cfg(feature = "http")]
        let http = ctx.http();
        #[cfg(not(feature = "http"))]
        let http = {
            let _ = ctx;
            None
        };
        self.session.auth_over(http).0
    }

    fn client(&self) -> Option<&ClientState> {
        self.session.client()
    }

    fn states(&self) -> &StateMap {
        &self.server.state
    }

    fn server_number(&self) -> u64 {
        self.server.number.get()
    }

    fn log_threshold(&self) -> Option<LoggingLevel> {
        logging::threshold(&self.server, &self.session)
    }

    fn runs_as_task(&self) -> bool {
        self.session.task.get().is_some()
    }

    fn hold_task_start(&self) -> Option<crate::multi_round::Hold> {
        if self.session.task.get()?.started() {
            return None;
        }
        self.session.rounds.as_ref().map(crate::multi_round::Rounds::hold)
    }

    fn is_multi_round_trip(&self) -> bool {
        self.rounds().is_some()
    }

    fn round_trip_id(&self) -> Option<&str> {
        self.rounds().map(Rounds::chain)
    }

    fn send_form<'a>(
        &'a self,
        ctx: &'a Context,
        message: &'a str,
        schema: &'a FormSchema,
        timeout: Option<Duration>,
        key: Option<&'a str>,
        before_task: bool,
    ) -> BoxFuture<'a, Result<Elicitation<JsonObject>, ElicitError>> {
        Box::pin(elicit::send_form(self, ctx, message, schema, timeout, key, before_task))
    }

    fn elicit_raw<'a>(
        &'a self,
        ctx: &'a Context,
        params: ElicitRequestParams,
        timeout: Option<Duration>,
    ) -> BoxFuture<'a, Result<ElicitResult, ElicitError>> {
        Box::pin(elicit::elicit_raw(self, ctx, params, timeout, None))
    }

    fn new_url_elicitation_id(&self, ctx: &Context) -> String {
        url::new_url_elicitation_id(self, ctx)
    }

    fn elicit_url<'a>(
        &'a self,
        request: UrlElicitRequest<'a>,
    ) -> BoxFuture<'a, Result<Elicitation<String>, ElicitError>> {
        Box::pin(url::elicit(self, request))
    }

    fn complete_url_elicitation<'a>(
        &'a self,
        elicitation_id: &'a str,
    ) -> BoxFuture<'a, Result<Completed, CompleteError>> {
        Box::pin(url::complete(self, elicitation_id))
    }

    fn sample<'a>(
        &'a self,
        ctx: &'a Context,
        params: CreateMessageParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ClientRequestError>> {
        Box::pin(sampling::sample(self, ctx, params))
    }

    fn roots<'a>(&'a self, ctx: &'a Context) -> BoxFuture<'a, Result<Vec<Root>, ClientRequestError>> {
        Box::pin(sampling::roots(self, ctx))
    }

    fn task_progress<'a>(&'a self, message: String) -> BoxFuture<'a, Result<(), PeerError>> {
        Box::pin(async move {
            let Some(run) = self.session.task.get() else { return Ok(()) };
            run.progress(message).await.map_err(|e| PeerError::Transport(format!("the task could not be saved: {e}")))
        })
    }
}
