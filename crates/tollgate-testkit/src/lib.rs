//! Test doubles shared by Tollgate's unit and end-to-end tests: services the tests cannot reach
//! (model APIs, GitHub) as loopback servers that speak their real protocol over real HTTP, with
//! scripted answers and a record of every request; and a throwaway PostgreSQL cluster for the
//! store's tests. Only `std` and `serde_json`, so every test target can depend on it cheaply.

pub mod fake_github;
pub mod fake_llm;
pub mod postgres;
