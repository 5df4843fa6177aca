//! One pass of the worker: stop what must stop, collect namespaces whose
//! booking no longer runs, start or repair what must run, keep the image
//! cache and the pools' backfill queues. Desired state comes from
//! PostgreSQL; the cluster is only read and written through `kube::Client`.
//! Idempotent: a pass over a converged
//! cluster reads but writes nothing (neither to the cluster nor to the
//! database), and a pass interrupted after any step is finished by the next.

pub use super::policy::Policy;
pub use super::report::PassReport;

use super::manifests::{self, owned_by, Cluster, Session, Volume};
use super::progress::Progress;
use super::retry::retrying;
use super::snapshot::Snapshot;
use app::backend::sessions::continuation;
use app::backend::sessions::facts::{self, BookingFacts};
use app::backend::sessions::session_status::{self, Stored};
use app::backend::sessions::{due, transitions};
use app::model::{BookingState, Kept, SessionStatus};
use app::rules::state_machine::Action;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, DeleteParams, ListParams};
use sqlx::PgPool;
use std::collections::{HashMap, HashSet};
use uuid::Uuid;

/// Sessions a start pass converges at once.
const STARTS_AT_ONCE: usize = 8;

pub struct Reconciler {
    pub db: PgPool,
    pub client: kube::Client,
    /// The cluster this worker drives: the pools on it are its to converge,
    /// and its lease is this cluster's. `None`: every pool, on the one
    /// cluster `client` reaches (a worker as it was before clusters were data).
    pub drives: Option<ClusterRef>,
    pub cluster: Cluster,
    pub policy: Policy,
    /// Talks to the in-memory simulated cluster (shown on the worker page).
    pub simulated: bool,
    /// Measures GPU use from Prometheus while this worker leads.
    pub usage: Option<crate::usage::UsageSource>,
    /// Sends the outbox's notifications while this worker leads.
    pub notifier: Option<crate::notify::Notifier>,
    /// Publishes no workspace unless the cluster's policies guard its domain
    /// (`guarded_domain`): on for every real cluster `berth worker` drives.
    pub verify_domain: bool,
    /// Runs what is the site's rather than a cluster's: retention, the
    /// waitlist's expiry, reading the priority and runtime classes. One
    /// worker does (its own cluster's); never a member signed in as its
    /// own database role, which may not write those rows.
    pub site_duties: bool,
}

/// A cluster by id (for the database) and name (for logs and metrics).
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterRef {
    pub id: Uuid,
    pub name: String,
}

impl Reconciler {
    /// The cluster whose pools this worker converges (`None`: every pool).
    pub fn cluster_id(&self) -> Option<Uuid> {
        self.drives.as_ref().map(|c| c.id)
    }

    /// The cluster's name as metrics and logs label it.
    pub fn cluster_name(&self) -> &str {
        self.drives.as_ref().map_or(app::model::DEFAULT_CLUSTER, |c| c.name.as_str())
    }
}

/// The bookings whose namespaces stay: open windows, and closed ones the
/// pass is about to complete (it deletes their namespaces itself).
fn live_bookings(due: &due::Due) -> HashSet<Uuid> {
    let running = due.running.iter().map(|(id, _)| *id);
    running.chain(due.ended.iter().copied()).collect()
}

impl Reconciler {
    /// The bookings whose namespaces no pass or sweep may collect: the live
    /// ones, and those whose session a booking that has not ended took over
    /// (their namespace names them until that booking's session converges).
    pub(super) async fn keep(&self, due: &due::Due) -> crate::provisioner::error::WorkerResult<HashSet<Uuid>> {
        let mut keep = live_bookings(due);
        keep.extend(continuation::continued(&self.db).await?);
        Ok(keep)
    }
}

impl Reconciler {
    /// Runs one API request with this worker's retries (see `retry`).
    pub(super) async fn retrying<T, F, Fut>(&self, call: F) -> Result<T, kube::Error>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, kube::Error>>,
    {
        retrying(self.policy.retries, self.policy.retry_delay, call).await
    }

