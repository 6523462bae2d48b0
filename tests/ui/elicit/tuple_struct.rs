use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Pair(String, bool);

#[derive(Deserialize, Elicit)]
struct Nothing;

fn main() {}
