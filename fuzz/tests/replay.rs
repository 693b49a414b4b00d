//! Replays every saved input through its target's checks on the stable toolchain, without
//! libFuzzer: the regression cases in `fuzz/regressions/<target>/` (inputs that once broke an
//! invariant; each is fixed) and the seeds. With `EDGERAG_FUZZ_SEEDS_OUT=<dir>` the seeds are also
//! written to `<dir>/<target>/` as the fuzzer's starting corpus.
use std::fs;
use std::path::PathBuf;

use edgerag_fuzz::seeds::{repo_root, seeds};
use edgerag_fuzz::TARGETS;

fn regressions(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = repo_root().join("fuzz/regressions").join(target);
    let Ok(entries) = fs::read_dir(&dir) else { return Vec::new() };
    let mut out: Vec<(PathBuf, Vec<u8>)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = fs::read(&p).expect("regression input readable");
            (p, bytes)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_saved_regression_input_passes_its_target() {
    for target in TARGETS {
        for (path, data) in regressions(target) {
            eprintln!("{target}: {}", path.display());
            edgerag_fuzz::check(target, &data);
        }
    }
}

#[test]
fn every_seed_passes_its_target_and_every_target_has_seeds() {
    let out = std::env::var_os("EDGERAG_FUZZ_SEEDS_OUT").map(PathBuf::from);
    for target in TARGETS {
        let seeds = seeds(target);
        assert!(seeds.len() >= 2, "{target} has {} seeds", seeds.len());
        if let Some(out) = &out {
            fs::create_dir_all(out.join(target)).expect("seed dir");
        }
        for (name, data) in &seeds {
            edgerag_fuzz::check(target, data);
            if let Some(out) = &out {
                fs::write(out.join(target).join(name), data).expect("seed written");
            }
        }
    }
}
