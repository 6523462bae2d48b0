//! `server/discover` (2026 era): the revisions the server speaks, its capabilities and its
//! instructions.

use super::ServerInner;
use super::handling::to_raw;
use crate::engine::HandlerResult;
use crate::protocol::era_2026::DiscoverResult;
use crate::protocol::supported_versions;

/// The `server/discover` result (the server's identity is added to `_meta` with every
/// 2026-era result).
pub(crate) fn discover(server: &ServerInner) -> HandlerResult {
    to_raw(&DiscoverResult {
        supported_versions: supported_versions().into_iter().map(str::to_owned).collect(),
        capabilities: server.capabilities.clone(),
        server_info: None,
        instructions: server.instructions.clone(),
        meta: None,
    })
}
