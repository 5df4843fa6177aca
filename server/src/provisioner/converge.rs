//! Converging one session: apply each object the booking needs, in order,
//! where the live object does not already hold it, and say how far it got —
//! one line per step for the booking page.

use super::context::Reconciler;
use super::error::WorkerResult;
use super::manifests::{self, owned_by, Session};
use super::progress::{Converged, Progress, Step, Steps};
use super::retry::describe;
use super::snapshot::Snapshot;
use super::{apply, rotate};
use app::backend::sessions::transitions;
use app::model::StepState;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Node};
use k8s_openapi::api::rbac::v1::RoleBinding;
use kube::api::{Api, ListParams};
use serde_json::Value;

/// Terminating session namespaces of the same kind on the same nodes as `session`'s.
fn held_by_ended(session: &Session, managed: &[Namespace]) -> Vec<String> {
    let annotations = manifests::namespace(session, &Default::default()).metadata.annotations.unwrap_or_default();
    let placed = |a: &std::collections::BTreeMap<String, String>| -> Vec<(String, String)> {
        let mut pairs: Vec<_> = a
            .iter()
            .filter(|(k, _)| k.starts_with(manifests::NODE_SELECTOR_ANNOTATION) || *k == manifests::GPU_KIND_ANNOTATION)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        pairs.sort();
        pairs
    };
    let wanted = placed(&annotations);
    managed
        .iter()
        .filter(|ns| ns.metadata.deletion_timestamp.is_some())
        .filter(|ns| ns.metadata.annotations.as_ref().is_some_and(|a| placed(a) == wanted))
        .filter_map(|ns| ns.metadata.name.clone())
        .collect()
}

fn random_token() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 24];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Converges one session against what the pass read: Berth's namespaces
/// (`managed`) and their objects (`snapshot`; without one, each object is
/// read by name). Only a namespace missing from `managed` is looked up by
/// name (it may be someone else's).
pub(super) async fn session(
    w: &Reconciler,
    session: &Session,
    managed: &[Namespace],
    snapshot: Option<&Snapshot>,
) -> WorkerResult<Converged> {
    let namespaces: Api<Namespace> = Api::all(w.client.clone());
    let name = session.namespace();
    let mut states = Steps::all(StepState::Pending);
    let known = managed.iter().find(|ns| ns.metadata.name.as_deref() == Some(name.as_str())).cloned();
    let existing = match known {
        Some(ns) => Ok(Some(ns)),
        None => w.retrying(|| namespaces.get_opt(&name)).await,
    };
    let live_namespace = existing.as_ref().ok().and_then(|ns| ns.as_ref()).and_then(|ns| serde_json::to_value(ns).ok());
    match existing {
        Err(err) => {
            states.set(Step::Namespace, StepState::Failed);
            let detail = format!("Namespace {name}: {}", describe(&err));
            return Ok(Converged::stopped(states, Step::Namespace, detail.clone(), Progress::Refused(detail), 0));
        }
        // Berth's for this booking, or for the one whose session it continues.
        Ok(Some(existing))
            if owned_by(&existing, Some(session.booking_id)).is_none()
                && session.window.continues.is_none_or(|(_, follows)| owned_by(&existing, Some(follows)).is_none()) =>
        {
            // Never adopt a namespace by its name alone.
            let reason = format!("namespace {name} exists and is not Berth's for this booking");
            states.set(Step::Namespace, StepState::Failed);
            return Ok(Converged::stopped(states, Step::Namespace, reason.clone(), Progress::Collision(reason), 0));
        }
        Ok(Some(existing)) if existing.metadata.deletion_timestamp.is_some() => {
            states.set(Step::Namespace, StepState::Working);
            let detail = "the previous namespace of this booking is still being deleted".to_string();
            return Ok(Converged::stopped(states, Step::Namespace, detail, Progress::PreviousTerminating, 0));
        }
        Ok(_) => {}
    }
    let objects = manifests::all(session, &w.cluster, &random_token());
    if let Some(snapshot) = snapshot {
        let drifted = !apply::up_to_date(&objects.namespace, live_namespace.as_ref())
            || objects.inside.iter().any(|object| !apply::up_to_date(object, snapshot.get(object)));
        // A booking that ended meanwhile is not repaired; a database that
        // cannot say fails the pass (not the session), as any of its reads.
        let running = drifted && transitions::still_active(&w.db, session.booking_id).await?;
        if drifted && !running {
            return Ok(Converged { steps: Vec::new(), progress: Progress::Stopped, applied: 0 });
        }
        // Repair passes only: the token is first handed out once the
        // session is active, and they see every active session.
        if let Err(err) = rotate::if_holders_left(w, session, snapshot, &random_token()).await {
            let detail = format!("rotating the access token: {}", describe(&err));
            states.set(Step::Access, StepState::Failed);
            return Ok(Converged::stopped(states, Step::Access, detail.clone(), Progress::Refused(detail), 0));
        }
    }
    let mut applied = 0;
    let mut workspace_written = false;
    // Each object with its live state where the pass knows it (the
    // namespace always; the rest from a repair pass's snapshot).
    let known = std::iter::once((&objects.namespace, Some(live_namespace.as_ref())))
        .chain(objects.inside.iter().map(|object| (object, snapshot.map(|s| s.get(object)))));
    for (index, (object, live)) in known.enumerate() {
        let outcome = match live {
            Some(live) => apply::unless_current(w, object, live).await,
            None => apply::ensure(w, object).await,
        };
        match outcome {
            Ok(wrote) => {
                applied += usize::from(wrote);
                workspace_written |= wrote && object["kind"] == "Deployment";
            }
            Err(err) => {
                let kind = object["kind"].as_str().unwrap_or_default();
                let detail =
                    format!("{kind} {}: {}", object["metadata"]["name"].as_str().unwrap_or_default(), describe(&err));
                // Steps all of whose objects came before the refused one are done.
                for step in Step::ALL.into_iter().filter(|step| *step != Step::Ready) {
                    let of_step = |o: &&Value| Step::of(o["kind"].as_str().unwrap_or_default()) == step;
                    let last = objects.iter().enumerate().filter(|(_, o)| of_step(o)).map(|(at, _)| at).last();
                    if last.is_some_and(|last| last < index) {
                        states.set(step, StepState::Done);
                    }
                }
                let failed = Step::of(kind);
                states.set(failed, StepState::Failed);
                return Ok(Converged::stopped(states, failed, detail.clone(), Progress::Refused(detail), applied));
            }
        }
    }
    if let Some(snapshot) = snapshot {
        retire(w, session, snapshot).await;
    }
    // The snapshot tells readiness unless the workspace was (re)written just now.
    let workspace = objects.iter().find(|o| o["kind"] == "Deployment");
    let ready = match workspace.zip(snapshot).and_then(|(d, snapshot)| snapshot.get(d)) {
        Some(live) if !workspace_written => live["status"]["readyReplicas"].as_i64().unwrap_or(0) >= 1,
        _ => workspace_ready(w, session).await,
    };
    states = Steps::all(StepState::Done);
    let waiting = match ready {
        true => None,
        false => {
            states.set(Step::Ready, StepState::Working);
            Some((Step::Ready, why_waiting(w, session, managed).await))
        }
    };
    Ok(Converged { steps: states.shown(waiting), progress: Progress::Applied { ready }, applied })
}

