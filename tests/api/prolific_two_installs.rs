//! Two hardneg databases on one Prolific workspace (a pilot beside
//! production) number their studies alike, and a copied spec keeps its
//! hash: the second must make its own draft, never take the first one's
//! live study for its lost draft (audit AX: "published" with a link to the
//! other server, and its places, pauses and bonuses acting on that study).
use crate::prolific_fake::FakeProlific;
use crate::prolific_kit::{post, Hardneg};
use crate::prolific_more::{create, env, spec};
use std::collections::HashMap;

#[tokio::test]
async fn a_second_database_on_the_same_workspace_makes_its_own_study() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start().await;
    let the_spec = spec("pilot and production", "estimated_minutes = 10");
    let mut published = Vec::new();
    for name in ["pilot", "production"] {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let app = Hardneg::start(&dir.join("data"), &env(&fake, &[]), &dir.join("log"), HashMap::new());
        let r = app.login("researcher").await;
        let study = create(&app, &r, &the_spec).await;
        let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
        assert_eq!((s, v["status"].as_str()), (200, Some("ACTIVE")), "{name}: {v}");
        let link: serde_json::Value =
            r.get(app.url(&format!("/api/v1/studies/{study}/link"))).send().await.unwrap().json().await.unwrap();
        let token = link["token"].as_str().unwrap().to_string();
        published.push((study, v["prolific_id"].as_str().unwrap().to_string(), token));
    }
    let [(a, pid_a, token_a), (b, pid_b, token_b)] = <[_; 2]>::try_from(published).unwrap();
    assert_eq!(a, b, "both databases number the study alike");
    assert_ne!(pid_a, pid_b, "the second took the first one's study");
    let studies = fake.state().await["studies"].as_array().unwrap().clone();
    assert_eq!(studies.len(), 2);
    for (pid, token) in [(&pid_a, &token_a), (&pid_b, &token_b)] {
        let s = studies.iter().find(|s| s["id"] == pid.as_str()).unwrap();
        let url = s["external_study_url"].as_str().unwrap();
        assert!(url.contains(&format!("/join/{token}")), "{pid} sends participants to {url}");
    }
}
