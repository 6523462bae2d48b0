use typed_mcp::prelude::*;

/// The answer.
#[tool]
extern "C" fn answer() -> i64 {
    42
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![answer]);
}
