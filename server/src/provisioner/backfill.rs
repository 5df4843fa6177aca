//! The pools' backfill queues (`--kueue`, kinds with `lend_idle`): each
//! repair pass applies what `due::backfills` asks for against the
//! pass's snapshot (nothing when converged), drains and deletes the backfill
//! queues no pool asks for any more, and records how many booked units each
//! backfill uses (`lending::record`). It also marks each backfill namespace
//! (`manifests::backfill_namespace`), so the guard rails bind it, and
//! unmarks one no pool lends into any more.

use super::apply;
use super::context::Reconciler;
use super::manifests::kueue::{self, BACKFILL_LABEL};
use super::manifests::{self, FIELD_MANAGER};
use super::report::PassReport;
use super::retry::{describe, gone};
use super::snapshot::{resource, Snapshot};
use app::backend::sessions::{due, lending};
use k8s_openapi::api::core::v1::Namespace;
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

/// Lets a drained backfill queue admit again; returns that it wrote.
async fn admit_again(w: &Reconciler, name: &str) -> Result<bool, kube::Error> {
    let queues: Api<DynamicObject> = Api::all_with(w.client.clone(), &resource(kueue::KUEUE_API, "ClusterQueue"));
    let (admit, params) =
        (Patch::Merge(serde_json::json!({ "spec": { "stopPolicy": "None" } })), PatchParams::default());
    w.retrying(|| queues.patch(name, &params, &admit)).await.map(|_| true)
}

/// Marks `pool`'s backfill namespace (a read, and a write only when
/// the marks changed); a namespace that does not exist is reported.
async fn mark_namespace(w: &Reconciler, pool: &due::Backfill) -> Result<bool, String> {
    let namespaces: Api<Namespace> = Api::all(w.client.clone());
    let live = match w.retrying(|| namespaces.get_opt(&pool.namespace)).await {
        Ok(Some(live)) => serde_json::to_value(live).ok(),
        Ok(None) => return Err(format!("its backfill namespace {} does not exist", pool.namespace)),
        Err(err) => return Err(format!("namespace {}: {}", pool.namespace, describe(&err))),
    };
    let marked = manifests::backfill_namespace(pool);
    apply::unless_current(w, &marked, live.as_ref())
        .await
        .map_err(|err| format!("marking namespace {}: {}", pool.namespace, describe(&err)))
}

/// Takes Berth's marks off a namespace no pool lends into any more.
async fn unmark_namespace(w: &Reconciler, name: &str) -> Result<(), kube::Error> {
    let namespaces: Api<Namespace> = Api::all(w.client.clone());
    if w.retrying(|| namespaces.get_opt(name)).await?.is_none() {
        return Ok(());
    }
    // Applying it bare under Berth's field manager drops every field Berth set.
    let bare = serde_json::json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } });
    let (params, patch) = (PatchParams::apply(FIELD_MANAGER).force(), Patch::Apply(&bare));
    gone(w.retrying(|| namespaces.patch(name, &params, &patch)).await)
}

/// Converges the backfill queues against `snapshot` (read with
/// `read_kueue`). A pool whose queue the cluster refuses (its namespace
/// missing, say) is reported and does not stop the pass.
pub(super) async fn keep(
    w: &Reconciler,
    snapshot: &Snapshot,
    report: &mut PassReport,
) -> crate::provisioner::error::WorkerResult<()> {
    let pools = due::backfills(&w.db, w.cluster_id()).await?;
    let mut keep = HashSet::new();
    let mut readings = Vec::new();
    for pool in &pools {
        match mark_namespace(w, pool).await {
            Ok(wrote) => report.applied += usize::from(wrote),
            Err(why) => report.errors.push((Uuid::nil(), format!("backfill of pool {}: {why}", pool.pool_id))),
        }
        for object in kueue::backfill(pool) {
            let meta = &object["metadata"];
            keep.insert((text(&object["kind"]), text(&meta["namespace"]), text(&meta["name"])));
            let live = snapshot.get(&object);
            let outcome = match live.filter(|live| drained(live)) {
                // Drained when a lending session ended (`queues::collect`):
                // it admits again on what is still lent.
                Some(_) => admit_again(w, &text(&meta["name"])).await,
                None => apply::unless_current(w, &object, live).await,
            };
            match outcome {
                Ok(wrote) => report.applied += usize::from(wrote),
                Err(err) => {
                    let what = format!("{} {}", text(&object["kind"]), text(&meta["name"]));
                    report
                        .errors
                        .push((Uuid::nil(), format!("backfill of pool {}: {what}: {}", pool.pool_id, describe(&err))));
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
            w.client.clone(),
            &text(&meta["namespace"]),
            &resource(kueue::KUEUE_API, "LocalQueue"),
        );
        gone(w.retrying(|| api.delete(meta["name"].as_str().unwrap_or_default(), &delete)).await)?;
        report.collected.push(format!("LocalQueue {}/{}", text(&meta["namespace"]), text(&meta["name"])));
        let namespace = text(&meta["namespace"]);
        if !pools.iter().any(|pool| pool.namespace == namespace) {
            if let Err(err) = unmark_namespace(w, &namespace).await {
                let why = format!("unmarking former backfill namespace {namespace}: {}", describe(&err));
                report.errors.push((Uuid::nil(), why));
            }
        }
    }
    let queues: Api<DynamicObject> = Api::all_with(w.client.clone(), &resource(kueue::KUEUE_API, "ClusterQueue"));
    let drain = Patch::Merge(serde_json::json!({ "spec": { "stopPolicy": "HoldAndDrain" } }));
    // Deleted only once Kueue has evicted its Jobs: a queue deleted while
    // draining stops draining, and its finalizer then waits for Jobs that
    // run on.
    for queue in snapshot.of_kind("ClusterQueue").filter(stale) {
        let name = text(&queue["metadata"]["name"]);
        if queue["spec"]["stopPolicy"] != "HoldAndDrain" {
            gone(w.retrying(|| queues.patch(&name, &patch, &drain)).await)?;
        } else if drained(queue) {
            gone(w.retrying(|| queues.delete(&name, &delete)).await)?;
            report.collected.push(format!("ClusterQueue {name}"));
        }
    }
    lending::record(&w.db, &readings).await?;
    Ok(())
}
