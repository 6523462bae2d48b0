//! Everything a server offers besides tool calls: prompts, resources, logging, completion;
//! the capabilities that follow from what is registered; the live sessions that list changes
//! and resource updates are announced to; and the methods that change the lists at run time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;

use super::catalog::{Catalog, Listed, Refused};
use super::handling::BROADCAST_PATIENCE;
use super::sampling::RootsCallback;
use super::state::SessionState;
use super::{BuildError, Server};
use crate::engine::Peer;
use crate::handler::context::SessionKey;
use crate::prompt::PromptDef;
use crate::protocol::{
    JsonObject, ListChangedCapability, LoggingLevel, Prompt, Resource, ResourceTemplate, ResourcesCapability,
    ServerCapabilities, Tool,
};
use crate::resource::{Kind, ResourceDef, UriTemplate};
use crate::tool::ToolDef;

impl Listed for ToolDef {
    type Wire = Tool;
    const FIELD: &'static str = "tools";
    fn key(&self) -> &str {
        &self.tool.name
    }
    fn wire(&self) -> &Tool {
        &self.tool
    }
}

impl Listed for PromptDef {
    type Wire = Prompt;
    const FIELD: &'static str = "prompts";
    fn key(&self) -> &str {
        &self.prompt.name
    }
    fn wire(&self) -> &Prompt {
        &self.prompt
    }
}

/// A resource with one URI.
#[derive(Clone)]
pub(crate) struct StaticEntry {
    pub(crate) def: ResourceDef,
    resource: Resource,
}

impl Listed for StaticEntry {
    type Wire = Resource;
    const FIELD: &'static str = "resources";
    fn key(&self) -> &str {
        &self.resource.uri
    }
    fn wire(&self) -> &Resource {
        &self.resource
    }
}

/// A resource template, parsed.
#[derive(Clone)]
pub(crate) struct TemplateEntry {
    pub(crate) def: ResourceDef,
    template: ResourceTemplate,
    pub(crate) parsed: UriTemplate,
}

impl Listed for TemplateEntry {
    type Wire = ResourceTemplate;
    const FIELD: &'static str = "resourceTemplates";
    fn key(&self) -> &str {
        &self.template.uri_template
    }
    fn wire(&self) -> &ResourceTemplate {
        &self.template
    }
}

/// A resource definition, sorted into its list.
pub(crate) enum Entry {
    Static(StaticEntry),
    Template(TemplateEntry),
}

pub(crate) fn entry(def: ResourceDef) -> Result<Entry, BuildError> {
    Ok(match &def.kind {
        Kind::Static(resource) => Entry::Static(StaticEntry { resource: resource.clone(), def }),
        Kind::Template(template, parsed) => {
            let parsed = parsed.clone().map_err(|e| BuildError::InvalidUriTemplate {
                template: template.uri_template.clone(),
                reason: e.reason,
            })?;
            Entry::Template(TemplateEntry { template: template.clone(), parsed, def })
        }
    })
}

/// Checks the MCP Apps of a server about to be built: every view a tool shows is a `ui://`
/// resource registered as a view, and every view is a `ui://` resource (not a template) whose
/// policy names origins. Returns whether the server has apps (and so declares the extension).
pub(crate) fn check_apps(tools: &[ToolDef], resources: &[ResourceDef]) -> Result<bool, BuildError> {
    let mut any = false;
    for def in resources {
        if let Some(meta) = def.app_meta() {
            any = true;
            check_view(def, &meta)?;
        }
    }
    for tool in tools {
        let Some(ui) = tool.app() else { continue };
        any = true;
        if let Some(uri) = &ui.resource_uri {
            check_tool_view(tool.name(), uri, |uri| resources.iter().find(|r| !r.is_template() && r.uri() == uri))?;
        }
    }
    Ok(any)
}

/// Checks a view's URI and policy.
fn check_view(def: &ResourceDef, meta: &crate::apps::UiResourceMeta) -> Result<(), BuildError> {
    let invalid = |reason: String| BuildError::InvalidApp { what: format!("view `{}`", def.uri()), reason };
    if let Some(problem) = crate::apps::view_uri_problem(def.uri()) {
        return Err(invalid(problem));
    }
    if def.is_template() {
        return Err(invalid("a view has one URI; it cannot be a URI template".into()));
    }
    meta.problem().map_or(Ok(()), |p| Err(invalid(format!("in its content security policy, {p}"))))
}

