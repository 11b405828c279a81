//! The fake Prolific's asynchronous work, money, faults, webhooks and
//! participant groups, through real HTTP (the helper is in prolific_fake.rs).
use crate::prolific_fake::{refused_fields, FakeProlific};
use base64::Engine;
use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A study with `n` participants who all submitted with the manual-review code; their submission ids.
async fn submitted(fake: &FakeProlific, n: u32) -> (String, Vec<String>) {
    let id = fake.published_study(n).await;
    let mut subs = Vec::new();
    for _ in 0..n {
        let a = fake.arrive(&id, None).await;
        fake.submit(&a.submission_id, Some("DONE1")).await;
        subs.push(a.submission_id);
    }
    (id, subs)
}

async fn status_of(fake: &FakeProlific, sub: &str) -> Value {
    fake.get(&format!("/api/v1/submissions/{sub}/")).await.1["status"].clone()
}

#[tokio::test]
async fn bulk_approval_is_applied_later_not_in_its_answer() {
    let fake = FakeProlific::start_with(&["--async-delay-ms", "600000"]).await;
    let (_, subs) = submitted(&fake, 3).await;
    let (status, body) = fake.post("/api/v1/submissions/bulk-approve/", json!({"submission_ids": subs})).await;
    assert_eq!(status, 200, "{body}");
    for s in &subs {
        assert_eq!(status_of(&fake, s).await, "AWAITING REVIEW", "not yet: approvals are asynchronous");
    }
    assert_eq!(fake.tick().await["bulk_approvals"], 1);
    for s in &subs {
        assert_eq!(status_of(&fake, s).await, "APPROVED");
    }
    let many: Vec<String> = (0..1001).map(|i| format!("{i:024x}")).collect();
    let (status, body) = fake.post("/api/v1/submissions/bulk-approve/", json!({"submission_ids": many})).await;
    assert_eq!((status, refused_fields(&body)), (400, vec!["submission_ids".to_string()]));
    let (status, _) = fake.post("/api/v1/submissions/bulk-approve/", json!({"submissions": subs})).await;
    assert_eq!(status, 400, "neither of the reference's two forms");
}

