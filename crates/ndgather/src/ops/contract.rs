//! The op contract: what every op of the family is to a front end. An op is a value that
//! implements [`OpDef`]: its name, its inputs and typed attributes (parsed from a generic
//! [`Attrs`] map), shape and dtype inference on partly known [`Fact`]s, `run` on dense or
//! ragged [`Input`]s into an [`Out`], and its gradient where it has one. The registry
//! ([`crate::registry`]) lists one value of each op; a front end looks an op up by name,
//! gives it the attributes it was called with ([`OpDef::with_attrs`]) and runs it.
//!
//! ```
//! use ndgather::ndarray::array;
//! use ndgather::registry::{self, Attr, Attrs, Input};
//! use ndgather::{Out, Tensor};
//!
//! let op = registry::find("gather").unwrap().with_attrs(&Attrs::new().with("axis", Attr::Int(1)))?;
//! let params = Tensor::from(array![[1i32, 2, 3], [4, 5, 6]].into_dyn());
//! let indices = Tensor::from(array![2i64, 0].into_dyn());
//! let out = op.run(&[Input::from(params.view()), Input::from(indices.view())], Out::New)?;
//! assert_eq!(out.unwrap().into_dense()?, Tensor::from(array![[3i32, 1], [6, 4]].into_dyn()));
//! # Ok::<(), ndgather::Error>(())
//! ```

use crate::mem::raw_view::RawView;
use crate::ops::grad::IndexedSlices;
use crate::ops::Out;
use crate::shape::Shape;
use crate::types::dtype::{DType, Tensor, TensorElement, TensorView};
use crate::types::error::{Error, Result};
use crate::types::index::BadIndices;
use crate::types::ragged::{Ragged, RaggedView};
use crate::types::value::FillValue;
use crate::with_tensor;
use smallvec::SmallVec;
use std::borrow::Cow;
use std::fmt;
use std::mem::MaybeUninit;

/// An attribute's value, as a front end passes it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Attr {
    /// An integer: an axis, a count, a size.
    Int(i64),
    /// A floating-point number: a norm, a fill value.
    Float(f64),
    /// A flag.
    Bool(bool),
    /// A name: a policy, a mode, a reduction (one of an op's own choices is not copied).
    Str(Cow<'static, str>),
    /// A list of integers: a shape.
    Ints(Vec<i64>),
    /// Raw bytes: a fill element in the operand's own dtype and byte order.
    Bytes(Vec<u8>),
}

impl fmt::Display for Attr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Attr::Int(v) => write!(f, "{v}"),
            Attr::Float(v) => write!(f, "{v}"),
            Attr::Bool(v) => write!(f, "{v}"),
            Attr::Str(v) => write!(f, "{v:?}"),
            Attr::Ints(v) => write!(f, "{v:?}"),
            Attr::Bytes(v) => write!(f, "<{} bytes>", v.len()),
        }
    }
}

impl Attr {
    /// The attribute as the text that [`AttrDef::parse`] reads back: the form in which a
    /// front end that carries attributes as text (PyTorch's ops) passes a value the core
    /// made, such as a tangent's fill.
    ///
    /// ```
    /// use ndgather::registry::{self, Attr};
    /// let fill = registry::find("gather")?.signature().attrs.iter()
    ///     .find(|a| a.name == "fill_value").unwrap();
    /// for value in [Attr::Int(-3), Attr::Float(0.1), Attr::Bytes(vec![0, 255])] {
    ///     assert_eq!(fill.parse(&value.text()), Ok(value));
    /// }
    /// assert_eq!(Attr::Ints(vec![2, -1]).text(), "2,-1");
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    pub fn text(&self) -> String {
        match self {
            Attr::Int(v) => v.to_string(),
            // (Rust's shortest text that reads back as the same number.)
            Attr::Float(v) => format!("{v:?}"),
            Attr::Bool(v) => v.to_string(),
            Attr::Str(v) => v.to_string(),
            Attr::Ints(v) => v.iter().map(i64::to_string).collect::<Vec<_>>().join(","),
            Attr::Bytes(v) => {
                let hex: String = v.iter().map(|b| format!("{b:02x}")).collect();
                format!("bytes:{hex}")
            }
        }
    }
}

/// The kind of value an attribute takes, for front ends that parse text (the CLI) and for
/// checks of a generic map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AttrKind {
    /// [`Attr::Int`].
    Int,
    /// [`Attr::Float`].
    Float,
    /// [`Attr::Bool`].
    Bool,
    /// [`Attr::Str`], one of the listed choices where there are any.
    Str(&'static [&'static str]),
    /// [`Attr::Ints`].
    Ints,
    /// A fill value: [`Attr::Float`], [`Attr::Int`] or [`Attr::Bytes`].
    Fill,
}

/// One attribute of an op: its name (the library's own, as front ends spell it), its kind,
/// its default (`None`: required, or absent when [`AttrDef::optional`]), and a line of doc.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct AttrDef {
    /// The attribute's name.
    pub name: &'static str,
    /// The kind of value it takes.
    pub kind: AttrKind,
    /// The default, as text a front end can show (`None`: no default).
    pub default: Option<&'static str>,
    /// Whether the attribute may be absent (an optional value with no default).
    pub optional: bool,
    /// What it means, in one line.
    pub doc: &'static str,
    /// Whether a graph may give it as a tensor's value when it runs, as TensorFlow's op
    /// takes it as an input ([`OpDef::infer_fed`]).
    pub fed: bool,
}

impl AttrDef {
    /// A required attribute.
    pub const fn required(name: &'static str, kind: AttrKind, doc: &'static str) -> AttrDef {
        AttrDef {
            name,
            kind,
            default: None,
            optional: false,
            doc,
            fed: false,
        }
    }

    /// An attribute with a default, given as the text a front end shows.
    pub const fn with_default(
        name: &'static str,
        kind: AttrKind,
        default: &'static str,
        doc: &'static str,
    ) -> AttrDef {
        AttrDef {
            name,
            kind,
            default: Some(default),
            optional: true,
            doc,
            fed: false,
        }
    }

