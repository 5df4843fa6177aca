//! `GET /bookings/{id}/open`: the owner or a co-owner of an active booking
//! is sent to the workspace's gate with a one-time code good for 60 seconds
//! (`crate::gate`), made from the access token read from the session's
//! Secret in the cluster at that moment. The token itself never leaves the
//! portal, is never stored in the database or logged, and the redirect is
//! marked not to be cached. The session's cluster is its pool's: the
//! portal's own, or another reached through the portal's kubeconfig of it
//! (`crate::provisioner::cluster_clients`); the gate's address is the one the worker that
//! drives that cluster recorded when the workspace became ready.

use crate::api::auth::Caller;
use crate::api::error::{ApiError, ApiResult};
use crate::api::input::PathId;
use crate::provisioner::manifests::{Session, ACCESS_SECRET};
use crate::state::AppState;
use app::backend::error::{ServiceError, ServiceResult};
use app::backend::sessions::facts::{facts, BookingFacts};
use app::backend::sessions::session_status;
use app::model::Principal;
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use sqlx::PgPool;
use uuid::Uuid;

pub async fn open(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
    Caller(principal): Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    let facts = openable(&state.db, &principal, id).await?;
    let session = Session::of(facts);
    let unavailable = |message: &str| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "cluster_unavailable", message);
    let reach = state.reach.clone().ok_or_else(|| unavailable("this portal has no connection to the cluster"))?;
    let cluster = app::backend::clusters::of_booking(&state.db, id).await?;
    let client = reach.for_portal(&cluster).await.map_err(|why| {
        tracing::warn!(booking = %id, cluster = %cluster.name, %why, "cannot reach the cluster to open a workspace");
        unavailable(&format!("cluster {} cannot be reached from this portal; try again in a moment", cluster.name))
    })?;
    let secrets: Api<Secret> = Api::namespaced(client, &session.namespace());
    let secret = match secrets.get_opt(ACCESS_SECRET).await {
        Ok(secret) => secret,
        Err(err) => {
            tracing::warn!(booking = %id, error = %err, "cannot read the workspace's access secret");
            return Err(unavailable("the cluster did not answer; try again in a moment"));
        }
    };
    // A real API server turns the applied `stringData` into `data`; the
    // in-memory one keeps it as sent.
    let not_ready =
        || ApiError::new(StatusCode::CONFLICT, "workspace_not_running", "the workspace is still being prepared");
    let token = secret
        .and_then(|s| {
            let data = s.data.and_then(|d| d.get("token").map(|t| String::from_utf8_lossy(&t.0).into_owned()));
            data.or_else(|| s.string_data.and_then(|d| d.get("token").cloned()))
        })
        .filter(|t| !t.is_empty())
        .ok_or_else(not_ready)?;
    // Measured use decides idleness; this only tells a no-show from a
    // session that was used (and makes the simulated GPUs busy).
    if let Err(err) = crate::usage::record_workspace_open(&state.db, id).await {
        tracing::warn!(booking = %id, error = %err, "cannot record that the workspace was opened");
    }
    // A browser on the simulated cluster is sent to the booking's own page,
    // which says what is going on (in the site's frame, with its navigation);
    // scripts and the CLI get the link as on a real cluster.
    let browser = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|v| v.contains("text/html"));
    if state.mode.simulated && browser {
        let location = HeaderValue::from_str(&format!("/bookings/{id}?opened=simulated"))
            .map_err(|_| unavailable("the booking id is not a path"))?;
        return Ok((
            StatusCode::SEE_OTHER,
            [(header::LOCATION, location), (header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        )
            .into_response());
    }
    let recorded = session_status::load(&state.db, &[id]).await?.remove(&id);
    let workspace_url = recorded.and_then(|stored| stored.status.workspace_url).ok_or_else(not_ready)?;
    let domain = cluster.switches.workspace_domain.as_deref().unwrap_or(&state.cluster.domain);
    let mut target = url::Url::parse(&workspace_url)
        .ok()
        .filter(|url| under_its_domain(url, &session, domain))
        .and_then(|url| url.join(crate::gate::OPEN_PATH).ok())
        .ok_or_else(|| {
            // A worker (a member's, in the worker-in-each-cluster shape)
            // writes the address; a code goes only to the session's own host.
            tracing::warn!(booking = %id, cluster = %cluster.name, url = %workspace_url,
                "the recorded workspace address is not the session's host under its cluster's domain");
            unavailable("the workspace's recorded address is not under its cluster's workspace domain")
        })?;
    target.query_pairs_mut().append_pair("code", &crate::gate::code(&token, chrono::Utc::now().timestamp()));
    let location = HeaderValue::from_str(target.as_str()).map_err(|_| unavailable("the workspace URL is invalid"))?;
    Ok((
        StatusCode::SEE_OTHER,
        [(header::LOCATION, location), (header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
    )
        .into_response())
}

/// The booking whose workspace `principal` wants to open: only its owner
/// and co-owners (not other teammates, not admins: the workspace is the
/// holders' session), only while it is active. Not visible: 404.
async fn openable(db: &PgPool, principal: &Principal, booking_id: Uuid) -> ServiceResult<BookingFacts> {
    let booking = app::backend::bookings::get(db, principal, booking_id).await?;
    if !booking.mine {
        return Err(ServiceError::Forbidden("only the booking's owner and co-owners may open its workspace"));
    }
    if booking.state != app::model::BookingState::Active {
        return Err(ServiceError::Conflict {
            code: "workspace_not_running",
            field: None,
            reason: format!("the workspace is not running: the booking is {}", booking.state.as_str()),
        });
    }
    facts(db, booking_id).await
}

/// Whether `url` is the session's own host, `https://<namespace>.<domain>/`:
/// the one address a one-time code may be sent to.
fn under_its_domain(url: &url::Url, session: &Session, domain: &str) -> bool {
    let cluster = crate::provisioner::manifests::Cluster { domain: domain.to_string(), ..Default::default() };
    let host = crate::provisioner::manifests::host(session, &cluster);
    url.scheme() == "https" && url.host_str().is_some_and(|h| h.eq_ignore_ascii_case(&host)) && url.port().is_none()
}
