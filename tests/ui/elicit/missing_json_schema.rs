//! A form that does not derive `JsonSchema`: one error, at the derive.
use typed_mcp::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Name {
    name: String,
}

#[tool]
async fn ask(ctx: Context) -> String {
    match ctx.elicit::<Name>("Name?").await {
        Ok(Elicitation::Accept(n)) => n.name,
        _ => String::new(),
    }
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![ask]);
}
