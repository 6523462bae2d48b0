//! The method table: one row per MCP method, with every fact about it that the server and
//! the client act on. Anything that asks "may this method be called in that era?", "can its
//! result be cached?", "which parameter names its target?" reads the row instead of keeping a
//! list of its own.
//!
//! Adding a method is one row here, its wire types in this module's siblings, one arm in the
//! server's router and one handler file (see `server/router.rs`).
//!
//! ```
//! use typed_mcp::protocol::methods::{self, Era, Target};
//!
//! let call = methods::find("tools/call").unwrap();
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

/// One row of the method table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MethodInfo {
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

const fn row(name: &'static str, kind: Kind, direction: Direction, gate: Gate, eras: Eras) -> MethodInfo {
    MethodInfo {
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

const fn request(name: &'static str, gate: Gate, eras: Eras) -> MethodInfo {
    row(name, Kind::Request, Direction::ToServer, gate, eras)
}

const fn notification(name: &'static str, direction: Direction, eras: Eras) -> MethodInfo {
    row(name, Kind::Notification, direction, Gate::None, eras)
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

/// Every method of MCP this crate speaks, either direction, every revision.
pub const METHODS: &[MethodInfo] = &[
    // The requests a client sends, most frequent first (the table is searched in order).
    request("tools/call", Gate::Tools, Both).multi_round().task_capable().target(Target::Name),
    request("tools/list", Gate::Tools, Both).cacheable().paginated(),
    request("resources/read", Gate::Resources, Both).multi_round().cacheable().target(Target::Uri),
    request("prompts/get", Gate::Prompts, Both).multi_round().target(Target::Name),
    request("ping", Gate::None, Only2025).both_ways(),
    request("initialize", Gate::None, Only2025),
    request("server/discover", Gate::None, Only2026).cacheable(),
    request("resources/list", Gate::Resources, Both).cacheable().paginated(),
    request("resources/templates/list", Gate::Resources, Both).cacheable().paginated(),
    request("prompts/list", Gate::Prompts, Both).cacheable().paginated(),
    request("completion/complete", Gate::Completions, Both),
    request("resources/subscribe", Gate::ResourceSubscriptions, Only2025).target(Target::Uri).changes_session(),
    request("resources/unsubscribe", Gate::ResourceSubscriptions, Only2025).target(Target::Uri).changes_session(),
    request("logging/setLevel", Gate::Logging, Only2025).changes_session(),
    request("subscriptions/listen", Gate::None, Only2026),
    request("tasks/get", Gate::Tasks, Only2026).target(Target::TaskId),
    request("tasks/update", Gate::Tasks, Only2026).target(Target::TaskId),
    request("tasks/cancel", Gate::Tasks, Only2026).target(Target::TaskId),
    // The requests a server sends (in 2026-07-28, the questions of an `input_required` result).
    request("elicitation/create", Gate::Client, Both).to_client(),
    request("sampling/createMessage", Gate::Client, Both).to_client(),
    request("roots/list", Gate::Client, Both).to_client(),
    // Notifications.
    notification("notifications/initialized", Direction::ToServer, Only2025),
    notification("notifications/cancelled", Direction::Both, Only2025),
    notification("notifications/progress", Direction::Both, Both),
    notification("notifications/message", Direction::ToClient, Both),
    notification("notifications/roots/list_changed", Direction::ToServer, Only2025),
    notification("notifications/tools/list_changed", Direction::ToClient, Both),
    notification("notifications/prompts/list_changed", Direction::ToClient, Both),
    notification("notifications/resources/list_changed", Direction::ToClient, Both),
    notification("notifications/resources/updated", Direction::ToClient, Both),
    notification("notifications/elicitation/complete", Direction::ToClient, Only2025),
    notification("notifications/subscriptions/acknowledged", Direction::ToClient, Only2026),
    notification("notifications/tasks", Direction::ToClient, Only2026),
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
