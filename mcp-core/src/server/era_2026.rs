//! The 2026 era (MCP 2026-07-28): requests that stand alone, carrying their protocol version
//! and the client's capabilities in `_meta`, and multi round-trip requests.
//!
//! A request is of the 2026 era when its `_meta` names a protocol version
//! (`io.modelcontextprotocol/protocolVersion`); any other request belongs to a 2025-era
//! session opened with `initialize`. Both are served by the same server, on every transport,
//! with the same handlers (see [`super::router`]): a 2026-era request gets a state of its own,
//! built from its `_meta`, and whatever a handler asks of the client (`ctx.elicit`,
//! `ctx.sample`, `ctx.roots`) becomes an `input_required` result (see [`crate::multi_round`]).
//!
//! The request's parameters are read once, into a [`ParamsView`] that goes down to the
//! handler; the result is written once, with what every result of this era carries added as
//! it is copied. A handler that answers without waiting is answered without a future.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::ServerInner;
use super::handling::{error_2026, ready, to_raw};
use super::state::SessionState;
use crate::engine::{HandlerResult, Handling, RequestScope, ResultText};
use crate::multi_round::state::{Binding, Carried, digest};
use crate::multi_round::{Outcome, Rounds, answered, drive, first_run};
use crate::protocol::codes::UNSUPPORTED_PROTOCOL_VERSION;
use crate::protocol::era_2026::META_PROTOCOL_VERSION_KEY;
use crate::protocol::methods::{Direction, Era, Kind, Method, MethodInfo};
use crate::protocol::scan::{Key, Members};
use crate::protocol::view::{Meta2026, Meta2026Text, NO_PARAMS, ParamsView};
use crate::protocol::{
    ErrorObject, JsonObject, META_CLIENT_CAPABILITIES, META_SERVER_INFO, PROTOCOL_VERSION_2026_07_28, Request, codes,
};

/// The verified identity of a request, and whether lists leave out what it may not use.
pub(crate) type Auth = (Option<Arc<crate::auth::AuthInfo>>, bool);

/// Serves `request` if it is of the 2026 era: its `_meta` names a protocol version, or it is
/// `server/discover` (which 2026-era clients send before anything else). Any other request is
/// given back, untouched, to be served by its session.
pub(crate) fn handle_if_2026(
    server: &Arc<ServerInner>,
    principal: Option<String>,
    auth: Auth,
    request: Request,
    scope: RequestScope,
) -> Result<Handling, (Request, RequestScope)> {
    let text = request.params.as_deref().map_or(NO_PARAMS, RawValue::get);
    let discover = request.method == "server/discover";
    // Cheap test first: a 2025-era request almost never holds the key anywhere.
    if !discover && META_PROTOCOL_VERSION_KEY.find(text.as_bytes()).is_none() {
        return Err((request, scope));
    }
    let found = request.method.info();
    let view = match ParamsView::read(text, found) {
        Ok(view) => view,
        // Parameters a 2026-era request carries (its `_meta` names a version) that cannot be
        // read are its invalid parameters; others are the session's to answer.
        Err(e) if discover || names_a_version(text) => {
            let error = ErrorObject::invalid_params(format!("invalid `{}` parameters: {e}", request.method));
            return Ok(ready(Err(error)));
        }
        Err(_) => return Err((request, scope)),
    };
    let meta = ParamsView::text(text, &view.meta).map_or(Ok(Meta2026Text::default()), Meta2026Text::read);
    // Without a version in `_meta`, the key was somewhere else (in an argument, say).
    if !discover && !meta.as_ref().is_ok_and(|m| m.protocol_version.is_some()) {
        return Err((request, scope));
    }
    let meta = match meta.and_then(|m| Meta2026::read(&m)) {
        Ok(meta) => meta,
        Err(error) => return Ok(ready(Err(error))),
    };
    Ok(match start(server, principal, auth, request, Some((view, meta)), scope) {
        Ok(handling) => handling,
        Err(error) => ready(Err(error)),
    })
}

/// Whether `params`' `_meta` names a protocol version, read without regard to the method's own
/// members (which may be what is wrong with them).
fn names_a_version(params: &str) -> bool {
    ParamsView::read(params, None)
        .ok()
        .and_then(|view| ParamsView::text(params, &view.meta))
        .is_some_and(|meta| Meta2026Text::read(meta).is_ok_and(|m| m.protocol_version.is_some()))
}

