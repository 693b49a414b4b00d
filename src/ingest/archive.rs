//! Reading `.tar.gz` (or plain `.tar`) archives in memory with `flate2` (pure-Rust miniz_oxide
//! backend) and `tar`, both of which build for wasm32. Entries are classified one by one:
//! regular files go through [`super::filter`], links / devices / traversal are skipped with a
//! reason, directories and pax global headers are structural and ignored silently.
//!
//! The iteration is exposed as [`Scanner::item`] so an async caller can hold the entry iterator
//! across `await`s and stage files in bounded batches instead of unpacking everything at once.
use std::io::Read;

use tar::EntryType;

use edgerag_core::ignore::IgnoreRules;

use super::filter;
use super::{paths, Candidate};

#[derive(Debug, Clone)]
pub struct ArchiveOptions {
    /// GitHub tarballs wrap the tree in one `owner-repo-sha/` directory.
    pub strip_first_segment: bool,
    pub max_file_bytes: usize,
    /// Sum of the sizes of all entries (a gzip bomb stops here, before it is inflated).
    pub max_unpacked_bytes: u64,
    pub max_entries: usize,
    /// Built-in directories plus the archive's own `.gitignore` / `.mcpignore` files (see
    /// [`survey`], which finds them before the archive is staged).
    pub rules: IgnoreRules,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    #[error("body is neither gzip nor tar")]
    NotAnArchive,
    #[error("archive is corrupt: {0}")]
    Corrupt(String),
    #[error("archive unpacks to more than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("archive has more than {limit} entries")]
    TooManyEntries { limit: usize },
}

impl ArchiveError {
    pub fn code(&self) -> &'static str {
        match self {
            ArchiveError::NotAnArchive | ArchiveError::Corrupt(_) => "INVALID_ARCHIVE",
            ArchiveError::TooLarge { .. } | ArchiveError::TooManyEntries { .. } => "ARCHIVE_TOO_LARGE",
        }
    }
}

/// Open gzip-compressed or plain tar bytes.
pub fn open(bytes: &[u8]) -> Result<tar::Archive<Box<dyn Read + '_>>, ArchiveError> {
    let reader: Box<dyn Read + '_> = if bytes.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::read::GzDecoder::new(bytes))
    } else if bytes.len() >= 263 && &bytes[257..262] == b"ustar" {
        Box::new(bytes)
    } else {
        return Err(ArchiveError::NotAnArchive);
    };
    Ok(tar::Archive::new(reader))
}

/// Per-archive state: counts entries and unpacked bytes against the limits.
#[derive(Debug)]
pub struct Scanner {
    opts: ArchiveOptions,
    entries: usize,
    unpacked: u64,
}

impl Scanner {
    pub fn new(opts: ArchiveOptions) -> Scanner {
        Scanner { opts, entries: 0, unpacked: 0 }
    }

    /// Classify one entry. `Ok(None)` for structural entries (directories, global headers, the
    /// wrapper directory). An `Err` means the archive as a whole is unusable.
    pub fn item<R: Read>(
        &mut self,
        entry: std::io::Result<tar::Entry<'_, R>>,
    ) -> Result<Option<Candidate>, ArchiveError> {
        let mut entry = entry.map_err(|e| ArchiveError::Corrupt(e.to_string()))?;
        self.entries += 1;
        if self.entries > self.opts.max_entries {
            return Err(ArchiveError::TooManyEntries { limit: self.opts.max_entries });
        }
        let size = entry.header().entry_size().map_err(|e| ArchiveError::Corrupt(e.to_string()))?;
        self.unpacked = self.unpacked.saturating_add(size);
        if self.unpacked > self.opts.max_unpacked_bytes {
            return Err(ArchiveError::TooLarge { limit: self.opts.max_unpacked_bytes });
        }
        let kind = entry.header().entry_type();
        if matches!(kind, EntryType::XGlobalHeader | EntryType::Directory) {
            return Ok(None);
        }
        let raw = match String::from_utf8(entry.path_bytes().into_owned()) {
            Ok(raw) => raw,
            Err(e) => {
                let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
                return Ok(Some(filter::skip(&lossy, "INVALID_PATH")));
            }
        };
        let raw = if self.opts.strip_first_segment {
            match paths::strip_first_segment(&raw) {
                Some(rest) => rest.to_string(),
                None if raw.contains("..") => raw, // still report traversal attempts
                None => return Ok(None),
            }
        } else {
            raw
        };
        let path = match paths::normalize(&raw) {
            Ok(path) => path,
            Err(reason) => return Ok(Some(filter::skip(&raw, reason))),
        };
        match kind {
            EntryType::Regular | EntryType::Continuous => {}
            EntryType::Symlink | EntryType::Link => return Ok(Some(filter::skip(&path, "LINK"))),
            _ => return Ok(Some(filter::skip(&path, "SPECIAL_FILE"))),
        }
        if let Some(reason) = filter::ignored(&self.opts.rules, &path) {
            return Ok(Some(filter::skip(&path, reason)));
        }
        if size > self.opts.max_file_bytes as u64 {
            // Not read: the iterator skips the data.
            return Ok(Some(filter::skip(&path, "FILE_TOO_LARGE")));
        }
        let mut bytes = Vec::with_capacity(size as usize);
        entry.read_to_end(&mut bytes).map_err(|e| ArchiveError::Corrupt(e.to_string()))?;
        Ok(Some(filter::check_content(&path, &bytes, self.opts.max_file_bytes)))
    }
}

