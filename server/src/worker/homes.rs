//! Homes that outlive the window (issue 46), the cluster's side. A person's
//! first session provisions its home claim as any claim; once bound, the
//! worker keeps the volume (reclaim policy `Retain`) and labels it as that
//! person's home. A later session of theirs reserves the volume for its own
//! home claim (`claimRef`) before creating the claim with `volumeName`, and
//! the PersistentVolume controller binds the two. A home past its retention
//! goes back to `Delete`, so the provisioner deletes it. Policy
//! berth-session-homes (deploy/policies/) holds the worker to exactly this.

use super::manifests::window::{home_claim, HOME_OWNER_LABEL};
use super::manifests::{Home, Session};
use super::reconcile::Reconciler;
use super::retry::describe;
use super::snapshot::Snapshot;
use app::backend::worker::homes;
use k8s_openapi::api::core::v1::{Namespace, PersistentVolume};
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use std::collections::HashMap;
use uuid::Uuid;

/// Why a starting session waits for its home.
pub struct HomeBusy(pub String);

impl Reconciler {
    fn volumes(&self) -> Api<PersistentVolume> {
        Api::all(self.client.clone())
    }

    /// The storage class homes are kept in ('' for the cluster's default).
    pub fn home_class(&self) -> String {
        self.cluster.storage_class.clone().unwrap_or_default()
    }

    /// Which volume a session's home claim binds, decided once: an active
    /// session without a decision predates kept homes (its own claim stays);
    /// a starting one gets the owner's home, reserved for its claim, unless
    /// another session of theirs holds it (then a new volume, or a wait
    /// while that session is ending).
    pub(super) async fn home_for(
        &self,
        session: &Session,
        starting: bool,
        decided: Option<(Option<String>, i32)>,
        managed: &[Namespace],
    ) -> anyhow::Result<Result<Home, HomeBusy>> {
        let home = |(volume, gib): (Option<String>, i32)| match volume {
            Some(volume) => Home::Kept { volume, gib },
            None => Home::New { gib },
        };
        if let Some(decided) = decided {
            return Ok(Ok(home(decided)));
        }
        if !starting {
            return Ok(Ok(Home::PerSession));
        }
        let Home::New { gib: tenant_gib } = session.window.home else { return Ok(Ok(session.window.home.clone())) };
        let owner = session.window.owner_id;
        let err = |e: app::backend::ServiceError| anyhow::anyhow!(e.public_message());
        let mut choice = (None, tenant_gib);
        if let Some((volume, gib)) = homes::of(&self.db, owner, &self.home_class()).await.map_err(err)? {
            match self.reserve(session, &volume, managed).await? {
                Reserved::Yes => choice = (Some(volume), gib),
                Reserved::Busy => {}
                Reserved::Ending(namespace) => {
                    return Ok(Err(HomeBusy(format!(
                        "your home is still held by your session in {namespace}, which is ending"
                    ))))
                }
                Reserved::Gone => homes::forget(&self.db, &volume).await.map_err(err)?,
            }
        }
        let decided = homes::decide(&self.db, session.booking_id, choice.0.as_deref(), choice.1).await.map_err(err)?;
        Ok(Ok(home(decided)))
    }

    /// Reserves `volume` for the session's home claim unless a live claim holds it.
    async fn reserve(&self, session: &Session, volume: &str, managed: &[Namespace]) -> anyhow::Result<Reserved> {
        let volumes = self.volumes();
        let Some(pv) = self.retrying(|| volumes.get_opt(volume)).await? else { return Ok(Reserved::Gone) };
        let namespace = session.namespace();
        let claim = home_claim(session).0;
        let spec = pv.spec.unwrap_or_default();
        let reference = spec.claim_ref.unwrap_or_default();
        let held_by = reference.namespace.clone().unwrap_or_default();
        if held_by == namespace && reference.name.as_deref() == Some(claim.as_str()) {
            return Ok(Reserved::Yes);
        }
        // A live session of the owner holds it, or one that is ending. A
        // holder whose namespace is gone holds nothing, whatever the
        // volume's status says yet.
        let bound = pv.status.and_then(|s| s.phase).as_deref() == Some("Bound");
        let holder = managed.iter().find(|ns| !held_by.is_empty() && ns.metadata.name.as_deref() == Some(&held_by));
        match holder {
            Some(ns) if ns.metadata.deletion_timestamp.is_some() => return Ok(Reserved::Ending(held_by)),
            Some(_) if bound => return Ok(Reserved::Busy),
            _ => {}
        }
        // Released (its last claim is gone) or never bound: the new claim's
        // alone. Without a uid the PersistentVolume controller binds it to
        // the claim of that namespace and name once it exists.
        let patch = json!({ "spec": { "claimRef": {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": namespace, "name": claim,
            "uid": null, "resourceVersion": null,
        } } });
        let (params, merge) = (PatchParams::default(), Patch::Merge(&patch));
        self.retrying(|| volumes.patch(volume, &params, &merge)).await?;
        Ok(Reserved::Yes)
    }

