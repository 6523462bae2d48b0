//! The gateway's configuration: what the TOML file says, checked.
//!
//! ```toml
//! [gateway]
//! name = "acme-gateway"          # what clients see as the server's name (default "mcp-gateway")
//!
//! [[upstream]]
//! name = "files"                 # also the default prefix, "files_"
//! command = ["files-server", "--root", "/srv"]
//! env = { RUST_LOG = "warn" }
//! start = "eager"                # started with the gateway (default); "lazy": on first use
//! deny = ["delete"]              # tools left out (names as the upstream lists them)
//!
//! [[upstream]]
//! name = "search"
//! url = "https://search.example.com/mcp"
//! bearer = "…"                   # or headers = { "X-Api-Key" = "…" }, or [upstream.oauth]
//! prefix = ""                    # mounted without a prefix
//! allow = ["search", "fetch"]    # only these tools
//! ```
//!
//! A file that does not parse, or that breaks a rule below, is refused with its path, the line
//! and the reason ([`ConfigError`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// The whole configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Settings of the gateway itself.
    #[serde(default)]
    pub gateway: GatewaySettings,
    /// The servers behind the gateway, in the order they are mounted.
    #[serde(default, rename = "upstream")]
    pub upstreams: Vec<UpstreamConfig>,
}

/// The `[gateway]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewaySettings {
    /// The name the gateway gives clients (`serverInfo.name`).
    #[serde(default = "default_name")]
    pub name: String,
    /// The version the gateway gives clients.
    #[serde(default = "default_version")]
    pub version: String,
    /// Instructions for clients' models, if any.
    #[serde(default)]
    pub instructions: Option<String>,
    /// How long a call to an upstream may take, in seconds (default 300).
    #[serde(default = "default_call_timeout")]
    pub call_timeout_secs: u64,
}

impl Default for GatewaySettings {
    fn default() -> Self {
        GatewaySettings {
            name: default_name(),
            version: default_version(),
            instructions: None,
            call_timeout_secs: default_call_timeout(),
        }
    }
}

impl GatewaySettings {
    /// [`call_timeout_secs`](Self::call_timeout_secs) as a duration.
    pub fn call_timeout(&self) -> Duration {
        Duration::from_secs(self.call_timeout_secs)
    }
}

fn default_name() -> String {
    "mcp-gateway".to_owned()
}

fn default_version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

fn default_call_timeout() -> u64 {
    300
}

/// When a stdio upstream is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Start {
    /// With the gateway, which lists its tools before it serves anyone.
    #[default]
    Eager,
    /// On first use: the first list or call that needs it.
    Lazy,
}

/// Which protocol era the gateway speaks to an upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum Era {
    /// Whichever the upstream speaks: `server/discover` first, `initialize` if it does not
    /// answer it (the default).
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// A session opened with `initialize` (revision 2025-11-25 and older).
    #[serde(rename = "2025-11-25")]
    Y2025,
    /// Stateless requests (revision 2026-07-28).
    #[serde(rename = "2026-07-28")]
    Y2026,
}

/// OAuth client credentials for an HTTP upstream that asks for a token.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthCredentials {
    /// The client id registered with the upstream's authorization server.
    pub client_id: String,
    /// Its secret.
    pub client_secret: String,
    /// The scope to ask for, if any (space-separated).
    #[serde(default)]
    pub scope: Option<String>,
}

/// One `[[upstream]]` table: a server behind the gateway.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamConfig {
    /// Its name: unique, and the default prefix (`"<name>_"`).
    pub name: String,
    /// The program and its arguments, for a stdio upstream.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// Environment variables set for the program.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The program's working directory.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The Streamable HTTP endpoint, for an HTTP upstream.
    #[serde(default)]
    pub url: Option<String>,
    /// Headers sent with every HTTP request to the upstream.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A bearer token sent to the upstream.
    #[serde(default)]
    pub bearer: Option<String>,
    /// OAuth client credentials, to get tokens from the upstream's authorization server.
    #[serde(default)]
    pub oauth: Option<OAuthCredentials>,
    /// What its tools and prompts are named with in front (default `"<name>_"`).
    #[serde(default)]
    pub prefix: Option<String>,
    /// Only these tools are relayed (by the upstream's names); all when absent.
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    /// These tools are not relayed (by the upstream's names).
    #[serde(default)]
    pub deny: Vec<String>,
    /// When it is started.
    #[serde(default)]
    pub start: Start,
    /// The protocol era spoken to it.
    #[serde(default)]
    pub era: Era,
}

