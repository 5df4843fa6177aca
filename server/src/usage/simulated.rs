//! The simulated cluster's NVIDIA DCGM exporter: one series set per device
//! of each active booking, in the exporter's format and labels, so the real
//! Prometheus of `make run` scrapes it and the sampler measures it like a
//! real one. Values are plausible and labelled `simulated="true"`: a device
//! is busy (65–95 %) for 30 minutes after its workspace was last opened
//! through the portal, and idle (0–3 %) otherwise.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::fmt::Write;
use uuid::Uuid;

/// How long an opened workspace keeps its simulated GPUs busy.
pub const BUSY_AFTER_OPEN_MINUTES: i64 = 30;

/// Stable noise in [0, 1) for a device and minute (splitmix64).
fn noise(booking: Uuid, device: i32, minute: i64) -> f64 {
    let id = booking.as_u128();
    let mut z = (id as u64 ^ (id >> 64) as u64) ^ (minute as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ device as u64;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// (booking, tenant slug, kind, units, VRAM GB per unit, workspace last opened, session)
type Device = (Uuid, String, String, i32, i32, Option<DateTime<Utc>>, Uuid);

/// Every active booking's devices as DCGM exporter series at `now`.
pub async fn exposition(db: &PgPool, now: DateTime<Utc>) -> sqlx::Result<String> {
    let rows: Vec<Device> = sqlx::query_as(&format!(
        "SELECT b.id, t.slug, b.kind, b.quantity, k.vram_gb_per_unit, o.last_at, {}
         FROM booking b JOIN tenant t ON t.id = b.tenant_id
         JOIN pool_kind k ON k.pool_id = b.pool_id AND k.kind = b.kind
         LEFT JOIN workspace_open o ON o.booking_id = b.id
         WHERE b.state = 'active' AND b.starts_at <= $1 AND b.ends_at > $1",
        app::backend::sessions::continuation::SESSION_ID
    ))
    .bind(now)
    .fetch_all(db)
    .await?;
    let minute = now.timestamp() / 60;
    let mut util =
        String::from("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n");
    let mut engine = String::from(
        "# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.\n# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n",
    );
    let mut memory = String::from(
        "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\n",
    );
    let mut free = String::from(
        "# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).\n# TYPE DCGM_FI_DEV_FB_FREE gauge\n",
    );
    let mut power =
        String::from("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n");
    for (id, tenant, kind, units, vram_gb, opened, session) in rows {
        let namespace = crate::provisioner::manifests::namespace_name(&tenant, session);
        let busy_now = opened.is_some_and(|at| (now - at).num_minutes() < BUSY_AFTER_OPEN_MINUTES);
        let profile = kind.strip_prefix("nvidia.com/mig-");
        let short = &id.simple().to_string()[..8];
        for device in 0..units {
            let n = noise(id, device, minute);
            let busy = if busy_now { 0.65 + 0.30 * n } else { 0.03 * n };
            let total_mib = f64::from(vram_gb.max(1)) * 1024.0;
            let used_mib = (total_mib * if busy_now { 0.6 + 0.2 * n } else { 0.02 }).round();
            let mut labels = format!(
                "gpu=\"{device}\",UUID=\"GPU-SIM-{short}-{device}\",modelName=\"Simulated GPU\",Hostname=\"simulated-node\",\
                 namespace=\"{namespace}\",pod=\"workspace-0\",container=\"workspace\",simulated=\"true\""
            );
            if let Some(profile) = profile {
                let _ = write!(labels, ",GPU_I_ID=\"{device}\",GPU_I_PROFILE=\"{profile}\"");
            } else {
                let _ = writeln!(util, "DCGM_FI_DEV_GPU_UTIL{{{labels}}} {}", (busy * 100.0).round());
                let _ = writeln!(power, "DCGM_FI_DEV_POWER_USAGE{{{labels}}} {:.1}", 70.0 + 580.0 * busy);
            }
            let _ = writeln!(engine, "DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{labels}}} {busy:.4}");
            let _ = writeln!(memory, "DCGM_FI_DEV_FB_USED{{{labels}}} {used_mib}");
            let _ = writeln!(free, "DCGM_FI_DEV_FB_FREE{{{labels}}} {}", total_mib - used_mib);
        }
    }
    Ok([util, engine, memory, free, power].concat())
}

#[cfg(test)]
mod tests {
    use super::noise;

    #[test]
    fn the_noise_is_stable_and_in_range() {
        let id = uuid::Uuid::new_v4();
        for minute in 0..1000 {
            let n = noise(id, 1, minute);
            assert!((0.0..1.0).contains(&n));
            assert_eq!(n, noise(id, 1, minute));
        }
    }
}
