//! Browsing the catalog: the playbook list and one playbook's detail.

use super::bundle::Catalog;
use crate::api::catalog::{CatalogDetail, CatalogEntry};
use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::Result;

impl ControlPlane {
    /// `GET /community-catalog/playbooks`.
    pub async fn list_catalog_playbooks(&self, _caller: &Caller) -> Result<Vec<CatalogEntry>> {
        let catalog = self.catalog()?;
        Ok(catalog
            .playbooks
            .values()
            .map(|(f, _)| Catalog::entry(f))
            .collect())
    }

    /// `GET /community-catalog/playbooks/:id`.
    pub async fn get_catalog_playbook(&self, _caller: &Caller, id: &str) -> Result<CatalogDetail> {
        let catalog = self.catalog()?;
        let (file, readme) = catalog.playbook(id)?;
        let stages = file.definition["stages"]
            .as_array()
            .map(|s| {
                s.iter()
                    .filter_map(|s| s["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        Ok(CatalogDetail {
            entry: Catalog::entry(file),
            readme_markdown: readme.clone(),
            stages,
            specialist_ids: file.specialist_ids.clone(),
            skill_ids: file.skill_ids.clone(),
            source_repository: catalog.meta.source_repository.clone(),
        })
    }
}
