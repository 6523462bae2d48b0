//! Asking for a type that is not a form: `Elicit` explains what to derive.
use typed_mcp::prelude::*;
use serde::Deserialize;

#[derive(Deserialize)]
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

fn main() {}
