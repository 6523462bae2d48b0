//! Answering `elicitation/create`: the [`ElicitationHandler`] an application registers, the
//! requests it sees, and helpers to build valid answers.
//!
//! Before a handler sees a form, the client checks that its `requestedSchema` is in MCP's
//! restricted subset (a flat object of primitive fields); a request outside it, or in a mode the
//! client did not declare, is answered with error -32602 without reaching the handler. After
//! the handler answers `accept`, missing fields are filled from the schema's defaults and the
//! content is checked against the schema before it is sent.

use std::future::Future;
use std::marker::PhantomData;

use serde::Serialize;
use serde_json::Value;

use crate::elicit::validate::validate_content;
use crate::elicit::{ContentError, Elicit, Elicitation, FormSchema};
use crate::engine::BoxFuture;
use crate::protocol::{ElicitAction, ElicitResult, ElicitationCapability, ErrorObject, JsonObject};

/// The elicitation modes a client supports, and so declares in `initialize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElicitationModes {
    /// Form mode: the client renders a form from a schema.
    pub form: bool,
    /// URL mode: the client sends the user to a URL, with consent.
    pub url: bool,
}

impl ElicitationModes {
    /// Form mode only.
    pub const FORM: ElicitationModes = ElicitationModes { form: true, url: false };
    /// URL mode only.
    pub const URL: ElicitationModes = ElicitationModes { form: false, url: true };
    /// Both modes.
    pub const ALL: ElicitationModes = ElicitationModes { form: true, url: true };

    /// The capability declared for these modes (`None` when neither is supported). Each
    /// supported mode is listed explicitly, `{"form": {}}` rather than `{}`, which every
    /// server reads the same way.
    pub fn capability(self) -> Option<ElicitationCapability> {
        (self.form || self.url).then(|| ElicitationCapability {
            form: self.form.then(JsonObject::new),
            url: self.url.then(JsonObject::new),
        })
    }
}

/// An `elicitation/create` request, as a handler sees it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitationRequest {
    /// Fill in a form.
    Form(FormRequest),
    /// Go to a URL (after the user consents).
    Url(UrlRequest),
}

impl ElicitationRequest {
    /// What the server says it is asking and why.
    pub fn message(&self) -> &str {
        match self {
            ElicitationRequest::Form(f) => &f.message,
            ElicitationRequest::Url(u) => &u.message,
        }
    }

    /// The form request, if this is one.
    pub fn as_form(&self) -> Option<&FormRequest> {
        match self {
            ElicitationRequest::Form(f) => Some(f),
            ElicitationRequest::Url(_) => None,
        }
    }

    /// The URL request, if this is one.
    pub fn as_url(&self) -> Option<&UrlRequest> {
        match self {
            ElicitationRequest::Url(u) => Some(u),
            ElicitationRequest::Form(_) => None,
        }
    }
}

/// A form-mode elicitation whose schema is known to be in MCP's restricted subset.
#[derive(Debug, Clone, PartialEq)]
pub struct FormRequest {
    /// What is asked and why.
    pub message: String,
    schema: FormSchema,
    /// The request's `_meta`, if any.
    pub meta: Option<JsonObject>,
}

impl FormRequest {
    /// A request for `schema` (for testing handlers directly).
    pub fn new(message: impl Into<String>, schema: FormSchema) -> Self {
        FormRequest { message: message.into(), schema, meta: None }
    }

    /// The requested schema.
    pub fn schema(&self) -> &FormSchema {
        &self.schema
    }

