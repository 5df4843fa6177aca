//! The simulated cluster's storage, for `make run` (issue 46): it plays a
//! provisioner and kube-controller-manager's PersistentVolume controller,
//! so that homes and model caches are kept and bound again there as on a
//! real cluster. A claim without a volume gets one made for it (reclaim
//! `Delete`, as a CSI provisioner makes them); a claim naming a volume
//! reserved for it (`claimRef`) is bound to it; when a namespace goes, its
//! volumes are `Released` if kept (`Retain`), else deleted; a released
//! volume set back to `Delete` is deleted, as the provisioner would. It
//! also plays the cluster admin who made each tenant's team cache volumes.

use crate::provisioner::manifests::window::{team_cache_claim, TEAM_CACHE_LABEL};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

/// The storage class of the team model cache volumes the simulated
/// cluster has for every tenant (the seeded lab-l40s pool names it).
pub const SIMULATED_TEAM_CACHE_CLASS: &str = "team-models";

/// The cluster admin's part of a team's shared model cache: when the worker
/// first looks for a tenant's volumes (`selector` is
/// `berth.io/team-cache=<slug>`), two of them, on one (imagined) export and
/// reserved for no session, as docs/operations.md has admins make them.
pub(super) async fn team_volumes(inner: &kube::Client, selector: &str) {
    let Some(tenant) = selector.strip_prefix(&format!("{TEAM_CACHE_LABEL}=")) else { return };
    let volumes: Api<PersistentVolume> = Api::all(inner.clone());
    for n in 1..=2 {
        let name = format!("{tenant}-models-{n}");
        if !matches!(volumes.get_opt(&name).await, Ok(None)) {
            continue;
        }
        let pv = json!({ "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": { "name": name, "labels": { TEAM_CACHE_LABEL: tenant } },
            "spec": { "capacity": { "storage": "2Ti" }, "accessModes": ["ReadWriteMany"],
                      "persistentVolumeReclaimPolicy": "Retain", "storageClassName": SIMULATED_TEAM_CACHE_CLASS,
                      "nfs": { "server": "filer.simulated", "path": format!("/exports/{tenant}/models") },
                      "claimRef": { "namespace": "berth", "name": team_cache_claim(tenant) } },
            "status": { "phase": "Available" } });
        let Ok(pv) = serde_json::from_value::<PersistentVolume>(pv) else { continue };
        let _ = volumes.create(&PostParams::default(), &pv).await;
    }
}

/// Binds the pending claims of `namespace`, making volumes for those that name none.
pub(super) async fn bind_claims(inner: &kube::Client, namespace: &str) {
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(inner.clone(), namespace);
    let volumes: Api<PersistentVolume> = Api::all(inner.clone());
    let Ok(list) = claims.list(&ListParams::default()).await else { return };
    for claim in list {
        if claim.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound") {
            continue;
        }
        let (Some(name), Some(uid)) = (claim.metadata.name.clone(), claim.metadata.uid.clone()) else { continue };
        let spec = claim.spec.clone().unwrap_or_default();
        let size = spec.resources.and_then(|r| r.requests).and_then(|r| r.get("storage").cloned());
        let reference = json!({ "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "namespace": namespace, "name": name, "uid": uid });
        let volume = match spec.volume_name {
            // Reserved for it by the worker (or not: then it stays pending, as on a real cluster).
            Some(volume) => {
                let Ok(Some(pv)) = volumes.get_opt(&volume).await else { continue };
                let reserved = pv.spec.and_then(|s| s.claim_ref).unwrap_or_default();
                if reserved.namespace.as_deref() != Some(namespace) || reserved.name.as_deref() != Some(&name) {
                    continue;
                }
                let (params, bound) = (PatchParams::default(), json!({ "spec": { "claimRef": reference } }));
                let _ = volumes.patch(&volume, &params, &Patch::Merge(&bound)).await;
                let _ = volumes
                    .patch_status(&volume, &params, &Patch::Merge(&json!({ "status": { "phase": "Bound" } })))
                    .await;
                volume
            }
            None => {
                let volume = format!("pvc-{uid}");
                let pv = json!({ "apiVersion": "v1", "kind": "PersistentVolume",
                    "metadata": { "name": volume },
                    "spec": { "capacity": { "storage": size }, "accessModes": spec.access_modes,
                              "persistentVolumeReclaimPolicy": "Delete",
                              "storageClassName": spec.storage_class_name, "claimRef": reference },
                    "status": { "phase": "Bound" } });
                let Ok(pv) = serde_json::from_value::<PersistentVolume>(pv) else { continue };
                if volumes.create(&PostParams::default(), &pv).await.is_err() {
                    continue;
                }
                let bound = json!({ "status": { "phase": "Bound" } });
                let _ = volumes.patch_status(&volume, &PatchParams::default(), &Patch::Merge(&bound)).await;
                volume
            }
        };
        let params = PatchParams::default();
        let named = json!({ "spec": { "volumeName": volume } });
        let _ = claims.patch(&name, &params, &Patch::Merge(&named)).await;
        let bound = json!({ "status": { "phase": "Bound", "capacity": { "storage": size } } });
        let _ = claims.patch_status(&name, &params, &Patch::Merge(&bound)).await;
    }
}

/// `namespace` went: its kept volumes are released, the others deleted.
pub(super) async fn release_volumes(inner: &kube::Client, namespace: &str) {
    let volumes: Api<PersistentVolume> = Api::all(inner.clone());
    let Ok(list) = volumes.list(&ListParams::default()).await else { return };
    for pv in list {
        let Some(name) = pv.metadata.name.clone() else { continue };
        let spec = pv.spec.unwrap_or_default();
        if spec.claim_ref.and_then(|r| r.namespace).as_deref() != Some(namespace) {
            continue;
        }
        match spec.persistent_volume_reclaim_policy.as_deref() {
            Some("Retain") => {
                let released = json!({ "status": { "phase": "Released" } });
                let _ = volumes.patch_status(&name, &PatchParams::default(), &Patch::Merge(&released)).await;
            }
            _ => {
                let _ = volumes.delete(&name, &DeleteParams::default()).await;
            }
        }
    }
}

/// The volume `name` was changed: the provisioner deletes a released one set back to `Delete`.
pub(super) async fn volume_changed(inner: &kube::Client, name: &str) {
    let volumes: Api<PersistentVolume> = Api::all(inner.clone());
    let Ok(Some(pv)) = volumes.get_opt(name).await else { return };
    let deleting = pv.spec.and_then(|s| s.persistent_volume_reclaim_policy).as_deref() == Some("Delete");
    if deleting && pv.status.and_then(|s| s.phase).as_deref() != Some("Bound") {
        let _ = volumes.delete(name, &DeleteParams::default()).await;
    }
}
