//! What an operation's records say: its span's name, the attributes of its span and duration
//! by the MCP conventions, the key of their set, and how it failed.

use std::borrow::Cow;
use std::sync::Arc;

use opentelemetry::KeyValue;
use opentelemetry::trace::Status;

use super::Transport;
use crate::protocol::methods::Method;

/// The method's name as a `'static` string when it is one of the table's (no allocation per
/// request), else owned.
pub(super) fn method_name(id: Option<Method>, method: &str) -> Cow<'static, str> {
    match id {
        Some(id) => Cow::Borrowed(id.name()),
        None => Cow::Owned(method.to_owned()),
    }
}

/// A protocol version as a `'static` string when it is one we speak, else owned.
pub(super) fn version_name(version: &str) -> Cow<'static, str> {
    crate::protocol::SUPPORTED_PROTOCOL_VERSIONS
        .iter()
        .chain([&crate::protocol::era_2026::PROTOCOL_VERSION_2026_07_28])
        .find(|v| **v == version)
        .map_or_else(|| Cow::Owned(version.to_owned()), |v| Cow::Borrowed(*v))
}

/// How many tool (and prompt) names [`interned`] keeps: they come from the wire, so the set is
/// bounded; past it, each request allocates its own.
pub(super) const INTERNED_MAX: usize = 512;

/// The longest tool (or prompt) name [`interned`] keeps, in bytes: MCP's limit for a tool's
/// name. A longer name from the wire is named afresh in each request and freed with it, so that
/// what the table holds is bounded (at most [`INTERNED_MAX`] names of this size per method,
/// about 150 KiB in all) whatever clients send.
pub(super) const INTERNED_NAME_MAX: usize = 128;

/// The span name `{method} {target}` and the target, for a tool call or a prompt, as `'static`
/// strings kept for the life of the process (at most [`INTERNED_MAX`] per method, none longer
/// than [`INTERNED_NAME_MAX`]), so that
/// naming a span and its attributes allocates nothing; clones of the attributes (the span's,
/// the histogram's) then copy a pointer.
pub(super) fn interned(id: Method, target: &str) -> (Cow<'static, str>, Cow<'static, str>) {
    type Names = foldhash::HashMap<Box<str>, (&'static str, &'static str)>;
    static TOOLS: std::sync::LazyLock<std::sync::RwLock<Names>> = std::sync::LazyLock::new(Default::default);
    static PROMPTS: std::sync::LazyLock<std::sync::RwLock<Names>> = std::sync::LazyLock::new(Default::default);
    let names = if id == Method::ToolsCall { &TOOLS } else { &PROMPTS };
    let method = id.name();
    if let Some(&(name, target)) = names.read().ok().as_ref().and_then(|n| n.get(target)) {
        return (Cow::Borrowed(name), Cow::Borrowed(target));
    }
    let owned = || (Cow::Owned(format!("{method} {target}")), Cow::Owned(target.to_owned()));
    let Ok(mut names) = names.write() else { return owned() };
    if let Some(&(name, target)) = names.get(target) {
        return (Cow::Borrowed(name), Cow::Borrowed(target));
    }
    if names.len() >= INTERNED_MAX || target.len() > INTERNED_NAME_MAX {
        return owned();
    }
    let name: &'static str = Box::leak(format!("{method} {target}").into_boxed_str());
    let kept: &'static str = &name[method.len() + 1..];
    names.insert(target.into(), (name, kept));
    (Cow::Borrowed(name), Cow::Borrowed(kept))
}

/// A `'static` string, compared and hashed by its address and length: two of them are the
/// same value when these are (the converse need not hold, which only costs a second binding of
/// one attribute set).
#[derive(Debug, Clone, Copy)]
pub(super) struct Static(pub(super) &'static str);

impl PartialEq for Static {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for Static {}

impl std::hash::Hash for Static {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.as_ptr() as usize);
        state.write_usize(self.0.len());
    }
}

impl Static {
    /// `None` when `s` is not `'static`.
    #[allow(clippy::ptr_arg, reason = "whether the `Cow` borrows is what is asked")]
    pub(super) fn of_cow(s: &Cow<'static, str>) -> Option<Self> {
        match s {
            Cow::Borrowed(s) => Some(Static(s)),
            Cow::Owned(_) => None,
        }
    }
}

