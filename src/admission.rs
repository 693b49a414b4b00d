//! How many searches one isolate runs at once.
//!
//! Every D1 statement of an isolate goes to the same database, which runs one statement at a time.
//! Left unbounded, 32 concurrent searches put 32 searches' statements in that line ahead of each
//! ingestion statement, and a queue stage that needs a few dozen round trips crawls (measured
//! locally: ingestion at 2 % of its idle rate). Searches past the limit wait here, in arrival
//! order, before they touch D1; search throughput is unchanged (the database was the bound
//! anyway) and the queue stages get their turn every few statements.
use std::cell::OnceCell;
use std::sync::Arc;

use async_lock::{Semaphore, SemaphoreGuardArc};

/// Searches one isolate runs at once unless `SEARCH_CONCURRENCY` says otherwise.
pub const DEFAULT_SEARCH_CONCURRENCY: usize = 2;
/// Largest accepted `SEARCH_CONCURRENCY`.
pub const MAX_SEARCH_CONCURRENCY: usize = 256;

thread_local! {
    static SEARCHES: OnceCell<Arc<Semaphore>> = const { OnceCell::new() };
}

/// The limit a `SEARCH_CONCURRENCY` value asks for: unset or empty is the default; otherwise a
/// whole number in `1..=`[`MAX_SEARCH_CONCURRENCY`], or an error naming the variable.
pub fn search_limit(raw: Option<&str>) -> Result<usize, String> {
    match raw.map(str::trim) {
        None | Some("") => Ok(DEFAULT_SEARCH_CONCURRENCY),
        Some(v) => {
            v.parse::<usize>().ok().filter(|n| (1..=MAX_SEARCH_CONCURRENCY).contains(n)).ok_or_else(|| {
                format!(
                    "SEARCH_CONCURRENCY must be a whole number in 1..={MAX_SEARCH_CONCURRENCY}, not {v:?}; \
                     using {DEFAULT_SEARCH_CONCURRENCY}"
                )
            })
        }
    }
}

/// Held while a search runs; dropping it lets the next waiting search in.
pub struct SearchPermit {
    _guard: SemaphoreGuardArc,
}

/// Waits for a search slot. The limit is taken once per isolate (vars do not change while it lives).
pub async fn search_permit(limit: usize) -> SearchPermit {
    let semaphore = SEARCHES.with(|cell| Arc::clone(cell.get_or_init(|| Arc::new(Semaphore::new(limit)))));
    SearchPermit { _guard: semaphore.acquire_arc().await }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_a_whole_number_in_range_or_the_default_with_an_error() {
        assert_eq!(search_limit(None), Ok(DEFAULT_SEARCH_CONCURRENCY));
        assert_eq!(search_limit(Some(" ")), Ok(DEFAULT_SEARCH_CONCURRENCY));
        assert_eq!(search_limit(Some(" 8 ")), Ok(8));
        for bad in ["0", "four", "-1", "100000"] {
            let err = search_limit(Some(bad)).expect_err(bad);
            assert!(err.starts_with("SEARCH_CONCURRENCY must be"), "{err}");
        }
    }

    #[test]
    fn searches_past_the_limit_wait_for_a_permit_and_enter_in_turn() {
        futures_executor_free::run(async {
            let first = search_permit(2).await;
            let second = search_permit(2).await;
            let sem = SEARCHES.with(|c| Arc::clone(c.get().expect("initialised")));
            assert!(sem.try_acquire().is_none(), "a third search must wait while two run");
            drop(first);
            let third = sem.try_acquire();
            assert!(third.is_some(), "a finished search frees its slot");
            drop(second);
        });
    }

    /// Polls a future that never waits (the permits above are free when asked for).
    mod futures_executor_free {
        use std::future::Future;
        use std::pin::pin;
        use std::task::{Context, Poll, Waker};

        pub fn run<F: Future<Output = ()>>(f: F) {
            let mut f = pin!(f);
            let mut cx = Context::from_waker(Waker::noop());
            assert!(matches!(f.as_mut().poll(&mut cx), Poll::Ready(())), "the test future waited");
        }
    }
}
