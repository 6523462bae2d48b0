//! The field options that schemars and serde now say: each names the attribute to write.
use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Profile {
    #[elicit(title = "Name", description = "Your name.", min_length = 1, max_length = 9)]
    name: String,
    #[elicit(format = "email", default = "a@b.c")]
    email: String,
    #[elicit(minimum = 1, maximum = 5)]
    stars: u8,
}

fn main() {}