    /// Keeps the volumes new home claims were bound to as their owners'
    /// homes (one per person and storage class: a second session's new
    /// volume goes with it). Reads the claims from the pass's snapshot.
    pub(super) async fn keep_new_homes(&self, sessions: &[Session], snapshot: &Snapshot) -> anyhow::Result<usize> {
        let new: Vec<&Session> = sessions.iter().filter(|s| matches!(s.window.home, Home::New { .. })).collect();
        if new.is_empty() {
            return Ok(0);
        }
        let err = |e: app::backend::ServiceError| anyhow::anyhow!(e.public_message());
        let (class, volumes) = (self.home_class(), self.volumes());
        let mut recorded: HashMap<Uuid, String> = homes::volumes(&self.db, &class).await.map_err(err)?;
        let mut kept = 0;
        for session in new {
            let (name, gib) = home_claim(session);
            let probe = json!({ "kind": "PersistentVolumeClaim",
                "metadata": { "namespace": session.namespace(), "name": name } });
            let Some(claim) = snapshot.get(&probe) else { continue };
            let Some(volume) = claim["spec"]["volumeName"].as_str().filter(|_| claim["status"]["phase"] == "Bound")
            else {
                continue;
            };
            let owner = session.window.owner_id;
            if recorded.contains_key(&owner) {
                continue;
            }
            let patch = json!({
                "metadata": { "labels": { HOME_OWNER_LABEL: owner.to_string() } },
                "spec": { "persistentVolumeReclaimPolicy": "Retain" },
            });
            let (params, merge) = (PatchParams::default(), Patch::Merge(&patch));
            self.retrying(|| volumes.patch(volume, &params, &merge)).await?;
            homes::record(&self.db, owner, &class, volume, gib as i32).await.map_err(err)?;
            recorded.insert(owner, volume.to_string());
            kept += 1;
        }
        Ok(kept)
    }

    /// Lets the cluster delete homes past their retention (or asked to go)
    /// that no session holds: reclaim policy back to `Delete`, which has the
    /// provisioner delete the volume. Returns the volumes let go.
    pub async fn let_homes_go(&self) -> anyhow::Result<Vec<String>> {
        let err = |e: app::backend::ServiceError| anyhow::anyhow!(e.public_message());
        let (mut gone, volumes) = (Vec::new(), self.volumes());
        for volume in homes::due_to_go(&self.db, &self.home_class()).await.map_err(err)? {
            let found = self.retrying(|| volumes.get_opt(&volume)).await?;
            if let Some(pv) = found {
                if pv.status.and_then(|s| s.phase).as_deref() == Some("Bound") {
                    continue; // a session holds it; it goes once that has ended
                }
                let patch = json!({ "spec": { "persistentVolumeReclaimPolicy": "Delete" } });
                let (params, merge) = (PatchParams::default(), Patch::Merge(&patch));
                if let Err(e) = self.retrying(|| volumes.patch(&volume, &params, &merge)).await {
                    tracing::warn!(%volume, error = %describe(&e), "cannot let a home go; the next sweep retries");
                    continue;
                }
            }
            homes::forget(&self.db, &volume).await.map_err(err)?;
            gone.push(volume);
        }
        Ok(gone)
    }
}

enum Reserved {
    Yes,
    /// Another live session of the owner holds it.
    Busy,
    /// The session in that namespace holds it and is ending.
    Ending(String),
    /// The volume no longer exists.
    Gone,
}