/// How an upstream is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport<'a> {
    /// A child process, over its stdin and stdout.
    Stdio(&'a [String]),
    /// Streamable HTTP.
    Http(&'a str),
}

impl UpstreamConfig {
    /// A stdio upstream named `name` running `command`.
    pub fn stdio(name: impl Into<String>, command: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let mut config = Self::empty(name.into());
        config.command = Some(command.into_iter().map(Into::into).collect());
        config
    }

    /// An HTTP upstream named `name` at `url`.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        let mut config = Self::empty(name.into());
        config.url = Some(url.into());
        config
    }

    fn empty(name: String) -> Self {
        UpstreamConfig {
            name,
            command: None,
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            bearer: None,
            oauth: None,
            prefix: None,
            allow: None,
            deny: Vec::new(),
            start: Start::Eager,
            era: Era::Auto,
        }
    }

    /// The prefix of its tools and prompts: as configured, else `"<name>_"`.
    pub fn prefix(&self) -> String {
        self.prefix.clone().unwrap_or_else(|| format!("{}_", self.name))
    }

    /// How it is reached (checked by [`Config::check`]: exactly one of `command` and `url`).
    pub fn transport(&self) -> Transport<'_> {
        match (&self.command, &self.url) {
            (Some(command), _) => Transport::Stdio(command),
            (None, Some(url)) => Transport::Http(url),
            (None, None) => Transport::Stdio(&[]),
        }
    }

    /// Whether the upstream tool `name` is relayed (the `allow` and `deny` lists).
    pub fn relays_tool(&self, name: &str) -> bool {
        self.allow.as_ref().is_none_or(|allow| allow.iter().any(|a| a == name)) && !self.deny.iter().any(|d| d == name)
    }

    /// Whether this upstream is started with the gateway.
    pub fn is_eager(&self) -> bool {
        self.start == Start::Eager
    }

    fn problem(&self) -> Option<String> {
        if self.name.is_empty() {
            return Some("an upstream's `name` is empty".into());
        }
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => {
                return Some(format!("upstream `{}` has both `command` and `url`; give one", self.name));
            }
            (None, None) => return Some(format!("upstream `{}` needs `command = [..]` or `url = \"..\"`", self.name)),
            (Some(c), None) if c.is_empty() => return Some(format!("upstream `{}`: `command` is empty", self.name)),
            (Some(_), None) => {
                if !self.headers.is_empty() || self.bearer.is_some() || self.oauth.is_some() {
                    return Some(format!(
                        "upstream `{}`: `headers`, `bearer` and `oauth` are for `url` upstreams",
                        self.name
                    ));
                }
            }
            (None, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Some(format!("upstream `{}`: `url` must start with http:// or https://", self.name));
                }
                if !self.env.is_empty() || self.cwd.is_some() {
                    return Some(format!("upstream `{}`: `env` and `cwd` are for `command` upstreams", self.name));
                }
                if self.bearer.is_some() && self.oauth.is_some() {
                    return Some(format!("upstream `{}` has both `bearer` and `oauth`; give one", self.name));
                }
            }
        }
        if let Some(allow) = &self.allow
            && let Some(both) = allow.iter().find(|a| self.deny.contains(a))
        {
            return Some(format!("upstream `{}`: tool `{both}` is both allowed and denied", self.name));
        }
        None
    }
}

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML, or not what the gateway expects.
    #[error("{path}:{line}:{column}: {reason}")]
    Invalid {
        /// The file (`<config>` when the text did not come from a file).
        path: PathBuf,
        /// The line (from 1).
        line: usize,
        /// The column (from 1).
        column: usize,
        /// What is wrong.
        reason: String,
    },
}

