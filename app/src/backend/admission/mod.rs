//! Booking admission: a request becomes a booking only here, under the
//! capacity invariant and the tenant's quota. `create` shapes a request
//! (`request`) and hands it to the batching queue (`queue`), which decides a
//! batch in one transaction holding the kinds' locks (`locks`): the kinds'
//! terms (`terms`), the decision (`admit`, pure rules over what it read,
//! with `quota`'s usage; `accepted` writes what it admitted), and, for those that asked to wait, a place on the
//! waitlist in the same transaction. A refusal for capacity names the next
//! free window (`suggest`); a repeated submit gets the first answer
//! (`idempotency`). A recurring series is decided occurrence by occurrence
//! through the same decision, in one transaction (`series`). The waitlist (`backend::waitlist`) admits its entries again
//! through the same decision; admission itself knows the waitlist only
//! through the queue, which puts requests on it.

pub mod accepted;
pub mod admit;
pub mod create;
pub mod idempotency;
pub mod locks;
pub mod queue;
pub mod quota;
pub mod request;
pub mod series;
pub mod suggest;
mod terms;

pub use admit::Admission;
pub use create::create;
pub use queue::AdmissionQueue;
