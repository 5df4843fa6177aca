//! How far converging a session got: the worker's outcome (`Progress`) and
//! the steps the booking page shows, one line each (`Step`, `Steps`).

use app::model::{SessionStep, StepState};

/// The steps a user sees, in the order the worker takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Namespace,
    Quota,
    Network,
    Access,
    Storage,
    Workspace,
    Ready,
}

impl Step {
    pub const ALL: [Step; 7] =
        [Step::Namespace, Step::Quota, Step::Network, Step::Access, Step::Storage, Step::Workspace, Step::Ready];

    /// The step's name on the booking page.
    pub fn title(self) -> &'static str {
        match self {
            Step::Namespace => "Namespace",
            Step::Quota => "Quota and defaults",
            Step::Network => "Network isolation",
            Step::Access => "Access",
            Step::Storage => "Storage",
            Step::Workspace => "Workspace",
            Step::Ready => "Ready",
        }
    }

    /// The step an object of `kind` belongs to.
    pub fn of(kind: &str) -> Step {
        match kind {
            "Namespace" => Step::Namespace,
            "ResourceQuota" | "LimitRange" | "ResourceFlavor" | "ClusterQueue" | "LocalQueue" => Step::Quota,
            "NetworkPolicy" | "ConfigMap" => Step::Network,
            "Role" | "RoleBinding" | "ClusterRole" | "ClusterRoleBinding" | "Secret" => Step::Access,
            "PersistentVolumeClaim" => Step::Storage,
            _ => Step::Workspace,
        }
    }
}

/// Each step's state, by step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Steps([StepState; 7]);

impl Steps {
    /// Every step in `state`.
    pub fn all(state: StepState) -> Self {
        Steps([state; 7])
    }

    pub fn set(&mut self, step: Step, state: StepState) {
        self.0[step as usize] = state;
    }

    /// The lines of the booking page; `detail` says why at one step.
    pub fn shown(self, detail: Option<(Step, String)>) -> Vec<SessionStep> {
        Step::ALL
            .iter()
            .zip(self.0)
            .map(|(step, state)| SessionStep {
                step: step.title().to_string(),
                state,
                detail: detail.as_ref().filter(|(at, _)| at == step).map(|(_, d)| d.clone()).unwrap_or_default(),
            })
            .collect()
    }
}

/// How far converging a session got.
#[derive(Debug, PartialEq)]
pub enum Progress {
    /// Every object is in place; `ready` once the workspace reports it.
    Applied { ready: bool },
    /// The namespace of an earlier session of this booking is still being
    /// deleted: nothing can be created in it until it is gone.
    PreviousTerminating,
    /// The booking stopped running since the pass read it (a repair found
    /// drift but must not bring back what the start pass just collected).
    Stopped,
    /// A name collision with a namespace Berth does not own.
    Collision(String),
    /// An object could not be applied, retries included.
    Refused(String),
}

pub struct Converged {
    pub progress: Progress,
    pub steps: Vec<SessionStep>,
    pub applied: usize,
}

impl Converged {
    /// Converging stopped at step `at`, which says why in `detail`.
    pub fn stopped(steps: Steps, at: Step, detail: String, progress: Progress, applied: usize) -> Self {
        Converged { steps: steps.shown(Some((at, detail))), progress, applied }
    }
}
