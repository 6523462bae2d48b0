use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Wrapper<T> {
    value: T,
}

fn main() {}
