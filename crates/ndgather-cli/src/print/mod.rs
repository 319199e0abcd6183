//! Printing a tensor as NumPy's `print(array)` does (`str(array)`), under a header line with
//! its shape and dtype: each element in its own type's shortest form (`0.1` for a float32
//! 0.1, not its float64 widening), columns padded to one width, lines wrapped at 75
//! characters, arrays of more than 1000 elements summarised with `...`.

mod float;
mod text;

use float::{Float, FloatFormat};
use ndarray::ArrayD;
use ndgather::{with_tensor, Tensor};

/// How arrays are printed; the defaults are NumPy's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrintOptions {
    /// At most this many digits after the point (NumPy's `precision`, 8); each value gets
    /// fewer where fewer identify it.
    pub precision: usize,
    /// Arrays of more elements than this are summarised (NumPy's `threshold`, 1000).
    pub threshold: usize,
    /// Items shown at each end of a summarised axis (NumPy's `edgeitems`, 3).
    pub edge_items: usize,
    /// Lines are wrapped at this many characters (NumPy's `linewidth`, 75).
    pub line_width: usize,
}

impl Default for PrintOptions {
    fn default() -> PrintOptions {
        PrintOptions {
            precision: 8,
            threshold: 1000,
            edge_items: 3,
            line_width: 75,
        }
    }
}

/// `shape=(2, 3) dtype=float32` and the values, as NumPy's `print(array)`.
///
/// ```
/// use ndgather_cli::print::{format, PrintOptions};
/// let t = ndgather::Tensor::from_shape_vec(&[3], vec![0.1f32, 1.0, -2.5]).unwrap();
/// assert_eq!(format(&t, &PrintOptions::default()), "shape=(3,) dtype=float32\n[ 0.1  1.  -2.5]");
/// ```
pub fn format(t: &Tensor, options: &PrintOptions) -> String {
    let dims: Vec<String> = t.shape().iter().map(ToString::to_string).collect();
    let shape = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    format!(
        "shape={shape} dtype={}\n{}",
        t.dtype(),
        array_str(t, options)
    )
}

/// The values as NumPy's `str(array)` prints them.
pub fn array_str(t: &Tensor, options: &PrintOptions) -> String {
    let shape = t.shape();
    if shape.is_empty() {
        return scalar_str(t);
    }
    if t.is_empty() {
        return "[]".to_string();
    }
    let summarize = t.len() > options.threshold;
    let axes: Vec<Shown> = shape
        .iter()
        .map(|&n| Shown::of(n, summarize, options.edge_items))
        .collect();
    let positions = positions(shape, &axes);
    let items = formatted(t, &positions, options);
    let layout = Layout {
        items: &items,
        axes: &axes,
        edge: options.edge_items,
    };
    // Each level of nesting takes a character off the width, which may so go below zero
    // (then every word after the first goes on its own line, as in NumPy).
    let limit = isize::try_from(options.line_width).unwrap_or(isize::MAX);
    layout.array(0, 0, " ", limit)
}

/// Which items of an axis of length `len` are shown: all, or `edge` at each end.
#[derive(Copy, Clone, Debug)]
struct Shown {
    len: usize,
    gap: bool,
    edge: usize,
}

impl Shown {
    fn of(len: usize, summarize: bool, edge: usize) -> Shown {
        Shown {
            len,
            gap: summarize && len > 2 * edge,
            edge,
        }
    }

    fn count(self) -> usize {
        if self.gap {
            2 * self.edge
        } else {
            self.len
        }
    }

    /// The index along the axis of the `k`th shown item.
    fn index(self, k: usize) -> usize {
        if self.gap && k >= self.edge {
            self.len - 2 * self.edge + k
        } else {
            k
        }
    }
}

/// The row-major positions of the shown elements, in the order they are printed.
fn positions(shape: &[usize], axes: &[Shown]) -> Vec<usize> {
    let mut out = vec![0usize];
    let mut stride = 1;
    let mut strides = vec![0; shape.len()];
    for (axis, &n) in shape.iter().enumerate().rev() {
        strides[axis] = stride;
        stride *= n;
    }
    for (shown, &stride) in axes.iter().zip(&strides) {
        out = out
            .iter()
            .flat_map(|&base| (0..shown.count()).map(move |k| base + shown.index(k) * stride))
            .collect();
    }
    out
}

fn pick<T: Clone>(a: &ArrayD<T>, positions: &[usize]) -> Vec<T> {
    let a = a.as_standard_layout();
    let data = a.as_slice().unwrap_or(&[]);
    positions
        .iter()
        .filter_map(|&p| data.get(p).cloned())
        .collect()
}

fn ints<T: Copy + Into<i128>>(a: &ArrayD<T>, positions: &[usize]) -> Vec<String> {
    let values: Vec<i128> = pick(a, positions).into_iter().map(Into::into).collect();
    let width = values
        .iter()
        .map(|v| v.to_string().len())
        .max()
        .unwrap_or(0);
    values.iter().map(|v| format!("{v:>width$}")).collect()
}

fn floats(values: Vec<Float>, options: &PrintOptions) -> Vec<String> {
    let format = FloatFormat::new(&values, options.precision, false);
    values.into_iter().map(|v| format.format(v)).collect()
}

fn complexes(parts: Vec<(Float, Float)>, options: &PrintOptions) -> Vec<String> {
    let (re, im): (Vec<Float>, Vec<Float>) = parts.into_iter().unzip();
    let re_format = FloatFormat::new(&re, options.precision, false);
    let im_format = FloatFormat::new(&im, options.precision, true);
    re.into_iter()
        .zip(im)
        .map(|(r, i)| {
            let i = im_format.format(i);
            let end = i.trim_end().len();
            format!("{}{}j{}", re_format.format(r), &i[..end], &i[end..])
        })
        .collect()
}

