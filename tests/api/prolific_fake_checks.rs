//! The fake Prolific's checks and status machines over real HTTP: the
//! reference's error envelope, drafts checked field by field, the study and
//! submission status machines, paginated lists.
use crate::prolific_fake::{refused_fields, FakeProlific};
use reqwest::Method;
use serde_json::{json, Value};

#[tokio::test]
async fn a_bad_token_gets_401_in_the_reference_envelope() {
    let fake = FakeProlific::start().await;
    let res =
        fake.client.get(fake.url("/api/v1/users/me/")).header("Authorization", "Token wrong").send().await.unwrap();
    assert_eq!(res.status(), 401);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"]["status"], 401);
    assert!(body["error"]["title"].is_string() && body["error"]["error_code"].is_number(), "{body}");
    let res = fake.client.post(fake.url("/_fake/tick")).send().await.unwrap();
    assert_eq!(res.status(), 401, "the control API takes the token too");
    let (status, me) = fake.get("/api/v1/users/me/").await;
    assert_eq!(status, 200);
    assert!(me["id"].is_string() && me["email"].is_string());
}

/// A change to a good draft that makes it wrong.
type Change = Box<dyn Fn(&mut Value)>;

#[tokio::test]
async fn drafts_are_checked_against_the_reference_and_refusals_name_the_field() {
    let fake = FakeProlific::start().await;
    let cases: Vec<(&str, Change, &str)> = vec![
        ("unknown enum value", Box::new(|d| d["prolific_id_option"] = json!("url_params")), "prolific_id_option"),
        (
            "unknown action",
            Box::new(|d| d["completion_codes"][0]["actions"][0]["action"] = json!("APPROVE")),
            "completion_codes[0].actions[0].action",
        ),
        ("wrong type", Box::new(|d| d["reward"] = json!("150")), "reward"),
        (
            "missing required",
            Box::new(|d| {
                d.as_object_mut().unwrap().remove("description");
            }),
            "description",
        ),
        ("unknown field", Box::new(|d| d["rewards"] = json!(150)), "rewards"),
        ("no PID placeholder", Box::new(|d| d["external_study_url"] = json!("https://x.test/")), "external_study_url"),
        ("too short to finish", Box::new(|d| d["maximum_allowed_time"] = json!(10)), "maximum_allowed_time"),
        ("a code twice", Box::new(|d| d["completion_codes"][1]["code"] = json!("DONE1")), "completion_codes[1].code"),
    ];
    for (what, change, field) in &cases {
        let mut draft = FakeProlific::draft(5);
        change(&mut draft);
        let (status, body) = fake.post("/api/v1/studies/", draft).await;
        assert_eq!(status, 400, "{what}: {body}");
        // The reference gives this operation's 400 as a bare ErrorDetail (audit AU).
        assert_eq!((body["status"].as_u64(), body.get("error")), (Some(400), None), "{body}");
        assert!(refused_fields(&body).iter().any(|f| f.starts_with(field)), "{what}: {body}");
    }
    let (status, study) = fake.post("/api/v1/studies/", FakeProlific::draft(5)).await;
    assert_eq!(status, 201, "{study}");
    assert_eq!(study["status"], "UNPUBLISHED");
    assert_eq!(study["internal_name"], "hardneg study 7");
    let state = fake.state().await;
    let refusals = state["requests"].as_array().unwrap().iter().filter(|r| r["status"] == 400).count();
    assert_eq!(refusals, cases.len(), "every refusal is in the request log with its reason");
    assert!(state["requests"][0]["reason"].as_str().unwrap().contains("prolific_id_option"));
    // A draft paying under Prolific's minimum is kept but cannot be published.
    let mut cheap = FakeProlific::draft(5);
    cheap["reward"] = json!(50);
    let (_, cheap) = fake.post("/api/v1/studies/", cheap).await;
    let path = format!("/api/v1/studies/{}/transition/", cheap["id"].as_str().unwrap());
    let (status, body) = fake.post(&path, json!({"action": "PUBLISH"})).await;
    assert_eq!(status, 400);
    assert_eq!(refused_fields(&body), vec!["reward"], "{body}");
}

