//! The sweep the active worker runs every few minutes besides its passes:
//! managed namespaces with no live booking are deleted (the start pass does
//! the same; the sweep is the backstop should start passes keep failing
//! before they get there), namespaces stuck terminating are reported, and
//! the database is kept tidy.

use super::reconcile::{live_bookings, owned_by, Reconciler};
use app::backend::maintenance::{self, Swept};

/// How often the sweep runs.
pub const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(300);

#[derive(Debug, Default, PartialEq)]
pub struct SweepReport {
    pub collected: Vec<String>,
    /// Managed namespaces terminating for longer than `Policy::stuck_after`
    /// (a finalizer that never finishes): an admin must look.
    pub stuck: Vec<String>,
    pub swept: Swept,
}

impl Reconciler {
    pub async fn sweep(&self) -> anyhow::Result<SweepReport> {
        let due = app::backend::provisioning::due(&self.db).await?;
        let managed = self.managed_namespaces().await?;
        let collected = self.collect(&managed, &live_bookings(&due)).await?;
        let now = k8s_openapi::jiff::Timestamp::now().as_second();
        let stuck_after = i64::try_from(self.policy.stuck_after.as_secs()).unwrap_or(i64::MAX);
        let stuck: Vec<String> = managed
            .iter()
            .filter(|ns| owned_by(ns, None).is_some())
            .filter(|ns| ns.metadata.deletion_timestamp.as_ref().is_some_and(|at| now - at.0.as_second() > stuck_after))
            .filter_map(|ns| ns.metadata.name.clone())
            .collect();
        for name in &stuck {
            tracing::warn!(namespace = %name, "namespace stuck terminating: check its finalizers");
        }
        let swept = maintenance::sweep(&self.db, self.policy.audit_retention_days).await?;
        Ok(SweepReport { collected, stuck, swept })
    }
}
