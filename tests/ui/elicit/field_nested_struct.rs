use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Address {
    street: String,
    city: String,
}

#[derive(Deserialize, JsonSchema, Elicit)]
struct Signup {
    name: String,
    address: Address,
}

fn main() {}
