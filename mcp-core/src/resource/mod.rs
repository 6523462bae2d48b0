//! Resources: static resources and URI templates, their arguments and their contents.
//!
//! `#[resource]` expands to calls into this module; everything it generates can also be written
//! by hand with [`ResourceDef::new`] (one URI) and [`ResourceDef::template`] (a URI template).

mod app;
mod template;

use std::collections::HashMap;
use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

use serde::Serialize;

pub use app::AppResource;
pub use template::{MAX_MATCHED_URI, UriTemplate, UriTemplateError};

use crate::apps::UiResourceMeta;
use crate::engine::BoxFuture;
use crate::handler::{Completer, Context};
use crate::prompt::ArgumentValue;
use crate::protocol::{ErrorObject, ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use crate::tool::Json;

/// One `resources/read` as a handler sees it.
#[derive(Debug)]
pub struct ResourceCall {
    /// The request context.
    pub ctx: Context,
    /// The URI read.
    pub uri: String,
    /// The template's variables, percent-decoded (empty for a static resource).
    pub variables: HashMap<String, String>,
}

type Handler = dyn Fn(ResourceCall) -> BoxFuture<'static, Result<ReadResourceResult, ErrorObject>> + Send + Sync;

#[derive(Clone)]
pub(crate) enum Kind {
    Static(Resource),
    Template(ResourceTemplate, Result<UriTemplate, UriTemplateError>),
}

/// A resource (one URI) or a resource template (a family of URIs): what `resources/list` or
/// `resources/templates/list` shows and what `resources/read` runs.
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) kind: Kind,
    pub(crate) handler: Arc<Handler>,
    pub(crate) completers: HashMap<String, Completer>,
    /// OAuth scopes a `resources/read` needs.
    pub(crate) scopes: Arc<[String]>,
    /// The `_meta` given to every item of its contents that has none (an MCP App's view).
    pub(crate) contents_meta: Option<Arc<crate::protocol::JsonObject>>,
}

impl std::fmt::Debug for ResourceDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("ResourceDef");
        match &self.kind {
            Kind::Static(r) => d.field("resource", r),
            Kind::Template(t, _) => d.field("template", t),
        };
        d.finish_non_exhaustive()
    }
}

fn handler<F, Fut, R>(handler: F) -> Arc<Handler>
where
    F: Fn(ResourceCall) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
    R: IntoResourceContents,
{
    Arc::new(move |call: ResourceCall| {
        let uri = call.uri.clone();
        let fut = handler(call);
        Box::pin(async move { fut.await.and_then(|r| r.into_read_result(&uri)) })
    })
}

