//! One server behind the gateway: its connection, opened when first needed (or with the
//! gateway), opened again with a growing pause when it dies, and the requests it sends during
//! a call routed to the downstream request they belong to.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use typed_mcp::ErrorObject;
use typed_mcp::client::http::HttpClientConfig;
use typed_mcp::client::oauth::OAuth;
use typed_mcp::client::{
    Client, ClientError, ElicitationHandler, ElicitationModes, ElicitationRequest, ProtocolEra, RootsHandler,
    SamplingHandler, ServerNotification,
};
use typed_mcp::protocol::{
    CreateMessageParams, CreateMessageResult, ElicitRequestParams, ElicitResult, Root, SubscriptionFilter,
};
use typed_mcp::telemetry::Telemetry;

use crate::calls::{Answer, Ask};
use crate::config::{Era, GatewaySettings, Transport, UpstreamConfig};

/// Where an upstream's questions during a call go.
pub(crate) trait AskTarget: Send + Sync {
    /// Passes `ask` on; the answer comes on the receiver.
    fn ask(&self, ask: Ask) -> tokio::sync::oneshot::Receiver<Answer>;
    /// Passes a log message of the upstream's on to the downstream request.
    fn log(&self, params: typed_mcp::protocol::LoggingMessageParams);
}

tokio::task_local! {
    /// The call whose upstream request this task is making: a question asked inside it (a
    /// 2026-era upstream's `input_required`, answered within the request) belongs to it.
    static CALL: Arc<dyn AskTarget>;
}

/// What the gateway is told of an upstream.
pub(crate) enum Event {
    /// One of its lists changed (or it was started again): list it again.
    Changed,
    /// It announced that the resource at this URI changed.
    ResourceUpdated(String),
    /// It announced that a URL-mode elicitation completed.
    ElicitationComplete(String),
}

type Listener = Arc<dyn Fn(&Arc<Upstream>, Event) + Send + Sync>;

struct Backoff {
    failures: u32,
    next_try: Instant,
    last_error: String,
}

/// Longest pause between two attempts to start an upstream.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long a request failed by the HTTP transport waits to see the connection close (the
/// session is gone, and a new one is worth a try).
const SESSION_LOST_WAIT: Duration = Duration::from_millis(200);
/// First pause after a failure.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// A server behind the gateway.
pub struct Upstream {
    config: UpstreamConfig,
    settings: GatewaySettings,
    client: RwLock<Option<Client>>,
    connecting: tokio::sync::Mutex<Backoff>,
    /// The calls in flight, oldest first, for questions that name no call.
    active: Mutex<Vec<(u64, Arc<dyn AskTarget>)>>,
    next_call: AtomicU64,
    listener: OnceLock<Listener>,
    stopped: CancellationToken,
    /// The gateway's telemetry, which the client traces its requests with (when set).
    telemetry: Shared<Option<Telemetry>>,
    me: Weak<Upstream>,
}

/// A setting of the gateway's that its upstreams read when they connect.
pub(crate) type Shared<T> = Arc<RwLock<T>>;

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream").field("name", &self.config.name).finish_non_exhaustive()
    }
}

impl Upstream {
    pub(crate) fn new(
        config: UpstreamConfig,
        settings: GatewaySettings,
        telemetry: Shared<Option<Telemetry>>,
    ) -> Arc<Self> {
        Arc::new_cyclic(|me| Upstream {
            config,
            settings,
            telemetry,
            client: RwLock::new(None),
            connecting: tokio::sync::Mutex::new(Backoff {
                failures: 0,
                next_try: Instant::now(),
                last_error: String::new(),
            }),
            active: Mutex::default(),
            next_call: AtomicU64::new(0),
            listener: OnceLock::new(),
            stopped: CancellationToken::new(),
            me: me.clone(),
        })
    }

