use typed_mcp::prelude::*;

#[prompt]
struct Review;

fn main() {}