impl ResourceDef {
    /// A resource at `uri`, read by `handler`.
    ///
    /// ```
    /// use typed_mcp::resource::{ResourceCall, ResourceDef};
    /// let readme = ResourceDef::new("file:///README.md", "readme", |_: ResourceCall| async {
    ///     Ok::<_, typed_mcp::ErrorObject>("# Hello")
    /// })
    /// .mime_type("text/markdown");
    /// assert_eq!(readme.uri(), "file:///README.md");
    /// ```
    pub fn new<F, Fut, R>(uri: impl Into<String>, name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(ResourceCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
        R: IntoResourceContents,
    {
        ResourceDef {
            kind: Kind::Static(Resource {
                uri: uri.into(),
                name: name.into(),
                title: None,
                description: None,
                mime_type: None,
                annotations: None,
                size: None,
                icons: None,
                meta: None,
            }),
            handler: self::handler(handler),
            completers: HashMap::new(),
            scopes: Arc::from([]),
            contents_meta: None,
        }
    }

    /// A family of resources whose URIs match `uri_template` (RFC 6570), read by `handler`
    /// with the template's variables in [`ResourceCall::variables`]. An invalid template makes
    /// [`ServerBuilder::build`](crate::server::ServerBuilder::build) fail.
    ///
    /// ```
    /// use typed_mcp::resource::{ResourceCall, ResourceDef};
    /// let user = ResourceDef::template("users://{id}/profile", "user", |call: ResourceCall| async move {
    ///     Ok::<_, typed_mcp::ErrorObject>(format!("user {}", call.variables["id"]))
    /// });
    /// assert_eq!(user.uri(), "users://{id}/profile");
    /// ```
    pub fn template<F, Fut, R>(uri_template: impl Into<String>, name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(ResourceCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
        R: IntoResourceContents,
    {
        let uri_template = uri_template.into();
        let parsed = UriTemplate::parse(&uri_template);
        ResourceDef {
            kind: Kind::Template(
                ResourceTemplate {
                    uri_template,
                    name: name.into(),
                    title: None,
                    description: None,
                    mime_type: None,
                    annotations: None,
                    icons: None,
                    meta: None,
                },
                parsed,
            ),
            handler: self::handler(handler),
            completers: HashMap::new(),
            scopes: Arc::from([]),
            contents_meta: None,
        }
    }

    /// A resource exactly as `resource` describes it (title, MIME type, annotations, size,
    /// icons, `_meta`), read by `handler`: for a server that relays another's resources as
    /// that server listed them.
    ///
    /// ```
    /// use typed_mcp::protocol::Resource;
    /// use typed_mcp::resource::{ResourceCall, ResourceDef};
    /// let wire: Resource = serde_json::from_value(serde_json::json!({"uri": "file:///a", "name": "a", "size": 3})).unwrap();
    /// let def = ResourceDef::from_resource(wire, |_: ResourceCall| async { Ok::<_, typed_mcp::ErrorObject>("abc") });
    /// assert_eq!(def.resource().and_then(|r| r.size), Some(3));
    /// ```
    pub fn from_resource<F, Fut, R>(resource: Resource, handler: F) -> Self
    where
        F: Fn(ResourceCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
        R: IntoResourceContents,
    {
        let mut def = Self::new(resource.uri.clone(), resource.name.clone(), handler);
        def.kind = Kind::Static(resource);
        def
    }

    /// A resource template exactly as `template` describes it, read by `handler` (see
    /// [`from_resource`](Self::from_resource)). An invalid template makes
    /// [`ServerBuilder::build`](crate::server::ServerBuilder::build) fail.
    ///
    /// ```
    /// use typed_mcp::protocol::ResourceTemplate;
    /// use typed_mcp::resource::{ResourceCall, ResourceDef};
    /// let wire: ResourceTemplate =
    ///     serde_json::from_value(serde_json::json!({"uriTemplate": "users://{id}", "name": "user"})).unwrap();
    /// let def = ResourceDef::from_template(wire, |call: ResourceCall| async move {
    ///     Ok::<_, typed_mcp::ErrorObject>(call.variables["id"].clone())
    /// });
    /// assert!(def.is_template());
    /// ```
    pub fn from_template<F, Fut, R>(template: ResourceTemplate, handler: F) -> Self
    where
        F: Fn(ResourceCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
        R: IntoResourceContents,
    {
        let parsed = UriTemplate::parse(&template.uri_template);
        let mut def = Self::template(template.uri_template.clone(), template.name.clone(), handler);
        def.kind = Kind::Template(template, parsed);
        def
    }

    /// The URI, or the URI template.
    pub fn uri(&self) -> &str {
        match &self.kind {
            Kind::Static(r) => &r.uri,
            Kind::Template(t, _) => &t.uri_template,
        }
    }

    /// The name.
    pub fn name(&self) -> &str {
        match &self.kind {
            Kind::Static(r) => &r.name,
            Kind::Template(t, _) => &t.name,
        }
    }

    /// Whether this is a template.
    pub fn is_template(&self) -> bool {
        matches!(self.kind, Kind::Template(..))
    }

    /// The resource as `resources/list` shows it (`None` for a template).
    pub fn resource(&self) -> Option<&Resource> {
        match &self.kind {
            Kind::Static(r) => Some(r),
            Kind::Template(..) => None,
        }
    }

    /// The template as `resources/templates/list` shows it (`None` for a static resource).
    pub fn resource_template(&self) -> Option<&ResourceTemplate> {
        match &self.kind {
            Kind::Template(t, _) => Some(t),
            Kind::Static(_) => None,
        }
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        let title = Some(title.into());
        match &mut self.kind {
            Kind::Static(r) => r.title = title,
            Kind::Template(t, _) => t.title = title,
        }
        self
    }

    /// The OAuth scopes a `resources/read` of this resource (or of a URI this template matches) needs, on a server with
    /// authorization (`HttpConfig::authorization`, feature `http`) (see
    /// [`ToolDef::scopes`](crate::ToolDef::scopes)).
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The OAuth scopes a `resources/read` of this resource needs.
    pub fn required_scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        let description = Some(description.into());
        match &mut self.kind {
            Kind::Static(r) => r.description = description,
            Kind::Template(t, _) => t.description = description,
        }
        self
    }

    /// Sets the MIME type, also used for the contents a handler returns without one.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        let mime_type = Some(mime_type.into());
        match &mut self.kind {
            Kind::Static(r) => r.mime_type = mime_type,
            Kind::Template(t, _) => t.mime_type = mime_type,
        }
        self
    }

    /// Sets the size in bytes shown by `resources/list` (static resources only).
    pub fn size(mut self, bytes: u64) -> Self {
        if let Kind::Static(r) = &mut self.kind {
            r.size = Some(bytes);
        }
        self
    }

    /// Suggests values for the template variable `variable` in `completion/complete`.
    pub fn complete(mut self, variable: impl Into<String>, completer: Completer) -> Self {
        self.completers.insert(variable.into(), completer);
        self
    }

    /// Makes this resource the view of an MCP App ([`crate::apps`]): served as
    /// [`MIME_TYPE`](crate::apps::MIME_TYPE), with `meta` as `_meta.ui` on its entry in
    /// `resources/list` and on the contents it returns. Its URI must be a `ui://` URI and it
    /// cannot be a template; [`ServerBuilder::build`](crate::ServerBuilder::build) refuses
    /// either, and an origin in `meta` that is not one. `#[resource("ui://…", app)]` sets it;
    /// [`AppResource`] builds the whole resource from HTML.
    pub fn app(mut self, meta: UiResourceMeta) -> Self {
        self = self.mime_type(crate::apps::MIME_TYPE);
        let wire = meta.to_meta();
        let listed = match &mut self.kind {
            Kind::Static(r) => &mut r.meta,
            Kind::Template(t, _) => &mut t.meta,
        };
        listed.get_or_insert_with(Default::default).extend(wire.clone());
        self.contents_meta = Some(Arc::new(wire));
        self
    }

    /// The view's metadata, if this resource is an MCP App's view (see [`app`](Self::app)).
    pub fn app_meta(&self) -> Option<UiResourceMeta> {
        self.contents_meta.as_deref().and_then(UiResourceMeta::from_meta)
    }

    pub(crate) fn default_mime_type(&self) -> Option<&str> {
        match &self.kind {
            Kind::Static(r) => r.mime_type.as_deref(),
            Kind::Template(t, _) => t.mime_type.as_deref(),
        }
    }

    /// Reads the resource.
    pub fn read(&self, call: ResourceCall) -> BoxFuture<'static, Result<ReadResourceResult, ErrorObject>> {
        let mime_type = self.default_mime_type().map(str::to_owned);
        let contents_meta = self.contents_meta.clone();
        let fut = (self.handler)(call);
        Box::pin(async move {
            let mut result = fut.await?;
            if let Some(default) = mime_type {
                for c in &mut result.contents {
                    let (ResourceContents::Text { mime_type, .. } | ResourceContents::Blob { mime_type, .. }) = c;
                    mime_type.get_or_insert_with(|| default.clone());
                }
            }
            if let Some(meta) = contents_meta {
                for c in &mut result.contents {
                    c.meta_mut().get_or_insert_with(|| (*meta).clone());
                }
            }
            Ok(result)
        })
    }
}

/// A resource defined by `#[resource]` on a function: the macro implements this for a hidden
/// type named like the function, which [`resources!`](crate::resources) turns into definitions.
pub trait ResourceFn {
    /// Builds the definition. Called once, at registration.
    fn definition() -> ResourceDef;
}

/// The definitions of `#[resource]` functions (static resources and templates alike), for
/// [`ServerBuilder::resources`](crate::server::ServerBuilder::resources).
///
/// ```ignore
/// Server::builder("files", "1.0.0").resources(resources![readme, user_profile])
/// ```
#[macro_export]
macro_rules! resources {
    ($($resource:path),* $(,)?) => {
        ::std::vec![$(<$resource as $crate::resource::ResourceFn>::definition()),*]
    };
}

/// An argument of a `#[resource]` function named like a variable of its URI template: parsed
/// from the variable's value. `Option<T>` for variables a URI may leave out (`{?page}`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a URI-template variable",
    label = "not parsed from a URI-template variable",
    note = "URI-template variables are strings: take `String`, a number, `bool`, `char`, `PathBuf`, `Option` of one of these, or a type implementing `typed_mcp::ArgumentValue`"
)]
pub trait ResourceVariable: Sized + Send {
    /// Takes the variable out of the call.
    fn extract(call: &mut ResourceCall, name: &str) -> Result<Self, ErrorObject>;
}

fn not_found(call: &ResourceCall, name: &str, why: &str) -> ErrorObject {
    let mut e = ErrorObject::resource_not_found(&call.uri);
    e.message = format!("Resource not found: variable `{name}` {why}");
    e
}

impl<T: ArgumentValue> ResourceVariable for T {
    fn extract(call: &mut ResourceCall, name: &str) -> Result<Self, ErrorObject> {
        let value = call.variables.remove(name).ok_or_else(|| not_found(call, name, "is missing"))?;
        T::parse_argument(value).map_err(|e| not_found(call, name, &format!("is invalid: {e}")))
    }
}

impl<T: ArgumentValue> ResourceVariable for Option<T> {
    fn extract(call: &mut ResourceCall, name: &str) -> Result<Self, ErrorObject> {
        match call.variables.remove(name) {
            None => Ok(None),
            Some(value) => {
                T::parse_argument(value).map(Some).map_err(|e| not_found(call, name, &format!("is invalid: {e}")))
            }
        }
    }
}

/// An argument of a `#[resource]` function that is not a template variable: supplied by the
/// server.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not supplied by the server, so this argument must be a variable of the URI template",
    label = "not a template variable, and not injected",
    note = "every argument of a `#[resource]` function is either a variable of its URI template, with the same name (`{{id}}` and `id: String`), or taken from the request (`typed_mcp::Context`, `typed_mcp::State<T>`, `typed_mcp::resource::ResourceUri`, `Meta`, `Identity`, `Headers`, `Extension<T>`, `Extract<T>`)"
)]
pub trait ResourceInjected: Sized + Send {
    /// Supplies the argument.
    fn inject(call: &ResourceCall) -> Result<Self, ErrorObject>;
}

