//! Mistakes inside a derive must not make the type unusable elsewhere: the derive still
//! provides its traits, so the only errors are the ones below, not "trait not implemented"
//! wherever the type is used.

use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
enum Plan {
    Free,
    Pro(u32),
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Account {
    password: String,
    plan: Plan,
    plans: Vec<Plan>,
}

#[tool]
async fn open(ctx: Context) -> String {
    match ctx.elicit::<Account>("Account?").await {
        Ok(Elicitation::Accept(account)) => format!("{account:?}"),
        _ => String::new(),
    }
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![open]);
}
