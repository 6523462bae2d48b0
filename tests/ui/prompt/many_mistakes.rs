use typed_mcp::prelude::*;

/// Reviews.
///
/// # Arguments
/// * `ghost` - Not an argument.
#[prompt(nmae = "x", title = 3)]
unsafe fn review<T>(code: &str, #[arg(rename = "")] other: String) -> String {
    String::new()
}

fn main() {}
