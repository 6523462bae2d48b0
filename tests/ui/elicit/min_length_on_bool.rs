use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Consent {
    #[elicit(min_length = 1)]
    agreed: bool,
}

fn main() {}
