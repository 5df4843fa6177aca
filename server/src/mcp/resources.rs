//! Read-only resources, for an assistant to keep in view: the person's
//! bookings that are live or ahead, and the pools they may book with their
//! rules. Each is one REST read made as the person, like a tool's.

use rmcp::model::Resource;

pub struct Source {
    pub uri: &'static str,
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The REST read it is (under `/api/v1`).
    pub path: &'static str,
}

pub const SOURCES: [Source; 2] = [
    Source {
        uri: "berth://bookings/upcoming",
        name: "upcoming_bookings",
        title: "My upcoming bookings",
        description: "This person's bookings that are live now or ahead, with their windows and states (JSON, \
                      as the my_bookings tool answers).",
        path: "/bookings?mine=true",
    },
    Source {
        uri: "berth://pools",
        name: "pools",
        title: "GPU pools and their rules",
        description: "The pools this person may book: kinds, units, GPU memory, prices, and the booking rules \
                      (step, longest booking, horizon, notice, approval) (JSON, as list_pools answers).",
        path: "/pools",
    },
];

pub fn find(uri: &str) -> Option<&'static Source> {
    SOURCES.iter().find(|source| source.uri == uri)
}

pub fn listed() -> Vec<Resource> {
    SOURCES
        .iter()
        .map(|source| {
            Resource::new(source.uri, source.name)
                .with_title(source.title)
                .with_description(source.description)
                .with_mime_type("application/json")
        })
        .collect()
}