    /// The names of the fields, in the schema's order.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.schema
            .as_object()
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|p| p.keys())
            .map(String::as_str)
    }

    /// The content made of the schema's `default`s alone: what a form pre-filled with them
    /// would submit untouched.
    pub fn defaults(&self) -> JsonObject {
        let mut content = JsonObject::new();
        fill_defaults(self.schema.as_object(), &mut content);
        content
    }

    /// Checks `content` against the schema, after filling in defaults for missing fields and
    /// dropping fields the schema does not define; the `accept` result to send.
    pub fn accept(&self, content: JsonObject) -> Result<ElicitResult, ContentError> {
        let mut content = content;
        validate_content(self.schema.as_object(), &mut content)?;
        Ok(ElicitResult::accept(content))
    }

    /// Accepts with the defaults alone (fails when a required field has no default).
    pub fn accept_defaults(&self) -> Result<ElicitResult, ContentError> {
        self.accept(JsonObject::new())
    }

    /// Whether this is the form of `T`: its schema equals `T::form_schema()`.
    pub fn is_form_of<T: Elicit>(&self) -> bool {
        T::form_schema().is_ok_and(|s| s.as_object() == self.schema.as_object())
    }

    /// The request read as the form of `T`, when its schema is exactly `T::form_schema()`.
    pub fn typed<T: Elicit>(&self) -> Option<TypedForm<'_, T>> {
        self.is_form_of::<T>().then_some(TypedForm { request: self, form: PhantomData })
    }
}

/// A form request known to be the form of `T` (see [`FormRequest::typed`]).
#[derive(Debug)]
pub struct TypedForm<'a, T> {
    request: &'a FormRequest,
    form: PhantomData<fn() -> T>,
}

impl<T: Elicit> TypedForm<'_, T> {
    /// The request.
    pub fn request(&self) -> &FormRequest {
        self.request
    }

    /// A `T` made of the schema's defaults, if they cover every required field.
    pub fn from_defaults(&self) -> Option<T> {
        serde_json::from_value(Value::Object(self.request.defaults())).ok()
    }

    /// Reads content (collected by the application) as a `T`, checking it against the schema
    /// first.
    pub fn read(&self, content: JsonObject) -> Result<T, TypedAnswerError> {
        let mut content = content;
        validate_content(self.request.schema.as_object(), &mut content)?;
        serde_json::from_value(Value::Object(content)).map_err(|e| TypedAnswerError::Encoding(e.to_string()))
    }

    /// The `accept` result carrying `value`, checked against the schema.
    pub fn accept(&self, value: &T) -> Result<ElicitResult, TypedAnswerError>
    where
        T: Serialize,
    {
        match serde_json::to_value(value) {
            Ok(Value::Object(content)) => Ok(self.request.accept(content)?),
            Ok(other) => Err(TypedAnswerError::Encoding(format!("a form answer must be a JSON object, not {other}"))),
            Err(e) => Err(TypedAnswerError::Encoding(e.to_string())),
        }
    }

    /// The result for a typed answer: `Accept(value)`, `Decline` or `Cancel`.
    pub fn answer(&self, answer: Elicitation<T>) -> Result<ElicitResult, TypedAnswerError>
    where
        T: Serialize,
    {
        match answer {
            Elicitation::Accept(value) => self.accept(&value),
            Elicitation::Decline => Ok(ElicitResult::decline()),
            Elicitation::Cancel => Ok(ElicitResult::cancel()),
        }
    }
}

/// Why a typed answer could not be turned into a result (or content into a `T`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TypedAnswerError {
    /// The content breaks the schema.
    #[error(transparent)]
    Content(#[from] ContentError),
    /// The value does not serialize to (or deserialize from) a flat JSON object.
    #[error("{0}")]
    Encoding(String),
}

/// A URL-mode elicitation: the server wants the user to visit `url`.
///
/// MCP requires the client to show the full URL and get the user's consent before opening it,
/// never to fetch it on its own, and to open it where the client cannot see what the user
/// enters. [`domain`](Self::domain) is what to highlight.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UrlRequest {
    /// Why the interaction is needed.
    pub message: String,
    /// The elicitation's id; `notifications/elicitation/complete` names it when done.
    pub elicitation_id: String,
    /// Where the user should go.
    pub url: String,
    /// The request's `_meta`, if any.
    pub meta: Option<JsonObject>,
}

impl UrlRequest {
    /// A request (for testing handlers directly).
    pub fn new(message: impl Into<String>, elicitation_id: impl Into<String>, url: impl Into<String>) -> Self {
        UrlRequest { message: message.into(), elicitation_id: elicitation_id.into(), url: url.into(), meta: None }
    }

    /// The URL's host, to show prominently (subdomain spoofing is easier to spot).
    pub fn domain(&self) -> Option<&str> {
        url_host(&self.url)
    }
}