/// Serves one 2026-era request whose parameters and `_meta` the transport read already (to
/// check its headers).
#[cfg(feature = "http")]
pub(crate) fn handle_read(
    server: &Arc<ServerInner>,
    principal: Option<String>,
    auth: Auth,
    request: Request,
    view: ParamsView,
    meta: Meta2026,
    scope: RequestScope,
) -> Handling {
    match start(server, principal, auth, request, Some((view, meta)), scope) {
        Ok(handling) => handling,
        Err(error) => ready(Err(error)),
    }
}

/// What stays of a request while its handler runs, to conclude it.
struct Pending {
    server: Arc<ServerInner>,
    method: &'static MethodInfo,
    state: Arc<SessionState>,
    rounds: Arc<Rounds>,
    /// For a multi-round method: the binding of its sealed state (made when first needed), and
    /// the parameters it is made from.
    binding: Option<Binding>,
    params: Option<Box<str>>,
}

fn start(
    server: &Arc<ServerInner>,
    principal: Option<String>,
    auth: Auth,
    request: Request,
    read: Option<(ParamsView, Meta2026)>,
    scope: RequestScope,
) -> Result<Handling, ErrorObject> {
    let found = request.method.info();
    let text = request.params.as_deref().map_or(NO_PARAMS, RawValue::get);
    let (view, meta) = match read {
        Some(read) => read,
        None => {
            let view = ParamsView::read(text, found)
                .map_err(|e| ErrorObject::invalid_params(format!("invalid `{}` parameters: {e}", request.method)))?;
            let meta = Meta2026::read(&Meta2026Text::read(ParamsView::text(text, &view.meta).unwrap_or("{}"))?)?;
            (view, meta)
        }
    };
    if meta.client.protocol_version != PROTOCOL_VERSION_2026_07_28 {
        return Err(unsupported_version(&meta.client.protocol_version));
    }
    let method = found
        .filter(|m| m.kind == Kind::Request && m.direction != Direction::ToClient && m.valid_in(Era::Y2026))
        .ok_or_else(|| {
            ErrorObject::new(
                codes::METHOD_NOT_FOUND,
                format!("method not found: {} (not part of protocol {PROTOCOL_VERSION_2026_07_28})", request.method),
            )
        })?;
    if !super::router::offers(server, method) {
        return Err(ErrorObject::method_not_found(method.name));
    }
    // A call that may become a task (the tool allows it, the client negotiated tasks).
    let task = match view.target(text) {
        Some(name) if method.task_capable => {
            super::tasks::plan(server, name, &meta.client.capabilities, principal.as_deref())
        }
        _ => None,
    };
    let mut binding = None;
    let rounds = if method.multi_round {
        carried(server, method, text, &view, principal.as_deref(), &mut binding)?
    } else {
        Rounds::starting(JsonObject::new())
    };
    // The parameters a state sealed in this round is bound to (the handler takes the request).
    let params = (method.multi_round && binding.is_none()).then(|| text.into());
    let rounds = Arc::new(rounds);
    let state = SessionState::for_2026_request(principal, meta.client, meta.log_level, rounds.clone(), auth);
    let scope = match &task {
        // A task is cancelled by `tasks/cancel`, not when the request that made it ends.
        Some(run) => {
            let _ = state.task.set(run.clone());
            RequestScope { cancel: run.cancel.clone(), ..scope }
        }
        None => scope,
    };
    let state = Arc::new(state);
    let handler = super::router::serve(server, &state, method, request, Some(view), scope);
    let pending = Pending { server: server.clone(), method, state, rounds, binding, params };
    Ok(match (handler, task) {
        // Answered at once: concluded at once.
        (Handling::Ready(result), None) => {
            let outcome = answered(result, &pending.rounds);
            Handling::Ready(pending.conclude(outcome))
        }
        (handler, None) => Handling::future(async move {
            let outcome = drive(handler.into_future(), &pending.rounds).await;
            pending.conclude(outcome)
        }),
        (handler, Some(run)) => Handling::future(async move {
            match first_run(handler.into_future(), &pending.rounds).await {
                Ok(outcome) => pending.conclude(outcome),
                // The handler waits: the call goes on as a task.
                Err(handler) => {
                    let result = super::tasks::start(&pending.server, run, handler).await?;
                    finish(&pending.server, pending.method, result.get(), "task")
                }
            }
        }),
    })
}

