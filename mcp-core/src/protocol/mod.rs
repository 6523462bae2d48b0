//! Wire types only: the JSON-RPC envelope, MCP messages, error codes and the method table
//! ([`methods`]). Nothing here does I/O.

pub mod completion;
pub mod elicitation;
pub mod era_2026;
pub mod jsonrpc;
pub mod logging;
pub mod methods;
pub mod oauth;
pub mod prompts;
pub mod resources;
pub mod sampling;
pub(crate) mod scan;
pub mod skills;
pub mod subscriptions;
pub mod tasks;
pub mod types;
pub(crate) mod view;

/// Decodes standard or URL-safe base64, padded or not (as a peer may write it back).
pub(crate) fn decode_base64_lenient(text: &str) -> Option<Vec<u8>> {
    use ::base64::Engine as _;
    use ::base64::alphabet;
    use ::base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const CONFIG: GeneralPurposeConfig = GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true);
    const STANDARD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, CONFIG);
    const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, CONFIG);
    STANDARD.decode(text).or_else(|_| URL_SAFE.decode(text)).ok()
}

pub use completion::*;
pub use elicitation::*;
pub use era_2026::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION, META_SERVER_INFO,
    PROTOCOL_VERSION_2026_07_28, supported_versions,
};
pub use jsonrpc::{ErrorObject, Message, MethodName, Notification, Request, RequestId, Response, codes};
pub use logging::*;
pub use methods::Method;
pub use oauth::OAuthError;
pub use prompts::*;
pub use resources::*;
pub use sampling::*;
pub use subscriptions::*;
pub use tasks::{TASKS_EXTENSION, Task, TaskStatus, TaskSupport, ToolExecution};
pub use types::*;

#[cfg(test)]
mod tests {
    #[test]
    fn base64_is_read_in_either_alphabet_with_or_without_padding() {
        for (plain, coded) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE=")]
        {
            assert_eq!(super::decode_base64_lenient(coded).unwrap(), plain.as_bytes());
            assert_eq!(super::decode_base64_lenient(coded.trim_end_matches('=')).unwrap(), plain.as_bytes());
        }
        assert_eq!(super::decode_base64_lenient("-_8").unwrap(), [0xfb, 0xff]);
        assert_eq!(super::decode_base64_lenient("+/8=").unwrap(), [0xfb, 0xff]);
        assert_eq!(super::decode_base64_lenient("a"), None);
        assert_eq!(super::decode_base64_lenient("a*bc"), None);
    }
}
