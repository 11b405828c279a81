//! Limits on password checks, so logins cannot exhaust the server: each
//! Argon2 check holds ~19 MiB, so at most one per core runs at once, and
//! repeated failures from one address or against one account back off.
//!
//! Backoff: the first `FREE_FAILURES` failures of a key cost nothing; each
//! further one locks the key for 1 s, 2 s, 4 s … up to a cap. Attempts
//! refused while locked are not counted, so a flood cannot extend a lock.
//! Account locks are capped at `ACCOUNT_CAP` and do not apply to an address
//! that has logged in to that account before (since the server started):
//! an attacker elsewhere can slow a user down, never lock them out.
use crate::store::addresses::bucket;
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// The client's address as the login backoff keys it: a request extension
/// the proxy middleware (`http::proxy`) sets and the login routes read.
#[derive(Clone, Copy, Debug)]
pub struct ClientAddr(pub IpAddr);

/// Failures a key may have before its backoff starts.
pub const FREE_FAILURES: u32 = 5;
/// The longest an address is locked.
pub const ADDRESS_CAP: Duration = Duration::from_secs(15 * 60);
/// The longest an account is locked (for addresses it has not logged in from).
pub const ACCOUNT_CAP: Duration = Duration::from_secs(60);
/// How long a login may wait for a free password check before a 503 (by default).
pub const QUEUE_WAIT: Duration = Duration::from_secs(5);
/// Failures older than this are forgotten.
const FORGET_AFTER: Duration = Duration::from_secs(60 * 60);
/// Keys kept at most; beyond it the stalest are forgotten.
const MAX_KEYS: usize = 100_000;

pub use crate::domain::login_words::Refused;

#[derive(Clone, Copy)]
struct Failures {
    count: u32,
    last: Instant,
    locked_until: Option<Instant>,
}

#[derive(Default)]
struct Book {
    by_address: HashMap<IpAddr, Failures>,
    by_account: HashMap<String, Failures>,
    /// (account, address) pairs that logged in successfully.
    known: HashSet<(String, IpAddr)>,
}

#[derive(Clone)]
pub struct LoginLimits {
    checks: Arc<Semaphore>,
    queue_wait: Duration,
    book: Arc<Mutex<Book>>,
}

impl Default for LoginLimits {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        LoginLimits::new(cores)
    }
}

