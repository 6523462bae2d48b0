//! The conformance server: everything the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) asks a server for, under the exact names its server
//! scenarios call.
//!
//! Run it with `cargo run -p tests --bin conformance`; it always speaks Streamable HTTP, at
//! `http://127.0.0.1:3001/mcp` unless `--port N` (or `PORT`) says otherwise. Then point the
//! suite at it:
//!
//! ```sh
//! npx @modelcontextprotocol/conformance server --url http://127.0.0.1:3001/mcp
//! ```
//!
//! `tests/tests/conformance.rs` does exactly that in `cargo test`, against the pinned suite in
//! `tests/conformance/`: for revisions 2025-11-25 and 2026-07-28, which the same tools serve
//! (a question to the user or the client's model is a request of the server's in a 2025-era
//! session, an `input_required` result in the 2026 era).

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use typed_mcp::prelude::*;
use typed_mcp::protocol::{CreateMessageParams, JsonObject, SamplingMessage};
use typed_mcp::server::{ChangeError, ClientRequestError};
use typed_mcp::tool::{ToolCall, ToolDef};

/// Where the server listens when no port is given.
const DEFAULT_PORT: u16 = 3001;

/// A 1×1 red PNG.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";

/// A WAV file of eight silent samples (8 kHz, mono, 8-bit).
const SILENT_WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

// ---- Content of every kind ----

/// Returns a simple text response.
#[tool(read_only)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns an image (a 1×1 red PNG).
#[tool(read_only)]
fn test_image_content() -> Content {
    Content::image(RED_PIXEL_PNG, "image/png")
}

/// Returns audio (a short silent WAV).
#[tool(read_only)]
fn test_audio_content() -> Content {
    Content::audio(SILENT_WAV, "audio/wav")
}

/// Returns an embedded text resource.
#[tool(read_only)]
fn test_embedded_resource() -> Content {
    Content::embedded_text(
        "test://embedded-resource",
        Some("text/plain".into()),
        "This is an embedded resource content.",
    )
}

/// Returns text, an image and an embedded resource in one result.
#[tool(read_only)]
fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        Content::image(RED_PIXEL_PNG, "image/png"),
        Content::embedded_text(
            "test://mixed-content-resource",
            Some("application/json".into()),
            json!({"test": "data", "value": 123}).to_string(),
        ),
    ]
}

/// Always fails, as a tool error (`isError: true`).
#[tool(read_only)]
fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".into())
}

/// Reports progress 0, 50 and 100 (of 100), 50 ms apart, when the client asks for progress.
#[tool(read_only)]
async fn test_tool_with_progress(ctx: Context) -> Result<String, String> {
    for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let message = format!("Completed step {} of 3", i + 1);
        ctx.progress(progress, Some(100.0), Some(&message)).await.map_err(|e| e.to_string())?;
    }
    Ok("Progress test completed".into())
}

/// Sends three `info` log messages, 50 ms apart, while it runs.
#[tool(read_only)]
async fn test_tool_with_logging(ctx: Context) -> &'static str {
    ctx.info("Tool execution started").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.info("Tool processing data").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.info("Tool execution completed").await;
    "Logging test completed"
}

/// Asks the client's model to answer a prompt.
///
/// # Arguments
/// * `prompt` - The prompt to send to the LLM.
#[tool]
async fn test_sampling(ctx: Context, prompt: String) -> Result<String, typed_mcp::server::ClientRequestError> {
    let answer = ctx.sample(CreateMessageParams::new(vec![SamplingMessage::user(prompt)], 100)).await?;
    Ok(format!("LLM response: {}", answer.text().unwrap_or_default()))
}

// ---- Resources ----

/// A static text resource.
#[resource("test://static-text", name = "static-text", mime_type = "text/plain")]
fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (a 1×1 red PNG).
#[resource("test://static-binary", name = "static-binary", mime_type = "image/png")]
fn static_binary() -> ResourceContents {
    ResourceContents::Blob {
        uri: "test://static-binary".into(),
        mime_type: Some("image/png".into()),
        blob: RED_PIXEL_PNG.into(),
        meta: None,
    }
}

