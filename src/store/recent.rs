//! A bounded map of recently used entries, for the in-memory caches of the
//! answer round trip (items, sessions). Two generations approximate
//! least-recently-used eviction without bookkeeping per read: a hit in the
//! old one moves the entry to the new one, and when the new one fills up
//! the old one is dropped, so at most `2 x generation` entries are held.
//!
//! Hashed with Fx, not SipHash (about 1,200 instructions of a round trip
//! by callgrind, six lookups): every key held is one this server made (a
//! random session id, a task or item id), so no client can fill a map with
//! colliding keys.
use rustc_hash::FxHashMap as HashMap;
use std::hash::Hash;

pub struct Recent<K, V> {
    generation: usize,
    new: HashMap<K, V>,
    old: HashMap<K, V>,
}

impl<K: Hash + Eq, V: Clone> Recent<K, V> {
    pub fn new(generation: usize) -> Self {
        Recent { generation: generation.max(1), new: HashMap::default(), old: HashMap::default() }
    }

    pub fn get(&mut self, key: &K) -> Option<V> {
        if let Some(v) = self.new.get(key) {
            return Some(v.clone());
        }
        let (key, v) = self.old.remove_entry(key)?;
        self.put(key, v.clone());
        Some(v)
    }

    pub fn put(&mut self, key: K, value: V) {
        if self.new.len() >= self.generation && !self.new.contains_key(&key) {
            self.old = std::mem::take(&mut self.new);
        }
        self.new.insert(key, value);
    }

    pub fn remove(&mut self, key: &K) {
        self.new.remove(key);
        self.old.remove(key);
    }

    /// Drops every entry `keep` refuses.
    pub fn retain(&mut self, mut keep: impl FnMut(&V) -> bool) {
        self.new.retain(|_, v| keep(v));
        self.old.retain(|_, v| keep(v));
    }

    pub fn len(&self) -> usize {
        self.new.len() + self.old.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A [`Recent`] shared by every request, for values that never change once
/// written (so nothing invalidates them): each is loaded on a miss and kept.
pub struct Kept<K, V>(std::sync::Arc<std::sync::Mutex<Recent<K, V>>>);

impl<K, V> Clone for Kept<K, V> {
    fn clone(&self) -> Self {
        Kept(self.0.clone())
    }
}

impl<K: Hash + Eq, V: Clone> Kept<K, V> {
    pub fn new(generation: usize) -> Self {
        Kept(std::sync::Arc::new(std::sync::Mutex::new(Recent::new(generation))))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Recent<K, V>> {
        // A panic while holding the lock cannot leave the map half-written.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value under `key` from memory, else from `load` (only awaited on a miss).
    pub async fn get_or_load<E>(&self, key: K, load: impl std::future::Future<Output = Result<V, E>>) -> Result<V, E> {
        if let Some(v) = self.lock().get(&key) {
            return Ok(v);
        }
        let v = load.await?;
        self.lock().put(key, v.clone());
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_at_most_two_generations_and_keeps_what_is_read() {
        let mut r = Recent::new(3);
        for i in 0..3 {
            r.put(i, i * 10);
        }
        // Filling a second generation retires the first but keeps both.
        for i in 3..6 {
            r.put(i, i * 10);
        }
        assert_eq!(r.len(), 6);
        // A read from the old generation moves the entry into the new one,
        // here starting a third generation, which drops the first...
        assert_eq!(r.get(&1), Some(10));
        assert_eq!(r.len(), 4);
        // ...so it survives, while the first generation's unread entries are gone.
        assert_eq!(r.get(&1), Some(10));
        assert_eq!(r.get(&0), None);
        assert_eq!(r.get(&2), None);
        assert_eq!(r.get(&4), Some(40));
    }

    #[test]
    fn replacing_an_entry_does_not_retire_a_generation() {
        let mut r = Recent::new(2);
        r.put("a", 1);
        r.put("b", 2);
        r.put("b", 3);
        assert_eq!((r.get(&"a"), r.get(&"b"), r.len()), (Some(1), Some(3), 2));
    }

    #[test]
    fn removed_and_refused_entries_are_gone_from_both_generations() {
        let mut r = Recent::new(2);
        for i in 0..4 {
            r.put(i, i);
        }
        r.remove(&0);
        r.remove(&3);
        r.retain(|v| *v != 2);
        assert_eq!((r.get(&0), r.get(&1), r.get(&2), r.get(&3)), (None, Some(1), None, None));
        assert!(!r.is_empty());
    }
}
