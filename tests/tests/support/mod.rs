//! Helpers shared by the robustness tests.

pub mod http;
