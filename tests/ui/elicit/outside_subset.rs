//! schemars attributes whose keys MCP forms cannot carry are errors at the attribute.
use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
enum Tag {
    Red,
    Blue,
}

#[derive(Deserialize, JsonSchema, Elicit)]
struct Signup {
    #[schemars(regex(pattern = "^[a-z]+$"))]
    handle: String,
    #[schemars(contains(pattern = "@"))]
    contact: String,
    #[schemars(inner(length(min = 1)))]
    tags: Vec<Tag>,
    #[schemars(extend("pattern" = "^[0-9]+$", "format" = "email"))]
    code: String,
    #[validate(ip)]
    address: String,
    #[garde(pattern(r"^\d+$"))]
    zip: String,
}

fn main() {}
