//! In a crate outside the workspace: a nested struct, a `Vec<String>` and a `regex` each fail
//! at their field.
use typed_mcp::elicit::Elicit;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Address {
    city: String,
}

#[derive(Deserialize, JsonSchema, Elicit)]
struct Signup {
    address: Address,
    tags: Vec<String>,
    #[schemars(regex(pattern = "^[a-z]+$"))]
    handle: String,
}

fn main() {}
