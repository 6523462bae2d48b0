use typed_mcp::prelude::*;

/// Reviews.
///
/// # Arguments
/// * `code` - The code.
/// * `style` - A style that is not an argument.
#[prompt]
fn review(code: String) -> String {
    code
}

fn main() {}
