use typed_mcp::prelude::*;

/// Does too much.
///
/// # Arguments
/// * `missing` - Not an argument.
#[tool(name = "do it", color = "red", destructive = 1)]
fn busy<T>((a, b): (i64, i64), #[arg(rename = "v")] value: T, v: String, #[arg(kind = "x")] w: i64) -> String {
    let _ = (a, b, value, v, w);
    String::new()
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![busy]);
}
