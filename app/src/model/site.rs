//! Where the page finds the site's own files.

/// The hydration script, its WASM and the stylesheet, as the page links
/// them. The server names them by their content (`/pkg/berth.<hash>.wasm`),
/// so a browser keeps them until they change; the default is the plain
/// names, which every site build also serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssetUrls {
    pub js: String,
    pub wasm: String,
    pub css: String,
}

impl Default for AssetUrls {
    fn default() -> Self {
        Self { js: "/pkg/berth.js".into(), wasm: "/pkg/berth.wasm".into(), css: "/pkg/berth.css".into() }
    }
}
