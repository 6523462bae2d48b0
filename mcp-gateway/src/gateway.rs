//! The gateway: the upstreams of a configuration mounted on one [`Server`], their lists kept
//! up to date as they change.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use typed_mcp::protocol::{Prompt, Resource, ResourceTemplate, Tool};
use typed_mcp::telemetry::Telemetry;
use typed_mcp::{ErrorObject, Server, ServerBuilder};

use crate::config::{Config, ConfigError};
use crate::relay::{self, InFlight};
use crate::upstream::{Event, Shared, Upstream, read, write};

/// Why the gateway could not start.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The configuration is not usable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The configuration breaks a rule (upstream at `index`).
    #[error("upstream #{index}: {reason}")]
    Invalid {
        /// The index of the upstream at fault.
        index: usize,
        /// The rule broken.
        reason: String,
    },
    /// Two upstreams offer the same name (a tool or prompt under its prefix, or a resource URI).
    #[error("{kind} `{name}` is offered by both upstream `{first}` and upstream `{second}`; give one a prefix")]
    Clash {
        /// `tool`, `prompt`, `resource` or `resource template`.
        kind: &'static str,
        /// The name (or URI) both offer.
        name: String,
        /// The upstream mounted first.
        first: String,
        /// The other.
        second: String,
    },
    /// The server could not be built.
    #[error(transparent)]
    Build(#[from] typed_mcp::BuildError),
    /// The server refused a relayed definition (an upstream's tool breaks a rule of ours).
    #[error("upstream `{upstream}`: {reason}")]
    Refused {
        /// The upstream.
        upstream: String,
        /// Why.
        reason: String,
    },
}

/// What an upstream lists.
#[derive(Debug, Default, Clone)]
struct Catalog {
    tools: Vec<Tool>,
    prompts: Vec<Prompt>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
}

/// The names the gateway serves for one upstream.
#[derive(Debug, Default, Clone)]
struct Mounted {
    tools: Vec<String>,
    prompts: Vec<String>,
    resources: Vec<String>,
}

struct Inner {
    config: Config,
    upstreams: Vec<Arc<Upstream>>,
    in_flight: Arc<InFlight>,
    server: OnceLock<Server>,
    mounted: Mutex<HashMap<String, Mounted>>,
    /// One change of the server's lists at a time.
    syncing: tokio::sync::Mutex<()>,
    lazy_started: AtomicBool,
    lazy_gate: tokio::sync::Mutex<()>,
    telemetry: Shared<Option<Telemetry>>,
}

/// One endpoint in front of the upstreams of a [`Config`].
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use typed_mcp_gateway::{Config, Gateway};
///
/// let gateway = Gateway::from_config(Config::from_file("gateway.toml")?)?;
/// // Anything of our `ServerBuilder` goes in front: middleware, rate limits, telemetry.
/// let builder = gateway.server_builder().middleware(typed_mcp::middleware::RateLimit::new(
///     100,
///     std::time::Duration::from_secs(1),
/// ));
/// let server = gateway.start(builder).await?;
/// server.serve_stdio().await?;
/// gateway.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway").field("upstreams", &self.inner.upstreams).finish_non_exhaustive()
    }
}

impl Gateway {
    /// A gateway for `config` (nothing is started yet: see [`start`](Self::start)).
    ///
    /// # Errors
    ///
    /// [`GatewayError::Invalid`] when the configuration breaks a rule.
    pub fn from_config(config: Config) -> Result<Gateway, GatewayError> {
        config.check().map_err(|(index, reason)| GatewayError::Invalid { index, reason })?;
        let telemetry = Shared::default();
        let upstreams = config
            .upstreams
            .iter()
            .map(|u| Upstream::new(u.clone(), config.gateway.clone(), Arc::clone(&telemetry)))
            .collect::<Vec<_>>();
        let inner = Arc::new(Inner {
            config,
            upstreams,
            in_flight: Arc::default(),
            server: OnceLock::new(),
            mounted: Mutex::default(),
            syncing: tokio::sync::Mutex::new(()),
            lazy_started: AtomicBool::new(false),
            lazy_gate: tokio::sync::Mutex::new(()),
            telemetry,
        });
        let weak = Arc::downgrade(&inner);
        for upstream in &inner.upstreams {
            let weak = weak.clone();
            upstream.listen(Arc::new(move |upstream, event| {
                if let Some(inner) = weak.upgrade() {
                    Gateway { inner }.on_event(upstream.clone(), event);
                }
            }));
        }
        Ok(Gateway { inner })
    }

