//! The repository tools' store in memory ([`MemoryRepo`]): what indexing keeps of a repository
//! (files, chunks, the resolved code graph, the ranks of the job's finish), held in maps. It runs
//! the tools natively (tests, the behaviour suite) exactly as the worker runs them over D1.
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use edgerag_core::graph::rank::stored_ranks;
use edgerag_core::graph::FileGraph;
use edgerag_core::{Chunk, ChunkType};

use super::store::{
    ChunkText, EdgeEnd, FileFilter, FileLink, FileRank, RepoEdge, RepoFile, RepoStore, RepoSymbol,
    SymbolEdge, VOTING_KINDS,
};
use crate::error::PortError;

/// One indexed file as a job leaves it: its row and its chunks.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedFile {
    pub path: String,
    pub language: String,
    pub size: u64,
    pub chunks: Vec<Chunk>,
}

/// What indexing keeps of a repository: its files and its code graph, edges resolved.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexedRepo {
    pub files: Vec<IndexedFile>,
    pub graph: Vec<FileGraph>,
}

#[derive(Default)]
struct Repo {
    files: BTreeMap<String, IndexedFile>,
    graph: Vec<FileGraph>,
    node_ranks: BTreeMap<String, f64>,
    file_ranks: BTreeMap<String, f64>,
}

/// Repositories in memory, by namespace.
#[derive(Default)]
pub struct MemoryRepo {
    repos: RefCell<BTreeMap<String, Repo>>,
}

impl MemoryRepo {
    pub fn new() -> Self {
        Self::default()
    }

    /// Store `repo` as `namespace` (replacing what it held), with the ranks a job's finish
    /// computes.
    pub fn load(&self, namespace: &str, repo: &IndexedRepo) {
        let (node_ranks, file_ranks) = stored_ranks(&repo.graph);
        let files = repo.files.iter().map(|f| (f.path.clone(), f.clone())).collect();
        self.repos
            .borrow_mut()
            .insert(namespace.to_string(), Repo { files, graph: repo.graph.clone(), node_ranks, file_ranks });
    }

    /// Forget `namespace`.
    pub fn clear(&self, namespace: &str) {
        self.repos.borrow_mut().remove(namespace);
    }

    fn with<T>(&self, namespace: &str, f: impl FnOnce(&Repo) -> T) -> T {
        let repos = self.repos.borrow();
        match repos.get(namespace) {
            Some(repo) => f(repo),
            None => f(&Repo::default()),
        }
    }
}

fn row(f: &IndexedFile) -> RepoFile {
    let lines = f.chunks.iter().filter(|c| c.chunk_type != ChunkType::SymbolPlan).map(|c| c.end_line).max();
    RepoFile { path: f.path.clone(), language: f.language.clone(), size: f.size, lines: lines.unwrap_or(0) }
}

fn symbols<'a>(repo: &'a Repo, keep: impl Fn(&edgerag_core::graph::Node) -> bool + 'a) -> Vec<RepoSymbol> {
    let mut out: Vec<RepoSymbol> = repo
        .graph
        .iter()
        .flat_map(|f| &f.nodes)
        .filter(|n| keep(n))
        .map(|n| RepoSymbol {
            id: n.id.to_string(),
            kind: n.kind.as_str().to_string(),
            name: n.name.clone(),
            fqn: n.fqn.clone(),
            path: n.path.to_string(),
            language: n.language.as_str().to_string(),
            start_line: n.start_line,
            end_line: n.end_line,
            signature: n.signature.clone(),
            doc: n.doc.clone(),
            parent: n.parent.as_deref().map(str::to_string),
            route: n.route.clone(),
            http_method: n.http_method.clone(),
            rank: repo.node_ranks.get(&*n.id).copied().unwrap_or(0.0),
        })
        .collect();
    out.sort_by(|a, b| {
        (&a.path, a.start_line, std::cmp::Reverse(a.end_line), &a.id).cmp(&(
            &b.path,
            b.start_line,
            std::cmp::Reverse(b.end_line),
            &b.id,
        ))
    });
    out
}

/// The voting edges of `repo` with a resolved target.
fn voting(repo: &Repo) -> impl Iterator<Item = (&edgerag_core::graph::Edge, &str)> {
    repo.graph
        .iter()
        .flat_map(|f| &f.edges)
        .filter(|e| VOTING_KINDS.contains(&e.kind.as_str()))
        .filter_map(|e| Some((e, e.dst.as_deref()?)))
}

