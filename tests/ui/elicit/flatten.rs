use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize)]
struct Contact {
    email: String,
}

#[derive(Deserialize, Elicit)]
struct Profile {
    name: String,
    #[serde(flatten)]
    contact: Contact,
}

fn main() {}
