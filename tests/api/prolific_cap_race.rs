//! The budget cap holds for commitments on their way: a raise of the places
//! queued but not yet applied by Prolific (throttled) is committed money, so
//! a bonus round beside it that would pass the cap with it is refused
//! (audit AZ: a round and a raise sent together committed 77.84 of a 65.00
//! cap), and the check and the write are one transaction.
use crate::prolific_bonus_doubt::SPEC;
use crate::prolific_kit::{post, Published};
use serde_json::{json, Value};

async fn status(p: &Published) -> Value {
    let url = p.app.url(&format!("/api/v1/studies/{}/prolific", p.study));
    p.researcher.get(url).send().await.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn a_raise_on_its_way_counts_against_the_cap_of_a_bonus_round() {
    // Back-offs long enough that an hour's Retry-After is waited past the command's minute.
    let p = Published::start_with(SPEC, &[], &[("HARDNEG_PROLIFIC_BACKOFF_MS", "200")]).await;
    let person = &p.submitted(1).await[0];
    let s = status(&p).await;
    let (committed, cap) = (s["budget"]["committed"].as_f64().unwrap(), s["budget"]["cap"].as_f64().unwrap());
    let (places, reward) = (s["places"].as_f64().unwrap(), s["reward_cents"].as_f64().unwrap());
    // A place's cost with Prolific's fee and tax, as the places bought show it.
    let per_place = committed / places;
    let room = cap - committed;
    // A raise and a round of 60 % of what is left each: either fits, not both.
    let more = (0.6 * room / per_place).floor();
    let amount = (0.6 * room * reward / per_place).floor() as i64;

    // Prolific throttles the raise for an hour: it stays queued.
    let rule =
        json!({"method": "PATCH", "path": "/api/v1/studies/*/", "fault": "429", "retry_after": 3600, "times": 1});
    p.fake.fault_with(rule).await;
    let url = p.app.url(&format!("/api/v1/studies/{}/prolific/places", p.study));
    let (code, said) = post(&p.researcher, &url, Some(json!({"total": places as u64 + more as u64}))).await;
    assert_ne!(code, 200, "throttled, not applied yet: {said}");
    let s = status(&p).await;
    assert_eq!(s["places"].as_f64().unwrap(), places, "Prolific has not applied it: {s}");
    let queued = s["budget"]["committed"].as_f64().unwrap();
    assert!(queued > committed + 0.5 * room, "the queued raise is committed: {queued} of {cap}");

    let url = p.app.url(&format!("/api/v1/studies/{}/prolific/bonuses?round=beside", p.study));
    let body = format!("{},{}.{:02}\n", person.participant_id, amount / 100, amount % 100);
    let res = p.researcher.post(url).body(body).send().await.unwrap();
    let (code, said) = (res.status().as_u16(), res.text().await.unwrap());
    assert_eq!(code, 422, "{said}");
    assert!(said.contains("budget cap"), "{said}");
    let after = status(&p).await["budget"]["committed"].as_f64().unwrap();
    assert!(after <= cap, "committed {after} of a cap of {cap}");
}
