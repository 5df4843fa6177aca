//! The calendar's data and the look-ahead helpers, on a real database: free
//! units per slot, who sees what, time zones, extension ends, find a slot,
//! and forms posted without JavaScript.

use crate::common;

use app::backend::calendar::planning::{extension_ends, find_windows, SlotRequest};
use app::backend::calendar::{load, CalendarQuery};
use app::backend::{accounts::tokens, db_now, pools};
use app::model::Principal;
use axum::body::Body;
use axum::http::{header, Request};
use chrono::Duration;
use common::{slot, Fixture, GPU, MIG};
use tower::ServiceExt;

async fn who(f: &Fixture, token: &str) -> Principal {
    tokens::authenticate(&f.db, token).await.unwrap().unwrap()
}

fn utc_day(f_days: i64) -> CalendarQuery {
    CalendarQuery { pool: None, date: Some((slot(0) + Duration::days(f_days)).date_naive()), days: 1, tz: "UTC".into() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slots_show_free_units_per_kind_and_only_the_viewers_own_bookings_in_full() {
    let f = Fixture::new().await;
    // Two days ahead, 10:00–11:00 UTC: the whole hour inside one calendar
    // day whatever the time the test runs (it failed between 23:00 and 00:00).
    let start = (chrono::Utc::now() + Duration::days(2)).date_naive().and_hms_opt(10, 0, 0).unwrap().and_utc();
    let end = start + Duration::hours(1);
    assert_eq!(f.book(&f.ada, MIG, 3, start, end).await.0, 201);
    assert_eq!(f.book(&f.carol, MIG, 1, start, start + Duration::minutes(15)).await.0, 201);
    let ada = who(&f, &f.ada).await;
    let date = start.date_naive();
    let data =
        load(&f.db, &ada, &CalendarQuery { pool: None, date: Some(date), days: 1, tz: "UTC".into() }).await.unwrap();
    assert_eq!(data.kinds.iter().map(|k| k.short.as_str()).collect::<Vec<_>>(), ["GPU", "MIG 1g.24gb"]);
    let day = &data.days[0];
    assert_eq!(day.slots.len(), 96);
    let index = |t: chrono::DateTime<chrono::Utc>| day.slots.iter().position(|s| s.start == t).unwrap();
    let free = |t| (data.cells[0][0][index(t)].free, data.cells[0][1][index(t)].free);
    assert_eq!(free(start), (1, 0), "3 of ada's and 1 of carol's MIG slices");
    assert_eq!(free(start + Duration::minutes(15)), (1, 1));
    assert_eq!(free(end), (1, 4));
    assert_eq!(day.slots[index(start)].label, start.format("%H:%M").to_string());
    assert_eq!(data.cells[0][1][index(start)].mine, 3);
    assert_eq!(data.cells[0][1][index(start + Duration::minutes(15))].mine, 3);
    // Both bookings are blocks from their first slot, side by side; carol's
    // is anonymous occupancy to ada.
    let blocks: Vec<_> = data
        .blocks
        .iter()
        .map(|b| (b.kind, b.slot, b.slots, b.column, b.columns, b.text(&data.kinds[b.kind].short)))
        .collect();
    assert_eq!(
        blocks,
        [
            (1, index(start), 4, 0, 2, "You · MIG 1g.24gb ×3 · approved".to_string()),
            (1, index(start), 1, 1, 2, "Booked · MIG 1g.24gb ×1 · approved".to_string()),
        ]
    );
    assert_eq!(data.blocks[0].booking, data.bookings.iter().find(|b| b.mine).map(|b| b.id), "ada's opens hers");
    assert_eq!(data.blocks[1].booking, None, "carol's opens nothing to ada");
    let mine: Vec<_> = data.bookings.iter().filter(|b| b.mine).collect();
    assert_eq!(mine.len(), 1);
    let carols = data.bookings.iter().find(|b| !b.mine).unwrap();
    assert!(carols.user_email.is_none() && carols.note.is_none(), "a teammate's booking is anonymous occupancy");

    let admin = who(&f, &f.admin).await;
    let seen =
        load(&f.db, &admin, &CalendarQuery { pool: None, date: Some(date), days: 1, tz: "UTC".into() }).await.unwrap();
    assert!(seen.bookings.iter().all(|b| b.user_email.is_some()), "admins see everything");
    let named: Vec<_> = seen.blocks.iter().map(|b| b.who()).collect();
    assert!(named.iter().all(|w| *w != "Booked"), "admins see who booked: {named:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn days_follow_the_viewers_zone_including_daylight_saving_changes() {
    let f = Fixture::new().await;
    let ada = who(&f, &f.ada).await;
    let week =
        load(&f.db, &ada, &CalendarQuery { days: 7, tz: "Asia/Kathmandu".into(), ..Default::default() }).await.unwrap();
    assert_eq!(week.days.len(), 7);
    assert_eq!(week.tz, "Asia/Kathmandu");
    assert!(week.days.iter().all(|d| d.slots.len() == 96));
    assert_eq!(week.days[0].slots[0].label, "00:00", "the local day starts at local midnight (UTC+05:45)");
    // Today's past slots are not bookable; in the first quarter-hour of the
    // local day there is none yet (the slot running now may be booked).
    let now = db_now(&f.db).await.unwrap();
    assert!(
        week.days[0].slots.iter().any(|s| !s.bookable)
            || week.days[0].slots[0].start + chrono::Duration::minutes(15) > now
    );

    // 2026-10-25 is 25 hours long in Berlin: 100 quarter-hour slots, 02:00–03:00 twice.
    let horizon_ok = "2026-10-25".parse().unwrap();
    let berlin =
        load(&f.db, &ada, &CalendarQuery { date: Some(horizon_ok), days: 1, tz: "Europe/Berlin".into(), pool: None })
            .await
            .unwrap();
    let day = &berlin.days[0];
    assert_eq!(day.slots.len(), 100);
    assert_eq!(day.slots.iter().filter(|s| s.label == "02:15").count(), 2);
    assert!(day.slots.iter().all(|s| !s.bookable), "a past day cannot be booked");

    let unknown =
        load(&f.db, &ada, &CalendarQuery { tz: "Mars/Olympus".into(), days: 1, ..Default::default() }).await.unwrap();
    assert_eq!(unknown.tz, "UTC");
    let missing =
        load(&f.db, &ada, &CalendarQuery { pool: Some(uuid::Uuid::new_v4()), ..utc_day(0) }).await.unwrap_err();
    assert_eq!(missing.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_offer_only_ends_that_fit() {
    let f = Fixture::new().await;
    let (status, mine) = f.book(&f.ada, MIG, 1, slot(8), slot(12)).await;
    assert_eq!(status, 201);
    assert_eq!(f.book(&f.bob, MIG, 4, slot(14), slot(16)).await.0, 201);
    let ada = who(&f, &f.ada).await;
    let pool = pools::get(&f.db, &ada, f.lab).await.unwrap();
    let booking =
        app::backend::bookings::get(&f.db, &ada, mine["id"].as_str().unwrap().parse().unwrap()).await.unwrap();
    let now = db_now(&f.db).await.unwrap();
    let ends = extension_ends(&f.db, &pool, &booking, now).await.unwrap();
    assert_eq!(ends, [slot(13), slot(14)], "one and two slots later; bob's four slices block from slot 14");
    for end in ends {
        assert!(end > booking.end && end <= slot(14));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_a_slot_returns_every_window_that_fits_on_the_pools_granularity() {
    let f = Fixture::new().await;
    assert_eq!(f.book(&f.bob, GPU, 1, slot(4), slot(8)).await.0, 201);
    let ada = who(&f, &f.ada).await;
    let pool = pools::get(&f.db, &ada, f.lab).await.unwrap();
    let now = db_now(&f.db).await.unwrap();
    let ask =
        SlotRequest { kind: GPU, quantity: 1, duration: Duration::hours(1), earliest: slot(2), latest_end: slot(20) };
    let found = find_windows(&f.db, &pool, &ask, now).await.unwrap();
    let starts: Vec<_> = found.iter().map(|w| w.start).collect();
    let every: Vec<_> = (8..=16).map(slot).collect();
    assert_eq!(starts, every, "slots 2–4 are too short before bob's booking; then each quarter hour");
    assert!(found.iter().all(|w| w.end - w.start == Duration::hours(1) && w.end <= slot(20)));
    // The walk's example: 2 h between 13:00 and 18:00 offers 16:00–18:00 too.
    let span = SlotRequest { duration: Duration::hours(2), earliest: slot(40), latest_end: slot(60), ..ask };
    let found = find_windows(&f.db, &pool, &span, now).await.unwrap();
    assert_eq!(found.len(), 13, "13:00, 13:15, … 16:00");
    assert_eq!((found[12].start, found[12].end), (slot(52), slot(60)));

    let odd = SlotRequest { duration: Duration::minutes(50), ..ask };
    assert_eq!(find_windows(&f.db, &pool, &odd, now).await.unwrap_err().status(), 422);
    let too_many = SlotRequest { quantity: 2, ..ask };
    assert_eq!(find_windows(&f.db, &pool, &too_many, now).await.unwrap_err().status(), 422);
    let backwards = SlotRequest { latest_end: slot(1), earliest: slot(2), ..ask };
    assert_eq!(find_windows(&f.db, &pool, &backwards, now).await.unwrap_err().status(), 422);
}

/// A booking form posted by a browser without JavaScript.
async fn post_form(f: &Fixture, body: String) -> (u16, String) {
    let request = Request::post("/rpc/book")
        .header(header::AUTHORIZATION, format!("Bearer {}", f.ada))
        .header(header::ACCEPT, "text/html,application/xhtml+xml")
        .header(header::REFERER, "http://127.0.0.1:3000/calendar?view=day&refused=old")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(body))
        .unwrap();
    let response = f.app.clone().oneshot(request).await.unwrap();
    let location =
        response.headers().get(header::LOCATION).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (response.status().as_u16(), location)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forms_without_javascript_come_back_to_their_page_with_the_outcome() {
    let f = Fixture::new().await;
    let z = |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let form = |start, end| {
        format!("pool_id={}&kind=nvidia.com%2Fgpu&quantity=1&start={start}&end={end}&tz=UTC&mode=interactive", f.lab)
    };
    let (status, location) = post_form(&f, form(z(slot(8)), z(slot(12)))).await;
    assert_eq!(status, 302);
    assert!(location.starts_with("/calendar?view=day&booked="), "{location}");
    assert!(!location.contains("refused=old"), "an earlier outcome is replaced: {location}");

    let (status, location) = post_form(&f, form(z(slot(8)), z(slot(12)))).await;
    assert_eq!(status, 302);
    let query: std::collections::HashMap<String, String> =
        url::form_urlencoded::parse(location.split_once('?').unwrap().1.as_bytes()).into_owned().collect();
    assert!(query["refused"].contains("not enough free capacity"), "{query:?}");
    assert_eq!(query["suggest_start"].parse::<chrono::DateTime<chrono::Utc>>().unwrap(), slot(12));
    assert_eq!(query["kind"], GPU);

    let (status, location) = post_form(&f, form("2026-13-01T00:00".into(), z(slot(12)))).await;
    assert_eq!(status, 302);
    assert!(location.contains("field=start"), "{location}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durations_and_dates_beyond_any_calendar_are_422_naming_the_field_never_a_panic() {
    use axum::body::Body;
    use axum::http::{header, Request};
    let f = Fixture::new().await;
    let form = |path: &str, body: String| {
        Request::post(path)
            .header(header::AUTHORIZATION, format!("Bearer {}", f.ada))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .unwrap()
    };
    let find = |extra: &str| {
        form("/rpc/find", format!("tz=UTC&pool={}&kind=nvidia.com%2Fmig-1g.24gb&quantity=1&{extra}", f.lab))
    };
    for (extra, field) in [
        ("duration_minutes=9223372036854775807", "duration_minutes"),
        ("duration_minutes=-9223372036854775808", "duration_minutes"),
        ("duration_minutes=0", "duration_minutes"),
        ("duration_minutes=60&earliest=%2B262142-12-31T23%3A59", "earliest"),
        ("duration_minutes=60&earliest=0001-01-01T00%3A00", "earliest"),
        ("duration_minutes=60&latest=%2B262142-12-31T23%3A59%3A59", "latest"),
        ("duration_minutes=60&latest=%2B262142-12-31T23%3A59%3A59Z", "latest"),
    ] {
        let (status, body) = common::raw(&f.app, find(extra)).await;
        assert_eq!(status, 422, "{extra}: {body}");
        // A page's refusal names the field in words ("Duration minutes must …").
        assert!(body.to_string().contains(&app::model::field_words(field)), "{extra}: {body}");
    }
    for date in ["%2B262142-12-31", "-262143-01-01", "0001-01-01", "10000-01-01"] {
        let (status, body) =
            common::raw(&f.app, form("/rpc/calendar", format!("days=7&tz=UTC&pool={}&date={date}", f.lab))).await;
        assert!(status == 422 || status == 400, "{date}: {status} {body}");
        if status == 422 {
            assert!(body.to_string().contains("Date"), "{date}: {body}");
        }
    }
    let (status, body) =
        common::raw(&f.app, form("/rpc/calendar", format!("days=7&tz=UTC&pool={}&date=0001-01-01", f.lab))).await;
    assert_eq!(status, 422, "{body}");
    // The pages, as a link would open them.
    for path in [
        format!("/find?pool={}&kind=nvidia.com%2Fmig-1g.24gb&duration_minutes=99999999999999", f.lab),
        format!("/calendar?pool={}&date=0001-01-01", f.lab),
    ] {
        let request =
            Request::get(&path).header(header::AUTHORIZATION, format!("Bearer {}", f.ada)).body(Body::empty()).unwrap();
        let (status, _) = common::raw(&f.app, request).await;
        assert_eq!(status, 422, "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calendar_asked_for_a_pool_by_name_shows_that_pool_or_says_there_is_none() {
    use axum::body::Body;
    use axum::http::{header, Request};
    let f = Fixture::new().await;
    let calendar = |pool: &str| {
        Request::post("/rpc/calendar")
            .header(header::AUTHORIZATION, format!("Bearer {}", f.ada))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(format!("days=7&tz=UTC&pool={pool}")))
            .unwrap()
    };
    let (status, shown) = common::raw(&f.app, calendar("LAB-H100")).await;
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["pool"]["id"], f.lab.to_string(), "the pool of that name, in any case");
    // Not silently another pool: a name nobody may see is said, naming the field.
    let (status, refused) = common::raw(&f.app, calendar("lab-h101")).await;
    assert_eq!(status, 422, "{refused}");
    assert!(refused.to_string().contains("no pool you may see is named “lab-h101”"), "{refused}");
    let (status, page) = common::raw(
        &f.app,
        Request::get("/calendar?pool=lab-h101")
            .header(header::AUTHORIZATION, format!("Bearer {}", f.ada))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, 422, "the page says it too");
    assert!(page.to_string().contains("lab-h101"), "{page}");
}

/// A person's own booking shows its note as the block's title, as a
/// calendar's event does; a teammate sees the same slots as occupancy only.
#[tokio::test]
async fn ones_own_note_is_the_blocks_title() {
    let f = Fixture::new().await;
    let body = serde_json::json!({"pool_id": f.lab, "kind": MIG, "quantity": 1, "mode": "interactive",
        "start": slot(40), "end": slot(44), "note": "LoRA on the 8B"});
    let (status, booked) = f.call(axum::http::Method::POST, "/api/v1/bookings", Some(&f.ada), Some(body)).await;
    assert_eq!(status, 201, "{booked}");
    let query = CalendarQuery { pool: None, date: Some(slot(40).date_naive()), days: 1, tz: "UTC".into() };
    let block = |data: &app::model::CalendarData| {
        let i = data.days[0].slots.iter().position(|s| s.start == slot(40)).unwrap();
        let found: Vec<_> =
            data.blocks.iter().filter(|b| b.slot == i && b.kind == 1).map(|b| b.text(&data.kinds[1].short)).collect();
        found
    };
    let ada = who(&f, &f.ada).await;
    let mine = load(&f.db, &ada, &query).await.unwrap();
    assert_eq!(block(&mine), ["LoRA on the 8B — You · MIG 1g.24gb ×1 · approved"]);
    let carol = who(&f, &f.carol).await;
    let theirs = load(&f.db, &carol, &query).await.unwrap();
    assert_eq!(block(&theirs), ["Booked · MIG 1g.24gb ×1 · approved"]);
    assert!(!format!("{:?}", theirs).contains("LoRA"), "a teammate never reads the note");
}

/// The used-time bar: a person's own live booking says how much of its
/// booked time so far was active and how many units sit idle now; a
/// teammate sees neither; an admin sees it on every booking, named.
#[tokio::test]
async fn a_live_booking_shows_how_much_of_its_time_was_used_to_its_owner_and_admins() {
    let f = Fixture::new().await;
    let now = db_now(&f.db).await.unwrap();
    let start = now - Duration::hours(2);
    let live = f.place(MIG, 2, (start, now + Duration::hours(2)), "active").await;
    // Two hours in: 2 units × 120 min booked; 120 active unit-minutes (50 %),
    // and in the last minute one of the two slices was idle.
    sqlx::query(
        "INSERT INTO usage_hour (booking_id, hour, pool_id, tenant_id, user_id, samples, busy_unit_minutes,
                                 active_unit_minutes, memory_max_mib, energy_wh, simulated)
         SELECT id, date_trunc('hour', starts_at), pool_id, tenant_id, user_id, 120, 100, 120, 0, 0, false
         FROM booking WHERE id = $1 ON CONFLICT DO NOTHING",
    )
    .bind(live)
    .execute(&f.db)
    .await
    .unwrap();
    common::clear_of_the_minute_turn().await;
    sqlx::query(
        "INSERT INTO usage_minute (booking_id, minute, busy, memory_used_mib, devices, active_devices, simulated)
         VALUES ($1, date_trunc('minute', now()) - interval '1 minute', 0.4, 100, 2, 1, false) ON CONFLICT DO NOTHING",
    )
    .bind(live)
    .execute(&f.db)
    .await
    .unwrap();
    let query = CalendarQuery { pool: None, date: Some(start.date_naive()), days: 7, tz: "UTC".into() };
    let bars = |data: &app::model::CalendarData| -> Vec<app::model::UsedBar> {
        data.blocks.iter().filter_map(|b| b.used.clone()).collect()
    };
    let ada = who(&f, &f.ada).await;
    let mine = bars(&load(&f.db, &ada, &query).await.unwrap());
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!((mine[0].pct, mine[0].idle_units, mine[0].who.as_deref()), (50, 1, None));
    assert_eq!(mine[0].text(), "50 % of the booked time so far was used · 1 booked unit idle now");
    // Where the block starts: the slot holding the booking's start, in the MIG lane.
    let data = load(&f.db, &ada, &query).await.unwrap();
    let (d, i) = data
        .days
        .iter()
        .enumerate()
        .find_map(|(d, day)| {
            day.slots.iter().position(|s| s.start <= start && start < s.start + Duration::minutes(15)).map(|i| (d, i))
        })
        .unwrap();
    let first = data.blocks.iter().find(|b| b.used.is_some()).unwrap();
    assert_eq!((first.day, first.kind, first.slot), (d, 1, i), "in the block's first slot");
    let carol = who(&f, &f.carol).await;
    assert!(bars(&load(&f.db, &carol, &query).await.unwrap()).is_empty(), "a teammate sees occupancy only");
    let admin = who(&f, &f.admin).await;
    let all = bars(&load(&f.db, &admin, &query).await.unwrap());
    assert_eq!(all.len(), 1);
    assert_eq!((all[0].pct, all[0].idle_units), (50, 1));
    assert!(all[0].who.as_deref().is_some_and(|w| w.starts_with("ada")), "{all:?}");
    // A past one keeps its block and its bar: all of its hour was active.
    let past = f.place(MIG, 1, (start - Duration::hours(1), start), "completed").await;
    sqlx::query(
        "INSERT INTO usage_hour (booking_id, hour, pool_id, tenant_id, user_id, samples, busy_unit_minutes,
                                 active_unit_minutes, memory_max_mib, energy_wh, simulated)
         SELECT id, date_trunc('hour', starts_at), pool_id, tenant_id, user_id, 60, 60, 60, 0, 0, false
         FROM booking WHERE id = $1",
    )
    .bind(past)
    .execute(&f.db)
    .await
    .unwrap();
    let mine = bars(&load(&f.db, &ada, &query).await.unwrap());
    // Either order: between 02:00 and 02:15 UTC both blocks start in the
    // day's first slot, and the longer (the live one) is drawn first.
    let mut read: Vec<(u8, i32)> = mine.iter().map(|b| (b.pct, b.idle_units)).collect();
    read.sort();
    assert_eq!(read, [(50, 1), (100, 0)], "{mine:?}");
    // A future booking has no bar: nothing of it was used yet, nor unused.
    f.place(MIG, 1, (now + Duration::hours(30), now + Duration::hours(31)), "approved").await;
    assert_eq!(bars(&load(&f.db, &ada, &query).await.unwrap()).len(), 2);
}

/// The agenda lists the coming bookings, one's own in full and linked,
/// others' as occupancy only (named for admins); the month gives each day
/// its share booked and one's own bookings, Monday first.
#[tokio::test]
async fn the_agenda_and_the_month_show_what_is_booked_as_the_viewer_may_see_it() {
    use app::backend::calendar::span;
    use app::model::SpanKind;
    let f = Fixture::new().await;
    // Two days ahead at 10:00 UTC: inside one day whatever the time the test runs.
    let at = (chrono::Utc::now() + Duration::days(2)).date_naive().and_hms_opt(10, 0, 0).unwrap().and_utc();
    let body = serde_json::json!({"pool_id": f.lab, "kind": MIG, "quantity": 2, "mode": "interactive",
        "start": at, "end": at + Duration::hours(1), "note": "LoRA on the 8B"});
    let (status, booked) = f.call(axum::http::Method::POST, "/api/v1/bookings", Some(&f.ada), Some(body)).await;
    assert_eq!(status, 201, "{booked}");
    assert_eq!(f.book(&f.bob, GPU, 1, at, at + Duration::hours(2)).await.0, 201);
    let date = Some(at.date_naive());
    let (ada, bob, admin) = (who(&f, &f.ada).await, who(&f, &f.bob).await, who(&f, &f.admin).await);

    let agenda = span::load(&f.db, &ada, None, date, SpanKind::Agenda, "UTC").await.unwrap();
    let entries: Vec<_> = agenda.agenda.iter().flat_map(|d| d.entries.clone()).collect();
    assert_eq!(entries.len(), 2, "{entries:?}");
    let mine = entries.iter().find(|e| e.mine).unwrap();
    assert_eq!((mine.title.as_str(), mine.what.as_str()), ("LoRA on the 8B", "MIG 1g.24gb ×2"));
    assert_eq!(mine.when, "10:00–11:00");
    assert_eq!(mine.booking, booked["id"].as_str().and_then(|id| id.parse().ok()));
    let theirs = entries.iter().find(|e| !e.mine).unwrap();
    assert_eq!((theirs.title.as_str(), theirs.booking), ("Booked", None), "another tenant's booking is occupancy");
    let bobs = span::load(&f.db, &bob, None, date, SpanKind::Agenda, "UTC").await.unwrap();
    assert!(!format!("{bobs:?}").contains("LoRA"), "nobody else reads the note");
    let admins = span::load(&f.db, &admin, None, date, SpanKind::Agenda, "UTC").await.unwrap();
    let named: Vec<String> = admins.agenda.iter().flat_map(|d| d.entries.iter().map(|e| e.title.clone())).collect();
    assert!(
        named.iter().any(|t| t.starts_with("Booked by ada")) && named.iter().any(|t| t.starts_with("Booked by bob")),
        "{named:?}"
    );

    let month = span::load(&f.db, &ada, None, date, SpanKind::Month, "UTC").await.unwrap();
    assert!(month.weeks.iter().all(|w| w.len() == 7) && (4..=6).contains(&month.weeks.len()));
    assert_eq!(chrono::Datelike::weekday(&month.weeks[0][0].date), chrono::Weekday::Mon);
    let day = month.weeks.iter().flatten().find(|d| d.date == at.date_naive()).unwrap();
    assert_eq!(day.mine, ["10:00 LoRA on the 8B"]);
    // 2 slices (half a GPU) for an hour and a GPU for two, of 2 GPUs all day.
    let expected = ((0.5 * 1.0 + 1.0 * 2.0) / (2.0 * 24.0) * 100.0_f64).round() as u8;
    assert_eq!(day.booked_pct, expected);
    assert!(month
        .weeks
        .iter()
        .flatten()
        .filter(|d| d.date != day.date)
        .all(|d| d.mine.is_empty() || d.date == day.date));

    // The agenda that holds today lists what is still to come; the two
    // weeks before it (its "previous") list what was booked then.
    let today = chrono::Utc::now().date_naive();
    let past = (today - Duration::days(10)).and_hms_opt(10, 0, 0).unwrap().and_utc();
    f.place(MIG, 1, (past, past + Duration::hours(1)), "completed").await;
    let listed = |span: &app::model::CalendarSpan| span.agenda.iter().any(|d| d.date == past.date_naive());
    let now_on = span::load(&f.db, &ada, None, None, SpanKind::Agenda, "UTC").await.unwrap();
    assert!(!listed(&now_on), "{:?}", now_on.agenda);
    let before = span::load(&f.db, &ada, None, Some(now_on.prev), SpanKind::Agenda, "UTC").await.unwrap();
    assert!(listed(&before), "the previous two weeks list their booking: {:?}", before.agenda);

    // Bad views and dates are named.
    let form = |body: &str| {
        Request::post("/rpc/calendar_span")
            .header(header::AUTHORIZATION, format!("Bearer {}", f.ada))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    let (status, body) = common::raw(&f.app, form("view=year&tz=UTC")).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.to_string().contains("View"), "{body}");
    let (status, body) = common::raw(&f.app, form("view=month&tz=UTC&date=0001-01-01")).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.to_string().contains("Date"), "{body}");
}
