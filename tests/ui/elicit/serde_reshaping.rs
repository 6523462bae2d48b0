use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
#[serde(transparent)]
struct Name {
    value: String,
}

#[derive(Deserialize, Elicit)]
#[serde(untagged)]
enum Answer {
    Yes,
    No,
}

#[derive(Deserialize, Elicit)]
#[serde(tag = "kind")]
enum Kind {
    A,
    B,
}

#[derive(Deserialize)]
struct Raw {
    size: String,
}

#[derive(Deserialize, Elicit)]
#[serde(from = "Raw")]
struct Converted {
    size: String,
}

impl From<Raw> for Converted {
    fn from(raw: Raw) -> Self {
        Converted { size: raw.size }
    }
}

fn main() {}
