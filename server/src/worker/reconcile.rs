//! One pass of the worker: stop what must stop, collect orphans, start or
//! repair what must run. Desired state comes from PostgreSQL; the cluster is
//! only read and written through `kube::Client`. Idempotent: a pass over a
//! converged cluster reads but writes nothing, and a pass interrupted after
//! any step is finished by the next one.

use super::manifests::{self, Cluster, Session, BOOKING_ANNOTATION, FIELD_MANAGER, MANAGED_BY};
use app::backend::provisioning::{self, BookingFacts};
use app::model::BookingState;
use app::rules::state_machine::Action;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams};
use serde_json::Value;
use sqlx::PgPool;
use std::collections::HashSet;
use uuid::Uuid;

/// What a pass did, for logs and tests.
#[derive(Debug, Default, PartialEq)]
pub struct PassReport {
    pub applied: usize,
    pub started: Vec<Uuid>,
    pub completed: Vec<Uuid>,
    pub collected: Vec<String>,
    pub failed: Vec<Uuid>,
}

pub struct Reconciler {
    pub db: PgPool,
    pub client: kube::Client,
    pub cluster: Cluster,
}

/// Whether a namespace is Berth's for `booking`: label *and* annotation.
fn owned_by(ns: &Namespace, booking: Option<Uuid>) -> Option<Uuid> {
    let meta = &ns.metadata;
    let managed = meta.labels.as_ref().and_then(|l| l.get(MANAGED_BY.0)).is_some_and(|v| v == MANAGED_BY.1);
    let id = meta.annotations.as_ref().and_then(|a| a.get(BOOKING_ANNOTATION)).and_then(|v| v.parse::<Uuid>().ok())?;
    (managed && booking.is_none_or(|b| b == id)).then_some(id)
}

/// `desired` is contained in `actual`: every field it sets has that value.
pub fn is_subset(desired: &Value, actual: &Value) -> bool {
    match (desired, actual) {
        (Value::Object(want), Value::Object(have)) => {
            want.iter().all(|(key, value)| have.get(key).is_some_and(|found| is_subset(value, found)))
        }
        (Value::Array(want), Value::Array(have)) => {
            want.len() == have.len() && want.iter().zip(have).all(|(w, h)| is_subset(w, h))
        }
        _ => desired == actual,
    }
}

fn api_for(client: &kube::Client, object: &Value) -> Api<DynamicObject> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, object["kind"].as_str().unwrap_or_default());
    let resource = ApiResource::from_gvk(&gvk);
    match object["metadata"]["namespace"].as_str() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

fn random_token() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 24];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Reconciler {
    pub async fn pass(&self) -> anyhow::Result<PassReport> {
        let mut report = PassReport::default();
        let due = provisioning::due(&self.db).await?;
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let managed =
            namespaces.list(&ListParams::default().labels(&format!("{}={}", MANAGED_BY.0, MANAGED_BY.1))).await?;

        // Stop: windows that have closed.
        for id in &due.ended {
            for ns in managed.items.iter().filter(|ns| owned_by(ns, Some(*id)).is_some()) {
                self.delete_namespace(ns).await?;
            }
            provisioning::system_transition(&self.db, *id, Action::Complete, "the window ended").await?;
            report.completed.push(*id);
        }
        // Collect: managed namespaces whose booking no longer runs (canceled,
        // ended early, or already completed).
        let running: HashSet<Uuid> = due.running.iter().map(|(facts, _)| facts.booking_id).collect();
        for ns in &managed.items {
            if let Some(id) = owned_by(ns, None) {
                if !running.contains(&id) && !due.ended.contains(&id) {
                    self.delete_namespace(ns).await?;
                    report.collected.push(ns.metadata.name.clone().unwrap_or_default());
                }
            }
        }
        // Start or repair.
        for (facts, state) in due.running {
            self.converge(facts, state, &mut report).await?;
        }
        Ok(report)
    }

    async fn delete_namespace(&self, ns: &Namespace) -> anyhow::Result<()> {
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let name = ns.metadata.name.clone().unwrap_or_default();
        match namespaces.delete(&name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(err) => Err(err.into()),
        }
    }

    async fn converge(&self, facts: BookingFacts, state: BookingState, report: &mut PassReport) -> anyhow::Result<()> {
        let id = facts.booking_id;
        let session = Session::of(facts);
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        if let Some(existing) = namespaces.get_opt(&session.namespace()).await? {
            if owned_by(&existing, Some(id)).is_none() {
                // Never adopt a namespace by its name alone.
                let reason = format!("namespace {} exists and is not Berth's for this booking", session.namespace());
                provisioning::system_transition(&self.db, id, Action::Fail, &reason).await?;
                report.failed.push(id);
                return Ok(());
            }
        }
        for object in manifests::all(&session, &self.cluster, &random_token()) {
            let api = api_for(&self.client, &object);
            let name = object["metadata"]["name"].as_str().unwrap_or_default().to_string();
            let current = api.get_opt(&name).await?;
            let up_to_date = match &current {
                // The access token is made once; re-applying would change it.
                Some(_) if object["kind"] == "Secret" => true,
                Some(found) => is_subset(&object, &serde_json::to_value(found)?),
                None => false,
            };
            if !up_to_date {
                api.patch(&name, &PatchParams::apply(FIELD_MANAGER).force(), &Patch::Apply(&object)).await?;
                report.applied += 1;
            }
        }
        if state == BookingState::Approved && self.workspace_ready(&session).await? {
            provisioning::system_transition(&self.db, id, Action::Activate, "the workspace is ready").await?;
            report.started.push(id);
        }
        Ok(())
    }

    async fn workspace_ready(&self, session: &Session) -> anyhow::Result<bool> {
        let deployments: Api<Deployment> = Api::namespaced(self.client.clone(), &session.namespace());
        let ready = deployments.get_opt("workspace").await?.and_then(|d| d.status).and_then(|s| s.ready_replicas);
        Ok(ready.unwrap_or(0) >= 1)
    }
}

#[cfg(test)]
mod tests {
    use super::is_subset;
    use serde_json::json;

    #[test]
    fn desired_fields_must_all_be_present_with_equal_values() {
        let actual = json!({ "a": 1, "b": { "c": [1, { "d": 2, "e": 3 }] }, "extra": true });
        assert!(is_subset(&json!({ "a": 1, "b": { "c": [1, { "d": 2 }] } }), &actual));
        assert!(!is_subset(&json!({ "a": 2 }), &actual));
        assert!(!is_subset(&json!({ "b": { "c": [1] } }), &actual), "arrays must match in length");
        assert!(!is_subset(&json!({ "missing": null }), &actual));
    }
}
