//! `edgerag` — the command line. One module per subcommand; [`COMMANDS`] is the dispatch table
//! (add a module and a row to add a command).
mod args;
mod chunk;
mod client;
mod graph;
mod index;
mod search;
mod status;
mod walk;

use std::process::ExitCode;

/// A subcommand: name, one-line summary, entry point (gets the arguments after its name).
pub struct Command {
    pub name: &'static str,
    pub summary: &'static str,
    pub run: fn(Vec<String>) -> ExitCode,
}

pub const COMMANDS: &[Command] = &[
    Command {
        name: "chunk",
        summary: "Cut files and directories into chunks (JSONL, JSON or a table)",
        run: chunk::run,
    },
    Command {
        name: "graph",
        summary: "Extract the code graph: symbols, calls, imports (JSONL, JSON or dot)",
        run: graph::run,
    },
    Command {
        name: "search",
        summary: "Ask a running edgerag for the code and docs that answer a question",
        run: search::run,
    },
    Command {
        name: "index",
        summary: "Upload a directory to an edgerag server and wait for READY",
        run: index::run,
    },
    Command {
        name: "status",
        summary: "Indexing status of one repository, or the list of repositories",
        run: status::run,
    },
];

/// Exit code for usage errors (the only non-zero exit of `chunk`).
pub const USAGE_ERROR: u8 = 2;

fn usage() -> String {
    let mut s = String::from("usage: edgerag <command> [options]\n\ncommands:\n");
    for c in COMMANDS {
        s.push_str(&format!("  {:<10} {}\n", c.name, c.summary));
    }
    s.push_str("\nRun `edgerag <command> --help` for a command's options.\n");
    s
}

fn main() -> ExitCode {
    let mut argv: Vec<String> = match std::env::args_os().skip(1).map(|a| a.into_string()).collect() {
        Ok(argv) => argv,
        Err(bad) => {
            eprintln!("edgerag: argument is not valid UTF-8: {bad:?}");
            return ExitCode::from(USAGE_ERROR);
        }
    };
    if argv.is_empty() {
        eprint!("{}", usage());
        return ExitCode::from(USAGE_ERROR);
    }
    let name = argv.remove(0);
    match name.as_str() {
        "-h" | "--help" | "help" => {
            print!("{}", usage());
            ExitCode::SUCCESS
        }
        "-V" | "--version" => {
            println!("edgerag {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        _ => match COMMANDS.iter().find(|c| c.name == name) {
            Some(command) => (command.run)(argv),
            None => {
                eprintln!("edgerag: unknown command {name:?}\n\n{}", usage());
                ExitCode::from(USAGE_ERROR)
            }
        },
    }
}