#[tokio::test]
async fn studies_follow_the_reference_status_machine_and_locks() {
    let fake = FakeProlific::start().await;
    let (_, study) = fake.post("/api/v1/studies/", FakeProlific::draft(2)).await;
    let id = study["id"].as_str().unwrap().to_string();
    let path = format!("/api/v1/studies/{id}/");
    let transition = |action: &'static str| {
        let fake = &fake;
        let id = id.clone();
        async move { fake.post(&format!("/api/v1/studies/{id}/transition/"), json!({"action": action})).await }
    };
    assert_eq!(transition("PAUSE").await.0, 400, "a draft cannot be paused");
    let (status, v) = fake.patch(&path, json!({"name": "Renamed draft", "total_available_places": 1})).await;
    assert_eq!((status, v["total_available_places"].clone()), (200, json!(1)), "a draft may change anything");
    assert_eq!(transition("PUBLISH").await.1["status"], "ACTIVE");
    let (status, body) = fake.patch(&path, json!({"reward": 200})).await;
    assert_eq!((status, refused_fields(&body)), (400, vec!["reward".to_string()]), "locked once published");
    let (status, body) = fake.patch(&path, json!({"total_available_places": 0})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(fake.patch(&path, json!({"internal_name": "still mine"})).await.0, 200);
    assert_eq!(transition("PAUSE").await.1["status"], "PAUSED");
    assert_eq!(fake.try_arrive(&id, None).await.0, 409, "a paused study recruits no one");
    assert_eq!(transition("START").await.1["status"], "ACTIVE");
    let a = fake.arrive(&id, None).await;
    assert!(a
        .study_url
        .contains(&format!("PROLIFIC_PID={}&STUDY_ID={id}&SESSION_ID={}", a.participant_id, a.submission_id)));
    assert_eq!(fake.try_arrive(&id, None).await.0, 409, "the only place is taken");
    fake.submit(&a.submission_id, Some("DONE1")).await;
    assert_eq!(fake.get(&path).await.1["status"], "AWAITING REVIEW", "full, and everyone submitted");
    let (status, _) =
        fake.post(&format!("/api/v1/submissions/{}/transition/", a.submission_id), json!({"action": "APPROVE"})).await;
    assert_eq!(status, 200);
    assert_eq!(fake.get(&path).await.1["status"], "COMPLETED", "full and all reviewed");
    let (status, v) = fake.patch(&path, json!({"total_available_places": 3})).await;
    assert_eq!((status, v["status"].clone()), (200, json!("ACTIVE")), "more places: it recruits again");
    assert_eq!(transition("STOP").await.1["status"], "COMPLETED");
    assert_eq!(fake.try_arrive(&id, None).await.0, 409);
    assert_eq!(transition("START").await.0, 400, "a stopped study is not started again");
    let (status, _) = fake.call(Method::DELETE, &path, None).await;
    assert_eq!(status, 400, "published studies cannot be deleted");
    let transitions: Vec<String> = fake.state().await["studies"][0]["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"].as_str().unwrap().to_string())
        .collect();
    let expected = ["UNPUBLISHED", "ACTIVE", "PAUSED", "ACTIVE", "AWAITING REVIEW", "COMPLETED", "ACTIVE", "COMPLETED"];
    assert_eq!(transitions, expected);
}

