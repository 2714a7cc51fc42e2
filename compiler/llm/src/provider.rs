//! The provider trait: one attempt at one request, over plain data.

use std::future::Future;
use std::pin::Pin;

use crate::error::LlmError;
use crate::types::{Request, Response};

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A model provider. `complete` makes one attempt (retries, budgets and the ledger are the
/// `Client`'s); with `request.stream` it streams and returns only once the stream completed.
pub trait Provider: Send + Sync {
    /// The provider's name in specc.toml, for the ledger.
    fn name(&self) -> &str;

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>>;
}
