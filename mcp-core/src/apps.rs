//! MCP Apps (the `io.modelcontextprotocol/ui` extension): tools that come with an interactive
//! view, an HTML page the host renders in a sandboxed iframe next to the tool's result.
//!
//! A tool names its view with `#[tool(ui = "ui://…")]` ([`ToolDef::ui`](crate::ToolDef::ui));
//! the view is a resource at that `ui://` URI, served as [`MIME_TYPE`] with the metadata of
//! [`UiResourceMeta`] (the origins its content security policy allows, the browser permissions it
//! asks for): `#[resource("ui://…", app)]`, or [`AppResource`](crate::resource::AppResource) for
//! HTML compiled in or read from disk. The server then declares the extension in its
//! capabilities. Inside the host, the view talks to the host over `postMessage` and calls the
//! server's tools through it; a tool's [`Visibility`] says whether the model, the view, or both
//! may call it.
//!
//! ```
//! use typed_mcp::prelude::*;
//! use typed_mcp::resource::AppResource;
//!
//! /// Shows the board.
//! #[tool(ui = "ui://board/view.html")]
//! async fn show_board() -> String {
//!     "The board has no task yet.".to_owned()
//! }
//!
//! let view = AppResource::html("ui://board/view.html", "<!doctype html><p>Board</p>")
//!     .connect_domains(["https://api.example.com"])
//!     .prefers_border(true);
//! let server = Server::builder("board", "1.0.0").tools(tools![show_board]).resource(view.into()).build()?;
//! # Ok::<(), typed_mcp::BuildError>(())
//! ```
//!
//! On the client side, [`ToolUi::of`] reads a listed tool's view and visibility, and
//! `Client::read_app_view` reads the view itself; the client declares the extension with
//! `ClientBuilder::apps`. The [guide chapter](crate::guide::apps) has the whole story.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::{JsonObject, Tool};

/// The extension's identifier, under `capabilities.extensions` of either side.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of a view: HTML of the MCP Apps profile.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The scheme every view's URI has.
pub const URI_SCHEME: &str = "ui://";

/// The flat `_meta` key that hosts written before `_meta.ui` read the view's URI from; the
/// server writes both.
pub const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// The value of the extension in a side's capabilities: the MIME types of views it handles.
pub(crate) fn capability() -> Value {
    serde_json::json!({ "mimeTypes": [MIME_TYPE] })
}

/// Who may call a tool: the model (the tool is in the model's tool list), the view (it calls
/// the tool through the host), or both, the default. A tool only the view calls (saving a
/// reordering, say) is [`Visibility::App`]: hosts leave it out of the model's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Visibility {
    /// The model and the view (`["model", "app"]`).
    #[default]
    ModelAndApp,
    /// Only the model (`["model"]`).
    Model,
    /// Only the view, through the host (`["app"]`).
    App,
}

impl Visibility {
    /// The wire form, `_meta.ui.visibility`.
    pub fn as_wire(self) -> &'static [&'static str] {
        match self {
            Visibility::ModelAndApp => &["model", "app"],
            Visibility::Model => &["model"],
            Visibility::App => &["app"],
        }
    }

    /// Whether the model may call the tool (whether a host lists it to the model).
    pub fn to_model(self) -> bool {
        matches!(self, Visibility::ModelAndApp | Visibility::Model)
    }

    /// Whether a view may call the tool through the host.
    pub fn to_app(self) -> bool {
        matches!(self, Visibility::ModelAndApp | Visibility::App)
    }

    /// Reads the wire form; entries other than `model` and `app` are ignored. `None` for a
    /// list naming neither.
    pub fn from_wire<S: AsRef<str>>(list: &[S]) -> Option<Self> {
        let model = list.iter().any(|s| s.as_ref() == "model");
        let app = list.iter().any(|s| s.as_ref() == "app");
        match (model, app) {
            (true, true) => Some(Visibility::ModelAndApp),
            (true, false) => Some(Visibility::Model),
            (false, true) => Some(Visibility::App),
            (false, false) => None,
        }
    }
}

