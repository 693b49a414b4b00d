//! Turning raw inputs (JSON files, tar.gz archives, GitHub tarballs) into files to index or skip.
//!
//! Everything here is pure and synchronous so it is unit-tested natively; the worker glue that
//! stages the results in D1 lives in `pipeline::stage`.
pub mod archive;
pub mod filter;
pub mod paths;

/// A file that passed every check: relative normalized path, UTF-8 text, content hash.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptedFile {
    pub path: String,
    pub text: String,
    pub content_hash: String,
    pub size: u64,
    pub language: String,
}

/// An input that will not be indexed, with a stable reason code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    pub path: String,
    pub reason: &'static str,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Candidate {
    Accepted(AcceptedFile),
    Skipped(Skip),
}

impl Candidate {
    pub fn path(&self) -> &str {
        match self {
            Candidate::Accepted(f) => &f.path,
            Candidate::Skipped(s) => &s.path,
        }
    }
}
