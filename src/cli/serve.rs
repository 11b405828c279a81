//! `hardneg serve`: opens the store, assembles the HTTP application (the
//! API and images from `http`, the Leptos pages, static files, sessions)
//! and runs it until Ctrl-C.
use crate::http;
use crate::state::AppState;
use crate::store::{db, images::ImageStore, writer::Writer};
use crate::ui::{shell, App};
use anyhow::Context;
use axum::http::header;
use axum::middleware;
use axum::response::IntoResponse;
use axum::Router;
use leptos::config::LeptosOptions;
use leptos_axum::{generate_route_list, LeptosRoutes};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use tower::ServiceBuilder;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, SessionManagerLayer};

pub struct Paths {
    pub data_dir: PathBuf,
    pub site_dir: PathBuf,
    pub database: db::Location,
}

impl Paths {
    pub fn image_dir(&self) -> PathBuf {
        self.data_dir.join("images")
    }
}

pub async fn build_state(paths: &Paths, addr: SocketAddr, exposure: &Exposure) -> anyhow::Result<AppState> {
    std::fs::create_dir_all(&paths.data_dir)?;
    let pool = db::open(&paths.database).await?;
    let writer = Writer::open(&paths.database).await?;
    let leptos_options = LeptosOptions::builder()
        .output_name(crate::cli::site::output_name(&paths.site_dir))
        .site_root(paths.site_dir.to_string_lossy().to_string())
        .site_pkg_dir("pkg")
        .site_addr(addr)
        .build();
    let images = ImageStore::new(paths.image_dir());
    // Another server may be mid-upload in a shared data dir: only a sole
    // server (SQLite's, holding serve.lock) sweeps.
    let swept = if paths.database.is_postgres() { 0 } else { crate::store::leftovers::sweep(images.root()) };
    if swept > 0 {
        tracing::info!(swept, "removed leftovers of an earlier run (partial uploads, exports, staged files)");
    }
    let logins = match exposure.login_checks {
        Some(n) => crate::login_limits::LoginLimits::new(n),
        None => crate::login_limits::LoginLimits::default(),
    }
    .with_queue_wait(exposure.login_wait);
    let crowd = crate::state::CrowdState { clock: crate::store::clock::Clock::from_env(), ..Default::default() };
    Ok(AppState::new(leptos_options, pool, writer, images, logins, crowd, crate::kinds::KINDS))
}

/// How the server is reached (cookies, the cross-site check, client
/// addresses) and how many password checks it runs at once.
pub struct Exposure {
    /// Set the session cookie's `Secure` flag (serve behind TLS).
    pub secure_cookies: bool,
    /// The origin browsers use when a proxy serves the app, e.g. `https://hardneg.example.org`.
    pub public_origin: Option<String>,
    /// Honour `X-Forwarded-For` and `X-Forwarded-Proto` (a reverse proxy in front).
    pub trust_proxy: bool,
    /// Password checks at once (~19 MiB each); default: one per core.
    pub login_checks: Option<usize>,
    /// How long a login waits for a free check before a 503.
    pub login_wait: std::time::Duration,
}

