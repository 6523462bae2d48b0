use typed_mcp::prelude::*;

#[resource("test://x")]
struct Readme;

fn main() {}
