//! `edgerag` — the command line. Each subcommand is one file holding a clap `Args` struct (its
//! options, help and validation) and a `run` method; the [`commands!`] table below turns the list
//! into the subcommand enum and its dispatch, so adding a command is one line here plus one file.
mod alloc;
mod client;
mod parent_child;
mod progress;
mod walk;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Exit status of a run that did what was asked (a search with no matches included).
pub const EXIT_OK: u8 = 0;
/// Exit status when the server refused or failed the request, could not be reached, or an
/// indexing job ended FAILED / not READY.
pub const EXIT_FAILED: u8 = 1;
/// Exit status of usage errors: unknown option, bad or missing value, conflicting options,
/// a path of the wrong kind. clap uses the same code for the errors it detects.
pub const EXIT_USAGE: u8 = 2;

/// The end of every `--help`: environment and exit statuses.
pub const LONG_FOOTER: &str = "\
ENVIRONMENT:
    EDGERAG_URL     server base URL when --server is not given (then EDGERAG_SERVER,
                    then http://127.0.0.1:8787)
    EDGERAG_TOKEN   bearer token when --token is not given (the local dev server uses dev-token)

EXIT STATUS:
    0  success: the output is complete (a search with no matches and a chunk run that skipped
       some files both count as success; skips are reported on stderr)
    1  failure: the server refused or failed the request, could not be reached, or an index
       job ended FAILED or not READY
    2  usage error: unknown option, invalid or missing value, conflicting options";

/// Why a command did not succeed; `main` turns it into a message and an exit status.
#[derive(Debug)]
pub enum Failure {
    /// Bad arguments that clap cannot see (e.g. `index FILE`): exit 2.
    Usage(String),
    /// The request failed: exit 1.
    Failed(String),
    /// Already reported on stdout/stderr; exit 1 without another message.
    Reported,
}

impl Failure {
    fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage(_) => EXIT_USAGE,
            Failure::Failed(_) | Failure::Reported => EXIT_FAILED,
        }
    }
}

pub type Outcome = Result<(), Failure>;

/// Declares the subcommands: `Variant => module` (the module's `Args` is the variant's payload
/// and its doc comment the command's help; `Args::run` is the entry point).
macro_rules! commands {
    ($($variant:ident => $module:ident),* $(,)?) => {
        $(mod $module;)*

        #[derive(Debug, Subcommand)]
        enum Command {
            $($variant($module::Args),)*
        }

        impl Command {
            fn name(&self) -> &'static str {
                match self {
                    $(Command::$variant(_) => stringify!($module),)*
                }
            }

            fn run(self) -> Outcome {
                match self {
                    $(Command::$variant(args) => args.run(),)*
                }
            }
        }
    };
}

commands! {
    Chunk => chunk,
    Graph => graph,
    Index => index,
    Search => search,
    Status => status,
    Files => files,
    Outline => outline,
    Grep => grep,
    Map => map,
    Impact => impact,
    Completions => completions,
}

/// Chunk code and documents locally, index them into an edgerag server, and search them.
///
/// edgerag cuts repositories into chunks (tree-sitter for code, headings for Markdown, BLAKE3
/// ids), indexes them on an edgerag server (a Cloudflare Worker, or `scripts/dev.sh` locally) and
/// answers questions with the code and docs that match. `edgerag chunk` runs offline with the
/// same chunker the server and the browser preview use.
///
/// Use -h for a short summary of a command's options and --help for the details.
#[derive(Debug, Parser)]
#[command(
    name = "edgerag",
    version,
    arg_required_else_help = true,
    after_help = "Run `edgerag <COMMAND> --help` for a command's options.",
    after_long_help = LONG_FOOTER,
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The full command definition (also used by `edgerag completions`).
pub fn cli_command() -> clap::Command {
    Cli::command()
}

fn main() -> ExitCode {
    alloc::install();
    let cli = Cli::parse();
    let name = cli.command.name();
    match cli.command.run() {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(failure) => {
            match &failure {
                Failure::Usage(message) => {
                    eprintln!("error: {message}\n\nFor more information, try 'edgerag {name} --help'.")
                }
                Failure::Failed(message) => eprintln!("edgerag {name}: {message}"),
                Failure::Reported => {}
            }
            ExitCode::from(failure.exit_code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// `docs/reference/cli.md`: every command's `--help`, rendered from the same definition as the
    /// parser (fixed width, no styling), so the book's CLI page is never out of date. Regenerate
    /// with `UPDATE_DOCS=1 cargo test -p edgerag-cli cli_reference`.
    #[test]
    fn cli_reference_is_fresh() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference/cli.md");
        let want = cli_reference();
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(&path, &want).expect("write docs/reference/cli.md");
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/reference/cli.md is stale: run `UPDATE_DOCS=1 cargo test -p edgerag-cli cli_reference`"
        );
    }

    /// The page: the top-level help, then one section per subcommand (its long help).
    fn cli_reference() -> String {
        let mut root = Cli::command().term_width(100).max_term_width(100);
        root.build();
        let mut out = String::from(
            "# Command line reference\n\n\
             <!-- Generated from the clap definition in crates/cli by the test `cli_reference_is_fresh`; \
             do not edit. Regenerate: UPDATE_DOCS=1 cargo test -p edgerag-cli cli_reference -->\n\n\
             Every command's `--help`, as `edgerag` prints it. Build the binary with \
             `cargo build --profile cli -p edgerag-cli` (it lands in `target/cli/edgerag`).\n\n\
             ## edgerag\n\n```text\n",
        );
        out.push_str(root.render_long_help().to_string().trim_end());
        out.push_str("\n```\n");
        for sub in root.get_subcommands_mut() {
            if sub.get_name() == "help" {
                continue;
            }
            let name = sub.get_name().to_string();
            out.push_str(&format!("\n## edgerag {name}\n\n```text\n"));
            out.push_str(sub.render_long_help().to_string().trim_end());
            out.push_str("\n```\n");
        }
        out
    }

    #[test]
    fn every_command_documents_the_exit_statuses_in_its_long_help() {
        let mut root = Cli::command();
        let help = root.render_long_help().to_string();
        assert!(help.contains("EXIT STATUS") && help.contains("2  usage error"), "{help}");
    }
}