/// A resource clients subscribe to.
#[resource("test://watched-resource", name = "watched-resource", mime_type = "text/plain")]
fn watched_resource() -> &'static str {
    "Watched resource content."
}

/// Data for one id, from a URI template.
#[resource("test://template/{id}/data", name = "template-data", mime_type = "application/json")]
fn template_data(id: String) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

// ---- Prompts ----

/// A simple prompt without arguments.
#[prompt]
fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with two arguments.
///
/// # Arguments
/// * `arg1` - First test argument.
/// * `arg2` - Second test argument.
#[prompt]
fn test_prompt_with_arguments(arg1: String, arg2: String) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// A prompt embedding a resource.
///
/// # Arguments
/// * `resourceUri` - URI of the resource to embed.
#[prompt]
fn test_prompt_with_embedded_resource(#[arg(rename = "resourceUri")] uri: String) -> Vec<PromptMessage> {
    vec![
        PromptMessage::resource(
            Role::User,
            ResourceContents::text(uri, Some("text/plain".into()), "Embedded resource content for testing."),
        ),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// A prompt with an image.
#[prompt]
fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(Role::User, Content::image(RED_PIXEL_PNG, "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ]
}

// ---- Elicitation ----

/// What `test_elicitation` asks for.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct UserInfo {
    /// User's response
    #[elicit(not_secret)]
    username: String,
    /// User's email address
    email: String,
}

/// How an elicitation ended, as the suite's reference texts spell it.
fn action<T>(answer: &Elicitation<T>) -> &'static str {
    match answer {
        Elicitation::Accept(_) => "accept",
        Elicitation::Decline => "decline",
        Elicitation::Cancel => "cancel",
    }
}

/// Asks the user for a username and an email address.
///
/// # Arguments
/// * `message` - The message to show the user.
#[tool]
async fn test_elicitation(ctx: Context, message: String) -> Result<String, ElicitError> {
    let answer = ctx.elicit::<UserInfo>(message).await?;
    let content = match &answer {
        Elicitation::Accept(u) => json!({"username": u.username, "email": u.email}),
        _ => json!({}),
    };
    Ok(format!("User response: action={}, content={content}", action(&answer)))
}

/// An account status: a single choice with a default (SEP-1034).
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
#[elicit(style = "plain")]
enum Status {
    Active,
    Inactive,
    Pending,
}

/// A form whose fields of every primitive kind have defaults (SEP-1034).
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Defaults {
    /// User name
    #[schemars(extend("default" = "John Doe"))]
    name: String,
    /// User age
    #[schemars(extend("default" = 30))]
    age: i64,
    /// User score
    #[schemars(extend("default" = 95.5))]
    score: f64,
    /// User status
    #[schemars(extend("default" = "active"))]
    status: Status,
    /// Verification status
    #[schemars(extend("default" = true))]
    verified: bool,
}

/// Asks for a form whose every field has a default value (SEP-1034).
#[tool]
async fn test_elicitation_sep1034_defaults(ctx: Context) -> Result<String, ElicitError> {
    let answer = ctx.elicit::<Defaults>("Please review and update the form fields with defaults").await?;
    let content = match &answer {
        Elicitation::Accept(d) => json!({
            "name": d.name,
            "age": d.age,
            "score": d.score,
            "status": format!("{:?}", d.status).to_lowercase(),
            "verified": d.verified,
        }),
        _ => json!({}),
    };
    Ok(format!("Elicitation completed: action={}, content={content}", action(&answer)))
}

/// Options without titles: a plain `enum`.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
#[elicit(style = "plain")]
enum Untitled {
    Option1,
    Option2,
    Option3,
}

/// Options with titles: `oneOf` for a single choice, `anyOf` for several.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
#[elicit(style = "titled")]
enum Titled {
    #[elicit(title = "First Option")]
    Value1,
    #[elicit(title = "Second Option")]
    Value2,
    #[elicit(title = "Third Option")]
    Value3,
}

/// The same values titled for a multiple choice.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
#[elicit(style = "titled")]
enum TitledChoice {
    #[elicit(title = "First Choice")]
    Value1,
    #[elicit(title = "Second Choice")]
    Value2,
    #[elicit(title = "Third Choice")]
    Value3,
}

/// Options titled the legacy way: `enum` plus `enumNames`.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
#[elicit(style = "enum_names")]
enum Legacy {
    #[elicit(title = "Option One")]
    Opt1,
    #[elicit(title = "Option Two")]
    Opt2,
    #[elicit(title = "Option Three")]
    Opt3,
}

/// One field for each of the five enum spellings of SEP-1330.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct EnumForm {
    /// Choose an option
    untitled_single: Untitled,
    /// Choose a titled option
    titled_single: Titled,
    /// Choose a legacy option
    legacy_enum: Legacy,
    /// Choose multiple options
    untitled_multi: Vec<Untitled>,
    /// Choose multiple titled options
    titled_multi: Vec<TitledChoice>,
}

