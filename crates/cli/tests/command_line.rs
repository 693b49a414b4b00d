//! The command line itself: help, exit statuses, conflicts and shell completions, through the
//! built binary.
#![allow(clippy::unwrap_used)]
use std::process::{Command, Output};

fn edgerag(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_edgerag")).args(args).env_remove("EDGERAG_URL").output().unwrap()
}

#[test]
fn long_help_documents_every_command_the_environment_and_the_exit_statuses() {
    let out = edgerag(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in
        ["chunk", "index", "search", "status", "completions", "EDGERAG_URL", "EXIT STATUS", "2  usage error"]
    {
        assert!(help.contains(needle), "{needle} missing from\n{help}");
    }
    let out = edgerag(&["search", "--help"]);
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(
        help.contains("EXAMPLES:") && help.contains("--global") && help.contains("EXIT STATUS"),
        "{help}"
    );
}

#[test]
fn conflicting_or_invalid_options_exit_2_before_any_request() {
    // The server address is unroutable: reaching it would exit 1, not 2.
    for args in [
        &["search", "q", "--global", "--repo", "a/b", "--server", "http://127.0.0.1:9"][..],
        &["search", "--server", "http://127.0.0.1:9"],
        &["search", "q", "--repo", "no-slash", "--server", "http://127.0.0.1:9"],
        &["status", "a/b/c", "--server", "http://127.0.0.1:9"],
        &["index", "--server", "http://127.0.0.1:9"],
        &["completions", "tcsh"],
    ] {
        let out = edgerag(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(String::from_utf8(out.stderr).unwrap().contains("error"), "{args:?}");
    }
}

#[test]
fn an_unreachable_server_exits_1_with_a_hint() {
    let out = edgerag(&["search", "where", "--server", "http://127.0.0.1:9"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("cannot reach http://127.0.0.1:9/v1/search") && stderr.contains("--server"),
        "{stderr}"
    );
}

#[test]
fn completions_list_the_subcommands_and_their_options_for_each_shell() {
    for (shell, marker) in
        [("bash", "_edgerag()"), ("zsh", "#compdef edgerag"), ("fish", "complete -c edgerag")]
    {
        let out = edgerag(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains(marker), "{shell}: {script}");
        for needle in ["chunk", "index", "snippet-lines", "max-tokens"] {
            assert!(script.contains(needle), "{shell}: {needle} missing");
        }
    }
}
