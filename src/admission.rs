//! How many searches one isolate runs at once.
//!
//! Every D1 statement of an isolate goes to the same database, which runs one statement at a time.
//! Left unbounded, 32 concurrent searches put 32 searches' statements in that line ahead of each
//! ingestion statement, and a queue stage that needs a few dozen round trips crawls (measured
//! locally: ingestion at 2 % of its idle rate). Searches past the limit wait here, oldest first,
//! before they touch D1; search throughput is unchanged (the database was the bound anyway) and
//! the queue stages get their turn every few statements.
//!
//! A waiting search polls on a timer of its own instead of being woken by the search that leaves:
//! the runtime ties every promise to the request that created it, so a wake-up from another
//! request's context is reported as a hung request (and its I/O would run in the wrong context).
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::future::Future;

/// Searches one isolate runs at once unless `SEARCH_CONCURRENCY` says otherwise.
pub const DEFAULT_SEARCH_CONCURRENCY: usize = 2;
/// Largest accepted `SEARCH_CONCURRENCY`.
pub const MAX_SEARCH_CONCURRENCY: usize = 256;
/// Longest pause between two looks at a free slot (the first pauses are shorter).
pub const MAX_POLL_MS: u64 = 8;

#[derive(Default)]
struct Slots {
    running: usize,
    next_ticket: u64,
    /// Tickets of the searches waiting, oldest first; a cancelled search takes its ticket out.
    waiting: BTreeSet<u64>,
}

thread_local! {
    static SLOTS: RefCell<Slots> = RefCell::new(Slots::default());
}

/// The limit a `SEARCH_CONCURRENCY` value asks for: unset or empty is the default; otherwise a
/// whole number in `1..=`[`MAX_SEARCH_CONCURRENCY`], or an error naming the variable.
pub fn search_limit(raw: Option<&str>) -> Result<usize, String> {
    match crate::config::whole_number("SEARCH_CONCURRENCY", raw, 1..=MAX_SEARCH_CONCURRENCY as u32) {
        Ok(n) => Ok(n.map_or(DEFAULT_SEARCH_CONCURRENCY, |n| n as usize)),
        Err(e) => Err(format!("{e}; using {DEFAULT_SEARCH_CONCURRENCY}")),
    }
}

/// Held while a search runs; dropping it frees the slot.
pub struct SearchPermit(());

impl Drop for SearchPermit {
    fn drop(&mut self) {
        SLOTS.with(|s| s.borrow_mut().running -= 1);
    }
}

/// A place in the line; dropped without being served (the request went away), it leaves the line.
struct Ticket(u64);

impl Drop for Ticket {
    fn drop(&mut self) {
        SLOTS.with(|s| s.borrow_mut().waiting.remove(&self.0));
    }
}

/// Waits for one of `limit` search slots, oldest waiter first. `pause(ms)` is the timer a waiting
/// search sleeps on between looks (the runtime's timer in the worker).
pub async fn search_permit<F, P>(limit: usize, mut pause: P) -> SearchPermit
where
    P: FnMut(u64) -> F,
    F: Future<Output = ()>,
{
    let ticket = SLOTS.with(|s| {
        let mut s = s.borrow_mut();
        let t = s.next_ticket;
        s.next_ticket += 1;
        s.waiting.insert(t);
        Ticket(t)
    });
    let mut wait_ms = 1;
    loop {
        let admitted = SLOTS.with(|s| {
            let mut s = s.borrow_mut();
            let first = s.waiting.first() == Some(&ticket.0);
            if first && s.running < limit.max(1) {
                s.running += 1;
                true
            } else {
                false
            }
        });
        if admitted {
            drop(ticket);
            return SearchPermit(());
        }
        pause(wait_ms).await;
        wait_ms = (wait_ms * 2).min(MAX_POLL_MS);
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

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

    /// A pause that is pending when first polled and over at the next poll: each poll of a waiting
    /// search is one look at the slots.
    struct YieldOnce(bool);

    impl Future for YieldOnce {
        type Output = ();
        fn poll(mut self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                Poll::Ready(())
            } else {
                self.0 = true;
                Poll::Pending
            }
        }
    }

    fn yield_once(_ms: u64) -> YieldOnce {
        YieldOnce(false)
    }

    fn poll_once<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
        f.poll(&mut Context::from_waker(Waker::noop()))
    }

    fn running() -> usize {
        SLOTS.with(|s| s.borrow().running)
    }

    #[test]
    fn searches_past_the_limit_wait_and_enter_oldest_first_when_a_slot_frees() {
        let Poll::Ready(first) = poll_once(pin!(search_permit(2, yield_once))) else { panic!("first waits") };
        let Poll::Ready(second) = poll_once(pin!(search_permit(2, yield_once))) else {
            panic!("second waits")
        };
        assert_eq!(running(), 2);
        let mut third = pin!(search_permit(2, yield_once));
        let mut fourth = pin!(search_permit(2, yield_once));
        assert!(poll_once(third.as_mut()).is_pending(), "a third search waits while two run");
        assert!(poll_once(fourth.as_mut()).is_pending());

        drop(first);
        assert_eq!(running(), 1, "a finished search frees its slot");
        assert!(poll_once(fourth.as_mut()).is_pending(), "the younger waiter does not jump the line");
        let Poll::Ready(third) = poll_once(third.as_mut()) else { panic!("the oldest waiter enters") };
        assert!(poll_once(fourth.as_mut()).is_pending(), "two run again");

        drop(second);
        let Poll::Ready(fourth) = poll_once(fourth.as_mut()) else { panic!("the next waiter enters") };
        drop((third, fourth));
        assert_eq!(running(), 0);
    }

    #[test]
    fn a_cancelled_waiter_leaves_the_line() {
        let Poll::Ready(only) = poll_once(pin!(search_permit(1, yield_once))) else { panic!("first waits") };
        {
            let mut gone = pin!(search_permit(1, yield_once));
            assert!(poll_once(gone.as_mut()).is_pending());
        } // the request went away while waiting
        let mut next = pin!(search_permit(1, yield_once));
        assert!(poll_once(next.as_mut()).is_pending());
        drop(only);
        assert!(poll_once(next.as_mut()).is_ready(), "no abandoned ticket blocks the line");
    }
}
