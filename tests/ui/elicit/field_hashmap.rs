use std::collections::HashMap;

use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Labels {
    name: String,
    labels: HashMap<String, String>,
}

fn main() {}
