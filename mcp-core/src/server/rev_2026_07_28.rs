//! MCP 2026-07-28: stateless requests that carry their protocol version and the client's
//! capabilities in `_meta`, `server/discover`, and multi round-trip requests.
//!
//! A request is served in the 2026 era when its `_meta` names a protocol version
//! (`io.modelcontextprotocol/protocolVersion`); any other request belongs to a 2025-era
//! session opened with `initialize`. Both are served by the same server, on every transport,
//! with the same handlers: a 2026-era request gets a session state of its own, built from its
//! `_meta`, and whatever a handler asks of the client (`ctx.elicit`, `ctx.sample`,
//! `ctx.roots`) becomes an `input_required` result (see [`crate::multi_round`]).

use std::sync::Arc;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::session::{ClientState, ServerSession, SessionState};
use super::{Context, ServerInner};
use crate::engine::{HandlerResult, Handling, PeerError, RequestOptions, RequestScope, ResultText};
use crate::multi_round::state::{Binding, Carried, digest};
use crate::multi_round::{Outcome, Rounds, drive, first_run, new_chain};
use crate::protocol::codes::UNSUPPORTED_PROTOCOL_VERSION;
use crate::protocol::stateless::meta_of;
use crate::protocol::{
    ClientCapabilities, ErrorObject, Implementation, JsonObject, LoggingLevel, META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION, META_SERVER_INFO, PROTOCOL_VERSION_2026_07_28, Request,
    codes, supported_versions,
};

/// Methods a 2026-era client may call.
const METHODS_2026: &[&str] = &[
    "server/discover",
    "subscriptions/listen",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// Methods whose results may be `input_required`.
const MULTI_ROUND: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// Methods whose results carry caching hints.
const CACHEABLE: &[&str] =
    &["tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read", "server/discover"];

/// The parts of a 2026-era request's `_meta` the server uses.
#[derive(Debug)]
pub(crate) struct Meta2026 {
    pub(crate) protocol_version: String,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Implementation,
    pub(crate) log_level: Option<LoggingLevel>,
}

fn field<T: DeserializeOwned>(meta: &JsonObject, key: &str) -> Result<Option<T>, ErrorObject> {
    match meta.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => T::deserialize(v)
            .map(Some)
            .map_err(|e| ErrorObject::invalid_params(format!("invalid `_meta[\"{key}\"]`: {e}"))),
    }
}

impl Meta2026 {
    fn read(request: &Request) -> Result<Meta2026, ErrorObject> {
        let meta = request.params.as_deref().and_then(meta_of).unwrap_or_default();
        let protocol_version: String = field(&meta, META_PROTOCOL_VERSION)?
            .ok_or_else(|| ErrorObject::invalid_params("missing protocol version"))?;
        if !supported_versions().contains(&protocol_version.as_str()) || protocol_version != PROTOCOL_VERSION_2026_07_28
        {
            return Err(unsupported_version(&protocol_version));
        }
        // Required on every request, `server/discover` included (an empty object declares none).
        let capabilities: ClientCapabilities = field(&meta, META_CLIENT_CAPABILITIES)?.ok_or_else(|| {
            ErrorObject::invalid_params(format!(
                "missing `_meta[\"{META_CLIENT_CAPABILITIES}\"]`: every 2026-07-28 request declares the client's capabilities"
            ))
        })?;
        let client_info = field(&meta, META_CLIENT_INFO)?.unwrap_or_else(|| Implementation::new("unknown", "unknown"));
        let log_level = field(&meta, META_LOG_LEVEL)?;
        Ok(Meta2026 { protocol_version, capabilities, client_info, log_level })
    }
}

/// -32022, listing what is supported.
pub(crate) fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, format!("unsupported protocol version `{requested}`"))
        .with_data(json!({"supported": [PROTOCOL_VERSION_2026_07_28], "requested": requested}))
}