/// Deletes the `admin` binding of sessions started by earlier versions
/// (seen in the snapshot, so a converged pass costs no request for it).
async fn retire(w: &Reconciler, session: &Session, snapshot: &Snapshot) {
    let namespace = session.namespace();
    let retired = serde_json::json!({
        "kind": "RoleBinding",
        "metadata": { "namespace": namespace, "name": manifests::RETIRED_BINDING },
    });
    if snapshot.get(&retired).is_none() {
        return;
    }
    let bindings: Api<RoleBinding> = Api::namespaced(w.client.clone(), &namespace);
    let params = kube::api::DeleteParams::default();
    let deleted = w.retrying(|| bindings.delete(manifests::RETIRED_BINDING, &params)).await;
    if let Err(err) = deleted {
        tracing::warn!(%namespace, error = %describe(&err), "could not delete the retired admin binding; next pass retries");
    }
}

/// Why a workspace is not ready yet, as the user should read it. A
/// cluster without a node of the pool (a test cluster, a pool whose
/// nodes are gone or mislabelled) would otherwise look like a slow start.
async fn why_waiting(w: &Reconciler, session: &Session, managed: &[Namespace]) -> String {
    let waiting = "waiting for the workspace to report ready".to_string();
    // Kubernetes never gives a GPU still held to a new pod, so the
    // workspace waits: say for whom.
    let held = held_by_ended(session, managed);
    if !held.is_empty() {
        return format!(
            "{waiting}: ended sessions of this pool are still terminating ({}), and their pods may still hold the GPUs",
            held.join(", ")
        );
    }
    let selector = &session.placement.node_selector;
    let labels: Vec<String> = selector.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let nodes: Api<Node> = Api::all(w.client.clone());
    let params = ListParams::default().labels(&labels.join(",")).limit(1);
    match w.retrying(|| nodes.list_metadata(&params)).await {
        Ok(found) if found.items.is_empty() && labels.is_empty() => {
            format!("{waiting}: the cluster has no nodes to run it on")
        }
        Ok(found) if found.items.is_empty() => {
            format!("{waiting}: the cluster has no node with the pool's labels ({})", labels.join(", "))
        }
        // Nodes exist (or cannot be listed): the scheduler and kubelet are at work.
        _ => waiting,
    }
}

/// A ready replica of the workspace; an unreadable status counts as not yet.
async fn workspace_ready(w: &Reconciler, session: &Session) -> bool {
    let deployments: Api<Deployment> = Api::namespaced(w.client.clone(), &session.namespace());
    let found = w.retrying(|| deployments.get_opt("workspace")).await.ok().flatten();
    found.and_then(|d| d.status).and_then(|s| s.ready_replicas).unwrap_or(0) >= 1
}
