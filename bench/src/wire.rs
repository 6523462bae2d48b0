//! The JSON-RPC frames the driver sends, written by hand: the driver uses no MCP SDK.

use std::fmt::Write;

/// The revision the driver speaks.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// `notifications/initialized`.
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The form content every `elicitation/create` is answered with.
pub const FORM_ANSWER: &str = r#"{"action":"accept","content":{"name":"Ada Lovelace","age":36,"subscribe":true}}"#;

/// What every server's `form` tool returns for [`FORM_ANSWER`], inside its result text.
pub const FORM_RESULT: &str = "Ada Lovelace (36), newsletter: true";

/// What `echo` is asked to send back.
pub const ECHO_TEXT: &str = "The quick brown fox jumps over the lazy dog";

/// The tool a call invokes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `echo {text}`.
    Echo,
    /// `form`, which elicits three fields.
    Form,
}

/// `initialize`, declaring form elicitation.
pub fn initialize_request(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"{PROTOCOL_VERSION}","capabilities":{{"elicitation":{{"form":{{}}}}}},"clientInfo":{{"name":"bench","version":"0.0.0"}}}}}}"#
    )
}

/// A `tools/call`, appended to `out`.
pub fn call_request(out: &mut String, id: u64, tool: Tool) {
    let _ = match tool {
        Tool::Echo => write!(
            out,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{ECHO_TEXT}"}}}}}}"#
        ),
        Tool::Form => {
            write!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"form","arguments":{{}}}}}}"#
            )
        }
    };
}

/// The stateless revision: no `initialize`, no session; every request says which revision it
/// speaks in its `_meta` and in its HTTP headers.
pub const STATELESS_VERSION: &str = "2026-07-28";

/// The revision of a stateless `echo` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revision {
    /// 2026-07-28: the revision, the client's capabilities and identity in `_meta`, mirrored by
    /// `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`; the result says `resultType`.
    Stateless,
    /// 2025-11-25 without a session: a plain `tools/call` and `MCP-Protocol-Version`, which a
    /// server in a stateless mode of that revision serves.
    Sessionless,
}

impl Revision {
    /// Reads `2026-07-28` or `2025-11-25`.
    pub fn parse(text: &str) -> Result<Revision, String> {
        match text {
            STATELESS_VERSION => Ok(Revision::Stateless),
            PROTOCOL_VERSION => Ok(Revision::Sessionless),
            other => Err(format!("unknown revision `{other}`: give {STATELESS_VERSION} or {PROTOCOL_VERSION}")),
        }
    }

    /// The revision's name.
    pub fn version(self) -> &'static str {
        match self {
            Revision::Stateless => STATELESS_VERSION,
            Revision::Sessionless => PROTOCOL_VERSION,
        }
    }

    /// The HTTP header lines (each ending in CRLF) a stateless `echo` call carries besides
    /// `Content-Type` and `Accept`.
    pub fn echo_headers(self) -> String {
        match self {
            Revision::Stateless => {
                format!("MCP-Protocol-Version: {STATELESS_VERSION}\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n")
            }
            Revision::Sessionless => format!("MCP-Protocol-Version: {PROTOCOL_VERSION}\r\n"),
        }
    }
}

/// A stateless `tools/call` of `echo`, appended to `out`.
pub fn stateless_echo(out: &mut String, id: u64, revision: Revision) {
    let _ = match revision {
        Revision::Stateless => write!(
            out,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{ECHO_TEXT}"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"{STATELESS_VERSION}","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"bench","version":"0.0.0"}}}}}}}}"#
        ),
        Revision::Sessionless => {
            call_request(out, id, Tool::Echo);
            Ok(())
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stateless_calls_are_json_with_the_revision_in_meta() {
        let mut frame = String::new();
        stateless_echo(&mut frame, 7, Revision::Stateless);
        let v: serde_json::Value = serde_json::from_str(&frame).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["params"]["name"], "echo");
        assert_eq!(v["params"]["arguments"]["text"], ECHO_TEXT);
        let meta = &v["params"]["_meta"];
        assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], STATELESS_VERSION);
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
        assert!(Revision::Stateless.echo_headers().contains("Mcp-Name: echo\r\n"));

        frame.clear();
        stateless_echo(&mut frame, 8, Revision::Sessionless);
        let v: serde_json::Value = serde_json::from_str(&frame).unwrap();
        assert!(v["params"].get("_meta").is_none());
        assert_eq!(Revision::parse("2025-11-25"), Ok(Revision::Sessionless));
        assert!(Revision::parse("2024-11-05").is_err());
    }
}
