//! Ragged operands (`--ragged`): a ragged tensor is a `.npz` archive of its flat `values`
//! and its `row_splits` (then `row_splits_1`, `row_splits_2`, … for more ragged dimensions,
//! outermost first), as `np.savez(path, values=rt.flat_values, row_splits=rt.row_splits)`
//! writes it. A ragged result is written the same way, or printed as its values and splits;
//! so is any result of several tensors (a gradient per shard), by the names
//! `Value::into_parts` gives.

use crate::archive;
use crate::error::CliError;
use crate::npy;
use crate::print::{array_str, format, PrintOptions};
use crate::source;
use ndgather::registry::{Input, Value};
use ndgather::{Op, OpDef, Out, RaggedView, RowSplits, Tensor};
use std::io::Write;
use std::path::Path;

/// The name of the archive member holding splits `k` (outermost: 0).
fn member(k: usize) -> String {
    match k {
        0 => "row_splits".to_string(),
        k => format!("row_splits_{k}"),
    }
}

/// An operand as loaded: its values, and its splits where it is ragged.
pub struct Loaded {
    values: Tensor,
    splits: Vec<Tensor>,
}

impl Loaded {
    /// A ragged archive's members (`ragged`), or any array argument as a dense operand.
    pub fn load(arg: &'static str, text: &str, ragged: bool) -> Result<Loaded, CliError> {
        if !ragged {
            let values = source::load(arg, text)?.into_tensor()?;
            return Ok(Loaded {
                values,
                splits: vec![],
            });
        }
        if !(text.ends_with(".npz") && Path::new(text).is_file()) {
            return Err(CliError::Usage(format!(
                "--ragged {arg}: {text} is not a .npz file; a ragged {arg} is an archive of \
                 `values` and `row_splits` (np.savez(path, values=..., row_splits=...))"
            )));
        }
        let names = archive::npz_names(Path::new(text))?;
        let load = |name: &str| source::load(arg, &format!("{text}:{name}"))?.into_tensor();
        let values = load("values")?;
        let mut splits = vec![load("row_splits")?];
        while names.contains(&member(splits.len())) {
            splits.push(load(&member(splits.len()))?);
        }
        for s in &splits {
            if !matches!(s, Tensor::I32(a) if a.ndim() == 1)
                && !matches!(s, Tensor::I64(a) if a.ndim() == 1)
            {
                return Err(CliError::npy(
                    text,
                    format!(
                        "row splits must be 1-D int32 or int64, got {} of shape {:?}",
                        s.dtype(),
                        s.shape()
                    ),
                ));
            }
        }
        Ok(Loaded { values, splits })
    }

    /// The operand: the values, or the checked ragged tensor.
    pub fn operand(&self) -> Result<Input<'_>, CliError> {
        if self.splits.is_empty() {
            return Ok(Input::Tensor(self.values.view()));
        }
        let splits = self
            .splits
            .iter()
            .map(|s| RowSplits::from_view(&s.view()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Input::Ragged(RaggedView::new(self.values.view(), splits)?))
    }
}

/// Runs `op` on the loaded operands, through the registered op's `run`.
pub fn run(op: &Op, params: &Loaded, indices: &Loaded) -> Result<Value, CliError> {
    OpDef::run(op, &[params.operand()?, indices.operand()?], Out::New)?
        .ok_or_else(|| CliError::Internal("a new result was not returned".into()))
}

/// The result printed: a dense one as any array, a ragged one as its values and splits,
/// one of several tensors (a gradient per shard) as each, named.
///
/// ```
/// use ndgather::{ndarray::array, registry::Value, Ragged, RowSplits, Tensor};
/// use ndgather_cli::{print::PrintOptions, ragged::print};
/// let r = Ragged {
///     values: Tensor::from(array![3.5f32, 1.5, 2.5].into_dyn()),
///     splits: vec![RowSplits::from(vec![0i64, 1, 3])],
/// };
/// assert_eq!(print(Value::Ragged(r), &PrintOptions::default()),
///            "ragged_rank=1 values: shape=(3,) dtype=float32\n\
///             values:\n[3.5 1.5 2.5]\nrow_splits:\n[0 1 3]");
/// ```
pub fn print(result: Value, options: &PrintOptions) -> String {
    let mut text = match &result {
        Value::Ragged(r) if !r.splits.is_empty() => {
            let header = format(&r.values, options);
            let header = header.lines().next().unwrap_or_default().to_string();
            format!("ragged_rank={} values: {header}\n", r.ragged_rank())
        }
        _ => String::new(),
    };
    let parts = result.into_parts();
    if let [(name, one)] = parts.as_slice() {
        if name.is_empty() || name == "values" {
            return format(one, options);
        }
    }
    let each: Vec<String> = parts
        .iter()
        .map(|(name, t)| format!("{name}:\n{}", array_str(t, options)))
        .collect();
    text.push_str(&each.join("\n"));
    text
}

/// Writes the result to `path`: a dense one as `.npy` (by `save`), one of several tensors
/// as a `.npz` of them (a ragged one: its values and splits).
pub fn save(
    result: Value,
    path: &Path,
    save: impl Fn(&Tensor, &Path) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let ragged = matches!(&result, Value::Ragged(_));
    let mut parts = result.into_parts();
    if let [(name, _)] = parts.as_slice() {
        if name.is_empty() || name == "values" {
            let (_, one) = parts.remove(0);
            return save(&one, path);
        }
    }
    let label = path.display().to_string();
    if path.extension().is_none_or(|e| e != "npz") {
        let what = match ragged {
            true => "the result is ragged; write it to a .npz (its values and row_splits)",
            false => "the result is several arrays; write it to a .npz",
        };
        return Err(CliError::Usage(format!("-o {label}: {what}")));
    }
    crate::output::write_file(path, |file| write_npz(file, &label, &parts))
}

/// Writes named tensors as a `.npz`, each member stored.
fn write_npz(
    file: &mut std::fs::File,
    label: &str,
    members: &[(String, Tensor)],
) -> Result<(), CliError> {
    let mut zip = zip::ZipWriter::new(file);
    let stored = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(true);
    let bad = |e: zip::result::ZipError| CliError::npy(label, format!("writing .npz: {e}"));
    for (name, tensor) in members {
        zip.start_file(format!("{name}.npy"), stored).map_err(bad)?;
        npy::write(&mut zip, label, tensor, &npy::type_str(tensor))?;
    }
    zip.finish()
        .map_err(bad)?
        .flush()
        .map_err(|e| CliError::io(label, e))
}