    /// A worker with the default policy.
    pub fn new(db: PgPool, client: kube::Client, cluster: Cluster) -> Self {
        Reconciler {
            db,
            client,
            drives: None,
            cluster,
            policy: Policy::default(),
            simulated: false,
            usage: None,
            notifier: None,
            verify_domain: false,
            site_duties: true,
        }
    }

    pub(super) async fn managed_namespaces(&self) -> Result<Vec<Namespace>, kube::Error> {
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let params = ListParams::default().labels(&manifests::managed_selector());
        Ok(self.retrying(|| namespaces.list(&params)).await?.items)
    }

    /// A whole pass: the start pass, then the repair pass.
    pub async fn pass(&self) -> crate::provisioner::error::WorkerResult<PassReport> {
        let mut report = self.start_pass().await?;
        report.absorb(self.repair_pass().await?);
        Ok(report)
    }

    /// What a booking change needs at once: stop closed windows, collect
    /// namespaces whose booking no longer runs, start sessions not yet
    /// active (each object read by name). Its cost does not grow with the
    /// number of running sessions, so a new window never waits for them.
    pub async fn start_pass(&self) -> crate::provisioner::error::WorkerResult<PassReport> {
        let mut report = PassReport {
            expired: transitions::reject_unapproved(&self.db, self.cluster_id()).await?,
            ..PassReport::default()
        };
        let due = due::due(&self.db, self.cluster_id()).await?;
        let managed = self.managed_namespaces().await?;
        // Windows that have closed whose owner's next booking takes the
        // session over (see `continuation`), and sessions already taken over.
        let successors = continuation::successors(&self.db, &due.ended).await?;
        let keep = self.keep(&due).await?;
        // Kueue's queues of sessions that no longer run go before their
        // namespaces (a session another booking continues runs on).
        let mut running: HashSet<Uuid> = due.running.iter().map(|(id, _)| *id).collect();
        running.extend(keep.iter().copied().filter(|id| !due.ended.contains(id)));
        running.extend(successors.keys());
        report.collected.extend(self.collect_queues(&running).await?);

        // Stop: windows that have closed, unless the session continues.
        for id in &due.ended {
            let reason = match successors.get(id) {
                Some((next, _, _)) => {
                    continuation::continue_into(&self.db, *id, *next).await?;
                    format!("the window ended; the session continues into booking {next}")
                }
                None => {
                    for ns in managed.iter().filter(|ns| owned_by(ns, Some(*id)).is_some()) {
                        self.delete_namespace(ns).await?;
                    }
                    "the window ended".to_string()
                }
            };
            transitions::system_transition(&self.db, *id, Action::Complete, &reason).await?;
            report.completed.push(*id);
        }
        // Collect: managed namespaces whose booking no longer runs (canceled,
        // ended early, failed, or already completed) and whose session no
        // booking has taken over.
        let keep = self.keep(&due).await?;
        report.collected.extend(self.collect(&managed, &keep).await?);

        // Start, a few sessions at a time: each start mostly waits on the
        // API server, so fifty windows opening together wait for the slowest
        // of a few, not for the sum of all.
        let ids = due.in_state(BookingState::Approved);
        if !ids.is_empty() {
            self.domain_is_guarded().await?;
        }
        let starting = facts::facts_in_order(&self.db, &ids).await?;
        let mut stored = session_status::load(&self.db, &ids).await?;
        let mut homes = app::backend::sessions::homes::decided(&self.db, &ids).await?;
        let managed = &managed;
        let starts = starting.into_iter().map(|facts| {
            let before = stored.remove(&facts.booking_id).unwrap_or_default();
            let home = homes.remove(&facts.booking_id).unwrap_or_default();
            async move {
                let mut one = PassReport::default();
                let outcome =
                    self.run_session(facts, BookingState::Approved, (before, home), (managed, None), &mut one).await;
                (one, outcome)
            }
        });
        let started: Vec<_> = futures::stream::iter(starts).buffered(STARTS_AT_ONCE).collect().await;
        for (one, outcome) in started {
            report.absorb(one);
            outcome?;
        }
        if self.site_duties {
            (report.waitlist_expired, report.waitlist_admitted) = app::backend::waitlist::sweep(&self.db).await?;
        }
        // After the starts: a session that runs now no longer needs its room.
        let (written, removed) = self.hold_room_ahead().await?;
        report.applied += written;
        report.collected.extend(removed);
        Ok(report)
    }