/// The host of an absolute `scheme://[userinfo@]host[:port]/…` URL.
pub(crate) fn url_host(url: &str) -> Option<&str> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme_ok = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        &host_port[..v6.find(']')? + 2]
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    (!host.is_empty()).then_some(host)
}

impl ElicitResult {
    /// `accept` with form content.
    pub fn accept(content: JsonObject) -> Self {
        ElicitResult { action: ElicitAction::Accept, content: Some(content), meta: None }
    }

    /// `accept` without content: the user agreed to open the URL (URL mode).
    pub fn accept_url() -> Self {
        ElicitResult { action: ElicitAction::Accept, content: None, meta: None }
    }

    /// `decline`: the user explicitly refused.
    pub fn decline() -> Self {
        ElicitResult { action: ElicitAction::Decline, content: None, meta: None }
    }

    /// `cancel`: the user dismissed the request without choosing.
    pub fn cancel() -> Self {
        ElicitResult { action: ElicitAction::Cancel, content: None, meta: None }
    }
}

/// Fills in the `default` of every property missing from `content`.
pub fn fill_defaults(schema: &JsonObject, content: &mut JsonObject) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    for (name, property) in properties {
        if let Some(default) = property.get("default")
            && content.get(name).is_none_or(Value::is_null)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}

/// Answers the server's elicitation requests (typically by asking the user).
///
/// Register one with [`ClientBuilder::elicitation`](super::ClientBuilder::elicitation); the
/// client declares the modes [`modes`](Self::modes) returns. Implement it with `async fn`:
///
/// ```
/// use typed_mcp::client::{ElicitationHandler, ElicitationModes, ElicitationRequest};
/// use typed_mcp::protocol::ElicitResult;
///
/// struct AlwaysDefaults;
///
/// impl ElicitationHandler for AlwaysDefaults {
///     fn modes(&self) -> ElicitationModes {
///         ElicitationModes::FORM
///     }
///     async fn elicit(&self, request: ElicitationRequest) -> ElicitResult {
///         match request.as_form().map(|form| form.accept_defaults()) {
///             Some(Ok(result)) => result,
///             _ => ElicitResult::decline(),
///         }
///     }
/// }
/// ```
pub trait ElicitationHandler: Send + Sync + 'static {
    /// The modes to declare (form only by default).
    fn modes(&self) -> ElicitationModes {
        ElicitationModes::FORM
    }

    /// Answers one request. Runs in its own task; dropped if the server cancels the request
    /// or the connection closes.
    fn elicit(&self, request: ElicitationRequest) -> impl Future<Output = ElicitResult> + Send;
}

/// An [`ElicitationHandler`] made of a closure (see [`elicitation_fn`]).
pub struct ElicitationFn<F> {
    modes: ElicitationModes,
    answer: F,
}

impl<F> std::fmt::Debug for ElicitationFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitationFn").field("modes", &self.modes).finish_non_exhaustive()
    }
}

/// A handler for `modes` that answers with `answer(request).await`.
pub fn elicitation_fn<F, Fut>(modes: ElicitationModes, answer: F) -> ElicitationFn<F>
where
    F: Fn(ElicitationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ElicitResult> + Send + 'static,
{
    ElicitationFn { modes, answer }
}

impl<F, Fut> ElicitationHandler for ElicitationFn<F>
where
    F: Fn(ElicitationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ElicitResult> + Send + 'static,
{
    fn modes(&self) -> ElicitationModes {
        self.modes
    }

    fn elicit(&self, request: ElicitationRequest) -> impl Future<Output = ElicitResult> + Send {
        (self.answer)(request)
    }
}

/// A form-mode handler for one form type `T` (see [`typed_elicitation`]).
pub struct TypedElicitation<T, F> {
    answer: F,
    form: PhantomData<fn() -> T>,
}

impl<T, F> std::fmt::Debug for TypedElicitation<T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedElicitation").field("form", &std::any::type_name::<T>()).finish_non_exhaustive()
    }
}

