//! What every handler and server function can reach: handles to the
//! database, the writer, the files and the in-memory caches, all defined
//! below the features (`store`, `domain`), so no feature reaches back up.
use crate::domain::assignment::{Annotators, AssignmentRule};
use crate::domain::ids::StudyId;
use crate::domain::resolution::ResolveRule;
use crate::domain::study::Mapping;
use crate::domain::survey::SurveyKind;
use crate::store::clock::Clock;
use crate::store::images::ImageStore;
use crate::store::item_cache::ItemCache;
use crate::store::local_reads::LocalReads;
use crate::store::recent::Kept;
use crate::store::task_cache::TaskCache;
use crate::store::writer::Writer;
use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use sqlx::AnyPool;
use std::sync::{Arc, RwLock};

/// The server's handles behind one `Arc`: axum clones the state for every
/// extractor and routed layer of a request (about 64 times per answer round
/// trip, by callgrind), so a clone is one reference count, not one per field.
#[derive(Clone)]
pub struct AppState(Arc<Handles>);

impl std::ops::Deref for AppState {
    type Target = Handles;
    fn deref(&self) -> &Handles {
        &self.0
    }
}

pub struct Handles {
    pub leptos_options: LeptosOptions,
    pub db: AnyPool,
    /// The same SQLite file read on the calling thread (None on PostgreSQL):
    /// for the round trip's indexed reads only.
    pub local: Option<LocalReads>,
    pub writer: Writer,
    pub images: ImageStore,
    pub studies: StudyCache,
    /// What each study item shows (immutable), for the answer round trip.
    pub items: ItemCache,
    /// The tasks callers were just shown, for their answers.
    pub tasks: TaskCache,
    pub logins: crate::login_limits::LoginLimits,
    /// Link studies' clock and arrival queue.
    pub crowd: CrowdState,
    /// The registered survey kinds, handed down so that services below kinds resolve a stored kind name.
    pub kinds: &'static [SurveyKind],
    /// `serve --public-origin`, set once by the router: where participants
    /// reach the server behind a proxy (the study URL sent to Prolific).
    pub public_origin: std::sync::OnceLock<Arc<str>>,
}

impl AppState {
    /// The origin the study URL sent to Prolific starts with, for a request with these headers.
    pub fn study_origin(&self, headers: &axum::http::HeaderMap) -> String {
        let text = |name: axum::http::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
        crate::domain::prolific::draft::study_origin(
            self.public_origin.get().map(|p| &**p),
            text(axum::http::header::ORIGIN),
            text(axum::http::header::HOST),
        )
    }

    /// The state over an open database, with every cache empty: the caches
    /// are filled by use, so the server and the demo's seeding start alike.
    pub fn new(
        leptos_options: LeptosOptions,
        db: AnyPool,
        writer: Writer,
        images: ImageStore,
        logins: crate::login_limits::LoginLimits,
        crowd: CrowdState,
        kinds: &'static [SurveyKind],
    ) -> Self {
        AppState(Arc::new(Handles {
            leptos_options,
            local: LocalReads::open(&crate::store::db::location_of(&db)),
            db,
            writer,
            images,
            studies: StudyCache::default(),
            items: Default::default(),
            tasks: Default::default(),
            logins,
            crowd,
            kinds,
            public_origin: Default::default(),
        }))
    }
}

/// What `AppState` holds for crowd studies.
#[derive(Clone, Default)]
pub struct CrowdState {
    pub clock: Clock,
    pub bundles: BundleInstances,
    /// Where recent arrivals came from (memory only): the arrival bound's.
    pub addresses: crate::store::addresses::ArrivalAddresses,
}

/// Each link bundle's instances, in order. A bundle's items are written
/// with it and never change (no study is deleted, so no id is reused), so
/// every arrival's transaction need not read them again.
#[derive(Clone)]
pub struct BundleInstances(pub Kept<(StudyId, i64), Arc<[i64]>>);

impl Default for BundleInstances {
    fn default() -> Self {
        BundleInstances(Kept::new(4096))
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}

/// A study's settings, immutable once created.
#[derive(Debug, Clone)]
pub struct StudyMeta {
    pub id: StudyId,
    pub name: String,
    pub kind: SurveyKind,
    pub dataset: String,
    pub instructions: String,
    pub annotators: Annotators,
    pub rule: AssignmentRule,
    pub seed: u64,
    pub mapping: Mapping,
    pub resolve: ResolveRule,
    pub primary: Option<String>,
    /// The Step 3 study a Step 4 study was built from.
    pub source_study_id: Option<StudyId>,
    /// Adaptive overlap's settings; None for a fixed overlap.
    pub adaptive: Option<crate::domain::adaptive::Adaptive>,
    /// A link study's practice items (0 otherwise): a participant answers
    /// its bundle only after them (`domain::crowd::steps`).
    pub practice_items: usize,
}

impl StudyMeta {
    /// Under `resolve = "primary"`, the annotator whose answer settles an
    /// item answered by `answerers`: the spec's `primary`, or with pairs
    /// the first of the answerers' pair; None under any other rule.
    pub fn primary_among<'a>(&'a self, answerers: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
        if self.resolve != ResolveRule::Primary {
            return None;
        }
        match &self.primary {
            Some(p) => Some(p.as_str()),
            None => answerers.into_iter().find_map(|a| self.rule.primary_of_pair(a)),
        }
    }
}

/// Studies never change after creation, so the answer path reads them from
/// memory instead of the database. Fx-hashed: the ids are the database's.
#[derive(Clone, Default)]
pub struct StudyCache(Arc<RwLock<rustc_hash::FxHashMap<StudyId, Arc<StudyMeta>>>>);

impl StudyCache {
    pub fn get(&self, id: StudyId) -> Option<Arc<StudyMeta>> {
        self.0.read().ok()?.get(&id).cloned()
    }

    pub fn insert(&self, meta: StudyMeta) -> Arc<StudyMeta> {
        let meta = Arc::new(meta);
        if let Ok(mut map) = self.0.write() {
            map.insert(meta.id, meta.clone());
        }
        meta
    }
}