    /// The value that `text` gives this attribute, read as front ends that hold text read it
    /// (the CLI's flags, the strings of Java's generic builder): integers, numbers, `true`
    /// or `false`, integers separated by commas, names; a fill value is an integer where it
    /// reads as one, and an element's own bytes as `bytes:` and their hex digits.
    ///
    /// ```
    /// use ndgather::registry::{self, Attr};
    /// let op = registry::find("unsorted_segment_max")?;
    /// let n = op.signature().attrs.iter().find(|a| a.name == "num_segments").unwrap();
    /// assert_eq!(n.parse("3"), Ok(Attr::Int(3)));
    /// assert_eq!(n.parse("three"), Err("an integer"));
    /// let fill = registry::find("gather")?.signature().attrs.iter()
    ///     .find(|a| a.name == "fill_value").unwrap();
    /// assert_eq!(fill.parse("-1"), Ok(Attr::Int(-1)));
    /// assert_eq!(fill.parse("bytes:ff00"), Ok(Attr::Bytes(vec![255, 0])));
    /// assert!(fill.parse("bytes:f").is_err());
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    ///
    /// # Errors
    /// What the attribute takes (`"an integer"`, …), for the front end to word.
    pub fn parse(&self, text: &str) -> std::result::Result<Attr, &'static str> {
        Ok(match self.kind {
            AttrKind::Int => Attr::Int(text.trim().parse().map_err(|_| "an integer")?),
            AttrKind::Fill if text.trim().starts_with("bytes:") => {
                let hex = &text.trim().as_bytes()["bytes:".len()..];
                let digit = |c: u8| (c as char).to_digit(16);
                Attr::Bytes(
                    hex.chunks(2)
                        .map(|pair| match pair {
                            [hi, lo] => Some((digit(*hi)? * 16 + digit(*lo)?) as u8),
                            _ => None,
                        })
                        .collect::<Option<Vec<u8>>>()
                        .ok_or("an element's bytes as bytes: and hex digits")?,
                )
            }
            AttrKind::Float | AttrKind::Fill => match text.trim().parse::<i64>() {
                Ok(i) if self.kind == AttrKind::Fill => Attr::Int(i),
                _ => Attr::Float(text.trim().parse().map_err(|_| "a number")?),
            },
            AttrKind::Bool => match text.trim() {
                "true" => Attr::Bool(true),
                "false" => Attr::Bool(false),
                _ => return Err("true or false"),
            },
            AttrKind::Ints => Attr::Ints(
                text.split(',')
                    .filter(|s| !s.trim().is_empty())
                    .map(|s| s.trim().parse())
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|_| "integers separated by commas")?,
            ),
            AttrKind::Str(_) => Attr::Str(text.to_string().into()),
        })
    }

    /// The attribute, which a graph may give as a tensor's value when it runs
    /// ([`AttrDef::fed`]).
    pub const fn fed(self) -> AttrDef {
        AttrDef { fed: true, ..self }
    }

    /// An attribute that may be absent, with no default.
    pub const fn optional(name: &'static str, kind: AttrKind, doc: &'static str) -> AttrDef {
        AttrDef {
            name,
            kind,
            default: None,
            optional: true,
            doc,
            fed: false,
        }
    }
}

/// How an input is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InputKind {
    /// One dense tensor.
    Tensor,
    /// One dense tensor, or a ragged one.
    MaybeRagged,
    /// One dense tensor, or a ragged one, whose elements the op moves without reading
    /// them: it also takes [`Input::Records`], elements of any fixed size as their bytes.
    /// An op that writes a tensor takes the values it writes only from such inputs, if it
    /// has any (`put_along_axis`), so that a front end may lend elements it cannot name
    /// (Python objects, datetimes) as units of their size.
    Elements,
    /// One dense tensor, or none.
    Optional,
    /// A list of dense tensors (an embedding table's shards).
    List,
    /// A list of dense tensors, or none (a ragged operand's row splits, for a dense one
    /// none or an empty list).
    OptionalList,
}

impl InputKind {
    /// Whether the input may be none (and so left out at the end of a run's inputs).
    pub fn may_be_none(self) -> bool {
        matches!(self, InputKind::Optional | InputKind::OptionalList)
    }
}

/// The bad-index policy attribute the gather, write and lookup ops share.
pub(crate) const BAD_INDICES: AttrDef = AttrDef::with_default(
    "bad_indices",
    AttrKind::Str(&["error", "ignore", "clamp", "negative", "wrap", "fill"]),
    "error",
    "what an out-of-range index does",
);

/// One input of an op: its name (the library's own) and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InputDef {
    /// The input's name.
    pub name: &'static str,
    /// How it is given.
    pub kind: InputKind,
    /// What it is, in one line.
    pub doc: &'static str,
}

impl InputDef {
    /// An input of `kind`.
    pub const fn new(name: &'static str, kind: InputKind, doc: &'static str) -> InputDef {
        InputDef { name, kind, doc }
    }
}

/// An op's signature: its inputs in order, and its attributes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signature {
    /// The inputs, in the order `run` takes them.
    pub inputs: &'static [InputDef],
    /// The attributes.
    pub attrs: &'static [AttrDef],
}

impl Signature {
    /// The fewest inputs a run takes: optional inputs at the end may be left out, so that a
    /// caller written before one was added still runs.
    ///
    /// ```
    /// let sig = ndgather::registry::find("embedding_lookup_sparse")?.signature();
    /// assert_eq!((sig.least_inputs(), sig.inputs.len()), (4, 7));
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    pub fn least_inputs(&self) -> usize {
        self.inputs
            .iter()
            .rposition(|d| !d.kind.may_be_none())
            .map_or(0, |k| k + 1)
    }

    /// How many inputs a run takes, in words: `"2"`, or `"4 to 7"` where optional inputs at
    /// the end may be left out.
    pub fn input_count(&self) -> String {
        match (self.least_inputs(), self.inputs.len()) {
            (least, all) if least < all => format!("{least} to {all}"),
            (_, all) => all.to_string(),
        }
    }
}

/// A map of attribute values by name, as a front end collects them. Held inline up to four
/// names, in the order set: a call from a front end allocates nothing for them.
#[derive(Debug, Clone, Default)]
pub struct Attrs(SmallVec<[(Cow<'static, str>, Attr); 4]>);

impl Attrs {
    /// No attributes.
    pub fn new() -> Attrs {
        Attrs::default()
    }

    /// With `name` set to `value`.
    ///
    /// ```
    /// use ndgather::registry::{Attr, Attrs};
    /// let attrs = Attrs::new().with("axis", Attr::Int(1)).with("axis", Attr::Int(2));
    /// assert_eq!(attrs.get("axis"), Some(&Attr::Int(2)));
    /// ```
    pub fn with(mut self, name: impl Into<Cow<'static, str>>, value: Attr) -> Attrs {
        self.insert(name, value);
        self
    }

    /// Sets `name` to `value` (a name the op's signature spells, as `&'static str`, is not
    /// copied).
    pub fn insert(&mut self, name: impl Into<Cow<'static, str>>, value: Attr) {
        let name = name.into();
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => *v = value,
            None => self.0.push((name, value)),
        }
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&Attr> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The names set, in the order they were first set.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_ref())
    }
}

/// Equal when the same names hold the same values, whatever order they were set in.
impl PartialEq for Attrs {
    fn eq(&self, other: &Attrs) -> bool {
        self.0.len() == other.0.len() && self.0.iter().all(|(n, v)| other.get(n) == Some(v))
    }
}

/// Parses the attributes an op was given against its signature: every name known, every
/// value of its kind, every required one present. The typed getters then read them.
pub(crate) struct Parsed<'a> {
    op: &'static str,
    attrs: &'a Attrs,
}

