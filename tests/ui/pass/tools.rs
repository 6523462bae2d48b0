//! Tools written the way a documented library would write them: generated code must add no
//! warning under `#![deny(warnings, missing_docs)]`, nor any clippy pedantic lint.
#![deny(warnings, missing_docs)]
#![deny(clippy::pedantic)]

/// Public tools, in a documented module.
pub mod calc {
    use typed_mcp::prelude::*;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// A running total shared by the tools that take `State<Totals>`.
    #[derive(Debug, Default)]
    pub struct Totals {
        /// Calls so far.
        pub calls: std::sync::atomic::AtomicU64,
    }

    /// The sum and how it was made.
    #[derive(Debug, Serialize, Deserialize, JsonSchema)]
    pub struct Sum {
        /// The total.
        pub total: i64,
        /// How many addends there were.
        pub count: usize,
    }

    /// Adds two integers.
    ///
    /// # Arguments
    /// * `a` - The first addend.
    /// * `b` - The second addend.
    #[tool(read_only, idempotent)]
    pub async fn add(a: i64, b: i64) -> i64 {
        std::future::ready(a + b).await
    }

    /// Adds a list of integers, optionally starting from a base.
    #[must_use]
    #[tool(title = "Sum", read_only = true, open_world = false)]
    pub fn sum(values: Vec<i64>, #[arg(description = "Where to start.")] base: Option<i64>) -> Json<Sum> {
        Json(Sum { total: base.unwrap_or_default() + values.iter().sum::<i64>(), count: values.len() })
    }

    /// Describes a value of some kind.
    ///
    /// # Arguments
    /// * `type` - The kind of value.
    #[must_use]
    #[tool(name = "describe")]
    pub fn describe_value(r#type: String, #[arg(rename = "value")] v: Option<String>) -> String {
        format!("{type}: {}", v.unwrap_or_default(), type = r#type)
    }

    /// Counts calls, using the server's shared state and the request context.
    ///
    /// # Errors
    /// When the request was cancelled.
    #[tool(destructive = false)]
    pub async fn count(totals: State<Totals>, ctx: Context) -> Result<u64, String> {
        std::future::ready(()).await;
        if ctx.is_cancelled() {
            return Err("cancelled".to_owned());
        }
        Ok(totals.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1)
    }

    /// Does nothing, visibly to this crate only.
    #[tool]
    pub(crate) fn noop() {}

    /// The answer, from a `const fn` (callable at run time like any other).
    #[must_use]
    #[tool]
    pub const fn answer() -> i64 {
        42
    }

    /// A private tool.
    #[tool]
    fn private_echo(text: String) -> String {
        text
    }

    /// Every tool of this module.
    #[must_use]
    pub fn all() -> Vec<ToolDef> {
        tools![add, sum, describe_value, count, noop, answer, private_echo]
    }
}

/// A toolbox over any displayable prefix.
pub mod prefixes {
    use typed_mcp::prelude::*;

    /// Prefixes texts.
    #[derive(Debug)]
    pub struct Prefixer<P> {
        /// The prefix.
        pub prefix: P,
    }

    #[toolbox]
    impl<P> Prefixer<P>
    where
        P: std::fmt::Display + Send + Sync + 'static,
    {
        /// Prefixes a text.
        ///
        /// # Arguments
        /// * `text` - The text to prefix.
        #[tool(read_only)]
        pub async fn prefix(&self, text: String) -> String {
            std::future::ready(format!("{}{text}", self.prefix)).await
        }

        /// Suffixes a text with the prefix, reversed roles.
        #[tool]
        pub fn suffix(&self, text: String, times: Option<usize>) -> String {
            format!("{text}{}", self.prefix.to_string().repeat(times.unwrap_or(1)))
        }

        /// The separator used between parts, not needing the toolbox.
        #[must_use]
        #[tool]
        pub fn separator() -> &'static str {
            ": "
        }

        /// Not a tool.
        #[must_use]
        pub fn plain(&self) -> String {
            self.prefix.to_string()
        }
    }
}

fn main() {
    let server = typed_mcp::Server::builder("pass", "1.0.0")
        .tools(calc::all())
        .toolbox(prefixes::Prefixer { prefix: ">" })
        .state(calc::Totals::default())
        .build()
        .expect("the server builds");
    let names: Vec<String> = server.tools().tools.into_iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        ["add", "sum", "describe", "count", "noop", "answer", "private_echo", "prefix", "suffix", "separator"]
    );
    assert_eq!(prefixes::Prefixer { prefix: 1 }.plain(), "1");
}
