//! The view of an MCP App as a resource: HTML compiled into the program, or read from a file at
//! each read (for development, so an edit shows at the next render without a rebuild).

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use super::{ResourceCall, ResourceDef};
use crate::apps::{Permissions, UiResourceMeta};
use crate::protocol::ErrorObject;

/// Where the HTML comes from.
#[derive(Debug, Clone)]
enum Source {
    Inline(Arc<str>),
    File(PathBuf),
}

/// A view of an MCP App ([`crate::apps`]): a `ui://` resource whose HTML (with its script and
/// styles inline) the host renders in a sandboxed iframe. It becomes a [`ResourceDef`] with
/// `.into()`, for [`ServerBuilder::resource`](crate::ServerBuilder::resource).
///
/// ```
/// use typed_mcp::resource::AppResource;
/// use typed_mcp::ResourceDef;
///
/// // Compiled in:
/// let view: ResourceDef = AppResource::html("ui://board/view.html", "<!doctype html><p>Board</p>")
///     .title("Task board")
///     .connect_domains(["https://api.example.com"])
///     .into();
/// assert_eq!(view.uri(), "ui://board/view.html");
///
/// // Read from disk at every `resources/read`, while the view is being written:
/// let dev = AppResource::file("ui://board/view.html", "examples/apps/board.html");
/// ```
#[derive(Debug, Clone)]
pub struct AppResource {
    uri: String,
    name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    source: Source,
    meta: UiResourceMeta,
}

impl AppResource {
    /// A view at `uri` (`ui://…`) whose HTML is `html`, typically `include_str!("view.html")`.
    pub fn html(uri: impl Into<String>, html: impl Into<Cow<'static, str>>) -> Self {
        Self::with_source(uri.into(), Source::Inline(Arc::from(html.into().as_ref())))
    }

    /// A view at `uri` whose HTML is read from `path` at every `resources/read`, so that an
    /// edited file shows at the next render. A file that cannot be read makes the read fail
    /// with an internal error naming it. For development: a released server compiles its view
    /// in with [`html`](Self::html).
    pub fn file(uri: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self::with_source(uri.into(), Source::File(path.into()))
    }

    fn with_source(uri: String, source: Source) -> Self {
        AppResource { uri, name: None, title: None, description: None, source, meta: UiResourceMeta::new() }
    }

    /// Sets the programmatic name (by default the URI without `ui://`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds origins the view may connect to (`fetch`, XHR, WebSocket); by default none.
    pub fn connect_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, origins: I) -> Self {
        self.meta = self.meta.connect_domains(origins);
        self
    }

    /// Adds origins the view may load scripts, styles, images, fonts and media from.
    pub fn resource_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, origins: I) -> Self {
        self.meta = self.meta.resource_domains(origins);
        self
    }

    /// Adds origins the view may embed in iframes.
    pub fn frame_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, origins: I) -> Self {
        self.meta = self.meta.frame_domains(origins);
        self
    }

    /// Adds origins allowed as the view's base URI.
    pub fn base_uri_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, origins: I) -> Self {
        self.meta = self.meta.base_uri_domains(origins);
        self
    }

    /// Sets the browser features the view asks for.
    pub fn permissions(mut self, permissions: Permissions) -> Self {
        self.meta = self.meta.permissions(permissions);
        self
    }

    /// Sets the dedicated origin of the view's sandbox (host-specific).
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.meta = self.meta.domain(domain);
        self
    }

    /// Says whether the view wants a border and background from the host.
    pub fn prefers_border(mut self, border: bool) -> Self {
        self.meta = self.meta.prefers_border(border);
        self
    }

    /// Replaces the whole `_meta.ui` of the view.
    pub fn meta(mut self, meta: UiResourceMeta) -> Self {
        self.meta = meta;
        self
    }
}

impl From<AppResource> for ResourceDef {
    fn from(app: AppResource) -> ResourceDef {
        let name = app.name.unwrap_or_else(|| app.uri.strip_prefix(crate::apps::URI_SCHEME).unwrap_or(&app.uri).into());
        let source = app.source;
        let mut def = ResourceDef::new(app.uri, name, move |_: ResourceCall| {
            let source = source.clone();
            async move {
                match source {
                    Source::Inline(html) => Ok::<String, ErrorObject>(html.as_ref().to_owned()),
                    Source::File(path) => {
                        let read = {
                            let path = path.clone();
                            tokio::task::spawn_blocking(move || std::fs::read_to_string(path)).await
                        };
                        let read = read.unwrap_or_else(|e| Err(std::io::Error::other(e)));
                        read.map_err(|e| {
                            ErrorObject::internal(format!(
                                "the view's file `{}` could not be read: {e}",
                                path.display()
                            ))
                        })
                    }
                }
            }
        })
        .app(app.meta);
        if let Some(title) = app.title {
            def = def.title(title);
        }
        if let Some(description) = app.description {
            def = def.description(description);
        }
        def
    }
}
