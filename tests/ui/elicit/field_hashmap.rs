use std::collections::HashMap;

use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Labels {
    name: String,
    labels: HashMap<String, String>,
}

fn main() {}