/// Asks for a form with every enum spelling (SEP-1330).
#[tool]
async fn test_elicitation_sep1330_enums(ctx: Context) -> Result<String, ElicitError> {
    let answer = ctx.elicit::<EnumForm>("Please select options from the enum fields").await?;
    let content = match &answer {
        Elicitation::Accept(f) => json!({
            "untitledSingle": format!("{:?}", f.untitled_single).to_lowercase(),
            "titledSingle": format!("{:?}", f.titled_single).to_lowercase(),
            "legacyEnum": format!("{:?}", f.legacy_enum).to_lowercase(),
            "untitledMulti": f.untitled_multi.iter().map(|o| format!("{o:?}").to_lowercase()).collect::<Vec<_>>(),
            "titledMulti": f.titled_multi.iter().map(|o| format!("{o:?}").to_lowercase()).collect::<Vec<_>>(),
        }),
        _ => json!({}),
    };
    Ok(format!("Elicitation completed: action={}, content={content}", action(&answer)))
}

// ---- Multi round-trip requests (2026-07-28) ----
//
// Written like any tool that asks the user or the client's model: in a 2025-era session each
// question is a request to the client; in the 2026 era it becomes an `input_required` result and
// the client's retry runs the tool again with the answers (see `typed_mcp::multi_round`).

/// A name.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct PersonName {
    /// Your name
    name: String,
}

/// A yes or no.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Confirmation {
    /// Whether to go on
    ok: bool,
}

/// A favourite colour.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct FavoriteColor {
    /// Your favorite color
    color: String,
}

/// What a prompt should be about.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct PromptContext {
    /// The context to use
    context: String,
}

/// The accepted content of an elicitation, or what the user did instead.
fn accepted<T>(answer: Elicitation<T>) -> Result<T, String> {
    match answer {
        Elicitation::Accept(value) => Ok(value),
        other => Err(format!("the user chose to {}", action(&other))),
    }
}

/// Asks the client's model one question.
async fn ask_model(ctx: &Context, question: &str, max_tokens: u32) -> Result<String, ClientRequestError> {
    let answer = ctx.sample(CreateMessageParams::new(vec![SamplingMessage::user(question)], max_tokens)).await?;
    Ok(answer.text().unwrap_or_default())
}

/// Asks the user for their name, and greets them.
#[tool]
async fn test_input_required_result_elicitation(ctx: Context) -> Result<String, String> {
    let answer = ctx.elicit::<PersonName>("What is your name?").key("user_name").await.map_err(|e| e.to_string())?;
    Ok(format!("Hello, {}!", accepted(answer)?.name))
}

/// Asks the client's model for the capital of France.
#[tool]
async fn test_input_required_result_sampling(ctx: Context) -> Result<String, ClientRequestError> {
    Ok(format!("The model says: {}", ask_model(&ctx, "What is the capital of France?", 100).await?))
}

/// Asks the client for its roots.
#[tool]
async fn test_input_required_result_list_roots(ctx: Context) -> Result<String, ClientRequestError> {
    let roots = ctx.roots().await?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("The client has {} root(s): {}", roots.len(), uris.join(", ")))
}

