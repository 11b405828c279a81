//! Assembling the HTTP application: sessions, role guard, API, images,
//! static files and the Leptos pages.
use super::auth;
use super::state::{AppState, StudyCache};
use super::{api, db, images::ImageStore, media, writer::Writer};
use crate::domain::role::Role;
use crate::ui::{shell, App};
use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Router;
use leptos::config::LeptosOptions;
use leptos_axum::{generate_route_list, LeptosRoutes};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, SessionManagerLayer};
use tower_sessions_sqlx_store::SqliteStore;

pub struct Paths {
    pub data_dir: PathBuf,
    pub site_dir: PathBuf,
}

impl Paths {
    pub fn db_file(&self) -> PathBuf {
        self.data_dir.join("hardneg.sqlite")
    }
    pub fn image_dir(&self) -> PathBuf {
        self.data_dir.join("images")
    }
}

pub async fn build_state(paths: &Paths, addr: SocketAddr) -> anyhow::Result<AppState> {
    std::fs::create_dir_all(&paths.data_dir)?;
    let pool = db::open_pool(&paths.db_file()).await?;
    let writer = Writer::spawn(db::open_writer_connection(&paths.db_file()).await?);
    let leptos_options = LeptosOptions::builder()
        .output_name("hardneg")
        .site_root(paths.site_dir.to_string_lossy().to_string())
        .site_pkg_dir("pkg")
        .site_addr(addr)
        .build();
    let images = ImageStore::new(paths.image_dir());
    super::api_export::sweep_leftovers(&images);
    Ok(AppState { leptos_options, db: pool, writer, images, studies: StudyCache::default() })
}

pub async fn router(state: AppState, secure_cookies: bool) -> anyhow::Result<Router> {
    let store = SqliteStore::new(state.db.clone());
    store.migrate().await?;
    let sessions = SessionManagerLayer::new(store)
        .with_name("hardneg_session")
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(secure_cookies)
        .with_expiry(Expiry::OnInactivity(tower_sessions::cookie::time::Duration::days(7)));
    let routes = generate_route_list(App);
    let pkg_dir = Path::new(&*state.leptos_options.site_root).join("pkg");
    let app = Router::new()
        .leptos_routes(&state, routes, {
            let options = state.leptos_options.clone();
            move || shell(options.clone())
        })
        .merge(api::routes())
        .merge(super::api_curation::routes())
        .merge(super::api_export::routes())
        .merge(media::routes())
        .nest_service(
            "/pkg",
            tower::ServiceBuilder::new()
                .layer(SetResponseHeaderLayer::overriding(
                    header::CACHE_CONTROL,
                    header::HeaderValue::from_static("no-cache"),
                ))
                .service(ServeDir::new(pkg_dir)),
        )
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        .layer(middleware::from_fn(guard_pages))
        .layer(sessions)
        .with_state(state);
    Ok(app)
}

/// Which role a page area needs. Server functions and API routes check
/// again themselves; this keeps a page from even rendering for the wrong role.
fn page_rule(path: &str) -> Option<fn(Role) -> bool> {
    let under = |prefix: &str| path == prefix || path.starts_with(&format!("{prefix}/"));
    if under("/annotate") {
        Some(Role::may_annotate)
    } else if under("/research") {
        Some(Role::may_research)
    } else if under("/admin") {
        Some(Role::may_administer)
    } else {
        None
    }
}

async fn guard_pages(session: tower_sessions::Session, req: Request, next: Next) -> Response {
    let Some(allowed) = page_rule(req.uri().path()) else {
        return next.run(req).await;
    };
    match auth::current_user(&session).await {
        None => Redirect::to("/login").into_response(),
        Some(user) if allowed(user.role) => next.run(req).await,
        Some(user) => (
            StatusCode::FORBIDDEN,
            axum::response::Html(format!(
                "<!doctype html><title>Forbidden</title><p>This page is not for the {} role. <a href=\"{}\">Go to your page</a>.</p>",
                user.role.as_str(),
                user.role.home()
            )),
        )
            .into_response(),
    }
}

pub async fn serve(paths: Paths, addr: SocketAddr) -> anyhow::Result<()> {
    let state = build_state(&paths, addr).await?;
    let app = router(state, false).await?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    println!("hardneg listening on http://{local}");
    axum::serve(listener, app.into_make_service()).with_graceful_shutdown(shutdown_signal()).await?;
    Ok(())
}

async fn shutdown_signal() {
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_rules_cover_each_area_and_nothing_else() {
        assert!(page_rule("/annotate/3").unwrap()(Role::Annotator));
        assert!(!page_rule("/annotate").unwrap()(Role::Researcher));
        assert!(page_rule("/research").unwrap()(Role::Admin));
        assert!(!page_rule("/admin/users").unwrap()(Role::Researcher));
        assert!(page_rule("/login").is_none());
        assert!(page_rule("/annotatex").is_none());
    }
}
