use typed_mcp::prelude::*;

/// A tool whose body does not parse: only the compiler's syntax error is reported, and the
/// tool still registers.
#[tool]
fn answer(question: String) -> i64 {
    let length = question.len() as i64;
    length +
}

struct Calc;

#[toolbox]
impl Calc {
    /// A method whose body does not parse.
    #[tool]
    fn add(&self, a: i64, b: i64) -> i64 {
        let sum = ;
        sum
    }
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![answer]).toolbox(Calc);
}