#[async_trait::async_trait(?Send)]
impl RepoStore for MemoryRepo {
    async fn files(&self, namespace: &str, filter: &FileFilter<'_>) -> Result<Vec<RepoFile>, PortError> {
        Ok(self.with(namespace, |repo| {
            repo.files
                .values()
                .filter(|f| super::is_under(&f.path, filter.folder))
                .filter(|f| filter.language.is_none_or(|l| f.language == l))
                .filter(|f| f.path.as_str() >= filter.from)
                .map(|f| RepoFile { lines: if filter.lines { row(f).lines } else { 0 }, ..row(f) })
                .collect()
        }))
    }

    async fn file(&self, namespace: &str, path: &str) -> Result<Option<RepoFile>, PortError> {
        Ok(self.with(namespace, |repo| repo.files.get(path).map(row)))
    }

    async fn chunk_texts(&self, namespace: &str, paths: &[String]) -> Result<Vec<ChunkText>, PortError> {
        let wanted: BTreeSet<&str> = paths.iter().map(String::as_str).collect();
        Ok(self.with(namespace, |repo| {
            let mut chunks: Vec<&Chunk> = repo
                .files
                .values()
                .filter(|f| wanted.contains(f.path.as_str()))
                .flat_map(|f| &f.chunks)
                .filter(|c| c.chunk_type != ChunkType::SymbolPlan)
                .collect();
            chunks.sort_by(|a, b| {
                (&a.path, a.start_line, a.chunk_index).cmp(&(&b.path, b.start_line, b.chunk_index))
            });
            chunks
                .into_iter()
                .map(|c| ChunkText { path: c.path.clone(), start_line: c.start_line, text: c.text.clone() })
                .collect()
        }))
    }

    async fn paths_containing(&self, namespace: &str, literals: &[String]) -> Result<Vec<String>, PortError> {
        let literals: Vec<String> = literals.iter().map(|l| l.to_lowercase()).collect();
        Ok(self.with(namespace, |repo| {
            repo.files
                .values()
                .filter(|f| {
                    f.chunks.iter().any(|c| {
                        let text = c.text.to_lowercase();
                        literals.iter().any(|l| text.contains(l.as_str()))
                    })
                })
                .map(|f| f.path.clone())
                .collect()
        }))
    }

    async fn symbols_in(&self, namespace: &str, paths: &[String]) -> Result<Vec<RepoSymbol>, PortError> {
        let wanted: BTreeSet<&str> = paths.iter().map(String::as_str).collect();
        Ok(self.with(namespace, |repo| symbols(repo, |n| wanted.contains(&*n.path))))
    }

    async fn definitions(&self, namespace: &str, paths: &[String]) -> Result<Vec<RepoSymbol>, PortError> {
        let wanted: BTreeSet<&str> = paths.iter().map(String::as_str).collect();
        let mut out = self.with(namespace, |repo| {
            symbols(repo, |n| wanted.contains(&*n.path) && !matches!(n.kind.as_str(), "MODULE" | "FIELD"))
        });
        out.iter_mut().for_each(|s| s.doc = None);
        Ok(out)
    }

    async fn symbols_by_id(&self, namespace: &str, ids: &[String]) -> Result<Vec<RepoSymbol>, PortError> {
        let wanted: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
        Ok(self.with(namespace, |repo| symbols(repo, |n| wanted.contains(&*n.id))))
    }

    async fn symbols_named(
        &self,
        namespace: &str,
        names: &[String],
        lowercase: &[String],
    ) -> Result<Vec<RepoSymbol>, PortError> {
        Ok(self.with(namespace, |repo| {
            symbols(repo, |n| {
                n.kind.as_str() != "MODULE"
                    && (names.contains(&n.name) || lowercase.contains(&n.name.to_lowercase()))
            })
        }))
    }

    async fn symbols_by_name(
        &self,
        namespace: &str,
        name: &str,
        kind: Option<&str>,
    ) -> Result<Vec<RepoSymbol>, PortError> {
        let mut out = self.with(namespace, |repo| {
            symbols(repo, |n| (n.name == name || n.fqn == name) && kind.is_none_or(|k| n.kind.as_str() == k))
        });
        out.sort_by(|a, b| (&a.path, a.start_line, &a.id).cmp(&(&b.path, b.start_line, &b.id)));
        Ok(out)
    }