/// A tool's `_meta.ui`: its view and who may call it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUi {
    /// The `ui://` URI of the view to show with the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call the tool, as sent (`["model", "app"]` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<String>>,
}

impl ToolUi {
    /// The `_meta.ui` of a listed tool, if it has one (or only the flat `ui/resourceUri` key of
    /// earlier hosts). Members of the wrong type are left out.
    pub fn of(tool: &Tool) -> Option<ToolUi> {
        Self::from_meta(tool.meta.as_ref()?)
    }

    /// [`of`](Self::of), from the tool's `_meta` object.
    pub fn from_meta(meta: &JsonObject) -> Option<ToolUi> {
        let ui = meta.get("ui").and_then(Value::as_object);
        let legacy = meta.get(LEGACY_RESOURCE_URI_KEY).and_then(Value::as_str);
        if ui.is_none() && legacy.is_none() {
            return None;
        }
        let resource_uri = ui.and_then(|u| u.get("resourceUri")).and_then(Value::as_str).or(legacy).map(str::to_owned);
        let visibility = ui
            .and_then(|u| u.get("visibility"))
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect::<Vec<_>>());
        Some(ToolUi { resource_uri, visibility })
    }

    /// Who may call the tool: as listed, or both when the tool says nothing. A list that names
    /// neither the model nor the view is [`None`] (no one).
    pub fn visibility(&self) -> Option<Visibility> {
        match &self.visibility {
            None => Some(Visibility::ModelAndApp),
            Some(list) => Visibility::from_wire(list),
        }
    }

    /// Whether a host lists the tool to the model.
    pub fn visible_to_model(&self) -> bool {
        self.visibility().is_some_and(Visibility::to_model)
    }

    /// Whether a view may call the tool.
    pub fn callable_by_app(&self) -> bool {
        self.visibility().is_some_and(Visibility::to_app)
    }
}

/// Whether the client of the request `ctx` belongs to declared the extension (it renders views),
/// in either era. A tool may answer such a client more briefly, leaving the detail to its
/// view; its `content` must still make sense alone.
pub fn client_supports(ctx: &crate::handler::Context) -> bool {
    ctx.client_capabilities().is_some_and(|c| c.has_extension(EXTENSION))
}

/// Whether the model may see and call `tool`: not when its `_meta.ui.visibility` leaves the
/// model out. What a host gives the model is the tool list with these kept.
pub fn visible_to_model(tool: &Tool) -> bool {
    ToolUi::of(tool).is_none_or(|ui| ui.visible_to_model())
}

/// The content security policy a view asks for: the origins it may reach beyond its own
/// document (none by default, and hosts allow nothing more). Each entry is an origin such as
/// `https://api.example.com`, or `https://*.example.com` for its subdomains.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Csp {
    /// Origins of `fetch`, XHR and WebSocket connections (`connect-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// Origins of scripts, styles, images, fonts and media (`script-src`, `style-src`,
    /// `img-src`, `font-src`, `media-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// Origins of nested iframes (`frame-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// Origins allowed as the document's base URI (`base-uri`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
}

impl Csp {
    /// Whether no origin is allowed.
    pub fn is_empty(&self) -> bool {
        self.connect_domains.is_empty()
            && self.resource_domains.is_empty()
            && self.frame_domains.is_empty()
            && self.base_uri_domains.is_empty()
    }

    fn origins(&self) -> impl Iterator<Item = &String> {
        self.connect_domains
            .iter()
            .chain(&self.resource_domains)
            .chain(&self.frame_domains)
            .chain(&self.base_uri_domains)
    }
}

/// Why `origin` cannot be an entry of a view's content security policy, if it cannot: an entry
/// is `scheme://host` with an optional port, the host's first label may be `*`, and nothing
/// that would end the directive (spaces, `;`, `,`, quotes) may appear.
pub fn origin_problem(origin: &str) -> Option<String> {
    let Some((scheme, rest)) = origin.split_once("://") else {
        return Some(format!("`{origin}` is not an origin; write it as `https://host` (with the scheme)"));
    };
    if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) {
        return Some(format!("`{origin}` has no valid scheme; write it as `https://host`"));
    }
    let host = rest.strip_suffix('/').unwrap_or(rest);
    let host = host.strip_prefix("*.").unwrap_or(host);
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']');
    if host.is_empty() || !host.chars().all(allowed) {
        return Some(format!(
            "`{origin}` is not an origin: only `scheme://host[:port]` (the host may start with `*.`), no path, spaces, `;`, `,` or quotes"
        ));
    }
    None
}

