use typed_mcp::prelude::*;

/// Reads memory.
#[tool]
unsafe fn peek(address: u64) -> u64 {
    address
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![peek]);
}