impl<'a> Parsed<'a> {
    /// Checks `attrs` against `signature`.
    pub(crate) fn new(op: &'static str, signature: &Signature, attrs: &'a Attrs) -> Result<Self> {
        for name in attrs.names() {
            if !signature.attrs.iter().any(|a| a.name == name) {
                let known: Vec<&str> = signature.attrs.iter().map(|a| a.name).collect();
                return Err(attr_error(
                    op,
                    name,
                    format!("unknown attribute; {op} takes {}", known.join(", ")),
                ));
            }
        }
        for def in signature.attrs {
            match attrs.get(def.name) {
                None if !def.optional => {
                    return Err(attr_error(op, def.name, "is required".into()))
                }
                None => {}
                Some(value) => check_kind(op, def, value)?,
            }
        }
        Ok(Parsed { op, attrs })
    }

    /// An integer attribute, or `default`.
    pub(crate) fn int(&self, name: &str, default: i64) -> i64 {
        self.opt_int(name).unwrap_or(default)
    }

    /// An integer attribute, if set.
    pub(crate) fn opt_int(&self, name: &str) -> Option<i64> {
        match self.attrs.get(name) {
            Some(Attr::Int(v)) => Some(*v),
            _ => None,
        }
    }

    /// A non-negative integer attribute as a size.
    pub(crate) fn size(&self, name: &'static str) -> Result<Option<usize>> {
        self.opt_int(name)
            .map(|v| {
                usize::try_from(v)
                    .map_err(|_| attr_error(self.op, name, format!("must be >= 0, got {v}")))
            })
            .transpose()
    }

    /// A float attribute, if set (an integer is taken as a float).
    pub(crate) fn opt_float(&self, name: &str) -> Option<f64> {
        match self.attrs.get(name) {
            Some(Attr::Float(v)) => Some(*v),
            Some(Attr::Int(v)) => Some(*v as f64),
            _ => None,
        }
    }

    /// A flag, or `default`.
    pub(crate) fn flag(&self, name: &str, default: bool) -> bool {
        match self.attrs.get(name) {
            Some(Attr::Bool(v)) => *v,
            _ => default,
        }
    }

    /// A name attribute, or `default`.
    pub(crate) fn str(&self, name: &str, default: &'a str) -> &'a str {
        match self.attrs.get(name) {
            Some(Attr::Str(v)) => v,
            _ => default,
        }
    }

    /// A list of integers, if set.
    pub(crate) fn ints(&self, name: &str) -> Option<&'a [i64]> {
        match self.attrs.get(name) {
            Some(Attr::Ints(v)) => Some(v),
            _ => None,
        }
    }