/// The browser features a view asks for; hosts may grant them (through the iframe's `allow`
/// attribute) or not, so a view checks before it uses one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Permissions {
    camera: bool,
    microphone: bool,
    geolocation: bool,
    clipboard_write: bool,
}

impl Permissions {
    /// No permission.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for the camera.
    pub fn camera(mut self) -> Self {
        self.camera = true;
        self
    }

    /// Asks for the microphone.
    pub fn microphone(mut self) -> Self {
        self.microphone = true;
        self
    }

    /// Asks for the location.
    pub fn geolocation(mut self) -> Self {
        self.geolocation = true;
        self
    }

    /// Asks to write to the clipboard.
    pub fn clipboard_write(mut self) -> Self {
        self.clipboard_write = true;
        self
    }

    /// Whether no permission is asked for.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The permissions asked for, by their wire names (`camera`, `microphone`, `geolocation`,
    /// `clipboardWrite`).
    pub fn names(&self) -> Vec<&'static str> {
        [
            (self.camera, "camera"),
            (self.microphone, "microphone"),
            (self.geolocation, "geolocation"),
            (self.clipboard_write, "clipboardWrite"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }
}

impl Serialize for Permissions {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let map: JsonObject =
            self.names().into_iter().map(|n| (n.to_owned(), Value::Object(JsonObject::new()))).collect();
        map.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Permissions {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Each permission is a member whose value is an (empty) object; other members are
        // permissions this version does not know.
        let map = JsonObject::deserialize(deserializer)?;
        Ok(Permissions {
            camera: map.contains_key("camera"),
            microphone: map.contains_key("microphone"),
            geolocation: map.contains_key("geolocation"),
            clipboard_write: map.contains_key("clipboardWrite"),
        })
    }
}

/// A view's `_meta.ui`, on its entry in `resources/list` and on its contents in
/// `resources/read`: its content security policy, permissions, dedicated origin, and border.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiResourceMeta {
    /// The origins the view may reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<Csp>,
    /// The browser features it asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Permissions>,
    /// A dedicated origin for the view's sandbox, in the form the host documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the view wants the host to draw a border and background around it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

impl UiResourceMeta {
    /// No policy entry, permission, domain or border preference.
    pub fn new() -> Self {
        Self::default()
    }

    fn csp_mut(&mut self) -> &mut Csp {
        self.csp.get_or_insert_with(Csp::default)
    }

    /// Adds origins the view may connect to (`fetch`, WebSocket).
    pub fn connect_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, origins: I) -> Self {
        self.csp_mut().connect_domains.extend(origins.into_iter().map(Into::into));
        self
    }

    /// Adds origins the view may load scripts, styles, images, fonts and media from.
    pub fn resource_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, origins: I) -> Self {
        self.csp_mut().resource_domains.extend(origins.into_iter().map(Into::into));
        self
    }

    /// Adds origins the view may embed in iframes.
    pub fn frame_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, origins: I) -> Self {
        self.csp_mut().frame_domains.extend(origins.into_iter().map(Into::into));
        self
    }

    /// Adds origins allowed as the view's base URI.
    pub fn base_uri_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, origins: I) -> Self {
        self.csp_mut().base_uri_domains.extend(origins.into_iter().map(Into::into));
        self
    }

    /// Sets the browser features the view asks for.
    pub fn permissions(mut self, permissions: Permissions) -> Self {
        self.permissions = (!permissions.is_empty()).then_some(permissions);
        self
    }

    /// Sets the dedicated origin of the view's sandbox (host-specific).
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    /// Says whether the view wants a border and background from the host.
    pub fn prefers_border(mut self, border: bool) -> Self {
        self.prefers_border = Some(border);
        self
    }

    /// Reads the `_meta.ui` of a `_meta` object; `None` without one or when it is malformed.
    pub fn from_meta(meta: &JsonObject) -> Option<UiResourceMeta> {
        meta.get("ui").and_then(|ui| serde_json::from_value(ui.clone()).ok())
    }

    /// The `_meta` object carrying this as `ui`.
    pub(crate) fn to_meta(&self) -> JsonObject {
        let mut meta = JsonObject::new();
        if let Ok(ui) = serde_json::to_value(self) {
            meta.insert("ui".into(), ui);
        }
        meta
    }

    /// The first problem with the metadata: an origin that is not one.
    pub fn problem(&self) -> Option<String> {
        self.csp.as_ref()?.origins().find_map(|o| origin_problem(o))
    }
}

