use mcp_core::prelude::*;

#[resource("test://x")]
struct Readme;

fn main() {}