    /// A shape given as a list of integers (empty if unset); an error for a negative size.
    pub(crate) fn shape(&self, name: &'static str) -> Result<Vec<usize>> {
        let given = self.ints(name).unwrap_or_default();
        given
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| {
                attr_error(
                    self.op,
                    name,
                    format!("must not have negative sizes, got {given:?}"),
                )
            })
    }

    /// The bad-index policy `bad_indices`, or `default`.
    pub(crate) fn policy(&self, default: BadIndices) -> Result<BadIndices> {
        match self.attrs.get("bad_indices") {
            Some(Attr::Str(name)) => BadIndices::from_name(name).ok_or_else(|| {
                attr_error(
                    self.op,
                    "bad_indices",
                    format!(
                        "unknown policy {name:?}; choose one of {}",
                        BadIndices::ALL
                            .iter()
                            .map(|p| p.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            }),
            _ => Ok(default),
        }
    }

    /// The fill value `fill_value`, if set: a number, or an element's bytes.
    pub(crate) fn fill(&self) -> Result<Option<FillValue>> {
        Ok(match self.attrs.get("fill_value") {
            Some(Attr::Float(v)) => Some(FillValue::float(*v)),
            Some(Attr::Int(v)) => Some(FillValue::Int(i128::from(*v))),
            Some(Attr::Bytes(b)) => Some(FillValue::bytes(b).ok_or_else(|| {
                attr_error(
                    self.op,
                    "fill_value",
                    format!("{} bytes are no element", b.len()),
                )
            })?),
            _ => None,
        })
    }
}

/// `'a', 'b' or 'c'`, as TensorFlow lists the names an argument takes.
fn one_of(choices: &[&str]) -> String {
    let quoted: Vec<String> = choices.iter().map(|c| format!("'{c}'")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

fn check_kind(op: &'static str, def: &AttrDef, value: &Attr) -> Result<()> {
    let ok = match (def.kind, value) {
        (AttrKind::Int, Attr::Int(_))
        | (AttrKind::Float, Attr::Float(_) | Attr::Int(_))
        | (AttrKind::Bool, Attr::Bool(_))
        | (AttrKind::Ints, Attr::Ints(_))
        | (AttrKind::Fill, Attr::Float(_) | Attr::Int(_) | Attr::Bytes(_)) => true,
        (AttrKind::Str(choices), Attr::Str(s)) => {
            if !choices.is_empty() && !choices.contains(&s.as_ref()) {
                return Err(attr_error(
                    op,
                    def.name,
                    format!("must be one of {}, got {s}", one_of(choices)),
                ));
            }
            true
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::AttributeKind {
            op,
            attr: def.name.to_string(),
            expected: kind_name(def.kind),
            got: value.to_string(),
        })
    }
}

/// The kind's name, as messages and `--help` show it.
pub fn kind_name(kind: AttrKind) -> &'static str {
    match kind {
        AttrKind::Int => "an integer",
        AttrKind::Float => "a number",
        AttrKind::Bool => "true or false",
        AttrKind::Str(_) => "a name",
        AttrKind::Ints => "a list of integers",
        AttrKind::Fill => "a number",
    }
}

fn attr_error(op: &'static str, attr: &str, reason: String) -> Error {
    Error::Attribute {
        op,
        attr: attr.to_string(),
        reason,
    }
}

/// One input of a run: a dense tensor, a ragged one, a list of dense ones, or none.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Input<'a> {
    /// A dense tensor.
    Tensor(TensorView<'a>),
    /// A ragged tensor.
    Ragged(RaggedView<'a>),
    /// Several dense tensors.
    List(Vec<TensorView<'a>>),
    /// Elements of any fixed size as their bytes (a NumPy structured, string or datetime
    /// element, an element in another byte order), for an input of kind
    /// [`InputKind::Elements`]: the op moves them as they are, in units the core chooses,
    /// and a new result is a tensor of those units with the record axis appended.
    Records(RawView<'a>),
    /// An optional input left out.
    None,
}

impl<'a> From<TensorView<'a>> for Input<'a> {
    fn from(view: TensorView<'a>) -> Input<'a> {
        Input::Tensor(view)
    }
}

impl<'a> From<RaggedView<'a>> for Input<'a> {
    fn from(view: RaggedView<'a>) -> Input<'a> {
        Input::Ragged(view)
    }
}

/// The inputs of one run, checked against the op's signature: the right number, each of
/// its kind. Optional inputs at the end may be left out (a caller written before they were
/// added gives fewer): they are none.
pub(crate) struct Inputs<'i, 'a> {
    op: &'static str,
    defs: &'static [InputDef],
    inputs: &'i [Input<'a>],
}

impl<'i, 'a> Inputs<'i, 'a> {
    /// Checks `inputs` against `signature`.
    pub(crate) fn new(
        op: &'static str,
        signature: &Signature,
        inputs: &'i [Input<'a>],
    ) -> Result<Self> {
        if inputs.len() > signature.inputs.len() || inputs.len() < signature.least_inputs() {
            let names: Vec<&str> = signature.inputs.iter().map(|d| d.name).collect();
            return Err(Error::OpInput {
                op,
                input: String::new(),
                reason: format!(
                    "takes {} inputs ({}), got {}",
                    signature.input_count(),
                    names.join(", "),
                    inputs.len()
                ),
            });
        }
        for (def, input) in signature.inputs.iter().zip(inputs) {
            let ok = matches!(
                (def.kind, input),
                (InputKind::Tensor, Input::Tensor(_))
                    | (InputKind::MaybeRagged, Input::Tensor(_) | Input::Ragged(_))
                    | (
                        InputKind::Elements,
                        Input::Tensor(_) | Input::Ragged(_) | Input::Records(_)
                    )
                    | (InputKind::Optional, Input::Tensor(_) | Input::None)
                    | (InputKind::List, Input::List(_))
                    | (InputKind::OptionalList, Input::List(_) | Input::None)
            );
            if !ok {
                return Err(Error::OpInput {
                    op,
                    input: def.name.to_string(),
                    reason: format!("expected {}", input_kind_name(def.kind)),
                });
            }
        }
        Ok(Inputs {
            op,
            defs: signature.inputs,
            inputs,
        })
    }

    /// Dense input `k`.
    pub(crate) fn tensor(&self, k: usize) -> Result<&'i TensorView<'a>> {
        match self.inputs.get(k) {
            Some(Input::Tensor(t)) => Ok(t),
            _ => Err(self.kind_error(k)),
        }
    }

    /// Optional dense input `k` (none where it was left out).
    pub(crate) fn optional(&self, k: usize) -> Option<&'i TensorView<'a>> {
        match self.inputs.get(k) {
            Some(Input::Tensor(t)) => Some(t),
            _ => None,
        }
    }

    /// List input `k`.
    pub(crate) fn list(&self, k: usize) -> Result<&'i [TensorView<'a>]> {
        match self.inputs.get(k) {
            Some(Input::List(l)) => Ok(l),
            _ => Err(self.kind_error(k)),
        }
    }

    /// Input `k` as given.
    pub(crate) fn get(&self, k: usize) -> Result<&'i Input<'a>> {
        self.inputs.get(k).ok_or_else(|| self.kind_error(k))
    }

    /// The error for input `k` missing or of another kind (an op asking past its signature
    /// is a bug of the op, reported as such rather than a panic).
    fn kind_error(&self, k: usize) -> Error {
        match self.defs.get(k) {
            Some(def) => Error::OpInput {
                op: self.op,
                input: def.name.to_string(),
                reason: format!("expected {}", input_kind_name(def.kind)),
            },
            None => Error::Internal("an input past the op's signature"),
        }
    }
}

fn input_kind_name(kind: InputKind) -> &'static str {
    match kind {
        InputKind::Tensor => "a dense tensor",
        InputKind::MaybeRagged => "a dense or ragged tensor",
        InputKind::Elements => "a dense or ragged tensor, or records",
        InputKind::Optional => "a dense tensor or none",
        InputKind::List => "a list of dense tensors",
        InputKind::OptionalList => "a list of dense tensors or none",
    }
}

/// An op's result: a dense tensor, a ragged one (a gather with a ragged operand), or a
/// gradient with respect to a list of tensors (an embedding table's shards), dense or
/// sparse.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// A dense tensor.
    Dense(Tensor),
    /// A ragged tensor.
    Ragged(Ragged),
    /// One dense tensor per tensor of a list input.
    List(Vec<Tensor>),
    /// One sparse gradient per tensor of an input (TensorFlow's `IndexedSlices`): per shard
    /// of a table, or the one of a ragged gather's params.
    Sparse(Vec<SparseGrad>),
}

impl Value {
    /// The dense tensor; a ragged result with no ragged dimension left is dense too.
    ///
    /// # Errors
    /// [`Error::InvalidRagged`] for a result that is still ragged.
    pub fn into_dense(self) -> Result<Tensor> {
        match self {
            Value::Dense(t) => Ok(t),
            Value::Ragged(r) if r.splits.is_empty() => Ok(r.values),
            Value::Ragged(_) => Err(Error::InvalidRagged {
                check: "to_tensor",
                reason: "the result is ragged where a dense tensor was asked for".into(),
            }),
            Value::List(_) | Value::Sparse(_) => Err(Error::OpInput {
                op: "result",
                input: String::new(),
                reason: "the result is several tensors (one per shard), which no one \
                         tensor or buffer holds"
                    .into(),
            }),
        }
    }

    /// The result as named tensors, for a front end that writes or prints arrays: a dense
    /// result is one, `""`; a ragged one its `values` and `row_splits` (`row_splits_1`, …
    /// beyond the first); a list `0`, `1`, …; sparse gradients `indices_k`, `values_k` and
    /// `dense_shape_k` (int64) for each `k`.
    ///
    /// ```
    /// use ndgather::{registry::Value, Tensor};
    /// let v = Value::List(vec![Tensor::from_shape_vec(&[1], vec![2.0f32])?]);
    /// let names: Vec<String> = v.into_parts().into_iter().map(|(n, _)| n).collect();
    /// assert_eq!(names, ["0"]);
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    pub fn into_parts(self) -> Vec<(String, Tensor)> {
        let ints = |v: Vec<usize>| {
            Tensor::from(ndarray::Array1::from_iter(v.into_iter().map(|d| d as i64)).into_dyn())
        };
        match self {
            Value::Dense(t) => vec![(String::new(), t)],
            Value::Ragged(r) => {
                let mut parts = vec![("values".to_string(), r.values)];
                parts.extend(r.splits.iter().enumerate().map(|(k, s)| {
                    let name = match k {
                        0 => "row_splits".to_string(),
                        k => format!("row_splits_{k}"),
                    };
                    (name, s.to_tensor())
                }));
                parts
            }
            Value::List(l) => l
                .into_iter()
                .enumerate()
                .map(|(k, t)| (k.to_string(), t))
                .collect(),
            Value::Sparse(s) => s
                .into_iter()
                .enumerate()
                .flat_map(|(k, g)| {
                    [
                        (format!("indices_{k}"), ints(g.indices)),
                        (format!("values_{k}"), g.values),
                        (format!("dense_shape_{k}"), ints(g.dense_shape)),
                    ]
                })
                .collect(),
        }
    }
}

/// A sparse gradient of any dtype, as an op of the registry returns it: TensorFlow's
/// `IndexedSlices`, row `indices[k]` of a tensor of `dense_shape` receiving `values[k]`
/// (rows may repeat, and then add up). The typed form is [`IndexedSlices`].
#[derive(Debug, Clone, PartialEq)]
pub struct SparseGrad {
    /// The rows touched, in the order of the forward op.
    pub indices: Vec<usize>,
    /// One slice per index: shape `[indices.len()] + dense_shape[1:]`.
    pub values: Tensor,
    /// The shape of the dense tensor.
    pub dense_shape: Vec<usize>,
}

impl<T: TensorElement> From<IndexedSlices<T>> for SparseGrad {
    fn from(s: IndexedSlices<T>) -> SparseGrad {
        SparseGrad {
            indices: s.indices,
            values: T::into_tensor(s.values),
            dense_shape: s.dense_shape,
        }
    }
}

/// What is known of a tensor before it is run: its dtype, a shape that may be partly
/// unknown, and for a small integer tensor known now (a graph's constant) its values, which
/// a shape may depend on, as TensorFlow's shape functions read a constant input (a
/// `SparseTensor`'s `dense_shape`). Inputs' facts give the output's ([`OpDef::infer`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Fact {
    /// The dtype, where known.
    pub dtype: Option<DType>,
    /// The shape, of known or unknown rank and dimensions.
    pub shape: Shape,
    /// The values, row-major, of an integer tensor of at most [`Fact::MAX_VALUES`] elements
    /// known before the run; `None` otherwise.
    pub values: Option<Vec<i64>>,
}

