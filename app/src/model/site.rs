//! Where the page finds the site's own files.

/// The hydration script, its WASM and the stylesheet, as the page links
/// them. The server names them by their content (`/pkg/berth.<hash>.wasm`),
/// so a browser keeps them until they change; the default is the plain
/// names, which every site build also serves, and every page's bundle for
/// all pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssetUrls {
    /// Every page's code (`berth.js`, `berth.wasm`).
    pub all: Bundle,
    /// Only the people's pages' code (`berth-people.*`; see
    /// `pages::people_page`): what those pages load. A site built without it
    /// names `all` here.
    pub people: Bundle,
    pub css: String,
}

/// One build of the hydration code: its JavaScript glue and its WASM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle {
    pub js: String,
    pub wasm: String,
}

impl Default for AssetUrls {
    fn default() -> Self {
        let all = Bundle { js: "/pkg/berth.js".into(), wasm: "/pkg/berth.wasm".into() };
        Self { people: all.clone(), all, css: "/pkg/berth.css".into() }
    }
}