/// What a request carries into this round: the chain and answers of its sealed
/// `requestState` (a fresh chain in the first round), with the retry's `inputResponses` added.
/// An answer sealed in an earlier round stands: a retry cannot replace it.
fn carried(server: &ServerInner, request: &Request, principal: Option<&str>) -> Result<Carried, ErrorObject> {
    #[derive(Deserialize)]
    struct Retry {
        #[serde(rename = "inputResponses", default)]
        input_responses: Option<Value>,
        #[serde(rename = "requestState", default)]
        request_state: Option<Value>,
    }
    let text = request.params.as_deref().map_or("{}", RawValue::get);
    let retry: Retry =
        serde_json::from_str(text).map_err(|e| ErrorObject::invalid_params(format!("invalid parameters: {e}")))?;
    let mut carried = match retry.request_state {
        None | Some(Value::Null) => Carried { chain: new_chain(), answers: JsonObject::new() },
        Some(Value::String(state)) => {
            let binding = binding(request, principal)?;
            server
                .request_state
                .open(&state, &binding)
                .map_err(|e| ErrorObject::invalid_params(format!("invalid requestState: {e}")))?
        }
        Some(_) => return Err(ErrorObject::invalid_params("`requestState` must be a string")),
    };
    match retry.input_responses {
        None | Some(Value::Null) => {}
        Some(Value::Object(responses)) => {
            for (key, response) in responses {
                if !response.is_object() {
                    return Err(ErrorObject::invalid_params(format!("input response `{key}` must be an object")));
                }
                carried.answers.entry(key).or_insert(response);
            }
        }
        Some(_) => return Err(ErrorObject::invalid_params("`inputResponses` must be an object")),
    }
    Ok(carried)
}

/// What a sealed state must match: method, target, original arguments and user.
fn binding(request: &Request, principal: Option<&str>) -> Result<Binding, ErrorObject> {
    let text = request.params.as_deref().map_or("{}", RawValue::get);
    let mut params: JsonObject =
        serde_json::from_str(text).map_err(|e| ErrorObject::invalid_params(format!("invalid parameters: {e}")))?;
    for key in ["_meta", "inputResponses", "requestState"] {
        params.remove(key);
    }
    let name =
        ["name", "uri"].iter().find_map(|k| params.get(*k).and_then(Value::as_str)).unwrap_or_default().to_owned();
    Ok(Binding {
        method: request.method.to_string(),
        name,
        digest: digest(&Value::Object(params)),
        principal: principal.map(str::to_owned),
    })
}

/// Adds what every 2026-era result carries: `resultType`, the server's identity, and caching
/// hints on cacheable results.
fn finish(server: &ServerInner, method: &str, result: &str, result_type: &str) -> HandlerResult {
    let mut object: JsonObject = serde_json::from_str(result).unwrap_or_default();
    object.insert("resultType".into(), Value::String(result_type.into()));
    let meta = object.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta
        && server.rev_2026.advertise_server_info
    {
        meta.insert(META_SERVER_INFO.into(), serde_json::to_value(&server.info).unwrap_or(Value::Null));
    }
    if object.get("_meta").is_some_and(|m| m.as_object().is_some_and(Map::is_empty)) {
        object.remove("_meta");
    }
    // An `input_required` result is a step of one request, never something to cache.
    if result_type == "complete" && CACHEABLE.contains(&method) {
        let hint = server.rev_2026.cache_hint(method);
        object.entry("ttlMs").or_insert_with(|| Value::from(hint.ttl_ms));
        object.entry("cacheScope").or_insert_with(|| Value::from(hint.scope.as_str()));
    }
    ResultText::serialize(&object).map_err(|e| ErrorObject::internal(format!("result could not be encoded: {e}")))
}

/// Error codes that changed in the 2026 era.
pub(crate) fn error_2026(mut error: ErrorObject) -> ErrorObject {
    if error.code == codes::RESOURCE_NOT_FOUND {
        error.code = codes::INVALID_PARAMS;
    }
    error
}

