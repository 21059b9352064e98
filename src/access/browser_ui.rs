//! Browser UIs canon serves (GraphiQL at `/graphql`, Swagger UI at `/docs`): their scripts and
//! styles come from `vendor/<dir>/`, which `make provision` fills from the npm registry, so the
//! pages work without internet; unprovisioned, the page loads the same pinned version from a CDN.

use super::error::ApiError;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use std::path::Path;

/// One UI's vendored files.
pub struct BrowserUi {
    /// Folder under the vendor directory.
    pub dir: &'static str,
    /// Route the files are served under, ending in `/` (`/graphql/assets/`).
    pub route: &'static str,
    /// Each file: name, content type, and the CDN URL of the same version.
    pub files: &'static [(&'static str, &'static str, &'static str)],
}

impl BrowserUi {
    /// The page with every `{{ASSETS}}<file>` pointing at the served file (or at the CDN when a
    /// file is not provisioned).
    pub fn page(&self, vendor_dir: &Path, template: &str) -> String {
        let local = self.files.iter().all(|(name, ..)| vendor_dir.join(self.dir).join(name).is_file());
        let mut page = template.to_string();
        for (name, _, cdn) in self.files {
            let url = if local { format!("{}{name}", self.route) } else { cdn.to_string() };
            page = page.replace(&format!("{{{{ASSETS}}}}{name}"), &url);
        }
        page
    }

    /// One of the UI's files by name (any other name is a 404: no path reaches elsewhere).
    pub async fn asset(&self, vendor_dir: &Path, file: &str) -> Response {
        let Some((name, content_type, _)) = self.files.iter().find(|(name, ..)| *name == file) else {
            return ApiError::new(StatusCode::NOT_FOUND, format!("no such asset under {}", self.route))
                .into_response();
        };
        match tokio::fs::read(vendor_dir.join(self.dir).join(name)).await {
            Ok(bytes) => ([(header::CONTENT_TYPE, *content_type)], bytes).into_response(),
            Err(_) => ApiError::new(
                StatusCode::NOT_FOUND,
                format!("{} is not provisioned; run `make provision`", self.dir),
            )
            .into_response(),
        }
    }
}

pub const CSS: &str = "text/css; charset=utf-8";
pub const JS: &str = "text/javascript; charset=utf-8";
