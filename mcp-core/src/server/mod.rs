//! Servers: the builder, the one router of both protocol eras, sessions, URL flows, tasks.
//!
//! How a request travels: a 2025-era request arrives on its session (`session.rs`, which
//! keeps the session's life: `initialize`, its state, its snapshot and restoration); a
//! 2026-era request is read once and driven through its rounds by `era_2026.rs`. Both end in
//! `router.rs`, the one `match` from a method to its handler, and no step calls back into the
//! one before it. Every fact about a method (its eras, the capability it needs, whether it can
//! ask the client for input, what names its target...) is its row of
//! [`crate::protocol::methods`]. Handlers share `handling.rs` (reading parameters, encoding
//! results, making the request's [`Context`]) and `state.rs` (what the client declared and
//! set), which import no other file of this module.
//!
//! **Adding a method** takes one row in the method table, its wire types in `protocol/`, one
//! arm in `router.rs`, and one handler file here.

#[cfg(feature = "http")]
mod admission;
mod catalog;
mod client_requests;
mod completion;
pub mod connection;
mod context_side;
#[cfg(feature = "http")]
mod deployment;
mod discover;
mod elicit;
mod era_2026;
mod handling;
#[cfg(feature = "http")]
mod http;
mod listen;
mod live;
mod logging;
mod observe;
mod prompts;
mod registry;
mod resources;
mod router;
mod sampling;
mod scopes;
mod session;
#[cfg(feature = "skills")]
mod skills;
mod state;
#[cfg(feature = "http")]
mod task_relay;
mod tasks;
mod terminal;
mod tools;
#[cfg(feature = "tracing-bridge")]
mod tracing_bridge;
mod url;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

pub use crate::handler::context::{
    ClientRequestError, CompleteError, Completed, ElicitRequest, SessionKey, UrlElicitRequest,
};
/// Re-exported from [`crate::handler`], where they are defined.
pub use crate::handler::{Completer, CompletionCall, Context};
/// Re-exported from [`crate::protocol`], where they are defined.
pub use crate::protocol::codes::{HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION};
/// Re-exported from [`crate::protocol`], where they are defined.
pub use crate::protocol::{PROTOCOL_VERSION_2026_07_28, supported_versions};
pub use connection::{Connection, Outgoing, OutgoingKind, OutgoingMessage};
pub use elicit::DEFAULT_ELICITATION_TIMEOUT;
pub use era_2026::{CacheHint, CacheScope};
pub use registry::ChangeError;
pub use sampling::{DEFAULT_SAMPLING_TIMEOUT, ROOTS_TIMEOUT, SessionHandle};
pub use tasks::{DEFAULT_TASK_POLL_INTERVAL, DEFAULT_TASK_TTL};
#[cfg(feature = "tracing-bridge")]
pub use tracing_bridge::ClientLogLayer;
pub use url::{UrlElicitations, UrlFlowState};

use crate::engine::{Session, SessionConfig};
use crate::protocol::{Implementation, ListToolsResult, ServerCapabilities};
use crate::tool::{ToolBox, ToolDef};
use crate::transport::{LineOptions, serve_lines};