/// Serves one 2026-era request.
pub(crate) fn handle(
    server: Arc<ServerInner>,
    principal: Option<String>,
    auth: (Option<Arc<crate::auth::AuthInfo>>, bool),
    request: Request,
    scope: RequestScope,
) -> Handling {
    Handling::future(async move {
        let meta = Meta2026::read(&request)?;
        let method = request.method.clone();
        if !METHODS_2026.contains(&method.as_str()) {
            return Err(ErrorObject::new(
                codes::METHOD_NOT_FOUND,
                format!("method not found: {method} (not part of protocol {PROTOCOL_VERSION_2026_07_28})"),
            ));
        }
        if method == "server/discover" {
            let result = discover(&server);
            return finish(&server, &method, result.get(), "complete");
        }
        if super::tasks::TASK_METHODS.contains(&method.as_str()) && server.tasks.enabled {
            let result = super::tasks::handle(&server, &request, &meta.capabilities, principal.as_deref()).await?;
            return finish(&server, &method, result.get(), "complete");
        }
        if method == "subscriptions/listen" {
            let result =
                super::listen::listen(&server, &request, scope, &meta.capabilities, principal.as_deref()).await?;
            return finish(&server, &method, result.get(), "complete");
        }
        let multi_round = MULTI_ROUND.contains(&method.as_str());
        // A call that may become a task (the tool allows it, the client negotiated tasks).
        let task = if method == "tools/call" {
            super::tasks::plan(&server, &request, &meta.capabilities, principal.as_deref())
        } else {
            None
        };
        let carried = if multi_round {
            carried(&server, &request, principal.as_deref())?
        } else {
            Carried { chain: new_chain(), answers: JsonObject::new() }
        };
        let rounds = Arc::new(Rounds::new(carried));
        let client = ClientState {
            protocol_version: meta.protocol_version,
            capabilities: meta.capabilities,
            info: meta.client_info,
        };
        let state = SessionState::for_2026_request(principal.clone(), client, meta.log_level, rounds.clone());
        let scope = match &task {
            // A task is cancelled by `tasks/cancel`, not when the request that made it ends.
            Some(run) => {
                let _ = state.task.set(run.clone());
                RequestScope { cancel: run.cancel.clone(), ..scope }
            }
            None => scope,
        };
        let state = Arc::new(state);
        state.set_auth(auth.0, auth.1);
        let binding = if multi_round { Some(binding(&request, principal.as_deref())?) } else { None };
        let handler = ServerSession::dispatch(&server, &state, request, scope).into_future();
        let outcome = match task {
            None => drive(handler, &rounds).await,
            Some(run) => match first_run(handler, &rounds).await {
                Ok(outcome) => outcome,
                // The handler waits: the call goes on as a task.
                Err(handler) => {
                    let result = super::tasks::start(&server, run, handler).await?;
                    return finish(&server, &method, result.get(), "task");
                }
            },
        };
        let outcome = match outcome {
            // A URL flow the user must complete first: in this era, an input request like any
            // other, answered by retrying once the user has been to the page.
            Outcome::Complete(Err(error)) if error.code == codes::URL_ELICITATION_REQUIRED && binding.is_some() => {
                url_flows(&method, &error, &state, &rounds)?
            }
            outcome => outcome,
        };
        // A handler that failed after asking for something the client did not declare failed
        // for want of that capability: the client is told which (a handler that went on
        // without it, degrading gracefully, completes as usual).
        if let (Some(required), Outcome::Complete(result)) = (rounds.required(), &outcome)
            && result.as_ref().map_or(true, |r| is_tool_error(r.get()))
        {
            return Err(missing_capabilities(required));
        }
        match outcome {
            Outcome::Complete(Ok(result)) => finish(&server, &method, result.get(), "complete"),
            Outcome::Complete(Err(error)) => Err(error_2026(error)),
            Outcome::Rejected(error) => Err(error),
            Outcome::InputRequired(asked) => {
                let Some(binding) = binding else {
                    return Err(ErrorObject::internal(format!("`{method}` cannot ask the client for input")));
                };
                let state = server.request_state.seal(&binding, &rounds.carried());
                let mut body = json!({"requestState": state});
                // Nothing to ask (a URL flow still under way): the client retries with the state.
                if !asked.is_empty() {
                    body["inputRequests"] = Value::Object(asked);
                }
                let raw = serde_json::value::to_raw_value(&body)
                    .map_err(|e| ErrorObject::internal(format!("result could not be encoded: {e}")))?;
                finish(&server, &method, raw.get(), "input_required")
            }
        }
    })
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
    method: &str,
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
            Some(false) => return Ok(Outcome::Complete(url_flow_refused(method, &error.message))),
            None => {
                let params = json!({"mode": "url", "message": e.message, "url": e.url});
                asked.insert(e.elicitation_id.clone(), json!({"method": "elicitation/create", "params": params}));
            }
        }
    }
    Ok(Outcome::InputRequired(asked))
}