/// Asks for a confirmation; the answer reaches the tool only through the sealed `requestState`
/// of the retry.
#[tool]
async fn test_input_required_result_request_state(ctx: Context) -> Result<String, String> {
    let answer = ctx.elicit::<Confirmation>("Please confirm").key("confirm").await.map_err(|e| e.to_string())?;
    Ok(format!("state-ok: confirmed={}", accepted(answer)?.ok))
}

/// Asks the user, the client's model and the client at once: one round with three input
/// requests.
#[tool]
async fn test_input_required_result_multiple_inputs(ctx: Context) -> Result<String, String> {
    let (name, greeting, roots) = tokio::join!(
        ctx.elicit::<PersonName>("What is your name?").key("user_name"),
        ask_model(&ctx, "Generate a greeting", 50),
        ctx.roots(),
    );
    let name = accepted(name.map_err(|e| e.to_string())?)?.name;
    let greeting = greeting.map_err(|e| e.to_string())?;
    let roots = roots.map_err(|e| e.to_string())?;
    Ok(format!("{greeting} {name} ({} root(s))", roots.len()))
}

/// Asks one question, then a second one: two rounds before the result.
#[tool]
async fn test_input_required_result_multi_round(ctx: Context) -> Result<String, String> {
    let name = ctx.elicit::<PersonName>("Step 1: What is your name?").key("step1").await.map_err(|e| e.to_string())?;
    let name = accepted(name)?.name;
    let color = ctx
        .elicit::<FavoriteColor>("Step 2: What is your favorite color?")
        .key("step2")
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("{name} likes {}", accepted(color)?.color))
}

/// Asks for a confirmation whose sealed state the client may not alter.
#[tool]
async fn test_input_required_result_tampered_state(ctx: Context) -> Result<String, String> {
    let answer = ctx.elicit::<Confirmation>("Please confirm").key("confirm").await.map_err(|e| e.to_string())?;
    Ok(format!("confirmed={}", accepted(answer)?.ok))
}

/// Asks only what the client declared it can answer: the user when it elicits, its model when
/// it samples.
#[tool]
async fn test_input_required_result_capabilities(ctx: Context) -> Result<String, String> {
    let user = async {
        if !ctx.can_elicit() {
            return Ok(None);
        }
        let answer = ctx.elicit::<PersonName>("What is your name?").key("user_name").await;
        answer.map_err(|e| e.to_string()).and_then(accepted).map(|p| Some(p.name))
    };
    let model = async {
        if !ctx.can_sample() {
            return Ok(None);
        }
        ask_model(&ctx, "Generate a greeting", 50).await.map(Some).map_err(|e| e.to_string())
    };
    let (user, model) = tokio::join!(user, model);
    Ok(format!("user: {:?}, model: {:?}", user?, model?))
}

/// A prompt that asks the user what it should be about.
#[prompt]
async fn test_input_required_result_prompt(ctx: Context) -> Result<Vec<PromptMessage>, String> {
    let answer = ctx
        .elicit::<PromptContext>("What context should the prompt use?")
        .key("user_context")
        .await
        .map_err(|e| e.to_string())?;
    Ok(vec![PromptMessage::user(format!("Answer with this context in mind: {}", accepted(answer)?.context))])
}

// ---- Diagnostics of the 2026-07-28 scenarios ----

/// Needs the client's model: a client that did not declare `sampling` gets
/// `MissingRequiredClientCapability` (-32021) in the 2026 era.
#[tool]
async fn test_missing_capability(ctx: Context) -> Result<String, ClientRequestError> {
    Ok(format!("The model says: {}", ask_model(&ctx, "Say hello", 20).await?))
}

/// Asks the user something; the answer comes back on the retry, never as a request of the
/// server's on the response stream.
#[tool]
async fn test_streaming_elicitation(ctx: Context) -> Result<String, String> {
    ctx.info("about to ask the user").await;
    let answer = ctx.elicit::<PersonName>("What is your name?").await.map_err(|e| e.to_string())?;
    Ok(format!("Hello, {}!", accepted(answer)?.name))
}

/// Logs at `info` while it runs; in the 2026 era only a request that names a level in its
/// `_meta` gets the messages.
#[tool(read_only)]
async fn test_logging_tool(ctx: Context) -> &'static str {
    ctx.info("Logging tool started").await;
    ctx.info("Logging tool finished").await;
    "Logging tool completed"
}