impl Fact {
    /// The most elements whose values a fact carries: enough for shapes and scalars, and
    /// never a table's copy.
    pub const MAX_VALUES: usize = 64;

    /// A fact of dtype and shape, either of which may be unknown, with no values.
    pub fn new(dtype: Option<DType>, shape: Shape) -> Fact {
        Fact {
            dtype,
            shape,
            values: None,
        }
    }

    /// A fact of known dtype and shape.
    pub fn known(dtype: DType, shape: &[usize]) -> Fact {
        Fact::new(Some(dtype), Shape::known(shape))
    }

    /// Nothing known.
    pub fn unknown() -> Fact {
        Fact::new(None, Shape::unknown())
    }

    /// The fact of `view`, with its values where it is a small integer tensor.
    pub fn of(view: &TensorView<'_>) -> Fact {
        use crate::types::index::IndexType;
        let small = view.shape().iter().product::<usize>() <= Fact::MAX_VALUES;
        let values = small
            .then(|| {
                with_tensor!(TensorView, view, index a =>
                    a.iter().map(|&v| i64::try_from(v.to_i128()).ok()).collect(),
                    else _dtype => None)
            })
            .flatten();
        Fact {
            values,
            ..Fact::known(view.dtype(), view.shape())
        }
    }
}

/// What a front end gives a run besides its inputs ([`OpDef::run_hosted`]), as TensorFlow's
/// `OpKernelContext` gives a kernel `allocate_output`: memory for a new output (the Python
/// package's is a NumPy array, which then needs no conversion), and a way to run long work
/// without the front end's lock (Python's GIL, which other threads then take).
pub trait Host {
    /// New memory for an output of `shape` elements of `itemsize` bytes each, row-major:
    /// `shape`'s product times `itemsize` bytes, uninitialised, which the op writes whole
    /// before it returns `Ok`. `None` where the host has none to give (the op then returns
    /// a new tensor).
    fn allocate(&mut self, shape: &[usize], itemsize: usize) -> Option<&mut [MaybeUninit<u8>]>;

    /// Runs `work`, which may take long, once: a host that holds a lock releases it
    /// meanwhile.
    fn unlocked(&mut self, work: &mut (dyn FnMut() + Send));

    /// Runs `work`, which touches few enough bytes (16 KiB with its inputs) that releasing a
    /// lock would cost more than it, once: as [`Host::unlocked`] unless the host says
    /// otherwise.
    fn short(&mut self, work: &mut (dyn FnMut() + Send)) {
        self.unlocked(work);
    }
}

/// The bytes a call reads and writes below which [`OpDef::run_hosted`] runs it through
/// [`Host::short`]: about a microsecond of copying, where a lock's release and retake cost a
/// tenth of a tiny call.
pub(crate) const SHORT_BYTES: usize = 16 << 10;

/// The bytes of a dense tensor; `None` for elements of no fixed size.
fn dense_bytes(v: &TensorView<'_>) -> Option<usize> {
    crate::mem::element_count(v.shape())?.checked_mul(v.dtype().size()?)
}

/// The bytes of an output the caller gave; `None` for a new output, whose size may come from
/// values or attributes.
fn given_bytes(out: &Out<'_>) -> Option<usize> {
    match out {
        Out::Into(v) | Out::InPlace(v) => {
            let count =
                crate::with_tensor!(TensorViewMut, v, t => crate::mem::element_count(t.shape()));
            count?.checked_mul(v.dtype().size()?)
        }
        _ => None,
    }
}

