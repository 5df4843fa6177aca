//! Every REST endpoint, server fn and page × {anonymous, user of tenant A,
//! user of tenant B, manager, admin}, generated from one table. Each cell
//! gets fresh objects to act on, so no cell depends on another's outcome.

use crate::common;

use app::backend::{accounts::principals, accounts::tokens, accounts::users, pools, pools::blackouts};
use app::model::{KindSpec, NewPool, Principal};
use axum::body::Body;
use axum::http::{header, Method, Request};
use chrono::{Duration, SecondsFormat};
use common::{raw, slot, tool_call, tool_status, Fixture, MIG};
use serde_json::json;
use uuid::Uuid;

const CALLERS: [&str; 5] = ["anonymous", "ada (tenant A)", "bob (tenant B)", "mia (manager, A)", "admin"];

enum Send {
    Get,
    Json(&'static str),
    Patch(&'static str),
    Put(&'static str),
    Delete,
    Form(&'static str),
    /// An MCP tool's call (`/mcp`, JSON-RPC): its arguments. Its status is
    /// the HTTP one, or the REST status a refused call names (200 when done).
    Tool(&'static str, &'static str),
    /// An MCP resource's read: its URI. 200 when read, 404 when Berth has
    /// no such resource.
    Resource(&'static str),
}

/// `book` with `repeat`: the series above, through MCP.
const SERIES_TOOL: Send = Send::Tool(
    "book",
    r#"{"pool_id":"{pool}","kind":"nvidia.com/mig-1g.24gb","quantity":1,"start":"{start}","end":"{end}","mode":"inference","repeat":"daily","until":"{until}","time_zone":"UTC"}"#,
);

/// A daily series of two days in the big pool.
const SERIES: &str = r#"{"pool_id":"{pool}","kind":"nvidia.com/mig-1g.24gb","quantity":1,"start":"{start}","end":"{end}","mode":"inference","repeat":"daily","until":"{until}","time_zone":"UTC"}"#;

/// The same as the portal's form posts it (wall-clock times in UTC).
const SERIES_FORM: &str = "pool={pool}%7Cnvidia.com%2Fmig-1g.24gb&quantity=1&mode=inference&date={until}&from=03%3A00&to=04%3A00&repeat=weekly&weekdays%5B%5D=mon&until={until}&tz=UTC";

/// (what is sent, path, expected status for each of `CALLERS`)
const TABLE: &[(Send, &str, [u16; 5])] = &[
    // REST API
    (Send::Get, "/api/v1/openapi.json", [200, 200, 200, 200, 200]),
    (Send::Get, "/api/v1/me", [401, 200, 200, 200, 200]),
    (Send::Get, "/api/v1/homes", [401, 200, 200, 200, 200]),
    (Send::Delete, "/api/v1/homes/{ada_home}", [401, 204, 404, 404, 204]),
    (Send::Delete, "/api/v1/homes/{ada_home}?purpose=home", [401, 204, 404, 404, 204]),
    (Send::Put(r#"{"home_gib":60,"home_retention_days":10}"#), "/api/v1/tenants/team-a/homes", [401, 403, 403, 403, 200]),
    (Send::Put(r#"{"per_gib_month":0.05}"#), "/api/v1/homes/price", [401, 403, 403, 403, 200]),
    (Send::Get, "/api/v1/me/time-zone", [401, 200, 200, 200, 200]),
    (Send::Put(r#"{"time_zone":"Europe/Berlin"}"#), "/api/v1/me/time-zone", [401, 200, 200, 200, 200]),
    // Which kind holds a model: anyone signed in, over the pools they may book.
    (Send::Get, "/api/v1/fit?model=llama-3.1-8b&context=8192&sequences=4", [401, 200, 200, 200, 200]),
    (Send::Form("form%5Bmodel%5D=llama-3.1-8b&form%5Bparams_b%5D=&form%5Blayers%5D=&form%5Bkv_heads%5D=&form%5Bhead_dim%5D=&form%5Bprecision%5D=bf16&form%5Bworkload%5D=inference&form%5Bcontext%5D=8192&form%5Bsequences%5D=4&tz=UTC"), "/rpc/fit", [401, 200, 200, 200, 200]),
    (Send::Get, "/fit?model=llama-3.1-8b", [401, 200, 200, 200, 200]),
    (Send::Form("form%5Bfrom%5D=2030-01-07T13%3A00&form%5Bto%5D=2030-01-07T18%3A00&form%5Bat_least%5D=120&form%5Bunits%5D=1&form%5Bmemory_gb%5D=&tz=UTC"), "/rpc/free_then", [401, 200, 200, 200, 200]),
    (Send::Get, "/free?from=2030-01-07T13%3A00&to=2030-01-07T18%3A00", [401, 200, 200, 200, 200]),
    (Send::Get, "/api/v1/free?from={far}&to={farther}&units=1", [401, 200, 200, 200, 200]),
    // The MCP tools: each as the REST request it stands for.
    (Send::Tool("list_pools", "{}"), "/mcp", [401, 200, 200, 200, 200]),
    (Send::Tool("fit", r#"{"model":"llama-3.1-8b"}"#), "/mcp", [401, 200, 200, 200, 200]),
    (Send::Tool("find_free", r#"{"from":"{far}","to":"{farther}"}"#), "/mcp", [401, 200, 200, 200, 200]),
    (
        Send::Tool(
            "book",
            r#"{"pool_id":"{pool}","kind":"nvidia.com/mig-1g.24gb","quantity":1,"start":"{start}","end":"{end}","mode":"inference"}"#,
        ),
        "/mcp",
        [401, 200, 200, 200, 200],
    ),
    (SERIES_TOOL, "/mcp", [401, 200, 200, 200, 200]),
    (Send::Resource("berth://bookings/upcoming"), "/mcp", [401, 200, 200, 200, 200]),
    (Send::Resource("berth://pools"), "/mcp", [401, 200, 200, 200, 200]),
    (Send::Resource("berth://bookings/{booking}"), "/mcp", [401, 404, 404, 404, 404]),
    (Send::Tool("my_bookings", "{}"), "/mcp", [401, 200, 200, 200, 200]),
    (Send::Tool("booking", r#"{"id":"{booking}"}"#), "/mcp", [401, 200, 404, 200, 200]),
    (Send::Tool("extend", r#"{"id":"{booking}","end":"{later}"}"#), "/mcp", [401, 200, 404, 403, 200]),
    (Send::Tool("end_now", r#"{"id":"{live}"}"#), "/mcp", [401, 200, 404, 403, 200]),
    (Send::Tool("cancel", r#"{"id":"{booking}"}"#), "/mcp", [401, 200, 404, 403, 200]),
    (Send::Get, "/api/v1/pools", [401, 200, 200, 200, 200]),
    (
        Send::Json(r#"{"name":"p-{uniq}","kinds":[{"kind":"nvidia.com/gpu","capacity":1}]}"#),
        "/api/v1/pools",
        [401, 403, 403, 403, 201],
    ),
    (Send::Get, "/api/v1/pools/{pool}", [401, 200, 200, 200, 200]),
    (Send::Patch(r#"{"description":"x"}"#), "/api/v1/pools/{pool}", [401, 403, 403, 403, 200]),
    (Send::Delete, "/api/v1/pools/{empty_pool}", [401, 403, 403, 403, 204]),
    // Clusters: how Berth reaches each is for admins alone, reading included.
    (Send::Get, "/api/v1/clusters", [401, 403, 403, 403, 200]),
    (Send::Json(r#"{"name":"c-{uniq}","access":"simulated"}"#), "/api/v1/clusters", [401, 403, 403, 403, 201]),
    (Send::Get, "/api/v1/clusters/{cluster}", [401, 403, 403, 403, 200]),
    (Send::Put(r#"{"access":"simulated","kueue":true}"#), "/api/v1/clusters/{cluster}", [401, 403, 403, 403, 200]),
    (Send::Delete, "/api/v1/clusters/{cluster}", [401, 403, 403, 403, 204]),
    (Send::Get, "/api/v1/pools/{pool}/availability?kind=nvidia.com%2Fmig-1g.24gb", [401, 200, 200, 200, 200]),
    (Send::Get, "/api/v1/pools/{pool}/slots?kind=nvidia.com%2Fmig-1g.24gb&duration_minutes=60", [401, 200, 200, 200, 200]),
    (Send::Get, "/api/v1/bookings", [401, 200, 200, 200, 200]),
    (
        Send::Json(
            r#"{"pool_id":"{pool}","kind":"nvidia.com/mig-1g.24gb","quantity":1,"start":"{start}","end":"{end}","mode":"inference"}"#,
        ),
        "/api/v1/bookings",
        [401, 201, 201, 201, 201],
    ),
    (Send::Get, "/api/v1/bookings/{booking}", [401, 200, 404, 200, 200]),
    (Send::Json("{}"), "/api/v1/bookings/{booking}/cancel", [401, 200, 404, 403, 200]),
    (Send::Json(r#"{"end":"{later}"}"#), "/api/v1/bookings/{booking}/extend", [401, 200, 404, 403, 200]),
    (Send::Json(r#"{"start":"{start}","end":"{later}"}"#), "/api/v1/bookings/{booking}/move", [401, 200, 404, 403, 200]),
    (Send::Json("{}"), "/api/v1/bookings/{live}/end", [401, 200, 404, 403, 200]),
    (Send::Json("{}"), "/api/v1/bookings/{pending}/approve", [401, 403, 404, 403, 200]),
    (Send::Json(r#"{"comment":"no room"}"#), "/api/v1/bookings/{pending}/reject", [401, 403, 404, 403, 200]),
    // Sharing: the owner and admins; teammates see the booking but may not share it.
    (Send::Json(r#"{"email":"carol@a.test"}"#), "/api/v1/bookings/{booking}/co-owners", [401, 200, 404, 403, 200]),
    (Send::Delete, "/api/v1/bookings/{shared}/co-owners/carol@a.test", [401, 204, 404, 403, 204]),
    // Recurring: everyone in a tenant previews and books (the admin for ops); the owner and admins cancel the rest.
    (Send::Json(SERIES), "/api/v1/series/preview", [401, 200, 200, 200, 200]),
    (Send::Json(SERIES), "/api/v1/series", [401, 201, 201, 201, 201]),
    (Send::Json("{}"), "/api/v1/series/{series}/cancel", [401, 200, 404, 403, 200]),
    (Send::Get, "/api/v1/tenants", [401, 403, 403, 403, 200]),
    (Send::Json(r#"{"slug":"t-{uniq}","name":"T"}"#), "/api/v1/tenants", [401, 403, 403, 403, 201]),
    (Send::Patch(r#"{"name":"Team B"}"#), "/api/v1/tenants/team-b", [401, 403, 403, 403, 200]),
    (
        Send::Put(r#"[{"pool_id":"{pool}","kind":"nvidia.com/mig-1g.24gb","max_units":1000}]"#),
        "/api/v1/tenants/team-b/quotas",
        [401, 403, 403, 403, 200],
    ),
    (Send::Get, "/api/v1/tenants/team-a/usage", [401, 200, 404, 200, 200]),
    (Send::Get, "/api/v1/tenants/team-a/dashboard", [401, 200, 404, 200, 200]),
    (Send::Get, "/api/v1/audit?action=booking", [401, 403, 403, 403, 200]),
    (Send::Get, "/api/v1/audit.csv", [401, 403, 403, 403, 200]),
    (Send::Get, "/api/v1/worker/status", [401, 403, 403, 403, 200]),
    (Send::Get, "/api/v1/pools/{pool}/blackouts", [401, 200, 200, 200, 200]),
    (
        Send::Json(r#"{"start":"{far}","end":"{farther}","reason":"firmware"}"#),
        "/api/v1/pools/{pool}/blackouts",
        [401, 403, 403, 403, 201],
    ),
    (Send::Delete, "/api/v1/blackouts/{blackout}", [401, 403, 403, 403, 204]),
    (Send::Get, "/api/v1/waitlist", [401, 200, 200, 200, 200]),
    // Ada's entry: hers and the admins' to remove; the others do not see it.
    (Send::Delete, "/api/v1/waitlist/{entry}", [401, 200, 404, 404, 200]),
    (Send::Json(r#"{"capex_per_gpu":30000,"amortization_years":4,"power_kw":0.7,"pue":1.2,"electricity_per_kwh":0.083,"maintenance_pct_per_year":10,"tokens_per_second":8088,"utilization":1}"#), "/api/v1/tokenomics/evaluate", [401, 403, 403, 200, 200]),
    (Send::Get, "/api/v1/pools/{pool}/cost-model", [401, 403, 403, 200, 200]),
    (Send::Get, "/api/v1/reports/utilization?from=2026-11-01&to=2026-11-08", [401, 403, 403, 200, 200]),
    (Send::Get, "/api/v1/pools/{pool}/idle-policy", [401, 200, 200, 200, 200]),
    (
        Send::Put(r#"{"enabled":true,"threshold_pct":5,"idle_minutes":30,"grace_minutes":30}"#),
        "/api/v1/pools/{pool}/idle-policy",
        [401, 403, 403, 403, 200],
    ),
    (Send::Get, "/api/v1/reports/utilization.csv?from=2026-11-01&to=2026-11-08&group=user", [401, 403, 403, 200, 200]),
    (
        Send::Put(r#"{"capex_per_gpu":30000,"amortization_years":4,"power_kw":0.7,"pue":1.2,"electricity_per_kwh":0.083,"maintenance_pct_per_year":10,"tokens_per_second":8088}"#),
        "/api/v1/pools/{pool}/cost-model",
        [401, 403, 403, 200, 200],
    ),
    (Send::Get, "/api/v1/me/calendar-feed", [401, 200, 200, 200, 200]),
    (Send::Json("{}"), "/api/v1/me/calendar-feed", [401, 200, 200, 200, 200]),
    // The feed itself: its secret is the credential; a wrong one is unknown to everyone.
    (Send::Get, "/api/v1/calendar-feeds/bcal_0123456789abcdef.ics", [404, 404, 404, 404, 404]),
    (Send::Get, "/api/v1/me/notifications", [401, 200, 200, 200, 200]),
    (
        Send::Put(r#"{"preferences":[{"event":"booking.idle","email":false,"webhook":true}]}"#),
        "/api/v1/me/notifications",
        [401, 200, 200, 200, 200],
    ),
    (Send::Json(r#"{"url":"https://hooks.example.org/berth"}"#), "/api/v1/me/webhooks", [401, 201, 201, 201, 201]),
    (Send::Get, "/api/v1/tenants/team-b/webhooks", [401, 403, 403, 403, 200]),
    (
        Send::Json(r#"{"url":"https://hooks.example.org/team-b"}"#),
        "/api/v1/tenants/team-b/webhooks",
        [401, 403, 403, 403, 201],
    ),
    // ada's own hook: only she removes it (admins remove tenants' hooks only).
    (Send::Delete, "/api/v1/webhooks/{hook}", [401, 204, 404, 404, 404]),
    // Server fns
    (Send::Form(""), "/rpc/me", [200, 200, 200, 200, 200]),
    (Send::Form(""), "/rpc/live", [401, 200, 200, 200, 200]),
    (Send::Form(""), "/rpc/settings/calendar_feed", [401, 200, 200, 200, 200]),
    (Send::Form(""), "/rpc/settings/calendar_feed/regenerate", [401, 200, 200, 200, 200]),
    (Send::Form(""), "/rpc/settings/notifications", [401, 200, 200, 200, 200]),
    (Send::Form("on[]=email%3Abooking.idle"), "/rpc/settings/notifications/save", [401, 200, 200, 200, 200]),
    (Send::Form("url=https%3A%2F%2Fhooks.example.org%2Fx"), "/rpc/settings/webhooks/add", [401, 200, 200, 200, 200]),
    (Send::Form("id={hook}"), "/rpc/settings/webhooks/remove", [401, 200, 404, 404, 404]),
    (Send::Form("id={booking}&email=carol%40a.test"), "/rpc/bookings/co-owners/add", [401, 200, 404, 403, 200]),
    (Send::Form("id={shared}&email=carol%40a.test"), "/rpc/bookings/co-owners/remove", [401, 200, 404, 403, 200]),
    (Send::Form(""), "/rpc/series/pools", [401, 200, 200, 200, 200]),
    (Send::Form(SERIES_FORM), "/rpc/series/preview", [401, 200, 200, 200, 200]),
    (Send::Form(SERIES_FORM), "/rpc/series/book", [401, 200, 200, 200, 200]),
    (Send::Form("id={series}&from={start}"), "/rpc/series/cancel_rest", [401, 200, 404, 403, 200]),
    (Send::Form(""), "/rpc/sign_in_options", [200, 200, 200, 200, 200]),
    (Send::Form(""), "/rpc/overview", [401, 200, 200, 200, 200]),
    (Send::Form(""), "/rpc/tokens/list", [401, 200, 200, 200, 200]),
    // Only from a browser session: every caller here holds an API token.
    (Send::Form("name=x&expires_in_days=3"), "/rpc/tokens/create", [401, 403, 403, 403, 403]),
    (Send::Form("id={token}"), "/rpc/tokens/revoke", [401, 200, 404, 404, 404]),
    (Send::Form(""), "/rpc/users/list", [401, 403, 403, 403, 200]),
    (Send::Form("user_id={victim}&tenant=team-b"), "/rpc/users/assign_tenant", [401, 403, 403, 403, 200]),
    (Send::Form("user_id={victim}&tenant=team-a"), "/rpc/users/remove_tenant", [401, 403, 403, 403, 200]),
    (Send::Form("user_id={victim}&reason=left"), "/rpc/users/disable", [401, 403, 403, 403, 200]),
    (Send::Form("user_id={victim}"), "/rpc/users/enable", [401, 403, 403, 403, 200]),
    (Send::Form(""), "/rpc/admin/clusters", [401, 403, 403, 403, 200]),
    (Send::Form("form%5Bname%5D=f-{uniq}&form%5Baccess%5D=simulated"), "/rpc/admin/clusters/save", [401, 403, 403, 403, 200]),
    (Send::Form("form%5Bid%5D={cluster}&form%5Baccess%5D=simulated&form%5Bkueue%5D=on"), "/rpc/admin/clusters/save", [401, 403, 403, 403, 200]),
    (Send::Form("id={cluster}"), "/rpc/admin/clusters/delete", [401, 403, 403, 403, 200]),
    (Send::Form(""), "/rpc/admin/pools", [401, 403, 403, 403, 200]),
    (Send::Form("id={pool}"), "/rpc/admin/pools/get", [401, 403, 403, 403, 200]),
    (
        Send::Form("form%5Bname%5D=p-{uniq}&form%5Bkinds%5D%5B0%5D%5Bkind%5D=nvidia.com%2Fgpu&form%5Bkinds%5D%5B0%5D%5Bcapacity%5D=1"),
        "/rpc/admin/pools/save",
        [401, 403, 403, 403, 200],
    ),
    (Send::Form("id={empty_pool}&retired=true"), "/rpc/admin/pools/retire", [401, 403, 403, 403, 200]),
    (Send::Form("id={empty_pool}"), "/rpc/admin/pools/delete", [401, 403, 403, 403, 200]),
    (Send::Form(""), "/rpc/admin/tenants", [401, 403, 403, 403, 200]),
    (Send::Form(""), "/rpc/admin/worker", [401, 403, 403, 403, 200]),
    (Send::Form("pool_id={pool}"), "/rpc/admin/blackouts", [401, 403, 403, 403, 200]),
    (
        Send::Form("pool_id={pool}&start={far}&end={farther}&reason=firmware"),
        "/rpc/admin/blackouts/create",
        [401, 403, 403, 403, 200],
    ),
    (Send::Form("id={blackout}"), "/rpc/admin/blackouts/delete", [401, 403, 403, 403, 200]),
    (Send::Form("slug=s-{uniq}&name=S"), "/rpc/admin/tenants/create", [401, 403, 403, 403, 200]),
    (Send::Form("slug=team-b&name=B"), "/rpc/admin/tenants/rename", [401, 403, 403, 403, 200]),
    (
        Send::Form("tenant=team-b&pool_id={pool}&kind=nvidia.com%2Fmig-1g.24gb&max_units=&gpu_hours_per_week=900"),
        "/rpc/admin/tenants/quota",
        [401, 403, 403, 403, 200],
    ),
    (Send::Form(""), "/rpc/tenants/mine", [401, 200, 200, 200, 200]),
    // Homes: one's own (an admin: every one); a tenant's settings are admins'.
    (Send::Form(""), "/rpc/homes", [401, 200, 200, 200, 200]),
    (Send::Form(""), "/rpc/admin/homes", [401, 403, 403, 403, 200]),
    (Send::Form("user={ada_home}&purpose=home"), "/rpc/homes/delete", [401, 200, 404, 404, 200]),
    (
        Send::Form("tenant=team-a&home_gib=60&home_retention_days=10&cache_gib=200&cache_retention_days=&cache_kept=kept"),
        "/rpc/admin/homes/tenant",
        [401, 403, 403, 403, 200],
    ),
    (Send::Form("per_gib_month=0.05"), "/rpc/admin/homes/price", [401, 403, 403, 403, 200]),
    (Send::Form(""), "/rpc/settings/time_zone", [401, 200, 200, 200, 200]),
    (Send::Form("zone=Europe%2FBerlin"), "/rpc/me/zone", [401, 200, 200, 200, 200]),
    (Send::Form("time_zone=Europe%2FBerlin"), "/rpc/settings/time_zone/save", [401, 200, 200, 200, 200]),
    (Send::Form(""), "/rpc/admin/approvals", [401, 403, 403, 403, 200]),
    // Every page asks, so everyone may; only admins get a count other than 0.
    (Send::Form(""), "/rpc/admin/approvals/count", [200, 200, 200, 200, 200]),
    // Every page's header says whether the cluster is simulated.
    (Send::Form(""), "/rpc/cluster", [200, 200, 200, 200, 200]),
    // Anyone: the offsets of a zone, nothing of anyone's.
    (Send::Form("tz=Europe%2FBerlin"), "/rpc/clock", [200, 200, 200, 200, 200]),
    (Send::Form("tz=UTC"), "/rpc/admin/waitlist", [401, 403, 403, 403, 200]),
    // Each choice names the window shown ({pending} is booked from slot 8 to 10).
    (Send::Form("ids%5B%5D={pending}%40{shown}&decision=approve"), "/rpc/admin/approvals/decide", [401, 403, 403, 403, 200]),
    (Send::Form("filter%5Baction%5D=booking"), "/rpc/admin/audit", [401, 403, 403, 403, 200]),
    (Send::Form("days=7&tz=Europe%2FBerlin"), "/rpc/calendar", [401, 200, 200, 200, 200]),
    (Send::Form("view=agenda&tz=Europe%2FBerlin"), "/rpc/calendar_span", [401, 200, 200, 200, 200]),
    (Send::Form("view=month&tz=Europe%2FBerlin"), "/rpc/calendar_span", [401, 200, 200, 200, 200]),
    (
        Send::Form(
            "pool_id={pool}&kind=nvidia.com%2Fmig-1g.24gb&quantity=1&start={start}&end={end}&tz=UTC&mode=inference",
        ),
        "/rpc/book",
        [401, 200, 200, 200, 200],
    ),
    (Send::Form("tz=UTC"), "/rpc/my_bookings", [401, 200, 200, 200, 200]),
    // One booking, as its page shows it: its owner's (and co-owners') only.
    (Send::Form("tz=UTC&only={booking}"), "/rpc/my_bookings", [401, 200, 404, 404, 200]),
    (Send::Form("id={entry}"), "/rpc/waitlist/leave", [401, 200, 404, 404, 200]),
    (Send::Form("id={booking}"), "/rpc/bookings/cancel", [401, 200, 404, 403, 200]),
    (Send::Form("id={booking}&end={later}"), "/rpc/bookings/extend", [401, 200, 404, 403, 200]),
    (Send::Form("id={booking}&start={start}&end={later}&tz=UTC"), "/rpc/bookings/move", [401, 200, 404, 403, 200]),
    // A teammate is answered with no charts (null): the dashboard is theirs.
    (Send::Form("id={live}&range=6h&tz=UTC"), "/rpc/bookings/charts", [401, 200, 404, 200, 200]),
    (Send::Form("id={live}"), "/rpc/bookings/end", [401, 200, 404, 403, 200]),
    (
        Send::Form("tz=UTC&kind=nvidia.com%2Fmig-1g.24gb&quantity=1&duration_minutes=60"),
        "/rpc/find",
        [401, 200, 200, 200, 200],
    ),
    (Send::Form("id={booking}"), "/rpc/bookings/manifests", [401, 200, 404, 403, 200]),
    (Send::Form("pool={pool}"), "/rpc/reports/tokenomics", [401, 403, 403, 200, 200]),
    (Send::Form("tenant=team-a&tz=UTC"), "/rpc/dashboard", [401, 200, 404, 200, 200]),
    (Send::Form("pool_id={pool}"), "/rpc/admin/pools/idle-policy", [401, 403, 403, 403, 200]),
    (
        Send::Form("pool_id={pool}&enabled=on&threshold_pct=5&idle_minutes=30&grace_minutes=30"),
        "/rpc/admin/pools/idle-policy/save",
        [401, 403, 403, 403, 200],
    ),
    (Send::Form("query%5Bgroup%5D=tenant&query%5Bperiod%5D=month&query%5Bdate%5D=&query%5Buntil%5D=&query%5Btz%5D=UTC"), "/rpc/reports/utilization", [401, 403, 403, 200, 200]),
    (
        Send::Form("pool_id={pool}&form%5Bcapex_per_gpu%5D=1&form%5Bamortization_years%5D=4&form%5Bpower_kw%5D=1&form%5Bpue%5D=1.2&form%5Belectricity_per_kwh%5D=0.1&form%5Bmaintenance_pct_per_year%5D=5&form%5Btokens_per_second%5D=100"),
        "/rpc/reports/tokenomics/save",
        [401, 403, 403, 200, 200],
    ),
    // Pages
    (Send::Get, "/", [200, 200, 200, 200, 200]),
    (Send::Get, "/signin", [200, 200, 200, 200, 200]),
    (Send::Get, "/tokens", [401, 200, 200, 200, 200]),
    (Send::Get, "/settings", [401, 200, 200, 200, 200]),
    (Send::Get, "/series", [401, 200, 200, 200, 200]),
    (Send::Get, "/reports/tokenomics?pool={pool}", [401, 403, 403, 200, 200]),
    (Send::Get, "/reports?period=day", [401, 403, 403, 200, 200]),
    (Send::Get, "/dashboard?tenant=team-a", [401, 200, 404, 200, 200]),
    (Send::Get, "/admin/users", [401, 403, 403, 403, 200]),
    (Send::Get, "/admin/tenants", [401, 403, 403, 403, 200]),
    (Send::Get, "/admin/homes", [401, 403, 403, 403, 200]),
    (Send::Get, "/admin/pools", [401, 403, 403, 403, 200]),
    (Send::Get, "/admin/clusters", [401, 403, 403, 403, 200]),
    (Send::Get, "/admin/worker", [401, 403, 403, 403, 200]),
    (Send::Get, "/admin/pools/{pool}", [401, 403, 403, 403, 200]),
    (Send::Get, "/admin/approvals", [401, 403, 403, 403, 200]),
    (Send::Get, "/admin/waitlist", [401, 403, 403, 403, 200]),
    (Send::Get, "/admin/audit?action=booking", [401, 403, 403, 403, 200]),
    (Send::Get, "/calendar?pool={pool}", [401, 200, 200, 200, 200]),
    (Send::Get, "/bookings", [401, 200, 200, 200, 200]),
    (Send::Get, "/find?pool={pool}", [401, 200, 200, 200, 200]),
    (Send::Get, "/bookings/{booking}/manifests", [401, 200, 404, 403, 200]),
    (Send::Get, "/bookings/{booking}", [401, 200, 404, 404, 200]),
    (Send::Get, "/bookings/{booking}?confirm=cancel", [401, 200, 404, 404, 200]),
    // The workspace: owner only (not running here, so 409 for the owner).
    (Send::Get, "/bookings/{live}/open", [401, 409, 404, 403, 403]),
    // Probes: for the kubelet, anyone; they tell nothing but "up" and "ready".
    (Send::Get, "/healthz", [200, 200, 200, 200, 200]),
    (Send::Get, "/readyz", [200, 200, 200, 200, 200]),
    // Metrics are served on their own listener (--metrics-listen), never here.
    (Send::Get, "/metrics", [404, 404, 404, 404, 404]),
];

struct World {
    f: Fixture,
    admin: Principal,
    ada: Principal,
    /// Open to all, with room for every cell's bookings.
    pool: Uuid,
    /// Requires approval.
    approval_pool: Uuid,
}

fn big_pool(name: &str, requires_approval: bool) -> NewPool {
    NewPool {
        name: name.into(),
        requires_approval,
        kinds: vec![KindSpec {
            kind: MIG.into(),
            capacity: 1000,
            replicas_per_unit: 1,
            vram_gb_per_unit: 24,
            cpu_millis_per_unit: 1000,
            memory_mib_per_unit: 1024,
            storage_gib_per_unit: 10,
            slices_per_gpu: None,
            price_per_unit_hour: None,
            lend_idle: false,
        }],
        ..NewPool::default()
    }
}

async fn principal(f: &Fixture, token: &str) -> Principal {
    tokens::authenticate(&f.db, token).await.unwrap().unwrap()
}

impl World {
    async fn new() -> World {
        let f = Fixture::new().await;
        let admin = principal(&f, &f.admin).await;
        let ada = principal(&f, &f.ada).await;
        let pool = pools::create(&f.db, &admin, big_pool("matrix", false)).await.unwrap().id;
        let approval_pool = pools::create(&f.db, &admin, big_pool("matrix-approval", true)).await.unwrap().id;
        World { f, admin, ada, pool, approval_pool }
    }

    /// A booking of ada's (tenant A); `from..to` in slots from now.
    async fn ada_books(&self, pool: Uuid, from: i64, to: i64) -> String {
        let body = serde_json::json!({
            "pool_id": pool, "kind": MIG, "quantity": 1, "start": slot(from), "end": slot(to), "mode": "interactive",
        });
        let (status, booking) = self.f.call(Method::POST, "/api/v1/bookings", Some(&self.f.ada), Some(body)).await;
        assert_eq!(status, 201, "{booking}");
        booking["id"].as_str().unwrap().to_string()
    }

    /// A waitlist entry of ada's: the whole kind for one far window, asked
    /// until it is full (the first ask books it).
    async fn ada_waits(&self) -> String {
        let body = serde_json::json!({
            "pool_id": self.pool, "kind": MIG, "quantity": 1000, "start": slot(300), "end": slot(301),
            "mode": "interactive", "waitlist": true,
        });
        for _ in 0..2 {
            let (status, entry) =
                self.f.call(Method::POST, "/api/v1/bookings", Some(&self.f.ada), Some(body.clone())).await;
            if status == 202 {
                return entry["id"].as_str().unwrap().to_string();
            }
            assert_eq!(status, 201, "{entry}");
        }
        panic!("the window never filled")
    }

    /// The template with every placeholder it uses filled with fresh objects.
    async fn fill(&self, template: &str) -> String {
        let mut text =
            template.replace("{pool}", &self.pool.to_string()).replace("{uniq}", &Uuid::new_v4().simple().to_string());
        let replacements: [(&str, Option<String>); 20] = [
            ("{booking}", None),
            ("{series}", None),
            ("{until}", Some((slot(20) + Duration::days(1)).date_naive().to_string())),
            ("{shared}", None),
            ("{entry}", None),
            ("{blackout}", None),
            ("{far}", Some(slot(400).to_rfc3339_opts(SecondsFormat::Secs, true))),
            ("{farther}", Some(slot(404).to_rfc3339_opts(SecondsFormat::Secs, true))),
            ("{empty_pool}", None),
            ("{cluster}", None),
            ("{live}", None),
            ("{pending}", None),
            ("{shown}", Some(format!("{}%2F{}", slot(8).timestamp(), slot(10).timestamp()))),
            ("{token}", None),
            ("{victim}", None),
            ("{hook}", None),
            ("{ada_home}", None),
            // "Z" rather than "+00:00": a '+' in a form body would read as a space.
            ("{start}", Some(slot(20).to_rfc3339_opts(SecondsFormat::Secs, true))),
            ("{end}", Some(slot(21).to_rfc3339_opts(SecondsFormat::Secs, true))),
            ("{later}", Some(slot(24).to_rfc3339_opts(SecondsFormat::Secs, true))),
        ];
        for (key, value) in replacements {
            if !text.contains(key) {
                continue;
            }
            let value = match (key, value) {
                (_, Some(value)) => value,
                ("{booking}", None) => self.ada_books(self.pool, 8, 10).await,
                ("{live}", None) => self.ada_books(self.pool, -1, 4).await,
                ("{series}", None) => {
                    let body = serde_json::json!({
                        "pool_id": self.pool, "kind": MIG, "quantity": 1, "start": slot(200), "end": slot(201),
                        "mode": "interactive", "repeat": "daily", "until": (slot(200) + Duration::days(1)).date_naive(),
                        "time_zone": "UTC",
                    });
                    let (status, series) =
                        self.f.call(Method::POST, "/api/v1/series", Some(&self.f.ada), Some(body)).await;
                    assert_eq!(status, 201, "{series}");
                    series["id"].as_str().unwrap().to_string()
                }
                ("{shared}", None) => {
                    let id = self.ada_books(self.pool, 8, 10).await;
                    let shared =
                        app::backend::bookings::co_owners::add(&self.f.db, &self.ada, id.parse().unwrap(), "carol@a.test");
                    shared.await.unwrap();
                    id
                }
                ("{pending}", None) => self.ada_books(self.approval_pool, 8, 10).await,
                ("{entry}", None) => self.ada_waits().await,
                ("{blackout}", None) => {
                    let new = app::model::NewBlackout {
                        kind: None,
                        start: slot(500),
                        end: slot(504),
                        reason: "victim".into(),
                        overlapping: None,
                    };
                    blackouts::create(&self.f.db, &self.admin, self.pool, new).await.unwrap().blackout.id.to_string()
                }
                ("{empty_pool}", None) => {
                    let name = format!("empty-{}", Uuid::new_v4().simple());
                    pools::create(&self.f.db, &self.admin, big_pool(&name, false)).await.unwrap().id.to_string()
                }
                ("{cluster}", None) => {
                    let name = format!("c-{}", Uuid::new_v4().simple());
                    let spec = app::model::ClusterSpec::reached(&name, app::model::ClusterAccess::Simulated);
                    app::backend::clusters::create(&self.f.db, &self.admin, spec).await.unwrap().id.to_string()
                }
                ("{token}", None) => tokens::issue(&self.f.db, self.ada.user_id, "victim", Duration::days(1), app::model::TokenScope::Full)
                    .await
                    .unwrap()
                    .id
                    .to_string(),
                ("{victim}", None) => {
                    let email = format!("victim-{}@a.test", Uuid::new_v4().simple());
                    users::upsert_user(&self.f.db, &email, "Victim", app::model::Role::User, "team-a")
                        .await
                        .unwrap()
                        .to_string()
                }
                // Ada's home, as the worker records it (again not asked to go).
                ("{ada_home}", None) => {
                    sqlx::query(
                        "INSERT INTO home (user_id, tenant_id, storage_class, volume, size_gib)
                         SELECT $1, m.tenant_id, '', $2, 50 FROM membership m WHERE m.user_id = $1 LIMIT 1
                         ON CONFLICT (cluster_id, user_id, tenant_id, storage_class, purpose) WHERE gone_at IS NULL
                         DO UPDATE SET delete_requested_at = NULL",
                    )
                    .bind(self.ada.user_id)
                    .bind(format!("pvc-{}", Uuid::new_v4()))
                    .execute(&self.f.db)
                    .await
                    .unwrap();
                    self.ada.user_id.to_string()
                }
                // Straight into the table: the cells would otherwise pass the per-user cap.
                ("{hook}", None) => sqlx::query_scalar::<_, Uuid>(
                    "INSERT INTO webhook (user_id, url, secret) VALUES ($1, 'https://hooks.example.org/a', 'bwh_x') RETURNING id",
                )
                .bind(self.ada.user_id)
                .fetch_one(&self.f.db)
                .await
                .unwrap()
                .to_string(),
                _ => unreachable!(),
            };
            text = text.replace(key, &value);
        }
        text
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_server_fn_and_page_answers_each_role_as_the_table_says() {
    let world = World::new().await;
    assert!(principals::by_user_id(&world.f.db, world.admin.user_id).await.unwrap().is_some());
    let f = &world.f;
    let tokens: [Option<&str>; 5] = [None, Some(&f.ada), Some(&f.bob), Some(&f.mia), Some(&f.admin)];
    let mut wrong = Vec::new();
    for (send, path, expected) in TABLE {
        for (caller, token) in tokens.iter().enumerate() {
            let (method, path, status, answer) = ask(&world, send, path, *token).await;
            if status.as_u16() != expected[caller] {
                let snippet: String = answer.to_string().chars().take(160).collect();
                wrong.push(format!(
                    "{method} {path} as {}: {} (expected {}) {snippet}",
                    CALLERS[caller],
                    status.as_u16(),
                    expected[caller]
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{} cells differ from the table:\n{}", wrong.len(), wrong.join("\n"));
}

/// What ada's token of each scope (read, book, full) may do, on REST, the
/// pages and server fns, and MCP alike: reading everywhere; booking and
/// extending from `book` up; anything else with `full` only.
const SCOPES: &[(Send, &str, [u16; 3])] = &[
    (Send::Get, "/api/v1/bookings/{booking}", [200, 200, 200]),
    (Send::Get, "/api/v1/free?from={far}&to={farther}", [200, 200, 200]),
    (Send::Get, "/fit?model=llama-3.1-8b", [200, 200, 200]),
    (
        Send::Json(
            r#"{"pool_id":"{pool}","kind":"nvidia.com/mig-1g.24gb","quantity":1,"start":"{start}","end":"{end}","mode":"inference"}"#,
        ),
        "/api/v1/bookings",
        [403, 201, 201],
    ),
    (Send::Json(r#"{"end":"{later}"}"#), "/api/v1/bookings/{booking}/extend", [403, 200, 200]),
    (Send::Json(SERIES), "/api/v1/series", [403, 201, 201]),
    (Send::Json("{}"), "/api/v1/bookings/{booking}/cancel", [403, 403, 200]),
    (Send::Json(r#"{"start":"{start}","end":"{later}"}"#), "/api/v1/bookings/{booking}/move", [403, 403, 200]),
    (Send::Json("{}"), "/api/v1/bookings/{live}/end", [403, 403, 200]),
    (Send::Json(r#"{"email":"carol@a.test"}"#), "/api/v1/bookings/{booking}/co-owners", [403, 403, 200]),
    (Send::Put(r#"{"time_zone":"Europe/Berlin"}"#), "/api/v1/me/time-zone", [403, 403, 200]),
    (Send::Delete, "/api/v1/homes/{ada_home}", [403, 403, 204]),
    (Send::Form(""), "/rpc/live", [403, 403, 200]),
    (Send::Form(SERIES_FORM), "/rpc/series/book", [403, 403, 200]),
    (Send::Form("id={token}"), "/rpc/tokens/revoke", [403, 403, 200]),
    // The calendar feed's link outlives the token that would learn it.
    (Send::Get, "/api/v1/me/calendar-feed", [403, 403, 200]),
    (Send::Json("{}"), "/api/v1/me/calendar-feed", [403, 403, 200]),
    (Send::Form(""), "/rpc/settings/calendar_feed", [403, 403, 200]),
    (Send::Form(""), "/rpc/settings/calendar_feed/regenerate", [403, 403, 200]),
    (Send::Tool("list_pools", "{}"), "/mcp", [200, 200, 200]),
    (Send::Tool("my_bookings", "{}"), "/mcp", [200, 200, 200]),
    (Send::Tool("booking", r#"{"id":"{booking}"}"#), "/mcp", [200, 200, 200]),
    (
        Send::Tool(
            "book",
            r#"{"pool_id":"{pool}","kind":"nvidia.com/mig-1g.24gb","quantity":1,"start":"{start}","end":"{end}","mode":"inference"}"#,
        ),
        "/mcp",
        [403, 200, 200],
    ),
    (SERIES_TOOL, "/mcp", [403, 200, 200]),
    (Send::Resource("berth://bookings/upcoming"), "/mcp", [200, 200, 200]),
    (Send::Resource("berth://pools"), "/mcp", [200, 200, 200]),
    (Send::Tool("extend", r#"{"id":"{booking}","end":"{later}"}"#), "/mcp", [403, 200, 200]),
    (Send::Tool("end_now", r#"{"id":"{live}"}"#), "/mcp", [403, 403, 200]),
    (Send::Tool("cancel", r#"{"id":"{booking}"}"#), "/mcp", [403, 403, 200]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_token_scope_answers_as_the_scope_table_says_on_rest_pages_and_mcp() {
    let world = World::new().await;
    let f = &world.f;
    let mut scoped = Vec::new();
    for scope in app::model::TokenScope::ALL {
        let issued = tokens::issue(&f.db, world.ada.user_id, "scoped", Duration::days(1), scope).await.unwrap();
        scoped.push(issued.token);
    }
    let mut wrong = Vec::new();
    for (send, path, expected) in SCOPES {
        for (at, token) in scoped.iter().enumerate() {
            let (method, path, status, answer) = ask(&world, send, path, Some(token)).await;
            if status.as_u16() != expected[at] {
                let snippet: String = answer.to_string().chars().take(160).collect();
                let scope = app::model::TokenScope::ALL[at].as_str();
                wrong.push(format!(
                    "{method} {path} with scope {scope}: {} (expected {}) {snippet}",
                    status.as_u16(),
                    expected[at]
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{} cells differ from the table:\n{}", wrong.len(), wrong.join("\n"));
}

/// The Settings page, drawn for a token, asks for the feed's link as it is
/// drawn (no scope layer sees that): a `read` or `book` token gets the page
/// without the link, told why, and no link is made for it; a `full` token
/// gets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_narrower_token_never_learns_the_calendar_feeds_link_from_the_settings_page() {
    let world = World::new().await;
    let f = &world.f;
    let feeds = || async {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM calendar_feed WHERE user_id = $1")
            .bind(world.ada.user_id)
            .fetch_one(&f.db)
            .await
            .unwrap();
        n
    };
    for scope in app::model::TokenScope::ALL {
        let token = tokens::issue(&f.db, world.ada.user_id, "scoped", Duration::days(1), scope).await.unwrap().token;
        let (status, page) = f.call(Method::GET, "/settings", Some(&token), None).await;
        let page = page.as_str().unwrap_or_default().to_string();
        let full = scope == app::model::TokenScope::Full;
        // The rest of the page is drawn; its status says a part was refused.
        assert_eq!(status, if full { 200 } else { 403 }, "{scope:?}: {page}");
        assert_eq!(page.contains("/api/v1/calendar-feeds/bcal_"), full, "{scope:?} and the link: {page}");
        let why = "Could not load your feed: <!>The calendar feed's link outlives any token";
        assert_eq!(page.contains(why), !full, "{scope:?} is told why: {page}");
        assert_eq!(feeds().await, i64::from(full), "{scope:?} made a link");
    }
}

/// One cell: the request the table describes, with fresh objects, as `token`.
async fn ask(
    world: &World,
    send: &Send,
    path: &str,
    token: Option<&str>,
) -> (Method, String, axum::http::StatusCode, serde_json::Value) {
    let path = world.fill(path).await;
    let (method, content_type, body) = match send {
        Send::Get => (Method::GET, None, String::new()),
        Send::Json(body) => (Method::POST, Some("application/json"), world.fill(body).await),
        Send::Patch(body) => (Method::PATCH, Some("application/json"), world.fill(body).await),
        Send::Delete => (Method::DELETE, None, String::new()),
        Send::Put(body) => (Method::PUT, Some("application/json"), world.fill(body).await),
        Send::Form(body) => (Method::POST, Some("application/x-www-form-urlencoded"), world.fill(body).await),
        Send::Tool(name, arguments) => {
            (Method::POST, Some("application/json"), tool_call(name, &world.fill(arguments).await))
        }
        Send::Resource(uri) => {
            let read = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                              "params": {"uri": world.fill(uri).await}});
            (Method::POST, Some("application/json"), read.to_string())
        }
    };
    let mut request = Request::builder().method(method.clone()).uri(&path);
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    if let Some(content_type) = content_type {
        request = request.header(header::CONTENT_TYPE, content_type);
    }
    if matches!(send, Send::Tool(..) | Send::Resource(..)) {
        // As a client sends it: MCP refuses a request for another host (DNS rebinding).
        request = request
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header(header::HOST, "127.0.0.1:3000");
    }
    let (status, answer) = raw(&world.f.app, request.body(Body::from(body)).unwrap()).await;
    let status = match send {
        Send::Tool(..) => tool_status(status, &answer),
        // -32002: the MCP code for a resource that does not exist.
        Send::Resource(..) if status == 200 && answer["error"]["code"] == -32002 => axum::http::StatusCode::NOT_FOUND,
        Send::Resource(..) if status == 200 && answer["result"]["contents"].is_null() => {
            axum::http::StatusCode::INTERNAL_SERVER_ERROR
        }
        _ => status,
    };
    (method, path, status, answer)
}
