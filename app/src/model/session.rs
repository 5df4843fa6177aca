//! What the provisioning worker reports of a booking's session, as the
//! booking page shows it: one line per step, and the workspace's URL once it
//! is ready. Never the access token.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepState {
    /// Not reached yet in this attempt.
    Pending,
    /// Applied, waiting for the cluster (e.g. the workspace starting).
    Working,
    Done,
    Failed,
}

impl StepState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Working => "working",
            Self::Done => "done",
            Self::Failed => "failed",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionStep {
    /// What the step sets up, e.g. "Network isolation".
    pub step: String,
    pub state: StepState,
    /// Why it failed or what it waits for; empty when done.
    #[serde(default)]
    pub detail: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionStatus {
    pub namespace: String,
    /// Set once the workspace reports ready.
    pub workspace_url: Option<String>,
    pub steps: Vec<SessionStep>,
}
