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
