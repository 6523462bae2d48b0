//! The skills extension on the server: registering a folder of skills on the builder, their
//! files as resources, the extension in the capabilities, the answers to `skills/list`,
//! `skills/get` and `resources/directory/read` (see [`crate::skills`]), and reloading the
//! folder when it changes.

use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use super::handling::{params, to_raw};
use super::registry::{Entry, entry};
use super::{BuildError, Server, ServerBuilder, ServerInner};
use crate::engine::HandlerResult;
use crate::protocol::methods::Method;
use crate::protocol::{ErrorObject, PaginatedParams, Request, ServerCapabilities};
use crate::skills::catalog::Catalog;
use crate::skills::{SkillError, Skills};

impl ServerBuilder {
    /// Serves agent skills (the `io.modelcontextprotocol/skills` extension): each skill's
    /// files as `skill://` resources, `skills/list`, `skills/get` and, unless turned off,
    /// `resources/directory/read`. [`build`](Self::build) reads and checks them, and fails
    /// with [`BuildError::InvalidSkill`] naming the file of the first rule a skill breaks.
    pub fn skills(mut self, skills: Skills) -> Self {
        self.skills = Some(skills);
        self
    }
}

/// The skills a server serves: where they come from, and the catalog answering now.
pub(crate) struct Served {
    source: Skills,
    catalog: RwLock<Arc<Catalog>>,
    /// Serializes reloads, so two never interleave their resource swaps.
    reloading: tokio::sync::Mutex<()>,
}

impl Served {
    fn current(&self) -> Arc<Catalog> {
        match self.catalog.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

/// Reads and checks the builder's skills, and registers their files as resources. Watched
/// skills make the resource list dynamic (`resources.listChanged`).
pub(crate) fn prepare(builder: &mut ServerBuilder) -> Result<Option<Arc<Served>>, BuildError> {
    let Some(source) = builder.skills.take() else { return Ok(None) };
    let mut catalog = source.catalog().map_err(invalid)?;
    if source.watch_interval().is_some() {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(BuildError::InvalidSkill {
                file: source.origin(),
                rule: "watching a folder of skills needs a Tokio runtime: build the server inside one".into(),
            });
        }
        builder.surface.dynamic_resources = true;
    }
    builder.surface.resources.extend(catalog.take_resources());
    let catalog = RwLock::new(Arc::new(catalog));
    Ok(Some(Arc::new(Served { source, catalog, reloading: tokio::sync::Mutex::new(()) })))
}

fn invalid(e: SkillError) -> BuildError {
    BuildError::InvalidSkill { file: e.file, rule: e.rule }
}

/// Declares the extension (the files make `resources` declared already).
pub(crate) fn declare(capabilities: &mut ServerCapabilities, served: &Served) {
    let extensions = capabilities.extensions.get_or_insert_with(Default::default);
    extensions.insert(crate::skills::EXTENSION.into(), crate::skills::capability(served.source.directory_read_on()));
}

/// Starts watching the folder, when asked to: a task that ends with the server.
pub(crate) fn watch(server: &Server) {
    let Some(served) = &server.inner.skills else { return };
    let Some(interval) = served.source.watch_interval() else { return };
    let weak = Arc::downgrade(&server.inner);
    let first = served.source.fingerprint();
    tokio::spawn(watching(weak, interval, first));
}

async fn watching(server: Weak<ServerInner>, interval: Duration, mut last: u64) {
    loop {
        tokio::time::sleep(interval).await;
        let Some(inner) = server.upgrade() else { return };
        let Some(served) = &inner.skills else { return };
        let now = served.source.fingerprint();
        if now == last {
            continue;
        }
        last = now;
        let server = Server { inner: inner.clone() };
        match server.reload_skills().await {
            Ok(true) => tracing::info!("the skills changed; clients were told"),
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "the changed skills break a rule; the ones before are still served"),
        }
    }
}

impl Server {
    /// Reads the server's skills again (from their folder; files compiled in do not change)
    /// and, when something changed, serves the new ones and sends
    /// `notifications/resources/list_changed`. Returns whether anything changed. Skills that
    /// break a rule are an error, and the skills served before stay served.
    ///
    /// [`Skills::watch`] calls this whenever the folder changes.
    pub async fn reload_skills(&self) -> Result<bool, SkillError> {
        let Some(served) = &self.inner.skills else { return Ok(false) };
        let _one_at_a_time = served.reloading.lock().await;
        let source = served.source.clone();
        let mut fresh = tokio::task::spawn_blocking(move || source.catalog())
            .await
            .map_err(|e| SkillError::new(served.source.origin(), format!("the reload failed: {e}")))??;
        let old = served.current();
        if fresh.entries() == old.entries() {
            return Ok(false);
        }
        let gone: std::collections::HashSet<String> = old.file_uris().collect();
        let mut added = Vec::new();
        for def in fresh.take_resources() {
            if let Ok(Entry::Static(e)) = entry(def) {
                added.push(e);
            }
        }
        let swapped = self.inner.surface.resources.update(|list| {
            list.retain(|r| !gone.contains(r.def.uri()));
            list.extend(added);
        });
        if swapped.is_err() {
            return Err(SkillError::new(
                served.source.origin(),
                "a file's URI is also the URI of another resource of the server",
            ));
        }
        match served.catalog.write() {
            Ok(mut c) => *c = Arc::new(fresh),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(fresh),
        }
        self.list_changed("notifications/resources/list_changed").await;
        Ok(true)
    }
}

/// Whether the server answers the skills methods (`directory`: `resources/directory/read`).
pub(crate) fn offers(server: &ServerInner, directory: bool) -> bool {
    server.skills.as_ref().is_some_and(|s| !directory || s.source.directory_read_on())
}

/// Answers `skills/list`, `skills/get` or `resources/directory/read`.
pub(crate) fn answer(server: &ServerInner, method: Method, request: &Request) -> HandlerResult {
    let Some(served) = &server.skills else { return Err(ErrorObject::method_not_found(method.name())) };
    let catalog = served.current();
    match method {
        Method::SkillsList => to_raw(&catalog.list(params::<PaginatedParams>(request)?.cursor.as_deref())?),
        Method::SkillsGet => to_raw(&catalog.get(params(request)?)?),
        Method::ResourcesDirectoryRead if catalog.directory_read => to_raw(&catalog.directory(params(request)?)?),
        _ => Err(ErrorObject::method_not_found(method.name())),
    }
}
