//! The method table: one row per MCP method, with every fact about it that the server and
//! the client act on. Anything that asks "may this method be called in that era?", "can its
//! result be cached?", "which parameter names its target?" reads the row instead of keeping a
//! list of its own.
//!
//! Each row has an id, a variant of [`Method`]: code that acts on a method matches on it, never
//! on the name. Adding a method is a variant and its row here (the test `each_id_is_its_rows_index`
//! keeps them in the same order), its wire types in this module's siblings, and then what the
//! compiler asks for: each `match` on [`Method`] without a catch-all arm (the server's router,
//! its scope check, telemetry's target) names the new variant as missing.
//!
//! ```
//! use typed_mcp::protocol::methods::{self, Era, Target};
//!
//! let call = methods::Method::ToolsCall.info();
//! assert_eq!(call.name, "tools/call");
//! assert!(call.valid_in(Era::Y2025) && call.valid_in(Era::Y2026));
//! assert!(call.multi_round && call.task_capable && !call.cacheable);
//! assert_eq!(call.target, Some(Target::Name));
//! assert!(!methods::find("logging/setLevel").unwrap().valid_in(Era::Y2026));
//! ```

/// Who sends a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The client sends it; the server answers (or, for a notification, reads it).
    ToServer,
    /// The server sends it to the client.
    ToClient,
    /// Either side may send it.
    Both,
}

/// Whether a method is a request (answered) or a notification (not answered).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Answered with a result or an error.
    Request,
    /// Never answered.
    Notification,
}

/// The protocol eras: revisions up to 2025-11-25, with `initialize` and sessions, and
/// 2026-07-28, where every request stands alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2025-11-25 and the revisions before it: a session opened with `initialize`.
    Y2025,
    /// 2026-07-28: no `initialize`; each request carries its revision and the client's
    /// capabilities in `_meta`.
    Y2026,
}

/// The eras a method belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eras {
    /// Only sessions opened with `initialize` (2025-11-25 and before).
    Only2025,
    /// Only 2026-07-28 requests.
    Only2026,
    /// Both.
    Both,
}

/// What the server must have declared for a client to call a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Nothing: every server answers it.
    None,
    /// The `tools` capability.
    Tools,
    /// The `prompts` capability.
    Prompts,
    /// The `resources` capability.
    Resources,
    /// `resources.subscribe`.
    ResourceSubscriptions,
    /// The `logging` capability.
    Logging,
    /// The `completions` capability.
    Completions,
    /// The tasks extension (`io.modelcontextprotocol/tasks`).
    Tasks,
    /// The skills extension (`io.modelcontextprotocol/skills`).
    Skills,
    /// The skills extension with `directoryRead: true`.
    SkillsDirectory,
    /// The client's capability of the same name (a request the server sends: `elicitation`,
    /// `sampling`, `roots`).
    Client,
}

/// Which parameter names what a request is about (its `Mcp-Name` header in 2026-07-28, the
/// target a `requestState` is bound to, the tool whose scopes a call needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `name`: a tool or a prompt.
    Name,
    /// `uri`: a resource.
    Uri,
    /// `taskId`: a task.
    TaskId,
}

impl Target {
    /// The parameter's name.
    pub const fn param(self) -> &'static str {
        match self {
            Target::Name => "name",
            Target::Uri => "uri",
            Target::TaskId => "taskId",
        }
    }
}

