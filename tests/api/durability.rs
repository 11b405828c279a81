//! An acknowledged answer survives SIGKILL: answers stream in from several
//! annotators, the process is killed right after a 200, and after a restart
//! every acknowledged answer is there with its option.
use crate::helpers::{demo_study, TestApp};
use hardneg::api_types::{AnswerAck, TaskView};
use hardneg::domain::ids::TaskId;
use serde_json::json;
use std::sync::{Arc, Mutex};

#[tokio::test]
async fn no_acknowledged_answer_is_lost_on_sigkill() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = TestApp::spawn_on(tmp.path(), &[]);
    let acked: Arc<Mutex<Vec<(String, TaskId, String)>>> = Arc::default();
    let clients = vec![
        ("annotator1".to_string(), app.login("annotator1").await),
        ("annotator2".to_string(), app.login("annotator2").await),
    ];
    let study = demo_study(&clients[0].1, &app).await;
    let base = app.base.clone();
    let mut workers = Vec::new();
    // The workers outlive the server, so they speak HTTP directly and stop at the first failure.
    for (name, client) in clients.clone() {
        let acked = acked.clone();
        let base = base.clone();
        workers.push(tokio::spawn(async move {
            let Ok(_) = client.post(format!("{base}/api/v1/studies/{study}/start")).send().await else { return };
            for i in 0.. {
                let Ok(res) = client.get(format!("{base}/api/v1/studies/{study}/next")).send().await else { return };
                let Ok(task) = res.json::<TaskView>().await else { return };
                let option = ["A", "B", "C", "D", "none"][i % 5];
                let sent = client
                    .post(format!("{base}/api/v1/tasks/{}/answer", task.task_id))
                    .json(&json!({"option": option}))
                    .send()
                    .await;
                match sent {
                    Ok(r) if r.status() == 200 => {
                        acked.lock().unwrap().push((name.clone(), task.task_id, option.to_string()))
                    }
                    _ => return,
                }
            }
        }));
    }
    // Kill as soon as enough answers were acknowledged, while others are in flight.
    while acked.lock().unwrap().len() < 40 {
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    app.kill();
    for w in workers {
        let _ = w.await;
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= 40);

    let passwords = app.accounts.clone();
    drop(app);
    let mut restarted = TestApp::spawn_on(tmp.path(), &[]);
    restarted.accounts = passwords;
    for (name, client) in
        [("annotator1", restarted.login("annotator1").await), ("annotator2", restarted.login("annotator2").await)]
    {
        for (_, id, option) in acked.iter().filter(|(n, _, _)| n == name) {
            // Re-answering reports the stored answer: it must be there, unchanged.
            let res: AnswerAck = restarted.answer(&client, *id, "A").await.json().await.unwrap();
            assert!(res.duplicate, "task {id} of {name} lost: {res:?}");
            assert_eq!(res.option, *option, "task {id} of {name}");
        }
    }
}
