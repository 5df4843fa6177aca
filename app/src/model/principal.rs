use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Admin,
    Manager,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Admin => "admin",
            Self::Manager => "manager",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "user" => Some(Self::User),
            "admin" => Some(Self::Admin),
            "manager" => Some(Self::Manager),
            _ => None,
        }
    }
}

// A role Berth does not know is a decode error, never read as `user`.
#[cfg(feature = "ssr")]
crate::model::checked_text_decode!(Role, "role");

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TenantRef {
    pub id: Uuid,
    pub slug: String,
}

/// Who is asking. Every service call takes one; role and tenant checks read it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    pub user_id: Uuid,
    pub email: String,
    pub name: String,
    pub role: Role,
    pub tenants: Vec<TenantRef>,
}

impl Principal {
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }

    pub fn in_tenant(&self, tenant_id: Uuid) -> bool {
        self.tenants.iter().any(|t| t.id == tenant_id)
    }
}
