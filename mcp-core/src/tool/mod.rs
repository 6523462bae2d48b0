//! Tools: definitions, argument extraction, result conversion and input/output schemas.
//!
//! `#[tool]` and `#[toolbox]` expand to calls into this module; everything they generate can
//! also be written by hand with [`ToolDef::new`].

mod args;
mod arguments;
mod headers;
mod result;
mod schema;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// Re-exported from [`crate::handler`], where it is defined.
pub use crate::handler::State;
pub(crate) use crate::protocol::scan::without_position;
pub use args::{Params, ToolArgument};
#[cfg(fuzzing)]
pub(crate) use arguments::check_against_serde;
pub use arguments::{Arguments, ArgumentsError};
pub use headers::{HeaderKind, HeaderParam, X_MCP_HEADER, header_params};
pub(crate) use result::protocol_error;
pub use result::{IntoToolResult, Json, RawToolResult};
pub(crate) use schema::check_output_schema;
pub use schema::{InputSchema, ToolSchemaError};

use futures_util::FutureExt;
use serde_json::Value;

use crate::engine::{BoxFuture, HandlerResult, Handling};
use crate::handler::Context;
use crate::protocol::{CallToolResult, ErrorObject, JsonObject, TaskSupport, Tool, ToolAnnotations, ToolExecution};

/// One `tools/call` as a handler sees it: the request context and the arguments.
#[derive(Debug)]
pub struct ToolCall {
    /// The request context.
    pub ctx: Context,
    /// The arguments object (`{}` when the client sent none), as the client's JSON text.
    pub arguments: Arguments,
}

type Handler = dyn Fn(ToolCall) -> Handling + Send + Sync;

/// A tool: what `tools/list` shows and what `tools/call` runs.
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) tool: Tool,
    pub(crate) handler: Arc<Handler>,
    /// OAuth scopes a call needs (see [`scopes`](Self::scopes)).
    pub(crate) scopes: Arc<[String]>,
    /// The arguments mirrored into headers, as found when the server checked the tool (it
    /// reads them on every 2026-era call over HTTP).
    pub(crate) checked_headers: Option<Arc<[HeaderParam]>>,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("tool", &self.tool).finish_non_exhaustive()
    }
}