/// Comes and goes with `test_trigger_tool_change`.
#[tool(read_only)]
fn test_dynamic_tool() -> &'static str {
    "This tool is added and removed at run time."
}

/// Comes and goes with `test_trigger_prompt_change`.
#[prompt]
fn test_dynamic_prompt() -> &'static str {
    "This prompt is added and removed at run time."
}

/// Adds `test_dynamic_tool`, or removes it when it is there: the tool list changes, and every
/// session and subscription that listens for that hears of it.
#[tool]
async fn test_trigger_tool_change(ctx: Context) -> Result<String, ChangeError> {
    let server = ctx.server_handle();
    if server.remove_tool("test_dynamic_tool").await? {
        return Ok("Removed test_dynamic_tool".into());
    }
    for tool in tools![test_dynamic_tool] {
        server.add_tool(tool).await?;
    }
    Ok("Added test_dynamic_tool".into())
}

/// Adds `test_dynamic_prompt`, or removes it when it is there: the prompt list changes.
#[tool]
async fn test_trigger_prompt_change(ctx: Context) -> Result<String, ChangeError> {
    let server = ctx.server_handle();
    if server.remove_prompt("test_dynamic_prompt").await? {
        return Ok("Removed test_dynamic_prompt".into());
    }
    for prompt in prompts![test_dynamic_prompt] {
        server.add_prompt(prompt).await?;
    }
    Ok("Added test_dynamic_prompt".into())
}

/// Says where it runs. Its region is mirrored into the `Mcp-Param-Region` header (2026-07-28),
/// which the server checks against the arguments.
///
/// # Arguments
/// * `region` - Where to run.
#[tool(read_only)]
fn test_header_param(region: String) -> String {
    format!("Running in {region}")
}

// ---- Tasks (the 2026-07-28 tasks extension) ----
//
// A tool declared with `task = "optional"` or `"required"` is answered with a task when the
// client negotiated the extension; the handler is written like any other (see `typed_mcp::task`).

/// Greets someone, at once: never a task.
///
/// # Arguments
/// * `name` - Who to greet.
#[tool(read_only)]
fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Computes for `seconds` seconds, as a task when the client supports tasks.
///
/// # Arguments
/// * `seconds` - How long to compute.
/// * `label` - A label echoed in the result.
#[tool(read_only, task = "optional")]
async fn slow_compute(seconds: u64, label: Option<String>) -> String {
    if seconds > 0 {
        tokio::time::sleep(Duration::from_secs(seconds)).await;
    }
    format!("Computed for {seconds} s ({})", label.unwrap_or_default())
}

/// Fails as a tool (`isError: true`) after a second; only as a task.
#[tool(task = "required")]
async fn failing_job() -> Result<String, String> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err("the job failed, as it always does".into())
}

/// Fails with a protocol-level error after a moment: the task ends `failed`.
#[tool(task = "optional")]
async fn protocol_error_job() -> Result<String, ErrorObject> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    Err(ErrorObject::internal("the job broke down"))
}

/// Deletes a file once the user confirms.
///
/// # Arguments
/// * `filename` - The file to delete.
#[tool(destructive, task = "optional")]
async fn confirm_delete(ctx: Context, filename: String) -> Result<String, ElicitError> {
    if ctx.confirm(format!("Delete {filename}?")).await? {
        Ok(format!("Deleted {filename}"))
    } else {
        Ok(format!("Kept {filename}"))
    }
}

/// A name and a go-ahead.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct NameAndConfirm {
    /// A name
    name: String,
    /// Whether to go on
    confirm: bool,
}

/// Asks two questions at once: both wait in the task's `inputRequests` together.
#[tool(task = "optional")]
async fn multi_input(ctx: Context) -> Result<String, String> {
    let (first, second) =
        tokio::join!(ctx.elicit::<NameAndConfirm>("First input"), ctx.elicit::<NameAndConfirm>("Second input"),);
    let first = accepted(first.map_err(|e| e.to_string())?)?;
    let second = accepted(second.map_err(|e| e.to_string())?)?;
    Ok(format!("Got {} ({}) and {} ({})", first.name, first.confirm, second.name, second.confirm))
}