/// Why a server could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools were registered under one name.
    #[error("a tool named `{name}` is already registered; tool names must be unique")]
    DuplicateTool {
        /// The name registered twice.
        name: String,
    },
    /// A tool name breaks MCP's naming rules.
    #[error("invalid tool name `{name}`: {reason}")]
    InvalidToolName {
        /// The offending name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A tool's output schema is not usable.
    #[error("tool `{tool}`: {reason}")]
    InvalidOutputSchema {
        /// The tool.
        tool: String,
        /// What is wrong with its schema.
        reason: String,
    },
    /// A tool's input schema is not usable (an `x-mcp-header` annotation breaks its rules).
    #[error("tool `{tool}`: {reason}")]
    InvalidInputSchema {
        /// The tool.
        tool: String,
        /// What is wrong with its schema.
        reason: String,
    },
    /// Two prompts were registered under one name.
    #[error("a prompt named `{name}` is already registered; prompt names must be unique")]
    DuplicatePrompt {
        /// The name registered twice.
        name: String,
    },
    /// Two resources (or templates) were registered under one URI.
    #[error("a resource with URI (or template) `{uri}` is already registered")]
    DuplicateResource {
        /// The URI registered twice.
        uri: String,
    },
    /// A resource template is not a URI template this server can match.
    #[error("invalid URI template `{template}`: {reason}")]
    InvalidUriTemplate {
        /// The template.
        template: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A tool's view (`#[tool(ui = "…")]`) or a view's resource (`#[resource(…, app)]`) is not
    /// usable: a URI that is not `ui://`, a view that is a template, an origin that is not one.
    #[error("{what}: {reason}")]
    InvalidApp {
        /// The tool or resource.
        what: String,
        /// What is wrong.
        reason: String,
    },
    /// A tool shows a view (`ui://…`) that no registered resource serves as an MCP App view.
    #[error(
        "tool `{tool}` shows the view `{uri}`, but {problem}; register it with `#[resource(\"{uri}\", app)]` or `AppResource`"
    )]
    UnknownAppView {
        /// The tool.
        tool: String,
        /// The view's URI.
        uri: String,
        /// What was found at that URI (nothing, or a resource that is not a view).
        problem: String,
    },
    /// A skill breaks a rule of the skills extension (`typed_mcp::skills`, feature `skills`):
    /// the file and the rule.
    #[error("skill {file}: {rule}")]
    InvalidSkill {
        /// The file (or folder) on disk, or as embedded.
        file: String,
        /// The rule it breaks.
        rule: String,
    },
    /// A completer names a prompt argument or template variable that is not registered.
    #[error("a completer is registered for `{argument}` of {target}, which has no such argument")]
    UnknownCompletionTarget {
        /// The prompt or template.
        target: String,
        /// The argument or variable.
        argument: String,
    },
}

/// Checks a tool name against MCP's rules: 1 to 128 characters from `A-Z a-z 0-9 _ - .`.
pub fn validate_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 128 {
        return Err(format!("a tool name must be 1 to 128 characters long (this one has {})", name.chars().count()));
    }
    match name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
        Some(c) => Err(format!("`{c}` is not allowed; use only ASCII letters, digits, `_`, `-` and `.`")),
        None => Ok(()),
    }
}

pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) capabilities: ServerCapabilities,
    /// The tools, with `tools/list` serialized in advance.
    pub(crate) tools: catalog::Catalog<ToolDef>,
    /// Prompts, resources, logging, completion, sampling, and the live sessions.
    pub(crate) surface: registry::Registry,
    /// The application's shared state.
    pub(crate) state: crate::state_map::StateMap,
    /// The server's number among the live servers of the process.
    pub(crate) number: live::LiveNumber,
    /// How long a user has to answer a question, unless the question says otherwise.
    pub(crate) elicitation_timeout: Duration,
    pub(crate) url_elicitations: UrlElicitations,
    /// The shared deployment this server is an instance of, if any.
    #[cfg(feature = "http")]
    pub(crate) deployment: std::sync::OnceLock<Arc<deployment::Deployment>>,
    /// Seals the `requestState` of 2026-era multi round-trip requests.
    pub(crate) request_state: crate::multi_round::state::Sealer,
    /// 2026-era settings (caching hints, server identity in results).
    pub(crate) era_2026: era_2026::Settings2026,
    /// Tasks (the 2026-07-28 tasks extension).
    pub(crate) tasks: tasks::Tasks,
    /// The skills served (the skills extension).
    #[cfg(feature = "skills")]
    pub(crate) skills: Option<Arc<skills::Served>>,
    pub(crate) line: LineOptions,
    pub(crate) session: SessionConfig,
    /// What wraps every request the router dispatches, outermost first.
    pub(crate) middleware: Arc<[Arc<dyn crate::middleware::Middleware>]>,
    /// Spans and metrics of what the server receives and sends (feature `otel`).
    #[cfg(feature = "otel")]
    pub(crate) telemetry: Option<crate::telemetry::Telemetry>,
}

/// A built MCP server. Cheap to clone; every connection gets its own session.
#[derive(Clone)]
pub struct Server {
    inner: Arc<ServerInner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("info", &self.inner.info).field("tools", &self.inner.tools.len()).finish()
    }
}

