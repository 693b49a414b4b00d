//! Arguments of the code-navigation tools — `repo.find_symbol`, `repo.symbol_references`,
//! `repo.read_file_range` — defined in the API contract ([`edgerag_api::navigation`]) and
//! re-exported here beside the tools.
pub use edgerag_api::navigation::*;