/// How a request ends in this era when the user declined or cancelled a URL flow it needs.
fn url_flow_refused(method: &str, message: &str) -> HandlerResult {
    let reason = format!("The user did not complete the action in the browser that this request needs. ({message})");
    if method == "tools/call" {
        super::registry::to_raw(&crate::protocol::CallToolResult::error_text(reason))
    } else {
        Err(ErrorObject::new(codes::INTERNAL_ERROR, reason))
    }
}

/// The `server/discover` result.
fn discover(server: &ServerInner) -> Box<RawValue> {
    let mut result = json!({
        "supportedVersions": supported_versions(),
        "capabilities": server.capabilities,
    });
    if let Some(instructions) = &server.instructions {
        result["instructions"] = Value::String(instructions.clone());
    }
    serde_json::value::to_raw_value(&result).unwrap_or_else(|_| RawValue::from_string("{}".into()).unwrap_or_default())
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
    fn as_str(self) -> &'static str {
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
    pub(crate) default_cache: CacheHint,
    pub(crate) cache: Vec<(String, CacheHint)>,
}

impl Default for Settings2026 {
    fn default() -> Self {
        Settings2026 {
            advertise_server_info: true,
            default_cache: CacheHint { ttl_ms: 60_000, scope: CacheScope::Private },
            cache: Vec::new(),
        }
    }
}

impl Settings2026 {
    fn cache_hint(&self, method: &str) -> CacheHint {
        self.cache.iter().find(|(m, _)| m == method).map_or(self.default_cache, |(_, h)| *h)
    }
}

impl super::ServerBuilder {
    /// The caching hints (`ttlMs`, `cacheScope`) of 2026-era results of `method` (one of
    /// `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`,
    /// `resources/read`, `server/discover`), or of all of them with `method = "*"`. By default
    /// results are fresh for a minute and private.
    pub fn cache_hint(mut self, method: &str, hint: CacheHint) -> Self {
        if method == "*" {
            self.rev_2026.default_cache = hint;
        } else {
            self.rev_2026.cache.retain(|(m, _)| m != method);
            self.rev_2026.cache.push((method.to_owned(), hint));
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

/// The parameters of a request to the client: a value, or JSON text written beforehand (a
/// form's schema is serialized once per form, not once per question).
pub(crate) enum ClientParams {
    /// A value, serialized when sent.
    Value(Value),
    /// JSON text, sent as it is.
    Raw(Box<RawValue>),
}

impl ClientParams {
    fn into_value(self) -> Result<Value, PeerError> {
        match self {
            ClientParams::Value(v) => Ok(v),
            ClientParams::Raw(raw) => serde_json::from_str(raw.get()).map_err(|e| PeerError::Codec(e.to_string())),
        }
    }
}

impl serde::Serialize for ClientParams {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ClientParams::Value(v) => v.serialize(serializer),
            ClientParams::Raw(raw) => raw.serialize(serializer),
        }
    }
}

impl Context {
    /// Sends a request to the client, or, in the 2026 era, asks for it in the `input_required`
    /// result of the current request (answered on the client's retry).
    pub(crate) async fn client_request<R: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<R, PeerError> {
        self.client_request_keyed(method, ClientParams::Value(params), options, None, false).await
    }

