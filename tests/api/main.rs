//! The HTTP API end to end: a real hyper server on 127.0.0.1 over a real sled store in a
//! temporary folder, driven with reqwest. One binary, one helper module.

#[path = "../common/mod.rs"]
mod common;

mod auth;
mod companies;
mod errors;
mod helpers;
mod jobs;
mod methods;
mod openapi;
mod rate_limits;
mod restart;
mod usage;
mod webhooks;
