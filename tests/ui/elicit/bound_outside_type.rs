use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Settings {
    #[elicit(maximum = 1000)]
    level: u8,
    #[elicit(minimum = -1, maximum = 10)]
    count: Option<u32>,
    #[elicit(minimum = -5)]
    size: usize,
    // Fine: within what the type holds.
    #[elicit(minimum = 1, maximum = 100)]
    percent: u8,
    #[elicit(minimum = -1.5)]
    ratio: f32,
}

fn main() {}