/// The shown elements, each formatted as NumPy formats it among the others.
fn formatted(t: &Tensor, at: &[usize], options: &PrintOptions) -> Vec<String> {
    fn pair<T: ndgather::FloatValue>(re: T, im: T) -> (Float, Float) {
        (Float::new(re), Float::new(im))
    }
    with_tensor!(Tensor, t, index a => ints(a, at), else _d =>
    with_tensor!(Tensor, t, float a => floats(pick(a, at).into_iter().map(Float::new).collect(), options),
    else _d => match t {
        Tensor::Bool(a) => pick(a, at)
            .into_iter()
            .map(|v| if v { " True" } else { "False" }.to_string())
            .collect(),
        Tensor::C64(a) => complexes(pick(a, at).into_iter().map(|v| pair(v.re, v.im)).collect(), options),
        Tensor::C128(a) => complexes(pick(a, at).into_iter().map(|v| pair(v.re, v.im)).collect(), options),
        Tensor::String(a) => at
            .iter()
            .filter_map(|&p| a.get(p))
            .map(text::str_repr)
            .collect(),
        Tensor::Bytes(a) => at
            .iter()
            .filter_map(|&p| a.get(p))
            .map(text::bytes_repr)
            .collect(),
        // The integers and floats were formatted above (`tests/every_dtype.rs` prints every
        // dtype of the table, so one left out of both roles shows there).
        _ => Vec::new(),
    }))
}

/// A 0-d tensor as NumPy's `str` of its scalar: `1.5`, `(1+2j)`, `abc`, `b'abc'`.
fn scalar_str(t: &Tensor) -> String {
    fn one<T: Clone>(a: &ArrayD<T>) -> Option<T> {
        a.first().cloned()
    }
    fn complex(re: Float, im: Float) -> String {
        let imag = float::scalar(im, false, true);
        if re.value() == 0.0 && !re.value().is_sign_negative() {
            return format!("{imag}j");
        }
        let imag = float::scalar(im, true, true);
        format!("({}{imag}j)", float::scalar(re, false, true))
    }
    let text = with_tensor!(Tensor, t, index a => one(a).map(|v| v.to_string()), else _d =>
    with_tensor!(Tensor, t, float a => one(a).map(|v| float::scalar(Float::new(v), false, false)),
    else _d => match t {
        Tensor::Bool(a) => one(a).map(|v| if v { "True" } else { "False" }.to_string()),
        Tensor::C64(a) => one(a).map(|v| complex(Float::new(v.re), Float::new(v.im))),
        Tensor::C128(a) => one(a).map(|v| complex(Float::new(v.re), Float::new(v.im))),
        Tensor::String(a) => a.get(0).map(str::to_string),
        Tensor::Bytes(a) => a.get(0).map(text::bytes_repr),
        // As in `formatted`.
        _ => None,
    }));
    text.unwrap_or_default()
}

/// NumPy's `_formatArray`: nested brackets, rows wrapped at the line width.
struct Layout<'a> {
    items: &'a [String],
    axes: &'a [Shown],
    edge: usize,
}

/// Python's `len`: characters, not bytes.
fn width(s: &str) -> usize {
    s.chars().count()
}

/// Adds `word` to `line`, first moving to a new line if it would pass `limit` (NumPy's
/// `_extendLine`).
fn extend_line(s: &mut String, line: &mut String, word: &str, limit: isize, indent: &str) {
    let fits = usize::try_from(limit).is_ok_and(|limit| width(line) + width(word) <= limit);
    if !fits && width(line) > width(indent) {
        s.push_str(line.trim_end());
        s.push('\n');
        *line = indent.to_string();
    }
    line.push_str(word);
}

impl Layout<'_> {
    /// The array from shown item `offset` on, at `axis`, indented by `indent`, in `limit`
    /// characters.
    fn array(&self, axis: usize, offset: usize, indent: &str, limit: isize) -> String {
        let Some(shown) = self.axes.get(axis) else {
            return self.items.get(offset).cloned().unwrap_or_default();
        };
        let block: usize = self.axes[axis + 1..].iter().map(|a| a.count()).product();
        let count = shown.count();
        let leading = if shown.gap { self.edge } else { 0 };
        let inner_indent = format!("{indent} ");
        let inner_limit = limit.saturating_sub(1);
        let inner = |k: usize| self.array(axis + 1, offset + k * block, &inner_indent, inner_limit);
        // The shown items in order, with `None` where the summary's `...` goes.
        let order = (0..leading)
            .map(Some)
            .chain(shown.gap.then_some(None))
            .chain((leading..count).map(Some));
        let mut s = String::new();
        let rest = self.axes.len() - axis;
        if rest == 1 {
            let mut line = indent.to_string();
            let mut words = order.peekable();
            while let Some(k) = words.next() {
                let word = k.map_or_else(|| "...".to_string(), inner);
                extend_line(&mut s, &mut line, &word, inner_limit, indent);
                if words.peek().is_some() {
                    line.push(' ');
                }
            }
            s.push_str(&line);
        } else {
            let separator = "\n".repeat(rest - 1);
            let mut rows = order.peekable();
            while let Some(k) = rows.next() {
                s.push_str(indent);
                s.push_str(&k.map_or_else(|| "...".to_string(), inner));
                if rows.peek().is_some() {
                    s.push_str(&separator);
                }
            }
        }
        format!("[{}]", &s[indent.len()..])
    }
}
