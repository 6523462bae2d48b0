//! A valid form compiles without warnings, even with strict lints, local items named like
//! the standard ones, and every option and serde attribute the derive reads.

#![deny(warnings, missing_docs, unused_qualifications)]

use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

/// Shadows the prelude's `Result`: generated code must not use it.
#[allow(dead_code)]
type Result<T> = std::result::Result<T, ()>;
/// Shadows the prelude's `Option`.
#[allow(dead_code)]
struct Option;
/// Shadows `core`.
#[allow(dead_code)]
mod core {}

/// A size.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "kebab-case")]
#[elicit(style = "titled")]
pub enum Size {
    /// Small
    Small,
    /// Extra large
    #[elicit(title = "XL")]
    ExtraLarge,
    /// Never offered.
    #[serde(skip)]
    Hidden,
}

fn default_count() -> u8 {
    1
}

/// An order.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Order {
    /// Who orders.
    #[schemars(title = "Name", length(min = 1, max = 40))]
    pub customer_name: String,
    /// Where to send the receipt.
    #[schemars(email)]
    pub email: std::option::Option<String>,
    /// How many.
    #[serde(default = "default_count")]
    #[schemars(range(min = 1, max = 9))]
    pub count: u8,
    /// Which size.
    #[schemars(extend("default" = "small"))]
    pub size: Size,
    /// Extras.
    #[schemars(length(min = 0, max = 2))]
    #[elicit(style = "plain")]
    pub extras: Vec<Size>,
    /// Gift wrap.
    #[serde(default)]
    pub gift: bool,
    /// The password reset link may be sent.
    #[elicit(not_secret)]
    pub password_reset: bool,
    /// A raw identifier.
    #[serde(rename = "kind")]
    pub r#type: std::option::Option<Size>,
    /// Filled in by the server.
    #[serde(skip)]
    pub id: u64,
}

/// Asks for an order.
#[tool]
async fn order(ctx: Context) -> String {
    match ctx.elicit::<Order>("Your order?").await {
        Ok(Elicitation::Accept(order)) => format!("{order:?}"),
        _ => String::new(),
    }
}

fn main() {
    let _ = Server::builder("t", "1").tools(tools![order]);
    let schema = Order::form_schema().unwrap().to_value();
    assert_eq!(schema["required"], serde_json::json!(["customerName", "extras", "passwordReset"]));
    let _ = Size::Hidden;
}