pub async fn router(state: AppState, exposure: &Exposure) -> anyhow::Result<Router> {
    let secure_cookies = exposure.secure_cookies;
    if let Some(public) = &exposure.public_origin {
        let _ = state.public_origin.set(public.trim_end_matches('/').into());
    }
    let table = crate::store::session_table::SessionTable::new(state.db.clone(), state.writer.gate());
    // Every request loads its session: from memory, not a query, unless
    // other servers share the database (one's logout must hold on all).
    let store = if db::is_postgres(&state.db) {
        crate::store::sessions::CachedSessions::without_cache(table)
    } else {
        crate::store::sessions::CachedSessions::new(table)
    };
    // Expired sessions are deleted hourly, or the table would only grow.
    tokio::spawn(tower_sessions::ExpiredDeletion::continuously_delete_expired(
        store.clone(),
        std::time::Duration::from_secs(3600),
    ));
    let sessions = SessionManagerLayer::new(store)
        .with_name("hardneg_session")
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(secure_cookies)
        .with_expiry(Expiry::OnInactivity(tower_sessions::cookie::time::Duration::days(7)));
    let routes = generate_route_list(App);
    let pkg_dir = Path::new(&*state.leptos_options.site_root).join("pkg");
    crate::ui_kit::page::set_output_name(&state.leptos_options.output_name);
    let inner = Router::new()
        .leptos_routes(&state, routes, {
            let options = state.leptos_options.clone();
            move || shell(options.clone())
        })
        .merge(http::routes())
        .nest_service("/pkg", crate::cli::site::pkg_service(&pkg_dir))
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        .with_state(state);
    // The layers wrap the router once, outermost first. (`Router::layer`
    // wraps every route in each layer and boxes it again, and axum clones a
    // route's whole chain per request: 52 boxed clones per request, 11 % of
    // a round trip's instructions by callgrind.)
    let layered = ServiceBuilder::new()
        .layer(middleware::from_fn_with_state(http::proxy::TrustProxy(exposure.trust_proxy), http::proxy::forwarded))
        .layer(axum::extract::DefaultBodyLimit::max(http::limits::SMALL_BODY))
        // No page may be framed (clickjacking) or content-sniffed: outside
        // the refusals below, so that theirs carry the headers too.
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            header::HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_FRAME_OPTIONS,
            header::HeaderValue::from_static("DENY"),
        ))
        .layer(middleware::from_fn_with_state(
            http::origin::Origins { public: exposure.public_origin.as_deref().map(Into::into) },
            http::origin::same_origin_only,
        ))
        .layer(sessions)
        // Pages and answers are per user and change: always revalidated.
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CACHE_CONTROL,
            header::HeaderValue::from_static("no-cache"),
        ))
        .map_response(IntoResponse::into_response)
        .layer(crate::cli::site::compression())
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(crate::ui_kit::error_page::panicked))
        .layer(middleware::from_fn(http::guard::guard_pages))
        .service(inner);
    Ok(Router::new().fallback_service(layered))
}

pub async fn serve(paths: Paths, addr: SocketAddr, exposure: Exposure) -> anyhow::Result<()> {
    let stop = Stop::listen()?;
    let state = build_state(&paths, addr, &exposure).await?;
    crate::studies::sweeps::start(state.clone()).await;
    // Sessions are checked against their accounts' standing from now on.
    crate::accounts::standing::watch(state.db.clone());
    crate::prolific::spawn_background(state.db.clone());
    let app = router(state, &exposure).await?;
    let limits = crate::cli::listen::Limits::from_env(exposure.trust_proxy);
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("listening on {addr}"))?;
    let local = listener.local_addr()?;
    tracing::info!(?limits, "connection limits");
    println!("hardneg listening on http://{local}");
    crate::cli::listen::serve(listener, app, limits, stop.wait()).await;
    Ok(())
}

/// Ctrl-C or SIGTERM (what `docker stop` and systemd send) stop gracefully.
/// Both are listened for from the first moment of `serve`: tokio passes a
/// signal only to listeners that existed when it came, so listening once
/// serving began lost a SIGTERM sent just after the address was printed
/// (the server ran on), and one sent earlier killed it without its shutdown.
/// A signal while the database opens is kept: the server stops once it is up.
struct Stop {
    terminate: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
}

impl Stop {
    fn listen() -> anyhow::Result<Stop> {
        use tokio::signal::unix::{signal, SignalKind};
        let listening = |kind| signal(kind).context("listening for SIGTERM and SIGINT");
        Ok(Stop { terminate: listening(SignalKind::terminate())?, interrupt: listening(SignalKind::interrupt())? })
    }

    async fn wait(mut self) {
        tokio::select! {
            _ = self.terminate.recv() => {}
            _ = self.interrupt.recv() => {}
        }
    }
}