    /// Drift repair: every active session against one snapshot of Berth's
    /// objects (13 requests however many sessions run), and the image cache.
    pub async fn repair_pass(&self) -> crate::provisioner::error::WorkerResult<PassReport> {
        let mut report = PassReport::default();
        let due = due::due(&self.db, self.cluster_id()).await?;
        let active = facts::facts_in_order(&self.db, &due.in_state(BookingState::Active)).await?;
        let (retries, delay) = (self.policy.retries, self.policy.retry_delay);
        let mut snapshot = Snapshot::default();
        if !active.is_empty() {
            // Repair rewrites each session's host too (under a domain an
            // admin may just have changed).
            self.domain_is_guarded().await?;
            let managed = self.managed_namespaces().await?;
            let namespaces = active.iter().map(|facts| manifests::namespace_name(&facts.tenant, facts.session_id()));
            snapshot = Snapshot::read(&self.client, &namespaces.collect(), retries, delay).await?;
            if self.cluster.kueue {
                snapshot.read_kueue(&self.client, retries, delay).await?;
            }
            let ids: Vec<Uuid> = active.iter().map(|facts| facts.booking_id).collect();
            let mut stored = session_status::load(&self.db, &ids).await?;
            let mut homes = app::backend::sessions::homes::decided(&self.db, &ids).await?;
            let mut sessions = Vec::new();
            for facts in active {
                let decided = homes.remove(&facts.booking_id).unwrap_or_default();
                let before = (stored.remove(&facts.booking_id).unwrap_or_default(), decided);
                let session = self
                    .run_session(facts, BookingState::Active, before, (&managed, Some(&snapshot)), &mut report)
                    .await?;
                sessions.extend(session);
            }
            // A first session's home, once its claim is bound, stays for the next.
            if let Err(err) = self.keep_new_homes(&sessions, &snapshot).await {
                report.errors.push((Uuid::nil(), format!("keeping homes: {err}")));
            }
            // A kept one the tenant now sizes larger grows, where its class allows.
            if let Err(err) = self.grow_kept(&sessions, &snapshot).await {
                report.errors.push((Uuid::nil(), format!("growing homes: {err}")));
            }
        } else if self.cluster.kueue {
            // The backfill queues stay while their pools lend, sessions or not.
            snapshot.read_kueue(&self.client, retries, delay).await?;
        }
        if self.cluster.kueue {
            self.keep_backfill(&snapshot, &mut report).await?;
        }
        if let Some(cache) = &self.cluster.image_cache {
            let mut images = due::pool_images(&self.db, self.cluster_id()).await?;
            images.extend(cache.images.iter().cloned());
            images.sort();
            images.dedup();
            let daemon_set = manifests::image_cache_daemon_set(&self.cluster.berth_namespace, cache, &images);
            match self.ensure(&serde_json::to_value(daemon_set)?).await {
                Ok(wrote) => report.applied += usize::from(wrote),
                Err(err) => report.errors.push((Uuid::nil(), format!("image cache: {}", super::retry::describe(&err)))),
            }
        }
        Ok(report)
    }

    /// With the image cache switched off (settings change only with a
    /// restart, so the worker calls this once when it starts): deletes the
    /// DaemonSet an earlier configuration left, if it is Berth's.
    pub async fn remove_disabled_image_cache(&self) -> Result<bool, kube::Error> {
        if self.cluster.image_cache.is_some() {
            return Ok(false);
        }
        let daemon_sets: Api<k8s_openapi::api::apps::v1::DaemonSet> =
            Api::namespaced(self.client.clone(), &self.cluster.berth_namespace);
        let Some(found) = self.retrying(|| daemon_sets.get_opt(manifests::IMAGE_CACHE)).await? else {
            return Ok(false);
        };
        let ours = manifests::is_managed(&found.metadata);
        if ours {
            let params = DeleteParams::default();
            self.retrying(|| daemon_sets.delete(manifests::IMAGE_CACHE, &params)).await?;
        }
        Ok(ours)
    }

