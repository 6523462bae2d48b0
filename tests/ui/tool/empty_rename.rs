use typed_mcp::prelude::*;

/// Echoes text.
#[tool]
fn echo(#[arg(rename = "")] text: String, #[arg(rename = "count", rename = "n")] times: usize) -> String {
    text.repeat(times)
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![echo]);
}