impl Config {
    /// Reads and checks the file at `path`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Read`] when it cannot be read; [`ConfigError::Invalid`] naming the line
    /// and the reason when it is not a valid configuration.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.into(), source })?;
        Self::parse(&text, path)
    }

    /// Parses and checks `text`; errors name `path` (which is not read).
    ///
    /// # Errors
    ///
    /// [`ConfigError::Invalid`] naming the line and the reason.
    pub fn parse(text: &str, path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let invalid = |offset: usize, reason: String| {
            let (line, column) = line_column(text, offset);
            ConfigError::Invalid { path: path.into(), line, column, reason }
        };
        let config: Config = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            invalid(offset, e.message().trim().to_owned())
        })?;
        if let Err((index, reason)) = config.check() {
            return Err(invalid(upstream_offset(text, index), reason));
        }
        Ok(config)
    }

    /// Checks the rules a parsed configuration must follow: each upstream reached one way,
    /// names unique, no tool both allowed and denied. On failure, the index of the upstream
    /// at fault and the reason.
    ///
    /// # Errors
    ///
    /// The first upstream that breaks a rule, by its index, and the rule.
    pub fn check(&self) -> Result<(), (usize, String)> {
        for (i, upstream) in self.upstreams.iter().enumerate() {
            if let Some(problem) = upstream.problem() {
                return Err((i, problem));
            }
            if self.upstreams[..i].iter().any(|u| u.name == upstream.name) {
                return Err((i, format!("two upstreams are named `{}`", upstream.name)));
            }
        }
        Ok(())
    }
}

/// The line and column (from 1) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Where the `index`-th `[[upstream]]` table starts in `text` (the start of the text when not
/// found).
fn upstream_offset(text: &str, index: usize) -> usize {
    let mut offset = 0;
    let mut seen = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("[[upstream]]") {
            if seen == index {
                return offset;
            }
            seen += 1;
        }
        offset += line.len();
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        Config::parse(text, "gw.toml").unwrap_err().to_string()
    }

    #[test]
    fn a_stdio_and_an_http_upstream_are_read_with_their_defaults() {
        let config = Config::parse(
            "[[upstream]]\nname = \"files\"\ncommand = [\"srv\", \"-v\"]\n\n[[upstream]]\nname = \"web\"\nurl = \"http://h/mcp\"\nprefix = \"\"\ndeny = [\"x\"]\n",
            "gw.toml",
        )
        .unwrap();
        assert_eq!(config.upstreams.len(), 2);
        assert_eq!(config.upstreams[0].prefix(), "files_");
        assert_eq!(config.upstreams[0].transport(), Transport::Stdio(&["srv".to_owned(), "-v".to_owned()]));
        assert_eq!(config.upstreams[1].prefix(), "");
        assert_eq!(config.upstreams[1].transport(), Transport::Http("http://h/mcp"));
        assert!(!config.upstreams[1].relays_tool("x"));
        assert!(config.upstreams[1].relays_tool("y"));
        assert_eq!(config.gateway.name, "mcp-gateway");
    }

    #[test]
    fn a_syntax_error_names_the_file_and_the_line() {
        let message = error("[[upstream]]\nname = \"a\"\ncommand = [\"x\"\n");
        assert!(message.starts_with("gw.toml:3:"), "{message}");
    }

    #[test]
    fn an_unknown_key_is_refused_at_its_line() {
        let message = error("[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\ncomand = [\"y\"]\n");
        assert!(message.starts_with("gw.toml:4:"), "{message}");
        assert!(message.contains("comand"), "{message}");
    }

    #[test]
    fn a_rule_broken_names_the_upstream_table() {
        let message = error(
            "[gateway]\nname = \"g\"\n\n[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\n\n[[upstream]]\nname = \"a\"\nurl = \"http://h/mcp\"\n",
        );
        assert_eq!(message, "gw.toml:8:1: two upstreams are named `a`");
        let message = error("[[upstream]]\nname = \"a\"\n");
        assert!(message.contains("needs `command"), "{message}");
        let message = error("[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\nurl = \"http://h\"\n");
        assert!(message.contains("both `command` and `url`"), "{message}");
        let message = error("[[upstream]]\nname = \"a\"\nurl = \"ftp://h\"\n");
        assert!(message.contains("http://"), "{message}");
        let message = error("[[upstream]]\nname = \"a\"\ncommand = [\"x\"]\nallow = [\"t\"]\ndeny = [\"t\"]\n");
        assert!(message.contains("both allowed and denied"), "{message}");
    }
}
