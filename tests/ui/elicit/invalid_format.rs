use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Server {
    #[schemars(extend("format" = "hostname"))]
    address: String,
}

fn main() {}