    /// Its configuration.
    pub fn config(&self) -> &UpstreamConfig {
        &self.config
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    pub(crate) fn listen(&self, listener: Listener) {
        let _ = self.listener.set(listener);
    }

    fn tell(&self, event: Event) {
        if let (Some(listener), Some(me)) = (self.listener.get(), self.me.upgrade()) {
            listener(&me, event);
        }
    }

    /// Whether it is connected now.
    pub fn is_connected(&self) -> bool {
        read(&self.client).as_ref().is_some_and(|c| !c.is_closed())
    }

    /// The connected client, connecting first when there is none (or it closed). While the
    /// upstream keeps failing to start, attempts are spaced by a pause that doubles up to 30 s,
    /// and a call in between is refused at once with the last error.
    pub(crate) async fn client(&self) -> Result<Client, ErrorObject> {
        if let Some(client) = read(&self.client).as_ref().filter(|c| !c.is_closed()) {
            return Ok(client.clone());
        }
        // Boxed: connecting is a large future, which every call's future would carry (and
        // copy) otherwise.
        Box::pin(self.connect_now()).await
    }

    /// The slow path of [`client`](Self::client): connects unless another call just did.
    async fn connect_now(&self) -> Result<Client, ErrorObject> {
        if self.stopped.is_cancelled() {
            return Err(self.unavailable("the gateway is stopping"));
        }
        let mut backoff = self.connecting.lock().await;
        if let Some(client) = read(&self.client).as_ref().filter(|c| !c.is_closed()) {
            return Ok(client.clone());
        }
        let now = Instant::now();
        if backoff.failures > 0 && now < backoff.next_try {
            let wait = backoff.next_try - now;
            return Err(self.unavailable(&format!("{} (next attempt in {} ms)", backoff.last_error, wait.as_millis())));
        }
        let restarting = read(&self.client).is_some();
        match self.connect().await {
            Ok(client) => {
                // Every message an upstream logs comes here (in either era); each client's own
                // level filters what it is passed on.
                if client.server_capabilities().logging.is_some() {
                    let _ = client.set_log_level(typed_mcp::LoggingLevel::Debug).await;
                }
                backoff.failures = 0;
                *write(&self.client) = Some(client.clone());
                tracing::info!(upstream = %self.config.name, era = ?client.era(), "upstream connected");
                if restarting {
                    self.tell(Event::Changed);
                }
                self.watch(&client);
                Ok(client)
            }
            Err(e) => {
                backoff.failures += 1;
                let pause = FIRST_BACKOFF.saturating_mul(1 << backoff.failures.min(9)).min(MAX_BACKOFF);
                backoff.next_try = Instant::now() + pause;
                backoff.last_error = e.to_string();
                tracing::warn!(upstream = %self.config.name, error = %e, ?pause, "upstream failed to start");
                Err(self.unavailable(&backoff.last_error))
            }
        }
    }

    /// Starts it again when its connection ends, after a pause, unless the gateway stops.
    fn watch(&self, client: &Client) {
        let client = client.clone();
        let me = self.me.clone();
        let stopped = self.stopped.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = client.closed() => {}
                () = listen_for_changes(&client) => {}
                () = stopped.cancelled() => return,
            }
            drop(client);
            let mut pause = FIRST_BACKOFF;
            loop {
                let Some(upstream) = me.upgrade() else { return };
                tracing::warn!(upstream = %upstream.config.name, "upstream closed its connection; starting it again");
                if upstream.client().await.is_ok() || upstream.stopped.is_cancelled() {
                    return;
                }
                drop(upstream);
                tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    () = stopped.cancelled() => return,
                }
                pause = (pause * 2).min(MAX_BACKOFF);
            }
        });
    }

    fn unavailable(&self, why: &str) -> ErrorObject {
        ErrorObject::internal(format!("upstream `{}` is unavailable: {why}", self.config.name))
    }

    async fn connect(&self) -> Result<Client, ClientError> {
        let router = Router(self.me.clone());
        let me = self.me.clone();
        let mut builder = Client::builder(self.settings.name.clone(), self.settings.version.clone())
            .elicitation(router.clone())
            .sampling(router.clone())
            .roots(router)
            .request_timeout(Some(self.settings.call_timeout()))
            .protocol_era(match self.config.era {
                Era::Auto => ProtocolEra::Auto,
                Era::Y2025 => ProtocolEra::Y2025,
                Era::Y2026 => ProtocolEra::Y2026,
            })
            .on_notification(move |n| {
                if let Some(upstream) = me.upgrade() {
                    upstream.notified(n);
                }
            });
        // Each request upstream is a CLIENT span under the SERVER span of the client's request,
        // and carries the trace on (`traceparent` in its `_meta`).
        if let Some(telemetry) = read(&self.telemetry).clone() {
            builder = builder.telemetry(telemetry);
        }
        match self.config.transport() {
            Transport::Stdio(command) => {
                let Some((program, args)) = command.split_first() else {
                    return Err(ClientError::Transport("the command is empty".into()));
                };
                let mut command = tokio::process::Command::new(program);
                command.args(args).envs(&self.config.env).stderr(std::process::Stdio::inherit());
                if let Some(cwd) = &self.config.cwd {
                    command.current_dir(cwd);
                }
                builder.connect_stdio(command).await
            }
            Transport::Http(url) => {
                let mut http = HttpClientConfig::default();
                for (name, value) in &self.config.headers {
                    let name = reqwest::header::HeaderName::try_from(name.as_str())
                        .map_err(|e| ClientError::Transport(format!("header name `{name}`: {e}")))?;
                    let value = reqwest::header::HeaderValue::try_from(value.as_str())
                        .map_err(|e| ClientError::Transport(format!("header `{name}`: {e}")))?;
                    http = http.header(name, value);
                }
                if let Some(token) = &self.config.bearer {
                    http = http.bearer_token(token)?;
                }
                let builder = match &self.config.oauth {
                    Some(oauth) => {
                        let mut flow = OAuth::client_secret(oauth.client_id.clone(), oauth.client_secret.clone());
                        if let Some(scope) = &oauth.scope {
                            flow = flow.scope(scope.clone());
                        }
                        builder.oauth(flow)
                    }
                    None => builder,
                };
                builder.connect_http_with(url, http).await
            }
        }
    }

    fn notified(&self, notification: &ServerNotification) {
        match notification {
            ServerNotification::ToolListChanged => self.tell(Event::Changed),
            ServerNotification::PromptListChanged => self.tell(Event::Changed),
            ServerNotification::ResourceListChanged => self.tell(Event::Changed),
            ServerNotification::ResourceUpdated { uri } => self.tell(Event::ResourceUpdated(uri.clone())),
            ServerNotification::ElicitationComplete { elicitation_id } => {
                self.tell(Event::ElicitationComplete(elicitation_id.clone()))
            }
            ServerNotification::Log(params) => {
                if let Some(target) = self.oldest_call() {
                    target.log(params.clone());
                }
            }
            _ => {}
        }
    }

    /// Runs `request` (a request to this upstream) for the call `target`: what the upstream
    /// asks while it runs goes there.
    async fn run_for<T>(&self, target: Arc<dyn AskTarget>, request: impl Future<Output = T>) -> T {
        let id = self.next_call.fetch_add(1, Ordering::Relaxed);
        lock(&self.active).push((id, target.clone()));
        struct Leave<'a>(&'a Mutex<Vec<(u64, Arc<dyn AskTarget>)>>, u64);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                lock(self.0).retain(|(id, _)| *id != self.1);
            }
        }
        let _leave = Leave(&self.active, id);
        CALL.scope(target, request).await
    }

    /// Makes a request to this upstream for the call `target` with `make` (given the
    /// connected client), connecting first if needed. A request refused because the upstream's
    /// HTTP session is gone (404; it did not run) is made once more on a new session.
    pub(crate) async fn request<T, F, Fut>(&self, target: Arc<dyn AskTarget>, make: F) -> Result<T, ErrorObject>
    where
        F: Fn(Client) -> Fut,
        Fut: Future<Output = Result<T, ClientError>>,
    {
        let client = self.client().await?;
        // A request of the 2026 era waiting on the client's answer to a question is not waiting
        // on the connection: when the upstream dies meanwhile, it ends here.
        let until_closed = |client: Client, request| async move {
            tokio::select! {
                outcome = request => outcome,
                () = client.closed() => Err(ClientError::Closed),
            }
        };
        // Boxed: a client request's future is large, and each future that holds it by value
        // moves it again.
        match self.run_for(target.clone(), Box::pin(until_closed(client.clone(), Box::pin(make(client.clone()))))).await
        {
            // The transport fails the request, then closes the connection.
            Err(ClientError::Transport(why))
                if matches!(self.config.transport(), Transport::Http(_))
                    && tokio::time::timeout(SESSION_LOST_WAIT, client.closed()).await.is_ok() =>
            {
                tracing::info!(upstream = %self.config.name, %why, "upstream session lost; opening a new one");
                let client = self.client().await?;
                self.run_for(target, Box::pin(make(client))).await.map_err(|e| self.error(e))
            }
            other => other.map_err(|e| self.error(e)),
        }
    }

    fn oldest_call(&self) -> Option<Arc<dyn AskTarget>> {
        lock(&self.active).first().map(|(_, t)| t.clone())
    }

    /// Where a question goes: the call whose task asks it (a 2026-era upstream), else the only
    /// or oldest call in flight (a 2025-era upstream's request names no call over stdio).
    async fn route(&self, ask: Ask) -> Option<Answer> {
        let target = CALL.try_with(Clone::clone).ok().or_else(|| self.oldest_call())?;
        target.ask(ask).await.ok()
    }

    /// Turns a client error into the error the downstream client gets.
    pub(crate) fn error(&self, error: ClientError) -> ErrorObject {
        let name = &self.config.name;
        match error {
            ClientError::Rpc(e) => e,
            ClientError::UrlElicitationRequired(required) => required.to_error_object(),
            ClientError::Closed => ErrorObject::internal(format!(
                "upstream `{name}` closed its connection during the call; it is being started again, retry the call"
            )),
            ClientError::Timeout { timeout, .. } => {
                ErrorObject::internal(format!("upstream `{name}` did not answer within {} s", timeout.as_secs()))
            }
            ClientError::Cancelled => ErrorObject::internal(format!("the call to upstream `{name}` was cancelled")),
            other => ErrorObject::internal(format!("upstream `{name}`: {other}")),
        }
    }

    /// Closes its connection and keeps it closed.
    pub(crate) async fn stop(&self) {
        self.stopped.cancel();
        let client = write(&self.client).take();
        if let Some(client) = client {
            client.close().await;
        }
    }
}

