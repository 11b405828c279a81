//! What a study item shows, kept in memory: every `next` presents two items
//! and every `answer` the one answered, and reading them (the instance, its
//! candidates, the chosen image) was most of a round trip's queries.
//!
//! Nothing to invalidate: an instance, its candidates and a study's items
//! are written once, in the transactions that create them, and nothing
//! updates or deletes them afterwards (an import's updates of an instance
//! run inside its own insert transaction, before any study can name it).
//! A study id names one study for good, so the key names one item for good.
use crate::domain::ids::{InstanceId, StudyId};
use crate::domain::survey::ItemData;
use crate::store::recent::Kept;
use std::sync::Arc;

/// Items kept per generation: at most twice this many (a few hundred bytes each).
const GENERATION: usize = 50_000;

/// (study, instance, query): the kind's question is part of the item.
type Key = (StudyId, InstanceId, u8);

#[derive(Clone)]
pub struct ItemCache(Kept<Key, Arc<ItemData>>);

impl Default for ItemCache {
    fn default() -> Self {
        ItemCache(Kept::new(GENERATION))
    }
}

impl ItemCache {
    /// The item under `key` (study, instance, query), from memory, else
    /// from `load` (only awaited on a miss; `studies::meta::load_item`).
    pub async fn get_or_load<E>(
        &self,
        key: Key,
        load: impl std::future::Future<Output = Result<ItemData, E>>,
    ) -> Result<Arc<ItemData>, E> {
        self.0.get_or_load(key, async { Ok(Arc::new(load.await?)) }).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::survey::SurveyKind;
    use crate::error::ServiceError;
    use crate::studies::meta::load_item;

    async fn item(
        cache: &ItemCache,
        db: &sqlx::AnyPool,
        kind: SurveyKind,
        study: i64,
        instance: i64,
        query: u8,
    ) -> Result<Arc<ItemData>, ServiceError> {
        let (study, instance) = (StudyId::new(study), InstanceId::new(instance));
        cache.get_or_load((study, instance, query), load_item(db, kind, study, instance, query)).await
    }

    #[tokio::test]
    async fn items_are_read_once_per_study_and_question() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::store::db::open_pool(&dir.path().join("db.sqlite")).await.unwrap();
        let mut conn = db.acquire().await.unwrap();
        // One instance in two studies, each with its own chosen image.
        sqlx::query("PRAGMA foreign_keys = OFF").execute(&mut *conn).await.unwrap();
        for sql in [
            "INSERT INTO instances (id, dataset_id, key, caption, negative_caption, caption_orig, negative_caption_orig,
                                    neg_type, subtype, positive_image)
             VALUES (1, 1, 'k', 'a dog', 'a cat', 'a dog', 'a cat', 'SWAP', 'OBJECT', 'real')",
            "INSERT INTO study_items (study_id, instance_id, chosen_image) VALUES (1, 1, 'one'), (2, 1, 'two')",
        ] {
            sqlx::query(sql).execute(&mut *conn).await.unwrap();
        }
        let kind = SurveyKind::parse_in(crate::kinds::KINDS, "ambiguity").unwrap();
        let cache = ItemCache::default();
        let first = item(&cache, &db, kind, 1, 1, 0).await.unwrap();
        assert_eq!((first.caption.as_str(), first.chosen_image.as_deref()), ("a dog", Some("one")));
        assert_eq!(item(&cache, &db, kind, 2, 1, 0).await.unwrap().chosen_image.as_deref(), Some("two"));
        // Gone from the file, still served from memory...
        for sql in ["DELETE FROM study_items", "DELETE FROM instances"] {
            sqlx::query(sql).execute(&mut *conn).await.unwrap();
        }
        let again = item(&cache, &db, kind, 1, 1, 0).await.unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(item(&cache, &db, kind, 2, 1, 0).await.unwrap().chosen_image.as_deref(), Some("two"));
        // ...but another question about the item is another entry.
        assert!(item(&cache, &db, kind, 1, 1, 1).await.is_err());
    }
}