/// What an operation is on, as its attributes name it.
pub(super) enum Target {
    None,
    Tool(Cow<'static, str>),
    Prompt(Cow<'static, str>),
    Resource(Arc<str>),
}

/// The attributes every record of an operation shares (how it failed aside).
pub(super) fn shared_attributes(
    method: Cow<'static, str>,
    target: Target,
    version: Option<Cow<'static, str>>,
    transport: Transport,
) -> Vec<KeyValue> {
    // Room for what a span adds (the request's id, the session, the peer's address).
    let mut attributes = Vec::with_capacity(12);
    attributes.push(KeyValue::new("mcp.method.name", method));
    match target {
        Target::None => {}
        Target::Tool(tool) => {
            attributes.push(KeyValue::new("gen_ai.tool.name", tool));
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        Target::Prompt(prompt) => attributes.push(KeyValue::new("gen_ai.prompt.name", prompt)),
        // Shared, so that the span's copy and the histogram's are one string.
        Target::Resource(uri) => attributes.push(KeyValue::new("mcp.resource.uri", uri)),
    }
    if let Some(v) = version {
        attributes.push(KeyValue::new("mcp.protocol.version", v));
    }
    attributes.push(KeyValue::new("network.transport", transport.name()));
    attributes
}

/// The attribute set of an operation's duration, identified without hashing its strings: by
/// the addresses of its values (all `'static`: an operation with another value has no key and
/// keeps its attributes) and how the operation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct SetKey {
    pub(super) server: bool,
    pub(super) method: Method,
    /// The tool of a `tools/call`, the prompt of a `prompts/get`.
    pub(super) target: Option<Static>,
    pub(super) version: Option<Static>,
    pub(super) transport: Transport,
    pub(super) failure: FailureKey,
}

impl SetKey {
    /// The attributes of the set.
    pub(super) fn attributes(&self) -> Vec<KeyValue> {
        let target = match (self.method, self.target) {
            (_, None) => Target::None,
            (Method::ToolsCall, Some(tool)) => Target::Tool(Cow::Borrowed(tool.0)),
            (_, Some(prompt)) => Target::Prompt(Cow::Borrowed(prompt.0)),
        };
        let version = self.version.map(|v| Cow::Borrowed(v.0));
        let mut attributes = shared_attributes(Cow::Borrowed(self.method.name()), target, version, self.transport);
        self.failure.apply(&mut attributes);
        attributes
    }
}

/// How an operation failed, as far as its duration's attributes tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum FailureKey {
    None,
    Rpc(i32),
    Tool,
    Other(Static),
}

impl FailureKey {
    pub(super) fn apply(self, attributes: &mut Vec<KeyValue>) {
        match self {
            FailureKey::None => {}
            FailureKey::Rpc(code) => {
                attributes.push(KeyValue::new("error.type", code.to_string()));
                attributes.push(KeyValue::new("rpc.response.status_code", code.to_string()));
            }
            FailureKey::Tool => attributes.push(KeyValue::new("error.type", "tool_error")),
            FailureKey::Other(kind) => attributes.push(KeyValue::new("error.type", kind.0)),
        }
    }
}

/// What every record of an operation shares: its span's name, the attributes of its span and
/// duration, and the key of their set (`None` when a value is not `'static`).
pub(super) struct Shape {
    pub(super) name: Cow<'static, str>,
    pub(super) attributes: Vec<KeyValue>,
    pub(super) key: Option<SetKey>,
}

impl Shape {
    /// The shape of `method` (`id` when it is one of MCP's) on `target` (a tool, a prompt or a
    /// resource), at `version`, over `transport`, as a `server` (or a client) sees it.
    pub(super) fn of(
        server: bool,
        (id, method): (Option<Method>, &str),
        target: Option<&str>,
        version: Option<&str>,
        transport: Transport,
    ) -> Shape {
        let method = method_name(id, method);
        let (name, target) = match (id, target) {
            (Some(id @ Method::ToolsCall), Some(tool)) => {
                let (name, tool) = interned(id, tool);
                (name, Target::Tool(tool))
            }
            (Some(id @ Method::PromptsGet), Some(prompt)) => {
                let (name, prompt) = interned(id, prompt);
                (name, Target::Prompt(prompt))
            }
            // Not in the name: URIs are of high cardinality.
            (Some(Method::ResourcesRead | Method::ResourcesSubscribe | Method::ResourcesUnsubscribe), Some(uri)) => {
                (method.clone(), Target::Resource(Arc::from(uri)))
            }
            _ => (method.clone(), Target::None),
        };
        let version = version.map(version_name);
        let key = (|| {
            Some(SetKey {
                server,
                method: id?,
                target: match &target {
                    Target::None => None,
                    Target::Tool(t) | Target::Prompt(t) => Some(Static::of_cow(t)?),
                    Target::Resource(_) => return None,
                },
                version: match &version {
                    Some(v) => Some(Static::of_cow(v)?),
                    None => None,
                },
                transport,
                failure: FailureKey::None,
            })
        })();
        Shape { name, attributes: shared_attributes(method, target, version, transport), key }
    }