/// The handlers of an upstream's requests: each is passed to the call it belongs to.
#[derive(Clone)]
struct Router(Weak<Upstream>);

impl Router {
    async fn route(&self, ask: Ask) -> Option<Answer> {
        let upstream = self.0.upgrade()?;
        upstream.route(ask).await
    }
}

impl ElicitationHandler for Router {
    fn modes(&self) -> ElicitationModes {
        ElicitationModes::ALL
    }

    async fn elicit(&self, request: ElicitationRequest) -> ElicitResult {
        let params = match &request {
            ElicitationRequest::Form(form) => ElicitRequestParams::Form {
                message: form.message.clone(),
                requested_schema: form.schema().as_object().clone(),
            },
            ElicitationRequest::Url(url) => ElicitRequestParams::Url {
                message: url.message.clone(),
                elicitation_id: url.elicitation_id.clone(),
                url: url.url.clone(),
            },
            _ => return ElicitResult::decline(),
        };
        match self.route(Ask::Elicit(params)).await {
            Some(Answer::Elicit(result)) => result,
            _ => ElicitResult::cancel(),
        }
    }
}

impl SamplingHandler for Router {
    async fn create_message(&self, params: CreateMessageParams) -> Result<CreateMessageResult, ErrorObject> {
        match self.route(Ask::Sample(Box::new(params))).await {
            Some(Answer::Sample(result)) => result,
            _ => Err(ErrorObject::internal("no client request to ask the model for")),
        }
    }
}

