//! Ragged operands (`--ragged`): a ragged tensor is a `.npz` archive of its flat `values`
//! and its `row_splits` (then `row_splits_1`, `row_splits_2`, … for more ragged dimensions,
//! outermost first), as `np.savez(path, values=rt.flat_values, row_splits=rt.row_splits)`
//! writes it. A ragged result is written the same way, or printed as its values and splits.

use crate::archive;
use crate::error::CliError;
use crate::npy;
use crate::print::{array_str, format, PrintOptions};
use crate::source;
use ndgather::{Op, Ragged, RaggedOperand, RaggedView, RowSplits, Tensor};
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
    pub fn operand(&self) -> Result<RaggedOperand<'_>, CliError> {
        if self.splits.is_empty() {
            return Ok(RaggedOperand::from(self.values.view()));
        }
        let splits = self
            .splits
            .iter()
            .map(|s| match s {
                Tensor::I32(a) => a.as_slice().map(RowSplits::from),
                Tensor::I64(a) => a.as_slice().map(RowSplits::from),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| CliError::Internal("row splits are 1-D int arrays".into()))?;
        Ok(RaggedOperand::Ragged(RaggedView::new(
            self.values.view(),
            splits,
        )?))
    }
}

/// Runs `op` on the loaded operands.
pub fn run(op: &Op, params: &Loaded, indices: &Loaded) -> Result<Ragged, CliError> {
    Ok(op.run_ragged(params.operand()?, indices.operand()?)?)
}

/// A splits vector as a tensor, to write or print.
fn splits_tensor(s: &RowSplits) -> Tensor {
    match s {
        RowSplits::I32(v) => Tensor::from(ndarray::Array1::from(v.to_vec()).into_dyn()),
        RowSplits::I64(v) => Tensor::from(ndarray::Array1::from(v.to_vec()).into_dyn()),
    }
}

/// The result printed: a dense one as any array, a ragged one as its values and splits.
///
/// ```
/// use ndgather::{ndarray::array, Ragged, RowSplits, Tensor};
/// use ndgather_cli::{print::PrintOptions, ragged::print};
/// let r = Ragged {
///     values: Tensor::from(array![3.5f32, 1.5, 2.5].into_dyn()),
///     splits: vec![RowSplits::from(vec![0i64, 1, 3])],
/// };
/// assert_eq!(print(&r, &PrintOptions::default()),
///            "ragged_rank=1 values: shape=(3,) dtype=float32\n\
///             values:\n[3.5 1.5 2.5]\nrow_splits:\n[0 1 3]");
/// ```
pub fn print(result: &Ragged, options: &PrintOptions) -> String {
    if result.splits.is_empty() {
        return format(&result.values, options);
    }
    let header = format(&result.values, options);
    let header = header.lines().next().unwrap_or_default();
    let mut text = format!(
        "ragged_rank={} values: {header}\nvalues:\n{}",
        result.ragged_rank(),
        array_str(&result.values, options)
    );
    for (k, s) in result.splits.iter().enumerate() {
        text.push_str(&format!(
            "\n{}:\n{}",
            member(k),
            array_str(&splits_tensor(s), options)
        ));
    }
    text
}

/// Writes the result to `path`: a ragged one as a `.npz` of its values and splits, a dense
/// one as `.npy` (by `save`).
pub fn save(
    result: &Ragged,
    path: &Path,
    save: impl Fn(&Tensor, &Path) -> Result<(), CliError>,
) -> Result<(), CliError> {
    if result.splits.is_empty() {
        return save(&result.values, path);
    }
    let label = path.display().to_string();
    if path.extension().is_none_or(|e| e != "npz") {
        return Err(CliError::Usage(format!(
            "-o {label}: the result is ragged; write it to a .npz (its values and row_splits)"
        )));
    }
    crate::output::write_file(path, |file| write_npz(file, &label, result))
}

/// Writes a ragged result as a `.npz` of its values and splits, each member stored.
fn write_npz(file: &mut std::fs::File, label: &str, result: &Ragged) -> Result<(), CliError> {
    let mut zip = zip::ZipWriter::new(file);
    let stored = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(true);
    let mut members = vec![("values".to_string(), result.values.clone())];
    members.extend(
        result
            .splits
            .iter()
            .enumerate()
            .map(|(k, s)| (member(k), splits_tensor(s))),
    );
    let bad = |e: zip::result::ZipError| CliError::npy(label, format!("writing .npz: {e}"));
    for (name, tensor) in &members {
        zip.start_file(format!("{name}.npy"), stored).map_err(bad)?;
        npy::write(&mut zip, label, tensor, &npy::type_str(tensor))?;
    }
    zip.finish()
        .map_err(bad)?
        .flush()
        .map_err(|e| CliError::io(label, e))
}