/// A form-mode handler that answers forms of type `T` with `answer(message).await`, and
/// declines every other request. The answer is checked against the schema like any other.
pub fn typed_elicitation<T, F, Fut>(answer: F) -> TypedElicitation<T, F>
where
    T: Elicit + Serialize,
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Elicitation<T>> + Send + 'static,
{
    TypedElicitation { answer, form: PhantomData }
}

impl<T, F, Fut> ElicitationHandler for TypedElicitation<T, F>
where
    T: Elicit + Serialize,
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Elicitation<T>> + Send + 'static,
{
    async fn elicit(&self, request: ElicitationRequest) -> ElicitResult {
        let Some(form) = request.as_form().filter(|f| f.is_form_of::<T>()) else {
            tracing::debug!(form = std::any::type_name::<T>(), "declined an elicitation for another form");
            return ElicitResult::decline();
        };
        let answer = (self.answer)(form.message.clone()).await;
        match form.typed::<T>().map(|typed| typed.answer(answer)) {
            Some(Ok(result)) => result,
            Some(Err(e)) => {
                tracing::warn!(error = %e, "the typed answer does not fit its form; cancelling");
                ElicitResult::cancel()
            }
            None => ElicitResult::decline(),
        }
    }
}

/// [`ElicitationHandler`] behind a pointer.
pub(crate) trait DynElicitationHandler: Send + Sync + 'static {
    fn modes(&self) -> ElicitationModes;
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitResult>;
}

impl<H: ElicitationHandler> DynElicitationHandler for H {
    fn modes(&self) -> ElicitationModes {
        ElicitationHandler::modes(self)
    }
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitResult> {
        Box::pin(ElicitationHandler::elicit(self, request))
    }
}

/// Reads `elicitation/create` parameters into a request, or the -32602 error to answer with.
pub(crate) fn read_request(params: Value, modes: ElicitationModes) -> Result<ElicitationRequest, ErrorObject> {
    let meta = params.get("_meta").and_then(Value::as_object).cloned();
    let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
    let parsed = crate::protocol::ElicitRequestParams::from_wire(params.clone());
    match mode {
        "form" if !modes.form => Err(ErrorObject::invalid_params(
            "this client does not support form-mode elicitation (it did not declare `elicitation.form`)",
        )),
        "url" if !modes.url => Err(ErrorObject::invalid_params(
            "this client does not support URL-mode elicitation (it did not declare `elicitation.url`)",
        )),
        "form" | "url" => match parsed {
            Ok(crate::protocol::ElicitRequestParams::Form { message, mut requested_schema }) => {
                // A root `title` or `description` names the form as a whole, which the subset has
                // no place for and which changes nothing of the answer: some servers send them
                // (the official Python SDK does, in a 2025-11-25 session). They are dropped, so
                // such a form is shown rather than refused.
                requested_schema.remove("title");
                requested_schema.remove("description");
                let schema = FormSchema::new(requested_schema).map_err(|e| {
                    ErrorObject::invalid_params(format!("`requestedSchema` is outside MCP's form subset: {e}"))
                })?;
                Ok(ElicitationRequest::Form(FormRequest { message, schema, meta }))
            }
            Ok(crate::protocol::ElicitRequestParams::Url { message, elicitation_id, url }) => {
                if url_host(&url).is_none() {
                    return Err(ErrorObject::invalid_params(format!("`url` is not an absolute URL: {url:?}")));
                }
                Ok(ElicitationRequest::Url(UrlRequest { message, elicitation_id, url, meta }))
            }
            Err(e) => Err(ErrorObject::invalid_params(format!("invalid `elicitation/create` parameters: {e}"))),
        },
        other => Err(ErrorObject::invalid_params(format!("unknown elicitation mode `{other}`"))),
    }
}

