//! TEMPORARY until the shared clock/background runner lands on main.
use crate::api::Timestamp;
use crate::control_plane::ControlPlane;
use chrono::{DateTime, Utc};
pub type Due = Option<DateTime<Utc>>;
impl ControlPlane {
    pub(crate) fn now(&self) -> Timestamp {
        Timestamp::now()
    }
    pub(crate) fn wake_background(&self, _at: DateTime<Utc>) {}
}