/// Classify every entry of an archive (tests and small inputs; the pipeline streams instead).
pub fn read_all(bytes: &[u8], opts: ArchiveOptions) -> Result<Vec<Candidate>, ArchiveError> {
    let mut archive = open(bytes)?;
    let entries = archive.entries().map_err(|e| ArchiveError::Corrupt(e.to_string()))?;
    let mut scanner = Scanner::new(opts);
    let mut out = Vec::new();
    for entry in entries {
        if let Some(candidate) = scanner.item(entry)? {
            out.push(candidate);
        }
    }
    Ok(out)
}

/// What a first pass over an archive found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Survey {
    pub entries: usize,
    /// `(normalized path, contents)` of every `.gitignore` / `.mcpignore` in the archive.
    pub ignore_files: Vec<(String, String)>,
}

impl Survey {
    /// The ignore rules of the archive: built-in directories plus its ignore files.
    pub fn rules(&self) -> IgnoreRules {
        filter::rules_from(self.ignore_files.iter().map(|(p, c)| (p.as_str(), c.as_str())))
    }
}

/// Walk the whole archive keeping only its ignore files: proves it is readable to the end and
/// within the entry and size limits before anything is staged, and finds the ignore patterns
/// that must apply to entries that come before their `.gitignore` in the archive.
pub fn survey(bytes: &[u8], opts: &ArchiveOptions) -> Result<Survey, ArchiveError> {
    let mut archive = open(bytes)?;
    let entries = archive.entries().map_err(|e| ArchiveError::Corrupt(e.to_string()))?;
    let mut out = Survey::default();
    let mut unpacked = 0u64;
    for entry in entries {
        let mut entry = entry.map_err(|e| ArchiveError::Corrupt(e.to_string()))?;
        out.entries += 1;
        if out.entries > opts.max_entries {
            return Err(ArchiveError::TooManyEntries { limit: opts.max_entries });
        }
        let size = entry.header().entry_size().map_err(|e| ArchiveError::Corrupt(e.to_string()))?;
        unpacked = unpacked.saturating_add(size);
        if unpacked > opts.max_unpacked_bytes {
            return Err(ArchiveError::TooLarge { limit: opts.max_unpacked_bytes });
        }
        let regular = matches!(entry.header().entry_type(), EntryType::Regular | EntryType::Continuous);
        let path = String::from_utf8(entry.path_bytes().into_owned()).ok().and_then(|raw| {
            let raw =
                if opts.strip_first_segment { paths::strip_first_segment(&raw)?.to_string() } else { raw };
            paths::normalize(&raw).ok()
        });
        match path {
            Some(path) if regular && filter::is_ignore_file(&path) && size <= opts.max_file_bytes as u64 => {
                let mut text = String::new();
                if entry.read_to_string(&mut text).is_ok() {
                    out.ignore_files.push((path, text));
                }
            }
            _ => {}
        }
        std::io::copy(&mut entry, &mut std::io::sink()).map_err(|e| ArchiveError::Corrupt(e.to_string()))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::Write;

    fn opts(strip: bool) -> ArchiveOptions {
        ArchiveOptions {
            strip_first_segment: strip,
            max_file_bytes: 1024,
            max_unpacked_bytes: 1 << 20,
            max_entries: 100,
            rules: IgnoreRules::new(),
        }
    }

    fn header(path: &str, kind: EntryType, size: u64) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(0o644);
        // set_path refuses `..`; write the raw name bytes like a hostile archive would.
        let name = &mut h.as_old_mut().name;
        name[..path.len()].copy_from_slice(path.as_bytes());
        h.set_cksum();
        h
    }

    fn tar_gz(entries: &[(&str, EntryType, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (path, kind, data) in entries {
            let mut h = header(path, *kind, data.len() as u64);
            if *kind == EntryType::Symlink {
                h.set_link_name("/etc/passwd").unwrap();
                h.set_size(0);
                h.set_cksum();
                builder.append(&h, &[][..]).unwrap();
            } else {
                builder.append(&h, *data).unwrap();
            }
        }
        let tar = builder.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap();
        gz.finish().unwrap()
    }

    fn summary(items: &[Candidate]) -> Vec<(String, &'static str)> {
        items
            .iter()
            .map(|c| match c {
                Candidate::Accepted(f) => (f.path.clone(), "OK"),
                Candidate::Skipped(s) => (s.path.clone(), s.reason),
            })
            .collect()
    }

    #[test]
    fn classifies_a_hostile_github_tarball() {
        let big = vec![b'a'; 2000];
        let bytes = tar_gz(&[
            ("o-r-sha/", EntryType::Directory, b""),
            ("o-r-sha/src/", EntryType::Directory, b""),
            ("o-r-sha/src/a.rs", EntryType::Regular, b"fn a() {}\n"),
            ("o-r-sha/docs/deep/x.md", EntryType::Regular, b"# X\n"),
            ("o-r-sha/node_modules/m/i.js", EntryType::Regular, b"x"),
            ("o-r-sha/img.png", EntryType::Regular, b"\x89PNG\0\0\0"),
            ("o-r-sha/big.txt", EntryType::Regular, &big),
            ("o-r-sha/../../evil.sh", EntryType::Regular, b"rm -rf /"),
            ("o-r-sha/link", EntryType::Symlink, b""),
            ("o-r-sha/dev", EntryType::Char, b""),
            ("o-r-sha/latin1.txt", EntryType::Regular, b"caf\xe9"),
        ]);
        let got = summary(&read_all(&bytes, opts(true)).unwrap());
        let want: Vec<(String, &str)> = [
            ("src/a.rs", "OK"),
            ("docs/deep/x.md", "OK"),
            ("node_modules/m/i.js", "IGNORED_DIR"),
            ("img.png", "BINARY_FILE"),
            ("big.txt", "FILE_TOO_LARGE"),
            ("../../evil.sh", "PATH_TRAVERSAL"),
            ("link", "LINK"),
            ("dev", "SPECIAL_FILE"),
            ("latin1.txt", "INVALID_UTF8"),
        ]
        .iter()
        .map(|(p, r)| (p.to_string(), *r))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn ignore_files_found_anywhere_apply_to_the_whole_archive() {
        let bytes = tar_gz(&[
            ("r/app.log", EntryType::Regular, b"noise"),
            ("r/src/gen/x.rs", EntryType::Regular, b"fn x() {}"),
            ("r/src/.mcpignore", EntryType::Regular, b"gen/\n"),
            ("r/.gitignore", EntryType::Regular, b"*.log\n"),
            ("r/src/ok.rs", EntryType::Regular, b"fn ok() {}"),
        ]);
        let mut o = opts(true);
        let found = survey(&bytes, &o).unwrap();
        assert_eq!(found.entries, 5);
        assert_eq!(found.ignore_files.len(), 2);
        o.rules = found.rules();
        let got = summary(&read_all(&bytes, o).unwrap());
        let reasons: Vec<(&str, &str)> = got.iter().map(|(p, r)| (p.as_str(), *r)).collect();
        assert_eq!(
            reasons,
            [
                ("app.log", "IGNORED_PATTERN"),
                ("src/gen/x.rs", "IGNORED_PATTERN"),
                ("src/.mcpignore", "OK"),
                (".gitignore", "OK"),
                ("src/ok.rs", "OK")
            ]
        );
    }

    #[test]
    fn plain_uploads_keep_their_paths() {
        let bytes =
            tar_gz(&[("./a/b.txt", EntryType::Regular, b"hi\n"), ("/abs.txt", EntryType::Regular, b"x")]);
        let got = summary(&read_all(&bytes, opts(false)).unwrap());
        assert_eq!(got, [("a/b.txt".to_string(), "OK"), ("/abs.txt".to_string(), "ABSOLUTE_PATH")]);
    }

    #[test]
    fn rejects_garbage_and_bombs() {
        assert_eq!(read_all(b"not an archive", opts(false)).unwrap_err().code(), "INVALID_ARCHIVE");
        let mut truncated = tar_gz(&[("a.txt", EntryType::Regular, &[b'x'; 600])]);
        truncated.truncate(truncated.len() / 2);
        assert_eq!(read_all(&truncated, opts(false)).unwrap_err().code(), "INVALID_ARCHIVE");
        assert_eq!(survey(&truncated, &opts(false)).unwrap_err().code(), "INVALID_ARCHIVE");
        let mut small = opts(false);
        small.max_unpacked_bytes = 100;
        let bytes = tar_gz(&[("a.txt", EntryType::Regular, &[b'x'; 600])]);
        assert_eq!(read_all(&bytes, small).unwrap_err().code(), "ARCHIVE_TOO_LARGE");
        let mut few = opts(false);
        few.max_entries = 1;
        let bytes = tar_gz(&[("a.txt", EntryType::Regular, b"a"), ("b.txt", EntryType::Regular, b"b")]);
        assert_eq!(read_all(&bytes, few).unwrap_err().code(), "ARCHIVE_TOO_LARGE");
    }
}