    /// The span's attributes to start from, and what the duration is recorded with: the
    /// attributes themselves go to the span when their set has a key, else a copy.
    pub(super) fn split(self) -> (Cow<'static, str>, Vec<KeyValue>, DurationSet) {
        match self.key {
            Some(key) => (self.name, self.attributes, DurationSet::Keyed(key)),
            None => (self.name, self.attributes.clone(), DurationSet::Attributes(self.attributes)),
        }
    }
}

/// What an operation's duration is recorded with.
pub(super) enum DurationSet {
    /// The key of its attribute set.
    Keyed(SetKey),
    /// Its attributes (some value is not `'static`).
    Attributes(Vec<KeyValue>),
}

/// `jsonrpc.request.id`: the id as the request gave it (a string id with its quotes).
pub(super) fn request_id_text(id: &crate::protocol::RequestId) -> String {
    match id {
        crate::protocol::RequestId::Number(n) => itoa::Buffer::new().format(*n).to_owned(),
        other => other.to_string(),
    }
}

/// How an operation failed, by the conventions: the JSON-RPC code (also its
/// `rpc.response.status_code`) with the error's message, or `tool_error`.
#[derive(Debug, Clone)]
pub(crate) enum Failure {
    /// A JSON-RPC error.
    Rpc { code: i32, message: String },
    /// A tool result with `isError: true`.
    Tool,
    /// Failed without a response (`timeout`, `cancelled`, `closed`, `_OTHER`).
    Other(&'static str, String),
}

impl Failure {
    /// How a request to the peer failed.
    pub(crate) fn of_peer(error: &crate::engine::PeerError) -> Failure {
        use crate::engine::PeerError;
        match error {
            PeerError::Rpc(e) => Failure::Rpc { code: e.code, message: e.message.clone() },
            PeerError::Timeout { .. } => Failure::Other("timeout", error.to_string()),
            PeerError::Cancelled => Failure::Other("cancelled", error.to_string()),
            PeerError::Closed => Failure::Other("closed", error.to_string()),
            _ => Failure::Other("_OTHER", error.to_string()),
        }
    }

    pub(super) fn key(&self) -> FailureKey {
        match self {
            Failure::Rpc { code, .. } => FailureKey::Rpc(*code),
            Failure::Tool => FailureKey::Tool,
            Failure::Other(kind, _) => FailureKey::Other(Static(kind)),
        }
    }

