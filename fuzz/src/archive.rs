//! Target `archive`: the upload reader (`.tar.gz` / `.tar`, `src/ingest/archive.rs`) on raw bytes,
//! read as the pipeline reads it: [`survey`] first (limits, ignore files), then every entry.
//!
//! Invariants: deterministic; the survey and the full read agree on whether the archive is usable
//! (the pipeline stages nothing unless the survey passed, so a read that fails after a passing
//! survey would leave half an archive staged) and on the error code; errors carry one of the two
//! archive codes; within the entry limit; every accepted file has a normalized relative path,
//! at most `max_file_bytes` of text and the content hash of that text; every skip has a reason code.
use crate::ingest::archive::{read_all, survey, ArchiveOptions};
use crate::ingest::{filter, paths, Candidate};

pub fn check(data: &[u8]) {
    for strip_first_segment in [false, true] {
        let mut opts = ArchiveOptions {
            strip_first_segment,
            max_file_bytes: 16 * 1024,
            max_unpacked_bytes: 1024 * 1024,
            max_entries: 64,
            rules: filter::rules_from([]),
        };
        let surveyed = survey(data, &opts);
        assert_eq!(surveyed, survey(data, &opts), "the survey is not deterministic");
        if let Ok(s) = &surveyed {
            assert!(s.entries <= opts.max_entries);
            opts.rules = s.rules();
        }
        let read = read_all(data, opts.clone());
        assert_eq!(read, read_all(data, opts.clone()), "reading is not deterministic");
        match (&surveyed, &read) {
            (Ok(_), Ok(candidates)) => check_candidates(candidates, &opts),
            (Err(a), Err(b)) => {
                assert_eq!(a.code(), b.code(), "survey {a} but read {b}");
                assert!(["INVALID_ARCHIVE", "ARCHIVE_TOO_LARGE"].contains(&a.code()));
            }
            (a, b) => panic!("the survey and the read disagree: survey {a:?}, read {:?}", b.as_ref().err()),
        }
    }
}

fn check_candidates(candidates: &[Candidate], opts: &ArchiveOptions) {
    assert!(candidates.len() <= opts.max_entries);
    for c in candidates {
        match c {
            Candidate::Accepted(f) => {
                assert_eq!(paths::normalize(&f.path).as_deref(), Ok(f.path.as_str()), "path not normalized");
                assert!(!f.path.starts_with('/') && !f.path.split('/').any(|s| s == ".." || s.is_empty()));
                assert!(f.text.len() <= opts.max_file_bytes, "{}: over max_file_bytes", f.path);
                assert_eq!(f.size, f.text.len() as u64);
                assert_eq!(f.content_hash, edgerag_core::ids::content_hash(f.text.as_bytes()));
                assert!(!f.text.contains('\0'));
            }
            Candidate::Skipped(s) => {
                assert!(
                    !s.reason.is_empty()
                        && s.reason
                            .bytes()
                            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'),
                    "skip reason {:?} is not a code",
                    s.reason
                );
            }
        }
    }
}