    /// Deletes the managed namespaces whose booking is not in `keep`; ones
    /// already terminating are left to finish. Returns the deleted names.
    pub(super) async fn collect(
        &self,
        managed: &[Namespace],
        keep: &HashSet<Uuid>,
    ) -> crate::provisioner::error::WorkerResult<Vec<String>> {
        let mut collected = Vec::new();
        for ns in managed {
            let Some(id) = owned_by(ns, None) else { continue };
            if !keep.contains(&id) && ns.metadata.deletion_timestamp.is_none() {
                self.delete_namespace(ns).await?;
                collected.push(ns.metadata.name.clone().unwrap_or_default());
            }
        }
        Ok(collected)
    }

    async fn delete_namespace(&self, ns: &Namespace) -> crate::provisioner::error::WorkerResult<()> {
        if ns.metadata.deletion_timestamp.is_some() {
            return Ok(()); // already on its way out; asking again would be a write per pass
        }
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let name = ns.metadata.name.clone().unwrap_or_default();
        // The window is over: its pods get SIGTERM and their own grace
        // period (at most 30 s: policy berth-session-devices; the workspace
        // asks for all of it) to checkpoint into the home, which stays
        // mounted until they exit (the claim's protection finalizer) and
        // outlives the namespace. `/etc/berth/ending-soon` warned them.
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &name);
        let (graceful, every) = (DeleteParams::default(), ListParams::default());
        super::retry::gone(self.retrying(|| pods.delete_collection(&graceful, &every)).await)?;
        let params = DeleteParams::default();
        Ok(super::retry::gone(self.retrying(|| namespaces.delete(&name, &params)).await)?)
    }

    /// Converges one session and records what happened: the steps for the
    /// booking page, `active` once ready, `failed` after repeated refusals.
    /// `home` holds the volumes decided for its home and model cache, by
    /// purpose, if decided. Returns the session as converged.
    async fn run_session(
        &self,
        facts: BookingFacts,
        state: BookingState,
        (before, home): (Stored, HashMap<Kept, Volume>),
        (managed, snapshot): (&[Namespace], Option<&Snapshot>),
        report: &mut PassReport,
    ) -> crate::provisioner::error::WorkerResult<Option<Session>> {
        let id = facts.booking_id;
        let mut session = Session::of(facts);
        let converged = match self.volumes_for(&session, state == BookingState::Approved, home, managed).await? {
            Ok((home, cache)) => {
                (session.window.home, session.window.cache) = (home, cache);
                self.converge_session(&session, managed, snapshot).await?
            }
            Err(super::error::HomeBusy(detail)) => {
                let mut states = super::progress::Steps::all(app::model::StepState::Pending);
                states.set(super::progress::Step::Storage, app::model::StepState::Working);
                let (at, progress) = (super::progress::Step::Storage, Progress::PreviousTerminating);
                super::progress::Converged::stopped(states, at, detail, progress, 0)
            }
        };
        report.applied += converged.applied;
        let mut after = Stored {
            status: SessionStatus { namespace: session.namespace(), workspace_url: None, steps: converged.steps },
            failures: 0,
        };
        match converged.progress {
            // The booking stopped while this pass ran: the start pass collects it.
            Progress::Stopped => return Ok(None),
            Progress::Applied { ready } => {
                if ready {
                    after.status.workspace_url = Some(self.cluster.workspace_url(&session));
                }
                if ready && state == BookingState::Approved {
                    transitions::system_transition(&self.db, id, Action::Activate, "the workspace is ready").await?;
                    report.started.push(id);
                }
            }
            Progress::PreviousTerminating => {}
            Progress::Collision(reason) => {
                transitions::system_transition(&self.db, id, Action::Fail, &reason).await?;
                report.failed.push(id);
            }
            Progress::Refused(detail) => {
                after.failures = before.failures + 1;
                report.errors.push((id, detail.clone()));
                if after.failures >= self.policy.failures_before_failed {
                    let reason = format!(
                        "Berth could not set up the workspace ({} attempts): {detail}. Ask your Berth admin.",
                        after.failures
                    );
                    transitions::system_transition(&self.db, id, Action::Fail, &reason).await?;
                    report.failed.push(id);
                }
            }
        }
        if after != before {
            session_status::save(&self.db, id, &after).await?;
        }
        Ok(Some(session))
    }
}