impl ToolDef {
    /// A tool named `name` with the given input schema, run by `handler`.
    ///
    /// The handler may return anything that converts into a tool result ([`IntoToolResult`]);
    /// an `Err(ErrorObject)` from it becomes a JSON-RPC error response, except invalid input
    /// (code -32602, as the argument readers report it), which from revision 2025-11-25 on is
    /// a result with `isError: true` carrying the message, so the model can correct its call.
    ///
    /// ```
    /// use typed_mcp::tool::{ToolCall, ToolDef};
    /// let tool = ToolDef::new("shout", serde_json::json!({"type": "object"}).as_object().unwrap().clone(), |call: ToolCall| async move {
    ///     let text: Option<String> = call.arguments.get("text").map_err(|e| typed_mcp::ErrorObject::invalid_params(e.to_string()))?;
    ///     Ok::<_, typed_mcp::ErrorObject>(text.unwrap_or_default().to_uppercase())
    /// });
    /// assert_eq!(tool.name(), "shout");
    /// ```
    pub fn new<F, Fut, R>(name: impl Into<String>, input_schema: JsonObject, handler: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
        R: IntoToolResult,
    {
        let name: String = name.into();
        let label: Arc<str> = Arc::from(name.as_str());
        Self::with_handler::<R>(name, input_schema, move |call| {
            let answers = ErrorAnswers::of(&call.ctx);
            let fut = handler(call);
            let label = label.clone();
            // The one box of a call: the server polls it as the request's handler. A tool
            // that panics failed, like one that returned an error: its caller (a model, as
            // a rule) is told so in the result, and the session goes on. Combinators, not
            // `async` blocks: a block awaiting the handler's future would hold it twice (as
            // what it captured and as what it awaits), and each copy is moved with the call.
            let run = fut.map(move |outcome| answers.answer(outcome));
            Handling::future(AssertUnwindSafe(run).catch_unwind().map(move |outcome| match outcome {
                Ok(result) => result,
                Err(panic) => panicked(&label, &*panic),
            }))
        })
    }

    /// A tool named `name` with the given input schema, run by `handler`, a function that
    /// waits for nothing: what `#[tool]` makes of a function that is not `async`.
    ///
    /// The handler runs as soon as the call is read, on the session's reader, and its result is
    /// sent at once: no future is made, boxed or polled. Like the first poll of any handler, it
    /// delays the session's next message while it runs: a tool that computes for long, or
    /// blocks, belongs in [`new`](Self::new) with `spawn_blocking`.
    ///
    /// ```
    /// use typed_mcp::tool::{ToolCall, ToolDef};
    /// let tool = ToolDef::new_sync("shout", serde_json::json!({"type": "object"}).as_object().unwrap().clone(), |call: ToolCall| {
    ///     let text: Option<String> = call.arguments.get("text").map_err(|e| typed_mcp::ErrorObject::invalid_params(e.to_string()))?;
    ///     Ok::<_, typed_mcp::ErrorObject>(text.unwrap_or_default().to_uppercase())
    /// });
    /// assert_eq!(tool.name(), "shout");
    /// ```
    pub fn new_sync<F, R>(name: impl Into<String>, input_schema: JsonObject, handler: F) -> Self
    where
        F: Fn(ToolCall) -> Result<R, ErrorObject> + Send + Sync + 'static,
        R: IntoToolResult,
    {
        let name: String = name.into();
        let label: Box<str> = name.as_str().into();
        Self::with_handler::<R>(name, input_schema, move |call| {
            let answers = ErrorAnswers::of(&call.ctx);
            let run = || answers.answer(handler(call));
            Handling::Ready(match std::panic::catch_unwind(AssertUnwindSafe(run)) {
                Ok(result) => result,
                Err(panic) => panicked(&label, &*panic),
            })
        })
    }

    /// A tool exactly as `tool` describes it (title, annotations, icons, output schema,
    /// `_meta`, …), run by `handler`: for a server that relays another's tools and shows them
    /// as that server listed them. The input and output schemas are taken as given.
    ///
    /// ```
    /// use typed_mcp::protocol::Tool;
    /// use typed_mcp::tool::{ToolCall, ToolDef};
    /// let wire: Tool = serde_json::from_value(serde_json::json!({
    ///     "name": "echo", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}
    /// })).unwrap();
    /// let tool = ToolDef::from_tool(wire, |call: ToolCall| async move {
    ///     Ok::<_, typed_mcp::ErrorObject>(call.arguments.as_json().to_owned())
    /// });
    /// assert_eq!(tool.tool().annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
    /// ```
    pub fn from_tool<F, Fut, R>(tool: Tool, handler: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
        R: IntoToolResult,
    {
        let mut def = Self::new(tool.name.clone(), JsonObject::new(), handler);
        def.tool = tool;
        def
    }

    fn with_handler<R: IntoToolResult>(
        name: String,
        input_schema: JsonObject,
        handler: impl Fn(ToolCall) -> Handling + Send + Sync + 'static,
    ) -> Self {
        ToolDef {
            tool: Tool {
                name,
                title: None,
                description: None,
                input_schema,
                output_schema: R::output_schema(),
                annotations: None,
                execution: None,
                icons: None,
                meta: None,
            },
            handler: Arc::new(handler),
            scopes: Arc::from([]),
            checked_headers: None,
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.tool.name
    }

    /// The tool as `tools/list` shows it.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.tool.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.tool.description = Some(description.into());
        self
    }

    /// The OAuth scopes a call of this tool needs, on a server with
    /// authorization (`HttpConfig::authorization`, feature `http`): a call whose
    /// access token lacks one is answered `403` with `error="insufficient_scope"` naming them,
    /// so the client can ask for them and retry.
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The OAuth scopes a call of this tool needs.
    pub fn required_scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Sets the behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = (!annotations.is_empty()).then_some(annotations);
        self
    }

    /// Shows the view at `uri` (a `ui://` resource of this server) with the tool's results, in
    /// hosts that render MCP Apps ([`crate::apps`]): `_meta.ui.resourceUri` in `tools/list`
    /// (and the flat `ui/resourceUri` key that earlier hosts read). Hosts without apps show the
    /// result's `content` alone, so the tool still answers in text. [`ServerBuilder::build`]
    /// refuses a URI that is not `ui://` or that names no view registered with the server.
    /// `#[tool(ui = "ui://…")]` sets it.
    ///
    /// [`ServerBuilder::build`]: crate::ServerBuilder::build
    pub fn ui(mut self, uri: impl Into<String>) -> Self {
        let uri: String = uri.into();
        let meta = self.tool.meta.get_or_insert_with(JsonObject::new);
        meta.insert(crate::apps::LEGACY_RESOURCE_URI_KEY.into(), Value::String(uri.clone()));
        set_ui_member(meta, "resourceUri", Value::String(uri));
        self
    }

    /// Who may call the tool: the model, the view of an MCP App, or both (the default). Hosts
    /// leave a [`Visibility::App`](crate::apps::Visibility::App) tool out of the model's tool
    /// list; its view calls it through the host. `#[tool(visibility = "app")]` sets it.
    pub fn visibility(mut self, visibility: crate::apps::Visibility) -> Self {
        let meta = self.tool.meta.get_or_insert_with(JsonObject::new);
        let list = visibility.as_wire().iter().map(|s| Value::String((*s).to_owned())).collect();
        set_ui_member(meta, "visibility", Value::Array(list));
        self
    }

    /// The tool's view and visibility (`_meta.ui`), if it has either.
    pub fn app(&self) -> Option<crate::apps::ToolUi> {
        crate::apps::ToolUi::of(&self.tool)
    }

    /// Whether the tool runs as a task (the `io.modelcontextprotocol/tasks` extension of revision
    /// 2026-07-28), shown in `tools/list` as `execution.taskSupport`:
    ///
    /// - [`TaskSupport::Optional`]: a call from a client that negotiated the extension is
    ///   answered at once with a task the client polls; other clients get an ordinary answer.
    /// - [`TaskSupport::Required`]: a client that did not negotiate the extension gets
    ///   `MissingRequiredClientCapability` (-32021).
    ///
    /// The handler is the same either way; see [`crate::task`] for what changes while it runs as
    /// a task. `#[tool(task = "optional")]` sets it.
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.tool.execution = match support {
            TaskSupport::Forbidden => None,
            support => Some(ToolExecution { task_support: Some(support) }),
        };
        self
    }