impl Pending {
    /// The request's answer, from how its handler ended.
    fn conclude(mut self, outcome: Outcome<HandlerResult>) -> HandlerResult {
        let (server, method) = (&*self.server, self.method);
        let outcome = match outcome {
            // A URL flow the user must complete first: in this era, an input request like any
            // other, answered by retrying once the user has been to the page.
            Outcome::Complete(Err(error)) if error.code == codes::URL_ELICITATION_REQUIRED && method.multi_round => {
                url_flows(method.id, &error, &self.state, &self.rounds)?
            }
            outcome => outcome,
        };
        // A handler that failed after asking for something the client did not declare failed
        // for want of that capability: the client is told which (a handler that went on
        // without it, degrading gracefully, completes as usual).
        if let (Some(required), Outcome::Complete(result)) = (self.rounds.required(), &outcome)
            && result.as_ref().map_or(true, |r| is_tool_error(r.get()))
        {
            return Err(missing_capabilities(required));
        }
        match outcome {
            Outcome::Complete(Ok(result)) => finish(server, method, result.get(), "complete"),
            Outcome::Complete(Err(error)) => Err(error_2026(error)),
            Outcome::Rejected(error) => Err(error),
            Outcome::InputRequired(asked) => {
                if !method.multi_round {
                    return Err(ErrorObject::internal(format!("`{}` cannot ask the client for input", method.name)));
                }
                let binding = match self.binding.take() {
                    Some(binding) => binding,
                    None => {
                        let text = self.params.as_deref().unwrap_or(NO_PARAMS);
                        let view = ParamsView::read(text, Some(method)).map_err(ErrorObject::invalid_params)?;
                        binding_of(method, text, &view, self.state.principal.as_deref())?
                    }
                };
                let state = server.request_state.seal(&binding, &self.rounds.carried());
                let mut body = json!({"requestState": state});
                // Nothing to ask (a URL flow still under way): the client retries with the state.
                if !asked.is_empty() {
                    body["inputRequests"] = Value::Object(asked);
                }
                let raw = serde_json::value::to_raw_value(&body)
                    .map_err(|e| ErrorObject::internal(format!("result could not be encoded: {e}")))?;
                finish(server, method, raw.get(), "input_required")
            }
        }
    }
}

/// -32022, listing what is supported.
pub(crate) fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, format!("unsupported protocol version `{requested}`"))
        .with_data(json!({"supported": [PROTOCOL_VERSION_2026_07_28], "requested": requested}))
}

/// The rounds of a request so far: the chain and answers of its sealed `requestState` (none
/// in the first round), with the retry's `inputResponses` added.
/// An answer sealed in an earlier round stands: a retry cannot replace it. The binding the
/// state was checked against is kept in `binding`.
fn carried(
    server: &ServerInner,
    method: &MethodInfo,
    text: &str,
    view: &ParamsView,
    principal: Option<&str>,
    binding: &mut Option<Binding>,
) -> Result<Rounds, ErrorObject> {
    let mut carried = match ParamsView::text(text, &view.request_state) {
        // The first round: its chain is chosen when first needed.
        None => Carried { chain: String::new(), answers: JsonObject::new() },
        Some(sealed) => {
            let sealed: String = serde_json::from_str(sealed)
                .map_err(|_| ErrorObject::invalid_params("`requestState` must be a string"))?;
            let bound = binding.insert(binding_of(method, text, view, principal)?);
            server
                .request_state
                .open(&sealed, bound)
                .map_err(|e| ErrorObject::invalid_params(format!("invalid requestState: {e}")))?
        }
    };
    if let Some(responses) = ParamsView::text(text, &view.input_responses) {
        let responses: JsonObject = serde_json::from_str(responses)
            .map_err(|_| ErrorObject::invalid_params("`inputResponses` must be an object"))?;
        for (key, response) in responses {
            if !response.is_object() {
                return Err(ErrorObject::invalid_params(format!("input response `{key}` must be an object")));
            }
            carried.answers.entry(key).or_insert(response);
        }
    }
    Ok(if carried.chain.is_empty() { Rounds::starting(carried.answers) } else { Rounds::new(carried) })
}

