//! Prompts end to end, in process: listing with arguments, getting text, image and embedded
//! resource messages, argument errors, run-time list changes and pagination.

use serde_json::json;
use tests::serve::{connect, connect_with};
use tests::stdio::error_code;
use typed_mcp::prelude::*;
use typed_mcp::prompt::PromptCall;

/// Asks for a code review.
///
/// # Arguments
/// * `code` - The code to review.
/// * `focus` - What to look at first.
#[prompt(title = "Code review")]
fn review(code: String, focus: Option<String>) -> String {
    format!("Review this code, focusing on {}:\n{code}", focus.as_deref().unwrap_or("anything"))
}

/// Shows a picture and a document.
#[prompt(name = "show_and_tell")]
async fn show(ctx: Context, #[arg(description = "How many times.")] times: u32) -> Vec<PromptMessage> {
    let client = ctx.client_info().map(|c| c.name.clone()).unwrap_or_default();
    vec![
        PromptMessage::assistant(format!("{times} for {client}")),
        PromptMessage::image(Role::User, &[1, 2, 3], "image/png"),
        PromptMessage::resource(Role::User, ResourceContents::text("test://doc", Some("text/plain".into()), "Doc")),
    ]
}

/// Always fails.
#[prompt]
fn broken() -> Result<String, String> {
    Err("the template store is down".into())
}

fn server() -> Server {
    Server::builder("prompts", "1.0.0").prompts(prompts![review, show, broken]).build().expect("valid server")
}

#[tokio::test]
async fn lists_prompts_with_their_arguments() {
    let (mut client, init) = connect_with(&server(), json!({})).await;
    assert_eq!(init["capabilities"], json!({"logging": {}, "prompts": {}}));
    assert_eq!(
        client.result("prompts/list", json!({})).await,
        json!({"prompts": [
            {"name": "review", "title": "Code review", "description": "Asks for a code review.", "arguments": [
                {"name": "code", "description": "The code to review.", "required": true},
                {"name": "focus", "description": "What to look at first.", "required": false}
            ]},
            {"name": "show_and_tell", "description": "Shows a picture and a document.", "arguments": [
                {"name": "times", "description": "How many times.", "required": true}
            ]},
            {"name": "broken", "description": "Always fails."}
        ]})
    );
}

#[tokio::test]
async fn gets_text_image_and_embedded_resource_messages() {
    let mut client = connect(&server()).await;
    assert_eq!(
        client.result("prompts/get", json!({"name": "review", "arguments": {"code": "fn x() {}"}})).await,
        json!({"description": "Asks for a code review.", "messages": [
            {"role": "user", "content": {"type": "text", "text": "Review this code, focusing on anything:\nfn x() {}"}}
        ]})
    );
    assert_eq!(
        client.result("prompts/get", json!({"name": "review", "arguments": {"code": "y", "focus": "naming"}})).await["messages"]
            [0]["content"]["text"],
        "Review this code, focusing on naming:\ny"
    );
    assert_eq!(
        client.result("prompts/get", json!({"name": "show_and_tell", "arguments": {"times": "3"}})).await,
        json!({"description": "Shows a picture and a document.", "messages": [
            {"role": "assistant", "content": {"type": "text", "text": "3 for t"}},
            {"role": "user", "content": {"type": "image", "data": "AQID", "mimeType": "image/png"}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "test://doc", "mimeType": "text/plain", "text": "Doc"}}}
        ]})
    );
}

#[tokio::test]
async fn unknown_prompts_and_bad_arguments_are_invalid_params() {
    let mut client = connect(&server()).await;
    let cases = [
        (json!({"name": "nope"}), "unknown prompt: `nope`"),
        (json!({"name": "review"}), "missing required argument `code` of prompt `review`"),
        (json!({"name": "review", "arguments": {"focus": "x"}}), "missing required argument `code` of prompt `review`"),
        (
            json!({"name": "show_and_tell", "arguments": {"times": "many"}}),
            "invalid argument `times`: expected a non-negative integer, got `many`",
        ),
    ];
    for (params, message) in cases {
        let response = client.request("prompts/get", params.clone()).await;
        assert_eq!(response["error"], json!({"code": -32602, "message": message}), "{params}");
    }
    // Arguments are strings on the wire.
    let response = client.request("prompts/get", json!({"name": "review", "arguments": {"code": 5}})).await;
    assert_eq!(error_code(&response), -32602, "{response}");
    let response = client.request("prompts/get", json!({"name": "broken"})).await;
    assert_eq!(response["error"], json!({"code": -32603, "message": "the template store is down"}));
}

fn greet() -> PromptDef {
    PromptDef::new("greet", |call: PromptCall| async move {
        Ok::<_, ErrorObject>(
            GetPromptResult::new(vec![PromptMessage::user(format!("Hello {}", call.arguments["who"]))])
                .with_description("A greeting"),
        )
    })
    .argument("who", Some("Who to greet."), true)
}

#[tokio::test]
async fn prompts_written_by_hand_and_changed_at_run_time() {
    let server = Server::builder("p", "1").dynamic_prompts().build().unwrap();
    let (mut client, init) = connect_with(&server, json!({})).await;
    assert_eq!(init["capabilities"]["prompts"], json!({"listChanged": true}));
    assert_eq!(client.result("prompts/list", json!({})).await, json!({"prompts": []}));
    server.add_prompt(greet()).await.unwrap();
    assert_eq!(
        client.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed", "params": {}})
    );
    assert_eq!(
        client.result("prompts/list", json!({})).await,
        json!({"prompts": [{"name": "greet", "arguments": [{"name": "who", "description": "Who to greet.", "required": true}]}]})
    );
    assert_eq!(
        client.result("prompts/get", json!({"name": "greet", "arguments": {"who": "Ada"}})).await,
        json!({"description": "A greeting", "messages": [{"role": "user", "content": {"type": "text", "text": "Hello Ada"}}]})
    );
    assert!(server.remove_prompt("greet").await.unwrap());
    client.recv().await;
    let response = client.request("prompts/get", json!({"name": "greet", "arguments": {"who": "Ada"}})).await;
    assert_eq!(error_code(&response), -32602);
    server.notify_list_changed("prompts").await.unwrap();
    assert_eq!(client.recv().await["method"], "notifications/prompts/list_changed");

    let fixed = server_fixed();
    assert!(fixed.add_prompt(greet()).await.is_err());
    assert!(fixed.notify_list_changed("prompts").await.is_err());
}

fn server_fixed() -> Server {
    Server::builder("p", "1").prompt(greet()).build().unwrap()
}

#[tokio::test]
async fn prompts_are_paginated() {
    let server = Server::builder("p", "1").page_size(2).prompts(prompts![review, show, broken]).build().unwrap();
    let mut client = connect(&server).await;
    let first = client.result("prompts/list", json!({})).await;
    assert_eq!(first["prompts"].as_array().unwrap().len(), 2);
    let second = client.result("prompts/list", json!({"cursor": first["nextCursor"]})).await;
    assert_eq!(second["prompts"][0]["name"], "broken");
    assert!(second.get("nextCursor").is_none());
    let response = client.request("prompts/list", json!({"cursor": "x"})).await;
    assert_eq!(error_code(&response), -32602);
}

#[tokio::test]
async fn duplicate_prompt_names_fail_the_build() {
    let err = Server::builder("p", "1").prompts([greet(), greet()]).build().unwrap_err();
    assert_eq!(err.to_string(), "a prompt named `greet` is already registered; prompt names must be unique");
}
