//! Expansion snapshots: what `#[tool]` and `#[toolbox]` generate, written out as the code a
//! person would write, and what they emit beside errors.

use proc_macro2::TokenStream;
use quote::quote;

use super::{expand_free, expand_toolbox};

/// Compares token streams as text, showing both in full when they differ.
#[track_caller]
fn assert_tokens(actual: &TokenStream, expected: &TokenStream) {
    let (actual, expected) = (actual.to_string(), expected.to_string());
    assert!(actual == expected, "expansion differs\n--- actual\n{actual}\n--- expected\n{expected}");
}

#[test]
fn free_async_tool() {
    let out = expand_free(
        quote!(read_only, title = "Addition"),
        quote! {
            /// Adds two integers.
            ///
            /// # Arguments
            /// * `a` - The first addend.
            pub async fn add(a: i64, #[arg(rename = "second", description = "The second addend.")] b: Option<i64>) -> i64 {
                a + b.unwrap_or(0)
            }
        },
    );
    let expected = quote! {
        /// Adds two integers.
        ///
        /// # Arguments
        /// * `a` - The first addend.
        #[allow(clippy::needless_pass_by_value)]
        pub async fn add(a: i64, b: Option<i64>) -> i64 {
            a + b.unwrap_or(0)
        }
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code, missing_docs, unreachable_pub)]
        pub struct add {}
        const _: () = {
            #[automatically_derived]
            impl ::typed_mcp::__private_v0_1::ToolFn for add {
                fn definition() -> ::typed_mcp::__private_v0_1::ToolDef {
                    {
                        let mut __schema = ::typed_mcp::__private_v0_1::InputSchema::new();
                        <i64 as ::typed_mcp::__private_v0_1::ToolArgument>::describe(
                            &mut __schema, "a", ::core::option::Option::Some("The first addend.")
                        );
                        <Option<i64> as ::typed_mcp::__private_v0_1::ToolArgument>::describe(
                            &mut __schema, "second", ::core::option::Option::Some("The second addend.")
                        );
                        let __handler = move |mut __call: ::typed_mcp::__private_v0_1::ToolCall| {
                            async move {
                                let a = <i64 as ::typed_mcp::__private_v0_1::ToolArgument>::extract(&mut __call, "a")?;
                                let b = <Option<i64> as ::typed_mcp::__private_v0_1::ToolArgument>::extract(&mut __call, "second")?;
                                ::core::result::Result::Ok::<_, ::typed_mcp::__private_v0_1::ErrorObject>(add(a, b).await)
                            }
                        };
                        ::typed_mcp::__private_v0_1::ToolDef::new("add", __schema.finish(), __handler)
                            .description("Adds two integers.")
                            .title("Addition")
                            .annotations(::typed_mcp::__private_v0_1::ToolAnnotations {
                                read_only_hint: ::core::option::Option::Some(true),
                                destructive_hint: ::core::option::Option::None,
                                idempotent_hint: ::core::option::Option::None,
                                open_world_hint: ::core::option::Option::None,
                                ..::core::default::Default::default()
                            })
                    }
                }
            }
        };
    };
    assert_tokens(&out, &expected);
}

