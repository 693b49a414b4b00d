use super::*;
use crate::graph::rank::stored_ranks;
use crate::graph::{extract_graph, Definitions};
use crate::lang::Language;
use proptest::prelude::*;
use std::path::Path;

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Real inputs: the graph fixtures (projects in six languages, each under its own folder)
/// and this crate's own Rust sources, in path order as the worker reads them.
fn project() -> Vec<FileGraph> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    walk(&root.join("../../tests/fixtures/graph"), &mut paths);
    walk(&root.join("src"), &mut paths);
    let mut files: Vec<FileGraph> = paths
        .iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).ok()?;
            let rel = p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace("../", "");
            extract_graph(&rel, &text, Language::detect(&rel))
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    assert!(files.len() > 60, "{} files", files.len());
    files
}

fn whole(files: &[FileGraph]) -> Vec<FileGraph> {
    let mut out = files.to_vec();
    resolve(&mut out);
    out
}

/// Resolved in pages cut at `cuts` (file counts, cycled), as the worker does: every file
/// added, then each page resolved alone.
fn paged(files: &[FileGraph], cuts: &[usize]) -> (Vec<FileGraph>, SymbolTable) {
    let mut table = SymbolTable::new();
    for f in files {
        table.add(f);
    }
    paged_with(table, files, files, cuts)
}

/// Each file's stored definitions (their JSON, as a store keeps them, parsed back) added to a
/// table, as a job's end reads the table, and the graphs they give back.
fn table_of_definitions(files: &[FileGraph]) -> (SymbolTable, Vec<FileGraph>) {
    let mut table = SymbolTable::new();
    let mut graphs = Vec::new();
    for f in files {
        let json = serde_json::to_string(&Definitions::of(f)).expect("definitions as JSON");
        let stored: Definitions = serde_json::from_str(&json).expect("definitions parsed");
        table.add(&stored.graph());
        graphs.push(stored.graph());
    }
    (table, graphs)
}

/// [`paged`] with a table of every file already added, its base types read from `bases`
/// (the graphs it was given).
fn paged_with(
    mut table: SymbolTable,
    bases: &[FileGraph],
    files: &[FileGraph],
    cuts: &[usize],
) -> (Vec<FileGraph>, SymbolTable) {
    table.seal();
    let typed: Vec<usize> = table.base_files().collect();
    assert!(!typed.is_empty(), "no file with base types: the input proves little");
    for fi in typed {
        table.add_bases(fi, &bases[fi]);
    }
    let mut out = Vec::with_capacity(files.len());
    let (mut first, mut cut) = (0, 0);
    while first < files.len() {
        let size = cuts[cut % cuts.len()].max(1);
        cut += 1;
        let mut page = files[first..(first + size).min(files.len())].to_vec();
        table.resolve_page(first, &mut page);
        first += page.len();
        out.extend(page);
    }
    (out, table)
}

#[test]
fn a_project_resolved_page_by_page_has_the_edges_of_one_resolution() {
    let files = project();
    let expected = whole(&files);
    let cross: usize =
        expected.iter().flat_map(|f| &f.edges).filter(|e| e.hint.is_some() && e.dst.is_some()).count();
    assert!(cross > 200, "only {cross} edges resolved across files: the input proves little");
    for size in [1, 2, 3, 7, 50, files.len()] {
        let (got, _) = paged(&files, &[size]);
        assert_eq!(got, expected, "pages of {size}");
    }
}

#[test]
fn ranks_from_votes_fed_page_by_page_equal_the_whole_graph_s() {
    let files = project();
    let (nodes, by_file) = stored_ranks(&whole(&files));
    let (resolved, mut table) = paged(&files, &[5]);
    let mut links = table.votes();
    for f in &resolved {
        table.vote(&mut links, f);
    }
    let ranked = table.rank(links);
    let got: Vec<(String, f64)> = ranked.symbols().map(|(id, r)| (id.to_string(), r)).collect();
    assert_eq!(got, nodes.into_iter().collect::<Vec<_>>());
    let files_got: Vec<(String, f64)> = ranked.files().into_iter().map(|(p, r)| (p.to_string(), r)).collect();
    assert_eq!(files_got, by_file.into_iter().collect::<Vec<_>>());
    assert!(got.len() > 1_000, "{} symbols", got.len());
}

