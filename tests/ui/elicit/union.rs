use mcp_core::prelude::*;

#[derive(Elicit)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