/// Checks the view a tool shows: a `ui://` URI that `find` finds registered as a view.
fn check_tool_view<'a>(
    tool: &str,
    uri: &str,
    find: impl FnOnce(&str) -> Option<&'a ResourceDef>,
) -> Result<(), BuildError> {
    if let Some(problem) = crate::apps::view_uri_problem(uri) {
        return Err(BuildError::InvalidApp { what: format!("tool `{tool}`"), reason: problem });
    }
    let problem = match find(uri) {
        None => "no resource is registered at that URI".to_owned(),
        Some(def) if def.app_meta().is_none() => {
            "the resource at that URI is not an MCP App view (it has no `app` option)".to_owned()
        }
        Some(_) => return Ok(()),
    };
    Err(BuildError::UnknownAppView { tool: tool.to_owned(), uri: uri.to_owned(), problem })
}

/// The builder's share of everything this module serves.
pub(crate) struct RegistryBuilder {
    pub(crate) prompts: Vec<PromptDef>,
    pub(crate) resources: Vec<ResourceDef>,
    pub(crate) prompt_completers: Vec<(String, String, super::Completer)>,
    pub(crate) template_completers: Vec<(String, String, super::Completer)>,
    pub(crate) dynamic_tools: bool,
    pub(crate) dynamic_prompts: bool,
    pub(crate) dynamic_resources: bool,
    pub(crate) subscriptions: bool,
    pub(crate) logging: bool,
    pub(crate) default_log_level: Option<LoggingLevel>,
    pub(crate) sampling_timeout: Duration,
    pub(crate) roots_changed: Option<RootsCallback>,
    pub(crate) page_size: usize,
    /// Declare `completions` even when no completer is registered at build.
    pub(crate) completions: bool,
}

impl Default for RegistryBuilder {
    fn default() -> Self {
        RegistryBuilder {
            prompts: Vec::new(),
            resources: Vec::new(),
            prompt_completers: Vec::new(),
            template_completers: Vec::new(),
            dynamic_tools: false,
            dynamic_prompts: false,
            dynamic_resources: false,
            subscriptions: false,
            logging: true,
            default_log_level: None,
            sampling_timeout: super::sampling::DEFAULT_SAMPLING_TIMEOUT,
            roots_changed: None,
            page_size: usize::MAX,
            completions: false,
        }
    }
}

/// The server's share of everything this module serves.
pub(crate) struct Registry {
    pub(crate) prompts: Catalog<PromptDef>,
    pub(crate) resources: Catalog<StaticEntry>,
    pub(crate) templates: Catalog<TemplateEntry>,
    pub(crate) sessions: Sessions,
    /// The open `subscriptions/listen` streams (2026 era).
    pub(crate) listeners: super::listen::Listeners,
    pub(crate) dynamic_tools: bool,
    pub(crate) dynamic_prompts: bool,
    pub(crate) dynamic_resources: bool,
    pub(crate) subscriptions: bool,
    pub(crate) logging: bool,
    pub(crate) default_log_level: Option<LoggingLevel>,
    pub(crate) sampling_timeout: Duration,
    pub(crate) roots_changed: Option<RootsCallback>,
    pub(crate) page_size: usize,
    completions: bool,
}

impl RegistryBuilder {
    pub(crate) fn build(mut self) -> Result<Registry, BuildError> {
        for (prompt, argument, completer) in std::mem::take(&mut self.prompt_completers) {
            let def = self.prompts.iter_mut().find(|p| p.prompt.name == prompt).ok_or_else(|| {
                BuildError::UnknownCompletionTarget { target: format!("prompt `{prompt}`"), argument: argument.clone() }
            })?;
            if !def.has_argument(&argument) {
                return Err(BuildError::UnknownCompletionTarget { target: format!("prompt `{prompt}`"), argument });
            }
            def.completers.insert(argument, completer);
        }
        for (template, variable, completer) in std::mem::take(&mut self.template_completers) {
            let def = self.resources.iter_mut().find(|r| r.is_template() && r.uri() == template).ok_or_else(|| {
                BuildError::UnknownCompletionTarget {
                    target: format!("resource template `{template}`"),
                    argument: variable.clone(),
                }
            })?;
            def.completers.insert(variable, completer);
        }
        let mut statics = Vec::new();
        let mut templates = Vec::new();
        for def in self.resources {
            match entry(def)? {
                Entry::Static(s) => statics.push(s),
                Entry::Template(t) => {
                    if let Some(v) = t.def.completers.keys().find(|v| !t.parsed.variables().any(|x| x == *v)) {
                        return Err(BuildError::UnknownCompletionTarget {
                            target: format!("resource template `{}`", t.parsed),
                            argument: v.clone(),
                        });
                    }
                    templates.push(t)
                }
            }
        }
        for p in &self.prompts {
            if let Some(a) = p.completers.keys().find(|a| !p.has_argument(a)) {
                return Err(BuildError::UnknownCompletionTarget {
                    target: format!("prompt `{}`", p.prompt.name),
                    argument: a.clone(),
                });
            }
        }
        let completions = self.completions
            || self.prompts.iter().any(|p| !p.completers.is_empty())
            || templates.iter().any(|t| !t.def.completers.is_empty());
        let page_size = self.page_size;
        Ok(Registry {
            prompts: Catalog::new(self.prompts, page_size, self.dynamic_prompts)
                .map_err(|name| BuildError::DuplicatePrompt { name })?,
            resources: Catalog::new(statics, page_size, self.dynamic_resources)
                .map_err(|uri| BuildError::DuplicateResource { uri })?,
            templates: Catalog::new(templates, page_size, self.dynamic_resources)
                .map_err(|uri| BuildError::DuplicateResource { uri })?,
            sessions: Sessions::default(),
            listeners: Default::default(),
            dynamic_tools: self.dynamic_tools,
            dynamic_prompts: self.dynamic_prompts,
            dynamic_resources: self.dynamic_resources,
            subscriptions: self.subscriptions,
            logging: self.logging,
            default_log_level: self.default_log_level,
            sampling_timeout: self.sampling_timeout,
            roots_changed: self.roots_changed,
            page_size,
            completions,
        })
    }
}

