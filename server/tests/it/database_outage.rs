//! PostgreSQL stopped under booking load: every answer during the outage is
//! a quick 503, readiness says so, the API is back soon after the database,
//! and nothing acknowledged is lost or overbooked.

use crate::common;

use common::processes::{berth_output, Postgres, Server};
use common::slot;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CLIENTS: usize = 16;

#[derive(Debug)]
struct Answer {
    sent: Instant,
    took: Duration,
    status: u16,
    retry_after: bool,
    booked: Option<uuid::Uuid>,
    /// The start of a 5xx body, read through `Debug` in failure messages.
    #[allow(dead_code)]
    body: String,
}

#[tokio::test(flavor = "multi_thread")]
async fn the_database_stopped_under_load_gives_quick_503s_and_loses_nothing_acknowledged() {
    let pg = Postgres::start();
    let url = pg.url();
    berth_output(&url, &["seed-demo"]);
    let mut tokens = Vec::new();
    for i in 0..CLIENTS {
        let email = format!("u{i}@load.test");
        berth_output(&url, &["user", "add", "--email", &email, "--name", "U", "--tenant", &format!("t{}", i % 4)]);
        tokens.push(berth_output(&url, &["token", "create", "--email", &email]));
    }
    let page_token = tokens[0].clone();
    let server = Server::start(&url, &["--db-connections", "8"]);
    let db = sqlx::PgPool::connect(&url).await.unwrap();
    let pool: uuid::Uuid = sqlx::query_scalar("SELECT id FROM pool WHERE name = $1")
        .bind(server::seed::DEMO_POOL)
        .fetch_one(&db)
        .await
        .unwrap();
    db.close().await;

    let answers = Arc::new(Mutex::new(Vec::<Answer>::new()));
    let running = Arc::new(AtomicBool::new(true));
    let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let mut load = Vec::new();
    for (i, token) in tokens.into_iter().enumerate() {
        let (answers, running, client, base) = (answers.clone(), running.clone(), client.clone(), server.url.clone());
        load.push(tokio::spawn(async move {
            let mut n = i as i64;
            while running.load(Ordering::Relaxed) {
                n += CLIENTS as i64;
                let start = slot(4 + n % 500);
                let body = json!({
                    "pool_id": pool, "kind": "nvidia.com/mig-1g.24gb", "quantity": 1 + n % 2,
                    "start": start, "end": start + chrono::Duration::minutes(15 * (1 + n % 4)), "mode": "interactive",
                });
                let sent = Instant::now();
                let response =
                    client.post(format!("{base}/api/v1/bookings")).bearer_auth(&token).json(&body).send().await;
                let took = sent.elapsed();
                let Ok(response) = response else {
                    answers.lock().unwrap().push(Answer {
                        sent,
                        took,
                        status: 0,
                        retry_after: false,
                        booked: None,
                        body: String::new(),
                    });
                    continue;
                };
                let status = response.status().as_u16();
                let retry_after = response.headers().contains_key("retry-after");
                let text = response.text().await.unwrap_or_default();
                let body: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                let booked = (status == 201).then(|| body["id"].as_str().and_then(|id| id.parse().ok())).flatten();
                let body = if status >= 500 { text.chars().take(160).collect() } else { String::new() };
                answers.lock().unwrap().push(Answer { sent, took, status, retry_after, booked, body });
            }
        }));
    }

    tokio::time::sleep(Duration::from_secs(3)).await;
    pg.down();
    let down_at = Instant::now();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let ready = client.get(format!("{}/readyz", server.url)).send().await.unwrap().status();
    assert_eq!(ready, 503, "/readyz while the database is down");
    // A signed-in page says so (its own error view, or ours when the
    // failure came before the page).
    let page = client.get(format!("{}/bookings", server.url)).bearer_auth(&page_token).send().await.unwrap();
    assert_eq!(page.status(), 503, "a page while the database is down");
    let text = page.text().await.unwrap();
    assert!(text.contains("the database cannot be reached") || text.contains("Berth is briefly unavailable"), "{text}");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let restart_at = Instant::now();
    pg.up();
    let up_at = Instant::now();
    let back = loop {
        let answered = client.get(format!("{}/readyz", server.url)).send().await.map(|r| r.status().as_u16());
        if answered.is_ok_and(|status| status == 200) {
            break up_at.elapsed();
        }
        assert!(up_at.elapsed() < Duration::from_secs(5), "not ready 5 s after the database returned");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    running.store(false, Ordering::Relaxed);
    for task in load {
        task.await.unwrap();
    }

    let answers = std::mem::take(&mut *answers.lock().unwrap());
    // Requests sent after the stop completed and answered before the restart began.
    let during: Vec<&Answer> = answers.iter().filter(|a| a.sent >= down_at && a.sent + a.took <= restart_at).collect();
    assert!(during.len() > CLIENTS, "the clients kept asking during the outage: {}", during.len());
    for answer in &during {
        assert!(answer.status == 503 && answer.retry_after, "during the outage: {answer:?}");
        assert!(answer.took < Duration::from_secs(2), "a 503 took {:?}", answer.took);
    }
    let api_back = answers
        .iter()
        .filter(|a| a.sent >= up_at && matches!(a.status, 201 | 409))
        .map(|a| a.sent + a.took - up_at)
        .min()
        .expect("bookings are answered after the restart");
    assert!(api_back < Duration::from_secs(5), "the API answered {api_back:?} after the restart");
    let slowest = during.iter().map(|a| a.took).max().unwrap();
    let acknowledged: Vec<uuid::Uuid> = answers.iter().filter_map(|a| a.booked).collect();
    let server_errors = answers.iter().filter(|a| a.status >= 500 && a.status != 503).count();

    let db = sqlx::PgPool::connect(&url).await.unwrap();
    let found: i64 = sqlx::query_scalar("SELECT count(*) FROM booking WHERE id = ANY($1)")
        .bind(&acknowledged)
        .fetch_one(&db)
        .await
        .unwrap();
    let sweep =
        std::fs::read_to_string(common::processes::repo_root().join("server/tests/sql/capacity-sweep.sql")).unwrap();
    let violations: i64 =
        sqlx::query_scalar(&format!("SELECT count(*) FROM ({sweep}) v")).fetch_one(&db).await.unwrap();
    println!(
        "outage: {} answers during it, all 503 with Retry-After, slowest {:.0} ms; ready {:.0} ms and the API answering {:.0} ms after the restart; {} acknowledged, {} found; {} violations; {} other 5xx",
        during.len(),
        slowest.as_secs_f64() * 1000.0,
        back.as_secs_f64() * 1000.0,
        api_back.as_secs_f64() * 1000.0,
        acknowledged.len(),
        found,
        violations,
        server_errors
    );
    assert_eq!(found as usize, acknowledged.len(), "an acknowledged booking is missing");
    assert_eq!(violations, 0, "capacity violations");
    assert_eq!(
        server_errors,
        0,
        "5xx other than 503: {:?}",
        answers.iter().filter(|a| a.status >= 500 && a.status != 503).collect::<Vec<_>>()
    );
}
