use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Inner {
    x: i32,
}

#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct Everything {
    #[schemars(extend("format" = "phone"))]
    #[elicit(color = "red")]
    phone: String,
    #[schemars(length(min = 3))]
    count: u32,
    password: String,
    #[schemars(range(max = 10))]
    inner: Inner,
    #[serde(rename = "phone")]
    other_phone: String,
    #[schemars(length(min = 3, max = 1))]
    flag: bool,
}

fn main() {}
