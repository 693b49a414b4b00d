//! The repository tools' arguments and answers (`repo.list_files`, `repo.outline`, `repo.grep`,
//! `repo.map`, `repo.impact`) live in the search crate beside the tools' logic
//! ([`edgerag_search::repo_tools`]); the schemas are generated from them here like every other type.
pub use edgerag_search::repo_tools::{
    ChangedRange, GrepMatch, GrepRequest, GrepResponse, ImpactEdge, ImpactRequest, ImpactResponse,
    ImpactSymbol, ImpactedSymbol, ListFilesQuery, ListFilesResponse, ListedFile, MapFile, MapRequest,
    MapResponse, MapSymbol, OutlineFile, OutlineKind, OutlineQuery, OutlineResponse, OutlineSymbol,
};