impl Registry {
    /// What the server declares, from what is registered: a list is declared when it has
    /// entries or may get some at run time, with `listChanged` only in the latter case.
    pub(crate) fn capabilities(&self, tools: usize) -> ServerCapabilities {
        let list = |len: usize, dynamic: bool| {
            (len > 0 || dynamic).then(|| ListChangedCapability { list_changed: dynamic.then_some(true) })
        };
        let resources = self.resources.len() + self.templates.len() > 0 || self.dynamic_resources || self.subscriptions;
        ServerCapabilities {
            tools: list(tools, self.dynamic_tools),
            prompts: list(self.prompts.len(), self.dynamic_prompts),
            resources: resources.then(|| ResourcesCapability {
                subscribe: self.subscriptions.then_some(true),
                list_changed: self.dynamic_resources.then_some(true),
            }),
            logging: self.logging.then(JsonObject::new),
            completions: self.completions.then(JsonObject::new),
            ..Default::default()
        }
    }
}

/// The initialized sessions of a server (those that sent `notifications/initialized`), for
/// announcements.
#[derive(Default)]
pub(crate) struct Sessions(Mutex<HashMap<SessionKey, (Peer, Arc<SessionState>)>>);

impl Sessions {
    pub(crate) fn register(&self, peer: Peer, state: Arc<SessionState>) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(state.key(), (peer, state));
        }
    }

    pub(crate) fn remove(&self, key: SessionKey) {
        if let Ok(mut m) = self.0.lock() {
            m.remove(&key);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.0.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Sends a notification to every session `filter` accepts, concurrently; returns how many
    /// it was sent to. A session whose outbound queue stays full for [`BROADCAST_PATIENCE`]
    /// (a client that stopped reading) misses it rather than holding up the caller.
    pub(crate) async fn broadcast<P: Serialize + Sync>(
        &self,
        method: &str,
        params: &P,
        filter: impl Fn(&SessionState) -> bool,
    ) -> usize {
        let peers: Vec<Peer> = match self.0.lock() {
            Ok(m) => m.values().filter(|(_, s)| filter(s)).map(|(p, _)| p.clone()).collect(),
            Err(_) => return 0,
        };
        let sends = peers.iter().map(|p| tokio::time::timeout(BROADCAST_PATIENCE, p.notify(method, params)));
        let sent = futures_util::future::join_all(sends).await.into_iter().filter(|r| matches!(r, Ok(Ok(())))).count();
        if sent < peers.len() {
            tracing::debug!(method, missed = peers.len() - sent, "some sessions could not take a notification");
        }
        sent
    }
}

/// What a refused change of a list means to the application.
fn refused(refused: Refused, list: &'static str, key: String) -> ChangeError {
    match refused {
        Refused::Duplicate(_) => ChangeError::Duplicate { key },
        Refused::Fixed => ChangeError::NotDynamic { list },
    }
}

/// Why a list could not be changed at run time. Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChangeError {
    /// The builder did not make this list dynamic, so clients were not told it may change.
    #[error("the {list} list is fixed; call `ServerBuilder::dynamic_{list}` to change it at run time")]
    NotDynamic {
        /// `tools`, `prompts` or `resources`.
        list: &'static str,
    },
    /// The name or URI is already registered.
    #[error("`{key}` is already registered")]
    Duplicate {
        /// The name or URI.
        key: String,
    },
    /// The definition is not valid.
    #[error("{0}")]
    Invalid(String),
}