impl RootsHandler for Router {
    async fn list_roots(&self) -> Result<Vec<Root>, ErrorObject> {
        match self.route(Ask::Roots).await {
            Some(Answer::Roots(result)) => result,
            _ => Ok(Vec::new()),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `m` read, whether or not a writer panicked.
pub(crate) fn read<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `m` written, whether or not a writer panicked.
pub(crate) fn write<T>(m: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How long the gateway waits before listening again to a 2026-07-28 upstream whose
/// subscription ended (or could not be opened).
const LISTEN_AGAIN_AFTER: Duration = Duration::from_secs(1);

/// Keeps a `subscriptions/listen` stream open on a 2026-07-28 upstream for the lists it says
/// change (that era sends `list_changed` only on such a stream); the notifications come to
/// the client's notification handler, like a session's. Opened again when it ends; never
/// returns (for an upstream of the session era, or one whose lists never change, it does
/// nothing).
async fn listen_for_changes(client: &Client) {
    let caps = client.server_capabilities();
    let filter = SubscriptionFilter {
        tools_list_changed: caps.tools.as_ref().and_then(|t| t.list_changed).filter(|c| *c),
        prompts_list_changed: caps.prompts.as_ref().and_then(|p| p.list_changed).filter(|c| *c),
        resources_list_changed: caps.resources.as_ref().and_then(|r| r.list_changed).filter(|c| *c),
        ..SubscriptionFilter::default()
    };
    if client.era() != ProtocolEra::Y2026 || filter.is_empty() {
        return std::future::pending().await;
    }
    loop {
        match client.listen(filter.clone()).await {
            Ok(subscription) => {
                if let Err(e) = subscription.closed().await {
                    tracing::debug!(error = %e, "an upstream's subscription ended");
                }
            }
            Err(e) => tracing::debug!(error = %e, "cannot listen to an upstream's list changes"),
        }
        tokio::time::sleep(LISTEN_AGAIN_AFTER).await;
    }
}