/// Every extractor ([`crate::handler::FromContext`]) is injected.
macro_rules! wire_resource {
    ([$($generics:tt)*] $ty:ty) => {
        impl<$($generics)*> ResourceInjected for $ty {
            fn inject(call: &ResourceCall) -> Result<Self, ErrorObject> {
                <$ty as crate::handler::FromContext>::from_context(&call.ctx)
            }
        }
    };
}
crate::handler::for_each_extractor!(wire_resource);

/// The URI being read, for a `#[resource]` function that needs it whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceUri(pub String);

impl ResourceInjected for ResourceUri {
    fn inject(call: &ResourceCall) -> Result<Self, ErrorObject> {
        Ok(ResourceUri(call.uri.clone()))
    }
}

/// Binary contents, sent base64-encoded as a `blob`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Blob(pub Vec<u8>);

/// A value a resource may return, turned into the contents of the URI read.
///
/// `String` and `&str` become text contents, [`Blob`] and `Vec<u8>` binary contents (base64),
/// [`Json<T>`] JSON text (`application/json`); [`ResourceContents`] and
/// `Vec<ResourceContents>` are sent as they are, as is a [`ReadResourceResult`]. The MIME type
/// given to the resource fills in contents that have none. `Option<T>`: `None` is "resource
/// not found" (-32002). `Result<T, E>`: `Err` becomes a JSON-RPC error (an [`ErrorObject`] as
/// it is, anything else as an internal error carrying its message).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[resource]` function",
    label = "not resource contents",
    note = "a resource returns text (`String`, `&str`), bytes (`Vec<u8>`, `Blob`), `Json<T>`, `ResourceContents`, `Vec<ResourceContents>`, `ReadResourceResult`, or `Option`/`Result` of one of these"
)]
pub trait IntoResourceContents: Send + 'static {
    /// Converts the value into the result of reading `uri`, or into a JSON-RPC error.
    fn into_read_result(self, uri: &str) -> Result<ReadResourceResult, ErrorObject>;
}

