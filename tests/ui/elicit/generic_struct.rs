use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Wrapper<T> {
    value: T,
}

fn main() {}