/// Asks for a name in the call's own round (multi round-trip), then goes on as a task.
#[tool(task = "required")]
async fn test_tool_with_task(ctx: Context) -> Result<String, String> {
    let answer = ctx
        .elicit::<PersonName>("What is your name?")
        .key("user_name")
        .before_task()
        .await
        .map_err(|e| e.to_string())?;
    let name = accepted(answer)?.name;
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(format!("Hello, {name}! Your task is done."))
}

// ---- JSON Schema 2020-12 ----

/// A tool whose input schema uses JSON Schema 2020-12 keywords (`$schema`, `$defs`, `$ref`,
/// `$anchor`, `additionalProperties`, and the composition and conditional keywords `allOf`,
/// `anyOf`, `if`/`then`/`else`), given verbatim: `tools/list` must show it unchanged (SEP-1613,
/// SEP-2106).
fn json_schema_2020_12_tool() -> ToolDef {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "address",
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"}
                }
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"}
        },
        "allOf": [
            {"anyOf": [{"required": ["name"]}, {"required": ["address"]}]}
        ],
        "if": {"properties": {"address": {"type": "object"}}, "required": ["address"]},
        "then": {"properties": {"address": {"required": ["city"]}}},
        "else": {"properties": {"name": {"minLength": 1}}},
        "additionalProperties": false
    });
    let schema: JsonObject = match schema {
        serde_json::Value::Object(o) => o,
        _ => JsonObject::new(),
    };
    ToolDef::new("json_schema_2020_12_tool", schema, |call: ToolCall| async move {
        Ok::<_, ErrorObject>(format!(
            "JSON Schema 2020-12 tool called with {}",
            serde_json::Value::Object(call.arguments.to_object())
        ))
    })
    .description("Tool with JSON Schema 2020-12 features")
}

fn server() -> Result<Server, typed_mcp::BuildError> {
    Server::builder("conformance", env!("CARGO_PKG_VERSION"))
        .title("MCP conformance test server")
        .tools(tools![
            test_simple_text,
            test_image_content,
            test_audio_content,
            test_embedded_resource,
            test_multiple_content_types,
            test_error_handling,
            test_tool_with_progress,
            test_tool_with_logging,
            test_sampling,
            test_elicitation,
            test_elicitation_sep1034_defaults,
            test_elicitation_sep1330_enums,
            test_input_required_result_elicitation,
            test_input_required_result_sampling,
            test_input_required_result_list_roots,
            test_input_required_result_request_state,
            test_input_required_result_multiple_inputs,
            test_input_required_result_multi_round,
            test_input_required_result_tampered_state,
            test_input_required_result_capabilities,
            test_missing_capability,
            test_streaming_elicitation,
            test_logging_tool,
            test_trigger_tool_change,
            test_trigger_prompt_change,
            greet,
            slow_compute,
            failing_job,
            protocol_error_job,
            confirm_delete,
            multi_input,
            test_tool_with_task,
        ])
        .dynamic_tools()
        .dynamic_prompts()
        .tools(tools![test_header_param].into_iter().map(|t| t.header_param("region", "Region")))
        .tool(json_schema_2020_12_tool())
        .resources(resources![static_text, static_binary, watched_resource, template_data])
        .resource_subscriptions()
        .prompts(prompts![
            test_simple_prompt,
            test_prompt_with_arguments,
            test_prompt_with_embedded_resource,
            test_prompt_with_image,
            test_input_required_result_prompt
        ])
        .complete_prompt_argument(
            "test_prompt_with_arguments",
            "arg1",
            Completer::values(["paris", "park", "party", "test", "testing"]),
        )
        .build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tests::programs::init_logging();
    let port = tests::programs::port_option("port", "PORT", Some(DEFAULT_PORT))?.unwrap_or(DEFAULT_PORT);
    let listener = tests::programs::bind(port, "--port / PORT").await;
    tests::programs::serve_http_on(&server()?, listener).await?;
    Ok(())
}
