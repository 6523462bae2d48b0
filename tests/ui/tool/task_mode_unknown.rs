use typed_mcp::prelude::*;

/// Deploys, as a task always.
#[tool(task = "always")]
async fn deploy(service: String) -> String {
    service
}

/// Builds, as a task when it can.
#[tool(task = true)]
async fn build(target: String) -> String {
    target
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![deploy, build]);
}
