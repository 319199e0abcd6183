//! One subcommand per registered op that has no hand-written one: its arguments and
//! `--help` come from the op's signature in the core's registry, so an op registered there
//! is a subcommand here (`ndgather unsorted-segment-max --data x.npy --segment-ids ids.npy
//! --num-segments 4`). Every input is a named option in any form PARAMS takes (a list
//! input is repeated: `--weight a.npy --weight b.npy`); every attribute is an option of its
//! kind, spelled with dashes.

use crate::error::CliError;
use crate::source;
use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, ArgMatches, Command};
use ndgather::registry::{self, AttrKind, Attrs, Input, InputKind, Value};
use ndgather::{OpDef, Out, Tensor};

/// The subcommand's name of an op: its name with dashes.
pub fn command_name(op: &str) -> String {
    op.replace('_', "-")
}

/// `cli` with a subcommand for every registered op that has none yet, named as
/// [`command_name`]; `extra` adds the arguments every such subcommand shares (output and
/// printing).
pub fn add(cli: Command, extra: impl Fn(Command) -> Command) -> Command {
    let taken: Vec<String> = cli
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let mut cli = cli;
    for op in registry::ops() {
        let name = command_name(op.name());
        if !taken.contains(&name) {
            // The shared arguments' own doc would replace the op's; the summary goes last.
            cli = cli.subcommand(extra(subcommand(op.as_ref(), name)).about(op.summary()));
        }
    }
    cli
}

fn subcommand(op: &dyn OpDef, name: String) -> Command {
    let sig = op.signature();
    let mut cmd = Command::new(name).about(op.summary());
    for input in sig.inputs {
        let arg = Arg::new(input.name)
            .long(command_name(input.name))
            .value_name("ARRAY")
            .help(format!(
                "{}: FILE.npy, ARCHIVE.npz:NAME, MODEL.safetensors:NAME, - or a literal",
                input.doc
            ));
        cmd = cmd.arg(match input.kind {
            InputKind::List => arg.action(ArgAction::Append).required(true),
            InputKind::OptionalList => arg.action(ArgAction::Append),
            InputKind::Optional => arg,
            _ => arg.required(true),
        });
    }
    for attr in sig.attrs {
        let mut arg = Arg::new(attr.name)
            .long(command_name(attr.name))
            .allow_negative_numbers(true)
            .help(attr.doc);
        arg = match attr.kind {
            AttrKind::Str(choices) if !choices.is_empty() => {
                arg.value_parser(PossibleValuesParser::new(choices.iter().copied()))
            }
            AttrKind::Bool => arg.value_parser(PossibleValuesParser::new(["true", "false"])),
            AttrKind::Ints => arg.value_name("N,N,..."),
            AttrKind::Int => arg.value_name("N"),
            _ => arg.value_name("X"),
        };
        if let Some(default) = attr.default {
            arg = arg.default_value(default);
        }
        cmd = cmd.arg(arg.required(!attr.optional));
    }
    cmd
}

/// The registered op a generated subcommand runs, if `name` is one.
pub fn op_of(name: &str) -> Option<&'static dyn OpDef> {
    registry::ops()
        .iter()
        .map(|op| op.as_ref())
        .find(|op| command_name(op.name()) == name)
}

/// Runs a generated subcommand: loads its inputs, parses its attributes, runs the op.
pub fn run(op: &'static dyn OpDef, matches: &ArgMatches) -> Result<Value, CliError> {
    let sig = op.signature();
    let mut attrs = Attrs::new();
    for attr in sig.attrs {
        if let Some(text) = matches.get_one::<String>(attr.name) {
            let value = attr.parse(text).map_err(|what| {
                let flag = command_name(attr.name);
                CliError::Usage(format!("--{flag} takes {what}, got '{text}'"))
            })?;
            attrs.insert(attr.name, value);
        }
    }
    let op = op.with_attrs(&attrs)?;
    let stdin = sig
        .inputs
        .iter()
        .flat_map(|i| matches.get_many::<String>(i.name).into_iter().flatten())
        .filter(|t| *t == "-")
        .count();
    if stdin > 1 {
        return Err(CliError::Usage(
            "only one input can be read from standard input (-)".to_string(),
        ));
    }
    let mut loaded: Vec<Vec<Tensor>> = Vec::with_capacity(sig.inputs.len());
    for input in sig.inputs {
        let texts: Vec<&String> = matches
            .get_many::<String>(input.name)
            .map(|v| v.collect())
            .unwrap_or_default();
        loaded.push(
            texts
                .iter()
                .map(|t| source::load(input.name, t)?.into_tensor())
                .collect::<Result<_, _>>()?,
        );
    }
    let inputs: Vec<Input<'_>> = sig
        .inputs
        .iter()
        .zip(&loaded)
        .map(|(def, tensors)| match (def.kind, tensors.as_slice()) {
            (InputKind::List, all) => Input::List(all.iter().map(Tensor::view).collect()),
            (InputKind::OptionalList, []) => Input::None,
            (InputKind::OptionalList, all) => Input::List(all.iter().map(Tensor::view).collect()),
            (_, [one]) => Input::Tensor(one.view()),
            _ => Input::None,
        })
        .collect();
    op.run(&inputs, Out::New)?
        .ok_or_else(|| CliError::Internal("a new result was not returned".into()))
}