#[tokio::test]
async fn bulk_approval_happens_on_the_fakes_own_timer_too() {
    let fake = FakeProlific::start_with(&["--async-delay-ms", "50"]).await;
    let (_, subs) = submitted(&fake, 2).await;
    fake.post("/api/v1/submissions/bulk-approve/", json!({"submission_ids": subs})).await;
    for _ in 0..100 {
        if status_of(&fake, &subs[1]).await == "APPROVED" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the bulk approval was never applied");
}

#[tokio::test]
async fn paying_a_bonus_twice_pays_it_twice_and_both_are_recorded() {
    let fake = FakeProlific::start_with(&["--async-delay-ms", "600000"]).await;
    let (study, subs) = submitted(&fake, 2).await;
    let participant = fake.get(&format!("/api/v1/submissions/{}/", subs[1])).await.1["participant"].clone();
    let csv = format!("{},1.50\n{},0.25\n", subs[0], participant.as_str().unwrap());
    let (status, bonus) =
        fake.post("/api/v1/submissions/bonus-payments/", json!({"study_id": study, "csv_bonuses": csv})).await;
    assert_eq!(status, 201, "{bonus}");
    assert_eq!(bonus["amount"], 175);
    assert!(bonus["total_amount"].as_f64().unwrap() > 175.0, "fees and VAT on top");
    let pay = format!("/api/v1/bulk-bonus-payments/{}/pay/", bonus["id"].as_str().unwrap());
    assert_eq!(fake.post(&pay, json!({})).await.0, 202);
    assert_eq!(fake.post(&pay, json!({})).await.0, 202);
    assert_eq!(
        fake.get(&format!("/api/v1/submissions/{}/", subs[0])).await.1["bonus_payments"],
        json!([]),
        "asynchronous"
    );
    assert_eq!(fake.tick().await["payments"], 2);
    let (_, first) = fake.get(&format!("/api/v1/submissions/{}/", subs[0])).await;
    assert_eq!(first["bonus_payments"], json!([150, 150]), "paid twice");
    let (_, second) = fake.get(&format!("/api/v1/submissions/{}/", subs[1])).await;
    assert_eq!(second["bonus_payments"], json!([25, 25]));
    let state = fake.state().await;
    assert_eq!(state["payments"].as_array().unwrap().len(), 2, "every pay call is recorded");
    let (status, body) = fake
        .post("/api/v1/submissions/bonus-payments/", json!({"study_id": study, "csv_bonuses": "nobody,1.00"}))
        .await;
    assert_eq!((status, refused_fields(&body)), (400, vec!["csv_bonuses".to_string()]));
    assert!(body["error"]["detail"]["csv_bonuses"][0].as_str().unwrap().contains("nobody"));
    assert_eq!(fake.post("/api/v1/bulk-bonus-payments/000000000000000000000000/pay/", json!({})).await.0, 404);
}

#[tokio::test]
async fn faults_strike_on_demand_and_a_dropped_answer_still_applies_the_request() {
    let fake = FakeProlific::start().await;
    let (_, subs) = submitted(&fake, 3).await;
    fake.fault("POST", "/api/v1/submissions/*/transition/", "drop_response", 1).await;
    let approve = |sub: &str| {
        let req = fake
            .client
            .post(fake.url(&format!("/api/v1/submissions/{sub}/transition/")))
            .header("Authorization", format!("Token {}", fake.token))
            .json(&json!({"action": "APPROVE"}));
        req.send()
    };
    let dropped = approve(&subs[0]).await;
    assert!(dropped.is_err(), "no answer came: {dropped:?}");
    assert_eq!(status_of(&fake, &subs[0]).await, "APPROVED", "yet the approval was made");
    for (fault, status) in [("429", 429), ("500", 500), ("503", 503)] {
        fake.fault("POST", "/api/v1/submissions/", fault, 1).await;
        assert_eq!(approve(&subs[1]).await.unwrap().status().as_u16(), status);
        assert_eq!(status_of(&fake, &subs[1]).await, "AWAITING REVIEW", "{fault}: not applied");
    }
    fake.fault("POST", "/api/v1/submissions/", "reset", 1).await;
    assert!(approve(&subs[1]).await.is_err());
    assert_eq!(status_of(&fake, &subs[1]).await, "AWAITING REVIEW", "a reset comes before the request is applied");
    fake.fault_with(json!({"method": "POST", "path": "/api/v1/submissions/", "fault": "timeout", "delay_ms": 2000}))
        .await;
    let quick = reqwest::Client::builder().timeout(Duration::from_millis(300)).build().unwrap();
    let timed_out = quick
        .post(fake.url(&format!("/api/v1/submissions/{}/transition/", subs[2])))
        .header("Authorization", format!("Token {}", fake.token))
        .json(&json!({"action": "APPROVE"}))
        .send()
        .await;
    assert!(timed_out.is_err());
    assert_eq!(status_of(&fake, &subs[2]).await, "APPROVED", "applied, only the answer was late");
    assert_eq!(approve(&subs[1]).await.unwrap().status(), 200, "the faults are used up");
    let faults: Vec<Value> = fake.state().await["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["fault"].as_str().map(|f| json!(f)))
        .collect();
    assert_eq!(
        faults,
        vec![
            json!("drop_response"),
            json!("429"),
            json!("500"),
            json!("503"),
            json!("reset"),
            json!("timeout 2000 ms")
        ]
    );
}

/// A test-side webhook receiver: records (headers, body) of each POST, answers the statuses given, then 200.
async fn receiver(statuses: Vec<u16>) -> (String, Arc<Mutex<Vec<(Vec<(String, String)>, String)>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks/prolific", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        let mut statuses = statuses.into_iter();
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            let (head, body) = loop {
                let n = stream.read(&mut chunk).await.unwrap();
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).to_string();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let len: usize = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase().strip_prefix("content-length: ").map(|v| v.parse().unwrap())
                        })
                        .unwrap_or(0);
                    if body.len() >= len || n == 0 {
                        break (head.to_string(), body.to_string());
                    }
                }
            };
            let headers = head
                .lines()
                .skip(1)
                .filter_map(|l| l.split_once(": "))
                .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
                .collect();
            log.lock().unwrap().push((headers, body));
            let status = statuses.next().unwrap_or(200);
            let _ = stream.write_all(format!("HTTP/1.1 {status} X\r\nContent-Length: 0\r\n\r\n").as_bytes()).await;
        }
    });
    (url, seen)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("no {name} header"))
}

