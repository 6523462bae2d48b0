//! Shared helpers for the integration tests.

pub mod gateway;
pub mod interop;
pub mod programs;
pub mod provision;
pub mod serve;
pub mod stdio;

/// The code blocks of the READMEs (the repository's and each published package's), compiled
/// and run as doctests so they cannot rot. They live here, not in the packages: a published
/// package's docs may not include files from outside it.
#[cfg(doctest)]
pub mod readmes {
    #[doc = include_str!("../../README.md")]
    pub struct Repository;
    #[doc = include_str!("../../mcp-core/README.md")]
    pub struct TypedMcp;
    #[doc = include_str!("../../mcp-macros/README.md")]
    pub struct TypedMcpMacros;
    #[doc = include_str!("../../mcp-redis/README.md")]
    pub struct TypedMcpRedis;
}
