//! Work a request starts and does not wait for. The runtime keeps the request's context alive
//! until the work is done (`waitUntil`), so its D1 calls are still the request's own — work merely
//! spawned would lose its I/O when the response is sent.
use std::future::Future;
use std::rc::Rc;

/// The request's handle for background work (cheap to clone).
#[derive(Clone)]
pub struct Background(Rc<worker::Context>, crate::ledger::Invocation);

impl Background {
    pub fn new(ctx: worker::Context, invocation: crate::ledger::Invocation) -> Self {
        Background(Rc::new(ctx), invocation)
    }

    /// Run `work` after (or beside) the response; the request's invocation stays open in the
    /// ledger until it is done.
    pub fn spawn(&self, work: impl Future<Output = ()> + 'static) {
        let invocation = self.1.clone();
        let work = invocation.scope().within(work);
        self.0.wait_until(async move {
            work.await;
            drop(invocation);
        });
    }
}

/// Let the runtime send and receive before going on. The runtime looks at its sockets only when
/// nothing else is ready to run, and a local D1 answers inside the process: a long chain of
/// statements with work between them would hold back every response — the one of the request
/// that started it included — until it ends. A 1 ms timer leaves nothing ready for a moment.
async fn yield_to_io() {
    worker::Delay::from(std::time::Duration::from_millis(1)).await;
}

/// How long a chain of statements and work runs before it yields ([`Slices`]).
pub const SLICE_MS: f64 = 10.0;

/// Long work cut into slices: [`Slices::pause_if_due`] at each step yields ([`yield_to_io`]) at the
/// first step and then once the work since the last pause has run for [`SLICE_MS`] (the runtime's
/// clock moves across I/O, so a step should include a statement).
pub struct Slices {
    since: f64,
}

impl Slices {
    pub fn new() -> Self {
        Slices { since: f64::NEG_INFINITY }
    }

    pub async fn pause_if_due(&mut self) {
        if crate::time::now_ms() - self.since >= SLICE_MS {
            yield_to_io().await;
            self.since = crate::time::now_ms();
        }
    }
}

impl Default for Slices {
    fn default() -> Self {
        Self::new()
    }
}
