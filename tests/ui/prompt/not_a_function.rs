use mcp_core::prelude::*;

#[prompt]
struct Review;

fn main() {}
