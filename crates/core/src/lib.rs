//! edgerag-core: the pure logic of edgerag.
//!
//! Data flows one way: source → [`chunk`] → [`Chunk`]s → stores (ports in [`embed`] and
//! [`vector`]) → search pipeline → response. Nothing in this crate performs I/O or knows about
//! `worker::Env`; the worker, the CLI and the browser preview supply the platform.
//!
//! ```
//! use edgerag_core::{chunk_text, ChunkConfig};
//! let chunks = chunk_text("notes.md", "# Title\n\nHello.\n", &ChunkConfig::default());
//! assert_eq!(chunks[0].start_line, 1);
//! ```

pub mod bytes;
pub mod chunk;
pub mod embed;
pub mod graph;
pub mod ids;
pub mod ignore;
pub mod json;
pub mod keywords;
pub mod lang;
pub mod options;
pub mod pages;
pub mod path_glob;
pub mod tags;
pub mod text;
pub mod vector;

pub use chunk::{chunk_bytes, chunk_text, Chunk, ChunkConfig, ChunkError, ChunkMetadata, ChunkType};
pub use lang::Language;
