//! `edgerag completions SHELL`: the shell completion script, generated from the same clap
//! definition as the parser (so it never lists an option that does not exist).
use std::io::Write;

use clap_complete::Shell;

use crate::Outcome;

const EXAMPLES: &str = "\
EXAMPLES:
    edgerag completions bash > ~/.local/share/bash-completion/completions/edgerag
    edgerag completions zsh > ~/.zfunc/_edgerag
    edgerag completions fish > ~/.config/fish/completions/edgerag.fish";

/// Print a shell completion script to stdout.
#[derive(Debug, clap::Args)]
#[command(after_long_help = EXAMPLES)]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

impl Args {
    pub fn run(self) -> Outcome {
        let mut command = crate::cli_command();
        let mut script = Vec::new();
        clap_complete::generate(self.shell, &mut command, "edgerag", &mut script);
        // A closed pipe (`| head`) is a normal way to stop reading.
        let _ = std::io::stdout().lock().write_all(&script);
        Ok(())
    }
}