/// A permit to run one password check; dropping it frees the slot.
pub struct CheckPermit(#[allow(dead_code)] tokio::sync::OwnedSemaphorePermit);

impl LoginLimits {
    pub fn new(concurrent_checks: usize) -> LoginLimits {
        LoginLimits {
            checks: Arc::new(Semaphore::new(concurrent_checks.max(1))),
            queue_wait: QUEUE_WAIT,
            book: Arc::default(),
        }
    }

    /// Logins wait at most `wait` for a free check, then get 503.
    pub fn with_queue_wait(self, wait: Duration) -> LoginLimits {
        LoginLimits { queue_wait: wait, ..self }
    }

    /// Waits for a check slot, then refuses if a backoff applies. The
    /// backoff is checked after the wait too: failures recorded meanwhile
    /// must stop the queued attempts, or a burst would all get through.
    pub async fn admit(&self, account: &str, address: IpAddr) -> Result<CheckPermit, Refused> {
        let address = bucket(address);
        self.refused(account, address, Instant::now())?;
        let permit = tokio::time::timeout(self.queue_wait, self.checks.clone().acquire_owned())
            .await
            .map_err(|_| Refused::Busy)?
            .map_err(|_| Refused::Busy)?;
        self.refused(account, address, Instant::now())?;
        Ok(CheckPermit(permit))
    }

    fn refused(&self, account: &str, address: IpAddr, now: Instant) -> Result<(), Refused> {
        let book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        let mut wait = locked_for(book.by_address.get(&address), now);
        if !book.known.contains(&(account.to_string(), address)) {
            wait = wait.max(locked_for(book.by_account.get(account), now));
        }
        match wait {
            Some(d) if !d.is_zero() => Err(Refused::Backoff(d.as_secs_f64().ceil() as u64)),
            _ => Ok(()),
        }
    }

    /// Records a failure; `account` is None for names no account could
    /// have, so random names cannot grow the book.
    pub fn failed(&self, account: Option<&str>, address: IpAddr) {
        let (address, now) = (bucket(address), Instant::now());
        let mut book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        if book.by_address.len() + book.by_account.len() > MAX_KEYS {
            forget_stale(&mut book, now);
        }
        bump(book.by_address.entry(address).or_insert_with(|| fresh(now)), now, ADDRESS_CAP);
        if let Some(account) = account {
            bump(book.by_account.entry(account.to_string()).or_insert_with(|| fresh(now)), now, ACCOUNT_CAP);
        }
    }

    pub fn succeeded(&self, account: &str, address: IpAddr) {
        let address = bucket(address);
        let mut book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        book.by_address.remove(&address);
        if book.known.len() > MAX_KEYS {
            book.known.clear();
        }
        book.known.insert((account.to_string(), address));
    }
}

fn fresh(now: Instant) -> Failures {
    Failures { count: 0, last: now, locked_until: None }
}

fn bump(f: &mut Failures, now: Instant, cap: Duration) {
    if now.duration_since(f.last) > FORGET_AFTER {
        *f = fresh(now);
    }
    f.count += 1;
    f.last = now;
    if f.count > FREE_FAILURES {
        let exp = (f.count - FREE_FAILURES - 1).min(20);
        f.locked_until = Some(now + Duration::from_secs(1u64 << exp).min(cap));
    }
}

fn locked_for(f: Option<&Failures>, now: Instant) -> Option<Duration> {
    f.and_then(|f| f.locked_until).map(|until| until.saturating_duration_since(now))
}

fn forget_stale(book: &mut Book, now: Instant) {
    let fresh_enough = |f: &Failures| now.duration_since(f.last) < FORGET_AFTER;
    book.by_address.retain(|_, f| fresh_enough(f));
    book.by_account.retain(|_, f| fresh_enough(f));
    if book.by_address.len() + book.by_account.len() > MAX_KEYS {
        book.by_address.clear();
        book.by_account.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2));

    #[tokio::test]
    async fn failures_beyond_the_free_ones_back_off_and_refusals_do_not_extend_it() {
        let limits = LoginLimits::new(2);
        for _ in 0..FREE_FAILURES {
            assert!(limits.admit("ana", A).await.is_ok());
            limits.failed(Some("ana"), A);
        }
        assert!(limits.admit("ana", A).await.is_ok());
        limits.failed(Some("ana"), A);
        assert_eq!(limits.admit("ana", A).await.err(), Some(Refused::Backoff(1)));
        // Refused attempts are not counted: the lock stays at 1 s.
        let _ = limits.admit("ana", A).await;
        assert_eq!(limits.book.lock().unwrap().by_address[&A].count, FREE_FAILURES + 1);
    }

    #[tokio::test]
    async fn an_account_lock_spares_addresses_that_logged_in_before() {
        let limits = LoginLimits::new(1);
        limits.succeeded("ana", B);
        for _ in 0..FREE_FAILURES + 3 {
            limits.failed(Some("ana"), A);
        }
        assert!(matches!(limits.admit("ana", A).await, Err(Refused::Backoff(_))));
        assert!(limits.admit("ana", B).await.is_ok(), "the known address is not locked out");
        let other = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 3));
        assert!(matches!(limits.admit("ana", other).await, Err(Refused::Backoff(_))));
    }

    #[tokio::test]
    async fn a_login_waits_for_a_check_slot_until_its_wait_runs_out() {
        let limits = LoginLimits::new(1).with_queue_wait(Duration::from_millis(50));
        let held = limits.admit("ana", A).await.unwrap();
        let started = Instant::now();
        assert_eq!(limits.admit("bob", B).await.err(), Some(Refused::Busy));
        assert!(started.elapsed() >= Duration::from_millis(50), "refused before its wait ran out");
        // A slot freed during the wait is taken.
        let waiting = tokio::spawn({
            let limits = limits.clone();
            async move { limits.admit("bob", B).await.is_ok() }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        drop(held);
        assert!(waiting.await.unwrap());
    }

    #[test]
    fn locks_grow_to_their_cap() {
        let now = Instant::now();
        let mut f = fresh(now);
        for _ in 0..FREE_FAILURES + 30 {
            bump(&mut f, now, ACCOUNT_CAP);
        }
        assert_eq!(f.locked_until, Some(now + ACCOUNT_CAP));
    }
}
