use typed_mcp::prelude::*;

/// Echoes a value.
#[tool]
fn echo<T: ToString>(value: T) -> String {
    value.to_string()
}

/// Echoes a value.
#[tool]
fn echo_where(value: String) -> String
where
    String: Clone,
{
    value
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![echo, echo_where]);
}