    /// Traces and measures the gateway with `telemetry`, by the OpenTelemetry MCP conventions:
    /// [`server_builder`](Self::server_builder) serves with it (a `SERVER` span for each
    /// client request, continuing the client's trace), and each request to an upstream is a
    /// `CLIENT` span under it that passes the trace on in the request's `_meta`
    /// (`traceparent`), so that an upstream with telemetry of its own continues the same
    /// trace. Set it before [`start`](Self::start): an upstream takes it when it connects.
    #[must_use]
    pub fn telemetry(self, telemetry: Telemetry) -> Self {
        *write(&self.inner.telemetry) = Some(telemetry);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The upstreams, in the configuration's order.
    pub fn upstreams(&self) -> &[Arc<Upstream>] {
        &self.inner.upstreams
    }

    /// The server builder the gateway serves through: named as the configuration says, its
    /// lists dynamic. Add what goes in front (middleware, rate limits, telemetry, a request
    /// state key shared by instances) and pass it to [`start`](Self::start).
    pub fn server_builder(&self) -> ServerBuilder {
        let settings = &self.inner.config.gateway;
        let mut builder = Server::builder(settings.name.clone(), settings.version.clone())
            .dynamic_tools()
            .dynamic_prompts()
            .dynamic_resources()
            .completions()
            .resource_subscriptions()
            // A relayed call may run as a task of the gateway's (the tasks extension, 2026-07-28
            // era), whatever its upstream speaks: the gateway keeps the task and passes on what
            // the call asks meanwhile.
            .task_store(typed_mcp::task::MemoryTaskStore::new());
        if let Some(instructions) = &settings.instructions {
            builder = builder.instructions(instructions.clone());
        }
        if let Some(telemetry) = read(&self.inner.telemetry).clone() {
            builder = builder.telemetry(telemetry);
        }
        if self.inner.upstreams.iter().any(|u| !u.config().is_eager()) {
            let gateway = self.clone();
            builder = builder.middleware(typed_mcp::middleware::from_fn(move |_request, next| {
                let gateway = gateway.clone();
                async move {
                    gateway.start_lazy().await;
                    next.run().await
                }
            }));
        }
        builder
    }

    /// Builds the server from `builder` (made by [`server_builder`](Self::server_builder)),
    /// starts the eager upstreams and mounts what they list. An upstream that fails to start
    /// is tried again in the background (and on first use); the others are served.
    ///
    /// # Errors
    ///
    /// [`GatewayError::Clash`] when two upstreams offer the same name;
    /// [`GatewayError::Build`] when the server cannot be built.
    pub async fn start(&self, builder: ServerBuilder) -> Result<Server, GatewayError> {
        let server = builder.build()?;
        let _ = self.inner.server.set(server.clone());
        let eager: Vec<_> = self.inner.upstreams.iter().filter(|u| u.config().is_eager()).cloned().collect();
        self.mount_all(&eager).await?;
        Ok(server)
    }

    /// Starts and mounts `upstreams` together, refusing clashes among them and with what is
    /// mounted already.
    async fn mount_all(&self, upstreams: &[Arc<Upstream>]) -> Result<(), GatewayError> {
        let catalogs =
            futures_util::future::join_all(upstreams.iter().map(|u| async move { (u.clone(), catalog(u).await) }))
                .await;
        let _sync = self.inner.syncing.lock().await;
        let mut ready = Vec::new();
        for (upstream, result) in catalogs {
            match result {
                Ok(catalog) => ready.push((upstream, catalog)),
                Err(e) => {
                    tracing::warn!(upstream = %upstream.name(), error = %e.message, "upstream not mounted; it is tried again on use");
                    self.retry_later(upstream);
                }
            }
        }
        self.check_clashes(&ready)?;
        for (upstream, catalog) in ready {
            self.mount(&upstream, catalog).await?;
        }
        Ok(())
    }

    fn retry_later(&self, upstream: Arc<Upstream>) {
        let gateway = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let mut pause = std::time::Duration::from_millis(200);
            loop {
                tokio::time::sleep(pause).await;
                let Some(inner) = gateway.upgrade() else { return };
                if upstream.client().await.is_ok() {
                    Gateway { inner }.on_event(upstream, Event::Changed);
                    return;
                }
                pause = (pause * 2).min(std::time::Duration::from_secs(30));
            }
        });
    }

    fn check_clashes(&self, ready: &[(Arc<Upstream>, Catalog)]) -> Result<(), GatewayError> {
        let mut seen: HashMap<(&'static str, String), String> = HashMap::new();
        for (upstream, mounted) in self.mounted().iter() {
            for t in &mounted.tools {
                seen.insert(("tool", t.clone()), upstream.clone());
            }
            for p in &mounted.prompts {
                seen.insert(("prompt", p.clone()), upstream.clone());
            }
            for r in &mounted.resources {
                seen.insert(("resource", r.clone()), upstream.clone());
            }
        }
        for (upstream, catalog) in ready {
            let prefix = upstream.config().prefix();
            let names = catalog
                .tools
                .iter()
                .filter(|t| upstream.config().relays_tool(&t.name))
                .map(|t| ("tool", format!("{prefix}{}", t.name)))
                .chain(catalog.prompts.iter().map(|p| ("prompt", format!("{prefix}{}", p.name))))
                .chain(catalog.resources.iter().map(|r| ("resource", r.uri.clone())))
                .chain(catalog.templates.iter().map(|t| ("resource", t.uri_template.clone())));
            for (kind, name) in names {
                if let Some(first) = seen.insert((kind, name.clone()), upstream.name().to_owned())
                    && first != upstream.name()
                {
                    return Err(GatewayError::Clash { kind, name, first, second: upstream.name().to_owned() });
                }
            }
        }
        Ok(())
    }

    fn mounted(&self) -> std::sync::MutexGuard<'_, HashMap<String, Mounted>> {
        self.inner.mounted.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Replaces what is served for `upstream` with `catalog`.
    async fn mount(&self, upstream: &Arc<Upstream>, catalog: Catalog) -> Result<(), GatewayError> {
        let Some(server) = self.inner.server.get() else { return Ok(()) };
        let refused = |e: typed_mcp::server::ChangeError| GatewayError::Refused {
            upstream: upstream.name().to_owned(),
            reason: e.to_string(),
        };
        let old = self.mounted().remove(upstream.name()).unwrap_or_default();
        for name in &old.tools {
            server.remove_tool(name).await.map_err(refused)?;
        }
        for name in &old.prompts {
            server.remove_prompt(name).await.map_err(refused)?;
        }
        for uri in &old.resources {
            server.remove_resource(uri).await.map_err(refused)?;
        }
        let prefix = upstream.config().prefix();
        let mut mounted = Mounted::default();
        let in_flight = &self.inner.in_flight;
        let mut first_error = None;
        for tool in catalog.tools.into_iter().filter(|t| upstream.config().relays_tool(&t.name)) {
            let name = format!("{prefix}{}", tool.name);
            match server.add_tool(relay::tool(in_flight, upstream, tool, name.clone())).await {
                Ok(()) => mounted.tools.push(name),
                Err(e) => {
                    tracing::warn!(upstream = %upstream.name(), tool = %name, error = %e, "tool not relayed");
                    first_error.get_or_insert(refused(e));
                }
            }
        }
        for prompt in catalog.prompts {
            let name = format!("{prefix}{}", prompt.name);
            match server.add_prompt(relay::prompt(in_flight, upstream, prompt, name.clone())).await {
                Ok(()) => mounted.prompts.push(name),
                Err(e) => {
                    tracing::warn!(upstream = %upstream.name(), prompt = %name, error = %e, "prompt not relayed");
                    first_error.get_or_insert(refused(e));
                }
            }
        }
        let subscribe: Vec<String> =
            catalog.resources.iter().take(MAX_UPSTREAM_SUBSCRIPTIONS).map(|r| r.uri.clone()).collect();
        let defs =
            catalog.resources.into_iter().map(|r| (r.uri.clone(), relay::resource(in_flight, upstream, r))).chain(
                catalog
                    .templates
                    .into_iter()
                    .map(|t| (t.uri_template.clone(), relay::template(in_flight, upstream, t))),
            );
        for (uri, def) in defs {
            match server.add_resource(def).await {
                Ok(()) => mounted.resources.push(uri),
                Err(e) => {
                    tracing::warn!(upstream = %upstream.name(), %uri, error = %e, "resource not relayed");
                    first_error.get_or_insert(refused(e));
                }
            }
        }
        self.mounted().insert(upstream.name().to_owned(), mounted);
        subscribe_upstream(upstream, subscribe);
        first_error.map_or(Ok(()), Err)
    }

    /// Starts the lazy upstreams, once, before the first request is served.
    async fn start_lazy(&self) {
        if self.inner.lazy_started.load(Ordering::Acquire) {
            return;
        }
        let _once = self.inner.lazy_gate.lock().await;
        if self.inner.lazy_started.load(Ordering::Acquire) {
            return;
        }
        let lazy: Vec<_> = self.inner.upstreams.iter().filter(|u| !u.config().is_eager()).cloned().collect();
        if let Err(e) = self.mount_all(&lazy).await {
            tracing::error!(error = %e, "lazy upstreams not mounted");
        }
        self.inner.lazy_started.store(true, Ordering::Release);
    }

    fn on_event(&self, upstream: Arc<Upstream>, event: Event) {
        let gateway = self.clone();
        tokio::spawn(async move {
            let Some(server) = gateway.inner.server.get() else { return };
            match event {
                Event::Changed => {
                    // Names new to the gateway that clash with another upstream's are left out.
                    let catalog = match catalog(&upstream).await {
                        Ok(c) => c,
                        Err(e) => {
                            tracing::warn!(upstream = %upstream.name(), error = %e.message, "cannot list the upstream again");
                            return;
                        }
                    };
                    let _sync = gateway.inner.syncing.lock().await;
                    let catalog = gateway.without_clashes(&upstream, catalog);
                    if let Err(e) = gateway.mount(&upstream, catalog).await {
                        tracing::warn!(error = %e, "upstream's lists only partly relayed");
                    }
                }
                Event::ResourceUpdated(uri) => {
                    server.notify_resource_updated(&uri).await;
                }
                Event::ElicitationComplete(id) => {
                    // A flow asked with `elicitation/create` is the server's own; one of a
                    // -32042 passed on is known by the session it went to.
                    // The 2026-era request waiting to retry on a -32042 is told first.
                    if !gateway.inner.in_flight.complete_required_flow(&id)
                        && server.url_elicitations().complete(&id).await.is_err()
                        && !gateway.inner.in_flight.complete_url_flow(&id).await
                    {
                        tracing::debug!(elicitation_id = %id, "an upstream completed a URL flow no client is waiting on");
                    }
                }
            }
        });
    }

    fn without_clashes(&self, upstream: &Arc<Upstream>, mut catalog: Catalog) -> Catalog {
        let prefix = upstream.config().prefix();
        let others: HashSet<String> = self
            .mounted()
            .iter()
            .filter(|(name, _)| *name != upstream.name())
            .flat_map(|(_, m)| m.tools.iter().chain(&m.prompts).chain(&m.resources).cloned().collect::<Vec<_>>())
            .collect();
        catalog.tools.retain(|t| !others.contains(&format!("{prefix}{}", t.name)));
        catalog.prompts.retain(|p| !others.contains(&format!("{prefix}{}", p.name)));
        catalog.resources.retain(|r| !others.contains(&r.uri));
        catalog.templates.retain(|t| !others.contains(&t.uri_template));
        catalog
    }

    /// Stops every upstream (closing stdio upstreams' input, ending HTTP sessions).
    pub async fn shutdown(&self) {
        futures_util::future::join_all(self.inner.upstreams.iter().map(|u| u.stop())).await;
    }
}

