//! What the gateway serves for an upstream's tools, prompts and resources: definitions shown
//! as the upstream lists them (tools and prompts under the upstream's prefix), whose handlers
//! pass each request on and relay what the upstream asks in the meantime.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use typed_mcp::prompt::PromptCall;
use typed_mcp::protocol::{
    CompleteArgument, CompleteContext, CompleteParams, Completion, CompletionReference, ElicitationCompleteParams,
    ProgressParams,
};
use typed_mcp::protocol::{
    GetPromptResult, LoggingMessageParams, Prompt, ReadResourceResult, Resource, ResourceTemplate, TaskSupport, Tool,
};
use typed_mcp::resource::ResourceCall;
use typed_mcp::resource::UriTemplate;
use typed_mcp::server::{Completer, CompletionCall};
use typed_mcp::tool::ToolCall;
use typed_mcp::{ErrorObject, Peer, PromptDef, ResourceDef, ToolDef, UrlElicitationRequired};

use crate::calls::{Answer, Ask, Held, HeldCalls, Note};
use crate::upstream::{AskTarget, Upstream};

/// The outcome of a relayed `tools/call`: the upstream's result as the upstream sent it, handed
/// on unparsed.
pub(crate) type ToolOutcome = Result<typed_mcp::tool::RawToolResult, ErrorObject>;
/// The outcome of a relayed `prompts/get`.
pub(crate) type PromptOutcome = Result<GetPromptResult, ErrorObject>;
/// The outcome of a relayed `resources/read`.
pub(crate) type ReadOutcome = Result<ReadResourceResult, ErrorObject>;

/// The calls in flight of every kind, kept between the rounds of 2026-era requests, and the
/// URL flows upstreams required of 2025-era clients.
#[derive(Default)]
pub(crate) struct InFlight {
    tools: Arc<HeldCalls<ToolOutcome>>,
    prompts: Arc<HeldCalls<PromptOutcome>>,
    reads: Arc<HeldCalls<ReadOutcome>>,
    url_flows: UrlFlows,
    required: RequiredFlows,
}

/// How long the gateway remembers which session a URL flow of an upstream's -32042 went to.
const URL_FLOW_TTL: Duration = Duration::from_secs(15 * 60);
/// Most URL flows remembered at once.
const MAX_URL_FLOWS: usize = 10_000;

/// The URL flows of -32042 errors passed on to 2025-era sessions, by elicitation id: when the
/// upstream announces one complete, the session is told.
#[derive(Default)]
struct UrlFlows(Mutex<HashMap<String, (Peer, Instant)>>);

impl UrlFlows {
    fn remember(&self, error: &ErrorObject, peer: &Peer) {
        let Some(required) = UrlElicitationRequired::from_error_object(error) else { return };
        let mut flows = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        flows.retain(|_, (_, at)| at.elapsed() < URL_FLOW_TTL);
        for flow in required.elicitations {
            if flows.len() >= MAX_URL_FLOWS {
                break;
            }
            flows.insert(flow.elicitation_id, (peer.clone(), Instant::now()));
        }
    }

    fn take(&self, id: &str) -> Option<Peer> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(id).map(|(peer, _)| peer)
    }
}

/// How long the retry of a 2026-era request waits for the upstream to announce the URL flows
/// it required complete before calling it again (the user is in the browser meanwhile); past
/// it, the upstream is called anyway (announcing completion is optional for a server).
pub(crate) const URL_FLOW_WAIT: Duration = Duration::from_secs(45);

/// The -32042 errors of upstreams passed to 2026-era clients as URL input requests, by the
/// request's round-trip id, and which of their flows the upstream has announced complete.
/// The retry of such a request, once the user has accepted every flow, waits for the upstream
/// to complete them before calling it again; calling at once would only find the flow still
/// open (and the upstream would ask for a new one).
#[derive(Default)]
struct RequiredFlows {
    state: Mutex<RequiredState>,
    completed: tokio::sync::Notify,
}

