//! A small std-only argument parser shared by the subcommands: `--name value`, `--name=value`,
//! boolean flags, `--` to end options, positionals.
use std::str::FromStr;

/// One parsed command-line item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// `--name` or `-n`, with an inline `=value` when given that way.
    Flag {
        name: String,
        inline: Option<String>,
    },
    Positional(String),
}

/// Iterates the items of an argument list.
pub struct Args {
    items: std::vec::IntoIter<String>,
    only_positionals: bool,
}

impl Args {
    pub fn new(argv: Vec<String>) -> Self {
        Args { items: argv.into_iter(), only_positionals: false }
    }

    /// The value of the flag just returned (inline `--x=v`, else the next item).
    pub fn value(&mut self, flag: &str, inline: Option<String>) -> Result<String, String> {
        inline.or_else(|| self.items.next()).ok_or_else(|| format!("{flag} needs a value"))
    }

    /// The value parsed as `T`.
    pub fn parsed<T: FromStr>(&mut self, flag: &str, inline: Option<String>) -> Result<T, String> {
        let v = self.value(flag, inline)?;
        v.parse().map_err(|_| format!("{flag}: invalid value {v:?}"))
    }
}

impl Iterator for Args {
    type Item = Arg;

    fn next(&mut self) -> Option<Arg> {
        let item = self.items.next()?;
        if self.only_positionals || item == "-" || !item.starts_with('-') {
            return Some(Arg::Positional(item));
        }
        if item == "--" {
            self.only_positionals = true;
            return self.next();
        }
        Some(match item.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                Arg::Flag { name: name.to_string(), inline: Some(value.to_string()) }
            }
            _ => Arg::Flag { name: item, inline: None },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_values_and_positionals() {
        let argv = ["a", "--x", "1", "--y=2", "-h", "--", "--z"].map(String::from).to_vec();
        let mut args = Args::new(argv);
        assert_eq!(args.next(), Some(Arg::Positional("a".into())));
        assert_eq!(args.next(), Some(Arg::Flag { name: "--x".into(), inline: None }));
        assert_eq!(args.parsed::<u32>("--x", None), Ok(1));
        assert_eq!(args.next(), Some(Arg::Flag { name: "--y".into(), inline: Some("2".into()) }));
        assert_eq!(args.next(), Some(Arg::Flag { name: "-h".into(), inline: None }));
        assert_eq!(args.next(), Some(Arg::Positional("--z".into())));
        assert_eq!(args.next(), None);
        assert!(args.value("--q", None).is_err());
    }
}