/// What a sealed state must match: method, target, original parameters and user.
fn binding_of(
    method: &MethodInfo,
    text: &str,
    view: &ParamsView,
    principal: Option<&str>,
) -> Result<Binding, ErrorObject> {
    let mut params: JsonObject =
        serde_json::from_str(text).map_err(|e| ErrorObject::invalid_params(format!("invalid parameters: {e}")))?;
    for key in ["_meta", "inputResponses", "requestState"] {
        params.remove(key);
    }
    Ok(Binding {
        method: method.name.to_owned(),
        name: view.target(text).unwrap_or_default().to_owned(),
        digest: digest(&Value::Object(params)),
        principal: principal.map(str::to_owned),
    })
}

/// Adds what every 2026-era result carries as the result is copied once: `resultType`, the
/// server's identity in `_meta`, and caching hints on cacheable results (unless the result
/// has its own).
fn finish(server: &ServerInner, method: &MethodInfo, result: &str, result_type: &str) -> HandlerResult {
    let info = server.era_2026.server_info.as_deref();
    let cache = (result_type == "complete" && method.cacheable).then(|| server.era_2026.cache_hint(method.name));
    let Ok(members) = Members::of(result, 0..result.len()) else {
        return Err(ErrorObject::internal("a result must be a JSON object"));
    };
    let mut out = ResultText::buffer(result.len() + info.map_or(0, str::len) + 96);
    out.push_str("{\"resultType\":\"");
    out.push_str(result_type);
    out.push('"');
    let (mut has_meta, mut has_ttl, mut has_scope) = (false, false, false);
    for member in members {
        let Ok((key, value)) = member else {
            return Err(ErrorObject::internal("a result must be a JSON object"));
        };
        let name = key.in_text(result);
        let value = result.get(value).unwrap_or("null");
        match name {
            "resultType" => continue,
            "_meta" => {
                has_meta = true;
                let body = value.strip_prefix('{').map(str::trim_start);
                match (info, body) {
                    (Some(info), Some(body)) if !value.contains(META_SERVER_INFO) => {
                        out.push_str(",\"_meta\":{\"");
                        out.push_str(META_SERVER_INFO);
                        out.push_str("\":");
                        out.push_str(info);
                        if !body.starts_with('}') {
                            out.push(',');
                        }
                        out.push_str(body);
                    }
                    // An empty `_meta` says nothing.
                    (None, Some(body)) if body.starts_with('}') => {}
                    _ => push_member(&mut out, &key, result, value),
                }
                continue;
            }
            "ttlMs" => has_ttl = true,
            "cacheScope" => has_scope = true,
            _ => {}
        }
        push_member(&mut out, &key, result, value);
    }
    if let (Some(info), false) = (info, has_meta) {
        out.push_str(",\"_meta\":{\"");
        out.push_str(META_SERVER_INFO);
        out.push_str("\":");
        out.push_str(info);
        out.push('}');
    }
    if let Some(hint) = cache {
        if !has_ttl {
            out.push_str(",\"ttlMs\":");
            out.push_str(&hint.ttl_ms.to_string());
        }
        if !has_scope {
            out.push_str(",\"cacheScope\":\"");
            out.push_str(hint.scope.as_str());
            out.push('"');
        }
    }
    out.push('}');
    Ok(ResultText::written(out))
}

/// Writes `,"key":value`, the key as it was written (or encoded again when it held escapes).
fn push_member(out: &mut String, key: &Key, text: &str, value: &str) {
    out.push(',');
    match key {
        Key::Span(_) => {
            out.push('"');
            out.push_str(key.in_text(text));
            out.push('"');
        }
        Key::Decoded(name) => out.push_str(&serde_json::to_string(&**name).unwrap_or_else(|_| "\"\"".into())),
    }
    out.push(':');
    out.push_str(value);
}

/// Whether a result is a `tools/call` result reporting a failure (`isError: true`).
fn is_tool_error(result: &str) -> bool {
    #[derive(Deserialize)]
    struct Flag {
        #[serde(rename = "isError", default)]
        is_error: bool,
    }
    serde_json::from_str::<Flag>(result).is_ok_and(|f| f.is_error)
}

/// -32021, naming the capabilities the request needed (a `ClientCapabilities` object).
fn missing_capabilities(required: JsonObject) -> ErrorObject {
    ErrorObject::missing_client_capabilities(
        &format!("this request needs more than `_meta[\"{META_CLIENT_CAPABILITIES}\"]` declares"),
        required,
    )
}