#[test]
fn raw_identifiers_and_sync_tools() {
    let out = expand_free(TokenStream::new(), quote! { fn kind(r#type: String) -> String { r#type } });
    let text = out.to_string();
    assert!(text.contains(r#"describe (& mut __schema , "type" , :: core :: option :: Option :: None)"#), "{text}");
    assert!(text.contains(r#"let r#type = < String as"#), "{text}");
    assert!(text.contains("Ok :: < _ , :: typed_mcp :: __private_v0_1 :: ErrorObject > (kind (r#type))"), "{text}");
    assert!(!text.contains(".description"), "no doc comment, no description: {text}");
    // Not `async`: called as soon as the call is read, with no future around it.
    assert!(text.contains("ToolDef :: new_sync (\"kind\""), "{text}");
    assert!(!text.contains("async move"), "{text}");
}

#[test]
fn toolbox() {
    let out = expand_toolbox(
        TokenStream::new(),
        quote! {
            impl<T: Send + Sync + 'static> Counter<T> {
                /// Adds `n` to the start.
                #[tool(name = "bump")]
                async fn add(&self, n: i64) -> i64 { self.start + n }

                /// The version.
                #[tool]
                fn version() -> &'static str { "1" }

                fn helper(&self) {}
            }
        },
    );
    let expected = quote! {
        impl<T: Send + Sync + 'static> Counter<T> {
            /// Adds `n` to the start.
            #[allow(clippy::needless_pass_by_value)]
            async fn add(&self, n: i64) -> i64 { self.start + n }

            /// The version.
            fn version() -> &'static str { "1" }

            fn helper(&self) {}
        }

        const _: () = {
            #[automatically_derived]
            impl<T: Send + Sync + 'static> ::typed_mcp::__private_v0_1::ToolBox for Counter<T> {
                fn tools(self: ::typed_mcp::__private_v0_1::Arc<Self>) -> ::typed_mcp::__private_v0_1::Vec<::typed_mcp::__private_v0_1::ToolDef> {
                    let __this = self;
                    ::typed_mcp::__private_v0_1::vec![
                        {
                            let mut __schema = ::typed_mcp::__private_v0_1::InputSchema::new();
                            <i64 as ::typed_mcp::__private_v0_1::ToolArgument>::describe(&mut __schema, "n", ::core::option::Option::None);
                            let __this = ::typed_mcp::__private_v0_1::Arc::clone(&__this);
                            let __handler = move |mut __call: ::typed_mcp::__private_v0_1::ToolCall| {
                                let __this = ::typed_mcp::__private_v0_1::Arc::clone(&__this);
                                async move {
                                    let n = <i64 as ::typed_mcp::__private_v0_1::ToolArgument>::extract(&mut __call, "n")?;
                                    ::core::result::Result::Ok::<_, ::typed_mcp::__private_v0_1::ErrorObject>(__this.add(n).await)
                                }
                            };
                            ::typed_mcp::__private_v0_1::ToolDef::new("bump", __schema.finish(), __handler)
                                .description("Adds `n` to the start.")
                        },
                        {
                            let __schema = ::typed_mcp::__private_v0_1::InputSchema::new();
                            let __handler = move |mut __call: ::typed_mcp::__private_v0_1::ToolCall| {
                                ::core::result::Result::Ok::<_, ::typed_mcp::__private_v0_1::ErrorObject>(Self::version())
                            };
                            ::typed_mcp::__private_v0_1::ToolDef::new_sync("version", __schema.finish(), __handler)
                                .description("The version.")
                        }
                    ]
                }
            }
        };
    };
    assert_tokens(&out, &expected);
}

#[test]
fn errors_come_with_stubs() {
    let out = expand_free(quote!(nmae = "x"), quote! { fn f<T>(value: T) -> String { String::new() } });
    let text = out.to_string();
    // The function and a stub definition are still emitted, so `tools![f]` keeps compiling…
    assert!(text.contains("fn f < T > (value : T) -> String"), "{text}");
    assert!(text.contains("impl :: typed_mcp :: __private_v0_1 :: ToolFn for f"), "{text}");
    assert!(text.contains(":: core :: unreachable ! ()"), "{text}");
    assert!(!text.contains("ToolDef :: new"), "{text}");
    // …beside one `compile_error!` per mistake, all from one pass.
    assert_eq!(text.matches("compile_error !").count(), 2, "{text}");
    assert!(text.contains("did you mean `name`?"), "{text}");
    assert!(text.contains("cannot be generic"), "{text}");
}

#[test]
fn toolbox_errors_come_with_a_stub_impl() {
    let out = expand_toolbox(
        TokenStream::new(),
        quote! {
            impl Calc {
                #[tool] fn add(&self) -> i64 { 1 }
                #[tool(name = "add")] fn plus(&mut self) -> i64 { 2 }
            }
        },
    );
    let text = out.to_string();
    assert!(text.contains("impl :: typed_mcp :: __private_v0_1 :: ToolBox for Calc"), "{text}");
    assert!(text.contains(":: core :: unreachable ! ()"), "{text}");
    assert!(text.contains("duplicate tool name `add`"), "{text}");
    assert!(text.contains("`add` is first defined here"), "{text}");
    assert!(text.contains("not `&mut self`"), "{text}");
}

#[test]
fn not_a_function() {
    let out = expand_free(TokenStream::new(), quote! { struct S; });
    let text = out.to_string();
    assert!(text.starts_with(":: core :: compile_error !"), "{text}");
    assert!(text.ends_with("struct S ;"), "{text}");
}

#[test]
fn bodies_are_never_parsed() {
    // The compiler reports a body's syntax error itself; the tool is generated all the same.
    let out = expand_free(TokenStream::new(), quote! { fn f(a: i64) -> i64 { let x = ; a } });
    let text = out.to_string();
    assert!(!text.contains("compile_error"), "{text}");
    assert!(text.contains("fn f (a : i64) -> i64 { let x = ; a }"), "{text}");
    assert!(text.contains("ToolDef :: new_sync (\"f\""), "{text}");

    let out = expand_toolbox(TokenStream::new(), quote! { impl S { #[tool] fn g(&self) -> i64 { 1 + } } });
    let text = out.to_string();
    assert!(!text.contains("compile_error"), "{text}");
    assert!(text.contains("ToolDef :: new_sync (\"g\""), "{text}");
}
