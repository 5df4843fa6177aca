//! Homes that outlive the window (issue 46), as the portal, the API and the
//! mails show them: whose home is listed to whom, until when it is kept, the
//! tenant's settings with plain refusals, a deletion asked only by its owner
//! or an admin, and the owner told 7 days and 1 day before it goes. The
//! cluster's side is in real_cluster_homes.rs.

use crate::common;

use axum::http::Method;
use chrono::{Duration, Utc};
use common::{at, slot, Fixture, MIG};
use serde_json::json;
use uuid::Uuid;

async fn user_id(f: &Fixture, email: &str) -> Uuid {
    sqlx::query_scalar("SELECT id FROM app_user WHERE email = $1").bind(email).fetch_one(&f.db).await.unwrap()
}

/// The home.expiring notifications scheduled so far: their dedupe keys.
async fn expiring(f: &Fixture) -> Vec<String> {
    server::notify::outbox::schedule_timed(&f.db).await.unwrap();
    sqlx::query_scalar("SELECT dedupe FROM notification WHERE event = 'home.expiring' ORDER BY created_at, dedupe")
        .fetch_all(&f.db)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_home_is_kept_after_its_owners_last_session_and_its_owner_hears_before_it_goes() {
    let f = Fixture::new().await;
    let ada = user_id(&f, "ada@a.test").await;
    // Ada's last session ended two days ago; the worker kept her home.
    let ended = Utc::now() - Duration::days(2);
    f.place(MIG, 1, (ended - Duration::hours(3), ended), "completed").await;
    sqlx::query("INSERT INTO home (user_id, storage_class, volume, size_gib) VALUES ($1, '', 'pvc-ada', 50)")
        .bind(ada)
        .execute(&f.db)
        .await
        .unwrap();

    let (status, mine) = f.call(Method::GET, "/api/v1/homes", Some(&f.ada), None).await;
    assert_eq!(status, 200, "{mine}");
    assert_eq!(mine.as_array().unwrap().len(), 1, "{mine}");
    let kept = at(&mine[0]["deleted_on"]);
    assert!((kept - (ended + Duration::days(30))).num_seconds().abs() < 2, "30 days after her last session: {mine}");
    assert_eq!(mine[0]["size_gib"], 50);
    assert!((at(&mine[0]["last_used"]) - ended).num_seconds().abs() < 2);
    let (_, theirs) = f.call(Method::GET, "/api/v1/homes", Some(&f.bob), None).await;
    assert_eq!(theirs, json!([]), "bob sees no one's home but his own");
    let (_, every) = f.call(Method::GET, "/api/v1/homes", Some(&f.admin), None).await;
    assert!(every.as_array().unwrap().iter().any(|h| h["owner_email"] == "ada@a.test"), "{every}");
    assert!(expiring(&f).await.is_empty(), "28 days ahead: nothing to say yet");

    // The tenant's settings: plain refusals, then 5 days: she hears a week ahead.
    let path = "/api/v1/tenants/team-a/homes";
    for (body, field) in [
        (json!({ "home_gib": 0 }), "home_gib"),
        (json!({ "home_gib": 60, "home_retention_days": 5000 }), "home_retention_days"),
    ] {
        let (status, refused) = f.call(Method::PUT, path, Some(&f.admin), Some(body)).await;
        assert_eq!((status.as_u16(), refused["field"].as_str()), (422, Some(field)), "{refused}");
    }
    let (status, _) = f.call(Method::PUT, path, Some(&f.ada), Some(json!({ "home_gib": 60 }))).await;
    assert_eq!(status, 403, "only admins");
    let (status, set) =
        f.call(Method::PUT, path, Some(&f.admin), Some(json!({ "home_gib": 60, "home_retention_days": 5 }))).await;
    assert_eq!(status, 200, "{set}");
    let week = expiring(&f).await;
    assert_eq!(week.len(), 1, "{week:?}");
    assert!(week[0].starts_with("home:pvc-ada:7:"), "{week:?}");
    // 3 days: now it goes tomorrow, and she hears again (once).
    f.call(Method::PUT, path, Some(&f.admin), Some(json!({ "home_gib": 60, "home_retention_days": 3 }))).await;
    let day = expiring(&f).await;
    assert_eq!(day.len(), 2, "{day:?}");
    assert!(day.iter().any(|key| key.starts_with("home:pvc-ada:1:")), "{day:?}");
    assert_eq!(expiring(&f).await.len(), 2, "told once");

    // The mail goes to her alone, and says when and where to act.
    server::notify::outbox::fan_out(&f.db, true).await.unwrap();
    let recipients: Vec<Option<Uuid>> = sqlx::query_scalar(
        "SELECT d.user_id FROM notification_delivery d JOIN notification n ON n.id = d.notification_id
         WHERE n.event = 'home.expiring'",
    )
    .fetch_all(&f.db)
    .await
    .unwrap();
    assert_eq!(recipients, [Some(ada), Some(ada)], "her own, by email; no co-owner, no tenant webhook");
    let due = server::notify::outbox::claim(&f.db, 10).await.unwrap();
    let mail = server::notify::message::render("https://berth.example.org", &due[0], false);
    assert!(mail.subject.starts_with("Your home is deleted on "), "{}", mail.subject);
    assert!(mail.text.contains("3 days after your last session ended"), "{}", mail.text);
    assert!(mail.text.contains("https://berth.example.org/settings"), "{}", mail.text);

    // Only she or an admin may ask for it to go; the worker then deletes it.
    let delete = format!("/api/v1/homes/{ada}");
    let (status, _) = f.call(Method::DELETE, &delete, Some(&f.bob), None).await;
    assert_eq!(status, 404, "bob cannot even tell it exists");
    let (status, _) = f.call(Method::DELETE, &delete, Some(&f.ada), None).await;
    assert_eq!(status, 204);
    let (_, mine) = f.call(Method::GET, "/api/v1/homes", Some(&f.ada), None).await;
    assert_eq!(mine[0]["delete_requested"], true);
    assert_eq!(app::backend::sessions::homes::due_to_go(&f.db, None, "").await.unwrap(), ["pvc-ada"]);
    let (status, _) = f.call(Method::DELETE, &format!("/api/v1/homes/{}", Uuid::new_v4()), Some(&f.admin), None).await;
    assert_eq!(status, 404, "no such home");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_booking_ahead_keeps_the_home_until_it_has_ended() {
    let f = Fixture::new().await;
    let ada = user_id(&f, "ada@a.test").await;
    let long_ago = Utc::now() - Duration::days(40);
    f.place(MIG, 1, (long_ago - Duration::hours(1), long_ago), "completed").await;
    sqlx::query("INSERT INTO home (user_id, storage_class, volume, size_gib) VALUES ($1, '', 'pvc-ada', 50)")
        .bind(ada)
        .execute(&f.db)
        .await
        .unwrap();
    let due = || app::backend::sessions::homes::due_to_go(&f.db, None, "");
    assert_eq!(due().await.unwrap(), ["pvc-ada"], "40 days after her last session");
    let (status, body) = f.book(&f.ada, MIG, 1, slot(8), slot(12)).await;
    assert_eq!(status, 201, "{body}");
    assert!(due().await.unwrap().is_empty(), "her next session will need it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_show_the_storage_each_tenants_homes_held_at_the_sites_price() {
    let f = Fixture::new().await;
    let ada = user_id(&f, "ada@a.test").await;
    let ended = Utc::now() - Duration::days(20);
    f.place(MIG, 1, (ended - Duration::hours(1), ended), "completed").await;
    // A 50 GiB home kept for the last 10 days, and a 100 GiB one that went 10 days before that after 5 days.
    sqlx::query(
        "INSERT INTO home (user_id, storage_class, volume, size_gib, created_at, gone_at) VALUES
         ($1, '', 'pvc-now', 50, now() - interval '10 days', NULL),
         ($1, 'fast', 'pvc-then', 100, now() - interval '25 days', now() - interval '20 days')",
    )
    .bind(ada)
    .execute(&f.db)
    .await
    .unwrap();
    let (status, refused) =
        f.call(Method::PUT, "/api/v1/homes/price", Some(&f.admin), Some(json!({ "per_gib_month": -1 }))).await;
    assert_eq!((status.as_u16(), refused["field"].as_str()), (422, Some("per_gib_month")), "{refused}");
    let (status, _) =
        f.call(Method::PUT, "/api/v1/homes/price", Some(&f.admin), Some(json!({ "per_gib_month": 0.3 }))).await;
    assert_eq!(status, 200);
    let (from, to) = ((Utc::now() - Duration::days(30)).to_rfc3339(), Utc::now().to_rfc3339());
    let path = format!("/api/v1/reports/utilization?from={}&to={}&group=tenant", urlencode(&from), urlencode(&to));
    let (status, report) = f.call(Method::GET, &path, Some(&f.mia), None).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["storage_price_per_gib_month"], 0.3);
    let line = &report["storage"][0];
    assert_eq!(line["tenant"], "team-a");
    // 50 × 10 + 100 × 5 = 1 000 GiB-days; at 0.3 per GiB-month of 30 days: 10.
    let gib_days = line["gib_days"].as_f64().unwrap();
    assert!((gib_days - 1000.0).abs() < 0.2, "{line}");
    assert!((line["showback_cost"].as_f64().unwrap() - 10.0).abs() < 0.01, "{line}");
    // Both homes are on the default cluster: its report holds them, another's none.
    let (status, _) = f
        .call(Method::POST, "/api/v1/clusters", Some(&f.admin), Some(json!({"name": "east", "access": "simulated"})))
        .await;
    assert_eq!(status, 201);
    let (_, default) = f.call(Method::GET, &format!("{path}&cluster=default"), Some(&f.mia), None).await;
    assert_eq!(default["storage"], report["storage"]);
    let (_, east) = f.call(Method::GET, &format!("{path}&cluster=east"), Some(&f.mia), None).await;
    assert_eq!(east["storage"], json!([]), "{east}");
}

fn urlencode(text: &str) -> String {
    text.replace('+', "%2B").replace(':', "%3A")
}

/// A pending booking is not yet among the booked; its card still speaks of
/// the home after its own session, never of a retention long run out (the
/// demo's history had Ada's card say "kept until" a day a year ago).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_bookings_card_keeps_the_home_from_its_own_end() {
    let f = Fixture::new().await;
    let long_ago = Utc::now() - Duration::days(400);
    f.place(MIG, 1, (long_ago - Duration::hours(1), long_ago), "completed").await;
    let ends = slot(12);
    let pending = f.place(MIG, 1, (slot(8), ends), "pending").await;
    let kept = app::backend::sessions::kept_until::kept_until_for(&f.db, &[pending]).await.unwrap();
    let after = kept[&pending].home - ends;
    assert!(after >= Duration::days(1) && after.num_seconds() % 86_400 == 0, "{:?} after {ends}", kept[&pending]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_says_whether_the_session_continues_into_the_next_booking_and_why_not() {
    let f = Fixture::new().await;
    let ada = app::backend::accounts::tokens::authenticate(&f.db, &f.ada).await.unwrap().unwrap();
    let book = |start: i64, end: i64| f.book(&f.ada, MIG, 1, slot(start), slot(end));
    let (_, first) = book(8, 12).await;
    let (_, second) = book(12, 14).await;
    // Another image right after the second: a session of its own.
    let (_, third) = book(14, 16).await;
    sqlx::query("UPDATE booking SET image = 'quay.io/jupyter/minimal-notebook:latest' WHERE id = $1")
        .bind(third["id"].as_str().unwrap().parse::<Uuid>().unwrap())
        .execute(&f.db)
        .await
        .unwrap();
    let page = app::backend::bookings::mine::load(&f.db, &ada, "Europe/Berlin").await.unwrap();
    let card = |id: &serde_json::Value| {
        page.upcoming.iter().find(|c| c.booking.id.to_string() == id["id"].as_str().unwrap()).unwrap().clone()
    };
    let (first, second) = (card(&first), card(&second));
    let continues = first.continues_into.clone().unwrap_or_default();
    assert!(continues.starts_with("Continues into your booking of "), "{continues}");
    assert!(continues.contains("the workspace, what runs in it and its files stay"), "{continues}");
    // The persistence sentence counts to the end of the session, the second booking's.
    let ends = slot(14).with_timezone(&chrono_tz::Europe::Berlin).format("%H:%M").to_string();
    assert!(
        first.persistence.clone().unwrap_or_default().contains(&format!("ends at {ends}")),
        "{:?}",
        first.persistence
    );
    let apart = second.continues_into.unwrap_or_default();
    assert!(apart.contains("starts a session of its own") && apart.contains("minimal-notebook"), "{apart}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_room_is_held_ahead_for_a_booking_that_takes_over_a_running_session() {
    let f = Fixture::new().await;
    let (now, minutes) = (Utc::now(), Duration::minutes);
    let boundary = now + minutes(5);
    f.place(MIG, 1, (now - minutes(60), boundary), "active").await;
    let next = f.place(MIG, 1, (boundary, boundary + minutes(60)), "approved").await;
    let other = f.place(common::GPU, 1, (boundary, boundary + minutes(60)), "approved").await;
    let ahead = app::backend::sessions::due::ahead(&f.db, None, minutes(30)).await.unwrap();
    let ids: Vec<Uuid> = ahead.iter().map(|facts| facts.booking_id).collect();
    assert!(!ids.contains(&next), "its session runs on: {ids:?}");
    assert!(ids.contains(&other), "another kind starts a session of its own: {ids:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_cache_has_its_own_size_and_retention_and_a_tenant_may_keep_it_per_session() {
    let f = Fixture::new().await;
    let ada = user_id(&f, "ada@a.test").await;
    let ended = Utc::now() - Duration::days(2);
    f.place(MIG, 1, (ended - Duration::hours(3), ended), "completed").await;
    for (purpose, volume, gib) in [("home", "pvc-ada-home", 50), ("cache", "pvc-ada-cache", 200)] {
        sqlx::query("INSERT INTO home (user_id, purpose, storage_class, volume, size_gib) VALUES ($1, $2, '', $3, $4)")
            .bind(ada)
            .bind(purpose)
            .bind(volume)
            .bind(gib)
            .execute(&f.db)
            .await
            .unwrap();
    }
    let path = "/api/v1/tenants/team-a/homes";
    for (body, field) in [
        (json!({ "home_gib": 50, "cache_gib": 0 }), "cache_gib"),
        (json!({ "home_gib": 50, "cache_retention_days": 0 }), "cache_retention_days"),
        (json!({ "home_gib": 50, "cache_kept": "maybe" }), "cache_kept"),
    ] {
        let (status, refused) = f.call(Method::PUT, path, Some(&f.admin), Some(body)).await;
        assert_eq!((status.as_u16(), refused["field"].as_str()), (422, Some(field)), "{refused}");
    }
    let settings = json!({ "home_gib": 50, "cache_gib": 300, "cache_retention_days": 3 });
    let (status, set) = f.call(Method::PUT, path, Some(&f.admin), Some(settings)).await;
    assert_eq!((status.as_u16(), &set["cache_kept"]), (200, &json!(true)), "{set}");

    // Each is kept for its own retention: the home 30 days, the cache 3.
    let (_, mine) = f.call(Method::GET, "/api/v1/homes", Some(&f.ada), None).await;
    let deleted = |purpose: &str| {
        let kept = mine.as_array().unwrap().iter().find(|h| h["purpose"] == purpose).expect("listed");
        ((at(&kept["deleted_on"]) - ended).num_seconds() as f64 / 86400.0).round() as i64
    };
    assert_eq!((deleted("home"), deleted("cache")), (30, 3), "{mine}");
    let told = expiring(&f).await;
    assert_eq!(told.len(), 1, "only the cache goes within a day: {told:?}");
    assert!(told[0].starts_with("home:pvc-ada-cache:1:"), "{told:?}");
    server::notify::outbox::fan_out(&f.db, true).await.unwrap();
    let due = server::notify::outbox::claim(&f.db, 10).await.unwrap();
    let mail = server::notify::message::render("https://berth.example.org", &due[0], false);
    assert!(mail.subject.starts_with("Your model cache is deleted on "), "{}", mail.subject);
    assert!(mail.text.contains("(/models in every session of yours)") && mail.text.contains("3 days after"));

    // Deleting one leaves the other; a purpose must be one of the two.
    let (status, refused) =
        f.call(Method::DELETE, &format!("/api/v1/homes/{ada}?purpose=all"), Some(&f.ada), None).await;
    assert_eq!((status.as_u16(), refused["field"].as_str()), (422, Some("purpose")), "{refused}");
    let (status, _) = f.call(Method::DELETE, &format!("/api/v1/homes/{ada}?purpose=cache"), Some(&f.ada), None).await;
    assert_eq!(status, 204);
    let (_, mine) = f.call(Method::GET, "/api/v1/homes", Some(&f.ada), None).await;
    let asked: Vec<(&str, bool)> = mine
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["purpose"].as_str().unwrap(), h["delete_requested"].as_bool().unwrap()))
        .collect();
    assert_eq!(asked, [("cache", true), ("home", false)], "{mine}");

    // A session's card says both dates; with the cache per session, that it ends too.
    let ada_principal = app::backend::accounts::tokens::authenticate(&f.db, &f.ada).await.unwrap().unwrap();
    let (_, booked) = f.book(&f.ada, MIG, 1, slot(8), slot(12)).await;
    let id: Uuid = booked["id"].as_str().unwrap().parse().unwrap();
    let sentence = || async {
        let page = app::backend::bookings::mine::load(&f.db, &ada_principal, "Europe/Berlin").await.unwrap();
        page.upcoming.into_iter().find(|c| c.booking.id == id).unwrap().persistence.unwrap_or_default()
    };
    let both = sentence().await;
    assert!(
        both.starts_with("Your home (/home/jovyan) is kept until ")
            && both.contains(" and model cache (/models) until ")
    );
    assert!(both.contains("; everything else in this session ends at "), "{both}");
    let facts = app::backend::sessions::facts::facts(&f.db, id).await.unwrap();
    assert_eq!((facts.window.cache_gib, facts.window.cache_kept), (300, true));

    let per_session = json!({ "home_gib": 50, "cache_gib": 300, "cache_kept": false });
    f.call(Method::PUT, path, Some(&f.admin), Some(per_session)).await;
    let alone = sentence().await;
    assert!(alone.contains("everything else in this session, the model cache included, ends at"), "{alone}");
    assert!(!alone.contains("/models"), "{alone}");
    let facts = app::backend::sessions::facts::facts(&f.db, id).await.unwrap();
    assert!(!facts.window.cache_kept);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_home_is_kept_on_its_cluster_and_in_its_tenant_and_never_offered_or_let_go_by_another() {
    use app::backend::sessions::homes::{due_to_go, of, record, Kept};
    let f = Fixture::new().await;
    let ada = user_id(&f, "ada@a.test").await;
    let (status, east) = f
        .call(
            Method::POST,
            "/api/v1/clusters",
            Some(&f.admin),
            Some(serde_json::json!({"name": "east", "access": "simulated"})),
        )
        .await;
    assert_eq!(status, 201, "{east}");
    let east: Uuid = east["id"].as_str().unwrap().parse().unwrap();
    let default: Uuid =
        sqlx::query_scalar("SELECT id FROM cluster WHERE name = 'default'").fetch_one(&f.db).await.unwrap();
    let (home_a, home_b) = ((ada, "team-a".to_string(), Kept::Home), (ada, "team-b".to_string(), Kept::Home));
    // Her home on the default cluster, asked to go.
    assert!(record(&f.db, (Some(default), &home_a), "", "pv-default", 50).await.unwrap());
    sqlx::query("UPDATE home SET delete_requested_at = now() WHERE volume = 'pv-default'")
        .execute(&f.db)
        .await
        .unwrap();
    // East's worker neither offers it (its volume is not on east) nor lets it go.
    assert_eq!(of(&f.db, (Some(east), ada, "team-a"), "", Kept::Home).await.unwrap(), None);
    assert!(due_to_go(&f.db, Some(east), "").await.unwrap().is_empty());
    assert_eq!(due_to_go(&f.db, Some(default), "").await.unwrap(), ["pv-default"]);
    // A home of hers on east is kept beside it, and offered there alone.
    assert!(record(&f.db, (Some(east), &home_a), "", "pv-east", 60).await.unwrap());
    assert!(!record(&f.db, (Some(east), &home_a), "", "pv-east-2", 60).await.unwrap(), "one per cluster and tenant");
    assert_eq!(of(&f.db, (Some(east), ada, "team-a"), "", Kept::Home).await.unwrap(), Some(("pv-east".into(), 60)));
    assert_eq!(of(&f.db, (Some(default), ada, "team-a"), "", Kept::Home).await.unwrap(), None, "asked to go");
    // Her home in team-a is never offered to her sessions in team-b, whose
    // co-owners would read it (issue 60); she keeps one there beside it.
    assert_eq!(of(&f.db, (Some(east), ada, "team-b"), "", Kept::Home).await.unwrap(), None, "another tenant's");
    assert!(record(&f.db, (Some(east), &home_b), "", "pv-east-b", 60).await.unwrap(), "one per tenant");
    assert_eq!(of(&f.db, (Some(east), ada, "team-b"), "", Kept::Home).await.unwrap(), Some(("pv-east-b".into(), 60)));
    assert_eq!(of(&f.db, (Some(east), ada, "team-a"), "", Kept::Home).await.unwrap(), Some(("pv-east".into(), 60)));
    sqlx::query("UPDATE home SET gone_at = now() WHERE volume = 'pv-east-b'").execute(&f.db).await.unwrap();
    // She sees each with the cluster its files are on.
    let (_, mine) = f.call(Method::GET, "/api/v1/homes", Some(&f.ada), None).await;
    let mut clusters: Vec<&str> = mine.as_array().unwrap().iter().map(|h| h["cluster"].as_str().unwrap()).collect();
    clusters.sort();
    assert_eq!(clusters, ["default", "east"], "{mine}");
}

/// A session's "kept until" is its owner's last booking on that cluster,
/// plus the retention: not someone else's later booking (the date once
/// took every person's last booking), and not the owner's own on another
/// cluster, whose worker may change those (issue 60: a member reaches no
/// further than its own cluster).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_kept_until_counts_only_its_owners_bookings_on_its_cluster() {
    use app::backend::sessions::{homes::SITE_RETENTION_DAYS, kept_until::kept_until_for};
    let f = Fixture::new().await;
    let east = f
        .pool_on_new_cluster("east", "simulated", json!({"name": "east-mig", "kinds": [{"kind": MIG, "capacity": 4}]}))
        .await;
    let (_, mine) = f.book(&f.ada, MIG, 1, slot(8), slot(12)).await;
    let mine: Uuid = mine["id"].as_str().unwrap().parse().unwrap();
    let (status, later) = f.book(&f.bob, MIG, 1, slot(8), slot(40)).await;
    assert_eq!(status, 201, "{later}");
    let elsewhere = json!({"pool_id": east, "kind": MIG, "quantity": 1, "start": slot(20), "end": slot(48),
                           "mode": "interactive"});
    let (status, body) = f.call(Method::POST, "/api/v1/bookings", Some(&f.ada), Some(elsewhere)).await;
    assert_eq!(status, 201, "{body}");
    let days: i32 = sqlx::query_scalar(
        "SELECT coalesce(max(t.home_retention_days), $1) FROM membership m JOIN tenant t ON t.id = m.tenant_id
         JOIN app_user u ON u.id = m.user_id WHERE u.email = 'ada@a.test'",
    )
    .bind(SITE_RETENTION_DAYS)
    .fetch_one(&f.db)
    .await
    .unwrap();
    let kept = kept_until_for(&f.db, &[mine]).await.unwrap()[&mine].home;
    assert_eq!(kept, slot(12) + Duration::days(i64::from(days)));
}