#[tokio::test]
async fn submissions_move_as_prolific_moves_them_and_free_places() {
    let fake = FakeProlific::start().await;
    let id = fake.published_study(2).await;
    let (a, b) = (fake.arrive(&id, None).await, fake.arrive(&id, None).await);
    assert_eq!(fake.try_arrive(&id, None).await.0, 409, "full");
    let decide = |sub: &str, body: Value| {
        let path = format!("/api/v1/submissions/{sub}/transition/");
        let fake = &fake;
        async move { fake.post(&path, body).await }
    };
    let (status, body) = decide(&b.submission_id, json!({"action": "APPROVE"})).await;
    assert_eq!(status, 400, "an active submission cannot be approved yet: {body}");
    fake.return_(&a.submission_id).await;
    let (status, body) = fake.try_arrive(&id, Some(&a.participant_id)).await;
    assert_eq!(status, 409, "once per participant, even after a return: {body}");
    let c = fake.arrive(&id, None).await;
    assert_eq!(fake.get(&format!("/api/v1/studies/{id}/")).await.1["places_taken"], 2, "the return freed a place");
    fake.submit(&b.submission_id, Some("DONE1")).await;
    assert_eq!(decide(&b.submission_id, json!({"action": "APPROVE"})).await.1["status"], "APPROVED");
    assert_eq!(decide(&b.submission_id, json!({"action": "APPROVE"})).await.0, 200, "approving twice is ignored");
    let short = json!({"action": "REJECT", "rejection_category": "LOW_EFFORT", "message": "Too fast."});
    fake.submit(&c.submission_id, None).await;
    let (status, body) = decide(&c.submission_id, short).await;
    assert_eq!((status, refused_fields(&body)), (400, vec!["message".to_string()]));
    let long = "You answered every item in under a second, which is too fast to have looked at the images; see the instructions.";
    let reject = json!({"action": "REJECT", "rejection_category": "LOW_EFFORT", "message": long});
    assert_eq!(decide(&c.submission_id, reject).await.1["status"], "REJECTED");
    let (_, detail) = fake.get(&format!("/api/v1/submissions/{}/", c.submission_id)).await;
    assert_eq!(
        (detail["entered_code"].clone(), detail["participant"].clone()),
        (json!("NOCODE"), json!(c.participant_id))
    );
    let (_, counts) = fake.get(&format!("/api/v1/studies/{id}/submissions/counts/")).await;
    assert_eq!(
        (counts["APPROVED"].clone(), counts["REJECTED"].clone(), counts["RETURNED"].clone()),
        (json!(1), json!(1), json!(1))
    );
    assert_eq!(counts["TOTAL"], 3);
    // The codes' own actions: automatic approval, and a return request for a screen-out.
    let more = fake.published_study(3).await;
    let (x, y, z) = (fake.arrive(&more, None).await, fake.arrive(&more, None).await, fake.arrive(&more, None).await);
    assert_eq!(fake.submit(&x.submission_id, Some("AUTO1")).await["status"], "APPROVED");
    let screened = fake.submit(&y.submission_id, Some("SCREEN1")).await;
    assert_eq!(screened["status"], "AWAITING REVIEW");
    assert!(screened["return_requested"].is_string());
    assert_eq!(fake.return_(&y.submission_id).await["status"], "RETURNED");
    assert_eq!(fake.timeout(&z.submission_id).await["status"], "TIMED-OUT");
    let (_, study) = fake.get(&format!("/api/v1/studies/{more}/")).await;
    assert_eq!((study["places_taken"].clone(), study["status"].clone()), (json!(1), json!("ACTIVE")));
}

#[tokio::test]
async fn submission_lists_are_paginated_as_the_reference_says() {
    let fake = FakeProlific::start().await;
    let id = fake.published_study(45).await;
    let mut arrived = Vec::new();
    for _ in 0..45 {
        arrived.push(fake.arrive(&id, None).await.submission_id);
    }
    let mut seen = Vec::new();
    let mut next = Some(fake.url(&format!("/api/v1/studies/{id}/submissions/?page_size=20")));
    let mut pages = 0;
    while let Some(url) = next {
        let path = url.strip_prefix(&fake.base).unwrap().to_string();
        let (status, page) = fake.get(&path).await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["meta"]["count"], 45);
        seen.extend(page["results"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_string()));
        next = page["_links"]["next"]["href"].as_str().map(str::to_string);
        pages += 1;
    }
    assert_eq!((pages, &seen), (3, &arrived), "three pages, in arrival order, each submission once");
    let (status, _) = fake.get(&format!("/api/v1/studies/{id}/submissions/?page_size=20&page=4")).await;
    assert_eq!(status, 404, "past the last page");
    let (_, first) = fake.get(&format!("/api/v1/submissions/?study={id}")).await;
    assert_eq!(first["results"].as_array().unwrap().len(), 20, "the reference's default page size");
    let (status, body) = fake.get("/api/v1/submissions/?status=ACTIVE").await;
    assert_eq!(
        (status, refused_fields(&body)),
        (400, vec!["study".to_string()]),
        "study is a required query parameter"
    );
    let (status, body) = fake.get(&format!("/api/v1/submissions/?study={id}&status=DONE")).await;
    assert_eq!((status, refused_fields(&body)), (400, vec!["status".to_string()]));
    let (_, active) = fake.get(&format!("/api/v1/submissions/?study={id}&status=ACTIVE&page_size=100")).await;
    assert_eq!(active["results"].as_array().unwrap().len(), 45);
}