    async fn edges_at(
        &self,
        namespace: &str,
        ids: &[String],
        end: EdgeEnd,
        kinds: &[&str],
    ) -> Result<Vec<SymbolEdge>, PortError> {
        let wanted: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
        Ok(self.with(namespace, |repo| {
            let mut out: Vec<SymbolEdge> = repo
                .graph
                .iter()
                .flat_map(|f| &f.edges)
                .filter(|e| kinds.contains(&e.kind.as_str()))
                .filter_map(|e| {
                    let (near, other) = match end {
                        EdgeEnd::Source => (e.src.to_string(), e.dst.as_deref().map(str::to_string)),
                        EdgeEnd::Target => (e.dst.as_deref()?.to_string(), Some(e.src.to_string())),
                    };
                    wanted.contains(near.as_str()).then(|| SymbolEdge {
                        near,
                        other,
                        dst_name: e.dst_name.clone(),
                        kind: e.kind.as_str().to_string(),
                        path: e.path.to_string(),
                        line: e.line,
                        confidence: f64::from(e.confidence),
                    })
                })
                .collect();
            out.sort_by(|a, b| {
                (&a.near, &a.path, a.line, &a.dst_name, &a.other).cmp(&(
                    &b.near,
                    &b.path,
                    b.line,
                    &b.dst_name,
                    &b.other,
                ))
            });
            out
        }))
    }

    async fn last_line(&self, namespace: &str, path: &str) -> Result<Option<u32>, PortError> {
        Ok(self.with(namespace, |repo| {
            let file = repo.files.get(path)?;
            file.chunks.iter().filter(|c| c.chunk_type != ChunkType::SymbolPlan).map(|c| c.end_line).max()
        }))
    }

    async fn chunks_between(
        &self,
        namespace: &str,
        path: &str,
        start: u32,
        end: u32,
    ) -> Result<Vec<ChunkText>, PortError> {
        Ok(self.with(namespace, |repo| {
            let Some(file) = repo.files.get(path) else { return Vec::new() };
            let mut chunks: Vec<&Chunk> = file
                .chunks
                .iter()
                .filter(|c| {
                    c.chunk_type != ChunkType::SymbolPlan && c.start_line <= end && c.end_line >= start
                })
                .collect();
            chunks.sort_by_key(|c| (c.start_line, c.chunk_index));
            chunks
                .into_iter()
                .map(|c| ChunkText { path: c.path.clone(), start_line: c.start_line, text: c.text.clone() })
                .collect()
        }))
    }

    async fn file_ranks(&self, namespace: &str) -> Result<Vec<FileRank>, PortError> {
        Ok(self.with(namespace, |repo| {
            repo.file_ranks.iter().map(|(path, rank)| FileRank { path: path.clone(), rank: *rank }).collect()
        }))
    }

    async fn edges_into(&self, namespace: &str, targets: &[String]) -> Result<Vec<RepoEdge>, PortError> {
        let wanted: BTreeSet<&str> = targets.iter().map(String::as_str).collect();
        Ok(self.with(namespace, |repo| {
            let mut out: Vec<RepoEdge> = voting(repo)
                .filter(|(_, dst)| wanted.contains(dst))
                .map(|(e, dst)| RepoEdge {
                    src: e.src.to_string(),
                    dst: dst.to_string(),
                    kind: e.kind.as_str().to_string(),
                    path: e.path.to_string(),
                    line: e.line,
                })
                .collect();
            out.sort_by(|a, b| (&a.dst, &a.path, a.line, &a.src).cmp(&(&b.dst, &b.path, b.line, &b.src)));
            out
        }))
    }

    async fn file_links(&self, namespace: &str) -> Result<Vec<FileLink>, PortError> {
        Ok(self.with(namespace, |repo| {
            let path_of: HashMap<&str, &str> =
                repo.graph.iter().flat_map(|f| &f.nodes).map(|n| (&*n.id, &*n.path)).collect();
            let mut counts: BTreeMap<(&str, &str), u32> = BTreeMap::new();
            for (e, dst) in voting(repo) {
                if let Some(&to) = path_of.get(dst) {
                    if to != &*e.path {
                        *counts.entry((&*e.path, to)).or_default() += 1;
                    }
                }
            }
            counts
                .into_iter()
                .map(|((src, dst), edges)| FileLink { src: src.to_string(), dst: dst.to_string(), edges })
                .collect()
        }))
    }
}