/// Makes a handler's answer fit to send: content only on a form's `accept`, with defaults
/// filled in and checked against the schema.
pub(crate) fn finish(request: &ElicitationRequest, mut result: ElicitResult) -> Result<ElicitResult, ErrorObject> {
    match (request, result.action) {
        (ElicitationRequest::Form(form), ElicitAction::Accept) => {
            let mut content = result.content.take().unwrap_or_default();
            validate_content(form.schema.as_object(), &mut content).map_err(|e| {
                tracing::warn!(error = %e, "the elicitation handler's content does not match the requested schema");
                ErrorObject::internal(format!("the client's answer does not match the requested schema: {e}"))
            })?;
            result.content = Some(content);
        }
        _ => result.content = None,
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(schema: Value) -> ElicitationRequest {
        read_request(json!({"message": "m", "requestedSchema": schema}), ElicitationModes::ALL).unwrap()
    }

    #[test]
    fn capability_lists_each_mode() {
        let cap = |m: ElicitationModes| serde_json::to_value(m.capability()).unwrap();
        assert_eq!(cap(ElicitationModes::FORM), json!({"form": {}}));
        assert_eq!(cap(ElicitationModes::URL), json!({"url": {}}));
        assert_eq!(cap(ElicitationModes::ALL), json!({"form": {}, "url": {}}));
        assert_eq!(ElicitationModes { form: false, url: false }.capability(), None);
    }

    #[test]
    fn undeclared_modes_and_bad_schemas_are_invalid_params() {
        let p = json!({"mode": "url", "message": "m", "elicitationId": "1", "url": "https://x.test/"});
        assert_eq!(read_request(p.clone(), ElicitationModes::FORM).unwrap_err().code, -32602);
        assert!(read_request(p, ElicitationModes::URL).is_ok());
        let f = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {"a": {"type": "string"}}}});
        assert_eq!(read_request(f.clone(), ElicitationModes::URL).unwrap_err().code, -32602);
        assert!(read_request(f, ElicitationModes::FORM).is_ok());
        let titled = json!({"message": "m", "requestedSchema": {"type": "object", "title": "City", "description": "d",
            "properties": {"a": {"type": "string"}}}});
        let Ok(ElicitationRequest::Form(titled)) = read_request(titled, ElicitationModes::FORM) else {
            panic!("a form with a root title and description is read");
        };
        assert_eq!(titled.schema().as_object().keys().collect::<Vec<_>>(), ["type", "properties"]);
        let nested =
            json!({"message": "m", "requestedSchema": {"type": "object", "properties": {"a": {"type": "object"}}}});
        assert_eq!(read_request(nested, ElicitationModes::ALL).unwrap_err().code, -32602);
        let bad_url = json!({"mode": "url", "message": "m", "elicitationId": "1", "url": "not a url"});
        assert_eq!(read_request(bad_url, ElicitationModes::ALL).unwrap_err().code, -32602);
        let odd = json!({"mode": "telepathy", "message": "m"});
        assert_eq!(read_request(odd, ElicitationModes::ALL).unwrap_err().code, -32602);
        assert_eq!(read_request(json!([1]), ElicitationModes::ALL).unwrap_err().code, -32602);
    }

    #[test]
    fn accept_fills_defaults_and_validates() {
        let request = form(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "nick": {"type": "string", "minLength": 2}
            },
            "required": []
        }));
        let finished = finish(&request, ElicitResult::accept(JsonObject::new())).unwrap();
        assert_eq!(
            Value::Object(finished.content.unwrap()),
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true})
        );
        let bad = ElicitResult::accept(json!({"nick": "x"}).as_object().unwrap().clone());
        assert_eq!(finish(&request, bad).unwrap_err().code, -32603);
        let declined = ElicitResult { content: Some(JsonObject::new()), ..ElicitResult::decline() };
        assert_eq!(finish(&request, declined).unwrap().content, None);
        assert_eq!(
            request.as_form().unwrap().fields().collect::<Vec<_>>(),
            ["name", "age", "score", "status", "verified", "nick"]
        );
    }

    #[test]
    fn url_hosts() {
        assert_eq!(url_host("https://example.com/a?b"), Some("example.com"));
        assert_eq!(url_host("http://user:pw@127.0.0.1:8080/x"), Some("127.0.0.1"));
        assert_eq!(url_host("http://[::1]:80/"), Some("[::1]"));
        assert_eq!(url_host("https:///path"), None);
        assert_eq!(url_host("example.com"), None);
        assert_eq!(url_host("https://exa mple.com"), None);
        assert_eq!(url_host("http://[::1"), None);
    }
}
