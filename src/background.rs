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

/// Let the runtime send and receive before going on. The runtime looks at its sockets only when
/// nothing else is ready to run, and a local D1 answers inside the process: a long chain of
/// statements with work between them would hold back every response — the one of the request
/// that started it included — until it ends. A 1 ms timer leaves nothing ready for a moment.
pub async fn yield_to_io() {
    worker::Delay::from(std::time::Duration::from_millis(1)).await;
}
