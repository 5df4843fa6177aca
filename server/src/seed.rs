//! The demo pool, modelled on the reference lab: one H100-class GPU kept whole
//! (4 time-slice replicas) beside one split into four 1g.24gb MIG slices
//! (2 replicas each).

use app::backend::{accounts::users, pools, ServiceError};
use app::model::{KindSpec, NewPool, Principal, Role, TenantRef, Toleration};
use sqlx::PgPool;
use uuid::Uuid;

pub const DEMO_POOL: &str = "lab-h100";

fn demo_pool() -> NewPool {
    NewPool {
        name: DEMO_POOL.into(),
        description: "Reference lab: one whole GPU and four MIG slices".into(),
        gpu_model: "NVIDIA H100 NVL 96GB".into(),
        price_per_gpu_hour: 2.5,
        images: vec!["quay.io/jupyter/pytorch-notebook:cuda12-latest".into(), "codercom/code-server:latest".into()],
        // The GPU Operator's product label, and the taint GPU nodes commonly carry.
        node_selector: [("nvidia.com/gpu.product".to_string(), "NVIDIA-H100-NVL".to_string())].into(),
        tolerations: vec![Toleration {
            key: Some("nvidia.com/gpu".into()),
            operator: Some("Exists".into()),
            effect: Some("NoSchedule".into()),
            ..Toleration::default()
        }],
        time_zone: "Europe/Berlin".into(),
        kinds: vec![
            KindSpec {
                kind: "nvidia.com/gpu".into(),
                capacity: 1,
                replicas_per_unit: 4,
                vram_gb_per_unit: 96,
                cpu_millis_per_unit: 16000,
                memory_mib_per_unit: 128 * 1024,
                storage_gib_per_unit: 200,
                slices_per_gpu: None,
                price_per_unit_hour: None,
                lend_idle: false,
            },
            KindSpec {
                kind: "nvidia.com/mig-1g.24gb".into(),
                capacity: 4,
                replicas_per_unit: 2,
                vram_gb_per_unit: 24,
                cpu_millis_per_unit: 4000,
                memory_mib_per_unit: 32 * 1024,
                storage_gib_per_unit: 50,
                slices_per_gpu: None,
                price_per_unit_hour: None,
                lend_idle: false,
            },
        ],
        ..NewPool::default()
    }
}

/// The demo people (email, name, role), all in tenant `demo`; the
/// development login offers them.
pub const DEMO_USERS: [(&str, &str, Role); 3] = [
    ("ada@berth.local", "Ada Demo", Role::User),
    ("mia@berth.local", "Mia Manager", Role::Manager),
    ("admin@berth.local", "Demo Admin", Role::Admin),
];

/// Creates the demo tenant, users and pool; running it again changes nothing.
pub async fn demo(db: &PgPool) -> Result<String, ServiceError> {
    let tenant = users::ensure_tenant(db, "demo", "Demo team").await?;
    for (email, name, role) in DEMO_USERS {
        users::upsert_user(db, email, name, role, "demo").await?;
    }
    let admin = users::find_by_email(db, "admin@berth.local").await?;
    let principal = Principal {
        user_id: admin,
        email: "admin@berth.local".into(),
        name: "Demo Admin".into(),
        role: Role::Admin,
        tenants: vec![TenantRef { id: tenant, slug: "demo".into() }],
    };
    let exists = pools::list(db, &principal).await?.into_iter().any(|p| p.name == DEMO_POOL);
    if exists {
        return Ok(format!("demo pool {DEMO_POOL} already exists"));
    }
    let pool: Uuid = pools::create(db, &principal, demo_pool()).await?.id;
    Ok(format!("created demo pool {DEMO_POOL} ({pool})"))
}