/// The bytes a call reads and writes, where every one is known: its dense inputs' and the
/// `written` bytes of its output. `None` for inputs of another kind.
fn known_bytes(inputs: &[Input<'_>], written: usize) -> Option<usize> {
    inputs.iter().try_fold(written, |sum, input| match input {
        Input::Tensor(v) => sum.checked_add(dense_bytes(v)?),
        Input::List(l) => l
            .iter()
            .try_fold(sum, |s, v| s.checked_add(dense_bytes(v)?)),
        Input::None => Some(sum),
        _ => None,
    })
}

/// A write op's short run into a new output in `host`'s memory: the written tensor's
/// elements copied there, then written in place, where the small gathers write theirs
/// (a tiny scatter spent a tenth of its time on a tensor of its own, then an array around
/// it). `None`, with nothing run, where the host gives no memory or the written tensor is
/// not plain and row-major; then `Ok(None)`, the result being the host's, or the op's error.
fn written_in_host<O: OpDef + ?Sized>(
    op: &O,
    inputs: &[Input<'_>],
    host: &mut dyn Host,
) -> Option<Result<Option<Value>>> {
    let Some(Input::Tensor(written)) = inputs.first() else {
        return None;
    };
    let size = written.dtype().size()?;
    crate::with_tensor!(TensorView, written, plain a => {
        let elements = a.as_slice()?;
        let memory = host.allocate(a.shape(), size)?;
        Some(match copied_into(a.raw_dim(), elements, &mut *memory) {
            Some(target) => {
                let mut rest: SmallVec<[Input<'_>; 4]> = inputs.iter().skip(1).cloned().collect();
                rest.insert(0, Input::None);
                op.run(&rest, Out::InPlace(target.into())).map(|_| None)
            }
            // Memory not aligned for the elements (the contract does not promise it): the
            // result made apart, then its bytes copied in.
            None => op.run(inputs, Out::New).and_then(|value| {
                let bytes = value.ok_or(Error::Internal("a new output"))?.into_dense()?.to_bytes()?;
                match memory.len() == bytes.len() {
                    true => Ok(memory.write_copy_of_slice(&bytes)).map(|_| None),
                    false => Err(Error::Internal("the host's memory is the output's size")),
                }
            }),
        })
    }, else _dtype => None)
}

/// `elements` copied into `memory`, as a view of `shape`; `None` where `memory` is not
/// their size or not aligned for them.
fn copied_into<'m, T: bytemuck::Pod>(
    shape: ndarray::IxDyn,
    elements: &[T],
    memory: &'m mut [MaybeUninit<u8>],
) -> Option<ndarray::ArrayViewMutD<'m, T>> {
    let bytes: &[u8] = bytemuck::cast_slice(elements);
    if memory.len() != bytes.len() {
        return None;
    }
    let slots = bytemuck::try_cast_slice_mut(memory.write_copy_of_slice(bytes)).ok()?;
    ndarray::ArrayViewMut::from_shape(shape, slots).ok()
}

/// `f` run through `host`'s [`Host::unlocked`].
///
/// # Errors
/// `f`'s; [`Error::Internal`] for a host that did not run it.
pub(crate) fn unlocked<T: Send>(
    host: &mut dyn Host,
    f: impl FnOnce() -> Result<T> + Send,
) -> Result<T> {
    through(host, false, f)
}

/// `f` run through `host`'s [`Host::short`] where `short`, else its [`Host::unlocked`].
fn through<T: Send>(
    host: &mut dyn Host,
    short: bool,
    f: impl FnOnce() -> Result<T> + Send,
) -> Result<T> {
    let mut f = Some(f);
    let mut result = None;
    let mut work = || {
        if let Some(f) = f.take() {
            result = Some(f());
        }
    };
    match short {
        true => host.short(&mut work),
        false => host.unlocked(&mut work),
    }
    result.unwrap_or(Err(Error::Internal("the host did not run the work")))
}

/// An op of the family, as one value: see the module's documentation. Implementations live
/// in the op's own file under `ops/`; [`crate::registry`] lists them.
pub trait OpDef: fmt::Debug + Send + Sync {
    /// The op's name, as every front end spells it (the library's own name).
    fn name(&self) -> &'static str;

    /// What the op computes, in one line (the CLI's `--help`).
    fn summary(&self) -> &'static str;

    /// Its inputs and attributes.
    fn signature(&self) -> Signature;

    /// The op configured by `attrs` (the others at their defaults).
    ///
    /// # Errors
    /// [`Error::Attribute`] for an unknown name, a value of the wrong kind or range,
    /// or a required attribute left out.
    fn with_attrs(&self, attrs: &Attrs) -> Result<Box<dyn OpDef>>;

    /// The output's dtype and shape from the inputs', as far as they are known: the graph's
    /// static shapes. The checks are the op's own, on what is known.
    ///
    /// # Errors
    /// The op's shape errors where the known facts already show one.
    fn infer(&self, inputs: &[Fact]) -> Result<Fact>;

    /// [`OpDef::infer`] for a graph node whose attributes `fed` are given by other nodes'
    /// values when the graph runs, and are not known now: TensorFlow takes them as input
    /// tensors (`GatherV2`'s `axis`, `UnsortedSegmentSum`'s `num_segments`, `ScatterNd`'s
    /// `shape`), marked [`AttrDef::fed`]. The op here is configured with 0, or an empty
    /// list, for each. An op with such attributes answers here.
    ///
    /// # Errors
    /// [`Error::Attribute`] for an attribute that may not be fed; the op's shape errors.
    fn infer_fed(&self, inputs: &[Fact], fed: &[&str]) -> Result<Fact> {
        match fed.first() {
            None => self.infer(inputs),
            Some(attr) => Err(not_fed(self.name(), attr)),
        }
    }

    /// Runs the op on `inputs` (in the order of [`OpDef::signature`]) into `out`. The
    /// strategy (small contiguous calls, strided or parallel kernels, the ragged walk) is
    /// the op's own choice. Returns the new tensor for [`Out::New`] and [`Out::Reuse`],
    /// `None` for [`Out::Into`], whose buffer is unchanged on error.
    ///
    /// # Errors
    /// The op's own; [`Error::OpInput`] for inputs that do not match its signature.
    fn run(&self, inputs: &[Input<'_>], out: Out<'_>) -> Result<Option<Value>>;

    /// [`OpDef::run`] for a front end that gives a [`Host`]: memory for a new output, and a
    /// way to run long work without the front end's lock. The op chooses: a call short
    /// enough runs where it is called and may write into the host's memory (then `None` is
    /// returned for [`Out::New`]: the result is the host's); any other runs as
    /// [`OpDef::run`] does, through [`Host::unlocked`].
    ///
    /// # Errors
    /// As [`OpDef::run`].
    fn run_hosted(
        &self,
        inputs: &[Input<'_>],
        out: Out<'_>,
        host: &mut dyn Host,
    ) -> Result<Option<Value>> {
        let written = match (&out, inputs.first()) {
            (Out::New, Some(Input::Tensor(first))) if self.writes_first_input() => {
                dense_bytes(first)
            }
            (out, _) => given_bytes(out),
        };
        let short = written
            .and_then(|w| known_bytes(inputs, w))
            .is_some_and(|b| b <= SHORT_BYTES);
        if let (true, Out::New, true) = (short, &out, self.writes_first_input()) {
            if let Some(done) = written_in_host(self, inputs, host) {
                return done;
            }
        }
        through(host, short, || self.run(inputs, out))
    }

    /// Whether a new output is a copy of the first input, written (the write ops): its bytes
    /// are then known before the run, so that [`OpDef::run_hosted`] keeps the host's lock
    /// for a small call into a new output as for one into a given output.
    fn writes_first_input(&self) -> bool {
        false
    }

    /// Whether the op has a gradient ([`OpDef::grad`] is its own), so that a graph can
    /// refuse a path through one that has none when the gradient is built, as TensorFlow
    /// does.
    fn has_grad(&self) -> bool {
        false
    }

    /// A graph node's type for the op, which [`crate::registry::find`] knows too:
    /// TensorFlow's own op where it has one (`GatherV2`, `TensorScatterAdd`,
    /// `UnsortedSegmentMax`); otherwise, by default, the registered name in TF's form
    /// (`PutAlongAxis`, `ScatterReduce`, `GatherGrad`).
    fn type_name(&self) -> &'static str {
        camel_case(self.name())
    }

    /// A graph node's default name (TF Java's `makeOpName`), made unique in its scope: its
    /// type by default; TF Java's own name where it differs (`Gather` for `GatherV2`).
    fn node_name(&self) -> &'static str {
        self.type_name()
    }

    /// Whether the op's result is one tensor, as a graph node's one output holds it (dense,
    /// or ragged where an input is). The lookups' gradients give one tensor per shard.
    fn one_result(&self) -> bool {
        true
    }

    /// Whether [`OpDef::grad`] reads the op's output (a max compares with it; a gather's
    /// gradient does not), so that a graph computes the output for it only where it is read.
    fn grad_reads_output(&self) -> bool {
        true
    }

    /// Where the op is linear in some of its inputs, jointly, the others held at their values
    /// (a gather in params, a sum in its data, any gradient in the upstream gradient): its
    /// derivative in forward mode is then the op itself, with [`Linear::tangent_attrs`], run
    /// on those inputs' tangents. The front ends' forward mode (JAX's `jvp`, PyTorch's
    /// `torch.func.jvp`, TensorFlow's `ForwardAccumulator`) computes it so. `None` where the
    /// op is not (a max, a product, a `max_norm`), which the front ends refuse there.
    ///
    /// ```
    /// use ndgather::registry::{self, Attr, Attrs};
    /// let gather = registry::find("gather")?;
    /// assert_eq!(gather.linear().unwrap().inputs, [0]); // params, not indices
    /// let max = registry::find("unsorted_segment_max")?
    ///     .with_attrs(&Attrs::new().with("num_segments", Attr::Int(2)))?;
    /// assert!(max.linear().is_none());
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    fn linear(&self) -> Option<Linear> {
        None
    }

    /// Where the op is not linear but each element of its inputs with a gradient moves at
    /// most one element of its output (a segment max, a scatter's min, a product): along the
    /// routes of a linear op with the same signature ([`Routed`]: the segment sum, the
    /// scatter add). Its derivative in forward mode is then that op's tangent, run on each
    /// tangent times the op's gradient for an upstream of ones (each element's factor: one
    /// over the count of those tied at a max, the product of the others); a front end
    /// reads the whole fact from [`crate::registry::route`].
    ///
    /// ```
    /// use ndgather::registry::{self, Attr, Attrs};
    /// let max = registry::find("unsorted_segment_max")?
    ///     .with_attrs(&Attrs::new().with("num_segments", Attr::Int(2)))?;
    /// assert_eq!(max.routed().unwrap().op, "unsorted_segment_sum");
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    fn routed(&self) -> Option<Routed> {
        None
    }

    /// Where the op is linear in each of several groups of inputs apart, the others held,
    /// and not jointly (a bag in its table and in its `per_sample_weights`): its derivative
    /// in forward mode is then, by the product rule, the sum over the groups that tangents
    /// reach of the op's tangent ([`Linear::tangent_attrs`]) on that group's tangents, the
    /// other inputs at their values. Empty where it is not.
    ///
    /// ```
    /// use ndgather::registry::{self, Attr, Attrs};
    /// let bag = registry::find("embedding_bag")?
    ///     .with_attrs(&Attrs::new().with("mode", Attr::Str("sum".into())))?;
    /// let groups: Vec<_> = bag.multilinear().into_iter().map(|l| l.inputs).collect();
    /// assert_eq!(groups, [[0], [3]]); // the table; per_sample_weights
    /// # Ok::<(), ndgather::Error>(())
    /// ```
    fn multilinear(&self) -> Vec<Linear> {
        Vec::new()
    }

    /// The gradients of the op's output with respect to each input (`None` for an input that
    /// has none, such as indices, or is left out; a list input, such as a table's shards,
    /// one entry per tensor, in order), for the upstream gradient `upstream` of the output
    /// `output` that `run` gave on `inputs` (`None` where [`OpDef::grad_reads_output`] says
    /// it is not read).
    ///
    /// # Errors
    /// [`Error::NoGradient`] for an op without a registered gradient; the op's own
    /// ([`Error::OpInput`] for an output it reads that is not given).
    fn grad(
        &self,
        inputs: &[Input<'_>],
        output: Option<&TensorView<'_>>,
        upstream: &TensorView<'_>,
    ) -> Result<Vec<Option<Tensor>>> {
        let _ = (inputs, output, upstream);
        Err(Error::NoGradient { op: self.name() })
    }
}

/// Where an op is linear ([`OpDef::linear`]): the inputs in which it is, and the attributes
/// of the op that maps their tangents to its output's tangent.
#[derive(Debug, Clone, PartialEq)]
pub struct Linear {
    /// The inputs, by their positions in the op's signature, in which the op is linear
    /// jointly, the others held at their values (which the tangent's op reads).
    pub inputs: Vec<usize>,
    /// The attributes that differ in the tangent's op: a value that a policy writes at bad
    /// indices, constant, has a zero tangent.
    pub tangent_attrs: Vec<(&'static str, Attr)>,
    /// Whether the op's gradient ([`OpDef::grad`]) is the transpose of the tangent's op, so
    /// that a second derivative may transpose one into the other. Not for a scatter update:
    /// TensorFlow's gradient gives each of repeated indices the slice's gradient, where the
    /// result keeps one write.
    pub adjoint: bool,
}

/// The linear op along whose routes an op moves its output ([`OpDef::routed`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Routed {
    /// The linear op's registered name; its signature is the op's.
    pub op: &'static str,
    /// Its attributes that differ from the op's (a reduction's name).
    pub attrs: Vec<(&'static str, Attr)>,
    /// Whether the factors (the gradient for ones) are constant wherever the op is
    /// differentiable, so that their own derivative is zero: a max's and a min's (one over
    /// the count of ties), not a product's (the product of the others).
    pub constant_factors: bool,
}

impl Routed {
    /// Along `op`'s routes, with the same attributes; constant factors or not.
    pub(crate) fn to(op: &'static str, constant_factors: bool) -> Option<Routed> {
        Some(Routed {
            op,
            attrs: Vec::new(),
            constant_factors,
        })
    }
}

impl Linear {
    /// Linear in `inputs`, the tangent's op the same op, its gradient the transpose.
    pub(crate) fn of(inputs: &[usize]) -> Option<Linear> {
        Some(Linear {
            inputs: inputs.to_vec(),
            tangent_attrs: Vec::new(),
            adjoint: true,
        })
    }

    /// Linear in the input named `name` of `op`'s signature.
    pub(crate) fn in_input(op: &dyn OpDef, name: &str) -> Option<Linear> {
        let at = op.signature().inputs.iter().position(|i| i.name == name)?;
        Linear::of(&[at])
    }
}

/// The error for a gradient asked of `dtype`, which has none (the dtype table's grad role:
/// TensorFlow's gradients are of the float and complex types only), named `op`.
pub(crate) fn no_grad_kernel(op: &'static str, dtype: DType) -> Error {
    Error::NoKernel {
        op,
        dtype,
        supported: DType::names_where(DType::has_grad),
    }
}

/// The output a gradient reads, or the error for one not given.
pub(crate) fn read_output<'o, 'v>(
    op: &'static str,
    output: Option<&'o TensorView<'v>>,
) -> Result<&'o TensorView<'v>> {
    output.ok_or_else(|| Error::OpInput {
        op,
        input: "output".into(),
        reason: "its gradient reads the op's output: give it".into(),
    })
}

/// Delivers an op's new result of any kind into `out`: a dense one as [`deliver`] does;
/// one of several tensors (ragged, a list, sparse gradients) only as a new result.
pub(crate) fn deliver_value(
    op: &'static str,
    result: Value,
    out: Out<'_>,
) -> Result<Option<Value>> {
    match (result, out) {
        (Value::Dense(t), out) => deliver(op, t, out),
        (result, Out::New) => Ok(Some(result)),
        (result, Out::Reuse(old)) => {
            old.recycle();
            Ok(Some(result))
        }
        (_, Out::InPlace(_)) => Err(not_in_place(op)),
        // The error of the result as one dense tensor.
        (result, Out::Into(_) | Out::IntoRecords(_)) => Err(result
            .into_dense()
            .err()
            .unwrap_or(Error::Internal("a dense result is delivered above"))),
    }
}

/// Delivers an op's new result into `out`: returned for `New` and `Reuse`, copied into the
/// caller's buffer for `Into` (after checking its dtype and shape, so a refused buffer is
/// unchanged).
pub(crate) fn deliver(op: &'static str, result: Tensor, out: Out<'_>) -> Result<Option<Value>> {
    match out {
        Out::InPlace(_) => Err(not_in_place(op)),
        Out::IntoRecords(_) => Err(not_records(op)),
        Out::New => Ok(Some(Value::Dense(result))),
        Out::Reuse(old) => {
            old.recycle();
            Ok(Some(Value::Dense(result)))
        }
        Out::Into(mut target) => {
            if target.dtype() != result.dtype() {
                return Err(Error::DTypeMismatch {
                    expected: result.dtype(),
                    found: target.dtype(),
                });
            }
            let shape = with_tensor!(TensorViewMut, &target, t => t.shape().to_vec());
            if shape != result.shape() {
                return Err(Error::OutputShapeMismatch {
                    given: shape,
                    expected: result.shape().to_vec(),
                });
            }
            with_tensor!(TensorViewMut, &mut target, fixed t => {
                let source = crate::ops::typed_like(t, &result.view())?;
                t.assign(&source);
                Ok(None)
            }, else dtype => Err(Error::NotFixedWidth { dtype }))
        }
    }
}

/// The error of an op that writes a new output, given [`Out::InPlace`].
pub(crate) fn not_in_place(op: &'static str) -> Error {
    Error::OpInput {
        op,
        input: "out".into(),
        reason: "writes a new output; only the ops that write into a tensor run in place".into(),
    }
}

/// The error of an op whose output is no records, given [`Out::IntoRecords`].
pub(crate) fn not_records(op: &'static str) -> Error {
    Error::OpInput {
        op,
        input: "out".into(),
        reason:
            "only the ops that move elements (gather, gather_nd, take_along_axis) write records"
                .into(),
    }
}

/// Checks the tensor a write-side op updates: its first input, or for [`Out::InPlace`] the
/// target (then the first input must be [`Input::None`]).
pub(crate) fn check_written(op: &'static str, first: &Input<'_>, out: &Out<'_>) -> Result<()> {
    let given = !matches!(first, Input::None);
    match (out, given) {
        (Out::InPlace(_), true) => Err(Error::OpInput {
            op,
            input: "out".into(),
            reason: "in place, the tensor written is the output; give its input as none".into(),
        }),
        (Out::InPlace(_), false) | (_, true) => Ok(()),
        (_, false) => Err(Error::OpInput {
            op,
            input: String::new(),
            reason: "the tensor written is missing".into(),
        }),
    }
}

/// `name` in TensorFlow's form of an op type: `put_along_axis` → `PutAlongAxis`. Each name
/// is made once and kept, so that it is `'static` as the registered names are.
pub(crate) fn camel_case(name: &'static str) -> &'static str {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock, PoisonError};
    static MADE: OnceLock<Mutex<HashMap<&'static str, &'static str>>> = OnceLock::new();
    let mut made = MADE
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    made.entry(name).or_insert_with(|| {
        let camel: String = name
            .split('_')
            .flat_map(|word| {
                let mut chars = word.chars();
                chars
                    .next()
                    .map(|c| c.to_ascii_uppercase())
                    .into_iter()
                    .chain(chars)
            })
            .collect();
        // Bounded: one per op name of the registry, whose names are fixed.
        Box::leak(camel.into_boxed_str())
    })
}

/// Checks that each of `fed` is an attribute of `op` that a tensor may feed
/// ([`AttrDef::fed`]), for an op's [`OpDef::infer_fed`].
pub(crate) fn check_fed(op: &dyn OpDef, fed: &[&str]) -> Result<()> {
    let attrs = op.signature().attrs;
    match fed
        .iter()
        .find(|&&f| !attrs.iter().any(|a| a.fed && a.name == f))
    {
        Some(attr) => Err(not_fed(op.name(), attr)),
        None => Ok(()),
    }
}

/// The error for an attribute that no tensor may feed ([`OpDef::infer_fed`]).
pub(crate) fn not_fed(op: &'static str, attr: &str) -> Error {
    Error::Attribute {
        op,
        attr: attr.to_string(),
        reason: "is fixed when the op is built, and cannot be fed by a tensor".into(),
    }
}

/// The error for a wrong number of input facts given to [`OpDef::infer`].
pub(crate) fn count_error(op: &dyn OpDef, found: usize) -> Error {
    Error::OpInput {
        op: op.name(),
        input: String::new(),
        reason: format!("takes {} inputs, got {found}", op.signature().input_count()),
    }
}