#[derive(Default)]
struct RequiredState {
    /// The error each request got, when.
    by_request: HashMap<String, (UrlElicitationRequired, Instant)>,
    /// The flows of those errors, and whether the upstream completed each.
    flows: HashMap<String, bool>,
}

impl RequiredState {
    fn expire(&mut self) {
        let flows = &mut self.flows;
        self.by_request.retain(|_, (required, at)| {
            let keep = at.elapsed() < URL_FLOW_TTL;
            if !keep {
                for flow in &required.elicitations {
                    flows.remove(&flow.elicitation_id);
                }
            }
            keep
        });
    }
}

impl RequiredFlows {
    fn lock(&self) -> std::sync::MutexGuard<'_, RequiredState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records the error `required` that the request `key` got.
    fn remember(&self, key: &str, required: UrlElicitationRequired) {
        let mut state = self.lock();
        state.expire();
        if state.by_request.len() >= MAX_URL_FLOWS {
            return;
        }
        for flow in &required.elicitations {
            state.flows.entry(flow.elicitation_id.clone()).or_insert(false);
        }
        state.by_request.insert(key.to_owned(), (required, Instant::now()));
    }

    /// The error the request `key` got last.
    fn get(&self, key: &str) -> Option<UrlElicitationRequired> {
        self.lock().by_request.get(key).map(|(required, _)| required.clone())
    }

    /// Forgets the error of the request `key` and its flows.
    fn forget(&self, key: &str) {
        let mut state = self.lock();
        if let Some((required, _)) = state.by_request.remove(key) {
            for flow in &required.elicitations {
                state.flows.remove(&flow.elicitation_id);
            }
        }
    }

    /// Marks the flow `id` complete; false when it is none of these.
    fn complete(&self, id: &str) -> bool {
        let known = self.lock().flows.get_mut(id).map(|done| *done = true).is_some();
        if known {
            self.completed.notify_waiters();
        }
        known
    }

    /// Waits until the upstream has completed every flow of `required` (true), or until
    /// [`URL_FLOW_WAIT`] has passed or the request is cancelled (false).
    async fn wait(&self, required: &UrlElicitationRequired, ctx: &typed_mcp::Context) -> bool {
        let deadline = tokio::time::Instant::now() + URL_FLOW_WAIT;
        loop {
            let notified = self.completed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let state = self.lock();
                if required.elicitations.iter().all(|f| state.flows.get(&f.elicitation_id).copied().unwrap_or(false)) {
                    break true;
                }
            }
            tokio::select! {
                () = &mut notified => {}
                () = tokio::time::sleep_until(deadline) => break false,
                () = ctx.cancelled() => break false,
            }
        }
    }
}

/// Serves a request that `call` passes upstream, in a 2026-era request minding URL flows: an
/// upstream's -32042 becomes URL input requests (the server does that with the error), and the
/// retry, once the user has accepted each flow, waits for the upstream to complete them before
/// calling again. A flow the user declined ends the request with the upstream's error, which
/// the server reports as this revision says.
async fn minding_url_flows<T, F, Fut>(in_flight: &InFlight, ctx: &typed_mcp::Context, call: F) -> Result<T, ErrorObject>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<T, ErrorObject>>,
{
    let key = ctx.round_trip_id().filter(|_| ctx.is_multi_round_trip()).map(str::to_owned);
    if let Some(key) = &key
        && let Some(required) = in_flight.required.get(key)
    {
        // The answers are in this round's request (the server asked under each flow's id).
        for flow in &required.elicitations {
            let answer =
                ctx.elicit_url_with_id(&flow.elicitation_id, &flow.url, &flow.message).key(&flow.elicitation_id).await;
            if !matches!(answer, Ok(typed_mcp::Elicitation::Accept(_))) {
                in_flight.required.forget(key);
                return Err(required.into());
            }
        }
        let completed = in_flight.required.wait(&required, ctx).await;
        in_flight.required.forget(key);
        if !completed {
            tracing::debug!("an upstream did not announce its URL flows complete in time; calling it again");
        }
    }
    let outcome = call().await;
    if let (Some(key), Err(error)) = (&key, &outcome)
        && let Some(required) = UrlElicitationRequired::from_error_object(error)
    {
        in_flight.required.remember(key, required);
    }
    outcome
}