impl Server {
    /// Starts a builder; `name` and `version` become the `serverInfo` clients see.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            tools: Vec::new(),
            surface: registry::RegistryBuilder::default(),
            state: Default::default(),
            elicitation_timeout: DEFAULT_ELICITATION_TIMEOUT,
            era_2026: era_2026::Settings2026::default(),
            request_state_key: None,
            request_state_ttl: crate::multi_round::state::DEFAULT_STATE_TTL,
            tasks: tasks::TaskSettings::default(),
            line: LineOptions::default(),
            session: SessionConfig::default(),
            middleware: Vec::new(),
            #[cfg(feature = "skills")]
            skills: None,
            #[cfg(feature = "otel")]
            telemetry: None,
        }
    }

    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The registered tools, in registration order.
    pub fn tools(&self) -> ListToolsResult {
        let tools = self.inner.tools.snapshot().items.iter().map(|t| t.tool.clone()).collect();
        ListToolsResult { tools, next_cursor: None }
    }

    /// The server's URL-mode elicitations, for completing flows from outside any request
    /// (for example, in the handler of the page the user was sent to).
    pub fn url_elicitations(&self) -> &UrlElicitations {
        &self.inner.url_elicitations
    }

    /// Serves one session over stdin/stdout until stdin ends.
    ///
    /// A host starts a stdio server with pipes. When standard input is a terminal instead (a
    /// person ran the program by hand), this first prints to stderr that the program waits for
    /// an MCP client, how to try it with the MCP Inspector, and the entry for a desktop host's
    /// server list; stdout carries nothing but JSON-RPC either way. To serve stdin and stdout
    /// without that note, pass them to [`serve_io`](Self::serve_io).
    pub async fn serve_stdio(&self) -> io::Result<()> {
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            eprint!("{}", terminal::note(&self.inner.info.name, &std::env::args().collect::<Vec<_>>()));
        }
        let (stdin, stdout) = crate::transport::stdio::stdio();
        // Served from a task, not from the caller's future: `#[tokio::main]` runs that on a
        // thread outside the runtime's workers, and every time stdin became readable a worker
        // would have to wake that thread.
        let server = self.clone();
        match tokio::spawn(async move { server.serve_io(stdin, stdout).await }).await {
            Ok(result) => result,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => Err(io::Error::other(e)),
        }
    }

    /// Serves one session over any reader/writer pair, one JSON message per line.
    pub async fn serve_io<R, W>(&self, reader: R, writer: W) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (session, outbound) =
            Session::new(session::ServerSession::new(self.inner.clone()), self.inner.session.clone());
        serve_lines(session, outbound, reader, writer, self.inner.line.clone()).await
    }
}

