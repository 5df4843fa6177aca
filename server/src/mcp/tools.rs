//! The tools an assistant may call, each one REST operation of `/api/v1`:
//! named and described for a model to choose well, with honest hints, and
//! the answer's name when the operation answers with a list.

use axum::http::Method;

/// What calling a tool does to the world; its MCP annotations follow.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Effect {
    /// Reads only: calling it again is harmless.
    Reads,
    /// Adds or moves, takes nothing away.
    Adds { idempotent: bool },
    /// Takes something away (a client asks its person first).
    Destroys,
}

pub struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub method: Method,
    /// The operation's path in the OpenAPI document (under `/api/v1`).
    pub path: &'static str,
    pub effect: Effect,
    /// Query arguments the tool sets itself, hidden from the assistant.
    pub fixed: &'static [(&'static str, &'static str)],
    /// A list answer is given under this name (a tool's structured result is an object).
    pub list: Option<&'static str>,
    /// The operation a call with a `repeat` argument stands for instead:
    /// `book` books one window or a series.
    pub series: Option<&'static str>,
}

pub const TOOLS: [Tool; 9] = [
    Tool {
        name: "list_pools",
        title: "List GPU pools",
        description: "The GPU pools this person may book, each with its kinds (whole GPUs, MIG slices or \
                      time-sliced shares), units, GPU memory per unit, prices and booking rules: step \
                      (granularity_minutes), longest booking, horizon, minimum notice, and whether an admin \
                      must approve. Call it first to learn pool ids and kind names.",
        method: Method::GET,
        path: "/pools",
        effect: Effect::Reads,
        fixed: &[],
        series: None,
        list: Some("pools"),
    },
    Tool {
        name: "fit",
        title: "Size a model",
        description: "The sizing helper: the GPU memory a model needs (weights, KV cache or training state, \
                      20 % overhead) with its arithmetic, and each kind of the pools this person may book that \
                      holds it, smallest first. Give a catalogue `model` or a custom one's `params_b`.",
        method: Method::GET,
        path: "/fit",
        effect: Effect::Reads,
        fixed: &[],
        list: None,
        series: None,
    },
    Tool {
        name: "find_free",
        title: "Find free GPU time",
        description: "Time first: for a window (`from`, `to`, RFC 3339, at most 14 days apart), every kind of \
                      the pools this person may book that is free for all of it, or its longest free part of \
                      at least `at_least` minutes, with `units` at once. Whole windows first. Bounded: one \
                      window of at most 14 days per call, and at most 60 calls a minute with the sizing helper.",
        method: Method::GET,
        path: "/free",
        effect: Effect::Reads,
        fixed: &[],
        series: None,
        list: Some("free"),
    },
    Tool {
        name: "book",
        title: "Book GPU time",
        description: "Books units of one kind of a pool for a window (RFC 3339, on the pool's step). The answer \
                      says whether it is approved, pending an admin's approval, or waitlisted (with \
                      `waitlist: true` when there is no room), and why; a refused window comes with the \
                      earliest one of the same length that fits. With `repeat` (daily or weekly, on `weekdays`) \
                      and `until` (a date), it books a series: `start` and `end` are the first window, \
                      every occurrence that fits is booked, each under the normal rules, and those that do \
                      not are named (or, with `occurrences`, exactly those starts, all or none). Send an \
                      `idempotency_key` (any new string) so that a retry after a timeout books nothing more.",
        method: Method::POST,
        path: "/bookings",
        effect: Effect::Adds { idempotent: false },
        fixed: &[],
        list: None,
        series: Some("/series"),
    },
    Tool {
        name: "my_bookings",
        title: "My bookings",
        description: "This person's bookings that are live now or ahead (or, with `from` and `to`, those that \
                      overlap that window), with their states.",
        method: Method::GET,
        path: "/bookings",
        effect: Effect::Reads,
        fixed: &[("mine", "true")],
        series: None,
        list: Some("bookings"),
    },
    Tool {
        name: "booking",
        title: "One booking",
        description: "One booking by its id: its window, state, pool and kind, and the portal page where its \
                      workspace is opened.",
        method: Method::GET,
        path: "/bookings/{id}",
        effect: Effect::Reads,
        fixed: &[],
        list: None,
        series: None,
    },
    Tool {
        name: "extend",
        title: "Extend a booking",
        description: "Moves a booking's end later (RFC 3339, on the pool's step), if the units stay free and \
                      the pool's longest booking allows; in a pool that needs approval the extra time waits \
                      for an admin.",
        method: Method::POST,
        path: "/bookings/{id}/extend",
        effect: Effect::Adds { idempotent: true },
        fixed: &[],
        list: None,
        series: None,
    },
    Tool {
        name: "end_now",
        title: "End a booking now",
        description: "Ends a running booking now: its workspace is torn down (the home volume is kept as the \
                      pool keeps it). Ask the person first.",
        method: Method::POST,
        path: "/bookings/{id}/end",
        effect: Effect::Destroys,
        fixed: &[],
        list: None,
        series: None,
    },
    Tool {
        name: "cancel",
        title: "Cancel a booking",
        description: "Cancels a booking that has not started (pending or approved), giving its units back. \
                      Ask the person first.",
        method: Method::POST,
        path: "/bookings/{id}/cancel",
        effect: Effect::Destroys,
        fixed: &[],
        list: None,
        series: None,
    },
];

impl Tool {
    /// The operation's path in the OpenAPI document for a call with
    /// these arguments.
    pub fn path_for(&self, arguments: &serde_json::Map<String, serde_json::Value>) -> &'static str {
        match self.series {
            Some(series) if arguments.contains_key("repeat") => series,
            _ => self.path,
        }
    }

    /// Its operation's method as the OpenAPI document names it, and the
    /// arguments the tool sets itself.
    pub fn operation(&self) -> (String, Vec<&'static str>) {
        (self.method.as_str().to_ascii_lowercase(), self.fixed.iter().map(|(name, _)| *name).collect())
    }
}

pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|tool| tool.name == name)
}