#[test]
fn a_table_read_from_stored_definitions_gives_the_edges_and_ranks_of_the_graphs() {
    let files = project();
    let expected = whole(&files);
    for size in [1, 7, files.len()] {
        let (table, bases) = table_of_definitions(&files);
        let (got, _) = paged_with(table, &bases, &files, &[size]);
        assert_eq!(got, expected, "pages of {size}");
    }
    let (table, bases) = table_of_definitions(&files);
    let (resolved, mut table) = paged_with(table, &bases, &files, &[5]);
    let mut links = table.votes();
    for f in &resolved {
        table.vote(&mut links, f);
    }
    let ranked = table.rank(links);
    let (nodes, by_file) = stored_ranks(&expected);
    let got: Vec<(String, f64)> = ranked.symbols().map(|(id, r)| (id.to_string(), r)).collect();
    assert_eq!(got, nodes.into_iter().collect::<Vec<_>>());
    let files_got: Vec<(String, f64)> = ranked.files().into_iter().map(|(p, r)| (p.to_string(), r)).collect();
    assert_eq!(files_got, by_file.into_iter().collect::<Vec<_>>());
    // What makes the job's end read fewer statements: the definitions are a small part of
    // the graphs' JSON.
    let bytes = |json: Vec<String>| json.iter().map(String::len).sum::<usize>();
    let graphs = bytes(files.iter().map(|f| serde_json::to_string(f).expect("json")).collect());
    let definitions =
        bytes(files.iter().map(|f| serde_json::to_string(&Definitions::of(f)).expect("json")).collect());
    eprintln!("definitions: {definitions} B of {graphs} B of graphs");
    assert!(definitions * 5 < graphs, "{definitions} B of definitions, {graphs} B of graphs");
}

#[test]
fn ids_are_computed_again_from_path_kind_fqn_and_ordinal_and_others_kept() {
    let mut files = project();
    // A node id from elsewhere (an older build) is kept as it is, and still found.
    let odd: Arc<str> = Arc::from("0000-an-id-not-made-here");
    let old = files[3].nodes[1].id.clone();
    files[3].nodes[1].id = odd.clone();
    for f in &mut files {
        for e in &mut f.edges {
            if e.src == old {
                e.src = odd.clone();
            }
            if e.dst.as_ref() == Some(&old) {
                e.dst = Some(odd.clone());
            }
        }
    }
    let mut table = SymbolTable::new();
    for f in &files {
        table.add(f);
    }
    table.seal();
    assert_eq!(table.index.odd_ids.len(), 1, "every other id is node_id of the node");
    assert!(!table.index.ordinals.is_empty(), "the input has same-named overloads");
    for (fi, f) in files.iter().enumerate() {
        for (at, node) in table.index.nodes_of(fi).zip(&f.nodes) {
            assert_eq!(table.index.id(at), node.id);
            assert_eq!(table.index.at_of_id(&node.id).map(|(at, _)| at), Some(at));
            assert_eq!(table.index.fqn(at), node.fqn.as_str());
        }
    }
    assert_eq!(table.index.at_of_id("ffff"), None);
    // The resolution with that id is still the one of every file at once, the table read
    // from the graphs or from their stored definitions.
    let (got, _) = paged(&files, &[9]);
    assert_eq!(got, whole(&files));
    let (mut stored, bases) = table_of_definitions(&files);
    stored.seal();
    assert_eq!(stored.index.odd_ids.len(), 1, "the odd id is stored with the definitions");
    let (got, _) = paged_with(stored, &bases, &files, &[9]);
    assert_eq!(got, whole(&files));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn any_split_into_pages_gives_the_same_edges(cuts in proptest::collection::vec(1usize..40, 1..8)) {
        thread_local! {
            static CASE: (Vec<FileGraph>, Vec<FileGraph>) = {
                let files = project();
                let expected = whole(&files);
                (files, expected)
            };
        }
        CASE.with(|(files, expected)| {
            let (got, _) = paged(files, &cuts);
            prop_assert_eq!(&got, expected);
            Ok(())
        })?;
    }
}