    pub(super) fn status(&self) -> Status {
        match self {
            Failure::Rpc { message, .. } | Failure::Other(_, message) => Status::error(message.clone()),
            Failure::Tool => Status::error("the tool reported an error"),
        }
    }
}

/// Whether a `tools/call` result (its JSON text) says `isError: true` (its top-level member,
/// found by the member scanner; nothing is decoded).
pub(super) fn is_tool_error(result: &str) -> bool {
    use crate::protocol::scan::Members;
    static KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("\"isError\""));
    if KEY.find(result.as_bytes()).is_none() {
        return false;
    }
    let Ok(members) = Members::of(result, 0..result.len()) else { return false };
    members
        .filter_map(Result::ok)
        .find(|(key, _)| key.in_text(result) == "isError")
        .is_some_and(|(_, value)| result.get(value).is_some_and(|v| v.trim() == "true"))
}

#[cfg(test)]
mod tests {
    use super::{
        Cow, INTERNED_MAX, INTERNED_NAME_MAX, Method, Shape, Transport, interned, is_tool_error, version_name,
    };

    #[test]
    fn a_name_longer_than_mcp_allows_is_never_kept() {
        let long = "x".repeat(INTERNED_NAME_MAX + 1);
        let (name, kept) = interned(Method::ToolsCall, &long);
        assert!(matches!((&name, &kept), (Cow::Owned(_), Cow::Owned(_))), "a long name is not kept for the process");
        assert_eq!((name.len(), &*kept), ("tools/call ".len() + long.len(), long.as_str()));
        // A megabyte-long name, many times over: each one is freed with its request.
        for i in 0..40 {
            let huge = format!("{i}{}", "y".repeat(1 << 20));
            assert!(matches!(interned(Method::PromptsGet, &huge).0, Cow::Owned(_)));
        }
        let fits = "z".repeat(INTERNED_NAME_MAX);
        assert!(
            matches!(interned(Method::ToolsCall, &fits).0, Cow::Borrowed(_)),
            "a name of the maximum length is kept"
        );
    }

    #[test]
    fn tool_names_are_kept_once_and_only_up_to_the_bound() {
        let (name, tool) = interned(Method::PromptsGet, "greet");
        assert_eq!((&*name, &*tool), ("prompts/get greet", "greet"));
        let (again, _) = interned(Method::PromptsGet, "greet");
        assert!(matches!((&name, &again), (Cow::Borrowed(a), Cow::Borrowed(b)) if std::ptr::eq(*a, *b)));
        // The same name under the other method is another span name.
        assert_eq!(&*interned(Method::ToolsCall, "greet").0, "tools/call greet");
        // Names from the wire fill the table at most to its bound; past it they are still right.
        for i in 0..INTERNED_MAX + 10 {
            let target = format!("p{i}");
            let (name, kept) = interned(Method::PromptsGet, &target);
            assert_eq!(name, format!("prompts/get {target}"));
            assert_eq!(kept, target);
        }
        assert!(matches!(interned(Method::PromptsGet, "one more").0, Cow::Owned(_)));
        assert!(matches!(interned(Method::PromptsGet, "greet").0, Cow::Borrowed(_)));
    }

    #[test]
    fn versions_we_speak_are_static_and_others_are_kept_as_given() {
        assert!(matches!(version_name("2025-11-25"), Cow::Borrowed("2025-11-25")));
        assert!(matches!(version_name("2026-07-28"), Cow::Borrowed("2026-07-28")));
        assert_eq!(version_name("1999-01-01"), "1999-01-01");
        let shape = Shape::of(
            true,
            (Some(Method::ToolsCall), Method::ToolsCall.name()),
            Some("get_weather"),
            Some("2025-11-25"),
            Transport::Pipe,
        );
        assert_eq!(shape.name, "tools/call get_weather");
        let keys: Vec<&str> = shape.attributes.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "mcp.method.name",
                "gen_ai.tool.name",
                "gen_ai.operation.name",
                "mcp.protocol.version",
                "network.transport"
            ]
        );
    }

    #[test]
    fn a_tool_error_is_the_top_level_is_error_member() {
        assert!(is_tool_error(r#"{"content":[],"isError":true}"#));
        assert!(is_tool_error(r#"{ "isError" : true , "content": []}"#));
        assert!(!is_tool_error(r#"{"content":[],"isError":false}"#));
        assert!(!is_tool_error(r#"{"content":[{"type":"text","text":"\"isError\":true"}]}"#));
        assert!(!is_tool_error(r#"{"structuredContent":{"isError":true},"content":[]}"#));
        assert!(!is_tool_error("not json"));
    }
}