/// Configures a [`Server`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<ToolDef>,
    surface: registry::RegistryBuilder,
    state: crate::state_map::StateMap,
    elicitation_timeout: Duration,
    era_2026: era_2026::Settings2026,
    request_state_key: Option<crate::multi_round::state::StateKey>,
    request_state_ttl: Duration,
    tasks: tasks::TaskSettings,
    line: LineOptions,
    session: SessionConfig,
    middleware: Vec<Arc<dyn crate::middleware::Middleware>>,
    #[cfg(feature = "skills")]
    skills: Option<crate::skills::Skills>,
    #[cfg(feature = "otel")]
    telemetry: Option<crate::telemetry::Telemetry>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder").field("info", &self.info).field("tools", &self.tools).finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// Sets the human-readable title in `serverInfo`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Sets the description in `serverInfo`.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// Sets the website in `serverInfo`.
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.info.website_url = Some(url.into());
        self
    }

    /// Sets the instructions returned by `initialize`, telling a model how to use the server.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Registers a tool. A name registered twice makes [`build`](Self::build) fail.
    pub fn tool(mut self, tool: ToolDef) -> Self {
        self.tools.push(tool);
        self
    }

    /// Registers several tools, e.g. `tools![add, echo]`.
    pub fn tools(mut self, tools: impl IntoIterator<Item = ToolDef>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Registers the tools of a `#[toolbox]` value.
    pub fn toolbox<T: ToolBox>(self, toolbox: T) -> Self {
        self.toolbox_arc(Arc::new(toolbox))
    }

    /// Registers the tools of a shared `#[toolbox]` value.
    pub fn toolbox_arc<T: ToolBox>(self, toolbox: Arc<T>) -> Self {
        self.tools(toolbox.tools())
    }

    /// Registers shared state, injected into tools that take a [`State<T>`](crate::State)
    /// argument and available from [`Context::state`]. One value per type.
    pub fn state<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.state_arc(Arc::new(value))
    }

    /// Registers shared state the application also keeps a handle to.
    pub fn state_arc<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.state.insert(value);
        self
    }

    /// How long a user has to answer a tool's question ([`Context::elicit`] and friends)
    /// when the question does not set its own timeout: [`DEFAULT_ELICITATION_TIMEOUT`] unless
    /// set here. Tools may ask without any set-up; questions are sent only to clients that
    /// declared the `elicitation` capability.
    pub fn elicitation_timeout(mut self, timeout: Duration) -> Self {
        self.elicitation_timeout = timeout;
        self
    }

    /// Wraps every request the server handles in `middleware` (see [`crate::middleware`]), on
    /// every transport and in both eras. Middleware runs in the order added, the first added
    /// outermost.
    pub fn middleware(mut self, middleware: impl crate::middleware::Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Traces and measures every request the server receives and sends, by the OpenTelemetry
    /// MCP conventions (see [`crate::telemetry`]): `Telemetry::global()` for the providers the
    /// application installed globally.
    #[cfg(feature = "otel")]
    pub fn telemetry(mut self, telemetry: crate::telemetry::Telemetry) -> Self {
        self.telemetry = Some(telemetry);
        self
    }

    /// Sets the longest accepted incoming message (default 4 MiB); longer ones are rejected
    /// without being buffered.
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.line.max_line = bytes;
        self
    }

    /// Checks the configuration and builds the server.
    pub fn build(mut self) -> Result<Server, BuildError> {
        for def in &mut self.tools {
            let name = def.name();
            validate_tool_name(name).map_err(|reason| BuildError::InvalidToolName { name: name.to_owned(), reason })?;
            if let Some(schema) = &def.tool.output_schema {
                crate::tool::check_output_schema(schema)
                    .map_err(|e| BuildError::InvalidOutputSchema { tool: name.to_owned(), reason: e.0 })?;
            }
            let name = name.to_owned();
            def.check_headers().map_err(|e| BuildError::InvalidInputSchema { tool: name, reason: e.0 })?;
        }
        let apps = registry::check_apps(&self.tools, &self.surface.resources)?;
        #[cfg(feature = "skills")]
        let skills = skills::prepare(&mut self)?;
        let surface = self.surface.build()?;
        let some_tool_runs_as_task = self.tools.iter().any(|t| t.task_mode().allows_task());
        let tools = catalog::Catalog::new(self.tools, surface.page_size, surface.dynamic_tools)
            .map_err(|name| BuildError::DuplicateTool { name })?;
        let tasks = tasks::Tasks::new(self.tasks, some_tool_runs_as_task);
        let mut capabilities = surface.capabilities(tools.len());
        if tasks.enabled {
            let mut extensions = crate::protocol::JsonObject::new();
            extensions.insert(crate::protocol::TASKS_EXTENSION.into(), serde_json::Value::Object(Default::default()));
            capabilities.extensions = Some(extensions);
        }
        if apps {
            let extensions = capabilities.extensions.get_or_insert_with(Default::default);
            extensions.insert(crate::apps::EXTENSION.into(), crate::apps::capability());
        }
        #[cfg(feature = "skills")]
        if let Some(served) = &skills {
            skills::declare(&mut capabilities, served);
        }
        let era_2026 = era_2026::Settings2026 {
            server_info: self
                .era_2026
                .advertise_server_info
                .then(|| serde_json::to_string(&self.info).ok().map(String::into_boxed_str))
                .flatten(),
            ..self.era_2026
        };
        let server = Server {
            inner: Arc::new_cyclic(|weak| ServerInner {
                number: live::LiveNumber::enter(weak.clone()),
                info: self.info,
                instructions: self.instructions,
                capabilities,
                tools,
                surface,
                state: self.state,
                elicitation_timeout: self.elicitation_timeout,
                url_elicitations: UrlElicitations::default(),
                #[cfg(feature = "http")]
                deployment: std::sync::OnceLock::new(),
                request_state: crate::multi_round::state::Sealer::new(
                    self.request_state_key.unwrap_or_else(crate::multi_round::state::StateKey::random),
                    self.request_state_ttl,
                ),
                era_2026,
                tasks,
                #[cfg(feature = "skills")]
                skills,
                line: self.line,
                session: self.session,
                middleware: self.middleware.into(),
                #[cfg(feature = "otel")]
                telemetry: self.telemetry,
            }),
        };
        #[cfg(feature = "skills")]
        skills::watch(&server);
        Ok(server)
    }
}
