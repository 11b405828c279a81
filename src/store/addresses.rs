//! Where recent arrivals by link came from, per study, in memory only (an
//! address is personal data and is never written down): what lets the
//! arrival bound turn away the address that floods a link, not everyone
//! (`domain::crowd::bundles::admits_another_arrival`). Bounded: a few times
//! per study and address, at most `MAX_KEYS` of them; a restart forgets all.
use crate::domain::ids::StudyId;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Study and address pairs kept at most; beyond it the stalest half goes.
const MAX_KEYS: usize = 100_000;
/// Arrival times kept per pair: the bound only asks whether there were a few.
const PER_KEY: usize = 4;

type Book = HashMap<(StudyId, IpAddr), Vec<i64>>;

#[derive(Clone, Default)]
pub struct ArrivalAddresses(Arc<Mutex<Book>>);

impl ArrivalAddresses {
    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Arrivals at `study` from `address` (its /64 for IPv6) at or after `since`.
    pub fn since(&self, study: StudyId, address: IpAddr, since: i64) -> usize {
        self.book().get(&(study, bucket(address))).map_or(0, |at| at.iter().filter(|t| **t >= since).count())
    }

    /// Notes an arrival at `study` from `address` at `at`.
    pub fn record(&self, study: StudyId, address: IpAddr, at: i64) {
        let key = (study, bucket(address));
        let mut book = self.book();
        if book.len() >= MAX_KEYS && !book.contains_key(&key) {
            let mut newest: Vec<i64> = book.values().filter_map(|v| v.last().copied()).collect();
            let (_, cut, _) = newest.select_nth_unstable(MAX_KEYS / 2);
            let cut = *cut;
            book.retain(|_, v| v.last().is_some_and(|t| *t > cut));
        }
        let times = book.entry(key).or_default();
        times.push(at);
        if times.len() > PER_KEY {
            times.remove(0);
        }
    }
}

/// IPv6 clients usually hold a whole /64: count it as one address.
pub fn bucket(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut seg = v6.segments();
                seg[4..].fill(0);
                IpAddr::V6(seg.into())
            }
        },
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));

    #[test]
    fn an_ipv6_slash_64_is_one_address() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(bucket(a), bucket(b));
        assert_ne!(bucket(a), bucket("2001:db8:1:3::1".parse().unwrap()));
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(bucket(mapped), A);
    }

    #[test]
    fn arrivals_count_per_study_and_address_within_the_window() {
        let book = ArrivalAddresses::default();
        let (s1, s2) = (StudyId::new(1), StudyId::new(2));
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        for t in [100, 200, 300] {
            book.record(s1, A, t);
        }
        book.record(s2, b, 300);
        assert_eq!((book.since(s1, A, 0), book.since(s1, A, 200), book.since(s1, A, 301)), (3, 2, 0));
        assert_eq!((book.since(s1, b, 0), book.since(s2, b, 0), book.since(s2, A, 0)), (0, 1, 0));
        for t in 400..500 {
            book.record(s1, A, t);
        }
        assert_eq!(book.since(s1, A, 0), PER_KEY, "a key keeps its last few times only");
    }

    #[test]
    fn the_book_forgets_its_stalest_keys_at_its_cap() {
        let book = ArrivalAddresses::default();
        let s = StudyId::new(1);
        for i in 0..MAX_KEYS as u32 {
            book.record(s, IpAddr::V4(i.into()), i64::from(i));
        }
        let newest = IpAddr::V4((MAX_KEYS as u32 - 1).into());
        book.record(s, "::1".parse().unwrap(), 1 << 40);
        let kept = book.book().len();
        assert!(kept <= MAX_KEYS / 2 + 1, "{kept}");
        assert_eq!(book.since(s, newest, 0), 1, "the newest stay");
        assert_eq!(book.since(s, IpAddr::V4(0.into()), 0), 0, "the stalest go");
    }
}