    /// Whether the tool runs as a task (see [`task_support`](Self::task_support)).
    pub fn task_mode(&self) -> TaskSupport {
        self.tool.execution.as_ref().and_then(|e| e.task_support).unwrap_or_default()
    }

    /// Mirrors the argument `property` (a property at the top of the input schema) into the
    /// HTTP header `Mcp-Param-{header}` (revision 2026-07-28): Streamable HTTP clients send its
    /// value there too, so that proxies can route on it, and the server refuses a call whose
    /// header and body disagree. The property must be a string, an integer or a boolean, and
    /// `header` an HTTP token unique among the tool's headers; [`ServerBuilder::build`]
    /// refuses the tool otherwise. Deeper properties are annotated in the schema itself, with
    /// `"x-mcp-header": "Name"` (see [`header_params`]).
    ///
    /// [`ServerBuilder::build`]: crate::ServerBuilder::build
    pub fn header_param(mut self, property: &str, header: impl Into<String>) -> Self {
        let properties = self.tool.input_schema.entry("properties").or_insert_with(|| Value::Object(JsonObject::new()));
        if let Value::Object(properties) = properties {
            let schema = properties.entry(property.to_owned()).or_insert_with(|| Value::Object(JsonObject::new()));
            if let Value::Object(schema) = schema {
                schema.insert(X_MCP_HEADER.to_owned(), Value::String(header.into()));
            }
        }
        self
    }

    /// The arguments mirrored into HTTP headers (`x-mcp-header`), checked.
    pub fn header_params(&self) -> Result<Vec<HeaderParam>, ToolSchemaError> {
        header_params(&self.tool.input_schema)
    }

    /// Checks the `x-mcp-header` annotations and keeps what they declare for
    /// [`mirrored_headers`](Self::mirrored_headers).
    pub(crate) fn check_headers(&mut self) -> Result<(), ToolSchemaError> {
        self.checked_headers = Some(self.header_params()?.into());
        Ok(())
    }

    /// The arguments mirrored into headers: as checked, or found now.
    #[cfg(feature = "http")]
    pub(crate) fn mirrored_headers(&self) -> Arc<[HeaderParam]> {
        match &self.checked_headers {
            Some(params) => params.clone(),
            None => self.header_params().map(Into::into).unwrap_or_else(|_| Arc::from([])),
        }
    }

    /// Replaces the output schema.
    pub fn output_schema(mut self, schema: Option<JsonObject>) -> Self {
        self.tool.output_schema = schema;
        self
    }

    /// Runs the tool.
    pub fn call(&self, call: ToolCall) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>> {
        let run = (self.handler)(call).into_future();
        Box::pin(async move {
            let raw = run.await?;
            serde_json::from_str(raw.get())
                .map_err(|e| ErrorObject::internal(format!("the tool's result could not be read back: {e}")))
        })
    }