impl Server {
    fn dynamic(&self, dynamic: bool, list: &'static str) -> Result<(), ChangeError> {
        if dynamic { Ok(()) } else { Err(ChangeError::NotDynamic { list }) }
    }

    /// How many initialized sessions the server has.
    pub fn session_count(&self) -> usize {
        self.inner.surface.sessions.len()
    }

    /// Announces a list change to every session, and to every subscription (2026 era) that
    /// asked for that list's changes.
    pub(crate) async fn list_changed(&self, method: &str) {
        #[cfg(feature = "http")]
        if let Some(deployment) = self.inner.deployment.get() {
            deployment.list_changed(method);
        }
        self.list_changed_here(method).await;
    }

    /// Tells this instance's sessions and subscriptions that a list changed.
    pub(crate) async fn list_changed_here(&self, method: &str) {
        let params = JsonObject::new();
        let wants = |f: &crate::protocol::SubscriptionFilter| {
            let flag = match method {
                "notifications/tools/list_changed" => f.tools_list_changed,
                "notifications/prompts/list_changed" => f.prompts_list_changed,
                "notifications/resources/list_changed" => f.resources_list_changed,
                _ => None,
            };
            flag == Some(true)
        };
        let surface = &self.inner.surface;
        tokio::join!(
            surface.sessions.broadcast(method, &params, |_| true),
            surface.listeners.broadcast(method, &params, wants)
        );
    }

    /// Adds a tool and tells every session that the tool list changed. Needs
    /// [`ServerBuilder::dynamic_tools`](super::ServerBuilder::dynamic_tools).
    pub async fn add_tool(&self, mut tool: ToolDef) -> Result<(), ChangeError> {
        self.dynamic(self.inner.surface.dynamic_tools, "tools")?;
        super::validate_tool_name(tool.name()).map_err(ChangeError::Invalid)?;
        if let Some(schema) = &tool.tool.output_schema {
            crate::tool::check_output_schema(schema).map_err(|e| ChangeError::Invalid(e.0))?;
        }
        tool.check_headers().map_err(|e| ChangeError::Invalid(e.0))?;
        if let Some(uri) = tool.app().and_then(|ui| ui.resource_uri) {
            let view = self.inner.surface.resources.get(&uri).map(|entry| entry.def);
            check_tool_view(tool.name(), &uri, |_| view.as_ref()).map_err(|e| ChangeError::Invalid(e.to_string()))?;
        }
        let key = tool.name().to_owned();
        self.inner.tools.update(|v| v.push(tool)).map_err(|e| refused(e, "tools", key))?;
        self.list_changed("notifications/tools/list_changed").await;
        Ok(())
    }

    /// Removes a tool, if there is one by that name, and tells every session. Needs
    /// [`ServerBuilder::dynamic_tools`](super::ServerBuilder::dynamic_tools).
    pub async fn remove_tool(&self, name: &str) -> Result<bool, ChangeError> {
        self.dynamic(self.inner.surface.dynamic_tools, "tools")?;
        let removed = self.inner.tools.update(|v| remove(v, |t| t.name() == name)).unwrap_or(false);
        if removed {
            self.list_changed("notifications/tools/list_changed").await;
        }
        Ok(removed)
    }

    /// Adds a prompt and tells every session that the prompt list changed. Needs
    /// [`ServerBuilder::dynamic_prompts`](super::ServerBuilder::dynamic_prompts).
    pub async fn add_prompt(&self, prompt: PromptDef) -> Result<(), ChangeError> {
        self.dynamic(self.inner.surface.dynamic_prompts, "prompts")?;
        let key = prompt.name().to_owned();
        self.inner.surface.prompts.update(|v| v.push(prompt)).map_err(|e| refused(e, "prompts", key))?;
        self.list_changed("notifications/prompts/list_changed").await;
        Ok(())
    }

    /// Removes a prompt, if there is one by that name, and tells every session. Needs
    /// [`ServerBuilder::dynamic_prompts`](super::ServerBuilder::dynamic_prompts).
    pub async fn remove_prompt(&self, name: &str) -> Result<bool, ChangeError> {
        self.dynamic(self.inner.surface.dynamic_prompts, "prompts")?;
        let removed = self.inner.surface.prompts.update(|v| remove(v, |p| p.name() == name)).unwrap_or(false);
        if removed {
            self.list_changed("notifications/prompts/list_changed").await;
        }
        Ok(removed)
    }