fn one(contents: ResourceContents) -> Result<ReadResourceResult, ErrorObject> {
    Ok(ReadResourceResult { contents: vec![contents], meta: None })
}

impl IntoResourceContents for String {
    fn into_read_result(self, uri: &str) -> Result<ReadResourceResult, ErrorObject> {
        one(ResourceContents::text(uri, None, self))
    }
}

impl IntoResourceContents for &'static str {
    fn into_read_result(self, uri: &str) -> Result<ReadResourceResult, ErrorObject> {
        one(ResourceContents::text(uri, None, self))
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_read_result(self, uri: &str) -> Result<ReadResourceResult, ErrorObject> {
        one(ResourceContents::blob(uri, None, &self))
    }
}

impl IntoResourceContents for Blob {
    fn into_read_result(self, uri: &str) -> Result<ReadResourceResult, ErrorObject> {
        one(ResourceContents::blob(uri, None, &self.0))
    }
}

impl<T: Serialize + Send + 'static> IntoResourceContents for Json<T> {
    fn into_read_result(self, uri: &str) -> Result<ReadResourceResult, ErrorObject> {
        let text = serde_json::to_string(&self.0)
            .map_err(|e| ErrorObject::internal(format!("the resource could not be serialized: {e}")))?;
        one(ResourceContents::text(uri, Some("application/json".into()), text))
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_read_result(self, _: &str) -> Result<ReadResourceResult, ErrorObject> {
        one(self)
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_read_result(self, _: &str) -> Result<ReadResourceResult, ErrorObject> {
        Ok(ReadResourceResult { contents: self, meta: None })
    }
}

impl IntoResourceContents for ReadResourceResult {
    fn into_read_result(self, _: &str) -> Result<ReadResourceResult, ErrorObject> {
        Ok(self)
    }
}

impl<T: IntoResourceContents> IntoResourceContents for Option<T> {
    fn into_read_result(self, uri: &str) -> Result<ReadResourceResult, ErrorObject> {
        match self {
            Some(v) => v.into_read_result(uri),
            None => Err(ErrorObject::resource_not_found(uri)),
        }
    }
}

impl<T: IntoResourceContents, E: Display + Send + 'static> IntoResourceContents for Result<T, E> {
    fn into_read_result(self, uri: &str) -> Result<ReadResourceResult, ErrorObject> {
        match self {
            Ok(v) => v.into_read_result(uri),
            Err(e) => Err(crate::tool::protocol_error(&e).unwrap_or_else(|| ErrorObject::internal(e.to_string()))),
        }
    }
}