    /// [`client_request`](Self::client_request), whose input request (2026 era) has the key
    /// `key` instead of the next in call order. In a call that may become a task, the question
    /// goes to the task (see [`crate::task`]), unless `before_task` asks for it in the call's own
    /// round while the task has not started.
    pub(crate) async fn client_request_keyed<R: DeserializeOwned>(
        &self,
        method: &str,
        params: ClientParams,
        options: RequestOptions,
        key: Option<&str>,
        before_task: bool,
    ) -> Result<R, PeerError> {
        if let Some(run) = self.session_state().task.get().filter(|run| run.started() || !before_task) {
            let key = run.key(key);
            let answer = run.ask(key.clone(), method, params.into_value()?, options.timeout).await?;
            // `tasks/update` checked the answer's shape.
            return R::deserialize(answer).map_err(|e| {
                PeerError::Codec(format!("input response `{key}` is not a valid `{method}` result: {e}"))
            });
        }
        match &self.session_state().rounds {
            Some(rounds) => {
                let key = rounds.key(key);
                let params = params.into_value()?;
                match rounds.answer_or_ask(&key, method, params) {
                    Some(answer) => match R::deserialize(answer) {
                        Ok(answer) => Ok(answer),
                        // Not an answer to the question: the client's mistake, not the
                        // handler's; the request fails with invalid params and the run ends.
                        Err(e) => {
                            rounds.reject(ErrorObject::invalid_params(format!(
                                "input response `{key}` is not a valid `{method}` result: {e}"
                            )));
                            rounds.ended().await;
                            Err(PeerError::Cancelled)
                        }
                    },
                    // The run ends here: the server answers `input_required` and the client's
                    // retry runs the handler again with the answer. (A question asked from a
                    // task the handler spawned may outlive the run: it ends with it.)
                    None => {
                        rounds.ended().await;
                        Err(PeerError::Cancelled)
                    }
                }
            }
            // The parameters are dropped once encoded, not kept while the client answers.
            None => self.peer().request_owned(method, params, options).await,
        }
    }

    /// Notes that this request needed the client capability at `path` (`sampling`,
    /// `sampling.tools`, `roots`, `elicitation`…), which the client did not declare. In the 2026
    /// era, a handler that then fails makes the request fail with -32021
    /// (`MissingRequiredClientCapability`) naming it; in the 2025 era nothing changes.
    pub(crate) fn missing_capability(&self, path: &str) {
        if let Some(rounds) = &self.session_state().rounds {
            rounds.require(path);
        }
    }

    /// Whether this request is a multi round-trip one (revision 2026-07-28): a request that
    /// stands alone, whose handler runs again on each retry (see [`crate::multi_round`]).
    pub fn is_multi_round_trip(&self) -> bool {
        self.session_state().rounds.is_some()
    }

    /// In the 2026 era, an id of this request that is the same in every round of it (each
    /// retry runs the handler again, see [`crate::multi_round`]) and new for every other request: 128
    /// random bits, hex. Use it as the idempotency key of a side effect that must happen once
    /// per request even if the handler runs again (a client may resend its last retry). `None`
    /// in the 2025 era, where the handler runs once per request.
    pub fn round_trip_id(&self) -> Option<&str> {
        self.session_state().rounds.as_deref().map(Rounds::chain)
    }
}