impl InFlight {
    /// Marks the flow `id` an upstream required of a 2026-era request complete; false when
    /// no such flow is known here.
    pub(crate) fn complete_required_flow(&self, id: &str) -> bool {
        self.required.complete(id)
    }

    /// Tells the 2025-era session that got the -32042 naming the flow `id` that it completed;
    /// false when no such session is known here.
    pub(crate) async fn complete_url_flow(&self, id: &str) -> bool {
        let Some(peer) = self.url_flows.take(id) else { return false };
        let params = ElicitationCompleteParams::new(id);
        peer.notify("notifications/elicitation/complete", &params).await.is_ok()
    }
}

impl<T: Send + 'static> AskTarget for Held<T> {
    fn ask(&self, ask: Ask) -> tokio::sync::oneshot::Receiver<Answer> {
        Held::ask(self, ask)
    }

    fn log(&self, params: LoggingMessageParams) {
        self.note(Note::Log(params));
    }
}

/// The tool `tool` of `upstream`, shown as `name` (its prefixed name).
pub(crate) fn tool(in_flight: &Arc<InFlight>, upstream: &Arc<Upstream>, mut tool: Tool, name: String) -> ToolDef {
    // A tool its upstream runs only as a task is called upstream as one (followed to its end
    // by the gateway's client, which answers what the task asks); any other is called plainly
    // (and runs as a task of the gateway's when the client asks for one).
    let as_task = tool.execution.as_ref().and_then(|e| e.task_support) == Some(TaskSupport::Required);
    let upstream_name = std::mem::replace(&mut tool.name, name);
    let upstream_name: Arc<str> = upstream_name.into();
    let upstream = upstream.clone();
    let held_calls = in_flight.tools.clone();
    let in_flight = in_flight.clone();
    ToolDef::from_tool(tool, move |call: ToolCall| {
        let upstream = upstream.clone();
        let name = upstream_name.clone();
        let held_calls = held_calls.clone();
        let in_flight = in_flight.clone();
        async move {
            let ctx = call.ctx;
            let arguments = call.arguments.to_object();
            // A call its upstream runs as a task becomes the gateway's task when the upstream's
            // does: the questions the upstream asks before go in the client's own round.
            let hold = if as_task { typed_mcp::task::hold_start(&ctx) } else { None };
            // The upstream is asked for progress only when the client gets it: the gateway's
            // call has a progress token, or runs (or may become) a task.
            let wants_progress = ctx.reports_progress();
            let outcome = minding_url_flows(&in_flight, &ctx, || {
                held_calls.serve(&ctx, hold, move |held| async move {
                    let tasked = held.clone();
                    let progress = wants_progress.then(|| {
                        let progress_to = held.clone();
                        Arc::new(move |p: ProgressParams| progress_to.note(Note::Progress(p)))
                    });
                    let cancel = held.cancel.clone();
                    upstream
                        .request(held, |client| {
                            let progress = progress.clone();
                            let name = name.clone();
                            let arguments = arguments.clone();
                            let cancel = cancel.clone();
                            let tasked = tasked.clone();
                            async move {
                                let mut call = client.tool(&*name).arguments(arguments).cancel_on(cancel);
                                if let Some(progress) = progress {
                                    call = call.on_progress(move |p| progress(p));
                                }
                                if as_task {
                                    call.as_task().on_task(move |_| tasked.tasked()).send_raw().await
                                } else {
                                    call.send_raw().await
                                }
                            }
                        })
                        .await
                })
            })
            .await;
            if let Err(error) = &outcome
                && !ctx.is_multi_round_trip()
            {
                in_flight.url_flows.remember(error, ctx.peer());
            }
            outcome
        }
    })
}

