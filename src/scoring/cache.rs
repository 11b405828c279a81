//! The embedding cache (migrations/0005_embeddings.sql).
use crate::store::db::now_secs;
use sqlx::AnyPool;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Image,
    Text,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Image => "image",
            Kind::Text => "text",
        }
    }
}

/// Everything but the content hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey {
    pub model: String,
    pub weights: String,
    pub preprocess: String,
}

pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn from_blob(b: &[u8]) -> Option<Vec<f32>> {
    b.len().is_multiple_of(4).then(|| b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// The cached vectors among `hashes`.
pub async fn lookup(
    db: &AnyPool,
    key: &CacheKey,
    kind: Kind,
    hashes: &[String],
) -> sqlx::Result<HashMap<String, Vec<f32>>> {
    let mut found = HashMap::new();
    for chunk in hashes.chunks(500) {
        let mut q = sqlx::QueryBuilder::new("SELECT content_hash, vector FROM embeddings WHERE model = ");
        q.push_bind(&key.model).push(" AND weights = ").push_bind(&key.weights);
        q.push(" AND preprocess = ").push_bind(&key.preprocess).push(" AND kind = ").push_bind(kind.as_str());
        q.push(" AND content_hash IN (");
        let mut sep = q.separated(", ");
        for h in chunk {
            sep.push_bind(h);
        }
        q.push(")");
        let (sql, args) = crate::store::db::numbered(&mut q)?;
        let rows: Vec<(String, Vec<u8>)> = sqlx::query_as_with(&sql, args).fetch_all(db).await?;
        found.extend(rows.into_iter().filter_map(|(h, b)| from_blob(&b).map(|v| (h, v))));
    }
    Ok(found)
}

/// Stores one batch in one transaction.
pub async fn store(db: &AnyPool, key: &CacheKey, kind: Kind, items: &[(String, Vec<f32>)]) -> sqlx::Result<()> {
    let mut tx = crate::store::db::begin_write(db).await?;
    let now = now_secs();
    for (hash, v) in items {
        sqlx::query(
            "INSERT INTO embeddings (model, weights, preprocess, kind, content_hash, dim, vector, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (model, weights, preprocess, kind, content_hash)
             DO UPDATE SET dim = excluded.dim, vector = excluded.vector, created_at = excluded.created_at",
        )
        .bind(&key.model)
        .bind(&key.weights)
        .bind(&key.preprocess)
        .bind(kind.as_str())
        .bind(hash)
        .bind(v.len() as i64)
        .bind(to_blob(v))
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_f32_little_endian() {
        let v = vec![1.0f32, -0.5, 3.25e-7];
        let b = to_blob(&v);
        assert_eq!(&b[..4], &[0, 0, 0x80, 0x3f]);
        assert_eq!(from_blob(&b), Some(v));
        assert_eq!(from_blob(&[1, 2, 3]), None);
    }

    #[tokio::test]
    async fn lookup_finds_only_the_same_key_and_kind() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::store::db::open_pool(&dir.path().join("t.sqlite")).await.unwrap();
        let key = CacheKey { model: "m".into(), weights: "w".into(), preprocess: "p".into() };
        store(&db, &key, Kind::Text, &[("h1".into(), vec![1.0, 2.0])]).await.unwrap();
        let hashes = vec!["h1".to_string(), "h2".to_string()];
        let got = lookup(&db, &key, Kind::Text, &hashes).await.unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got["h1"], vec![1.0, 2.0]);
        assert!(lookup(&db, &key, Kind::Image, &hashes).await.unwrap().is_empty());
        let other = CacheKey { weights: "w2".into(), ..key };
        assert!(lookup(&db, &other, Kind::Text, &hashes).await.unwrap().is_empty());
    }
}
