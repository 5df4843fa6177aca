//! The pools' backfill queues (`--kueue`, kinds with `lend_idle`): each
//! repair pass applies what `provisioning::backfills` asks for against the
//! pass's snapshot (nothing when converged), drains and deletes the backfill
//! queues no pool asks for any more, and records how many booked units each
//! backfill uses (`lending::record`).

use super::manifests::kueue::{self, BACKFILL_LABEL};
use super::reconcile::{PassReport, Reconciler};
use super::retry::{describe, gone};
use super::snapshot::{resource, Snapshot};
use app::backend::worker::{lending, provisioning};
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams};
use serde_json::Value;
use std::collections::HashSet;
use uuid::Uuid;

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

fn is_backfill(object: &Value) -> bool {
    object["metadata"]["labels"][BACKFILL_LABEL].is_string()
}

/// Units of `kind` the backfill queue `queue` uses (its status; 0 if none).
fn used(queue: Option<&Value>, pool: Uuid, kind: &str) -> f64 {
    let flavor = kueue::flavor_name(pool, kind);
    let usage = queue.and_then(|q| q["status"]["flavorsUsage"].as_array());
    let flavor = usage.and_then(|flavors| flavors.iter().find(|f| f["name"] == flavor.as_str()));
    let resource = flavor.and_then(|f| f["resources"].as_array()?.iter().find(|r| r["name"] == kind));
    resource.and_then(|r| r["total"].as_str()?.parse().ok()).unwrap_or(0.0)
}

/// A ClusterQueue held and drained, with nothing admitted any more.
fn drained(queue: &Value) -> bool {
    let status = &queue["status"];
    queue["spec"]["stopPolicy"] == "HoldAndDrain"
        && status["admittedWorkloads"].as_i64().unwrap_or(0) == 0
        && status["reservingWorkloads"].as_i64().unwrap_or(0) == 0
}

impl Reconciler {
    /// Lets a drained backfill queue admit again; returns that it wrote.
    async fn admit_again(&self, name: &str) -> Result<bool, kube::Error> {
        let queues: Api<DynamicObject> =
            Api::all_with(self.client.clone(), &resource(kueue::KUEUE_API, "ClusterQueue"));
        let (admit, params) =
            (Patch::Merge(serde_json::json!({ "spec": { "stopPolicy": "None" } })), PatchParams::default());
        self.retrying(|| queues.patch(name, &params, &admit)).await.map(|_| true)
    }

    /// Converges the backfill queues against `snapshot` (read with
    /// `read_kueue`). A pool whose queue the cluster refuses (its namespace
    /// missing, say) is reported and does not stop the pass.
    pub(super) async fn keep_backfill(&self, snapshot: &Snapshot, report: &mut PassReport) -> anyhow::Result<()> {
        let pools = provisioning::backfills(&self.db).await?;
        let mut keep = HashSet::new();
        let mut readings = Vec::new();
        for pool in &pools {
            for object in kueue::backfill(pool) {
                let meta = &object["metadata"];
                keep.insert((text(&object["kind"]), text(&meta["namespace"]), text(&meta["name"])));
                let live = snapshot.get(&object);
                let outcome = match live.filter(|live| drained(live)) {
                    // Drained when a lending session ended (`collect_queues`):
                    // it admits again on what is still lent.
                    Some(_) => self.admit_again(&text(&meta["name"])).await,
                    None => self.apply_unless_current(&object, live).await,
                };
                match outcome {
                    Ok(wrote) => report.applied += usize::from(wrote),
                    Err(err) => {
                        let what = format!("{} {}", text(&object["kind"]), text(&meta["name"]));
                        report.errors.push((
                            Uuid::nil(),
                            format!("backfill of pool {}: {what}: {}", pool.pool_id, describe(&err)),
                        ));
                        break;
                    }
                }
            }
            let queue = kueue::backfill(pool).into_iter().find(|o| o["kind"] == "ClusterQueue");
            let live = queue.as_ref().and_then(|q| snapshot.get(q));
            readings.extend(pool.kinds.iter().map(|kind| (pool.pool_id, kind.clone(), used(live, pool.pool_id, kind))));
        }
        // What no pool asks for any more: its LocalQueue, then its queue, drained first.
        let stale = |object: &&Value| {
            let meta = &object["metadata"];
            is_backfill(object)
                && meta["deletionTimestamp"].is_null()
                && !keep.contains(&(text(&object["kind"]), text(&meta["namespace"]), text(&meta["name"])))
        };
        let (delete, patch) = (DeleteParams::default(), PatchParams::default());
        for local in snapshot.of_kind("LocalQueue").filter(stale) {
            let meta = &local["metadata"];
            let api: Api<DynamicObject> = Api::namespaced_with(
                self.client.clone(),
                &text(&meta["namespace"]),
                &resource(kueue::KUEUE_API, "LocalQueue"),
            );
            gone(self.retrying(|| api.delete(meta["name"].as_str().unwrap_or_default(), &delete)).await)?;
            report.collected.push(format!("LocalQueue {}/{}", text(&meta["namespace"]), text(&meta["name"])));
        }
        let queues: Api<DynamicObject> =
            Api::all_with(self.client.clone(), &resource(kueue::KUEUE_API, "ClusterQueue"));
        let drain = Patch::Merge(serde_json::json!({ "spec": { "stopPolicy": "HoldAndDrain" } }));
        // Deleted only once Kueue has evicted its Jobs: a queue deleted while
        // draining stops draining, and its finalizer then waits for Jobs that
        // run on.
        for queue in snapshot.of_kind("ClusterQueue").filter(stale) {
            let name = text(&queue["metadata"]["name"]);
            if queue["spec"]["stopPolicy"] != "HoldAndDrain" {
                gone(self.retrying(|| queues.patch(&name, &patch, &drain)).await)?;
            } else if drained(queue) {
                gone(self.retrying(|| queues.delete(&name, &delete)).await)?;
                report.collected.push(format!("ClusterQueue {name}"));
            }
        }
        lending::record(&self.db, &readings).await?;
        Ok(())
    }
}