/// Most resources of one upstream the gateway subscribes to.
const MAX_UPSTREAM_SUBSCRIPTIONS: usize = 256;

/// Subscribes to `uris` on `upstream` when it offers subscriptions, so that its
/// `notifications/resources/updated` reach the gateway, which tells the clients subscribed.
fn subscribe_upstream(upstream: &Arc<Upstream>, uris: Vec<String>) {
    let upstream = upstream.clone();
    tokio::spawn(async move {
        let Ok(client) = upstream.client().await else { return };
        let offered = client.server_capabilities().resources.as_ref().and_then(|r| r.subscribe).unwrap_or(false);
        if !offered || client.era() != typed_mcp::client::ProtocolEra::Y2025 {
            return;
        }
        for uri in uris {
            if let Err(e) = client.subscribe_resource(&uri).await {
                tracing::debug!(upstream = %upstream.name(), %uri, error = %e, "cannot subscribe upstream");
            }
        }
    });
}

/// Everything `upstream` lists, connecting first. A list it does not offer is empty.
async fn catalog(upstream: &Arc<Upstream>) -> Result<Catalog, ErrorObject> {
    let client = upstream.client().await?;
    let caps = client.server_capabilities().clone();
    let error = |e| upstream.error(e);
    let tools =
        async { if caps.tools.is_some() { client.list_all_tools().await.map_err(error) } else { Ok(Vec::new()) } };
    let prompts =
        async { if caps.prompts.is_some() { client.list_all_prompts().await.map_err(error) } else { Ok(Vec::new()) } };
    let resources = async {
        if caps.resources.is_some() {
            let (r, t) = tokio::join!(client.list_all_resources(), client.list_all_resource_templates());
            Ok::<_, ErrorObject>((r.map_err(error)?, t.map_err(error)?))
        } else {
            Ok((Vec::new(), Vec::new()))
        }
    };
    let (tools, prompts, resources) = tokio::join!(tools, prompts, resources);
    let (resources, templates) = resources?;
    Ok(Catalog { tools: tools?, prompts: prompts?, resources, templates })
}