/// A completer asking `upstream` to complete an argument of `reference` (its own name for it).
fn completer(upstream: &Arc<Upstream>, reference: CompletionReference) -> Completer {
    let upstream = upstream.clone();
    Completer::new(move |call: CompletionCall| {
        let upstream = upstream.clone();
        let params = CompleteParams {
            reference: reference.clone(),
            argument: CompleteArgument { name: call.argument, value: call.value },
            context: (!call.context.is_empty()).then_some(CompleteContext { arguments: Some(call.context) }),
        };
        async move {
            let client = upstream.client().await?;
            if client.server_capabilities().completions.is_none() {
                return Ok(Completion::default());
            }
            client.complete(&params).await.map_err(|e| upstream.error(e))
        }
    })
}

/// The prompt `prompt` of `upstream`, shown as `name`, its arguments completed by the upstream.
pub(crate) fn prompt(
    in_flight: &Arc<InFlight>,
    upstream: &Arc<Upstream>,
    mut prompt: Prompt,
    name: String,
) -> PromptDef {
    let upstream_name: Arc<str> = std::mem::replace(&mut prompt.name, name).into();
    let arguments: Vec<String> = prompt.arguments.iter().flatten().map(|a| a.name.clone()).collect();
    let reference = CompletionReference::Prompt { name: upstream_name.to_string(), title: None };
    let completers: Vec<_> = arguments.into_iter().map(|a| (a, completer(upstream, reference.clone()))).collect();
    let upstream = upstream.clone();
    let held_calls = in_flight.prompts.clone();
    let in_flight = in_flight.clone();
    let mut def = PromptDef::from_prompt(prompt, move |call: PromptCall| {
        let upstream = upstream.clone();
        let name = upstream_name.clone();
        let held_calls = held_calls.clone();
        let in_flight = in_flight.clone();
        async move {
            let ctx = call.ctx;
            let arguments = call.arguments;
            minding_url_flows(&in_flight, &ctx, || {
                held_calls.serve(&ctx, None, move |held| async move {
                    let arguments = &arguments;
                    let name = &name;
                    upstream
                        .request(held, |client| async move {
                            let arguments: Vec<(&str, &str)> =
                                arguments.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                            client.get_prompt(name, &arguments).await
                        })
                        .await
                })
            })
            .await
        }
    });
    for (argument, completer) in completers {
        def = def.complete(argument, completer);
    }
    def
}

/// The resource `resource` of `upstream`, at its own URI.
pub(crate) fn resource(in_flight: &Arc<InFlight>, upstream: &Arc<Upstream>, resource: Resource) -> ResourceDef {
    ResourceDef::from_resource(resource, reader(in_flight, upstream))
}

/// The resource template `template` of `upstream`, as written.
pub(crate) fn template(in_flight: &Arc<InFlight>, upstream: &Arc<Upstream>, template: ResourceTemplate) -> ResourceDef {
    let reference = CompletionReference::Resource { uri: template.uri_template.clone() };
    let variables: Vec<String> = UriTemplate::parse(&template.uri_template)
        .map(|t| t.variables().map(str::to_owned).collect())
        .unwrap_or_default();
    let mut def = ResourceDef::from_template(template, reader(in_flight, upstream));
    for variable in variables {
        def = def.complete(variable, completer(upstream, reference.clone()));
    }
    def
}

fn reader(
    in_flight: &Arc<InFlight>,
    upstream: &Arc<Upstream>,
) -> impl Fn(ResourceCall) -> futures_like::Boxed<ReadOutcome> + Send + Sync + 'static {
    let upstream = upstream.clone();
    let held_calls = in_flight.reads.clone();
    let in_flight = in_flight.clone();
    move |call: ResourceCall| {
        let upstream = upstream.clone();
        let held_calls = held_calls.clone();
        let in_flight = in_flight.clone();
        Box::pin(async move {
            let ctx = call.ctx;
            let uri = call.uri;
            minding_url_flows(&in_flight, &ctx, || {
                held_calls.serve(&ctx, None, move |held| async move {
                    let uri = &uri;
                    upstream.request(held, |client| async move { client.read_resource(uri).await }).await
                })
            })
            .await
        })
    }
}

mod futures_like {
    /// A boxed future of `T`, sendable.
    pub(crate) type Boxed<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;
}
