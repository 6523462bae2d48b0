use typed_mcp::prelude::*;

/// Not deserializable: cannot carry a tool's arguments.
struct Query {
    text: String,
}

/// Searches.
#[tool]
fn search(query: Params<Query>) -> String {
    query.0.text.clone()
}

fn main() {}
