//! What the admin console shows on a fresh `make run`: a pool that requires
//! approval with a booking waiting in it and a maintenance window, a quota
//! for the demo tenant, and a second (simulated) cluster.
//! Separate from `seed::demo` (which tests share) and, like it, idempotent.

use app::backend::{accounts::tenants, accounts::users, admission::AdmissionQueue, pools, ServiceError};
use app::model::{
    ClusterAccess, ClusterSpec, KindSpec, Mode, NewBlackout, NewBooking, NewPool, OnOverlap, Principal, QuotaEntry,
};
use chrono::{Duration, DurationRound, Utc};
use sqlx::PgPool;

pub const APPROVAL_POOL: &str = "lab-l40s";
pub const SECOND_CLUSTER: &str = "lab-east";

fn approval_pool() -> NewPool {
    NewPool {
        name: APPROVAL_POOL.into(),
        description: "Shared L40S cards: every booking is approved by an admin".into(),
        gpu_model: "NVIDIA L40S 48GB".into(),
        requires_approval: true,
        granularity_minutes: Some(30),
        price_per_gpu_hour: 1.2,
        images: vec!["quay.io/jupyter/pytorch-notebook:cuda12-latest".into()],
        kinds: vec![KindSpec {
            kind: "nvidia.com/gpu".into(),
            capacity: 2,
            replicas_per_unit: 1,
            vram_gb_per_unit: 48,
            cpu_millis_per_unit: 8000,
            memory_mib_per_unit: 64 * 1024,
            storage_gib_per_unit: 100,
            slices_per_gpu: None,
            price_per_unit_hour: None,
            lend_idle: false,
        }],
        time_zone: "Europe/Berlin".into(),
        // The simulated cluster has each tenant's team cache volumes of this class.
        team_cache_class: Some(crate::provisioner::simulated::storage::SIMULATED_TEAM_CACHE_CLASS.into()),
        ..NewPool::default()
    }
}

async fn principal(db: &PgPool, email: &str) -> Result<Principal, ServiceError> {
    let id = users::find_by_email(db, email).await?;
    app::backend::accounts::principals::by_user_id(db, id).await?.ok_or(ServiceError::NotFound("user"))
}

/// Adds the approval pool, a pending booking of Ada's tomorrow, a blackout
/// the day after and a quota
/// for tenant `demo`, unless the pool exists already.
pub async fn console(db: &PgPool) -> Result<String, ServiceError> {
    let admin = principal(db, "admin@berth.local").await?;
    if pools::list(db, &admin).await?.iter().any(|p| p.name == APPROVAL_POOL) {
        return Ok(format!("console demo data ({APPROVAL_POOL}) already exists"));
    }
    let pool = pools::create(db, &admin, approval_pool()).await?;
    let lab = pools::list(db, &admin).await?.into_iter().find(|p| p.name == super::seed::DEMO_POOL);
    if let Some(lab) = lab {
        let quota = QuotaEntry {
            pool_id: lab.id,
            kind: "nvidia.com/mig-1g.24gb".into(),
            max_units: Some(3),
            gpu_hours_per_week: Some(40.0),
        };
        tenants::replace_quotas(db, &admin, "demo", vec![quota]).await?;
    }
    let ada = principal(db, "ada@berth.local").await?;
    let tomorrow = (Utc::now() + Duration::days(1)).duration_trunc(Duration::days(1)).unwrap_or_else(|_| Utc::now());
    let request = NewBooking {
        pool_id: pool.id,
        kind: "nvidia.com/gpu".into(),
        quantity: 1,
        start: tomorrow + Duration::hours(9),
        end: tomorrow + Duration::hours(12),
        mode: Mode::Interactive,
        image: None,
        note: "fine-tuning run for the quarterly model".into(),
        tenant: None,
        waitlist: false,
    };
    app::backend::admission::create(&AdmissionQueue::new(db.clone()), &ada, request).await?;
    // A maintenance window the day after, so the calendar shows one hatched.
    let maintenance = NewBlackout {
        kind: None,
        start: tomorrow + Duration::days(1) + Duration::hours(6),
        end: tomorrow + Duration::days(1) + Duration::hours(10),
        reason: "driver upgrade to the 570 branch".into(),
        overlapping: Some(OnOverlap::Keep),
    };
    app::backend::pools::blackouts::create(db, &admin, pool.id, maintenance).await?;
    // A second cluster, so the Clusters and Worker pages show the shape of
    // several: `berth serve` drives it with an in-memory API server of its own.
    let east = ClusterSpec {
        workspace_domain: Some("east.berth.local".into()),
        ..ClusterSpec::reached(SECOND_CLUSTER, ClusterAccess::Simulated)
    };
    app::backend::clusters::create(db, &admin, east).await?;
    Ok(format!(
        "created {APPROVAL_POOL} with a pending booking and a maintenance window, a quota for tenant demo, \
         and a second simulated cluster, {SECOND_CLUSTER}"
    ))
}