/// Why `uri` cannot name a view, if it cannot.
pub fn view_uri_problem(uri: &str) -> Option<String> {
    match uri.strip_prefix(URI_SCHEME) {
        None => Some(format!("`{uri}` is not a `ui://` URI; a view's URI starts with `ui://`")),
        Some("") => Some(format!("`{uri}` names no view; write `ui://server/view` or similar")),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permissions_are_members_with_empty_objects() {
        let p = Permissions::new().camera().clipboard_write();
        assert_eq!(serde_json::to_value(p).unwrap(), serde_json::json!({"camera": {}, "clipboardWrite": {}}));
        let back: Permissions = serde_json::from_value(serde_json::json!({"camera": {}, "future": {}})).unwrap();
        assert_eq!(back, Permissions::new().camera());
    }

    #[test]
    fn resource_meta_is_camel_case_and_leaves_out_what_is_unset() {
        let meta = UiResourceMeta::new().connect_domains(["https://api.example.com"]).prefers_border(true);
        assert_eq!(
            serde_json::to_value(&meta).unwrap(),
            serde_json::json!({"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": true})
        );
        assert_eq!(UiResourceMeta::from_meta(&meta.to_meta()), Some(meta));
    }

    #[test]
    fn origins_are_checked() {
        assert_eq!(origin_problem("https://api.example.com"), None);
        assert_eq!(origin_problem("https://*.example.com"), None);
        assert_eq!(origin_problem("http://127.0.0.1:8080"), None);
        assert!(origin_problem("api.example.com").is_some());
        assert!(origin_problem("https://a.com; script-src *").is_some());
        assert!(origin_problem("https://a.com/path").is_some());
        assert!(origin_problem("https://").is_some());
    }

    #[test]
    fn tool_ui_reads_both_keys_and_defaults_to_both_audiences() {
        let meta: JsonObject =
            serde_json::from_value(serde_json::json!({"ui": {"resourceUri": "ui://a/b", "visibility": ["app"]}}))
                .unwrap();
        let ui = ToolUi::from_meta(&meta).unwrap();
        assert_eq!(ui.resource_uri.as_deref(), Some("ui://a/b"));
        assert!(!ui.visible_to_model() && ui.callable_by_app());
        let legacy: JsonObject = serde_json::from_value(serde_json::json!({"ui/resourceUri": "ui://a/c"})).unwrap();
        let ui = ToolUi::from_meta(&legacy).unwrap();
        assert_eq!(ui.resource_uri.as_deref(), Some("ui://a/c"));
        assert!(ui.visible_to_model() && ui.callable_by_app());
        assert_eq!(ToolUi::from_meta(&JsonObject::new()), None);
        let nobody: JsonObject = serde_json::from_value(serde_json::json!({"ui": {"visibility": ["x"]}})).unwrap();
        assert!(!ToolUi::from_meta(&nobody).unwrap().visible_to_model());
    }

    #[test]
    fn view_uris_are_ui_uris() {
        assert_eq!(view_uri_problem("ui://board/view.html"), None);
        assert!(view_uri_problem("https://board/view.html").is_some());
        assert!(view_uri_problem("ui://").is_some());
    }
}
