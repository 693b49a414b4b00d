//! Work a request starts and does not wait for. The runtime keeps the request's context alive
//! until the work is done (`waitUntil`), so its D1 calls are still the request's own — work merely
//! spawned would lose its I/O when the response is sent.
use std::future::Future;
use std::rc::Rc;

/// The request's handle for background work (cheap to clone).
#[derive(Clone)]
pub struct Background(Rc<worker::Context>);

impl Background {
    pub fn new(ctx: worker::Context) -> Self {
        Background(Rc::new(ctx))
    }

    /// Run `work` after (or beside) the response.
    pub fn spawn(&self, work: impl Future<Output = ()> + 'static) {
        self.0.wait_until(work);
    }
}