/// What a `UrlElicitationRequired` error becomes in this era: a URL-mode input request for
/// each flow the client has not answered yet (keyed by its elicitation id). When the user has
/// accepted every flow but the handler still needs them, they are still under way: an
/// `input_required` result with nothing to ask, which the client retries. When the user
/// declined or cancelled one, the request ends there, in the terms of this revision (which has
/// no -32042): a tool call fails as a tool result (`isError: true`) saying so, any other request
/// with an error that names no elicitation. The client must have declared URL mode.
fn url_flows(
    method: Method,
    error: &ErrorObject,
    state: &SessionState,
    rounds: &Rounds,
) -> Result<Outcome<HandlerResult>, ErrorObject> {
    let Some(required) = crate::elicit::UrlElicitationRequired::from_error_object(error) else {
        return Err(error.clone());
    };
    let supports_url = state
        .client()
        .and_then(|c| c.capabilities.elicitation.as_ref())
        .is_some_and(crate::protocol::ElicitationCapability::supports_url);
    if !supports_url {
        return Err(crate::elicit::url_mode_not_declared());
    }
    let mut asked = JsonObject::new();
    for e in &required.elicitations {
        match rounds.answer(&e.elicitation_id).map(|a| a.get("action").and_then(Value::as_str) == Some("accept")) {
            Some(true) => {}
            Some(false) => return Ok(Outcome::Complete(url_flow_refused(method, &e.message))),
            None => {
                let params = json!({"mode": "url", "message": e.message, "url": e.url});
                asked.insert(e.elicitation_id.clone(), json!({"method": "elicitation/create", "params": params}));
            }
        }
    }
    Ok(Outcome::InputRequired(asked))
}

/// How a request ends in this era when the user declined or cancelled a URL flow it needs
/// (`message` is the flow's own).
fn url_flow_refused(method: Method, message: &str) -> HandlerResult {
    let reason = format!("The user did not complete the action in the browser that this request needs: {message}");
    if method == Method::ToolsCall {
        to_raw(&crate::protocol::CallToolResult::error_text(reason))
    } else {
        Err(ErrorObject::new(codes::INTERNAL_ERROR, reason))
    }
}

/// Who may cache a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheScope {
    /// Any cache, shared ones included: the result holds nothing user-specific.
    Public,
    /// Only caches of the same authorization context.
    Private,
}

impl CacheScope {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// How long a client may cache a result, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// Freshness in milliseconds (0: stale at once).
    pub ttl_ms: u64,
    /// Who may cache it.
    pub scope: CacheScope,
}

/// The server's 2026-era settings.
#[derive(Debug, Clone)]
pub(crate) struct Settings2026 {
    pub(crate) advertise_server_info: bool,
    /// The server's identity as JSON, written once when the server is built (results carry it
    /// in `_meta` when `advertise_server_info`).
    pub(crate) server_info: Option<Box<str>>,
    pub(crate) default_cache: CacheHint,
    pub(crate) cache: Vec<(String, CacheHint)>,
}

impl Default for Settings2026 {
    fn default() -> Self {
        Settings2026 {
            advertise_server_info: true,
            server_info: None,
            default_cache: CacheHint { ttl_ms: 60_000, scope: CacheScope::Private },
            cache: Vec::new(),
        }
    }
}

impl Settings2026 {
    pub(crate) fn cache_hint(&self, method: &str) -> CacheHint {
        self.cache.iter().find(|(m, _)| m == method).map_or(self.default_cache, |(_, h)| *h)
    }
}

impl super::ServerBuilder {
    /// The caching hints (`ttlMs`, `cacheScope`) of 2026-era results of `method` (one of
    /// `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`,
    /// `resources/read`, `server/discover`, and with skills `skills/list`, `skills/get`,
    /// `resources/directory/read`), or of all of them with `method = "*"`. By default
    /// results are fresh for a minute and private.
    pub fn cache_hint(mut self, method: &str, hint: CacheHint) -> Self {
        if method == "*" {
            self.era_2026.default_cache = hint;
        } else {
            self.era_2026.cache.retain(|(m, _)| m != method);
            self.era_2026.cache.push((method.to_owned(), hint));
        }
        self
    }

    /// The key that seals `requestState` of multi round-trip requests. Give every instance of
    /// a deployment the same key so a retry may land on any of them; by default each process
    /// has a random key of its own.
    pub fn request_state_key(mut self, key: crate::multi_round::state::StateKey) -> Self {
        self.request_state_key = Some(key);
        self
    }

    /// How long a `requestState` stays valid (default 15 minutes: a person is answering).
    pub fn request_state_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.request_state_ttl = ttl;
        self
    }
}