#[tokio::test]
async fn webhooks_are_signed_retried_and_duplicated_on_demand() {
    let fake = FakeProlific::start_with(&["--async-delay-ms", "600000"]).await;
    let (url, seen) = receiver(vec![500]).await;
    let workspace = fake.state().await["workspace_id"].as_str().unwrap().to_string();
    let sub = json!({"event_type": "submission.status.change", "target_url": url, "workspace_id": workspace});
    let (status, body) = fake.post("/api/v1/hooks/subscriptions/", sub.clone()).await;
    assert_eq!(status, 400, "a secret comes first: {body}");
    let (status, secret) = fake.post("/api/v1/hooks/secrets/", json!({"workspace_id": workspace})).await;
    assert_eq!(status, 201);
    let secret = secret["value"].as_str().unwrap().to_string();
    let (status, created) = fake.post("/api/v1/hooks/subscriptions/", sub).await;
    assert_eq!(status, 201, "{created}");
    let study = fake.published_study(1).await;
    let a = fake.arrive(&study, None).await;
    for _ in 0..50 {
        if seen.lock().unwrap().len() >= 2 {
            break;
        }
        fake.tick().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let deliveries = seen.lock().unwrap().clone();
    assert_eq!(deliveries.len(), 2, "the first delivery got 500 and was retried");
    assert_eq!(deliveries[0].1, deliveries[1].1, "the same event again");
    let (headers, body) = &deliveries[1];
    let timestamp = header(headers, "x-prolific-request-timestamp");
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{timestamp}{body}").as_bytes());
    let expected = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    assert_eq!(header(headers, "x-prolific-request-signature"), expected, "HMAC-SHA256 over timestamp + raw body");
    let event: Value = serde_json::from_str(body).unwrap();
    assert_eq!(
        (event["resource_id"].as_str(), event["status"].as_str()),
        (Some(a.submission_id.as_str()), Some("ACTIVE"))
    );
    assert_eq!(event["event_type"], "submission.status.change");
    fake.webhooks(json!({"duplicate": 1.0})).await;
    fake.submit(&a.submission_id, Some("DONE1")).await;
    fake.tick().await;
    let deliveries = seen.lock().unwrap().clone();
    assert_eq!(deliveries.len(), 4, "delivered twice");
    assert_eq!(deliveries[2].1, deliveries[3].1, "the same event, the same event_id");
    let (_, events) =
        fake.get(&format!("/api/v1/hooks/subscriptions/{}/events/", created["id"].as_str().unwrap())).await;
    let statuses: Vec<&str> =
        events["results"].as_array().unwrap().iter().map(|e| e["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, vec!["SUCCEEDED", "SUCCEEDED"]);
}

#[tokio::test]
async fn a_group_block_list_keeps_its_members_out_and_codes_fill_groups() {
    let fake = FakeProlific::start().await;
    let workspace = fake.state().await["workspace_id"].as_str().unwrap().to_string();
    let step3 = "5f0000000000000000000001";
    let (status, group) = fake
        .post(
            "/api/v1/participant-groups/",
            json!({"workspace_id": workspace, "name": "bivlc step 3", "participant_ids": [step3]}),
        )
        .await;
    assert_eq!(status, 201, "{group}");
    let gid = group["id"].as_str().unwrap().to_string();
    let mut draft = FakeProlific::draft(5);
    draft["filters"] = json!([{"filter_id": "participant_group_blocklist", "selected_values": [gid]}]);
    draft["completion_codes"][0]["actions"] =
        json!([{"action": "MANUALLY_REVIEW"}, {"action": "ADD_TO_PARTICIPANT_GROUP", "participant_group": gid}]);
    let (status, study) = fake.post("/api/v1/studies/", draft.clone()).await;
    assert_eq!(status, 201, "{study}");
    let id = study["id"].as_str().unwrap();
    fake.post(&format!("/api/v1/studies/{id}/transition/"), json!({"action": "PUBLISH"})).await;
    let (status, body) = fake.try_arrive(id, Some(step3)).await;
    assert_eq!(status, 409, "blocked: {body}");
    let newcomer = fake.arrive(id, None).await;
    fake.submit(&newcomer.submission_id, Some("DONE1")).await;
    let (_, members) = fake.get(&format!("/api/v1/participant-groups/{gid}/participants/")).await;
    let ids: Vec<&str> =
        members["results"].as_array().unwrap().iter().map(|m| m["participant_id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![step3, newcomer.participant_id.as_str()]);
    let (_, listed) = fake.get(&format!("/api/v1/participant-groups/?workspace_id={workspace}")).await;
    assert_eq!(listed["results"][0]["participant_count"], 2);
    assert_eq!(fake.get("/api/v1/participant-groups/").await.0, 400, "the workspace or project filter is required");
    draft["filters"][0]["selected_values"] = json!(["000000000000000000000000"]);
    let (status, body) = fake.post("/api/v1/studies/", draft).await;
    assert_eq!((status, refused_fields(&body)), (400, vec!["filters[0].selected_values[0]".to_string()]));
    let (status, _) = fake.call(Method::DELETE, &format!("/api/v1/participant-groups/{gid}/"), None).await;
    assert_eq!(status, 204);
}
