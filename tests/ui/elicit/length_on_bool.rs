use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Consent {
    #[schemars(length(min = 1))]
    agreed: bool,
}

fn main() {}