    /// Adds a resource or resource template and tells every session that the resource list
    /// changed. Needs [`ServerBuilder::dynamic_resources`](super::ServerBuilder::dynamic_resources).
    pub async fn add_resource(&self, resource: ResourceDef) -> Result<(), ChangeError> {
        self.dynamic(self.inner.surface.dynamic_resources, "resources")?;
        if let Some(meta) = resource.app_meta() {
            check_view(&resource, &meta).map_err(|e| ChangeError::Invalid(e.to_string()))?;
        }
        let key = resource.uri().to_owned();
        let duplicate = |e| refused(e, "resources", key.clone());
        match entry(resource).map_err(|e| ChangeError::Invalid(e.to_string()))? {
            Entry::Static(s) => self.inner.surface.resources.update(|v| v.push(s)).map_err(duplicate)?,
            Entry::Template(t) => self.inner.surface.templates.update(|v| v.push(t)).map_err(duplicate)?,
        }
        self.list_changed("notifications/resources/list_changed").await;
        Ok(())
    }

    /// Removes the resource with this URI, or the template written this way, and tells every
    /// session. Needs [`ServerBuilder::dynamic_resources`](super::ServerBuilder::dynamic_resources).
    pub async fn remove_resource(&self, uri: &str) -> Result<bool, ChangeError> {
        self.dynamic(self.inner.surface.dynamic_resources, "resources")?;
        let s = &self.inner.surface;
        let removed = s.resources.update(|v| remove(v, |r| r.def.uri() == uri)).unwrap_or(false)
            || s.templates.update(|v| remove(v, |t| t.def.uri() == uri)).unwrap_or(false);
        if removed {
            self.list_changed("notifications/resources/list_changed").await;
        }
        Ok(removed)
    }

    /// Tells every session that the tool, prompt or resource list changed, for lists whose
    /// contents the application computes itself. `list` is `tools`, `prompts` or `resources`;
    /// the list must be dynamic.
    pub async fn notify_list_changed(&self, list: &str) -> Result<(), ChangeError> {
        let s = &self.inner.surface;
        let (dynamic, name) = match list {
            "tools" => (s.dynamic_tools, "tools"),
            "prompts" => (s.dynamic_prompts, "prompts"),
            "resources" => (s.dynamic_resources, "resources"),
            other => return Err(ChangeError::Invalid(format!("no list is called `{other}`"))),
        };
        self.dynamic(dynamic, name)?;
        self.list_changed(&format!("notifications/{name}/list_changed")).await;
        Ok(())
    }
}

fn remove<T>(items: &mut Vec<T>, hit: impl Fn(&T) -> bool) -> bool {
    let before = items.len();
    items.retain(|t| !hit(t));
    items.len() != before
}

impl super::ServerBuilder {
    /// Splits every list result (`tools/list`, `prompts/list`, `resources/list`,
    /// `resources/templates/list`) into pages of at most `size` entries, chained by
    /// `nextCursor`. By default each list is one page.
    pub fn page_size(mut self, size: usize) -> Self {
        self.surface.page_size = size.max(1);
        self
    }

    /// Lets the application add and remove tools while the server runs
    /// ([`Server::add_tool`], [`Server::remove_tool`]); the server then declares
    /// `tools.listChanged` (and the `tools` capability, even with no tool yet) and sends
    /// `notifications/tools/list_changed` on each change.
    pub fn dynamic_tools(mut self) -> Self {
        self.surface.dynamic_tools = true;
        self
    }

    /// Declares the `completions` capability (and so answers `completion/complete`) even when
    /// no prompt or template registered at build has a completer: for a server whose prompts
    /// and templates, added while it runs, bring completers of their own. A completion for an
    /// argument without a completer is answered with no values.
    pub fn completions(mut self) -> Self {
        self.surface.completions = true;
        self
    }

    /// Lets the application add and remove prompts while the server runs
    /// ([`Server::add_prompt`], [`Server::remove_prompt`]), declaring `prompts.listChanged`.
    pub fn dynamic_prompts(mut self) -> Self {
        self.surface.dynamic_prompts = true;
        self
    }

    /// Lets the application add and remove resources and templates while the server runs
    /// ([`Server::add_resource`], [`Server::remove_resource`]), declaring
    /// `resources.listChanged`.
    pub fn dynamic_resources(mut self) -> Self {
        self.surface.dynamic_resources = true;
        self
    }
}