/// A method of MCP, as a value: the id of its row in [`METHODS`].
///
/// Code that acts on a method matches on this enum, so the compiler lists every place a new
/// method must be handled; the wire name is [`Method::name`], and [`Method::from_name`] reads
/// one. Each variant's row is [`Method::info`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Method {
    /// `tools/call`.
    ToolsCall,
    /// `tools/list`.
    ToolsList,
    /// `resources/read`.
    ResourcesRead,
    /// `prompts/get`.
    PromptsGet,
    /// `ping`.
    Ping,
    /// `initialize`.
    Initialize,
    /// `server/discover`.
    ServerDiscover,
    /// `resources/list`.
    ResourcesList,
    /// `resources/templates/list`.
    ResourcesTemplatesList,
    /// `prompts/list`.
    PromptsList,
    /// `completion/complete`.
    CompletionComplete,
    /// `resources/subscribe`.
    ResourcesSubscribe,
    /// `resources/unsubscribe`.
    ResourcesUnsubscribe,
    /// `logging/setLevel`.
    LoggingSetLevel,
    /// `subscriptions/listen`.
    SubscriptionsListen,
    /// `tasks/get`.
    TasksGet,
    /// `tasks/update`.
    TasksUpdate,
    /// `tasks/cancel`.
    TasksCancel,
    /// `skills/list` (skills extension).
    SkillsList,
    /// `skills/get` (skills extension).
    SkillsGet,
    /// `resources/directory/read` (skills extension).
    ResourcesDirectoryRead,
    /// `elicitation/create`.
    ElicitationCreate,
    /// `sampling/createMessage`.
    SamplingCreateMessage,
    /// `roots/list`.
    RootsList,
    /// `notifications/initialized`.
    Initialized,
    /// `notifications/cancelled`.
    Cancelled,
    /// `notifications/progress`.
    Progress,
    /// `notifications/message`.
    Message,
    /// `notifications/roots/list_changed`.
    RootsListChanged,
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated`.
    ResourcesUpdated,
    /// `notifications/elicitation/complete`.
    ElicitationComplete,
    /// `notifications/subscriptions/acknowledged`.
    SubscriptionsAcknowledged,
    /// `notifications/tasks`.
    Tasks,
}

impl Method {
    /// Every method, in the order of [`METHODS`].
    pub const ALL: [Method; METHODS.len()] = {
        let mut all = [Method::ToolsCall; METHODS.len()];
        let mut i = 0;
        while i < METHODS.len() {
            all[i] = METHODS[i].id;
            i += 1;
        }
        all
    };

    /// The method's row of the table.
    pub const fn info(self) -> &'static MethodInfo {
        &METHODS[self as usize]
    }

    /// The method's name, as on the wire.
    pub const fn name(self) -> &'static str {
        self.info().name
    }

    /// The method called `name`, if MCP has one.
    pub fn from_name(name: &str) -> Option<Method> {
        find(name).map(|row| row.id)
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Method {
    type Err = UnknownMethod;

    fn from_str(name: &str) -> Result<Method, UnknownMethod> {
        Method::from_name(name).ok_or_else(|| UnknownMethod(name.chars().take(64).collect()))
    }
}

/// A method name MCP does not have (its first 64 characters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a method of MCP")]
pub struct UnknownMethod(pub String);

/// One row of the method table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MethodInfo {
    /// The method, as a value to match on.
    pub id: Method,
    /// The method's name, as on the wire.
    pub name: &'static str,
    /// Request or notification.
    pub kind: Kind,
    /// Who sends it.
    pub direction: Direction,
    /// What the server must declare for it to be called.
    pub gate: Gate,
    /// The eras it is valid in.
    pub eras: Eras,
    /// In 2026-07-28, its result may be `input_required` (the server asks the client
    /// something, and the client retries with the answers).
    pub multi_round: bool,
    /// In 2026-07-28, its result carries caching hints (`ttlMs`, `cacheScope`), and a client
    /// may keep it.
    pub cacheable: bool,
    /// It may run as a task (tasks extension).
    pub task_capable: bool,
    /// Its result is one page of a list, chained by `cursor`/`nextCursor`.
    pub paginated: bool,
    /// The parameter naming its target, if it has one.
    pub target: Option<Target>,
    /// It changes what a 2025-era session carries to another instance of a shared deployment
    /// (its log level, its subscriptions).
    pub changes_session: bool,
}

impl MethodInfo {
    /// Whether the method may be used in `era`.
    pub const fn valid_in(&self, era: Era) -> bool {
        matches!((self.eras, era), (Eras::Both, _) | (Eras::Only2025, Era::Y2025) | (Eras::Only2026, Era::Y2026))
    }
}

const fn row(id: Method, name: &'static str, kind: Kind, direction: Direction, gate: Gate, eras: Eras) -> MethodInfo {
    MethodInfo {
        id,
        name,
        kind,
        direction,
        gate,
        eras,
        multi_round: false,
        cacheable: false,
        task_capable: false,
        paginated: false,
        target: None,
        changes_session: false,
    }
}

const fn request(id: Method, name: &'static str, gate: Gate, eras: Eras) -> MethodInfo {
    row(id, name, Kind::Request, Direction::ToServer, gate, eras)
}

const fn notification(id: Method, name: &'static str, direction: Direction, eras: Eras) -> MethodInfo {
    row(id, name, Kind::Notification, direction, Gate::None, eras)
}

impl MethodInfo {
    const fn multi_round(mut self) -> Self {
        self.multi_round = true;
        self
    }
    const fn cacheable(mut self) -> Self {
        self.cacheable = true;
        self
    }
    const fn paginated(mut self) -> Self {
        self.paginated = true;
        self
    }
    const fn task_capable(mut self) -> Self {
        self.task_capable = true;
        self
    }
    const fn target(mut self, target: Target) -> Self {
        self.target = Some(target);
        self
    }
    const fn changes_session(mut self) -> Self {
        self.changes_session = true;
        self
    }
    const fn to_client(mut self) -> Self {
        self.direction = Direction::ToClient;
        self
    }
    const fn both_ways(mut self) -> Self {
        self.direction = Direction::Both;
        self
    }
}

use Eras::{Both, Only2025, Only2026};

/// Every method of MCP this crate speaks, either direction, every revision; row `i` is the
/// method whose id is `i` (`Method::X as usize`).
pub const METHODS: &[MethodInfo] = &[
    // The requests a client sends, most frequent first (the table is searched in order).
    request(Method::ToolsCall, "tools/call", Gate::Tools, Both).multi_round().task_capable().target(Target::Name),
    request(Method::ToolsList, "tools/list", Gate::Tools, Both).cacheable().paginated(),
    request(Method::ResourcesRead, "resources/read", Gate::Resources, Both)
        .multi_round()
        .cacheable()
        .target(Target::Uri),
    request(Method::PromptsGet, "prompts/get", Gate::Prompts, Both).multi_round().target(Target::Name),
    request(Method::Ping, "ping", Gate::None, Only2025).both_ways(),
    request(Method::Initialize, "initialize", Gate::None, Only2025),
    request(Method::ServerDiscover, "server/discover", Gate::None, Only2026).cacheable(),
    request(Method::ResourcesList, "resources/list", Gate::Resources, Both).cacheable().paginated(),
    request(Method::ResourcesTemplatesList, "resources/templates/list", Gate::Resources, Both).cacheable().paginated(),
    request(Method::PromptsList, "prompts/list", Gate::Prompts, Both).cacheable().paginated(),
    request(Method::CompletionComplete, "completion/complete", Gate::Completions, Both),
    request(Method::ResourcesSubscribe, "resources/subscribe", Gate::ResourceSubscriptions, Only2025)
        .target(Target::Uri)
        .changes_session(),
    request(Method::ResourcesUnsubscribe, "resources/unsubscribe", Gate::ResourceSubscriptions, Only2025)
        .target(Target::Uri)
        .changes_session(),
    request(Method::LoggingSetLevel, "logging/setLevel", Gate::Logging, Only2025).changes_session(),
    request(Method::SubscriptionsListen, "subscriptions/listen", Gate::None, Only2026),
    request(Method::TasksGet, "tasks/get", Gate::Tasks, Only2026).target(Target::TaskId),
    request(Method::TasksUpdate, "tasks/update", Gate::Tasks, Only2026).target(Target::TaskId),
    request(Method::TasksCancel, "tasks/cancel", Gate::Tasks, Only2026).target(Target::TaskId),
    // The skills extension. No `target`: no `Mcp-Name` header is defined for them.
    request(Method::SkillsList, "skills/list", Gate::Skills, Both).cacheable().paginated(),
    request(Method::SkillsGet, "skills/get", Gate::Skills, Both).cacheable(),
    request(Method::ResourcesDirectoryRead, "resources/directory/read", Gate::SkillsDirectory, Both).cacheable(),
    // The requests a server sends (in 2026-07-28, the questions of an `input_required` result).
    request(Method::ElicitationCreate, "elicitation/create", Gate::Client, Both).to_client(),
    request(Method::SamplingCreateMessage, "sampling/createMessage", Gate::Client, Both).to_client(),
    request(Method::RootsList, "roots/list", Gate::Client, Both).to_client(),
    // Notifications.
    notification(Method::Initialized, "notifications/initialized", Direction::ToServer, Only2025),
    notification(Method::Cancelled, "notifications/cancelled", Direction::Both, Only2025),
    notification(Method::Progress, "notifications/progress", Direction::Both, Both),
    notification(Method::Message, "notifications/message", Direction::ToClient, Both),
    notification(Method::RootsListChanged, "notifications/roots/list_changed", Direction::ToServer, Only2025),
    notification(Method::ToolsListChanged, "notifications/tools/list_changed", Direction::ToClient, Both),
    notification(Method::PromptsListChanged, "notifications/prompts/list_changed", Direction::ToClient, Both),
    notification(Method::ResourcesListChanged, "notifications/resources/list_changed", Direction::ToClient, Both),
    notification(Method::ResourcesUpdated, "notifications/resources/updated", Direction::ToClient, Both),
    notification(Method::ElicitationComplete, "notifications/elicitation/complete", Direction::ToClient, Only2025),
    notification(
        Method::SubscriptionsAcknowledged,
        "notifications/subscriptions/acknowledged",
        Direction::ToClient,
        Only2026,
    ),
    notification(Method::Tasks, "notifications/tasks", Direction::ToClient, Only2026),
];

/// The row of the method called `name`, if MCP has one.
pub fn find(name: &str) -> Option<&'static MethodInfo> {
    METHODS.iter().find(|m| m.name.len() == name.len() && m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_has_one_row() {
        for (i, m) in METHODS.iter().enumerate() {
            assert!(METHODS[..i].iter().all(|o| o.name != m.name), "`{}` has two rows", m.name);
            assert_eq!(find(m.name), Some(m));
        }
        assert_eq!(find("tools/cal"), None);
    }

    #[test]
    fn each_id_is_its_rows_index() {
        for (i, m) in METHODS.iter().enumerate() {
            assert_eq!(m.id as usize, i, "`{}` is not at the index of its id", m.name);
            assert_eq!(m.id.info(), m);
            assert_eq!(Method::from_name(m.name), Some(m.id));
            assert_eq!(m.id.to_string(), m.name);
        }
        assert_eq!(Method::ALL.len(), METHODS.len());
        assert_eq!("tools/cal".parse::<Method>(), Err(UnknownMethod("tools/cal".into())));
    }

    #[test]
    fn the_rows_agree_with_each_other() {
        for m in METHODS {
            // Only requests have targets, results and rounds.
            if m.kind == Kind::Notification {
                assert!(!m.multi_round && !m.cacheable && !m.task_capable && m.target.is_none(), "{}", m.name);
            }
            // Rounds and cache hints exist only in 2026-07-28.
            if m.multi_round || m.cacheable {
                assert!(m.valid_in(Era::Y2026), "{}", m.name);
            }
            // A session's record exists only in the 2025 era.
            if m.changes_session {
                assert!(m.valid_in(Era::Y2025) && !m.valid_in(Era::Y2026), "{}", m.name);
            }
        }
        for m in METHODS.iter().filter(|m| m.paginated) {
            assert!(m.cacheable && m.name.ends_with("/list"), "{}", m.name);
        }
        let multi: Vec<_> = METHODS.iter().filter(|m| m.multi_round).map(|m| m.name).collect();
        assert_eq!(multi, ["tools/call", "resources/read", "prompts/get"]);
    }
}
