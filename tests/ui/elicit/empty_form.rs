use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Nothing {}

#[derive(Deserialize, Elicit)]
struct AllSkipped {
    #[serde(skip)]
    cache: String,
}

#[derive(Deserialize, Elicit)]
enum NoOptions {}

#[derive(Deserialize, Elicit)]
enum AllSkippedOptions {
    #[serde(skip)]
    Hidden,
}

fn main() {}