    /// Runs the tool, for the JSON text of its result (what the server sends).
    pub(crate) fn call_raw(&self, call: ToolCall) -> Handling {
        (self.handler)(call)
    }
}

/// Sets `key` in the `ui` object of a tool's `_meta` (made an object if it was not one).
fn set_ui_member(meta: &mut JsonObject, key: &str, value: Value) {
    let mut ui = match meta.remove("ui") {
        Some(Value::Object(ui)) => ui,
        _ => JsonObject::new(),
    };
    ui.insert(key.into(), value);
    meta.insert("ui".into(), Value::Object(ui));
}

/// How a tool's errors are answered, given the request they answer (computed before the
/// handler takes the request's [`Context`]).
///
/// - Invalid input: an `Err` with code -32602 (invalid params) from a tool's handler, which is
///   what a missing, mistyped or out-of-range argument gives (`ToolArgument::extract`,
///   `Arguments::get`). From revision 2025-11-25 on (SEP-1303), and in the 2026-07-28 era,
///   input validation errors are tool execution errors: a result with `isError: true` whose
///   text names the argument and the problem, so that the model that made the call can correct
///   it. Older revisions answer them with the JSON-RPC error itself. What is still a protocol
///   error (an unknown tool, `tools/call` parameters of the wrong shape) is answered by the
///   server before any handler runs, with -32602 in every revision.
/// - URL flows: a `UrlElicitationRequired` error (-32042) in a 2025-era session whose client
///   did not declare URL mode becomes -32021 naming `elicitation.url`; such a client could not
///   show the flow. (In the 2026 era the server turns -32042 into an input request, or the
///   same -32021.)
#[derive(Clone, Copy)]
struct ErrorAnswers {
    input_errors_as_results: bool,
    url_flows_refused: bool,
}

impl ErrorAnswers {
    /// For the request that `ctx` belongs to.
    fn of(ctx: &Context) -> Self {
        let in_2026 = ctx.is_multi_round_trip();
        // Revision names are dates, so they compare as strings.
        let input_errors_as_results = in_2026 || ctx.protocol_version().is_some_and(|v| v >= "2025-11-25");
        ErrorAnswers { input_errors_as_results, url_flows_refused: !in_2026 && !ctx.can_elicit_url() }
    }

    /// The answer to a call whose handler returned `outcome`.
    fn answer<R: IntoToolResult>(self, outcome: Result<R, ErrorObject>) -> HandlerResult {
        use crate::protocol::codes;
        match outcome.and_then(IntoToolResult::into_result_text) {
            Ok(text) => Ok(text),
            Err(error) if self.input_errors_as_results && error.code == codes::INVALID_PARAMS => {
                result::raw(&CallToolResult::error_text(error.message))
            }
            Err(error) if self.url_flows_refused && error.code == codes::URL_ELICITATION_REQUIRED => {
                Err(crate::elicit::url_mode_not_declared())
            }
            Err(error) => Err(error),
        }
    }
}

/// The result of a call whose tool panicked.
pub(crate) fn panicked(tool: &str, panic: &(dyn std::any::Any + Send)) -> HandlerResult {
    let what = crate::engine::panic_message(panic);
    tracing::error!(%tool, panic = %what, "a tool panicked");
    result::raw(&CallToolResult::error_text(format!("the tool `{tool}` panicked: {what}")))
}

/// A tool defined by `#[tool]` on a free function: the macro implements this for a hidden
/// type named like the function, which [`tools!`](crate::tools) turns into definitions.
pub trait ToolFn {
    /// Builds the definition (schemas included). Called once, at registration.
    fn definition() -> ToolDef;
}

/// A set of tools sharing one value, from `#[toolbox]` on an `impl` block.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a toolbox",
    label = "no `#[toolbox]` impl block for this type",
    note = "put `#[toolbox]` on the `impl {Self} {{ … }}` block whose `#[tool]` methods should be served"
)]
pub trait ToolBox: Send + Sync + 'static {
    /// The tools of this box, each holding a reference to `self`.
    fn tools(self: Arc<Self>) -> Vec<ToolDef>;
}

/// The definitions of `#[tool]` functions, for [`ServerBuilder::tools`](crate::server::ServerBuilder::tools).
///
/// ```ignore
/// Server::builder("calc", "1.0.0").tools(tools![add, echo])
/// ```
#[macro_export]
macro_rules! tools {
    ($($tool:path),* $(,)?) => {
        ::std::vec![$(<$tool as $crate::tool::ToolFn>::definition()),*]
    };
}
